//===- TileSwizzle.cpp - a user's row-major tile walk in groups of rows ---===//
//
// Before (the user's persistent walk,     After (G rows at a time where the
// row-major):                             grid covers the walk, else as
// before):
//   for tile = pid to R*C step S:           ok = S > 0 && #programs >= S && ...
//     m = tile / C; n = tile % C            w = G*C; fm = tile / w * G
//     store Out[m*BM, n*BN], ...            g = min(R - fm, G); r = tile % w
//                                           m = ok ? fm + r % g : tile / C
//                                           n = ok ? r / g      : tile % C
//
// A persistent kernel's programs work on tiles S apart: at any moment the
// grid works on about S consecutive tile indices. Row-major, those span a
// few tile rows and every tile column, so each wave streams the whole B
// operand through L2; in groups of G rows a wave reuses G row blocks of A
// and S / G column blocks of B. Which tiles are computed does not change
// (a bijection of [0, R*C)), only which program computes each and when.
//
//===----------------------------------------------------------------------===//

#include "tawa/Transforms/ArithMatchers.h"
#include "tawa/Transforms/Partition.h"
#include "tawa/Transforms/Passes.h"
#include "tawa/Transforms/TileOrder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace tawa {
#define GEN_PASS_DEF_TILESWIZZLE
#include "tawa/Transforms/Passes.h.inc"
} // namespace tawa

using namespace mlir;
using namespace tawa;

