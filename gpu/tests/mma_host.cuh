// Host-side element types for the wgmma tests: random generation, raw bits
// and conversion to double, per MmaType.
#pragma once
#include "tawa/device/wgmma.cuh"
#include <cstring>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <random>

namespace tawa::test {

using tawa::device::MmaType;

template <MmaType T> struct HostElem;

template <> struct HostElem<MmaType::F16> {
  using Bits = uint16_t;
  static constexpr CUtensorMapDataType kMapType =
      CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
  static constexpr const char *kName = "f16";
  static Bits fromFloat(float f) {
    return __half_as_ushort(__float2half_rn(f));
  }
  static double toDouble(Bits b) { return __half2float(__ushort_as_half(b)); }
};

template <> struct HostElem<MmaType::BF16> {
  using Bits = uint16_t;
  static constexpr CUtensorMapDataType kMapType =
      CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
  static constexpr const char *kName = "bf16";
  static Bits fromFloat(float f) {
    __nv_bfloat16 h = __float2bfloat16_rn(f);
    Bits b;
    std::memcpy(&b, &h, 2);
    return b;
  }
  static double toDouble(Bits b) {
    __nv_bfloat16 h;
    std::memcpy(&h, &b, 2);
    return __bfloat162float(h);
  }
};

template <> struct HostElem<MmaType::E4M3> {
  using Bits = uint8_t;
  static constexpr CUtensorMapDataType kMapType = CU_TENSOR_MAP_DATA_TYPE_UINT8;
  static constexpr const char *kName = "e4m3";
  static Bits fromFloat(float f) {
    return __nv_cvt_float_to_fp8(f, __NV_SATFINITE, __NV_E4M3);
  }
  static double toDouble(Bits b) {
    __nv_fp8_e4m3 v;
    v.__x = b;
    return float(v);
  }
};

/// Uniform random values in [-range, range], rounded to T.
template <MmaType T>
std::vector<typename HostElem<T>::Bits>
randomElems(size_t n, std::mt19937_64 &rng, float range = 1.f) {
  std::uniform_real_distribution<float> dist(-range, range);
  std::vector<typename HostElem<T>::Bits> v(n);
  for (auto &x : v)
    x = HostElem<T>::fromFloat(dist(rng));
  return v;
}

} // namespace tawa::test
