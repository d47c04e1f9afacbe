//===- LayoutAssignment.cpp - layouts of register and shared tiles --------===//
//
// A constraint propagation to a fixed point: each rule either ties the
// layouts of several values together (element-wise operations, loop-carried
// values) or derives one from another (a row reduction of an accumulator is a
// row vector; a [M,1] tensor broadcast to an accumulator is a row). Values no
// rule reaches are `blocked`.
//
//===----------------------------------------------------------------------===//

#include "tawa/Transforms/Passes.h"
#include "tawa/Transforms/SourceLocation.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/MapVector.h"

namespace tawa {
#define GEN_PASS_DEF_LAYOUTASSIGNMENT
#include "tawa/Transforms/Passes.h.inc"
} // namespace tawa

using namespace mlir;
using namespace tawa;

namespace {

constexpr llvm::StringLiteral kSmem = "smem", kAcc = "acc", kRow = "row",
                              kCol = "col", kAReg = "a_reg",
                              kBlocked = "blocked";

bool isTile(Value v) { return isa<RankedTensorType>(v.getType()); }

/// Operations whose tensor operands and results share one layout.
bool isElementwise(Operation *op) {
  return isa<arith::ArithDialect, math::MathDialect>(op->getDialect()) ||
         isa<tt::AddPtrOp, tt::LoadOp, tt::FpToFpOp, tt::IntToPtrOp,
             tt::BitcastOp>(op);
}

bool isConversion(Operation *op) {
  return isa<arith::TruncFOp, arith::ExtFOp, tt::FpToFpOp>(op);
}

/// Tiles that cost nothing to recompute: constants, ranges, splats, and
/// element-wise combinations of those (index vectors such as offs_m + start).
bool isRematerializable(Operation *op) {
  if (op->getNumResults() != 1 || !isTile(op->getResult(0)) ||
      op->getNumRegions() != 0)
    return false;
  if (isa<tt::MakeRangeOp, tt::SplatOp, arith::ConstantOp>(op))
    return true;
  if (!isa<arith::ArithDialect>(op->getDialect()) || !isPure(op))
    return false;
  return llvm::all_of(op->getOperands(), [](Value v) {
    Operation *def = v.getDefiningOp();
    return !isTile(v) || (def && isRematerializable(def));
  });
}

/// Gives every use of a rematerializable tile its own copy, so that one index
/// vector may serve as a row vector in one place and a column vector in
/// another (causal masks compare offs_m[:, None] with offs_n[None, :]).
void splitRematerializable(tt::FuncOp func) {
  SmallVector<Operation *> candidates;
  func.walk([&](Operation *op) {
    if (isRematerializable(op))
      candidates.push_back(op);
  });
  // Users before definitions: cloning a user adds uses to its operands,
  // which are then split in turn.
  for (Operation *op : llvm::reverse(candidates)) {
    SmallVector<OpOperand *> uses;
    for (OpOperand &use : op->getResult(0).getUses())
      uses.push_back(&use);
    for (OpOperand *use : llvm::drop_begin(uses)) {
      OpBuilder b(use->getOwner());
      Operation *copy = b.clone(*op);
      use->set(copy->getResult(0));
    }
  }
}

/// Whether `user` reads `v`'s elements as data (rather than as a product's
/// operand, a view, or a ring operation).
bool readsElements(Operation *user) {
  return isElementwise(user) || isConversion(user) ||
         isa<tt::ReduceOp, tt::StoreOp, tt::DescriptorStoreOp>(user);
}

/// A tile that lives in shared memory (a ring slot) and is read element by
/// element gets a tawa.smem.load before its first such reader in each block:
/// the registers it fills take the readers' layout, while the slot keeps
/// its own for the products that read it there. This is the conversion from
/// shared memory to the accumulator layout an epilogue operand loaded by
/// TMA needs (D = alpha A B + beta C).
void insertSmemLoads(tt::FuncOp func) {
  SmallVector<Value> tiles;
  func.walk([&](Operation *op) {
    if (auto slot = dyn_cast<tawa::SlotViewOp>(op))
      tiles.push_back(slot.getTile());
    else if (auto get = dyn_cast<tawa::ArefGetOp>(op))
      llvm::append_range(tiles, get.getValues());
  });
  for (Value tile : tiles) {
    if (!isTile(tile))
      continue;
    // The earliest element reader in each block.
    llvm::MapVector<Block *, Operation *> first;
    for (Operation *user : tile.getUsers()) {
      if (!readsElements(user))
        continue;
      auto [it, inserted] = first.try_emplace(user->getBlock(), user);
      if (!inserted && user->isBeforeInBlock(it->second))
        it->second = user;
    }
    for (auto &entry : first) {
      // (Not a structured binding: clang 14 cannot capture one below.)
      Block *block = entry.first;
      Operation *at = entry.second;
      OpBuilder b(at);
      auto load = tawa::SmemLoadOp::create(b, at->getLoc(), tile.getType(),
                                           tile);
      tile.replaceUsesWithIf(load.getResult(), [&](OpOperand &use) {
        return use.getOwner()->getBlock() == block &&
               readsElements(use.getOwner());
      });
    }
  }
}

class Solver {
public:
  explicit Solver(tt::FuncOp func) : func(func) {}

