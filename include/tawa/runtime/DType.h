//===- DType.h - Element types the runtime understands ----------*- C++ -*-===//
//
// One table maps the metadata spelling of an element type to its size and
// the CUtensorMapDataType that TMA copies it with. fp8 and i8 travel as
// UINT8: TMA only moves bytes for them, it never interprets the values.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cuda.h>

#include <optional>
#include <string_view>
#include <vector>

namespace tawa::runtime {

/// The numeric values are part of the C ABI (tawa_runtime.h: TAWA_DTYPE_*).
enum class DType {
  F16 = 0,
  BF16 = 1,
  F32 = 2,
  E4M3 = 3,
  E5M2 = 4,
  I8 = 5,
  I32 = 6,
  I64 = 7
};

struct DTypeInfo {
  DType dtype;
  const char *name; ///< spelling in metadata JSON
  unsigned bytes;
  CUtensorMapDataType tmaType;
  /// Whether TMA treats the elements as floating point, which is what the
  /// NaN out-of-bounds fill requires.
  bool tmaIsFloat;
};

const DTypeInfo &dtypeInfo(DType dtype);
std::optional<DType> parseDType(std::string_view name);
const std::vector<DTypeInfo> &allDTypes();

} // namespace tawa::runtime
