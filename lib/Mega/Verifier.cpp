//===- Verifier.cpp - the tGraph's invariants -----------------------------===//

#include "tawa/Mega/Verifier.h"

#include <algorithm>
#include <map>
#include <set>

namespace tawa::mega {
namespace {

class Verifier {
public:
  Verifier(const TGraph &g, size_t maxErrors) : g(g), maxErrors(maxErrors) {}

  std::vector<std::string> run() {
    checkHeader();
    checkTensors();
    checkOps();
    bool idsValid = checkTasks();
    if (idsValid) {
      checkEvents();
      checkWriteOverlaps();
      checkForm();
      if (errors.empty())
        checkAcyclic();
    }
    return errors;
  }

private:
  const TGraph &g;
  size_t maxErrors;
  std::vector<std::string> errors;

  bool full() const { return errors.size() >= maxErrors; }
  void report(int line, const std::string &what, const std::string &msg) {
    if (full())
      return;
    std::string s = line > 0 ? "line " + std::to_string(line) + ": " : "";
    errors.push_back(s + what + ": " + msg);
  }
  std::string taskName(size_t t) const { return "task " + std::to_string(t); }
  std::string eventName(size_t e) const { return "event " + std::to_string(e); }
  void taskError(size_t t, const std::string &msg) {
    report(g.tasks[t].line, taskName(t), msg);
  }
  void eventError(size_t e, const std::string &msg) {
    report(g.events[e].line, eventName(e), msg);
  }
  static std::string listText(const std::vector<int> &list) {
    std::string s;
    for (size_t i = 0; i < list.size(); ++i)
      s += (i ? ", " : "") + std::to_string(list[i]);
    return s;
  }

  void checkHeader() {
    if (g.sms < 1)
      report(g.line, "tgraph",
             "sms must be at least 1, got " + std::to_string(g.sms));
    int n = static_cast<int>(g.events.size());
    if (g.start < -1 || g.start >= n)
      report(g.line, "tgraph",
             "start event " + std::to_string(g.start) + " does not exist");
    if (g.end < -1 || g.end >= n)
      report(g.line, "tgraph",
             "end event " + std::to_string(g.end) + " does not exist");
    if (g.start >= 0 && g.start == g.end)
      report(g.line, "tgraph", "the start and end events are the same");
  }

  void checkTensors() {
    std::set<std::string> names;
    for (const Tensor &t : g.tensors) {
      std::string what = "tensor '" + t.name + "'";
      if (!names.insert(t.name).second)
        report(t.line, what, "declared twice");
      if (t.shape.empty() || t.shape.size() > 8)
        report(t.line, what,
               "rank must be 1..8, got " + std::to_string(t.shape.size()));
      for (int64_t d : t.shape)
        if (d < 1)
          report(t.line, what,
                 "dimensions must be positive, got " + std::to_string(d));
    }
  }

  void checkOps() {
    std::set<std::string> names;
    for (size_t i = 0; i < g.ops.size(); ++i) {
      const Operator &op = g.ops[i];
      std::string what = "op " + std::to_string(i);
      if (op.name.empty())
        report(op.line, what, "has no name");
      else if (!names.insert(op.name).second)
        report(op.line, what, "name '" + op.name + "' used twice");
      if (op.layer < -1)
        report(op.line, what, "layer must be -1 or more");
    }
  }

  bool checkRegion(size_t t, const Region &r, const char *which) {
    if (r.tensor < 0 || r.tensor >= static_cast<int>(g.tensors.size())) {
      taskError(t, std::string(which) + " an unknown tensor");
      return false;
    }
    const Tensor &tensor = g.tensors[r.tensor];
    if (r.box.size() != tensor.shape.size()) {
      taskError(t, std::string(which) + " " + tensor.name + " with " +
                       std::to_string(r.box.size()) + " ranges; it has rank " +
                       std::to_string(tensor.shape.size()));
      return false;
    }
    for (size_t d = 0; d < r.box.size(); ++d) {
      const Interval &iv = r.box[d];
      if (iv.begin < 0 || iv.begin >= iv.end || iv.end > tensor.shape[d]) {
        taskError(t, std::string(which) + " " + tensor.name + " range " +
                         std::to_string(iv.begin) + ":" +
                         std::to_string(iv.end) + " in dimension " +
                         std::to_string(d) + " outside [0, " +
                         std::to_string(tensor.shape[d]) + ") or empty");
        return false;
      }
    }
    return true;
  }

