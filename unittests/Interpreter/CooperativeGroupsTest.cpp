//===- CooperativeGroupsTest.cpp - groups of one consumer partition -------===//
//
// A consumer partition of 8 warps is two cooperative warp groups: the
// interpreter runs each as a task of its own, each taking and releasing
// every aref position, and with products marked tawa.issue_turn the groups
// take turns issuing them through named barriers
// (tawa/Protocol/IssueTurnProtocol.h). A producer puts six 8x8 tiles
// through a ring of two slots; each iteration the consumer issues two
// products from the tile (one run of turn products) and sums them.
//
//===----------------------------------------------------------------------===//

#include "InterpreterTestUtils.h"

#include "tawa/Dialect/Tawa/TawaDialect.h"

#include "mlir/IR/Builders.h"

#include <algorithm>

using namespace mlir;
using namespace tawa;
using namespace tawa::interp;
using namespace tawa::interp::testing;
using protocol::IssueTurnVariant;

namespace {

struct KernelShape {
  int consumerWarps = 8;
  bool turns = true;
  bool release = true;
  int pendings = 0; ///< of the wait that retires both products
};

std::string cooperativeKernel(const KernelShape &k) {
  std::string turn = k.turns ? " {tawa.issue_turn}" : "";
  return R"(
    tt.func @coop(%in: !tt.tensordesc<tensor<8x8xf32>>,
                  %out: !tt.tensordesc<tensor<8x8xf32>>) {
      %c0 = arith.constant 0 : i32
      %c1 = arith.constant 1 : i32
      %c6 = arith.constant 6 : i32
      %c8 = arith.constant 8 : i32
      %zero = arith.constant dense<0.0> : tensor<8x8xf32>
      %r = tawa.aref.create : !tawa.aref<[tensor<8x8xf32>], 2>
      tawa.warp_specialize partition warps(4) regs(40) {
        scf.for %k = %c0 to %c6 step %c1 : i32 {
          %row = arith.muli %k, %c8 : i32
          %t = tt.descriptor_load %in[%row, %c0] : !tt.tensordesc<tensor<8x8xf32>> -> tensor<8x8xf32>
          tawa.aref.put %r[%k], %t : !tawa.aref<[tensor<8x8xf32>], 2>, tensor<8x8xf32>
        }
      } partition warps()" +
         std::to_string(k.consumerWarps) + R"() regs(232) {
        %acc0 = scf.for %k = %c0 to %c6 step %c1 iter_args(%a = %zero) -> (tensor<8x8xf32>) : i32 {
          %t = tawa.aref.get %r[%k] : !tawa.aref<[tensor<8x8xf32>], 2> -> tensor<8x8xf32>
          %d1 = tawa.dot_async %t, %t, %zero)" +
         turn + R"( : tensor<8x8xf32> * tensor<8x8xf32> -> tensor<8x8xf32>
          %d2 = tawa.dot_async %t, %t, %a)" +
         turn + R"( : tensor<8x8xf32> * tensor<8x8xf32> -> tensor<8x8xf32>
          %w:2 = tawa.dot_wait %d1, %d2 {pendings = )" +
         std::to_string(k.pendings) + R"( : i32} : tensor<8x8xf32>, tensor<8x8xf32>
)" + (k.release ? "          tawa.aref.consumed %r[%k] : !tawa.aref<[tensor<8x8xf32>], 2>\n"
                : "") +
         R"(          %s = arith.addf %w#0, %w#1 : tensor<8x8xf32>
          scf.yield %s : tensor<8x8xf32>
        }
        %fin = tawa.dot_wait %acc0 {pendings = 0 : i32} : tensor<8x8xf32>
        tt.descriptor_store %out[%c0, %c0], %fin : !tt.tensordesc<tensor<8x8xf32>>, tensor<8x8xf32>
      }
      tt.return
    })";
}

/// One step of a run: the partition, the group and the operation's name.
struct Event {
  int partition, group;
  Operation *op;
};

class CooperativeGroupsTest : public KernelFixture {
protected:
  ExecutionResult run(const KernelShape &shape, uint64_t seed = 1,
                      IssueTurnVariant variant = IssueTurnVariant::Correct,
                      std::vector<Event> *trace = nullptr) {
    tt::FuncOp kernel = parseKernel(cooperativeKernel(shape));
    EXPECT_TRUE(kernel) << "kernel does not parse";
    if (!kernel)
      return {};
    Builder b(&context);
    memory = GlobalMemory();
    auto block = tensor({8, 8}, b.getF32Type());
    RuntimeValue in = makeMatrix(
        "in", b.getF32Type(), 48, 8, block,
        [](int64_t r, int64_t c) { return ((r * 7 + c * 3) % 11) / 8.0 - 0.5; });
    RuntimeValue out = makeMatrix("out", b.getF32Type(), 8, 8, block,
                                  [](int64_t, int64_t) { return 0.0; });
    ExecutionOptions options;
    options.seed = seed;
    options.turnVariant = variant;
    if (trace)
      options.onStep = [trace](int partition, int group, Operation *op) {
        trace->push_back({partition, group, op});
      };
    return runProgram(kernel, {in, out}, ProgramId{}, Grid{}, memory, options);
  }

