//===- Simulator.cpp - CPU simulation of the event-driven runtime ---------===//

#include "tawa/Mega/Simulator.h"

#include "tawa/Mega/Verifier.h"

#include <algorithm>
#include <map>
#include <random>
#include <sstream>

namespace tawa::mega {

const char *simModeName(SimMode mode) {
  switch (mode) {
  case SimMode::Auto:
    return "auto";
  case SimMode::Jit:
    return "jit";
  case SimMode::Aot:
    return "aot";
  case SimMode::Hybrid:
    return "hybrid";
  }
  return "?";
}

bool parseSimMode(const std::string &name, SimMode &mode) {
  for (SimMode m : {SimMode::Auto, SimMode::Jit, SimMode::Aot, SimMode::Hybrid})
    if (name == simModeName(m)) {
      mode = m;
      return true;
    }
  return false;
}

namespace {

uint64_t mix(uint64_t h, uint64_t v) {
  // splitmix64 finalizer over the running hash and the next word.
  uint64_t z = h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2));
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

uint64_t hashString(const std::string &s) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (char c : s)
    h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ULL;
  return h;
}

/// What the simulation knows of a task, computed from its boxes alone.
struct TaskData {
  uint64_t seed = 0;
  /// Per read box: the tasks whose written box intersects it, or none (an
  /// input, hashed as `inputHash`).
  std::vector<std::vector<int>> readWriters;
  std::vector<uint64_t> inputHash;
  std::vector<int> producers; ///< unique, sorted
};

class Simulation {
public:
  Simulation(const TGraph &g, const SimOptions &o) : g(g), o(o) {}

  SimResult run() {
    SimResult result;
    std::vector<std::string> errors = verifyGraph(g, 1);
    if (!errors.empty()) {
      result.message = "the graph does not verify: " + errors[0];
      return result;
    }
    mode = o.mode;
    if (mode == SimMode::Auto)
      mode = g.form == Form::Linear ? SimMode::Hybrid : SimMode::Jit;
    result.mode = mode;
    if (g.form == Form::Tiles) {
      result.message = "a graph in the tiles form has no events to simulate "
                       "(run tile-deps first)";
      return result;
    }
    if (mode != SimMode::Jit && g.form != Form::Linear) {
      result.message = std::string("--mode=") + simModeName(mode) +
                       " queues tasks by id and needs a linear graph, got '" +
                       formName(g.form) + "'";
      return result;
    }
    if (o.workers < 1) {
      result.message = "at least one worker";
      return result;
    }
    prepare();
    if (!reference(result.message))
      return result;
    for (unsigned i = 0; i < o.orders; ++i) {
      if (!runOrder(o.seed + i, result.message))
        return result;
      ++result.ordersRun;
    }
    result.ok = true;
    result.digest = digest(referenceValue);
    std::ostringstream os;
    size_t empty = 0;
    for (const Task &t : g.tasks)
      empty += t.isEmpty();
    os << "ok: " << result.ordersRun << " orders (seeds " << o.seed << ".."
       << o.seed + o.orders - 1 << ", " << o.workers << " workers, "
       << simModeName(mode) << "), " << g.tasks.size() << " tasks (" << empty
       << " empty) and " << g.events.size()
       << " events each; every event triggered once, every task ran once "
          "after its producers, values equal the reference order";
    result.message = os.str();
    return result;
  }

private:
  const TGraph &g;
  const SimOptions &o;
  SimMode mode = SimMode::Jit;
  std::vector<TaskData> data;
  std::vector<uint64_t> referenceValue;
  std::vector<std::vector<int>> eventOut;
  std::vector<bool> aotTask;

  void prepare() {
    std::vector<std::vector<std::pair<int, const Region *>>> writers(
        g.tensors.size());
    for (size_t t = 0; t < g.tasks.size(); ++t)
      for (const Region &r : g.tasks[t].writes)
        writers[r.tensor].push_back({static_cast<int>(t), &r});
    data.assign(g.tasks.size(), TaskData());
    for (size_t t = 0; t < g.tasks.size(); ++t) {
      const Task &task = g.tasks[t];
      TaskData &d = data[t];
      d.seed = task.isEmpty() ? 0
                              : mix(hashString(g.ops[task.op].name),
                                    static_cast<uint64_t>(task.tile));
      for (const Region &r : task.reads) {
        std::vector<int> ws;
        for (auto &[w, wr] : writers[r.tensor])
          if (w != static_cast<int>(t) && overlaps(r, *wr))
            ws.push_back(w);
        // By (op, tile), not by id: renumbering (linearize) must not change
        // the values, so that every form of a graph has the same digest.
        std::sort(ws.begin(), ws.end(), [&](int a, int b) {
          return std::make_pair(g.tasks[a].op, g.tasks[a].tile) <
                 std::make_pair(g.tasks[b].op, g.tasks[b].tile);
        });
        uint64_t h = hashString(g.tensors[r.tensor].name);
        for (const Interval &iv : r.box)
          h = mix(mix(h, static_cast<uint64_t>(iv.begin)),
                  static_cast<uint64_t>(iv.end));
        d.inputHash.push_back(h);
        d.producers.insert(d.producers.end(), ws.begin(), ws.end());
        d.readWriters.push_back(std::move(ws));
      }
      std::sort(d.producers.begin(), d.producers.end());
      d.producers.erase(std::unique(d.producers.begin(), d.producers.end()),
                        d.producers.end());
    }
    eventOut = eventOutTasks(g);
    aotTask.assign(g.tasks.size(), false);
    for (size_t t = 0; t < g.tasks.size(); ++t) {
      const Task &task = g.tasks[t];
      if (mode == SimMode::Aot)
        aotTask[t] = true;
      else if (mode == SimMode::Hybrid)
        aotTask[t] =
            !task.isEmpty() && g.ops[task.op].launch == LaunchMode::Aot;
    }
  }

