//===- TawaDialect.cpp - arefs and warp-specialized regions ---------------===//

#include "tawa/Dialect/Tawa/TawaDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace tawa;

#include "tawa/Dialect/Tawa/TawaDialect.cpp.inc"

/// `T0, T1, ...` inside the brackets of `!tawa.aref<[...], D>`; the list may
/// be empty here, ArefType::verify rejects that with its own message.
static ParseResult parseArefPayload(AsmParser &parser,
                                    SmallVector<Type> &payload) {
  Type type;
  OptionalParseResult first = parser.parseOptionalType(type);
  if (!first.has_value())
    return success();
  if (failed(*first))
    return failure();
  payload.push_back(type);
  while (succeeded(parser.parseOptionalComma())) {
    if (parser.parseType(type))
      return failure();
    payload.push_back(type);
  }
  return success();
}

static void printArefPayload(AsmPrinter &printer, ArrayRef<Type> payload) {
  llvm::interleaveComma(payload, printer);
}

#define GET_TYPEDEF_CLASSES
#include "tawa/Dialect/Tawa/TawaTypes.cpp.inc"

void TawaDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "tawa/Dialect/Tawa/TawaOps.cpp.inc"
      >();
  registerTypes();
}

void TawaDialect::registerTypes() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "tawa/Dialect/Tawa/TawaTypes.cpp.inc"
      >();
}

LogicalResult ArefType::verify(function_ref<InFlightDiagnostic()> emitError,
                               ArrayRef<Type> payload, int64_t depth) {
  if (depth < 1)
    return emitError() << "aref depth must be at least 1, got " << depth;
  if (payload.empty())
    return emitError() << "aref payload must hold at least one type";
  for (Type t : payload) {
    auto tensor = dyn_cast<RankedTensorType>(t);
    if (!tensor || !tensor.hasStaticShape())
      return emitError() << "aref payload types must be statically shaped "
                            "tensors (tiles), got "
                         << t;
  }
  return success();
}

static LogicalResult verifyPayload(Operation *op, ArefType aref,
                                   TypeRange values, StringRef what) {
  ArrayRef<Type> payload = aref.getPayload();
  if (values.size() != payload.size())
    return op->emitOpError()
           << what << " " << values.size() << " values, but the aref carries "
           << payload.size();
  for (auto [i, pair] : llvm::enumerate(llvm::zip(values, payload)))
    if (std::get<0>(pair) != std::get<1>(pair))
      return op->emitOpError()
             << "value #" << i << " has type " << std::get<0>(pair)
             << ", but slot element #" << i << " is " << std::get<1>(pair);
  return success();
}

LogicalResult ArefPutOp::verify() {
  return verifyPayload(*this, getAref().getType(), getValues().getTypes(),
                       "puts");
}

LogicalResult ArefGetOp::verify() {
  return verifyPayload(*this, getAref().getType(), getValues().getTypes(),
                       "gets");
}

//===----------------------------------------------------------------------===//
// tawa.warp_specialize
//===----------------------------------------------------------------------===//

ParseResult WarpSpecializeOp::parse(OpAsmParser &parser,
                                    OperationState &result) {
  SmallVector<int32_t> warps, regs;
  if (parser.parseOptionalAttrDict(result.attributes))
    return failure();
  while (succeeded(parser.parseOptionalKeyword("partition"))) {
    int32_t w, r;
    if (parser.parseKeyword("warps") || parser.parseLParen() ||
        parser.parseInteger(w) || parser.parseRParen() ||
        parser.parseKeyword("regs") || parser.parseLParen() ||
        parser.parseInteger(r) || parser.parseRParen())
      return failure();
    warps.push_back(w);
    regs.push_back(r);
    Region *region = result.addRegion();
    if (parser.parseRegion(*region, /*arguments=*/{}))
      return failure();
    if (region->empty())
      region->emplaceBlock();
  }
  Builder &b = parser.getBuilder();
  result.addAttribute(getWarpsAttrName(result.name),
                      b.getDenseI32ArrayAttr(warps));
  result.addAttribute(getRegsAttrName(result.name),
                      b.getDenseI32ArrayAttr(regs));
  return success();
}

void WarpSpecializeOp::print(OpAsmPrinter &p) {
  p.printOptionalAttrDict((*this)->getAttrs(),
                          {getWarpsAttrName(), getRegsAttrName()});
  // `} partition ... {` chains the regions the way scf.if prints `} else {`.
  for (auto [i, region] : llvm::enumerate(getPartitions())) {
    p << " partition warps(" << getWarps()[i] << ") regs(" << getRegs()[i]
      << ") ";
    p.printRegion(region, /*printEntryBlockArgs=*/false,
                  /*printBlockTerminators=*/true);
  }
}

