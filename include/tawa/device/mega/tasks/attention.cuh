// Decode attention over the KV cache (GQA) and the merge of split chunks.
//
// A task starts from the QKV projection's row: it normalizes (Qwen3's q/k
// RMSNorm) and rotates (RoPE) the `group` q heads that share KV head h of row
// b, and the chunk that holds the step's position does the same to the new k
// and appends k and v to the cache — so no task of its own, and no hop, sits
// between the projection and attention. The cache is paged (a pool of pages
// of pageSize positions, each KV head's rows of a page contiguous, and a
// block table per row). The task walks its chunk of cache positions in blocks
// (up to kAttnBlock positions, 64 KB of keys): the lanes of warp 0 bulk-copy
// the block's key rows and value rows into shared memory, a lane per page the
// block touches (the keys and the values each completing on their own
// mbarrier), so the block's loads are in flight at once; then scores into
// shared memory (D / 8 lanes per position, 16 bytes of its key row each), an
// online softmax per head across blocks, and P·V with the same lanes reading
// the value rows, each lane group summing its own positions; the groups'
// partial outputs are added at the end. Float throughout; the output is rounded
// to bf16, or kept in float with its log-sum-exp when the sequence is split
// into chunks, which the last chunk of the (row, KV head) to end merges
// (mergeIfLastChunk), or a merge task in plans that have one.
#pragma once
#include "tawa/device/mega/sync.cuh"
#include "tawa/device/mega/tasks/common.cuh"
#include "tawa/device/mma.cuh"
#include "tawa/device/sync.cuh"
#include "tawa/device/tma.cuh"

#include <type_traits>

