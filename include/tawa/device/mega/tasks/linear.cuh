// The linear task (RmsNormLinear, LinearResidual): one tile of output columns
// of y = norm(x) · Wᵀ for a tile of batch rows, over all of K. At decode
// batch sizes a linear is bound by reading W, so the tile streams each weight
// row once with 16-byte loads, several rows per warp in flight, while the
// (normalized) input rows sit in shared memory. Numerics follow the bf16
// reference: the normalized input is rounded to bf16 before the weight
// multiplies it, products accumulate in float, the result is rounded to bf16
// before the residual is added.
#pragma once
#include "tawa/device/mega/tasks/common.cuh"

namespace tawa::device::mega {

using tawa::mega::LinearParams;

struct LinearTile {
  const LinearParams &p;
  void *const *buffers;
  int row0, rows; ///< batch rows of the tile
  int col0, cols; ///< output columns of the tile
  int vcols;      ///< weight rows it reads: cols, or 2 cols when paired

  /// Weight row of virtual column v (gate rows, then up rows, when paired).
  __device__ const bf16 *weightRow(int v) const {
    if (p.paired) {
      int half = v >= cols;
      int c = col0 + v - half * cols;
      return bufferAt<const bf16>(buffers, half ? p.w1 : p.w0) +
             size_t(c) * p.k;
    }
    int c = col0 + v;
    if (c < p.seg1)
      return bufferAt<const bf16>(buffers, p.w0) + size_t(c) * p.k;
    if (c < p.seg2)
      return bufferAt<const bf16>(buffers, p.w1) + size_t(c - p.seg1) * p.k;
    return bufferAt<const bf16>(buffers, p.w2) + size_t(c - p.seg2) * p.k;
  }

