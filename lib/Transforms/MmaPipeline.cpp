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
//===----------------------------------------------------------------------===//

#include "tawa/Transforms/Partition.h"
#include "tawa/Transforms/Passes.h"
#include "tawa/Transforms/SourceLocation.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"

#include <algorithm>
#include <limits>

namespace tawa {
#define GEN_PASS_DEF_MMAPIPELINE
#include "tawa/Transforms/Passes.h.inc"
} // namespace tawa

using namespace mlir;
using namespace tawa;

namespace {

/// The aref.get whose slot `v` is (possibly through a tt.trans view), if any.
tawa::ArefGetOp slotSource(Value v) {
  while (auto trans = v.getDefiningOp<tt::TransOp>())
    v = trans.getSrc();
  return v.getDefiningOp<tawa::ArefGetOp>();
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
    Block *body = forOp.getBody();
    auto yield = cast<scf::YieldOp>(body->getTerminator());
    // Accumulating products: the accumulator is loop-carried and the result
    // is yielded back into it, so successive products chain in registers.
    SmallVector<tt::DotOp> dots;
    for (auto dot : body->getOps<tt::DotOp>()) {
      auto acc = dyn_cast<BlockArgument>(dot.getC());
      if (!acc || acc.getOwner() != body || acc.getArgNumber() == 0)
        continue;
      unsigned i = acc.getArgNumber() - 1;
      if (yield.getOperand(i) != dot.getD() || !dot.getD().hasOneUse())
        continue;
      if (!slotSource(dot.getA()) && !slotSource(dot.getB()))
        continue;
      dots.push_back(dot);
    }
    if (dots.empty())
      return success();

    // Auto: two products in flight for two cooperative consumer groups that
    // each hold 128 accumulator registers (128 x 256 tiles) on rings of 4 or
    // more slots (measured about 2% faster than one at K >= 4096 on the
    // H100; for 128 x 128 tiles it was 15% slower), else one, and always
    // fewer than the slots (P < D).
    int64_t lag = mmaDepth;
    if (lag < 0) {
      auto ws = forOp->getParentOfType<tawa::WarpSpecializeOp>();
      int32_t warps = 0;
      if (ws)
        for (auto [i, region] : llvm::enumerate(ws.getPartitions()))
          if (region.isAncestor(forOp->getParentRegion()))
            warps = ws.getWarps()[i];
      bool cooperative = warps == 8 && !ws->hasAttr(kPingPongAttr);
      bool wide =
          cooperative && llvm::all_of(dots, [&](tt::DotOp dot) {
            return cast<RankedTensorType>(dot.getType()).getNumElements() /
                       (32 * warps) >=
                   128;
          });
      int64_t minDepth = std::numeric_limits<int64_t>::max();
      for (tt::DotOp dot : dots)
        for (Value operand : {dot.getA(), dot.getB()})
          if (tawa::ArefGetOp get = slotSource(operand))
            minDepth = std::min<int64_t>(
                minDepth,
                cast<tawa::ArefType>(get.getAref().getType()).getDepth());
      lag = minDepth >= 4 && wide ? 2 : 1;
      // A schedule chosen by -tawa-optimal-schedule takes precedence.
      if (auto chosen = forOp->getAttrOfType<IntegerAttr>("tawa.mma_depth"))
        lag = chosen.getInt();
      // Every dot here reads a ring, so minDepth is finite; P < D.
      lag = std::min(lag, minDepth - 1);
    }

    OpBuilder b(forOp.getContext());
    llvm::DenseSet<Value> lateRings;
    for (tt::DotOp dot : dots) {
      for (Value operand : {dot.getA(), dot.getB()})
        if (tawa::ArefGetOp get = slotSource(operand)) {
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
