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

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "gpu", "compiled"))
sys.path.insert(0, os.path.join(REPO, "bench"))
import family_launch  # noqa: E402
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

    kern = workloads.Loaded(os.path.join(base, by_id["shared/gemm_batched/default"]["metadata"]))
    batched_tawa, batched_triton, batched_flops, batched_buffers = family_launch.batched(
        kern, tk, warps=4, stages=3)
    kern = workloads.Loaded(os.path.join(base, by_id["shared/gemm_grouped/default"]["metadata"]))
    grouped_tawa, grouped_triton, grouped_flops, grouped_buffers = family_launch.grouped(
        kern, tk, warps=8, stages=4)

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
