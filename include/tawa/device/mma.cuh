// Warp-level tensor-core products (mma.sync), for tiles too small for a warp
// group's wgmma: the decode linear's 16 weight rows × 8 batch rows.
//
// Fragment of m16n8k16 (PTX ISA, "Matrix fragments for mma.m16n8k16"), lane
// = 4·g + t: A (16×16, row-major) a0 = A[g][2t..2t+1], a1 = A[g+8][2t..2t+1],
// a2 = A[g][2t+8..2t+9], a3 = A[g+8][2t+8..2t+9]; B (16×8, k-major)
// b0 = B[2t..2t+1][g], b1 = B[2t+8..2t+9][g]; D (16×8) d0,d1 = D[g][2t..2t+1],
// d2,d3 = D[g+8][2t..2t+1]. Each register holds two bf16, the lower k in the
// low half.
#pragma once
#include "tawa/device/types.cuh"

namespace tawa::device {

/// d += A·B in float, A and B bf16 (one m16n8k16 product of the warp).
__device__ __forceinline__ void mmaBf16m16n8k16(float (&d)[4], uint32_t a0,
                                                uint32_t a1, uint32_t a2,
                                                uint32_t a3, uint32_t b0,
                                                uint32_t b1) {
  asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
               "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
               "{%0, %1, %2, %3};\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

/// Four 8x8 b16 matrices, transposed on the way: lane l gives the address of
/// row l % 8 of matrix l / 8 (16 bytes); register j receives, for matrix j,
/// the elements (row 2t, column g) and (row 2t + 1, column g) of lane
/// (g, t) = (l / 4, l % 4), low half first. A row-major [k][m] tile read
/// this way is the A operand of mma.m16n8k16 in its [m][k] layout.
__device__ __forceinline__ void ldmatrixX4Trans(uint32_t addr, uint32_t &r0,
                                                uint32_t &r1, uint32_t &r2,
                                                uint32_t &r3) {
  asm volatile(
      "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, "
      "[%4];\n"
      : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
      : "r"(addr)
      : "memory");
}

/// Two floats as bf16x2, `lo` in the low half (round to nearest even).
__device__ __forceinline__ uint32_t packBf16x2(float lo, float hi) {
  uint32_t r;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;\n" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}

} // namespace tawa::device
