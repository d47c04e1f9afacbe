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

struct DecodeTasks {
  const tawa::mega::OpParams *params; ///< by operator index
  void *const *buffers;               ///< by buffer index

  /// The whole CTA, once per worker before its first task.
  __device__ void initWorker() const {
    if (threadIdx.x == 0)
      initTaskBarriers();
  }

  /// The whole CTA, before waiting for the inputs of its next AOT task:
  /// starts loading the task's weights if it is a linear, or its cached keys
  /// and values if it is attention in a plan without just-in-time tasks;
  /// returns whether it did. Linears are never just-in-time (DecodeBinding
  /// checks), so no task between this and the linear's run uses the ring.
  __device__ bool prefetch(const TablesView &, const TaskDesc &d, uint32_t,
                           uint32_t) const {
    using tawa::mega::TaskKind;
    const void *raw = params[d.op].bytes;
    switch (static_cast<TaskKind>(d.kind)) {
    case TaskKind::RmsNormLinear:
    case TaskKind::LinearResidual:
      linearPrefetch(paramsOf<tawa::mega::LinearParams>(raw), buffers, d.tile);
      return true;
    case TaskKind::DecodeAttention:
      return decodeAttentionPrefetch(
          paramsOf<tawa::mega::DecodeAttentionParams>(raw), buffers, d.tile);
    default:
      return false;
    }
  }

  __device__ void operator()(const TablesView &, const TaskDesc &d, uint32_t,
                             uint32_t, bool prefetched) const {
    using tawa::mega::TaskKind;
    const void *raw = params[d.op].bytes;
    switch (static_cast<TaskKind>(d.kind)) {
    case TaskKind::Embedding:
      embeddingTask(paramsOf<tawa::mega::EmbeddingParams>(raw), buffers,
                    d.tile);
      break;
    case TaskKind::RmsNormLinear:
    case TaskKind::LinearResidual:
      linearTask(paramsOf<tawa::mega::LinearParams>(raw), buffers, d.tile,
                 prefetched);
      break;
    case TaskKind::DecodeAttention:
      decodeAttentionTask(paramsOf<tawa::mega::DecodeAttentionParams>(raw),
                          buffers, d.tile, prefetched);
      break;
    case TaskKind::AttentionMerge:
      attentionMergeTask(paramsOf<tawa::mega::AttentionMergeParams>(raw),
                         buffers, d.tile);
      break;
    case TaskKind::SiluMul:
      siluMulTask(paramsOf<tawa::mega::SiluMulParams>(raw), buffers, d.tile);
      break;
    case TaskKind::Argmax:
      argmaxTask(paramsOf<tawa::mega::ArgmaxParams>(raw), buffers, d.tile);
      break;
    }
  }
};

} // namespace tawa::device::mega
