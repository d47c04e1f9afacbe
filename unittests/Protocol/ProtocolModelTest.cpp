//===- ProtocolModelTest.cpp - the aref protocol model checker ------------===//

#include "ProtocolModel.h"

#include "tawa/Protocol/ArefProtocol.h"

#include <gtest/gtest.h>

using namespace tawa::protocol;

namespace {

ModelConfig config(unsigned depth, unsigned lag, unsigned consumers,
                   unsigned tiles, unsigned trips, unsigned warps = 1,
                   Variant variant = Variant::Correct) {
  ModelConfig c;
  c.depth = depth;
  c.lag = lag;
  c.consumers = consumers;
  c.warpsPerGroup = warps;
  c.trips.assign(tiles, trips);
  c.variant = variant;
  return c;
}

std::string describe(const ModelConfig &c) {
  return "D=" + std::to_string(c.depth) + " P=" + std::to_string(c.lag) +
         " C=" + std::to_string(c.consumers) +
         " T=" + std::to_string(c.trips.size()) +
         " n=" + std::to_string(c.trips.front()) +
         " W=" + std::to_string(c.warpsPerGroup) +
         " CTAs=" + std::to_string(c.ctas) + " " + variantName(c.variant);
}

std::string firstViolation(const CheckResult &r) {
  return r.violations.empty() ? "" : formatViolation(r.violations.front());
}

void expectClean(const ModelConfig &c) {
  ASSERT_TRUE(validateConfig(c).empty()) << describe(c);
  CheckResult r = checkProtocol(c);
  EXPECT_TRUE(r.complete) << describe(c);
  EXPECT_EQ(r.violationCount, 0u) << describe(c) << "\n" << firstViolation(r);
  EXPECT_GT(r.states, 1u) << describe(c);
}

// The valid space (P < D) up to D = 4, two consumer groups, two tiles and
// trip counts up to 2D + 3: no deadlock, overwrite, bad read or overflow.
TEST(ProtocolModel, ValidSpaceIsClean) {
  for (unsigned d = 1; d <= 4; ++d)
    for (unsigned p = 0; p < d; ++p)
      for (unsigned c = 1; c <= 2; ++c)
        for (unsigned t = 1; t <= 2; ++t)
          for (unsigned n = 1; n <= 2 * d + 3; ++n)
            expectClean(config(d, p, c, t, n));
}

// Corners of the space the sweep above leaves out, kept small for CI: three
// groups, four arrivals per group (one per warp, as the kernels do), six
// slots, tiles of different lengths.
TEST(ProtocolModel, LargerCornersAreClean) {
  expectClean(config(2, 1, 3, 2, 5));
  expectClean(config(3, 2, 3, 1, 9));
  expectClean(config(2, 1, 2, 2, 3, /*warps=*/4));
  expectClean(config(3, 1, 1, 3, 4, /*warps=*/4));
  expectClean(config(6, 3, 1, 2, 15));
  expectClean(config(6, 5, 2, 1, 15));
  ModelConfig uneven = config(3, 2, 2, 1, 1);
  uneven.trips = {1, 7, 0, 4};
  expectClean(uneven);
}

// P >= D: the producer's put k waits for the release of k - D, which follows
// the issue of k - D + P >= k: a deadlock as soon as a tile runs more than D
// iterations; with at most D the drain frees the ring in time.
TEST(ProtocolModel, LagAtLeastDepthDeadlocks) {
  for (unsigned d = 1; d <= 3; ++d)
    for (unsigned p = d; p <= 3; ++p)
      for (unsigned n = 1; n <= 2 * d + 1; ++n) {
        ModelConfig c = config(d, p, 2, 2, n);
        CheckResult r = checkProtocol(c);
        ASSERT_EQ(r.has(ViolationKind::Deadlock), n > d) << describe(c);
        for (const Violation &v : r.violations)
          EXPECT_EQ(v.kind, ViolationKind::Deadlock) << describe(c);
      }
  CheckResult r = checkProtocol(config(2, 2, 1, 1, 3));
  ASSERT_FALSE(r.violations.empty());
  const Violation &v = r.violations.front();
  EXPECT_FALSE(v.trace.empty());
  // Both sides are stuck on a parity wait.
  ASSERT_EQ(v.blocked.size(), 2u);
  EXPECT_NE(v.blocked[0].find("producer: waits on empty[0]"), std::string::npos)
      << formatViolation(v);
  EXPECT_NE(v.blocked[1].find("consumer 0: waits on full[0]"),
            std::string::npos)
      << formatViolation(v);
}

struct VariantCase {
  Variant variant;
  ModelConfig config;
  ViolationKind expected;
};

// Each broken lowering is caught with the violation it causes. The search is
// breadth-first, so the reported trace is a shortest one.
TEST(ProtocolModel, BrokenVariantsAreCaught) {
  const VariantCase cases[] = {
      // Parity 1 on a fresh full[] passes at once, before any TMA.
      {Variant::ConsumerParityOne, config(2, 1, 1, 1, 3),
       ViolationKind::ReadUnfilled},
      // The release lets the producer refill the slot under the wgmma.
      {Variant::ConsumedBeforeWait, config(2, 1, 1, 1, 4),
       ViolationKind::OverwriteInFlightMma},
      {Variant::ConsumedBeforeWait, config(2, 0, 2, 1, 3),
       ViolationKind::OverwriteInFlightMma},
      // empty[] never completes: the producer's second lap waits forever.
      {Variant::EmptyCountTooHigh, config(2, 1, 2, 1, 3),
       ViolationKind::Deadlock},
      // The first group's release completes the phase: the second group's
      // arrival lands in the next phase.
      {Variant::EmptyCountTooLow, config(2, 1, 2, 1, 3),
       ViolationKind::ArrivalOverflow},
      {Variant::EmptyCountTooLow, config(2, 1, 1, 1, 3, /*warps=*/4),
       ViolationKind::ArrivalOverflow},
      // Parity 0 on a fresh empty[] blocks the very first put.
      {Variant::ProducerParityZero, config(2, 1, 1, 1, 3),
       ViolationKind::Deadlock},
  };
  for (const VariantCase &vc : cases) {
    ModelConfig c = vc.config;
    c.variant = vc.variant;
    ASSERT_TRUE(validateConfig(c).empty()) << describe(c);
    CheckResult r = checkProtocol(c);
    ASSERT_FALSE(r.violations.empty()) << describe(c);
    EXPECT_TRUE(r.has(vc.expected))
        << describe(c) << ": expected " << violationKindName(vc.expected)
        << ", got\n"
        << firstViolation(r);
    for (const Violation &v : r.violations)
      EXPECT_FALSE(v.trace.empty() && v.kind != ViolationKind::Deadlock)
          << formatViolation(v);
  }
}

// The producer-parity-0 deadlock needs no step at all: the first put blocks.
TEST(ProtocolModel, ProducerParityZeroBlocksTheFirstPut) {
  ModelConfig c = config(3, 1, 1, 1, 2, 1, Variant::ProducerParityZero);
  c.stopAtFirst = true;
  CheckResult r = checkProtocol(c);
  ASSERT_EQ(r.violations.size(), 1u);
  EXPECT_EQ(r.violations[0].kind, ViolationKind::Deadlock);
  EXPECT_TRUE(r.violations[0].trace.empty());
  EXPECT_EQ(r.states, 1u);
}

// Over a small sweep every broken variant is caught in every configuration
// where it can matter: as soon as the ring wraps (more puts than slots), and
// for the parities always.
TEST(ProtocolModel, BrokenVariantsAreCaughtAcrossTheSweep) {
  for (Variant v : allVariants()) {
    if (v == Variant::Correct)
      continue;
    for (unsigned d = 1; d <= 3; ++d)
      for (unsigned p = 0; p < d; ++p)
        for (unsigned c = 1; c <= 2; ++c)
          for (unsigned t = 1; t <= 2; ++t)
            for (unsigned n = 1; n <= 2 * d + 1; ++n) {
              ModelConfig cfg = config(d, p, c, t, n, 1, v);
              if (!validateConfig(cfg).empty())
                continue; // empty-count-low with a single arrival
              cfg.stopAtFirst = true;
              CheckResult r = checkProtocol(cfg);
              bool wraps = t * n > d;
              // Releasing early only differs from the drain when the loop
              // releases in its steady state (n > P).
              bool matters = v == Variant::ConsumedBeforeWait
                                 ? wraps && n > p
                                 : wraps || v == Variant::ConsumerParityOne ||
                                       v == Variant::ProducerParityZero;
              if (matters) {
                EXPECT_FALSE(r.violations.empty()) << describe(cfg);
              }
            }
  }
}

TEST(ProtocolModel, TracesAreReplayable) {
  ModelConfig c = config(2, 1, 2, 1, 3, 1, Variant::EmptyCountTooLow);
  CheckResult r = checkProtocol(c);
  ASSERT_FALSE(r.violations.empty());
  for (const Violation &v : r.violations) {
    std::string text = formatViolation(v);
    EXPECT_NE(text.find(violationKindName(v.kind)), std::string::npos);
    EXPECT_NE(text.find("trace ("), std::string::npos);
    // Every step names its actor.
    for (const std::string &step : v.trace)
      EXPECT_TRUE(step.rfind("producer:", 0) == 0 ||
                  step.rfind("consumer ", 0) == 0 || step.rfind("TMA:", 0) == 0)
          << step;
  }
}

TEST(ProtocolModel, StateLimitMarksTheSearchIncomplete) {
  ModelConfig c = config(3, 1, 2, 2, 6);
  c.maxStates = 100;
  CheckResult r = checkProtocol(c);
  EXPECT_FALSE(r.complete);
  EXPECT_GE(r.states, 100u);
}

TEST(ProtocolModel, ValidateConfig) {
  EXPECT_TRUE(validateConfig(config(6, 3, 3, 2, 15)).empty());
  EXPECT_FALSE(validateConfig(config(0, 0, 1, 1, 1)).empty());
  EXPECT_FALSE(validateConfig(config(9, 0, 1, 1, 1)).empty());
  EXPECT_FALSE(validateConfig(config(2, 0, 5, 1, 1)).empty());
  EXPECT_FALSE(validateConfig(config(2, 0, 1, 2, 200)).empty());
  EXPECT_FALSE(
      validateConfig(config(2, 0, 1, 1, 3, 1, Variant::EmptyCountTooLow))
          .empty());
}

ModelConfig cluster(unsigned depth, unsigned lag, unsigned consumers,
                    unsigned tiles, unsigned trips,
                    Variant variant = Variant::Correct) {
  ModelConfig c = config(depth, lag, consumers, tiles, trips, 1, variant);
  c.ctas = 2;
  return c;
}

// 2-CTA clusters with TMA multicast: both sharing modes of every ring
// position, releases in both CTAs, empty[] counting twice the arrivals, over
// two tiles. Kept to a few seconds: D = 3 runs one group per CTA and three
// iterations per tile (the ring wraps inside a tile and across the tiles);
// D = 3 with two groups per CTA is left to the CLI (about 47 million states
// over P and trips 2, 3).
TEST(ProtocolModel, ClusterValidSpaceIsClean) {
  for (unsigned d = 1; d <= 3; ++d)
    for (unsigned p = 0; p < d; ++p)
      for (unsigned c = 1; c <= (d == 3 ? 1u : 2u); ++c)
        for (unsigned n : {2u, 3u})
          if (d < 3 || n == 3)
            expectClean(cluster(d, p, c, 2, n));
}

// P >= D deadlocks in a cluster too, exactly when a tile runs more than D
// iterations.
TEST(ProtocolModel, ClusterLagAtLeastDepthDeadlocks) {
  for (unsigned n = 1; n <= 3; ++n) {
    ModelConfig c = cluster(2, 2, 1, 1, n);
    CheckResult r = checkProtocol(c);
    EXPECT_EQ(r.has(ViolationKind::Deadlock), n > 2) << describe(c);
    for (const Violation &v : r.violations)
      EXPECT_EQ(v.kind, ViolationKind::Deadlock) << formatViolation(v);
  }
}

// The cluster's broken lowerings, each caught with the violation it causes.
TEST(ProtocolModel, ClusterBrokenVariantsAreCaught) {
  const VariantCase cases[] = {
      // empty[] of one CTA completes on its own consumers' releases: the
      // producer's multicast lands in the partner's slot while the partner's
      // consumers have not released (or read) it.
      {Variant::ClusterLocalRelease, cluster(2, 1, 1, 2, 3),
       ViolationKind::OverwriteUnreleased},
      {Variant::ClusterLocalRelease, cluster(1, 0, 2, 1, 2),
       ViolationKind::OverwriteUnreleased},
      // full[] completes on one half's bytes: the other half is still in
      // flight when the consumers read the slot.
      {Variant::ClusterExpectHalf, cluster(2, 1, 1, 2, 3),
       ViolationKind::ReadUnfilled},
      {Variant::ClusterExpectHalf, cluster(1, 0, 2, 1, 1),
       ViolationKind::ReadUnfilled},
      // The single-CTA variants stay caught in a cluster.
      {Variant::ConsumedBeforeWait, cluster(2, 1, 1, 1, 3),
       ViolationKind::OverwriteInFlightMma},
      {Variant::ConsumerParityOne, cluster(2, 1, 1, 1, 3),
       ViolationKind::ReadUnfilled},
      {Variant::EmptyCountTooHigh, cluster(1, 0, 1, 1, 2),
       ViolationKind::Deadlock},
      {Variant::ProducerParityZero, cluster(2, 1, 1, 1, 3),
       ViolationKind::Deadlock},
  };
  for (const VariantCase &vc : cases) {
    ModelConfig c = vc.config;
    c.variant = vc.variant;
    ASSERT_TRUE(validateConfig(c).empty()) << describe(c);
    CheckResult r = checkProtocol(c);
    ASSERT_FALSE(r.violations.empty()) << describe(c);
    EXPECT_TRUE(r.has(vc.expected))
        << describe(c) << ": expected " << violationKindName(vc.expected)
        << ", got\n"
        << firstViolation(r);
  }
}

// Over the small cluster sweep, the cluster variants are caught wherever they
// can matter: cluster-expect-half always, cluster-local-release once the
// ring wraps (two tiles of n iterations: 2n > D).
TEST(ProtocolModel, ClusterVariantsAreCaughtAcrossTheSweep) {
  for (Variant v : {Variant::ClusterLocalRelease, Variant::ClusterExpectHalf})
    for (unsigned d = 1; d <= 3; ++d)
      for (unsigned p = 0; p < d; ++p)
        for (unsigned c = 1; c <= (d == 3 ? 1u : 2u); ++c)
          for (unsigned n = 1; n <= d + 1; ++n) {
            if (v == Variant::ClusterLocalRelease && 2 * n <= d)
              continue; // no slot is reused: nothing to overwrite
            ModelConfig cfg = cluster(d, p, c, 2, n, v);
            cfg.stopAtFirst = true;
            EXPECT_FALSE(checkProtocol(cfg).violations.empty())
                << describe(cfg);
          }
}

TEST(ProtocolModel, ClusterTracesNameTheCtas) {
  CheckResult r =
      checkProtocol(cluster(2, 1, 1, 1, 3, Variant::ClusterLocalRelease));
  ASSERT_FALSE(r.violations.empty());
  for (const Violation &v : r.violations)
    for (const std::string &step : v.trace)
      EXPECT_TRUE(step.rfind("CTA0 ", 0) == 0 || step.rfind("CTA1 ", 0) == 0 ||
                  step.rfind("TMA: half ", 0) == 0)
          << step;
}

TEST(ProtocolModel, ClusterValidateConfig) {
  ModelConfig c = cluster(2, 1, 2, 2, 3);
  EXPECT_TRUE(validateConfig(c).empty());
  c.ctas = 3;
  EXPECT_FALSE(validateConfig(c).empty());
  c.ctas = 0;
  EXPECT_FALSE(validateConfig(c).empty());
  // The cluster variants need a cluster.
  EXPECT_FALSE(
      validateConfig(config(2, 1, 1, 1, 3, 1, Variant::ClusterLocalRelease))
          .empty());
  EXPECT_FALSE(
      validateConfig(config(2, 1, 1, 1, 3, 1, Variant::ClusterExpectHalf))
          .empty());
  EXPECT_TRUE(validateConfig(cluster(2, 1, 1, 1, 3, Variant::ClusterExpectHalf))
                  .empty());
  // Twice the arrivals: a single group of one warp can lose one.
  EXPECT_TRUE(validateConfig(cluster(2, 1, 1, 1, 3, Variant::EmptyCountTooLow))
                  .empty());
}

TEST(ProtocolModel, VariantNamesRoundTrip) {
  for (Variant v : allVariants())
    EXPECT_EQ(parseVariant(variantName(v)), v);
  EXPECT_FALSE(parseVariant("nonsense").has_value());
}

} // namespace
