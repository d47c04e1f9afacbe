//===- TileDependencies.cpp - tile-level dependency analysis --------------===//
//
// MPK §4.1 "Dependency analysis": for two operators sharing a tensor, a
// consumer task depends on a producer task exactly when the box the producer
// writes intersects a box the consumer reads. Tensors are single-assignment
// within the step (the verifier rejects overlapping writes), so an
// intersection always means read-after-write. Each dependent pair gets its
// own event (count 1); fusion merges them later.
//
//===----------------------------------------------------------------------===//

#include "tawa/Mega/Passes.h"

#include <algorithm>

namespace tawa::mega {

bool analyzeTileDependencies(TGraph &g, std::string &error) {
  if (g.form != Form::Tiles) {
    error = std::string("tile-deps needs a graph in the tiles form, got '") +
            formName(g.form) + "'";
    return false;
  }
  struct Write {
    int task;
    const Region *region;
  };
  std::vector<std::vector<Write>> writers(g.tensors.size());
  for (size_t t = 0; t < g.tasks.size(); ++t)
    for (const Region &r : g.tasks[t].writes)
      writers[r.tensor].push_back({static_cast<int>(t), &r});

  std::vector<Event> events;
  std::vector<int> producers;
  for (size_t c = 0; c < g.tasks.size(); ++c) {
    producers.clear();
    for (const Region &r : g.tasks[c].reads)
      for (const Write &w : writers[r.tensor])
        if (w.task != static_cast<int>(c) && overlaps(r, *w.region))
          producers.push_back(w.task);
    std::sort(producers.begin(), producers.end());
    producers.erase(std::unique(producers.begin(), producers.end()),
                    producers.end());
    for (int p : producers) {
      int e = static_cast<int>(events.size());
      events.push_back(Event{1, -1, -1, 0});
      g.tasks[p].triggers.push_back(e);
      g.tasks[c].waits.push_back(e);
    }
  }
  g.events = std::move(events);
  for (Task &t : g.tasks)
    canonicalizeTask(t);
  g.form = Form::Events;
  return true;
}

} // namespace tawa::mega
