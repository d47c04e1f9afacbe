// Warp-group MMA (wgmma.mma_async, sm_90a) and the shared-memory matrix
// descriptors that match TMA's 128-, 64- and 32-byte swizzles. All four warps
// of a warp group execute every call here.
#pragma once
#include "tawa/device/sync.cuh"
#include "tawa/device/wgmma_ops.cuh"
#include "tawa/device/types.cuh"

namespace tawa::device {

enum class MmaType { F16, BF16, E4M3 };

/// K extent of one wgmma instruction: 32 bytes of K per row for every type.
template <MmaType T> constexpr int kMmaK = T == MmaType::E4M3 ? 32 : 16;

// ---------------------------------------------------------------------------
// Descriptors. Bits: [0,14) start address >> 4, [16,30) leading byte offset
// >> 4, [32,46) stride byte offset >> 4, [49,52) base offset (0: tiles start
// on a whole swizzle pattern, 8 rows of the span), [62,64) layout (the
// swizzle span of the rows: 1 = 128 bytes, 2 = 64, 3 = 32). A tile's span is
// the one TMA wrote it with: 128 bytes for rows of a multiple of 128 bytes
// (boxes of 128-byte rows), else the row itself (64 or 32 bytes).
// ---------------------------------------------------------------------------

/// The descriptor's layout field for rows swizzled in spans of SpanBytes.
template <int SpanBytes>
constexpr uint64_t kSmemDescLayout = SpanBytes == 128  ? 1
                                     : SpanBytes == 64 ? 2
                                                       : 3;

template <int SpanBytes>
__device__ __forceinline__ uint64_t makeSmemDesc(uint32_t addr,
                                                 uint32_t lboBytes,
                                                 uint32_t sboBytes) {
  static_assert(SpanBytes == 128 || SpanBytes == 64 || SpanBytes == 32,
                "wgmma reads 128-, 64- or 32-byte swizzled rows");
  uint64_t desc = (addr & 0x3FFFFu) >> 4;
  desc |= uint64_t((lboBytes >> 4) & 0x3FFFu) << 16;
  desc |= uint64_t((sboBytes >> 4) & 0x3FFFu) << 32;
  desc |= kSmemDescLayout<SpanBytes> << 62;
  return desc;
}

/// K-major operand (rows of 128 bytes of K, as a TMA box with inner extent
/// 128 bytes writes it): 8-row core groups are 1024 bytes apart (SBO); LBO is
/// unused for swizzled K-major layouts. Step K inside the 128-byte row with
/// descAdvance(desc, kBytes).
__device__ __forceinline__ uint64_t descKMajorSw128(const void *tile) {
  return makeSmemDesc<128>(smemAddr(tile), 16, 1024);
}

/// The same for rows of 64 bytes of K (BK = 32 at 16 bits, 64 at 8 bits;
/// TMA's 64-byte swizzle): 8-row groups 512 bytes apart, two K steps a row.
__device__ __forceinline__ uint64_t descKMajorSw64(const void *tile) {
  return makeSmemDesc<64>(smemAddr(tile), 16, 512);
}

/// The same for rows of 32 bytes of K (BK = 16 at 16 bits, 32 at 8 bits;
/// TMA's 32-byte swizzle): 8-row groups 256 bytes apart, one K step a row.
__device__ __forceinline__ uint64_t descKMajorSw32(const void *tile) {
  return makeSmemDesc<32>(smemAddr(tile), 16, 256);
}

/// MN-major operand of a 16-bit type: the tile is stored K rows x 64 MN
/// elements per 128-byte row (one TMA box per 64 MN columns, boxes
/// `mnBlockBytes` apart). LBO = distance between 64-wide MN blocks, SBO =
/// distance between groups of 8 K rows (1024). Step K by 16 rows with
/// descAdvance(desc, 16 * 128). (MN-major rows of 64 or 32 bytes: below.)
__device__ __forceinline__ uint64_t descMNMajorSw128(const void *tile,
                                                     uint32_t mnBlockBytes) {
  return makeSmemDesc<128>(smemAddr(tile), mnBlockBytes, 1024);
}

/// An MN-major tile whose MN extent is one row of 64 (32) bytes: N = 32
/// (16) at 16 bits, TMA's 64- (32-) byte swizzle; groups of 8 K rows 512
/// (256) bytes apart (SBO), one span along MN (LBO unused). Step K by 16 rows
/// with descAdvance(desc, 16 * 64) (16 * 32).
__device__ __forceinline__ uint64_t descMNMajorSw64(const void *tile,
                                                    uint32_t mnBlockBytes) {
  return makeSmemDesc<64>(smemAddr(tile), mnBlockBytes, 512);
}
__device__ __forceinline__ uint64_t descMNMajorSw32(const void *tile,
                                                    uint32_t mnBlockBytes) {
  return makeSmemDesc<32>(smemAddr(tile), mnBlockBytes, 256);
}

/// Moves the start address by `bytes` (a multiple of 16). The hardware applies
/// the swizzle to the final address, so advancing along K inside a swizzled
/// row is a plain add.
__device__ __forceinline__ uint64_t descAdvance(uint64_t desc, uint32_t bytes) {
  return desc + (bytes >> 4);
}

// ---------------------------------------------------------------------------
// Ordering.
// ---------------------------------------------------------------------------

/// Required before the first wgmma that reads registers (accumulators or
/// A fragments) written by ordinary instructions.
__device__ __forceinline__ void wgmmaFence() {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}

/// Closes the batch of wgmmas issued since the last commit into one group.
__device__ __forceinline__ void wgmmaCommit() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}

