#!/usr/bin/env python3
"""Correctness and speed of the hand-written reference GEMM through the tawa
runtime (python/tawa/runtime.py), against PyTorch.

C = A @ B^T with A (M x K), B (N x K), C (M x N), all fp16 row-major.

Correctness: fresh random inputs every run (the seed is printed), odd shapes,
C poisoned with NaN first (including the row padding that keeps TMA strides
16-byte aligned, which must stay NaN), relative error ||C - ref|| / ||ref||
against a float32 reference. Then timing against cuBLAS (torch.mm) at
M = N = 8192 with the K list given, medians of triton.testing.do_bench, which
zeroes a 256 MB buffer before every timed call so each call starts with a
cold L2. Writes bench/results/<date>-<device>.json.
"""
import argparse
import datetime
import faulthandler
import json
import math
import os
import re
import shlex
import socket
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from tawa.runtime import Kernel, TawaError, sm_count  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOL = 1e-2  # fp16 output rounding alone gives ~3e-4

CHECK_SHAPES = [
    (1, 1, 8),
    (127, 255, 72),
    (128, 256, 64),
    (129, 257, 136),
    (300, 520, 1032),
    (1000, 1000, 1000),
    (2048, 1024, 4096),
]


def find_metadata():
    import glob
    found = glob.glob(os.path.join(REPO, "build*", "gpu", "ref_gemm.json"))
    if not found:
        raise SystemExit("no build*/gpu/ref_gemm.json: build gpu/ first (or pass --metadata)")
    return max(found, key=os.path.getmtime)


def pad8(n):
    return (n + 7) // 8 * 8


def alloc_c(m, n):
    """C with rows padded to a multiple of 8 elements (16 bytes), as TMA
    requires of every stride, plus one more 16-byte chunk that must stay
    untouched; returns (view M x N, full padded storage)."""
    storage = torch.full((m, pad8(n) + 8), float("nan"), dtype=torch.float16, device="cuda")
    return storage[:, :n], storage


def check(kernel, m, n, k, gen):
    a = torch.randn(m, k, generator=gen, device="cuda", dtype=torch.float32).half()
    b = torch.randn(n, k, generator=gen, device="cuda", dtype=torch.float32).half()
    c, storage = alloc_c(m, n)
    kernel(a, b, c, m, n, k)
    torch.cuda.synchronize()
    ref = a.float() @ b.float().t()
    out = c.float()
    nonfinite = int((~torch.isfinite(out)).sum())
    # TMA stores write whole 16-byte chunks: the rest of each row's last chunk
    # may receive the (zero) out-of-bounds part of the tile; nothing after it
    # may change.
    tail = storage[:, n:pad8(n)]
    pad_ok = (bool(torch.isnan(storage[:, pad8(n):]).all())
              and bool((torch.isnan(tail) | (tail == 0)).all()))
    err = float(torch.linalg.norm(torch.nan_to_num(out, nan=1e30) - ref) / torch.linalg.norm(ref))
    ok = nonfinite == 0 and pad_ok and err < TOL
    grid, _, tiles = kernel.launch_dims(a, b, c, m, n, k)
    print(f"  {'PASS' if ok else 'FAIL'} M={m} N={n} K={k}: rel err {err:.2e}, "
          f"non-finite {nonfinite}, padding {'intact' if pad_ok else 'WRITTEN'}, "
          f"grid {grid[0]} CTAs for {tiles} tiles", flush=True)
    return ok, err


def error_checks(kernel):
    """The runtime must refuse bad arguments with a precise message."""
    ok = True
    a = torch.empty(64, 72, dtype=torch.float16, device="cuda")
    b = torch.empty(64, 72, dtype=torch.float16, device="cuda")
    c_bad = torch.empty(64, 255, dtype=torch.float16, device="cuda")
    cases = [
        ((a, b, c_bad, 64, 255, 72), "not a multiple of 16 bytes"),
        ((a.float(), b, c_bad, 64, 255, 72), "dtype mismatch"),
        ((a, b, 64, 64, 72), "expected 6 arguments"),
        ((a, b, c_bad[:, :64], 64, 64, 2 ** 31), "does not fit in 32 bits"),
    ]
    for args, want in cases:
        try:
            kernel(*args)
            torch.cuda.synchronize()
            print(f"  FAIL no error, expected '{want}'")
            ok = False
        except TawaError as e:
            good = want in str(e)
            ok &= good
            print(f"  {'PASS' if good else 'FAIL'} error: {e}")
    return ok


def runtime_copy_check(gen):
    """The runtime's own TMA round-trip kernel (NVRTC, 'ptr' params, NaN fill)
    driven from Python: checks the binding's tensor and stride handling."""
    md = os.path.join(REPO, "lib", "Runtime", "kernels", "copy_f32_sw128_nan.json")
    k = Kernel(md)
    rows, cols = 257, 300
    src = torch.randn(rows, 304, generator=gen, device="cuda")[:, :cols]
    dst_storage = torch.full((rows, 304), -7.0, device="cuda")
    dst = dst_storage[:, :cols]
    tiles_y, tiles_x = math.ceil(rows / 64), math.ceil(cols / 32)
    dump = torch.zeros(tiles_y * 64, tiles_x * 32, device="cuda")
    k(src, dst, dump, rows, cols)
    torch.cuda.synchronize()
    ok = (torch.equal(dst, src) and bool((dst_storage[:, cols:] == -7.0).all())
          and torch.equal(dump[:rows, :cols], src) and bool(torch.isnan(dump[rows:, :]).all())
          and bool(torch.isnan(dump[:, cols:]).all()))
    print(f"  {'PASS' if ok else 'FAIL'} runtime TMA copy 257x300 f32 (128B swizzle, NaN fill) via Python")
    return ok


