//===- SuccessorFusion.cpp - successor-set event fusion -------------------===//
//
// MPK Definition 4.1: events with the same OutTasks gate the same tasks, none
// of which can start before all of them trigger, so one event counting the
// union of their InTasks launches those tasks at the same moment.
//
//===----------------------------------------------------------------------===//

#include "tawa/Mega/Passes.h"

#include <map>

namespace tawa::mega {

bool fuseSuccessorSets(TGraph &g, std::string &error) {
  if (g.form != Form::Events) {
    error = std::string("fuse-successors needs a graph in the events form, "
                        "got '") +
            formName(g.form) + "'";
    return false;
  }
  std::vector<std::vector<int>> out = eventOutTasks(g);
  // The first event (lowest id) of each OutTasks set survives.
  std::map<std::vector<int>, int> survivor;
  std::vector<int> into(g.events.size());
  std::vector<bool> dead(g.events.size(), false);
  for (size_t e = 0; e < g.events.size(); ++e) {
    // The start event (count 0) stays apart: it triggers before any task.
    if (static_cast<int>(e) == g.start) {
      into[e] = static_cast<int>(e);
      continue;
    }
    auto inserted = survivor.insert({out[e], static_cast<int>(e)});
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
  int oldEnd = g.end;
  if (oldEnd >= 0)
    g.end = into[oldEnd];
  eraseEvents(g, dead);
  recountEvents(g);
  return true;
}

} // namespace tawa::mega
