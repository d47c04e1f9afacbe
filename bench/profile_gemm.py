#!/usr/bin/env python3
"""One launch each of a tawa-compiled GEMM (any of the manifest's C = A B^T
kernels, inputs of its dtype) and of cuBLAS at the same shape (fp16, bf16;
--no-cublas: tawa alone), for Nsight Compute to profile side by side:

    ncu --clock-control none --section SpeedOfLight --section WarpStateStats \
        --metrics sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active \
        python3 bench/profile_gemm.py --manifest build-kernels/manifest.json

The first launches warm up (module load, cuBLAS heuristics); ncu's
--launch-skip/--launch-count or its kernel filter pick the profiled ones.
"""
import argparse
import json
import os
import sys

import torch

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "gpu", "compiled"))
import workloads  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--manifest", required=True)
    ap.add_argument("--kernel", default="examples/gemm_fp16/default")
    ap.add_argument("--shape", default="8192,8192,4096")
    ap.add_argument("--no-cublas", action="store_true", help="launch only tawa's kernel")
    args = ap.parse_args()
    m, n, k = (int(x) for x in args.shape.split(","))
    base = os.path.dirname(os.path.abspath(args.manifest))
    entry = {e["id"]: e for e in json.load(open(args.manifest))["kernels"]}[args.kernel]
    kern = workloads.Loaded(os.path.join(base, entry["metadata"]))
    in_dt, out_dt = workloads.DTYPES[kern.dtype(0)], workloads.DTYPES[kern.dtype(2)]
    a = torch.randn(m, k, device="cuda").to(in_dt)
    b = torch.randn(n, k, device="cuda").to(in_dt)
    c = torch.empty(m, n, device="cuda", dtype=out_dt)
    plan = workloads.prepare_gemm(kern, a, b, c, m, n, k)
    # cuBLAS alongside where torch.mm takes the inputs (fp16, bf16).
    cublas = (None if args.no_cublas or in_dt not in (torch.float16, torch.bfloat16)
              else lambda: torch.mm(a, b.t(), out=c))
    for _ in range(3):
        plan()
        if cublas:
            cublas()
    torch.cuda.synchronize()
    plan()                       # profiled: tawa
    if cublas:
        cublas()                 # profiled: cuBLAS
    torch.cuda.synchronize()
    print("profile_gemm: done")


if __name__ == "__main__":
    main()
