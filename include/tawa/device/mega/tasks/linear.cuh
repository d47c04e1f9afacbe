// The linear task (RmsNormLinear, LinearResidual): one tile of output columns
// of y = norm(x) · Wᵀ for a tile of batch rows, over all of K. At decode
// batch sizes a linear is bound by reading W, and one SM must keep tens of
// kilobytes in flight to stream at its share of the bandwidth: each warp owns
// a ring of two shared-memory slots that one lane fills with bulk copies
// (cp.async.bulk, completing on the slot's mbarrier) while the warp
// multiplies the other slot's weight rows with the (normalized) input rows,
// which sit in shared memory. The weights are read from their packed copies
// (TaskParams.h, "staged weight layout"), where a stage is contiguous: one
// bulk copy a stage. An RMSNorm before the linear is folded in: its weight
// multiplies the packed weights' columns (bf16(w · g), when they are packed)
// and 1 / RMS(x) each row's float sums, so the input rows are multiplied as
// they are. Products accumulate in float; the result is rounded to bf16
// before the residual is added, as the bf16 reference rounds (which rounds
// the normalized input to bf16 instead: the two differ by bf16 roundings).
// The gate/up tile ("paired": it reads the gate and the up rows of its
// columns) ends with SiLU·mul.
#pragma once
#include "tawa/device/mega/tasks/common.cuh"
#include "tawa/device/mma.cuh"
#include "tawa/device/tma.cuh"

namespace tawa::device::mega {

using tawa::mega::LinearParams;

/// 16-byte loads a thread keeps in flight when it polls the input rows
/// (pollRowsToShared). Four, not eight: every batch-1 step was faster (run
/// 277, H200: Qwen3-0.6B -5.8 %, 1.7B -2.3 %, 8B -1.3 %; two: -2.1 %,
/// -1.8 %, +1.5 %). The batch's code is unrolled and runs whether or not
/// its loads are in the row, and a 1024-wide row is one load a thread.
#ifndef TAWA_MEGA_LINEAR_POLL_BATCH
#define TAWA_MEGA_LINEAR_POLL_BATCH 4
#endif

struct LinearTile {
  const LinearParams &p;
  void *const *buffers;
  int row0, rows; ///< batch rows of the tile
  int col0, cols; ///< output columns of the tile
  int vcols;      ///< weight rows it reads: cols, or 2 cols when paired
  /// Non-null: the tile polls its input rows and its residual (poll.cuh).
  const PollWatch *poll;

  /// The packed weight block of virtual columns [v0, v0 + 16) (v0 a
  /// multiple of 16; gate rows, then up rows, when paired). The binding
  /// keeps every block inside one matrix: tiles, segments and, when paired,
  /// N are multiples of 16 (DecodeBinding.cpp).
  __device__ const bf16 *stagedBlock(int v0) const {
    uint32_t w = p.w0;
    int c = col0 + v0;
    if (p.paired) {
      if (v0 >= cols)
        w = p.w1, c -= cols;
    } else if (c >= p.seg2) {
      w = p.w2, c -= p.seg2;
    } else if (c >= p.seg1) {
      w = p.w1, c -= p.seg1;
    }
    return bufferAt<const bf16>(buffers, w) +
           size_t(c) * tawa::mega::stagedWeightCols(p.k);
  }

  /// What a float output (the LM head's logits) holds for sum `acc`: the
  /// bf16 rounding of the reference's bf16 projection.
  __device__ static float f32Output(float acc) { return roundBf16(acc); }

