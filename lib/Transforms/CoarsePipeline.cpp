//===- CoarsePipeline.cpp - Tawa Algorithm 1 as stage/order annotations ---===//
//
// Tawa paper §III-D2, Algorithm 1. A consumer loop whose iteration j runs a
// tensor-core stage T_j (a product restarted every iteration, S = Q K^T),
// a CUDA-core stage C_j reading it (softmax) and a second tensor-core stage
// U_j that accumulates into a loop-carried value from C_j's result
// (O += P V):
//
//   steady state, iteration j:  issue T_{j+1}; rescale, issue U_j;
//                               wait T_{j+1}; C_{j+1}; wait U_j
//
// so the softmax of one key block runs while the tensor cores compute the
// next block's scores and this block's update (FlashAttention-3's intra
// warp-group overlap). Written as attributes that PipelineExpansion
// realizes (it peels T_0 C_0 before the loop and U_{N-1} after it):
//   tawa.stage  0: T, C and everything else; 1: U, the ring get of U's B
//               operand and every operation that depends on U's loop-carried
//               accumulator or on that ring's counter;
//   tawa.order  0: stage 0 up to T's issue, 1: stage 1 up to U's issue,
//               2: T's wait and the rest of stage 0, 3: U's wait and the
//               rest of stage 1, 4: the conversion of C's result to U's
//               register operand (after U_j has read the registers);
// and the two products become dot_async + dot_wait: T's wait leaves U's
// group in flight (pendings 1), U's retires everything (0).
//
// Loops of another shape are left alone, without a message.
//
//===----------------------------------------------------------------------===//

#include "tawa/Transforms/ArefTiles.h"
#include "tawa/Transforms/Partition.h"
#include "tawa/Transforms/Passes.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/SetVector.h"

namespace tawa {
#define GEN_PASS_DEF_COARSEPIPELINE
#include "tawa/Transforms/Passes.h.inc"
} // namespace tawa

using namespace mlir;
using namespace tawa;

