//===- LoopGraphExport.cpp - a TTIR kernel's loop graph for tawa-sched ----===//

#include "tawa/Driver/LoopGraphExport.h"

#include "tawa/InitAll.h"
#include "tawa/Transforms/LoopGraph.h"
#include "tawa/Transforms/Partition.h"
#include "tawa/Transforms/Pipeline.h"
#include "tawa/Transforms/SourceLocation.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;

namespace tawa {

bool exportLoopGraph(const std::string &ttir, const std::string &bufferName,
                     std::string &graph) {
  DialectRegistry registry;
  registerAllDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  context.printOpOnDiagnostic(false);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(ttir, bufferName), llvm::SMLoc());
  SourceMgrDiagnosticHandler diagHandler(sourceMgr, &context);

  ParserConfig config(&context);
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, config);
  if (!module)
    return false;
  // The same passes, with the same defaults, that tawac runs before
  // -tawa-optimal-schedule: the loop solved here is the loop it solves.
  PassManager pm(&context);
  addSupportedSubsetCheck(pm);
  WarpSpecializationOptions options;
  options.schedule = WarpSpecializationOptions::Schedule::Optimal;
  addProgramPasses(pm, options);
  if (failed(pm.run(*module)))
    return false;

  SmallVector<tt::FuncOp> kernels(module->getOps<tt::FuncOp>());
  if (kernels.size() != 1) {
    emitError(module->getLoc())
        << "tawa-sched schedules the main loop of one kernel; this module "
           "holds "
        << kernels.size();
    return false;
  }
  tt::FuncOp kernel = kernels.front();
  scf::ForOp loop = findMainLoop(kernel);
  if (!loop) {
    emitError(getUserLocation(kernel.getLoc()))
        << "kernel @" << kernel.getName()
        << " has no loop to schedule: tawa-sched solves the innermost loop "
           "that holds a tt.dot";
    return false;
  }
  graph = buildLoopGraph(loop, defaultConsumerGroups(loop)).text;
  return true;
}

} // namespace tawa
