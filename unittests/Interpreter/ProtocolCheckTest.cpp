//===- ProtocolCheckTest.cpp - interleaved partitions and their checks ----===//
//
// A small warp-specialized kernel: a producer puts six 8x8 tiles through a
// ring of two slots, a consumer sums them. Variants of the consumer break
// the protocol in each way the interpreter must report.
//
//===----------------------------------------------------------------------===//

#include "InterpreterTestUtils.h"

#include "tawa/Interpreter/Scheduler.h"

#include "mlir/IR/Builders.h"

#include <set>

using namespace mlir;
using namespace tawa;
using namespace tawa::interp;
using namespace tawa::interp::testing;

namespace {

/// The kernel with `consumerLoop` as the body of the consumer's loop over k
/// (it has %t = the tile, %a = the running sum; it yields the new sum) and
/// `epilogue` between the loop and the store of %acc.
std::string wsKernel(const std::string &consumerLoop,
                     const std::string &epilogue = "") {
  return R"(
    tt.func @ws(%in: !tt.tensordesc<tensor<8x8xf32>>,
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
      } partition warps(4) regs(232) {
        %acc0 = scf.for %k = %c0 to %c6 step %c1 iter_args(%a = %zero) -> (tensor<8x8xf32>) : i32 {
          %t = tawa.aref.get %r[%k] : !tawa.aref<[tensor<8x8xf32>], 2> -> tensor<8x8xf32>
)" + consumerLoop +
         R"(
        }
)" + epilogue +
         R"(
        tt.descriptor_store %out[%c0, %c0], %acc : !tt.tensordesc<tensor<8x8xf32>>, tensor<8x8xf32>
      }
      tt.return
    })";
}

const char *kSumAndRelease = R"(
          %s = arith.addf %a, %t : tensor<8x8xf32>
          tawa.aref.consumed %r[%k] : !tawa.aref<[tensor<8x8xf32>], 2>
          scf.yield %s : tensor<8x8xf32>)";

const char *kAccIsLoopResult = R"(
        %acc = arith.addf %acc0, %zero : tensor<8x8xf32>)";

class ProtocolCheckTest : public KernelFixture {
protected:
  /// Runs `text` on 48 rows of input tiles into `outRows` rows of output.
  ExecutionResult run(const std::string &text, uint64_t seed = 1,
                      std::vector<int> *trace = nullptr, int64_t outRows = 8) {
    tt::FuncOp kernel = parseKernel(text);
    EXPECT_TRUE(kernel) << "kernel does not parse";
    if (!kernel)
      return {};
    Builder b(&context);
    memory = GlobalMemory();
    auto block = tensor({8, 8}, b.getF32Type());
    RuntimeValue in = makeMatrix("in", b.getF32Type(), 48, 8, block,
                                 [](int64_t r, int64_t c) { return r - c; });
    RuntimeValue out = makeMatrix("out", b.getF32Type(), outRows, 8, block,
                                  [](int64_t, int64_t) { return 0.0; });
    ExecutionOptions options;
    options.seed = seed;
    if (trace)
      options.onStep = [trace](int partition, int, Operation *) {
        trace->push_back(partition);
      };
    return runProgram(kernel, {in, out}, ProgramId{}, Grid{}, memory, options);
  }
};

TEST_F(ProtocolCheckTest, CorrectKernelCompletesUnderEverySchedule) {
  for (uint64_t seed = 1; seed <= 16; ++seed) {
    ExecutionResult r = run(wsKernel(kSumAndRelease, kAccIsLoopResult), seed);
    ASSERT_TRUE(r.completed()) << "seed " << seed << ": " << r.message;
    for (int64_t i = 0; i < 8; ++i)
      for (int64_t j = 0; j < 8; ++j) {
        float want = 0;
        for (int64_t k = 0; k < 6; ++k)
          want += static_cast<float>(k * 8 + i - j);
        ASSERT_EQ(element(1, i, j), want);
      }
  }
}