  /// Returns false when an id is dangling (later checks index by them).
  bool checkTasks() {
    bool valid = true;
    std::map<std::pair<int, int64_t>, size_t> tiles;
    int nEvents = static_cast<int>(g.events.size());
    for (size_t t = 0; t < g.tasks.size(); ++t) {
      const Task &task = g.tasks[t];
      if (task.isEmpty()) {
        if (!task.reads.empty() || !task.writes.empty())
          taskError(t, "an empty task reads and writes nothing");
      } else if (task.op < 0 || task.op >= static_cast<int>(g.ops.size())) {
        taskError(t, "op " + std::to_string(task.op) + " does not exist");
        valid = false;
      } else {
        if (task.tile < 0)
          taskError(t, "tile index is negative");
        auto inserted = tiles.insert({{task.op, task.tile}, t});
        if (!inserted.second)
          taskError(t, "tile " + std::to_string(task.tile) + " of op " +
                           std::to_string(task.op) + " is also task " +
                           std::to_string(inserted.first->second));
      }
      for (const Region &r : task.reads) {
        valid &= checkRegion(t, r, "reads");
        if (r.combine)
          taskError(t, "reads a 'combine:' box (only written boxes are "
                       "combined by a group)");
      }
      for (const Region &r : task.writes) {
        if (!checkRegion(t, r, "writes")) {
          valid = false;
          continue;
        }
        if (g.tensors[r.tensor].role == TensorRole::Input)
          taskError(t,
                    "writes " + g.tensors[r.tensor].name + ", an input tensor");
      }
      for (auto [list, what] : {std::pair{&task.waits, "waits on"},
                                std::pair{&task.triggers, "triggers"}}) {
        std::set<int> seen;
        for (int e : *list) {
          if (e < 0 || e >= nEvents) {
            taskError(t, std::string(what) + " event " + std::to_string(e) +
                             ", which does not exist");
            valid = false;
          } else if (!seen.insert(e).second) {
            taskError(t, std::string(what) + " event " + std::to_string(e) +
                             " twice");
          }
        }
      }
      for (int e : task.waits)
        if (std::find(task.triggers.begin(), task.triggers.end(), e) !=
            task.triggers.end())
          taskError(t, "waits on and triggers event " + std::to_string(e));
    }
    return valid;
  }

  void checkEvents() {
    std::vector<std::vector<int>> in = eventInTasks(g);
    for (size_t e = 0; e < g.events.size(); ++e) {
      const Event &ev = g.events[e];
      if (ev.count != static_cast<int64_t>(in[e].size()))
        eventError(e, "trigger count " + std::to_string(ev.count) + " but " +
                          std::to_string(in[e].size()) + " tasks trigger it" +
                          (in[e].empty() ? "" : " (" + listText(in[e]) + ")"));
    }
  }

  struct Write {
    const Region *region;
    size_t task;
  };

  /// Two writes of one combined box (TGraph.h): both marked, the same box,
  /// tasks of the same op.
  bool sameCombineGroup(const Write &a, const Write &b) const {
    return a.region->combine && b.region->combine &&
           a.region->box == b.region->box &&
           g.tasks[a.task].op == g.tasks[b.task].op;
  }