  /// Stores the float sum of tile row r, virtual column v. Paired, `up` is
  /// the sum of up column v (v < cols; gate is acc): the output is
  /// bf16(bf16(silu(bf16(gate))) · bf16(up)), the reference's F.silu(gate) *
  /// up on the bf16 projections.
  /// Returns the stored value (as float) of an unpaired bf16 output, 0
  /// otherwise.
  __device__ float store(int r, int v, float acc, float up = 0.f) const {
    const int b = row0 + r;
    if (p.paired) {
      const float g = roundBf16(acc), u = roundBf16(up);
      const float silu = roundBf16(g / (1.f + expf(-g)));
      bufferAt<bf16>(buffers, p.out)[size_t(b) * p.n + col0 + v] =
          toBf16(silu * u);
      return 0.f;
    }
    const size_t at = size_t(b) * p.n + col0 + v;
    if (p.outF32) {
      bufferAt<float>(buffers, p.out)[at] = f32Output(acc);
      return 0.f;
    }
    bf16 out;
    if (p.residual != tawa::mega::kNoBuffer) {
      const bf16 *r = bufferAt<const bf16>(buffers, p.residual) + at;
      const float res = toFloat(poll ? pollBf16(r, *poll) : *r);
      out = toBf16(roundBf16(acc) + res);
    } else {
      out = toBf16(acc);
    }
    bufferAt<bf16>(buffers, p.out)[at] = out;
    return toFloat(out);
  }
};

using tawa::mega::kPieceUnits;
using tawa::mega::kStageRows;
using tawa::mega::WeightPieces;

/// How the warps of a linear tile combine their float sums, so that no two
/// warps add into the same element: a float add into shared memory is a
/// compare-and-swap loop on Hopper, and four warps adding into one block's
/// elements bounded the 16-row tiles (runs 150-151; keeping that atomic
/// flush for tiles of 1 or of up to 8 rows measured slower, runs 153-154).
/// Owned: the tile has at least kLinearAccSlices weight blocks and each warp
/// takes whole blocks, adding plainly into the one accumulator. Sliced:
/// fewer blocks; the warps split each block's K and each adds into its own
/// slice (linearAccBytes), the slices summed in the epilogue.
enum class LinearAccMode { Owned, Sliced };
TAWA_MEGA_HD inline LinearAccMode linearAccMode(int vcols) {
  return (vcols + kStageRows - 1) / kStageRows >= tawa::mega::kLinearAccSlices
             ? LinearAccMode::Owned
             : LinearAccMode::Sliced;
}

/// A warp's position in its walk over a pass's stages: stage i, its weight
/// block and its place in the block (i = block · stagesPerBlock + s).
struct StageWalk {
  int i, block, s;
};

/// One K pass of a tile: pieces [j0, j1) of the weights' cut (as many as
/// the pass's input rows may hold, kc elements), staged `perStage` pieces at
/// a time — two where a slot holds two whole pieces (tiles of up to 8
/// rows), else one. Stage i is stage i % stagesPerBlock of weight
/// block i / stagesPerBlock; in its slot, each of its pieces is [block
/// rows][piece], as in global memory. Warp w walks blocks w, w + warps, …
/// whole when it owns blocks (LinearAccMode::Owned), else stages w, w +
/// warps, …; the walk steps without dividing or branching (it runs once a
/// stage, among the products: runs 296-297).
struct PassPlan {
  WeightPieces wp;
  int j0, j1, perStage, stagesPerBlock, count;
  int k0, klen; ///< the pass's K range, in elements
  bool owned;
  /// A step adds dStage places and dBlock blocks, then wraps a place past
  /// the block into dWrap more blocks: owned, 1, 0 and kTaskWarps; split,
  /// kTaskWarps = dBlock · stagesPerBlock + dStage and 1.
  int dStage, dBlock, dWrap;