/// Waits until at most N committed groups are pending; the completed groups'
/// shared-memory reads are finished and their accumulators are final.
template <int N> __device__ __forceinline__ void wgmmaWait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}

/// Pins the accumulator registers at this point of the instruction stream.
/// Register-only code may otherwise be moved across wgmmaWait() (which only
/// clobbers memory) and read accumulators the tensor cores still write.
template <int Count>
__device__ __forceinline__ void fenceFragment(float (&d)[Count]) {
#pragma unroll
  for (int i = 0; i < Count; ++i)
    asm volatile("" : "+f"(d[i])::"memory");
}

template <int Count>
__device__ __forceinline__ void fenceFragment(uint32_t (&a)[Count]) {
#pragma unroll
  for (int i = 0; i < Count; ++i)
    asm volatile("" : "+r"(a[i])::"memory");
}

// ---------------------------------------------------------------------------
// MMAs: D[64 x N] (+)= A[64 x K] * B[K x N], f32 accumulators in the layout
// of fragment.cuh. Trans = 1 marks an MN-major operand (16-bit types only).
// ---------------------------------------------------------------------------

/// A and B from shared memory.
template <int N, MmaType T, int TransA = 0, int TransB = 0>
__device__ __forceinline__ void wgmmaSS(float (&d)[N / 2], uint64_t descA,
                                        uint64_t descB, int scaleD) {
  static_assert(N == 8 || N == 16 || N == 32 || N == 64 || N == 128 ||
                    N == 256,
                "N must be 8, 16, 32, 64, 128 or 256");
  static_assert(T != MmaType::E4M3 || (TransA == 0 && TransB == 0),
                "fp8 wgmma takes K-major operands only");
  using namespace detail;
  if constexpr (T == MmaType::F16) {
    if constexpr (N == 8)
      wgmma_ss_f16_m64n8k16<TransA, TransB>(d, descA, descB, scaleD);
    else if constexpr (N == 16)
      wgmma_ss_f16_m64n16k16<TransA, TransB>(d, descA, descB, scaleD);
    else if constexpr (N == 32)
      wgmma_ss_f16_m64n32k16<TransA, TransB>(d, descA, descB, scaleD);
    else if constexpr (N == 64)
      wgmma_ss_f16_m64n64k16<TransA, TransB>(d, descA, descB, scaleD);
    else if constexpr (N == 128)
      wgmma_ss_f16_m64n128k16<TransA, TransB>(d, descA, descB, scaleD);
    else
      wgmma_ss_f16_m64n256k16<TransA, TransB>(d, descA, descB, scaleD);
  } else if constexpr (T == MmaType::BF16) {
    if constexpr (N == 8)
      wgmma_ss_bf16_m64n8k16<TransA, TransB>(d, descA, descB, scaleD);
    else if constexpr (N == 16)
      wgmma_ss_bf16_m64n16k16<TransA, TransB>(d, descA, descB, scaleD);
    else if constexpr (N == 32)
      wgmma_ss_bf16_m64n32k16<TransA, TransB>(d, descA, descB, scaleD);
    else if constexpr (N == 64)
      wgmma_ss_bf16_m64n64k16<TransA, TransB>(d, descA, descB, scaleD);
    else if constexpr (N == 128)
      wgmma_ss_bf16_m64n128k16<TransA, TransB>(d, descA, descB, scaleD);
    else
      wgmma_ss_bf16_m64n256k16<TransA, TransB>(d, descA, descB, scaleD);
  } else {
    if constexpr (N == 8)
      wgmma_ss_e4m3_m64n8k32(d, descA, descB, scaleD);
    else if constexpr (N == 16)
      wgmma_ss_e4m3_m64n16k32(d, descA, descB, scaleD);
    else if constexpr (N == 32)
      wgmma_ss_e4m3_m64n32k32(d, descA, descB, scaleD);
    else if constexpr (N == 64)
      wgmma_ss_e4m3_m64n64k32(d, descA, descB, scaleD);
    else if constexpr (N == 128)
      wgmma_ss_e4m3_m64n128k32(d, descA, descB, scaleD);
    else
      wgmma_ss_e4m3_m64n256k32(d, descA, descB, scaleD);
  }
}