namespace tawa::device::mega {

using tawa::mega::AttentionMergeParams;
using tawa::mega::DecodeAttentionParams;

constexpr int kAttnBlock = 512;  ///< cache positions scored per block
constexpr int kAttnMaxGroup = 8; ///< q heads per KV head (1, 2, 4, 8)

/// Whether attention with head dimension D runs on the tensor cores
/// (decodeAttentionGroup's kTC): D = 128 and 16-dim slices for every warp.
__host__ __device__ constexpr bool attnTensorCores(int D) {
  return D == 128 && 128 % (16 * kTaskWarps) == 0;
}

/// Tensor-core path (attnTensorCores): where the 16-byte
/// piece c (of 16) of a block's value row r sits once the row is permuted in
/// place (permuteValueRows). P·V reads 16 bytes of 8 consecutive rows at once
/// (ldmatrix.trans); rows are 256 bytes, so unpermuted those 8 fall on the
/// same four banks (an 8-way conflict), and XORed with r mod 8 on all 32.
__device__ __forceinline__ int attnPiece(int c, int r) { return c ^ (r & 7); }

/// The whole CTA: value rows [0, rows) (a multiple of 16) of a D = 128 block
/// permuted to attnPiece's layout in place. A row is the 16 lanes of half a
/// warp, lane c holding piece c; the lanes load all of their rows, meet at
/// __syncwarp (which orders the loads before any lane's stores, so in place
/// is safe) and store each piece where it goes. (Swapping the pieces by
/// shuffles instead, each lane storing where it loaded, made 0.6B batch 16
/// 4.1 % slower: run 310.)
__device__ __forceinline__ void permuteValueRows(bf16 *v, int rows) {
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int c = lane % 16;
  uint4 *row = reinterpret_cast<uint4 *>(v);
  constexpr int kU = 4; // rows in flight per lane
  // Both halves of a warp take rows 2i and 2i + 1: in or out together.
#pragma unroll 1
  for (int r0 = 2 * warp + lane / 16; r0 < rows; r0 += 2 * kTaskWarps * kU) {
    uint4 x[kU];
#pragma unroll
    for (int u = 0; u < kU; ++u) {
      const int r = r0 + 2 * kTaskWarps * u;
      if (r < rows)
        x[u] = row[r * 16 + c];
    }
    __syncwarp();
#pragma unroll
    for (int u = 0; u < kU; ++u) {
      const int r = r0 + 2 * kTaskWarps * u;
      if (r < rows)
        row[r * 16 + attnPiece(c, r)] = x[u];
    }
  }
}

/// Qwen3's per-head RMSNorm (when `qkNorm`, with weights w) and RoPE of one
/// head held by a warp, in place: lane l holds elements l + 32 j (j < D / 32)
/// in v; cos and sin are the lane's distinct frequencies at the row's position
/// (RoPE pairs element d with d ± D / 2, which another lane holds, so the
/// normalized head passes through the warp's [D] of `xs`). Rounds to bf16 where
/// the reference does: weight * bf16(x * rsqrt(mean(x²) + eps)), then x * cos +
/// rotate_half(x) * sin, each product and the sum in bf16.
__device__ inline void normRopeHead(float (&v)[8], const float (&w)[8],
                                    bool qkNorm, float eps, int D,
                                    const float (&cs)[4], const float (&sn)[4],
                                    int distinct, float *xs, int lane) {
  float scale = 1.f;
  if (qkNorm) {
    float ss = 0.f;
#pragma unroll
    for (int j = 0; j < 8; ++j)
      ss = fmaf(v[j], v[j], ss);
    scale = rsqrtf(warpSum(ss) / float(D) + eps);
  }
#pragma unroll
  for (int j = 0; j < 8; ++j)
    if (lane + 32 * j < D)
      xs[lane + 32 * j] =
          qkNorm ? roundBf16(w[j] * roundBf16(v[j] * scale)) : v[j];
  __syncwarp();
  const int half = D / 2;
#pragma unroll
  for (int j = 0; j < 8; ++j) {
    const int d = lane + 32 * j;
    if (d < D) {
      // Index j mod distinct with static indices (registers, not a frame).
      const float c = distinct == 1   ? cs[0]
                      : distinct == 2 ? cs[j & 1]
                                      : cs[j & 3];
      const float s = distinct == 1   ? sn[0]
                      : distinct == 2 ? sn[j & 1]
                                      : sn[j & 3];
      const float rot = d < half ? -xs[d + half] : xs[d - half];
      v[j] = roundBf16(roundBf16(xs[d] * c) + roundBf16(rot * s));
    }
  }
  __syncwarp(); // xs is rewritten by the warp's next head
}

/// What a lane needs of the step before the QKV row is ready: the q/k norm
/// weights of its elements (normRopeHead's w), the row's position and the
/// chunk's first pages. The prefetch fills it before the worker waits (those
/// loads then stay off the chain from the projection to attention); a task
/// that was not prefetched fills it itself. The RoPE row depends on the
/// position, so the prefetch only asks L2 for it and the task loads it
/// beside the q/k/v row (one round trip less between a late QKV tile and
/// the poll).
struct AttnLaneTable {
  float wq[8][32], wk[8][32];
  int32_t pos;
  /// Pool pages of the row's logical pages firstPage + [0, 32) (the chunk's
  /// first 32 pages; entries past the row's table are 0), loaded alongside
  /// pos, so that the first blocks' copies and the append need no dependent
  /// load of the block table.
  int32_t pages[32];
};
constexpr int kAttnLaneTableBytes = (sizeof(AttnLaneTable) + 127) / 128 * 128;
/// It sits above the first 128 bytes of the task shared memory.
__device__ __forceinline__ AttnLaneTable &attnLaneTable() {
  return *reinterpret_cast<AttnLaneTable *>(taskSmem() + 128);
}

/// The row's first logical page of chunk `ch`.
__device__ __forceinline__ int attnFirstPage(const DecodeAttentionParams &p,
                                             int ch) {
  return (ch * p.chunkLen) >> p.pageShift;
}

/// The whole CTA (no barrier; warp 0's entries are visible to warp 0 when it
/// returns): fills `t` for `tile`. Warp 0 loads the position and the pages
/// (and asks L2 for the RoPE row), warp 1 (or 0) the norm weights.
__device__ inline void fillAttnLaneTable(const DecodeAttentionParams &p,
                                         void *const *buffers, uint32_t tile,
                                         AttnLaneTable &t) {
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, D = p.headDim;
  const int b = tile / (p.chunks * p.kvHeads);
  const int pos = bufferAt<const int32_t>(buffers, p.positions)[b];
  if (warp == 0) {
    const int page = attnFirstPage(p, tile % p.chunks) + lane;
    const int32_t pool =
        page < p.pagesPerRow
            ? bufferAt<const int32_t>(
                  buffers, p.blockTable)[size_t(b) * p.pagesPerRow + page]
            : 0;
    if (lane == 0)
      t.pos = pos;
    // The task loads the row's cosines, then sines (beside its q/k/v row):
    // ask L2 for both lines now, without waiting, so that the task's load
    // finds them in L2 instead of memory (run 237).
    const int half = D / 2;
    if (lane < 2)
      prefetchL2(bufferAt<const bf16>(buffers, p.rope) + size_t(pos) * D +
                 lane * half);
    t.pages[lane] = pool;
    __syncwarp();
  }
  if (warp == (kTaskWarps > 1 ? 1 : 0)) {
    for (int j = 0; j < 8; ++j) {
      const bool in = p.qkNorm && lane + 32 * j < D;
      t.wq[j][lane] =
          in ? toFloat(bufferAt<const bf16>(buffers, p.qNorm)[lane + 32 * j])
             : 0.f;
      t.wk[j][lane] =
          in ? toFloat(bufferAt<const bf16>(buffers, p.kNorm)[lane + 32 * j])
             : 0.f;
    }
  }
}

/// Where a task's chunk of the cache lies and how it is cut into blocks in
/// shared memory; the task and its prefetch (decodeAttentionPrefetch) build
/// the same one. Shared memory: the lane table, q [G][D] (scaled), the warps'
/// RoPE scratch [warps][D], the new k and v rows [D] (bf16), scores
/// [G][blockLen], per-head running max / sum / block rescale, partial outputs
/// [slots][G][D], then the two buffers' keys and values [blockLen][D]. The
/// barriers are the worker's (TaskBarriers: keys and values of buffer 0,
/// then of buffer 1).
template <int G> struct AttnChunk {
  int b, h, ch, D, pos, s0, s1, blockLen, blocks, slots;
  // Floats from one head's scores to the next: blockLen, and 8 more on the
  // tensor cores, whose P·V loads of the heads' scores then fall on
  // distinct banks.
  int sPitch;
  // The chunk that holds this step's position appends its k and v to the
  // cache, and reads that row from shared memory rather than the cache (no
  // task of the step reads a row another task wrote: the copies need no
  // proxy fence, and may be issued before the step's QKV projection ends).
  // The host refuses a position outside [0, maxSeq).
  bool holdsNew;
  // Paging: row b's logical page i is pool page table[i]; pages firstPage +
  // [0, 32) are staged in the lane table. Pages of 1 << shift positions.
  int shift, firstPage, kvHeads;
  const int32_t *table;
  bf16 *kPool, *vPool;
  float *qs, *xs, *scores, *runMax, *runSum, *rescale, *partial;
  bf16 *kNew, *vNew, *kvS;

  /// pos: the row's position (positions[b]), read by the caller.
  __device__ AttnChunk(const DecodeAttentionParams &p, void *const *buffers,
                       uint32_t tile, int pos_) {
    ch = tile % p.chunks;
    h = (tile / p.chunks) % p.kvHeads;
    b = tile / (p.chunks * p.kvHeads);
    D = p.headDim;
    pos = pos_;
    s0 = ch * p.chunkLen;
    s1 = min(min(s0 + p.chunkLen, pos + 1), p.maxSeq);
    holdsNew = pos >= s0 && pos < s1;
    // A position's row is D / 8 lanes of 8 columns; a warp covers
    // 32 / (D / 8) positions at once (D / 8 is a power of two dividing 32).
    slots = kTaskWarps * (32 / (D / 8)); // positions in flight per CTA
    // Blocks of up to kAttnBlock positions and 64 KB of keys, two buffers
    // of them (block j + 2 is copied while block j + 1 is in flight and
    // block j computes), fewer positions when the partial outputs of many
    // lane groups leave less room below the linear's weight ring
    // (p.lowSmemBytes), which the worker may be filling for its next task.
    // The tensor-core path keeps one partial output (the CUDA cores one a
    // slot) and pads its score rows (sPitch).
    const bool tc = attnTensorCores(D);
    const int partials = tc ? 1 : slots;
    const int pad = tc ? 8 : 0;
    const int fixedBytes = 128 + kAttnLaneTableBytes + G * D * 4 +
                           kTaskWarps * D * 4 + D * 4 + 3 * kAttnMaxGroup * 4 +
                           16 + partials * G * D * 4 + 128 + G * pad * 4;
    blockLen = min(min(kAttnBlock, 32768 / D),
                   (p.lowSmemBytes - fixedBytes) / (G * 4 + 4 * D * 2));
    // Whole 16-position groups of the tensor-core path (D = 128).
    blockLen = blockLen >= 16 ? blockLen / 16 * 16 : blockLen;
    // A block spans at most 32 pages (a lane of warp 0 copies each): at
    // most 31 P + 1 positions, whole 16-position groups.
    if (blockLen >= 16)
      blockLen = min(blockLen, (31 * p.pageSize + 1) / 16 * 16);
    blocks = s1 > s0 ? (s1 - s0 + blockLen - 1) / blockLen : 0;
    sPitch = blockLen + pad;
    qs = reinterpret_cast<float *>(taskSmem() + 128 + kAttnLaneTableBytes);
    xs = qs + G * D;
    kNew = reinterpret_cast<bf16 *>(xs + kTaskWarps * D);
    vNew = kNew + D;
    scores = reinterpret_cast<float *>(vNew + D);
    runMax = scores + G * sPitch;
    runSum = runMax + kAttnMaxGroup;
    rescale = runSum + kAttnMaxGroup;
    // Aligned by offset from the (128-byte aligned) base, not through an
    // integer address, so the compiler keeps them shared-memory pointers
    // (LDS, not generic loads). partial: 16 bytes (read as float4; blockLen
    // may be odd); the keys and values: 128 (bulk copies).
    unsigned char *base = taskSmem();
    const int partialAt =
        (reinterpret_cast<unsigned char *>(rescale + kAttnMaxGroup) - base +
         15) /
        16 * 16;
    partial = reinterpret_cast<float *>(base + partialAt);
    kvS = reinterpret_cast<bf16 *>(
        base + (partialAt + partials * G * D * 4 + 127) / 128 * 128);
    shift = p.pageShift;
    firstPage = attnFirstPage(p, ch);
    kvHeads = p.kvHeads;
    table = bufferAt<const int32_t>(buffers, p.blockTable) +
            size_t(b) * p.pagesPerRow;
    kPool = bufferAt<bf16>(buffers, p.kCache);
    vPool = bufferAt<bf16>(buffers, p.vCache);
  }

  /// Offset in the pool of the row's cache position s (of KV head h).
  __device__ size_t rowOffset(int s) const {
    const int lp = s >> shift, li = lp - firstPage;
    const int32_t page = li < 32 ? attnLaneTable().pages[li] : table[lp];
    return ((size_t(page) * kvHeads + h) << shift) * D +
           size_t(s & ((1 << shift) - 1)) * D;
  }

  /// Warp 0: the copies of block j into buffer j % 2, lane i copying the
  /// block's rows in its i-th page (the lanes' page lookups and copy issues
  /// overlap). The last block of the chunk that holds the new row copies
  /// one row less (possibly none: the barriers then complete on the arrival
  /// alone).
  __device__ void issue(int j, TaskBarriers &tb) const {
    const int lane = threadIdx.x % 32;
    const int buf = j % 2, blk = s0 + j * blockLen;
    const int rows =
        min(blockLen, s1 - blk) - (holdsNew && j == blocks - 1 ? 1 : 0);
    bf16 *kS = kvS + buf * 2 * blockLen * D;
    if (lane == 0) {
      const uint32_t bytes = uint32_t(max(rows, 0) * D * 2);
      mbarrierArriveExpectTx(&tb.kv[2 * buf], bytes);
      mbarrierArriveExpectTx(&tb.kv[2 * buf + 1], bytes);
    }
    __syncwarp(); // the expected bytes are set before any copy completes
    const int lp = (blk >> shift) + lane;
    if (rows > 0 && lp <= (blk + rows - 1) >> shift) {
      const int a = max(blk, lp << shift),
                e = min(blk + rows, (lp + 1) << shift);
      const size_t src = rowOffset(a);
      const uint32_t bytes = uint32_t((e - a) * D * 2);
      // Cache rows are read once per step (first out of L2).
      const uint64_t policy = l2EvictFirstPolicy();
      bulkLoad(kS + size_t(a - blk) * D, kPool + src, bytes, &tb.kv[2 * buf],
               policy);
      bulkLoad(kS + size_t(blockLen + a - blk) * D, vPool + src, bytes,
               &tb.kv[2 * buf + 1], policy);
    }
  }

  /// Blocks the prefetch issues (TAWA_MEGA_ATTN_PREFETCH_ONE_UPTO).
  __device__ int prefetchBlocks() const {
    return blocks <= TAWA_MEGA_ATTN_PREFETCH_ONE_UPTO ? 1 : 2;
  }

  /// Warp 0: the copies of the first `count` blocks (at most two, the
  /// buffers), which read only the cache rows of earlier steps.
  __device__ void issueFirst(TaskBarriers &tb, int count = 2) const {
#pragma unroll 1
    for (int j = 0; j < min(blocks, count); ++j)
      issue(j, tb);
  }
};

/// Calls f(std::integral_constant<int, G>) for the group size G of `group`
/// (1, 2, 4, 8: the binding admits only these) when the build has it
/// (TAWA_MEGA_ATTN_GROUPS); the host refuses plans it lacks, so reaching
/// the trap is a bug.
template <typename F> __device__ void withGroup(int group, F &&f) {
  constexpr int kGroups = TAWA_MEGA_ATTN_GROUPS;
  if constexpr ((kGroups & 1) != 0)
    if (group == 1)
      return f(std::integral_constant<int, 1>());
  if constexpr ((kGroups & 2) != 0)
    if (group == 2)
      return f(std::integral_constant<int, 2>());
  if constexpr ((kGroups & 4) != 0)
    if (group == 4)
      return f(std::integral_constant<int, 4>());
  if constexpr ((kGroups & 8) != 0)
    if (group == 8)
      return f(std::integral_constant<int, 8>());
  __trap();
}

/// The whole CTA: pair (b, h)'s output, out = Σ_c exp(lse_c - m) o_c /
/// Σ_c exp(lse_c - m) over its C chunks' partial outputs (float [C][G][D])
/// and log-sum-exps ([C][G]). It is on the chain between attention and the O
/// projection and runs from a cold instruction cache, so it is kept short:
/// warp w weighs the chunks of heads w, w + warps, ... (a lane per chunk),
/// then each thread combines four consecutive output elements, the chunks'
/// loads independent. Uses the first C × G floats of the task shared memory.
__device__ inline void mergeAttentionChunks(const float *partOut,
                                            const float *partLse, bf16 *out,
                                            int G, int D, int C,
                                            uint32_t pair) {
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const size_t part0 = size_t(pair) * C;
  const float *lse = partLse + part0 * G;
  const float *po = partOut + part0 * G * D;
  out += size_t(pair) * G * D;
  float *weight = reinterpret_cast<float *>(taskSmem()); // [C][G]
  // Rolled loops: a lane's chunks are one iteration up to 32 chunks.
#pragma unroll 1
  for (int g = warp; g < G; g += kTaskWarps) {
    float m = -INFINITY;
#pragma unroll 1
    for (int c = lane; c < C; c += 32)
      m = fmaxf(m, lse[c * G + g]);
    m = warpMax(m);
    float den = 0.f;
#pragma unroll 1
    for (int c = lane; c < C; c += 32) {
      const float l = lse[c * G + g];
      const float e = l == -INFINITY ? 0.f : __expf(l - m);
      weight[c * G + g] = e;
      den += e;
    }
    den = warpSum(den);
    const float inv = den > 0.f ? __frcp_rn(den) : 0.f;
    __syncwarp();
#pragma unroll 1
    for (int c = lane; c < C; c += 32)
      weight[c * G + g] *= inv;
  }
  __syncthreads();
#pragma unroll 1
  for (int i = 4 * threadIdx.x; i < G * D; i += 4 * kTaskThreads) {
    const int g = i / D;
    float4 o = make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll 8
    for (int c = 0; c < C; ++c) {
      const float w = weight[c * G + g];
      const float4 v = *reinterpret_cast<const float4 *>(po + c * G * D + i);
      o.x = fmaf(w, v.x, o.x), o.y = fmaf(w, v.y, o.y);
      o.z = fmaf(w, v.z, o.z), o.w = fmaf(w, v.w, o.w);
    }
    __nv_bfloat162 lo = __floats2bfloat162_rn(o.x, o.y);
    __nv_bfloat162 hi = __floats2bfloat162_rn(o.z, o.w);
    uint2 packed;
    packed.x = *reinterpret_cast<uint32_t *>(&lo);
    packed.y = *reinterpret_cast<uint32_t *>(&hi);
    *reinterpret_cast<uint2 *>(out + i) = packed;
  }
}

/// The whole CTA, after a chunk of pair (b, h) stored its partial output, in
/// plans without a merge task: counts the chunk in counters[pair]; the
/// chunk that completes the count merges the pair. The count's add releases
/// this CTA's partial (stored before the barrier) and acquires the chunks
/// counted before it, whose partials the merge then reads.
__device__ inline void mergeIfLastChunk(const DecodeAttentionParams &p,
                                        void *const *buffers, uint32_t pair) {
  __syncthreads();
  bool last = false;
  if (threadIdx.x == 0)
    last = fetchAddAcqRel(bufferAt<uint32_t>(buffers, p.counters) + pair, 1u) ==
           uint32_t(p.chunks - 1);
  if (__syncthreads_or(last))
    mergeAttentionChunks(bufferAt<const float>(buffers, p.partOut),
                         bufferAt<const float>(buffers, p.partLse),
                         bufferAt<bf16>(buffers, p.out), p.group, p.headDim,
                         p.chunks, pair);
}

/// DC: the head dimension when it is known at compile time (128, every
/// benchmarked model), else 0 (read from p): the constant removes the
/// per-element bounds checks and index arithmetic, most of the instructions
/// of a task that runs once per layer from a cold instruction cache.
///
/// With D = 128 the scores and P·V run on the tensor cores (mma.m16n8k16,
/// bf16 operands, float sums): a warp scores 16 positions against the
/// group's q heads (the n of the product, padded to 8) as K rows × qᵀ, and
/// computes its 32 output dimensions as Vᵀ (read with ldmatrix.trans) ×
/// Pᵀ; q and the probabilities are rounded to bf16 as the reference's bf16
/// attention does. The block's value rows are permuted in place first
/// (permuteValueRows): ldmatrix.trans reads 16 bytes of 8 rows 256 bytes
/// apart, all on the same four banks as copied, and P·V took half of a
/// batch-16 task (runs 306-307: 7.3 of 14.4 µs, 3.9 permuted); the softmax
/// keeps a lane's scores of the block in registers. On the CUDA cores a
/// 256-position chunk took 28 µs (one warp per scheduler, shuffle reductions
/// per position); other head dimensions keep that path.
template <int G, int DC>
__device__ void decodeAttentionGroup(const DecodeAttentionParams &p,
                                     void *const *buffers, uint32_t tile,
                                     bool prefetched, const PollWatch *poll) {
  AttnLaneTable &lt = attnLaneTable();
  if (!prefetched) {
    fillAttnLaneTable(p, buffers, tile, lt);
    __syncthreads();
  }
  const AttnChunk<G> c(p, buffers, tile, lt.pos);
  TAWA_MEGA_TASK_STAMP(1);
  const int b = c.b, h = c.h, ch = c.ch, D = DC ? DC : c.D, pos = c.pos;
  const int s0 = c.s0, s1 = c.s1;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  TaskBarriers &tb = taskBarriers();
  // The cache rows go first (unless the worker issued them before the
  // projection ended): they are the task's bytes.
  if (!prefetched && warp == 0)
    c.issueFirst(tb);
  // This row's q heads of the group and its new k and v, straight from the
  // QKV projection. Warp w normalizes and rotates heads w, w + warps, ... of
  // the G q heads and the k head (item G).
  const bf16 *qkvRow =
      bufferAt<const bf16>(buffers, p.qkv) + size_t(b) * p.qkvCols;
  constexpr int kItems = (G + 1 + kTaskWarps - 1) / kTaskWarps;
  float hv[kItems][8];
  // Polled (the worker did not wait for the projection): every load —
  // the row's elements, the RoPE row's and the new v's — is issued before
  // any is checked, and the reloads of those still poisoned go together
  // (repollAll).
  uint16_t raw[kItems][8];
  const uint16_t *src[kItems]; // the lane's elements of item it: + 32 j
  uint32_t valid[kItems];      // bit j: element j is the lane's
#pragma unroll
  for (int it = 0; it < kItems; ++it) {
    const int item = warp + it * kTaskWarps;
    src[it] = reinterpret_cast<const uint16_t *>(
                  qkvRow + (item < G ? size_t(h * G + item) * D
                                     : size_t(p.kvHeads * G + h) * D)) +
              lane;
    valid[it] = 0;
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      const bool in = item <= G && lane + 32 * j < D;
      valid[it] |= uint32_t(in) << j;
      raw[it][j] = in ? (poll ? loadRelaxed(src[it] + 32 * j) : src[it][32 * j])
                      : uint16_t(0);
    }
  }
  // The row's RoPE cosines and sines (the runtime's table, bf16; the
  // prefetch asked L2 for them).
  float cs[4], sn[4];
  {
    const int half = D / 2, distinct = max(1, half / 32);
    const bf16 *rope = bufferAt<const bf16>(buffers, p.rope) + size_t(pos) * D;
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const int f = (lane + 32 * j) % half;
      cs[j] = j < distinct ? toFloat(rope[f]) : 0.f;
      sn[j] = j < distinct ? toFloat(rope[half + f]) : 0.f;
    }
  }
  uint4 vNewPart = make_uint4(0, 0, 0, 0); // thread t < D / 8: v[8t, 8t + 8)
  const uint4 *vSrc = reinterpret_cast<const uint4 *>(
      qkvRow + size_t((p.kvHeads * G + p.kvHeads + h) * D) + threadIdx.x * 8);
  if (threadIdx.x < D / 8)
    vNewPart = poll ? loadRelaxed(vSrc) : *vSrc;
  if (poll) {
    if constexpr (kItems * 8 <= 32) {
      uint16_t flat[kItems * 8];
      uint32_t flatValid = 0;
#pragma unroll
      for (int it = 0; it < kItems; ++it) {
        flatValid |= valid[it] << (8 * it);
#pragma unroll
        for (int j = 0; j < 8; ++j)
          flat[it * 8 + j] = raw[it][j];
      }
      repollAll(
          flat, [&](int k) { return src[k / 8] + 32 * (k % 8); }, flatValid,
          *poll);
#pragma unroll
      for (int it = 0; it < kItems; ++it)
#pragma unroll
        for (int j = 0; j < 8; ++j)
          raw[it][j] = flat[it * 8 + j];
    } else {
#pragma unroll
      for (int it = 0; it < kItems; ++it)
        repollAll(
            raw[it], [&](int j) { return src[it] + 32 * j; }, valid[it], *poll);
    }
    if (threadIdx.x < D / 8)
      repoll(vNewPart, vSrc, *poll);
  }
