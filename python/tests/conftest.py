"""Shared pieces of the Python tests, which need no GPU and no PyTorch:
Triton's front end makes TTIR from stand-in tensors (a dtype and an
address are all it reads), and NVRTC makes CUBINs on a CPU machine."""
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


@pytest.fixture(autouse=True)
def isolated_tawa_env(tmp_path, monkeypatch):
    """Every test gets its own cache, and no knob from the caller's shell."""
    for knob in ("TAWA_DUMP_DIR", "TAWA_DISABLE", "TAWA_FALLBACK", "TAWA_ALWAYS_COMPILE"):
        monkeypatch.delenv(knob, raising=False)
    monkeypatch.setenv("TAWA_CACHE_DIR", str(tmp_path / "cache"))
    yield
