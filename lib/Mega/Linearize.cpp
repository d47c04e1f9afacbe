//===- Linearize.cpp - tGraph linearization (MPK Algorithm 1) -------------===//
//
// Breadth-first from the events with trigger count 0: dequeuing an event
// appends the tasks waiting on it to the task order, and an event is enqueued
// once every task that triggers it has been placed. In a normalized graph a
// task waits on exactly one event, so the tasks an event launches are
// appended together: each event's fan-out is then the range [first, last],
// stored in two integers instead of a list. Tasks follow a topological order,
// which the runtime's round-robin AOT queues rely on (a task's producers
// have smaller ids). Events are renumbered in the order they are dequeued.
//
//===----------------------------------------------------------------------===//

#include "tawa/Mega/Passes.h"

#include <deque>

namespace tawa::mega {

bool linearizeGraph(TGraph &g, std::string &error) {
  if (g.form != Form::Normalized) {
    error = std::string("linearize needs a normalized graph, got '") +
            formName(g.form) + "' (run normalize first)";
    return false;
  }
  const size_t nT = g.tasks.size(), nE = g.events.size();
  for (size_t t = 0; t < nT; ++t)
    if (g.tasks[t].waits.size() != 1) {
      error = "linearize: task " + std::to_string(t) + " waits on " +
              std::to_string(g.tasks[t].waits.size()) +
              " events; a normalized graph has exactly one per task";
      return false;
    }
  std::vector<std::vector<int>> waiters = eventOutTasks(g);
  std::vector<int64_t> unplaced(nE);
  std::deque<int> queue;
  for (size_t e = 0; e < nE; ++e) {
    unplaced[e] = g.events[e].count;
    if (unplaced[e] == 0)
      queue.push_back(static_cast<int>(e));
  }
  std::vector<int> taskOrder, eventOrder;
  taskOrder.reserve(nT);
  eventOrder.reserve(nE);
  while (!queue.empty()) {
    int e = queue.front();
    queue.pop_front();
    eventOrder.push_back(e);
    for (int t : waiters[e]) {
      taskOrder.push_back(t);
      for (int next : g.tasks[t].triggers)
        if (--unplaced[next] == 0)
          queue.push_back(next);
    }
  }
  if (taskOrder.size() != nT || eventOrder.size() != nE) {
    for (size_t e = 0; e < nE; ++e)
      if (unplaced[e] > 0) {
        error = "linearize: event " + std::to_string(e) +
                " never becomes "
                "ready (" +
                std::to_string(unplaced[e]) + " of its " +
                std::to_string(g.events[e].count) +
                " producers are never launched: a cycle)";
        return false;
      }
    error = "linearize: some tasks are never launched";
    return false;
  }

  std::vector<int> newTask(nT), newEvent(nE);
  for (size_t i = 0; i < nT; ++i)
    newTask[taskOrder[i]] = static_cast<int>(i);
  for (size_t i = 0; i < nE; ++i)
    newEvent[eventOrder[i]] = static_cast<int>(i);
  std::vector<Task> tasks(nT);
  for (size_t i = 0; i < nT; ++i) {
    Task t = std::move(g.tasks[taskOrder[i]]);
    for (int &e : t.waits)
      e = newEvent[e];
    for (int &e : t.triggers)
      e = newEvent[e];
    tasks[i] = std::move(t);
  }
  std::vector<Event> events(nE);
  for (size_t i = 0; i < nE; ++i) {
    Event ev = g.events[eventOrder[i]];
    const std::vector<int> &w = waiters[eventOrder[i]];
    ev.first = w.empty() ? -1 : newTask[w.front()];
    ev.last = w.empty() ? -1 : newTask[w.front()] + int64_t(w.size()) - 1;
    events[i] = ev;
  }
  g.tasks = std::move(tasks);
  g.events = std::move(events);
  if (g.start >= 0)
    g.start = newEvent[g.start];
  if (g.end >= 0)
    g.end = newEvent[g.end];
  g.form = Form::Linear;
  return true;
}

} // namespace tawa::mega
