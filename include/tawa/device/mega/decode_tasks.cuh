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

/// Slot 0: the worker's next AOT task, staged before its inputs are ready;
/// slot 1: a task staged when it runs (just-in-time tasks, which may run
/// while slot 0 waits).
__device__ inline StagedOp *stagedOps() {
  __shared__ StagedOp slots[2];
  return slots;
}

struct DecodeTasks {
  const tawa::mega::OpParams *params; ///< by operator index
  void *const *buffers;               ///< by buffer index

  /// The whole CTA, once per worker before its first task.
  __device__ void initWorker() const {
    if (threadIdx.x == 0)
      initTaskBarriers();
  }

  /// Warp 0: `d`'s operator parameters into `slot`, buffers resolved. The
  /// caller orders it before the task with a CTA barrier.
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

  /// The whole CTA, before waiting for the inputs of its next AOT task:
  /// stages the task's parameters, and starts loading its weights if it is
  /// a linear, or its cached keys and values if it is attention in a plan
  /// without just-in-time tasks. Linears are never just-in-time
  /// (DecodeBinding checks), so no task between this and the linear's run
  /// uses the ring.
  __device__ bool prefetch(const TablesView &, const TaskDesc &d, uint32_t,
                           uint32_t) const {
    using tawa::mega::TaskKind;
    if (d.kind == kEmptyTaskKind)
      return false; // no operator: nothing to stage
    stage(d, stagedOps()[0]);
    const void *raw = params[d.op].bytes;
    switch (static_cast<TaskKind>(d.kind)) {
    case TaskKind::RmsNormLinear:
    case TaskKind::LinearResidual:
      linearPrefetch(paramsOf<tawa::mega::LinearParams>(raw), buffers, d.tile);
      break;
    case TaskKind::DecodeAttention:
      decodeAttentionPrefetch(paramsOf<tawa::mega::DecodeAttentionParams>(raw),
                              buffers, d.tile);
      break;
    default:
      break;
    }
    return true;
  }

  /// `prefetched`: prefetch ran for this task (its parameters are in slot
  /// 0), and no task ran on the worker since except just-in-time ones.
  __device__ void operator()(const TablesView &, const TaskDesc &d, uint32_t,
                             uint32_t, bool prefetched) const {
    using tawa::mega::TaskKind;
    StagedOp &slot = stagedOps()[prefetched ? 0 : 1];
    if (!prefetched) {
      stage(d, slot);
      __syncthreads();
    }
    const void *raw = slot.params.bytes;
    void *const *bufs = slot.ptrs;
    switch (static_cast<TaskKind>(d.kind)) {
    case TaskKind::Embedding:
      embeddingTask(paramsOf<tawa::mega::EmbeddingParams>(raw), bufs, d.tile);
      break;
    case TaskKind::RmsNormLinear:
    case TaskKind::LinearResidual:
      linearTask(paramsOf<tawa::mega::LinearParams>(raw), bufs, d.tile,
                 prefetched);
      break;
    case TaskKind::DecodeAttention: {
      const auto p = paramsOf<tawa::mega::DecodeAttentionParams>(raw);
      decodeAttentionTask(p, bufs, d.tile, prefetched && p.prefetch);
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
