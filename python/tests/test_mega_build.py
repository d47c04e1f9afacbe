"""tawa.mega's library build (python/tawa/mega/build.py), on a CPU machine:
the package imports without PyTorch, the planner and the decode kernel
compile with g++ and nvcc into libtawa_mega.so, a second call finds it in the
cache, and its C API loads and reports a clean error where there is no GPU."""
import ctypes
import json
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


def test_specialization_flags():
    flags = tawa.mega.specialization_flags
    assert flags(4, 128) == ["-DTAWA_MEGA_ATTN_GROUPS=4", "-DTAWA_MEGA_ATTN_ANY_HEAD_DIM=0"]
    assert flags(1, 64) == ["-DTAWA_MEGA_ATTN_GROUPS=1", "-DTAWA_MEGA_ATTN_ANY_HEAD_DIM=1"]
    assert flags(2, 128)[0] == "-DTAWA_MEGA_ATTN_GROUPS=2"
    assert flags(8, 96) == ["-DTAWA_MEGA_ATTN_GROUPS=8", "-DTAWA_MEGA_ATTN_ANY_HEAD_DIM=1"]
    # No variant for 3 q heads per KV head: every group stays (the planner
    # refuses the model with its own message).
    assert flags(3, 128)[0] == "-DTAWA_MEGA_ATTN_GROUPS=15"


def test_model_specialization_flags():
    """A model's flags come from its q heads per KV head and head dimension,
    whether it is given as a shape or as a Hugging Face-style config."""
    from types import SimpleNamespace
    qwen8b = SimpleNamespace(num_attention_heads=32, num_key_value_heads=8, head_dim=128)
    assert tawa.mega.model_specialization_flags(qwen8b) == tawa.mega.specialization_flags(4, 128)
    odd = SimpleNamespace(num_attention_heads=12, num_key_value_heads=12, head_dim=64)
    assert tawa.mega.model_specialization_flags(odd) == ["-DTAWA_MEGA_ATTN_GROUPS=1",
                                                          "-DTAWA_MEGA_ATTN_ANY_HEAD_DIM=1"]


def _create(lib, config, batch):
    lib.tawa_mega_last_error.restype = ctypes.c_char_p
    lib.tawa_mega_create.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_int,
                                     ctypes.c_int, ctypes.c_int, ctypes.c_int,
                                     ctypes.c_int, ctypes.POINTER(ctypes.c_void_p)]
    handle = ctypes.c_void_p()
    rc = lib.tawa_mega_create(json.dumps(config).encode(), batch, 512, 64, 0, 4, 0,
                              ctypes.byref(handle))
    assert not handle.value
    return rc, lib.tawa_mega_last_error().decode()


@needs_nvcc
def test_specialized_build_refuses_other_models(monkeypatch, tmp_path):
    """A library built for Qwen3-8B's attention (4 q heads per KV head, head
    dimension 128) refuses models with another attention before any CUDA
    call, naming what it lacks."""
    monkeypatch.delenv("TAWA_MEGA_LIB", raising=False)
    monkeypatch.delenv("TAWA_SOURCE_DIR", raising=False)
    monkeypatch.delenv("TAWA_MEGA_NVCC_FLAGS", raising=False)
    monkeypatch.setenv("TAWA_CACHE_DIR", str(tmp_path))
    flags = tawa.mega.specialization_flags(4, 128)
    path = build.build_library(flags=flags)
    assert os.path.isfile(path)
    lib = ctypes.CDLL(path)
    qwen3_8b = dict(model_type="qwen3", hidden_size=4096, num_hidden_layers=2,
                    num_attention_heads=32, num_key_value_heads=8, head_dim=128,
                    intermediate_size=12288, vocab_size=1000, tie_word_embeddings=False,
                    rope_theta=1e6, rms_norm_eps=1e-6)
    rc, err = _create(lib, dict(qwen3_8b, num_attention_heads=16), 1)  # 2 per KV head
    assert rc != 0 and "no attention for 2 q heads per KV head" in err
    rc, err = _create(lib, dict(qwen3_8b, head_dim=64), 1)
    assert rc != 0 and "head dimension 64" in err
    # Its own model passes both checks; here it then fails at the first CUDA
    # call (no GPU), or later if there is one.
    rc, err = _create(lib, qwen3_8b, 16)
    assert "this build" not in err
    # The build with every variant has them all.
    rc, err = _create(ctypes.CDLL(build.build_library()), dict(qwen3_8b, head_dim=64), 1)
    assert "this build" not in err
