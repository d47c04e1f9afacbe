// Warp-group level synchronization and register reallocation (sm_90a).
#pragma once
#include "tawa/device/types.cuh"

namespace tawa::device {

constexpr int kWarpGroupThreads = 128;
/// Named barriers of generated kernels: 0 is __syncthreads, 1 + g consumer
/// group g's epilogue; kIssueTurnBarrier + g is the turn of cooperative
/// group g to issue its products (warp-group ping-pong: two groups take
/// turns, each waiting on its own barrier for the other's arrival).
constexpr int kIssueTurnBarrier = 8;

/// Index of the calling thread's warp group, uniform across the warp group
/// (the shuffle keeps the compiler from treating it as divergent).
__device__ __forceinline__ int warpGroupIndex() {
  return __shfl_sync(0xffffffffu, threadIdx.x / kWarpGroupThreads, 0);
}

/// Warp index inside the warp group (0..3), warp-uniform.
__device__ __forceinline__ int warpInGroup() {
  return __shfl_sync(0xffffffffu, (threadIdx.x / 32) % 4, 0);
}

/// Gives registers back to the pool. Every warp of the warp group must
/// execute it; the kernel needs __launch_bounds__(threads, 1) or ptxas
/// ignores it (warning C7508).
template <int Regs> __device__ __forceinline__ void setmaxnregDec() {
  static_assert(Regs % 8 == 0 && Regs >= 24 && Regs <= 256, "bad count");
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(Regs));
}

/// Takes registers from the pool (blocks until other warp groups released
/// enough of them).
template <int Regs> __device__ __forceinline__ void setmaxnregInc() {
  static_assert(Regs % 8 == 0 && Regs >= 24 && Regs <= 256, "bad count");
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(Regs));
}

/// Named barrier: waits until `count` threads (a multiple of 32) arrived at
/// barrier `id`. Id 0 is __syncthreads(); use 1..15.
__device__ __forceinline__ void namedBarrierSync(int id, int count) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(count) : "memory");
}

/// Arrives at named barrier `id` without waiting (producer side of a
/// producer/consumer handshake with namedBarrierSync).
__device__ __forceinline__ void namedBarrierArrive(int id, int count) {
  asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(count) : "memory");
}

/// True in exactly one lane of the (fully active) warp: elect.sync picks it in
/// hardware instead of comparing lane ids, which also tells ptxas that the
/// branch is taken by a single thread.
__device__ __forceinline__ bool electOne() {
  uint32_t pred = 0;
  asm volatile("{\n.reg .b32 r;\n.reg .pred p;\n"
               "elect.sync r|p, 0xffffffff;\n"
               "selp.u32 %0, 1, 0, p;\n}\n"
               : "=r"(pred));
  return pred != 0;
}

/// Orders this thread's ordinary (generic proxy) shared-memory writes before
/// later async-proxy reads of them (TMA store, wgmma). Every writing thread
/// executes it, then a barrier, then the async operation is issued.
__device__ __forceinline__ void fenceProxyAsyncShared() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

/// Orders global memory this thread observed through the generic proxy
/// (writes of other CTAs, made visible by an acquire and a barrier) before
/// its later async-proxy reads of it (a bulk copy of an activation).
__device__ __forceinline__ void fenceProxyAsyncGlobal() {
  asm volatile("fence.proxy.async.global;\n" ::: "memory");
}

/// Shared-memory address (32-bit, shared window) of a generic pointer.
__device__ __forceinline__ uint32_t smemAddr(const void *p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

} // namespace tawa::device
