//===- AttentionModelTest.cpp - the attention pipeline's protocol ---------===//
//
// The model of lib/Protocol/AttentionModel.h: the producer, the Q/K/V rings
// and the cooperative consumer groups of the coarse-grained attention
// pipeline, with the groups' issue turns on named barriers. The correct
// protocol is clean; every seeded bug is caught with its kind.
//
//===----------------------------------------------------------------------===//

#include "AttentionModel.h"

#include <gtest/gtest.h>

using namespace tawa::protocol;

namespace {

AttentionConfig config(unsigned depth, unsigned groups, bool turns,
                       std::vector<unsigned> trips, unsigned warps = 1) {
  AttentionConfig c;
  c.depth = depth;
  c.groups = groups;
  c.issueTurns = turns;
  c.trips = std::move(trips);
  c.warpsPerGroup = warps;
  return c;
}

std::string describe(const AttentionConfig &c) {
  std::string trips;
  for (unsigned n : c.trips)
    trips += std::to_string(n) + " ";
  return "D=" + std::to_string(c.depth) + " C=" + std::to_string(c.groups) +
         (c.issueTurns ? " turns" : "") + " trips=" + trips +
         "W=" + std::to_string(c.warpsPerGroup) + " " +
         issueTurnVariantName(c.turnVariant) + " " +
         attentionRingVariantName(c.ringVariant);
}

std::string firstViolation(const CheckResult &r) {
  return r.violations.empty() ? "" : formatViolation(r.violations.front());
}

// Every ring depth up to 3, one or two groups, with and without turns, one
// or two tiles of 0..3 key blocks each: no deadlock, overwrite, bad read,
// overflow, half-arrived barrier, turn overlap or issue outside a turn.
TEST(AttentionModel, CorrectPipelineIsClean) {
  for (unsigned d = 1; d <= 3; ++d)
    for (unsigned c = 1; c <= 2; ++c)
      for (bool turns : {false, true}) {
        if (turns && c != 2)
          continue;
        for (unsigned a = 0; a <= 3; ++a)
          for (unsigned b = 0; b <= 3; ++b)
            for (std::vector<unsigned> trips :
                 {std::vector<unsigned>{a}, std::vector<unsigned>{a, b}}) {
              if (trips.size() == 1 && b != 0)
                continue;
              AttentionConfig cfg = config(d, c, turns, trips);
              ASSERT_EQ(validateAttentionConfig(cfg), "") << describe(cfg);
              CheckResult r = checkAttentionProtocol(cfg);
              EXPECT_TRUE(r.complete);
              EXPECT_EQ(r.violationCount, 0u)
                  << describe(cfg) << "\n"
                  << firstViolation(r);
              EXPECT_GT(r.states, 1u);
            }
      }
  // Three groups (the widened 192-row block) taking turns round robin.
  for (unsigned d = 1; d <= 2; ++d)
    for (bool turns : {false, true})
      for (std::vector<unsigned> trips :
           {std::vector<unsigned>{0}, std::vector<unsigned>{2},
            std::vector<unsigned>{1, 3}}) {
        AttentionConfig cfg = config(d, 3, turns, trips);
        ASSERT_EQ(validateAttentionConfig(cfg), "") << describe(cfg);
        CheckResult r = checkAttentionProtocol(cfg);
        EXPECT_TRUE(r.complete);
        EXPECT_EQ(r.violationCount, 0u) << describe(cfg) << "\n"
                                        << firstViolation(r);
      }
  // One arrival per warp, as the kernels make them.
  for (unsigned d = 1; d <= 2; ++d) {
    AttentionConfig cfg = config(d, 2, true, {2, 3}, 4);
    CheckResult r = checkAttentionProtocol(cfg);
    EXPECT_EQ(r.violationCount, 0u) << describe(cfg) << "\n"
                                    << firstViolation(r);
  }
}

// The programs are the emitted order (test/Target/attention.test pins the
// CUDA): group 1 passes the first turn, each run sits between bar.sync on
// the group's barrier and bar.arrive on the other's, group 0 takes the last
// turn; S_j and the update of j-1 form one run; waits <1> then <0>.
TEST(AttentionModel, ProgramsFollowTheEmittedOrder) {
  AttentionConfig cfg = config(2, 2, true, {2});
  std::vector<std::string> g0 = attentionConsumerProgram(cfg, 0);
  std::vector<std::string> g1 = attentionConsumerProgram(cfg, 1);
  std::vector<std::string> want0 = {
      "wait fullQ[0] for k=0",
      "wait fullK[0] for k=0",
      "bar.sync 8, 256 (its turn to issue)",
      "issue wgmma S_0 = Q_0 K_0^T (turn product)",
      "bar.arrive 9, 256 (hands the turn over)",
      "wgmma.wait_group<0>",
      "release K k=0 (arrive on emptyK[0])",
      "wait fullK[1] for k=1",
      "bar.sync 8, 256 (its turn to issue)",
      "issue wgmma S_1 = Q_0 K_1^T (turn product)",
      "wait fullV[0] for k=0",
      "issue wgmma O += P_0 V_0 (turn product)",
      "bar.arrive 9, 256 (hands the turn over)",
      "wgmma.wait_group<1>",
      "release K k=1 (arrive on emptyK[1])",
      "wgmma.wait_group<0>",
      "release V k=0 (arrive on emptyV[0])",
      "wait fullV[1] for k=1",
      "bar.sync 8, 256 (its turn to issue)",
      "issue wgmma O += P_1 V_1 (turn product)",
      "bar.arrive 9, 256 (hands the turn over)",
      "wgmma.wait_group<0>",
      "release V k=1 (arrive on emptyV[1])",
      "release Q k=0 (arrive on emptyQ[0])",
      "bar.sync 8, 256 (takes the last turn)",
  };
  EXPECT_EQ(g0, want0);
  ASSERT_EQ(g1.size(), want0.size());
  EXPECT_EQ(g1.front(), "bar.arrive 8, 256 (passes the first turn)");
  EXPECT_EQ(g1[3], "bar.sync 9, 256 (its turn to issue)");
  EXPECT_EQ(g1[5], "bar.arrive 8, 256 (hands the turn over)");
  EXPECT_EQ(g1.back(), "release Q k=0 (arrive on emptyQ[0])");
  // Without turns, no named barrier.
  for (const std::string &line :
       attentionConsumerProgram(config(2, 2, false, {2}), 0))
    EXPECT_EQ(line.find("bar."), std::string::npos) << line;
}

struct Seeded {
  IssueTurnVariant turn;
  AttentionRingVariant ring;
  ViolationKind kind;
  AttentionConfig at;
};

// Each seeded bug, in a configuration where it matters, is caught as its
// kind; and over a small sweep it is caught in every configuration where it
// can show (the turn bugs wherever the groups take turns and, for those
// that concern runs, a tile has a key block; the ring bugs where the slot
// is refilled while the product still runs).
TEST(AttentionModel, SeededBugsAreCaught) {
  using T = IssueTurnVariant;
  using R = AttentionRingVariant;
  std::vector<Seeded> cases = {
      {T::NoFirstPass, R::Correct, ViolationKind::Deadlock,
       config(2, 2, true, {2})},
      {T::NoLastTake, R::Correct, ViolationKind::BarrierUnbalanced,
       config(2, 2, true, {2})},
      {T::NoHandOver, R::Correct, ViolationKind::Deadlock,
       config(2, 2, true, {2})},
      {T::LastTakeByGroup1, R::Correct, ViolationKind::Deadlock,
       config(2, 2, true, {2})},
      {T::WrongBarrier, R::Correct, ViolationKind::TurnOverlap,
       config(2, 2, true, {2})},
      {T::EarlyHandOver, R::Correct, ViolationKind::IssueOutsideTurn,
       config(2, 2, true, {2})},
      {T::DoubleFirstPass, R::Correct, ViolationKind::BarrierOverflow,
       config(2, 2, true, {2})},
      {T::Correct, R::ReleaseKBeforeWait, ViolationKind::OverwriteInFlightMma,
       config(1, 2, true, {2})},
      {T::Correct, R::ReleaseVAfterWaitOne,
       ViolationKind::OverwriteInFlightMma, config(1, 2, true, {2})},
      // Only a tile of one key block shows it: with more, the next tile's
      // Q load waits for the V release that follows the last S's wait.
      {T::Correct, R::ReleaseQEarly, ViolationKind::OverwriteInFlightMma,
       config(1, 2, true, {1, 1})},
  };
  for (Seeded s : cases) {
    AttentionConfig cfg = s.at;
    cfg.turnVariant = s.turn;
    cfg.ringVariant = s.ring;
    ASSERT_EQ(validateAttentionConfig(cfg), "") << describe(cfg);
    CheckResult r = checkAttentionProtocol(cfg);
    EXPECT_TRUE(r.has(s.kind)) << describe(cfg) << " is not caught as "
                               << violationKindName(s.kind) << "\n"
                               << firstViolation(r);
  }
  // Turn bugs: caught in every configuration with turns and a key block
  // (the start and end bugs even without one).
  for (IssueTurnVariant v : allIssueTurnVariants()) {
    if (v == IssueTurnVariant::Correct)
      continue;
    for (unsigned d = 1; d <= 2; ++d)
      for (unsigned a = 0; a <= 2; ++a)
        for (unsigned b = 0; b <= 2; ++b) {
          AttentionConfig cfg = config(d, 2, true, {a, b});
          cfg.turnVariant = v;
          cfg.stopAtFirst = true;
          bool needsRun = v == IssueTurnVariant::NoHandOver ||
                          v == IssueTurnVariant::WrongBarrier;
          bool needsTwoProducts = v == IssueTurnVariant::EarlyHandOver;
          if ((needsRun && a + b == 0) ||
              (needsTwoProducts && a < 2 && b < 2))
            continue;
          CheckResult r = checkAttentionProtocol(cfg);
          EXPECT_FALSE(r.violations.empty()) << describe(cfg);
        }
  }
  // Ring bugs: caught with one group or two taking turns, one slot or two.
  for (AttentionRingVariant v : allAttentionRingVariants()) {
    if (v == AttentionRingVariant::Correct)
      continue;
    std::vector<unsigned> trips = {3, 2};
    if (v == AttentionRingVariant::ReleaseQEarly)
      trips = {1, 1, 1};
    for (unsigned d = 1; d <= 2; ++d)
      for (unsigned c = 1; c <= 2; ++c) {
        AttentionConfig cfg = config(d, c, c == 2, trips);
        cfg.ringVariant = v;
        EXPECT_TRUE(checkAttentionProtocol(cfg).has(
            ViolationKind::OverwriteInFlightMma))
            << describe(cfg);
      }
  }
}

TEST(AttentionModel, ConfigurationsOutsideTheModelAreRejected) {
  EXPECT_NE(validateAttentionConfig(config(0, 2, true, {1})), "");
  EXPECT_NE(validateAttentionConfig(config(5, 2, true, {1})), "");
  EXPECT_NE(validateAttentionConfig(config(2, 4, true, {1})), "");
  EXPECT_NE(validateAttentionConfig(config(2, 2, true, {})), "");
  AttentionConfig oneGroup = config(2, 1, false, {1});
  oneGroup.turnVariant = IssueTurnVariant::NoFirstPass;
  EXPECT_NE(validateAttentionConfig(oneGroup), "");
  EXPECT_NE(validateAttentionConfig(config(2, 2, true, {100, 100})), "");
}

} // namespace
