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
using tawa::mega::kTaskRelaxedArrival;
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

/// One task's trace entry (optional): when and where it ran, and how often;
/// when its inputs were in and when it had computed its results (0 where
/// the task does not say), and how long its warp 0 waited for weights
/// (TaskStamps).
struct TaskRecord {
  uint64_t startNs;
  uint64_t endNs;
  uint32_t worker;
  uint32_t runs;
  uint64_t readyNs;
  uint64_t computedNs;
  uint64_t weightWaitNs;
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
/// follows the task); hands a completed JIT event to its scheduler.
/// `completed`: this arrival fired `e` (and, acq_rel, acquired every earlier
/// arrival's writes); always false for a release reduction, whose worker
/// does not learn the count. `relaxed`: the task's kTaskRelaxedArrival.
/// Returns false when the watchdog stopped the hand-over.
__device__ inline bool arrive(const TablesView &t, const RuntimeState &s,
                              uint32_t numSchedulers, uint32_t worker,
                              uint32_t task, uint32_t e, bool &completed,
                              bool relaxed = false) {
  // A plan without just-in-time tasks hands no event to a scheduler, so an
  // arrival needs no answer: a release reduction, which the worker does not
  // wait for. The atomic's round trip and the descriptor's load would each
  // be an L2 round trip, microseconds while the weights stream, between the
  // task and the worker's next one. Arrivals past a trigger count are then
  // found after the step (tawa_mega_check compares every event's count).
  if (t.numJitTasks == 0) {
    // Every task `e` launches polls its inputs: nothing acquires through
    // `e`, and the release's fence (a wait for the task's stores to be
    // performed, on the path to this worker's next task) buys nothing.
    if (relaxed)
      reduceAddRelaxed(&s.arrivals[e], 1);
    else
      reduceAddRelease(&s.arrivals[e], 1);
    completed = false;
    return true;
  }
  // The event's descriptor is read before the arrival: a load after the
  // acq_rel atomic would wait for it (one more L2 round trip before the
  // worker moves on).
  const EventDesc ev = t.events[e];
  uint32_t old = fetchAddAcqRel(&s.arrivals[e], 1);
  completed = old + 1 == ev.triggerCount;
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

  /// `knownCandidate`: the next AOT task's id when the caller has it, with
  /// its wait event and that event's trigger count (kNoId: loaded here).
  __device__ uint32_t next(const TablesView &t, const RuntimeState &s,
                           uint32_t w, uint32_t knownCandidate = kNoId,
                           uint32_t knownEvent = 0, uint32_t knownNeed = 0) {
    uint32_t task = kNoId;
    uint32_t waitEvent = t.endEvent;
    uint32_t candidate = kNoId;
    if (knownCandidate != kNoId) {
      candidate = knownCandidate;
      waitEvent = knownEvent;
    } else if (aotPos < aotEnd) {
      candidate = t.aotTasks[aotPos];
      waitEvent = t.tasks[candidate].waitEvent;
    }
    // A poll is one acquire load of the event's count (and one of the JIT
    // ring's head slot when the plan has JIT tasks): each load after an
    // acquire waits for it, so every load in the loop is a serial L2 round
    // trip, microseconds while the weights stream. The trigger count is read
    // once.
    const uint32_t need = knownCandidate != kNoId
                              ? knownNeed
                              : t.events[waitEvent].triggerCount;
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

/// A task functor may take its AOT tasks from records (DecodeTasks): it then
/// has `initWorker()` (the whole CTA, once before the first task),
/// `preload(position, slot)` (thread 0: start copying the record of an AOT
/// queue position into record slot 0 or 1), `record(slot, parity)` (every
/// thread: the record once it landed: .desc, .task, .need, .op) and
/// `bool prefetch(record)` (the whole CTA, before waiting for that task's
/// inputs: a linear starts loading its weights), and is called as
/// `fn(tables, desc, id, worker, op, prefetched)` (`op` the record's
/// parameters, or null for a just-in-time task). Such a functor also has
/// `bool pollsInputs(record)` (every thread): the task reads every input it
/// waits for by polling (poll.cuh), so in a plan without just-in-time
/// tasks the worker runs it without waiting for its event. (Waiting for all
/// but the last eighth or half of the arrivals first, to poll for less
/// time, measured slower: run 246.) Functors without
/// records are called as `fn(tables, desc, id, worker)`.
template <typename F, typename = void> struct TaskRecords {
  static constexpr bool kHas = false;
};
template <typename F>
struct TaskRecords<F, std::void_t<decltype(&F::preload)>> {
  static constexpr bool kHas = true;
};

template <typename TaskFn>
__device__ void workerLoop(const TablesView &t, const RuntimeState &s,
                           const TaskFn &fn, uint32_t numSchedulers,
                           uint32_t w) {
  __shared__ uint32_t nextPos, nextTask, firedEvent;
  __shared__ uint64_t taskStart;
  WorkerQueues q{t.aotOffsets[w], t.aotOffsets[w + 1], 0, workerRing(s, w)};
  constexpr bool kRecords = TaskRecords<TaskFn>::kHas;
  const uint32_t aotBegin = q.aotPos, aotCount = q.aotEnd - q.aotPos;
  // Records: AOT queue index i (position aotBegin + i) sits in record slot
  // i % 2, its copy completing phase (i / 2) % 2 of that slot's barrier;
  // the first two are copied now, record i + 2 once task i has run.
  // `prepared`: the index whose prefetch ran (every thread keeps the same
  // value).
  uint32_t prepared = ~0u;
  bool preparedPrefetched = false;
  if constexpr (kRecords) {
    fn.initWorker();
    __syncthreads();
    if (threadIdx.x == 0)
      for (uint32_t j = 0; j < min(aotCount, 2u); ++j)
        fn.preload(aotBegin + j, j % 2);
  }
  if (threadIdx.x == 0)
    firedEvent = kNoId;
  __syncthreads();
  while (true) {
    // This worker's position in its AOT queue (thread 0 advances it; the
    // other threads read it before the barrier after the task, which comes
    // before thread 0 writes it again).
    if (threadIdx.x == 0)
      nextPos = q.aotPos;
    __syncthreads();
    const uint32_t i = nextPos - aotBegin;
    uint32_t waitEvent = kNoId, need = 0, candidate = kNoId;
    bool polls = false;
    if constexpr (kRecords) {
      if (i < aotCount) {
        const auto &r = fn.record(i % 2, (i / 2) % 2);
        candidate = r.task;
        waitEvent = r.desc.waitEvent;
        need = r.need;
        // A JIT task may produce what the task polls and be queued on this
        // worker, which runs it only while waiting for an event.
        polls = t.numJitTasks == 0 && fn.pollsInputs(r);
        if (prepared != i) {
          preparedPrefetched = fn.prefetch(r);
          prepared = i;
        }
      }
    }
    if (threadIdx.x == 0) {
      if (kRecords && candidate != kNoId &&
          (waitEvent == firedEvent || polls)) {
        // This worker's last arrival fired the task's event, or the task
        // polls its inputs.
        nextTask = candidate;
        ++q.aotPos;
      } else {
        nextTask = kRecords && candidate != kNoId
                       ? q.next(t, s, w, candidate, waitEvent, need)
                       : q.next(t, s, w);
      }
      taskStart = s.trace ? globalTimerNs() : 0;
#if TAWA_MEGA_TRACE_PHASES
      taskStamps() = TaskStamps{s.trace ? 1u : 0u, 0, 0, 0};
#endif
    }
    __syncthreads();
    const uint32_t task = nextTask;
    if (task == kNoId)
      break;
    const bool aot = kRecords && task == candidate;
    TaskDesc d{};
    if constexpr (kRecords) {
      // One call site (the task functions are inlined into it): an AOT
      // task's parameters from its record, a just-in-time one's staged by
      // the functor.
      using Record =
          std::remove_reference_t<decltype(fn.record(0u, 0u))>;
      const decltype(Record::op) *op = nullptr;
      if (aot) {
        const Record &r = fn.record(i % 2, (i / 2) % 2);
        d = r.desc;
        op = &r.op;
      } else {
        d = t.tasks[task];
      }
      if (d.kind != kEmptyTaskKind)
        fn(t, d, task, w, op, aot && preparedPrefetched);
    } else {
      d = t.tasks[task];
      if (d.kind != kEmptyTaskKind)
        fn(t, d, task, w);
    }
    // Every thread's writes of the task happen before thread 0's release.
    __syncthreads();
    if (threadIdx.x == 0) {
      if (s.trace) {
        TaskRecord &rec = s.trace[task];
        rec.startNs = taskStart;
        rec.endNs = globalTimerNs();
        rec.worker = w;
        const bool phases = TAWA_MEGA_TRACE_PHASES != 0;
        rec.readyNs = phases ? taskStamps().ready : 0;
        rec.computedNs = phases ? taskStamps().computed : 0;
        rec.weightWaitNs = phases ? taskStamps().weightWaitNs : 0;
        fetchAddRelaxed(&rec.runs, 1);
      }
      bool completed = false;
      arrive(t, s, numSchedulers, w, task, d.triggerEvent, completed,
             (d.flags & kTaskRelaxedArrival) != 0);
      firedEvent = completed ? d.triggerEvent : kNoId;
      // The record two positions on, into the slot this task's record
      // held: its reads are over (the barrier above).
      if constexpr (kRecords)
        if (aot && i + 2 < aotCount)
          fn.preload(aotBegin + i + 2, i % 2);
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
