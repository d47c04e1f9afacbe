//===- TensorMap.cpp - CUtensorMap encode arguments
//------------------------===//

#include "tawa/runtime/TensorMap.h"
#include "tawa/runtime/Driver.h"
#include "tawa/runtime/Error.h"

#include <sstream>

namespace tawa::runtime {

namespace {

std::string dimsText(const std::vector<int64_t> &v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i)
    s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

CUtensorMapSwizzle toCu(Swizzle s) {
  switch (s) {
  case Swizzle::None:
    return CU_TENSOR_MAP_SWIZZLE_NONE;
  case Swizzle::B32:
    return CU_TENSOR_MAP_SWIZZLE_32B;
  case Swizzle::B64:
    return CU_TENSOR_MAP_SWIZZLE_64B;
  case Swizzle::B128:
    return CU_TENSOR_MAP_SWIZZLE_128B;
  }
  return CU_TENSOR_MAP_SWIZZLE_NONE;
}

CUtensorMapL2promotion toCu(L2Promotion p) {
  switch (p) {
  case L2Promotion::None:
    return CU_TENSOR_MAP_L2_PROMOTION_NONE;
  case L2Promotion::B64:
    return CU_TENSOR_MAP_L2_PROMOTION_L2_64B;
  case L2Promotion::B128:
    return CU_TENSOR_MAP_L2_PROMOTION_L2_128B;
  case L2Promotion::B256:
    return CU_TENSOR_MAP_L2_PROMOTION_L2_256B;
  }
  return CU_TENSOR_MAP_L2_PROMOTION_NONE;
}

} // namespace

TensorMapEncodeArgs computeTensorMapArgs(const TensorMapParam &param,
                                         const TensorDesc &t,
                                         const std::string &name) {
  auto fail = [&](const std::string &what) -> void {
    throw Error("tensor map '" + name + "': " + what);
  };
  const DTypeInfo &info = dtypeInfo(param.dtype);
  const uint64_t bytes = info.bytes;
  const size_t rank = t.shape.size();

  if (t.dtype != param.dtype)
    fail(std::string("dtype mismatch: the kernel expects ") + info.name +
         ", the tensor is " + dtypeInfo(t.dtype).name);
  if (rank < 1 || rank > kMaxTensorRank)
    fail("rank must be 1 to 5, the tensor has rank " + std::to_string(rank));
  if (t.strides.size() != rank)
    fail("shape " + dimsText(t.shape) + " and strides " + dimsText(t.strides) +
         " differ in rank");
  if (param.box.size() != rank)
    fail("the tensor has rank " + std::to_string(rank) +
         " but the kernel's box has rank " + std::to_string(param.box.size()));
  if (t.address == 0)
    fail("null device address");
  if (t.address % 16 != 0) {
    std::ostringstream os;
    os << "global address 0x" << std::hex << t.address
       << " is not 16-byte aligned";
    fail(os.str());
  }
  for (size_t d = 0; d < rank; ++d) {
    if (t.shape[d] < 1)
      fail("dimension " + std::to_string(d) + " of shape " + dimsText(t.shape) +
           " is " + std::to_string(t.shape[d]) +
           "; TMA needs every extent >= 1");
    if (static_cast<uint64_t>(t.shape[d]) > (uint64_t(1) << 32))
      fail("dimension " + std::to_string(d) + " of shape " + dimsText(t.shape) +
           " exceeds 2^32");
  }
  if (t.strides[rank - 1] != 1)
    fail("innermost stride must be 1 element, strides are " +
         dimsText(t.strides));
  for (size_t d = 0; d + 1 < rank; ++d) {
    int64_t s = t.strides[d];
    if (s <= 0)
      fail("stride " + std::to_string(d) + " of " + dimsText(t.strides) +
           " must be positive");
    uint64_t strideBytes = static_cast<uint64_t>(s) * bytes;
    if (strideBytes % 16 != 0)
      fail("stride " + std::to_string(d) + " of " + dimsText(t.strides) +
           " is " + std::to_string(strideBytes) +
           " bytes, not a multiple of 16 bytes (pad the row)");
    if (strideBytes >= (uint64_t(1) << 40))
      fail("stride " + std::to_string(d) + " is " +
           std::to_string(strideBytes) + " bytes, not below 2^40");
    // TMA walks dimensions as nested loops; overlapping or reordered
    // dimensions would alias elements.
    uint64_t inner = static_cast<uint64_t>(t.strides[d + 1]) *
                     static_cast<uint64_t>(t.shape[d + 1]);
    if (static_cast<uint64_t>(s) < inner)
      fail("strides " + dimsText(t.strides) + " for shape " +
           dimsText(t.shape) + " overlap: stride " + std::to_string(d) +
           " is smaller than extent x stride of dimension " +
           std::to_string(d + 1));
  }
  uint64_t innerBoxBytes = uint64_t(param.box.back()) * bytes;
  for (size_t d = 0; d < rank; ++d)
    if (param.box[d] < 1 || param.box[d] > 256)
      fail("box extent " + std::to_string(param.box[d]) + " in dimension " +
           std::to_string(d) + " is outside 1..256");
  if (innerBoxBytes % 16 != 0)
    fail("inner box is " + std::to_string(innerBoxBytes) +
         " bytes, not a multiple of 16 bytes");
  if (param.swizzle != Swizzle::None &&
      innerBoxBytes > swizzleSpanBytes(param.swizzle))
    fail("inner box is " + std::to_string(innerBoxBytes) +
         " bytes, wider than the " + swizzleName(param.swizzle) +
         " swizzle span");
  if (param.oob == OobFill::Nan && !info.tmaIsFloat)
    fail(std::string("NaN out-of-bounds fill needs a floating-point dtype, "
                     "not ") +
         info.name);

  TensorMapEncodeArgs a;
  a.dataType = info.tmaType;
  a.rank = static_cast<uint32_t>(rank);
  a.address = t.address;
  // The driver counts dimensions from the innermost; the metadata and the
  // caller count from the outermost.
  for (size_t i = 0; i < rank; ++i) {
    size_t d = rank - 1 - i;
    a.globalDim[i] = static_cast<uint64_t>(t.shape[d]);
    a.boxDim[i] = param.box[d];
    a.elementStrides[i] = 1;
    if (i > 0)
      a.globalStrides[i - 1] = static_cast<uint64_t>(t.strides[d]) * bytes;
  }
  a.interleave = CU_TENSOR_MAP_INTERLEAVE_NONE;
  a.swizzle = toCu(param.swizzle);
  a.l2Promotion = toCu(param.l2Promotion);
  a.oobFill = param.oob == OobFill::Nan
                  ? CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA
                  : CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE;
  return a;
}

CUtensorMap encodeTensorMap(const TensorMapEncodeArgs &a,
                            const std::string &name) {
  Driver &drv = Driver::get();
  CUtensorMap map;
  CUresult r = drv.cuTensorMapEncodeTiled(
      &map, a.dataType, a.rank, reinterpret_cast<void *>(a.address),
      a.globalDim, a.globalStrides, a.boxDim, a.elementStrides, a.interleave,
      a.swizzle, a.l2Promotion, a.oobFill);
  if (r == CUDA_SUCCESS)
    return map;
  // The context is only built on failure: this runs on every launch.
  std::ostringstream ctx;
  ctx << "tensor map '" << name << "': rank " << a.rank << ", globalDim {";
  for (uint32_t i = 0; i < a.rank; ++i)
    ctx << (i ? ", " : "") << a.globalDim[i];
  ctx << "}, box {";
  for (uint32_t i = 0; i < a.rank; ++i)
    ctx << (i ? ", " : "") << a.boxDim[i];
  ctx << "} (innermost first)";
  checkCu(r, "cuTensorMapEncodeTiled", ctx.str());
  return map;
}

} // namespace tawa::runtime
