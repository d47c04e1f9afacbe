#!/usr/bin/env python3
"""One launch each of tawa's compiled batched or grouped GEMM sample and of
Triton compiling the same source, for Nsight Compute to profile side by
side (the shapes of gemm_bench.py --family):

    ncu --clock-control none --kernel-name regex:'gemm_(batched|grouped)' \
        --launch-skip 4 --launch-count 2 --section SpeedOfLight ... \
        python3 bench/profile_family.py --manifest build-kernels/manifest.json --workload grouped

Both kernels carry the sample's name; tawa's launch comes first. The first
launches warm up (module load, Triton's compilation).
"""
import argparse
import json
import os
import sys

import torch
import triton

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "gpu", "compiled"))
sys.path.insert(0, os.path.join(REPO, "bench"))
import family_launch  # noqa: E402
import workloads  # noqa: E402
from gemm_bench import load_jit_functions  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--manifest", required=True)
    ap.add_argument("--workload", choices=["batched", "grouped"], default="grouped")
    ap.add_argument("--config", default="default")
    ap.add_argument("--triton-warps", type=int, default=8)
    ap.add_argument("--triton-stages", type=int, default=4)
    args = ap.parse_args()
    base = os.path.dirname(os.path.abspath(args.manifest))
    entry = {e["id"]: e for e in json.load(open(args.manifest))["kernels"]}[
        f"shared/gemm_{args.workload}/{args.config}"]
    kern = workloads.Loaded(os.path.join(base, entry["metadata"]))
    tk = load_jit_functions(os.path.join(base, "sources", "triton_kernels.py"))
    triton.set_allocator(lambda size, align, stream: torch.empty(size, dtype=torch.int8, device="cuda"))
    build = family_launch.batched if args.workload == "batched" else family_launch.grouped
    tawa, ref, _, buffers = build(kern, tk, args.triton_warps, args.triton_stages)
    for _ in range(2):
        tawa()
        ref()
    torch.cuda.synchronize()
    tawa()   # profiled: tawa
    ref()    # profiled: Triton
    torch.cuda.synchronize()
    print("profile_family: done")


if __name__ == "__main__":
    main()