  /// Stores the float sum of tile row r, virtual column v.
  __device__ void store(int r, int v, float acc) const {
    const int b = row0 + r;
    if (p.paired) {
      int half = v >= cols;
      int c = col0 + v - half * cols;
      bufferAt<bf16>(buffers, p.out)[(size_t(b) * 2 + half) * p.n + c] =
          toBf16(acc);
      return;
    }
    const size_t at = size_t(b) * p.n + col0 + v;
    if (p.outF32) {
      bufferAt<float>(buffers, p.out)[at] = roundBf16(acc);
    } else if (p.residual != tawa::mega::kNoBuffer) {
      float res = toFloat(bufferAt<const bf16>(buffers, p.residual)[at]);
      bufferAt<bf16>(buffers, p.out)[at] = toBf16(roundBf16(acc) + res);
    } else {
      bufferAt<bf16>(buffers, p.out)[at] = toBf16(acc);
    }
  }
};

/// One pass over K range [k0, k0 + klen) for rows [rowBase, rowBase + RB)
/// (those below `rows`): each warp takes CP weight rows at a time, each lane
/// 8 elements of each at a time, the next 8 loaded before the current ones
/// are used. Sums go to `accS` ([rows][vcols]) or, with one pass over K,
/// straight to the output.
template <int RB, int CP>
__device__ void linearPass(const LinearTile &t, const bf16 *xs, int ldx, int k0,
                           int klen, int rowBase, float *accS) {
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  for (int vb = warp * CP; vb < t.vcols; vb += kTaskWarps * CP) {
    const bf16 *wr[CP];
#pragma unroll
    for (int c = 0; c < CP; ++c)
      wr[c] = t.weightRow(vb + c < t.vcols ? vb + c : vb) + k0;
    float acc[RB][CP];
#pragma unroll
    for (int r = 0; r < RB; ++r)
#pragma unroll
      for (int c = 0; c < CP; ++c)
        acc[r][c] = 0.f;
    uint4 cur[CP], nxt[CP];
    int j = lane * 8;
    if (j < klen) {
#pragma unroll
      for (int c = 0; c < CP; ++c)
        cur[c] = loadWeight16(wr[c] + j);
    }
    // The loads of step j + 256 are issued before step j's arithmetic: CP
    // 16-byte loads per lane in flight on top of those being used.
#pragma unroll 1
    for (; j < klen; j += 256) {
      const int jn = j + 256;
      if (jn < klen) {
#pragma unroll
        for (int c = 0; c < CP; ++c)
          nxt[c] = loadWeight16(wr[c] + jn);
      }
      float wf[CP][8];
#pragma unroll
      for (int c = 0; c < CP; ++c)
        unpack8(cur[c], wf[c]);
#pragma unroll
      for (int r = 0; r < RB; ++r) {
        if (rowBase + r < t.rows) {
          float xf[8];
          unpack8(
              *reinterpret_cast<const uint4 *>(xs + (rowBase + r) * ldx + j),
              xf);
#pragma unroll
          for (int c = 0; c < CP; ++c)
#pragma unroll
            for (int i = 0; i < 8; ++i)
              acc[r][c] = fmaf(wf[c][i], xf[i], acc[r][c]);
        }
      }
#pragma unroll
      for (int c = 0; c < CP; ++c)
        cur[c] = nxt[c];
    }
#pragma unroll
    for (int r = 0; r < RB; ++r)
#pragma unroll
      for (int c = 0; c < CP; ++c) {
        float s = warpSum(acc[r][c]);
        const int v = vb + c, row = rowBase + r;
        if (lane == 0 && v < t.vcols && row < t.rows) {
          if (accS)
            accS[row * t.vcols + v] += s;
          else
            t.store(row, v, s);
        }
      }
  }
}

template <int RB, int CP>
__device__ void linearRows(const LinearTile &t, const bf16 *xs, int ldx, int k0,
                           int klen, float *accS) {
  for (int rowBase = 0; rowBase < t.rows; rowBase += RB)
    linearPass<RB, CP>(t, xs, ldx, k0, klen, rowBase, accS);
}

__device__ inline void linearTask(const LinearParams &p, void *const *buffers,
                                  uint32_t tile) {
  const int mt = tile / p.colTiles, nt = tile % p.colTiles;
  LinearTile t{p, buffers, 0, 0, 0, 0, 0};
  t.row0 = mt * p.tileM;
  t.rows = min(p.tileM, p.m - t.row0);
  t.col0 = nt * p.tileN;
  t.cols = min(p.tileN, p.n - t.col0);
  t.vcols = p.paired ? 2 * t.cols : t.cols;
  const int kc =
      tawa::mega::linearChunk(p.tileM, p.paired ? 2 * p.tileN : p.tileN, p.k);
  const bool chunked = kc < p.k;

  // Shared memory: row scales in the reserve, then the float accumulator
  // (only when K takes several passes), then the staged input rows.
  unsigned char *smem = taskSmem();
  float *rowScale = reinterpret_cast<float *>(smem);
  float *accS =
      chunked ? reinterpret_cast<float *>(smem + tawa::mega::kLinearSmemReserve)
              : nullptr;
  bf16 *xs = reinterpret_cast<bf16 *>(
      smem + tawa::mega::kLinearSmemReserve +
      (chunked ? (t.rows * t.vcols * 4 + 127) / 128 * 128 : 0));
  if (chunked)
    for (int i = threadIdx.x; i < t.rows * t.vcols; i += kTaskThreads)
      accS[i] = 0.f;
  const bf16 *x = bufferAt<const bf16>(buffers, p.in);
  const bool norm = p.normWeight != tawa::mega::kNoBuffer;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (norm) {
    // RMS of each whole row, as the reference computes it in float.
    for (int r = warp; r < t.rows; r += kTaskWarps) {
      const bf16 *row = x + size_t(t.row0 + r) * p.k;
      float s = 0.f;
      for (int j = lane * 8; j < p.k; j += 256) {
        float f[8];
        unpack8(*reinterpret_cast<const uint4 *>(row + j), f);
#pragma unroll
        for (int i = 0; i < 8; ++i)
          s = fmaf(f[i], f[i], s);
      }
      s = warpSum(s);
      if (lane == 0)
        rowScale[r] = rsqrtf(s / float(p.k) + p.eps);
    }
  }
  const bf16 *nw = norm ? bufferAt<const bf16>(buffers, p.normWeight) : nullptr;
  for (int k0 = 0; k0 < p.k; k0 += kc) {
    const int klen = min(kc, p.k - k0);
    const int vecs = klen / 8;
    __syncthreads(); // row scales written; the previous pass's xs consumed
    for (int i = threadIdx.x; i < t.rows * vecs; i += kTaskThreads) {
      const int r = i / vecs, j = k0 + (i % vecs) * 8;
      uint4 v =
          *reinterpret_cast<const uint4 *>(x + size_t(t.row0 + r) * p.k + j);
      if (norm) {
        float f[8], w[8];
        unpack8(v, f);
        unpack8(loadWeight16(nw + j), w);
        __align__(16) bf16 o[8];
#pragma unroll
        for (int e = 0; e < 8; ++e)
          o[e] = toBf16(w[e] * roundBf16(f[e] * rowScale[r]));
        v = *reinterpret_cast<const uint4 *>(o);
      }
      *reinterpret_cast<uint4 *>(xs + r * klen + (j - k0)) = v;
    }
    __syncthreads();
    if (t.rows <= 1)
      linearRows<1, 8>(t, xs, klen, k0, klen, accS);
    else if (t.rows <= 2)
      linearRows<2, 8>(t, xs, klen, k0, klen, accS);
    else if (t.rows <= 4)
      linearRows<4, 4>(t, xs, klen, k0, klen, accS);
    else if (t.rows <= 8)
      linearRows<8, 4>(t, xs, klen, k0, klen, accS);
    else
      linearRows<16, 2>(t, xs, klen, k0, klen, accS);
  }
  if (chunked) {
    __syncthreads();
    for (int i = threadIdx.x; i < t.rows * t.vcols; i += kTaskThreads)
      t.store(i / t.vcols, i % t.vcols, accS[i]);
  }
}

} // namespace tawa::device::mega