  TAWA_MEGA_HD PassPlan(const WeightPieces &pieces, int first, int kc, int k,
                        int vcols, int slotBytes)
      : wp(pieces), j0(first), j1(first + 1) {
    while (j1 < wp.count &&
           min(wp.start(j1 + 1) * 32, k) - wp.start(j0) * 32 <= kc)
      ++j1;
    k0 = wp.start(j0) * 32;
    klen = min(wp.start(j1) * 32, k) - k0;
    perStage = slotBytes / (kStageRows * 2) >= 2 * kPieceUnits * 32 ? 2 : 1;
    stagesPerBlock = (j1 - j0 + perStage - 1) / perStage;
    count = (vcols + kStageRows - 1) / kStageRows * stagesPerBlock;
    owned = linearAccMode(vcols) == LinearAccMode::Owned;
    dStage = owned ? 1 : kTaskWarps % stagesPerBlock;
    dBlock = owned ? 0 : kTaskWarps / stagesPerBlock;
    dWrap = owned ? kTaskWarps : 1;
  }
  /// Warp `warp`'s first stage (i >= count: none).
  TAWA_MEGA_HD StageWalk first(int warp) const {
    if (owned)
      return StageWalk{warp * stagesPerBlock, warp, 0};
    return StageWalk{warp, warp / stagesPerBlock, warp % stagesPerBlock};
  }
  /// The warp's next stage (dStage < stagesPerBlock: one wrap at most).
  TAWA_MEGA_HD void step(StageWalk &w) const {
    w.s += dStage;
    w.block += dBlock;
    const bool wrap = w.s >= stagesPerBlock;
    w.s -= wrap ? stagesPerBlock : 0;
    w.block += wrap ? dWrap : 0;
    w.i = w.block * stagesPerBlock + w.s;
  }
  /// The first piece of a stage at place s of its block, and the one after
  /// its last.
  TAWA_MEGA_HD int firstPiece(int s) const { return j0 + s * perStage; }
  TAWA_MEGA_HD int endPiece(int s) const {
    return min(firstPiece(s) + perStage, j1);
  }
};

/// One warp: stage `w` into `slot`, completing on `bar` — one bulk copy by
/// lane 0 (the stage's pieces are contiguous in the packed weight).
__device__ inline void issueStage(const LinearTile &t, const PassPlan &pp,
                                  const StageWalk &w, bf16 *slot,
                                  MBarrier *bar) {
  if (threadIdx.x % 32 != 0)
    return;
  const int ja = pp.firstPiece(w.s), jb = pp.endPiece(w.s);
  // A packed block has 16 rows (zeros past the weight's): 1 KB a step.
  const uint32_t bytes = uint32_t(1024 * (pp.wp.start(jb) - pp.wp.start(ja)));
  mbarrierArriveExpectTx(bar, bytes);
  // Each weight is read once per step: first out of L2.
  bulkLoad(slot, t.stagedBlock(w.block * kStageRows) + 512 * pp.wp.start(ja),
           bytes, bar, l2EvictFirstPolicy());
}

/// Each warp: the first stages of a K pass, one per ring slot.
__device__ inline void issueFirstStages(const LinearTile &t, const PassPlan &pp,
                                        bf16 *ring, int slotBytes,
                                        MBarrier *bars) {
  const int warp = threadIdx.x / 32;
  const int slotElems = slotBytes / 2;
  StageWalk w = pp.first(warp);
  for (int m = 0; m < kLinearSlots && w.i < pp.count; ++m, pp.step(w))
    issueStage(t, pp, w, ring + (warp * kLinearSlots + m) * slotElems,
               bars + warp * kLinearSlots + m);
}

/// 16 bytes of shared memory, or zeros where `in` is false.
__device__ __forceinline__ uint4 loadOrZero(const bf16 *p, bool in) {
  return in ? *reinterpret_cast<const uint4 *>(p) : make_uint4(0, 0, 0, 0);
}

/// U 32-column steps of the products of a stage: lane (g, t)'s fragments of
/// the two products of step u at w + 512 u and w + 512 u + 256 (the staged
/// layout: no rearranging), its input rows at xk + xoff[nb] + 32 u (row nb *
/// 8 + g, or the tile's last row where that is past it: it only feeds
/// product columns that are never stored, D[m][n] depending on input row n
/// alone). Guarded: input columns at or past kl read as zeros (the weights
/// there are zeros, the staged input past K is not).
template <int NB, int U, bool Guarded>
__device__ __forceinline__ void linearSteps(float (&acc)[2][NB][4],
                                            const bf16 *w, const bf16 *xk,
                                            const int (&xoff)[NB], int c,
                                            int kl, int tq) {
  uint4 a[U][2], b[U][NB];
#pragma unroll
  for (int u = 0; u < U; ++u) {
    a[u][0] = *reinterpret_cast<const uint4 *>(w + 512 * u);
    a[u][1] = *reinterpret_cast<const uint4 *>(w + 512 * u + 256);
#pragma unroll
    for (int nb = 0; nb < NB; ++nb)
      b[u][nb] = Guarded ? loadOrZero(xk + xoff[nb] + 32 * u,
                                      c + 32 * u + tq * 8 < kl)
                         : *reinterpret_cast<const uint4 *>(xk + xoff[nb] +
                                                            32 * u);
  }
#pragma unroll
  for (int u = 0; u < U; ++u)
#pragma unroll
    for (int nb = 0; nb < NB; ++nb) {
      mmaBf16m16n8k16(acc[u % 2][nb], a[u][0].x, a[u][0].y, a[u][0].z,
                      a[u][0].w, b[u][nb].x, b[u][nb].y);
      mmaBf16m16n8k16(acc[u % 2][nb], a[u][1].x, a[u][1].y, a[u][1].z,
                      a[u][1].w, b[u][nb].z, b[u][nb].w);
    }
}

/// One K pass (PassPlan) of the tile on the tensor cores: warp w walks its
/// stages (PassPlan::first, step); a stage's 16 weight rows times the tile's
/// input rows (NB blocks of 8) is a run of m16n8k16 products. K is
/// permuted the same way in both operands, which a dot product allows: lane
/// (g, t) loads 8 consecutive elements of weight rows g and g + 8 and of
/// input row g, and its first product takes elements 0–3, its second 4–7,
/// so every operand is one 16-byte load and no ldmatrix is needed. U such
/// 32-element steps are in flight, into two accumulators, then single
/// steps for the rest of a piece. A warp's sums go to the float accumulator
/// accS[row][vcol], or its own slice of it (LinearAccMode), when its stages
/// move to another block. `parity` holds the warp's slot phases across
/// passes.
template <int NB, int U>
__device__ void linearStream(const LinearTile &t, const PassPlan &pp,
                             const bf16 *xs, int ldx, float *accS, bf16 *ring,
                             int slotBytes, MBarrier *bars, uint32_t &parity) {
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int g = lane / 4, tq = lane % 4;
  const int slotElems = slotBytes / 2;
  bf16 *mySlots = ring + warp * kLinearSlots * slotElems;
  MBarrier *myBars = bars + warp * kLinearSlots;
  int xoff[NB]; // input row nb * 8 + g, or the tile's last
#pragma unroll
  for (int nb = 0; nb < NB; ++nb)
    xoff[nb] = min(nb * 8 + g, t.rows - 1) * ldx;
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
  // D[m][n] of product nb: lane (g, t) holds m = g, g + 8 and n = 2t, 2t + 1,
  // so a warp's lanes hold distinct elements (LinearAccMode): owning its
  // blocks, the warp is the only one adding into them; sliced, it adds into
  // its own slice (shared by two warps, atomically, only in builds with more
  // warps than slices).
  const LinearAccMode mode = linearAccMode(t.vcols);
  const bool atomic = mode == LinearAccMode::Sliced &&
                      kTaskWarps > tawa::mega::kLinearAccSlices;
  float *accW =
      mode == LinearAccMode::Sliced
          ? accS + (warp % tawa::mega::kLinearAccSlices) * t.rows * t.vcols
          : accS;
  auto flush = [&](int block) {
#pragma unroll
    for (int nb = 0; nb < NB; ++nb)
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const int v = block * kStageRows + g + (j / 2) * 8;
        const int r = nb * 8 + 2 * tq + j % 2;
        if (v < t.vcols && r < t.rows) {
          const float sum = acc[0][nb][j] + acc[1][nb][j];
          if (atomic)
            atomicAdd(&accW[r * t.vcols + v], sum);
          else
            accW[r * t.vcols + v] += sum;
        }
      }
  };
  clear();
  int held = -1;
  // Traced: lane 0 of warp 0 adds its waits for weights (TaskStamps).
  const bool timed =
      TAWA_MEGA_TRACE_PHASES && threadIdx.x == 0 && taskStamps().armed;
  // A stage's steps [s0, s0 + steps) of K; those before `whole` have all
  // 32 input columns inside the pass.
  struct StageArgs {
    int s0, steps, kl, whole;
  };
  auto argsOf = [&](const StageWalk &w) {
    StageArgs a;
    a.s0 = pp.wp.start(pp.firstPiece(w.s));
    a.steps = pp.wp.start(pp.endPiece(w.s)) - a.s0;
    a.kl = pp.klen - (32 * a.s0 - pp.k0); // the pass's columns from s0
    a.whole = min(a.steps, a.kl / 32);
    return a;
  };
  // The pass's first stages were issued before its input rows were staged
  // (issueFirstStages); `ahead` is the stage a slot is refilled with.
  StageWalk cur = pp.first(warp), ahead = cur;
  StageArgs args = argsOf(cur);
  for (int m = 0; m < kLinearSlots; ++m)
    pp.step(ahead);
  for (int m = 0; cur.i < pp.count; ++m) {
    TAWA_MEGA_STREAM_MARK(0);
    const int s = m % kLinearSlots;
    if (cur.block != held) {
      if (held >= 0) {
        flush(held);
        clear();
      }
      held = cur.block;
    }
    mbarrierWaitTraced(myBars + s, (parity >> s) & 1, timed);
    parity ^= 1u << s;
    TAWA_MEGA_STREAM_MARK(1);
    const bf16 *w = mySlots + s * slotElems + lane * 8;
    const bf16 *xk = xs + (32 * args.s0 - pp.k0) + tq * 8;
    const int kl = args.kl;
    // The walk's next positions and the next stage's arguments (they depend
    // on none of the products' values): in a straight-line stage computed
    // among its products, since outside them they were a chain of dependent
    // integer instructions a stage, about 0.25 us of warp 0's time a stage
    // in the step (run 296); in a looped stage after them.
    StageWalk next = cur, refill = ahead;
    StageArgs nextArgs;
    auto advance = [&] {
      pp.step(next);
      pp.step(ahead);
      nextArgs = argsOf(next);
    };
    // The trip counts are the warp's: mma.sync needs every lane. A full
    // slot of one-row-block tiles (two whole pieces inside the pass) is
    // straight-line code: the loop's unrolling and its remainder dispatch
    // were about 30 of a stage's 180 instructions (run 283), and the
    // products are bound by the warp's instructions (runs 285-287).
    constexpr int kFull = 2 * kPieceUnits;
    if (NB == 1 && args.steps == kFull && args.whole == kFull) {
#pragma unroll
      for (int c = 0; c < kFull; c += U) {
        linearSteps<NB, U, false>(acc, w + 512 * c, xk + 32 * c, xoff, 0, kl,
                                  tq);
        if (c == 0)
          advance();
      }
    } else {
      // Here the walk goes after the products (before them, batch 16 was
      // 0.5-0.8 % slower and batch 1 no faster: runs 297-300).
      int c = 0;
      for (; c + U <= args.whole; c += U)
        linearSteps<NB, U, false>(acc, w + 512 * c, xk + 32 * c, xoff, 0, kl,
                                  tq);
      for (; c < args.steps; ++c)
        linearSteps<NB, 1, true>(acc, w + 512 * c, xk + 32 * c, xoff, 32 * c,
                                 kl, tq);
      advance();
    }
    // Every lane has read the slot before it is refilled.
    __syncwarp();
    TAWA_MEGA_STREAM_MARK(2);
    if (refill.i < pp.count)
      issueStage(t, pp, refill, mySlots + s * slotElems, myBars + s);
    TAWA_MEGA_STREAM_MARK(3);
    cur = next;
    args = nextArgs;
  }
  if (held >= 0)
    flush(held);
}