  LogicalResult run() {
    splitRematerializable(func);
    insertSmemLoads(func);
    for (int round = 0; round < 64; ++round) {
      changed = false;
      func.walk([&](Operation *op) { apply(op); });
      if (failed(status))
        return failure();
      if (!changed)
        break;
    }
    annotate();
    return success();
  }

private:
  StringRef get(Value v) const { return layout.lookup(v); }

  /// Records layout `l` for `v`; a different earlier layout is a conflict.
  void set(Value v, StringRef l, Operation *at) {
    if (!isTile(v) || failed(status))
      return;
    auto [it, inserted] = layout.try_emplace(v, l);
    if (inserted) {
      changed = true;
      return;
    }
    if (it->second == l)
      return;
    emitError(getUserLocation(at->getLoc()))
        << "this value would need both the '" << it->second << "' and the '"
        << l << "' layout; tawa does not convert between layouts yet (in '"
        << at->getName() << "')";
    status = failure();
  }

  /// Ties the layouts of `values`: whichever is known propagates.
  void tie(ArrayRef<Value> values, Operation *at) {
    StringRef known;
    for (Value v : values)
      if (isTile(v) && !get(v).empty()) {
        known = get(v);
        break;
      }
    if (known.empty())
      return;
    for (Value v : values)
      set(v, known, at);
  }

  /// Whether `v` is a product's A operand, directly or as a loop-carried
  /// value (a pipelined loop carries P to the next iteration's P V).
  bool feedsDotA(Value v) {
    llvm::SmallPtrSet<void *, 8> seen;
    SmallVector<Value> work{v};
    while (!work.empty()) {
      Value x = work.pop_back_val();
      if (!seen.insert(x.getAsOpaquePointer()).second)
        continue;
      for (OpOperand &use : x.getUses()) {
        Operation *user = use.getOwner();
        if ((isa<tt::DotOp>(user) || isa<tawa::DotAsyncOp>(user)) &&
            use.getOperandNumber() == 0)
          return true;
        if (auto forOp = dyn_cast<scf::ForOp>(user)) {
          if (use.getOperandNumber() >= forOp.getNumControlOperands())
            work.push_back(forOp.getRegionIterArgs()[use.getOperandNumber() -
                                                     forOp.getNumControlOperands()]);
        } else if (auto yield = dyn_cast<scf::YieldOp>(user)) {
          if (auto forOp = dyn_cast<scf::ForOp>(yield->getParentOp())) {
            work.push_back(forOp.getRegionIterArgs()[use.getOperandNumber()]);
            work.push_back(forOp.getResult(use.getOperandNumber()));
          }
        }
      }
    }
    return false;
  }

  void applyDot(Operation *op, Value a, Value b, Value c, Value d) {
    set(c, kAcc, op);
    set(d, kAcc, op);
    set(b, kSmem, op);
    if (get(a).empty() && !a.getDefiningOp<tawa::ArefGetOp>() &&
        !a.getDefiningOp<tawa::SlotViewOp>() &&
        !a.getDefiningOp<tt::DescriptorLoadOp>() &&
        !a.getDefiningOp<tt::TransOp>())
      set(a, kAReg, op);
  }

