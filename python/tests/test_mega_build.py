"""tawa.mega's library build (python/tawa/mega/build.py), on a CPU machine:
the package imports without PyTorch, the planner and the decode kernel
compile with g++ and nvcc into libtawa_mega.so, a second call finds it in the
cache, and its C API loads and reports a clean error where there is no GPU."""
import ctypes
import os
import shutil

import pytest

import tawa.mega
from tawa.mega import build

NVCC = build._nvcc()
needs_nvcc = pytest.mark.skipif(shutil.which(NVCC) is None and not os.path.isfile(NVCC),
                                reason="nvcc not found")


def test_package_imports_without_torch():
    assert tawa.mega.build_library is build.build_library
    assert tawa.mega.MegaError is build.MegaError
    with pytest.raises(AttributeError):
        tawa.mega.no_such_name  # noqa: B018


def test_missing_sources_is_a_clear_error(monkeypatch, tmp_path):
    monkeypatch.delenv("TAWA_MEGA_LIB", raising=False)
    monkeypatch.setenv("TAWA_SOURCE_DIR", str(tmp_path))
    with pytest.raises(build.MegaError, match="TAWA_SOURCE_DIR"):
        build.build_library()


@needs_nvcc
def test_builds_caches_and_loads(monkeypatch, tmp_path):
    monkeypatch.delenv("TAWA_MEGA_LIB", raising=False)
    monkeypatch.delenv("TAWA_SOURCE_DIR", raising=False)
    monkeypatch.delenv("TAWA_MEGA_NVCC_FLAGS", raising=False)
    monkeypatch.setenv("TAWA_CACHE_DIR", str(tmp_path))
    lib_path = build.build_library()
    assert lib_path.startswith(str(tmp_path)) and os.path.isfile(lib_path)
    mtime = os.path.getmtime(lib_path)
    assert build.build_library() == lib_path  # cached: not rebuilt
    assert os.path.getmtime(lib_path) == mtime

    lib = ctypes.CDLL(lib_path)
    lib.tawa_mega_last_error.restype = ctypes.c_char_p
    lib.tawa_mega_create.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_int,
                                     ctypes.c_int, ctypes.c_int, ctypes.c_int,
                                     ctypes.c_int, ctypes.POINTER(ctypes.c_void_p)]
    handle = ctypes.c_void_p()
    # A config error is reported before any CUDA call.
    assert lib.tawa_mega_create(b'{"model_type": "gpt2"}', 1, 64, 16, 0, 4, 0,
                                ctypes.byref(handle)) != 0
    assert b"model_type" in lib.tawa_mega_last_error()
    assert not handle.value