/// Where a linear tile's data sits in shared memory: row scales and the
/// parts of the rows' sums of squares (kMaxTileRows floats each), the float
/// accumulator and the staged input rows at the bottom; the weight ring (2
/// slots per warp; p.ringBytes, the plan's) at the top, below the tasks'
/// barriers, where it may be filled before the task runs (linearPrefetch).
static_assert(tawa::mega::kMaxTileRows >= kTaskWarps &&
                  2 * tawa::mega::kMaxTileRows * sizeof(float) <=
                      size_t(tawa::mega::kLinearSmemReserve),
              "row scales and their sums' parts fit the reserve");
struct LinearSmem {
  LinearTile t;
  int kc, ldx, slotBytes;
  float *rowScale, *rowParts, *accS;
  bf16 *xs, *ring;
  MBarrier *bars, *inBar;

  __device__ LinearSmem(const LinearParams &p, void *const *buffers,
                        uint32_t tile, const PollWatch *poll = nullptr)
      : t{p, buffers, 0, 0, 0, 0, 0, poll} {
    const int mt = tile / p.colTiles, nt = tile % p.colTiles;
    t.row0 = mt * p.tileM;
    t.rows = min(p.tileM, p.m - t.row0);
    t.col0 = tawa::mega::linearTileCol0(p, nt);
    t.cols = tawa::mega::linearTileCols(p, nt);
    t.vcols = p.paired ? 2 * t.cols : t.cols;
    kc = tawa::mega::linearChunk(p.tileM, p.paired ? 2 * p.tileN : p.tileN,
                                 p.k);
    ldx = tawa::mega::linearInputPitch(kc);
    unsigned char *smem = taskSmem();
    rowScale = reinterpret_cast<float *>(smem);
    rowParts = rowScale + tawa::mega::kMaxTileRows;
    accS = reinterpret_cast<float *>(smem + tawa::mega::kLinearSmemReserve);
    xs = reinterpret_cast<bf16 *>(
        reinterpret_cast<unsigned char *>(accS) +
        tawa::mega::linearAccBytes(p.tileM, p.paired ? 2 * p.tileN : p.tileN));
    bars = taskBarriers().ring;
    inBar = &taskBarriers().input;
    ring = reinterpret_cast<bf16 *>(smem +
                                    tawa::mega::taskLowSmemBytes(p.ringBytes));
    // A slot holds a stage: 16 weight rows of one or two pieces of K
    // (PassPlan).
    slotBytes = p.ringBytes / (kTaskWarps * kLinearSlots) / 128 * 128;
  }
};

