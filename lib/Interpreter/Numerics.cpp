//===- Numerics.cpp - element formats of the CPU interpreter --------------===//

#include "tawa/Interpreter/Numerics.h"

#include "tawa/Dialect/TT/TTDialect.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/APFloat.h"

#include <array>
#include <cstring>

using namespace mlir;

namespace tawa::interp {

namespace {

uint32_t floatBits(float f) {
  uint32_t x;
  std::memcpy(&x, &f, sizeof x);
  return x;
}

float bitsFloat(uint32_t x) {
  float f;
  std::memcpy(&f, &x, sizeof f);
  return f;
}

/// The 256 values of an 8-bit float format, decoded once through APFloat.
using ByteTable = std::array<double, 256>;

ByteTable makeByteTable(const llvm::fltSemantics &sem) {
  ByteTable table;
  for (unsigned b = 0; b < 256; ++b)
    table[b] = llvm::APFloat(sem, llvm::APInt(8, b)).convertToDouble();
  return table;
}

const ByteTable *byteTable(Type type) {
  if (isa<Float8E4M3FNType>(type)) {
    static const ByteTable t = makeByteTable(llvm::APFloat::Float8E4M3FN());
    return &t;
  }
  if (isa<Float8E5M2Type>(type)) {
    static const ByteTable t = makeByteTable(llvm::APFloat::Float8E5M2());
    return &t;
  }
  if (isa<Float8E4M3FNUZType>(type)) {
    static const ByteTable t = makeByteTable(llvm::APFloat::Float8E4M3FNUZ());
    return &t;
  }
  if (isa<Float8E5M2FNUZType>(type)) {
    static const ByteTable t = makeByteTable(llvm::APFloat::Float8E5M2FNUZ());
    return &t;
  }
  return nullptr;
}

} // namespace

float halfToFloat(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t mant = h & 0x3ff;
  if (exp == 0x1f) // inf or NaN: keep the payload's top bits
    return bitsFloat(sign | 0x7f800000 | (mant << 13));
  if (exp == 0) {
    // Zero or subnormal: mant * 2^-24, exact in float.
    float f = static_cast<float>(mant) * bitsFloat(0x33800000); // 2^-24
    return sign ? -f : f;
  }
  return bitsFloat(sign | ((exp + 112) << 23) | (mant << 13));
}

uint16_t floatToHalf(float value) {
  uint32_t x = floatBits(value);
  uint32_t sign = (x >> 16) & 0x8000;
  x &= 0x7fffffff;
  if (x >= 0x47800000) { // |value| >= 65536: inf, or NaN
    if (x > 0x7f800000)  // NaN: quiet, with the payload's top bits
      return static_cast<uint16_t>(sign | 0x7e00 | ((x >> 13) & 0x3ff));
    return static_cast<uint16_t>(sign | 0x7c00);
  }
  if (x < 0x38800000) {
    // Result is subnormal or zero: adding 0.5 aligns the 10 mantissa bits at
    // the bottom of the float, and the float addition rounds to nearest even.
    float f = bitsFloat(x) + bitsFloat(126u << 23);
    return static_cast<uint16_t>(sign | (floatBits(f) - (126u << 23)));
  }
  // Normal: rebias the exponent and round to nearest even on the 13 dropped
  // bits; a carry out of the mantissa bumps the exponent (up to inf).
  uint32_t odd = (x >> 13) & 1;
  x += (uint32_t(15 - 127) << 23) + 0xfff + odd;
  return static_cast<uint16_t>(sign | (x >> 13));
}

float bf16ToFloat(uint16_t bits) { return bitsFloat(uint32_t(bits) << 16); }

uint16_t floatToBf16(float value) {
  uint32_t x = floatBits(value);
  if ((x & 0x7fffffff) > 0x7f800000) // NaN stays NaN (quiet)
    return static_cast<uint16_t>((x >> 16) | 0x40);
  x += 0x7fff + ((x >> 16) & 1);
  return static_cast<uint16_t>(x >> 16);
}

bool isSupportedElementType(Type type) {
  if (isa<tt::PointerType, IndexType>(type))
    return true;
  if (auto i = dyn_cast<IntegerType>(type))
    return i.getWidth() >= 1 && i.getWidth() <= 64;
  if (auto f = dyn_cast<FloatType>(type))
    return f.getWidth() <= 64 && (f.isF16() || f.isBF16() || f.isF32() ||
                                  f.isF64() || byteTable(f) != nullptr);
  return false;
}

unsigned elementBytes(Type type) {
  if (isa<tt::PointerType, IndexType>(type))
    return 8;
  return (type.getIntOrFloatBitWidth() + 7) / 8;
}

unsigned integerWidth(Type type) {
  if (isa<tt::PointerType, IndexType>(type))
    return 64;
  return type.getIntOrFloatBitWidth();
}

double roundToFloatType(Type type, double value) {
  if (type.isF64())
    return value;
  float f = static_cast<float>(value);
  if (type.isF32())
    return f;
  if (type.isF16())
    return halfToFloat(floatToHalf(f));
  if (type.isBF16())
    return bf16ToFloat(floatToBf16(f));
  return convertFloat(type, value);
}

double convertFloat(Type type, double value, bool towardZero) {
  if (type.isF64())
    return value;
  llvm::APFloat v(value);
  bool losesInfo = false;
  v.convert(cast<FloatType>(type).getFloatSemantics(),
            towardZero ? llvm::APFloat::rmTowardZero
                       : llvm::APFloat::rmNearestTiesToEven,
            &losesInfo);
  return v.convertToDouble();
}

uint64_t encodeFloat(Type type, double value) {
  if (type.isF64()) {
    uint64_t bits;
    std::memcpy(&bits, &value, sizeof bits);
    return bits;
  }
  if (type.isF32())
    return floatBits(static_cast<float>(value));
  if (type.isF16())
    return floatToHalf(static_cast<float>(value));
  if (type.isBF16())
    return floatToBf16(static_cast<float>(value));
  llvm::APFloat v(value);
  bool losesInfo = false;
  v.convert(cast<FloatType>(type).getFloatSemantics(),
            llvm::APFloat::rmNearestTiesToEven, &losesInfo);
  return v.bitcastToAPInt().getZExtValue();
}

double decodeFloat(Type type, uint64_t bits) {
  if (type.isF64()) {
    double d;
    std::memcpy(&d, &bits, sizeof d);
    return d;
  }
  if (type.isF32())
    return bitsFloat(static_cast<uint32_t>(bits));
  if (type.isF16())
    return halfToFloat(static_cast<uint16_t>(bits));
  if (type.isBF16())
    return bf16ToFloat(static_cast<uint16_t>(bits));
  if (const ByteTable *table = byteTable(type))
    return (*table)[bits & 0xff];
  unsigned width = type.getIntOrFloatBitWidth();
  return llvm::APFloat(cast<FloatType>(type).getFloatSemantics(),
                       llvm::APInt(width, bits))
      .convertToDouble();
}

} // namespace tawa::interp