def bench(kernel, ks, m, n, gen):
    import triton.testing
    rows = []
    for k in ks:
        a = torch.randn(m, k, generator=gen, device="cuda", dtype=torch.float32).half()
        b = torch.randn(n, k, generator=gen, device="cuda", dtype=torch.float32).half()
        c, _ = alloc_c(m, n)
        c_cublas = torch.empty(m, n, dtype=torch.float16, device="cuda")
        # A prepared launch: tensor maps are encoded once, so the timed call
        # is one cuLaunchKernelEx, comparable to torch.mm's host cost.
        plan = kernel.prepare(a, b, c, m, n, k)
        plan()
        torch.mm(a, b.t(), out=c_cublas)
        torch.cuda.synchronize()
        err = float(torch.linalg.norm(c.float() - c_cublas.float()) / torch.linalg.norm(c_cublas.float()))
        t_tawa = triton.testing.do_bench(plan, warmup=25, rep=200, return_mode="median")
        t_cublas = triton.testing.do_bench(lambda: torch.mm(a, b.t(), out=c_cublas),
                                           warmup=25, rep=200, return_mode="median")
        flop = 2.0 * m * n * k
        tf_tawa = flop / (t_tawa * 1e-3) / 1e12
        tf_cublas = flop / (t_cublas * 1e-3) / 1e12
        print(f"  M=N={m} K={k:6d}: tawa_ref {tf_tawa:7.1f} TFLOP/s ({t_tawa * 1e3:8.1f} us), "
              f"cuBLAS {tf_cublas:7.1f} TFLOP/s ({t_cublas * 1e3:8.1f} us), "
              f"ratio {tf_tawa / tf_cublas:.3f}, |tawa-cublas|/|cublas| {err:.1e}", flush=True)
        rows.append({"workload": "ref_gemm_fp16", "shape": [m, n, k],
                     "tflops": {"tawa_ref": round(tf_tawa, 1), "cublas": round(tf_cublas, 1)},
                     "median_ms": {"tawa_ref": t_tawa, "cublas": t_cublas},
                     "ratio_vs_cublas": round(tf_tawa / tf_cublas, 3),
                     "rel_diff_vs_cublas": err})
        del a, b, c, c_cublas, plan
        torch.cuda.empty_cache()
    return rows


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--metadata", help="ref_gemm.json (default: newest build*/gpu/ref_gemm.json)")
    p.add_argument("--seed", type=int, help="random seed (default: fresh)")
    p.add_argument("--ks", default="256,512,1024,2048,4096,8192,16384")
    p.add_argument("--mn", type=int, default=8192)
    p.add_argument("--check-only", action="store_true", help="skip the benchmark")
    p.add_argument("--small", action="store_true", help="only the small shapes (for sanitizers)")
    p.add_argument("--results-dir", default=os.path.join(REPO, "bench", "results"))
    args = p.parse_args()
    faulthandler.enable()  # a crash in native code still prints the Python stack

    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(4), "little")
    print(f"gemm_ref: seed {seed}", flush=True)
    gen = torch.Generator(device="cuda")
    gen.manual_seed(seed)
    metadata = args.metadata or find_metadata()
    kernel = Kernel(metadata)
    device = torch.cuda.get_device_name()
    print(f"gemm_ref: {metadata} on {device}, {sm_count()} SMs", flush=True)

    results = []
    print("runtime:", flush=True)
    results.append(runtime_copy_check(gen))
    print("correctness:", flush=True)
    shapes = [s for s in CHECK_SHAPES if max(s) <= 1032] if args.small else CHECK_SHAPES
    if not args.small:
        shapes = shapes + [(args.mn, args.mn, int(k)) for k in args.ks.split(",")]
    for m, n, k in shapes:
        ok, err = check(kernel, m, n, k, gen)
        results.append(ok)
    print("argument errors:", flush=True)
    results.append(error_checks(kernel))
    passed, failed = sum(results), len(results) - sum(results)

    rows = []
    if not args.check_only and not args.small:
        print("benchmark (median of triton.testing.do_bench, L2 flushed before each call):", flush=True)
        rows = bench(kernel, [int(k) for k in args.ks.split(",")], args.mn, args.mn, gen)
        date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
        slug = re.sub(r"[^A-Za-z0-9]+", "-", device).strip("-").lower()
        os.makedirs(args.results_dir, exist_ok=True)
        path = os.path.join(args.results_dir, f"{date}-{slug}.json")
        doc = {"device": device, "date": date,
               "command": "python3 " + " ".join(shlex.quote(a) for a in sys.argv),
               "seed": seed, "host": socket.gethostname(),
               "torch": torch.__version__, "sm_count": sm_count(),
               "timing": "triton.testing.do_bench median, warmup 25 ms, rep 200 ms, L2 flushed per call; "
                         "tawa through a prepared launch (tensor maps encoded once)",
               "correctness": {"passed": passed, "failed": failed},
               "rows": rows}
        with open(path, "w") as f:
            json.dump(doc, f, indent=1)
        print(f"gemm_ref: wrote {path}", flush=True)
    print(f"{passed} passed, {failed} failed", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
