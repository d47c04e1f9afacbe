//===- Stats.h - counts of a tGraph -----------------------------*- C++ -*-===//

#ifndef TAWA_MEGA_STATS_H
#define TAWA_MEGA_STATS_H

#include "tawa/Mega/TGraph.h"

#include <cstddef>
#include <ostream>
#include <string>

namespace tawa::mega {

struct GraphStats {
  size_t tensors = 0, ops = 0, tasks = 0, emptyTasks = 0, events = 0;
  size_t waitEdges = 0;                 ///< sum over tasks of dependent events
  size_t triggerEdges = 0;              ///< sum over tasks of trigger events
  size_t maxWaits = 0, maxTriggers = 0; ///< per task
  size_t maxEventIn = 0, maxEventOut = 0; ///< tasks per event
  /// Events by fan pattern (InTasks -> OutTasks): 0->N (start), N->0 (end),
  /// 1->1, 1->N, N->1, N->M.
  size_t start = 0, end = 0, oneToOne = 0, oneToMany = 0, manyToOne = 0,
         manyToMany = 0;
};

GraphStats computeStats(const TGraph &g);

/// The header and one row of the `tawa-mega plan --stats` table.
void printStatsHeader(std::ostream &os);
void printStatsRow(std::ostream &os, const std::string &stage,
                   const GraphStats &s);

} // namespace tawa::mega

#endif // TAWA_MEGA_STATS_H
