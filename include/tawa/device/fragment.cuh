// The wgmma accumulator fragment (layout `acc` of DESIGN.md §2.3) and what
// register code does with it: element -> (row, col) mapping, row reductions,
// row/column broadcasts, conversion to a register A operand, and stores to a
// 128B-swizzled shared-memory tile with stmatrix for a TMA-store epilogue.
//
// A warp group holds a 64 x N tile as `float d[N / 2]` per thread. For warp
// w (0..3 within the group), lane l and element i:
//   row = 16 w + l / 4 + 8 ((i >> 1) & 1)
//   col = 8 (i >> 2) + 2 (l % 4) + (i & 1)
// so each thread owns two rows (r and r + 8) and N / 4 columns, and the four
// lanes of a quad (same l / 4) share rows.
#pragma once
#include "tawa/device/sync.cuh"
#include "tawa/device/tma.cuh"
#include "tawa/device/types.cuh"
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

namespace tawa::device {

/// Row (0..63) of accumulator element i for thread `tid` of the warp group.
__host__ __device__ constexpr int accRow(int tid, int i) {
  return 16 * (tid / 32) + (tid % 32) / 4 + 8 * ((i >> 1) & 1);
}

/// Column of accumulator element i for thread `tid` of the warp group.
__host__ __device__ constexpr int accCol(int tid, int i) {
  return 8 * (i >> 2) + 2 * (tid % 4) + (i & 1);
}

template <int Count>
__device__ __forceinline__ void fillFragment(float (&d)[Count], float v) {
#pragma unroll
  for (int i = 0; i < Count; ++i)
    d[i] = v;
}

// ---------------------------------------------------------------------------
// Row reductions (layout `row`: out[h] belongs to row r + 8h). Each thread
// reduces its own columns, then the quad combines with two xor shuffles; every
// lane of the quad ends with the full-row result.
// ---------------------------------------------------------------------------

/// The thread's own columns of its two rows.
template <int Count, typename Op>
__device__ __forceinline__ void rowReduceThread(const float (&d)[Count],
                                                float (&out)[2], Op op) {
  out[0] = op(d[0], d[1]);
  out[1] = op(d[2], d[3]);
#pragma unroll
  for (int i = 4; i < Count; i += 4) {
    out[0] = op(out[0], op(d[i], d[i + 1]));
    out[1] = op(out[1], op(d[i + 2], d[i + 3]));
  }
}

/// The quad's partial results combined: every lane ends with the row's.
template <typename Op>
__device__ __forceinline__ void rowReduceQuad(float (&out)[2], Op op) {
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    out[h] = op(out[h], __shfl_xor_sync(0xffffffffu, out[h], 1));
    out[h] = op(out[h], __shfl_xor_sync(0xffffffffu, out[h], 2));
  }
}

template <int Count, typename Op>
__device__ __forceinline__ void rowReduce(const float (&d)[Count],
                                          float (&out)[2], Op op) {
  rowReduceThread(d, out, op);
  rowReduceQuad(out, op);
}

template <int Count>
__device__ __forceinline__ void rowMax(const float (&d)[Count],
                                       float (&out)[2]) {
  rowReduce(d, out, [](float a, float b) { return fmaxf(a, b); });
}

template <int Count>
__device__ __forceinline__ void rowSum(const float (&d)[Count],
                                       float (&out)[2]) {
  rowReduce(d, out, [](float a, float b) { return a + b; });
}

/// A scheduling pin for the wait that retires a product reading register
/// operands. ptxas places a wgmma wait as early as the memory operations
/// before it allow; the wait for P.V, followed by the rewrite of P's
/// registers with the next block's P, then lands before the softmax that
/// should overlap that product. A store that depends on the row sums of the
/// exponentials, computed last, keeps the wait after them. Sums of
/// exponentials are never below zero (NaN compares false), so the store
/// never runs; `anywhere` is any shared-memory address. (The thread's own
/// partial sums, rowSumPinned, are enough.)
__device__ __forceinline__ void pinAfterRowSums(const float (&sums)[2],
                                                uint8_t *anywhere) {
  if (sums[0] < 0.0f || sums[1] < 0.0f)
    *reinterpret_cast<volatile uint32_t *>(anywhere) = 0u;
}

