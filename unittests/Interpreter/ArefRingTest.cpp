//===- ArefRingTest.cpp - Fig. 4 of the Tawa paper, slot by slot ----------===//

#include "tawa/Interpreter/Aref.h"

#include <gtest/gtest.h>

using namespace tawa::interp;

namespace {

RuntimeValue tile(uint64_t v) {
  auto d = std::make_shared<TensorData>();
  d->ints.push_back(v);
  return RuntimeValue::of(std::move(d));
}

TEST(ArefRingTest, SlotsStartEmpty) {
  ArefRing ring(0, 3);
  for (int64_t k = 0; k < 3; ++k) {
    EXPECT_TRUE(ring.canPut(k));
    EXPECT_FALSE(ring.canGet(k));
  }
  EXPECT_EQ(ring.describeSlot(1), "E=1 F=0: empty, never written");
}

TEST(ArefRingTest, PutGetConsumedFollowFigure4) {
  ArefRing ring(0, 2);
  // put: needs E, sets F, clears E.
  ASSERT_EQ(ring.put(0, {tile(42)}), "");
  EXPECT_FALSE(ring.canPut(0));
  EXPECT_FALSE(ring.canPut(2)); // the same slot, one lap later
  EXPECT_TRUE(ring.canGet(0));
  EXPECT_TRUE(ring.canPut(1)); // the other slot is untouched
  // get: needs F, clears both (borrowed).
  std::vector<RuntimeValue> got;
  ASSERT_EQ(ring.get(0, got), "");
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].data->ints[0], 42u);
  ASSERT_TRUE(got[0].borrow.has_value());
  EXPECT_TRUE(ring.isLive(*got[0].borrow));
  EXPECT_FALSE(ring.canGet(0));
  EXPECT_FALSE(ring.canPut(2));
  EXPECT_EQ(ring.describeSlot(0),
            "E=0 F=0: borrowed by the get of k=0, not consumed yet");
  // consumed: sets E; the borrowed value is dead from here on.
  ASSERT_EQ(ring.consumed(0, nullptr), "");
  EXPECT_FALSE(ring.isLive(*got[0].borrow));
  EXPECT_TRUE(ring.canPut(2));
  EXPECT_FALSE(ring.canGet(2));
}

TEST(ArefRingTest, ConsumedNeedsABorrowedSlot) {
  ArefRing ring(0, 1);
  EXPECT_NE(ring.consumed(0, nullptr).find("not borrowed (E=1 F=0"),
            std::string::npos);
  ASSERT_EQ(ring.put(0, {tile(1)}), "");
  // Full, not borrowed: a consumed before the get is misuse too.
  EXPECT_NE(ring.consumed(0, nullptr).find("not borrowed (E=0 F=1"),
            std::string::npos);
  std::vector<RuntimeValue> got;
  ASSERT_EQ(ring.get(0, got), "");
  ASSERT_EQ(ring.consumed(0, nullptr), "");
  EXPECT_NE(ring.consumed(0, nullptr).find("not borrowed"), std::string::npos);
}

TEST(ArefRingTest, PositionsMustMatchTheSlot) {
  ArefRing ring(0, 2);
  ASSERT_EQ(ring.put(2, {tile(7)}), ""); // slot 0 holds position 2
  std::vector<RuntimeValue> got;
  EXPECT_EQ(ring.get(0, got),
            "get of position k=0 found slot 0 full with position k=2");
  ASSERT_EQ(ring.get(2, got), "");
  EXPECT_EQ(ring.consumed(4, nullptr),
            "consumed of position k=4 on slot 0, which is borrowed for "
            "position k=2");
}

TEST(ArefRingTest, ABorrowEndsWhenTheSlotIsTakenAgain) {
  ArefRing ring(0, 1);
  std::vector<RuntimeValue> first, second;
  ASSERT_EQ(ring.put(0, {tile(1)}), "");
  ASSERT_EQ(ring.get(0, first), "");
  ASSERT_EQ(ring.consumed(0, nullptr), "");
  ASSERT_EQ(ring.put(1, {tile(2)}), "");
  ASSERT_EQ(ring.get(1, second), "");
  EXPECT_FALSE(ring.isLive(*first[0].borrow));
  EXPECT_TRUE(ring.isLive(*second[0].borrow));
}

// Cooperative groups: every reader takes and releases each position; the
// slot is full until all took it and empty once all released it.
TEST(ArefRingTest, EveryReaderTakesAndReleasesEachPosition) {
  ArefRing ring(0, 1);
  ring.setReaders(2);
  ASSERT_EQ(ring.put(0, {tile(1)}), "");
  std::vector<RuntimeValue> g0, g1;
  ASSERT_TRUE(ring.canGet(0, 0));
  ASSERT_EQ(ring.get(0, g0, 0), "");
  // Reader 0 has it; reader 1 not yet: still full, and reader 0 cannot take
  // the same fill again (its next get waits for the next lap).
  EXPECT_FALSE(ring.canGet(1, 0));
  EXPECT_TRUE(ring.canGet(0, 1));
  EXPECT_FALSE(ring.canPut(1));
  ASSERT_EQ(ring.consumed(0, nullptr, 0), "");
  EXPECT_FALSE(ring.isLive(*g0[0].borrow));
  // Released by one reader of two: not empty.
  EXPECT_FALSE(ring.canPut(1));
  EXPECT_EQ(ring.describeSlot(0), "E=0 F=1: position k=0 taken by reader(s) "
                                  "0, released by 0 of 2");
  EXPECT_NE(ring.consumed(0, nullptr, 0).find("which reader 0 does not hold"),
            std::string::npos);
  ASSERT_EQ(ring.get(0, g1, 1), "");
  EXPECT_TRUE(ring.isLive(*g1[0].borrow));
  EXPECT_FALSE(ring.canGet(0, 1));
  ASSERT_EQ(ring.consumed(0, nullptr, 1), "");
  EXPECT_TRUE(ring.canPut(1));
  EXPECT_FALSE(ring.isLive(*g1[0].borrow));
  ASSERT_EQ(ring.put(1, {tile(2)}), "");
  EXPECT_TRUE(ring.canGet(1, 0));
  EXPECT_TRUE(ring.canGet(1, 1));
}

} // namespace
