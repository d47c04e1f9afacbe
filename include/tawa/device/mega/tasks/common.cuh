// Helpers of the decode task functions (docs/MEGAKERNEL.md, "Task
// functions"): bf16 conversions that round like PyTorch (to nearest even),
// loads that keep read-only weights out of L1, CTA-wide reductions, and the
// dynamic shared memory every task shares (one task runs on a CTA at a time).
//
// Activations are read with plain loads where the task waited for its
// event: they were written by other CTAs during the step, and the runtime's
// acquire (at GPU scope, which drops stale L1 lines) plus a CTA barrier
// orders those writes before the task. A task that polls its inputs
// (poll.cuh; a non-null PollWatch) reads every bf16 activation with
// coherent loads until it holds no poison instead. Weights never change
// during the kernel, so they may use the non-coherent path.
#pragma once
#include "tawa/Mega/TaskParams.h"
#include "tawa/device/mbarrier.cuh"
#include "tawa/device/mega/config.cuh"
#include "tawa/device/mega/poll.cuh"

#include <cuda_bf16.h>

#include <cstdint>

/// Phase k of a task reached (thread 0 after a CTA barrier, or the thread's
/// own progress): compiled to nothing unless a latency tool defines it
/// (gpu/tools/mega_task_latency.cu), or a traced build times one phase of
/// attention (TAWA_MEGA_TRACE_ATTN_PHASE, sync.cuh).
#if TAWA_MEGA_TRACE_ATTN_PHASE && !defined(TAWA_MEGA_TASK_STAMP)
#define TAWA_MEGA_TASK_STAMP(k) ::tawa::device::mega::markTaskPhase(k)
#endif
#ifndef TAWA_MEGA_TASK_STAMP
#define TAWA_MEGA_TASK_STAMP(k)
#endif
/// Step k of one ring stage of the linear's weight stream (0: loop top, 1:
/// its slot landed, 2: its products done, 3: its slot refilled): nothing
/// unless a latency tool defines it.
#ifndef TAWA_MEGA_STREAM_MARK
#define TAWA_MEGA_STREAM_MARK(k)
#endif

namespace tawa::device::mega {

using bf16 = __nv_bfloat16;

/// A task runs on all threads of its worker CTA.
constexpr int kTaskThreads = kMegaThreads;
constexpr int kTaskWarps = kMegaWarps;

__device__ __forceinline__ float toFloat(bf16 v) { return __bfloat162float(v); }
__device__ __forceinline__ bf16 toBf16(float v) {
  return __float2bfloat16_rn(v);
}
/// `v` rounded to bf16 and back: what PyTorch holds after a bf16 op.
__device__ __forceinline__ float roundBf16(float v) {
  return toFloat(toBf16(v));
}

/// The task's shared memory: the kernel's dynamic allocation.
__device__ __forceinline__ unsigned char *taskSmem() {
  extern __shared__ __align__(128) unsigned char megaDynamicSmem[];
  return megaDynamicSmem;
}

/// Eight bf16 of a read-only weight row, 16 bytes, bypassing L1 (each weight
/// element is read once per step).
__device__ __forceinline__ uint4 loadWeight16(const bf16 *p) {
  uint4 v;
  asm("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];"
      : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
      : "l"(p));
  return v;
}

/// Asks L2 for the line holding `p` and does not wait for it: a later load
/// of it then pays an L2 round trip, not a memory one.
__device__ __forceinline__ void prefetchL2(const void *p) {
  asm volatile("prefetch.global.L2 [%0];" ::"l"(p));
}

/// The eight bf16 of a 16-byte vector as floats.
__device__ __forceinline__ void unpack8(const uint4 &v, float (&f)[8]) {
  const uint32_t w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    f[2 * i] = __uint_as_float(w[i] << 16);
    f[2 * i + 1] = __uint_as_float(w[i] & 0xFFFF0000u);
  }
}

