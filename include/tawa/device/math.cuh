// Element-wise math of generated register code, as Triton lowers it: the
// approximate base-2 exponential that softmax uses (the MUFU.EX2 unit: one
// instruction where exp2f's accurate path takes several), and f32 division
// without IEEE rounding's slow path.
#pragma once

namespace tawa::device {

/// 2^x with ex2.approx.ftz.f32: relative error about 2^-22 over the normal
/// range; -inf gives +0, +inf gives +inf, NaN gives NaN; results below the
/// smallest normal flush to +0.
__device__ __forceinline__ float exp2Approx(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

/// e^x as 2^(x log2 e) on the same unit.
__device__ __forceinline__ float expApprox(float x) {
  return exp2Approx(x * 1.4426950408889634f);
}

/// a / b with div.full.f32, as Triton lowers an f32 `/` (arith.divf): at
/// most 2 ulp from the exact quotient over the whole range, subnormals
/// included; x / 0 = +-inf, 0 / 0 and inf / inf = NaN, x / inf = +-0. C++'s
/// `/` rounds correctly instead, through a check (FCHK) and a branch to a
/// slow path per division; div.full is two range checks, one reciprocal and
/// a product, and ptxas shares the reciprocal among divisions by the same
/// divisor (attention's output divided by its row sums).
__device__ __forceinline__ float divFull(float a, float b) {
  float q;
  asm("div.full.f32 %0, %1, %2;" : "=f"(q) : "f"(a), "f"(b));
  return q;
}

} // namespace tawa::device
