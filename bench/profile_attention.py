#!/usr/bin/env python3
"""One launch each of a tawa-compiled attention kernel (OUT/attention.json)
and of cuDNN's attention (SDPA's CUDNN_ATTENTION backend) on the same fp16
inputs, for Nsight Compute to profile side by side:

    ncu --clock-control none --section SpeedOfLight --section WarpStateStats \
        --metrics sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active \
        python3 bench/profile_attention.py --manifest build-kernels/attention.json

The first launches warm up; the last launch of each is the profiled one
(ncu's --launch-skip / --launch-count or its kernel filter pick them).
"""
import argparse
import json
import os
import sys

import torch

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "gpu", "compiled"))
import attention  # noqa: E402
import workloads  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--manifest", required=True)
    ap.add_argument("--kernel", default="shared/attn_fp16/default")
    ap.add_argument("--shape", default="4,32,4096", help="B,H,L")
    ap.add_argument("--no-cudnn", action="store_true")
    args = ap.parse_args()
    b, h, l = (int(x) for x in args.shape.split(","))
    base = os.path.dirname(os.path.abspath(args.manifest))
    entry = {e["id"]: e for e in json.load(open(args.manifest))["kernels"]}[args.kernel]
    kern = workloads.Loaded(os.path.join(base, entry["metadata"]))
    d = kern.box(0)[1]
    causal = entry["workload"] == "attention_causal"
    in_dt, out_dt = workloads.DTYPES[kern.dtype(0)], workloads.DTYPES[kern.dtype(3)]
    q, k, v = attention.make_inputs(b, h, l, d, in_dt, torch.Generator(device="cuda"))
    o = torch.empty(q.shape, device="cuda", dtype=out_dt)
    args.no_cudnn |= in_dt == torch.float8_e4m3fn  # SDPA takes no fp8
    plan = attention.launch(kern, q, k, v, o, d ** -0.5, l)
    from torch.nn.attention import SDPBackend, sdpa_kernel
    q4, k4, v4 = (t.view(b, h, l, d) for t in (q, k, v))

    def cudnn():
        with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
            torch.nn.functional.scaled_dot_product_attention(q4, k4, v4, is_causal=causal, scale=d ** -0.5)
    for _ in range(3):
        plan()
        if not args.no_cudnn:
            cudnn()
    torch.cuda.synchronize()
    plan()                       # profiled: tawa
    if not args.no_cudnn:
        cudnn()                  # profiled: cuDNN
    torch.cuda.synchronize()
    print("profile_attention: done")


if __name__ == "__main__":
    main()
