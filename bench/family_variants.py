#!/usr/bin/env python3
"""Batched or grouped GEMM sample (the shapes of gemm_bench.py --family):
several tawa configurations against Triton's best configuration of the same
source, timed in interleaved rounds (medians), then the default, the two
fastest configurations and Triton each run back to back for a few seconds
while nvidia-smi samples power and SM clock (bench/sustained_family.py):

    bench/family_variants.py --manifest build-kernels/manifest.json --workload batched \\
        --config default --config PAIR --config PP
    bench/family_variants.py --manifest build-kernels/manifest.json --workload grouped \\
        --config default --config PP --extra D5P1=build-exp/g_D5P1.json

Every kernel's output is checked against a float32 product first (NaN-
poisoned, relative error below 1e-2)."""
import argparse
import os
import sys

import torch
import triton

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "gpu", "compiled"))
sys.path.insert(0, os.path.join(REPO, "bench"))
import family_launch  # noqa: E402
import workloads  # noqa: E402
from gemm_bench import interleaved, load_jit_functions, median_ms  # noqa: E402
from sustained_family import sustained  # noqa: E402


def operands(workload, bufs):
    """Per-product (A, B, C) views of a launch's buffers: the grouped
    sample's lists, or the batched sample's 8 batches stacked along rows."""
    if workload == "grouped":
        return bufs[0], bufs[1], bufs[2]
    a, b, c = bufs[0], bufs[1], bufs[2]
    bt = 8  # family_launch.batched: 8 batches of 2048 x 2048 x 4096
    m, n = a.shape[0] // bt, b.shape[0] // bt
    return ([a[i * m:(i + 1) * m] for i in range(bt)], [b[i * n:(i + 1) * n] for i in range(bt)],
            [c[i * m:(i + 1) * m] for i in range(bt)])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--manifest", required=True)
    ap.add_argument("--workload", choices=["batched", "grouped"], default="grouped")
    ap.add_argument("--config", action="append", default=[],
                    help="a configuration of the sample in the manifest (repeatable)")
    ap.add_argument("--extra", action="append", default=[],
                    help="NAME=METADATA.json: another compiled kernel of the sample (repeatable)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=3.0)
    args = ap.parse_args()
    base = os.path.dirname(os.path.abspath(args.manifest))
    kerns = {c: os.path.join(base, "shared", "gemm_" + args.workload, c + ".json")
             for c in (args.config or ["default"])}
    launch = getattr(family_launch, args.workload)
    for e in args.extra:
        name, path = e.split("=", 1)
        kerns[name] = path
    tk = load_jit_functions(os.path.join(base, "sources", "triton_kernels.py"))
    triton.set_allocator(lambda size, align, stream: torch.empty(size, dtype=torch.int8, device="cuda"))

    fns, keep = {}, []
    for name, path in kerns.items():
        kern = workloads.Loaded(path)
        tawa, _, flops, bufs = launch(kern, tk, 8, 3)
        As, Bs, Cs = operands(args.workload, bufs)
        for c in Cs:
            c.fill_(float("nan"))
        tawa()
        torch.cuda.synchronize()
        err = max(((c.float() - a.float() @ b.float().T).abs().max()
                   / (a.float() @ b.float().T).abs().max()).item() for a, b, c in zip(As, Bs, Cs))
        print(f"{name:8s} smem {kern.meta['dynamic_smem_bytes']} max rel err {err:.2e}", flush=True)
        if not err < 1e-2:
            sys.exit(f"{name}: wrong result (relative error {err})")
        fns[name] = tawa
        keep.append(bufs)
    best = None
    first = workloads.Loaded(next(iter(kerns.values())))
    for w, s in [(4, 3), (8, 3), (8, 4)]:
        _, tri, flops, bufs = launch(first, tk, w, s)
        tri()
        torch.cuda.synchronize()
        t = median_ms(tri)
        keep.append(bufs)
        print(f"triton w{w}s{s} {flops / t / 1e9:.1f}", flush=True)
        if best is None or t < best[0]:
            best = (t, tri)
    fns["triton"] = best[1]
    med, times = interleaved(fns, args.rounds)
    for name in fns:
        print(f"{name:8s} {flops / med[name] / 1e9:7.1f} TFLOP/s  x{med['triton'] / med[name]:.3f} vs Triton  rounds "
              + " ".join(f"{flops / t / 1e9:.0f}" for t in times[name]), flush=True)
    top = sorted((n for n in fns if n != "triton"), key=lambda n: med[n])[:2]
    for name in [n for n in ["default"] if n in fns] + [t for t in top if t != "default"] + ["triton"]:
        rate, p, clk, rs = sustained(fns[name], args.seconds)
        print(f"sustained {name:8s} {rate * flops / 1e12:.1f} TFLOP/s {p:.0f} W {clk:.0f} MHz {rs}", flush=True)


if __name__ == "__main__":
    main()
