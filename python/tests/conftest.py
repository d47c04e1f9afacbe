"""Shared pieces of the Python tests, which need no GPU and no PyTorch:
Triton's front end makes TTIR from stand-in tensors (a dtype and an
address are all it reads), and NVRTC makes CUBINs on a CPU machine."""
import ctypes
import os
import sys

import pytest

# TAWA_TEST_INSTALLED=1 tests the installed package (a wheel) instead of the tree.
if not os.environ.get("TAWA_TEST_INSTALLED"):
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


class FakeDtype:
    """Stands in for a torch dtype: Triton reads str(dtype) and itemsize."""

    def __init__(self, name, itemsize, is_floating_point=True):
        self.name = name
        self.itemsize = itemsize
        self.is_floating_point = is_floating_point

    def __str__(self):
        return "torch." + self.name

    __repr__ = __str__


float16 = FakeDtype("float16", 2)
bfloat16 = FakeDtype("bfloat16", 2)
float32 = FakeDtype("float32", 4)


class FakeTensor:
    """Stands in for a CUDA tensor: shape, strides, dtype, an address, and
    as_strided views that remember their base."""

    is_cuda = True

    def __init__(self, shape, dtype=float16, address=1 << 20, strides=None, base=None):
        self.shape = tuple(shape)
        self.dtype = dtype
        self.address = address
        self.base = base
        if strides is None:
            strides, step = [], 1
            for extent in reversed(self.shape):
                strides.append(step)
                step *= extent
            strides = tuple(reversed(strides))
        self._strides = tuple(strides)

    def data_ptr(self):
        return self.address

    def stride(self, dim=None):
        return self._strides if dim is None else self._strides[dim]

    def as_strided(self, shape, strides):
        return FakeTensor(shape, self.dtype, self.address, strides, base=self)

    def __repr__(self):
        return f"FakeTensor({self.shape}, {self.dtype}, strides={self._strides})"


class _Arg(ctypes.Structure):
    """tawa_arg of include/tawa/runtime/tawa_runtime.h, written out again here
    so that the tests check tawa.jit's packing against the header, not
    against itself."""
    _fields_ = [("kind", ctypes.c_int32), ("dtype", ctypes.c_int32), ("rank", ctypes.c_int32),
                ("reserved", ctypes.c_int32), ("ptr", ctypes.c_uint64), ("shape", ctypes.c_int64 * 5),
                ("strides", ctypes.c_int64 * 5), ("i", ctypes.c_int64), ("f", ctypes.c_double)]


class RecordingLaunch:
    """Stands in for the runtime's tawa_kernel_launch_grid behind tawa.jit's
    launcher: decodes the packed tawa_arg array and grid it is handed (a
    tensor as ("tensor", dtype code, address, shape, strides), an integer or
    a float as itself) and records them with the stream. Install with
    `install(monkeypatch)`; `result` is what the call returns (non-zero: the
    runtime failed)."""

    HANDLE = 0x7A3A
    STREAM = 0x5717

    def __init__(self):
        self.launches = []
        self.result = 0

    def __call__(self, handle, args_address, count, grid_address, stream):
        assert handle == self.HANDLE
        grid = tuple((ctypes.c_uint32 * 3).from_address(grid_address))
        args = []
        for a in (_Arg * count).from_address(args_address):
            assert a.reserved == 0
            if a.kind == 0:
                args.append(("tensor", a.dtype, a.ptr, tuple(a.shape[:a.rank]), tuple(a.strides[:a.rank])))
                assert all(v == 0 for v in a.shape[a.rank:]) and a.i == 0 and a.f == 0.0
            elif a.kind == 1:
                args.append(a.i)
                assert a.ptr == 0 and a.rank == 0 and a.f == 0.0
            else:
                assert a.kind == 2 and a.i == 0
                args.append(a.f)
        self.launches.append((args, grid, stream))
        return self.result

    def install(self, monkeypatch):
        from tawa.jit import CompiledKernel
        monkeypatch.setattr(CompiledKernel, "launch_target",
                            lambda kernel: (self, self.HANDLE, lambda: self.STREAM))
        return self


@pytest.fixture(autouse=True)
def isolated_tawa_env(tmp_path, monkeypatch):
    """Every test gets its own cache, and no knob from the caller's shell."""
    for knob in ("TAWA_DUMP_DIR", "TAWA_DISABLE", "TAWA_FALLBACK", "TAWA_ALWAYS_COMPILE"):
        monkeypatch.delenv(knob, raising=False)
    monkeypatch.setenv("TAWA_CACHE_DIR", str(tmp_path / "cache"))
    yield
