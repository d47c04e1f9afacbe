//===- PassesTest.cpp - the passes preserve the task order ----------------===//

#include "tawa/Mega/Passes.h"
#include "TestInputs.h"
#include "tawa/Mega/DecodeGraph.h"
#include "tawa/Mega/Simulator.h"
#include "tawa/Mega/TextFormat.h"
#include "tawa/Mega/Verifier.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <random>
#include <set>

using namespace tawa::mega;

namespace {

TGraph tinyGraph(int64_t batch = 2, int64_t maxSeq = 512,
                 const char *model = "qwen3-tiny.json") {
  ModelConfig c = loadInputConfig(model);
  PlanOptions o;
  o.batch = batch;
  o.maxSeq = maxSeq;
  return buildDecodeGraph(c, o);
}

using Key = std::pair<int, int64_t>; // (op, tile): stable across renumbering

/// For each compute task (by op and tile), the compute tasks it transitively
/// depends on through events and empty tasks.
std::map<Key, std::set<Key>> ancestors(const TGraph &g) {
  std::vector<std::vector<int>> in = eventInTasks(g);
  std::map<int, std::set<int>> memo;
  // Graphs here are small: a memoized depth-first walk.
  std::function<const std::set<int> &(int)> walk =
      [&](int t) -> const std::set<int> & {
    auto it = memo.find(t);
    if (it != memo.end())
      return it->second;
    std::set<int> result;
    for (int e : g.tasks[t].waits)
      for (int p : in[e]) {
        if (!g.tasks[p].isEmpty())
          result.insert(p);
        const std::set<int> &up = walk(p);
        result.insert(up.begin(), up.end());
      }
    return memo[t] = std::move(result);
  };
  std::map<Key, std::set<Key>> out;
  for (size_t t = 0; t < g.tasks.size(); ++t) {
    if (g.tasks[t].isEmpty())
      continue;
    std::set<Key> keys;
    for (int p : walk(static_cast<int>(t)))
      keys.insert({g.tasks[p].op, g.tasks[p].tile});
    out[{g.tasks[t].op, g.tasks[t].tile}] = std::move(keys);
  }
  return out;
}

TEST(Passes, EveryPassKeepsTheTransitiveOrderOfTheTileDependencies) {
  for (const char *model : {"qwen3-tiny.json", "llama-tiny.json"})
    for (bool prune : {true, false}) {
      TGraph g = tinyGraph(2, 512, model);
      std::string error;
      ASSERT_TRUE(analyzeTileDependencies(g, error)) << error;
      std::map<Key, std::set<Key>> reference = ancestors(g);
      for (const PassInfo *pass : planPipeline(prune)) {
        if (std::string(pass->name) == "tile-deps")
          continue;
        ASSERT_TRUE(pass->run(g, error)) << pass->name << ": " << error;
        std::vector<std::string> errors = verifyGraph(g);
        ASSERT_TRUE(errors.empty()) << pass->name << ": " << errors[0];
        EXPECT_EQ(ancestors(g), reference) << model << " after " << pass->name;
      }
      EXPECT_EQ(g.form, Form::Linear);
    }
}

/// A random tiles-form graph: a chain of operators, each writing its own
/// tensor in random column tiles and reading random column ranges of one or
/// two earlier tensors (or the input), so that every fan pattern and partial
/// overlaps occur.
TGraph randomGraph(std::mt19937 &rng) {
  auto uniform = [&](int lo, int hi) {
    return std::uniform_int_distribution<int>(lo, hi)(rng);
  };
  TGraph g;
  g.name = "random";
  const int64_t width = 12;
  g.tensors.push_back({"in", {1, width}, TensorRole::Input, 0});
  int nOps = uniform(2, 7);
  for (int o = 0; o < nOps; ++o) {
    g.ops.push_back(Operator{
        "op" + std::to_string(o), OpKind::Generic, -1, LaunchMode::Aot, {}, 0});
    int out = static_cast<int>(g.tensors.size());
    g.tensors.push_back(
        {"t" + std::to_string(o), {1, width}, TensorRole::Activation, 0});
    // Cut points of the op's output tiles.
    std::vector<int64_t> cuts = {0, width};
    for (int c = uniform(0, 4); c > 0; --c)
      cuts.push_back(uniform(1, width - 1));
    std::sort(cuts.begin(), cuts.end());
    cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
    for (size_t i = 0; i + 1 < cuts.size(); ++i) {
      Task t;
      t.op = o;
      t.tile = static_cast<int64_t>(i);
      t.writes.push_back(Region{out, {{0, 1}, {cuts[i], cuts[i + 1]}}});
      for (int r = uniform(1, 2); r > 0; --r) {
        int src = uniform(0, out - 1); // the input or an earlier op's output
        int64_t a = uniform(0, width - 1), b = uniform(0, width - 1);
        t.reads.push_back(
            Region{src, {{0, 1}, {std::min(a, b), std::max(a, b) + 1}}});
      }
      g.tasks.push_back(std::move(t));
    }
  }
  return g;
}

TEST(Passes, RandomGraphsKeepTheirOrderAndValues) {
  std::mt19937 rng(20261122);
  // The plan pipeline with and without pruning, and without fusion: after
  // fusion every task waits on one event, so only the last exercises the
  // fan-in split.
  std::vector<std::vector<const PassInfo *>> pipelines = {
      planPipeline(true),
      planPipeline(false),
      {findPass("tile-deps"), findPass("normalize"), findPass("linearize")}};
  for (int iteration = 0; iteration < 150; ++iteration) {
    for (const std::vector<const PassInfo *> &pipeline : pipelines) {
      std::mt19937 copy = rng;
      TGraph g = randomGraph(copy);
      std::string error;
      ASSERT_TRUE(verifyGraph(g).empty());
      ASSERT_TRUE(analyzeTileDependencies(g, error)) << error;
      std::map<Key, std::set<Key>> reference = ancestors(g);
      SimOptions sim;
      sim.orders = 3;
      sim.workers = 3;
      SimResult before = simulate(g, sim);
      ASSERT_TRUE(before.ok) << before.message;
      for (const PassInfo *pass : pipeline) {
        if (std::string(pass->name) == "tile-deps")
          continue;
        ASSERT_TRUE(pass->run(g, error)) << pass->name << ": " << error;
        std::vector<std::string> errors = verifyGraph(g);
        ASSERT_TRUE(errors.empty()) << "graph " << iteration << " after "
                                    << pass->name << ": " << errors[0] << "\n"
                                    << printGraph(g);
        ASSERT_EQ(ancestors(g), reference)
            << "graph " << iteration << " after " << pass->name << "\n"
            << printGraph(g);
      }
      SimResult after = simulate(g, sim); // linear: round-robin AOT queues
      ASSERT_TRUE(after.ok) << "graph " << iteration << ": " << after.message;
      EXPECT_EQ(after.digest, before.digest) << "graph " << iteration;
    }
    randomGraph(rng); // advance
  }
}

TEST(Passes, LinearIdsAreTopologicalAndRangesContiguous) {
  TGraph g = tinyGraph(4, 1024);
  std::string error;
  for (const PassInfo *pass : planPipeline())
    ASSERT_TRUE(pass->run(g, error)) << error;
  std::vector<std::vector<int>> in = eventInTasks(g);
  for (size_t t = 0; t < g.tasks.size(); ++t) {
    ASSERT_EQ(g.tasks[t].waits.size(), 1u);
    ASSERT_EQ(g.tasks[t].triggers.size(), 1u);
    int e = g.tasks[t].waits[0];
    EXPECT_LE(g.events[e].first, static_cast<int64_t>(t));
    EXPECT_GE(g.events[e].last, static_cast<int64_t>(t));
    for (int p : in[e])
      EXPECT_LT(p, static_cast<int>(t)) << "producer after its consumer";
  }
  EXPECT_EQ(g.start, 0);
  EXPECT_EQ(g.events[0].count, 0);
}

TEST(Passes, PruningLeavesNoFanOutInTheDecodeGraph) {
  TGraph g = tinyGraph(1, 512);
  std::string error;
  for (const PassInfo *pass : planPipeline())
    ASSERT_TRUE(pass->run(g, error)) << error;
  for (const Task &t : g.tasks)
    EXPECT_FALSE(t.isEmpty());

  TGraph unpruned = tinyGraph(1, 512);
  for (const PassInfo *pass : planPipeline(/*prune=*/false))
    ASSERT_TRUE(pass->run(unpruned, error)) << error;
  size_t empty = 0;
  for (const Task &t : unpruned.tasks)
    empty += t.isEmpty();
  EXPECT_GT(empty, 0u);
}

TEST(Passes, RefuseTheWrongForm) {
  TGraph g = tinyGraph();
  std::string error;
  EXPECT_FALSE(fuseSuccessorSets(g, error));
  EXPECT_NE(error.find("needs a graph in the events form, got 'tiles'"),
            std::string::npos);
  EXPECT_FALSE(linearizeGraph(g, error));
  ASSERT_TRUE(analyzeTileDependencies(g, error));
  EXPECT_FALSE(analyzeTileDependencies(g, error));
  ASSERT_TRUE(fuseSuccessorSets(g, error));
  EXPECT_FALSE(pruneTransitiveDependencies(g, error));
  EXPECT_NE(error.find("one event per producer-consumer pair"),
            std::string::npos);
}

TEST(Passes, FusionIsIdempotent) {
  TGraph g = tinyGraph();
  std::string error;
  for (auto *pass :
       {analyzeTileDependencies, fuseSuccessorSets, fusePredecessorSets})
    ASSERT_TRUE(pass(g, error)) << error;
  std::string once = printGraph(g);
  ASSERT_TRUE(fusePredecessorSets(g, error));
  EXPECT_EQ(printGraph(g), once);
}

TEST(Passes, RegistryNamesEveryPass) {
  for (const char *name : {"tile-deps", "prune-transitive", "fuse-successors",
                           "fuse-predecessors", "attach-roots", "split-fan-out",
                           "split-fan-in", "normalize", "linearize"})
    EXPECT_NE(findPass(name), nullptr) << name;
  EXPECT_EQ(findPass("frob"), nullptr);
  EXPECT_EQ(planPipeline().size(), 6u);
  EXPECT_EQ(planPipeline(false).size(), 5u);
}

} // namespace
