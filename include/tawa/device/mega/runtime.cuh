// The in-kernel runtime of the mega-kernel (MPK §5, docs/MEGAKERNEL.md,
// "Runtime protocol"): one persistent kernel, one CTA per SM. The first
// `numWorkers` CTAs are workers; each of the rest holds kMegaWarps scheduler
// warps.
//
// Worker (thread 0 decides, the whole CTA runs the task):
//   next task = the head of its JIT ring if one was dispatched, else the head
//   of its AOT queue once that task's wait event has fired (acquire load of
//   the event's arrivals >= trigger count); after the task, a CTA barrier and
//   one acq_rel arrival at the trigger event. The arrival that completes an
//   event that launches JIT tasks pushes the event to scheduler (event mod
//   schedulers). The worker leaves when the end event has fired.
// Scheduler warp: pops fired events from its ring (the start event, if it
//   launches JIT tasks, is its own at launch) and pushes the range's JIT
//   tasks to worker rings round-robin, 32 lanes at a time.
// Every wait goes through boundedWait (watchdog.cuh).
#pragma once
#include "tawa/Mega/DeviceLayout.h"
#include "tawa/device/mega/config.cuh"
#include "tawa/device/mega/queue.cuh"
#include "tawa/device/mega/sync.cuh"
#include "tawa/device/mega/watchdog.cuh"

#include <cstdint>
#include <type_traits>