/// rowSum of exponentials whose partial sums pin the next wgmma wait
/// (pinAfterRowSums): the thread's own sums are all the pin needs, so it
/// goes before the quad's shuffles and the wait does not wait for them too.
template <int Count>
__device__ __forceinline__ void
rowSumPinned(const float (&d)[Count], float (&out)[2], uint8_t *anywhere) {
  auto add = [](float a, float b) { return a + b; };
  rowReduceThread(d, out, add);
  pinAfterRowSums(out, anywhere);
  rowReduceQuad(out, add);
}

// ---------------------------------------------------------------------------
// Broadcasts. A row vector in layout `row` is float[2] (rows r, r + 8); a
// column vector in layout `col` is float[Count / 2] with entry 2j + e holding
// column 8j + 2(l % 4) + e.
// ---------------------------------------------------------------------------

/// d[i] = f(d[i], rowv[row half of i]).
template <int Count, typename F>
__device__ __forceinline__ void applyRow(float (&d)[Count],
                                         const float (&rowv)[2], F f) {
#pragma unroll
  for (int i = 0; i < Count; ++i)
    d[i] = f(d[i], rowv[(i >> 1) & 1]);
}

/// d[i] = f(d[i], colv[column slot of i]).
template <int Count, typename F>
__device__ __forceinline__ void applyCol(float (&d)[Count],
                                         const float (&colv)[Count / 2], F f) {
#pragma unroll
  for (int i = 0; i < Count; ++i)
    d[i] = f(d[i], colv[2 * (i >> 2) + (i & 1)]);
}

/// Loads this thread's slice of a length-N column vector (layout `col`).
template <int Count>
__device__ __forceinline__ void loadColSlice(const float *v,
                                             float (&colv)[Count / 2]) {
  const int q = threadIdx.x % 4;
#pragma unroll
  for (int j = 0; j < Count / 4; ++j) {
    colv[2 * j] = v[8 * j + 2 * q];
    colv[2 * j + 1] = v[8 * j + 2 * q + 1];
  }
}

// ---------------------------------------------------------------------------
// Conversions to a register A operand (layout `a_reg`).
// ---------------------------------------------------------------------------

template <typename T>
__device__ __forceinline__ uint32_t pack2(float lo, float hi);

template <>
__device__ __forceinline__ uint32_t pack2<__half>(float lo, float hi) {
  __half2 h = __floats2half2_rn(lo, hi);
  return *reinterpret_cast<uint32_t *>(&h);
}

template <>
__device__ __forceinline__ uint32_t pack2<__nv_bfloat16>(float lo, float hi) {
  __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<uint32_t *>(&h);
}

/// 16-bit A operand: k-block kb (columns 16kb..16kb+15) of the accumulator is
/// exactly the m64k16 A fragment of the same thread (rows r, r+8 by columns
/// 2q, 2q+1 and 8+2q, 9+2q), so the conversion is a pairwise pack.
template <typename T, int Count>
__device__ __forceinline__ void accToA16(const float (&d)[Count],
                                         uint32_t (&a)[Count / 8][4]) {
#pragma unroll
  for (int kb = 0; kb < Count / 8; ++kb)
#pragma unroll
    for (int j = 0; j < 4; ++j)
      a[kb][j] = pack2<T>(d[8 * kb + 2 * j], d[8 * kb + 2 * j + 1]);
}

/// e4m3 A operand (m64k32): register j = 2s + h of k-block kb must hold row
/// r + 8h, columns 32kb + 16s + 4q .. +3, but the accumulator gives lane q
/// columns 2q, 2q+1 of each 8-column block. Each lane packs its two column
/// pairs of one 16-column half into a word, and lane q gathers the words of
/// lanes 2(q%2) and 2(q%2)+1 of its quad and byte-permutes the half it needs
/// (8-column block q/2 of that half).
template <int Count>
__device__ __forceinline__ void accToAE4M3(const float (&d)[Count],
                                           uint32_t (&a)[Count / 16][4]) {
  const int lane = threadIdx.x % 32;
  const int q = lane % 4;
  const int src0 = (lane & ~3) | (2 * (q % 2));
  const int src1 = src0 + 1;
  const uint32_t sel = (q / 2) ? 0x7632u : 0x5410u;
#pragma unroll
  for (int kb = 0; kb < Count / 16; ++kb)
#pragma unroll
    for (int s = 0; s < 2; ++s)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int b0 = 4 * (4 * kb + 2 * s) + 2 * h; // block 2s of kb
        const int b1 = b0 + 4;                       // block 2s + 1
        const uint32_t lo = __nv_cvt_float2_to_fp8x2(
            make_float2(d[b0], d[b0 + 1]), __NV_SATFINITE, __NV_E4M3);
        const uint32_t hi = __nv_cvt_float2_to_fp8x2(
            make_float2(d[b1], d[b1 + 1]), __NV_SATFINITE, __NV_E4M3);
        const uint32_t word = lo | (hi << 16);
        const uint32_t x = __shfl_sync(0xffffffffu, word, src0);
        const uint32_t y = __shfl_sync(0xffffffffu, word, src1);
        a[kb][2 * s + h] = __byte_perm(x, y, sel);
      }
}

