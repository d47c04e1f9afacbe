"""How each GEMM-family kernel is launched and what it must compute.

A tawa kernel takes the arguments of the Triton kernel it came from, with
each host tensor descriptor expanded as Triton expands it (descriptor, then
its shape and strides), and the launch grid Triton's caller would use. The
launch code here mirrors ../shared/ttir/triton_kernels.py and
examples/kernels.py; the references are computed by PyTorch in float32 from
the very same (rounded) inputs.
"""
import math
import os
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
from tawa.runtime import Kernel  # noqa: E402

DTYPES = {"f16": torch.float16, "bf16": torch.bfloat16, "e4m3": torch.float8_e4m3fn}

# Relative Frobenius error bounds by (input, output) element type: rounding
# the output once costs at most its unit roundoff (f16 2^-11, bf16 2^-8);
# fp8 products accumulate in the tensor cores with fewer bits than fp32, so
# they get more room.
BOUNDS = {("f16", "f16"): 1e-3, ("bf16", "bf16"): 8e-3, ("e4m3", "f16"): 4e-3}


# A kernel that never finishes (a deadlocked protocol) would hold the check
# and the device call forever: each launch is awaited for at most
# TAWA_CHECK_HANG_SECONDS (default 120, room for compute-sanitizer), then what
# was running (RUNNING, set by the caller) is printed and the process exits
# with status 3 (a hung CUDA context cannot be recovered).
HANG_SECONDS = float(os.environ.get("TAWA_CHECK_HANG_SECONDS", "120"))
RUNNING = "?"


def synchronize():
    """torch.cuda.synchronize(), bounded: the launches go to PyTorch's current
    stream (tawa.runtime), so an event recorded after them completes with
    them."""
    done = torch.cuda.Event()
    done.record()
    deadline = time.monotonic() + HANG_SECONDS
    while not done.query():
        if time.monotonic() > deadline:
            # (flush: os._exit drops buffered output, earlier lines included)
            print(f"HANG {RUNNING}: not finished after {HANG_SECONDS:g} s; stopping", flush=True)
            os._exit(3)
        time.sleep(0.001)
    torch.cuda.synchronize()


def cdiv(a, b):
    return (a + b - 1) // b


def padded(rows, cols, dtype, fill=None, extra=0):
    """A rows x cols view whose row stride is padded to 16 bytes (TMA needs
    every stride 16-byte aligned) plus `extra` more elements that the kernel
    must not touch. Returns (view, storage)."""
    esize = torch.empty((), dtype=dtype).element_size()
    per16 = 16 // esize
    stride = cdiv(cols, per16) * per16 + extra
    storage = torch.empty(rows, stride, dtype=dtype, device="cuda")
    if fill is not None:
        storage.fill_(fill)
    return storage[:, :cols], storage


def rand(rows, cols, dtype, gen):
    """Random inputs of dtype, in padded storage, and their float32 values."""
    x = torch.randn(rows, cols, device="cuda", generator=gen) * (0.5 if dtype == torch.float8_e4m3fn else 1.0)
    view, _ = padded(rows, cols, dtype)
    view.copy_(x.to(dtype))
    return view, view.float()


def desc_args(t):
    """A descriptor argument as Triton expands it: tensor, shape, strides."""
    return [t, *t.shape, *t.stride()]


class Loaded:
    """A compiled kernel with what its metadata says about it."""

    def __init__(self, metadata_path):
        import json
        with open(metadata_path) as f:
            self.meta = json.load(f)
        self.kernel = Kernel(metadata_path)
        self.tensormaps = [p for p in self.meta["params"] if p["kind"] == "tensormap"]

    def box(self, i):
        """The tile descriptor i moves per access (its TTIR block; the TMA
        box may be a fraction of it, e.g. half with cluster multicast)."""
        p = self.tensormaps[i]
        return p.get("_block", p["box"])

    def dtype(self, i):
        return self.tensormaps[i]["dtype"]


