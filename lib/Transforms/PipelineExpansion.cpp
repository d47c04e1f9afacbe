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
  explicit Expander(scf::ForOp forOp)
      : forOp(forOp), peel(forOp->hasAttr(kPeelAttr)) {}
  LogicalResult run();

private:
  LogicalResult analyze();
  /// The peeled form (kPeelAttr): two stages, ordered by kOrderAttr.
  LogicalResult runPeeled();
  /// A constant of the induction variable's type.
  Value constant(OpBuilder &b, int64_t v) {
    return arith::ConstantOp::create(
        b, forOp.getLoc(),
        b.getIntegerAttr(forOp.getInductionVar().getType(), v));
  }
  /// The loop's trip count, max(0, ceildiv(ub - lb, step)).
  Value tripCount(OpBuilder &b) {
    Location loc = forOp.getLoc();
    Value span = arith::SubIOp::create(b, loc, forOp.getUpperBound(),
                                       forOp.getLowerBound());
    Value trip = arith::CeilDivSIOp::create(b, loc, span, forOp.getStep());
    return arith::MaxSIOp::create(b, loc, trip, constant(b, 0));
  }
  /// Clones the late-stage operations of body positions [begin, end) that
  /// belong to stages for which `wanted(stage)` holds, under guards.
  void cloneStageRuns(OpBuilder &b, llvm::function_ref<bool(int64_t)> wanted,
                      llvm::function_ref<Value(OpBuilder &, int64_t)> guard,
                      llvm::function_ref<void(IRMapping &, int64_t)> bind);

  scf::ForOp forOp;
  bool peel;
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
      // Peeled, a late stage's results may also be loop-carried.
      if (!inBody ||
          (isa<scf::YieldOp>(inBody) ? !peel : stageOf(inBody) != s))
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
  if (peel)
    return runPeeled();
  Block *body = forOp.getBody();
  auto yield = cast<scf::YieldOp>(body->getTerminator());
  Location loc = forOp.getLoc();
  OpBuilder b(forOp);
  Value lb = forOp.getLowerBound(), ub = forOp.getUpperBound(),
        step = forOp.getStep();
  auto cst = [&](OpBuilder &builder, int64_t v) { return constant(builder, v); };

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
    Value trip = tripCount(b);
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

/// The operation's place in the expanded body (kOrderAttr), else its stage.
int64_t orderOf(Operation *op) {
  auto attr = op->getAttrOfType<IntegerAttr>(kOrderAttr);
  return attr ? attr.getInt() : stageOf(op);
}

