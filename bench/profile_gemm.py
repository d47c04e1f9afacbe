#!/usr/bin/env python3
"""One launch each of tawa's compiled fp16 GEMM and of cuBLAS at the same
shape, for Nsight Compute to profile side by side:

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
    args = ap.parse_args()
    m, n, k = (int(x) for x in args.shape.split(","))
    base = os.path.dirname(os.path.abspath(args.manifest))
    entry = {e["id"]: e for e in json.load(open(args.manifest))["kernels"]}[args.kernel]
    kern = workloads.Loaded(os.path.join(base, entry["metadata"]))
    a = torch.randn(m, k, device="cuda").half()
    b = torch.randn(n, k, device="cuda").half()
    c = torch.empty(m, n, device="cuda", dtype=torch.float16)
    plan = workloads.prepare_gemm(kern, a, b, c, m, n, k)
    for _ in range(3):
        plan()
        torch.mm(a, b.t(), out=c)
    torch.cuda.synchronize()
    plan()                       # profiled: tawa
    torch.mm(a, b.t(), out=c)    # profiled: cuBLAS
    torch.cuda.synchronize()
    print("profile_gemm: done")


if __name__ == "__main__":
    main()
