//===- DeviceTablesTest.cpp - lowering a linear tGraph to device tables ---===//

#include "tawa/Mega/DeviceTables.h"
#include "TestInputs.h"
#include "tawa/Mega/DecodeGraph.h"
#include "tawa/Mega/Passes.h"
#include "tawa/Mega/TaskParams.h"
#include "tawa/Mega/TextFormat.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <fstream>
#include <sstream>

using namespace tawa::mega;

namespace {

// `sms`: the SMs the plan fills; with fewer than the attention tasks, those
// are just-in-time (8: the tiny model's 2 KV heads at batch 2 or more).
TGraph plannedTiny(int64_t batch, int sms = 8, bool separateMerge = false) {
  ModelConfig c = loadInputConfig("qwen3-tiny.json");
  PlanOptions o;
  o.separateMerge = separateMerge;
  o.batch = batch;
  o.maxSeq = 600;
  o.sms = sms;
  TGraph g = buildDecodeGraph(c, o);
  std::string error;
  for (const PassInfo *pass : planPipeline())
    EXPECT_TRUE(pass->run(g, error)) << error;
  return g;
}

DeviceTables lowered(const TGraph &g, unsigned workers) {
  LoweringOptions o;
  o.workers = workers;
  DeviceTables t;
  std::string error;
  EXPECT_TRUE(lowerToDeviceTables(g, o, t, error)) << error;
  return t;
}

TEST(DeviceTables, DescriptorsFollowTheGraph) {
  TGraph g = plannedTiny(3);
  DeviceTables t = lowered(g, 5);
  ASSERT_EQ(t.tasks.size(), g.tasks.size());
  ASSERT_EQ(t.events.size(), g.events.size());
  EXPECT_EQ(t.header.startEvent, uint32_t(g.start));
  EXPECT_EQ(t.header.endEvent, uint32_t(g.end));
  uint32_t jit = 0;
  for (size_t i = 0; i < g.tasks.size(); ++i) {
    const Task &task = g.tasks[i];
    const TaskDesc &d = t.tasks[i];
    EXPECT_EQ(d.waitEvent, uint32_t(task.waits[0]));
    EXPECT_EQ(d.triggerEvent, uint32_t(task.triggers[0]));
    EXPECT_EQ(d.op, uint16_t(task.op));
    EXPECT_EQ(d.tile, uint32_t(task.tile));
    EXPECT_EQ(d.kind, uint8_t(int(g.ops[task.op].kind) + 1));
    bool isJit = g.ops[task.op].launch == LaunchMode::Jit;
    EXPECT_EQ(bool(d.flags & kTaskJit), isJit) << i;
    jit += isJit;
    // The wait event's range holds the task, and flags it when it is JIT.
    const EventDesc &w = t.events[d.waitEvent];
    EXPECT_LE(w.firstTask, i);
    EXPECT_GE(w.lastTask, i);
    if (isJit)
      EXPECT_TRUE(w.flags & kEventDispatchesJit);
  }
  EXPECT_GT(jit, 0u) << "the tiny model has JIT attention tasks";
  EXPECT_EQ(t.header.numJitTasks, jit);
  for (size_t e = 0; e < g.events.size(); ++e) {
    EXPECT_EQ(t.events[e].triggerCount, uint32_t(g.events[e].count));
    bool anyJit = false;
    for (int64_t i = g.events[e].first; i >= 0 && i <= g.events[e].last; ++i)
      anyJit |= bool(t.tasks[i].flags & kTaskJit);
    EXPECT_EQ(bool(t.events[e].flags & kEventDispatchesJit), anyJit) << e;
  }
  EXPECT_TRUE(t.events[g.start].flags & kEventIsStart);
  EXPECT_TRUE(t.events[g.end].flags & kEventIsEnd);
  EXPECT_EQ(t.events[g.end].firstTask, kNoId);
}

TEST(DeviceTables, AotQueuesAreRoundRobinInIdOrder) {
  TGraph g = plannedTiny(2);
  const unsigned workers = 7;
  DeviceTables t = lowered(g, workers);
  ASSERT_EQ(t.aotOffsets.size(), workers + 1u);
  std::vector<int> seen(t.tasks.size(), 0);
  for (unsigned w = 0; w < workers; ++w)
    for (uint32_t i = t.aotOffsets[w]; i < t.aotOffsets[w + 1]; ++i) {
      uint32_t id = t.aotTasks[i];
      ++seen[id];
      EXPECT_FALSE(t.tasks[id].flags & kTaskJit);
      if (i > t.aotOffsets[w])
        EXPECT_LT(t.aotTasks[i - 1], id) << "queue " << w << " not ascending";
    }
  // Every AOT task in exactly one queue, JIT tasks in none; the k-th AOT task
  // (in id order) on worker k mod W.
  uint32_t k = 0;
  for (size_t i = 0; i < t.tasks.size(); ++i) {
    bool isJit = t.tasks[i].flags & kTaskJit;
    EXPECT_EQ(seen[i], isJit ? 0 : 1) << i;
    if (isJit)
      continue;
    unsigned w = k % workers;
    uint32_t pos = t.aotOffsets[w] + k / workers;
    EXPECT_EQ(t.aotTasks[pos], i);
    ++k;
  }
  EXPECT_EQ(k, t.header.numAotTasks);
}

TEST(DeviceTables, ProducersAreTheTasksWhoseWritesMeetTheReads) {
  TGraph g = plannedTiny(2);
  DeviceTables t = lowered(g, 4);
  size_t edges = 0;
  for (size_t c = 0; c < g.tasks.size(); ++c)
    for (size_t p = 0; p < g.tasks.size(); ++p) {
      bool meets = false;
      for (const Region &r : g.tasks[c].reads)
        for (const Region &w : g.tasks[p].writes)
          meets |= p != c && overlaps(r, w);
      const uint32_t *b = t.producers.data() + t.producerOffsets[c];
      const uint32_t *e = t.producers.data() + t.producerOffsets[c + 1];
      EXPECT_EQ(std::find(b, e, uint32_t(p)) != e, meets) << c << " " << p;
      edges += meets;
      // Linear ids are topological, and producers precede their readers.
      if (meets)
        EXPECT_LT(p, c);
    }
  EXPECT_EQ(t.producers.size(), edges);

  LoweringOptions none;
  none.workers = 4;
  none.producers = false;
  DeviceTables bare;
  std::string error;
  ASSERT_TRUE(lowerToDeviceTables(g, none, bare, error)) << error;
  EXPECT_EQ(bare.header.numProducerEdges, 0u);
  EXPECT_EQ(bare.producerOffsets, std::vector<uint32_t>(g.tasks.size() + 1));
}

TEST(DeviceTables, PackedBlobReadsBackAndIsAligned) {
  DeviceTables t = lowered(plannedTiny(4), 3);
  std::vector<uint8_t> blob = packTables(t);
  const TablesHeader &h = t.header;
  EXPECT_EQ(blob.size(), h.totalBytes);
  for (uint32_t off :
       {h.tasksOffset, h.eventsOffset, h.opsOffset, h.aotOffsetsOffset,
        h.aotTasksOffset, h.producerOffsetsOffset, h.producersOffset})
    EXPECT_EQ(off % 16, 0u);
  EXPECT_EQ(std::memcmp(blob.data() + h.tasksOffset, t.tasks.data(),
                        t.tasks.size() * sizeof(TaskDesc)),
            0);
  DeviceTables back;
  std::string error;
  ASSERT_TRUE(unpackTables(blob.data(), blob.size(), back, error)) << error;
  EXPECT_EQ(packTables(back), blob);
  std::ostringstream a, b;
  printTables(t, a);
  printTables(back, b);
  EXPECT_EQ(a.str(), b.str());
}

TEST(DeviceTables, CorruptBlobsAreRejected) {
  DeviceTables t = lowered(plannedTiny(1), 2);
  const std::vector<uint8_t> good = packTables(t);
  auto rejects = [&](std::vector<uint8_t> blob, const std::string &what) {
    DeviceTables out;
    std::string error;
    EXPECT_FALSE(unpackTables(blob.data(), blob.size(), out, error)) << what;
    return error;
  };
  std::vector<uint8_t> b = good;
  b[0] ^= 1;
  EXPECT_NE(rejects(b, "magic").find("bad magic"), std::string::npos);
  b = good;
  b.resize(b.size() - 16);
  EXPECT_NE(rejects(b, "truncated").find("bytes"), std::string::npos);
  b = good;
  TaskDesc bad = t.tasks[5];
  bad.waitEvent = t.header.numEvents;
  std::memcpy(b.data() + t.header.tasksOffset + 5 * sizeof(TaskDesc), &bad,
              sizeof bad);
  EXPECT_NE(rejects(b, "event id").find("task 5"), std::string::npos);
  b = good;
  uint32_t badOffset = t.header.aotTasksOffset + 16;
  std::memcpy(b.data() + offsetof(TablesHeader, aotTasksOffset), &badOffset, 4);
  EXPECT_NE(rejects(b, "offset").find("offsets"), std::string::npos);
  b = good;
  TaskDesc flagged = t.tasks[5];
  flagged.flags |= 0x80;
  std::memcpy(b.data() + t.header.tasksOffset + 5 * sizeof(TaskDesc), &flagged,
              sizeof flagged);
  EXPECT_NE(rejects(b, "flags").find("unknown flags"), std::string::npos);
  b = good;
  uint32_t badId = t.header.numTasks;
  std::memcpy(b.data() + t.header.aotTasksOffset, &badId, 4);
  EXPECT_NE(rejects(b, "queue").find("AOT queue"), std::string::npos);
}

// A task's arrival is relaxed exactly when every task its trigger event
// launches is AOT and polls; the flag survives packing and is printed.
TEST(DeviceTables, RelaxedArrivalsWhereEveryWaiterPolls) {
  auto polls = [](uint8_t kind) { return pollingTaskKind(kind); };
  for (int64_t batch : {1, 3}) {
    TGraph g = plannedTiny(batch);
    DeviceTables t = lowered(g, 4);
    const size_t marked = markRelaxedArrivals(t, polls);
    size_t expected = 0, embeddings = 0, toArgmax = 0;
    for (size_t i = 0; i < t.tasks.size(); ++i) {
      const EventDesc &e = t.events[t.tasks[i].triggerEvent];
      bool all = e.firstTask != kNoId;
      for (uint32_t j = e.firstTask; all && j <= e.lastTask; ++j)
        all =
            !(t.tasks[j].flags & kTaskJit) && pollingTaskKind(t.tasks[j].kind);
      EXPECT_EQ(bool(t.tasks[i].flags & kTaskRelaxedArrival), all) << i;
      expected += all;
      // The end event launches nothing: its arrivals release. So do the LM
      // head's, whose event launches the argmax (which waits for it).
      const uint8_t kind = t.tasks[i].kind;
      if (e.flags & kEventIsEnd) {
        EXPECT_FALSE(t.tasks[i].flags & kTaskRelaxedArrival) << i;
      }
      if (e.firstTask != kNoId &&
          t.tasks[e.firstTask].kind == uint8_t(TaskKind::Argmax)) {
        ++toArgmax;
        EXPECT_FALSE(t.tasks[i].flags & kTaskRelaxedArrival) << i;
      }
      if (kind == uint8_t(TaskKind::Embedding)) {
        ++embeddings;
        // The embedding's rows feed the first QKV projection, which polls.
        EXPECT_TRUE(t.tasks[i].flags & kTaskRelaxedArrival) << i;
      }
    }
    EXPECT_GT(embeddings, 0u);
    EXPECT_GT(toArgmax, 0u);
    EXPECT_EQ(marked, expected);
    // Batch 3 has JIT attention: the QKV tiles that launch it release.
    EXPECT_EQ(t.header.numJitTasks != 0, batch == 3);
    DeviceTables back;
    std::string error;
    std::vector<uint8_t> blob = packTables(t);
    ASSERT_TRUE(unpackTables(blob.data(), blob.size(), back, error)) << error;
    EXPECT_EQ(packTables(back), blob);
    std::ostringstream os;
    printTables(back, os);
    EXPECT_NE(os.str().find(" relaxed"), std::string::npos);
    // Marking again gives the same flags; nothing polls, no flag.
    EXPECT_EQ(markRelaxedArrivals(t, polls), marked);
    EXPECT_EQ(markRelaxedArrivals(t, [](uint8_t) { return false; }), 0u);
    for (const TaskDesc &d : t.tasks)
      EXPECT_FALSE(d.flags & kTaskRelaxedArrival);
  }
}

TEST(DeviceTables, LoweringRejectsGraphsTheKernelCannotRun) {
  std::string error;
  DeviceTables t;
  LoweringOptions o;
  TGraph notLinear = plannedTiny(1);
  notLinear.form = Form::Normalized;
  EXPECT_FALSE(lowerToDeviceTables(notLinear, o, t, error));
  EXPECT_NE(error.find("linear"), std::string::npos);

  std::ifstream in(std::string(TAWA_MEGA_INPUTS) + "/aot-deadlock.mg");
  std::stringstream text;
  text << in.rdbuf();
  TGraph deadlock;
  ASSERT_TRUE(parseGraph(text.str(), "aot-deadlock.mg", deadlock, error))
      << error;
  EXPECT_FALSE(lowerToDeviceTables(deadlock, o, t, error));
  EXPECT_NE(error.find("not a topological order"), std::string::npos);

  o.workers = 0;
  EXPECT_FALSE(lowerToDeviceTables(plannedTiny(1), o, t, error));
}

TEST(DeviceTables, CriticalPathCountsTheLongestChain) {
  // P0 -> e1 -> Q0 -> e2(end) and P1 -> e2: the longest chain has 2 tasks.
  const char *text = R"(tgraph name=chain form=linear sms=2 start=0 end=2
op 0 name=P kind=generic
op 1 name=Q kind=generic
task 0 op=0 tile=0 wait=[0] trigger=[1]
task 1 op=0 tile=1 wait=[0] trigger=[2]
task 2 op=1 tile=0 wait=[1] trigger=[2]
event 0 count=0 launch=[0,1]
event 1 count=1 launch=[2,2]
event 2 count=2 launch=[]
)";
  TGraph g;
  std::string error;
  ASSERT_TRUE(parseGraph(text, "chain", g, error)) << error;
  EXPECT_EQ(criticalPathTasks(lowered(g, 2)), 2);
  // Embedding; 2 layers of qkv, attention (its chunks merged by the last
  // of them), O, gate/up (SiLU·mul in its epilogue), down; LM head; argmax.
  EXPECT_EQ(criticalPathTasks(lowered(plannedTiny(1), 4)), 13);
  // With a merge operator after attention: one task more per layer.
  EXPECT_EQ(criticalPathTasks(lowered(plannedTiny(1, 8, true), 4)), 15);
}

} // namespace
