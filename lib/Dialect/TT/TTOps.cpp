//===- TTOps.cpp - tt dialect operations: parsing and verification --------===//
//
// Verifiers reject malformed TTIR at the operation's location (which Triton
// points into the user's Python file), before any transformation sees it.
//
//===----------------------------------------------------------------------===//

#include "tawa/Dialect/TT/TTDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/FunctionImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallSet.h"

using namespace mlir;
using namespace tawa::tt;

static std::string shapeString(ArrayRef<int64_t> shape) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "[";
  llvm::interleaveComma(shape, os);
  os << "]";
  return s;
}

//===----------------------------------------------------------------------===//
// tt.func / tt.return / tt.call
//===----------------------------------------------------------------------===//

ParseResult FuncOp::parse(OpAsmParser &parser, OperationState &result) {
  auto buildFuncType =
      [](Builder &builder, ArrayRef<Type> argTypes, ArrayRef<Type> results,
         function_interface_impl::VariadicFlag,
         std::string &) { return builder.getFunctionType(argTypes, results); };
  return function_interface_impl::parseFunctionOp(
      parser, result, /*allowVariadic=*/false,
      getFunctionTypeAttrName(result.name), buildFuncType,
      getArgAttrsAttrName(result.name), getResAttrsAttrName(result.name));
}

void FuncOp::print(OpAsmPrinter &printer) {
  function_interface_impl::printFunctionOp(
      printer, *this, /*isVariadic=*/false, getFunctionTypeAttrName(),
      getArgAttrsAttrName(), getResAttrsAttrName());
}

LogicalResult ReturnOp::verify() {
  auto func = (*this)->getParentOfType<FuncOp>();
  ArrayRef<Type> results = func.getResultTypes();
  if (getNumOperands() != results.size())
    return emitOpError("has ")
           << getNumOperands() << " operands, but the enclosing function @"
           << func.getName() << " returns " << results.size();
  for (auto [i, pair] : llvm::enumerate(llvm::zip(getOperandTypes(), results)))
    if (std::get<0>(pair) != std::get<1>(pair))
      return emitOpError("operand #")
             << i << " has type " << std::get<0>(pair)
             << ", but the enclosing function returns " << std::get<1>(pair);
  return success();
}

LogicalResult CallOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  auto fn = symbolTable.lookupNearestSymbolFrom<FuncOp>(*this, getCalleeAttr());
  if (!fn)
    return emitOpError() << "'" << getCallee()
                         << "' does not reference a tt.func";
  FunctionType type = fn.getFunctionType();
  if (type.getNumInputs() != getNumOperands() ||
      !llvm::equal(type.getInputs(), getOperandTypes()) ||
      !llvm::equal(type.getResults(), getResultTypes()))
    return emitOpError("operand or result types do not match @")
           << getCallee() << " of type " << type;
  return success();
}

//===----------------------------------------------------------------------===//
// Shape manipulation
//===----------------------------------------------------------------------===//

LogicalResult MakeRangeOp::verify() {
  // I32Attr getters return uint32_t; the attributes are signed i32 values.
  int64_t start = static_cast<int32_t>(getStart());
  int64_t end = static_cast<int32_t>(getEnd());
  auto type = getType();
  if (type.getRank() != 1)
    return emitOpError("result must be a 1-D tensor");
  if (end <= start)
    return emitOpError("end (")
           << end << ") must be greater than start (" << start << ")";
  if (type.getDimSize(0) != end - start)
    return emitOpError("result has ")
           << type.getDimSize(0) << " elements, but [" << start << ", " << end
           << ") has " << end - start;
  return success();
}

LogicalResult SplatOp::verify() {
  auto type = cast<RankedTensorType>(getType());
  if (type.getElementType() != getSrc().getType())
    return emitOpError("result element type ")
           << type.getElementType() << " does not match the operand type "
           << getSrc().getType();
  return success();
}

