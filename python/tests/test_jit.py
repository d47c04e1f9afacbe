"""tawa.jit without a GPU: Triton's front end -> TTIR -> tawa -> CUBIN on
this machine; errors at the user's line; the caches; option aliases;
fallback to Triton; the mapping of a call's arguments onto the runtime's."""
import json
import os
import warnings

import pytest
import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor

import tawa
from tawa import jit as tawa_jit_module  # noqa: F401  (the decorator)
from tawa.jit import JITFunction, TawaFallbackWarning, expand_arguments, launch_param_count, split_options

from conftest import FakeTensor, RecordingLaunch, float16


def gemm_body(a_desc, b_desc, c_desc, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        a = a_desc.load([pid_m * BM, k * BK])
        b = b_desc.load([pid_n * BN, k * BK])
        acc = tl.dot(a, b.T, acc)
    c_desc.store([pid_m * BM, pid_n * BN], acc.to(c_desc.dtype))


def f16_accumulator_body(a_desc, b_desc, c_desc, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    acc = tl.zeros((BM, BN), dtype=tl.float16)
    for k in range(0, tl.cdiv(K, BK)):
        a = a_desc.load([0, k * BK])
        b = b_desc.load([0, k * BK])
        acc = tl.dot(a, b.T, acc, out_dtype=tl.float16)  # UNSUPPORTED-LINE
    c_desc.store([0, 0], acc)


BLOCKS = dict(BM=128, BN=256, BK=64)


def gemm_args(m=512, n=512, k=512, c_strides=None):
    a = FakeTensor((m, k), address=1 << 20)
    b = FakeTensor((n, k), address=2 << 20)
    c = FakeTensor((m, n), address=3 << 20, strides=c_strides)
    return (TensorDescriptor.from_tensor(a, [128, 64]), TensorDescriptor.from_tensor(b, [256, 64]),
            TensorDescriptor.from_tensor(c, [128, 256]), m, n, k)


def small_args():
    a = FakeTensor((128, 256), address=1 << 20)
    b = FakeTensor((128, 256), address=2 << 20)
    c = FakeTensor((128, 128), address=3 << 20)
    return (TensorDescriptor.from_tensor(a, [128, 64]), TensorDescriptor.from_tensor(b, [128, 64]),
            TensorDescriptor.from_tensor(c, [128, 128]), 256)


def this_line(marker):
    with open(__file__) as f:
        for number, line in enumerate(f, 1):
            if marker in line and "this_line" not in line:
                return number
    raise AssertionError(marker)


def test_gemm_compiles_to_a_cubin_with_every_stage():
    kernel = tawa.jit(gemm_body)
    compiled = kernel.warmup(*gemm_args(), grid=(4, 2), **BLOCKS)
    asm = compiled.asm
    assert asm["cubin"][:4] == b"\x7fELF"
    ttir = asm["ttir"]
    assert "tt.func public @gemm_body" in ttir
    assert os.path.basename(__file__) in ttir  # Triton's locations: the user's file
    assert "tawa.warp_specialize" in asm["ws-ir"]
    assert '__global__' in asm["cuda"] and "gemm_body" in asm["cuda"]
    assert ".target sm_90a" in asm["ptx"]
    metadata = json.loads(asm["metadata"])
    assert metadata["format"] == "tawa-kernel-metadata/1"
    assert metadata["kernel"] == "gemm_body"
    assert metadata["cubin"] == "gemm_body.cubin"
    assert [p["kind"] for p in metadata["params"][:5]] == ["tensormap", "i32", "i32", "i64", "i64"]
    assert metadata["params"][0]["box"] == [128, 64]
    assert asm["json"] == asm["metadata"]
    # The kernel's handle and the function's last kernel agree.
    assert kernel.asm["cubin"] == asm["cubin"]
    assert kernel.stats["compiles"] == 1


def test_unsupported_kernel_raises_at_the_users_line():
    kernel = tawa.jit(f16_accumulator_body)
    with pytest.raises(tawa.CompilationError) as info:
        kernel.warmup(*small_args(), grid=(1,), BM=128, BN=128, BK=64)
    error = info.value
    assert error.location == (__file__, this_line("# UNSUPPORTED-LINE"))
    message = str(error)
    assert f"{__file__}:{this_line('# UNSUPPORTED-LINE')}:" in message
    assert "f32 accumulator" in message
    assert "triton/language" not in message.split("\n")[1]


def test_second_call_hits_the_memory_cache_and_a_new_process_the_disk():
    kernel = tawa.jit(gemm_body)
    first = kernel.warmup(*gemm_args(), **BLOCKS)
    second = kernel.warmup(*gemm_args(), **BLOCKS)
    assert second is first
    assert kernel.stats == {"compiles": 1, "disk_hits": 0, "memory_hits": 1, "fallbacks": 0, "ttir": 1}
    # Other sizes with the same specialization (multiples of 16) reuse it.
    kernel.warmup(*gemm_args(m=1024, n=2048, k=4096), **BLOCKS)
    assert kernel.stats["compiles"] == 1 and kernel.stats["memory_hits"] == 2

    # A fresh function object (as in a new process) finds the entry on disk.
    again = tawa.jit(gemm_body)
    from_disk = again.warmup(*gemm_args(), **BLOCKS)
    assert again.stats["compiles"] == 0 and again.stats["disk_hits"] == 1
    assert again.stats["ttir"] == 0  # found by its source key: Triton's front end did not run
    assert from_disk.directory == first.directory
    assert from_disk.asm["cubin"] == first.asm["cubin"]
    assert first.directory.startswith(os.path.join(os.environ["TAWA_CACHE_DIR"], "jit"))

    # Another specialization (K not a multiple of 16) is another kernel.
    kernel.warmup(*gemm_args(k=520), **BLOCKS)
    assert kernel.stats["compiles"] == 2


KERNEL_FILE = """
import triton.language as tl

def gemm_file(a_desc, b_desc, c_desc, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        a = a_desc.load([tl.program_id(0) * BM, k * BK])
        b = b_desc.load([tl.program_id(1) * BN, k * BK])
        acc = tl.dot(a, b.T, acc)
    c_desc.store([tl.program_id(0) * BM, tl.program_id(1) * BN], (acc{epilogue}).to(c_desc.dtype))
"""


def load_kernel_file(path, epilogue, name):
    import importlib.util
    path.write_text(KERNEL_FILE.format(epilogue=epilogue))
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.gemm_file


def test_the_source_key_follows_the_source(tmp_path):
    """An edited kernel (same file, name and arguments) must not be found
    under its old source key; the unedited one is."""
    first = tawa.jit(load_kernel_file(tmp_path / "k.py", "", "k1"))
    first.warmup(*gemm_args(), **BLOCKS)
    same = tawa.jit(load_kernel_file(tmp_path / "k.py", "", "k2"))
    same.warmup(*gemm_args(), **BLOCKS)
    assert same.stats["disk_hits"] == 1 and same.stats["ttir"] == 0
    edited = tawa.jit(load_kernel_file(tmp_path / "k.py", " * 2.0", "k3"))
    compiled = edited.warmup(*gemm_args(), **BLOCKS)
    assert edited.stats["ttir"] == 1 and edited.stats["disk_hits"] == 0
    assert compiled.directory != first.last_kernel.directory


def test_compiler_identity_is_remembered_by_file_stamps():
    import sys
    jit_module = sys.modules["tawa.jit"]
    first = jit_module.compiler_identity()
    # Each cache directory used gets the memo (this test's is new).
    (memo,) = os.listdir(os.path.join(os.environ["TAWA_CACHE_DIR"], "jit", "identity"))
    path = os.path.join(os.environ["TAWA_CACHE_DIR"], "jit", "identity", memo)
    with open(path) as f:
        assert f.read() == first
    jit_module._identities.clear()  # as in a new process: read back from the memo
    with open(path, "w") as f:
        f.write("0" * 64)
    assert jit_module.compiler_identity() == "0" * 64  # (the memo is what is read)
    os.unlink(path)
    jit_module._identities.clear()  # no memo: hashed again, the same
    assert jit_module.compiler_identity() == first


def test_always_compile_ignores_the_disk_cache(monkeypatch):
    tawa.jit(gemm_body).warmup(*gemm_args(), **BLOCKS)
    monkeypatch.setenv("TAWA_ALWAYS_COMPILE", "1")
    kernel = tawa.jit(gemm_body)
    kernel.warmup(*gemm_args(), **BLOCKS)
    assert kernel.stats["compiles"] == 1 and kernel.stats["disk_hits"] == 0


def test_damaged_cache_entry_is_compiled_again():
    compiled = tawa.jit(gemm_body).warmup(*gemm_args(), **BLOCKS)
    with open(compiled.path("cubin"), "wb") as f:
        f.write(b"not an ELF file")
    kernel = tawa.jit(gemm_body)
    kernel.warmup(*gemm_args(), **BLOCKS)
    assert kernel.stats["compiles"] == 1
    assert kernel.asm["cubin"][:4] == b"\x7fELF"


def test_triton_warp_specialization_names_are_aliases():
    kernel = tawa.jit(gemm_body)
    by_alias = kernel.warmup(*gemm_args(), num_buffers_warp_spec=2, num_consumer_groups=2, **BLOCKS)
    by_name = kernel.warmup(*gemm_args(), aref_depth=2, consumer_groups=2, **BLOCKS)
    assert by_name is by_alias
    choices = json.loads(by_alias.asm["metadata"])["_tawa"]
    assert choices["aref_depth"] == 2 and choices["consumer_groups"] == 2
    default = kernel.warmup(*gemm_args(), **BLOCKS)
    assert json.loads(default.asm["metadata"])["_tawa"]["aref_depth"] != 2
    assert kernel.stats["compiles"] == 2


def test_options_per_kernel_and_per_call():
    kernel = tawa.jit(num_buffers_warp_spec=3, mma_depth=1)(gemm_body)
    compiled = kernel.warmup(*gemm_args(), **BLOCKS)
    choices = json.loads(compiled.asm["metadata"])["_tawa"]
    assert choices["aref_depth"] == 3 and choices["mma_depth"] == 1
    # A call's option wins over the kernel's.
    compiled = kernel.warmup(*gemm_args(), aref_depth=2, mma_depth=0, **BLOCKS)
    choices = json.loads(compiled.asm["metadata"])["_tawa"]
    assert choices["aref_depth"] == 2 and choices["mma_depth"] == 0


def test_option_errors():
    with pytest.raises(ValueError, match="given twice"):
        split_options({"aref_depth": 2, "num_buffers_warp_spec": 3})
    assert split_options({"aref_depth": 2, "num_buffers_warp_spec": 2}) == ({"aref_depth": 2}, {})
    with pytest.raises(ValueError, match="schedule must be one of"):
        tawa.jit(schedule="fastest")(gemm_body)
    kernel = tawa.jit(gemm_body)
    with pytest.raises(ValueError, match="cluster must be 1 or 2"):
        kernel.warmup(*gemm_args(), cluster=4, **BLOCKS)
    with pytest.raises(ValueError, match="fallback must be"):
        tawa.jit(fallback="cuda")(gemm_body)


def test_fallback_runs_triton_and_says_so_once(monkeypatch):
    kernel = tawa.jit(fallback="triton")(f16_accumulator_body)
    calls = []
    monkeypatch.setattr(kernel.triton_fn, "run", lambda *a, **kw: calls.append((a, kw)) or "triton-kernel")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert kernel[(1,)](*small_args(), BM=128, BN=128, BK=64) == "triton-kernel"
        assert kernel[(1,)](*small_args(), BM=128, BN=128, BK=64) == "triton-kernel"
    said = [w for w in caught if issubclass(w.category, TawaFallbackWarning)]
    assert len(said) == 1
    assert "f16_accumulator_body" in str(said[0].message) and "f32 accumulator" in str(said[0].message)
    assert len(calls) == 2
    assert calls[0][1]["grid"] == (1,) and calls[0][1]["BM"] == 128
    assert kernel.stats["fallbacks"] == 2 and kernel.stats["ttir"] == 1  # tawa tried once


def test_fallback_from_the_environment(monkeypatch):
    monkeypatch.setenv("TAWA_FALLBACK", "triton")
    kernel = tawa.jit(f16_accumulator_body)
    monkeypatch.setattr(kernel.triton_fn, "run", lambda *a, **kw: "triton-kernel")
    with pytest.warns(TawaFallbackWarning):
        assert kernel.warmup(*small_args(), BM=128, BN=128, BK=64) == "triton-kernel"


def test_without_fallback_a_supported_kernel_never_reaches_triton(monkeypatch):
    kernel = tawa.jit(fallback="triton")(gemm_body)
    monkeypatch.setattr(kernel.triton_fn, "run", lambda *a, **kw: pytest.fail("fell back"))
    assert kernel.warmup(*gemm_args(), **BLOCKS).asm["cubin"][:4] == b"\x7fELF"


def test_disable_switch_runs_triton_only(monkeypatch):
    monkeypatch.setenv("TAWA_DISABLE", "1")
    kernel = tawa.jit(gemm_body)
    calls = []
    monkeypatch.setattr(kernel.triton_fn, "run", lambda *a, **kw: calls.append(kw) or "triton-kernel")
    # tawa options are not Triton's: they are dropped, not passed on.
    assert kernel[(4, 2)](*gemm_args(), aref_depth=2, **BLOCKS) == "triton-kernel"
    assert kernel.stats["ttir"] == 0 and kernel.stats["compiles"] == 0
    assert "aref_depth" not in calls[0] and calls[0]["BM"] == 128


def test_dump_dir_gets_every_stage(tmp_path, monkeypatch):
    monkeypatch.setenv("TAWA_DUMP_DIR", str(tmp_path / "dump"))
    compiled = tawa.jit(gemm_body).warmup(*gemm_args(), aref_depth=2, **BLOCKS)
    (entry,) = os.listdir(tmp_path / "dump")
    files = sorted(os.listdir(tmp_path / "dump" / entry))
    assert files == sorted(["gemm_body.ttir", "gemm_body.ws-ir.mlir", "gemm_body.cu", "gemm_body.ptx",
                            "gemm_body.cubin", "gemm_body.json", "gemm_body.options.json"])
    with open(tmp_path / "dump" / entry / "gemm_body.options.json") as f:
        assert json.load(f)["aref_depth"] == 2
    assert entry == f"gemm_body-{compiled.key[:16]}"


def test_wraps_a_triton_jit_function():
    triton_kernel = triton.jit(gemm_body)
    kernel = tawa.jit(triton_kernel)
    assert isinstance(kernel, JITFunction) and kernel.triton_fn is triton_kernel
    assert kernel.warmup(*gemm_args(), **BLOCKS).asm["cubin"][:4] == b"\x7fELF"


def test_launch_maps_the_call_onto_the_runtime_arguments(monkeypatch):
    kernel = tawa.jit(gemm_body)
    compiled = kernel.warmup(*gemm_args(), **BLOCKS)
    recorder = RecordingLaunch().install(monkeypatch)
    a, b, c, m, n, k = gemm_args(m=512, n=768, k=1024)
    grid_meta = []

    def grid(meta):
        grid_meta.append(meta)
        return (triton.cdiv(meta["M"], meta["BM"]), triton.cdiv(meta["N"], meta["BN"]))

    returned = kernel[grid](a, b, c, m, n, k, **BLOCKS)
    assert returned is compiled
    ((args, launch_grid, stream),) = recorder.launches
    assert launch_grid == (4, 3, 1) and stream == RecordingLaunch.STREAM
    assert grid_meta[0]["BK"] == 64 and grid_meta[0]["K"] == 1024
    # Each descriptor: its tensor (fp16 = dtype 0), shape, strides (as Triton expands it).
    assert args == [("tensor", 0, 1 << 20, (512, 1024), (1024, 1)), 512, 1024, 1024, 1,
                    ("tensor", 0, 2 << 20, (768, 1024), (1024, 1)), 768, 1024, 1024, 1,
                    ("tensor", 0, 3 << 20, (512, 768), (768, 1)), 512, 768, 768, 1,
                    512, 768, 1024]
    assert len(args) == launch_param_count(compiled.metadata)

    # The next call (new tensors, the same specialization) packs its own values.
    a2, b2, c2, m2, n2, k2 = gemm_args(m=256, n=256, k=2048)
    kernel[(7,)](a2, b2, c2, m2, n2, k2, **BLOCKS)
    args, launch_grid, _ = recorder.launches[1]
    assert launch_grid == (7, 1, 1)
    assert args[0] == ("tensor", 0, 1 << 20, (256, 2048), (2048, 1)) and args[-3:] == [256, 256, 2048]
    assert kernel.stats["memory_hits"] == 2 and kernel.stats["compiles"] == 1


def test_launch_of_a_descriptor_over_a_strided_view(monkeypatch):
    """A descriptor whose shape and strides differ from its base's: the
    tensor map takes the descriptor's (the base's address)."""
    kernel = tawa.jit(gemm_body)
    a, b, _, m, n, k = gemm_args()
    storage = FakeTensor((512, 640), address=5 << 20)
    c = TensorDescriptor(storage, [512, 512], [640, 1], [128, 256])
    recorder = RecordingLaunch().install(monkeypatch)
    kernel[(8,)](a, b, c, m, n, k, **BLOCKS)
    args = recorder.launches[0][0]
    assert args[10:15] == [("tensor", 0, 5 << 20, (512, 512), (640, 1)), 512, 512, 640, 1]


def test_launch_of_pointers_floats_and_bools(monkeypatch):
    def scaled_copy(x_ptr, y_ptr, n, scale, flag, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < n)
        if flag:
            x = x * scale
        tl.store(y_ptr + offs, x, mask=offs < n)

    from tawa.jit import _Launcher
    signature = {"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i32", "scale": "fp32", "flag": "i1", "big": "u64",
                 "BLOCK": "constexpr"}
    recorder = RecordingLaunch()
    launcher = _Launcher("scaled_copy", signature, 6, (recorder, RecordingLaunch.HANDLE, lambda: 3))
    x = FakeTensor((1000,), dtype=float16, address=9 << 20)
    launcher.launch((2, 1, 1), x, 12345 << 8, 1000, 0.5, True, (1 << 64) - 1, 512)
    args, grid, stream = recorder.launches[0]
    assert grid == (2, 1, 1) and stream == 3
    # A tensor passes its address; an integer is an address already; the
    # u64's bits are kept (the runtime's field is an int64).
    assert args == [9 << 20, 12345 << 8, 1000, 0.5, 1, -1]
    assert isinstance(args[3], float)
    # A parameter count that disagrees with the metadata's is an error.
    with pytest.raises(TypeError, match="takes 5 launch arguments"):
        _Launcher("scaled_copy", signature, 5, (recorder, RecordingLaunch.HANDLE, lambda: 3))
    # A value that does not fit, a bad grid, a tensor on the host: errors before the launch.
    with pytest.raises(TypeError, match="does not fit"):
        launcher.launch((2, 1, 1), x, x, 1 << 70, 0.5, True, 0, 512)
    with pytest.raises(ValueError, match="grid"):
        launcher.launch((-1, 1, 1), x, x, 1, 0.5, True, 0, 512)
    host = FakeTensor((16,))
    host.is_cuda = False
    with pytest.raises(TypeError, match="not on a CUDA device"):
        launcher.launch((1, 1, 1), host, x, 1, 0.5, True, 0, 512)
    assert len(recorder.launches) == 1


def test_descriptor_with_its_own_strides_becomes_a_view():
    base = FakeTensor((512, 640))
    desc = TensorDescriptor(base, [512, 512], [640, 1], [128, 64])
    signature = {"d": "tensordesc<fp16[128, 64]>", "n": "i32", "one": "constexpr", "x": "fp32", "p": "*fp16"}
    pointer = FakeTensor((16,))
    args = expand_arguments(signature, {"d": desc, "n": 7, "one": 1, "x": 2, "p": pointer})
    view = args[0]
    assert view.base is base and view.shape == (512, 512) and view.stride() == (640, 1)
    assert args[1:] == [512, 512, 640, 1, 7, 2.0, pointer]
    assert isinstance(args[6], float)


def test_integer_one_is_folded_into_the_kernel(monkeypatch):
    kernel = tawa.jit(gemm_body)
    a, b, c, _, n, k = gemm_args()
    compiled = kernel.warmup(a, b, c, 1, n, k, **BLOCKS)  # M = 1: a constant to Triton
    assert launch_param_count(compiled.metadata) == 17
    recorder = RecordingLaunch().install(monkeypatch)
    kernel[(16,)](a, b, c, 1, n, k, **BLOCKS)
    args = recorder.launches[0][0]
    assert len(args) == 17 and args[-2:] == [n, k]


def test_nan_padding_is_refused_before_launch(monkeypatch):
    kernel = tawa.jit(gemm_body)
    a, b, c, m, n, k = gemm_args()
    kernel.warmup(a, b, c, m, n, k, **BLOCKS)
    c_nan = TensorDescriptor(c.base, c.shape, c.strides, c.block_shape, padding="nan")
    recorder = RecordingLaunch().install(monkeypatch)
    with pytest.raises(TypeError, match="padding='nan'"):
        kernel[(1,)](a, b, c_nan, m, n, k, **BLOCKS)
    assert recorder.launches == []


def test_launch_needs_a_grid():
    kernel = tawa.jit(gemm_body)
    with pytest.raises(ValueError, match="needs a grid"):
        kernel.run(*gemm_args(), grid=None, warmup=False, **BLOCKS)


def scaled_gemm_body(a_desc, b_desc, c_desc, K, SCALE: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr,
                     BK: tl.constexpr):
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        a = a_desc.load([0, k * BK])
        b = b_desc.load([0, k * BK])
        acc = tl.dot(a, b.T, acc)
    c_desc.store([0, 0], (acc * (K + SCALE)).to(c_desc.dtype))  # an i32 add, or f32 (SCALE = 1.0)


def test_constexprs_equal_in_python_are_different_kernels():
    """1, 1.0 and True are equal (and hash alike) in Python; Triton's front
    end makes different code of each: no call may find another's kernel in
    memory (or on disk)."""
    kernel = tawa.jit(scaled_gemm_body)
    compiled = [kernel.warmup(*small_args(), SCALE=scale, BM=128, BN=128, BK=64) for scale in (1, 1.0, True)]
    assert kernel.stats["ttir"] == 3 and kernel.stats["memory_hits"] == 0
    # K + 1.0 is a float32 add, K + 1 an int32 one (True's folds to 1's).
    assert compiled[0].asm["ttir"] != compiled[1].asm["ttir"]
    assert compiled[0].directory != compiled[1].directory
    assert kernel.warmup(*small_args(), SCALE=1.0, BM=128, BN=128, BK=64) is compiled[1]
    again = tawa.jit(scaled_gemm_body)  # a new kernel object: found on disk, each its own
    assert [again.warmup(*small_args(), SCALE=scale, BM=128, BN=128, BK=64).directory
            for scale in (True, 1, 1.0)] == [compiled[2].directory, compiled[0].directory, compiled[1].directory]
    assert again.stats["disk_hits"] == 3 and again.stats["ttir"] == 0
