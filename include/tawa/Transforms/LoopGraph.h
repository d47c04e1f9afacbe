//===- LoopGraph.h - a main loop as a tawa-sched graph ----------*- C++ -*-===//

#ifndef TAWA_TRANSFORMS_LOOPGRAPH_H
#define TAWA_TRANSFORMS_LOOPGRAPH_H

#include "tawa/Dialect/TT/TTDialect.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tawa {

/// A loop's coarse operations in tawa-sched's text format; node i is named
/// names[i] and stands for the operations led by anchors[i] (a TMA load, a
/// tt.dot, or the first operation of a block of CUDA-core work).
struct LoopGraph {
  std::string text;
  std::vector<std::string> names;
  std::vector<mlir::Operation *> anchors;
};

/// The first innermost loop of `func` that holds a tt.dot, or null.
mlir::scf::ForOp findMainLoop(tt::FuncOp func);

/// The dependence graph of `loop`'s body with H100 costs. `accShare` warp
/// groups share each accumulator (cooperative consumer groups), which
/// divides its registers per thread.
LoopGraph buildLoopGraph(mlir::scf::ForOp loop, int64_t accShare = 1);

} // namespace tawa

#endif // TAWA_TRANSFORMS_LOOPGRAPH_H
