#!/usr/bin/env python3
"""SM cycles of two tawa configurations of a GEMM at fixed clocks: Nsight
Compute (its default clock control holds the SM clock at the base clock
while it profiles, and restores it after) profiles one launch of each
configuration in turn, so the comparison is of schedules, free of the power
cap and the clock the board picks under it:

    bench/cycles_gemm.py --manifest build-kernels/manifest.json \
        [--pairs default:OPT] [--kernels examples/gemm_fp16,...] [--ks 4096,16384]

Prints, per kernel and K, each configuration's SM cycles (sm__cycles_elapsed.avg),
tensor-pipe activity and the ratio of the second configuration's cycles to
the first's (below 1: the second is faster at equal clocks).
"""
import argparse
import os
import re
import statistics
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
METRICS = ("sm__cycles_elapsed.avg,sm__cycles_elapsed.avg.per_second,"
           "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active")
KERNEL_NAME = {"examples/gemm_fp16": "matmul_kernel", "examples/gemm_bf16": "matmul_kernel",
               "examples/gemm_fp8": "matmul_kernel", "examples/gemm_fp16_128x128": "matmul_kernel"}


def profile(manifest, kid, shape):
    """(cycles, GHz, tensor %) of one launch of kernel id `kid` after warm-up."""
    name = KERNEL_NAME.get(kid.rsplit("/", 1)[0], "regex:.*")
    cmd = ["ncu", "--kernel-name", name, "--launch-skip", "3", "--launch-count", "1",
           "--metrics", METRICS, sys.executable, os.path.join(REPO, "bench", "profile_gemm.py"),
           "--manifest", manifest, "--kernel", kid, "--shape", shape, "--no-cublas"]
    out = subprocess.run(cmd, capture_output=True, text=True).stdout
    vals = {}
    for metric in ("sm__cycles_elapsed.avg.per_second", "sm__cycles_elapsed.avg",
                   "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active"):
        m = re.search(re.escape(metric) + r"\s+\S+\s+([\d,.]+)\s*$", out, re.M)
        if not m:
            raise RuntimeError(f"ncu gave no {metric} for {kid} {shape}:\n{out[-2000:]}")
        vals[metric] = float(m.group(1).replace(",", ""))
    return (vals["sm__cycles_elapsed.avg"], vals["sm__cycles_elapsed.avg.per_second"],
            vals["sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active"])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--manifest", required=True)
    ap.add_argument("--pairs", default="default:OPT", help="FIRST:SECOND configuration names")
    ap.add_argument("--kernels", default="examples/gemm_fp16,examples/gemm_bf16,examples/gemm_fp8")
    ap.add_argument("--ks", default="1024,4096,16384")
    ap.add_argument("--mn", type=int, default=8192)
    args = ap.parse_args()
    first, second = args.pairs.split(":")
    ratios = []
    print(f"{'kernel':28s} {'K':>6s}  {first + ' cycles':>14s} {'GHz':>5s} {'TC %':>6s}  "
          f"{second + ' cycles':>14s} {'GHz':>5s} {'TC %':>6s}  {second}/{first}")
    for kid in args.kernels.split(","):
        for k in args.ks.split(","):
            shape = f"{args.mn},{args.mn},{k}"
            a = profile(args.manifest, f"{kid}/{first}", shape)
            b = profile(args.manifest, f"{kid}/{second}", shape)
            ratios.append(b[0] / a[0])
            print(f"{kid:28s} {k:>6s}  {a[0]:14,.0f} {a[1]:5.2f} {a[2]:6.2f}  "
                  f"{b[0]:14,.0f} {b[1]:5.2f} {b[2]:6.2f}  {b[0] / a[0]:.4f}", flush=True)
    print(f"{second}/{first} cycles: geomean {statistics.geometric_mean(ratios):.4f} over "
          f"{len(ratios)} cases (min {min(ratios):.4f}, max {max(ratios):.4f})")


if __name__ == "__main__":
    main()
