//===- MaskedLoopSplit.cpp - peel the iterations a mask leaves whole ------===//
//
// A causal mask compares query rows with key columns in every iteration of
// the key loop, but only the iterations on the diagonal band select any
// masked element. Splitting the loop where the mask may first matter gives
// the iterations before it a body without the comparison and select, which
// the consumer warp groups would otherwise run on every element of S.
//
//===----------------------------------------------------------------------===//

#include "tawa/Transforms/Passes.h"

#include "tawa/Dialect/TT/TTDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace tawa {
#define GEN_PASS_DEF_MASKEDLOOPSPLIT
#include "tawa/Transforms/Passes.h.inc"
} // namespace tawa

using namespace mlir;
using namespace tawa;

namespace {

/// A 1-D i32 vector as splat(base) + make_range(start, end), where base may
/// be absent (zero). `base` is a scalar value or null.
struct RangeVector {
  Value base;
  int64_t start = 0, end = 0;
};

std::optional<RangeVector> matchRange(Value v) {
  if (auto range = v.getDefiningOp<tt::MakeRangeOp>())
    return RangeVector{Value(), range.getStart(), range.getEnd()};
  auto add = v.getDefiningOp<arith::AddIOp>();
  if (!add)
    return std::nullopt;
  for (auto [s, r] : {std::make_pair(add.getLhs(), add.getRhs()),
                      std::make_pair(add.getRhs(), add.getLhs())}) {
    auto splat = s.getDefiningOp<tt::SplatOp>();
    auto range = r.getDefiningOp<tt::MakeRangeOp>();
    if (splat && range)
      return RangeVector{splat.getSrc(), range.getStart(), range.getEnd()};
  }
  return std::nullopt;
}

/// The 1-D vector broadcast along `axis` of a 2-D comparison operand:
/// broadcast(expand_dims(v, axis)).
Value vectorAlong(Value v, int32_t axis) {
  if (auto b = v.getDefiningOp<tt::BroadcastOp>())
    v = b.getSrc();
  auto expand = v.getDefiningOp<tt::ExpandDimsOp>();
  if (!expand || expand.getAxis() != static_cast<uint32_t>(axis))
    return Value();
  return expand.getSrc();
}

/// A mask the loop can drop on a prefix: select(cmpi(rows, cols)).
struct Mask {
  arith::CmpIOp cmp;
  Value rowBase;   // a (null: 0), loop-invariant
  int64_t rowMin;  // lo
  Value colOffset; // off (null: 0), loop-invariant
  int64_t colMax;  // hi2 - 1
  bool strict;     // > rather than >=
};

/// Defined outside the loop (or absent).
bool invariant(Value v, scf::ForOp loop) {
  return !v || !loop.getRegion().isAncestor(v.getParentRegion());
}

/// col = splat(i) + range or splat(i + off) + range (either order of the
/// scalar sum).
std::optional<std::pair<Value, int64_t>> matchColumns(Value v,
                                                      scf::ForOp loop) {
  std::optional<RangeVector> cols = matchRange(v);
  if (!cols || !cols->base || cols->end <= cols->start)
    return std::nullopt;
  Value iv = loop.getInductionVar();
  if (cols->base == iv)
    return std::make_pair(Value(), cols->end - 1);
  if (auto add = cols->base.getDefiningOp<arith::AddIOp>()) {
    if (add.getLhs() == iv && invariant(add.getRhs(), loop))
      return std::make_pair(add.getRhs(), cols->end - 1);
    if (add.getRhs() == iv && invariant(add.getLhs(), loop))
      return std::make_pair(add.getLhs(), cols->end - 1);
  }
  return std::nullopt;
}

std::optional<Mask> matchMask(arith::CmpIOp cmp, scf::ForOp loop) {
  auto type = dyn_cast<RankedTensorType>(cmp.getLhs().getType());
  if (!type || type.getRank() != 2)
    return std::nullopt;
  Value rowSide, colSide;
  bool strict;
  switch (cmp.getPredicate()) {
  case arith::CmpIPredicate::sge:
  case arith::CmpIPredicate::sgt:
    rowSide = cmp.getLhs();
    colSide = cmp.getRhs();
    strict = cmp.getPredicate() == arith::CmpIPredicate::sgt;
    break;
  case arith::CmpIPredicate::sle:
  case arith::CmpIPredicate::slt:
    rowSide = cmp.getRhs();
    colSide = cmp.getLhs();
    strict = cmp.getPredicate() == arith::CmpIPredicate::slt;
    break;
  default:
    return std::nullopt;
  }
  Value rows = vectorAlong(rowSide, 1), cols = vectorAlong(colSide, 0);
  if (!rows || !cols || !invariant(rows, loop))
    return std::nullopt;
  std::optional<RangeVector> r = matchRange(rows);
  std::optional<std::pair<Value, int64_t>> c = matchColumns(cols, loop);
  if (!r || r->end <= r->start || !c || !invariant(r->base, loop))
    return std::nullopt;
  return Mask{cmp, r->base, r->start, c->first, c->second, strict};
}

struct MaskedLoopSplit
    : public tawa::impl::MaskedLoopSplitBase<MaskedLoopSplit> {
  using MaskedLoopSplitBase::MaskedLoopSplitBase;

  void runOnOperation() override {
    if (mode != "guard" && mode != "split") {
      getOperation().emitError()
          << "-tawa-masked-loop-split: mode must be 'guard' or 'split', not '"
          << mode << "'";
      return signalPassFailure();
    }
    SmallVector<scf::ForOp> loops;
    getOperation().walk([&](scf::ForOp loop) { loops.push_back(loop); });
    for (scf::ForOp loop : loops)
      split(loop);
  }

  /// Moves the selects on `cmp`, `cmp` and the loop-body values only they
  /// read into `scf.if iv >= split`; the else branch yields the selects'
  /// true values. False (nothing changed) where they cannot move as a unit.
  bool guard(scf::ForOp loop, arith::CmpIOp cmp, Value split) {
    Block *body = loop.getBody();
    SmallVector<arith::SelectOp> selects;
    for (Operation *user : cmp->getUsers()) {
      auto select = dyn_cast<arith::SelectOp>(user);
      if (!select || select->getBlock() != body ||
          select.getCondition() != cmp.getResult())
        return false;
      selects.push_back(select);
    }
    llvm::sort(selects, [](arith::SelectOp a, arith::SelectOp b) {
      return a->isBeforeInBlock(b);
    });
    Operation *last = selects.back();
    // Every select's users come after the last one, where the if goes.
    for (arith::SelectOp select : selects)
      for (Operation *user : select->getUsers()) {
        Operation *inBody = body->findAncestorOpInBlock(*user);
        if (!inBody || inBody == last || inBody->isBeforeInBlock(last))
          return false;
      }
    // The comparison and what only it reads, found backwards in block order
    // so that an op is considered after all its users.
    // The selects join the set after the walk: their other operands (S
    // itself) stay outside.
    llvm::SmallPtrSet<Operation *, 16> moved;
    moved.insert(cmp);
    for (Operation &op : llvm::reverse(*body)) {
      if (moved.contains(&op) || &op == body->getTerminator() ||
          op.getNumRegions() != 0 || !isMemoryEffectFree(&op) ||
          !op.isBeforeInBlock(cmp) || op.use_empty())
        continue;
      if (llvm::all_of(op.getUsers(),
                       [&](Operation *user) { return moved.contains(user); }))
        moved.insert(&op);
    }
    for (arith::SelectOp select : selects)
      moved.insert(select);
    SmallVector<Operation *> order;
    for (Operation &op : *body)
      if (moved.contains(&op))
        order.push_back(&op);

    OpBuilder b(last->getBlock(), std::next(Block::iterator(last)));
    Location loc = cmp.getLoc();
    Value onBand = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge,
                                         loop.getInductionVar(), split);
    SmallVector<Type> types;
    for (arith::SelectOp select : selects)
      types.push_back(select.getType());
    auto ifOp = scf::IfOp::create(b, loc, types, onBand,
                                  /*withElseRegion=*/true);
    for (auto [i, select] : llvm::enumerate(selects))
      select.getResult().replaceAllUsesWith(ifOp.getResult(i));
    Block *thenBlock = ifOp.thenBlock();
    for (Operation *op : order)
      op->moveBefore(thenBlock, thenBlock->end());
    OpBuilder tb = OpBuilder::atBlockEnd(thenBlock);
    SmallVector<Value> thenValues, elseValues;
    for (arith::SelectOp select : selects) {
      thenValues.push_back(select.getResult());
      elseValues.push_back(select.getTrueValue());
    }
    scf::YieldOp::create(tb, loc, thenValues);
    OpBuilder eb = OpBuilder::atBlockEnd(ifOp.elseBlock());
    scf::YieldOp::create(eb, loc, elseValues);
    return true;
  }

