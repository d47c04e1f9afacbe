//===- ProgramPairing.cpp - two programs of adjacent x or y run as one ---===//
//
// Before (program x):              After (pair q: programs 2q and 2q + 1):
//   a = load A[x * BM, k]            a0 = load A[2q * BM, k]
//   b = load B[y * BN, k]            a1 = load A[(2q + 1) * BM, k]
//   acc = dot(a, b, acc)             b  = load B[y * BN, k]       (once)
//   store C[x * BM, y * BN], acc     acc0 = dot(a0, b, acc0)
//                                    acc1 = dot(a1, b, acc1)
//                                    store C[2q * BM, ...], acc0
//                                    if (2q + 1 < nx) store C[(2q+1) * BM, ...]
//
// What the second program computes is the first's with x + 1: operations
// that do not depend on x (directly or through the loop-carried values that
// do) are shared, the others cloned; the two K loops become one. The
// persistent loop (-tawa-persistent-programs, which must follow) walks the
// pairs. A pair shares every tile whose coordinates do not depend on x, so
// the bytes per flop fall as with a tile twice as tall. Along y it is the
// same with the roles of A and B swapped; there the two products share A,
// and the CUDA emitter issues them as one wgmma of twice the width.
//
//===----------------------------------------------------------------------===//

#include "tawa/Transforms/Partition.h"
#include "tawa/Transforms/Passes.h"
#include "tawa/Transforms/SourceLocation.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallBitVector.h"

namespace tawa {
#define GEN_PASS_DEF_PROGRAMPAIRING
#include "tawa/Transforms/Passes.h.inc"
} // namespace tawa

using namespace mlir;
using namespace tawa;

namespace {

bool writesMemory(Operation *op) {
  WalkResult r = op->walk([](Operation *nested) {
    auto effects = dyn_cast<MemoryEffectOpInterface>(nested);
    if (!effects) {
      // Unknown effects: only ops whose regions hold the effects (scf,
      // tt.reduce) are known to be harmless by themselves.
      return nested->hasTrait<OpTrait::HasRecursiveMemoryEffects>() ||
                     nested->getNumRegions() == 0
                 ? WalkResult::advance()
                 : WalkResult::interrupt();
    }
    return effects.hasEffect<MemoryEffects::Write>() ? WalkResult::interrupt()
                                                     : WalkResult::advance();
  });
  return r.wasInterrupted();
}

/// The values the second program computes differently from the first.
struct Varying {
  llvm::DenseSet<Value> values;

