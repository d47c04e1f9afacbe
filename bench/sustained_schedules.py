#!/usr/bin/env python3
"""Two configurations of a compiled GEMM back to back, each for --seconds,
in alternating order (A B B A), while nvidia-smi samples power and SM clock
(bench/sustained_family.py): throughput and energy per flop at the board's
power cap, where single launches at a cool GPU do not show them.

    bench/sustained_schedules.py --manifest build-kernels/manifest.json \\
        [--pair default:OPT] [--cases examples/gemm_bf16:16384,examples/gemm_fp16:1024]

M = N = 8192; inputs random normal. Prints one line per run.
"""
import argparse
import json
import os
import sys

import torch

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "gpu", "compiled"))
sys.path.insert(0, os.path.join(REPO, "bench"))
import workloads  # noqa: E402
from sustained_family import sustained  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--manifest", required=True)
    ap.add_argument("--pair", default="default:OPT", help="FIRST:SECOND configuration names")
    ap.add_argument("--cases", default="examples/gemm_bf16:16384,examples/gemm_fp16:16384,examples/gemm_fp16:1024",
                    help="KERNEL:K, comma-separated")
    ap.add_argument("--seconds", type=float, default=4.0)
    args = ap.parse_args()
    base = os.path.dirname(os.path.abspath(args.manifest))
    by_id = {e["id"]: e for e in json.load(open(args.manifest))["kernels"]}
    first, second = args.pair.split(":")
    for case in args.cases.split(","):
        kid, k = case.rsplit(":", 1)
        m = n = 8192
        k = int(k)
        dt = torch.bfloat16 if "bf16" in kid else torch.float16
        a = torch.randn(m, k, device="cuda").to(dt)
        b = torch.randn(n, k, device="cuda").to(dt)
        ref = a.float() @ b.float().T
        plans = {}
        for cfg in (first, second):
            kern = workloads.Loaded(os.path.join(base, by_id[f"{kid}/{cfg}"]["metadata"]))
            c = torch.full((m, n), float("nan"), device="cuda", dtype=dt)
            plan = workloads.prepare_gemm(kern, a, b, c, m, n, k)
            plan()
            torch.cuda.synchronize()
            err = ((c.float() - ref).norm() / ref.norm()).item()
            if not err < 1e-2:
                sys.exit(f"{kid}/{cfg}: wrong result (relative error {err})")
            plans[cfg] = (plan, c)
        flops = 2.0 * m * n * k
        for cfg in (first, second, second, first):
            rate, watts, mhz, _ = sustained(plans[cfg][0], args.seconds)
            tflops = rate * flops / 1e12
            print(f"{kid} K={k} {cfg:8s} {tflops:7.1f} TFLOP/s {watts:5.0f} W {mhz:5.0f} MHz "
                  f"{tflops / watts * 1000:6.1f} GFLOP/J", flush=True)


if __name__ == "__main__":
    main()
