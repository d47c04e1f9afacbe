"""The ctypes binding of libtawa_compiler.so, on the project's own TTIR."""
import os

import pytest

from tawa.compiler import (CompilationError, CompilerOptions, STAGES, compile_or_raise, compile_ttir,
                           compiler_version, first_error_location)

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GEMM = os.path.join(REPO, "examples", "ttir", "gemm_fp16.ttir")


def read(path):
    with open(path) as f:
        return f.read()


def test_version():
    assert compiler_version() == "0.1.0"


@pytest.mark.parametrize("stage", ["check", "ws-ir", "lowered", "cuda"])
def test_each_stage_gives_its_output(stage):
    result = compile_ttir(read(GEMM), stage=stage)
    assert result.ok, result.diagnostics
    if STAGES[stage] <= STAGES["lowered"]:
        assert result.ir.startswith("#loc") or "module" in result.ir
        assert not result.cuda and not result.cubin
    if stage == "ws-ir":
        assert "tawa.warp_specialize" in result.ir
    if stage == "cuda":
        assert "__global__" in result.cuda and result.metadata.lstrip().startswith("{")
        assert not result.ptx and not result.cubin


def test_cubin_with_ws_ir_and_resource_report():
    result = compile_ttir(read(GEMM), CompilerOptions(aref_depth=3), want_ws_ir=True, cubin_name="g.cubin")
    assert result.ok, result.diagnostics
    assert result.cubin[:4] == b"\x7fELF"
    assert "tawa.warp_specialize" in result.ws_ir
    assert '"cubin": "g.cubin"' in result.metadata and '"registers"' in result.metadata
    assert "Used" in result.ptxas_log


def test_tl_assume_is_accepted():
    # Triton lowers tl.assume to llvm.intr.assume: the library parses it and
    # drops it before the check (a pointer GEMM with one on a stride).
    path = os.path.join(REPO, "test", "Transforms", "Inputs", "assume-pointer-gemm.ttir")
    assert "llvm.intr.assume" in read(path)
    result = compile_ttir(read(path), stage="cuda")
    assert result.ok, result.diagnostics
    assert "tmaLoad2D" in result.cuda


def test_ptx():
    result = compile_ttir(read(GEMM), stage="ptx")
    assert result.ok and ".target sm_90a" in result.ptx and not result.cubin


def test_syntax_error_names_the_buffer():
    result = compile_ttir("module { this is not TTIR }", buffer_name="broken.ttir")
    assert not result.ok
    assert result.diagnostics.startswith("broken.ttir:1:")
    with pytest.raises(CompilationError) as info:
        compile_or_raise("module { this is not TTIR }", buffer_name="broken.ttir", kernel_name="k")
    assert info.value.location == ("broken.ttir", 1)
    assert "kernel 'k'" in str(info.value)


def test_options_the_compiler_refuses():
    # Both checks of tawac's: the Python side first, the library's own too.
    with pytest.raises(ValueError, match="tile_swizzle"):
        compile_ttir(read(GEMM), CompilerOptions(tile_swizzle=0))
    result = compile_ttir(read(GEMM), CompilerOptions(pair_programs="x", persistent=False))
    assert not result.ok and "persistent" in result.diagnostics


def test_first_error_location():
    text = "note: x\n/a/b.py:12:4: error: no\n/a/c.py:3:1: error: later\n"
    assert first_error_location(text) == ("/a/b.py", 12)
    assert first_error_location("nothing") is None


def test_optimal_schedule_or_the_reason_it_is_missing():
    # The normal build has the Twill scheduler; the wheel's compiler has not,
    # and must say so at the kernel's line rather than fail otherwise.
    result = compile_ttir(read(GEMM), CompilerOptions(schedule="optimal"), stage="cuda")
    if result.ok:
        assert "__global__" in result.cuda
    else:
        assert "built without the Twill scheduler" in result.diagnostics
        assert result.diagnostics.startswith("kernels.py:")
