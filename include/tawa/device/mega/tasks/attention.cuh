// Decode attention over the KV cache (GQA) and the merge of split chunks.
//
// A task holds the `group` q heads that share KV head h of row b and walks
// its chunk of cache positions in blocks (up to kAttnBlock positions, 64 KB
// of keys): one thread bulk-copies the block's key rows and value rows into
// shared memory (each a contiguous range of the cache, completing on its own
// mbarrier), so the block's loads are in flight at once; then scores into
// shared memory (D / 8 lanes per position, 16 bytes of its key row each), an
// online softmax per head across blocks, and P·V with the same lanes reading
// the value rows, each lane group summing its own positions; the groups'
// partial outputs are added at the end. Float throughout; the output is
// rounded to bf16, or kept in float with its log-sum-exp when the sequence is
// split into chunks and a merge task combines them.
#pragma once
#include "tawa/device/mega/tasks/common.cuh"
#include "tawa/device/tma.cuh"

namespace tawa::device::mega {

using tawa::mega::AttentionMergeParams;
using tawa::mega::DecodeAttentionParams;

constexpr int kAttnBlock = 512;  ///< cache positions scored per block
constexpr int kAttnMaxGroup = 8; ///< q heads per KV head (1, 2, 4, 8)

template <int G>
__device__ void decodeAttentionGroup(const DecodeAttentionParams &p,
                                     void *const *buffers, uint32_t tile) {
  const int ch = tile % p.chunks;
  const int h = (tile / p.chunks) % p.kvHeads;
  const int b = tile / (p.chunks * p.kvHeads);
  const int D = p.headDim;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  // q's loads first: they depend on nothing, and are in flight with the
  // length's load and the cache copies (the values go to shared memory
  // below).
  const bf16 *q =
      bufferAt<const bf16>(buffers, p.q) + (size_t(b) * p.kvHeads + h) * G * D;
  constexpr int kQPerThread = (kAttnMaxGroup * 256 + kTaskThreads - 1) /
                              kTaskThreads; // G * D <= 8 * 256
  float qv[(G * 256 + kTaskThreads - 1) / kTaskThreads];
  static_assert(sizeof(qv) / sizeof(float) <= kQPerThread, "q fits");
#pragma unroll
  for (int u = 0; u < int(sizeof(qv) / sizeof(float)); ++u) {
    const int i = threadIdx.x + u * kTaskThreads;
    qv[u] = i < G * D ? toFloat(q[i]) : 0.f;
  }
  const int len = bufferAt<const int32_t>(buffers, p.positions)[b] + 1;
  const int s0 = ch * p.chunkLen;
  const int s1 = min(min(s0 + p.chunkLen, len), p.maxSeq);
  // A position's row is D / 8 lanes of 8 columns; a warp covers 32 / (D / 8)
  // positions at once (D / 8 is a power of two dividing 32).
  const int rowLanes = D / 8, perWarp = 32 / rowLanes;
  const int col = (lane % rowLanes) * 8, sub = lane / rowLanes;
  const int slots = kTaskWarps * perWarp; // positions in flight per CTA

  // Blocks of up to kAttnBlock positions and 64 KB of keys, two buffers of
  // them (block j + 2 is copied while block j + 1 is in flight and block j
  // computes), fewer positions when the partial outputs of many lane groups
  // leave less room below the linear's weight ring (p.lowSmemBytes), which
  // the worker may be filling for its next task.
  const int fixedBytes =
      128 + G * D * 4 + 3 * kAttnMaxGroup * 4 + slots * G * D * 4 + 128;
  const int blockLen =
      min(min(kAttnBlock, 32768 / D),
          (p.lowSmemBytes - fixedBytes) / (G * 4 + 4 * D * 2));
  const int blocks = s1 > s0 ? (s1 - s0 + blockLen - 1) / blockLen : 0;

  // Shared memory: q [G][D] (scaled), scores [G][blockLen], per-head running
  // max / sum / block rescale, partial outputs [slots][G][D], then the two
  // buffers' keys and values [blockLen][D]. The barriers are the worker's
  // (TaskBarriers: keys and values of buffer 0, then of buffer 1).
  TaskBarriers &tb = taskBarriers();
  float *qs = reinterpret_cast<float *>(taskSmem() + 128);
  float *scores = qs + G * D;
  float *runMax = scores + G * blockLen;
  float *runSum = runMax + kAttnMaxGroup;
  float *rescale = runSum + kAttnMaxGroup;
  float *partial = rescale + kAttnMaxGroup;
  bf16 *kvS = reinterpret_cast<bf16 *>(
      (reinterpret_cast<uintptr_t>(partial + slots * G * D) + 127) / 128 * 128);
  const size_t headBase = (size_t(b) * p.kvHeads + h) * p.maxSeq;
  const bf16 *kRows = bufferAt<const bf16>(buffers, p.kCache) + headBase * D;
  const bf16 *vRows = bufferAt<const bf16>(buffers, p.vCache) + headBase * D;
  // Thread 0: the copies of block j into buffer j % 2.
  auto issue = [&](int j) {
    const int buf = j % 2, blk = s0 + j * blockLen;
    const uint32_t bytes = uint32_t(min(blockLen, s1 - blk) * D * 2);
    bf16 *kS = kvS + buf * 2 * blockLen * D;
    mbarrierArriveExpectTx(&tb.kv[2 * buf], bytes);
    bulkLoad(kS, kRows + size_t(blk) * D, bytes, &tb.kv[2 * buf]);
    mbarrierArriveExpectTx(&tb.kv[2 * buf + 1], bytes);
    bulkLoad(kS + blockLen * D, vRows + size_t(blk) * D, bytes,
             &tb.kv[2 * buf + 1]);
  };
  // The cache rows go first: they are the task's bytes.
  if (threadIdx.x == 0) {
    // This step's cache rows were appended by other CTAs (visible to this
    // CTA after the runtime's acquire and barrier); the bulk copies read
    // them through the async proxy.
    fenceProxyAsyncGlobal();
    for (int j = 0; j < min(blocks, 2); ++j)
      issue(j);
  }

#pragma unroll
  for (int u = 0; u < int(sizeof(qv) / sizeof(float)); ++u) {
    const int i = threadIdx.x + u * kTaskThreads;
    if (i < G * D)
      qs[i] = qv[u] * p.scale;
  }
  if (threadIdx.x < G) {
    runMax[threadIdx.x] = -INFINITY;
    runSum[threadIdx.x] = 0.f;
  }
  float acc[G][8];
#pragma unroll
  for (int g = 0; g < G; ++g)
#pragma unroll
    for (int e = 0; e < 8; ++e)
      acc[g][e] = 0.f;
  __syncthreads();

  const int slot = warp * perWarp + sub;
  // Bit b: parity of buffer b's barriers (its keys and values complete
  // together, once per block).
  uint32_t phase = tb.kvPhase;
  for (int j = 0; j < blocks; ++j) {
    const int buf = j % 2, blk = s0 + j * blockLen;
    const int n = min(blockLen, s1 - blk);
    const bf16 *kS = kvS + buf * 2 * blockLen * D;
    const bf16 *vS = kS + blockLen * D;
    const uint32_t par = (phase >> buf) & 1;
    mbarrierWait(&tb.kv[2 * buf], par);
    // Scores: the lanes of a slot each take 8 columns of its key row. The
    // trip count is the warp's, not the slot's, so that every lane reaches
    // the shuffles (a slot past the block's end scores nothing).
    // Four positions per slot at a time: their shuffle reductions are
    // independent.
    constexpr int kU = 4;
    for (int base = warp * perWarp; base < n; base += slots * kU) {
      float dot[kU][G];
#pragma unroll
      for (int u = 0; u < kU; ++u) {
        const int s = base + u * slots + sub;
        float kf[8] = {0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f};
        if (s < n)
          unpack8(*reinterpret_cast<const uint4 *>(kS + s * D + col), kf);
#pragma unroll
        for (int g = 0; g < G; ++g) {
          const float4 a = *reinterpret_cast<const float4 *>(qs + g * D + col);
          const float4 c =
              *reinterpret_cast<const float4 *>(qs + g * D + col + 4);
          dot[u][g] = a.x * kf[0] + a.y * kf[1] + a.z * kf[2] + a.w * kf[3] +
                      c.x * kf[4] + c.y * kf[5] + c.z * kf[6] + c.w * kf[7];
        }
      }
      for (int o = rowLanes / 2; o > 0; o >>= 1)
#pragma unroll
        for (int u = 0; u < kU; ++u)
#pragma unroll
          for (int g = 0; g < G; ++g)
            dot[u][g] += __shfl_xor_sync(0xffffffffu, dot[u][g], o);
#pragma unroll
      for (int u = 0; u < kU; ++u) {
        const int s = base + u * slots + sub;
        if (s < n && lane % rowLanes == 0)
#pragma unroll
          for (int g = 0; g < G; ++g)
            scores[g * blockLen + s] = dot[u][g];
      }
    }
    __syncthreads();
    // Online softmax: warp w updates heads w, w + warps, ...
    for (int g = warp; g < G; g += kTaskWarps) {
      float m = -INFINITY;
      for (int s = lane; s < n; s += 32)
        m = fmaxf(m, scores[g * blockLen + s]);
      m = warpMax(m);
      const float mNew = fmaxf(runMax[g], m);
      float sum = 0.f;
      for (int s = lane; s < n; s += 32) {
        const float e = __expf(scores[g * blockLen + s] - mNew);
        scores[g * blockLen + s] = e;
        sum += e;
      }
      sum = warpSum(sum);
      if (lane == 0) {
        const float r = __expf(runMax[g] - mNew); // 0 on the first block
        rescale[g] = r;
        runSum[g] = runSum[g] * r + sum;
        runMax[g] = mNew;
      }
    }
    __syncthreads();
    // P·V over the slot's positions.
#pragma unroll
    for (int g = 0; g < G; ++g) {
      const float r = rescale[g];
#pragma unroll
      for (int e = 0; e < 8; ++e)
        acc[g][e] *= r;
    }
    mbarrierWait(&tb.kv[2 * buf + 1], par);
#pragma unroll 4
    for (int s = slot; s < n; s += slots) {
      float vf[8];
      unpack8(*reinterpret_cast<const uint4 *>(vS + s * D + col), vf);
#pragma unroll
      for (int g = 0; g < G; ++g) {
        const float pg = scores[g * blockLen + s];
#pragma unroll
        for (int e = 0; e < 8; ++e)
          acc[g][e] = fmaf(pg, vf[e], acc[g][e]);
      }
    }
    // Scores and rescale are rewritten by the next block, this buffer by
    // block j + 2 (its copies are issued after every thread's reads).
    __syncthreads();
    phase ^= 1u << buf;
    if (threadIdx.x == 0 && j + 2 < blocks)
      issue(j + 2);
  }

  // Sum the slots' partial outputs.
#pragma unroll
  for (int g = 0; g < G; ++g)
#pragma unroll
    for (int e = 0; e < 8; ++e)
      partial[(slot * G + g) * D + col + e] = acc[g][e];
  __syncthreads();
  if (threadIdx.x == 0) // every thread has read the phase (the loop's start)
    tb.kvPhase = phase;
  for (int i = threadIdx.x; i < G * D; i += kTaskThreads) {
    const int g = i / D;
    float o = 0.f;
    for (int w = 0; w < slots; ++w)
      o += partial[w * G * D + i];
    const float l = runSum[g];
    const float out = l > 0.f ? o / l : 0.f;
    if (p.chunks == 1) {
      bufferAt<bf16>(buffers, p.out)[(size_t(b) * p.kvHeads + h) * G * D + i] =
          toBf16(out);
    } else {
      const size_t part = (size_t(b) * p.kvHeads + h) * p.chunks + ch;
      bufferAt<float>(buffers, p.partOut)[part * G * D + i] = out;
      if (i % D == 0)
        bufferAt<float>(buffers, p.partLse)[part * G + g] =
            l > 0.f ? runMax[g] + logf(l) : -INFINITY;
    }
  }
}

__device__ inline void decodeAttentionTask(const DecodeAttentionParams &p,
                                           void *const *buffers,
                                           uint32_t tile) {
  switch (p.group) {
  case 1:
    return decodeAttentionGroup<1>(p, buffers, tile);
  case 2:
    return decodeAttentionGroup<2>(p, buffers, tile);
  case 4:
    return decodeAttentionGroup<4>(p, buffers, tile);
  default:
    return decodeAttentionGroup<8>(p, buffers, tile);
  }
}

/// Tile (b, h): out = Σ_c exp(lse_c - m) o_c / Σ_c exp(lse_c - m). The
/// chunks' weights are computed once per head in shared memory, so that each
/// output element's loads of the chunks' partial outputs are independent.
__device__ inline void attentionMergeTask(const AttentionMergeParams &p,
                                          void *const *buffers, uint32_t tile) {
  const int G = p.group, D = p.headDim, C = p.chunks;
  const size_t part0 = size_t(tile) * C;
  const float *lse = bufferAt<const float>(buffers, p.partLse);
  const float *po = bufferAt<const float>(buffers, p.partOut);
  bf16 *out = bufferAt<bf16>(buffers, p.out) + size_t(tile) * G * D;
  float *weight = reinterpret_cast<float *>(taskSmem()); // [C][G]
  for (int k = threadIdx.x; k < C * G; k += kTaskThreads)
    weight[k] = lse[part0 * G + k];
  __syncthreads();
  if (threadIdx.x < G) {
    const int g = threadIdx.x;
    float m = -INFINITY;
    for (int c = 0; c < C; ++c)
      m = fmaxf(m, weight[c * G + g]);
    float den = 0.f;
    for (int c = 0; c < C; ++c) {
      const float l = weight[c * G + g];
      den += l == -INFINITY ? 0.f : __expf(l - m);
    }
    for (int c = 0; c < C; ++c) {
      const float l = weight[c * G + g];
      weight[c * G + g] = l == -INFINITY ? 0.f : __expf(l - m) / den;
    }
  }
  __syncthreads();
  for (int i = threadIdx.x; i < G * D; i += kTaskThreads) {
    const int g = i / D;
    float o = 0.f;
#pragma unroll 4
    for (int c = 0; c < C; ++c)
      o = fmaf(weight[c * G + g], po[(part0 + c) * G * D + i], o);
    out[i] = toBf16(o);
  }
}

} // namespace tawa::device::mega
