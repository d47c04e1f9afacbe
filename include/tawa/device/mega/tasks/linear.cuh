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
// before the residual is added. The gate/up tile ("paired": it reads the gate
// and the up rows of its columns) ends with SiLU·mul.
#pragma once
#include "tawa/device/mega/tasks/common.cuh"
#include "tawa/device/mma.cuh"
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

  /// Stores the float sum of tile row r, virtual column v. Paired, `up` is
  /// the sum of up column v (v < cols; gate is acc): the output is
  /// bf16(bf16(silu(bf16(gate))) · bf16(up)), the reference's F.silu(gate) *
  /// up on the bf16 projections.
  __device__ void store(int r, int v, float acc, float up = 0.f) const {
    const int b = row0 + r;
    if (p.paired) {
      const float g = roundBf16(acc), u = roundBf16(up);
      const float silu = roundBf16(g / (1.f + expf(-g)));
      bufferAt<bf16>(buffers, p.out)[size_t(b) * p.n + col0 + v] =
          toBf16(silu * u);
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

/// Weight rows of a stage: the M of the tensor-core product.
constexpr int kStageRows = 16;

/// How a K pass of a tile is cut into ring stages: the weight rows form
/// blocks of 16 (the last may be short), K is cut into `pieces` of
/// `pieceElems` (a multiple of 32); stage i is piece i % pieces of block
/// i / pieces. A stage's rows sit `pitch` elements apart in its slot: a
/// pitch of 32 mod 64 elements puts rows g and g + 1 in opposite halves of
/// the banks, so the 16-byte operand loads of one 8-lane phase do not
/// conflict.
struct StagePlan {
  int blocks, pieces, pieceElems, pitch, count;

  __device__ StagePlan(int vcols, int klen, int slotBytes) {
    blocks = (vcols + kStageRows - 1) / kStageRows;
    const int maxPiece = (slotBytes / (kStageRows * 2) - 32) / 32 * 32;
    const int k32 = (klen + 31) / 32 * 32;
    pieces = (k32 + maxPiece - 1) / maxPiece;
    pieceElems = ((k32 + pieces - 1) / pieces + 31) / 32 * 32;
    pitch = pieceElems % 64 == 0 ? pieceElems + 32 : pieceElems;
    count = blocks * pieces;
  }
};

/// One warp: the bulk copies of stage `i` into `slot`, completing on `bar`
/// (lane 0 arms the barrier, lane r copies weight row r of the block).
__device__ inline void issueStage(const LinearTile &t, const StagePlan &sp,
                                  int i, int k0, int klen, bf16 *slot,
                                  MBarrier *bar) {
  const int lane = threadIdx.x % 32;
  const int v0 = (i / sp.pieces) * kStageRows;
  const int nr = min(kStageRows, t.vcols - v0);
  const int ks = (i % sp.pieces) * sp.pieceElems;
  const int kl = min(sp.pieceElems, klen - ks);
  if (lane == 0)
    mbarrierArriveExpectTx(bar, uint32_t(nr * kl * 2));
  __syncwarp();
  // Each weight is read once per step: first out of L2.
  if (lane < nr)
    bulkLoad(slot + lane * sp.pitch, t.weightRow(v0 + lane) + k0 + ks,
             uint32_t(kl * 2), bar, l2EvictFirstPolicy());
}

/// Each warp: the first stages of a K pass, one per ring slot.
__device__ inline void issueFirstStages(const LinearTile &t, int k0, int klen,
                                        bf16 *ring, int slotBytes,
                                        MBarrier *bars) {
  const int warp = threadIdx.x / 32;
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

/// 16 bytes of shared memory, or zeros where `in` is false.
__device__ __forceinline__ uint4 loadOrZero(const bf16 *p, bool in) {
  return in ? *reinterpret_cast<const uint4 *>(p) : make_uint4(0, 0, 0, 0);
}

/// One K pass [k0, k0 + klen) of the tile on the tensor cores: warp w takes
/// stages w, w + warps, ...; a stage's 16 weight rows times the tile's
/// input rows (NB blocks of 8) is a run of m16n8k16 products. K is
/// permuted the same way in both operands, which a dot product allows: lane
/// (g, t) loads 8 consecutive elements of weight rows g and g + 8 and of
/// input row g, and its first product takes elements 0–3, its second 4–7,
/// so every operand is one 16-byte load and no ldmatrix is needed. U such
/// 32-element steps are in flight, into two accumulators. A warp's sums
/// go to the float accumulator accS[row][vcol] (atomically: a block's
/// pieces may be on several warps) when its stages move to another block.
/// `parity` holds the warp's slot phases across passes.
template <int NB, int U>
__device__ void linearStream(const LinearTile &t, const bf16 *xs, int ldx,
                             int k0, int klen, float *accS, bf16 *ring,
                             int slotBytes, MBarrier *bars, uint32_t &parity) {
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int g = lane / 4, tq = lane % 4;
  const StagePlan sp(t.vcols, klen, slotBytes);
  const int slotElems = slotBytes / 2;
  bf16 *mySlots = ring + warp * kLinearSlots * slotElems;
  MBarrier *myBars = bars + warp * kLinearSlots;
  bool xin[NB];
#pragma unroll
  for (int nb = 0; nb < NB; ++nb)
    xin[nb] = nb * 8 + g < t.rows;
  float acc[2][NB][4];
  auto clear = [&] {
#pragma unroll
    for (int a = 0; a < 2; ++a)
#pragma unroll
      for (int nb = 0; nb < NB; ++nb)
#pragma unroll
        for (int j = 0; j < 4; ++j)
          acc[a][nb][j] = 0.f;
  };
  // D[m][n] of product nb: lane (g, t) holds m = g, g + 8 and n = 2t, 2t + 1.
  auto flush = [&](int block) {
#pragma unroll
    for (int nb = 0; nb < NB; ++nb)
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const int v = block * kStageRows + g + (j / 2) * 8;
        const int r = nb * 8 + 2 * tq + j % 2;
        if (v < t.vcols && r < t.rows)
          atomicAdd(&accS[r * t.vcols + v], acc[0][nb][j] + acc[1][nb][j]);
      }
  };
  clear();
  int held = -1;
  // The pass's first stages were issued before its input rows were staged
  // (issueFirstStages).
  for (int m = 0;; ++m) {
    const int i = warp + m * kTaskWarps;
    if (i >= sp.count)
      break;
    TAWA_MEGA_STREAM_MARK(0);
    const int s = m % kLinearSlots;
    const int block = i / sp.pieces;
    if (block != held) {
      if (held >= 0) {
        flush(held);
        clear();
      }
      held = block;
    }
    const int nr = min(kStageRows, t.vcols - block * kStageRows);
    const int ks = (i % sp.pieces) * sp.pieceElems;
    const int kl = min(sp.pieceElems, klen - ks);
    const bf16 *w = mySlots + s * slotElems;
    const bf16 *wLo = w + g * sp.pitch, *wHi = w + (g + 8) * sp.pitch;
    const bool lo = g < nr, hi = g + 8 < nr;
    mbarrierWait(myBars + s, (parity >> s) & 1);
    parity ^= 1u << s;
    TAWA_MEGA_STREAM_MARK(1);
    // The trip count is the warp's: mma.sync needs every lane.
    for (int c = 0; c < kl; c += 32 * U) {
      uint4 a[U][2], b[U][NB];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const int kk = c + 32 * u + tq * 8;
        const bool in = kk < kl;
        a[u][0] = loadOrZero(wLo + kk, in && lo);
        a[u][1] = loadOrZero(wHi + kk, in && hi);
#pragma unroll
        for (int nb = 0; nb < NB; ++nb)
          b[u][nb] = loadOrZero(xs + (nb * 8 + g) * ldx + ks + kk,
                                in && xin[nb]);
      }
#pragma unroll
      for (int u = 0; u < U; ++u)
#pragma unroll
        for (int nb = 0; nb < NB; ++nb) {
          mmaBf16m16n8k16(acc[u % 2][nb], a[u][0].x, a[u][1].x, a[u][0].y,
                          a[u][1].y, b[u][nb].x, b[u][nb].y);
          mmaBf16m16n8k16(acc[u % 2][nb], a[u][0].z, a[u][1].z, a[u][0].w,
                          a[u][1].w, b[u][nb].z, b[u][nb].w);
        }
    }
    // Every lane has read the slot before it is refilled.
    __syncwarp();
    TAWA_MEGA_STREAM_MARK(2);
    const int next = i + kLinearSlots * kTaskWarps;
    if (next < sp.count)
      issueStage(t, sp, next, k0, klen, mySlots + s * slotElems, myBars + s);
    TAWA_MEGA_STREAM_MARK(3);
  }
  if (held >= 0)
    flush(held);
}

/// Where a linear tile's data sits in shared memory: row scales, the float
/// accumulator and the staged input rows at the bottom; the weight ring (2
/// slots per warp; p.ringBytes, the plan's) at the top, below the tasks'
/// barriers, where it may be filled before the task runs (linearPrefetch).
struct LinearSmem {
  LinearTile t;
  int kc, ldx, slotBytes;
  float *rowScale, *accS;
  bf16 *xs, *ring;
  MBarrier *bars, *inBar;

  __device__ LinearSmem(const LinearParams &p, void *const *buffers,
                        uint32_t tile)
      : t{p, buffers, 0, 0, 0, 0, 0} {
    const int mt = tile / p.colTiles, nt = tile % p.colTiles;
    t.row0 = mt * p.tileM;
    t.rows = min(p.tileM, p.m - t.row0);
    t.col0 = nt * p.tileN;
    t.cols = min(p.tileN, p.n - t.col0);
    t.vcols = p.paired ? 2 * t.cols : t.cols;
    kc = tawa::mega::linearChunk(p.tileM, p.paired ? 2 * p.tileN : p.tileN,
                                 p.k);
    ldx = tawa::mega::linearInputPitch(kc);
    unsigned char *smem = taskSmem();
    rowScale = reinterpret_cast<float *>(smem);
    accS = reinterpret_cast<float *>(smem + tawa::mega::kLinearSmemReserve);
    xs = reinterpret_cast<bf16 *>(reinterpret_cast<unsigned char *>(accS) +
                                  tawa::mega::alignUp128(t.rows * t.vcols * 4));
    bars = taskBarriers().ring;
    inBar = &taskBarriers().input;
    ring = reinterpret_cast<bf16 *>(smem +
                                    tawa::mega::taskLowSmemBytes(p.ringBytes));
    // A slot holds 16 weight rows of a piece of K, padded (StagePlan).
    slotBytes = p.ringBytes / (kTaskWarps * kLinearSlots) / 128 * 128;
  }
};

/// The whole CTA: issues the first weight stages of the tile's first pass
/// (on the worker's ring barriers, TaskBarriers). The weights do not depend on the task's
/// inputs, so the worker calls this as soon as it knows its next task, and
/// the copies are in flight while it waits for the inputs (and runs
/// just-in-time tasks, which keep below the ring).
__device__ inline void issueFirstPassStages(const LinearSmem &m) {
  issueFirstStages(m.t, 0, min(m.kc, m.t.p.k), m.ring, m.slotBytes, m.bars);
}
__device__ inline void linearPrefetch(const LinearParams &p,
                                      void *const *buffers, uint32_t tile) {
  issueFirstPassStages(LinearSmem(p, buffers, tile));
}

/// Each warp: sums of squares of the tile's rows, `len` elements from
/// `rowAt(r)`, added to rowScale[r] (zeroed before). Warps take (row, part)
/// pairs so that a small batch still uses every warp; each lane keeps
/// several 16-byte loads in flight.
template <typename RowFn>
__device__ void addRowSquares(int rows, int len, RowFn rowAt,
                              float *rowScale) {
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int parts = max(1, kTaskWarps / rows);
  for (int it = warp; it < rows * parts; it += kTaskWarps) {
    const int r = it / parts, part = it % parts;
    const bf16 *row = rowAt(r);
    float s = 0.f;
#pragma unroll 8
    for (int j = (part * 32 + lane) * 8; j < len; j += parts * 256) {
      float f[8];
      unpack8(*reinterpret_cast<const uint4 *>(row + j), f);
#pragma unroll
      for (int e = 0; e < 8; ++e)
        s = fmaf(f[e], f[e], s);
    }
    s = warpSum(s);
    if (lane == 0)
      atomicAdd(&rowScale[r], s);
  }
}

/// `prefetched`: linearPrefetch ran for this tile since the previous task
/// of this kind ended.
__device__ inline void linearTask(const LinearParams &p, void *const *buffers,
                                  uint32_t tile, bool prefetched) {
  const LinearSmem m(p, buffers, tile);
  if (!prefetched)
    issueFirstPassStages(m);
  const LinearTile &t = m.t;
  const int kc = m.kc, ldx = m.ldx, slotBytes = m.slotBytes;
  float *rowScale = m.rowScale, *accS = m.accS;
  bf16 *xs = m.xs, *ring = m.ring;
  MBarrier *bars = m.bars, *inBar = m.inBar;
  // The input rows of a pass are bulk-copied too (completing on `inBar`),
  // all at once, while the weights' first stages are in flight.
  for (int i = threadIdx.x; i < t.rows * t.vcols; i += kTaskThreads)
    accS[i] = 0.f;
  const bf16 *x = bufferAt<const bf16>(buffers, p.in);
  const bool norm = p.normWeight != tawa::mega::kNoBuffer;
  const bool onePass = kc >= p.k;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  // Sum of squares of each whole row (the reference's RMS, in float). With
  // one pass it is taken from the staged rows below; otherwise from global
  // memory here.
  if (norm) {
    for (int r = threadIdx.x; r < t.rows; r += kTaskThreads)
      rowScale[r] = 0.f;
    __syncthreads();
    if (!onePass)
      addRowSquares(
          t.rows, p.k, [&](int r) { return x + size_t(t.row0 + r) * p.k; },
          rowScale);
  }
  const bf16 *nw = norm ? bufferAt<const bf16>(buffers, p.normWeight) : nullptr;
  // A pass's norm weights ride with its input rows (one more bulk copy on
  // inBar) where they fit between the staged rows and the ring, so that
  // their load is not a second latency after the rows land (the tiles of
  // an operator all ask for the same weights as it starts).
  bf16 *nwS = xs + t.rows * ldx;
  const bool stageNorm =
      norm && reinterpret_cast<unsigned char *>(nwS + kc) <=
                  reinterpret_cast<unsigned char *>(ring);
  // Phases of this warp's ring barriers and of the input barrier, carried
  // from the worker's previous tasks.
  TaskBarriers &tb = taskBarriers();
  uint32_t parity = tb.ringPhase[warp];
  const uint32_t inPhase0 = tb.inputPhase;
  for (int k0 = 0, pass = 0; k0 < p.k; k0 += kc, ++pass) {
    const int klen = min(kc, p.k - k0);
    const int vecs = klen / 8;
    // Row scales, barriers and the accumulator are ready; the previous
    // pass's input rows are consumed.
    __syncthreads();
    if (threadIdx.x == 0) {
      // The rows were written by other CTAs (made visible to this CTA by
      // the runtime's acquire and barrier); the copy reads them through the
      // async proxy.
      fenceProxyAsyncGlobal();
      mbarrierArriveExpectTx(inBar,
                             uint32_t((t.rows + (stageNorm ? 1 : 0)) * klen * 2));
      for (int r = 0; r < t.rows; ++r)
        bulkLoad(xs + r * ldx, x + size_t(t.row0 + r) * p.k + k0,
                 uint32_t(klen * 2), inBar);
      if (stageNorm)
        bulkLoad(nwS, nw + k0, uint32_t(klen * 2), inBar);
    }
    if (k0 > 0)
      issueFirstStages(t, k0, klen, ring, slotBytes, bars);
    mbarrierWait(inBar, (inPhase0 + pass) & 1);
    TAWA_MEGA_TASK_STAMP(1);
    if (norm) {
      if (onePass)
        addRowSquares(
            t.rows, klen, [&](int r) { return xs + r * ldx; }, rowScale);
      __syncthreads();
      // bf16(w · bf16(x · rs)), in place: a thread loads its 8 norm weights
      // once for every row.
      for (int jv = threadIdx.x; jv < vecs; jv += kTaskThreads) {
        float w[8];
        unpack8(stageNorm ? *reinterpret_cast<const uint4 *>(nwS + jv * 8)
                          : loadWeight16(nw + k0 + jv * 8),
                w);
        for (int r = 0; r < t.rows; ++r) {
          const float rs = rsqrtf(rowScale[r] / float(p.k) + p.eps);
          uint4 *at = reinterpret_cast<uint4 *>(xs + r * ldx + jv * 8);
          float f[8];
          unpack8(*at, f);
          __align__(16) bf16 o[8];
#pragma unroll
          for (int e = 0; e < 8; ++e)
            o[e] = toBf16(w[e] * roundBf16(f[e] * rs));
          *at = *reinterpret_cast<const uint4 *>(o);
        }
      }
      __syncthreads();
    }
    TAWA_MEGA_TASK_STAMP(2);
    if (t.rows <= 8)
      linearStream<1, 4>(t, xs, ldx, k0, klen, accS, ring, slotBytes, bars,
                         parity);
    else if (t.rows <= 16)
      linearStream<2, 4>(t, xs, ldx, k0, klen, accS, ring, slotBytes, bars,
                         parity);
    else if (t.rows <= 32)
      linearStream<4, 2>(t, xs, ldx, k0, klen, accS, ring, slotBytes, bars,
                         parity);
    else
      linearStream<8, 1>(t, xs, ldx, k0, klen, accS, ring, slotBytes, bars,
                         parity);
  }
  __syncthreads();
  TAWA_MEGA_TASK_STAMP(3);
  if (p.paired) // gate column v, up column v + cols of the same row
    for (int i = threadIdx.x; i < t.rows * t.cols; i += kTaskThreads) {
      const int r = i / t.cols, v = i % t.cols;
      t.store(r, v, accS[r * t.vcols + v], accS[r * t.vcols + t.cols + v]);
    }
  else
    for (int i = threadIdx.x; i < t.rows * t.vcols; i += kTaskThreads)
      t.store(i / t.vcols, i % t.vcols, accS[i]);
  // Every armed phase was waited for; the next task continues the phases
  // (every thread has read them: the barrier above).
  if (lane == 0)
    tb.ringPhase[warp] = parity;
  if (threadIdx.x == 0)
    tb.inputPhase = (inPhase0 + (p.k + kc - 1) / kc) & 1;
}

} // namespace tawa::device::mega
