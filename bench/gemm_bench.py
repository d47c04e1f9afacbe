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
cold); Triton's best configuration is chosen from one such median each, then
tawa, cuBLAS and that configuration are timed in --rounds interleaved rounds
(rotated order) and each gets the median over its rounds. Writes bench/results/<date>-<device>-gemm.json with one row per
(dtype, shape): {"workload", "shape", "tflops": {"tawa", "cublas",
"triton"}, ...}.

--ablation adds the steps of the Tawa paper's Fig. 12 at K = 16384 (fp16):
one consumer group on 128x128 tiles, one CTA per tile; two cooperative
groups on 128x256 tiles; persistent; the default ring depth. --dp-sweep
times every ring depth D x MMA lag P (Fig. 11). --family times the batched
and grouped GEMM samples against Triton compiling their source
(../shared/ttir/triton_kernels.py, copied next to the manifest by
make_kernels.py). --plot writes a PNG of the K sweep.
"""
import argparse
import ast
import datetime
import json
import os
import shlex
import socket
import statistics
import sys
import types

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
# tawa configurations the family benchmark times besides the default.
VARIANTS = ["default", "G1", "G2", "PP", "D3P0", "D4P0", "NOPP", "NOPPC2", "PAIR", "NOPAIR"]


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


def load_jit_functions(path):
    """The @triton.jit functions of a Triton script, without running the
    script's own driver code: its imports and decorated functions, compiled
    with the file's name and line numbers so that Triton reads their source."""
    tree = ast.parse(open(path).read(), path)
    keep = [n for n in tree.body
            if isinstance(n, (ast.Import, ast.ImportFrom))
            or (isinstance(n, ast.FunctionDef) and n.decorator_list)]
    mod = types.ModuleType(os.path.splitext(os.path.basename(path))[0])
    mod.__file__ = path
    sys.modules[mod.__name__] = mod
    exec(compile(ast.Module(body=keep, type_ignores=[]), path, "exec"), mod.__dict__)
    return mod


def side_by_side_args(doc, config_help):
    """The options of the side-by-side benchmarks (pointer, epilogue, persistent GEMMs), parsed."""
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    ap.add_argument("--manifest", required=True)
    ap.add_argument("--size", type=int, default=8192)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--json")
    ap.add_argument("--config", action="append", default=[], help=config_help)
    ap.add_argument("--sustained", type=float, default=0.0, metavar="SECONDS",
                    help="after the interleaved timing, run each system back to back for SECONDS while "
                    "nvidia-smi samples power and SM clock, and report its rate against the tensor "
                    "cores' peak at that clock (0, the default: skip)")
    return ap.parse_args()


def load_manifest(path):
    """A manifest's entries by id, and the folder its paths are relative to."""
    manifest = json.load(open(path))
    return {e["id"]: e for e in manifest["kernels"]}, os.path.dirname(os.path.abspath(path))


def check_and_time(fns, outs, ref, rounds, flops, tol=1e-2):
    """Run each function once and compare its output (outs[name]) with the float32 reference, then
    time them in interleaved rounds: (relative errors, all below tol, TFLOP/s by name)."""
    errs = {}
    for name, fn in fns.items():
        fn()
        torch.cuda.synchronize()
        errs[name] = rel_err(outs[name], ref)
    med, _ = interleaved(fns, rounds)
    return errs, all(e < tol for e in errs.values()), {name: flops / t / 1e9 for name, t in med.items()}


# Dense tensor-core FLOP per SM per clock on Hopper: 1024 f16/bf16
# multiply-adds (989.4 TFLOP/s = 132 SMs x 4096 x 1.83 GHz on the H100 SXM);
# fp8 twice that.
DENSE_FLOP_PER_SM_CLOCK = {"f16": 4096, "bf16": 4096, "fp8": 8192}


def sustained_rows(fns, flops, seconds, dtype="f16"):
    """Each function run back to back for `seconds` while nvidia-smi samples
    the board (sustained_family.sustained): name -> TFLOP/s, watts, SM MHz,
    throttle reasons, picojoules per flop, and the rate as a fraction of the
    tensor cores' dense peak at the sampled clock. Under the board's power
    cap the clock is what the power allows, so the fraction says how much of
    the time the tensor pipe could still be fed at that clock."""
    from sustained_family import sustained  # (sustained_family imports this module)
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    rows = {}
    for name, fn in fns.items():
        fn()
        rate, watts, mhz, reasons = sustained(fn, seconds)
        tflops = rate * flops / 1e12
        peak = sms * DENSE_FLOP_PER_SM_CLOCK[dtype] * mhz * 1e6 / 1e12
        rows[name] = {"tflops": tflops, "watts": watts, "mhz": mhz, "throttle": reasons,
                      "pj_per_flop": watts / tflops, "peak_at_clock": peak,
                      "fraction_of_peak": tflops / peak}
    return rows


