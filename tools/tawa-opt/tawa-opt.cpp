//===- tawa-opt.cpp - the MLIR driver for tawa's dialects and passes ------===//
//
// Like mlir-opt: reads IR, runs the passes named on the command line, prints
// IR. Every tawa dialect and pass is registered. Used by the lit tests and for
// debugging any stage of the pipeline by hand.
//
//===----------------------------------------------------------------------===//

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "tawa/InitAll.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  tawa::registerAllDialects(registry);
  tawa::registerAllPasses();
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv,
      "tawa-opt: tawa's MLIR driver (dialects tt, tawa; tawa passes)\n",
      registry));
}
