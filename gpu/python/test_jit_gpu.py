"""tawa.jit on a GPU: Triton kernels compiled by tawa and launched on
PyTorch tensors, checked against PyTorch; the fallback runs Triton.

    TAWA_INCLUDE_DIR=$PWD/include python3 -m pytest -q gpu/python

Needs an sm_90 GPU, PyTorch and Triton 3.6, libtawa_compiler.so
($TAWA_COMPILER_LIB or a build*/lib of the repository) and
libtawa_runtime.so ($TAWA_RUNTIME_LIB or build*/lib/Runtime).
"""
import os
import sys
import warnings

import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available() or torch.cuda.get_device_capability() != (9, 0):
    pytest.skip("needs an sm_90 GPU", allow_module_level=True)

import triton  # noqa: E402
import triton.language as tl  # noqa: E402
from triton.tools.tensor_descriptor import TensorDescriptor  # noqa: E402

# TAWA_TEST_INSTALLED=1 tests the installed package (a wheel) instead of the tree.
if not os.environ.get("TAWA_TEST_INSTALLED"):
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import tawa  # noqa: E402


@tawa.jit
def gemm(a_desc, b_desc, c_desc, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        a = a_desc.load([pid_m * BM, k * BK])
        b = b_desc.load([pid_n * BN, k * BK])
        acc = tl.dot(a, b.T, acc)
    c_desc.store([pid_m * BM, pid_n * BN], acc.to(c_desc.dtype))


@tawa.jit(fallback="triton")
def gemm_f16_acc(a_desc, b_desc, c_desc, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    acc = tl.zeros((BM, BN), dtype=tl.float16)
    for k in range(0, tl.cdiv(K, BK)):
        a = a_desc.load([pid_m * BM, k * BK])
        b = b_desc.load([pid_n * BN, k * BK])
        acc = tl.dot(a, b.T, acc, out_dtype=tl.float16)
    c_desc.store([pid_m * BM, pid_n * BN], acc)


def rel_error(out, ref):
    return ((out.float() - ref).norm() / ref.norm()).item()


def run_gemm(m, n, k, dtype, bm, bn, bk, **options):
    gen = torch.Generator(device="cuda").manual_seed(m * 7 + n)
    a = torch.randn(m, k, device="cuda", generator=gen).to(dtype)
    b = torch.randn(n, k, device="cuda", generator=gen).to(dtype)
    c = torch.full((m, n), float("nan"), device="cuda", dtype=dtype)
    D = TensorDescriptor.from_tensor
    grid = lambda meta: (triton.cdiv(meta["M"], meta["BM"]), triton.cdiv(meta["N"], meta["BN"]))  # noqa: E731
    compiled = gemm[grid](D(a, [bm, bk]), D(b, [bn, bk]), D(c, [bm, bn]), m, n, k, BM=bm, BN=bn, BK=bk,
                          **options)
    torch.cuda.synchronize()
    return c, a.float() @ b.float().T, compiled


@pytest.mark.parametrize("m,n,k", [(512, 512, 512), (1000, 744, 520), (2048, 1536, 4096)])
def test_gemm_fp16(m, n, k):
    c, ref, compiled = run_gemm(m, n, k, torch.float16, 128, 256, 64)
    assert compiled.asm["cubin"][:4] == b"\x7fELF"
    assert rel_error(c, ref) < 1e-3


def test_gemm_bf16_with_triton_ws_names():
    c, ref, compiled = run_gemm(1024, 1024, 1024, torch.bfloat16, 128, 128, 64,
                                num_consumer_groups=1, num_buffers_warp_spec=3)
    assert compiled.metadata["_tawa"]["aref_depth"] == 3
    assert compiled.metadata["_tawa"]["consumer_groups"] == 1
    assert rel_error(c, ref) < 8e-3


def test_descriptor_over_a_padded_view():
    m, n, k = 384, 300, 256
    a = torch.randn(m, k, device="cuda").half()
    b = torch.randn(n, k, device="cuda").half()
    storage = torch.full((m, 320), float("nan"), device="cuda", dtype=torch.float16)
    c_desc = TensorDescriptor(storage, [m, n], [320, 1], [128, 128])
    D = TensorDescriptor.from_tensor
    gemm[(3, 3)](D(a, [128, 64]), D(b, [128, 64]), c_desc, m, n, k, BM=128, BN=128, BK=64)
    torch.cuda.synchronize()
    assert rel_error(storage[:, :n], a.float() @ b.float().T) < 1e-3
    assert torch.isnan(storage[:, 304:]).all()  # past the last 16-byte chunk of each row


def test_unsupported_kernel_falls_back_to_triton():
    m = n = k = 512
    a = torch.randn(m, k, device="cuda").half()
    b = torch.randn(n, k, device="cuda").half()
    c = torch.empty(m, n, device="cuda", dtype=torch.float16)
    D = TensorDescriptor.from_tensor
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        gemm_f16_acc[(4, 4)](D(a, [128, 64]), D(b, [128, 64]), D(c, [128, 128]), k, BM=128, BN=128, BK=64)
    torch.cuda.synchronize()
    assert any(issubclass(w.category, tawa.TawaFallbackWarning) for w in caught)
    assert gemm_f16_acc.stats["fallbacks"] == 1
    assert rel_error(c, a.float() @ b.float().T) < 1e-2


def set_blocks(nargs):
    nargs["a_desc"].block_shape = [nargs["BM"], nargs["BK"]]
    nargs["b_desc"].block_shape = [nargs["BN"], nargs["BK"]]
    nargs["c_desc"].block_shape = [nargs["BM"], nargs["BN"]]


def test_autotune_keeps_a_config_that_computes():
    configs = [tawa.Config({"BM": 128, "BN": 256, "BK": 64}, pre_hook=set_blocks),
               tawa.Config({"BM": 128, "BN": 128, "BK": 64}, pre_hook=set_blocks, num_consumer_groups=1),
               tawa.Config({"BM": 32, "BN": 128, "BK": 64}, pre_hook=set_blocks)]  # cannot compile
    tuner = tawa.autotune(configs, key=["M", "N", "K"])(tawa.jit(gemm.triton_fn))
    m, n, k = 2048, 2048, 1024
    a = torch.randn(m, k, device="cuda").half()
    b = torch.randn(n, k, device="cuda").half()
    c = torch.empty(m, n, device="cuda", dtype=torch.float16)
    D = TensorDescriptor.from_tensor
    args = (D(a, [1, 64]), D(b, [1, 64]), D(c, [1, 64]), m, n, k)
    grid = lambda meta: (triton.cdiv(meta["M"], meta["BM"]), triton.cdiv(meta["N"], meta["BN"]))  # noqa: E731
    c.zero_()
    tuner[grid](*args)
    torch.cuda.synchronize()
    assert tuner.best_config(*args) in configs[:2]
    (results,) = tuner.timings.values()
    assert [ms is None for _, ms, _ in results] == [False, False, True]
    print("autotune timings (ms):", [(c.kwargs["BN"], ms) for c, ms, _ in results])
    assert rel_error(c, a.float() @ b.float().T) < 1e-3
