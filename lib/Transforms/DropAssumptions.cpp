//===- DropAssumptions.cpp - tl.assume's hints removed --------------------===//
//
// Triton lowers `tl.assume(cond)` to `llvm.intr.assume %cond`: a promise to
// LLVM's optimizer (e.g. that a stride is positive), with no effect of its
// own. tawa's passes do not use these promises, so the ops go before the
// supported-subset check, together with the comparisons that only they read.
//
//===----------------------------------------------------------------------===//

#include "tawa/Transforms/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace tawa {
#define GEN_PASS_DEF_DROPASSUMPTIONS
#include "tawa/Transforms/Passes.h.inc"
} // namespace tawa

using namespace mlir;

namespace {

struct DropAssumptions
    : public tawa::impl::DropAssumptionsBase<DropAssumptions> {
  void runOnOperation() override {
    SmallVector<LLVM::AssumeOp> assumes;
    getOperation().walk([&](LLVM::AssumeOp op) { assumes.push_back(op); });
    for (LLVM::AssumeOp op : assumes) {
      SmallVector<Operation *> work;
      for (Value v : op->getOperands())
        if (Operation *def = v.getDefiningOp())
          work.push_back(def);
      op.erase();
      // The condition's computation, where nothing else reads it.
      while (!work.empty()) {
        Operation *def = work.pop_back_val();
        if (!def->use_empty() || !isPure(def) || def->getNumRegions())
          continue;
        for (Value v : def->getOperands())
          if (Operation *d = v.getDefiningOp())
            work.push_back(d);
        def->erase();
      }
    }
  }
};

} // namespace