// ---------------------------------------------------------------------------
// stmatrix epilogue.
// ---------------------------------------------------------------------------

/// Stores four 8x8 b16 matrices; lane l gives the row address of row l % 8
/// of matrix l / 8, and register j carries this thread's pair of matrix j.
__device__ __forceinline__ void
stmatrixX4(uint32_t addr, uint32_t r0, uint32_t r1, uint32_t r2, uint32_t r3) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, "
               "%4};\n" ::"r"(addr),
               "r"(r0), "r"(r1), "r"(r2), "r"(r3)
               : "memory");
}

/// Columns [64 Box, 64 Box + 64) of the warp group's 64 x N accumulator
/// converted to T and packed: 16 words of two T each written to
/// p[Offset, Offset + 16), in the order storePackedBoxSwizzled reads them.
/// Lets an epilogue keep a box of the converted tile in 16 registers instead
/// of 32 while the accumulator is reused (the deferred epilogue of the next
/// tile's K loop).
template <typename T, int Box, int Offset, int Count, int N>
__device__ __forceinline__ void packAccBox(const float (&d)[Count],
                                           uint32_t (&p)[N]) {
  static_assert(Box * 64 < Count * 2, "box outside the fragment");
  static_assert(Offset + 16 <= N, "packed box outside the array");
#pragma unroll
  for (int j = 0; j < 16; ++j)
    p[Offset + j] = pack2<T>(d[32 * Box + 2 * j], d[32 * Box + 2 * j + 1]);
}

/// Writes the box packAccBox left at p[Offset, Offset + 16) with stmatrix
/// into `box` (64 x 64, 128-byte swizzle; see storeAccBoxSwizzled).
template <int Offset, int N>
__device__ __forceinline__ void storePackedBoxSwizzled(const uint32_t (&p)[N],
                                                       void *box) {
  static_assert(Offset + 16 <= N, "packed box outside the array");
  const int tid = threadIdx.x % kWarpGroupThreads;
  const int lane = tid % 32;
  const int mat = lane / 8;
  const uint32_t row = 16 * (tid / 32) + 8 * (mat & 1) + lane % 8;
  const uint32_t base = smemAddr(box);
#pragma unroll
  for (int c = 0; c < 4; ++c) {
    const uint32_t colByte = 2 * (16 * c + 8 * (mat >> 1));
    stmatrixX4(base + swizzle128Offset(row, colByte), p[Offset + 4 * c],
               p[Offset + 4 * c + 1], p[Offset + 4 * c + 2],
               p[Offset + 4 * c + 3]);
  }
}

/// Converts columns [64 Box, 64 Box + 64) of the warp group's 64 x N
/// accumulator to T and writes them with stmatrix into `box`: one 64 x 64
/// tile of 16-bit elements in TMA's 128-byte swizzle (8 KB, 1024-byte
/// aligned), ready for tmaStore2D after fenceProxyAsyncShared() and a barrier.
/// Per 16 columns the four 8x8 matrices are (rows 0-7, cols 0-7), (rows 8-15,
/// cols 0-7), (rows 0-7, cols 8-15), (rows 8-15, cols 8-15): the same pairs
/// accToA16 packs.
template <typename T, int Box, int Count>
__device__ __forceinline__ void storeAccBoxSwizzled(const float (&d)[Count],
                                                    void *box) {
  uint32_t p[16];
  packAccBox<T, Box, 0>(d, p);
  storePackedBoxSwizzled<0>(p, box);
}

