//===- TTDialect.cpp - tawa's tt dialect: registration and types ----------===//

#include "tawa/Dialect/TT/TTDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace tawa::tt;

#include "tawa/Dialect/TT/TTDialect.cpp.inc"
#include "tawa/Dialect/TT/TTEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "tawa/Dialect/TT/TTAttrs.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "tawa/Dialect/TT/TTTypes.cpp.inc"

void TTDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "tawa/Dialect/TT/TTOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "tawa/Dialect/TT/TTAttrs.cpp.inc"
      >();
  registerTypes();
  // Triton constructs tawa has no definition for still parse when printed in
  // generic form, so that the supported-subset check can report them at the
  // user's source line instead of failing in the parser.
  allowUnknownOperations();
}

void TTDialect::registerTypes() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "tawa/Dialect/TT/TTTypes.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

Type PointerType::parse(AsmParser &parser) {
  Type pointee;
  int addressSpace = 1;
  if (parser.parseLess() || parser.parseType(pointee))
    return {};
  if (succeeded(parser.parseOptionalComma()) &&
      parser.parseInteger(addressSpace))
    return {};
  if (parser.parseGreater())
    return {};
  return PointerType::get(pointee, addressSpace);
}

void PointerType::print(AsmPrinter &printer) const {
  printer << "<" << getPointeeType();
  if (getAddressSpace() != 1)
    printer << ", " << getAddressSpace();
  printer << ">";
}

LogicalResult
TensorDescType::verify(function_ref<InFlightDiagnostic()> emitError,
                       RankedTensorType blockType) {
  if (blockType.getRank() < 1 || blockType.getRank() > 5)
    return emitError() << "tensor descriptor block must have rank 1 to 5, got "
                       << blockType.getRank();
  for (int64_t dim : blockType.getShape())
    if (dim <= 0)
      return emitError() << "tensor descriptor block dimensions must be "
                            "static and positive";
  return success();
}

Type tawa::tt::getPointeeTypeOf(Type ptrLike) {
  if (auto tensor = dyn_cast<RankedTensorType>(ptrLike)) {
    if (auto ptr = dyn_cast<PointerType>(tensor.getElementType()))
      return tensor.clone(ptr.getPointeeType());
    return Type();
  }
  if (auto ptr = dyn_cast<PointerType>(ptrLike))
    return ptr.getPointeeType();
  return Type();
}

Type tawa::tt::getI1SameShape(Type type) {
  auto i1 = IntegerType::get(type.getContext(), 1);
  if (auto tensor = dyn_cast<RankedTensorType>(type))
    return tensor.clone(i1);
  return i1;
}
