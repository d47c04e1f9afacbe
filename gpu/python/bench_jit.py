# tawa.jit vs triton.jit on the same kernel source, on the H100 (not a test).
import time, torch, triton, triton.language as tl, tawa
from triton.tools.tensor_descriptor import TensorDescriptor as TD
def body(a_desc, b_desc, c_desc, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0); pid_n = tl.program_id(1)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        a = a_desc.load([pid_m * BM, k * BK]); b = b_desc.load([pid_n * BN, k * BK])
        acc = tl.dot(a, b.T, acc)
    c_desc.store([pid_m * BM, pid_n * BN], acc.to(c_desc.dtype))
M = N = 8192; K = 4096
a = torch.randn(M, K, device="cuda").half(); b = torch.randn(N, K, device="cuda").half()
c = torch.empty(M, N, device="cuda").half(); ref = a.float() @ b.float().T
args = (TD.from_tensor(a, [128, 64]), TD.from_tensor(b, [256, 64]), TD.from_tensor(c, [128, 256]), M, N, K)
g = (M // 128, N // 256)
for name, kern in [("tawa", tawa.jit(body)), ("triton", triton.jit(body))]:
    run = lambda: kern[g](*args, BM=128, BN=256, BK=64)
    t = time.time(); run(); torch.cuda.synchronize(); first = time.time() - t
    t = time.time(); run(); torch.cuda.synchronize(); second = time.time() - t
    ms = triton.testing.do_bench(run)
    err = ((c.float() - ref).norm() / ref.norm()).item()
    print(f"{name}: first call {first:.2f} s, second {second * 1e3:.1f} ms, do_bench {ms:.3f} ms "
          f"= {2 * M * N * K / ms / 1e9:.0f} TFLOP/s, rel err {err:.1e}", flush=True)