  /// Tiles of one tensor written by two tasks would make the result depend
  /// on the order: activations are single-assignment within a step, except
  /// a combined box, which the last task of its group writes.
  void checkWriteOverlaps() {
    std::vector<std::vector<Write>> byTensor(g.tensors.size());
    for (size_t t = 0; t < g.tasks.size(); ++t)
      for (const Region &r : g.tasks[t].writes)
        byTensor[r.tensor].push_back({&r, t});
    for (std::vector<Write> &writes : byTensor) {
      // Sweep along dimension 0: only boxes whose first ranges intersect
      // are compared.
      std::sort(writes.begin(), writes.end(),
                [](const Write &a, const Write &b) {
                  return a.region->box[0].begin < b.region->box[0].begin;
                });
      for (size_t i = 0; i < writes.size() && !full(); ++i)
        for (size_t j = i + 1; j < writes.size(); ++j) {
          if (writes[j].region->box[0].begin >= writes[i].region->box[0].end)
            break;
          if (writes[i].task != writes[j].task &&
              overlaps(*writes[i].region, *writes[j].region) &&
              !sameCombineGroup(writes[i], writes[j])) {
            size_t a = std::min(writes[i].task, writes[j].task);
            size_t b = std::max(writes[i].task, writes[j].task);
            const bool combined =
                writes[i].region->combine || writes[j].region->combine;
            taskError(b, "writes " + g.tensors[writes[i].region->tensor].name +
                             " where task " + std::to_string(a) +
                             " writes too (tiles of a tensor are disjoint" +
                             (combined ? "; a combined box is the same box, "
                                         "marked 'combine:' by every task "
                                         "of one op"
                                       : "") +
                             ")");
          }
        }
    }
  }

  void checkForm() {
    std::vector<std::vector<int>> out = eventOutTasks(g);
    bool normalized = g.form == Form::Normalized || g.form == Form::Linear;
    if (g.form == Form::Tiles) {
      if (!g.events.empty())
        report(g.line, "tgraph",
               "the tiles form has no events yet, found " +
                   std::to_string(g.events.size()));
      for (size_t t = 0; t < g.tasks.size(); ++t)
        if (!g.tasks[t].waits.empty() || !g.tasks[t].triggers.empty())
          taskError(t, "the tiles form has no events to wait on or trigger");
      return;
    }
    if (g.form != Form::Linear)
      for (size_t e = 0; e < g.events.size(); ++e)
        if (g.events[e].first >= 0 || g.events[e].last >= 0)
          eventError(e, "launch ranges exist only in the linear form");
    if (g.start >= 0 && g.events[g.start].count != 0)
      eventError(g.start, "the start event must have trigger count 0");
    if (g.end >= 0 && !out[g.end].empty())
      eventError(g.end, "the end event launches no task, but task " +
                            std::to_string(out[g.end][0]) + " waits on it");
    if (!normalized)
      return;
    if (g.start < 0 || g.end < 0)
      report(g.line, "tgraph",
             std::string("a ") + formName(g.form) +
                 " graph has start= and end= events");
    for (size_t t = 0; t < g.tasks.size(); ++t) {
      const Task &task = g.tasks[t];
      if (task.waits.size() != 1)
        taskError(
            t,
            "waits on " + std::to_string(task.waits.size()) + " events" +
                (task.waits.empty() ? "" : " (" + listText(task.waits) + ")") +
                "; in a normalized graph a task waits on exactly one "
                "(the start event for a root)");
      if (task.triggers.size() != 1)
        taskError(t, "triggers " + std::to_string(task.triggers.size()) +
                         " events" +
                         (task.triggers.empty()
                              ? ""
                              : " (" + listText(task.triggers) + ")") +
                         "; in a normalized graph a task triggers exactly one "
                         "(the end event for a leaf)");
    }
    for (size_t e = 0; e < g.events.size(); ++e) {
      int ev = static_cast<int>(e);
      if (g.events[e].count == 0 && ev != g.start)
        eventError(e, "trigger count 0 but not the start event: it would "
                      "launch its tasks before anything ran");
      if (out[e].empty() && ev != g.end)
        eventError(e, "launches no task and is not the end event");
    }
    if (g.form != Form::Linear)
      return;
    for (size_t e = 0; e < g.events.size(); ++e) {
      const Event &ev = g.events[e];
      const std::vector<int> &waiters = out[e];
      if (waiters.empty()) {
        if (ev.first >= 0 || ev.last >= 0)
          eventError(e, "launch=[" + std::to_string(ev.first) + "," +
                            std::to_string(ev.last) +
                            "] but no task waits on it");
        continue;
      }
      if (ev.first < 0 || ev.last < ev.first) {
        eventError(e, "tasks " + listText(waiters) +
                          " wait on it but it has no launch range");
        continue;
      }
      // waiters is sorted: the range matches iff it is exactly first..last.
      bool contiguous =
          waiters.front() == ev.first && waiters.back() == ev.last &&
          static_cast<int64_t>(waiters.size()) == ev.last - ev.first + 1;
      if (!contiguous) {
        std::string detail;
        for (int64_t t = ev.first; t <= ev.last && detail.empty(); ++t)
          if (!std::binary_search(waiters.begin(), waiters.end(),
                                  static_cast<int>(t)))
            detail = "task " + std::to_string(t) +
                     " is in the range but waits on another event";
        for (int t : waiters)
          if (detail.empty() && (t < ev.first || t > ev.last))
            detail =
                "task " + std::to_string(t) + " waits on it outside the range";
        eventError(e, "launch=[" + std::to_string(ev.first) + "," +
                          std::to_string(ev.last) +
                          "] is not the contiguous range of the tasks that "
                          "wait on it: " +
                          detail);
      }
    }
  }

