"""tawa.jit's launch through the real runtime library into the recording
mock driver (unittests/Runtime/MockCuda.cpp, built as mockcuda/libcuda.so.1
by the unit tests) with the torch stand-in of unittests/Runtime/pystub: the
packed arguments must reach cuTensorMapEncodeTiled and cuLaunchKernelEx as
the call gave them. Runs in a child process (the stand-in torch and the mock
driver stay out of this one). Skipped where no build has the mock driver."""
import glob
import json
import os
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _find(pattern):
    found = glob.glob(os.path.join(REPO, pattern))
    return max(found, key=os.path.getmtime) if found else None


MOCK = os.environ.get("TAWA_MOCK_CUDA") or _find("build*/unittests/Runtime/mockcuda/libcuda.so.1")
RUNTIME = None
if MOCK:
    build = MOCK[:MOCK.index("/unittests/")]
    RUNTIME = os.path.join(build, "lib", "Runtime", "libtawa_runtime.so")
pytestmark = pytest.mark.skipif(not MOCK or not os.path.exists(RUNTIME or ""),
                                reason="no build with the mock driver (unittests/Runtime/mockcuda)")

CHILD = r'''
import ctypes, json, os, sys, time
sys.path.insert(0, os.path.join(sys.argv[1], "python", "tests"))
import torch  # the stand-in
import triton, triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor
import tawa
from conftest import FakeTensor


class Encode(ctypes.Structure):
    _fields_ = [("type", ctypes.c_int), ("rank", ctypes.c_uint), ("address", ctypes.c_uint64),
                ("dim", ctypes.c_uint64 * 5), ("stride", ctypes.c_uint64 * 4), ("box", ctypes.c_uint * 5),
                ("elementStride", ctypes.c_uint * 5), ("swizzle", ctypes.c_int), ("oob", ctypes.c_int)]


class Launch(ctypes.Structure):
    _fields_ = [("grid", ctypes.c_uint * 3), ("block", ctypes.c_uint * 3), ("cluster", ctypes.c_uint * 3),
                ("smem", ctypes.c_uint), ("numAttrs", ctypes.c_uint), ("stream", ctypes.c_void_p),
                ("hasExtra", ctypes.c_bool), ("paramAddr", ctypes.c_void_p * 8),
                ("paramWord", ctypes.c_uint64 * 8)]


class State(ctypes.Structure):
    _fields_ = [("smCount", ctypes.c_int), ("maxThreads", ctypes.c_int), ("staticSmem", ctypes.c_int),
                ("paramCount", ctypes.c_int), ("switchContext", ctypes.c_bool),
                ("maxDynamicSmem", ctypes.c_int), ("modulesLoaded", ctypes.c_int),
                ("modulesUnloaded", ctypes.c_int), ("numLaunches", ctypes.c_int), ("numEncodes", ctypes.c_int),
                ("launches", Launch * 16), ("encodes", Encode * 16)]




def gemm(a_desc, b_desc, c_desc, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        a = a_desc.load([pid_m * BM, k * BK])
        b = b_desc.load([pid_n * BN, k * BK])
        acc = tl.dot(a, b.T, acc)
    c_desc.store([pid_m * BM, pid_n * BN], acc.to(c_desc.dtype))


kernel = tawa.jit(gemm)
out = {"calls": []}
D = TensorDescriptor.from_tensor
if sys.argv[2] == "compile":
    # NVRTC looks for libcuda.so.1 itself and must not find the mock: this
    # run compiles into the disk cache, the next (the mock first on
    # LD_LIBRARY_PATH) finds the kernel there.
    a = FakeTensor((512, 512))
    kernel.warmup(D(a, [128, 64]), D(a, [256, 64]), D(a, [128, 256]), 512, 512, 512, BM=128, BN=256, BK=64)
    print(json.dumps(kernel.stats))
    sys.exit(0)
mock = ctypes.CDLL("libcuda.so.1")
mock.tawa_mock_state.restype = ctypes.POINTER(State)
state = mock.tawa_mock_state().contents
state.paramCount = 8
for m, n, k, address in [(512, 768, 1024, 1 << 32), (256, 256, 2048, 1 << 33)]:
    a = FakeTensor((m, k), address=address)
    b = FakeTensor((n, k), address=address + (1 << 28))
    storage = FakeTensor((m, n + 64), address=address + (2 << 28))
    c = TensorDescriptor(storage, [m, n], [n + 64, 1], [128, 256])
    before_l, before_e = state.numLaunches, state.numEncodes
    compiled = kernel[lambda meta: (triton.cdiv(meta["M"], 128), triton.cdiv(meta["N"], 256))](
        D(a, [128, 64]), D(b, [256, 64]), c, m, n, k, BM=128, BN=256, BK=64)
    launch = state.launches[(state.numLaunches - 1) % 16]
    encodes = [state.encodes[i % 16] for i in range(before_e, state.numEncodes)]
    out["calls"].append({
        "launches": state.numLaunches - before_l,
        "grid": list(launch.grid), "block": list(launch.block), "smem": launch.smem,
        "stream": launch.stream or 0,
        "encodes": [{"address": e.address, "dim": list(e.dim[:e.rank]), "stride": list(e.stride[:e.rank - 1]),
                     "box": list(e.box[:e.rank])} for e in encodes],
        "words": list(launch.paramWord)})
out["metadata"] = compiled.metadata
out["modules_loaded"] = state.modulesLoaded
out["stats"] = dict(kernel.stats)
# Host time per cached call through the runtime into the mock driver.
args = (D(a, [128, 64]), D(b, [256, 64]), c, m, n, k)
grid = (2, 1)
for _ in range(200):
    kernel[grid](*args, BM=128, BN=256, BK=64)
t = time.perf_counter()
for _ in range(2000):
    kernel[grid](*args, BM=128, BN=256, BK=64)
out["us_per_call"] = (time.perf_counter() - t) / 2000 * 1e6
print(json.dumps(out))
'''


