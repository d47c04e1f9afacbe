//===- PassRegistry.cpp - the passes by name ------------------------------===//

#include "tawa/Mega/Passes.h"

namespace tawa::mega {

const std::vector<PassInfo> &allPasses() {
  static const std::vector<PassInfo> passes = {
      {"tile-deps",
       "tiles -> events: one event per producer/consumer task pair whose "
       "written and read boxes intersect",
       analyzeTileDependencies},
      {"prune-transitive",
       "events -> events: drop the pair events of an operator pair that "
       "another operator already orders",
       pruneTransitiveDependencies},
      {"fuse-successors",
       "events -> events: merge events with the same OutTasks (MPK Def. 4.1)",
       fuseSuccessorSets},
      {"fuse-predecessors",
       "events -> events: merge events with the same InTasks (MPK Def. 4.2)",
       fusePredecessorSets},
      {"attach-roots",
       "events -> events: roots wait on a start event, leaves trigger an "
       "end event (0->N, N->0)",
       attachRoots},
      {"split-fan-out",
       "events -> events: a task triggering k events triggers one that "
       "launches k empty tasks (1->N, MPK Fig. 6a)",
       splitFanOut},
      {"split-fan-in",
       "events -> events: a task waiting on k events waits on one that k "
       "empty tasks trigger (N->1, MPK Fig. 6b)",
       splitFanIn},
      {"normalize",
       "events -> normalized: attach-roots, split-fan-out, split-fan-in",
       normalizeGraph},
      {"linearize",
       "normalized -> linear: renumber tasks breadth-first so that each "
       "event launches a contiguous range (MPK Alg. 1)",
       linearizeGraph},
  };
  return passes;
}

const PassInfo *findPass(const std::string &name) {
  for (const PassInfo &p : allPasses())
    if (name == p.name)
      return &p;
  return nullptr;
}

std::vector<const PassInfo *> planPipeline(bool prune) {
  std::vector<const PassInfo *> pipeline;
  for (const char *name : {"tile-deps", "prune-transitive", "fuse-successors",
                           "fuse-predecessors", "normalize", "linearize"})
    if (prune || std::string(name) != "prune-transitive")
      pipeline.push_back(findPass(name));
  return pipeline;
}

} // namespace tawa::mega
