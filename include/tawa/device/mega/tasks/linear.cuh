// The linear task (RmsNormLinear, LinearResidual): one tile of output columns
// of y = norm(x) · Wᵀ for a tile of batch rows, over all of K. At decode
// batch sizes a linear is bound by reading W, and one SM must keep tens of
// kilobytes in flight to stream at its share of the bandwidth: each warp owns
// a ring of two shared-memory slots that one lane fills with bulk copies
// (cp.async.bulk, completing on the slot's mbarrier) while the warp
// multiplies the other slot's weight rows with the (normalized) input rows,
// which sit in shared memory. Numerics follow the bf16
// reference: the normalized input is rounded to bf16 before the weight
// multiplies it, products accumulate in float, the result is rounded to bf16
// before the residual is added.
#pragma once
#include "tawa/device/mega/tasks/common.cuh"
#include "tawa/device/tma.cuh"

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

/// Slots of each warp's weight ring, 32 KB per warp in all.
#ifndef TAWA_MEGA_LINEAR_SLOTS
#define TAWA_MEGA_LINEAR_SLOTS 2
#endif
constexpr int kLinearSlots = TAWA_MEGA_LINEAR_SLOTS;

/// How a K pass of a tile is cut into ring stages: a stage is `rowsPer`
/// consecutive weight rows over the pass's K range, or, when one row does
/// not fit a slot, one row's `pieceElems`-element piece.
struct StagePlan {
  int rowsPer, pieces, pieceElems, count;

  __device__ StagePlan(int vcols, int klen, int slotBytes) {
    if (klen * 2 <= slotBytes) {
      rowsPer = slotBytes / (klen * 2);
      pieces = 1;
      pieceElems = klen;
    } else {
      rowsPer = 1;
      pieceElems = slotBytes / 2;
      pieces = (klen + pieceElems - 1) / pieceElems;
    }
    count = (vcols + rowsPer - 1) / rowsPer * pieces;
  }
};

/// Lane 0 of a warp: the bulk copies of stage `i` into `slot`, completing on
/// `bar`.
__device__ inline void issueStage(const LinearTile &t, const StagePlan &sp,
                                  int i, int k0, int klen, bf16 *slot,
                                  MBarrier *bar) {
  const int v0 = (i / sp.pieces) * sp.rowsPer;
  const int nr = min(sp.rowsPer, t.vcols - v0);
  const int ks = (i % sp.pieces) * sp.pieceElems;
  const int kl = min(sp.pieceElems, klen - ks);
  mbarrierArriveExpectTx(bar, uint32_t(nr * kl * 2));
  for (int r = 0; r < nr; ++r)
    bulkLoad(slot + r * kl, t.weightRow(v0 + r) + k0 + ks, uint32_t(kl * 2),
             bar);
}

/// Lane 0 of each warp: the first stages of a K pass, one per ring slot.
__device__ inline void issueFirstStages(const LinearTile &t, int k0, int klen,
                                        bf16 *ring, int slotBytes,
                                        MBarrier *bars) {
  const int warp = threadIdx.x / 32;
  if (threadIdx.x % 32 != 0)
    return;
  const StagePlan sp(t.vcols, klen, slotBytes);
  const int slotElems = slotBytes / 2;
  for (int m = 0; m < kLinearSlots; ++m) {
    const int i = warp + m * kTaskWarps;
    if (i < sp.count)
      issueStage(t, sp, i, k0, klen,
                 ring + (warp * kLinearSlots + m) * slotElems,
                 bars + warp * kLinearSlots + m);
  }
}

