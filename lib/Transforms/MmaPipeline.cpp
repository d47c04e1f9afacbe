//===- MmaPipeline.cpp - schedule of the fine-grained MMA pipeline --------===//
//
// Tawa paper §III-D1. In iteration k the consumer issues the product of k
// asynchronously, waits until at most P products are in flight, and releases
// the slots read by the product of k - P, which that wait has retired:
//
//   %d = tawa.dot_async %a, %b, %acc          stage 0
//   %r = tawa.dot_wait %d {pendings = P}      stage 0
//   tawa.aref.consumed %ring[%k]              stage P (runs for iteration k-P)
//
// This pass writes that schedule as attributes; PipelineExpansion realizes it.
//
// Where P is the pass's own choice and two products in flight pay off only
// in long loops, the loop is versioned on its trip count: a loop of at most
// kShortLoopTrips iterations runs a copy pipelined with P = 1 (see
// chooseDepth), decided at run time, per tile.
//
//===----------------------------------------------------------------------===//

#include "tawa/Transforms/ArefTiles.h"
#include "tawa/Transforms/Partition.h"
#include "tawa/Transforms/Passes.h"
#include "tawa/Transforms/SourceLocation.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SetVector.h"

#include <algorithm>
#include <limits>

namespace tawa {
#define GEN_PASS_DEF_MMAPIPELINE
#include "tawa/Transforms/Passes.h.inc"
} // namespace tawa

using namespace mlir;
using namespace tawa;

namespace {

/// Loops of at most this many iterations keep one product in flight where
/// long ones keep two. On the H100 (128 x 256 tiles, two cooperative groups,
/// 4 slots, M = N = 8192, 5 interleaved rounds) P = 1 was 3.9 % faster at
/// 4 iterations, 2.8-3.6 % at 8 (fp16, bf16; fp8 at K = 512 and 1024), and
/// no faster at 16 or more, where P = 2 was up to 3 % ahead: at the end of
/// each tile the products in flight hold their slots, so the producer can
/// prefetch P fewer slots of the next tile, which weighs on short loops.
constexpr int64_t kShortLoopTrips = 8;

/// The accumulating products of `forOp` that read a ring: the accumulator is
/// loop-carried and the result is yielded back into it, so successive
/// products chain in registers.
SmallVector<tt::DotOp> accumulatingDots(scf::ForOp forOp) {
  Block *body = forOp.getBody();
  auto yield = cast<scf::YieldOp>(body->getTerminator());
  SmallVector<tt::DotOp> dots;
  for (auto dot : body->getOps<tt::DotOp>()) {
    auto acc = dyn_cast<BlockArgument>(dot.getC());
    if (!acc || acc.getOwner() != body || acc.getArgNumber() == 0)
      continue;
    unsigned i = acc.getArgNumber() - 1;
    if (yield.getOperand(i) != dot.getD() || !dot.getD().hasOneUse())
      continue;
    if (!arefGetOfTile(dot.getA()) && !arefGetOfTile(dot.getB()))
      continue;
    dots.push_back(dot);
  }
  return dots;
}

/// Versions `forOp` on its trip count: the loop and everything after it in
/// its block (the epilogue that reads its results) move into
/// `scf.if (trips <= kShortLoopTrips)`, the original in the else branch and
/// a copy in the then branch. Values the block's terminator reads become
/// results of the if; returns the copy, or null where one of them is a
/// tensor (scf.if yields only scalars through code generation), or where a
/// product follows the loop in its block: a later loop would be copied into
/// the then branch after this pass has collected its loops, and its copy
/// would stay unpipelined (and versioning every later loop again would double
/// the code per loop).
scf::ForOp versionOnTripCount(scf::ForOp forOp) {
  Block *block = forOp->getBlock();
  Operation *terminator = block->getTerminator();
  SmallVector<Operation *> moved;
  for (Operation *op = forOp; op != terminator; op = op->getNextNode())
    moved.push_back(op);
  for (Operation *op : llvm::drop_begin(moved))
    if (op->walk([](Operation *inner) {
            return isa<tt::DotOp, tawa::DotAsyncOp>(inner)
                       ? WalkResult::interrupt()
                       : WalkResult::advance();
          }).wasInterrupted())
      return nullptr;
  llvm::SetVector<Value> escaping;
  for (OpOperand &operand : terminator->getOpOperands())
    if (Operation *def = operand.get().getDefiningOp();
        def && def->getBlock() == block && !def->isBeforeInBlock(forOp))
      escaping.insert(operand.get());
  SmallVector<Type> types;
  for (Value v : escaping) {
    if (isa<RankedTensorType>(v.getType()))
      return nullptr;
    types.push_back(v.getType());
  }

  Location loc = forOp.getLoc();
  OpBuilder b(forOp);
  Value span = arith::SubIOp::create(b, loc, forOp.getUpperBound(),
                                     forOp.getLowerBound());
  Value trips = arith::ConstantOp::create(
      b, loc, b.getIntegerAttr(forOp.getStep().getType(), kShortLoopTrips));
  Value limit = arith::MulIOp::create(b, loc, forOp.getStep(), trips);
  // A performance choice only: both versions are correct for any trip count.
  Value isShort =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, span, limit);
  auto ifOp = scf::IfOp::create(b, loc, types, isShort, /*withElse=*/true);
  // Empty branches (scf.if adds a terminator only when it has no results).
  for (Block *branch : {ifOp.thenBlock(), ifOp.elseBlock()})
    if (!branch->empty())
      branch->back().erase();