namespace {

/// A tile loop whose tile index t in [0, rows * cols) is split row-major:
/// row = t / cols, col = t % cols.
struct TileWalk {
  Operation *loop = nullptr; // scf.for, or the scf.while of a grouped walk
  Block *body = nullptr;     // one tile per iteration
  arith::DivSIOp row;
  arith::RemSIOp col;
  Value rows, step;
  // The grouped walk (an scf.while per window of an scf.for): the windows'
  // loop and the index of the window start among its iter args.
  scf::ForOp windows;
  unsigned startArg = 0;
  Value windowSize; // rows * cols of this window
};

bool definedOutside(Value v, Operation *loop) {
  return !loop->isAncestor(v.getParentRegion()->getParentOp());
}

bool isConstant(Value v, int64_t value) {
  APInt c;
  return matchPattern(v, m_ConstantInt(&c)) && c.getSExtValue() == value;
}

bool isProgramIdX(Value v) {
  auto pid = v.getDefiningOp<tt::GetProgramIdOp>();
  return pid && pid.getAxis() == tt::ProgramIDDim::X;
}

bool isCompare(Value v, arith::CmpIPredicate pred, Value x, Value y) {
  auto cmp = v.getDefiningOp<arith::CmpIOp>();
  return cmp && cmp.getPredicate() == pred && cmp.getLhs() == x &&
         cmp.getRhs() == y;
}

/// `x >= y`, written `x sge y` or `y sle x`.
bool isAtLeast(Value v, Value x, Value y) {
  return isCompare(v, arith::CmpIPredicate::sge, x, y) ||
         isCompare(v, arith::CmpIPredicate::sle, y, x);
}

/// Whether a store's coordinates are (row * c0, col * c1), in either order,
/// with each c at least the block's extent in that dimension: then distinct
/// tiles write disjoint blocks.
bool storesOneBlockPerTile(tt::DescriptorStoreOp store, Value row, Value col) {
  auto indices = store.getIndices();
  ArrayRef<int64_t> block = store.getDesc().getType().getBlockType().getShape();
  if (indices.size() != 2 || block.size() != 2)
    return false;
  auto scaledBy = [](Value index, Value by, int64_t extent) {
    Value scale = otherOperand<arith::MulIOp>(index, by);
    APInt c;
    return scale && matchPattern(scale, m_ConstantInt(&c)) &&
           c.getSExtValue() >= extent;
  };
  return (scaledBy(indices[0], row, block[0]) &&
          scaledBy(indices[1], col, block[1])) ||
         (scaledBy(indices[0], col, block[0]) &&
          scaledBy(indices[1], row, block[1]));
}

/// Whether the iterations of `walk.body` are independent tiles: nothing
/// carried from one to the next but the tile index, no memory written
/// except one output block per tile. (Like the persistent pipeline, which
/// loads a tile's operands while the previous tile is stored, this assumes
/// the outputs do not alias the inputs.)
bool tilesAreIndependent(TileWalk walk) {
  Value row = walk.row.getResult(), col = walk.col.getResult();
  WalkResult r = walk.body->walk([&](Operation *op) {
    if (op->hasTrait<OpTrait::HasRecursiveMemoryEffects>())
      return WalkResult::advance(); // its nested ops are visited
    if (auto store = dyn_cast<tt::DescriptorStoreOp>(op))
      return storesOneBlockPerTile(store, row, col) ? WalkResult::advance()
                                                    : WalkResult::interrupt();
    auto effects = dyn_cast<MemoryEffectOpInterface>(op);
    if (!effects)
      return op->hasTrait<OpTrait::IsTerminator>() ? WalkResult::advance()
                                                   : WalkResult::interrupt();
    SmallVector<MemoryEffects::EffectInstance> list;
    effects.getEffects(list);
    for (auto &e : list)
      if (!isa<MemoryEffects::Read>(e.getEffect()))
        return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return !r.wasInterrupted();
}

/// `for tile = program_id(x) to rows * cols step S` with no iter args.
std::optional<TileWalk> matchForWalk(scf::ForOp loop, arith::DivSIOp div,
                                     arith::RemSIOp rem) {
  Value t = loop.getInductionVar();
  if (div.getLhs() != t || !loop.getInitArgs().empty() ||
      !isProgramIdX(loop.getLowerBound()) ||
      !llvm::all_of(t.getUsers(), [&](Operation *user) {
        return user == div || user == rem;
      }))
    return std::nullopt;
  Value rows = otherOperand<arith::MulIOp>(loop.getUpperBound(), div.getRhs());
  if (!rows)
    return std::nullopt;
  TileWalk walk;
  walk.loop = loop;
  walk.body = loop.getBody();
  walk.row = div;
  walk.col = rem;
  walk.rows = rows;
  walk.step = loop.getStep();
  return walk;
}

/// The grouped walk of Triton's grouped-GEMM idiom:
///   tile = program_id(x); last = 0
///   for each window (rows * cols tiles):
///     while tile >= last and tile < last + rows * cols:
///       t = tile - last; row = t / cols; col = t % cols; ...; tile += S
///     last += rows * cols
std::optional<TileWalk> matchWhileWalk(scf::WhileOp loop, arith::DivSIOp div,
                                       arith::RemSIOp rem) {
  if (loop.getInits().size() != 1 || loop.getNumResults() != 1 ||
      div->getBlock() != loop.getAfterBody())
    return std::nullopt;
  auto windows = dyn_cast<scf::ForOp>(loop->getParentOp());
  if (!windows || loop->getBlock() != windows.getBody())
    return std::nullopt;

  // The window start `last` and the running tile index: iter args of the
  // windows' loop, starting at 0 and program_id(x).
  auto sub = div.getLhs().getDefiningOp<arith::SubIOp>();
  if (!sub)
    return std::nullopt;
  auto start = dyn_cast<BlockArgument>(sub.getRhs());
  auto tileInit = dyn_cast<BlockArgument>(loop.getInits()[0]);
  if (!start || !tileInit || start.getOwner() != windows.getBody() ||
      tileInit.getOwner() != windows.getBody() || start.getArgNumber() == 0 ||
      tileInit.getArgNumber() == 0)
    return std::nullopt;
  unsigned startArg = start.getArgNumber() - 1,
           tileArg = tileInit.getArgNumber() - 1;
  auto yield = cast<scf::YieldOp>(windows.getBody()->getTerminator());
  if (!isConstant(windows.getInitArgs()[startArg], 0) ||
      !isProgramIdX(windows.getInitArgs()[tileArg]) ||
      yield.getOperand(tileArg) != loop.getResult(0))
    return std::nullopt;
  Value windowSize =
      otherOperand<arith::AddIOp>(yield.getOperand(startArg), start);
  if (!windowSize || !definedOutside(windowSize, loop))
    return std::nullopt;
  Value rows = otherOperand<arith::MulIOp>(windowSize, div.getRhs());
  if (!rows)
    return std::nullopt;

  // while (tile >= last && tile < last + size) forwarding tile itself.
  Block *before = loop.getBeforeBody();
  auto cond = cast<scf::ConditionOp>(before->getTerminator());
  Value b = before->getArgument(0);
  if (cond.getArgs().size() != 1 || cond.getArgs()[0] != b)
    return std::nullopt;
  auto both = cond.getCondition().getDefiningOp<arith::AndIOp>();
  if (!both)
    return std::nullopt;
  auto isEnd = [&](Value v) {
    return otherOperand<arith::AddIOp>(v, start) == windowSize;
  };
  auto inWindow = [&](Value lo, Value hi) {
    auto cmp = hi.getDefiningOp<arith::CmpIOp>();
    return isAtLeast(lo, b, start) && cmp &&
           ((cmp.getPredicate() == arith::CmpIPredicate::slt &&
             cmp.getLhs() == b && isEnd(cmp.getRhs())) ||
            (cmp.getPredicate() == arith::CmpIPredicate::sgt &&
             cmp.getRhs() == b && isEnd(cmp.getLhs())));
  };
  if (!inWindow(both.getLhs(), both.getRhs()) &&
      !inWindow(both.getRhs(), both.getLhs()))
    return std::nullopt;

  // t = tile - last is the only use of the tile index besides its
  // increment by S, and t is used only to split it.
  Block *after = loop.getAfterBody();
  Value a = after->getArgument(0);
  auto next = cast<scf::YieldOp>(after->getTerminator());
  if (next.getNumOperands() != 1 || sub.getLhs() != a)
    return std::nullopt;
  Value step = otherOperand<arith::AddIOp>(next.getOperand(0), a);
  if (!step || !definedOutside(step, loop))
    return std::nullopt;
  Operation *increment = next.getOperand(0).getDefiningOp();
  if (!llvm::all_of(a.getUsers(),
                    [&](Operation *u) { return u == sub || u == increment; }) ||
      !llvm::all_of(sub->getUsers(),
                    [&](Operation *u) { return u == div || u == rem; }))
    return std::nullopt;

  TileWalk walk;
  walk.loop = loop;
  walk.body = after;
  walk.row = div;
  walk.col = rem;
  walk.rows = rows;
  walk.step = step;
  walk.windows = windows;
  walk.startArg = startArg;
  walk.windowSize = windowSize;
  return walk;
}

/// The first row-major tile walk of `func` that may be reordered.
std::optional<TileWalk> findWalk(tt::FuncOp func) {
  std::optional<TileWalk> found;
  func.walk([&](arith::DivSIOp div) {
    Operation *loop = div->getParentOp();
    // The guard and the new split are built in i32, Triton's index type.
    if (!isa<scf::ForOp, scf::WhileOp>(loop) || !div.getType().isInteger(32) ||
        !definedOutside(div.getRhs(), loop))
      return WalkResult::advance();
    arith::RemSIOp rem;
    for (Operation *user : div.getLhs().getUsers())
      if (auto r = dyn_cast<arith::RemSIOp>(user))
        if (r.getRhs() == div.getRhs() && r->getBlock() == div->getBlock())
          rem = r;
    if (!rem)
      return WalkResult::advance();
    std::optional<TileWalk> walk;
    if (auto forOp = dyn_cast<scf::ForOp>(loop))
      walk = matchForWalk(forOp, div, rem);
    else
      walk = matchWhileWalk(cast<scf::WhileOp>(loop), div, rem);
    if (!walk || !definedOutside(walk->rows, walk->loop) ||
        !tilesAreIndependent(*walk))
      return WalkResult::advance();
    found = walk;
    return WalkResult::interrupt();
  });
  return found;
}

struct TileSwizzle : public tawa::impl::TileSwizzleBase<TileSwizzle> {
  using TileSwizzleBase::TileSwizzleBase;

  void runOnOperation() override {
    tt::FuncOp func = getOperation();
    if (func.isExternal() || groupRows <= 1)
      return;
    std::optional<TileWalk> walk = findWalk(func);
    if (!walk)
      return;
    Location loc = walk->loop->getLoc();
    Type i1 = IntegerType::get(&getContext(), 1);

    // A grouped walk covers window g completely only if every earlier
    // window had a size >= 0 (the window starts never go back); a flag
    // carried across the windows says so.
    Value monotone;
    if (walk->windows) {
      IRRewriter rewriter(&getContext());
      rewriter.setInsertionPoint(walk->windows);
      Value yes = arith::ConstantIntOp::create(rewriter, loc, i1, 1);
      unsigned startArg = walk->startArg;
      Value windowSize = walk->windowSize;
      FailureOr<LoopLikeOpInterface> grown =
          walk->windows.replaceWithAdditionalYields(
              rewriter, yes, /*replaceInitOperandUsesInLoop=*/false,
              [&](OpBuilder &b, Location l, ArrayRef<BlockArgument> newArgs) {
                auto windows =
                    cast<scf::ForOp>(newArgs[0].getOwner()->getParentOp());
                Value start = windows.getRegionIterArgs()[startArg];
                Value zero = arith::ConstantIntOp::create(b, l, 0, 32);
                Value end = arith::AddIOp::create(b, l, start, windowSize);
                Value sized = arith::CmpIOp::create(
                    b, l, arith::CmpIPredicate::sge, windowSize, zero);
                Value noWrap = arith::CmpIOp::create(
                    b, l, arith::CmpIPredicate::sge, end, start);
                Value ok = arith::AndIOp::create(
                    b, l, newArgs[0],
                    arith::AndIOp::create(b, l, sized, noWrap));
                return SmallVector<Value>{ok};
              });
      if (failed(grown)) {
        func.emitError("cannot extend the loop over tile windows");
        return signalPassFailure();
      }
      // The matched ops moved into the new loop; match again there.
      walk = findWalk(func);
      if (!walk || !walk->windows) {
        func.emitError("internal error: the tile walk no longer matches "
                       "after extending its loop over windows");
        return signalPassFailure();
      }
      monotone = walk->windows.getRegionIterArgs().back();
    }

    // Run-time guard, before the tile loop: the grid's programs start at
    // every index of [0, S) (so every tile of the walk is visited), and
    // rows, cols are positive and small enough for the arithmetic below.
    OpBuilder b(walk->loop);
    auto c32 = [&](int64_t v) {
      return arith::ConstantIntOp::create(b, loc, v, 32).getResult();
    };
    auto ge = [&](Value x, Value y) {
      return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, x, y)
          .getResult();
    };
    auto all = [&](ArrayRef<Value> conds) {
      Value acc = conds.front();
      for (Value c : conds.drop_front())
        acc = arith::AndIOp::create(b, loc, acc, c);
      return acc;
    };
    Value cols = walk->row.getRhs(), rows = walk->rows, step = walk->step;
    Value programs = tt::GetNumProgramsOp::create(
        b, loc, b.getI32Type(),
        tt::ProgramIDDimAttr::get(&getContext(), tt::ProgramIDDim::X));
    Value one = c32(1);
    SmallVector<Value> conds = {ge(step, one), ge(programs, step),
                                ge(rows, one), ge(cols, one),
                                ge(c32(1 << 27), cols)};
    if (monotone)
      conds.push_back(monotone);
    Value ok = all(conds);
    Value group = c32(groupRows);
    Value safeRows = arith::SelectOp::create(b, loc, ok, rows, one);
    Value safeCols = arith::SelectOp::create(b, loc, ok, cols, one);
    Value width = arith::MulIOp::create(b, loc, safeCols, group);

    // In the tile body: the tile's row and column, G rows at a time.
    b.setInsertionPoint(walk->row);
    auto [row, col] = buildGroupedOrder(b, loc, walk->row.getLhs(), safeRows,
                                        width, group, /*minHeight=*/one);
    b.setInsertionPointAfter(walk->col->isBeforeInBlock(walk->row)
                                 ? walk->row.getOperation()
                                 : walk->col.getOperation());
    Value rowSel =
        arith::SelectOp::create(b, loc, ok, row, walk->row.getResult());
    Value colSel =
        arith::SelectOp::create(b, loc, ok, col, walk->col.getResult());
    walk->row.getResult().replaceAllUsesExcept(rowSel, rowSel.getDefiningOp());
    walk->col.getResult().replaceAllUsesExcept(colSel, colSel.getDefiningOp());
    func->setAttr(
        kTileSwizzleAttr,
        IntegerAttr::get(IntegerType::get(&getContext(), 64), groupRows));
  }
};

} // namespace

GroupedOrder tawa::buildGroupedOrderParts(OpBuilder &b, Location loc, Value t,
                                          Value rows, Value width, Value group,
                                          Value minHeight) {
  GroupedOrder o;
  o.group = arith::DivSIOp::create(b, loc, t, width);
  o.first = arith::MulIOp::create(b, loc, o.group, group);
  Value height = arith::MinSIOp::create(
      b, loc, arith::SubIOp::create(b, loc, rows, o.first), group);
  if (minHeight)
    height = arith::MaxSIOp::create(b, loc, height, minHeight);
  Value in = arith::RemSIOp::create(b, loc, t, width);
  o.rowInGroup = arith::RemSIOp::create(b, loc, in, height);
  o.row = arith::AddIOp::create(b, loc, o.first, o.rowInGroup);
  o.col = arith::DivSIOp::create(b, loc, in, height);
  return o;
}

std::pair<Value, Value> tawa::buildGroupedOrder(OpBuilder &b, Location loc,
                                                Value t, Value rows,
                                                Value width, Value group,
                                                Value minHeight) {
  GroupedOrder o =
      buildGroupedOrderParts(b, loc, t, rows, width, group, minHeight);
  return {o.row, o.col};
}