LogicalResult BroadcastOp::verify() {
  auto src = cast<RankedTensorType>(getSrc().getType());
  auto dst = cast<RankedTensorType>(getType());
  if (src.getElementType() != dst.getElementType())
    return emitOpError("element types differ: ")
           << src.getElementType() << " vs " << dst.getElementType();
  if (src.getRank() != dst.getRank())
    return emitOpError("operand rank ")
           << src.getRank() << " differs from result rank " << dst.getRank();
  for (int64_t i = 0; i < src.getRank(); ++i)
    if (src.getDimSize(i) != 1 && src.getDimSize(i) != dst.getDimSize(i))
      return emitOpError("dimension ")
             << i << " of size " << src.getDimSize(i)
             << " cannot be broadcast to " << dst.getDimSize(i);
  return success();
}

LogicalResult ExpandDimsOp::verify() {
  auto src = cast<RankedTensorType>(getSrc().getType());
  auto dst = cast<RankedTensorType>(getType());
  int64_t axis = static_cast<int32_t>(getAxis()); // signed i32 attribute
  if (axis < 0 || axis > src.getRank())
    return emitOpError("axis ")
           << axis << " is out of range for rank " << src.getRank();
  SmallVector<int64_t> expected(src.getShape());
  expected.insert(expected.begin() + axis, 1);
  if (dst.getShape() != ArrayRef<int64_t>(expected) ||
      dst.getElementType() != src.getElementType())
    return emitOpError("result type ")
           << dst << " does not match operand " << src
           << " with a unit dimension inserted at axis " << axis;
  return success();
}

LogicalResult TransOp::verify() {
  auto src = cast<RankedTensorType>(getSrc().getType());
  auto dst = cast<RankedTensorType>(getType());
  ArrayRef<int32_t> order = getOrder();
  if (static_cast<int64_t>(order.size()) != src.getRank())
    return emitOpError("order has ")
           << order.size() << " entries for rank " << src.getRank();
  llvm::SmallSet<int32_t, 4> seen;
  SmallVector<int64_t> expected;
  for (int32_t d : order) {
    if (d < 0 || d >= src.getRank() || !seen.insert(d).second)
      return emitOpError("order is not a permutation of [0, ")
             << src.getRank() << ")";
    expected.push_back(src.getDimSize(d));
  }
  if (dst.getShape() != ArrayRef<int64_t>(expected) ||
      dst.getElementType() != src.getElementType())
    return emitOpError("result type ")
           << dst << " is not the operand " << src << " permuted by the order";
  return success();
}

LogicalResult ReshapeOp::verify() {
  auto src = cast<RankedTensorType>(getSrc().getType());
  auto dst = cast<RankedTensorType>(getType());
  if (src.getNumElements() != dst.getNumElements() ||
      src.getElementType() != dst.getElementType())
    return emitOpError("cannot reshape ") << src << " to " << dst;
  return success();
}

//===----------------------------------------------------------------------===//
// tt.dot
//===----------------------------------------------------------------------===//

LogicalResult DotOp::verify() {
  auto a = cast<RankedTensorType>(getA().getType());
  auto b = cast<RankedTensorType>(getB().getType());
  auto c = cast<RankedTensorType>(getC().getType());
  auto d = cast<RankedTensorType>(getD().getType());
  int64_t rank = a.getRank();
  if (rank != 2 && rank != 3)
    return emitOpError("operands must have rank 2 (or 3 with a batch "
                       "dimension), got rank ")
           << rank;
  if (b.getRank() != rank || c.getRank() != rank || d.getRank() != rank)
    return emitOpError("a, b, c and d must have the same rank");
  if (c != d)
    return emitOpError("accumulator type ")
           << c << " differs from result type " << d;
  int64_t m = a.getDimSize(rank - 2), k = a.getDimSize(rank - 1);
  int64_t kb = b.getDimSize(rank - 2), n = b.getDimSize(rank - 1);
  if (k != kb)
    return emitOpError("reduction dimensions differ: a is ")
           << shapeString(a.getShape()) << " and b is "
           << shapeString(b.getShape());
  if (d.getDimSize(rank - 2) != m || d.getDimSize(rank - 1) != n)
    return emitOpError("result shape ")
           << shapeString(d.getShape()) << " is not [" << m << ", " << n
           << "] for a " << shapeString(a.getShape()) << " and b "
           << shapeString(b.getShape());
  if (rank == 3 && (a.getDimSize(0) != b.getDimSize(0) ||
                    a.getDimSize(0) != d.getDimSize(0)))
    return emitOpError("batch dimensions differ");
  Type ea = a.getElementType(), eb = b.getElementType(),
       ed = d.getElementType();
  bool aFloat = isa<FloatType>(ea), bFloat = isa<FloatType>(eb);
  if (aFloat != bFloat)
    return emitOpError("a and b must both be floating-point or both integer, "
                       "got ")
           << ea << " and " << eb;
  // fp8 operands may mix formats (e4m3 x e5m2); every other pair must agree.
  bool aFp8 = aFloat && ea.getIntOrFloatBitWidth() == 8;
  bool bFp8 = bFloat && eb.getIntOrFloatBitWidth() == 8;
  if (ea != eb && !(aFp8 && bFp8))
    return emitOpError("element types of a and b differ: ")
           << ea << " vs " << eb;
  if (aFloat && !isa<FloatType>(ed))
    return emitOpError("floating-point operands need a floating-point "
                       "accumulator, got ")
           << ed;
  if (!aFloat && !ed.isInteger(32))
    return emitOpError("integer operands need an i32 accumulator, got ") << ed;
  return success();
}

