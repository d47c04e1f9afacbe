//===- PersistentPrograms.cpp - one CTA per SM walking the program grid ---===//
//
// Before:                         After:
//   tt.func @k(args) {              tt.func @k(args, %nx, %ny, %nz) {
//     %x = tt.get_program_id x        %cta = tt.get_program_id x
//     body(%x)                        %ctas = tt.get_num_programs x
//   }                                 scf.for %t = %cta to %nx*%ny*%nz step
//   %ctas {
//                                       %x, %y, %z = t's coordinates
//                                       body(%x)
//                                     }
//
// The loop makes the kernel persistent without changing what any program
// computes: every program index below nx * ny * nz runs exactly once. Where
// the kernel reads program_id(y), each z plane is walked kGroupX x values at
// a time (Triton's grouped order, for L2 reuse), else in launch order; where
// the loads inside the kernel's loops depend on y but not on x (attention's
// K and V blocks), x fastest, so that the CTAs running at once share them.
// Where a program's work grows with its x index (a loop bound such as causal
// attention's (pid_m + 1) * BM), x is walked from the largest down.
//
//===----------------------------------------------------------------------===//

#include "tawa/Transforms/Partition.h"
#include "tawa/Transforms/Passes.h"
#include "tawa/Transforms/TileOrder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <functional>

namespace tawa {
#define GEN_PASS_DEF_PERSISTENTPROGRAMS
#include "tawa/Transforms/Passes.h.inc"
} // namespace tawa

using namespace mlir;
using namespace tawa;

namespace {

/// derivesFromProgramId with the values already visited.
bool readsProgramId(Value v, llvm::DenseSet<Value> &seen) {
  if (!seen.insert(v).second)
    return false;
  Operation *def = v.getDefiningOp();
  if (!def)
    return false;
  if (isa<tt::GetProgramIdOp>(def))
    return true;
  return llvm::any_of(def->getOperands(), [&](Value operand) {
    return readsProgramId(operand, seen);
  });
}

/// Whether `v` grows with `x` (strictly, through additions of values that do
/// not depend on it and multiplications by positive constants): a loop
/// bound such as a causal kernel's (pid_m + 1) * BM.
bool growsWith(Value v, Value x) {
  if (v == x)
    return true;
  Operation *def = v.getDefiningOp();
  if (!def)
    return false;
  llvm::DenseSet<Value> seen;
  auto independent = [&](Value w) {
    seen.clear();
    return w != x && !readsProgramId(w, seen);
  };
  if (auto add = dyn_cast<arith::AddIOp>(def))
    return (growsWith(add.getLhs(), x) && independent(add.getRhs())) ||
           (growsWith(add.getRhs(), x) && independent(add.getLhs()));
  if (auto mul = dyn_cast<arith::MulIOp>(def)) {
    for (auto [a, c] : {std::make_pair(mul.getLhs(), mul.getRhs()),
                        std::make_pair(mul.getRhs(), mul.getLhs())}) {
      APInt k;
      if (matchPattern(c, m_ConstantInt(&k)) && k.isStrictlyPositive() &&
          growsWith(a, x))
        return true;
    }
  }
  return false;
}

/// Whether a program's work grows with its x index: a loop whose upper
/// bound grows with program_id(0) while its lower bound does not depend on
/// it (causal attention: query block x reads key blocks 0..x).
bool workGrowsWithX(tt::FuncOp func) {
  SmallVector<Value> xs;
  func.walk([&](tt::GetProgramIdOp pid) {
    if (pid.getAxis() == tt::ProgramIDDim::X)
      xs.push_back(pid.getResult());
  });
  bool grows = false;
  func.walk([&](scf::ForOp forOp) {
    llvm::DenseSet<Value> seen;
    if (readsProgramId(forOp.getLowerBound(), seen))
      return;
    for (Value x : xs)
      grows |= growsWith(forOp.getUpperBound(), x);
  });
  return grows;
}

/// Whether `v` is computed from program_id(`axis`): through operands, and
/// through a loop's block arguments to their initial and yielded values and
/// the loop's bounds (a pointer advanced every iteration, an induction
/// variable starting at a program-dependent position).
bool readsAxis(Value v, tt::ProgramIDDim axis, llvm::DenseSet<Value> &seen) {
  if (!seen.insert(v).second)
    return false;
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    auto forOp = dyn_cast_or_null<scf::ForOp>(arg.getOwner()->getParentOp());
    if (!forOp)
      return false;
    if (arg == forOp.getInductionVar())
      return readsAxis(forOp.getLowerBound(), axis, seen) ||
             readsAxis(forOp.getStep(), axis, seen);
    unsigned i = arg.getArgNumber() - forOp.getNumInductionVars();
    return readsAxis(forOp.getInitArgs()[i], axis, seen) ||
           readsAxis(forOp.getBody()->getTerminator()->getOperand(i), axis,
                     seen);
  }
  Operation *def = v.getDefiningOp();
  if (auto pid = dyn_cast<tt::GetProgramIdOp>(def))
    return pid.getAxis() == axis;
  // A region's result: what each region yields for it.
  unsigned i = cast<OpResult>(v).getResultNumber();
  for (Region &region : def->getRegions())
    for (Block &block : region)
      if (block.mightHaveTerminator() &&
          block.getTerminator()->getNumOperands() > i &&
          readsAxis(block.getTerminator()->getOperand(i), axis, seen))
        return true;
  return llvm::any_of(def->getOperands(), [&](Value operand) {
    return readsAxis(operand, axis, seen);
  });
}