#pragma unroll
  for (int it = 0; it < kItems; ++it)
#pragma unroll
    for (int j = 0; j < 8; ++j)
      hv[it][j] = toFloat(__ushort_as_bfloat16(raw[it][j]));
  const int rowLanes = D / 8, perWarp = 32 / rowLanes;
  const int col = (lane % rowLanes) * 8, sub = lane / rowLanes;
  const int slots = c.slots, blockLen = c.blockLen, blocks = c.blocks;
  const int sPitch = c.sPitch;
  const bool holdsNew = c.holdsNew;
  float *qs = c.qs, *xs = c.xs, *scores = c.scores, *runMax = c.runMax,
        *runSum = c.runSum, *rescale = c.rescale, *partial = c.partial;
  bf16 *kNew = c.kNew, *vNew = c.vNew;
  const bf16 *kvS = c.kvS;
  constexpr bool kTC = attnTensorCores(DC);
  constexpr int kMT = kTC ? DC / (16 * kTaskWarps) : 1; // m tiles per warp
  const int fg = lane / 4, ft = lane % 4; // the lane's fragment row, column

  // q (scaled) and the new k into shared memory; the new k and v into the
  // cache for the steps after this one.
  {
    const int distinct = max(1, D / 64);
    // The append's row in the pool (in the staged pages unless the chunk
    // is longer than 32 pages).
    const size_t newRow = holdsNew ? c.rowOffset(pos) : 0;
    bf16 *kCacheRow = c.kPool + newRow;
    bf16 *vCacheRow = c.vPool + newRow;
#pragma unroll
    for (int it = 0; it < kItems; ++it) {
      const int item = warp + it * kTaskWarps;
      if (item > G || (item == G && !holdsNew))
        continue; // warp-uniform
      const bool isQ = item < G;
      float w[8];
#pragma unroll
      for (int j = 0; j < 8; ++j)
        w[j] = isQ ? lt.wq[j][lane] : lt.wk[j][lane];
      normRopeHead(hv[it], w, p.qkNorm != 0, p.eps, D, cs, sn, distinct,
                   xs + warp * D, lane);
#pragma unroll
      for (int j = 0; j < 8; ++j) {
        const int d = lane + 32 * j;
        if (d >= D)
          continue;
        if (isQ) {
          qs[item * D + d] = hv[it][j] * p.scale;
        } else {
          kNew[d] = toBf16(hv[it][j]);
          kCacheRow[d] = toBf16(hv[it][j]);
        }
      }
    }
    if (holdsNew && threadIdx.x < D / 8) {
      reinterpret_cast<uint4 *>(vNew)[threadIdx.x] = vNewPart;
      reinterpret_cast<uint4 *>(vCacheRow)[threadIdx.x] = vNewPart;
    }
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
  // Tensor cores: the output dims [16 (kMT warp + mt), + 16) of heads 2t,
  // 2t + 1 (lane (g, t) holds dims g and g + 8).
  float accO[kMT][4];
#pragma unroll
  for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
    for (int e = 0; e < 4; ++e)
      accO[mt][e] = 0.f;
  __syncthreads();
  markTaskReady(); // q, k and v are in (normalized and rotated)
  // The second block, when the prefetch left it for after the q/k/v row
  // (TAWA_MEGA_ATTN_PREFETCH_ONE_UPTO: the row no longer lands behind both
  // blocks).
  if (prefetched && c.blocks > 1 && c.prefetchBlocks() < 2 && warp == 0)
    c.issue(1, tb);
  TAWA_MEGA_TASK_STAMP(2);
  // Tensor cores: lane (g, t)'s B operand of the scores, q head g (zero past
  // the group) at dims 32 c + 8 t + [0, 8) as bf16 (the K permutation of
  // linearStream: the A loads are then 16 bytes).
  uint4 qf[kTC ? DC / 32 : 1];
  if constexpr (kTC) {
#pragma unroll
    for (int cc = 0; cc < DC / 32; ++cc) {
      qf[cc] = make_uint4(0, 0, 0, 0);
      if (fg < G) {
        const float4 a =
            *reinterpret_cast<const float4 *>(qs + fg * D + 32 * cc + 8 * ft);
        const float4 e = *reinterpret_cast<const float4 *>(
            qs + fg * D + 32 * cc + 8 * ft + 4);
        qf[cc] = make_uint4(packBf16x2(a.x, a.y), packBf16x2(a.z, a.w),
                            packBf16x2(e.x, e.y), packBf16x2(e.z, e.w));
      }
    }
  }

  const int slot = warp * perWarp + sub;
  // Traced: thread 0 adds its waits for the cache rows (TaskStamps'
  // weightWaitNs), unless that times a phase (TAWA_MEGA_TRACE_ATTN_PHASE).
  const bool timed = TAWA_MEGA_TRACE_PHASES && !TAWA_MEGA_TRACE_ATTN_PHASE &&
                     threadIdx.x == 0 && taskStamps().armed;
  // Bit b: parity of buffer b's barriers (its keys and values complete
  // together, once per block).
  uint32_t phase = tb.kvPhase;
  // Tensor cores: buffer buf's values (copied beside the keys) waited for
  // and permuted for P·V's reads, their rows up to the next 16 (the zeroed
  // ones and the step's own).
  auto permuteBlockValues = [&](int buf, uint32_t par, int n) {
    mbarrierWaitTraced(&tb.kv[2 * buf + 1], par, timed);
    permuteValueRows(c.kvS + (buf * 2 + 1) * blockLen * D, (n + 15) / 16 * 16);
    fenceProxyAsyncShared(); // block j + 2's copies rewrite these bytes
  };
  for (int j = 0; j < blocks; ++j) {
    const int buf = j % 2, blk = s0 + j * blockLen;
    const int n = min(blockLen, s1 - blk);
    const bf16 *kS = kvS + buf * 2 * blockLen * D;
    const bf16 *vS = kS + blockLen * D;
    // The block's row that is this step's (read from kNew / vNew), or none.
    const int newAt = holdsNew && j == blocks - 1 ? n - 1 : -1;
    const uint32_t par = (phase >> buf) & 1;
    mbarrierWaitTraced(&tb.kv[2 * buf], par, timed);
    TAWA_MEGA_TASK_STAMP(3);
    if constexpr (kTC) {
      bf16 *kW = c.kvS + buf * 2 * blockLen * D, *vW = kW + blockLen * D;
      // The step's own row, which the copies left out, and zero value rows
      // up to the next 16 (their probabilities are 0, stale bits could be
      // NaN): disjoint from the bytes the copies write.
      if (newAt >= 0 && threadIdx.x < D / 8) {
        reinterpret_cast<uint4 *>(kW + newAt * D)[threadIdx.x] =
            reinterpret_cast<const uint4 *>(kNew)[threadIdx.x];
        reinterpret_cast<uint4 *>(vW + newAt * D)[threadIdx.x] =
            reinterpret_cast<const uint4 *>(vNew)[threadIdx.x];
      }
      const int n16 = (n + 15) / 16 * 16;
      for (int i = threadIdx.x; i < (n16 - n) * (D / 8); i += kTaskThreads)
        reinterpret_cast<uint4 *>(vW + n * D)[i] = make_uint4(0, 0, 0, 0);
      // Later tasks' copies write these bytes through the async proxy.
      fenceProxyAsyncShared();
      __syncthreads();
      for (int grp = warp; grp * 16 < n; grp += kTaskWarps) {
        float d[4] = {0.f, 0.f, 0.f, 0.f};
        const bf16 *lo = kS + (grp * 16 + fg) * D + 8 * ft;
        const bf16 *hi = lo + 8 * D;
#pragma unroll
        for (int cc = 0; cc < DC / 32; ++cc) {
          const uint4 a = *reinterpret_cast<const uint4 *>(lo + 32 * cc);
          const uint4 e = *reinterpret_cast<const uint4 *>(hi + 32 * cc);
          mmaBf16m16n8k16(d, a.x, e.x, a.y, e.y, qf[cc].x, qf[cc].y);
          mmaBf16m16n8k16(d, a.z, e.z, a.w, e.w, qf[cc].z, qf[cc].w);
        }
        const int s = grp * 16 + fg;
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int head = 2 * ft + e % 2, at = s + (e / 2) * 8;
          if (head < G && at < n)
            scores[head * sPitch + at] = d[e];
        }
      }
    } else {
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
            unpack8(*reinterpret_cast<const uint4 *>(
                        (s == newAt ? kNew : kS + s * D) + col),
                    kf);
#pragma unroll
          for (int g = 0; g < G; ++g) {
            const float4 a =
                *reinterpret_cast<const float4 *>(qs + g * D + col);
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
              scores[g * sPitch + s] = dot[u][g];
        }
      }
    } // CUDA cores
    __syncthreads();
    TAWA_MEGA_TASK_STAMP(4);
    if constexpr (kTC)
      permuteBlockValues(buf, par, n);
    // Online softmax: warp w updates heads w, w + warps, ...
    if constexpr (kTC) {
      // A block of at most 256 positions: a lane's 8 scores of the head
      // loaded at once, kept in registers for the exponentials.
      constexpr int kPer = 256 / 32;
      for (int g = warp; g < G; g += kTaskWarps) {
        // Only lane 0 touches the head's running max and sum (read here,
        // written below): with every lane reading them and lane 0 writing
        // after only shuffles, racecheck warned (runs 308, 310).
        float prevMax = 0.f, prevSum = 0.f;
        if (lane == 0)
          prevMax = runMax[g], prevSum = runSum[g];
        prevMax = __shfl_sync(0xffffffffu, prevMax, 0);
        float v[kPer];
        float m = -INFINITY;
#pragma unroll
        for (int i = 0; i < kPer; ++i) {
          const int s = lane + 32 * i;
          v[i] = s < n ? scores[g * sPitch + s] : -INFINITY;
          m = fmaxf(m, v[i]);
        }
        m = warpMax(m);
        const float mNew = fmaxf(prevMax, m);
        float sum = 0.f;
#pragma unroll
        for (int i = 0; i < kPer; ++i) {
          const int s = lane + 32 * i;
          const float e = __expf(v[i] - mNew); // 0 past n
          if (s < n)
            scores[g * sPitch + s] = e;
          sum += e;
        }
        sum = warpSum(sum);
        if (lane == 0) {
          const float r = __expf(prevMax - mNew); // 0 on the first block
          rescale[g] = r;
          runSum[g] = prevSum * r + sum;
          runMax[g] = mNew;
        }
      }
    } else {
      for (int g = warp; g < G; g += kTaskWarps) {
        float m = -INFINITY;
        for (int s = lane; s < n; s += 32)
          m = fmaxf(m, scores[g * sPitch + s]);
        m = warpMax(m);
        const float mNew = fmaxf(runMax[g], m);
        float sum = 0.f;
        for (int s = lane; s < n; s += 32) {
          const float e = __expf(scores[g * sPitch + s] - mNew);
          scores[g * sPitch + s] = e;
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
    }
    __syncthreads();
    TAWA_MEGA_TASK_STAMP(5);
    if constexpr (kTC) {
      // Vᵀ (ldmatrix.trans of 16 positions × 16 dims) × Pᵀ (16 positions ×
      // the heads): lane l addresses row l % 8 of matrix l / 8, matrices
      // (positions 0-7 | 8-15) × (dims 0-7 | 8-15).
      const float r0 = 2 * ft < G ? rescale[2 * ft] : 1.f;
      const float r1 = 2 * ft + 1 < G ? rescale[2 * ft + 1] : 1.f;
#pragma unroll
      for (int mt = 0; mt < kMT; ++mt) {
        accO[mt][0] *= r0, accO[mt][2] *= r0;
        accO[mt][1] *= r1, accO[mt][3] *= r1;
      }
      // (The values were waited for before they were permuted.)
      const int mat = lane / 8;
      // The lane's row: (mat >= 2 ? 8 : 0) + lane % 8 of each 16; its
      // 16 bytes: piece 2 (warp kMT + mt) + mat % 2, where attnPiece put it.
      uint32_t vAddr[kMT];
#pragma unroll
      for (int mt = 0; mt < kMT; ++mt) {
        const int piece = 2 * (warp * kMT + mt) + (mat & 1);
        vAddr[mt] = static_cast<uint32_t>(
            __cvta_generic_to_shared(vS + ((mat >= 2 ? 8 : 0) + lane % 8) * D +
                                     8 * attnPiece(piece, lane % 8)));
      }
      const float *pr = scores + fg * sPitch + 2 * ft;
      for (int kk = 0; kk * 16 < n; ++kk) {
        const int s = kk * 16 + 2 * ft;
        uint32_t b0 = 0, b1 = 0;
        if (fg < G) {
          b0 = packBf16x2(s < n ? pr[kk * 16] : 0.f,
                          s + 1 < n ? pr[kk * 16 + 1] : 0.f);
          b1 = packBf16x2(s + 8 < n ? pr[kk * 16 + 8] : 0.f,
                          s + 9 < n ? pr[kk * 16 + 9] : 0.f);
        }
#pragma unroll
        for (int mt = 0; mt < kMT; ++mt) {
          uint32_t a0, a1, a2, a3;
          ldmatrixX4Trans(vAddr[mt] + kk * 16 * D * 2, a0, a1, a2, a3);
          mmaBf16m16n8k16(accO[mt], a0, a1, a2, a3, b0, b1);
        }
      }
    } else {
      // P·V over the slot's positions.
#pragma unroll
      for (int g = 0; g < G; ++g) {
        const float r = rescale[g];
#pragma unroll
        for (int e = 0; e < 8; ++e)
          acc[g][e] *= r;
      }
      mbarrierWaitTraced(&tb.kv[2 * buf + 1], par, timed);
#pragma unroll 4
      for (int s = slot; s < n; s += slots) {
        float vf[8];
        unpack8(*reinterpret_cast<const uint4 *>(
                    (s == newAt ? vNew : vS + s * D) + col),
                vf);
#pragma unroll
        for (int g = 0; g < G; ++g) {
          const float pg = scores[g * sPitch + s];
#pragma unroll
          for (int e = 0; e < 8; ++e)
            acc[g][e] = fmaf(pg, vf[e], acc[g][e]);
        }
      }
    } // CUDA cores
    // Scores and rescale are rewritten by the next block, this buffer by
    // block j + 2 (its copies are issued after every thread's reads).
    __syncthreads();
    TAWA_MEGA_TASK_STAMP(6);
    phase ^= 1u << buf;
    if (warp == 0 && j + 2 < blocks)
      c.issue(j + 2, tb);
  }

  // Sum the slots' partial outputs (tensor cores: one slot, each warp's
  // dims its own).
  if constexpr (kTC) {
#pragma unroll
    for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int head = 2 * ft + e % 2;
        const int dim = (warp * kMT + mt) * 16 + fg + (e / 2) * 8;
        if (head < G)
          partial[head * D + dim] = accO[mt][e];
      }
  } else {
#pragma unroll
    for (int g = 0; g < G; ++g)
#pragma unroll
      for (int e = 0; e < 8; ++e)
        partial[(slot * G + g) * D + col + e] = acc[g][e];
  }
  __syncthreads();
  const int sumSlots = kTC ? 1 : slots;
  TAWA_MEGA_TASK_STAMP(7);
  if (threadIdx.x == 0) // every thread has read the phase (the loop's start)
    tb.kvPhase = phase;
  // Four consecutive elements of one head per thread (D % 8 == 0).
  const size_t part = (size_t(b) * p.kvHeads + h) * p.chunks + ch;
  for (int i = 4 * threadIdx.x; i < G * D; i += 4 * kTaskThreads) {
    const int g = i / D;
    float4 o = make_float4(0.f, 0.f, 0.f, 0.f);
    for (int w = 0; w < sumSlots; ++w) {
      const float4 v =
          *reinterpret_cast<const float4 *>(partial + w * G * D + i);
      o.x += v.x, o.y += v.y, o.z += v.z, o.w += v.w;
    }
    const float l = runSum[g];
    const float inv = l > 0.f ? __frcp_rn(l) : 0.f;
    o.x *= inv, o.y *= inv, o.z *= inv, o.w *= inv;
    if (p.chunks == 1) {
      __nv_bfloat162 lo = __floats2bfloat162_rn(o.x, o.y);
      __nv_bfloat162 hi = __floats2bfloat162_rn(o.z, o.w);
      uint2 packed;
      packed.x = *reinterpret_cast<uint32_t *>(&lo);
      packed.y = *reinterpret_cast<uint32_t *>(&hi);
      *reinterpret_cast<uint2 *>(bufferAt<bf16>(buffers, p.out) +
                                 (size_t(b) * p.kvHeads + h) * G * D + i) =
          packed;
    } else {
      *reinterpret_cast<float4 *>(bufferAt<float>(buffers, p.partOut) +
                                  part * G * D + i) = o;
      if (i % D == 0)
        bufferAt<float>(buffers, p.partLse)[part * G + g] =
            l > 0.f ? runMax[g] + __logf(l) : -INFINITY;
    }
  }
  markTaskComputed();
  if (p.chunks > 1 && p.counters != tawa::mega::kNoBuffer)
    mergeIfLastChunk(p, buffers, uint32_t(b * p.kvHeads + h));
}