LogicalResult WarpSpecializeOp::verify() {
  size_t n = getPartitions().size();
  if (n == 0)
    return emitOpError("needs at least one partition");
  if (getWarps().size() != n || getRegs().size() != n)
    return emitOpError("has ")
           << n << " partitions but " << getWarps().size()
           << " warp counts and " << getRegs().size() << " register budgets";
  int64_t totalRegs = 0;
  for (size_t i = 0; i < n; ++i) {
    int32_t warps = getWarps()[i], regs = getRegs()[i];
    // setmaxnreg acts on whole warp groups of 4 consecutive warps.
    if (warps <= 0 || warps % 4 != 0)
      return emitOpError("partition ")
             << i << " has " << warps
             << " warps; a partition must be a whole number of 4-warp groups";
    // setmaxnreg accepts 24..256 registers per thread in steps of 8.
    if (regs < 24 || regs > 256 || regs % 8 != 0)
      return emitOpError("partition ")
             << i << " asks for " << regs
             << " registers per thread; setmaxnreg takes a multiple of 8 in "
                "[24, 256]";
    totalRegs += int64_t(warps) * 32 * regs;
  }
  // The register file of one Hopper SM holds 64K 32-bit registers.
  if (totalRegs > 65536)
    return emitOpError("partitions need ")
           << totalRegs << " registers, more than the 65536 of one SM";
  return success();
}

LogicalResult PingPongGroupOp::verify() {
  Region *partition = (*this)->getParentRegion();
  while (partition && !isa<WarpSpecializeOp>(partition->getParentOp()))
    partition = partition->getParentOp()->getParentRegion();
  if (!partition || !partition->getParentOp()->hasAttr("tawa.pingpong") ||
      (partition->getRegionNumber() != 1 && partition->getRegionNumber() != 2))
    return emitOpError("must be in a consumer partition (1 or 2) of a "
                       "tawa.warp_specialize with ping-pong consumers");
  return success();
}

//===----------------------------------------------------------------------===//
// Lowered arefs
//===----------------------------------------------------------------------===//

/// Shared memory is address space 3 (NVVM); ring buffers are [slots, tile...].
static LogicalResult verifyRingBuffer(Operation *op, MemRefType type) {
  auto space = dyn_cast_or_null<IntegerAttr>(type.getMemorySpace());
  if (!space || space.getInt() != 3)
    return op->emitOpError("ring buffers live in shared memory (memory space "
                           "3), got ")
           << type;
  if (type.getRank() < 2)
    return op->emitOpError("a ring buffer is [slots, tile dims...], got ")
           << type;
  return success();
}

LogicalResult SmemAllocOp::verify() {
  return verifyRingBuffer(*this, getBuffer().getType());
}

LogicalResult SlotViewOp::verify() {
  auto buffer = getBuffer().getType();
  if (failed(verifyRingBuffer(*this, buffer)))
    return failure();
  auto tile = cast<RankedTensorType>(getTile().getType());
  SmallVector<int64_t> stored(buffer.getShape().drop_front());
  if (getTransposed()) {
    if (stored.size() != 2)
      return emitOpError("a transposed slot holds a 2-D tile, got ") << buffer;
    std::swap(stored[0], stored[1]);
  }
  if (tile.getShape() != ArrayRef<int64_t>(stored) ||
      tile.getElementType() != buffer.getElementType())
    return emitOpError("a slot of ")
           << buffer << " holds a tile of shape "
           << (getTransposed() ? "[slots dropped, transposed]"
                               : "[slots dropped]")
           << " and its element type, not " << tile;
  return success();
}

LogicalResult SmemLoadOp::verify() {
  if (getTile().getType() != getResult().getType())
    return emitOpError("reads a tile into registers unchanged: the result's "
                       "type must be the tile's, ")
           << getTile().getType() << ", not " << getResult().getType();
  return success();
}

LogicalResult SmemReadBoxesOp::verify() {
  auto buffer = getBuffer().getType();
  if (failed(verifyRingBuffer(*this, buffer)))
    return failure();
  auto result = cast<RankedTensorType>(getResult().getType());
  int64_t boxes = getBoxes();
  if (buffer.getRank() != 3 || result.getRank() != 2)
    return emitOpError("reads 2-D tiles from a ring of [slots, R, C], got ")
           << buffer << " and " << result;
  if (boxes < 1 || result.getShape()[0] != buffer.getShape()[1] ||
      result.getShape()[1] != buffer.getShape()[2] * boxes ||
      result.getElementType() != buffer.getElementType())
    return emitOpError("a tile of ")
           << boxes << " boxes of " << buffer
           << "'s slots is [R, C * boxes] of its element type, not " << result;
  if (getFull().getType().getCount() != buffer.getShape()[0])
    return emitOpError("needs one barrier per slot: ")
           << buffer.getShape()[0] << " slots, "
           << getFull().getType().getCount() << " barriers";
  return success();
}

LogicalResult SmemTransposeOp::verify() {
  auto src = getSrc().getType(), dst = getDst().getType();
  if (failed(verifyRingBuffer(*this, src)) ||
      failed(verifyRingBuffer(*this, dst)))
    return failure();
  if (src.getRank() != 3 || dst.getRank() != 3 ||
      src.getShape()[0] != dst.getShape()[0] ||
      src.getShape()[1] != dst.getShape()[2] ||
      src.getShape()[2] != dst.getShape()[1])
    return emitOpError("transposes [slots, R, C] into [slots, C, R], got ")
           << src << " and " << dst;
  if (src.getElementType() != dst.getElementType() ||
      src.getElementTypeBitWidth() != 8)
    return emitOpError("transposes tiles of one 8-bit element type, got ")
           << src.getElementType() << " and " << dst.getElementType();
  return success();
}

#define GET_OP_CLASSES
#include "tawa/Dialect/Tawa/TawaOps.cpp.inc"
