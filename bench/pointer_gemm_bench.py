#!/usr/bin/env python3
"""GEMMs written with tensors of pointers (examples/kernels.py,
matmul_pointer_kernel), side by side in one run: tawa (the manifest's
examples/gemm_ptr_* kernels: pointer tiles turned into TMA by
-tawa-pointer-tile-descriptors), Triton compiling the same source with the
same block sizes (the best of num_stages 3 and 4, 8 warps), and cuBLAS
(torch.matmul on the same tensors).

    bench/pointer_gemm_bench.py --manifest build-kernels/manifest.json [--size 8192]

C = A B, A (M x K) row-major (or column-major: stored as A^T row-major), B
(K x N) row-major, f16 in, f16 out. Every system's output is checked
against a float32 product before it is timed. Times are medians of
triton.testing.do_bench over --rounds interleaved rounds (gemm_bench.py's
interleaved()). --sustained S then runs each back to back for S seconds
with the board's power and SM clock sampled (the rate against the tensor
cores' peak at that clock). Prints a table; --json writes the rows.
"""
import os
import sys

import torch
import triton

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "bench"))
sys.path.insert(0, os.path.join(REPO, "gpu", "compiled"))
sys.path.insert(0, os.path.join(REPO, "examples"))
import gemm_bench  # noqa: E402
import kernels as examples  # noqa: E402
import workloads  # noqa: E402

# kernel id -> (BLOCK_M, BLOCK_N, BLOCK_K, A column-major)
KERNELS = {
    "examples/gemm_ptr_fp16": (128, 256, 64, False),
    "examples/gemm_ptr_fp16_128x128": (128, 128, 64, False),
    "examples/gemm_ptr_fp16_a_colmajor": (128, 128, 64, True),
    "examples/gemm_ptr_fp16_128x64": (128, 64, 64, False),
    "examples/gemm_ptr_fp16_64x128": (64, 128, 64, False),
    "examples/gemm_blockptr_fp16": (128, 256, 64, False),
}
# The Triton kernel each one was compiled from.
SOURCES = {"examples/gemm_blockptr_fp16": "matmul_block_pointer_kernel"}


def main():
    args = gemm_bench.side_by_side_args(
        __doc__, "also time this configuration of each kernel (where the manifest has it), "
        "in the same rounds; reported as default / config")
    by_id, base = gemm_bench.load_manifest(args.manifest)
    m = n = k = args.size
    flops = 2.0 * m * n * k
    rows, failed = [], False
    for kid, (bm, bn, bk, a_col) in KERNELS.items():
        kern = gemm_bench.kernel_row(by_id, base, kid + "/default")
        if kern is None:
            print(f"FAIL {kid}: not compiled")
            failed = True
            continue
        a_store = torch.randn((k, m) if a_col else (m, k), device="cuda").to(torch.float16)
        a = a_store.T if a_col else a_store
        b = torch.randn(k, n, device="cuda").to(torch.float16)
        ref = a.float() @ b.float()
        extra = {c: gemm_bench.kernel_row(by_id, base, f"{kid}/{c}") for c in args.config}
        extra = {c: kr for c, kr in extra.items() if kr is not None}
        outs = {s: torch.full((m, n), float("nan"), device="cuda", dtype=torch.float16)
                for s in ["tawa", "triton", "cublas"] + [f"tawa:{c}" for c in extra]}
        grid = (triton.cdiv(m, bm) * triton.cdiv(n, bn),)
        plan = kern.kernel.prepare(a_store, b, outs["tawa"], m, n, k, a_store.stride(0), b.stride(0),
                                   outs["tawa"].stride(0), grid=grid)
        extra_plans = {f"tawa:{c}": kr.kernel.prepare(a_store, b, outs[f"tawa:{c}"], m, n, k, a_store.stride(0),
                                                       b.stride(0), outs[f"tawa:{c}"].stride(0), grid=grid)
                       for c, kr in extra.items()}

        def triton_fn(stages):
            def run():
                getattr(examples, SOURCES.get(kid, "matmul_pointer_kernel"))[grid](
                    a, b, outs["triton"], m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                    outs["triton"].stride(0), outs["triton"].stride(1), BLOCK_M=bm, BLOCK_N=bn,
                    BLOCK_K=bk, GROUP_SIZE_M=8, num_warps=8, num_stages=stages)
            return run

        def cublas():
            torch.matmul(a, b, out=outs["cublas"])

        triton_best = min((gemm_bench.median_ms(triton_fn(s)), s) for s in (3, 4))
        fns = {"tawa": plan, "triton": triton_fn(triton_best[1]), "cublas": cublas, **extra_plans}
        errs, ok, tf = gemm_bench.check_and_time(fns, outs, ref, args.rounds, flops)
        row = {"kernel": kid, "shape": [m, n, k], "tile": [bm, bn, bk], "a_column_major": a_col,
               "tflops": tf, "rel_error": errs, "triton_stages": triton_best[1],
               "ratio_triton": tf["tawa"] / tf["triton"], "ratio_cublas": tf["tawa"] / tf["cublas"],
               "ok": ok,
               "default_over_config": {name.split(":", 1)[1]: tf["tawa"] / tf[name] for name in extra_plans}}
        if args.sustained:
            row["sustained"] = gemm_bench.sustained_rows(fns, flops, args.sustained)
            gemm_bench.print_sustained(kid, row["sustained"])
        rows.append(row)
        failed |= not ok
        configs = "".join(f"  default/{c} {r:.3f}" for c, r in row["default_over_config"].items())
        print(f"{'PASS' if ok else 'FAIL'} {kid:38s} tawa {tf['tawa']:6.1f}  Triton {tf['triton']:6.1f}  "
              f"cuBLAS {tf['cublas']:6.1f} TFLOP/s  tawa/Triton {row['ratio_triton']:.3f}  "
              f"tawa/cuBLAS {row['ratio_cublas']:.3f}{configs}  "
              f"errors {', '.join(f'{s} {e:.1e}' for s, e in errs.items())}")
    gemm_bench.finish(rows, failed, args.json)


if __name__ == "__main__":
    main()
