//===- NumericsTest.cpp - element formats against llvm::APFloat -----------===//

#include "tawa/Interpreter/Numerics.h"

#include "tawa/Interpreter/Scheduler.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/APFloat.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

using namespace mlir;
using namespace tawa::interp;

namespace {

float apRound(const llvm::fltSemantics &sem, float f, uint64_t &bits) {
  llvm::APFloat v(f);
  bool losesInfo;
  v.convert(sem, llvm::APFloat::rmNearestTiesToEven, &losesInfo);
  bits = v.bitcastToAPInt().getZExtValue();
  return v.convertToFloat();
}

float floatOf(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

TEST(NumericsTest, HalfDecodesEveryBitPatternLikeAPFloat) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    llvm::APFloat ap(llvm::APFloat::IEEEhalf(), llvm::APInt(16, h));
    float want = ap.convertToFloat();
    float got = halfToFloat(static_cast<uint16_t>(h));
    if (std::isnan(want))
      EXPECT_TRUE(std::isnan(got)) << h;
    else
      EXPECT_EQ(std::memcmp(&want, &got, 4), 0) << h;
  }
}

TEST(NumericsTest, HalfAndBf16RoundToNearestEvenLikeAPFloat) {
  // Every float near a half or bf16 value (ties and their neighbours
  // included), plus random floats over the whole range.
  SplitMix64 rng(1);
  std::vector<float> samples;
  for (uint32_t h = 0; h < 0x10000; ++h) {
    float f = halfToFloat(static_cast<uint16_t>(h));
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    for (int delta : {-4097, -4096, -4095, -1, 0, 1, 4095, 4096, 4097})
      samples.push_back(floatOf(bits + delta));
  }
  for (int i = 0; i < 200000; ++i)
    samples.push_back(floatOf(static_cast<uint32_t>(rng.next())));
  for (float f : samples) {
    if (std::isnan(f))
      continue;
    uint64_t bits;
    apRound(llvm::APFloat::IEEEhalf(), f, bits);
    EXPECT_EQ(floatToHalf(f), bits) << f;
    apRound(llvm::APFloat::BFloat(), f, bits);
    EXPECT_EQ(floatToBf16(f), bits) << f;
  }
  EXPECT_TRUE(std::isnan(halfToFloat(floatToHalf(NAN))));
  EXPECT_TRUE(std::isnan(bf16ToFloat(floatToBf16(NAN))));
}

TEST(NumericsTest, RoundingToElementTypes) {
  MLIRContext context;
  Builder b(&context);
  EXPECT_EQ(roundToFloatType(b.getF16Type(), 1.0 + 1.0 / 4096), 1.0);
  EXPECT_EQ(roundToFloatType(b.getF16Type(), 65520.0), INFINITY);
  EXPECT_EQ(roundToFloatType(b.getBF16Type(), 1.0 + 1.0 / 256), 1.0);
  EXPECT_EQ(roundToFloatType(b.getF32Type(), 1.0 + 1e-9), 1.0);
  Type e4m3 = b.getType<Float8E4M3FNType>();
  EXPECT_EQ(roundToFloatType(e4m3, 0.3), 0.3125);
  EXPECT_EQ(decodeFloat(e4m3, encodeFloat(e4m3, 448.0)), 448.0);
  EXPECT_EQ(convertFloat(b.getF16Type(), 1.0 + 3.0 / 2048, /*towardZero=*/true),
            1.0 + 1.0 / 1024);
  EXPECT_EQ(convertFloat(b.getF16Type(), 1.0 + 3.0 / 2048), 1.0 + 2.0 / 1024);
  EXPECT_EQ(signExtend(0xff, 8), -1);
  EXPECT_EQ(truncateToWidth(0x1ff, 8), 0xffu);
}

} // namespace
