//===- KernelSummary.h - a readable account of a TTIR kernel ---*- C++ -*-===//

#ifndef TAWA_ANALYSIS_KERNELSUMMARY_H
#define TAWA_ANALYSIS_KERNELSUMMARY_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

namespace tawa {
/// Prints, for each kernel in `module`, what tawa sees in it: arguments
/// (TMA descriptors with their block shapes, pointers, scalars), the grid axes
/// it reads, its loop nest, and per loop the TMA loads, matrix products,
/// reductions and stores, each with the user's source line.
void printKernelSummary(mlir::ModuleOp module, llvm::raw_ostream &os);
} // namespace tawa

#endif // TAWA_ANALYSIS_KERNELSUMMARY_H