  std::vector<double> output() {
    std::vector<double> v;
    for (int64_t i = 0; i < 8; ++i)
      for (int64_t j = 0; j < 8; ++j)
        v.push_back(element(1, i, j));
    return v;
  }
};

TEST_F(CooperativeGroupsTest, TwoGroupsComputeWhatOneGroupComputes) {
  KernelShape one;
  one.consumerWarps = 4;
  ExecutionResult single = run(one);
  ASSERT_TRUE(single.completed()) << single.message;
  EXPECT_EQ(single.cooperativeGroups, 0);
  EXPECT_EQ(single.issueTurns, 0u);
  std::vector<double> want = output();
  for (uint64_t seed = 1; seed <= 16; ++seed) {
    ExecutionResult r = run(KernelShape{}, seed);
    ASSERT_TRUE(r.completed()) << "seed " << seed << ": " << r.message;
    EXPECT_EQ(r.cooperativeGroups, 2);
    // One run of two products per iteration and group.
    EXPECT_EQ(r.issueTurns, 12u);
    EXPECT_EQ(output(), want) << "seed " << seed;
    // Each group runs every operation of the partition; the second takes
    // the first's products and other tensor results instead of computing
    // them again. What it adds to the work count are the results it only
    // passes along (ExecutionLimits::maxWork counts result elements): its
    // loop's result, its 6 gets and the 13 values its waits retire, 64
    // elements each.
    EXPECT_GT(r.steps, single.steps);
    EXPECT_EQ(r.work, single.work + 20 * 64) << "seed " << seed;
  }
}

TEST_F(CooperativeGroupsTest, GroupsAlternateTheirRunsOfProducts) {
  for (uint64_t seed = 1; seed <= 16; ++seed) {
    std::vector<Event> trace;
    ExecutionResult r = run(KernelShape{}, seed, IssueTurnVariant::Correct,
                            &trace);
    ASSERT_TRUE(r.completed()) << "seed " << seed << ": " << r.message;
    // A product that waits for its turn is stepped twice (the arrival at
    // the barrier, then the issue): in each group's own sequence of steps,
    // merge repeated steps of one operation and keep the last, the issue.
    std::vector<std::pair<size_t, int>> issues; // (trace index, group)
    Operation *last[2] = {nullptr, nullptr};
    size_t lastIndex[2] = {0, 0};
    auto flush = [&](int g) {
      if (last[g] && last[g]->getName().getStringRef() == "tawa.dot_async")
        issues.push_back({lastIndex[g], g});
    };
    for (size_t i = 0; i < trace.size(); ++i) {
      const Event &e = trace[i];
      if (e.partition != 1)
        continue;
      if (e.op != last[e.group]) {
        flush(e.group);
        last[e.group] = e.op;
      }
      lastIndex[e.group] = i;
    }
    flush(0);
    flush(1);
    std::sort(issues.begin(), issues.end());
    ASSERT_EQ(issues.size(), 24u) << "seed " << seed;
    // Group 0 issues first; then the groups alternate, a run of two
    // products each: 0 0 1 1 0 0 1 1 ...
    for (size_t i = 0; i < issues.size(); ++i)
      EXPECT_EQ(issues[i].second, static_cast<int>((i / 2) % 2))
          << "seed " << seed << ", issue " << i;
  }
}

// The ring is released only when both groups released a position: the put
// of k (k >= D) follows the releases of k - D by each group.
TEST_F(CooperativeGroupsTest, EveryGroupTakesAndReleasesEveryPosition) {
  for (uint64_t seed = 1; seed <= 16; ++seed) {
    std::vector<Event> trace;
    ExecutionResult r = run(KernelShape{}, seed, IssueTurnVariant::Correct,
                            &trace);
    ASSERT_TRUE(r.completed()) << "seed " << seed << ": " << r.message;
    // A put stepped while the slot is not empty is stepped again later:
    // the last of the producer's consecutive steps of it is the put.
    std::vector<size_t> puts;
    Operation *lastProducerOp = nullptr;
    for (size_t i = 0; i < trace.size(); ++i) {
      const Event &e = trace[i];
      if (e.partition != 0)
        continue;
      bool isPut = e.op->getName().getStringRef() == "tawa.aref.put";
      if (isPut && e.op == lastProducerOp)
        puts.back() = i;
      else if (isPut)
        puts.push_back(i);
      lastProducerOp = e.op;
    }
    ASSERT_EQ(puts.size(), 6u) << "seed " << seed;
    for (size_t k = 2; k < puts.size(); ++k) {
      int released[2] = {0, 0};
      for (size_t i = 0; i < puts[k]; ++i)
        if (trace[i].partition == 1 &&
            trace[i].op->getName().getStringRef() == "tawa.aref.consumed")
          ++released[trace[i].group];
      EXPECT_GE(released[0], static_cast<int>(k) - 1) << "seed " << seed;
      EXPECT_GE(released[1], static_cast<int>(k) - 1) << "seed " << seed;
    }
    int released[2] = {0, 0};
    for (const Event &e : trace)
      if (e.partition == 1 &&
          e.op->getName().getStringRef() == "tawa.aref.consumed")
        ++released[e.group];
    EXPECT_EQ(released[0], 6);
    EXPECT_EQ(released[1], 6);
  }
}

