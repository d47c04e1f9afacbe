// Synthetic task functions for testing the mega-kernel runtime without real
// kernels: every task reads the token of each tile producer it depends on
// (from a scratch array its producers wrote) and then writes its own, so a
// task that starts before a producer finished is counted. Tokens change with
// `epoch`, so a value left by an earlier run does not pass.
#pragma once
#include "tawa/device/mega/runtime.cuh"

#include <cstdint>

namespace tawa::test {

using namespace tawa::device::mega;

__host__ __device__ inline uint32_t tileToken(uint32_t task, uint32_t epoch) {
  return ((task * 2654435761u) ^ (epoch * 0x9E3779B9u) ^ 0x5bd1e995u) | 1u;
}

struct SyntheticTasks {
  uint32_t *scratch; ///< [numTasks] each task's token
  uint32_t *early; ///< [numTasks] producers not yet written (GPU-coherent read)
  uint32_t *unseen; ///< [numTasks] producers whose write a plain load missed
  uint32_t epoch;
  uint32_t maxWorkNs; ///< busy time per task, hashed from its id in [0, max)
  bool checkProducers;

  __device__ void operator()(const TablesView &t, const TaskDesc &d,
                             uint32_t task, uint32_t /*worker*/) const {
    // The switch real task functions will fill; every kind is synthetic now.
    switch (d.kind) {
    default:
      syntheticTile(t, task);
      break;
    }
  }

  __device__ void syntheticTile(const TablesView &t, uint32_t task) const {
    uint64_t begin = globalTimerNs();
    if (checkProducers) {
      for (uint32_t i = t.producerOffsets[task] + threadIdx.x;
           i < t.producerOffsets[task + 1]; i += blockDim.x) {
        uint32_t p = t.producers[i];
        uint32_t want = tileToken(p, epoch);
        // A plain load, as a task function's would be: after the runtime's
        // acquire and the CTA barrier it must see the producer's write. The
        // coherent load tells a late producer from a stale cache line.
        uint32_t plain = scratch[p];
        if (plain != want) {
          if (loadRelaxed(&scratch[p]) != want)
            atomicAdd(&early[task], 1u);
          else
            atomicAdd(&unseen[task], 1u);
        }
      }
    }
    if (maxWorkNs && threadIdx.x == 0) {
      uint32_t work = (task * 40503u) % maxWorkNs;
      while (globalTimerNs() - begin < work) {
      }
    }
    if (threadIdx.x == 0)
      scratch[task] = tileToken(task, epoch);
  }
};

} // namespace tawa::test
