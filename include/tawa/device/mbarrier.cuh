// mbarrier wrappers (shared::cta). Phases and parity follow DESIGN.md §2.2:
// a fresh barrier is in phase 0; waiting on parity p returns once the phase
// with parity p has completed.
#pragma once
#include "tawa/device/sync.cuh"
#include "tawa/device/types.cuh"

namespace tawa::device {

/// 8-byte mbarrier object in shared memory.
struct alignas(8) MBarrier {
  uint64_t raw;
};

/// Initializes with the number of arrivals that complete a phase. One thread
/// initializes; follow with fenceMBarrierInit() and a CTA barrier.
__device__ __forceinline__ void mbarrierInit(MBarrier *bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smemAddr(bar)),
               "r"(count)
               : "memory");
}

/// Makes the initializations visible to the async proxy (TMA complete_tx)
/// and to other threads.
__device__ __forceinline__ void fenceMBarrierInit() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}

/// Plain arrival (release semantics at CTA scope: the caller's prior shared
/// memory writes are visible to whoever observes the phase completing).
__device__ __forceinline__ void mbarrierArrive(MBarrier *bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(smemAddr(bar))
               : "memory");
}

/// Arrival that also announces `bytes` of transactions (TMA loads) which
/// must complete before the phase can.
__device__ __forceinline__ void mbarrierArriveExpectTx(MBarrier *bar,
                                                       uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(
                   smemAddr(bar)),
               "r"(bytes)
               : "memory");
}

/// One probe: true when the phase with parity `parity` has completed. The
/// hardware may suspend the thread for a while before answering false.
__device__ __forceinline__ bool mbarrierTryWait(MBarrier *bar,
                                                uint32_t parity) {
  uint32_t done;
  asm volatile("{\n.reg .pred p;\n"
               "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
               "selp.u32 %0, 1, 0, p;\n}\n"
               : "=r"(done)
               : "r"(smemAddr(bar)), "r"(parity)
               : "memory");
  return done != 0;
}

/// Ends the barrier's life, so its shared memory may hold other data.
__device__ __forceinline__ void mbarrierInval(MBarrier *bar) {
  asm volatile("mbarrier.inval.shared::cta.b64 [%0];\n" ::"r"(smemAddr(bar))
               : "memory");
}

/// Blocks until the phase with parity `parity` has completed (acquire).
__device__ __forceinline__ void mbarrierWait(MBarrier *bar, uint32_t parity) {
  while (!mbarrierTryWait(bar, parity)) {
  }
}

/// Slot/phase counter of a D-slot ring. Iteration k uses slot k mod D; the
/// phase bit flips each time the slot index wraps to 0.
template <int D> struct RingState {
  uint32_t slot = 0;
  uint32_t phase = 0;
  __device__ __forceinline__ void advance() {
    if (++slot == D) {
      slot = 0;
      phase ^= 1;
    }
  }
};

} // namespace tawa::device
