//===- SupportedSubsetCheck.cpp - report what tawa cannot compile yet -----===//
//
// tawa compiles the GEMM and attention family of Triton kernels: TMA
// descriptor loads feeding tt.dot inside scf loops, element-wise epilogues,
// row reductions, pointer loads of small vectors and TMA stores. Everything
// else is reported here, at the user's line, and compilation stops.
//
//===----------------------------------------------------------------------===//

#include "tawa/Transforms/Passes.h"
#include "tawa/Transforms/SourceLocation.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/TypeSwitch.h"

namespace tawa {
#define GEN_PASS_DEF_SUPPORTEDSUBSETCHECK
#include "tawa/Transforms/Passes.h.inc"
} // namespace tawa

using namespace mlir;
using namespace tawa;

namespace {

/// Element types a register or shared-memory tile may have.
bool isSupportedElementType(Type t) {
  if (auto ptr = dyn_cast<tt::PointerType>(t))
    return isSupportedElementType(ptr.getPointeeType());
  return t.isF32() || t.isF16() || t.isBF16() ||
         isa<Float8E4M3FNType, Float8E5M2Type>(t) || t.isInteger(1) ||
         t.isInteger(8) || t.isInteger(16) || t.isInteger(32) ||
         t.isInteger(64) || t.isIndex();
}

/// Why `type` is outside the subset, or "" if it is inside.
std::string checkType(Type type) {
  if (auto tensor = dyn_cast<RankedTensorType>(type)) {
    if (tensor.getRank() > 3)
      return "tensors of rank greater than 3 are not supported";
    if (!isSupportedElementType(tensor.getElementType())) {
      std::string s;
      llvm::raw_string_ostream os(s);
      os << "tensors of " << tensor.getElementType() << " are not supported";
      return s;
    }
    return "";
  }
  if (isa<tt::TensorDescType>(type))
    return "";
  if (isa<ShapedType>(type)) {
    std::string s;
    llvm::raw_string_ostream os(s);
    os << "values of type " << type << " are not supported";
    return s;
  }
  if (!isSupportedElementType(type)) {
    std::string s;
    llvm::raw_string_ostream os(s);
    os << "values of type " << type << " are not supported";
    return s;
  }
  return "";
}

/// The combiners of tt.reduce that lower to quad-shuffle row reductions.
bool isSupportedCombiner(tt::ReduceOp reduce) {
  Block &block = reduce.getCombineOp().front();
  if (reduce.getSrcs().size() != 1 || block.getOperations().size() != 2)
    return false;
  Operation &combiner = block.front();
  return isa<arith::AddFOp, arith::MaxNumFOp, arith::MaximumFOp,
             arith::MinNumFOp, arith::MinimumFOp, arith::AddIOp, arith::MaxSIOp,
             arith::MinSIOp>(combiner);
}

bool isSupportedDotType(Type t) {
  return t.isF16() || t.isBF16() || isa<Float8E4M3FNType, Float8E5M2Type>(t);
}

/// Why `op` is outside the subset, or "" if it is inside.
std::string checkOp(Operation *op) {
  if (!op->isRegistered())
    return "tawa has no definition of this operation";
  return llvm::TypeSwitch<Operation *, std::string>(op)
      // Triton ops tawa lowers.
      .Case<tt::FuncOp>([](tt::FuncOp func) -> std::string {
        if (func.isExternal())
          return "external function declarations are not supported";
        if (!func.getResultTypes().empty())
          return "functions that return values are not supported (only kernels "
                 "are compiled)";
        return "";
      })
      .Case<tt::ReturnOp, tt::GetProgramIdOp, tt::MakeRangeOp, tt::SplatOp,
            tt::BroadcastOp, tt::ExpandDimsOp, tt::TransOp, tt::FpToFpOp,
            tt::AddPtrOp, tt::IntToPtrOp, tt::LoadOp, tt::StoreOp,
            tt::MakeTensorDescOp, tt::DescriptorLoadOp, tt::DescriptorStoreOp,
            tt::ReduceReturnOp, tt::GetNumProgramsOp>(
          [](Operation *) { return std::string(); })
      .Case<tt::DotOp>([](tt::DotOp dot) -> std::string {
        auto a = cast<RankedTensorType>(dot.getA().getType());
        auto b = cast<RankedTensorType>(dot.getB().getType());
        auto d = cast<RankedTensorType>(dot.getD().getType());
        if (a.getRank() != 2)
          return "batched tt.dot (rank-3 operands) is not supported";
        if (!isSupportedDotType(a.getElementType()) ||
            !isSupportedDotType(b.getElementType()))
          return "tt.dot is supported on f16, bf16, f8E4M3FN and f8E5M2 "
                 "operands only (wgmma's types)";
        if (!d.getElementType().isF32())
          return "tt.dot needs an f32 accumulator";
        if (a.getDimSize(0) % 64 != 0 || b.getDimSize(1) % 8 != 0 ||
            b.getDimSize(1) > 256)
          return "wgmma cannot cover this tt.dot tile (M must be a multiple "
                 "of 64, N a multiple of 8 up to 256)";
        return "";
      })
      .Case<tt::ReduceOp>([](tt::ReduceOp reduce) -> std::string {
        if (!isSupportedCombiner(reduce))
          return "tt.reduce is supported with a single add, max or min "
                 "combiner only";
        return "";
      })
      .Case<tt::CallOp>(
          [](Operation *) { return "calls are not supported (inline them)"; })
      .Case<tt::AtomicRMWOp, tt::AtomicCASOp>(
          [](Operation *) { return "atomic operations are not supported"; })
      .Case<tt::ScanOp, tt::ScanReturnOp>(
          [](Operation *) { return "scans are not supported"; })
      .Case<tt::ReshapeOp, tt::CatOp, tt::JoinOp, tt::SplitOp, tt::UnsplatOp>(
          [](Operation *) { return "reshaping tensors is not supported"; })
      .Case<tt::BitcastOp, tt::PtrToIntOp, tt::PreciseSqrtOp, tt::PreciseDivFOp,
            tt::MulhiUIOp>([](Operation *) {
        return "tawa's code generator does not handle it";
      })
      // Structured control flow and scalar/element-wise arithmetic.
      .Case<scf::ForOp, scf::YieldOp, scf::WhileOp, scf::ConditionOp,
            scf::IfOp>([](Operation *) { return std::string(); })
      .Default([](Operation *op) -> std::string {
        Dialect *dialect = op->getDialect();
        if (dialect && (isa<arith::ArithDialect>(dialect) ||
                        isa<math::MathDialect>(dialect)))
          return "";
        if (isa<ModuleOp>(op))
          return "";
        return "tawa's code generator does not handle it";
      });
}

/// Whether `result` (a tt.dot's) can affect memory: some store, or the
/// control flow around one, depends on it through the ops, loop-carried
/// values and branch results that use it. A product nothing stores leaves
/// the partitioning without a consumer for its tiles.
bool reachesMemory(Value result) {
  SmallVector<Value> worklist{result};
  llvm::DenseSet<Value> seen{result};
  auto push = [&](Value v) {
    if (seen.insert(v).second)
      worklist.push_back(v);
  };
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    for (OpOperand &use : v.getUses()) {
      Operation *owner = use.getOwner();
      unsigned i = use.getOperandNumber();
      if (auto yield = dyn_cast<scf::YieldOp>(owner)) {
        Operation *parent = yield->getParentOp();
        if (auto forOp = dyn_cast<scf::ForOp>(parent)) {
          push(forOp.getResult(i));
          push(forOp.getRegionIterArgs()[i]);
        } else if (auto whileOp = dyn_cast<scf::WhileOp>(parent)) {
          push(whileOp.getBeforeArguments()[i]);
        } else {
          push(parent->getResult(i));
        }
      } else if (auto cond = dyn_cast<scf::ConditionOp>(owner)) {
        if (i == 0)
          return true; // decides whether the loop (and its stores) goes on
        auto whileOp = cast<scf::WhileOp>(cond->getParentOp());
        push(whileOp.getResult(i - 1));
        push(whileOp.getAfterArguments()[i - 1]);
      } else if (auto forOp = dyn_cast<scf::ForOp>(owner)) {
        if (i < 3)
          return true; // a bound or step
        push(forOp.getResult(i - 3));
        push(forOp.getRegionIterArgs()[i - 3]);
      } else if (auto whileOp = dyn_cast<scf::WhileOp>(owner)) {
        push(whileOp.getBeforeArguments()[i]);
      } else if (isa<scf::IfOp>(owner)) {
        return true; // the condition of what the branches store
      } else if (isa<tt::ReduceReturnOp>(owner)) {
        for (Value r : owner->getParentOp()->getResults())
          push(r);
      } else if (!isMemoryEffectFree(owner)) {
        return true; // a store, or anything else that touches memory
      } else {
        for (Value r : owner->getResults())
          push(r);
      }
    }
  }
  return false;
}

