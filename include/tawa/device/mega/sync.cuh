// Memory-ordering primitives of the mega-kernel runtime (docs/MEGAKERNEL.md,
// "Runtime protocol"): every cross-CTA handshake is a release by the writer
// and an acquire by the reader, at GPU scope, on a 32-bit word in global
// memory. One wrapper per PTX instruction so the protocol reads in the code.
#pragma once
#include "tawa/device/mega/config.cuh"

#include <cstdint>

namespace tawa::device::mega {

__device__ __forceinline__ uint32_t loadAcquire(const uint32_t *p) {
  uint32_t v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];"
               : "=r"(v)
               : "l"(p)
               : "memory");
  return v;
}

/// Coherent at GPU scope (never a stale L1 line) but orders nothing.
__device__ __forceinline__ uint32_t loadRelaxed(const uint32_t *p) {
  uint32_t v;
  asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];"
               : "=r"(v)
               : "l"(p)
               : "memory");
  return v;
}

/// The same, 16 bytes (single-copy atomic per 32-bit word): polled inputs.
__device__ __forceinline__ uint4 loadRelaxed(const uint4 *p) {
  uint4 v;
  asm volatile("ld.relaxed.gpu.global.v4.u32 {%0,%1,%2,%3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p)
               : "memory");
  return v;
}

/// The same, one 16-bit element (a polled bf16).
__device__ __forceinline__ uint16_t loadRelaxed(const uint16_t *p) {
  uint16_t v;
  asm volatile("ld.relaxed.gpu.global.u16 %0, [%1];"
               : "=h"(v)
               : "l"(p)
               : "memory");
  return v;
}

__device__ __forceinline__ void storeRelaxed(uint32_t *p, uint32_t v) {
  asm volatile("st.relaxed.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(v)
               : "memory");
}

__device__ __forceinline__ void storeRelease(uint32_t *p, uint32_t v) {
  asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(v)
               : "memory");
}

/// An arrival: releases the caller's earlier writes (and, through the CTA
/// barrier before it, its CTA's) and acquires every earlier arrival's, so the
/// last arriver may hand the event on to a scheduler.
__device__ __forceinline__ uint32_t fetchAddAcqRel(uint32_t *p, uint32_t v) {
  uint32_t old;
  asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], %2;"
               : "=r"(old)
               : "l"(p), "r"(v)
               : "memory");
  return old;
}

__device__ __forceinline__ uint32_t fetchAddRelaxed(uint32_t *p, uint32_t v) {
  uint32_t old;
  asm volatile("atom.relaxed.gpu.global.add.u32 %0, [%1], %2;"
               : "=r"(old)
               : "l"(p), "r"(v)
               : "memory");
  return old;
}

/// Adds `v` at `p`, releasing the caller's earlier writes, without an
/// answer: the thread does not wait for the add to reach memory.
__device__ __forceinline__ void reduceAddRelease(uint32_t *p, uint32_t v) {
  asm volatile("red.release.gpu.global.add.u32 [%0], %1;" ::"l"(p), "r"(v)
               : "memory");
}

/// Adds `v` at `p` and orders nothing: a count that no reader acquires
/// through (kTaskRelaxedArrival), so the caller does not wait for its
/// earlier writes to be performed.
__device__ __forceinline__ void reduceAddRelaxed(uint32_t *p, uint32_t v) {
  asm volatile("red.relaxed.gpu.global.add.u32 [%0], %1;" ::"l"(p), "r"(v)
               : "memory");
}

/// Publishes `desired` where `expected` is, releasing earlier writes; returns
/// the value found.
__device__ __forceinline__ uint32_t compareSwapRelease(uint32_t *p,
                                                       uint32_t expected,
                                                       uint32_t desired) {
  uint32_t old;
  asm volatile("atom.release.gpu.global.cas.b32 %0, [%1], %2, %3;"
               : "=r"(old)
               : "l"(p), "r"(expected), "r"(desired)
               : "memory");
  return old;
}

/// Nanoseconds of the GPU-wide timer: comparable across SMs (trace stamps).
__device__ __forceinline__ uint64_t globalTimerNs() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

/// The running task's trace stamps (TaskRecord): the worker arms them before
/// a task when it traces (armed 1, the rest 0; else armed 0) and records
/// them after it. A task stamps when its inputs were all in (ready), when
/// its results were computed, before its epilogue or merge (computed), and
/// adds the time its warp 0 waited for weights (weightWaitNs): a trace then
/// splits the time after a hop into waiting for the inputs, for the
/// weights, computing and storing.
struct TaskStamps {
  uint32_t armed;
  uint64_t ready, computed, weightWaitNs;
};
__device__ __forceinline__ TaskStamps &taskStamps() {
  __shared__ TaskStamps stamps;
  return stamps;
}
/// Thread 0, the first time after the worker armed the stamps: now, into
/// `field`. Only in builds with TAWA_MEGA_TRACE_PHASES (config.cuh).
__device__ __forceinline__ void markTaskStamp(uint64_t TaskStamps::*field) {
#if TAWA_MEGA_TRACE_PHASES
  TaskStamps &t = taskStamps();
  if (threadIdx.x == 0 && t.armed && t.*field == 0)
    t.*field = globalTimerNs();
#endif
}
/// TAWA_MEGA_TRACE_ATTN_PHASE: thread 0 at phase mark k adds the time since
/// its previous mark to weightWaitNs when k is the traced phase.
__device__ __forceinline__ void markTaskPhase(int k) {
#if TAWA_MEGA_TRACE_PHASES && TAWA_MEGA_TRACE_ATTN_PHASE
  __shared__ uint64_t last;
  TaskStamps &t = taskStamps();
  if (threadIdx.x == 0 && t.armed) {
    const uint64_t now = globalTimerNs();
    if (k == TAWA_MEGA_TRACE_ATTN_PHASE && last != 0)
      t.weightWaitNs += now - last;
    last = now;
  }
#endif
}
__device__ __forceinline__ void markTaskReady() {
  markTaskStamp(&TaskStamps::ready);
}
__device__ __forceinline__ void markTaskComputed() {
  markTaskStamp(&TaskStamps::computed);
}

__device__ __forceinline__ uint32_t smId() {
  uint32_t id;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
  return id;
}

} // namespace tawa::device::mega
