//===- PipelineExpansion.cpp - realize a loop's stage annotations ---------===//
//
// A kernel-only modulo expansion with a drain. Iteration k of the new loop
// runs the stage-0 operations of iteration k and, guarded by k >= s, the
// stage-s operations of iteration k - s. Values of iteration k - s that a late
// stage reads travel in shift registers (extra loop-carried values). After the
// loop, asynchronous products are retired and the late stages of the last
// iterations run, each guarded by the trip count. No prologue is peeled, so
// the loop stays correct for any trip count, zero included.
//
//===----------------------------------------------------------------------===//

#include "tawa/Transforms/Partition.h"
#include "tawa/Transforms/Passes.h"
#include "tawa/Transforms/SourceLocation.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/MapVector.h"

namespace tawa {
#define GEN_PASS_DEF_PIPELINEEXPANSION
#include "tawa/Transforms/Passes.h.inc"
} // namespace tawa

using namespace mlir;
using namespace tawa;

namespace {

int64_t stageOf(Operation *op) {
  auto attr = op->getAttrOfType<IntegerAttr>(kStageAttr);
  return attr ? attr.getInt() : 0;
}

/// A placeholder for a shift register before it holds a real value; it is only
/// read under a guard that excludes those iterations.
FailureOr<Value> placeholder(OpBuilder &b, Location loc, Type type) {
  if (isa<IntegerType, IndexType, FloatType>(type) ||
      (isa<RankedTensorType>(type) &&
       isa<IntegerType, FloatType>(
           cast<RankedTensorType>(type).getElementType())))
    return arith::ConstantOp::create(b, loc, b.getZeroAttr(type)).getResult();
  return failure();
}

class Expander {
public:
  explicit Expander(scf::ForOp forOp) : forOp(forOp) {}
  LogicalResult run();

private:
  LogicalResult analyze();
  /// Clones the late-stage operations of body positions [begin, end) that
  /// belong to stages for which `wanted(stage)` holds, under guards.
  void cloneStageRuns(OpBuilder &b, llvm::function_ref<bool(int64_t)> wanted,
                      llvm::function_ref<Value(OpBuilder &, int64_t)> guard,
                      llvm::function_ref<void(IRMapping &, int64_t)> bind);