TEST_F(ProtocolCheckTest, ScheduleIsDeterminedByTheSeed) {
  std::string text = wsKernel(kSumAndRelease, kAccIsLoopResult);
  std::set<std::vector<int>> distinct;
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    std::vector<int> first, second;
    ASSERT_TRUE(run(text, seed, &first).completed());
    ASSERT_TRUE(run(text, seed, &second).completed());
    EXPECT_EQ(first, second) << "seed " << seed;
    distinct.insert(first);
  }
  // Different seeds interleave the partitions differently.
  EXPECT_GE(distinct.size(), 4u);

  SeededScheduler a(7), b(7), c(8);
  bool differs = false;
  for (int i = 0; i < 64; ++i) {
    size_t pa = a.pick(5);
    EXPECT_EQ(pa, b.pick(5));
    EXPECT_LT(pa, 5u);
    differs |= pa != c.pick(5);
  }
  EXPECT_TRUE(differs);
}

// Without the consumed, the producer's put of k=2 waits for slot 0 forever
// and the consumer's get of k=2 waits for the put.
TEST_F(ProtocolCheckTest, MissingConsumedIsADeadlock) {
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    ExecutionResult r = run(wsKernel(R"(
          %s = arith.addf %a, %t : tensor<8x8xf32>
          scf.yield %s : tensor<8x8xf32>)",
                                     kAccIsLoopResult),
                            seed);
    ASSERT_EQ(r.outcome, Outcome::ProtocolViolation);
    EXPECT_EQ(r.kind, "deadlock");
    ASSERT_EQ(r.details.size(), 2u) << r.message;
    EXPECT_NE(r.details[0].find("partition 0 (4 warps): blocked in "
                                "tawa.aref.put"),
              std::string::npos)
        << r.details[0];
    EXPECT_NE(r.details[0].find("position k=2, slot 0: the slot is not empty "
                                "(E=0 F=0: borrowed by the get of k=0"),
              std::string::npos)
        << r.details[0];
    EXPECT_NE(r.details[1].find("partition 1 (4 warps): blocked in "
                                "tawa.aref.get"),
              std::string::npos)
        << r.details[1];
    EXPECT_NE(r.details[1].find("position k=2, slot 0: the slot is not full"),
              std::string::npos)
        << r.details[1];
  }
}

TEST_F(ProtocolCheckTest, ReadAfterConsumedIsReported) {
  ExecutionResult r = run(wsKernel(R"(
          tawa.aref.consumed %r[%k] : !tawa.aref<[tensor<8x8xf32>], 2>
          %s = arith.addf %a, %t : tensor<8x8xf32>
          scf.yield %s : tensor<8x8xf32>)",
                                   kAccIsLoopResult));
  EXPECT_EQ(r.outcome, Outcome::ProtocolViolation);
  EXPECT_EQ(r.kind, "use-after-consumed");
  EXPECT_NE(r.message.find("arith.addf"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("after tawa.aref.consumed"), std::string::npos)
      << r.message;
}

TEST_F(ProtocolCheckTest, ConsumedTwiceIsNotBorrowed) {
  ExecutionResult r = run(wsKernel(R"(
          %s = arith.addf %a, %t : tensor<8x8xf32>
          tawa.aref.consumed %r[%k] : !tawa.aref<[tensor<8x8xf32>], 2>
          tawa.aref.consumed %r[%k] : !tawa.aref<[tensor<8x8xf32>], 2>
          scf.yield %s : tensor<8x8xf32>)",
                                   kAccIsLoopResult));
  EXPECT_EQ(r.kind, "consumed-not-borrowed") << r.message;
}

// A product reads its slot until it retires: releasing the slot while the
// product is in flight lets the producer overwrite its operands.
TEST_F(ProtocolCheckTest, ReleaseUnderAnInFlightProduct) {
  ExecutionResult r = run(wsKernel(R"(
          %d = tawa.dot_async %t, %t, %a : tensor<8x8xf32> * tensor<8x8xf32> -> tensor<8x8xf32>
          tawa.aref.consumed %r[%k] : !tawa.aref<[tensor<8x8xf32>], 2>
          %w = tawa.dot_wait %d {pendings = 0 : i32} : tensor<8x8xf32>
          scf.yield %w : tensor<8x8xf32>)",
                                   kAccIsLoopResult));
  EXPECT_EQ(r.kind, "use-after-release") << r.message;
  EXPECT_NE(r.message.find("while tawa.dot_async"), std::string::npos)
      << r.message;
}