  IRMapping copy;
  OpBuilder thenB = OpBuilder::atBlockEnd(ifOp.thenBlock());
  for (Operation *op : moved)
    thenB.clone(*op, copy);
  auto shortLoop = cast<scf::ForOp>(ifOp.thenBlock()->front());
  for (Operation *op : moved)
    op->moveBefore(ifOp.elseBlock(), ifOp.elseBlock()->end());
  SmallVector<Value> thenValues;
  for (Value v : escaping)
    thenValues.push_back(copy.lookup(v));
  scf::YieldOp::create(thenB, loc, thenValues);
  OpBuilder elseB = OpBuilder::atBlockEnd(ifOp.elseBlock());
  scf::YieldOp::create(elseB, loc, escaping.getArrayRef());
  for (auto [v, result] : llvm::zip(escaping, ifOp.getResults()))
    Value(v).replaceUsesWithIf(result, [&](OpOperand &use) {
      return !ifOp->isAncestor(use.getOwner());
    });
  return shortLoop;
}

struct MmaPipeline : public tawa::impl::MmaPipelineBase<MmaPipeline> {
  using MmaPipelineBase::MmaPipelineBase;

  void runOnOperation() override {
    if (mmaDepth < -1) {
      getOperation().emitError("mma-depth must be at least 0 (or -1: auto)");
      return signalPassFailure();
    }
    SmallVector<scf::ForOp> loops;
    getOperation().walk([&](scf::ForOp forOp) {
      if (forOp->getParentOfType<tawa::WarpSpecializeOp>())
        loops.push_back(forOp);
    });
    for (scf::ForOp forOp : loops)
      if (failed(pipeline(forOp)))
        return signalPassFailure();
  }

