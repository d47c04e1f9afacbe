#include "tawa/runtime/TensorMap.h"
#include "tawa/runtime/Driver.h"
#include "tawa/runtime/Error.h"

#include <gtest/gtest.h>

using namespace tawa::runtime;

namespace {

TensorMapParam param(DType dt, std::vector<uint32_t> box, Swizzle s,
                     OobFill oob = OobFill::Zero) {
  TensorMapParam p;
  p.dtype = dt;
  p.box = std::move(box);
  p.swizzle = s;
  p.oob = oob;
  return p;
}

std::string errorOf(const TensorMapParam &p, const TensorDesc &t) {
  try {
    computeTensorMapArgs(p, t, "a");
  } catch (const Error &e) {
    return e.what();
  }
  return "<no error>";
}

TEST(TensorMap, GemmOperandArguments) {
  // A: 1000 x 72 f16 row-major, box 128 x 64 with 128B swizzle.
  TensorMapEncodeArgs a = computeTensorMapArgs(
      param(DType::F16, {128, 64}, Swizzle::B128),
      TensorDesc{0x10000, DType::F16, {1000, 72}, {72, 1}}, "a");
  EXPECT_EQ(a.dataType, CU_TENSOR_MAP_DATA_TYPE_FLOAT16);
  EXPECT_EQ(a.rank, 2u);
  EXPECT_EQ(a.address, 0x10000u);
  EXPECT_EQ(a.globalDim[0], 72u); // innermost first
  EXPECT_EQ(a.globalDim[1], 1000u);
  EXPECT_EQ(a.globalStrides[0], 144u); // bytes
  EXPECT_EQ(a.boxDim[0], 64u);
  EXPECT_EQ(a.boxDim[1], 128u);
  EXPECT_EQ(a.elementStrides[0], 1u);
  EXPECT_EQ(a.elementStrides[1], 1u);
  EXPECT_EQ(a.swizzle, CU_TENSOR_MAP_SWIZZLE_128B);
  EXPECT_EQ(a.interleave, CU_TENSOR_MAP_INTERLEAVE_NONE);
  EXPECT_EQ(a.l2Promotion, CU_TENSOR_MAP_L2_PROMOTION_L2_256B);
  EXPECT_EQ(a.oobFill, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
}

TEST(TensorMap, PaddedRowsAnd5D) {
  // A 127 x 255 output stored with rows padded to 256 elements.
  TensorMapEncodeArgs c = computeTensorMapArgs(
      param(DType::F16, {64, 64}, Swizzle::B128),
      TensorDesc{0x20000, DType::F16, {127, 255}, {256, 1}}, "c");
  EXPECT_EQ(c.globalDim[0], 255u);
  EXPECT_EQ(c.globalStrides[0], 512u);

  TensorMapEncodeArgs t = computeTensorMapArgs(
      param(DType::F32, {1, 2, 3, 4, 8}, Swizzle::None, OobFill::Nan),
      TensorDesc{0x30000, DType::F32, {2, 3, 4, 5, 8}, {480, 160, 40, 8, 1}},
      "t");
  EXPECT_EQ(t.rank, 5u);
  EXPECT_EQ(t.globalDim[4], 2u);
  EXPECT_EQ(t.globalStrides[0], 32u);
  EXPECT_EQ(t.globalStrides[3], 1920u);
  EXPECT_EQ(t.boxDim[0], 8u);
  EXPECT_EQ(t.boxDim[4], 1u);
  EXPECT_EQ(t.oobFill, CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA);
}

TEST(TensorMap, ValidationMessages) {
  TensorMapParam p = param(DType::F16, {128, 64}, Swizzle::B128);
  EXPECT_EQ(errorOf(p, {0x10008, DType::F16, {128, 64}, {64, 1}}),
            "tensor map 'a': global address 0x10008 is not 16-byte aligned");
  EXPECT_EQ(errorOf(p, {0, DType::F16, {128, 64}, {64, 1}}),
            "tensor map 'a': null device address");
  EXPECT_EQ(errorOf(p, {0x10000, DType::F16, {127, 255}, {255, 1}}),
            "tensor map 'a': stride 0 of [255, 1] is 510 bytes, not a multiple "
            "of 16 bytes (pad the row)");
  EXPECT_EQ(errorOf(p, {0x10000, DType::F16, {128, 64}, {1, 128}}),
            "tensor map 'a': innermost stride must be 1 element, strides are "
            "[1, 128]");
  EXPECT_EQ(errorOf(p, {0x10000, DType::F16, {128, 64}, {32, 1}}),
            "tensor map 'a': strides [32, 1] for shape [128, 64] overlap: "
            "stride 0 is smaller than extent x stride of dimension 1");
  EXPECT_EQ(errorOf(p, {0x10000, DType::F16, {128, 0}, {64, 1}}),
            "tensor map 'a': dimension 1 of shape [128, 0] is 0; TMA needs "
            "every extent >= 1");
  EXPECT_EQ(errorOf(p, {0x10000, DType::BF16, {128, 64}, {64, 1}}),
            "tensor map 'a': dtype mismatch: the kernel expects f16, the "
            "tensor is bf16");
  EXPECT_EQ(errorOf(p, {0x10000, DType::F16, {64}, {1}}),
            "tensor map 'a': the tensor has rank 1 but the kernel's box has "
            "rank 2");
  EXPECT_EQ(errorOf(p, {0x10000, DType::F16, {}, {}}),
            "tensor map 'a': rank must be 1 to 5, the tensor has rank 0");
  EXPECT_EQ(
      errorOf(p, {0x10000, DType::F16, {1, 1, 1, 1, 1, 8}, {8, 8, 8, 8, 8, 1}}),
      "tensor map 'a': rank must be 1 to 5, the tensor has rank 6");
  EXPECT_EQ(errorOf(p, {0x10000, DType::F16, {128, 64}, {64}}),
            "tensor map 'a': shape [128, 64] and strides [64] differ in rank");
  EXPECT_EQ(errorOf(p, {0x10000, DType::F16, {2, 8}, {int64_t(1) << 40, 1}}),
            "tensor map 'a': stride 0 is 2199023255552 bytes, not below 2^40");

  // Parameters that bypassed the metadata parser are checked again here.
  EXPECT_EQ(errorOf(param(DType::F16, {300, 64}, Swizzle::B128),
                    {0x10000, DType::F16, {128, 64}, {64, 1}}),
            "tensor map 'a': box extent 300 in dimension 0 is outside 1..256");
  EXPECT_EQ(errorOf(param(DType::F16, {128, 128}, Swizzle::B128),
                    {0x10000, DType::F16, {128, 128}, {128, 1}}),
            "tensor map 'a': inner box is 256 bytes, wider than the 128B "
            "swizzle span");
  EXPECT_EQ(errorOf(param(DType::F16, {128, 128}, Swizzle::None),
                    {0x10000, DType::F16, {128, 128}, {128, 1}}),
            "<no error>"); // no swizzle, no span limit
  EXPECT_EQ(errorOf(param(DType::F32, {8, 2}, Swizzle::None),
                    {0x10000, DType::F32, {8, 8}, {8, 1}}),
            "tensor map 'a': inner box is 8 bytes, not a multiple of 16 bytes");
  EXPECT_EQ(errorOf(param(DType::I8, {8, 16}, Swizzle::None, OobFill::Nan),
                    {0x10000, DType::I8, {8, 16}, {16, 1}}),
            "tensor map 'a': NaN out-of-bounds fill needs a floating-point "
            "dtype, not i8");
}

TEST(TensorMap, BoxMayExceedTensor) {
  // 1 x 8 operand of a 1x1x8 GEMM: the 128 x 64 box hangs over both edges
  // and TMA fills the rest; this must be accepted.
  TensorMapEncodeArgs a = computeTensorMapArgs(
      param(DType::F16, {128, 64}, Swizzle::B128),
      TensorDesc{0x10000, DType::F16, {1, 8}, {8, 1}}, "a");
  EXPECT_EQ(a.globalDim[0], 8u);
  EXPECT_EQ(a.globalDim[1], 1u);
  EXPECT_EQ(a.globalStrides[0], 16u);
}

TEST(TensorMap, EncodesThroughDriverWhenPresent) {
  std::string why;
  if (!Driver::available(&why))
    GTEST_SKIP() << "no CUDA driver: " << why;
  TensorMapEncodeArgs a = computeTensorMapArgs(
      param(DType::F16, {128, 64}, Swizzle::B128),
      TensorDesc{0x10000, DType::F16, {1024, 1024}, {1024, 1}}, "a");
  CUtensorMap map = encodeTensorMap(a, "a");
  bool nonzero = false;
  for (auto word : map.opaque)
    nonzero |= word != 0;
  EXPECT_TRUE(nonzero);
}

} // namespace