TEST_F(ProtocolCheckTest, ReadOfAnUnretiredProduct) {
  ExecutionResult r = run(wsKernel(R"(
          %d = tawa.dot_async %t, %t, %a : tensor<8x8xf32> * tensor<8x8xf32> -> tensor<8x8xf32>
          %w = tawa.dot_wait %d {pendings = 0 : i32} : tensor<8x8xf32>
          tawa.aref.consumed %r[%k] : !tawa.aref<[tensor<8x8xf32>], 2>
          scf.yield %d : tensor<8x8xf32>)",
                                   R"(
        %acc = arith.addf %acc0, %zero : tensor<8x8xf32>)"));
  // Yielding the waited-for value's twin is fine: retirement is per product.
  EXPECT_TRUE(r.completed()) << r.message;

  ExecutionResult bad = run(wsKernel(R"(
          %d = tawa.dot_async %t, %t, %a : tensor<8x8xf32> * tensor<8x8xf32> -> tensor<8x8xf32>
          %x = arith.addf %d, %d : tensor<8x8xf32>
          %w = tawa.dot_wait %d {pendings = 0 : i32} : tensor<8x8xf32>
          tawa.aref.consumed %r[%k] : !tawa.aref<[tensor<8x8xf32>], 2>
          scf.yield %w : tensor<8x8xf32>)",
                                     kAccIsLoopResult));
  EXPECT_EQ(bad.kind, "unretired-read") << bad.message;
}

// Products in flight are a FIFO: pendings = 1 retires all but the newest.
TEST_F(ProtocolCheckTest, DotWaitRetiresAllButTheNewestPendings) {
  const char *epilogueReadsOlder = R"(
        %p1 = tawa.dot_async %zero, %zero, %acc0 : tensor<8x8xf32> * tensor<8x8xf32> -> tensor<8x8xf32>
        %p2 = tawa.dot_async %zero, %zero, %zero : tensor<8x8xf32> * tensor<8x8xf32> -> tensor<8x8xf32>
        %w:2 = tawa.dot_wait %p1, %p2 {pendings = 1 : i32} : tensor<8x8xf32>, tensor<8x8xf32>
        %acc = arith.addf %w#0, %zero : tensor<8x8xf32>
        %w0 = tawa.dot_wait %w#1 {pendings = 0 : i32} : tensor<8x8xf32>)";
  ExecutionResult r = run(wsKernel(kSumAndRelease, epilogueReadsOlder));
  EXPECT_TRUE(r.completed()) << r.message;

  const char *epilogueReadsNewer = R"(
        %p1 = tawa.dot_async %zero, %zero, %acc0 : tensor<8x8xf32> * tensor<8x8xf32> -> tensor<8x8xf32>
        %p2 = tawa.dot_async %zero, %zero, %zero : tensor<8x8xf32> * tensor<8x8xf32> -> tensor<8x8xf32>
        %w:2 = tawa.dot_wait %p1, %p2 {pendings = 1 : i32} : tensor<8x8xf32>, tensor<8x8xf32>
        %acc = arith.addf %w#1, %zero : tensor<8x8xf32>)";
  ExecutionResult bad = run(wsKernel(kSumAndRelease, epilogueReadsNewer));
  EXPECT_EQ(bad.kind, "unretired-read") << bad.message;

  // Never waiting at all leaves a product in flight at the end.
  const char *noWait = R"(
        %p1 = tawa.dot_async %zero, %zero, %zero : tensor<8x8xf32> * tensor<8x8xf32> -> tensor<8x8xf32>
        %acc = arith.addf %acc0, %zero : tensor<8x8xf32>)";
  ExecutionResult leak = run(wsKernel(kSumAndRelease, noWait));
  EXPECT_EQ(leak.kind, "in-flight-at-exit") << leak.message;
}