  /// The value a task computes from what it reads now: a written tile's
  /// value, or the value the tile had before the step (hashed from its
  /// writer's identity: a stale read gives a different value).
  uint64_t compute(int t, const std::vector<uint64_t> &value,
                   const std::vector<char> &written) const {
    const TaskData &d = data[t];
    uint64_t h = d.seed;
    for (size_t r = 0; r < d.readWriters.size(); ++r) {
      if (d.readWriters[r].empty()) {
        h = mix(h, d.inputHash[r]);
        continue;
      }
      for (int w : d.readWriters[r])
        h = mix(h, written[w] ? value[w] : mix(data[w].seed, 0x57a1e));
    }
    return h;
  }

  /// Values in a topological order of the producer relation alone.
  bool reference(std::string &message) {
    size_t n = g.tasks.size();
    std::vector<size_t> pending(n);
    std::vector<std::vector<int>> consumers(n);
    std::vector<int> ready;
    for (size_t t = 0; t < n; ++t) {
      pending[t] = data[t].producers.size();
      for (int p : data[t].producers)
        consumers[p].push_back(static_cast<int>(t));
      if (pending[t] == 0)
        ready.push_back(static_cast<int>(t));
    }
    referenceValue.assign(n, 0);
    std::vector<char> written(n, 0);
    size_t doneCount = 0;
    while (!ready.empty()) {
      int t = ready.back();
      ready.pop_back();
      referenceValue[t] = compute(t, referenceValue, written);
      written[t] = 1;
      ++doneCount;
      for (int c : consumers[t])
        if (--pending[c] == 0)
          ready.push_back(c);
    }
    if (doneCount != n) {
      for (size_t t = 0; t < n; ++t)
        if (pending[t] > 0) {
          message = "the boxes the tasks read and write form a cycle "
                    "through " +
                    g.describeTask(static_cast<int>(t));
          return false;
        }
    }
    return true;
  }

  uint64_t digest(const std::vector<uint64_t> &value) const {
    std::vector<std::pair<std::pair<int, int64_t>, uint64_t>> keyed;
    for (size_t t = 0; t < g.tasks.size(); ++t)
      if (!g.tasks[t].isEmpty())
        keyed.push_back({{g.tasks[t].op, g.tasks[t].tile}, value[t]});
    std::sort(keyed.begin(), keyed.end());
    uint64_t h = 0x6d656761; // "mega"
    for (auto &k : keyed)
      h = mix(mix(mix(h, static_cast<uint64_t>(k.first.first)),
                  static_cast<uint64_t>(k.first.second)),
              k.second);
    return h;
  }

  std::string eventState(int e, const std::vector<int64_t> &arrivals,
                         const std::vector<char> &done) const {
    std::ostringstream os;
    os << "event " << e << " (" << arrivals[e] << " of " << g.events[e].count
       << " arrivals";
    int shown = 0;
    for (size_t t = 0; t < g.tasks.size() && shown < 3; ++t)
      if (!done[t] && std::count(g.tasks[t].triggers.begin(),
                                 g.tasks[t].triggers.end(), e)) {
        os << (shown ? ", " : "; missing ")
           << g.describeTask(static_cast<int>(t));
        ++shown;
      }
    os << ")";
    return os.str();
  }