/// A and B from shared memory, the accumulator of N columns held as two
/// arrays of N / 2 (columns [0, N/2) in d0, [N/2, N) in d1): two products
/// that share A and whose B tiles lie side by side in shared memory, issued
/// as one wgmma (the same registers as one array: a fragment's columns run
/// in register order).
template <int N, MmaType T, int TransA = 0, int TransB = 0>
__device__ __forceinline__ void wgmmaSSPair(float (&d0)[N / 4],
                                            float (&d1)[N / 4], uint64_t descA,
                                            uint64_t descB, int scaleD) {
  static_assert(N == 128 || N == 256, "N must be 128 or 256");
  static_assert(T != MmaType::E4M3 || (TransA == 0 && TransB == 0),
                "fp8 wgmma takes K-major operands only");
  using namespace detail;
  if constexpr (T == MmaType::F16) {
    if constexpr (N == 128)
      wgmma_ss_f16_m64n128k16_pair<TransA, TransB>(d0, d1, descA, descB,
                                                   scaleD);
    else
      wgmma_ss_f16_m64n256k16_pair<TransA, TransB>(d0, d1, descA, descB,
                                                   scaleD);
  } else if constexpr (T == MmaType::BF16) {
    if constexpr (N == 128)
      wgmma_ss_bf16_m64n128k16_pair<TransA, TransB>(d0, d1, descA, descB,
                                                    scaleD);
    else
      wgmma_ss_bf16_m64n256k16_pair<TransA, TransB>(d0, d1, descA, descB,
                                                    scaleD);
  } else {
    if constexpr (N == 128)
      wgmma_ss_e4m3_m64n128k32_pair(d0, d1, descA, descB, scaleD);
    else
      wgmma_ss_e4m3_m64n256k32_pair(d0, d1, descA, descB, scaleD);
  }
}

/// A from registers (the a_reg layout of fragment.cuh), B from shared memory.
template <int N, MmaType T, int TransB = 0>
__device__ __forceinline__ void
wgmmaRS(float (&d)[N / 2], const uint32_t (&a)[4], uint64_t descB, int scaleD) {
  static_assert(N == 8 || N == 16 || N == 32 || N == 64 || N == 128 ||
                    N == 256,
                "N must be 8, 16, 32, 64, 128 or 256");
  static_assert(T != MmaType::E4M3 || TransB == 0,
                "fp8 wgmma takes K-major operands only");
  using namespace detail;
  if constexpr (T == MmaType::F16) {
    if constexpr (N == 8)
      wgmma_rs_f16_m64n8k16<TransB>(d, a[0], a[1], a[2], a[3], descB, scaleD);
    else if constexpr (N == 16)
      wgmma_rs_f16_m64n16k16<TransB>(d, a[0], a[1], a[2], a[3], descB, scaleD);
    else if constexpr (N == 32)
      wgmma_rs_f16_m64n32k16<TransB>(d, a[0], a[1], a[2], a[3], descB, scaleD);
    else if constexpr (N == 64)
      wgmma_rs_f16_m64n64k16<TransB>(d, a[0], a[1], a[2], a[3], descB, scaleD);
    else if constexpr (N == 128)
      wgmma_rs_f16_m64n128k16<TransB>(d, a[0], a[1], a[2], a[3], descB, scaleD);
    else
      wgmma_rs_f16_m64n256k16<TransB>(d, a[0], a[1], a[2], a[3], descB, scaleD);
  } else if constexpr (T == MmaType::BF16) {
    if constexpr (N == 8)
      wgmma_rs_bf16_m64n8k16<TransB>(d, a[0], a[1], a[2], a[3], descB, scaleD);
    else if constexpr (N == 16)
      wgmma_rs_bf16_m64n16k16<TransB>(d, a[0], a[1], a[2], a[3], descB, scaleD);
    else if constexpr (N == 32)
      wgmma_rs_bf16_m64n32k16<TransB>(d, a[0], a[1], a[2], a[3], descB, scaleD);
    else if constexpr (N == 64)
      wgmma_rs_bf16_m64n64k16<TransB>(d, a[0], a[1], a[2], a[3], descB, scaleD);
    else if constexpr (N == 128)
      wgmma_rs_bf16_m64n128k16<TransB>(d, a[0], a[1], a[2], a[3], descB, scaleD);
    else
      wgmma_rs_bf16_m64n256k16<TransB>(d, a[0], a[1], a[2], a[3], descB, scaleD);
  } else {
    if constexpr (N == 8)
      wgmma_rs_e4m3_m64n8k32(d, a[0], a[1], a[2], a[3], descB, scaleD);
    else if constexpr (N == 16)
      wgmma_rs_e4m3_m64n16k32(d, a[0], a[1], a[2], a[3], descB, scaleD);
    else if constexpr (N == 32)
      wgmma_rs_e4m3_m64n32k32(d, a[0], a[1], a[2], a[3], descB, scaleD);
    else if constexpr (N == 64)
      wgmma_rs_e4m3_m64n64k32(d, a[0], a[1], a[2], a[3], descB, scaleD);
    else if constexpr (N == 128)
      wgmma_rs_e4m3_m64n128k32(d, a[0], a[1], a[2], a[3], descB, scaleD);
    else
      wgmma_rs_e4m3_m64n256k32(d, a[0], a[1], a[2], a[3], descB, scaleD);
  }
}

} // namespace tawa::device