/// Two ping-pong consumers take alternate positions of one ring of three
/// slots (so that each uses every slot): consumer g gets k = 2n + g for
/// n = 0, 1, 2, between `waitG` and tawa.pingpong.arrive, and stores its sum
/// at row 8g.
std::string pingPongKernel(const std::string &wait0, const std::string &wait1) {
  auto consumer = [](int g, const std::string &wait) {
    std::string gs = std::to_string(g);
    return R"(
      } partition warps(4) regs(232) {
        %acc = scf.for %n = %c0 to %c3 step %c1 iter_args(%a = %zero) -> (tensor<8x8xf32>) : i32 {
          )" +
           wait + R"(
          %n2 = arith.muli %n, %c2 : i32
          %k = arith.addi %n2, %c)" +
           gs + R"( : i32
          %t = tawa.aref.get %r[%k] : !tawa.aref<[tensor<8x8xf32>], 3> -> tensor<8x8xf32>
          %s = arith.addf %a, %t : tensor<8x8xf32>
          tawa.aref.consumed %r[%k] : !tawa.aref<[tensor<8x8xf32>], 3>
          tawa.pingpong.arrive group )" +
           gs + R"(
          scf.yield %s : tensor<8x8xf32>
        }
        %row = arith.muli %c)" +
           gs + R"(, %c8 : i32
        tt.descriptor_store %out[%row, %c0], %acc : !tt.tensordesc<tensor<8x8xf32>>, tensor<8x8xf32>)";
  };
  return R"(
    tt.func @pingpong(%in: !tt.tensordesc<tensor<8x8xf32>>,
                      %out: !tt.tensordesc<tensor<8x8xf32>>) {
      %c0 = arith.constant 0 : i32
      %c1 = arith.constant 1 : i32
      %c2 = arith.constant 2 : i32
      %c3 = arith.constant 3 : i32
      %c6 = arith.constant 6 : i32
      %c8 = arith.constant 8 : i32
      %zero = arith.constant dense<0.0> : tensor<8x8xf32>
      %r = tawa.aref.create : !tawa.aref<[tensor<8x8xf32>], 3>
      tawa.warp_specialize partition warps(4) regs(40) {
        scf.for %k = %c0 to %c6 step %c1 : i32 {
          %row = arith.muli %k, %c8 : i32
          %t = tt.descriptor_load %in[%row, %c0] : !tt.tensordesc<tensor<8x8xf32>> -> tensor<8x8xf32>
          tawa.aref.put %r[%k], %t : !tawa.aref<[tensor<8x8xf32>], 3>, tensor<8x8xf32>
        })" +
         consumer(0, wait0) + consumer(1, wait1) + R"(
      }
      tt.return
    })";
}

TEST_F(ProtocolCheckTest, PingPongHandOversOrderTheConsumers) {
  std::string text = pingPongKernel("tawa.pingpong.wait group 0 turn %n",
                                    "tawa.pingpong.wait group 1 turn %n");
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    ExecutionResult r = run(text, seed, nullptr, 16);
    ASSERT_TRUE(r.completed()) << "seed " << seed << ": " << r.message;
    for (int64_t g = 0; g < 2; ++g) {
      float want = 0;
      for (int64_t n = 0; n < 3; ++n)
        want += static_cast<float>((2 * n + g) * 8 + 0 - 0);
      EXPECT_EQ(element(1, 8 * g, 0), want) << "consumer " << g;
    }
  }
}

TEST_F(ProtocolCheckTest, PingPongWithoutHandOversAConsumerGetsALapAhead) {
  // Consumer 1 may reach slot 0 for k = 3 while it still holds k = 0, which
  // consumer 0 has not taken yet; some schedule must show it.
  std::string text = pingPongKernel("", "");
  bool caught = false;
  for (uint64_t seed = 1; seed <= 16 && !caught; ++seed) {
    ExecutionResult r = run(text, seed, nullptr, 16);
    if (r.completed())
      continue;
    EXPECT_EQ(r.kind, "wrong-position") << r.message;
    caught = true;
  }
  EXPECT_TRUE(caught);
}

TEST_F(ProtocolCheckTest, PingPongWaitingForOneHandOverTooManyDeadlocks) {
  // Consumer 1 waits for turn n + 1 instead of n: its first tile waits for a
  // second hand-over from consumer 0, whose second tile waits for consumer
  // 1's first hand-over.
  std::string text = pingPongKernel("tawa.pingpong.wait group 0 turn %n",
                                    "%n1 = arith.addi %n, %c1 : i32\n          "
                                    "tawa.pingpong.wait group 1 turn %n1");
  ExecutionResult r = run(text, 1, nullptr, 16);
  ASSERT_EQ(r.kind, "deadlock") << r.message;
  bool sawPingPong = false;
  for (const std::string &d : r.details)
    sawPingPong |= d.find("tawa.pingpong.wait") != std::string::npos &&
                   d.find("it needs hand-over") != std::string::npos;
  EXPECT_TRUE(sawPingPong);
}

} // namespace
