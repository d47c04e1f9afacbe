//===- DType.cpp - Element type table
//--------------------------------------===//

#include "tawa/runtime/DType.h"

namespace tawa::runtime {

const std::vector<DTypeInfo> &allDTypes() {
  // Indexed by the enum value; the static_asserts below keep them in step.
  static const std::vector<DTypeInfo> table = {
      {DType::F16, "f16", 2, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, true},
      {DType::BF16, "bf16", 2, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, true},
      {DType::F32, "f32", 4, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, true},
      {DType::E4M3, "e4m3", 1, CU_TENSOR_MAP_DATA_TYPE_UINT8, false},
      {DType::E5M2, "e5m2", 1, CU_TENSOR_MAP_DATA_TYPE_UINT8, false},
      {DType::I8, "i8", 1, CU_TENSOR_MAP_DATA_TYPE_UINT8, false},
      {DType::I32, "i32", 4, CU_TENSOR_MAP_DATA_TYPE_INT32, false},
      {DType::I64, "i64", 8, CU_TENSOR_MAP_DATA_TYPE_INT64, false},
  };
  return table;
}

static_assert(static_cast<int>(DType::F16) == 0 &&
                  static_cast<int>(DType::I32) == 6 &&
                  static_cast<int>(DType::I64) == 7,
              "DType values are part of the C ABI");

const DTypeInfo &dtypeInfo(DType dtype) {
  return allDTypes().at(static_cast<size_t>(dtype));
}

std::optional<DType> parseDType(std::string_view name) {
  for (const DTypeInfo &info : allDTypes())
    if (name == info.name)
      return info.dtype;
  return std::nullopt;
}

} // namespace tawa::runtime