/// The whole CTA: issues the first weight stages of the tile's first pass
/// (on the worker's ring barriers, TaskBarriers). The weights do not depend on
/// the task's inputs, so the worker calls this as soon as it knows its next
/// task, and the copies are in flight while it waits for the inputs (and runs
/// just-in-time tasks, which keep below the ring).
__device__ inline void issueFirstPassStages(const LinearSmem &m) {
  const PassPlan pp(tawa::mega::weightPieces(m.t.p.k), 0, m.kc, m.t.p.k,
                    m.t.vcols, m.slotBytes);
  issueFirstStages(m.t, pp, m.ring, m.slotBytes, m.bars);
}
__device__ inline void linearPrefetch(const LinearParams &p,
                                      void *const *buffers, uint32_t tile) {
  issueFirstPassStages(LinearSmem(p, buffers, tile));
}

/// Parts of a row's sum of squares (addRowSquares): at least one a warp.
__device__ __forceinline__ int rowSquareParts(int rows) {
  return max(1, kTaskWarps / rows);
}

/// Each warp: sums of squares of the tile's rows, `len` elements from
/// `rowAt(r)`, in rowSquareParts(rows) parts a row so that a small batch
/// still uses every warp: part q of row r is stored to partial[r * parts +
/// q] (added to it with `add`: a later K pass) by the one warp that takes
/// it. Stored, not added: a float add into
/// shared memory is a compare-and-swap loop on Hopper: with four warps
/// adding into one row's sum a one-row tile's norm took 0.60 µs, stored
/// 0.37 (run 238); the sum's order is also the same every run. Each lane
/// loads `Group` 16-byte pieces at once, then squares them into as many
/// sums: a loop over one piece at a time, even unrolled, tests its exit
/// between the pieces, and the compiler issues no load above that test, so
/// each load waited for the previous piece's squares (16 rows of 4096 took
/// 3.9 µs hot, run 169). `Group` 1: one piece at a time.
constexpr int kNormGroup = 4; ///< addRowSquares's Group for multi-row tiles
template <int Group, typename RowFn>
__device__ void addRowSquares(int rows, int len, RowFn rowAt, float *partial,
                              bool add = false) {
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int parts = rowSquareParts(rows);
  const int stride = parts * 256; // a lane's pieces are `stride` apart
  for (int it = warp; it < rows * parts; it += kTaskWarps) {
    const int r = it / parts, part = it % parts;
    const bf16 *row = rowAt(r);
    float sums[Group];
#pragma unroll
    for (int g = 0; g < Group; ++g)
      sums[g] = 0.f;
    int j = (part * 32 + lane) * 8;
#pragma unroll 1
    for (; Group > 1 && j + (Group - 1) * stride < len; j += Group * stride) {
      uint4 v[Group];
#pragma unroll
      for (int g = 0; g < Group; ++g)
        v[g] = *reinterpret_cast<const uint4 *>(row + j + g * stride);
#pragma unroll
      for (int g = 0; g < Group; ++g) {
        float f[8];
        unpack8(v[g], f);
#pragma unroll
        for (int e = 0; e < 8; ++e)
          sums[g] = fmaf(f[e], f[e], sums[g]);
      }
    }
    constexpr int kTailUnroll = Group > 1 ? Group - 1 : 8;
#pragma unroll kTailUnroll
    for (; j < len; j += stride) { // fewer than Group pieces left
      float f[8];
      unpack8(*reinterpret_cast<const uint4 *>(row + j), f);
#pragma unroll
      for (int e = 0; e < 8; ++e)
        sums[0] = fmaf(f[e], f[e], sums[0]);
    }
    float s = sums[0];
#pragma unroll
    for (int g = 1; g < Group; ++g)
      s += sums[g];
    s = warpSum(s);
    if (lane == 0)
      partial[it] = add ? partial[it] + s : s;
  }
}

