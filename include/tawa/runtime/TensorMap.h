//===- TensorMap.h - CUtensorMap encode arguments ---------------*- C++ -*-===//
//
// Computing the arguments of cuTensorMapEncodeTiled is a pure function of the
// tensor and the metadata parameter. Doing it here, with our own checks of the
// rules the driver documents, turns the driver's bare
// CUDA_ERROR_INVALID_VALUE into a message that says which rule broke.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "tawa/runtime/Metadata.h"

#include <cuda.h>

#include <cstdint>
#include <string>
#include <vector>

namespace tawa::runtime {

inline constexpr unsigned kMaxTensorRank = 5;

/// A tensor as the caller sees it: device address, element type, shape and
/// strides in elements, outermost first (PyTorch's order).
struct TensorDesc {
  uint64_t address = 0;
  DType dtype = DType::F16;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;
};

/// Arguments of cuTensorMapEncodeTiled, innermost dimension first.
struct TensorMapEncodeArgs {
  CUtensorMapDataType dataType = CU_TENSOR_MAP_DATA_TYPE_UINT8;
  uint32_t rank = 0;
  uint64_t address = 0;
  uint64_t globalDim[kMaxTensorRank] = {};
  uint64_t globalStrides[kMaxTensorRank - 1] = {}; ///< bytes, dims 1..rank-1
  uint32_t boxDim[kMaxTensorRank] = {};
  uint32_t elementStrides[kMaxTensorRank] = {};
  CUtensorMapInterleave interleave = CU_TENSOR_MAP_INTERLEAVE_NONE;
  CUtensorMapSwizzle swizzle = CU_TENSOR_MAP_SWIZZLE_NONE;
  CUtensorMapL2promotion l2Promotion = CU_TENSOR_MAP_L2_PROMOTION_NONE;
  CUtensorMapFloatOOBfill oobFill = CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE;
};

/// Validates `tensor` against `param` and computes the encode arguments.
/// Throws Error("tensor map '<name>': ...") naming the broken rule.
TensorMapEncodeArgs computeTensorMapArgs(const TensorMapParam &param,
                                         const TensorDesc &tensor,
                                         const std::string &paramName);

/// Encodes the map through the driver (needs libcuda, no context).
CUtensorMap encodeTensorMap(const TensorMapEncodeArgs &args,
                            const std::string &paramName);

} // namespace tawa::runtime