  void apply(Operation *op) {
    if (auto load = dyn_cast<tt::DescriptorLoadOp>(op))
      return set(load.getResult(), kSmem, op);
    if (auto get = dyn_cast<tawa::ArefGetOp>(op)) {
      for (Value v : get.getValues())
        set(v, kSmem, op);
      return;
    }
    if (auto slot = dyn_cast<tawa::SlotViewOp>(op))
      return set(slot.getTile(), kSmem, op);
    if (auto load = dyn_cast<tawa::SmemLoadOp>(op))
      return set(load.getTile(), kSmem, op);
    if (auto trans = dyn_cast<tt::TransOp>(op))
      return tie({trans.getSrc(), trans.getResult()}, op);
    if (auto dot = dyn_cast<tt::DotOp>(op))
      return applyDot(op, dot.getA(), dot.getB(), dot.getC(), dot.getD());
    if (auto dot = dyn_cast<tawa::DotAsyncOp>(op))
      return applyDot(op, dot.getA(), dot.getB(), dot.getC(), dot.getD());
    if (auto wait = dyn_cast<tawa::DotWaitOp>(op)) {
      for (auto [in, out] : llvm::zip(wait.getInputs(), wait.getOutputs()))
        tie({in, out}, op);
      return;
    }
    if (auto forOp = dyn_cast<scf::ForOp>(op)) {
      for (unsigned i = 0; i < forOp.getNumRegionIterArgs(); ++i)
        tie({forOp.getInitArgs()[i], forOp.getRegionIterArgs()[i],
             forOp.getYieldedValues()[i], forOp.getResult(i)},
            op);
      return;
    }
    if (auto ifOp = dyn_cast<scf::IfOp>(op)) {
      for (unsigned i = 0; i < ifOp.getNumResults(); ++i) {
        SmallVector<Value> tied{ifOp.getResult(i),
                                ifOp.thenYield().getOperand(i)};
        if (!ifOp.getElseRegion().empty())
          tied.push_back(ifOp.elseYield().getOperand(i));
        tie(tied, op);
      }
      return;
    }
    if (auto store = dyn_cast<tt::StoreOp>(op)) {
      // A store through a tensor of pointers: pointers, value and mask are
      // read element by element together (the row statistics of attention).
      SmallVector<Value> tied{store.getPtr(), store.getValue()};
      if (store.getMask())
        tied.push_back(store.getMask());
      return tie(tied, op);
    }
    if (auto store = dyn_cast<tt::DescriptorStoreOp>(op)) {
      // Stores go out of accumulator fragments (stmatrix, then TMA).
      if (get(store.getSrc()).empty())
        set(store.getSrc(), kAcc, op);
      return;
    }
    if (auto expand = dyn_cast<tt::ExpandDimsOp>(op)) {
      auto type = cast<RankedTensorType>(expand.getType());
      if (type.getRank() != 2)
        return;
      StringRef l = expand.getAxis() == 1 ? kRow : kCol;
      if (get(expand.getResult()) == l || get(expand.getSrc()) == l) {
        set(expand.getResult(), l, op);
        set(expand.getSrc(), l, op);
      }
      return;
    }
    if (auto bcast = dyn_cast<tt::BroadcastOp>(op)) {
      auto src = cast<RankedTensorType>(bcast.getSrc().getType());
      if (src.getRank() != 2)
        return;
      StringRef l = src.getDimSize(1) == 1 ? kRow : kCol;
      if (get(bcast.getResult()) == kAcc || get(bcast.getSrc()) == l) {
        set(bcast.getResult(), kAcc, op);
        set(bcast.getSrc(), l, op);
      }
      return;
    }
    if (auto reduce = dyn_cast<tt::ReduceOp>(op)) {
      StringRef l = reduce.getAxis() == 1 ? kRow : kCol;
      for (auto [src, res] : llvm::zip(reduce.getSrcs(), reduce.getResults()))
        if (get(src) == kAcc || get(res) == l) {
          set(src, kAcc, op);
          set(res, l, op);
        }
      return;
    }
    if (isa<tt::SplatOp, tt::MakeRangeOp, arith::ConstantOp>(op)) {
      // No layout of their own: they are materialized in whatever layout
      // their users need (a constant used twice must agree).
      SmallVector<Value> tied{op->getResult(0)};
      return tie(tied, op);
    }
    if (isConversion(op)) {
      Value src = op->getOperand(0), res = op->getResult(0);
      if (get(res) == kAReg || feedsDotA(res)) {
        set(res, kAReg, op);
        set(src, kAcc, op);
        return;
      }
      return tie({src, res}, op);
    }
    if (isElementwise(op)) {
      SmallVector<Value> tiles;
      for (Value v : op->getOperands())
        if (isTile(v))
          tiles.push_back(v);
      for (Value v : op->getResults())
        if (isTile(v))
          tiles.push_back(v);
      return tie(tiles, op);
    }
  }

  StringRef nameOf(Value v) const {
    if (!isTile(v))
      return "";
    StringRef l = get(v);
    return l.empty() ? StringRef(kBlocked) : l;
  }

  void annotate() {
    Builder b(func.getContext());
    func.walk([&](Operation *op) {
      if (isa<tt::ReduceOp>(op->getParentOp()))
        return;
      if (llvm::any_of(op->getResults(), isTile)) {
        SmallVector<Attribute> names;
        for (Value v : op->getResults())
          names.push_back(b.getStringAttr(nameOf(v)));
        op->setAttr("tawa.layouts", b.getArrayAttr(names));
      }
      if (auto forOp = dyn_cast<scf::ForOp>(op)) {
        SmallVector<Attribute> names;
        for (Value v : forOp.getRegionIterArgs())
          names.push_back(b.getStringAttr(nameOf(v)));
        op->setAttr("tawa.iter_arg_layouts", b.getArrayAttr(names));
      }
    });
  }

  tt::FuncOp func;
  llvm::DenseMap<Value, StringRef> layout;
  bool changed = false;
  LogicalResult status = success();
};

struct LayoutAssignment
    : public tawa::impl::LayoutAssignmentBase<LayoutAssignment> {
  void runOnOperation() override {
    if (getOperation().isExternal())
      return;
    Solver solver(getOperation());
    if (failed(solver.run()))
      signalPassFailure();
  }
};

} // namespace