/// A warp group's whole 64 x N accumulator fragment, N = 32 or 16 (a tile
/// narrower than one 64-column box), converted to T and written with
/// stmatrix into `box`: 64 rows of 2N bytes in TMA's 64- or 32-byte swizzle
/// (N = 8: 16-byte rows, unswizzled, plain stores)
/// (the span of the row), ready for tmaStore2D of a 64 x N box after
/// fenceProxyAsyncShared() and a barrier. The matrices per 16 columns are
/// storeAccBoxSwizzled's.
template <typename T, int Count>
__device__ __forceinline__ void storeAccNarrowSwizzled(const float (&d)[Count],
                                                       void *box) {
  static_assert(sizeof(T) == 2 && (Count == 16 || Count == 8 || Count == 4),
                "a 64 x 32, 64 x 16 or 64 x 8 fragment of a 16-bit type");
  constexpr int kSpan = Count * 2 * 2; // bytes per row
  const int tid = threadIdx.x % kWarpGroupThreads;
  const int lane = tid % 32;
  if constexpr (Count == 4) {
    // 64 x 8: rows of 16 bytes, which no swizzle covers (TMA's box is
    // unswizzled). Lane (g, t) holds columns 2t, 2t + 1 of rows g and g + 8
    // of its warp's 16; its two 4-byte stores fall in distinct banks across
    // the warp (8 rows x 16 bytes).
    const int r = 16 * (tid / 32) + lane / 4, c = lane % 4;
    uint32_t *rows = static_cast<uint32_t *>(box);
    rows[r * 4 + c] = pack2<T>(d[0], d[1]);
    rows[(r + 8) * 4 + c] = pack2<T>(d[2], d[3]);
  } else {
    const int mat = lane / 8;
    const uint32_t row = 16 * (tid / 32) + 8 * (mat & 1) + lane % 8;
    const uint32_t base = smemAddr(box);
#pragma unroll
    for (int c = 0; c < Count / 8; ++c) {
      const uint32_t colByte = 2 * (16 * c + 8 * (mat >> 1));
      stmatrixX4(base + swizzledOffset<kSpan>(row, colByte),
                 pack2<T>(d[8 * c], d[8 * c + 1]),
                 pack2<T>(d[8 * c + 2], d[8 * c + 3]),
                 pack2<T>(d[8 * c + 4], d[8 * c + 5]),
                 pack2<T>(d[8 * c + 6], d[8 * c + 7]));
    }
  }
}

// ---------------------------------------------------------------------------
// ldmatrix: a shared-memory tile into accumulator-layout registers.
// ---------------------------------------------------------------------------

/// Loads four 8x8 b16 matrices: the inverse of stmatrixX4 (lane l gives the
/// row address of row l % 8 of matrix l / 8; register j receives this
/// thread's pair of matrix j).
__device__ __forceinline__ void ldmatrixX4(uint32_t addr, uint32_t &r0,
                                           uint32_t &r1, uint32_t &r2,
                                           uint32_t &r3) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, "
               "[%4];\n"
               : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
               : "r"(addr)
               : "memory");
}

/// The inverse of storeAccBoxSwizzled: columns [64 Box, 64 Box + 64) of the
/// warp group's 64 x N tile of 16-bit T in the accumulator layout (entry i
/// of `d` where the accumulator's float entry i is), read with ldmatrix from
/// `box`: 64 rows of 128 bytes in TMA's 128-byte swizzle, e.g. 64 rows of a
/// tile that TMA loaded in boxes of 128-byte rows.
template <typename T, int Box, int Count>
__device__ __forceinline__ void loadAccBoxSwizzled(const void *box,
                                                   T (&d)[Count]) {
  static_assert(sizeof(T) == 2, "ldmatrix reads 16-bit elements");
  static_assert(Box * 64 < Count * 2, "box outside the fragment");
  const int tid = threadIdx.x % kWarpGroupThreads;
  const int lane = tid % 32;
  const int mat = lane / 8;
  const uint32_t row = 16 * (tid / 32) + 8 * (mat & 1) + lane % 8;
  const uint32_t base = smemAddr(box);
#pragma unroll
  for (int c = 0; c < 4; ++c) {
    const uint32_t colByte = 2 * (16 * c + 8 * (mat >> 1));
    uint32_t p[4];
    ldmatrixX4(base + swizzle128Offset(row, colByte), p[0], p[1], p[2], p[3]);
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const T *pair = reinterpret_cast<const T *>(&p[k]);
      d[32 * Box + 2 * (4 * c + k)] = pair[0];
      d[32 * Box + 2 * (4 * c + k) + 1] = pair[1];
    }
  }
}

} // namespace tawa::device
