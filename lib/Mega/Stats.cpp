//===- Stats.cpp - counts of a tGraph -------------------------------------===//

#include "tawa/Mega/Stats.h"

#include <algorithm>
#include <cstdio>

namespace tawa::mega {

GraphStats computeStats(const TGraph &g) {
  GraphStats s;
  s.tensors = g.tensors.size();
  s.ops = g.ops.size();
  s.tasks = g.tasks.size();
  s.events = g.events.size();
  for (const Task &t : g.tasks) {
    s.emptyTasks += t.isEmpty();
    s.waitEdges += t.waits.size();
    s.triggerEdges += t.triggers.size();
    s.maxWaits = std::max(s.maxWaits, t.waits.size());
    s.maxTriggers = std::max(s.maxTriggers, t.triggers.size());
  }
  std::vector<std::vector<int>> in = eventInTasks(g), out = eventOutTasks(g);
  for (size_t e = 0; e < g.events.size(); ++e) {
    size_t i = in[e].size(), o = out[e].size();
    s.maxEventIn = std::max(s.maxEventIn, i);
    s.maxEventOut = std::max(s.maxEventOut, o);
    if (i == 0)
      ++s.start;
    else if (o == 0)
      ++s.end;
    else if (i == 1)
      ++(o == 1 ? s.oneToOne : s.oneToMany);
    else
      ++(o == 1 ? s.manyToOne : s.manyToMany);
  }
  return s;
}

void printStatsHeader(std::ostream &os) {
  char buf[256];
  std::snprintf(buf, sizeof(buf),
                "%-18s %5s %8s %7s %8s %9s %9s %6s %6s | %5s %5s %7s %7s "
                "%7s %7s\n",
                "stage", "ops", "tasks", "empty", "events", "waits", "triggers",
                "maxW", "maxT", "0->N", "N->0", "1->1", "1->N", "N->1", "N->M");
  os << buf;
}

void printStatsRow(std::ostream &os, const std::string &stage,
                   const GraphStats &s) {
  char buf[256];
  std::snprintf(buf, sizeof(buf),
                "%-18s %5zu %8zu %7zu %8zu %9zu %9zu %6zu %6zu | %5zu %5zu "
                "%7zu %7zu %7zu %7zu\n",
                stage.c_str(), s.ops, s.tasks, s.emptyTasks, s.events,
                s.waitEdges, s.triggerEdges, s.maxWaits, s.maxTriggers, s.start,
                s.end, s.oneToOne, s.oneToMany, s.manyToOne, s.manyToMany);
  os << buf;
}

} // namespace tawa::mega