def print_sustained(kid, rows):
    for name, r in rows.items():
        print(f"SUSTAINED {kid:38s} {name:14s} {r['tflops']:6.1f} TFLOP/s  {r['watts']:5.0f} W  "
              f"{r['mhz']:5.0f} MHz  {r['pj_per_flop']:.3f} pJ/flop  {r['fraction_of_peak']:.3f} of the peak at "
              f"that clock ({r['peak_at_clock']:.0f})  throttle {' '.join(r['throttle'])}", flush=True)


def finish(rows, failed, json_path):
    """Write the rows (with the device's name) where asked, and exit 1 if any failed."""
    if json_path:
        with open(json_path, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(), "rows": rows}, f, indent=1)
    sys.exit(1 if failed else 0)


def kernel_row(by_id, base, kid):
    entry = by_id.get(kid)
    if not entry or entry["error"]:
        return None
    return workloads.Loaded(os.path.join(base, entry["metadata"]))


def time_gemm(kern, m, n, k, dname):
    """tawa's median time (ms) and relative error for C = A B^T."""
    in_dt, out_dt = DT[dname]
    scale = 0.5 if in_dt == torch.float8_e4m3fn else 1.0
    a = (torch.randn(m, k, device="cuda") * scale).to(in_dt)
    b = (torch.randn(n, k, device="cuda") * scale).to(in_dt)
    c = torch.full((m, n), float("nan"), device="cuda", dtype=out_dt)
    plan = workloads.prepare_gemm(kern, a, b, c, m, n, k)
    plan()
    torch.cuda.synchronize()
    err = rel_err(c, a.float() @ b.float().T)
    return median_ms(plan), err


def interleaved(fns, rounds):
    """Times each launch of `fns` (name -> callable) in `rounds` interleaved
    rounds, the order rotated by one each round, so that the GPU's power and
    clock state weighs on all alike. Returns (median ms per name, the
    per-round ms per name)."""
    times = {name: [] for name in fns}
    order = list(fns)
    for r in range(rounds):
        for name in order[r % len(order):] + order[:r % len(order)]:
            times[name].append(median_ms(fns[name]))
    return {name: statistics.median(ts) for name, ts in times.items()}, times


