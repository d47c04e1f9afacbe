//===- PredecessorFusion.cpp - predecessor-set event fusion ---------------===//
//
// MPK Definition 4.2: events with the same InTasks trigger at the same moment,
// so one event launching the union of their OutTasks replaces them.
//
//===----------------------------------------------------------------------===//

#include "tawa/Mega/Passes.h"

#include <map>

namespace tawa::mega {

bool fusePredecessorSets(TGraph &g, std::string &error) {
  if (g.form != Form::Events) {
    error = std::string("fuse-predecessors needs a graph in the events form, "
                        "got '") +
            formName(g.form) + "'";
    return false;
  }
  std::vector<std::vector<int>> in = eventInTasks(g);
  std::map<std::vector<int>, int> survivor;
  std::vector<int> into(g.events.size());
  std::vector<bool> dead(g.events.size(), false);
  for (size_t e = 0; e < g.events.size(); ++e) {
    // The end event stays apart: the runtime's completion test reads it.
    if (static_cast<int>(e) == g.end) {
      into[e] = static_cast<int>(e);
      continue;
    }
    auto inserted = survivor.insert({in[e], static_cast<int>(e)});
    into[e] = inserted.first->second;
    dead[e] = !inserted.second;
  }
  for (Task &t : g.tasks) {
    for (int &e : t.triggers)
      e = into[e];
    for (int &e : t.waits)
      e = into[e];
    canonicalizeTask(t);
  }
  if (g.start >= 0)
    g.start = into[g.start];
  eraseEvents(g, dead);
  recountEvents(g);
  return true;
}

} // namespace tawa::mega