/// Peeled expansion of a two-stage loop of N iterations:
///
///   if (N > 0) {
///     stage 0 of iteration 0
///     for k = 1 .. N-1: the body's operations by (order, position), stage 0
///                       for iteration k, stage 1 for iteration k - 1
///     stage 1 of iteration N - 1
///   }
///
/// Loop-carried values yielded by stage 0 hold iteration k - 1's result at
/// the top of iteration k, those yielded by stage 1 iteration k - 2's; the
/// stage-0 values stage 1 reads (and loop-carried values yielded by stage
/// 0 that stage 1 reads) travel one iteration in shift registers. Waits for
/// products in the peeled parts retire every product in flight.
LogicalResult Expander::runPeeled() {
  if (numStages != 2)
    return emitError(getUserLocation(forOp.getLoc()))
           << "a peeled pipeline needs exactly two stages, not " << numStages;
  Block *body = forOp.getBody();
  auto yield = cast<scf::YieldOp>(body->getTerminator());
  Location loc = forOp.getLoc();
  OpBuilder b(forOp);
  Value lb = forOp.getLowerBound(), ub = forOp.getUpperBound(),
        step = forOp.getStep();
  auto cst = [&](OpBuilder &builder, int64_t v) { return constant(builder, v); };
  unsigned numOrig = forOp.getNumRegionIterArgs();
  auto lateYield = [&](unsigned i) {
    Operation *def = yield.getOperand(i).getDefiningOp();
    return def && def->getBlock() == body && stageOf(def) == 1;
  };
  // Loop-carried values stage 1 keeps up to date are current for it: no
  // shift register.
  SmallVector<Value> shifted;
  for (auto [v, lag] : lagged) {
    auto arg = dyn_cast<BlockArgument>(v);
    if (arg && arg.getOwner() == body && lateYield(arg.getArgNumber() - 1))
      continue;
    shifted.push_back(v);
  }
  for (Operation &op : body->without_terminator())
    if (stageOf(&op) == 0)
      for (Value operand : op.getOperands())
        if (auto arg = dyn_cast<BlockArgument>(operand);
            arg && arg.getOwner() == body && arg.getArgNumber() > 0 &&
            lateYield(arg.getArgNumber() - 1))
          return op.emitOpError("reads a value that stage 1 carries; stage 0 "
                                "would see it one iteration late");

  auto strip = [](Operation *clone) {
    clone->removeAttr(kStageAttr);
    clone->removeAttr(kOrderAttr);
    return clone;
  };
  auto retireAll = [](Operation *clone) {
    if (auto wait = dyn_cast<tawa::DotWaitOp>(clone))
      wait.setPendings(0);
  };

  // Everything runs under trips > 0.
  Value trip = tripCount(b);
  Value any =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, trip, cst(b, 0));
  auto guard = scf::IfOp::create(b, loc, forOp.getResultTypes(), any,
                                 /*withElseRegion=*/true);
  {
    OpBuilder eb = OpBuilder::atBlockBegin(guard.elseBlock());
    scf::YieldOp::create(eb, loc, forOp.getInitArgs());
  }
  OpBuilder tb = OpBuilder::atBlockBegin(guard.thenBlock());

  // Stage 0 of iteration 0.
  IRMapping pro;
  pro.map(forOp.getInductionVar(), lb);
  for (auto [arg, init] :
       llvm::zip(forOp.getRegionIterArgs(), forOp.getInitArgs()))
    pro.map(arg, init);
  for (Operation &op : body->without_terminator())
    if (stageOf(&op) == 0)
      retireAll(strip(tb.clone(op, pro)));

  SmallVector<Value> inits;
  for (unsigned i = 0; i < numOrig; ++i)
    inits.push_back(lateYield(i) ? forOp.getInitArgs()[i]
                                 : pro.lookupOrDefault(yield.getOperand(i)));
  for (Value v : shifted)
    inits.push_back(pro.lookupOrDefault(v));
  Value second = arith::AddIOp::create(tb, loc, lb, step);
  auto newFor = scf::ForOp::create(tb, loc, second, ub, step, inits);
  for (NamedAttribute attr : forOp->getDiscardableAttrs())
    if (attr.getName() != kNumStagesAttr && attr.getName() != kPeelAttr)
      newFor->setAttr(attr.getName(), attr.getValue());
  Block *newBody = newFor.getBody();
  if (!newBody->empty())
    newBody->getTerminator()->erase();
  OpBuilder nb = OpBuilder::atBlockEnd(newBody);
  Value iv = newFor.getInductionVar();
  IRMapping early, late;
  early.map(forOp.getInductionVar(), iv);
  late.map(forOp.getInductionVar(), arith::SubIOp::create(nb, loc, iv, step));
  for (unsigned i = 0; i < numOrig; ++i) {
    early.map(forOp.getRegionIterArgs()[i], newFor.getRegionIterArgs()[i]);
    late.map(forOp.getRegionIterArgs()[i], newFor.getRegionIterArgs()[i]);
  }
  for (auto [j, v] : llvm::enumerate(shifted))
    late.map(v, newFor.getRegionIterArgs()[numOrig + j]);
  SmallVector<Operation *> ordered;
  for (Operation &op : body->without_terminator())
    ordered.push_back(&op);
  llvm::stable_sort(ordered, [](Operation *x, Operation *y) {
    return orderOf(x) < orderOf(y);
  });
  for (Operation *op : ordered)
    strip(nb.clone(*op, stageOf(op) == 0 ? early : late));
  SmallVector<Value> yields;
  for (unsigned i = 0; i < numOrig; ++i)
    yields.push_back((lateYield(i) ? late : early)
                         .lookupOrDefault(yield.getOperand(i)));
  for (Value v : shifted)
    yields.push_back(early.lookupOrDefault(v));
  scf::YieldOp::create(nb, loc, yields);

  // Stage 1 of iteration N - 1.
  IRMapping epi;
  Value lastIv = arith::AddIOp::create(
      tb, loc, lb,
      arith::MulIOp::create(tb, loc, arith::SubIOp::create(tb, loc, trip,
                                                           cst(tb, 1)),
                            step));
  epi.map(forOp.getInductionVar(), lastIv);
  for (unsigned i = 0; i < numOrig; ++i)
    epi.map(forOp.getRegionIterArgs()[i], newFor.getResult(i));
  for (auto [j, v] : llvm::enumerate(shifted))
    epi.map(v, newFor.getResult(numOrig + j));
  for (Operation &op : body->without_terminator())
    if (stageOf(&op) == 1)
      retireAll(strip(tb.clone(op, epi)));
  SmallVector<Value> results;
  for (unsigned i = 0; i < numOrig; ++i)
    results.push_back(lateYield(i) ? epi.lookupOrDefault(yield.getOperand(i))
                                   : newFor.getResult(i));
  scf::YieldOp::create(tb, loc, results);

  forOp.replaceAllUsesWith(guard.getResults());
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