/// `prefetched`: decodeAttentionPrefetch ran for this tile, and nothing ran
/// on the worker since.
/// `poll`: non-null when the worker did not wait for the task's event: the
/// q/k/v row is polled.
__device__ inline void decodeAttentionTask(const DecodeAttentionParams &p,
                                           void *const *buffers, uint32_t tile,
                                           bool prefetched,
                                           const PollWatch *poll = nullptr) {
  withGroup(p.group, [&](auto g) {
    if (p.headDim == 128)
      decodeAttentionGroup<decltype(g)::value, 128>(p, buffers, tile,
                                                    prefetched, poll);
    else if constexpr (TAWA_MEGA_ATTN_ANY_HEAD_DIM != 0)
      decodeAttentionGroup<decltype(g)::value, 0>(p, buffers, tile, prefetched,
                                                  poll);
    else
      __trap(); // refused by the host (attentionCompiled)
  });
}

/// The whole CTA, when the worker's next task is this attention tile and
/// only that task runs on the worker before it (p.prefetch: the plan has no
/// just-in-time task, which could run in between and overwrite the low
/// shared memory): issues the copies of the chunk's first blocks of cached
/// keys and values, which no task of the step writes, so that they stream
/// while the QKV projection finishes. Returns whether it did.
__device__ inline bool decodeAttentionPrefetch(const DecodeAttentionParams &p,
                                               void *const *buffers,
                                               uint32_t tile) {
  if (!p.prefetch)
    return false;
  AttnLaneTable &lt = attnLaneTable();
  fillAttnLaneTable(p, buffers, tile, lt);
  if (threadIdx.x < 32)
    withGroup(p.group, [&](auto g) {
      const AttnChunk<decltype(g)::value> c(p, buffers, tile, lt.pos);
      c.issueFirst(taskBarriers(), c.prefetchBlocks());
    });
  return true;
}

/// Tile (b, h) of a merge task (plans with a separate merge).
__device__ inline void attentionMergeTask(const AttentionMergeParams &p,
                                          void *const *buffers, uint32_t tile) {
  mergeAttentionChunks(bufferAt<const float>(buffers, p.partOut),
                       bufferAt<const float>(buffers, p.partLse),
                       bufferAt<bf16>(buffers, p.out), p.group, p.headDim,
                       p.chunks, tile);
}

} // namespace tawa::device::mega
