#!/usr/bin/env python3
"""The CUDA that tawac writes for every GEMM-family kernel and configuration
of gpu/compiled/make_kernels.py (the 259 the GPU suite runs), as one SHA-256
per kernel and configuration, against a recorded list.

The emitter is being reorganized and extended (attention); the GEMM kernels
measured on the H100 must not change by accident. A deliberate change to
GEMM code generation re-records the list (--update) in the same commit and
says why.

    cuda_golden.py --tawac build/bin/tawac --check test/Target/Inputs/gemm-cuda.sha256
    cuda_golden.py --tawac build/bin/tawac --update test/Target/Inputs/gemm-cuda.sha256
"""
import argparse
import hashlib
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "gpu", "compiled"))
import make_kernels  # noqa: E402


def digest(tawac, tmp, job):
    kid, ttir, _workload, name, options = job
    out = os.path.join(tmp, f"{kid.replace('/', '_')}_{name}.cu")
    r = subprocess.run([tawac, ttir, "--emit=cuda", "-o", out] + options,
                       capture_output=True, text=True)
    if r.returncode != 0:
        return f"{kid}/{name}", "error: " + (r.stderr.strip().splitlines() or ["?"])[0]
    with open(out, "rb") as f:
        return f"{kid}/{name}", hashlib.sha256(f.read()).hexdigest()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tawac", required=True)
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", metavar="LIST")
    mode.add_argument("--update", metavar="LIST")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    args = ap.parse_args()
    jobs = make_kernels.kernel_jobs(sweep=True)
    with tempfile.TemporaryDirectory() as tmp, ThreadPoolExecutor(args.jobs) as pool:
        got = dict(pool.map(lambda j: digest(args.tawac, tmp, j), jobs))
    if args.update:
        with open(args.update, "w") as f:
            f.write("# kernel/config sha256 of `tawac --emit=cuda` (test/Target/cuda_golden.py)\n")
            for key in sorted(got):
                f.write(f"{key} {got[key]}\n")
        print(f"cuda_golden: recorded {len(got)} kernels")
        return 0
    want = {}
    with open(args.check) as f:
        for line in f:
            if line.strip() and not line.startswith("#"):
                key, value = line.split(" ", 1)
                want[key] = value.strip()
    bad = 0
    for key in sorted(set(want) | set(got)):
        if want.get(key) != got.get(key):
            bad += 1
            print(f"CHANGED {key}: recorded {want.get(key, 'nothing')}, now {got.get(key, 'nothing')}")
    print(f"cuda_golden: {len(got) - bad} identical, {bad} changed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
