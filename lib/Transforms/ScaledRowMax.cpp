//===- ScaledRowMax.cpp - reduce before scaling, where that is exact ------===//
//
// Attention written as `s = dot(q, k) * scale; m = max(m, max(s, 1));
// p = exp2(s - m)` materializes s for the row max: a multiply per score
// that then cannot fuse with the subtraction of m. For a positive, finite
// scale, rounding is monotone, so max_j fl(x_j c) = fl(max_j(x_j) c): the
// reduction reads the raw scores, its row vector is scaled, and the only
// use of x * c left is the subtraction (one FFMA per score).
//
//===----------------------------------------------------------------------===//

#include "tawa/Transforms/Passes.h"

#include "tawa/Dialect/TT/TTDialect.h"
#include "tawa/Transforms/Partition.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

#include <limits>

namespace tawa {
#define GEN_PASS_DEF_SCALEDROWMAX
#include "tawa/Transforms/Passes.h.inc"
} // namespace tawa

using namespace mlir;
using namespace tawa;

namespace {

/// Whether the reduction's combiner is one max or min of its two arguments.
bool maxOrMinCombiner(tt::ReduceOp reduce) {
  return isa_and_nonnull<arith::MaxNumFOp, arith::MaximumFOp, arith::MinNumFOp,
                         arith::MinimumFOp>(tt::getSingleCombiner(reduce));
}

/// x * splat(c) with c an f32 scalar: (x, c).
std::optional<std::pair<Value, Value>> scaledBySplat(Value v) {
  auto mul = v.getDefiningOp<arith::MulFOp>();
  if (!mul)
    return std::nullopt;
  for (auto [x, s] : {std::make_pair(mul.getLhs(), mul.getRhs()),
                      std::make_pair(mul.getRhs(), mul.getLhs())}) {
    auto splat = s.getDefiningOp<tt::SplatOp>();
    if (splat && splat.getSrc().getType().isF32())
      return std::make_pair(x, splat.getSrc());
  }
  return std::nullopt;
}

struct ScaledRowMaxPass
    : public tawa::impl::ScaledRowMaxBase<ScaledRowMaxPass> {
  void runOnOperation() override {
    SmallVector<tt::ReduceOp> candidates;
    getOperation().walk([&](tt::ReduceOp reduce) {
      if (reduce->getNumOperands() == 1 && reduce->getNumResults() == 1 &&
          maxOrMinCombiner(reduce) && scaledBySplat(reduce->getOperand(0)))
        candidates.push_back(reduce);
    });
    for (tt::ReduceOp reduce : candidates)
      rewrite(reduce);
  }

  void rewrite(tt::ReduceOp reduce) {
    auto [x, c] = *scaledBySplat(reduce->getOperand(0));
    auto mul = reduce->getOperand(0).getDefiningOp<arith::MulFOp>();
    Location loc = reduce.getLoc();
    // 0 < c < +inf, tested where c is defined (outside the loop, typically):
    // NaN, zeros and infinities take the original path.
    OpBuilder cb(reduce->getContext());
    if (Operation *def = c.getDefiningOp())
      cb.setInsertionPointAfter(def);
    else
      cb.setInsertionPointToStart(cast<BlockArgument>(c).getOwner());
    Value zero = arith::ConstantOp::create(cb, loc, cb.getF32FloatAttr(0.0f));
    Value inf = arith::ConstantOp::create(
        cb, loc, cb.getF32FloatAttr(std::numeric_limits<float>::infinity()));
    Value positive =
        arith::CmpFOp::create(cb, loc, arith::CmpFPredicate::OGT, c, zero);
    Value finite =
        arith::CmpFOp::create(cb, loc, arith::CmpFPredicate::OLT, c, inf);
    Value cond = arith::AndIOp::create(cb, loc, positive, finite);
    OpBuilder b(reduce);
    Type type = reduce->getResult(0).getType();
    auto ifOp = scf::IfOp::create(b, loc, TypeRange{type}, cond,
                                  /*withElseRegion=*/true);
    ifOp->setAttr(kExpectThenAttr, b.getUnitAttr());
    {
      // Reduce the raw scores, then scale the reduced vector.
      OpBuilder t = ifOp.getThenBodyBuilder();
      IRMapping map;
      map.map(reduce->getOperand(0), x);
      Operation *raw = t.clone(*reduce, map);
      Value scale = c;
      if (auto tensor = dyn_cast<RankedTensorType>(type))
        scale = tt::SplatOp::create(t, loc, tensor, c);
      Value scaled = arith::MulFOp::create(t, loc, raw->getResult(0), scale);
      scf::YieldOp::create(t, loc, scaled);
    }
    {
      // The original, with its own product marked rounded on its own
      // (emitted as __fmul_rn): neither CSE here nor the CUDA compiler's
      // redundancy elimination merges it with the product outside, which
      // keeps a single use, the subtraction it fuses with.
      OpBuilder e = ifOp.getElseBodyBuilder();
      IRMapping map;
      Operation *product = e.clone(*mul);
      product->setAttr(kRoundedProductAttr, e.getUnitAttr());
      map.map(reduce->getOperand(0), product->getResult(0));
      Operation *orig = e.clone(*reduce, map);
      scf::YieldOp::create(e, loc, orig->getResult(0));
    }
    reduce->getResult(0).replaceAllUsesWith(ifOp.getResult(0));
    reduce->erase();
    if (mul->use_empty()) {
      mul->erase();
      return;
    }
    // Next to its remaining users where they all follow the if in its block:
    // the product and the subtraction it fuses with are then written
    // together in the emitted code.
    bool usersAfter = llvm::all_of(mul->getUsers(), [&](Operation *user) {
      return user->getBlock() == ifOp->getBlock() &&
             ifOp->isBeforeInBlock(user);
    });
    if (usersAfter)
      mul->moveAfter(ifOp);
  }
};

} // namespace
