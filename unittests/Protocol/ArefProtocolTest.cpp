//===- ArefProtocolTest.cpp - slot/phase arithmetic of lowered arefs ------===//

#include "tawa/Protocol/ArefProtocol.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

using namespace tawa::protocol;

namespace {

// The first lap needs no waiting on empty[] but a real wait on full[].
static_assert(producerEmptyParity(0, 4) == 1);
static_assert(consumerFullParity(0, 4) == 0);
static_assert(parityWaitPasses(/*phase=*/0, producerEmptyParity(0, 4)));
static_assert(!parityWaitPasses(/*phase=*/0, consumerFullParity(0, 4)));
static_assert(emptyArrivalCount(2) == 8);
static_assert(fullArrivalCount() == 1);
static_assert(releasedAfterIssue(0, 1) == kNoRelease);
static_assert(releasedAfterIssue(5, 2) == 3);
static_assert(drainedSlots(1, 3) == 1 && drainedSlots(7, 3) == 3);
static_assert(lagFitsRing(1, 2) && !lagFitsRing(2, 2));

/// Host replica of tawa::device::RingState (include/tawa/device/mbarrier.cuh),
/// which the reference kernels advance once per put or get.
struct RingState {
  unsigned depth, slot = 0, phase = 0;
  explicit RingState(unsigned d) : depth(d) {}
  void advance() {
    if (++slot == depth) {
      slot = 0;
      phase ^= 1;
    }
  }
};

TEST(ArefProtocol, SlotAndPhaseFollowTheDeviceRingState) {
  for (unsigned d = 1; d <= 8; ++d) {
    RingState ring(d);
    for (Iter k = 0; k < 2000; ++k, ring.advance()) {
      ASSERT_EQ(slotOf(k, d), ring.slot) << "D=" << d << " k=" << k;
      ASSERT_EQ(phaseOf(k, d), ring.phase) << "D=" << d << " k=" << k;
      // ref_gemm.cu: empty wait on ring.phase ^ 1, full wait on ring.phase.
      ASSERT_EQ(producerEmptyParity(k, d), ring.phase ^ 1u);
      ASSERT_EQ(consumerFullParity(k, d), ring.phase);
    }
  }
}

TEST(ArefProtocol, PhaseFlipsExactlyWhenTheSlotWraps) {
  for (unsigned d = 1; d <= 8; ++d)
    for (Iter k = 1; k < 1000; ++k)
      ASSERT_EQ(phaseOf(k, d) != phaseOf(k - 1, d), slotOf(k, d) == 0)
          << "D=" << d << " k=" << k;
}

// Lap L of a slot: full[] phase L publishes it, so the consumer's wait must
// block while full[] is in phase L and pass in phase L+1; the producer's wait
// must block while empty[] is in phase L-1 and pass in phase L.
TEST(ArefProtocol, WaitsPassExactlyOnTheirPhase) {
  for (unsigned d = 1; d <= 8; ++d)
    for (Iter k = 0; k < 500; ++k) {
      Iter lap = lapOf(k, d);
      EXPECT_FALSE(parityWaitPasses(lap, consumerFullParity(k, d)));
      EXPECT_TRUE(parityWaitPasses(lap + 1, consumerFullParity(k, d)));
      EXPECT_TRUE(parityWaitPasses(lap, producerEmptyParity(k, d)));
      if (lap > 0) {
        EXPECT_FALSE(parityWaitPasses(lap - 1, producerEmptyParity(k, d)));
      }
      // Parity cannot tell phase L+1 from L+3: the protocol, not the
      // arithmetic, keeps waiters within one phase (the model checks it).
      EXPECT_EQ(parityWaitPasses(lap + 1, consumerFullParity(k, d)),
                parityWaitPasses(lap + 3, consumerFullParity(k, d)));
    }
}

// Every loop index is released exactly once, in order: by the steady state
// (k - P after issue k) or by the drain.
TEST(ArefProtocol, EveryIterationIsReleasedOnceInOrder) {
  for (unsigned lag = 0; lag <= 6; ++lag)
    for (Iter trips = 0; trips <= 30; ++trips) {
      std::vector<Iter> released;
      for (Iter k = 0; k < trips; ++k) {
        Iter r = releasedAfterIssue(k, lag);
        if (r != kNoRelease) {
          EXPECT_EQ(r, k - static_cast<Iter>(lag));
          released.push_back(r);
        }
      }
      unsigned drained = drainedSlots(trips, lag);
      EXPECT_EQ(drained, std::min<Iter>(trips, lag));
      for (unsigned j = 0; j < drained; ++j)
        released.push_back(drainedIteration(trips, lag, j));
      ASSERT_EQ(static_cast<Iter>(released.size()), trips)
          << "P=" << lag << " n=" << trips;
      for (Iter k = 0; k < trips; ++k)
        EXPECT_EQ(released[k], k) << "P=" << lag << " n=" << trips;
    }
}

// ref_gemm.cu releases slot (ring.slot + D - P) % D after issue k, and
// (ring.slot + D - j) % D for j = min(P, n)..1 after the loop, with the ring
// carried across tiles; the shared arithmetic must name the same slots.
TEST(ArefProtocol, ReleasedSlotsMatchTheReferenceKernel) {
  for (unsigned d = 1; d <= 6; ++d)
    for (unsigned lag = 0; lag < d; ++lag)
      for (Iter trips = 1; trips <= 2 * d + 3; ++trips) {
        RingState ring(d);
        Iter base = 0;
        for (int tile = 0; tile < 3; ++tile, base += trips) {
          for (Iter k = 0; k < trips; ++k) {
            Iter r = releasedAfterIssue(k, lag);
            if (r != kNoRelease) {
              ASSERT_EQ(slotOf(base + r, d), (ring.slot + d - lag) % d);
            }
            ring.advance();
          }
          unsigned drained = drainedSlots(trips, lag);
          for (unsigned j = 0; j < drained; ++j)
            ASSERT_EQ(slotOf(base + drainedIteration(trips, lag, j), d),
                      (ring.slot + d - (drained - j)) % d);
        }
      }
}

TEST(ArefProtocol, EmptyCountIsOneArrivalPerConsumerWarp) {
  for (unsigned groups = 1; groups <= 4; ++groups) {
    EXPECT_EQ(emptyArrivalCount(groups), groups * kWarpsPerWarpGroup);
    for (unsigned warps = 1; warps <= 4; ++warps)
      EXPECT_EQ(emptyArrivalCount(groups, warps), groups * warps);
  }
}

TEST(ArefProtocol, LagMustBeBelowDepth) {
  for (unsigned d = 1; d <= 8; ++d)
    for (unsigned lag = 0; lag <= 8; ++lag)
      EXPECT_EQ(lagFitsRing(lag, d), lag < d);
}

} // namespace
