#!/usr/bin/env python3
"""Compare tawa configurations of one kernel with repeated, interleaved
measurements, to choose the compiler's defaults on data rather than on one
noisy run.

    bench/tune_gemm.py --manifest build-kernels/manifest.json [--rounds 3]

For each case (a kernel, a shape, the configurations to compare) every
round times each configuration once (median of triton.testing.do_bench,
L2 cleared before every call), in a rotated order; the table gives each
configuration's median over rounds and its spread (max - min over rounds),
relative to the first configuration. Outputs are checked against float32
once per configuration.
"""
import argparse
import hashlib
import json
import os
import statistics
import sys

import torch

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "gpu", "compiled"))
sys.path.insert(0, os.path.join(REPO, "bench"))
import workloads  # noqa: E402
from gemm_bench import median_ms, rel_err  # noqa: E402

# (kernel, (M, N, K), configurations); the first is the reference.
CASES = [
    # 2-CTA clusters with TMA multicast (C2) against the default one-CTA
    # launches, with cuBLAS in the same rounds.
    ("examples/gemm_fp16", (8192, 8192, 512), ["default", "C2", "cublas"]),
    ("examples/gemm_fp16", (8192, 8192, 1024), ["default", "C2", "cublas"]),
    ("examples/gemm_fp16", (8192, 8192, 4096), ["default", "C2", "cublas"]),
    ("examples/gemm_fp16", (8192, 8192, 16384), ["default", "C2", "cublas"]),
    ("examples/gemm_bf16", (8192, 8192, 1024), ["default", "C2", "cublas"]),
    ("examples/gemm_bf16", (8192, 8192, 16384), ["default", "C2", "cublas"]),
    ("examples/gemm_fp8", (8192, 8192, 4096), ["default", "C2", "cublas"]),
    # The default MMA depth, versioned on the K loop's trip count (P = 1 up to
    # 8 iterations, else 2), against each depth alone.
    ("examples/gemm_fp16", (8192, 8192, 256), ["default", "D4P1", "D4P2", "cublas"]),
    ("examples/gemm_fp16", (8192, 8192, 512), ["default", "D4P1", "D4P2", "cublas"]),
    ("examples/gemm_fp16", (8192, 8192, 4096), ["default", "D4P1", "D4P2", "cublas"]),
    ("examples/gemm_bf16", (8192, 8192, 512), ["default", "D4P1", "D4P2", "cublas"]),
    ("examples/gemm_bf16", (8192, 8192, 4096), ["default", "D4P1", "D4P2", "cublas"]),
    ("examples/gemm_fp8", (8192, 8192, 1024), ["default", "D4P1", "D4P2", "cublas"]),
    ("examples/gemm_fp8", (8192, 8192, 4096), ["default", "D4P1", "D4P2", "cublas"]),
    # The ring of three slots that D = alpha A B^T + beta C's tile of C leaves
    # a 128 x 256 bf16 kernel (examples/gemm_axpby_bf16) against the plain
    # kernel's four (D3P1 against the default D = 4, P = 2, and D4P1).
    ("examples/gemm_bf16", (8192, 8192, 8192), ["default", "D3P1", "D4P1", "cublas"]),
    # The deferred epilogue (default: two of a 128 x 256 tile's four boxes
    # stored in the next tile's K loop) against storing them at once (EO0)
    # and deferring all four (EO4).
    ("examples/gemm_fp16", (8192, 8192, 512), ["default", "EO0", "EO4", "cublas"]),
    ("examples/gemm_fp16", (8192, 8192, 1024), ["default", "EO0", "EO4", "cublas"]),
    ("examples/gemm_fp16", (8192, 8192, 2048), ["default", "EO0", "EO4", "cublas"]),
    ("examples/gemm_fp16", (8192, 8192, 4096), ["default", "EO0", "EO4", "cublas"]),
    ("examples/gemm_fp16", (8192, 8192, 16384), ["default", "EO0", "EO4", "cublas"]),
    ("examples/gemm_bf16", (8192, 8192, 1024), ["default", "EO0", "EO4", "cublas"]),
    ("examples/gemm_bf16", (8192, 8192, 2048), ["default", "EO0", "EO4", "cublas"]),
    ("examples/gemm_fp8", (8192, 8192, 1024), ["default", "EO0", "EO4", "cublas"]),
    ("examples/gemm_fp8", (8192, 8192, 4096), ["default", "EO0", "EO4", "cublas"]),
    # The heuristic's defaults against the optimal schedule (--schedule=optimal)
    # and against the solved lag realized literally (OPTP1: P = 1 in one
    # version, every box deferred).
    ("examples/gemm_fp16", (8192, 8192, 1024), ["default", "OPT", "OPTP1", "D4P1"]),
    ("examples/gemm_fp16", (8192, 8192, 4096), ["default", "OPT", "OPTP1", "D4P1"]),
    ("examples/gemm_fp16", (8192, 8192, 16384), ["default", "OPT", "OPTP1", "D4P1"]),
    ("examples/gemm_bf16", (8192, 8192, 1024), ["default", "OPT", "OPTP1"]),
    ("examples/gemm_bf16", (8192, 8192, 4096), ["default", "OPT", "OPTP1"]),
    ("examples/gemm_bf16", (8192, 8192, 16384), ["default", "OPT", "OPTP1"]),
    ("examples/gemm_fp8", (8192, 8192, 1024), ["default", "OPT", "OPTP1"]),
    ("examples/gemm_fp8", (8192, 8192, 4096), ["default", "OPT", "OPTP1"]),
    ("examples/gemm_fp8", (8192, 8192, 16384), ["default", "OPT", "OPTP1"]),
    ("examples/gemm_fp16_128x128", (8192, 8192, 4096), ["default", "OPT", "G2"]),
    ("examples/gemm_fp16_128x128", (8192, 8192, 1024), ["default", "OPT", "G2"]),
    # 128 x 128 tiles of a 1-D grid paired along the tile column, their
    # products fused into one m64n256 wgmma (the default) against the kernel
    # unpaired (ping-pong, the default before), cuBLAS alongside.
    ("examples/gemm_fp16_128x128", (8192, 8192, 1024), ["default", "NOPAIR", "cublas"]),
    ("examples/gemm_fp16_128x128", (8192, 8192, 4096), ["default", "NOPAIR", "cublas"]),
    ("examples/gemm_fp16_128x128", (8192, 8192, 8192), ["default", "NOPAIR", "cublas"]),
    ("examples/gemm_fp16_bk32", (8192, 8192, 8192), ["default", "NOPAIR", "cublas"]),
    ("examples/gemm_bf16_bk16", (8192, 8192, 8192), ["default", "NOPAIR", "cublas"]),
    ("examples/gemm_fp8_bk32", (8192, 8192, 8192), ["default", "NOPAIR", "cublas"]),
]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--manifest", required=True)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--json", help="write the results here")
    ap.add_argument("--exclude", action="append", default=[], metavar="CONFIG",
                    help="skip the cases that compare this configuration (repeatable)")
    ap.add_argument("--only", metavar="CONFIG",
                    help="only the cases that compare this configuration")
    args = ap.parse_args()
    base = os.path.dirname(os.path.abspath(args.manifest))
    by_id = {e["id"]: e for e in json.load(open(args.manifest))["kernels"]}
    results = []
    checked, failed = 0, 0
    for case, (kid, (m, n, k), configs) in enumerate(CASES):
        if args.only and args.only not in configs:
            continue
        if any(x in configs for x in args.exclude):
            continue
        in_dt = (torch.float8_e4m3fn if "fp8" in kid else
                 torch.bfloat16 if "bf16" in kid else torch.float16)
        out_dt = torch.bfloat16 if in_dt == torch.bfloat16 else torch.float16
        scale = 0.5 if in_dt == torch.float8_e4m3fn else 1.0
        a = (torch.randn(m, k, device="cuda") * scale).to(in_dt)
        b = (torch.randn(n, k, device="cuda") * scale).to(in_dt)
        ref = a.float() @ b.float().T
        plans, times, digests = {}, {}, {}
        for cfg in configs:
            if cfg == "cublas":
                # The library on the same inputs, timed in the same rounds.
                c = torch.empty((m, n), device="cuda", dtype=out_dt)
                if in_dt == torch.float8_e4m3fn:
                    one = torch.ones((), device="cuda")
                    plan = (lambda a=a, b=b, one=one: torch._scaled_mm(
                        a, b.t(), scale_a=one, scale_b=one, out_dtype=out_dt))
                else:
                    plan = lambda a=a, b=b, c=c: torch.mm(a, b.t(), out=c)
                plans[cfg] = (plan, c)
                times[cfg] = []
                continue
            e = by_id.get(f"{kid}/{cfg}")
            if not e or e["error"]:
                print(f"FAIL {kid}/{cfg}: not compiled")
                failed += 1
                continue
            meta_path = os.path.join(base, e["metadata"])
            kern = workloads.Loaded(meta_path)
            with open(os.path.join(os.path.dirname(meta_path), kern.meta["cubin"]), "rb") as f:
                digests[cfg] = hashlib.sha256(f.read()).hexdigest()
            c = torch.full((m, n), float("nan"), device="cuda", dtype=out_dt)
            plan = workloads.prepare_gemm(kern, a, b, c, m, n, k)
            plan()
            torch.cuda.synchronize()
            err = rel_err(c, ref)
            checked += 1
            if not err <= workloads.BOUNDS[(kern.dtype(0), kern.dtype(2))]:
                print(f"FAIL {kid}/{cfg}: rel err {err:.2e}")
                failed += 1
                continue
            plans[cfg] = (plan, c)
            times[cfg] = []
        order = list(plans)
        for r in range(args.rounds):
            for cfg in order[r % len(order):] + order[:r % len(order)]:
                times[cfg].append(median_ms(plans[cfg][0]))
        flops = 2.0 * m * n * k
        ref_cfg = order[0]
        print(f"\n{kid} M={m} N={n} K={k} ({args.rounds} rounds, interleaved)")
        for cfg in order:
            tf = [flops / t / 1e9 for t in times[cfg]]
            med = statistics.median(tf)
            base_med = statistics.median(flops / t / 1e9 for t in times[ref_cfg])
            # A configuration that compiles to the reference's very CUBIN
            # measures the noise of this comparison.
            same = (cfg != ref_cfg and cfg in digests
                    and digests.get(cfg) == digests.get(ref_cfg))
            print(f"  {cfg:8s} {med:7.1f} TFLOP/s  (spread {max(tf) - min(tf):5.1f})  "
                  f"{med / base_med:6.3f}x {ref_cfg}"
                  + (f"  (the same CUBIN as {ref_cfg})" if same else ""))
            results.append({"case": case, "kernel": kid, "shape": [m, n, k], "config": cfg,
                            "tflops": tf, "median": med, "same_cubin_as_reference": same})
        del a, b, ref, plans
        torch.cuda.empty_cache()
    # Geometric mean over cases of each configuration's median relative to
    # the case's first (reference) configuration.
    ratios = {}
    for case, (kid, shape, configs) in enumerate(CASES):
        got = {r["config"]: r["median"] for r in results if r["case"] == case}
        if configs[0] in got:
            for cfg in configs[1:]:
                if cfg in got:
                    ratios.setdefault(cfg, []).append(got[cfg] / got[configs[0]])
    identical = {}
    for r in results:
        if r["same_cubin_as_reference"]:
            identical[r["config"]] = identical.get(r["config"], 0) + 1
    for cfg, rs in ratios.items():
        gm = statistics.geometric_mean(rs)
        same = (f"; the same CUBIN as the reference in {identical[cfg]}"
                if cfg in identical else "")
        print(f"{cfg:8s} / reference: geomean {gm:.3f} over {len(rs)} cases "
              f"(min {min(rs):.3f}, max {max(rs):.3f}{same})")
    if args.json:
        json.dump(results, open(args.json, "w"), indent=1)
    print(f"\n{checked - failed} passed, {failed} failed (outputs checked against float32)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
