// Transposes of 8-bit tiles in shared memory. fp8 wgmma reads only K-major
// operands, so a B operand loaded [K, N] (N contiguous: attention's V) is
// rewritten as [N, K] by the producer warps before the consumers read it.
#pragma once
#include "tawa/device/sync.cuh"
#include "tawa/device/tma.cuh"
#include "tawa/device/types.cuh"

namespace tawa::device {

/// The span TMA swizzles a tile dimension of `bytes` in: 32 or 64 bytes for
/// rows that short, else 128 (boxes of 128-byte spans).
__host__ __device__ constexpr int tileSpanBytes(int bytes) {
  return bytes % 128 == 0 ? 128 : bytes;
}

/// Byte offset of byte `col` of row `row` in an 8-bit tile of `Rows` rows as
/// TMA lays it out: boxes of Span-byte rows (one per Span bytes of the row),
/// each in TMA's Span-byte swizzle (swizzledOffset).
template <int Rows, int Span>
__device__ __forceinline__ uint32_t tileByteOffset(int row, int col) {
  return uint32_t(col / Span) * Rows * Span +
         swizzledOffset<Span>(uint32_t(row), uint32_t(col % Span));
}

/// Bytes (i, j) of four words, one per row i, transposed: word j of the
/// result holds byte j of each input word, row 0 in byte 0.
__device__ __forceinline__ void transposeBytes4x4(const uint32_t (&in)[4],
                                                  uint32_t (&out)[4]) {
  const uint32_t lo01 = __byte_perm(in[0], in[1], 0x5140); // 0.0 1.0 0.1 1.1
  const uint32_t hi01 = __byte_perm(in[0], in[1], 0x7362); // 0.2 1.2 0.3 1.3
  const uint32_t lo23 = __byte_perm(in[2], in[3], 0x5140);
  const uint32_t hi23 = __byte_perm(in[2], in[3], 0x7362);
  out[0] = __byte_perm(lo01, lo23, 0x5410);
  out[1] = __byte_perm(lo01, lo23, 0x7632);
  out[2] = __byte_perm(hi01, hi23, 0x5410);
  out[3] = __byte_perm(hi01, hi23, 0x7632);
}

/// dst = transpose(src) for an 8-bit [R, C] tile, both in the 128-byte
/// swizzled box form (src: R rows of C bytes; dst: C rows of R bytes), done
/// by `warps` warps together (this one is `warp`), then fenced for the
/// async proxy (wgmma reads dst through descriptors). The caller orders the
/// source's fill before and publishes dst after (an mbarrier arrival).
///
/// Work is 4 x 4-byte blocks: 4 word loads, 8 byte permutes, 4 word stores.
/// In each 128 x 128 part, lane (a, b, e) = (l % 4, l / 4 % 4, l / 16) of
/// step (u, w) takes the block of column words a + 4 (p ^ u) and row quads
/// b + 4 (q ^ w), p = 2b + e, q = 2a + e: in every load and store of a step
/// the 32 lanes touch 32 different banks through the swizzle, and the steps
/// u in [0, 8), w in {0, 2, 4, 6} cover each block once.
template <int R, int C>
__device__ __forceinline__ void
transposeTileB8Sw128(const uint8_t *src, uint8_t *dst, int warp, int warps) {
  static_assert(R % 128 == 0 && C % 128 == 0,
                "both extents must be multiples of 128 bytes");
  // Shared-window addresses and ld/st.shared: through generic pointers the
  // accesses compile to generic LD/ST, much slower on this path.
  const uint32_t s0 = smemAddr(src), d0 = smemAddr(dst);
  const int lane = threadIdx.x % 32;
  const int a = lane % 4, b = (lane / 4) % 4, e = lane / 16;
  const int p = 2 * b + e, q = 2 * a + e;
  // tileByteOffset<R, 128> with the lane's constants folded: the block of a
  // step has source rows r0 + 4b + 16 (q ^ w) + i and byte columns c0 + 4a + 16
  // (p ^ u) + j, so row % 8 = 4 (b & 1) + i and the swizzled chunk of row i is
  // ((p ^ u) ^ 4 (b & 1)) ^ i: offset = base + 128 i + ((X << 4) ^ (i << 4)),
  // and likewise for the destination with the roles of a and b exchanged.
  const uint32_t laneSrc = 512 * b + 4 * a, laneDst = 512 * a + 4 * b;
  const int bSwap = 4 * (b & 1), aSwap = 4 * (a & 1);
#pragma unroll 1
  for (int part = 0; part < (R / 128) * (C / 128); ++part) {
    const int rb = part / (C / 128), cb = part % (C / 128);
    const uint32_t partSrc = s0 + cb * R * 128 + rb * 128 * 128 + laneSrc;
    const uint32_t partDst = d0 + rb * C * 128 + cb * 128 * 128 + laneDst;
    // Two blocks per round, their eight loads issued before any store.
#pragma unroll 1
    for (int t = warp; t < 32; t += 2 * warps) {
      const int steps = t + warps < 32 ? 2 : 1;
      uint32_t in[2][4], out[2][4], dstAt[2], dstX[2];
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int th = h < steps ? t + h * warps : t;
        const int pu = p ^ (th % 8), qw = q ^ (2 * (th / 8));
        const uint32_t srcAt = partSrc + 2048 * qw;
        const uint32_t srcX = (pu ^ bSwap) << 4;
        dstAt[h] = partDst + 2048 * pu;
        dstX[h] = (qw ^ aSwap) << 4;
#pragma unroll
        for (int i = 0; i < 4; ++i)
          asm volatile("ld.shared.b32 %0, [%1];\n"
                       : "=r"(in[h][i])
                       : "r"(srcAt + 128 * i + (srcX ^ (i << 4))));
      }
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        if (h >= steps)
          break;
        transposeBytes4x4(in[h], out[h]);
#pragma unroll
        for (int j = 0; j < 4; ++j)
          asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(dstAt[h] + 128 * j +
                                                         (dstX[h] ^ (j << 4))),
                       "r"(out[h][j])
                       : "memory");
      }
    }
  }
  fenceProxyAsyncShared();
}

