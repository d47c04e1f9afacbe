// The decode step's small task functions: embedding rows, per-head q/k
// RMSNorm with RoPE, the KV-cache append, SiLU·mul and the greedy argmax.
// Each is a few memory-bound passes; numerics round to bf16 where the bf16
// reference does (python/tawa/mega/reference.py).
#pragma once
#include "tawa/device/mega/tasks/common.cuh"

namespace tawa::device::mega {

using tawa::mega::ArgmaxParams;
using tawa::mega::EmbeddingParams;
using tawa::mega::KvAppendParams;
using tawa::mega::QkNormRopeParams;
using tawa::mega::SiluMulParams;

__device__ inline void embeddingTask(const EmbeddingParams &p,
                                     void *const *buffers, uint32_t tile) {
  const int mt = tile / p.colTiles, nt = tile % p.colTiles;
  const int row0 = mt * tawa::mega::kMaxTileRows;
  const int rows = min(tawa::mega::kMaxTileRows, p.batch - row0);
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
    out[size_t(b) * p.hidden + c] = table[size_t(tok) * p.hidden + c];
  }
}

/// Tile h: q head h (h < qHeads) or k head h - qHeads, every row.
/// Reference: x = weight * bf16(x * rsqrt(mean(x²) + eps)) per head (Qwen3),
/// then x * cos + rotate_half(x) * sin in bf16, with cos and sin of
/// position * theta^(-2i/D) rounded to bf16.
__device__ inline void qkNormRopeTask(const QkNormRopeParams &p,
                                      void *const *buffers, uint32_t tile) {
  const int h = tile, D = p.headDim, half = D / 2;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const bool isQ = h < p.qHeads;
  const int within = isQ ? h : h - p.qHeads;
  const bf16 *qkv = bufferAt<const bf16>(buffers, p.qkv);
  const int32_t *positions = bufferAt<const int32_t>(buffers, p.positions);
  const uint32_t normId = isQ ? p.qNorm : p.kNorm;
  const bf16 *normW =
      p.qkNorm ? bufferAt<const bf16>(buffers, normId) : nullptr;
  bf16 *out = bufferAt<bf16>(buffers, isQ ? p.q : p.k);
  const int outCols = (isQ ? p.qHeads : p.kvHeads) * D;
  // A warp per row (the rows are independent), its normalized head in the
  // warp's [D] of xs; lane l takes elements l + 32 j. Their RoPE frequency
  // index (l + 32 j) mod D/2 repeats every D/64 of them, so a lane computes
  // the inverse frequencies once per task and cos/sin once per row for the
  // distinct ones only (D <= 256: at most 4).
  float *xs = reinterpret_cast<float *>(taskSmem()) + warp * D;
  const int distinct = max(1, half / 32);
  float invFreq[4];
#pragma unroll
  for (int j = 0; j < 4; ++j)
    invFreq[j] = j < distinct
                     ? 1.0f / powf(p.ropeTheta,
                                   float(2 * ((lane + 32 * j) % half)) /
                                       float(D))
                     : 0.f;
  // The norm weights once per task; a row's loads all issued before use.
  float w[8];
#pragma unroll
  for (int j = 0; j < 8; ++j)
    w[j] = p.qkNorm && lane + 32 * j < D ? toFloat(normW[lane + 32 * j]) : 0.f;
  for (int b = warp; b < p.batch; b += kTaskWarps) {
    const bf16 *src = qkv + size_t(b) * p.qkvCols + size_t(h) * D;
    float v[8], ss = 0.f;
#pragma unroll
    for (int j = 0; j < 8; ++j)
      v[j] = lane + 32 * j < D ? toFloat(src[lane + 32 * j]) : 0.f;
#pragma unroll
    for (int j = 0; j < 8; ++j)
      ss = fmaf(v[j], v[j], ss);
    const float scale =
        p.qkNorm ? rsqrtf(warpSum(ss) / float(D) + p.eps) : 1.f;
#pragma unroll
    for (int j = 0; j < 8; ++j)
      if (lane + 32 * j < D)
        xs[lane + 32 * j] =
            p.qkNorm ? roundBf16(w[j] * roundBf16(v[j] * scale)) : v[j];
    __syncwarp();
    const float pos = float(positions[b]);
    float cs[4], sn[4];
#pragma unroll
    for (int j = 0; j < 4; ++j)
      if (j < distinct)
        sincosf(pos * invFreq[j], &sn[j], &cs[j]);
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      const int d = lane + 32 * j;
      if (d < D) {
        // Index j mod distinct with static indices (registers, not a frame).
        const float c = distinct == 1 ? cs[0] : distinct == 2 ? cs[j & 1]
                                                              : cs[j & 3];
        const float s = distinct == 1 ? sn[0] : distinct == 2 ? sn[j & 1]
                                                              : sn[j & 3];
        const float rot = d < half ? -xs[d + half] : xs[d - half];
        const float v = roundBf16(roundBf16(xs[d] * roundBf16(c)) +
                                  roundBf16(rot * roundBf16(s)));
        out[size_t(b) * outCols + size_t(within) * D + d] = toBf16(v);
      }
    }
    __syncwarp(); // xs is rewritten by the warp's next row
  }
}

