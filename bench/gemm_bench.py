#!/usr/bin/env python3
"""GEMM speed of the kernels tawa compiled from examples/kernels.py, side by
side in one run with cuBLAS and with Triton compiling the same kernel source.

    bench/gemm_bench.py --manifest build-kernels/manifest.json [--dtypes f16,bf16,fp8]

C = A B^T, A (M x K) and B (N x K) row-major, M = N = 8192 by default, K
swept. tawa: the manifest's `examples/gemm_<dtype>/default` kernel (the
compiler's default choices), launched through a prepared runtime launch.
cuBLAS: torch.mm (fp16, bf16) or torch._scaled_mm with unit scales (fp8
e4m3 inputs, fp16 output). Triton: `matmul_kernel` of examples/kernels.py
with host TensorDescriptors, the best of three tile configurations. Every
system's output is checked against a float32 product before it is timed.
Times are medians of triton.testing.do_bench (25 ms warm-up, 200 ms of
repetitions; it clears a 256 MB buffer before every call, so L2 starts
cold). Writes bench/results/<date>-<device>-gemm.json with one row per
(dtype, shape): {"workload", "shape", "tflops": {"tawa", "cublas",
"triton"}, ...}.
"""
import argparse
import datetime
import json
import os
import shlex
import socket
import sys

import torch
import triton
import triton.testing
from triton.tools.tensor_descriptor import TensorDescriptor

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "gpu", "compiled"))
sys.path.insert(0, os.path.join(REPO, "examples"))
import workloads  # noqa: E402
import kernels as examples  # noqa: E402

DT = {"f16": (torch.float16, torch.float16), "bf16": (torch.bfloat16, torch.bfloat16),
      "fp8": (torch.float8_e4m3fn, torch.float16)}
KERNEL_ID = {"f16": "examples/gemm_fp16", "bf16": "examples/gemm_bf16", "fp8": "examples/gemm_fp8"}
# Triton configurations (BM, BN, BK, warps, stages); the best one is kept.
TRITON_CONFIGS = {
    "f16": [(128, 256, 64, 8, 3), (128, 256, 64, 8, 4), (128, 128, 64, 8, 4)],
    "bf16": [(128, 256, 64, 8, 3), (128, 256, 64, 8, 4), (128, 128, 64, 8, 4)],
    "fp8": [(128, 256, 128, 8, 3), (128, 256, 128, 8, 4), (128, 128, 128, 8, 4)],
}
KS = [256, 512, 1024, 2048, 4096, 8192, 16384]


def median_ms(fn):
    return triton.testing.do_bench(fn, warmup=25, rep=200, return_mode="median")


def rel_err(out, ref):
    return (torch.linalg.norm(out.float() - ref) / torch.linalg.norm(ref)).item()