struct SupportedSubsetCheck
    : public tawa::impl::SupportedSubsetCheckBase<SupportedSubsetCheck> {
  void runOnOperation() override {
    unsigned problems = 0;
    auto report = [&](Operation *op, StringRef what, StringRef why) {
      ++problems;
      Location userLoc = getUserLocation(op->getLoc());
      std::string name = getValueName(op->getLoc());
      InFlightDiagnostic diag = emitError(userLoc);
      diag << "tawa cannot compile " << what << " '" << op->getName() << "'";
      if (!name.empty())
        diag << " (defining '" << name << "')";
      diag << " yet: " << why;
    };
    // Pre-order, so that an unsupported op with regions (a tt.scan and its
    // combiner) is one construct with one error, not one per nested op.
    getOperation()->walk<WalkOrder::PreOrder>([&](Operation *op) {
      std::string why = checkOp(op);
      if (!why.empty()) {
        report(op, "operation", why);
        return isa<tt::FuncOp>(op) ? WalkResult::advance() : WalkResult::skip();
      }
      for (Type type : op->getResultTypes()) {
        std::string typeWhy = checkType(type);
        if (!typeWhy.empty()) {
          report(op, "the result of", typeWhy);
          return WalkResult::advance();
        }
      }
      for (Region &region : op->getRegions())
        for (Block &block : region)
          for (BlockArgument arg : block.getArguments()) {
            std::string argWhy = checkType(arg.getType());
            if (!argWhy.empty()) {
              report(op, "an argument of", argWhy);
              return WalkResult::advance();
            }
          }
      return WalkResult::advance();
    });
    getOperation()->walk([&](tt::DotOp dot) {
      // Only products inside the subset otherwise: one error per construct.
      if (checkOp(dot).empty() && !reachesMemory(dot.getD()))
        report(dot, "operation",
               "its result reaches no store (directly, through the loops "
               "that carry it, or as a condition of one): there is nothing "
               "for the consumer warp groups to compute");
    });
    if (problems) {
      mlir::emitError(getOperation().getLoc())
          << problems << " construct" << (problems == 1 ? "" : "s")
          << " outside the subset tawa compiles (see the errors above)";
      signalPassFailure();
    }
  }
};

} // namespace