def prepare_gemm(k, a, b, c, m, n, kk):
    """A prepared launch of a `gemm` kernel (C = A B^T) on these tensors,
    with the program grid Triton's caller would use."""
    bm, bn = k.box(0)[0], k.box(1)[0]
    return k.kernel.prepare(*desc_args(a), *desc_args(b), *desc_args(c), m, n, kk,
                            grid=(cdiv(m, bm) * cdiv(n, bn),))


def nan_poisoned_out(m, n, dtype):
    """C poisoned with NaN, one extra 16-byte chunk per row that must stay NaN."""
    esize = torch.empty((), dtype=dtype).element_size()
    return padded(m, n, dtype, fill=float("nan"), extra=16 // esize)


def untouched(storage, view):
    """Whether the row padding is intact. TMA stores write whole 16-byte
    chunks (docs/RUNTIME.md): the rest of a row's last chunk may receive
    the out-of-bounds part of the shared-memory tile (zeros for a plain GEMM;
    whatever the kernel computed there otherwise, e.g. the batched sample's
    products with the next batch's rows); every chunk after it must still
    be NaN."""
    n = view.shape[1]
    per16 = 16 // storage.element_size()
    chunk_end = cdiv(n, per16) * per16
    return bool(torch.isnan(storage[:, chunk_end:].float()).all())


def run_gemm(k, m, n, kk, gen, grid_kind="tiles"):
    """C = A B^T, one program per BM x BN tile (or a persistent grid)."""
    a_dt, c_dt = DTYPES[k.dtype(0)], DTYPES[k.dtype(2)]
    bm, bn = k.box(0)[0], k.box(1)[0]
    a, a32 = rand(m, kk, a_dt, gen)
    b, b32 = rand(n, kk, a_dt, gen)
    c, cst = nan_poisoned_out(m, n, c_dt)
    args = desc_args(a) + desc_args(b) + desc_args(c) + [m, n, kk]
    grid = (cdiv(m, bm) * cdiv(n, bn),) if grid_kind == "tiles" else (132,)
    k.kernel(*args, grid=grid)
    synchronize()
    return c, a32 @ b32.T, untouched(cst, c), (k.dtype(0), k.dtype(2))


def run_gemm_kn(k, m, n, kk, gen):
    """C = A B with B stored K x N (an MN-major operand), one program per
    BM x BN tile."""
    a_dt, c_dt = DTYPES[k.dtype(0)], DTYPES[k.dtype(2)]
    bm, bn = k.box(0)[0], k.box(1)[1]
    a, a32 = rand(m, kk, a_dt, gen)
    b, b32 = rand(kk, n, a_dt, gen)
    c, cst = nan_poisoned_out(m, n, c_dt)
    args = desc_args(a) + desc_args(b) + desc_args(c) + [m, n, kk]
    k.kernel(*args, grid=(cdiv(m, bm) * cdiv(n, bn),))
    synchronize()
    return c, a32 @ b32, untouched(cst, c), (k.dtype(0), k.dtype(2))


def run_persistent(k, m, n, kk, gen):
    # NUM_SMS = 132 is a constexpr of the sample: its grid is 132 programs.
    return run_gemm(k, m, n, kk, gen, grid_kind="persistent")


def run_batched(k, m, n, kk, gen, batch=3):
    """Batch b's rows start at b * M in A and C and at b * N in B. The kernel
    offsets rows by the batch index without masking, so a tile that runs past
    M would read and write the next batch: M must be a multiple of BM (as in
    the sample's own launch); N and K may be anything."""
    bm, bn = k.box(0)[0], k.box(1)[0]
    m = cdiv(m, bm) * bm
    a_dt, c_dt = DTYPES[k.dtype(0)], DTYPES[k.dtype(2)]
    a, a32 = rand(batch * m, kk, a_dt, gen)
    b, b32 = rand(batch * n, kk, a_dt, gen)
    c, cst = nan_poisoned_out(batch * m, n, c_dt)
    args = desc_args(a) + desc_args(b) + desc_args(c) + [m, n, kk]
    k.kernel(*args, grid=(cdiv(m, bm), cdiv(n, bn), batch))
    synchronize()
    ref = torch.cat([a32[i * m:(i + 1) * m] @ b32[i * n:(i + 1) * n].T for i in range(batch)])
    return c, ref, untouched(cst, c), (k.dtype(0), k.dtype(2))


def run_bias_relu(k, m, n, kk, gen):
    """C = relu(A B + bias), B stored K x N (not transposed), bias by pointer."""
    a_dt, c_dt = DTYPES[k.dtype(0)], DTYPES[k.dtype(2)]
    bm, bn = k.box(0)[0], k.box(1)[1]
    a, a32 = rand(m, kk, a_dt, gen)
    b, b32 = rand(kk, n, a_dt, gen)
    bias = torch.randn(n, device="cuda", generator=gen).to(torch.float16)
    c, cst = nan_poisoned_out(m, n, c_dt)
    args = desc_args(a) + desc_args(b) + desc_args(c) + [bias, m, n, kk]
    k.kernel(*args, grid=(cdiv(m, bm), cdiv(n, bn)))
    synchronize()
    ref = torch.relu(a32 @ b32 + bias.float()[None, :])
    return c, ref, untouched(cst, c), (k.dtype(0), k.dtype(2))


def run_grouped(k, m, n, kk, gen, groups=3):
    """Groups g = 0..G-1 of C_g = A_g B_g^T with sizes (m_g, n, kk), m_g =
    (g + 1) m, through device-side descriptors built from pointer tables;
    132 programs (the sample's NUM_SMS) walk the tiles of all groups."""
    sizes, a_list, b_list, c_list, refs, stores = [], [], [], [], [], []
    for g in range(groups):
        mg = (g + 1) * m
        # Device-side descriptors use the true row length as the stride, so
        # every row must be a whole number of 16 bytes (8 fp16 elements).
        kg, ng = cdiv(kk, 8) * 8, cdiv(n, 8) * 8
        a = torch.randn(mg, kg, device="cuda", generator=gen).to(torch.float16)
        b = torch.randn(ng, kg, device="cuda", generator=gen).to(torch.float16)
        c = torch.full((mg, ng), float("nan"), device="cuda", dtype=torch.float16)
        sizes += [mg, ng, kg]
        a_list.append(a), b_list.append(b), c_list.append(c)
        refs.append(a.float() @ b.float().T)
    ptrs = lambda ts: torch.tensor([t.data_ptr() for t in ts], device="cuda", dtype=torch.int64)
    a_p, b_p, c_p = ptrs(a_list), ptrs(b_list), ptrs(c_list)
    size_t = torch.tensor(sizes, device="cuda", dtype=torch.int32)
    k.kernel(a_p, b_p, c_p, size_t, groups, grid=(132,))
    synchronize()
    out = torch.cat([c.flatten() for c in c_list])
    ref = torch.cat([r.flatten() for r in refs])
    return out, ref, True, ("f16", "f16")


def run_pointer_gemm(k, m, n, kk, gen, tile=(128, 128), a_column_major=False):
    """C = A B with A (M x K) and B (K x N) row-major, addressed by tensors of
    pointers (examples/kernels.py, matmul_pointer_kernel): arguments are the
    pointers, M, N, K and the row strides Triton did not specialize to 1; rows
    padded to 16 bytes, C NaN-poisoned with a padding chunk that must stay
    untouched; one program per BM x BN tile (the pointer kernel's metadata
    has no descriptor boxes to read the tile from: the workload names it).
    With `a_column_major`, A is stored as A^T (K x M) row-major."""
    dt = torch.float16

    # Row strides a multiple of 16 elements, as the kernel's specialization
    # (tt.divisibility = 16 on the strides) promises.
    def rand16(rows, cols):
        storage = torch.empty(rows, cdiv(cols, 16) * 16, dtype=dt, device="cuda")
        view = storage[:, :cols]
        view.copy_(torch.randn(rows, cols, device="cuda", generator=gen).to(dt))
        return view, view.float()

    a_store, a32 = rand16(kk, m) if a_column_major else rand16(m, kk)
    b, b32 = rand16(kk, n)
    c_storage = torch.full((m, cdiv(n, 16) * 16 + 16), float("nan"), dtype=dt, device="cuda")
    c, cst = c_storage[:, :n], c_storage
    a_ref = a32.T if a_column_major else a32
    args = [a_store, b, c, m, n, kk, a_store.stride(0), b.stride(0), c.stride(0)]
    k.kernel(*args, grid=(cdiv(m, tile[0]) * cdiv(n, tile[1]),))
    synchronize()
    return c, a_ref @ b32, untouched(cst, c), ("f16", "f16")


def run_scale_silu(k, m, n, kk, gen):
    """C = SiLU((A B^T) * scale[:, None]) (examples/kernels.py,
    matmul_scale_silu_kernel): the scale by pointer, fp32; one program per
    tile in the grouped order."""
    a_dt, c_dt = DTYPES[k.dtype(0)], DTYPES[k.dtype(2)]
    bm, bn = k.box(0)[0], k.box(1)[0]
    a, a32 = rand(m, kk, a_dt, gen)
    b, b32 = rand(n, kk, a_dt, gen)
    scale = torch.rand(m, device="cuda", generator=gen) + 0.5
    c, cst = nan_poisoned_out(m, n, c_dt)
    args = desc_args(a) + desc_args(b) + desc_args(c) + [scale, m, n, kk]
    k.kernel(*args, grid=(cdiv(m, bm) * cdiv(n, bn),))
    synchronize()
    ref = a32 @ b32.T * scale[:, None]
    ref = ref * torch.sigmoid(ref)
    return c, ref, untouched(cst, c), (k.dtype(0), k.dtype(2))


def run_axpby(k, m, n, kk, gen):
    """D = alpha (A B^T) + beta C (examples/kernels.py, matmul_axpby_kernel):
    the tile of C loaded by descriptor in the epilogue; one program per tile
    in the grouped order. C is random, D NaN-poisoned."""
    dt, d_dt = DTYPES[k.dtype(0)], DTYPES[k.dtype(3)]
    bm, bn = k.box(0)[0], k.box(1)[0]
    a, a32 = rand(m, kk, dt, gen)
    b, b32 = rand(n, kk, dt, gen)
    c, c32 = rand(m, n, DTYPES[k.dtype(2)], gen)
    d, dst = nan_poisoned_out(m, n, d_dt)
    alpha, beta = 0.75, -1.25
    args = desc_args(a) + desc_args(b) + desc_args(c) + desc_args(d) + [alpha, beta, m, n, kk]
    k.kernel(*args, grid=(cdiv(m, bm) * cdiv(n, bn),))
    synchronize()
    return d, alpha * (a32 @ b32.T) + beta * c32, untouched(dst, d), (k.dtype(0), k.dtype(3))


RUNNERS = {
    "gemm": run_gemm,
    "gemm_kn": run_gemm_kn,
    "persistent": run_persistent,
    "batched": run_batched,
    "bias_relu": run_bias_relu,
    "grouped": run_grouped,
    "scale_silu": run_scale_silu,
    "axpby": run_axpby,
    "pointer_gemm_128x256": lambda k, m, n, kk, gen: run_pointer_gemm(k, m, n, kk, gen, (128, 256)),
    "pointer_gemm_128x128": lambda k, m, n, kk, gen: run_pointer_gemm(k, m, n, kk, gen, (128, 128)),
    "pointer_gemm_128x32": lambda k, m, n, kk, gen: run_pointer_gemm(k, m, n, kk, gen, (128, 32)),
    "pointer_gemm_128x64": lambda k, m, n, kk, gen: run_pointer_gemm(k, m, n, kk, gen, (128, 64)),
    "pointer_gemm_64x128": lambda k, m, n, kk, gen: run_pointer_gemm(k, m, n, kk, gen, (64, 128)),
    "pointer_gemm_a_colmajor_128x128": lambda k, m, n, kk, gen: run_pointer_gemm(
        k, m, n, kk, gen, (128, 128), a_column_major=True),
}


def rel_error(out, ref):
    out = out.float()
    if torch.isnan(out).any():
        return math.inf
    return (torch.linalg.norm(out - ref) / max(torch.linalg.norm(ref).item(), 1e-30)).item()
