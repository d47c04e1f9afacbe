//===- Passes.h - the tGraph compiler passes --------------------*- C++ -*-===//
//
// MPK §4.1 as separate passes, each in its own file and tested alone by lit
// through `tawa-mega opt --pass=NAME`. A pass returns false and sets `error`
// when its input is not in the form it needs; its output is checked by the
// verifier. docs/MEGAKERNEL.md describes each.
//
//===----------------------------------------------------------------------===//

#ifndef TAWA_MEGA_PASSES_H
#define TAWA_MEGA_PASSES_H

#include "tawa/Mega/TGraph.h"

#include <string>
#include <vector>

namespace tawa::mega {

/// tiles -> events. One event per (producer, consumer) task pair whose
/// written and read boxes of a tensor intersect (TileDependencies.cpp).
bool analyzeTileDependencies(TGraph &g, std::string &error);

/// events -> events, on the pair events of tile-deps. Removes the pair
/// events of an operator pair (A, C) when C is reached from every task of A
/// through another operator anyway (PruneTransitive.cpp). Beyond the paper:
/// without it each residual read becomes a fan-out event of its own.
bool pruneTransitiveDependencies(TGraph &g, std::string &error);

/// events -> events. Merges events with the same OutTasks (Definition 4.1,
/// SuccessorFusion.cpp).
bool fuseSuccessorSets(TGraph &g, std::string &error);

/// events -> events. Merges events with the same InTasks (Definition 4.2,
/// PredecessorFusion.cpp).
bool fusePredecessorSets(TGraph &g, std::string &error);

/// events -> events, the 0->N and N->0 patterns: tasks that wait on nothing
/// wait on a new start event (count 0), tasks that trigger nothing trigger a
/// new end event (Normalize.cpp).
bool attachRoots(TGraph &g, std::string &error);

/// events -> events, the 1->N pattern (Figure 6a): a task triggering k > 1
/// events triggers one new event that launches k empty tasks, one per
/// original event (Normalize.cpp).
bool splitFanOut(TGraph &g, std::string &error);

/// events -> events, the N->1 pattern (Figure 6b): a task waiting on k > 1
/// events waits on one new event that k empty tasks trigger, one waiting on
/// each original event (Normalize.cpp).
bool splitFanIn(TGraph &g, std::string &error);

/// events -> normalized: attachRoots, splitFanOut, splitFanIn.
bool normalizeGraph(TGraph &g, std::string &error);

/// normalized -> linear. Algorithm 1: renumbers tasks breadth-first from the
/// start event so that each event launches a contiguous id range, and events
/// in the order they become ready (Linearize.cpp).
bool linearizeGraph(TGraph &g, std::string &error);

struct PassInfo {
  const char *name;
  const char *summary;
  bool (*run)(TGraph &, std::string &);
};

/// Every pass `tawa-mega opt --pass=` knows, in pipeline order.
const std::vector<PassInfo> &allPasses();
/// The pass called `name`, or nullptr.
const PassInfo *findPass(const std::string &name);
/// The passes of `tawa-mega plan`, in order (pruning optional).
std::vector<const PassInfo *> planPipeline(bool prune = true);

} // namespace tawa::mega

#endif // TAWA_MEGA_PASSES_H
