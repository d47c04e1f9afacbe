#!/usr/bin/env python3
"""Batched or grouped GEMM sample (the shapes of gemm_bench.py --family):
several tawa configurations against Triton's best configuration of the same
source, timed in interleaved rounds (medians), then the default, the two
fastest configurations and Triton each run back to back for a few seconds
while nvidia-smi samples power and SM clock (bench/sustained_family.py):

    bench/family_variants.py --manifest build-kernels/manifest.json --workload batched \\
        --config default --config PAIR --config PP
    bench/family_variants.py --manifest build-kernels/manifest.json --workload grouped \\
        --config default --config NOPP --config NOSW --triton-tile-order
    (--extra NAME=METADATA.json adds a kernel compiled elsewhere)

Every kernel's output is checked against a float32 product first (NaN-
poisoned, relative error below 1e-2)."""
import argparse
import json
import os
import sys
import tempfile

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


def tile_order_source(path):
    """The Triton samples with gemm_grouped's row-major split replaced by
    groups of 8 tile rows (Triton's matmul-tutorial order; the bijection
    tawac --tile-swizzle=8 applies), loaded like the original."""
    src = open(path).read()
    old = "            pid_m = t // nn; pid_n = t % nn\n"
    if old not in src:
        sys.exit(f"{path}: gemm_grouped's tile split not found")
    new = ("            w = 8 * nn; fm = (t // w) * 8; g = tl.minimum(nm - fm, 8); tw = t % w\n"
           "            pid_m = fm + tw % g; pid_n = tw // g\n")
    out = os.path.join(tempfile.mkdtemp(), "triton_kernels_8rows.py")
    with open(out, "w") as f:
        f.write(src.replace(old, new))
    return load_jit_functions(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--manifest", required=True)
    ap.add_argument("--workload", choices=["batched", "grouped"], default="grouped")
    ap.add_argument("--config", action="append", default=[],
                    help="a configuration of the sample in the manifest (repeatable)")
    ap.add_argument("--extra", action="append", default=[],
                    help="NAME=METADATA.json: another compiled kernel of the sample (repeatable)")
    ap.add_argument("--triton-extra", action="append", default=[],
                    help="NAME=SOURCE.py: Triton compiling another version of the sample's "
                         "source, also at its best configuration (repeatable)")
    ap.add_argument("--triton-tile-order", action="store_true",
                    help="also Triton compiling the grouped source with its tile walk in groups of 8 "
                         "rows, as tawac --tile-swizzle reorders it (a reference: what the user "
                         "would get from Triton by writing that order)")
    ap.add_argument("--json", help="write the medians, rounds and sustained rates here")
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

    def checked(name, fn, bufs):
        """Runs fn once on NaN-poisoned outputs; exits on a wrong result."""
        As, Bs, Cs = operands(args.workload, bufs)
        for c in Cs:
            c.fill_(float("nan"))
        fn()
        torch.cuda.synchronize()
        err = max(((c.float() - a.float() @ b.float().T).abs().max()
                   / (a.float() @ b.float().T).abs().max()).item() for a, b, c in zip(As, Bs, Cs))
        if not err < 1e-2:
            sys.exit(f"{name}: wrong result (relative error {err})")
        return err

    fns, keep = {}, []
    for name, path in kerns.items():
        kern = workloads.Loaded(path)
        tawa, _, flops, bufs = launch(kern, tk, 8, 3)
        err = checked(name, tawa, bufs)
        print(f"{name:8s} smem {kern.meta['dynamic_smem_bytes']} max rel err {err:.2e}", flush=True)
        fns[name] = tawa
        keep.append(bufs)
    first = workloads.Loaded(next(iter(kerns.values())))
    sources = [("triton", tk)] + [(e.split("=", 1)[0], load_jit_functions(e.split("=", 1)[1]))
                                  for e in args.triton_extra]
    if args.triton_tile_order:
        sources.append(("triton_8rows", tile_order_source(os.path.join(base, "sources", "triton_kernels.py"))))
    for tname, module in sources:
        best = None
        for w, s in [(4, 3), (8, 3), (8, 4)]:
            _, tri, flops, bufs = launch(first, module, w, s)
            checked(f"{tname} w{w}s{s}", tri, bufs)
            t = median_ms(tri)
            keep.append(bufs)
            print(f"{tname} w{w}s{s} {flops / t / 1e9:.1f}", flush=True)
            if best is None or t < best[0]:
                best = (t, tri)
        fns[tname] = best[1]
    med, times = interleaved(fns, args.rounds)
    for name in fns:
        print(f"{name:8s} {flops / med[name] / 1e9:7.1f} TFLOP/s  x{med['triton'] / med[name]:.3f} vs Triton  rounds "
              + " ".join(f"{flops / t / 1e9:.0f}" for t in times[name]), flush=True)
    extra_tritons = [t for t, _ in sources[1:]]
    top = sorted((n for n in fns if n != "triton" and n not in extra_tritons), key=lambda n: med[n])[:2]
    rows = {name: {"tflops": flops / med[name] / 1e9, "vs_triton": med["triton"] / med[name],
                   "rounds": [flops / t / 1e9 for t in times[name]]} for name in fns}
    for name in [n for n in ["default"] if n in fns] + [t for t in top if t != "default"] + ["triton"] + extra_tritons:
        rate, p, clk, rs = sustained(fns[name], args.seconds)
        rows[name]["sustained"] = {"tflops": rate * flops / 1e12, "watts": p, "sm_mhz": clk}
        print(f"sustained {name:8s} {rate * flops / 1e12:.1f} TFLOP/s {p:.0f} W {clk:.0f} MHz {rs}", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"workload": args.workload, "rounds": args.rounds, "configs": rows}, f, indent=1)


if __name__ == "__main__":
    main()
