// The task functor of the decode mega-kernel: megaKernel<DecodeTasks> calls
// it for every non-empty task, and it dispatches on the task's kind to the
// task functions of tasks/ with its operator's parameters (TaskParams.h) and
// the table of buffer addresses the host bound (DecodeBinding.h).
#pragma once
#include "tawa/Mega/DeviceLayout.h"
#include "tawa/Mega/TaskParams.h"
#include "tawa/device/mega/runtime.cuh"
#include "tawa/device/mega/tasks/attention.cuh"
#include "tawa/device/mega/tasks/linear.cuh"
#include "tawa/device/mega/tasks/pointwise.cuh"

namespace tawa::device::mega {

template <typename P> __device__ __forceinline__ P paramsOf(const void *raw) {
  return *reinterpret_cast<const P *>(raw);
}

/// An operator's parameters staged in shared memory for one task: its
/// buffer fields rewritten to 0, 1, ..., indices into `ptrs`, which holds the
/// addresses they named in the global table. A task then starts without the
/// two dependent global loads (parameters, then addresses) before its own.
struct StagedOp {
  tawa::mega::OpParams params;
  void *ptrs[tawa::mega::kMaxBufferFields];
};

/// Slot 0: unused by AOT tasks (their parameters ride in their StagedTask
/// records); slot 1: a task staged when it runs (just-in-time tasks, which
/// may run while an AOT task's record waits).
__device__ inline StagedOp *stagedOps() {
  __shared__ StagedOp slots[2];
  return slots;
}

/// Everything a worker needs of one AOT task before it runs it: its
/// descriptor, id, the trigger count of the event it waits for and its
/// operator's parameters with the buffer addresses resolved. Built once per
/// binding for every position of every worker's AOT queue
/// (buildStagedTasks), and copied whole into shared memory by one bulk copy
/// while the task before it runs, so that preparing a task takes no
/// dependent global load.
struct alignas(16) StagedTask {
  TaskDesc desc;
  uint32_t task;
  uint32_t need;
  uint32_t pad[2];
  StagedOp op;
};
static_assert(sizeof(StagedTask) % 16 == 0, "bulk-copied whole");

/// The two shared-memory records of a worker (AOT queue position i in
/// record i % 2) and their barriers.
struct StagedTaskSlots {
  StagedTask rec[2];
  MBarrier bar[2];
};
__device__ inline StagedTaskSlots &stagedTaskSlots() {
  __shared__ StagedTaskSlots slots;
  return slots;
}

/// One thread per record: the StagedTask of AOT queue position `p` (the
/// concatenated queues of all workers, indexed like TablesView::aotTasks).
__global__ void buildStagedTasks(TablesView t,
                                 const tawa::mega::OpParams *params,
                                 void *const *buffers, StagedTask *out,
                                 uint32_t positions) {
  using tawa::mega::kNoBuffer;
  for (uint32_t p = blockIdx.x * blockDim.x + threadIdx.x; p < positions;
       p += gridDim.x * blockDim.x) {
    StagedTask r{};
    r.task = t.aotTasks[p];
    r.desc = t.tasks[r.task];
    r.need = t.events[r.desc.waitEvent].triggerCount;
    if (r.desc.kind != kEmptyTaskKind) {
      r.op.params = params[r.desc.op];
      const int fields = tawa::mega::bufferFieldsOf(
          static_cast<tawa::mega::TaskKind>(r.desc.kind));
      for (int f = 0; f < fields; ++f) {
        uint32_t *field = reinterpret_cast<uint32_t *>(r.op.params.bytes) + f;
        const uint32_t id = *field;
        r.op.ptrs[f] = id == kNoBuffer ? nullptr : buffers[id];
        *field = id == kNoBuffer ? kNoBuffer : uint32_t(f);
      }
    }
    out[p] = r;
  }
}

struct DecodeTasks {
  const tawa::mega::OpParams *params; ///< by operator index
  void *const *buffers;               ///< by buffer index
  const StagedTask *staged;           ///< by AOT queue position
  /// Non-zero: the AOT linears and attention tasks poll their inputs
  /// (poll.cuh) instead of waiting for their events. The host sets it for
  /// batch-1 plans without just-in-time tasks, whose bf16 activations it
  /// poisons before every step (tawa_mega_step).
  uint32_t pollInputs;
  /// The watchdog and the event counts a poll reports with.
  WatchdogState watchdog;
  const uint32_t *arrivals;

  /// The whole CTA, once per worker before its first task.
  __device__ void initWorker() const {
    if (threadIdx.x == 0) {
      initTaskBarriers();
      StagedTaskSlots &r = stagedTaskSlots();
      mbarrierInit(&r.bar[0], 1);
      mbarrierInit(&r.bar[1], 1);
      fenceMBarrierInit();
    }
  }

  /// Thread 0: starts copying the record of AOT queue position `p` into
  /// record slot `slot`. The slot's previous record belongs to a task that
  /// has ended (its reads were ordered before by a CTA barrier).
  __device__ void preload(uint32_t p, uint32_t slot) const {
    StagedTaskSlots &r = stagedTaskSlots();
    fenceProxyAsyncShared(); // the generic reads of the old record first
    mbarrierArriveExpectTx(&r.bar[slot], uint32_t(sizeof(StagedTask)));
    bulkLoad(&r.rec[slot], staged + p, uint32_t(sizeof(StagedTask)),
             &r.bar[slot]);
  }

