//===- SimulatorTest.cpp - the CPU simulation finds broken graphs ---------===//

#include "tawa/Mega/Simulator.h"
#include "TestInputs.h"
#include "tawa/Mega/DecodeGraph.h"
#include "tawa/Mega/Passes.h"
#include "tawa/Mega/TextFormat.h"

#include <gtest/gtest.h>

#include <algorithm>

using namespace tawa::mega;

namespace {

TGraph planned(int64_t batch, size_t passes = 99) {
  ModelConfig c = loadInputConfig("qwen3-tiny.json");
  PlanOptions o;
  o.batch = batch;
  o.maxSeq = 600;
  TGraph g = buildDecodeGraph(c, o);
  std::string error;
  std::vector<const PassInfo *> pipeline = planPipeline();
  for (size_t i = 0; i < pipeline.size() && i < passes; ++i)
    EXPECT_TRUE(pipeline[i]->run(g, error)) << error;
  return g;
}

TEST(Simulator, EveryModeAndStageComputesTheSameValues) {
  uint64_t digest = 0;
  for (size_t stages = 1; stages <= 6; ++stages) {
    TGraph g = planned(3, stages);
    std::vector<SimMode> modes = {SimMode::Jit};
    if (g.form == Form::Linear)
      modes = {SimMode::Jit, SimMode::Aot, SimMode::Hybrid};
    for (SimMode mode : modes)
      for (unsigned workers : {1u, 4u, 200u}) {
        SimOptions o;
        o.orders = 6;
        o.mode = mode;
        o.workers = workers;
        SimResult r = simulate(g, o);
        ASSERT_TRUE(r.ok) << r.message;
        if (digest == 0)
          digest = r.digest;
        EXPECT_EQ(r.digest, digest) << stages << " passes";
      }
  }
}

/// Removes the first dependency of a task that has a producer, keeping the
/// graph well formed (the event's count follows): a graph that verifies but
/// lets a task start before a tile it reads is written.
TGraph dropOneDependency(TGraph g) {
  std::vector<std::vector<int>> in = eventInTasks(g);
  for (size_t e = 0; e < g.events.size(); ++e) {
    if (in[e].size() < 2)
      continue;
    int producer = in[e][0];
    auto &triggers = g.tasks[producer].triggers;
    triggers.erase(
        std::find(triggers.begin(), triggers.end(), static_cast<int>(e)));
    --g.events[e].count;
    break;
  }
  return g;
}

TEST(Simulator, FindsAMissingDependency) {
  // In the events form (no end event to catch the leaf).
  TGraph g = dropOneDependency(planned(2, 4));
  SimOptions o;
  o.orders = 50;
  SimResult r = simulate(g, o);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.message.find("started before"), std::string::npos) << r.message;

  o.checkProducerOrder = false;
  r = simulate(g, o);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.message.find("data mismatch"), std::string::npos) << r.message;
}

TEST(Simulator, RejectsAGraphThatDoesNotVerify) {
  TGraph g = planned(1);
  g.events[1].count += 1;
  SimResult r = simulate(g, SimOptions());
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.message.find("does not verify"), std::string::npos);
}

TEST(Simulator, ReportsAnAotDeadlock) {
  const char *text = R"(tgraph name=d form=linear sms=1 start=0 end=2
op 0 name=P kind=generic
task 0 op=0 tile=0 wait=[1] trigger=[2]
task 1 op=0 tile=1 wait=[0] trigger=[1]
event 0 count=0 launch=[1,1]
event 1 count=1 launch=[0,0]
event 2 count=1 launch=[]
)";
  TGraph g;
  std::string error;
  ASSERT_TRUE(parseGraph(text, "d", g, error)) << error;
  SimOptions o;
  o.mode = SimMode::Aot;
  o.workers = 1;
  SimResult r = simulate(g, o);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.message.find("deadlock (seed 1): 0 of 2 tasks ran"),
            std::string::npos)
      << r.message;
  EXPECT_NE(r.message.find("event 1 (0 of 1 arrivals"), std::string::npos);
  o.workers = 2; // each task on its own worker: no deadlock
  EXPECT_TRUE(simulate(g, o).ok);
}

TEST(Simulator, ModeNames) {
  SimMode m;
  EXPECT_TRUE(parseSimMode("hybrid", m));
  EXPECT_EQ(m, SimMode::Hybrid);
  EXPECT_FALSE(parseSimMode("fast", m));
}

} // namespace
