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
from triton.tools.tensor_descriptor import TensorDescriptor

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "gpu", "compiled"))
sys.path.insert(0, os.path.join(REPO, "bench"))
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
    w, s = args.triton_warps, args.triton_stages
    if args.workload == "batched":
        bt, m, n, k = 8, 2048, 2048, 4096
        a = torch.randn(bt * m, k, device="cuda").half()
        b = torch.randn(bt * n, k, device="cuda").half()
        c = torch.empty(bt * m, n, device="cuda", dtype=torch.float16)
        grid = (m // 128, n // 128, bt)
        tawa = kern.kernel.prepare(*workloads.desc_args(a), *workloads.desc_args(b),
                                   *workloads.desc_args(c), m, n, k, grid=grid)
        ad, bd = TensorDescriptor.from_tensor(a, [128, 64]), TensorDescriptor.from_tensor(b, [128, 64])
        cd = TensorDescriptor.from_tensor(c, [128, 128])
        ref = lambda: tk.gemm_batched[grid](ad, bd, cd, m, n, k, 128, 128, 64, num_warps=w, num_stages=s)
    else:
        groups, n, k = 8, 4096, 4096
        ms = [1024 * (g % 4 + 1) for g in range(groups)]
        As = [torch.randn(mg, k, device="cuda").half() for mg in ms]
        Bs = [torch.randn(n, k, device="cuda").half() for _ in ms]
        Cs = [torch.empty(mg, n, device="cuda", dtype=torch.float16) for mg in ms]
        ptrs = lambda ts: torch.tensor([t.data_ptr() for t in ts], device="cuda", dtype=torch.int64)
        a_p, b_p, c_p = ptrs(As), ptrs(Bs), ptrs(Cs)
        sizes = torch.tensor([[mg, n, k] for mg in ms], device="cuda", dtype=torch.int32).flatten()
        tawa = kern.kernel.prepare(a_p, b_p, c_p, sizes, groups, grid=(132,))
        ref = lambda: tk.gemm_grouped[(132,)](a_p, b_p, c_p, sizes, groups, 128, 128, 64, 132,
                                              num_warps=w, num_stages=s)
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