  /// Whether `op` (with what its regions use from outside) reads a varying
  /// value.
  bool reads(Operation *op) const {
    WalkResult r = op->walk([&](Operation *nested) {
      for (Value operand : nested->getOperands()) {
        Operation *def = operand.getDefiningOp();
        bool inside =
            def ? op->isAncestor(def)
                : op->isAncestor(operand.getParentRegion()->getParentOp());
        if (!inside && values.contains(operand))
          return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    return r.wasInterrupted();
  }
};

struct ProgramPairing : public tawa::impl::ProgramPairingBase<ProgramPairing> {
  using ProgramPairingBase::ProgramPairingBase;

  /// The axis being paired and its name in messages.
  tt::ProgramIDDim dim = tt::ProgramIDDim::X;
  std::string pidName = "program_id(0)";
  /// auto: failures are not errors (the kernel is left as written).
  bool quiet = false;

  void runOnOperation() override {
    tt::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    if (axis != "x" && axis != "y" && axis != "auto") {
      func.emitError("tawa-program-pairing: axis must be x, y or auto, not '")
          << axis << "'";
      return signalPassFailure();
    }
    if (axis != "x") {
      dim = tt::ProgramIDDim::Y;
      pidName = "program_id(1)";
    }
    if (axis == "auto") {
      if (!productsFuseAlongY(func))
        return;
      // Pairs on a copy: where the kernel cannot be paired, it stays as the
      // user wrote it.
      quiet = true;
      auto copy = cast<tt::FuncOp>(func->clone()); // not inserted anywhere
      bool ok = succeeded(pair(copy));
      if (ok) {
        func.getBody().takeBody(copy.getBody());
        func->setAttr(kPairedProgramsAttr, copy->getAttr(kPairedProgramsAttr));
      }
      copy.erase();
      return;
    }
    if (failed(pair(func)))
      signalPassFailure();
  }

  LogicalResult fail(Operation *at, const Twine &why) {
    if (quiet)
      return failure();
    return emitError(getUserLocation(at->getLoc()))
           << "cannot pair programs: " << why;
  }

  /// Whether pairing along y would give two products that share A and
  /// read B tiles of their own (a TMA load depending on program_id(y), or
  /// its transpose), with accumulators of 128 rows and 64 or 128 columns
  /// each: the CUDA emitter then issues them as one wgmma of twice the
  /// width.
  static bool productsFuseAlongY(tt::FuncOp func) {
    if (!func.getBody().hasOneBlock())
      return false;
    llvm::DenseSet<Value> onY;
    func.walk([&](Operation *op) {
      bool reads = false;
      if (auto pid = dyn_cast<tt::GetProgramIdOp>(op))
        reads = pid.getAxis() == tt::ProgramIDDim::Y;
      for (Value operand : op->getOperands())
        reads |= onY.contains(operand);
      if (reads)
        for (Value r : op->getResults())
          onY.insert(r);
    });
    SmallVector<tt::DotOp> dots;
    for (auto forOp : func.getBody().front().getOps<scf::ForOp>())
      forOp.walk([&](tt::DotOp dot) { dots.push_back(dot); });
    if (dots.size() != 1)
      return false;
    tt::DotOp dot = dots.front();
    auto type = cast<RankedTensorType>(dot.getType());
    // 128 rows: two consumer groups of one 64-row fragment each.
    if (type.getRank() != 2 || type.getShape()[0] != 128 ||
        (type.getShape()[1] != 64 && type.getShape()[1] != 128))
      return false;
    auto a = dot.getA().getDefiningOp<tt::DescriptorLoadOp>();
    auto trans = dot.getB().getDefiningOp<tt::TransOp>();
    auto b = trans ? trans.getSrc().getDefiningOp<tt::DescriptorLoadOp>()
                   : dot.getB().getDefiningOp<tt::DescriptorLoadOp>();
    return a && b && !onY.contains(a.getResult()) &&
           onY.contains(b.getResult());
  }

  LogicalResult pair(tt::FuncOp func) {
    if (!func.getBody().hasOneBlock())
      return fail(func, "the kernel body has more than one block");
    Block &body = func.getBody().front();
    if (walksProgramsItself(func))
      return fail(func, "the kernel walks program ids itself");
    SmallVector<tt::GetProgramIdOp> pids;
    func.walk([&](tt::GetProgramIdOp pid) {
      if (pid.getAxis() == dim)
        pids.push_back(pid);
    });
    if (pids.empty())
      return fail(func, "the kernel does not read " + pidName);

    // The K loop: the one top-level loop with a product.
    scf::ForOp kLoop;
    for (auto forOp : body.getOps<scf::ForOp>()) {
      if (!forOp->walk([](tt::DotOp) { return WalkResult::interrupt(); })
               .wasInterrupted())
        continue;
      if (kLoop)
        return fail(forOp, "the kernel has more than one top-level loop "
                           "with a tt.dot");
      kLoop = forOp;
    }
    if (!kLoop)
      return fail(func, "the kernel has no top-level loop with a tt.dot");

    OpBuilder b(&body, body.begin());
    Location loc = func.getLoc();
    auto axisAttr = tt::ProgramIDDimAttr::get(func.getContext(), dim);
    Type i32 = b.getI32Type();
    Value q = tt::GetProgramIdOp::create(b, loc, i32, axisAttr);
    Value two = arith::ConstantIntOp::create(b, loc, 2, 32);
    Value one = arith::ConstantIntOp::create(b, loc, 1, 32);
    Value x0 = arith::MulIOp::create(b, loc, q, two);
    Value x1 = arith::AddIOp::create(b, loc, x0, one);
    Value nx = tt::GetNumProgramsOp::create(b, loc, i32, axisAttr);
    Value second =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, x1, nx);
    for (tt::GetProgramIdOp pid : pids) {
      pid.getResult().replaceAllUsesWith(x0);
      pid.erase();
    }
    Operation *firstOriginal = second.getDefiningOp()->getNextNode();

    Varying varying;
    varying.values.insert(x0);
    IRMapping copy; // the second program's values
    copy.map(x0, x1);

    // Checks before anything else changes.
    {
      Varying probe = varying;
      for (Operation *op = firstOriginal; op != kLoop; op = op->getNextNode()) {
        if (writesMemory(op))
          return fail(op, "an operation before the K loop writes memory");
        if (probe.reads(op))
          for (Value r : op->getResults())
            probe.values.insert(r);
      }
      for (Value bound :
           {kLoop.getLowerBound(), kLoop.getUpperBound(), kLoop.getStep()})
        if (probe.values.contains(bound))
          return fail(kLoop, "the K loop's bounds depend on " + pidName);
      if (writesMemory(kLoop))
        return fail(kLoop, "the K loop writes memory");
      WalkResult pointerLoad =
          kLoop.walk([&](tt::LoadOp load) { return WalkResult::interrupt(); });
      if (pointerLoad.wasInterrupted())
        return fail(kLoop, "the K loop loads through pointers (a second "
                           "program past the grid could read out of bounds)");
      for (Operation *op = kLoop->getNextNode(); op != body.getTerminator();
           op = op->getNextNode())
        if (op->walk([](tt::DescriptorLoadOp) {
                return WalkResult::interrupt();
              }).wasInterrupted())
          return fail(op, "a TMA load follows the K loop");
    }

    // Before the K loop: clone what depends on x right after the original.
    for (Operation *op = firstOriginal; op != kLoop;) {
      Operation *next = op->getNextNode();
      if (varying.reads(op)) {
        OpBuilder after(op->getContext());
        after.setInsertionPointAfter(op);
        after.clone(*op, copy);
        for (Value r : op->getResults())
          varying.values.insert(r);
      }
      op = next;
    }

    FailureOr<scf::ForOp> fusedLoop = fuseKLoop(kLoop, varying, copy);
    if (failed(fusedLoop))
      return failure();

    // After it: the second program's epilogue, where it is a program.
    Operation *terminator = body.getTerminator();
    SmallVector<Operation *> epilogue;
    bool written = false;
    for (Operation *op = (*fusedLoop)->getNextNode(); op != terminator;
         op = op->getNextNode()) {
      bool writes = writesMemory(op);
      if (varying.reads(op)) {
        epilogue.push_back(op);
        for (Value r : op->getResults())
          varying.values.insert(r);
      } else if (writes) {
        // Once for both programs, it would move before the second
        // program's earlier stores.
        return fail(op,
                    "a store after the K loop does not depend on " + pidName);
      } else if (written && !isMemoryEffectFree(op)) {
        // Shared, it would read before the second program's stores.
        return fail(op, "a load after a store does not depend on " + pidName);
      }
      written |= writes;
    }
    OpBuilder end(terminator);
    auto ifOp = scf::IfOp::create(end, loc, TypeRange{}, second,
                                  /*withElseRegion=*/false);
    OpBuilder thenB = OpBuilder::atBlockBegin(ifOp.thenBlock());
    for (Operation *op : epilogue)
      thenB.clone(*op, copy);
    func->setAttr(kPairedProgramsAttr,
                  b.getI32IntegerAttr(static_cast<int32_t>(dim)));
    return success();
  }

  /// Replaces `loop` by one loop that runs both programs' iterations: the
  /// loop-carried values the second program computes differently get a
  /// second iteration argument; the body's ops that read one are cloned.
  FailureOr<scf::ForOp> fuseKLoop(scf::ForOp loop, Varying &varying,
                                  IRMapping &copy) {
    Block *body = loop.getBody();
    auto yield = cast<scf::YieldOp>(body->getTerminator());
    unsigned n = loop.getNumRegionIterArgs();
    // Which iteration arguments vary: a fixed point over the body.
    llvm::SmallBitVector argVaries(n);
    for (unsigned i = 0; i < n; ++i)
      argVaries[i] = varying.values.contains(loop.getInitArgs()[i]);
    Varying settled;
    for (bool changed = true; changed;) {
      changed = false;
      Varying inside = varying;
      for (unsigned i = 0; i < n; ++i)
        if (argVaries[i])
          inside.values.insert(loop.getRegionIterArgs()[i]);
      for (Operation &op : body->without_terminator())
        if (inside.reads(&op))
          for (Value r : op.getResults())
            inside.values.insert(r);
      for (unsigned i = 0; i < n; ++i)
        if (!argVaries[i] && inside.values.contains(yield.getOperand(i))) {
          argVaries[i] = true;
          changed = true;
        }
      settled = inside;
    }
    bool sharesTile = llvm::any_of(
        body->getOps<tt::DescriptorLoadOp>(), [&](tt::DescriptorLoadOp load) {
          return !settled.values.contains(load.getResult());
        });
    if (!sharesTile)
      return fail(loop, "every tile the K loop loads depends on " + pidName +
                            ": the pair would share none");
    SmallVector<unsigned> second;
    for (unsigned i = 0; i < n; ++i)
      if (argVaries[i])
        second.push_back(i);
    if (second.empty())
      return fail(loop, "nothing the K loop carries depends on " + pidName +
                            ": pairing would share everything");

    SmallVector<Value> inits(loop.getInitArgs());
    for (unsigned i : second)
      inits.push_back(copy.lookupOrDefault(loop.getInitArgs()[i]));
    OpBuilder b(loop);
    auto fused =
        scf::ForOp::create(b, loop.getLoc(), loop.getLowerBound(),
                           loop.getUpperBound(), loop.getStep(), inits);
    for (NamedAttribute attr : loop->getDiscardableAttrs())
      fused->setAttr(attr.getName(), attr.getValue());
    Block *fusedBody = fused.getBody();
    if (!fusedBody->empty())
      fusedBody->getTerminator()->erase();

    IRMapping first; // the first program's values inside the new body
    first.map(loop.getInductionVar(), fused.getInductionVar());
    copy.map(loop.getInductionVar(), fused.getInductionVar());
    for (unsigned i = 0; i < n; ++i) {
      first.map(loop.getRegionIterArgs()[i], fused.getRegionIterArgs()[i]);
      copy.map(loop.getRegionIterArgs()[i], fused.getRegionIterArgs()[i]);
    }
    for (auto [k, i] : llvm::enumerate(second))
      copy.map(loop.getRegionIterArgs()[i], fused.getRegionIterArgs()[n + k]);
    OpBuilder fb = OpBuilder::atBlockEnd(fusedBody);
    for (Operation &op : body->without_terminator()) {
      Operation *one = fb.clone(op, first);
      // `settled` holds every value of the body the second program computes
      // differently (the fixed point above).
      if (settled.reads(&op)) {
        fb.clone(op, copy);
      } else {
        for (auto [r, c] : llvm::zip(op.getResults(), one->getResults()))
          copy.map(r, c);
      }
    }
    SmallVector<Value> yields;
    for (Value v : yield.getOperands())
      yields.push_back(first.lookupOrDefault(v));
    for (unsigned i : second)
      yields.push_back(copy.lookupOrDefault(yield.getOperand(i)));
    scf::YieldOp::create(fb, yield.getLoc(), yields);

    for (unsigned i = 0; i < n; ++i)
      loop.getResult(i).replaceAllUsesWith(fused.getResult(i));
    // The epilogue now reads the fused loop's results.
    for (auto [k, i] : llvm::enumerate(second)) {
      copy.map(fused.getResult(i), fused.getResult(n + k));
      varying.values.insert(fused.getResult(i));
    }
    loop.erase();
    return fused;
  }
};

} // namespace