/// dst = transpose(src) for an 8-bit [R, C] tile whose extents are 32 or 64
/// bytes or multiples of 128 (src: R rows of C bytes; dst: C rows of R
/// bytes), each in the swizzle of its row length (tileSpanBytes: 32-, 64-
/// or 128-byte), done by `warps` warps together (this one is `warp`), then
/// fenced for the async proxy. The same contract as transposeTileB8Sw128,
/// which the emitter keeps for tiles whose extents are both multiples of 128
/// bytes: this one is general, not conflict-free (lanes take consecutive
/// source words of a row, so the stores of a step fall on a few banks).
template <int R, int C>
__device__ __forceinline__ void
transposeTileB8(const uint8_t *src, uint8_t *dst, int warp, int warps) {
  static_assert((R == 32 || R == 64 || R % 128 == 0) &&
                    (C == 32 || C == 64 || C % 128 == 0),
                "tile extents of 32 or 64 bytes or multiples of 128");
  constexpr int kSrcSpan = tileSpanBytes(C), kDstSpan = tileSpanBytes(R);
  const uint32_t s0 = smemAddr(src), d0 = smemAddr(dst);
  const int lane = threadIdx.x % 32;
#pragma unroll 1
  for (int blk = warp * 32 + lane; blk < (R / 4) * (C / 4); blk += warps * 32) {
    // 4 rows x 4 bytes: source rows 4 rq + i, bytes 4 cw .. 4 cw + 3 (one
    // word: a 16-byte chunk never splits it) become destination rows
    // 4 cw + j, bytes 4 rq .. 4 rq + 3.
    const int cw = blk % (C / 4), rq = blk / (C / 4);
    uint32_t in[4], out[4];
#pragma unroll
    for (int i = 0; i < 4; ++i)
      asm volatile("ld.shared.b32 %0, [%1];\n"
                   : "=r"(in[i])
                   : "r"(s0 + tileByteOffset<R, kSrcSpan>(4 * rq + i, 4 * cw)));
    transposeBytes4x4(in, out);
#pragma unroll
    for (int j = 0; j < 4; ++j)
      asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(
                       d0 + tileByteOffset<C, kDstSpan>(4 * cw + j, 4 * rq)),
                   "r"(out[j])
                   : "memory");
  }
  fenceProxyAsyncShared();
}

} // namespace tawa::device