/// One K pass [k0, k0 + klen) of the tile: warp w takes stages w, w + warps,
/// ...; for each weight row of a stage, every group of RB input rows is one
/// dot product per row (lanes take 8 elements at a time, U such steps in
/// flight, then a warp sum), added into accS[row][vcol] (a row may be split
/// over pieces and warps). `parity` holds the warp's slot phases across
/// passes.
template <int RB, int U>
__device__ void linearStream(const LinearTile &t, const bf16 *xs, int ldx,
                             int k0, int klen, float *accS, bf16 *ring,
                             int slotBytes, MBarrier *bars, uint32_t &parity) {
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const StagePlan sp(t.vcols, klen, slotBytes);
  const int slotElems = slotBytes / 2;
  bf16 *mySlots = ring + warp * kLinearSlots * slotElems;
  MBarrier *myBars = bars + warp * kLinearSlots;
  // The pass's first stages were issued before its input rows were staged
  // (issueFirstStages).
  for (int m = 0;; ++m) {
    const int i = warp + m * kTaskWarps;
    if (i >= sp.count)
      break;
    const int s = m % kLinearSlots;
    mbarrierWait(myBars + s, (parity >> s) & 1);
    parity ^= 1u << s;
    const bf16 *w = mySlots + s * slotElems;
    const int v0 = (i / sp.pieces) * sp.rowsPer;
    const int nr = min(sp.rowsPer, t.vcols - v0);
    const int ks = (i % sp.pieces) * sp.pieceElems;
    const int kl = min(sp.pieceElems, klen - ks);
    for (int r = 0; r < nr; ++r) {
      const bf16 *wr = w + r * kl;
      for (int rb = 0; rb < t.rows; rb += RB) {
        // U steps at a time, each into its own accumulators: one warp per
        // scheduler has no other warp to hide shared-memory latency and
        // dependent FMAs behind.
        float acc[U][RB];
#pragma unroll
        for (int u = 0; u < U; ++u)
#pragma unroll
          for (int b = 0; b < RB; ++b)
            acc[u][b] = 0.f;
        for (int e0 = lane * 8; e0 < kl; e0 += 256 * U) {
          uint4 wv[U];
#pragma unroll
          for (int u = 0; u < U; ++u)
            if (e0 + 256 * u < kl)
              wv[u] = *reinterpret_cast<const uint4 *>(wr + e0 + 256 * u);
#pragma unroll
          for (int u = 0; u < U; ++u) {
            if (e0 + 256 * u < kl) {
              float wf[8];
              unpack8(wv[u], wf);
#pragma unroll
              for (int b = 0; b < RB; ++b) {
                if (rb + b < t.rows) {
                  float xf[8];
                  unpack8(*reinterpret_cast<const uint4 *>(xs + (rb + b) * ldx +
                                                           ks + e0 + 256 * u),
                          xf);
#pragma unroll
                  for (int q = 0; q < 8; ++q)
                    acc[u][b] = fmaf(wf[q], xf[q], acc[u][b]);
                }
              }
            }
          }
        }
#pragma unroll
        for (int b = 0; b < RB; ++b) {
          float part = acc[0][b];
#pragma unroll
          for (int u = 1; u < U; ++u)
            part += acc[u][b];
          const float sum = warpSum(part);
          if (lane == 0 && rb + b < t.rows)
            atomicAdd(&accS[(rb + b) * t.vcols + v0 + r], sum);
        }
      }
    }
    // Every lane has read the slot before lane 0 refills it.
    __syncwarp();
    const int next = i + kLinearSlots * kTaskWarps;
    if (lane == 0 && next < sp.count)
      issueStage(t, sp, next, k0, klen, mySlots + s * slotElems, myBars + s);
  }
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

  // Shared memory: row scales and the ring's barriers in the reserve, then
  // the float accumulator, the staged input rows and the weight ring (what
  // is left, as 2 slots per warp).
  unsigned char *smem = taskSmem();
  float *rowScale = reinterpret_cast<float *>(smem);
  MBarrier *bars = reinterpret_cast<MBarrier *>(smem + 512);
  float *accS =
      reinterpret_cast<float *>(smem + tawa::mega::kLinearSmemReserve);
  bf16 *xs =
      reinterpret_cast<bf16 *>(reinterpret_cast<unsigned char *>(accS) +
                               tawa::mega::alignUp128(t.rows * t.vcols * 4));
  bf16 *ring =
      reinterpret_cast<bf16 *>(reinterpret_cast<unsigned char *>(xs) +
                               tawa::mega::alignUp128(t.rows * kc * 2));
  const int ringBytes = tawa::mega::kTaskSmemBytes -
                        int(reinterpret_cast<unsigned char *>(ring) - smem);
  const int slotBytes =
      min(32 * 1024 / kLinearSlots,
          ringBytes / (kTaskWarps * kLinearSlots) / 128 * 128);
  // The weights do not depend on the input: their first stages are in
  // flight while the input rows are normalized and staged.
  if (threadIdx.x == 0) {
    for (int b = 0; b < kTaskWarps * kLinearSlots; ++b)
      mbarrierInit(bars + b, 1);
    fenceMBarrierInit();
  }
  __syncthreads();
  issueFirstStages(t, 0, min(kc, p.k), ring, slotBytes, bars);
  for (int i = threadIdx.x; i < t.rows * t.vcols; i += kTaskThreads)
    accS[i] = 0.f;
  const bf16 *x = bufferAt<const bf16>(buffers, p.in);
  const bool norm = p.normWeight != tawa::mega::kNoBuffer;
  const int lane = threadIdx.x % 32;
  if (norm) {
    // Sum of squares of each whole row (the reference's RMS, in float), all
    // threads over each row.
    for (int r = threadIdx.x; r < t.rows; r += kTaskThreads)
      rowScale[r] = 0.f;
    __syncthreads();
    for (int r = 0; r < t.rows; ++r) {
      const bf16 *row = x + size_t(t.row0 + r) * p.k;
      float s = 0.f;
#pragma unroll 4
      for (int j = threadIdx.x * 8; j < p.k; j += kTaskThreads * 8) {
        float f[8];
        unpack8(*reinterpret_cast<const uint4 *>(row + j), f);
#pragma unroll
        for (int i = 0; i < 8; ++i)
          s = fmaf(f[i], f[i], s);
      }
      s = warpSum(s);
      if (lane == 0)
        atomicAdd(&rowScale[r], s);
    }
    __syncthreads();
    for (int r = threadIdx.x; r < t.rows; r += kTaskThreads)
      rowScale[r] = rsqrtf(rowScale[r] / float(p.k) + p.eps);
  }
  const bf16 *nw = norm ? bufferAt<const bf16>(buffers, p.normWeight) : nullptr;
  uint32_t parity = 0;
  for (int k0 = 0; k0 < p.k; k0 += kc) {
    const int klen = min(kc, p.k - k0);
    const int vecs = klen / 8;
    // Row scales, barriers and the accumulator are ready; the previous
    // pass's input rows are consumed.
    __syncthreads();
    if (k0 > 0)
      issueFirstStages(t, k0, klen, ring, slotBytes, bars);
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
      linearStream<1, 4>(t, xs, klen, k0, klen, accS, ring, slotBytes, bars,
                         parity);
    else if (t.rows <= 2)
      linearStream<2, 4>(t, xs, klen, k0, klen, accS, ring, slotBytes, bars,
                         parity);
    else if (t.rows <= 4)
      linearStream<4, 2>(t, xs, klen, k0, klen, accS, ring, slotBytes, bars,
                         parity);
    else
      linearStream<8, 1>(t, xs, klen, k0, klen, accS, ring, slotBytes, bars,
                         parity);
  }
  __syncthreads();
  for (int i = threadIdx.x; i < t.rows * t.vcols; i += kTaskThreads)
    t.store(i / t.vcols, i % t.vcols, accS[i]);
  // Every wait is over: the barriers' memory goes back to the next task.
  if (threadIdx.x == 0)
    for (int b = 0; b < kTaskWarps * kLinearSlots; ++b)
      mbarrierInval(bars + b);
}

} // namespace tawa::device::mega