namespace {

/// Operations of `body` (its own, not nested) that depend on `seeds`,
/// the terminator excluded.
llvm::SetVector<Operation *> forwardSlice(Block *body, ArrayRef<Value> seeds) {
  llvm::SetVector<Operation *> slice;
  SmallVector<Value> work(seeds.begin(), seeds.end());
  while (!work.empty()) {
    Value v = work.pop_back_val();
    for (Operation *user : v.getUsers()) {
      Operation *op = body->findAncestorOpInBlock(*user);
      if (!op || op == body->getTerminator() || !slice.insert(op))
        continue;
      for (Value r : op->getResults())
        work.push_back(r);
    }
  }
  return slice;
}

bool dependsOn(Operation *op, Value v, Block *body) {
  return forwardSlice(body, {v}).contains(op);
}

/// Warp groups of the (cooperative) consumer partition around `op`; 0 where
/// it is not in one.
int64_t cooperativeGroups(Operation *op) {
  for (Region *region = op->getParentRegion(); region;
       region = region->getParentRegion()) {
    auto ws = dyn_cast<tawa::WarpSpecializeOp>(region->getParentOp());
    if (!ws)
      continue;
    unsigned index = region->getRegionNumber();
    if (index == 0 || ws->hasAttr(kPingPongAttr))
      return 0;
    return ws.getWarps()[index] / 4;
  }
  return 0;
}

/// Annotates `forOp` if it has Algorithm 1's shape; returns whether it did.
bool annotate(scf::ForOp forOp, bool issueTurns) {
  Block *body = forOp.getBody();
  SmallVector<tt::DotOp> dots(body->getOps<tt::DotOp>());
  if (dots.size() != 2)
    return false;
  tt::DotOp t = dots[0], u = dots[1];
  // T restarts every iteration; U's A operand is computed from T's result;
  // U's accumulator comes from a loop-carried value.
  auto isArg = [&](Value v) {
    auto arg = dyn_cast<BlockArgument>(v);
    return arg && arg.getOwner() == body && arg.getArgNumber() > 0;
  };
  if (isa<BlockArgument>(t.getC()) || !t.getC().getDefiningOp() ||
      !t.getC().getDefiningOp()->hasTrait<OpTrait::ConstantLike>())
    return false;
  if (!u.getA().getDefiningOp() ||
      !dependsOn(u.getA().getDefiningOp(), t.getD(), body))
    return false;
  Value accArg;
  for (BlockArgument arg : forOp.getRegionIterArgs())
    if (forwardSlice(body, {arg}).contains(u) &&
        isa<RankedTensorType>(arg.getType()) &&
        arg.getType() == u.getType())
      accArg = arg;
  auto uGet = arefGetOfTile(u.getB()), tGet = arefGetOfTile(t.getB());
  if (!accArg || !uGet || !tGet || !isArg(uGet.getK()))
    return false;
  // The yield must carry U's result back into the accumulator.
  auto yield = cast<scf::YieldOp>(body->getTerminator());
  unsigned accIdx = cast<BlockArgument>(accArg).getArgNumber() - 1;
  Value yieldedAcc = yield.getOperand(accIdx);
  if (yieldedAcc != u.getD())
    return false;

  llvm::SetVector<Operation *> late =
      forwardSlice(body, {accArg, Value(uGet.getK())});
  if (!late.contains(u) || late.contains(t) || late.contains(tGet))
    return false;
  // Shape views read only by stage 1 (a row vector broadcast to the
  // accumulator's shape) move there too: a row vector then travels to the
  // next iteration instead of a whole tile.
  for (bool changed = true; changed;) {
    changed = false;
    for (Operation &op : llvm::reverse(body->without_terminator())) {
      if (late.contains(&op) ||
          !isa<tt::ExpandDimsOp, tt::BroadcastOp, tt::ReshapeOp, tt::SplatOp>(
              op) ||
          op.use_empty() || !llvm::all_of(op.getUsers(), [&](Operation *user) {
            Operation *inBody = body->findAncestorOpInBlock(*user);
            return inBody && late.contains(inBody);
          }))
        continue;
      late.insert(&op);
      changed = true;
    }
  }
  for (Operation &op : body->without_terminator()) {
    if (late.contains(&op))
      continue;
    for (Value operand : op.getOperands())
      if (Operation *def = operand.getDefiningOp())
        if (late.contains(body->findAncestorOpInBlock(*def)))
          return false; // stage 0 would read a stage-1 value
  }

  // The products become asynchronous.
  OpBuilder b(t);
  auto makeAsync = [&](tt::DotOp dot, int32_t pendings) {
    b.setInsertionPoint(dot);
    auto issue = tawa::DotAsyncOp::create(b, dot.getLoc(), dot.getType(),
                                          dot.getA(), dot.getB(), dot.getC());
    auto wait = tawa::DotWaitOp::create(
        b, dot.getLoc(), TypeRange(issue.getType()),
        ValueRange(issue.getResult()), pendings);
    dot.getD().replaceAllUsesWith(wait.getOutputs()[0]);
    dot.erase();
    return std::make_pair(issue, wait);
  };
  // U's register A operand (P converted from C's result) is written after
  // U's wait: the registers U_j reads stay untouched until it completes,
  // and P_{j+1} can then take the same registers (else ptxas copies them
  // and serializes the products, C7513).
  Operation *aDef = u.getA().getDefiningOp();
  auto [tIssue, tWait] = makeAsync(t, 1);
  late.remove(u.getOperation());
  auto [uIssue, uWait] = makeAsync(u, 0);
  late.insert(uIssue);
  late.insert(uWait);

  MLIRContext *ctx = forOp.getContext();
  // Two cooperative consumer groups take turns issuing their products
  // (FlashAttention-3's ping-pong: one group's softmax runs under the other
  // group's products); the emitter brackets each run of marked products
  // with the groups' named barriers.
  if (issueTurns && cooperativeGroups(forOp) >= 2) {
    tIssue->setAttr(kIssueTurnAttr, UnitAttr::get(ctx));
    uIssue->setAttr(kIssueTurnAttr, UnitAttr::get(ctx));
  }
  auto i32 = [&](int64_t v) {
    return IntegerAttr::get(IntegerType::get(ctx, 32), v);
  };
  bool pastT = false, pastU = false;
  for (Operation &op : body->without_terminator()) {
    bool stage1 = late.contains(&op);
    if (&op == tWait.getOperation())
      pastT = true;
    if (&op == uWait.getOperation())
      pastU = true;
    int64_t order = stage1 ? (pastU ? 3 : 1) : (pastT ? 2 : 0);
    if (&op == aDef)
      order = 4;
    op.setAttr(kStageAttr, i32(stage1 ? 1 : 0));
    op.setAttr(kOrderAttr, i32(order));
  }
  forOp->setAttr(kNumStagesAttr, i32(2));
  forOp->setAttr(kPeelAttr, UnitAttr::get(ctx));
  return true;
}

struct CoarsePipeline : public tawa::impl::CoarsePipelineBase<CoarsePipeline> {
  using CoarsePipelineBase::CoarsePipelineBase;
  void runOnOperation() override {
    SmallVector<scf::ForOp> loops;
    getOperation().walk([&](tawa::WarpSpecializeOp ws) {
      for (Region &partition : ws.getPartitions().drop_front())
        partition.walk([&](scf::ForOp forOp) { loops.push_back(forOp); });
    });
    for (scf::ForOp forOp : loops)
      annotate(forOp, issueTurns);
  }
};

} // namespace