def triton_runner(dt, a, b, c, m, n, k, cfg):
    bm, bn, bk, warps, stages = cfg
    ad = TensorDescriptor.from_tensor(a, [bm, bk])
    bd = TensorDescriptor.from_tensor(b, [bn, bk])
    cd = TensorDescriptor.from_tensor(c, [bm, bn])
    grid = (triton.cdiv(m, bm) * triton.cdiv(n, bn),)

    def run():
        examples.matmul_kernel[grid](ad, bd, cd, m, n, k, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk,
                                     GROUP_SIZE_M=8, num_warps=warps, num_stages=stages)
    return run


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--manifest", required=True)
    ap.add_argument("--dtypes", default="f16,bf16,fp8")
    ap.add_argument("--ks", default=",".join(map(str, KS)))
    ap.add_argument("--m", type=int, default=8192)
    ap.add_argument("--n", type=int, default=8192)
    ap.add_argument("--results-dir", default=os.path.join(REPO, "bench", "results"))
    args = ap.parse_args()

    base = os.path.dirname(os.path.abspath(args.manifest))
    manifest = json.load(open(args.manifest))
    by_id = {e["id"]: e for e in manifest["kernels"]}
    dev = torch.cuda.get_device_name()
    torch.manual_seed(int.from_bytes(os.urandom(4), "little"))
    m, n = args.m, args.n
    rows, failures = [], 0
    for dname in args.dtypes.split(","):
        in_dt, out_dt = DT[dname]
        entry = by_id.get(KERNEL_ID[dname] + "/default")
        if not entry or entry["error"]:
            print(f"FAIL {dname}: no compiled kernel {KERNEL_ID[dname]}/default")
            failures += 1
            continue
        kern = workloads.Loaded(os.path.join(base, entry["metadata"]))
        bm, bn = kern.box(0)[0], kern.box(1)[0]
        cfg_tawa = kern.meta.get("_tawa", {})
        for k in [int(x) for x in args.ks.split(",")]:
            scale = 0.5 if in_dt == torch.float8_e4m3fn else 1.0
            a = (torch.randn(m, k, device="cuda") * scale).to(in_dt)
            b = (torch.randn(n, k, device="cuda") * scale).to(in_dt)
            ref = a.float() @ b.float().T
            c = torch.empty(m, n, device="cuda", dtype=out_dt)
            plan = kern.kernel.prepare(*workloads.desc_args(a), *workloads.desc_args(b),
                                       *workloads.desc_args(c), m, n, k,
                                       grid=(triton.cdiv(m, bm) * triton.cdiv(n, bn),))
            c.fill_(float("nan"))
            plan()
            torch.cuda.synchronize()
            errs = {"tawa": rel_err(c, ref)}
            t_tawa = median_ms(plan)
            if in_dt == torch.float8_e4m3fn:
                one = torch.ones((), device="cuda")
                cublas = lambda: torch._scaled_mm(a, b.t(), scale_a=one, scale_b=one, out_dtype=out_dt)
                errs["cublas"] = rel_err(cublas(), ref)
            else:
                cublas = lambda: torch.mm(a, b.t(), out=c)
                cublas()
                errs["cublas"] = rel_err(c, ref)
            t_cublas = median_ms(cublas)
            best = None
            for cfg in TRITON_CONFIGS[dname]:
                ct = torch.empty(m, n, device="cuda", dtype=out_dt)
                run = triton_runner(dname, a, b, ct, m, n, k, cfg)
                try:
                    run()
                    torch.cuda.synchronize()
                except Exception as ex:  # a configuration Triton cannot build
                    print(f"  triton {cfg}: {type(ex).__name__}: {str(ex).splitlines()[0]}")
                    continue
                err = rel_err(ct, ref)
                t = median_ms(run)
                if best is None or t < best[0]:
                    best = (t, cfg, err)
            flops = 2.0 * m * n * k
            tf = {"tawa": flops / t_tawa / 1e9, "cublas": flops / t_cublas / 1e9,
                  "triton": flops / best[0] / 1e9 if best else None}
            if best:
                errs["triton"] = best[2]
            bound = workloads.BOUNDS[(kern.dtype(0), kern.dtype(2))]
            ok = all(e <= bound for e in errs.values())
            failures += not ok
            rows.append({"workload": f"gemm_{dname}", "shape": [m, n, k], "tflops": tf,
                         "rel_error": errs, "ok": ok, "tawa_config": cfg_tawa,
                         "triton_config": list(best[1]) if best else None})
            tri = f"{tf['triton']:7.1f}" if best else "    n/a"
            print(f"{'PASS' if ok else 'FAIL'} gemm_{dname} K={k:6d}: tawa {tf['tawa']:7.1f}  cuBLAS "
                  f"{tf['cublas']:7.1f}  Triton {tri} TFLOP/s; rel err "
                  + ", ".join(f"{s} {e:.1e}" for s, e in errs.items()), flush=True)
            del a, b, c, ref
            torch.cuda.empty_cache()

    os.makedirs(args.results_dir, exist_ok=True)
    date = datetime.datetime.now(datetime.timezone.utc)
    slug = dev.lower().replace(" ", "-")
    path = os.path.join(args.results_dir, f"{date:%Y-%m-%d}-{slug}-gemm.json")
    with open(path, "w") as f:
        json.dump({"device": dev, "date": date.isoformat(timespec="seconds"), "host": socket.gethostname(),
                   "command": " ".join(shlex.quote(x) for x in sys.argv), "commit": manifest["commit"],
                   "torch": torch.__version__, "triton": triton.__version__, "rows": rows}, f, indent=1)
    print(f"wrote {path}")
    print(f"\nGEMM C = A B^T, M = N = {m}, {dev}, median TFLOP/s:")
    print(f"{'dtype':>6} {'K':>6} {'tawa':>7} {'cuBLAS':>7} {'Triton':>7} {'/cuBLAS':>8} {'/Triton':>8}")
    for r in rows:
        t = r["tflops"]
        vs_t = f"{t['tawa'] / t['triton']:8.3f}" if t["triton"] else "     n/a"
        tri = f"{t['triton']:7.1f}" if t["triton"] else "    n/a"
        print(f"{r['workload'][5:]:>6} {r['shape'][2]:>6} {t['tawa']:7.1f} {t['cublas']:7.1f} {tri} "
              f"{t['tawa'] / t['cublas']:8.3f} {vs_t}")
    passed = sum(r["ok"] for r in rows)
    print(f"{passed} passed, {failures} failed")
    return 0 if failures == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