/// Whether the kernel streams data that its programs of one y share: some
/// load inside a loop reads program_id(y), and none reads program_id(x)
/// (attention's K and V blocks, indexed by the head alone; a GEMM's A and B
/// tiles depend on x and on y).
bool streamsSharedAlongX(tt::FuncOp func) {
  bool anyY = false, anyX = false, any = false;
  func.walk([&](Operation *op) {
    if (!isa<tt::DescriptorLoadOp, tt::LoadOp>(op) ||
        !op->getParentOfType<scf::ForOp>())
      return;
    any = true;
    for (Value v : op->getOperands()) {
      llvm::DenseSet<Value> seenX, seenY;
      anyX |= readsAxis(v, tt::ProgramIDDim::X, seenX);
      anyY |= readsAxis(v, tt::ProgramIDDim::Y, seenY);
    }
  });
  return any && anyY && !anyX;
}

} // namespace

bool tawa::derivesFromProgramId(Value v) {
  llvm::DenseSet<Value> seen;
  return readsProgramId(v, seen);
}

bool tawa::walksProgramsItself(Operation *func) {
  WalkResult r = func->walk([&](Operation *op) {
    // A walk over programs stores each one's results inside the loop; a loop
    // that only starts at a program-dependent position (causal attention's
    // diagonal band, from pid * BM) stores nothing.
    if (!isa<scf::ForOp, scf::WhileOp>(op) ||
        !op->walk([](Operation *inner) {
             return isa<tt::DescriptorStoreOp, tt::StoreOp>(inner)
                        ? WalkResult::interrupt()
                        : WalkResult::advance();
           }).wasInterrupted())
      return WalkResult::advance();
    SmallVector<Value> roots;
    if (auto forOp = dyn_cast<scf::ForOp>(op)) {
      roots.push_back(forOp.getLowerBound());
      llvm::append_range(roots, forOp.getInitArgs());
    } else if (auto whileOp = dyn_cast<scf::WhileOp>(op)) {
      llvm::append_range(roots, whileOp.getInits());
    }
    llvm::DenseSet<Value> seen;
    for (Value root : roots)
      if (readsProgramId(root, seen))
        return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return r.wasInterrupted();
}

namespace {

/// Clones `countOp` with the ops it is computed from before `b`'s point,
/// tt.get_num_programs read from `counts`; fails where the slice reads a
/// program id, has effects or regions, or uses a value of a nested region.
FailureOr<Value> cloneCount(OpBuilder &b, Operation *countOp,
                            ArrayRef<Value> counts) {
  Block *body = countOp->getBlock();
  SmallVector<Operation *> order;
  llvm::SmallPtrSet<Operation *, 16> seen;
  std::function<bool(Operation *)> visit = [&](Operation *op) {
    if (!seen.insert(op).second)
      return true;
    // Memory-effect free is enough (a division need not be speculatable):
    // like the original, the clone runs unconditionally at the top level.
    if (op->getBlock() != body || op->getNumRegions() ||
        !isMemoryEffectFree(op) || isa<tt::GetProgramIdOp>(op))
      return false;
    if (!isa<tt::GetNumProgramsOp>(op))
      for (Value v : op->getOperands()) {
        if (Operation *def = v.getDefiningOp()) {
          if (!visit(def))
            return false;
        } else if (cast<BlockArgument>(v).getOwner() != body) {
          return false;
        }
      }
    order.push_back(op);
    return true;
  };
  if (!visit(countOp))
    return failure();
  IRMapping mapping;
  for (Operation *op : order) {
    if (auto num = dyn_cast<tt::GetNumProgramsOp>(op)) {
      mapping.map(num.getResult(), counts[static_cast<int>(num.getAxis())]);
      continue;
    }
    b.clone(*op, mapping);
  }
  return mapping.lookup(countOp->getResult(0));
}

struct PersistentPrograms
    : public tawa::impl::PersistentProgramsBase<PersistentPrograms> {
  using PersistentProgramsBase::PersistentProgramsBase;

  void runOnOperation() override {
    tt::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    if (!func.getBody().hasOneBlock()) {
      func.emitError("a kernel body of more than one block is not supported");
      return signalPassFailure();
    }
    if (!force && walksProgramsItself(func))
      return;
    MLIRContext *ctx = &getContext();
    Block &body = func.getBody().front();
    Type i32 = IntegerType::get(ctx, 32);
    Location loc = func.getLoc();

    // The program grid, filled by the runtime (docs/METADATA.md).
    SmallVector<Value> counts;
    const char *names[3] = {"num_programs_x", "num_programs_y",
                            "num_programs_z"};
    for (int axis = 0; axis < 3; ++axis) {
      unsigned index = func.getNumArguments();
      auto attrs = DictionaryAttr::get(
          ctx, {NamedAttribute(StringAttr::get(ctx, "tawa.num_programs"),
                               IntegerAttr::get(i32, axis))});
      if (failed(func.insertArgument(
              index, i32, attrs,
              NameLoc::get(StringAttr::get(ctx, names[axis]))))) {
        func.emitError("cannot add the program-grid arguments");
        return signalPassFailure();
      }
      counts.push_back(body.getArgument(index));
    }

    // Decided before the body moves: the program ids are still the
    // kernel's own. Not with paired programs (x then indexes pairs).
    bool heavyLastX = heavyFirst && workGrowsWithX(func) &&
                      !func->hasAttr(kPairedProgramsAttr);
    bool readsY = false;
    func.walk([&](tt::GetProgramIdOp pid) {
      readsY |= pid.getAxis() == tt::ProgramIDDim::Y;
    });
    // Heavy-first keeps the grouped order: its first wave must hold the
    // largest x of many y, not every x of one.
    bool xFastest = streamOrder && readsY && !heavyLastX &&
                    !func->hasAttr(kPairedProgramsAttr) &&
                    streamsSharedAlongX(func);

    // Move the body (minus its return) into the loop, except the tensor
    // maps built from the kernel's arguments alone (with what they are
    // computed from): the same for every program, they are built once per
    // CTA instead of once per tile (the pointer-tile rewrite makes them).
    Operation *ret = body.getTerminator();
    llvm::SmallPtrSet<Operation *, 16> keep;
    for (auto desc : body.getOps<tt::MakeTensorDescOp>()) {
      SmallVector<Operation *> slice, work{desc};
      llvm::SmallPtrSet<Operation *, 16> seen;
      bool invariant = true;
      while (!work.empty() && invariant) {
        Operation *op = work.pop_back_val();
        if (!seen.insert(op).second)
          continue;
        if (op->getBlock() != &body || op->getNumRegions() || !isPure(op) ||
            isa<tt::GetProgramIdOp, tt::GetNumProgramsOp>(op)) {
          invariant = false;
          break;
        }
        slice.push_back(op);
        for (Value v : op->getOperands())
          if (Operation *def = v.getDefiningOp())
            work.push_back(def);
          else if (cast<BlockArgument>(v).getOwner() != &body)
            invariant = false;
      }
      if (invariant)
        keep.insert(slice.begin(), slice.end());
    }
    SmallVector<Operation *> ops;
    for (Operation &op : body.without_terminator())
      if (!keep.contains(&op))
        ops.push_back(&op);
    OpBuilder b(ret);
    auto dim = [&](tt::ProgramIDDim d) {
      return tt::ProgramIDDimAttr::get(ctx, d);
    };
    Value cta =
        tt::GetProgramIdOp::create(b, loc, i32, dim(tt::ProgramIDDim::X));
    Value ctas =
        tt::GetNumProgramsOp::create(b, loc, i32, dim(tt::ProgramIDDim::X));
    // Paired programs (-tawa-program-pairing): the loop walks pairs, over
    // ceil(n / 2) of them along the paired axis, while tt.get_num_programs
    // still reads the program grid.
    Value xs = counts[0], ys = counts[1];
    // A count of programs along x the kernel computed (paired tiles of a 1-D
    // tile map): its slice is cloned before the loop, the grid read from
    // the arguments above.
    Operation *countOp = nullptr;
    for (Operation &op : body.without_terminator())
      if (op.hasAttr(kProgramCountAttr))
        countOp = &op;
    if (countOp) {
      FailureOr<Value> count = cloneCount(b, countOp, counts);
      if (failed(count)) {
        countOp->emitError("the program count is not computed from the "
                           "kernel's arguments and the program grid alone");
        return signalPassFailure();
      }
      xs = *count;
    } else if (auto paired =
                   func->getAttrOfType<IntegerAttr>(kPairedProgramsAttr)) {
      Value &n = paired.getInt() == 1 ? ys : xs;
      Value one = arith::ConstantIntOp::create(b, loc, 1, 32);
      Value two = arith::ConstantIntOp::create(b, loc, 2, 32);
      n = arith::DivSIOp::create(b, loc, arith::AddIOp::create(b, loc, n, one),
                                 two);
    }
    Value xy = arith::MulIOp::create(b, loc, xs, ys);
    Value total = arith::MulIOp::create(b, loc, xy, counts[2]);
    // The grouped order's loop invariants (below).
    const int64_t kGroupX = 8;
    Value group, plane, width;
    if (readsY) {
      group = arith::ConstantIntOp::create(b, loc, kGroupX, 32);
      plane = xy;
      width = arith::MulIOp::create(b, loc, group, ys);
    }
    auto loop = scf::ForOp::create(b, loc, cta, total, ctas);
    loop->setAttr(kProgramLoopAttr, b.getUnitAttr());
    Block *loopBody = loop.getBody();
    for (Operation *op : ops)
      op->moveBefore(loopBody->getTerminator());
    OpBuilder lb = OpBuilder::atBlockBegin(loopBody);
    Value t = loop.getInductionVar();
    if (heavyLastX) {
      // Heaviest programs first, and each CTA's share balanced: CTA c takes
      // position k G + c of round k (G CTAs) in even rounds and k G + G - 1
      // - c in odd ones (a snake over the rounds, within complete rounds
      // only, so that it stays a bijection of [0, total)). With the rounds
      // sorted heaviest first, the CTA that got a round's heaviest program
      // gets the next round's lightest: max / mean work per CTA for causal
      // attention at L = 4096 (128 heads, 132 CTAs) 1.125 -> 1.029, at
      // L = 1024 1.375 -> 1.117.
      Value round = arith::DivSIOp::create(lb, loc, t, ctas);
      Value full = arith::MulIOp::create(
          lb, loc, arith::DivSIOp::create(lb, loc, total, ctas), ctas);
      Value one = arith::ConstantIntOp::create(lb, loc, 1, 32);
      Value odd = arith::CmpIOp::create(
          lb, loc, arith::CmpIPredicate::eq,
          arith::AndIOp::create(lb, loc, round, one), one);
      Value inFull =
          arith::CmpIOp::create(lb, loc, arith::CmpIPredicate::slt, t, full);
      Value mirrored = arith::AddIOp::create(
          lb, loc, arith::MulIOp::create(lb, loc, round, ctas),
          arith::SubIOp::create(
              lb, loc, arith::SubIOp::create(lb, loc, ctas, one), cta));
      t = arith::SelectOp::create(
          lb, loc, arith::AndIOp::create(lb, loc, odd, inFull), mirrored, t);
    }
    Value px, py, pz;
    if (!readsY || xFastest) {
      // Launch order, x fastest: where the loops' loads depend on y alone,
      // the CTAs of a wave run programs of a few y and share what they
      // stream (at L = 16k, attention's 128 query blocks of a head read its
      // K and V from L2 where the grouped order runs 16 heads at once).
      px = arith::RemSIOp::create(lb, loc, t, xs);
      Value rest = arith::DivSIOp::create(lb, loc, t, xs);
      py = arith::RemSIOp::create(lb, loc, rest, ys);
      pz = arith::DivSIOp::create(lb, loc, rest, ys);
    } else {
      // A 2-D grid in launch order runs all of x for each y: a wave of CTAs
      // touches every x block. Within each z plane, x is walked kGroupX at
      // a time instead (for each y, the group's x values), so that a wave
      // reuses a few blocks of each operand in L2. A bijection of the
      // plane; with one x group per plane it is the launch order.
      pz = arith::DivSIOp::create(lb, loc, t, plane);
      Value r = arith::RemSIOp::create(lb, loc, t, plane);
      std::tie(px, py) = buildGroupedOrder(lb, loc, r, xs, width, group);
    }
    // Where a program's work grows with x (causal attention), the largest
    // x go first: the longest programs start in the first wave and the
    // short ones fill the last, instead of the reverse (a tail of CTAs
    // finishing long programs while the others idle).
    if (heavyLastX) {
      Value one = arith::ConstantIntOp::create(lb, loc, 1, 32);
      px = arith::SubIOp::create(
          lb, loc, arith::SubIOp::create(lb, loc, counts[0], one), px);
    }
    Value ids[3] = {px, py, pz};

    SmallVector<Operation *> dead;
    loop.getBody()->walk([&](Operation *op) {
      if (auto pid = dyn_cast<tt::GetProgramIdOp>(op)) {
        pid.getResult().replaceAllUsesWith(
            ids[static_cast<int>(pid.getAxis())]);
        dead.push_back(op);
      } else if (auto num = dyn_cast<tt::GetNumProgramsOp>(op)) {
        num.getResult().replaceAllUsesWith(
            counts[static_cast<int>(num.getAxis())]);
        dead.push_back(op);
      }
    });
    for (Operation *op : dead)
      op->erase();
  }
};

} // namespace
