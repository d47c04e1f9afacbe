//===- InitAll.cpp - register every dialect and pass of tawa --------------===//

#include "tawa/InitAll.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Transforms/Passes.h"
#include "tawa/Dialect/TT/TTDialect.h"
#include "tawa/Dialect/Tawa/TawaDialect.h"
#include "tawa/Transforms/Passes.h"

void tawa::registerAllDialects(mlir::DialectRegistry &registry) {
  registry.insert<tawa::tt::TTDialect, tawa::TawaDialect,
                  mlir::arith::ArithDialect, mlir::math::MathDialect,
                  mlir::scf::SCFDialect, mlir::cf::ControlFlowDialect,
                  // llvm.intr.assume (tl.assume), dropped before the check.
                  mlir::LLVM::LLVMDialect>();
}

void tawa::registerAllPasses() {
  tawa::registerTawaPasses();
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  mlir::registerSymbolDCEPass();
}
