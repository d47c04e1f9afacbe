//===- KernelSummary.cpp - a readable account of a TTIR kernel ------------===//

#include "tawa/Analysis/KernelSummary.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "tawa/Dialect/TT/TTDialect.h"
#include "tawa/Transforms/SourceLocation.h"

using namespace mlir;
using namespace tawa;

static std::string typeString(Type t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << t;
  return s;
}

static std::string where(Operation *op) {
  Location loc = getUserLocation(op->getLoc());
  if (auto file = dyn_cast<FileLineColLoc>(loc))
    return (file.getFilename().getValue() + ":" + Twine(file.getLine())).str();
  return "?";
}

static void describeOp(Operation *op, raw_ostream &os, unsigned indent) {
  std::string pad(indent, ' ');
  if (auto load = dyn_cast<tt::DescriptorLoadOp>(op)) {
    os << pad << "TMA load   " << typeString(load.getType()) << "  ("
       << where(op) << ")\n";
  } else if (auto store = dyn_cast<tt::DescriptorStoreOp>(op)) {
    os << pad << "TMA store  " << typeString(store.getSrc().getType()) << "  ("
       << where(op) << ")\n";
  } else if (auto dot = dyn_cast<tt::DotOp>(op)) {
    auto a = cast<RankedTensorType>(dot.getA().getType());
    auto b = cast<RankedTensorType>(dot.getB().getType());
    auto d = cast<RankedTensorType>(dot.getD().getType());
    int64_t r = a.getRank();
    os << pad << "dot        M=" << a.getDimSize(r - 2)
       << " N=" << b.getDimSize(r - 1) << " K=" << a.getDimSize(r - 1) << "  "
       << a.getElementType() << " x " << b.getElementType() << " -> "
       << d.getElementType() << "  (" << where(op) << ")\n";
  } else if (auto reduce = dyn_cast<tt::ReduceOp>(op)) {
    Operation &combiner = reduce.getCombineOp().front().front();
    os << pad << "reduce     " << combiner.getName() << " over axis "
       << reduce.getAxis() << " of "
       << typeString(reduce.getSrcs()[0].getType()) << "  (" << where(op)
       << ")\n";
  } else if (isa<tt::LoadOp>(op)) {
    os << pad << "load       " << typeString(op->getResult(0).getType())
       << "  (" << where(op) << ")\n";
  } else if (isa<tt::StoreOp>(op)) {
    os << pad << "store      " << typeString(op->getOperand(1).getType())
       << "  (" << where(op) << ")\n";
  }
}

static void describeRegion(Region &region, raw_ostream &os, unsigned indent);

static void describeLoop(Operation *loop, raw_ostream &os, unsigned indent) {
  std::string pad(indent, ' ');
  if (auto forOp = dyn_cast<scf::ForOp>(loop)) {
    os << pad << "loop (scf.for, " << forOp.getNumRegionIterArgs()
       << " loop-carried value"
       << (forOp.getNumRegionIterArgs() == 1 ? "" : "s") << ")  ("
       << where(loop) << ")\n";
    describeRegion(forOp.getRegion(), os, indent + 2);
  } else if (auto whileOp = dyn_cast<scf::WhileOp>(loop)) {
    os << pad << "loop (scf.while)  (" << where(loop) << ")\n";
    describeRegion(whileOp.getAfter(), os, indent + 2);
  }
}

static void describeRegion(Region &region, raw_ostream &os, unsigned indent) {
  for (Block &block : region)
    for (Operation &op : block) {
      if (isa<scf::ForOp, scf::WhileOp>(op)) {
        describeLoop(&op, os, indent);
      } else if (auto ifOp = dyn_cast<scf::IfOp>(op)) {
        describeRegion(ifOp.getThenRegion(), os, indent);
        describeRegion(ifOp.getElseRegion(), os, indent);
      } else {
        describeOp(&op, os, indent);
      }
    }
}

void tawa::printKernelSummary(ModuleOp module, raw_ostream &os) {
  module.walk([&](tt::FuncOp func) {
    os << "kernel @" << func.getName() << "  (" << where(func) << ")\n";
    os << "  arguments:\n";
    // Triton passes a host tensor descriptor of rank r as the descriptor
    // followed by its r sizes (i32) and r strides (i64), all with its name.
    std::string descName;
    int64_t descRank = 0, expanded = 0;
    for (auto [i, arg] : llvm::enumerate(func.getArguments())) {
      std::string name = getValueName(arg.getLoc());
      if (name.empty())
        name = "#" + std::to_string(i);
      if (auto desc = dyn_cast<tt::TensorDescType>(arg.getType())) {
        auto block = desc.getBlockType();
        os << "    " << name << ": TMA descriptor, block ";
        llvm::interleave(block.getShape(), os, "x");
        os << " of " << block.getElementType() << "\n";
        descName = name;
        descRank = block.getRank();
        expanded = 0;
        continue;
      }
      if (!descName.empty() && name == descName && expanded < 2 * descRank) {
        bool isSize = expanded < descRank;
        os << "    " << name << (isSize ? ".size[" : ".stride[")
           << (isSize ? expanded : expanded - descRank)
           << "]: " << arg.getType() << "\n";
        ++expanded;
        continue;
      }
      descName.clear();
      os << "    " << name << ": " << arg.getType() << "\n";
    }
    llvm::SmallVector<StringRef> axes;
    func.walk([&](tt::GetProgramIdOp pid) {
      StringRef axis = tt::stringifyProgramIDDim(pid.getAxis());
      if (!llvm::is_contained(axes, axis))
        axes.push_back(axis);
    });
    os << "  grid axes read: ";
    if (axes.empty())
      os << "none";
    llvm::interleaveComma(axes, os);
    os << "\n  body:\n";
    describeRegion(func.getBody(), os, 4);
  });
}
