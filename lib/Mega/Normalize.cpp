//===- Normalize.cpp - tGraph normalization (MPK Figure 6) ----------------===//
//
// The runtime stores one dependent and one trigger event per task (a task
// descriptor of fixed size), so normalization rewrites every fan pattern that
// does not fit:
//   0 -> N  tasks that wait on nothing wait on the start event (count 0);
//   N -> 0  tasks that trigger nothing trigger the end event, whose
//           triggering tells the runtime that the step has drained;
//   1 -> N  a task triggering k > 1 events (Figure 6a) triggers one new event
//           launching k empty tasks, the i-th triggering the i-th event;
//   N -> 1  a task waiting on k > 1 events (Figure 6b) waits on one new event
//           triggered by k empty tasks, the i-th waiting on the i-th event.
// Empty tasks compute nothing; the runtime completes them without a worker
// (docs/MEGAKERNEL.md, "Runtime protocol").
//
//===----------------------------------------------------------------------===//

#include "tawa/Mega/Passes.h"

namespace tawa::mega {
namespace {

bool needEvents(const TGraph &g, const char *pass, std::string &error) {
  if (g.form == Form::Events)
    return true;
  error = std::string(pass) + " needs a graph in the events form, got '" +
          formName(g.form) + "'";
  return false;
}

int addEvent(TGraph &g, int64_t count) {
  g.events.push_back(Event{count, -1, -1, 0});
  return static_cast<int>(g.events.size()) - 1;
}

int addEmptyTask(TGraph &g, int wait, int trigger) {
  Task t;
  t.op = kEmptyOp;
  t.waits = {wait};
  t.triggers = {trigger};
  g.tasks.push_back(std::move(t));
  return static_cast<int>(g.tasks.size()) - 1;
}

} // namespace

bool attachRoots(TGraph &g, std::string &error) {
  if (!needEvents(g, "attach-roots", error))
    return false;
  const size_t n = g.tasks.size();
  for (size_t t = 0; t < n; ++t) {
    if (g.tasks[t].waits.empty()) {
      if (g.start < 0)
        g.start = addEvent(g, 0);
      g.tasks[t].waits.push_back(g.start);
    }
    if (g.tasks[t].triggers.empty()) {
      if (g.end < 0)
        g.end = addEvent(g, 0);
      g.tasks[t].triggers.push_back(g.end);
      ++g.events[g.end].count;
    }
  }
  return true;
}

bool splitFanOut(TGraph &g, std::string &error) {
  if (!needEvents(g, "split-fan-out", error))
    return false;
  const size_t n = g.tasks.size(); // new empty tasks have one trigger
  for (size_t t = 0; t < n; ++t) {
    if (g.tasks[t].triggers.size() <= 1)
      continue;
    std::vector<int> targets = g.tasks[t].triggers;
    int fanOut = addEvent(g, 1);
    g.tasks[t].triggers = {fanOut};
    for (int e : targets)
      addEmptyTask(g, fanOut, e); // e's count is unchanged: one for one
  }
  return true;
}

bool splitFanIn(TGraph &g, std::string &error) {
  if (!needEvents(g, "split-fan-in", error))
    return false;
  const size_t n = g.tasks.size();
  for (size_t t = 0; t < n; ++t) {
    if (g.tasks[t].waits.size() <= 1)
      continue;
    std::vector<int> sources = g.tasks[t].waits;
    int fanIn = addEvent(g, static_cast<int64_t>(sources.size()));
    g.tasks[t].waits = {fanIn};
    for (int e : sources)
      addEmptyTask(g, e, fanIn);
  }
  return true;
}

bool normalizeGraph(TGraph &g, std::string &error) {
  if (!attachRoots(g, error) || !splitFanOut(g, error) || !splitFanIn(g, error))
    return false;
  g.form = Form::Normalized;
  return true;
}

} // namespace tawa::mega
