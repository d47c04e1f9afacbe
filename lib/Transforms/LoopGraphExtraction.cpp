//===- LoopGraphExtraction.cpp - a main loop as a tawa-sched graph --------===//
//
// Twill schedules coarse operations: a TMA load, a matrix product, a block of
// CUDA-core work such as a softmax. This pass cuts the main loop's body into
// such operations and prints them with their costs and dependences in the
// text format of tawa-sched, so that the solver can be run on any kernel:
//
//   tawa-opt k.ttir -tawa-print-loop-graph -o /dev/null > g.txt
//
// (tawa-sched k.ttir does the same after tawac's program passes.)
//
//===----------------------------------------------------------------------===//

#include "tawa/Transforms/LoopGraph.h"
#include "tawa/Transforms/Partition.h"
#include "tawa/Transforms/Passes.h"

#include "llvm/Support/raw_ostream.h"

namespace tawa {
#define GEN_PASS_DEF_LOOPGRAPHEXTRACTION
#include "tawa/Transforms/Passes.h.inc"
} // namespace tawa

using namespace mlir;
using namespace tawa;

namespace {

struct LoopGraphExtraction
    : public tawa::impl::LoopGraphExtractionBase<LoopGraphExtraction> {
  void runOnOperation() override {
    scf::ForOp loop = findMainLoop(getOperation());
    if (!loop)
      return;
    // Accumulators shared as -tawa-optimal-schedule shares them: the graph
    // printed is the graph it solves.
    llvm::outs() << buildLoopGraph(loop, defaultConsumerGroups(loop)).text;
  }
};

} // namespace