def test_jit_launch_reaches_the_driver_as_called(tmp_path):
    script = tmp_path / "child.py"  # Triton reads a kernel's source from its file
    script.write_text(CHILD)
    env = dict(os.environ)
    env["TAWA_RUNTIME_LIB"] = RUNTIME
    env["PYTHONPATH"] = os.pathsep.join([os.path.join(REPO, "unittests", "Runtime", "pystub"),
                                         os.path.join(REPO, "python")])
    r = subprocess.run([sys.executable, str(script), REPO, "compile"], capture_output=True, text=True, env=env,
                       timeout=600)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert json.loads(r.stdout.strip().splitlines()[-1])["compiles"] == 1
    env["LD_LIBRARY_PATH"] = os.path.dirname(MOCK) + os.pathsep + env.get("LD_LIBRARY_PATH", "")
    r = subprocess.run([sys.executable, str(script), REPO, "launch"], capture_output=True, text=True, env=env,
                       timeout=600)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["stats"]["compiles"] == 0 and out["stats"]["disk_hits"] == 1
    print(f"tawa.jit host time per cached call into the mock driver: {out['us_per_call']:.2f} us")
    md = out["metadata"]
    assert out["modules_loaded"] == 1  # loaded once, on the first launch
    shapes = [(512, 768, 1024, 1 << 32), (256, 256, 2048, 1 << 33)]
    for call, (m, n, k, address) in zip(out["calls"], shapes):
        assert call["launches"] == 1
        assert call["block"] == md["block"] and call["smem"] == md["dynamic_smem_bytes"]
        assert call["stream"] == 0  # the stand-in's current stream
        # Tensor maps: innermost dimension first, strides in bytes (fp16).
        a, b, c = call["encodes"]
        assert a == {"address": address, "dim": [k, m], "stride": [2 * k], "box": [64, 128]}
        assert b == {"address": address + (1 << 28), "dim": [k, n], "stride": [2 * k], "box": [64, 256]}
        assert c["address"] == address + (2 << 28) and c["dim"] == [n, m] and c["stride"] == [2 * (n + 64)]
        # The scalar parameters the kernel takes (after a's map: its shape and strides).
        values = {"M": m, "N": n, "K": k}
        for i, p in enumerate(md["params"][:8]):
            if p["kind"] in ("i32", "i64") and p["name"] in values:
                word = call["words"][i] & (0xFFFFFFFF if p["kind"] == "i32" else (1 << 64) - 1)
                assert word == values[p["name"]], (p, call["words"])
