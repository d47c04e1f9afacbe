//===- LoopGraphExport.h - a kernel's loop graph for tawa-sched -*- C++ -*-===//
//
// The dependence graph that `tawac --schedule=optimal` solves, extracted from
// TTIR text without the caller needing MLIR: tawa-sched links this to read a
// kernel directly. Plain C++ types only, so that the scheduler's tool (built
// with exceptions for Z3) needs no MLIR headers.
//
//===----------------------------------------------------------------------===//

#ifndef TAWA_DRIVER_LOOPGRAPHEXPORT_H
#define TAWA_DRIVER_LOOPGRAPHEXPORT_H

#include <string>

namespace tawa {

/// Parses `ttir` (a module as Triton 3.6 prints it; `bufferName` names it in
/// diagnostics), checks that tawa supports it, runs the passes that precede
/// the optimal schedule with tawac's defaults (persistence, program pairing,
/// partition annotation) and writes the main loop's graph, in tawa-sched's
/// text format with H100 clock cycles, to `graph`. The module must hold one
/// kernel with a main loop (an innermost loop with a tt.dot). Diagnostics go
/// to stderr at the kernel's source lines; returns false after any error.
bool exportLoopGraph(const std::string &ttir, const std::string &bufferName,
                     std::string &graph);

} // namespace tawa

#endif // TAWA_DRIVER_LOOPGRAPHEXPORT_H
