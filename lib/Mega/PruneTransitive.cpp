//===- PruneTransitive.cpp - drop dependencies implied by others ----------===//
//
// Tile-level analysis keeps every producer-consumer pair, including pairs
// that other paths already order: the O projection's residual read of x
// depends on the previous layer's down projection, which every QKV tile, and
// so everything up to the attention the O projection waits for, already
// follows. Kept, such a pair gives the down projection's tile a second trigger
// event, and normalization then adds an empty task and an event for it.
//
// The pass works per pair of task groups: the tasks of one operator in one
// row tile (the first dimension of their first write box, the batch rows,
// divided by the plan's tile_m), so that a plan of several row tiles prunes
// within each (with the whole operator as one group no tile reaches every
// tile of the next operator, and nothing was pruned: at batch 100,
// Qwen3-0.6B's plan got 1.6 million empty tasks). With one row tile the
// groups are the operators. Writing A => B for "every task of group B is
// reached from every task of group A" (through any path), and
//   AllToAll(A, B): every task of B depends directly on every task of A,
//   Covers(P, B):   every task of B depends directly on some task of P,
// we have A => B if AllToAll(A, B), or if some operator P != A with
// Covers(P, B) has A => P (each b has a predecessor p, and a reaches p).
// The pair events from A to C are redundant when some other operator B with
// Covers(B, C) has A => B: every c then has a predecessor b that every a
// reaches. Operators are visited in topological order, each consumer's
// incoming pairs decided on the current graph (so a pair is only dropped
// because of paths that stay), and A => C computed once C's pairs are final.
// The task-level reachability order is unchanged; the CPU simulation checks
// that against the boxes the tasks read.
//
//===----------------------------------------------------------------------===//

#include "tawa/Mega/Passes.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>

namespace tawa::mega {

bool pruneTransitiveDependencies(TGraph &g, std::string &error) {
  if (g.form != Form::Events) {
    error = std::string("prune-transitive needs a graph in the events form, "
                        "got '") +
            formName(g.form) + "'";
    return false;
  }
  std::vector<std::vector<int>> in = eventInTasks(g), out = eventOutTasks(g);
  for (size_t e = 0; e < g.events.size(); ++e)
    if (in[e].size() != 1 || out[e].size() != 1) {
      error = "prune-transitive needs one event per producer-consumer pair "
              "(run it right after tile-deps), but event " +
              std::to_string(e) + " has " + std::to_string(in[e].size()) +
              " producers and " + std::to_string(out[e].size()) + " consumers";
      return false;
    }
  for (size_t t = 0; t < g.tasks.size(); ++t)
    if (g.tasks[t].isEmpty()) {
      error = "prune-transitive works on operators' tasks, but task " +
              std::to_string(t) + " is empty";
      return false;
    }

  // The row tile: the smallest tile_m of the operators (0: none, every
  // operator one group).
  int64_t rowTile = 0;
  for (const Operator &op : g.ops)
    for (const auto &[key, value] : op.attrs)
      if (key == "tile_m") {
        const int64_t m = std::strtoll(value.c_str(), nullptr, 10);
        if (m > 0 && (rowTile == 0 || m < rowTile))
          rowTile = m;
      }
  // Task groups: (operator, row tile written), numbered densely.
  std::map<std::pair<int, int64_t>, int> groupIds;
  std::vector<int> groupOf(g.tasks.size());
  for (size_t t = 0; t < g.tasks.size(); ++t) {
    const Task &task = g.tasks[t];
    int64_t rowTileOf = -1;
    if (rowTile > 0 && !task.writes.empty() && !task.writes[0].box.empty())
      rowTileOf = task.writes[0].box[0].begin / rowTile;
    auto it = groupIds
                  .emplace(std::make_pair(task.op, rowTileOf),
                           static_cast<int>(groupIds.size()))
                  .first;
    groupOf[t] = it->second;
  }
  const size_t nOps = groupIds.size(); // groups, below
  std::vector<size_t> tasksOf(nOps, 0);
  for (size_t t = 0; t < g.tasks.size(); ++t)
    ++tasksOf[groupOf[t]];

  // Pair events grouped by (producer group, consumer group); pairs within
  // one operator stay.
  struct Group {
    std::vector<int> events;
    std::set<int> consumers;
    bool alive = true;
  };
  std::map<std::pair<int, int>, Group> groups;
  std::vector<std::vector<int>> predOps(nOps), succOps(nOps);
  for (size_t e = 0; e < g.events.size(); ++e) {
    int p = in[e][0], c = out[e][0];
    if (g.tasks[p].op == g.tasks[c].op)
      continue;
    int a = groupOf[p], b = groupOf[c];
    Group &group = groups[{a, b}];
    if (group.events.empty()) {
      predOps[b].push_back(a);
      succOps[a].push_back(b);
    }
    group.events.push_back(static_cast<int>(e));
    group.consumers.insert(c);
  }

  // Topological order of the groups; a cycle among groups (possible
  // without a task-level cycle) leaves the graph as it is.
  std::vector<size_t> indegree(nOps);
  std::vector<int> order;
  for (size_t o = 0; o < nOps; ++o)
    if ((indegree[o] = predOps[o].size()) == 0)
      order.push_back(static_cast<int>(o));
  for (size_t i = 0; i < order.size(); ++i)
    for (int s : succOps[order[i]])
      if (--indegree[s] == 0)
        order.push_back(s);
  if (order.size() != nOps)
    return true;
  std::vector<size_t> position(nOps);
  for (size_t i = 0; i < nOps; ++i)
    position[order[i]] = i;

  auto covers = [&](int p, int c) {
    auto it = groups.find({p, c});
    return it != groups.end() && it->second.alive &&
           it->second.consumers.size() == tasksOf[c];
  };
  auto allToAll = [&](int a, int c) {
    auto it = groups.find({a, c});
    return it != groups.end() && it->second.alive &&
           it->second.events.size() == tasksOf[a] * tasksOf[c];
  };
  // reaches[a][b]: a => b, filled for b once b's incoming pairs are final.
  std::vector<std::vector<char>> reaches(nOps, std::vector<char>(nOps, 0));
  std::vector<bool> dead(g.events.size(), false);
  for (int c : order) {
    std::vector<int> preds = predOps[c];
    std::sort(preds.begin(), preds.end(),
              [&](int x, int y) { return position[x] < position[y]; });
    // Earliest producers first: the far-away reads (residuals) are the ones
    // that later operators imply.
    for (int a : preds) {
      bool implied = false;
      for (int b : preds)
        if (b != a && covers(b, c) && reaches[a][b]) {
          implied = true;
          break;
        }
      if (!implied)
        continue;
      Group &group = groups[{a, c}];
      group.alive = false;
      for (int e : group.events)
        dead[e] = true;
    }
    for (size_t a = 0; a < nOps; ++a) {
      if (static_cast<int>(a) == c)
        continue;
      bool r = allToAll(static_cast<int>(a), c);
      for (size_t i = 0; i < preds.size() && !r; ++i)
        r = preds[i] != static_cast<int>(a) && covers(preds[i], c) &&
            reaches[a][preds[i]];
      reaches[a][c] = r;
    }
  }
  eraseEvents(g, dead);
  recountEvents(g);
  return true;
}

} // namespace tawa::mega
