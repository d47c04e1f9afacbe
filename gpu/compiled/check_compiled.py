#!/usr/bin/env python3
"""Correctness of the kernels tawac compiled (gpu/compiled/make_kernels.py)
on the GPU, against PyTorch in float32.

For every kernel and configuration of the manifest: fresh random inputs
(the seed is printed), shapes that are and are not multiples of the tile
(TMA zero-fills out-of-bounds loads and clips stores), outputs poisoned
with NaN beforehand, including a 16-byte chunk past the end of each row
that must stay NaN; relative Frobenius error within the dtype's bound.

    check_compiled.py --manifest build-kernels/manifest.json
    check_compiled.py --manifest ... --small --only-default   (for the sanitizers)
    check_compiled.py --manifest ... --small --distinct-binaries (a sanitizer
        over every configuration: a CUBIN identical to one already run for
        the same workload, e.g. a configuration that spells out a default,
        is not run again)

Prints one line per kernel/configuration, then "N passed, M failed"; exits 1
on any failure, including configurations tawac rejected. A launch that has not
finished after TAWA_CHECK_HANG_SECONDS (default 120) ends the check at once
with "HANG <kernel> <shape>" and status 3 (workloads.synchronize).
"""
import argparse
import hashlib
import json
import os
import random
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import workloads  # noqa: E402

# (M, N, K): exact tiles, ragged edges in every dimension, K below one
# block, K spanning several laps of a 4-slot ring, a larger square, and
# more tiles than the H100 has SMs, so that a persistent CTA runs several
# tiles with K loops shorter than, equal to and longer than the epilogue
# boxes a deferred epilogue stores in the next tile's K loop (1, 2, 4 and 9
# steps of 64).
SHAPES = [
    (128, 256, 64),
    (129, 257, 136),
    (300, 520, 1032),
    (1000, 1000, 1000),
    (77, 40, 24),
    (2048, 1024, 4096),
    (4096, 4096, 64),
    (4096, 4096, 128),
    (3001, 2999, 200),
    (2500, 4100, 520),
]
SWEEP_SHAPES = [(129, 257, 136), (300, 520, 1032), (1000, 1000, 1000), (3001, 2999, 200)]
# For the sanitizers: one tile per CTA; --many-tiles adds more tiles than
# SMs (a persistent CTA runs two tiles with a K loop of two steps).
SMALL_SHAPES = [(200, 300, 600)]
MANY_TILES_SHAPE = (2100, 2100, 72)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--manifest", required=True)
    ap.add_argument("--small", action="store_true", help="one small shape (for compute-sanitizer)")
    ap.add_argument("--many-tiles", action="store_true",
                    help="with --small: also a shape with more tiles than SMs")
    ap.add_argument("--only-default", action="store_true", help="only the compiler's default configurations")
    ap.add_argument("--kernel", action="append", help="only these kernel ids (repeatable)")
    ap.add_argument("--config", action="append", help="only these configurations (repeatable)")
    ap.add_argument("--distinct-binaries", action="store_true",
                    help="run a CUBIN identical to one already run (same workload) only once")
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--json", help="write the per-kernel results here")
    args = ap.parse_args()

    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(1 << 30)
    print(f"check_compiled: seed {seed}")
    gen = torch.Generator(device="cuda")
    gen.manual_seed(seed)
    base = os.path.dirname(os.path.abspath(args.manifest))
    with open(args.manifest) as f:
        manifest = json.load(f)
    print(f"check_compiled: kernels from {manifest['tawac']} at {manifest['commit']}")

    passed = failed = 0
    results = []
    ran = {}  # (workload, CUBIN sha256) -> the id that ran it
    same = 0
    for e in manifest["kernels"]:
        if args.only_default and e["config"] != "default":
            continue
        if args.kernel and e["kernel"] not in args.kernel:
            continue
        if args.config and e["config"] not in args.config:
            continue
        if args.distinct_binaries and not e["error"]:
            cubin = os.path.join(base, e["metadata"][:-len(".json")] + ".cubin")
            with open(cubin, "rb") as f:
                key = (e["workload"], hashlib.sha256(f.read()).hexdigest())
            if key in ran:
                same += 1
                print(f"SAME {e['id']}: the CUBIN of {ran[key]}, not run again")
                continue
            ran[key] = e["id"]
        row = {"id": e["id"], "workload": e["workload"], "shapes": [], "ok": False}
        results.append(row)
        if e["error"]:
            failed += 1
            row["error"] = e["error"]
            print(f"FAIL {e['id']}: tawac rejected it: {e['error'].splitlines()[0]}")
            continue
        try:
            k = workloads.Loaded(os.path.join(base, e["metadata"]))
        except Exception as ex:  # a load failure is a failure of this kernel
            failed += 1
            row["error"] = str(ex)
            print(f"FAIL {e['id']}: load: {ex}")
            continue
        shapes = SMALL_SHAPES if args.small else (SHAPES if e["config"] == "default" else SWEEP_SHAPES)
        if args.small and args.many_tiles:
            shapes = shapes + [MANY_TILES_SHAPE]
        worst, ok, t0 = 0.0, True, time.time()
        for (m, n, kk) in shapes:
            try:
                workloads.RUNNING = f"{e['id']} {m}x{n}x{kk}"
                out, ref, pad_ok, types = workloads.RUNNERS[e["workload"]](k, m, n, kk, gen)
                err = workloads.rel_error(out, ref)
                bound = workloads.BOUNDS[types]
                good = err <= bound and pad_ok
                row["shapes"].append({"shape": [m, n, kk], "rel_error": err, "bound": bound,
                                      "padding_untouched": pad_ok, "ok": good})
                worst = max(worst, err)
                if not good:
                    ok = False
                    why = f"rel error {err:.3e} > {bound:.0e}" if err > bound else "wrote past the row end"
                    print(f"  {e['id']} {m}x{n}x{kk}: {why}")
            except Exception as ex:
                ok = False
                row["shapes"].append({"shape": [m, n, kk], "exception": str(ex), "ok": False})
                print(f"  {e['id']} {m}x{n}x{kk}: {type(ex).__name__}: {ex}")
                if "illegal" in str(ex) or "unspecified launch failure" in str(ex):
                    print("check_compiled: the CUDA context is lost; stopping")
                    print(f"{passed} passed, {failed + 1} failed")
                    return 1
        meta = k.meta.get("_tawa", {})
        cfg = f"D={meta.get('aref_depth')} P={meta.get('mma_depth')} G={meta.get('consumer_groups')}"
        row.update(ok=ok, worst_rel_error=worst, config=cfg)
        print(f"{'PASS' if ok else 'FAIL'} {e['id']:40s} {cfg:14s} {len(shapes)} shapes, "
              f"worst rel err {worst:.2e}  ({time.time() - t0:.1f}s)")
        passed += ok
        failed += not ok
    # Kernel x configuration matrix, for a glance at the whole sweep.
    configs, matrix = [], {}
    for row in results:
        kernel, config = row["id"].rsplit("/", 1)
        if config not in configs:
            configs.append(config)
        matrix.setdefault(kernel, {})[config] = "ok" if row["ok"] else "FAIL"
    print(f"\n{'kernel':28s} " + " ".join(f"{c:>7s}" for c in configs))
    for kernel, cells in matrix.items():
        print(f"{kernel:28s} " + " ".join(f"{cells.get(c, '-'):>7s}" for c in configs))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"seed": seed, "commit": manifest["commit"], "results": results}, f, indent=1)
    print(f"{passed} passed, {failed} failed"
          + (f" ({same} identical CUBINs not run again)" if same else ""))
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