TEST_F(CooperativeGroupsTest, MissingReleaseDeadlocksBothGroups) {
  KernelShape shape;
  shape.release = false;
  ExecutionResult r = run(shape);
  ASSERT_EQ(r.kind, "deadlock") << r.message;
  ASSERT_EQ(r.details.size(), 3u);
  EXPECT_NE(r.details[0].find("partition 0 (4 warps): blocked in "
                              "tawa.aref.put"),
            std::string::npos)
      << r.details[0];
  EXPECT_NE(r.details[0].find("taken by reader(s) 0, 1, released by none of 2"),
            std::string::npos)
      << r.details[0];
  EXPECT_NE(r.details[1].find("partition 1 group 0 (4 warps): blocked in "
                              "tawa.aref.get"),
            std::string::npos)
      << r.details[1];
  EXPECT_NE(r.details[2].find("partition 1 group 1 (4 warps): blocked in "
                              "tawa.aref.get"),
            std::string::npos)
      << r.details[2];
}

TEST_F(CooperativeGroupsTest, AGroupReadingAnUnretiredProductIsNamed) {
  KernelShape shape;
  shape.pendings = 1;
  ExecutionResult r = run(shape);
  // The release comes first: the newer product still reads the slot.
  EXPECT_EQ(r.kind, "use-after-release") << r.message;
  EXPECT_NE(r.message.find("in partition 1 group"), std::string::npos)
      << r.message;
}

TEST_F(CooperativeGroupsTest, WithoutTurnsTheGroupsRunFreely) {
  KernelShape shape;
  shape.turns = false;
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    ExecutionResult r = run(shape, seed, IssueTurnVariant::NoFirstPass);
    ASSERT_TRUE(r.completed()) << r.message;
    EXPECT_EQ(r.issueTurns, 0u);
  }
}

// Each broken turn protocol is caught under every schedule.
TEST_F(CooperativeGroupsTest, BrokenTurnProtocolsAreCaught) {
  struct Expect {
    IssueTurnVariant variant;
    std::vector<std::string> kinds;
    std::string text;
  };
  std::vector<Expect> cases = {
      {IssueTurnVariant::NoFirstPass, {"deadlock"}, ""},
      {IssueTurnVariant::NoLastTake,
       {"barrier-at-exit"},
       "named barrier 8 (the issue turn of group 0) in phase 6 arrived at by "
       "group 1 only"},
      {IssueTurnVariant::NoHandOver, {"deadlock"}, ""},
      {IssueTurnVariant::LastTakeByGroup1, {"deadlock"}, ""},
      {IssueTurnVariant::WrongBarrier, {"barrier-overflow", "turn-overlap"}, ""},
      {IssueTurnVariant::EarlyHandOver, {"issue-outside-turn"}, ""},
      {IssueTurnVariant::DoubleFirstPass, {"barrier-overflow"}, ""},
  };
  for (const Expect &c : cases)
    for (uint64_t seed = 1; seed <= 8; ++seed) {
      ExecutionResult r = run(KernelShape{}, seed, c.variant);
      std::string name = protocol::issueTurnVariantName(c.variant);
      ASSERT_FALSE(r.completed()) << name << " seed " << seed;
      EXPECT_NE(std::find(c.kinds.begin(), c.kinds.end(), r.kind),
                c.kinds.end())
          << name << " seed " << seed << ": " << r.kind << ": " << r.message;
      if (!c.text.empty()) {
        EXPECT_NE(r.message.find(c.text), std::string::npos) << r.message;
      }
      if (r.kind == "deadlock") {
        bool barrier = false;
        for (const std::string &d : r.details)
          barrier |= d.find("blocked in bar.sync") != std::string::npos;
        EXPECT_TRUE(barrier) << name << " seed " << seed;
      }
    }
}

} // namespace