  LogicalResult pipeline(scf::ForOp forOp) {
    SmallVector<tt::DotOp> dots = accumulatingDots(forOp);
    if (dots.empty())
      return success();
    int64_t minDepth = std::numeric_limits<int64_t>::max();
    for (tt::DotOp dot : dots)
      for (Value operand : {dot.getA(), dot.getB()})
        if (tawa::ArefGetOp get = arefGetOfTile(operand))
          minDepth = std::min<int64_t>(
              minDepth,
              cast<tawa::ArefType>(get.getAref().getType()).getDepth());
    // Every dot here reads a ring, so minDepth is finite.

    if (mmaDepth >= 0)
      return annotate(forOp, dots, mmaDepth);
    // A schedule solved by -tawa-optimal-schedule sets the fewest products
    // in flight that realize it (tawa.schedule_lag: each product completes
    // that many iterations after its issue). More realize the same steady
    // state as long as the ring holds them (P < D); how many more pays off is
    // outside the solver's model (a steady-state modulo schedule: the tile
    // boundaries' transients and the energy per flop under the power cap are
    // not in it), so the rule below, measured, decides above that bound.
    int64_t solvedLag = 0;
    if (auto solved = forOp->getAttrOfType<IntegerAttr>("tawa.schedule_lag"))
      solvedLag = solved.getInt();

    // Auto: two products in flight for two cooperative consumer groups that
    // each hold 128 accumulator registers (128 x 256 tiles) on rings of 4 or
    // more slots (measured about 2% faster than one at K >= 4096 on the
    // H100; for 128 x 128 tiles it was 15% slower) in loops of more than
    // kShortLoopTrips iterations, else one, and always fewer than the slots
    // (P < D).
    auto ws = forOp->getParentOfType<tawa::WarpSpecializeOp>();
    int32_t warps = 0;
    if (ws)
      for (auto [i, region] : llvm::enumerate(ws.getPartitions()))
        if (region.isAncestor(forOp->getParentRegion()))
          warps = ws.getWarps()[i];
    bool cooperative = warps == 8 && !ws->hasAttr(kPingPongAttr);
    // The accumulators the loop chains, together (two for paired programs).
    int64_t elements = 0;
    for (tt::DotOp dot : dots)
      elements += cast<RankedTensorType>(dot.getType()).getNumElements();
    bool wide = cooperative && elements / (32 * warps) >= 128;
    int64_t lag = std::min<int64_t>(
        std::max<int64_t>(minDepth >= 4 && wide ? 2 : 1, solvedLag),
        minDepth - 1);
    if (lag < 2 || solvedLag >= 2)
      return annotate(forOp, dots, lag);
    if (scf::ForOp shortLoop = versionOnTripCount(forOp))
      if (failed(annotate(shortLoop, accumulatingDots(shortLoop), 1)))
        return failure();
    return annotate(forOp, dots, lag);
  }

  /// Rewrites the products of `forOp` for `lag` products in flight and
  /// writes the stage annotations.
  LogicalResult annotate(scf::ForOp forOp, ArrayRef<tt::DotOp> dots,
                         int64_t lag) {
    Block *body = forOp.getBody();
    OpBuilder b(forOp.getContext());
    llvm::DenseSet<Value> lateRings;
    for (tt::DotOp dot : dots) {
      for (Value operand : {dot.getA(), dot.getB()})
        if (tawa::ArefGetOp get = arefGetOfTile(operand)) {
          auto ring = cast<tawa::ArefType>(get.getAref().getType());
          int64_t depth = lag;
          if (ring.getDepth() <= depth)
            return emitError(getUserLocation(dot.getLoc()))
                   << "mma-depth " << depth << " needs arefs of more than "
                   << depth << " slots, but this product reads a ring of "
                   << ring.getDepth()
                   << ": the producer would wait for a slot released only "
                      "after more products than the ring holds (deadlock)";
          lateRings.insert(get.getAref());
        }
      b.setInsertionPoint(dot);
      auto issue = tawa::DotAsyncOp::create(b, dot.getLoc(), dot.getType(),
                                            dot.getA(), dot.getB(), dot.getC());
      Value issued = issue.getResult();
      auto wait = tawa::DotWaitOp::create(
          b, dot.getLoc(), TypeRange(issued.getType()), ValueRange(issued),
          static_cast<int32_t>(lag));
      dot.getD().replaceAllUsesWith(wait.getOutputs()[0]);
      dot.erase();
    }

    int64_t stages = 1;
    for (Operation &op : body->without_terminator()) {
      int64_t stage = 0;
      if (auto consumed = dyn_cast<tawa::ArefConsumedOp>(op))
        if (lateRings.contains(consumed.getAref()))
          stage = lag;
      op.setAttr(kStageAttr, b.getI32IntegerAttr(stage));
      stages = std::max(stages, stage + 1);
    }
    forOp->setAttr(kNumStagesAttr, b.getI32IntegerAttr(stages));
    return success();
  }
};

} // namespace