namespace tawa::device::mega {

using tawa::mega::EventDesc;
using tawa::mega::kEmptyTaskKind;
using tawa::mega::kEventDispatchesJit;
using tawa::mega::kNoId;
using tawa::mega::kTaskJit;
using tawa::mega::OpDesc;
using tawa::mega::TablesHeader;
using tawa::mega::TaskDesc;

/// The packed tables (DeviceLayout.h) as device pointers.
struct TablesView {
  const TaskDesc *tasks;
  const EventDesc *events;
  const OpDesc *ops;
  const uint32_t *aotOffsets;
  const uint32_t *aotTasks;
  const uint32_t *producerOffsets;
  const uint32_t *producers;
  uint32_t numTasks;
  uint32_t numEvents;
  uint32_t numWorkers;
  uint32_t startEvent;
  uint32_t endEvent;
  uint32_t numJitTasks; ///< 0: no worker's JIT ring ever receives a task
};

/// `blob` is the device copy of the blob whose header is `h`.
inline TablesView viewTables(const void *blob, const TablesHeader &h) {
  const char *base = static_cast<const char *>(blob);
  TablesView v;
  v.tasks = reinterpret_cast<const TaskDesc *>(base + h.tasksOffset);
  v.events = reinterpret_cast<const EventDesc *>(base + h.eventsOffset);
  v.ops = reinterpret_cast<const OpDesc *>(base + h.opsOffset);
  v.aotOffsets = reinterpret_cast<const uint32_t *>(base + h.aotOffsetsOffset);
  v.aotTasks = reinterpret_cast<const uint32_t *>(base + h.aotTasksOffset);
  v.producerOffsets =
      reinterpret_cast<const uint32_t *>(base + h.producerOffsetsOffset);
  v.producers = reinterpret_cast<const uint32_t *>(base + h.producersOffset);
  v.numTasks = h.numTasks;
  v.numEvents = h.numEvents;
  v.numWorkers = h.numWorkers;
  v.startEvent = h.startEvent;
  v.endEvent = h.endEvent;
  v.numJitTasks = h.numJitTasks;
  return v;
}

/// One task's trace entry (optional): when and where it ran, and how often.
struct TaskRecord {
  uint64_t startNs;
  uint64_t endNs;
  uint32_t worker;
  uint32_t runs;
};

/// The mutable state of one step, in global memory, zeroed before each run.
struct RuntimeState {
  uint32_t *arrivals;       ///< [numEvents]
  uint32_t *workerTails;    ///< [numWorkers]
  uint32_t *workerSlots;    ///< [numWorkers * ringCapacity]
  uint32_t *schedulerTails; ///< [numSchedulers]
  uint32_t *schedulerSlots; ///< [numSchedulers * ringCapacity]
  uint32_t ringCapacity;    ///< power of two
  uint32_t *overArrivals;   ///< arrivals past an event's trigger count
  uint32_t *dispatches;     ///< [numEvents] JIT dispatches, or null
  TaskRecord *trace;        ///< [numTasks], or null: no trace
  uint32_t *workerSms;      ///< [gridDim] %smid of each CTA, or null
  /// [0] globaltimer when the first CTA started, [1] when the last left.
  unsigned long long *stepNs;
  WatchdogState watchdog;
};

__device__ __forceinline__ IdRing workerRing(const RuntimeState &s,
                                             uint32_t w) {
  return {s.workerTails + w, s.workerSlots + size_t(w) * s.ringCapacity,
          s.ringCapacity - 1};
}

__device__ __forceinline__ IdRing schedulerRing(const RuntimeState &s,
                                                uint32_t i) {
  return {s.schedulerTails + i, s.schedulerSlots + size_t(i) * s.ringCapacity,
          s.ringCapacity - 1};
}

__device__ __forceinline__ bool eventFired(const TablesView &t,
                                           const RuntimeState &s, uint32_t e) {
  return loadAcquire(&s.arrivals[e]) >= t.events[e].triggerCount;
}

__device__ __forceinline__ WaitReport
describeEventWait(const TablesView &t, const RuntimeState &s, WaiterRole role,
                  uint32_t unit, uint32_t task, uint32_t e) {
  WaitReport r{};
  r.role = static_cast<uint32_t>(role);
  r.unit = unit;
  r.task = task;
  r.event = e;
  r.arrivals = loadRelaxed(&s.arrivals[e]);
  r.triggerCount = t.events[e].triggerCount;
  return r;
}

/// Thread 0 of a worker: one arrival at `e` (after the CTA barrier that
/// follows the task); hands a completed JIT event to its scheduler. False
/// when the watchdog stopped the hand-over.
__device__ inline bool arrive(const TablesView &t, const RuntimeState &s,
                              uint32_t numSchedulers, uint32_t worker,
                              uint32_t task, uint32_t e) {
  // The event's descriptor is read before the arrival: a load after the
  // acq_rel atomic would wait for it (one more L2 round trip before the
  // worker moves on).
  const EventDesc ev = t.events[e];
  uint32_t old = fetchAddAcqRel(&s.arrivals[e], 1);
  if (old + 1 > ev.triggerCount) {
    fetchAddRelaxed(s.overArrivals, 1);
    return true;
  }
  if (old + 1 < ev.triggerCount || !(ev.flags & kEventDispatchesJit))
    return true;
  return ringPush(schedulerRing(s, e % numSchedulers), e, s.watchdog, [&] {
    return describeEventWait(t, s, WaiterRole::Worker, worker, task, e);
  });
}

/// Thread 0 of worker `w`: the next task to run, kNoId to leave (the end
/// event fired, or the watchdog stopped the kernel).
struct WorkerQueues {
  uint32_t aotPos;
  uint32_t aotEnd;
  uint32_t jitHead;
  IdRing jit;

