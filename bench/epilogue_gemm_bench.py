#!/usr/bin/env python3
"""GEMMs whose epilogue reads more than the accumulator (examples/kernels.py),
side by side in one run, M = N = K = --size:

  scale_silu  C = SiLU((A B^T) * scale[:, None]), the per-row scale read by
              pointer (matmul_scale_silu_kernel, fp16);
  axpby       D = alpha (A B^T) + beta C, the tile of C read by descriptor
              (matmul_axpby_kernel, bf16).

tawa: the manifest's examples/gemm_scale_silu_* and examples/gemm_axpby_*
kernels (default configuration, a prepared launch). Triton: the same source
with the same block sizes, host TensorDescriptors, the best of num_stages 3
and 4 at 8 warps. The vendor anchor: cuBLAS plus the epilogue in PyTorch
(torch.matmul, then the scale and SiLU as PyTorch ops) for scale_silu, and
torch.addmm(C, A, B^T, beta=, alpha=), one cuBLAS call that applies alpha
and beta itself, for axpby.

    bench/epilogue_gemm_bench.py --manifest build-kernels/manifest.json [--size 8192]

Every system's output is checked against a float32 reference before it is
timed. Times are medians of triton.testing.do_bench over --rounds
interleaved rounds (gemm_bench.py's interleaved()). Prints a table; --json
writes the rows.
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

# kernel id -> (workload, BLOCK_M, BLOCK_N, BLOCK_K, element type)
KERNELS = {
    "examples/gemm_scale_silu_fp16": ("scale_silu", 128, 256, 64, torch.float16),
    "examples/gemm_scale_silu_fp16_128x128": ("scale_silu", 128, 128, 64, torch.float16),
    "examples/gemm_axpby_bf16": ("axpby", 128, 256, 64, torch.bfloat16),
    "examples/gemm_axpby_bf16_128x128": ("axpby", 128, 128, 64, torch.bfloat16),
}
ALPHA, BETA = 0.75, -1.25


def cubin(base, config_id):
    with open(os.path.join(base, config_id + ".cubin"), "rb") as f:
        return f.read()


def main():
    args = gemm_bench.side_by_side_args(
        __doc__, "also time this configuration of each kernel (where the manifest has it and its "
        "CUBIN differs from the default's), in the same rounds; reported as default / config")
    by_id, base = gemm_bench.load_manifest(args.manifest)
    m = n = k = args.size
    flops = 2.0 * m * n * k
    rows, failed = [], False
    for kid, (wl, bm, bn, bk, dt) in KERNELS.items():
        kern = gemm_bench.kernel_row(by_id, base, kid + "/default")
        if kern is None:
            print(f"FAIL {kid}: not compiled")
            failed = True
            continue
        a = torch.randn(m, k, device="cuda").to(dt)
        b = torch.randn(n, k, device="cuda").to(dt)
        outs = {s: torch.full((m, n), float("nan"), device="cuda", dtype=dt)
                for s in ("tawa", "triton", "vendor")}
        grid = (triton.cdiv(m, bm) * triton.cdiv(n, bn),)
        consts = dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_SIZE_M=8, num_warps=8)
        da, db = TensorDescriptor.from_tensor(a, [bm, bk]), TensorDescriptor.from_tensor(b, [bn, bk])
        dout = {s: TensorDescriptor.from_tensor(outs[s], [bm, bn]) for s in ("triton",)}
        if wl == "scale_silu":
            scale = torch.rand(m, device="cuda") + 0.5
            ref = a.float() @ b.float().T * scale[:, None]
            ref = ref * torch.sigmoid(ref)
            plan = kern.kernel.prepare(*workloads.desc_args(a), *workloads.desc_args(b),
                                       *workloads.desc_args(outs["tawa"]), scale, m, n, k, grid=grid)

            def triton_fn(stages):
                return lambda: examples.matmul_scale_silu_kernel[grid](
                    da, db, dout["triton"], scale, m, n, k, num_stages=stages, **consts)

            def vendor():
                x = torch.matmul(a, b.T)
                x = x * scale[:, None].to(dt)
                torch.mul(x, torch.sigmoid(x), out=outs["vendor"])
        else:
            c = torch.randn(m, n, device="cuda").to(dt)
            ref = ALPHA * (a.float() @ b.float().T) + BETA * c.float()
            plan = kern.kernel.prepare(*workloads.desc_args(a), *workloads.desc_args(b),
                                       *workloads.desc_args(c), *workloads.desc_args(outs["tawa"]),
                                       ALPHA, BETA, m, n, k, grid=grid)
            dc = TensorDescriptor.from_tensor(c, [bm, bn])

            def triton_fn(stages):
                return lambda: examples.matmul_axpby_kernel[grid](
                    da, db, dc, dout["triton"], ALPHA, BETA, m, n, k, num_stages=stages, **consts)

            def vendor():
                torch.addmm(c, a, b.T, beta=BETA, alpha=ALPHA, out=outs["vendor"])

        triton_best = min((gemm_bench.median_ms(triton_fn(s)), s) for s in (3, 4))
        fns = {"tawa": plan, "triton": triton_fn(triton_best[1]), "vendor": vendor}
        # The optimal schedule's kernel where its CUDA differs from the
        # default's (gemm_axpby_bf16: all epilogue boxes deferred).
        # And the configurations asked for (--config), likewise.
        for config, name in [("OPT", "tawa_opt")] + [(c, f"tawa:{c}") for c in args.config]:
            other = gemm_bench.kernel_row(by_id, base, f"{kid}/{config}")
            if other is None or cubin(base, f"{kid}/{config}") == cubin(base, kid + "/default"):
                continue
            outs[name] = torch.full((m, n), float("nan"), device="cuda", dtype=dt)
            if wl == "scale_silu":
                fns[name] = other.kernel.prepare(*workloads.desc_args(a), *workloads.desc_args(b),
                                                 *workloads.desc_args(outs[name]), scale, m, n, k, grid=grid)
            else:
                fns[name] = other.kernel.prepare(*workloads.desc_args(a), *workloads.desc_args(b),
                                                 *workloads.desc_args(c), *workloads.desc_args(outs[name]),
                                                 ALPHA, BETA, m, n, k, grid=grid)
        errs, ok, tf = gemm_bench.check_and_time(fns, outs, ref, args.rounds, flops, tol=2e-2)
        row = {"kernel": kid, "workload": wl, "shape": [m, n, k], "tile": [bm, bn, bk],
               "tflops": tf, "rel_error": errs, "triton_stages": triton_best[1],
               "ratio_triton": tf["tawa"] / tf["triton"], "ratio_vendor": tf["tawa"] / tf["vendor"],
               "opt_over_default": tf["tawa_opt"] / tf["tawa"] if "tawa_opt" in tf else None,
               "default_over_config": {name.split(":", 1)[1]: tf["tawa"] / tf[name]
                                       for name in tf if name.startswith("tawa:")},
               "ok": ok}
        if args.sustained:
            row["sustained"] = gemm_bench.sustained_rows(fns, flops, args.sustained, "bf16" if dt == torch.bfloat16 else "f16")
            gemm_bench.print_sustained(kid, row["sustained"])
        rows.append(row)
        failed |= not ok
        print(f"{'PASS' if ok else 'FAIL'} {kid:40s} tawa {tf['tawa']:6.1f}  Triton {tf['triton']:6.1f}  "
              f"cuBLAS(+epi) {tf['vendor']:6.1f} TFLOP/s  tawa/Triton {row['ratio_triton']:.3f}  "
              f"tawa/cuBLAS {row['ratio_vendor']:.3f}  "
              + (f"OPT/default {row['opt_over_default']:.3f}  " if row["opt_over_default"] else "")
              + "".join(f"default/{c} {r:.3f}  " for c, r in row["default_over_config"].items())
              + "errors "
              f"{', '.join(f'{s} {e:.1e}' for s, e in errs.items())}", flush=True)
    gemm_bench.finish(rows, failed, args.json)


if __name__ == "__main__":
    main()