__device__ __forceinline__ float warpSum(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1)
    v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

__device__ __forceinline__ float warpMax(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1)
    v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

__device__ __forceinline__ uint64_t warpMax(uint64_t v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    const uint64_t w = __shfl_xor_sync(0xffffffffu, v, o);
    v = w > v ? w : v;
  }
  return v;
}

/// Sum over the CTA; every thread gets it. `scratch` holds kTaskWarps
/// floats; the call begins and ends with a barrier, so it may be reused.
__device__ __forceinline__ float blockSum(float v, float *scratch) {
  v = warpSum(v);
  __syncthreads();
  if (threadIdx.x % 32 == 0)
    scratch[threadIdx.x / 32] = v;
  __syncthreads();
  float s = 0.f;
#pragma unroll
  for (int w = 0; w < kTaskWarps; ++w)
    s += scratch[w];
  __syncthreads();
  return s;
}

/// Slots of each warp's weight ring in the linear task.
#ifndef TAWA_MEGA_LINEAR_SLOTS
#define TAWA_MEGA_LINEAR_SLOTS 2
#endif
constexpr int kLinearSlots = TAWA_MEGA_LINEAR_SLOTS;

/// The tasks' mbarriers, initialized once per worker (initTaskBarriers) and
/// reused by every task with their phases kept here: a barrier that is
/// invalidated and initialized again between tasks is correct, but
/// compute-sanitizer's racecheck tracks a bulk copy's completion through
/// its barrier and loses it there, reporting the next task's writes of the
/// same bytes as races. They sit at the top of the task shared memory,
/// above the linear's weight ring.
struct TaskBarriers {
  MBarrier ring[kTaskWarps * kLinearSlots]; ///< linear: warp w, slot s
  MBarrier input;                           ///< linear: staged input rows
  MBarrier kv[4]; ///< attention: keys, values of block buffer 0, then 1
  uint32_t ringPhase[kTaskWarps]; ///< bit s: parity of warp w's next wait
  uint32_t inputPhase, kvPhase;   ///< bit 0 (input), bit b: buffer b (kv)
};
static_assert(sizeof(TaskBarriers) <=
                  size_t(tawa::mega::kLinearRingBarrierBytes),
              "the task barriers fit their reserve");

/// mbarrierWait; with `timed` (thread 0 of a traced task, TaskStamps) the
/// wait's time is added to weightWaitNs: a linear's waits for its weights,
/// attention's for its cache blocks.
__device__ __forceinline__ void
mbarrierWaitTraced(MBarrier *bar, uint32_t parity, bool timed) {
  const uint64_t from = timed ? globalTimerNs() : 0;
  mbarrierWait(bar, parity);
  if (timed)
    taskStamps().weightWaitNs += globalTimerNs() - from;
}

__device__ __forceinline__ TaskBarriers &taskBarriers() {
  return *reinterpret_cast<TaskBarriers *>(taskSmem() +
                                           tawa::mega::kTaskSmemBytes -
                                           tawa::mega::kLinearRingBarrierBytes);
}

/// Thread 0 of a worker, once before its first task (then a CTA barrier).
__device__ inline void initTaskBarriers() {
  TaskBarriers &tb = taskBarriers();
  for (int b = 0; b < kTaskWarps * kLinearSlots; ++b)
    mbarrierInit(&tb.ring[b], 1);
  mbarrierInit(&tb.input, 1);
  for (int b = 0; b < 4; ++b)
    mbarrierInit(&tb.kv[b], 1);
  for (int w = 0; w < kTaskWarps; ++w)
    tb.ringPhase[w] = 0;
  tb.inputPhase = tb.kvPhase = 0;
  fenceMBarrierInit();
}

template <typename T>
__device__ __forceinline__ T *bufferAt(void *const *buffers, uint32_t id) {
  return static_cast<T *>(buffers[id]);
}

} // namespace tawa::device::mega