  void split(scf::ForOp loop) {
    APInt step;
    if (!matchPattern(loop.getStep(), m_ConstantInt(&step)) ||
        !step.isStrictlyPositive() || !loop.getStep().getType().isInteger(32))
      return;
    // The first select whose condition is a mask of that form.
    std::optional<Mask> mask;
    loop.getBody()->walk([&](arith::SelectOp select) {
      if (mask)
        return;
      if (auto cmp = select.getCondition().getDefiningOp<arith::CmpIOp>())
        if (cmp->getBlock() == loop.getBody())
          mask = matchMask(cmp, loop);
    });
    if (!mask)
      return;

    // Iteration i keeps every element while i <= T, T = a + lo - off - hi2
    // + 1 (strict: one less); the first iteration past it is
    // lb + s * max(0, floor((T - lb) / s) + 1), clamped to [lb, ub].
    Location loc = loop.getLoc();
    OpBuilder b(loop);
    auto c = [&](int64_t v) {
      return arith::ConstantIntOp::create(b, loc, v, 32).getResult();
    };
    Value t = c(mask->rowMin - mask->colMax - (mask->strict ? 1 : 0));
    if (mask->rowBase)
      t = arith::AddIOp::create(b, loc, mask->rowBase, t);
    if (mask->colOffset)
      t = arith::SubIOp::create(b, loc, t, mask->colOffset);
    Value lb = loop.getLowerBound(), ub = loop.getUpperBound();
    Value k = arith::FloorDivSIOp::create(
        b, loc, arith::SubIOp::create(b, loc, t, lb), loop.getStep());
    k = arith::MaxSIOp::create(b, loc, arith::AddIOp::create(b, loc, k, c(1)),
                               c(0));
    Value split = arith::AddIOp::create(
        b, loc, lb, arith::MulIOp::create(b, loc, k, loop.getStep()));
    split = arith::MaxSIOp::create(
        b, loc, lb, arith::MinSIOp::create(b, loc, split, ub));

    if (mode == "guard" && guard(loop, mask->cmp, split))
      return;

    // The unmasked prefix: a copy of the loop up to split, every select on
    // the mask replaced by its true value.
    IRMapping map;
    auto prefix = cast<scf::ForOp>(b.clone(*loop, map));
    prefix.setUpperBound(split);
    auto cmp = cast<arith::CmpIOp>(map.lookup(mask->cmp.getResult())
                                       .getDefiningOp());
    for (Operation *user : llvm::make_early_inc_range(cmp->getUsers()))
      if (auto select = dyn_cast<arith::SelectOp>(user);
          select && select.getCondition() == cmp.getResult()) {
        select.replaceAllUsesWith(select.getTrueValue());
        select.erase();
      }
    // The band: the original loop from split on, carrying the prefix's
    // results.
    loop.setLowerBound(split);
    loop.getInitArgsMutable().assign(prefix.getResults());
  }
};

} // namespace
