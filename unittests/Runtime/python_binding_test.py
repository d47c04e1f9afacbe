"""The ctypes binding (python/tawa/runtime.py) against the C API, run with the
mock libcuda.so.1 and the torch stand-in in pystub/ (see CMakeLists.txt).
Checks that the binding's signatures and argument records match
tawa_runtime.h: values must survive the trip into the runtime and its errors
must come back as TawaError with the runtime's text."""
import os
import shutil
import sys
import tempfile

import torch  # the stand-in from pystub/
from tawa import runtime as rt

failures = []
checks = 0


def expect(cond, what):
    global checks
    checks += 1
    print(("PASS " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def raises(fn, text):
    try:
        fn()
    except rt.TawaError as e:
        return text in str(e), str(e)
    return False, "<no error>"


tmp = tempfile.mkdtemp()
with open(os.path.join(tmp, "k.cubin"), "wb") as f:
    f.write(b"\x7fELF mock image")
with open(os.path.join(tmp, "k.json"), "w") as f:
    f.write("""{"format": "tawa-kernel-metadata/1", "kernel": "gemm", "cubin": "k.cubin",
      "block": [384, 1, 1], "cluster": [1, 1, 1], "dynamic_smem_bytes": 1024,
      "grid": {"kind": "persistent", "x": [{"param": "M", "size": 128}, {"param": "N", "size": 256}]},
      "params": [
        {"name": "a", "kind": "tensormap", "dtype": "f16", "box": [128, 64], "swizzle": "128B"},
        {"name": "c", "kind": "tensormap", "dtype": "f32", "box": [64, 32], "swizzle": "none"},
        {"name": "p", "kind": "ptr"}, {"name": "M", "kind": "i32"}, {"name": "N", "kind": "i64"},
        {"name": "alpha", "kind": "f32"}]}""")

expect(rt.driver_available(), "driver (mock) available")
expect(rt.sm_count() == 132, "sm_count from the device attribute")
k = rt.Kernel(os.path.join(tmp, "k.json"))
expect(k.num_params == 6, "num_params")

T = torch.Tensor
a = T(0x100000, torch.float16, (1000, 72), (72, 1))
c = T(0x200000, torch.float32, (1000, 1000), (1004, 1))
p = T(0x300000, torch.int8, (16,), (1,))
grid, block, tiles = k.launch_dims(a, c, p, 1000, 1000, 0.5)
expect(grid == (32, 1, 1) and block == (384, 1, 1) and tiles == 32, f"launch_dims {grid} {block} {tiles}")
grid, _, tiles = k.launch_dims(a, c, p, 8192, 8192, 1.0)
expect(grid == (132, 1, 1) and tiles == 2048, f"persistent grid clamps to the SMs {grid} {tiles}")
k(a, c, p, 1000, 1000, 0.5)
k(a, c, p, 1000, 1000, 0.5, grid=(7, 2))
ok, msg = raises(lambda: k(a, c, p, 1000, 1000, 0.5, grid=(1, 1 << 20)), "exceeds the CUDA limit")
expect(ok, f"explicit grid reaches the runtime's checks: {msg}")
k(a, c, 0x300000, 1000, 1000, 2)  # ptr from an int, f32 from an int
k(a, c, T(0x300000, torch.int64, (3,), (1,)), 1000, 1000, 0.5)  # a pointer table
plan = k.prepare(a, c, p, 1000, 1000, 0.5)
plan()
plan(stream=torch.cuda.Stream(0))
plan = k.prepare(a, c, p, 1000, 1000, 0.5, grid=(5, 3))
plan()
expect(True, "launch, prepared launch, prepared launch with a grid")
ok, msg = raises(lambda: k.prepare(a, c, p, 1000, 1000, 0.5, grid=(1, 1 << 20)), "exceeds the CUDA limit")
expect(ok, f"a prepared grid reaches the runtime's checks: {msg}")

cases = [
    (lambda: k(a, c, p, 1000, 1000), "expected 6 arguments, got 5"),
    (lambda: k(a, c, p, 2 ** 31, 1000, 0.5), "does not fit in 32 bits"),
    (lambda: k(a, T(0x200000, torch.float32, (10, 10), (10, 1)), p, 1, 1, 0.5),
     "stride 0 of [10, 1] is 40 bytes, not a multiple of 16 bytes"),
    (lambda: k(T(0x100008, torch.float16, (8, 8), (8, 1)), c, p, 1, 1, 0.5), "not 16-byte aligned"),
    (lambda: k(c, c, p, 1, 1, 0.5), "dtype mismatch: the kernel expects f16, the tensor is f32"),
    (lambda: k(a, c, p, 1.5, 1000, 0.5), "argument 3 'M' (i32): got a float"),
    (lambda: k(a, c, p, 1000, 1000, "x"), "unsupported type str"),
    (lambda: k(T(1, torch.float16, (8,), (1,), device="cpu"), c, p, 1, 1, 0.5), "not on a CUDA device"),
    (lambda: rt.Kernel(os.path.join(tmp, "missing.json")), "cannot open kernel metadata"),
]
for fn, text in cases:
    ok, msg = raises(fn, text)
    expect(ok, f"error '{text}' (got: {msg})")

shutil.rmtree(tmp)
print(f"{checks - len(failures)} passed, {len(failures)} failed")
sys.exit(1 if failures else 0)