  void checkAcyclic() {
    size_t nT = g.tasks.size(), nE = g.events.size();
    std::vector<std::vector<int>> in = eventInTasks(g), out = eventOutTasks(g);
    std::vector<size_t> taskPending(nT), eventPending(nE);
    std::vector<int> ready; // >= 0: task; < 0: event -1 - e
    for (size_t t = 0; t < nT; ++t)
      if ((taskPending[t] = g.tasks[t].waits.size()) == 0)
        ready.push_back(static_cast<int>(t));
    for (size_t e = 0; e < nE; ++e)
      if ((eventPending[e] = in[e].size()) == 0)
        ready.push_back(-1 - static_cast<int>(e));
    size_t done = 0;
    while (!ready.empty()) {
      int n = ready.back();
      ready.pop_back();
      ++done;
      if (n >= 0) {
        for (int e : g.tasks[n].triggers)
          if (--eventPending[e] == 0)
            ready.push_back(-1 - e);
      } else {
        for (int t : out[-1 - n])
          if (--taskPending[t] == 0)
            ready.push_back(t);
      }
    }
    if (done == nT + nE)
      return;
    // Walk backwards through unfinished nodes until one repeats.
    int t = -1;
    for (size_t i = 0; i < nT && t < 0; ++i)
      if (taskPending[i] > 0)
        t = static_cast<int>(i);
    if (t < 0) {
      report(g.line, "tgraph", "the graph has a cycle");
      return;
    }
    std::vector<int> path; // alternating task, event (backwards)
    std::map<int, size_t> seenAt;
    while (!seenAt.count(t)) {
      seenAt[t] = path.size();
      path.push_back(t);
      int e = -1;
      for (int w : g.tasks[t].waits)
        if (eventPending[w] > 0) {
          e = w;
          break;
        }
      path.push_back(e);
      int prev = -1;
      for (int p : in[e])
        if (taskPending[p] > 0 || seenAt.count(p)) {
          prev = p;
          break;
        }
      t = prev;
    }
    std::vector<int> cycle(path.begin() + seenAt[t], path.end());
    std::reverse(cycle.begin(), cycle.end());
    // cycle now reads event, task, event, task ... forwards; print from the
    // first task.
    std::string text;
    for (size_t i = 1; i < cycle.size(); i += 2)
      text += "task " + std::to_string(cycle[i]) + " -> event " +
              std::to_string(cycle[(i + 1) % cycle.size()]) + " -> ";
    text += "task " + std::to_string(cycle[1]);
    taskError(cycle[1], "is on a dependency cycle: " + text);
  }
};

} // namespace

std::vector<std::string> verifyGraph(const TGraph &g, size_t maxErrors) {
  return Verifier(g, maxErrors).run();
}

} // namespace tawa::mega