/// The unpaired epilogue of a tile with LinearParams::rowSquaresOut: stores
/// row r, column v as valueAt(r, v) and adds the squares of each row's
/// stored values into rowSquares[row] (one reduction a row's run of lanes).
/// A warp's 32 elements are consecutive: one row's when the tile's columns
/// are a multiple of 32, aligned runs of `vcols` lanes when they divide 32;
/// other widths add element by element.
template <typename ValueFn>
__device__ void storeAddingRowSquares(const LinearTile &t, float *rowSquares,
                                      ValueFn valueAt) {
  const int n = t.rows * t.vcols, lane = threadIdx.x % 32;
  // Whole warps run every iteration (the shuffles below).
  for (int i = threadIdx.x; i < ((n + 31) & ~31); i += kTaskThreads) {
    const int r = i / t.vcols, v = i % t.vcols;
    float sq = 0.f;
    if (i < n) {
      const float out = t.store(r, v, valueAt(r, v));
      sq = out * out;
    }
    if (t.vcols % 32 == 0) {
      sq = warpSum(sq);
      if (lane == 0)
        atomicAdd(rowSquares + t.row0 + r, sq);
    } else if (32 % t.vcols == 0) {
      for (int offset = t.vcols / 2; offset > 0; offset /= 2)
        sq += __shfl_xor_sync(0xffffffffu, sq, offset);
      if (v == 0 && i < n)
        atomicAdd(rowSquares + t.row0 + r, sq);
    } else if (i < n) {
      atomicAdd(rowSquares + t.row0 + r, sq);
    }
  }
}