  /// Every thread: the record in `slot` once its copy landed (`parity`: the
  /// slot's phase).
  __device__ const StagedTask &record(uint32_t slot, uint32_t parity) const {
    StagedTaskSlots &r = stagedTaskSlots();
    mbarrierWait(&r.bar[slot], parity);
    return r.rec[slot];
  }

  /// Warp 0: `d`'s operator parameters into the just-in-time slot, buffers
  /// resolved. The caller orders it before the task with a CTA barrier.
  __device__ void stage(const TaskDesc &d, StagedOp &slot) const {
    using tawa::mega::kNoBuffer;
    if (threadIdx.x >= 32)
      return;
    const int lane = threadIdx.x;
    const unsigned char *raw = params[d.op].bytes;
    const int fields =
        tawa::mega::bufferFieldsOf(static_cast<tawa::mega::TaskKind>(d.kind));
    uint4 chunk = make_uint4(0, 0, 0, 0);
    uint32_t id = kNoBuffer;
    if (lane < int(sizeof(tawa::mega::OpParams) / 16))
      chunk = reinterpret_cast<const uint4 *>(raw)[lane];
    if (lane < fields)
      id = reinterpret_cast<const uint32_t *>(raw)[lane];
    void *ptr = lane < fields && id != kNoBuffer ? buffers[id] : nullptr;
    if (lane < int(sizeof(tawa::mega::OpParams) / 16))
      reinterpret_cast<uint4 *>(slot.params.bytes)[lane] = chunk;
    __syncwarp(); // field `lane` is rewritten after its chunk is stored
    if (lane < fields) {
      reinterpret_cast<uint32_t *>(slot.params.bytes)[lane] =
          id == kNoBuffer ? kNoBuffer : uint32_t(lane);
      slot.ptrs[lane] = ptr;
    }
  }

  /// The whole CTA, before waiting for the inputs of its next AOT task
  /// (record `r`): starts loading its weights if it is a linear, or its
  /// cached keys and values if it is attention in a plan without
  /// just-in-time tasks. Linears are never just-in-time (DecodeBinding
  /// checks), so no task between this and the linear's run uses the ring.
  __device__ bool prefetch(const StagedTask &r) const {
    using tawa::mega::TaskKind;
    const TaskDesc &d = r.desc;
    switch (static_cast<TaskKind>(d.kind)) {
    case TaskKind::RmsNormLinear:
    case TaskKind::LinearResidual:
      linearPrefetch(paramsOf<tawa::mega::LinearParams>(r.op.params.bytes),
                     r.op.ptrs, d.tile);
      return true;
    case TaskKind::DecodeAttention:
      return decodeAttentionPrefetch(
          paramsOf<tawa::mega::DecodeAttentionParams>(r.op.params.bytes),
          r.op.ptrs, d.tile);
    default:
      return false;
    }
  }

  /// Every thread: whether the AOT task of record `r` polls its inputs.
  __device__ bool pollsInputs(const StagedTask &r) const {
    return pollInputs != 0 && tawa::mega::pollingTaskKind(r.desc.kind);
  }

  /// Just-in-time tasks: staged here; `op` null.
  /// AOT tasks: `op` is their record's parameters; `prefetched`: prefetch
  /// ran for this task and no task ran on the worker since except
  /// just-in-time ones.
  __device__ void operator()(const TablesView &t, const TaskDesc &d,
                             uint32_t task, uint32_t worker,
                             const StagedOp *op, bool prefetched) const {
    using tawa::mega::TaskKind;
    // AOT tasks of a polling kind poll (the worker did not wait for them).
    const PollWatch watch{&watchdog, arrivals, t.events, worker, task,
                          d.waitEvent};
    const PollWatch *poll =
        op && pollInputs != 0 && tawa::mega::pollingTaskKind(d.kind) ? &watch
                                                                     : nullptr;
    if (!op) {
      StagedOp &slot = stagedOps()[1];
      stage(d, slot);
      __syncthreads();
      op = &slot;
    }
    const void *raw = op->params.bytes;
    void *const *bufs = op->ptrs;
    switch (static_cast<TaskKind>(d.kind)) {
    case TaskKind::Embedding:
      embeddingTask(paramsOf<tawa::mega::EmbeddingParams>(raw), bufs, d.tile);
      break;
    case TaskKind::RmsNormLinear:
    case TaskKind::LinearResidual:
      linearTask(paramsOf<tawa::mega::LinearParams>(raw), bufs, d.tile,
                 prefetched, poll);
      break;
    case TaskKind::DecodeAttention: {
      const auto p = paramsOf<tawa::mega::DecodeAttentionParams>(raw);
      decodeAttentionTask(p, bufs, d.tile, prefetched && p.prefetch, poll);
      break;
    }
    case TaskKind::AttentionMerge:
      attentionMergeTask(paramsOf<tawa::mega::AttentionMergeParams>(raw), bufs,
                         d.tile);
      break;
    case TaskKind::Argmax:
      argmaxTask(paramsOf<tawa::mega::ArgmaxParams>(raw), bufs, d.tile);
      break;
    }
  }
};

} // namespace tawa::device::mega
