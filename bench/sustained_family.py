#!/usr/bin/env python3
"""Sustained runs of the batched / grouped GEMM samples (tawa and Triton on
the same source, the shapes of gemm_bench.py --family), and of the fp16 GEMM
at M = N = 8192, K = 4096 (tawa and cuBLAS): each kernel runs
back to back for --seconds while nvidia-smi samples power, SM clock and
throttle reasons. Shows whether the two are limited by the board's power
rather than by their schedules (a single profiled launch, at a cool GPU,
does not):

    bench/sustained_family.py --manifest build-kernels/manifest.json
"""
import argparse
import json
import os
import subprocess
import sys
import time

import torch
import triton
from triton.tools.tensor_descriptor import TensorDescriptor

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "gpu", "compiled"))
sys.path.insert(0, os.path.join(REPO, "bench"))
import workloads  # noqa: E402
from gemm_bench import load_jit_functions  # noqa: E402

QUERY = "power.draw,clocks.sm,clocks_throttle_reasons.active"


def sustained(fn, seconds):
    """TFLOP-independent: calls per second, and nvidia-smi samples taken
    while fn runs back to back."""
    smi = subprocess.Popen(["nvidia-smi", f"--query-gpu={QUERY}", "--format=csv,noheader,nounits",
                            "-lms", "100"], stdout=subprocess.PIPE, text=True)
    torch.cuda.synchronize()
    t0, calls = time.time(), 0
    while time.time() - t0 < seconds:
        for _ in range(20):
            fn()
        calls += 20
        torch.cuda.synchronize()
    dt = time.time() - t0
    smi.terminate()
    out, _ = smi.communicate()
    rows = [line.split(", ") for line in out.strip().splitlines() if line.count(",") == 2]
    rows = rows[len(rows) // 4:]  # past the ramp
    power = sum(float(r[0]) for r in rows) / max(1, len(rows))
    clock = sum(float(r[1]) for r in rows) / max(1, len(rows))
    reasons = sorted({r[2] for r in rows})
    return calls / dt, power, clock, reasons


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--manifest", required=True)
    ap.add_argument("--seconds", type=float, default=3.0)
    args = ap.parse_args()
    base = os.path.dirname(os.path.abspath(args.manifest))
    by_id = {e["id"]: e for e in json.load(open(args.manifest))["kernels"]}
    tk = load_jit_functions(os.path.join(base, "sources", "triton_kernels.py"))
    triton.set_allocator(lambda size, align, stream: torch.empty(size, dtype=torch.int8, device="cuda"))

    bt, m, n, k = 8, 2048, 2048, 4096
    a = torch.randn(bt * m, k, device="cuda").half()
    b = torch.randn(bt * n, k, device="cuda").half()
    c = torch.empty(bt * m, n, device="cuda", dtype=torch.float16)
    grid = (m // 128, n // 128, bt)
    kern = workloads.Loaded(os.path.join(base, by_id["shared/gemm_batched/default"]["metadata"]))
    batched_tawa = kern.kernel.prepare(*workloads.desc_args(a), *workloads.desc_args(b),
                                       *workloads.desc_args(c), m, n, k, grid=grid)
    ad, bd = TensorDescriptor.from_tensor(a, [128, 64]), TensorDescriptor.from_tensor(b, [128, 64])
    cd = TensorDescriptor.from_tensor(c, [128, 128])
    batched_triton = lambda: tk.gemm_batched[grid](ad, bd, cd, m, n, k, 128, 128, 64, num_warps=4, num_stages=3)
    batched_flops = 2.0 * bt * m * n * k

    groups = 8
    ms = [1024 * (g % 4 + 1) for g in range(groups)]
    n = k = 4096
    As = [torch.randn(mg, k, device="cuda").half() for mg in ms]
    Bs = [torch.randn(n, k, device="cuda").half() for _ in ms]
    Cs = [torch.empty(mg, n, device="cuda", dtype=torch.float16) for mg in ms]
    ptrs = lambda ts: torch.tensor([t.data_ptr() for t in ts], device="cuda", dtype=torch.int64)
    a_p, b_p, c_p = ptrs(As), ptrs(Bs), ptrs(Cs)
    sizes = torch.tensor([[mg, n, k] for mg in ms], device="cuda", dtype=torch.int32).flatten()
    kern = workloads.Loaded(os.path.join(base, by_id["shared/gemm_grouped/default"]["metadata"]))
    grouped_tawa = kern.kernel.prepare(a_p, b_p, c_p, sizes, groups, grid=(132,))
    grouped_triton = lambda: tk.gemm_grouped[(132,)](a_p, b_p, c_p, sizes, groups, 128, 128, 64, 132,
                                                     num_warps=8, num_stages=4)
    grouped_flops = 2.0 * n * k * sum(ms)

    gm = gn = 8192
    gk = 4096
    ga = torch.randn(gm, gk, device="cuda").half()
    gb = torch.randn(gn, gk, device="cuda").half()
    gc = torch.empty(gm, gn, device="cuda", dtype=torch.float16)
    kern = workloads.Loaded(os.path.join(base, by_id["examples/gemm_fp16/default"]["metadata"]))
    gemm_tawa = workloads.prepare_gemm(kern, ga, gb, gc, gm, gn, gk)
    gemm_cublas = lambda: torch.mm(ga, gb.t(), out=gc)
    gemm_flops = 2.0 * gm * gn * gk

    print(f"{'workload':10s} {'kernel':7s} {'TFLOP/s':>8s} {'W':>6s} {'MHz':>6s}  throttle reasons")
    for name, flops, fns in [("batched", batched_flops, [("tawa", batched_tawa), ("triton", batched_triton)]),
                             ("grouped", grouped_flops, [("tawa", grouped_tawa), ("triton", grouped_triton)]),
                             ("gemm_fp16", gemm_flops, [("tawa", gemm_tawa), ("cublas", gemm_cublas)])]:
        for label, fn in fns:
            fn()
            rate, power, clock, reasons = sustained(fn, args.seconds)
            print(f"{name:10s} {label:7s} {rate * flops / 1e12:8.1f} {power:6.0f} {clock:6.0f}  {' '.join(reasons)}",
                  flush=True)


if __name__ == "__main__":
    main()