/// `prefetched`: linearPrefetch ran for this tile since the previous task
/// of this kind ended. `poll`: non-null when the worker did not wait for
/// the tile's event: the input rows and the residual are polled.
__device__ inline void linearTask(const LinearParams &p, void *const *buffers,
                                  uint32_t tile, bool prefetched,
                                  const PollWatch *poll = nullptr) {
  const LinearSmem m(p, buffers, tile, poll);
  if (!prefetched)
    issueFirstPassStages(m);
  const LinearTile &t = m.t;
  const int kc = m.kc, ldx = m.ldx, slotBytes = m.slotBytes;
  float *rowScale = m.rowScale, *rowParts = m.rowParts, *accS = m.accS;
  bf16 *xs = m.xs, *ring = m.ring;
  MBarrier *bars = m.bars, *inBar = m.inBar;
  // The input rows of a pass are bulk-copied too (completing on `inBar`),
  // all at once, while the weights' first stages are in flight.
  // Slices when the warps split blocks (the same test for every pass: the
  // blocks do not change).
  const int accSlices = linearAccMode(t.vcols) == LinearAccMode::Sliced
                            ? tawa::mega::kLinearAccSlices
                            : 1;
  for (int i = threadIdx.x; i < accSlices * t.rows * t.vcols; i += kTaskThreads)
    accS[i] = 0.f;
  const bf16 *x = bufferAt<const bf16>(buffers, p.in);
  const bool norm = p.normWeight != tawa::mega::kNoBuffer;
  // The rows' sums of squares from the producer's epilogues (complete: the
  // task waited for its event) into the rows' scales now, by warps 1 and 2
  // (warp 0 issues the input copies; holding the sums in registers until
  // the epilogue made the kernel spill). The pass loop's barriers order
  // these writes before the epilogue reads them.
  const bool normFromSums = TAWA_MEGA_NORM_FROM_SUMS && norm && !poll &&
                            p.rowSquaresIn != tawa::mega::kNoBuffer;
  // 1 / RMS of a row from its sum of squares (the reference's float RMS).
  auto scaleOf = [&](float squares) {
    return rsqrtf(squares / float(p.k) + p.eps);
  };
  static_assert(tawa::mega::kMaxTileRows <= kTaskThreads - 32, "warps 1-");
  if (normFromSums && threadIdx.x >= 32 && threadIdx.x < 32 + t.rows) {
    const int r = threadIdx.x - 32;
    rowScale[r] = scaleOf(
        __ldcg(bufferAt<const float>(buffers, p.rowSquaresIn) + t.row0 + r));
  }
  const bool onePass = kc >= p.k;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  // Four pieces a lane at once from two rows up (16 rows of 4096: 3.7 ->
  // 2.3 us, run 299); one row keeps one piece at a time (four at once made
  // the 0.6B step 0.75 % slower, run 300).
  auto rowSquares = [&](int len, auto rowAt, bool add) {
    if (t.rows > 1)
      addRowSquares<kNormGroup>(t.rows, len, rowAt, rowParts, add);
    else
      addRowSquares<1>(t.rows, len, rowAt, rowParts, add);
  };
  // Sum of squares of each whole row (the reference's RMS, in float). From
  // the staged rows below with one pass or polled rows (pass by pass);
  // otherwise from global memory here.
  if (norm && !onePass && !poll && !normFromSums)
    rowSquares(
        p.k, [&](int r) { return x + size_t(t.row0 + r) * p.k; }, false);
  // Phases of this warp's ring barriers and of the input barrier, carried
  // from the worker's previous tasks.
  TaskBarriers &tb = taskBarriers();
  uint32_t parity = tb.ringPhase[warp];
  const uint32_t inPhase0 = tb.inputPhase;
  const WeightPieces pieces = tawa::mega::weightPieces(p.k);
  // One plan, stepped at each pass's end: a const plan built at each pass's
  // top made ptxas spill 8-12 bytes in the kernel's dispatch and wait loops.
  PassPlan pp(pieces, 0, kc, p.k, t.vcols, slotBytes);
  int pass = 0;
  for (;; ++pass) {
    const bool last = pp.j1 >= pieces.count;
    const int k0 = pp.k0, klen = pp.klen;
    // Row scales, barriers and the accumulator are ready; the previous
    // pass's input rows are consumed.
    __syncthreads();
    if (threadIdx.x == 0 && !poll) {
      // The rows were written by other CTAs (made visible to this CTA by
      // the runtime's acquire and barrier); the copy reads them through the
      // async proxy.
      fenceProxyAsyncGlobal();
      mbarrierArriveExpectTx(inBar, uint32_t(t.rows * klen * 2));
      for (int r = 0; r < t.rows; ++r)
        bulkLoad(xs + r * ldx, x + size_t(t.row0 + r) * p.k + k0,
                 uint32_t(klen * 2), inBar);
    }
    if (pass > 0)
      issueFirstStages(t, pp, ring, slotBytes, bars);
    // Polled, the rows land once each element is written (a stopped wait
    // leaves whatever was read: the kernel is ending).
    if (poll)
      pollRowsToShared<TAWA_MEGA_LINEAR_POLL_BATCH>(
          xs, ldx, x + size_t(t.row0) * p.k + k0, size_t(p.k), t.rows, klen,
          kTaskThreads, *poll);
    else
      mbarrierWait(inBar, (inPhase0 + pass) & 1);
    markTaskReady();
    TAWA_MEGA_TASK_STAMP(1);
    // The norm's weights are folded into the staged weights; its 1 / RMS
    // scales the sums at the end (read only after the passes).
    if (norm && (onePass || poll) && !normFromSums)
      rowSquares(
          klen, [&](int r) { return xs + r * ldx; }, pass > 0);
    TAWA_MEGA_TASK_STAMP(2);
    if (t.rows <= 8)
      linearStream<1, 4>(t, pp, xs, ldx, accS, ring, slotBytes, bars, parity);
    else if (t.rows <= 16)
      linearStream<2, 4>(t, pp, xs, ldx, accS, ring, slotBytes, bars, parity);
    else if (t.rows <= 32)
      linearStream<4, 2>(t, pp, xs, ldx, accS, ring, slotBytes, bars, parity);
    else
      linearStream<8, 1>(t, pp, xs, ldx, accS, ring, slotBytes, bars, parity);
    if (last)
      break;
    pp = PassPlan(pieces, pp.j1, kc, p.k, t.vcols, slotBytes);
  }
  __syncthreads();
  markTaskComputed();
  // Element i of the sums: the slices are added here, where each element is
  // read once anyway. Loops over constant counts, so that the epilogue is a
  // few straight-line instructions (the loops over runtime counts compiled
  // to unrolled copies and remainders, and a one-row tile spent 0.5-0.7 µs
  // hot here, run 264).
  const bool sliced = accSlices > 1;
  const int sliceElems = t.rows * t.vcols;
  auto sum = [&](int i) {
    float s = accS[i];
    if (sliced)
#pragma unroll
      for (int w = 1; w < tawa::mega::kLinearAccSlices; ++w)
        s += accS[w * sliceElems + i];
    return s;
  };
  TAWA_MEGA_TASK_STAMP(3);
  // RMSNorm: row r's sums times 1 / RMS(x_r) (the reference's float RMS).
  // One row: every thread computes it from the parts (complete: the barrier
  // above), instead of one thread into shared memory and a CTA barrier
  // after it. More rows: thread r computes row r's once.
  if (norm && t.rows > 1 && !normFromSums) {
    const int parts = rowSquareParts(t.rows);
    for (int r = threadIdx.x; r < t.rows; r += kTaskThreads) {
      float squares = 0.f;
      for (int q = 0; q < parts; ++q)
        squares += rowParts[r * parts + q];
      rowScale[r] = scaleOf(squares);
    }
    __syncthreads();
  }
  auto scaleOfRow = [&](int r) {
    if (!norm)
      return 1.f;
    if (t.rows > 1 || normFromSums)
      return rowScale[r];
    float squares = 0.f; // one row: rowSquareParts(1) == kTaskWarps parts
#pragma unroll
    for (int q = 0; q < kTaskWarps; ++q)
      squares += rowParts[q];
    return scaleOf(squares);
  };
  TAWA_MEGA_TASK_STAMP(4);
  // Row r's output sum of virtual column v, scaled by `scale`.
  auto value = [&](int r, int v, float scale) {
    return sum(r * t.vcols + v) * scale;
  };
  const bool sumsOut =
      TAWA_MEGA_NORM_FROM_SUMS && p.rowSquaresOut != tawa::mega::kNoBuffer;
  if (t.rows == 1 && !sumsOut) {
    // One row (batch 1): thread v stores column v, no index division.
    const float scale = scaleOfRow(0);
    for (int v = threadIdx.x; v < t.cols; v += kTaskThreads) {
      if (p.paired) // gate column v, up column v + cols
        t.store(0, v, value(0, v, scale), value(0, t.cols + v, scale));
      else
        t.store(0, v, value(0, v, scale));
    }
  } else if (p.paired) {
    for (int i = threadIdx.x; i < t.rows * t.cols; i += kTaskThreads) {
      const int r = i / t.cols, v = i % t.cols;
      const float scale = scaleOfRow(r);
      t.store(r, v, value(r, v, scale), value(r, t.cols + v, scale));
    }
  } else if (sumsOut) {
    storeAddingRowSquares(
        t, bufferAt<float>(buffers, p.rowSquaresOut),
        [&](int r, int v) { return value(r, v, scaleOfRow(r)); });
  } else {
    for (int i = threadIdx.x; i < t.rows * t.vcols; i += kTaskThreads) {
      const int r = i / t.vcols, v = i % t.vcols;
      t.store(r, v, value(r, v, scaleOfRow(r)));
    }
  }
  TAWA_MEGA_TASK_STAMP(5);
  // The LM head: each row's largest logit of the tile (as stored: rounded
  // to bf16) raises the row's key, so that the argmax task reads one key a
  // row instead of the whole vocabulary's logits (23 µs on one SM). Warps
  // take (row, part) pairs; one atomic a pair.
  if (p.argmaxKeys != tawa::mega::kNoBuffer) {
    const int parts = max(1, kTaskWarps / t.rows);
    for (int it = warp; it < t.rows * parts; it += kTaskWarps) {
      const int r = it / parts;
      const float scale = scaleOfRow(r);
      uint64_t best = 0;
      for (int v = (it % parts) * 32 + lane; v < t.vcols; v += parts * 32)
        best =
            max(best,
                tawa::mega::argmaxKey(LinearTile::f32Output(value(r, v, scale)),
                                      uint32_t(t.col0 + v)));
      best = warpMax(best);
      if (lane == 0 && best != 0)
        atomicMax(bufferAt<unsigned long long>(buffers, p.argmaxKeys) +
                      t.row0 + r,
                  static_cast<unsigned long long>(best));
    }
  }
  // Every armed phase was waited for; the next task continues the phases
  // (every thread has read them: the barrier above).
  if (lane == 0)
    tb.ringPhase[warp] = parity;
  if (threadIdx.x == 0)
    tb.inputPhase = poll ? inPhase0 : (inPhase0 + pass + 1) & 1;
}

} // namespace tawa::device::mega
