#!/usr/bin/env python3
"""The SASS of every compiled kernel uses Hopper's warp-group MMA: HGMMA for
f16/bf16 operands, QGMMA for fp8 (and no HMMA, the pre-Hopper path).

    check_sass.py --manifest build-kernels/manifest.json [--cuobjdump PATH]

cuobjdump comes from the CUDA toolkit, or else from the Triton wheel, which
bundles one. Prints one line per kernel and "N passed, M failed".
"""
import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys


def find_cuobjdump(given):
    if given:
        return given
    for cand in [shutil.which("cuobjdump"), "/usr/local/cuda/bin/cuobjdump"]:
        if cand and os.path.exists(cand):
            return cand
    try:
        import triton
        found = glob.glob(os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", "cuobjdump"))
        if found:
            return found[0]
    except ImportError:
        pass
    sys.exit("check_sass: no cuobjdump (CUDA toolkit or Triton wheel) found")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--manifest", required=True)
    ap.add_argument("--cuobjdump")
    ap.add_argument("--all", action="store_true", help="every configuration, not only the defaults")
    args = ap.parse_args()
    tool = find_cuobjdump(args.cuobjdump)
    base = os.path.dirname(os.path.abspath(args.manifest))
    manifest = json.load(open(args.manifest))
    passed = failed = 0
    for e in manifest["kernels"]:
        if e["error"] or (e["config"] != "default" and not args.all):
            continue
        meta = json.load(open(os.path.join(base, e["metadata"])))
        cubin = os.path.join(base, e["id"] + ".cubin")
        sass = subprocess.run([tool, "-sass", cubin], capture_output=True, text=True)
        if sass.returncode != 0:
            print(f"FAIL {e['id']}: cuobjdump: {sass.stderr.strip()}")
            failed += 1
            continue
        fp8 = any(p.get("dtype") == "e4m3" for p in meta["params"] if p["kind"] == "tensormap")
        want = "QGMMA" if fp8 else "HGMMA"
        n_want = len(re.findall(r"\b" + want + r"\.", sass.stdout))
        n_hmma = len(re.findall(r"\bHMMA\.", sass.stdout))
        ok = n_want > 0 and n_hmma == 0
        res = meta.get("_tawa", {})
        print(f"{'PASS' if ok else 'FAIL'} {e['id']:36s} {n_want:4d} {want}, {n_hmma} HMMA; "
              f"{res.get('registers')} registers, {res.get('spill_store_bytes')} B spill stores, "
              f"{meta['dynamic_smem_bytes']} B shared")
        passed += ok
        failed += not ok
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
