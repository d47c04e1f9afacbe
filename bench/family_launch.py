"""Launches of the batched and grouped GEMM samples at the shapes of
gemm_bench.py --family, tawa's compiled kernel and Triton compiling the same
source, shared by profile_family.py and sustained_family.py. Each builder
returns (tawa, triton, flops, buffers): two argument-less callables, the flop
count of one call, and the tensors the launches read and write (the caller
keeps them alive: the launches hold raw device addresses)."""
import torch
from triton.tools.tensor_descriptor import TensorDescriptor

import workloads


def batched(kern, tk, warps, stages):
    """8 batches of 2048 x 2048 x 4096, 128 x 128 x 64 tiles."""
    bt, m, n, k = 8, 2048, 2048, 4096
    a = torch.randn(bt * m, k, device="cuda").half()
    b = torch.randn(bt * n, k, device="cuda").half()
    c = torch.empty(bt * m, n, device="cuda", dtype=torch.float16)
    grid = (m // 128, n // 128, bt)
    tawa = kern.kernel.prepare(*workloads.desc_args(a), *workloads.desc_args(b),
                               *workloads.desc_args(c), m, n, k, grid=grid)
    ad, bd = TensorDescriptor.from_tensor(a, [128, 64]), TensorDescriptor.from_tensor(b, [128, 64])
    cd = TensorDescriptor.from_tensor(c, [128, 128])
    triton_fn = lambda: tk.gemm_batched[grid](ad, bd, cd, m, n, k, 128, 128, 64,
                                              num_warps=warps, num_stages=stages)
    return tawa, triton_fn, 2.0 * bt * m * n * k, (a, b, c)


def grouped(kern, tk, warps, stages):
    """8 groups, m_g = 1024, 2048, 3072, 4096 (twice), n = k = 4096."""
    groups, n, k = 8, 4096, 4096
    ms = [1024 * (g % 4 + 1) for g in range(groups)]
    As = [torch.randn(mg, k, device="cuda").half() for mg in ms]
    Bs = [torch.randn(n, k, device="cuda").half() for _ in ms]
    Cs = [torch.empty(mg, n, device="cuda", dtype=torch.float16) for mg in ms]
    ptrs = lambda ts: torch.tensor([t.data_ptr() for t in ts], device="cuda", dtype=torch.int64)
    a_p, b_p, c_p = ptrs(As), ptrs(Bs), ptrs(Cs)
    sizes = torch.tensor([[mg, n, k] for mg in ms], device="cuda", dtype=torch.int32).flatten()
    tawa = kern.kernel.prepare(a_p, b_p, c_p, sizes, groups, grid=(132,))
    triton_fn = lambda: tk.gemm_grouped[(132,)](a_p, b_p, c_p, sizes, groups, 128, 128, 64, 132,
                                                num_warps=warps, num_stages=stages)
    return tawa, triton_fn, 2.0 * n * k * sum(ms), (As, Bs, Cs, a_p, b_p, c_p, sizes)