  __device__ uint32_t next(const TablesView &t, const RuntimeState &s,
                           uint32_t w) {
    uint32_t task = kNoId;
    uint32_t waitEvent = t.endEvent;
    uint32_t candidate = kNoId;
    if (aotPos < aotEnd) {
      candidate = t.aotTasks[aotPos];
      waitEvent = t.tasks[candidate].waitEvent;
    }
    // A poll is one acquire load of the event's count (and one of the JIT
    // ring's head slot when the plan has JIT tasks): each load after an
    // acquire waits for it, so every load in the loop is a serial L2 round
    // trip, microseconds while the weights stream. The trigger count is read
    // once.
    const uint32_t need = t.events[waitEvent].triggerCount;
    const bool pollJit = t.numJitTasks != 0;
    bool leave = false;
    auto poll = [&] {
      uint32_t id;
      if (pollJit && ringTryPop(jit, jitHead, id)) {
        task = id;
        return true;
      }
      if (loadAcquire(&s.arrivals[waitEvent]) < need)
        return false;
      if (candidate != kNoId) {
        task = candidate;
        ++aotPos;
      } else {
        leave = true; // the end event fired: every task has completed
      }
      return true;
    };
    bool ok = boundedWait(s.watchdog, poll, [&] {
      return describeEventWait(t, s, WaiterRole::Worker, w, candidate,
                               waitEvent);
    });
    return ok && !leave ? task : kNoId;
  }
};

/// A task functor may have `bool prefetch(tables, task, id, worker)`: the
/// worker calls it, with the whole CTA, for its next AOT task before waiting
/// for that task's inputs (a linear starts loading its weights), and then
/// calls `fn(tables, task, id, worker, prefetched)`; such a functor also has
/// `initWorker()`, run once by the whole CTA before the first task. Functors
/// without them are called as `fn(tables, task, id, worker)`.
template <typename F, typename = void> struct TaskPrefetch {
  static constexpr bool kHas = false;
  __device__ static void initWorker(const F &) {}
  __device__ static bool prefetch(const F &, const TablesView &,
                                  const TaskDesc &, uint32_t, uint32_t) {
    return false;
  }
  __device__ static void run(const F &fn, const TablesView &t,
                             const TaskDesc &d, uint32_t task, uint32_t w,
                             bool) {
    fn(t, d, task, w);
  }
};
template <typename F>
struct TaskPrefetch<F, std::void_t<decltype(&F::prefetch)>> {
  static constexpr bool kHas = true;
  /// The whole CTA, once before the first task (then a CTA barrier).
  __device__ static void initWorker(const F &fn) { fn.initWorker(); }
  __device__ static bool prefetch(const F &fn, const TablesView &t,
                                  const TaskDesc &d, uint32_t task,
                                  uint32_t w) {
    return fn.prefetch(t, d, task, w);
  }
  __device__ static void run(const F &fn, const TablesView &t,
                             const TaskDesc &d, uint32_t task, uint32_t w,
                             bool prefetched) {
    fn(t, d, task, w, prefetched);
  }
};

template <typename TaskFn>
__device__ void workerLoop(const TablesView &t, const RuntimeState &s,
                           const TaskFn &fn, uint32_t numSchedulers,
                           uint32_t w) {
  using Prefetch = TaskPrefetch<TaskFn>;
  __shared__ uint32_t nextTask, nextAot;
  __shared__ uint64_t taskStart;
  WorkerQueues q{t.aotOffsets[w], t.aotOffsets[w + 1], 0, workerRing(s, w)};
  // The AOT task whose prefetch ran (kNoId: none pending). Every thread
  // keeps the same value.
  uint32_t prefetched = kNoId;
  TaskDesc prefetchedDesc{};
  Prefetch::initWorker(fn);
  __syncthreads();
  while (true) {
    if constexpr (Prefetch::kHas) {
      if (threadIdx.x == 0)
        nextAot = q.aotPos < q.aotEnd ? t.aotTasks[q.aotPos] : kNoId;
      __syncthreads();
      const uint32_t aot = nextAot;
#ifdef TAWA_MEGA_TRACE_FROM_PREFETCH
      // Measuring only: a task's recorded start is when the worker began
      // preparing it (before its prefetch), not when its wait ended.
      if (threadIdx.x == 0 && s.trace)
        taskStart = globalTimerNs();
#endif
      if (aot != kNoId && aot != prefetched) {
        const TaskDesc ad = t.tasks[aot];
        if (Prefetch::prefetch(fn, t, ad, aot, w)) {
          prefetched = aot;
          prefetchedDesc = ad;
        }
      }
    }
    if (threadIdx.x == 0) {
      nextTask = q.next(t, s, w);
#ifndef TAWA_MEGA_TRACE_FROM_PREFETCH
      taskStart = s.trace ? globalTimerNs() : 0;
#endif
    }
    __syncthreads();
    const uint32_t task = nextTask;
    if (task == kNoId)
      break;
    // The prefetched task's descriptor is in registers already.
    const TaskDesc d = task == prefetched ? prefetchedDesc : t.tasks[task];
    if (d.kind != kEmptyTaskKind)
      Prefetch::run(fn, t, d, task, w, task == prefetched);
    if (task == prefetched)
      prefetched = kNoId;
    // Every thread's writes of the task happen before thread 0's release.
    __syncthreads();
    if (threadIdx.x == 0) {
      if (s.trace) {
        TaskRecord &rec = s.trace[task];
        rec.startNs = taskStart;
        rec.endNs = globalTimerNs();
        rec.worker = w;
        fetchAddRelaxed(&rec.runs, 1);
      }
      arrive(t, s, numSchedulers, w, task, d.triggerEvent);
    }
  }
}

/// One scheduler warp: dispatches the JIT tasks of the events handed to it.
__device__ inline void schedulerLoop(const TablesView &t, const RuntimeState &s,
                                     uint32_t self, uint32_t numSchedulers) {
  const uint32_t lane = threadIdx.x % 32;
  const uint32_t laneMaskBelow = (1u << lane) - 1;
  IdRing events = schedulerRing(s, self);
  uint32_t head = 0;
  // Staggered so that schedulers start on different workers.
  uint32_t nextWorker = self * (t.numWorkers / numSchedulers + 1);
  bool startPending = t.startEvent % numSchedulers == self &&
                      (t.events[t.startEvent].flags & kEventDispatchesJit);
  while (true) {
    uint32_t e = kNoId;
    if (lane == 0) {
      if (startPending) {
        e = t.startEvent;
        startPending = false;
      } else {
        bool leave = false;
        auto poll = [&] {
          if (ringTryPop(events, head, e))
            return true;
          leave = eventFired(t, s, t.endEvent);
          return leave;
        };
        bool ok = boundedWait(s.watchdog, poll, [&] {
          return describeEventWait(t, s, WaiterRole::Scheduler, self, kNoId,
                                   t.endEvent);
        });
        if (!ok || leave)
          e = kNoId;
      }
    }
    e = __shfl_sync(0xffffffffu, e, 0);
    // Orders lane 0's acquire of the event before the other lanes' releases
    // of its tasks (a shuffle alone is no memory ordering).
    __syncwarp();
    if (e == kNoId)
      break;
    const EventDesc ev = t.events[e];
    if (lane == 0 && s.dispatches)
      fetchAddRelaxed(&s.dispatches[e], 1);
    bool stopped = false;
    for (uint32_t base = ev.firstTask; base <= ev.lastTask; base += 32) {
      uint32_t task = base + lane;
      bool isJit = task <= ev.lastTask && (t.tasks[task].flags & kTaskJit);
      uint32_t jitLanes = __ballot_sync(0xffffffffu, isJit);
      bool ok = true;
      if (isJit) {
        uint32_t w =
            (nextWorker + __popc(jitLanes & laneMaskBelow)) % t.numWorkers;
        ok = ringPush(workerRing(s, w), task, s.watchdog, [&] {
          return describeEventWait(t, s, WaiterRole::Scheduler, self, task, e);
        });
      }
      nextWorker += __popc(jitLanes);
      if (__ballot_sync(0xffffffffu, !ok)) {
        stopped = true;
        break;
      }
    }
    if (stopped)
      break;
  }
}

/// The persistent kernel. `fn(tables, task, taskId, worker)` runs one
/// non-empty task with the whole CTA; it is where a switch on the task kind
/// calls the task functions. Launch with gridDim = SMs (cooperatively, so all
/// CTAs are resident), blockDim = kMegaThreads, and gridDim - numWorkers >= 1
/// scheduler CTAs when the tables have JIT events.
template <typename TaskFn>
__global__ void __launch_bounds__(kMegaThreads, 1)
    megaKernel(TablesView t, RuntimeState s, TaskFn fn) {
  if (threadIdx.x == 0) {
    atomicCAS(&s.stepNs[0], 0ull, (unsigned long long)globalTimerNs());
    if (s.workerSms)
      s.workerSms[blockIdx.x] = smId();
  }
  const uint32_t schedulerCtas = gridDim.x - t.numWorkers;
  const uint32_t numSchedulers = schedulerCtas * kMegaWarps;
  if (blockIdx.x < t.numWorkers)
    workerLoop(t, s, fn, numSchedulers ? numSchedulers : 1, blockIdx.x);
  else
    schedulerLoop(t, s,
                  (blockIdx.x - t.numWorkers) * kMegaWarps + threadIdx.x / 32,
                  numSchedulers);
  __syncthreads();
  if (threadIdx.x == 0)
    atomicMax(&s.stepNs[1], (unsigned long long)globalTimerNs());
}

} // namespace tawa::device::mega
