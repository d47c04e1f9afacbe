// Element-wise math of generated register code: the approximate base-2
// exponential that softmax uses (the MUFU.EX2 unit: one instruction where
// exp2f's accurate path takes several), as Triton lowers math.exp2.
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

} // namespace tawa::device
