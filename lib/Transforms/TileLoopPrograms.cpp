//===- TileLoopPrograms.cpp - a kernel's own tile loop as programs -------===//
//
// Before (the user's persistent walk):   After (one program per tile):
//   p = program_id(0)                       q = program_id(0)
//   for t = p to T step S:                  g = max(min(#programs, S), 1)
//     body(t)                               t = q / g * S + q % g
//                                           body(t)
//                                           count = T / S * g + min(T % S, g)
//
// Programs p < #programs walk t = p, p + S, ...: the tiles t < T with
// t % S < min(#programs, S) (each once where #programs <= S; where more
// programs are launched, some tiles twice, with the same result). Program q
// of the rewritten kernel is the q-th of those tiles, so the kernel computes
// the same tiles, once each, over `count` programs: an op marked
// tawa.program_count that -tawa-persistent-programs walks. -tawa-program-
// pairing runs this on its copy of a kernel that walks its tiles itself, so
// that the tiles pair like programs (docs/CODEGEN.md).
//
//===----------------------------------------------------------------------===//

#include "tawa/Transforms/TileLoopPrograms.h"
#include "tawa/Transforms/Partition.h"
#include "tawa/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace tawa {
#define GEN_PASS_DEF_TILELOOPPROGRAMS
#include "tawa/Transforms/Passes.h.inc"
} // namespace tawa

using namespace mlir;
using namespace tawa;

LogicalResult tawa::tileLoopToPrograms(tt::FuncOp func, std::string *why) {
  auto fail = [&](const char *reason) {
    if (why)
      *why = reason;
    return failure();
  };
  if (!func.getBody().hasOneBlock())
    return fail("the kernel body has more than one block");
  Block &body = func.getBody().front();
  SmallVector<tt::GetProgramIdOp> pids;
  func.walk([&](tt::GetProgramIdOp pid) { pids.push_back(pid); });
  if (pids.size() != 1 || pids[0].getAxis() != tt::ProgramIDDim::X ||
      pids[0]->getBlock() != &body)
    return fail("the kernel reads program ids other than one program_id(0)");
  tt::GetProgramIdOp pid = pids[0];
  if (!pid->hasOneUse())
    return fail("program_id(0) is read other than as the tile loop's start");
  auto loop = dyn_cast<scf::ForOp>(*pid->getUsers().begin());
  if (!loop || loop->getBlock() != &body ||
      loop.getLowerBound() != pid.getResult())
    return fail("program_id(0) is not the start of a top-level loop");
  if (loop.getNumRegionIterArgs() != 0)
    return fail("the tile loop carries values from one tile to the next");
  if (loop->getNextNode() != body.getTerminator())
    return fail("operations follow the tile loop");
  for (Value bound : {loop.getUpperBound(), loop.getStep()}) {
    if (derivesFromProgramId(bound))
      return fail("the tile loop's bound or step depends on the program id");
  }
  for (Operation *op = &body.front(); op != loop; op = op->getNextNode())
    if (!isMemoryEffectFree(op) || op->getNumRegions())
      return fail("an operation before the tile loop has effects");
  if (loop.getInductionVar().getType() != pid.getType())
    return fail("the tile index is not an i32");

  OpBuilder b(loop);
  Location loc = loop.getLoc();
  auto axis = tt::ProgramIDDimAttr::get(func.getContext(), tt::ProgramIDDim::X);
  Type i32 = b.getI32Type();
  Value q = tt::GetProgramIdOp::create(b, loc, i32, axis);
  Value n = tt::GetNumProgramsOp::create(b, loc, i32, axis);
  Value step = loop.getStep(), tiles = loop.getUpperBound();
  Value one = arith::ConstantIntOp::create(b, loc, 1, 32);
  Value zero = arith::ConstantIntOp::create(b, loc, 0, 32);
  // The walkers: programs with distinct residues mod S.
  Value walkers = arith::MaxSIOp::create(
      b, loc, arith::MinSIOp::create(b, loc, n, step), one);
  Value stepOrOne = arith::MaxSIOp::create(b, loc, step, one);
  Value tilesOrZero = arith::MaxSIOp::create(b, loc, tiles, zero);
  Value t = arith::AddIOp::create(
      b, loc,
      arith::MulIOp::create(b, loc, arith::DivSIOp::create(b, loc, q, walkers),
                            step),
      arith::RemSIOp::create(b, loc, q, walkers));
  t.getDefiningOp()->setAttr(kTileIndexAttr, b.getUnitAttr());
  Value count = arith::AddIOp::create(
      b, loc,
      arith::MulIOp::create(
          b, loc, arith::DivSIOp::create(b, loc, tilesOrZero, stepOrOne),
          walkers),
      arith::MinSIOp::create(
          b, loc, arith::RemSIOp::create(b, loc, tilesOrZero, stepOrOne),
          walkers));
  count.getDefiningOp()->setAttr(kProgramCountAttr, b.getUnitAttr());

  // The body, once, for tile t.
  Block *loopBody = loop.getBody();
  loop.getInductionVar().replaceAllUsesWith(t);
  loopBody->getTerminator()->erase();
  body.getOperations().splice(Block::iterator(loop), loopBody->getOperations());
  loop.erase();
  pid.erase();
  return success();
}

namespace {

struct TileLoopPrograms
    : public tawa::impl::TileLoopProgramsBase<TileLoopPrograms> {
  void runOnOperation() override {
    tt::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    std::string why;
    if (failed(tileLoopToPrograms(func, &why))) {
      func.emitError("tawa-tile-loop-programs: ") << why;
      signalPassFailure();
    }
  }
};

} // namespace
