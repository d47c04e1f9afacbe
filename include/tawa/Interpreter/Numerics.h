//===- Numerics.h - element formats of the CPU interpreter ------*- C++ -*-===//
//
// The interpreter keeps every float element as a double that holds a value
// of the element's own type exactly (f16, bf16 and the fp8 formats are all
// subsets of f64), and every integer element zero-extended to its width.
// These helpers round to a type, and encode and decode the bit patterns that
// global memory holds.
//
//===----------------------------------------------------------------------===//

#ifndef TAWA_INTERPRETER_NUMERICS_H
#define TAWA_INTERPRETER_NUMERICS_H

#include "mlir/IR/Types.h"

#include <cstdint>

namespace tawa::interp {

/// IEEE half <-> float; round to nearest even.
float halfToFloat(uint16_t bits);
uint16_t floatToHalf(float value);

/// bfloat16 <-> float; round to nearest even.
float bf16ToFloat(uint16_t bits);
uint16_t floatToBf16(float value);

/// Whether the interpreter represents elements of `type` (an integer, index,
/// float of at most 64 bits or a !tt.ptr).
bool isSupportedElementType(mlir::Type type);

/// Bytes of one element of `type` in global memory (i1 takes a byte, as in
/// Triton; pointers take 8).
unsigned elementBytes(mlir::Type type);

/// Bits of an integer-like element (index and pointers are 64).
unsigned integerWidth(mlir::Type type);

/// `value` rounded to the float type `type` (nearest even). Exact for a
/// value that is already of a narrower type or the result of one +, -, *,
/// / or sqrt of values of `type` computed in float: float has more than
/// 2p + 2 significand bits for every p of f16, bf16 and fp8, so rounding
/// through it is correctly rounded.
double roundToFloatType(mlir::Type type, double value);

/// `value` (any double) converted to `type` with the given rounding: nearest
/// even, or toward zero (tt.fp_to_fp's rtz). Goes through llvm::APFloat, so
/// overflow and NaN follow MLIR's own constant folding.
double convertFloat(mlir::Type type, double value, bool towardZero = false);

/// The bit pattern of `value` (already of `type`) as memory holds it.
uint64_t encodeFloat(mlir::Type type, double value);
/// The value of the bit pattern `bits` of `type`.
double decodeFloat(mlir::Type type, uint64_t bits);

/// Two's complement helpers for integers of `width` bits (1..64).
inline uint64_t truncateToWidth(uint64_t value, unsigned width) {
  return width >= 64 ? value : value & ((uint64_t(1) << width) - 1);
}
inline int64_t signExtend(uint64_t value, unsigned width) {
  if (width >= 64)
    return static_cast<int64_t>(value);
  uint64_t sign = uint64_t(1) << (width - 1);
  value = truncateToWidth(value, width);
  return static_cast<int64_t>((value ^ sign) - sign);
}

} // namespace tawa::interp

#endif // TAWA_INTERPRETER_NUMERICS_H
