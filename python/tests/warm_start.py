#!/usr/bin/env python3
"""The first call of a tawa.jit kernel in a new process, its kernel already
in the disk cache (issue 19's warm target: <= 50 ms). No GPU, no PyTorch:
the call is `kernel.warmup(...)` on stand-in tensors (as python/tests/conftest.py's),
which is the launch path up to where a GPU is needed.

    python python/tests/warm_start.py [--runs 15] [--tawa DIR ...] [--json F]

For each tawa source tree (`--tawa`, the directory holding the `tawa`
package; default: this tree's python/), a child process compiles a GEMM
written with triton.language (the tests' kernel) into a cache directory of
its own; then `--runs` fresh child processes per tree, interleaved, each
time, from its own start:

    import triton   import triton, triton.language, TensorDescriptor
    import tawa     import tawa (the package; nothing of Triton's)
    decorate        @tawa.jit on the kernel (Triton's JITFunction: the source read)
    first call      kernel.warmup(...) -- binding, the source key, the disk
                    index, the cache entry's metadata (--launch: kernel[grid](...)
                    with the runtime's launch replaced by a recorder: also the
                    launcher's generation and the argument packing; then the
                    host time of cached calls is measured too)

and reports whether the call found the kernel on disk without Triton's
front end (stats), whether Triton's Gluon modules were imported, and
whether the compiler library was loaded. Medians and minima are printed;
children run with Python's bytecode cached under a directory of the run
(as an installed package has its .pyc files), unless --no-bytecode.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

KERNEL = '''
import triton.language as tl


def gemm_warm(a_desc, b_desc, c_desc, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        a = a_desc.load([pid_m * BM, k * BK])
        b = b_desc.load([pid_n * BN, k * BK])
        acc = tl.dot(a, b.T, acc)
    c_desc.store([pid_m * BM, pid_n * BN], acc.to(c_desc.dtype))
'''

CHILD = r'''
import time
t0 = time.perf_counter()
import json, os, sys
import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor
t1 = time.perf_counter()
import tawa
t2 = time.perf_counter()
sys.path.insert(0, os.environ["WARM_KERNEL_DIR"])
import warm_kernel  # noqa: E402
kernel = tawa.jit(warm_kernel.gemm_warm)
t3 = time.perf_counter()


class Float16:
    itemsize = 2
    is_floating_point = True

    def __str__(self):
        return "torch.float16"


class FakeTensor:
    """A stand-in for a CUDA tensor (conftest.py's, without pytest): what
    Triton's front end and tawa read."""
    is_cuda = True
    dtype = Float16()

    def __init__(self, shape, address):
        self.shape, self.address = shape, address

    def stride(self):
        return (self.shape[1], 1)

    def data_ptr(self):
        return self.address


m, n, k = (int(v) for v in os.environ.get("WARM_SHAPE", "512,512,512").split(","))
a = FakeTensor((m, k), address=1 << 20)
b = FakeTensor((n, k), address=2 << 20)
c = FakeTensor((m, n), address=3 << 20)
D = TensorDescriptor.from_tensor
args = (D(a, [128, 64]), D(b, [256, 64]), D(c, [128, 256]), m, n, k)
launches = []
if os.environ.get("WARM_LAUNCH"):
    # The launch path up to the GPU: the runtime's launch function and
    # kernel handle (the CUBIN loaded by the driver) replaced by a recorder.
    from tawa.jit import CompiledKernel
    CompiledKernel.launch_target = lambda self: (lambda *a: launches.append(a) and 0, 1, lambda: 0)
t4 = time.perf_counter()
if os.environ.get("WARM_LAUNCH"):
    compiled = kernel[(4, 2)](*args, BM=128, BN=256, BK=64)
else:
    compiled = kernel.warmup(*args, BM=128, BN=256, BK=64)
t5 = time.perf_counter()
first_launches = len(launches)
cached_us = None
if os.environ.get("WARM_LAUNCH"):
    # Host time of a cached call (memory hit, launch recorded): best of 5 x 2000.
    cached_us = 1e9
    for _ in range(5):
        t = time.perf_counter()
        for _ in range(2000):
            kernel[(4, 2)](*args, BM=128, BN=256, BK=64)
        cached_us = min(cached_us, (time.perf_counter() - t) / 2000 * 1e6)
import tawa.compiler
binder = getattr(kernel, "binder", None)
print(json.dumps({
    "import_triton_ms": (t1 - t0) * 1e3, "import_tawa_ms": (t2 - t1) * 1e3, "decorate_ms": (t3 - t2) * 1e3,
    "first_call_ms": (t5 - t4) * 1e3, "stats": kernel.stats, "directory": compiled.directory,
    "gluon_imported": "triton.experimental.gluon" in sys.modules,
    "compiler_loaded": tawa.compiler._lib is not None,
    "triton_binder_calls": binder.deferred if binder is not None else None, "launches": first_launches,
    "cached_call_us": cached_us,
}))
'''


def child_env(tawa_dir, cache, work, bytecode, extra=None):
    env = dict(os.environ)
    if tawa_dir:  # else the installed package
        env["PYTHONPATH"] = os.pathsep.join([tawa_dir] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    env["TAWA_CACHE_DIR"] = cache
    env["WARM_KERNEL_DIR"] = work
    for knob in ("TAWA_ALWAYS_COMPILE", "TAWA_DISABLE", "TAWA_FALLBACK", "TAWA_DUMP_DIR"):
        env.pop(knob, None)
    if bytecode:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = os.path.join(work, "pycache")
    else:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        env.pop("PYTHONPYCACHEPREFIX", None)
    env.update(extra or {})
    return env


def run_child(script, env):
    r = subprocess.run([sys.executable, script], capture_output=True, text=True, env=env, timeout=600)
    if r.returncode != 0:
        raise RuntimeError(f"child failed ({r.returncode}):\n{r.stdout[-3000:]}{r.stderr[-3000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def prepare(work):
    """The kernel's file and the child script in `work`."""
    os.makedirs(work, exist_ok=True)
    with open(os.path.join(work, "warm_kernel.py"), "w") as f:
        f.write(KERNEL)
    script = os.path.join(work, "warm_child.py")
    with open(script, "w") as f:
        f.write(CHILD)
    return script


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tawa", action="append", help="a directory holding the tawa package (repeatable)")
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--no-bytecode", action="store_true", help="children compile every module's source")
    ap.add_argument("--launch", action="store_true",
                    help="the first call is kernel[grid](...) into a recorder (no GPU) instead of warmup")
    ap.add_argument("--json", help="write every run here")
    ap.add_argument("--work", help="working directory (default: a new temporary one)")
    args = ap.parse_args()
    trees = [os.path.abspath(t) for t in (args.tawa or [os.path.dirname(HERE)])]
    work = os.path.abspath(args.work or tempfile.mkdtemp(prefix="tawa-warm-start-"))
    script = prepare(work)
    caches = {t: os.path.join(work, f"cache{i}") for i, t in enumerate(trees)}
    bytecode = not args.no_bytecode
    for tree in trees:  # the cold compile, and the bytecode for the later children
        cold = run_child(script, child_env(tree, caches[tree], work, True))
        print(f"{tree}: cold first call {cold['first_call_ms']:.0f} ms (stats {cold['stats']})", flush=True)
    runs = {t: [] for t in trees}
    for i in range(args.runs):
        for tree in trees:
            extra = {"WARM_LAUNCH": "1"} if args.launch else None
            runs[tree].append(run_child(script, child_env(tree, caches[tree], work, bytecode, extra)))
    fields = ("import_triton_ms", "import_tawa_ms", "decorate_ms", "first_call_ms")
    print(f"\n{args.runs} new processes per tree, {'with' if bytecode else 'without'} cached bytecode, "
          f"first call {'kernel[grid](...) (launch recorded)' if args.launch else 'warmup'}; median (min) ms",
          flush=True)
    print(f"{'tawa tree':40s} " + " ".join(f"{f[:-3]:>18s}" for f in fields) + "  disk hit / front end / Gluon / "
          "compiler loaded")
    for tree in trees:
        rs = runs[tree]
        cells = [f"{statistics.median(r[f] for r in rs):9.1f} ({min(r[f] for r in rs):6.1f})" for f in fields]
        hits = sum(r["stats"]["disk_hits"] == 1 and r["stats"]["ttir"] == 0 for r in rs)
        print(f"{tree[-40:]:40s} " + " ".join(f"{c:>18s}" for c in cells) +
              f"  {hits}/{len(rs)} / {sum(r['stats']['ttir'] for r in rs)} / "
              f"{sum(r['gluon_imported'] for r in rs)} / {sum(r['compiler_loaded'] for r in rs)}")
    if args.launch:
        print("host time of a cached kernel[grid](...) into the recorder, median of the processes' best: " +
              ", ".join(f"{t[-40:]} {statistics.median(r['cached_call_us'] for r in runs[t]):.2f} us"
                        for t in trees))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"work": work, "bytecode": bytecode, "runs": runs}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