//===----------------------------------------------------------------------===//
// tt.reduce
//===----------------------------------------------------------------------===//

LogicalResult ReduceOp::verify() {
  if (getSrcs().empty())
    return emitOpError("needs at least one operand");
  auto first = cast<RankedTensorType>(getSrcs()[0].getType());
  int64_t axis = static_cast<int32_t>(getAxis()); // signed i32 attribute
  if (axis < 0 || axis >= first.getRank())
    return emitOpError("axis ")
           << axis << " is out of range for rank " << first.getRank();
  if (getNumResults() != getSrcs().size())
    return emitOpError("has ") << getSrcs().size() << " operands but "
                               << getNumResults() << " results";
  SmallVector<int64_t> reduced(first.getShape());
  reduced.erase(reduced.begin() + axis);
  for (auto [src, res] : llvm::zip(getSrcs(), getResults())) {
    auto srcType = cast<RankedTensorType>(src.getType());
    if (srcType.getShape() != first.getShape())
      return emitOpError("operands must have the same shape");
    Type elt = srcType.getElementType();
    Type expected =
        reduced.empty() ? elt : Type(RankedTensorType::get(reduced, elt));
    if (res.getType() != expected)
      return emitOpError("result type ")
             << res.getType() << " should be " << expected;
  }
  return success();
}

Operation *tawa::tt::getSingleCombiner(ReduceOp reduce) {
  Block &body = reduce.getCombineOp().front();
  if (reduce.getSrcs().size() != 1 || body.getNumArguments() != 2 ||
      !llvm::hasSingleElement(body.without_terminator()))
    return nullptr;
  Operation *op = &body.front();
  if (op->getNumOperands() != 2 || op->getNumResults() != 1)
    return nullptr;
  Value a = body.getArgument(0), b = body.getArgument(1);
  bool args = (op->getOperand(0) == a && op->getOperand(1) == b) ||
              (op->getOperand(0) == b && op->getOperand(1) == a);
  Operation *ret = body.getTerminator();
  if (!args || ret->getNumOperands() != 1 ||
      ret->getOperand(0) != op->getResult(0))
    return nullptr;
  return op;
}

LogicalResult ReduceOp::verifyRegions() {
  Block &block = getCombineOp().front();
  size_t n = getSrcs().size();
  if (block.getNumArguments() != 2 * n)
    return emitOpError("combiner must take ")
           << 2 * n << " arguments, takes " << block.getNumArguments();
  for (size_t i = 0; i < n; ++i) {
    Type elt = cast<RankedTensorType>(getSrcs()[i].getType()).getElementType();
    if (block.getArgument(i).getType() != elt ||
        block.getArgument(i + n).getType() != elt)
      return emitOpError("combiner arguments must have the element types of "
                         "the operands");
  }
  auto ret = dyn_cast<ReduceReturnOp>(block.getTerminator());
  if (!ret || ret.getResult().size() != n)
    return emitOpError("combiner must end in tt.reduce.return with ")
           << n << " values";
  return success();
}

//===----------------------------------------------------------------------===//
// Conversions and pointers
//===----------------------------------------------------------------------===//