  scf::ForOp forOp;
  int64_t numStages = 1;
  /// Stage-0 values (loop-carried or computed) read by later stages, with the
  /// largest lag at which they are read.
  llvm::MapVector<Value, int64_t> lagged;
};

LogicalResult Expander::analyze() {
  Block *body = forOp.getBody();
  for (Operation &op : body->without_terminator()) {
    int64_t s = stageOf(&op);
    if (s < 0)
      return op.emitOpError("has a negative pipeline stage");
    numStages = std::max(numStages, s + 1);
    if (s == 0)
      continue;
    for (Operation *user : op.getUsers()) {
      Operation *inBody = body->findAncestorOpInBlock(*user);
      if (!inBody || stageOf(inBody) != s || isa<scf::YieldOp>(inBody))
        return emitError(getUserLocation(op.getLoc()))
               << "a value computed in pipeline stage " << s
               << " is used outside that stage, which the expander does not "
                  "support yet";
    }
    WalkResult result = op.walk([&](Operation *nested) {
      for (Value v : nested->getOperands()) {
        if (v == forOp.getInductionVar())
          continue;
        if (auto arg = dyn_cast<BlockArgument>(v)) {
          if (arg.getOwner() == body) {
            auto &lag = lagged[v];
            lag = std::max(lag, s);
          }
          continue;
        }
        Operation *def = v.getDefiningOp();
        if (!def || !forOp->isProperAncestor(def) || op.isAncestor(def))
          continue; // loop-invariant, or defined inside this operation
        Operation *defInBody = body->findAncestorOpInBlock(*def);
        int64_t t = stageOf(defInBody);
        if (t == s)
          continue;
        if (t != 0) {
          nested->emitOpError("reads a value of pipeline stage ")
              << t << " from stage " << s
              << "; late stages may read stage-0 values only";
          return WalkResult::interrupt();
        }
        auto &lag = lagged[v];
        lag = std::max(lag, s);
      }
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      return failure();
  }
  if (auto step = getConstantIntValue(forOp.getStep()); step && *step <= 0)
    return forOp.emitOpError("pipelining needs a positive step");
  return success();
}

void Expander::cloneStageRuns(
    OpBuilder &b, llvm::function_ref<bool(int64_t)> wanted,
    llvm::function_ref<Value(OpBuilder &, int64_t)> guard,
    llvm::function_ref<void(IRMapping &, int64_t)> bind) {
  Block *body = forOp.getBody();
  auto ops = body->without_terminator();
  for (auto it = ops.begin(); it != ops.end();) {
    int64_t s = stageOf(&*it);
    if (s == 0 || !wanted(s)) {
      ++it;
      continue;
    }
    // One guarded region per run of consecutive operations of stage s.
    Location loc = it->getLoc();
    Value cond = guard(b, s);
    auto ifOp = scf::IfOp::create(b, loc, TypeRange{}, cond,
                                  /*withElseRegion=*/false);
    OpBuilder inner = OpBuilder::atBlockBegin(ifOp.thenBlock());
    IRMapping map;
    bind(map, s);
    for (; it != ops.end() && stageOf(&*it) == s; ++it) {
      Operation *clone = inner.clone(*it, map);
      clone->removeAttr(kStageAttr);
    }
  }
}

LogicalResult Expander::run() {
  if (failed(analyze()))
    return failure();
  Block *body = forOp.getBody();
  auto yield = cast<scf::YieldOp>(body->getTerminator());
  Location loc = forOp.getLoc();
  OpBuilder b(forOp);
  Value lb = forOp.getLowerBound(), ub = forOp.getUpperBound(),
        step = forOp.getStep();
  Type ivType = forOp.getInductionVar().getType();
  auto cst = [&](OpBuilder &builder, int64_t v) -> Value {
    return arith::ConstantOp::create(builder, loc,
                                     builder.getIntegerAttr(ivType, v));
  };

  // Loop-carried values: the original ones, then the shift registers
  // (register j of value v holds v of iteration k - j).
  SmallVector<Value> inits(forOp.getInitArgs());
  unsigned numOrig = inits.size();
  llvm::MapVector<Value, unsigned> firstRegister;
  for (auto [v, lag] : lagged) {
    firstRegister[v] = inits.size();
    FailureOr<Value> init = placeholder(b, loc, v.getType());
    if (failed(init))
      return emitError(getUserLocation(forOp.getLoc()))
             << "cannot pipeline a value of type " << v.getType()
             << " across stages";
    for (int64_t j = 0; j < lag; ++j)
      inits.push_back(*init);
  }

  auto newFor = scf::ForOp::create(b, loc, lb, ub, step, inits);
  for (NamedAttribute attr : forOp->getDiscardableAttrs())
    if (attr.getName() != kNumStagesAttr)
      newFor->setAttr(attr.getName(), attr.getValue());
  Block *newBody = newFor.getBody();
  if (!newBody->empty())
    newBody->getTerminator()->erase();
  OpBuilder nb = OpBuilder::atBlockEnd(newBody);

  IRMapping map;
  map.map(forOp.getInductionVar(), newFor.getInductionVar());
  for (unsigned i = 0; i < numOrig; ++i)
    map.map(forOp.getRegionIterArgs()[i], newFor.getRegionIterArgs()[i]);
  Value iv = newFor.getInductionVar();

  // The body: stage-0 operations as they are, late stages guarded by
  // iv >= lb + s * step (i.e. iteration k - s exists).
  auto ops = body->without_terminator();
  for (auto it = ops.begin(); it != ops.end();) {
    if (stageOf(&*it) == 0) {
      Operation *clone = nb.clone(*it, map);
      clone->removeAttr(kStageAttr);
      ++it;
      continue;
    }
    int64_t s = stageOf(&*it);
    auto end = it;
    while (end != ops.end() && stageOf(&*end) == s)
      ++end;
    // Clone only this run: restrict `wanted` to this run by position.
    Location runLoc = it->getLoc();
    Value first = arith::AddIOp::create(
        nb, runLoc, lb,
        arith::MulIOp::create(nb, runLoc, step, cst(nb, s)).getResult());
    Value cond =
        arith::CmpIOp::create(nb, runLoc, arith::CmpIPredicate::sge, iv, first);
    auto ifOp = scf::IfOp::create(nb, runLoc, TypeRange{}, cond, false);
    OpBuilder inner = OpBuilder::atBlockBegin(ifOp.thenBlock());
    IRMapping late;
    Value lateIv = arith::SubIOp::create(
        inner, runLoc, iv,
        arith::MulIOp::create(inner, runLoc, step, cst(inner, s)).getResult());
    late.map(forOp.getInductionVar(), lateIv);
    for (auto [v, idx] : firstRegister)
      if (lagged.lookup(v) >= s)
        late.map(v, newFor.getRegionIterArgs()[idx + s - 1]);
    for (; it != end; ++it) {
      Operation *clone = inner.clone(*it, late);
      clone->removeAttr(kStageAttr);
    }
  }

  SmallVector<Value> yields;
  for (Value v : yield.getOperands())
    yields.push_back(map.lookupOrDefault(v));
  for (auto [v, idx] : firstRegister) {
    yields.push_back(map.lookupOrDefault(v));
    for (int64_t j = 1; j < lagged.lookup(v); ++j)
      yields.push_back(newFor.getRegionIterArgs()[idx + j - 1]);
  }
  scf::YieldOp::create(nb, loc, yields);

  // After the loop: retire the products still in flight, then drain.
  b.setInsertionPointAfter(newFor);
  SmallVector<Value> results(newFor.getResults().take_front(numOrig));
  for (unsigned i = 0; i < numOrig; ++i)
    if (yield.getOperand(i).getDefiningOp<tawa::DotWaitOp>()) {
      Value inFlight = results[i];
      auto wait = tawa::DotWaitOp::create(b, loc, TypeRange(inFlight.getType()),
                                          ValueRange(inFlight), 0);
      results[i] = wait.getOutputs()[0];
    }

  if (numStages > 1) {
    // trip = max(0, ceildiv(ub - lb, step))
    Value span = arith::SubIOp::create(b, loc, ub, lb);
    Value trip = arith::CeilDivSIOp::create(b, loc, span, step);
    trip = arith::MaxSIOp::create(b, loc, trip, cst(b, 0));
    for (int64_t e = 1; e < numStages; ++e) {
      cloneStageRuns(
          b, [&](int64_t s) { return s >= e; },
          [&](OpBuilder &gb, int64_t s) -> Value {
            // iteration trip - 1 + e - s must exist.
            return arith::CmpIOp::create(gb, loc, arith::CmpIPredicate::sge,
                                         trip, cst(gb, s - e + 1));
          },
          [&](IRMapping &m, int64_t s) {
            // Iteration i = trip - 1 + e - s.
            OpBuilder &gb = b;
            Value i = arith::AddIOp::create(gb, loc, trip, cst(gb, e - 1 - s));
            Value ivAt = arith::AddIOp::create(
                gb, loc, lb, arith::MulIOp::create(gb, loc, i, step));
            m.map(forOp.getInductionVar(), ivAt);
            for (auto [v, idx] : firstRegister)
              if (lagged.lookup(v) >= s - e + 1)
                m.map(v, newFor.getResult(idx + (s - e)));
          });
    }
  }

  for (unsigned i = 0; i < numOrig; ++i)
    forOp.getResult(i).replaceAllUsesWith(results[i]);
  forOp.erase();
  return success();
}

struct PipelineExpansion
    : public tawa::impl::PipelineExpansionBase<PipelineExpansion> {
  void runOnOperation() override {
    SmallVector<scf::ForOp> loops;
    getOperation().walk([&](scf::ForOp forOp) {
      if (forOp->hasAttr(kNumStagesAttr) ||
          llvm::any_of(forOp.getBody()->without_terminator(),
                       [](Operation &op) { return op.hasAttr(kStageAttr); }))
        loops.push_back(forOp);
    });
    for (scf::ForOp forOp : loops) {
      Expander expander(forOp);
      if (failed(expander.run()))
        return signalPassFailure();
    }
  }
};

} // namespace
