//===- TaskParams.h - what the decode task functions read -------*- C++ -*-===//
//
// The parameters of the decode step's task functions (docs/MEGAKERNEL.md,
// "Binding"), shared byte for byte by the host binding (DecodeBinding.h) and
// the device task functions (tawa/device/mega/tasks/). Scheduling lives in
// the tables blob (DeviceLayout.h); data lives here: one OpParams per
// operator, and a table of buffer pointers the host fills at run time
// (weights, activations, KV cache, inputs). A parameter that names a buffer
// holds its index in that table.
//
// Plain structs of fixed-width fields; each kind's struct is read through
// the 128-byte OpParams slot of its operator.
//
//===----------------------------------------------------------------------===//

#ifndef TAWA_MEGA_TASKPARAMS_H
#define TAWA_MEGA_TASKPARAMS_H

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace tawa::mega {

/// TaskDesc::kind of each task function: OpKind (TGraph.h) + 1, repeated
/// here for the device (DecodeBinding.cpp checks that they agree).
enum class TaskKind : uint8_t {
  Embedding = 1,
  RmsNormLinear = 2,
  LinearResidual = 3,
  DecodeAttention = 4,
  AttentionMerge = 5,
  Argmax = 6,
};

/// Element type of a bound buffer.
enum class BufferType : uint32_t { BF16 = 0, F32 = 1, I32 = 2 };

/// A buffer parameter that names nothing.
constexpr uint32_t kNoBuffer = 0xFFFFFFFFu;

#ifdef __CUDACC__
#define TAWA_MEGA_HD __host__ __device__
#else
#define TAWA_MEGA_HD
#endif

/// The task kinds that, in a plan that polls its inputs (batch 1, no JIT
/// tasks: MegaDecoder.cu), read their bf16 inputs by polling instead of
/// waiting for their events (docs/MEGAKERNEL.md, "Polled activations").
TAWA_MEGA_HD constexpr bool pollingTaskKind(uint32_t kind) {
  return kind == uint32_t(TaskKind::RmsNormLinear) ||
         kind == uint32_t(TaskKind::LinearResidual) ||
         kind == uint32_t(TaskKind::DecodeAttention);
}

/// Rows of tokens: at most this many batch rows per linear tile (wider
/// batches are split into row tiles by the graph).
constexpr int kMaxTileRows = 64;

/// Dynamic shared memory the task functions may use (one CTA per SM).
constexpr int32_t kTaskSmemBytes = 224 * 1024;
/// The top of it holds the tasks' barriers (kLinearRingBarrierBytes) and,
/// below them, the weight ring of the linear task: a worker fills the ring
/// with the first stages of its next linear task while it waits for that
/// task's inputs, and may meanwhile run just-in-time tasks (attention,
/// merge), so every task other than the linear keeps below the ring
/// (taskLowSmemBytes). The ring is one size for a whole plan: 8 slots of 16
/// weight rows × 512 elements (136 KB) up to 8 rows per tile, of 16 × 256
/// (72 KB) above, so that 16 input rows of 4096 fit below it in one pass.
constexpr int32_t kLinearRingBarrierBytes = 512;
TAWA_MEGA_HD inline int32_t linearRingBytes(int32_t tileRows) {
  return tileRows > 8 ? 8 * 16 * (256 + 32) * 2 : 8 * 16 * (512 + 32) * 2;
}
TAWA_MEGA_HD inline int32_t taskLowSmemBytes(int32_t ringBytes) {
  return kTaskSmemBytes - kLinearRingBarrierBytes - ringBytes;
}
/// Shared memory of a linear tile kept for its row scales, at the bottom.
constexpr int32_t kLinearSmemReserve = 512;

TAWA_MEGA_HD inline int32_t alignUp128(int32_t n) {
  return (n + 127) / 128 * 128;
}

/// Elements between the staged input rows of a linear tile whose pass is
/// `klen` wide: klen rounded up to 32, plus 32 when that is a multiple of 64,
/// so that the rows g and g + 1 that one 8-lane phase of the tensor-core
/// operand loads reads fall in opposite halves of the shared-memory banks.
TAWA_MEGA_HD inline int32_t linearInputPitch(int32_t klen) {
  const int32_t k32 = (klen + 31) / 32 * 32;
  return k32 % 64 == 0 ? k32 + 32 : k32;
}

/// A linear tile's float sums: where the tile has at least
/// kLinearAccSlices 16-row weight blocks, each warp owns whole blocks and
/// adds its sums into one [rows][vcols] accumulator; with fewer, the warps
/// split each block's K, and each adds into its own slice (kLinearAccSlices
/// of them), summed in the epilogue — so that no two warps add into the same
/// element (a float add into shared memory is a compare-and-swap loop on
/// Hopper, and contended it bounded the 16-row tiles, run 150). Bytes for
/// tiles of up to `rows` × `vcols` (a narrower tile, the operator's last,
/// may split where the full one owns).
constexpr int32_t kLinearAccSlices = 4;
TAWA_MEGA_HD inline int32_t linearAccBytes(int32_t rows, int32_t vcols) {
  const int32_t blocks = (vcols + 15) / 16;
  const int32_t split =
      kLinearAccSlices *
      (blocks < kLinearAccSlices - 1 ? blocks : kLinearAccSlices - 1);
  return alignUp128(rows * 16 * 4 * (blocks > split ? blocks : split));
}

/// The K extent a linear tile of `rows` rows and `vcols` weight rows stages
/// per pass: all of K when the bf16 input rows ([rows][linearInputPitch])
/// fit next to the float accumulator (linearAccBytes) below the weight ring
/// (linearRingBytes(rows)),
/// else the widest multiple of 256 that does. 0 when no pass fits (the
/// binding rejects such a tile).
TAWA_MEGA_HD inline int32_t linearChunk(int32_t rows, int32_t vcols,
                                        int32_t k) {
  const int32_t room = taskLowSmemBytes(linearRingBytes(rows)) -
                       kLinearSmemReserve - linearAccBytes(rows, vcols);
  if (room >= alignUp128(rows * linearInputPitch(k) * 2))
    return k;
  const int32_t kc = room > 0 ? (room / (rows * 2) - 32) / 256 * 256 : 0;
  return kc >= 256 ? kc : 0;
}

/// The staged weight layout. A linear reads its weights in stages of 16
/// rows × a piece of K, and a stage is one bulk copy only if it is contiguous
/// in global memory, so the binding gives each linear weight [N, K] a packed
/// copy that the linear reads instead (docs/MEGAKERNEL.md, "Staged
/// weights"): [N rounded up to 16, K rounded up to 32], zeros in the rows and
/// columns past the weight's. The rows form blocks of 16; a block is K in
/// steps of 32 columns, and a step (1 KB) is the A operands of the two
/// m16n8k16 products the linear issues for it, in lane order: lane (g, t)'s
/// 16 bytes of product h (0, 1) hold rows g and g + 8 at columns c, c + 1
/// and then c + 2, c + 3 (c = 8 t + 4 h), as
///   [W[g][c], W[g][c+1], W[g+8][c], W[g+8][c+1],
///    W[g][c+2], W[g][c+3], W[g+8][c+2], W[g+8][c+3]],
/// the fragment registers a0..a3 (the K permutation the input operand
/// shares), so one 16-byte load is a product's fragment and the 32 lanes'
/// loads of one product are 512 contiguous bytes (no bank conflict). K is cut
/// into pieces of 8 steps (the last may be shorter): a stage is one or two
/// pieces, a K pass whole pieces. The layout depends on N and K alone, so
/// the plans of every batch size read one packed copy.
constexpr int32_t kStageRows = 16;
constexpr int32_t kPieceUnits = 8; ///< 32-column steps of a whole piece
struct WeightPieces {
  int32_t count;     ///< pieces
  int32_t lastUnits; ///< steps of the last piece (1 .. kPieceUnits)
  TAWA_MEGA_HD int32_t start(int32_t j) const { ///< in steps of 32
    return j < count ? j * kPieceUnits : (count - 1) * kPieceUnits + lastUnits;
  }
  TAWA_MEGA_HD int32_t length(int32_t j) const { ///< in steps of 32
    return j + 1 < count ? kPieceUnits : lastUnits;
  }
};
TAWA_MEGA_HD inline WeightPieces weightPieces(int32_t k) {
  const int32_t units = (k + 31) / 32;
  const int32_t count = (units + kPieceUnits - 1) / kPieceUnits;
  return WeightPieces{count, units - (count - 1) * kPieceUnits};
}
/// Elements per row and rows of a packed [n, k] weight.
TAWA_MEGA_HD inline int32_t stagedWeightCols(int32_t k) {
  return (k + 31) / 32 * 32;
}
TAWA_MEGA_HD inline int64_t stagedWeightRows(int64_t n) {
  return (n + kStageRows - 1) / kStageRows * kStageRows;
}
/// Where element (row, col) of an [n, k] weight sits in its packed copy.
TAWA_MEGA_HD inline int64_t stagedWeightOffset(int64_t row, int32_t col,
                                               int32_t k) {
  const int64_t block = row / kStageRows;
  const int32_t r = int32_t(row % kStageRows), g = r % 8, hi = r / 8;
  const int32_t step = col / 32, cc = col % 32;
  const int32_t t = cc / 8, h = cc % 8 / 4, q = cc % 4;
  return block * kStageRows * stagedWeightCols(k) + int64_t(step) * 512 +
         h * 256 + (g * 4 + t) * 8 + (q / 2 * 2 + hi) * 2 + q % 2;
}

/// Embedding: out[b, c] = table[tokens[b], c] for the tile's columns.
struct EmbeddingParams {
  uint32_t tokens; ///< I32 [B]
  uint32_t table;  ///< BF16 [V, H]
  uint32_t out;    ///< BF16 [B, H]
  int32_t batch, hidden, vocab, tileN, colTiles;
  int32_t tileM; ///< rows of a tile (tile / colTiles is its row tile)
};

/// RmsNormLinear and LinearResidual: a tile of output columns of
/// y = norm(x) · Wᵀ over all K, for a tile of rows.
/// Column c reads row c of w0 when c < seg1, row c - seg1 of w1 when
/// c < seg2, else row c - seg2 of w2 (the fused q/k/v projection).
/// `paired`: column c computes gate = w0 row c and up = w1 row c and writes
/// silu(gate) · up into out[b, c], rounded as the reference rounds
/// F.silu(gate) * up in bf16 (the gate/up projection with SiLU·mul fused).
struct LinearParams {
  uint32_t in;         ///< BF16 [M, K]
  uint32_t normWeight; ///< BF16 [K], kNoBuffer: no RMSNorm
  uint32_t w0, w1, w2; ///< BF16 [rows, K], row-major
  uint32_t out;        ///< BF16 [M, N], F32 if outF32
  uint32_t residual;   ///< BF16 [M, N] added to the output, or kNoBuffer
  /// The LM head: I32 [M, 2] (scratch, zero at the step's start), per row
  /// the atomic maximum over the tiles of argmaxKey(logit, column) of the
  /// tile's columns, which the argmax task decodes (no task reads all the
  /// logits again); kNoBuffer for the other linears.
  uint32_t argmaxKeys;
  /// F32 [M] scratch (zero at the step's start): row r's sum of squares of
  /// `in`, added up by the epilogues of the linear that wrote `in`
  /// (rowSquaresOut there), so that the RMSNorm's scale reads one float a row
  /// instead of every tile squaring all M × K inputs again (3.7 µs a tile of
  /// 16 rows of 4096 after its inputs, run 299). Bound at batch > 1, whose
  /// tasks wait for their events; kNoBuffer: the tile squares its rows (a
  /// polled task always does: a poll cannot tell when the sums are whole).
  uint32_t rowSquaresIn;
  /// F32 [M] scratch: the epilogue adds the squares of each row's stored
  /// (bf16) outputs into it: the residual stream that a later RMSNorm reads
  /// through rowSquaresIn; kNoBuffer: none.
  uint32_t rowSquaresOut;
  int32_t m, n, k, tileM, tileN, colTiles;
  int32_t seg1, seg2;
  int32_t paired;
  int32_t outF32; ///< logits: the bf16-rounded product stored as float
  float eps;
  int32_t ringBytes; ///< the plan's weight ring, linearRingBytes(tileM)
  /// Column tiles narrowFrom and later are narrowN columns wide, the ones
  /// before tileN (PlanOptions::shiftChainedTiles); narrowFrom = colTiles
  /// when every tile is tileN wide.
  int32_t narrowFrom, narrowN;
};

/// The first output column of a linear's column tile nt, and its columns.
TAWA_MEGA_HD inline int32_t linearTileCol0(const LinearParams &p, int32_t nt) {
  return nt <= p.narrowFrom
             ? nt * p.tileN
             : p.narrowFrom * p.tileN + (nt - p.narrowFrom) * p.narrowN;
}
TAWA_MEGA_HD inline int32_t linearTileCols(const LinearParams &p, int32_t nt) {
  const int32_t w = nt < p.narrowFrom ? p.tileN : p.narrowN;
  const int32_t left = p.n - linearTileCol0(p, nt);
  return w < left ? w : left;
}

/// DecodeAttention: tile (b, h, chunk) attends the `group` q heads of KV head
/// h of row b over cache positions [chunk * chunkLen, (chunk + 1) * chunkLen)
/// clipped to positions[b] + 1. It reads q, k and v of row b from the QKV
/// projection: q heads RMS-normalized per head (Qwen3, when qkNorm) and
/// rotated by RoPE at the row's position, the same for k; the chunk holding
/// positions[b] writes k and v there in the cache. The cache is paged: row
/// b's position s is in pool page blockTable[b][s >> pageShift], at s &
/// (pageSize - 1) (pages are a power of two). With chunks == 1 it writes
/// the output; otherwise the chunk's normalized output and log-sum-exp
/// (natural log; an empty chunk writes -inf and zeros); with `counters` as
/// well, each chunk then counts itself in counters[b, h] and the chunk that
/// brings the count to `chunks` merges the pair's partial outputs into out
/// (no merge task).
struct DecodeAttentionParams {
  uint32_t qkv;        ///< BF16 [B, qkvCols]: q heads, k heads, v heads
  uint32_t qNorm;      ///< BF16 [D] or kNoBuffer
  uint32_t kNorm;      ///< BF16 [D] or kNoBuffer
  uint32_t kCache;     ///< BF16 [pages, kvHeads, pageSize, D] (the pool)
  uint32_t vCache;     ///< BF16 [pages, kvHeads, pageSize, D]
  uint32_t positions;  ///< I32 [B]
  uint32_t blockTable; ///< I32 [B, pagesPerRow]: row b's page i -> pool page
  uint32_t out;        ///< chunks == 1: BF16 [B, qHeads D]
  uint32_t partOut;    ///< chunks > 1: F32 [B, kvHeads, chunks, group D]
  uint32_t partLse;    ///< chunks > 1: F32 [B, kvHeads, chunks, group]
  /// chunks > 1 without a merge task: I32 [B, kvHeads], zero at the step's
  /// start (scratch), else kNoBuffer.
  uint32_t counters;
  /// BF16 [maxSeq, D] (BufferKind::Constant): row s holds cos(s · f_i) for
  /// i < D/2, then sin(s · f_i), f_i = θ^(−2i/D), each rounded to bf16 as
  /// the reference rounds its cos and sin.
  uint32_t rope;
  int32_t batch, kvHeads, group, headDim, maxSeq, chunks, chunkLen;
  int32_t qkvCols, qkNorm;
  int32_t pageSize, pageShift, pagesPerRow; ///< pageSize = 1 << pageShift
  int32_t lowSmemBytes; ///< shared memory below the plan's weight ring
  /// 1: the plan has no just-in-time task, so a worker may issue a tile's
  /// cache copies before the tile's inputs are ready (nothing else runs on
  /// it in between to overwrite them).
  int32_t prefetch;
  float scale; ///< 1 / sqrt(D)
  float eps;
};

/// AttentionMerge: tile (b, h) combines the chunks' partial outputs.
struct AttentionMergeParams {
  uint32_t partOut, partLse;
  uint32_t out; ///< BF16 [B, qHeads D]
  int32_t batch, kvHeads, group, headDim, chunks;
};

/// Argmax: tile b writes the first index of row b's largest logit, decoded
/// from the row's key that the LM head's tiles left (LinearParams::
/// argmaxKeys).
struct ArgmaxParams {
  uint32_t keys; ///< I32 [B, 2]: the LM head's argmaxKeys
  uint32_t out;  ///< I32 [B]
};

/// The argmax key of logit x at column c: larger for a larger logit, and
/// for equal logits for the smaller column; 0 (never the maximum of a row
/// with a non-NaN logit) for NaN. -0 counts as +0, as comparisons do.
TAWA_MEGA_HD inline uint64_t argmaxKey(float x, uint32_t c) {
  if (x != x)
    return 0;
  uint32_t bits;
  x = x == 0.f ? 0.f : x;
  static_assert(sizeof(bits) == sizeof(x), "float is 32 bits");
  memcpy(&bits, &x, sizeof(bits));
  const uint32_t ordered = bits & 0x80000000u ? ~bits : bits | 0x80000000u;
  return uint64_t(ordered) << 32 | uint32_t(~c);
}
/// The column of a row's largest key, 0 for a row without one (all NaN).
TAWA_MEGA_HD inline int32_t argmaxColumn(uint64_t key) {
  return key == 0 ? 0 : int32_t(~uint32_t(key));
}

/// One operator's parameters: the struct of its kind, zero-padded.
struct alignas(16) OpParams {
  uint8_t bytes[128];
};

/// Every parameter struct starts with its buffer fields (uint32 indices into
/// the buffer table), this many of them: a worker resolves them into
/// pointers once, when it stages the operator's parameters for its next
/// task (DecodeTasks::stage).
constexpr int kMaxBufferFields = 12;
TAWA_MEGA_HD constexpr int bufferFieldsOf(TaskKind kind) {
  return kind == TaskKind::Embedding         ? 3
         : kind == TaskKind::RmsNormLinear   ? 10
         : kind == TaskKind::LinearResidual  ? 10
         : kind == TaskKind::DecodeAttention ? 12
         : kind == TaskKind::AttentionMerge  ? 3
         : kind == TaskKind::Argmax          ? 2
                                             : 0;
}
static_assert(offsetof(EmbeddingParams, batch) == 3 * 4, "3 buffer fields");
static_assert(offsetof(LinearParams, m) == 10 * 4, "10 buffer fields");
static_assert(offsetof(DecodeAttentionParams, batch) == 12 * 4,
              "12 buffer fields");
static_assert(offsetof(AttentionMergeParams, batch) == 3 * 4,
              "3 buffer fields");
static_assert(sizeof(ArgmaxParams) == 2 * 4, "2 buffer fields");

static_assert(sizeof(EmbeddingParams) <= sizeof(OpParams), "fits");
static_assert(sizeof(LinearParams) <= sizeof(OpParams), "fits");
static_assert(sizeof(DecodeAttentionParams) <= sizeof(OpParams), "fits");
static_assert(sizeof(AttentionMergeParams) <= sizeof(OpParams), "fits");
static_assert(sizeof(ArgmaxParams) <= sizeof(OpParams), "fits");

} // namespace tawa::mega

#endif // TAWA_MEGA_TASKPARAMS_H