/// Tile h: KV head h of every row, at the row's position.
__device__ inline void kvAppendTask(const KvAppendParams &p,
                                    void *const *buffers, uint32_t tile) {
  const int h = tile, D = p.headDim, vecs = D / 8;
  const bf16 *k = bufferAt<const bf16>(buffers, p.k);
  const bf16 *qkv = bufferAt<const bf16>(buffers, p.qkv);
  const int32_t *positions = bufferAt<const int32_t>(buffers, p.positions);
  bf16 *kCache = bufferAt<bf16>(buffers, p.kCache);
  bf16 *vCache = bufferAt<bf16>(buffers, p.vCache);
  // 16 bytes per thread (D is a multiple of 8).
  for (int i = threadIdx.x; i < p.batch * vecs; i += kTaskThreads) {
    const int b = i / vecs, d = (i % vecs) * 8;
    const int pos = positions[b];
    if (pos < 0 || pos >= p.maxSeq)
      continue; // the host refuses such a step; never write out of bounds
    const size_t at = ((size_t(b) * p.kvHeads + h) * p.maxSeq + pos) * D + d;
    *reinterpret_cast<uint4 *>(kCache + at) = *reinterpret_cast<const uint4 *>(
        k + size_t(b) * p.kvHeads * D + size_t(h) * D + d);
    *reinterpret_cast<uint4 *>(vCache + at) = *reinterpret_cast<const uint4 *>(
        qkv + size_t(b) * p.qkvCols + p.vCol0 + size_t(h) * D + d);
  }
}

/// out = bf16(bf16(silu(gate)) * up), as F.silu(gate) * up in bf16.
__device__ inline void siluMulTask(const SiluMulParams &p, void *const *buffers,
                                   uint32_t tile) {
  const int mt = tile / p.colTiles, nt = tile % p.colTiles;
  const int row0 = mt * tawa::mega::kMaxTileRows;
  const int rows = min(tawa::mega::kMaxTileRows, p.batch - row0);
  const int col0 = nt * p.tileN, cols = min(p.tileN, p.inter - col0);
  const bf16 *gu = bufferAt<const bf16>(buffers, p.gateUp);
  bf16 *out = bufferAt<bf16>(buffers, p.out);
  for (int i = threadIdx.x; i < rows * cols; i += kTaskThreads) {
    const int b = row0 + i / cols, c = col0 + i % cols;
    const float g = toFloat(gu[(size_t(b) * 2) * p.inter + c]);
    const float u = toFloat(gu[(size_t(b) * 2 + 1) * p.inter + c]);
    const float silu = roundBf16(g / (1.f + expf(-g)));
    out[size_t(b) * p.inter + c] = toBf16(silu * u);
  }
}

/// Tile b: the first index of row b's largest logit (NaN never wins).
__device__ inline void argmaxTask(const ArgmaxParams &p, void *const *buffers,
                                  uint32_t tile) {
  const float *row =
      bufferAt<const float>(buffers, p.logits) + size_t(tile) * p.vocab;
  float best = -INFINITY;
  int bestIdx = 0x7fffffff;
  for (int i = threadIdx.x; i < p.vocab; i += kTaskThreads) {
    const float v = row[i];
    if (v > best) { // ascending i per thread: keeps the first maximum
      best = v;
      bestIdx = i;
    }
  }
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    const float ov = __shfl_xor_sync(0xffffffffu, best, o);
    const int oi = __shfl_xor_sync(0xffffffffu, bestIdx, o);
    if (ov > best || (ov == best && oi < bestIdx)) {
      best = ov;
      bestIdx = oi;
    }
  }
  __shared__ float warpBest[kTaskWarps];
  __shared__ int warpIdx[kTaskWarps];
  if (threadIdx.x % 32 == 0) {
    warpBest[threadIdx.x / 32] = best;
    warpIdx[threadIdx.x / 32] = bestIdx;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int w = 1; w < kTaskWarps; ++w)
      if (warpBest[w] > best || (warpBest[w] == best && warpIdx[w] < bestIdx)) {
        best = warpBest[w];
        bestIdx = warpIdx[w];
      }
    bufferAt<int32_t>(buffers, p.out)[tile] =
        bestIdx == 0x7fffffff ? 0 : bestIdx;
  }
}

} // namespace tawa::device::mega
