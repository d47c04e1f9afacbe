// The decode step's small task functions: embedding rows and the greedy
// argmax (q/k RMSNorm, RoPE and the KV-cache append are part of the
// attention task, SiLU·mul of the gate/up linear's).
// Each is a few memory-bound passes; numerics round to bf16 where the bf16
// reference does (python/tawa/mega/reference.py).
#pragma once
#include "tawa/device/mega/tasks/common.cuh"

namespace tawa::device::mega {

using tawa::mega::ArgmaxParams;
using tawa::mega::EmbeddingParams;

__device__ inline void embeddingTask(const EmbeddingParams &p,
                                     void *const *buffers, uint32_t tile) {
  const int mt = tile / p.colTiles, nt = tile % p.colTiles;
  const int row0 = mt * p.tileM;
  const int rows = min(p.tileM, p.batch - row0);
  const int col0 = nt * p.tileN, cols = min(p.tileN, p.hidden - col0);
  const int32_t *tokens = bufferAt<const int32_t>(buffers, p.tokens);
  const bf16 *table = bufferAt<const bf16>(buffers, p.table);
  bf16 *out = bufferAt<bf16>(buffers, p.out);
  for (int i = threadIdx.x; i < rows * cols; i += kTaskThreads) {
    const int b = row0 + i / cols, c = col0 + i % cols;
    // A token outside the vocabulary reads row 0 rather than out of bounds;
    // the host checks tokens before a step.
    int tok = tokens[b];
    tok = (tok >= 0 && tok < p.vocab) ? tok : 0;
    // Its consumers poll the row (poll.cuh): a weight holding the poison
    // is stored as the NaN a computation would give.
    out[size_t(b) * p.hidden + c] = __ushort_as_bfloat16(
        unpoisoned(__bfloat16_as_ushort(table[size_t(tok) * p.hidden + c])));
  }
}

/// Tile b: the first index of row b's largest logit (NaN never wins),
/// from the key the LM head's tiles raised (argmaxKey).
__device__ inline void argmaxTask(const ArgmaxParams &p, void *const *buffers,
                                  uint32_t tile) {
  if (threadIdx.x == 0)
    bufferAt<int32_t>(buffers, p.out)[tile] = tawa::mega::argmaxColumn(
        bufferAt<const unsigned long long>(buffers, p.keys)[tile]);
}

} // namespace tawa::device::mega