  bool runOrder(uint64_t seed, std::string &message) {
    const size_t nT = g.tasks.size(), nE = g.events.size();
    std::mt19937_64 rng(seed);
    auto pick = [&](size_t n) {
      return static_cast<size_t>(
          std::uniform_int_distribution<uint64_t>(0, n - 1)(rng));
    };
    std::string where = " (seed " + std::to_string(seed) + ")";
    std::vector<int64_t> arrivals(nE, 0);
    std::vector<char> triggered(nE, 0), launched(nT, 0), started(nT, 0),
        done(nT, 0);
    std::vector<size_t> waitsLeft(nT);
    for (size_t t = 0; t < nT; ++t)
      waitsLeft[t] = g.tasks[t].waits.size();
    std::vector<uint64_t> value(nT, 0);
    std::vector<int> pool;
    std::vector<std::vector<int>> queue(o.workers);
    std::vector<size_t> head(o.workers, 0);
    std::vector<int> running(o.workers, -1);
    {
      unsigned next = 0;
      for (size_t t = 0; t < nT; ++t)
        if (aotTask[t])
          queue[next++ % o.workers].push_back(static_cast<int>(t));
    }
    std::string violation;

    auto launch = [&](int t) {
      if (launched[t]) {
        if (violation.empty())
          violation = g.describeTask(t) + " launched twice";
        return;
      }
      launched[t] = 1;
      if (!aotTask[t])
        pool.push_back(t);
    };
    auto trigger = [&](int e) {
      if (triggered[e]) {
        if (violation.empty())
          violation = "event " + std::to_string(e) + " triggered twice";
        return;
      }
      triggered[e] = 1;
      if (g.form == Form::Linear) {
        const Event &ev = g.events[e];
        if (ev.first >= 0)
          for (int64_t t = ev.first; t <= ev.last; ++t)
            launch(static_cast<int>(t));
        return;
      }
      for (int t : eventOut[e])
        if (--waitsLeft[t] == 0)
          launch(t);
    };

    for (size_t t = 0; t < nT; ++t)
      if (g.tasks[t].waits.empty() && g.form != Form::Linear)
        launch(static_cast<int>(t));
    for (size_t e = 0; e < nE; ++e)
      if (g.events[e].count == 0)
        trigger(static_cast<int>(e));

    size_t doneCount = 0;
    std::vector<unsigned> startable;
    std::vector<unsigned> busy;
    while (violation.empty()) {
      startable.clear();
      busy.clear();
      for (unsigned w = 0; w < o.workers; ++w) {
        if (running[w] >= 0)
          busy.push_back(w);
        else if (!pool.empty() ||
                 (head[w] < queue[w].size() && launched[queue[w][head[w]]]))
          startable.push_back(w);
      }
      if (startable.empty() && busy.empty())
        break;
      size_t choice = pick(startable.size() + busy.size());
      if (choice < startable.size()) {
        unsigned w = startable[choice];
        bool aotReady =
            head[w] < queue[w].size() && launched[queue[w][head[w]]];
        int t;
        if (aotReady && (pool.empty() || pick(2) == 0)) {
          t = queue[w][head[w]++];
        } else {
          size_t i = pick(pool.size());
          t = pool[i];
          pool[i] = pool.back();
          pool.pop_back();
        }
        if (started[t]) {
          violation = g.describeTask(t) + " ran twice";
          break;
        }
        started[t] = 1;
        if (o.checkProducerOrder)
          for (int p : data[t].producers)
            if (!done[p]) {
              violation = g.describeTask(t) + " started before " +
                          g.describeTask(p) +
                          ", whose tile it reads, completed";
              break;
            }
        value[t] = compute(t, value, done);
        running[w] = t;
      } else {
        unsigned w = busy[choice - startable.size()];
        int t = running[w];
        running[w] = -1;
        done[t] = 1;
        ++doneCount;
        for (int e : g.tasks[t].triggers) {
          if (++arrivals[e] > g.events[e].count) {
            violation = "event " + std::to_string(e) + " received " +
                        std::to_string(arrivals[e]) +
                        " arrivals; its trigger count is " +
                        std::to_string(g.events[e].count);
            break;
          }
          if (arrivals[e] == g.events[e].count)
            trigger(e);
        }
      }
    }
    if (!violation.empty()) {
      message = "violation" + where + ": " + violation;
      return false;
    }
    if (doneCount != nT) {
      std::ostringstream os;
      os << "deadlock" << where << ": " << doneCount << " of " << nT
         << " tasks ran; stuck:";
      int shown = 0;
      for (size_t t = 0; t < nT && shown < 5; ++t) {
        if (done[t])
          continue;
        ++shown;
        os << "\n  " << g.describeTask(static_cast<int>(t));
        if (launched[t]) {
          os << " launched";
          for (unsigned w = 0; w < o.workers; ++w) {
            auto it = std::find(queue[w].begin(), queue[w].end(),
                                static_cast<int>(t));
            if (it != queue[w].end() && head[w] < queue[w].size() &&
                queue[w][head[w]] != static_cast<int>(t))
              os << ", queued on worker " << w << " behind "
                 << g.describeTask(queue[w][head[w]]);
          }
          continue;
        }
        os << " never launched; waits on";
        for (int e : g.tasks[t].waits)
          if (!triggered[e])
            os << ' ' << eventState(e, arrivals, done);
      }
      message = os.str();
      return false;
    }
    for (size_t e = 0; e < nE; ++e)
      if (!triggered[e]) {
        message = "event never triggered" + where + ": " +
                  eventState(static_cast<int>(e), arrivals, done);
        return false;
      }
    for (size_t t = 0; t < nT; ++t)
      if (value[t] != referenceValue[t]) {
        message = "data mismatch" + where + ": " +
                  g.describeTask(static_cast<int>(t)) +
                  " computed a different value than in the reference order "
                  "(it read a tile before the tile was written)";
        return false;
      }
    return true;
  }
};

} // namespace

SimResult simulate(const TGraph &g, const SimOptions &options) {
  return Simulation(g, options).run();
}

} // namespace tawa::mega