LogicalResult FpToFpOp::verify() {
  Type src = getSrc().getType(), dst = getType();
  auto srcTensor = dyn_cast<RankedTensorType>(src);
  auto dstTensor = dyn_cast<RankedTensorType>(dst);
  if ((srcTensor == nullptr) != (dstTensor == nullptr) ||
      (srcTensor && srcTensor.getShape() != dstTensor.getShape()))
    return emitOpError("operand and result shapes differ");
  Type srcElt = getElementTypeOrSelf(src), dstElt = getElementTypeOrSelf(dst);
  bool narrowing =
      dstElt.getIntOrFloatBitWidth() < srcElt.getIntOrFloatBitWidth();
  if (narrowing && !getRounding())
    return emitOpError("a narrowing conversion from ")
           << srcElt << " to " << dstElt << " needs a rounding mode";
  return success();
}

LogicalResult AddPtrOp::verify() {
  auto ptrTensor = dyn_cast<RankedTensorType>(getPtr().getType());
  auto offTensor = dyn_cast<RankedTensorType>(getOffset().getType());
  if (ptrTensor && offTensor && ptrTensor.getShape() != offTensor.getShape())
    return emitOpError("pointer shape ")
           << shapeString(ptrTensor.getShape()) << " and offset shape "
           << shapeString(offTensor.getShape()) << " differ";
  if (!ptrTensor && offTensor)
    return emitOpError("a scalar pointer needs a scalar offset");
  if (ptrTensor && !offTensor)
    return emitOpError("a tensor of pointers needs a tensor of offsets of the "
                       "same shape");
  return success();
}

//===----------------------------------------------------------------------===//
// TMA descriptors
//===----------------------------------------------------------------------===//

LogicalResult MakeTensorDescOp::verify() {
  auto desc = getType();
  int64_t rank = desc.getBlockType().getRank();
  if (static_cast<int64_t>(getShape().size()) != rank ||
      static_cast<int64_t>(getStrides().size()) != rank)
    return emitOpError("a rank-")
           << rank << " descriptor needs " << rank << " sizes and " << rank
           << " strides, got " << getShape().size() << " and "
           << getStrides().size();
  Type pointee = getBase().getType().getPointeeType();
  if (pointee != desc.getBlockType().getElementType())
    return emitOpError("base pointer to ")
           << pointee << " does not match the block element type "
           << desc.getBlockType().getElementType();
  return success();
}

/// A descriptor access moves exactly the descriptor's block; Triton lets the
/// register tensor drop leading unit dimensions of the block.
static LogicalResult verifyDescriptorAccess(Operation *op,
                                            TensorDescType descType,
                                            RankedTensorType tensor,
                                            size_t numIndices, StringRef what) {
  RankedTensorType block = descType.getBlockType();
  if (static_cast<int64_t>(numIndices) != block.getRank())
    return op->emitOpError("a rank-")
           << block.getRank() << " descriptor needs " << block.getRank()
           << " coordinates, got " << numIndices;
  if (tensor.getElementType() != block.getElementType())
    return op->emitOpError()
           << what << " element type " << tensor.getElementType()
           << " does not match the descriptor's " << block.getElementType();
  ArrayRef<int64_t> blockShape = block.getShape();
  ArrayRef<int64_t> shape = tensor.getShape();
  size_t drop =
      blockShape.size() >= shape.size() ? blockShape.size() - shape.size() : 0;
  bool leadingUnits = llvm::all_of(blockShape.take_front(drop),
                                   [](int64_t d) { return d == 1; });
  if (shape.size() > blockShape.size() || !leadingUnits ||
      blockShape.drop_front(drop) != shape)
    return op->emitOpError() << what << " shape " << shapeString(shape)
                             << " does not match the descriptor block shape "
                             << shapeString(blockShape);
  return success();
}

LogicalResult DescriptorLoadOp::verify() {
  return verifyDescriptorAccess(*this, getDesc().getType(),
                                cast<RankedTensorType>(getType()),
                                getIndices().size(), "result");
}

LogicalResult DescriptorStoreOp::verify() {
  return verifyDescriptorAccess(*this, getDesc().getType(),
                                cast<RankedTensorType>(getSrc().getType()),
                                getIndices().size(), "stored value");
}

#define GET_OP_CLASSES
#include "tawa/Dialect/TT/TTOps.cpp.inc"