def family_bench(by_id, base, triton_src, failures, rounds=3):
    """Batched and grouped GEMM samples: tawa vs Triton on the same source
    (the default and Triton's best configuration timed last in interleaved
    rounds; the other tawa configurations once each)."""
    rows = []
    tk = load_jit_functions(triton_src)
    triton.set_allocator(lambda size, align, stream: torch.empty(size, dtype=torch.int8, device="cuda"))
    gen = torch.Generator(device="cuda")
    gen.manual_seed(int.from_bytes(os.urandom(4), "little"))
    configs = [(4, 3), (8, 3), (8, 4)]  # (warps, stages)

    # Batched: 8 batches of 2048 x 2048 x 4096, 128 x 128 x 64 tiles.
    bt, m, n, k = 8, 2048, 2048, 4096
    a = torch.randn(bt * m, k, device="cuda", generator=gen).half()
    b = torch.randn(bt * n, k, device="cuda", generator=gen).half()
    ref = torch.cat([a[i * m:(i + 1) * m].float() @ b[i * n:(i + 1) * n].float().T for i in range(bt)])
    grid = (m // 128, n // 128, bt)
    variants = {}
    for config in VARIANTS:
        kern = kernel_row(by_id, base, "shared/gemm_batched/" + config)
        if kern is None:
            continue
        c = torch.full((bt * m, n), float("nan"), device="cuda", dtype=torch.float16)
        plan = kern.kernel.prepare(*workloads.desc_args(a), *workloads.desc_args(b),
                                   *workloads.desc_args(c), m, n, k, grid=grid)
        plan()
        torch.cuda.synchronize()
        variants[config] = (median_ms(plan), rel_err(c, ref))
        if config == "default":
            tawa_plan, tawa_out = plan, c  # the plan holds c's address: keep c
    t_tawa, err = variants["default"]
    errs = {"tawa": err, **{f"tawa_{v}": e for v, (t, e) in variants.items() if v != "default"}}
    ad, bd = TensorDescriptor.from_tensor(a, [128, 64]), TensorDescriptor.from_tensor(b, [128, 64])
    best = None
    for warps, stages in configs:
        ct = torch.empty_like(c)
        cd = TensorDescriptor.from_tensor(ct, [128, 128])
        # Bound now: the best configuration's launch runs again later.
        run = (lambda cd=cd, warps=warps, stages=stages:
               tk.gemm_batched[grid](ad, bd, cd, m, n, k, 128, 128, 64,
                                     num_warps=warps, num_stages=stages))
        run()
        torch.cuda.synchronize()
        t = median_ms(run)
        if best is None or t < best[0]:
            best = (t, [warps, stages], rel_err(ct, ref), run, ct)
    errs["triton"] = best[2]
    med, _ = interleaved({"tawa": tawa_plan, "triton": best[3]}, rounds)
    t_tawa, t_triton = med["tawa"], med["triton"]
    best = (t_triton,) + best[1:]
    flops = 2.0 * bt * m * n * k
    rows.append({"workload": "gemm_batched_f16", "shape": [bt, m, n, k],
                 "tflops": {"tawa": flops / t_tawa / 1e9, "triton": flops / best[0] / 1e9,
                            **{f"tawa_{v}": flops / t / 1e9 for v, (t, e) in variants.items()
                               if v != "default"}},
                 "rel_error": errs, "triton_config": best[1],
                 "ok": all(e <= 1e-3 for e in errs.values())})

    # Grouped: 8 groups, m_g = 1024, 2048, ..., n = k = 4096.
    groups = 8
    ms = [1024 * (g % 4 + 1) for g in range(groups)]
    n = k = 4096
    As = [torch.randn(mg, k, device="cuda", generator=gen).half() for mg in ms]
    Bs = [torch.randn(n, k, device="cuda", generator=gen).half() for _ in ms]
    refs = [x.float() @ y.float().T for x, y in zip(As, Bs)]
    ptrs = lambda ts: torch.tensor([t.data_ptr() for t in ts], device="cuda", dtype=torch.int64)
    sizes = torch.tensor([[mg, n, k] for mg in ms], device="cuda", dtype=torch.int32).flatten()

    def check(cs):
        return rel_err(torch.cat([x.flatten() for x in cs]), torch.cat([r.flatten() for r in refs]))
    variants = {}
    for config in VARIANTS:
        kern = kernel_row(by_id, base, "shared/gemm_grouped/" + config)
        if kern is None:
            continue
        Cs = [torch.full((mg, n), float("nan"), device="cuda", dtype=torch.float16) for mg in ms]
        # The plan holds the tables' device addresses: keep them alive.
        tables = (ptrs(As), ptrs(Bs), ptrs(Cs))
        plan = kern.kernel.prepare(*tables, sizes, groups, grid=(132,))
        plan()
        torch.cuda.synchronize()
        variants[config] = (median_ms(plan), check(Cs))
        if config == "default":
            tawa_plan, tawa_out = plan, (Cs, tables)
    t_tawa, err = variants["default"]
    errs = {"tawa": err, **{f"tawa_{v}": e for v, (t, e) in variants.items() if v != "default"}}
    best = None
    a_p, b_p = ptrs(As), ptrs(Bs)
    for warps, stages in configs:
        Ct = [torch.empty(mg, n, device="cuda", dtype=torch.float16) for mg in ms]
        c_p = ptrs(Ct)
        run = (lambda c_p=c_p, warps=warps, stages=stages:
               tk.gemm_grouped[(132,)](a_p, b_p, c_p, sizes, groups, 128, 128, 64, 132,
                                       num_warps=warps, num_stages=stages))
        run()
        torch.cuda.synchronize()
        t = median_ms(run)
        if best is None or t < best[0]:
            best = (t, [warps, stages], check(Ct), run, (Ct, c_p))
    errs["triton"] = best[2]
    med, _ = interleaved({"tawa": tawa_plan, "triton": best[3]}, rounds)
    t_tawa, t_triton = med["tawa"], med["triton"]
    best = (t_triton,) + best[1:]
    flops = 2.0 * sum(ms) * n * k
    rows.append({"workload": "gemm_grouped_f16", "shape": [groups, ms, n, k],
                 "tflops": {"tawa": flops / t_tawa / 1e9, "triton": flops / best[0] / 1e9,
                            **{f"tawa_{v}": flops / t / 1e9 for v, (t, e) in variants.items()
                               if v != "default"}},
                 "rel_error": errs, "triton_config": best[1],
                 "ok": all(e <= 1e-3 for e in errs.values())})
    for r in rows:
        t = r["tflops"]
        failures[0] += not r["ok"]
        others = "  ".join(f"{s[5:]} {v:.1f}" for s, v in t.items() if s.startswith("tawa_"))
        print(f"{'PASS' if r['ok'] else 'FAIL'} {r['workload']} {r['shape']}: tawa {t['tawa']:.1f}  "
              f"Triton {t['triton']:.1f} TFLOP/s ({t['tawa'] / t['triton']:.3f}x); other tawa "
              f"configurations: {others}; rel err "
              + ", ".join(f"{s} {e:.1e}" for s, e in r["rel_error"].items()), flush=True)
    return rows


def plot(rows, path, dev):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    dtypes = [d for d in ("f16", "bf16", "fp8") if any(r["workload"] == "gemm_" + d for r in rows)]
    fig, axes = plt.subplots(1, len(dtypes), figsize=(5 * len(dtypes), 4), squeeze=False)
    for ax, d in zip(axes[0], dtypes):
        rs = [r for r in rows if r["workload"] == "gemm_" + d]
        ks = [r["shape"][2] for r in rs]
        for system, style in (("tawa", "o-"), ("cublas", "s--"), ("triton", "^:")):
            ax.plot(ks, [r["tflops"][system] or float("nan") for r in rs], style, label=system)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("K (M = N = %d)" % rs[0]["shape"][0])
        ax.set_ylabel("TFLOP/s")
        ax.set_title(f"GEMM {d}")
        ax.grid(alpha=0.3)
        ax.legend()
    fig.suptitle(f"tawa vs cuBLAS vs Triton (same source), {dev}")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--manifest", required=True)
    ap.add_argument("--dtypes", default="f16,bf16,fp8")
    ap.add_argument("--ks", default=",".join(map(str, KS)))
    ap.add_argument("--m", type=int, default=8192)
    ap.add_argument("--n", type=int, default=8192)
    ap.add_argument("--results-dir", default=os.path.join(REPO, "bench", "results"))
    ap.add_argument("--ablation", action="store_true", help="Fig. 12-style steps at K = 16384 (fp16)")
    ap.add_argument("--dp-sweep", action="store_true", help="every D x P at K = 16384 (fp16)")
    ap.add_argument("--family", action="store_true", help="batched and grouped GEMM vs Triton")
    ap.add_argument("--plot", help="write a PNG of the K sweep here")
    ap.add_argument("--rounds", type=int, default=3,
                    help="interleaved timing rounds of tawa, cuBLAS and Triton per K sweep point")
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
        cfg_tawa = kern.meta.get("_tawa", {})
        for k in [int(x) for x in args.ks.split(",")]:
            scale = 0.5 if in_dt == torch.float8_e4m3fn else 1.0
            a = (torch.randn(m, k, device="cuda") * scale).to(in_dt)
            b = (torch.randn(n, k, device="cuda") * scale).to(in_dt)
            ref = a.float() @ b.float().T
            c = torch.empty(m, n, device="cuda", dtype=out_dt)
            plan = workloads.prepare_gemm(kern, a, b, c, m, n, k)
            c.fill_(float("nan"))
            plan()
            torch.cuda.synchronize()
            errs = {"tawa": rel_err(c, ref)}
            if in_dt == torch.float8_e4m3fn:
                one = torch.ones((), device="cuda")
                cublas = lambda: torch._scaled_mm(a, b.t(), scale_a=one, scale_b=one, out_dtype=out_dt)
                errs["cublas"] = rel_err(cublas(), ref)
            else:
                cublas = lambda: torch.mm(a, b.t(), out=c)
                cublas()
                errs["cublas"] = rel_err(c, ref)
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
                    best = (t, cfg, err, run)
            # tawa, cuBLAS and Triton's best configuration in interleaved
            # rounds; each gets its median over rounds.
            fns = {"tawa": plan, "cublas": cublas}
            if best:
                fns["triton"] = best[3]
            med, times = interleaved(fns, args.rounds)
            flops = 2.0 * m * n * k
            tf = {"tawa": flops / med["tawa"] / 1e9, "cublas": flops / med["cublas"] / 1e9,
                  "triton": flops / med["triton"] / 1e9 if best else None}
            if best:
                errs["triton"] = best[2]
            bound = workloads.BOUNDS[(kern.dtype(0), kern.dtype(2))]
            ok = all(e <= bound for e in errs.values())
            failures += not ok
            rows.append({"workload": f"gemm_{dname}", "shape": [m, n, k], "tflops": tf,
                         "rel_error": errs, "ok": ok, "tawa_config": cfg_tawa,
                         "triton_config": list(best[1]) if best else None,
                         "rounds_ms": times})
            tri = f"{tf['triton']:7.1f}" if best else "    n/a"
            print(f"{'PASS' if ok else 'FAIL'} gemm_{dname} K={k:6d}: tawa {tf['tawa']:7.1f}  cuBLAS "
                  f"{tf['cublas']:7.1f}  Triton {tri} TFLOP/s; rel err "
                  + ", ".join(f"{s} {e:.1e}" for s, e in errs.items()), flush=True)
            del a, b, c, ref
            torch.cuda.empty_cache()

    extra = []
    fail = [0]
    if args.ablation or args.dp_sweep:
        steps = []
        if args.ablation:
            steps += [("ablation", "1 WS, 1 consumer group, 128x128, one CTA per tile",
                       "examples/gemm_fp16_128x128/G1NP"),
                      ("ablation", "2 + 2 cooperative groups, 128x256", "examples/gemm_fp16/NP"),
                      ("ablation", "3 + persistent (D = 2)", "examples/gemm_fp16/D2P1"),
                      ("ablation", "4 + ring depth D = 4 (default)", "examples/gemm_fp16/default")]
        if args.dp_sweep:
            steps += [("dp_sweep", f"D={d} P={p}", f"examples/gemm_fp16/D{d}P{p}")
                      for d in range(1, 5) for p in range(3) if p < d]
            steps += [("dp_sweep", f"128x128 {c}", f"examples/gemm_fp16_128x128/{c}")
                      for c in ("default", "G2", "PP", "PPD2P1")]
        k = 16384
        flops = 2.0 * m * n * k
        print(f"\nfp16 M = N = {m}, K = {k}:")
        for workload, label, kid in steps:
            kern = kernel_row(by_id, base, kid)
            if kern is None:
                print(f"FAIL {label}: no compiled kernel {kid}")
                fail[0] += 1
                continue
            t, err = time_gemm(kern, m, n, k, "f16")
            ok = err <= workloads.BOUNDS[("f16", "f16")]
            fail[0] += not ok
            tf = flops / t / 1e9
            extra.append({"workload": workload, "step": label,
                          "kernel": kid, "shape": [m, n, k], "tflops": {"tawa": tf},
                          "tawa_config": kern.meta.get("_tawa", {}), "rel_error": {"tawa": err}, "ok": ok})
            print(f"{'PASS' if ok else 'FAIL'} {label:52s} {tf:7.1f} TFLOP/s  ({kid}, rel err {err:.1e})", flush=True)
    if args.family:
        src = os.path.join(base, "sources", "triton_kernels.py")
        extra += family_bench(by_id, base, src, fail, args.rounds)
    failures += fail[0]

    os.makedirs(args.results_dir, exist_ok=True)
    date = datetime.datetime.now(datetime.timezone.utc)
    slug = dev.lower().replace(" ", "-")
    path = os.path.join(args.results_dir, f"{date:%Y-%m-%d}-{slug}-gemm.json")
    with open(path, "w") as f:
        json.dump({"device": dev, "date": date.isoformat(timespec="seconds"), "host": socket.gethostname(),
                   "command": " ".join(shlex.quote(x) for x in sys.argv), "commit": manifest["commit"],
                   "torch": torch.__version__, "triton": triton.__version__, "rows": rows + extra},
                  f, indent=1)
    print(f"wrote {path}")
    if args.plot and rows:
        plot(rows, args.plot, dev)
        print(f"wrote {args.plot}")
    print(f"\nGEMM C = A B^T, M = N = {m}, {dev}, median TFLOP/s:")
    print(f"{'dtype':>6} {'K':>6} {'tawa':>7} {'cuBLAS':>7} {'Triton':>7} {'/cuBLAS':>8} {'/Triton':>8}")
    for r in rows:
        t = r["tflops"]
        vs_t = f"{t['tawa'] / t['triton']:8.3f}" if t["triton"] else "     n/a"
        tri = f"{t['triton']:7.1f}" if t["triton"] else "    n/a"
        print(f"{r['workload'][5:]:>6} {r['shape'][2]:>6} {t['tawa']:7.1f} {t['cublas']:7.1f} {tri} "
              f"{t['tawa'] / t['cublas']:8.3f} {vs_t}")
    for r in extra:
        if r["workload"] in ("ablation", "dp_sweep"):
            print(f"{r['workload']:>9} {r['step']:52s} {r['tflops']['tawa']:7.1f}")
        else:
            t = r["tflops"]
            print(f"{r['workload']:>17} tawa {t['tawa']:7.1f}  Triton {t['triton']:7.1f}  "
                  f"{t['tawa'] / t['triton']:6.3f}x")
    passed = sum(r["ok"] for r in rows + extra)
    print(f"{passed} passed, {failures} failed")
    return 0 if failures == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
