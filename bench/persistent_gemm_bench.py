#!/usr/bin/env python3
"""GEMMs written persistent (their own tile loop over NUM_SMS programs, as in Triton's persistent-matmul
tutorial: examples/kernels.py, matmul_persistent_kernel), side by side in one run: tawa (the manifest's
kernels, default configuration and any --config), Triton compiling the same source with the same blocks
and grid (the best of num_stages 3 and 4, 8 warps), and cuBLAS (torch.matmul).

    bench/persistent_gemm_bench.py --manifest build-kernels/manifest.json [--size 8192] [--config NOPP]

C = A B^T, f16, A (M x K) and B (N x K) row-major. Every output is checked against a float32 product
before it is timed; times are medians of triton.testing.do_bench over --rounds interleaved rounds.
"""
import os
import sys

import torch
import triton
from triton.tools.tensor_descriptor import TensorDescriptor

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "bench"))
sys.path.insert(0, os.path.join(REPO, "gpu", "compiled"))
sys.path.insert(0, os.path.join(REPO, "examples"))
import gemm_bench  # noqa: E402
import kernels as examples  # noqa: E402
import workloads  # noqa: E402

# kernel id -> (BLOCK_M, BLOCK_N, BLOCK_K, NUM_SMS)
KERNELS = {
    "examples/gemm_persistent_fp16_128x128": (128, 128, 64, 132),
}


def main():
    args = gemm_bench.side_by_side_args(
        __doc__, "also time this configuration (where the manifest has it), in the same rounds")
    by_id, base = gemm_bench.load_manifest(args.manifest)
    m = n = k = args.size
    flops = 2.0 * m * n * k
    rows, failed = [], False
    for kid, (bm, bn, bk, sms) in KERNELS.items():
        configs = {c: gemm_bench.kernel_row(by_id, base, f"{kid}/{c}") for c in ["default"] + args.config}
        if configs["default"] is None:
            print(f"FAIL {kid}: not compiled")
            failed = True
            continue
        configs = {c: kr for c, kr in configs.items() if kr is not None}
        a = torch.randn(m, k, device="cuda").to(torch.float16)
        b = torch.randn(n, k, device="cuda").to(torch.float16)
        ref = a.float() @ b.float().T
        names = [f"tawa:{c}" for c in configs] + ["triton", "cublas"]
        outs = {s: torch.full((m, n), float("nan"), device="cuda", dtype=torch.float16) for s in names}
        grid = (min(sms, triton.cdiv(m, bm) * triton.cdiv(n, bn)),)
        fns = {}
        for c, kr in configs.items():
            out = outs[f"tawa:{c}"]
            fns[f"tawa:{c}"] = kr.kernel.prepare(*workloads.desc_args(a), *workloads.desc_args(b),
                                                 *workloads.desc_args(out), m, n, k, grid=grid)
        da, db = TensorDescriptor.from_tensor(a, [bm, bk]), TensorDescriptor.from_tensor(b, [bn, bk])
        dc = TensorDescriptor.from_tensor(outs["triton"], [bm, bn])

        def triton_fn(stages):
            return lambda: examples.matmul_persistent_kernel[grid](
                da, db, dc, m, n, k, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_SIZE_M=8, NUM_SMS=sms,
                num_warps=8, num_stages=stages)

        def cublas():
            torch.matmul(a, b.T, out=outs["cublas"])

        triton_best = min((gemm_bench.median_ms(triton_fn(s)), s) for s in (3, 4))
        fns["triton"] = triton_fn(triton_best[1])
        fns["cublas"] = cublas
        errs, ok, tf = gemm_bench.check_and_time(fns, outs, ref, args.rounds, flops)
        row = {"kernel": kid, "shape": [m, n, k], "tile": [bm, bn, bk], "grid": list(grid), "tflops": tf,
               "rel_error": errs, "triton_stages": triton_best[1],
               "ratio_triton": tf["tawa:default"] / tf["triton"],
               "ratio_cublas": tf["tawa:default"] / tf["cublas"],
               "default_over_config": {c: tf["tawa:default"] / tf[f"tawa:{c}"] for c in configs if c != "default"},
               "ok": ok}
        if args.sustained:
            row["sustained"] = gemm_bench.sustained_rows(fns, flops, args.sustained, "f16")
            gemm_bench.print_sustained(kid, row["sustained"])
        rows.append(row)
        failed |= not ok
        extra = "".join(f"  default/{c} {r:.3f}" for c, r in row["default_over_config"].items())
        print(f"{'PASS' if ok else 'FAIL'} {kid:40s} tawa {tf['tawa:default']:6.1f}  Triton {tf['triton']:6.1f}  "
              f"cuBLAS {tf['cublas']:6.1f} TFLOP/s  tawa/Triton {row['ratio_triton']:.3f}  "
              f"tawa/cuBLAS {row['ratio_cublas']:.3f}{extra}  "
              f"errors {', '.join(f'{s} {e:.1e}' for s, e in errs.items())}", flush=True)
    gemm_bench.finish(rows, failed, args.json)


if __name__ == "__main__":
    main()
