//===- Aref.cpp - aref rings with the semantics of Tawa's Fig. 4 ----------===//

#include "tawa/Interpreter/Aref.h"

namespace tawa::interp {

namespace {

std::string readerList(uint32_t mask) {
  std::string s;
  for (unsigned r = 0; r < 32; ++r)
    if (mask >> r & 1)
      s += (s.empty() ? "" : ", ") + std::to_string(r);
  return s.empty() ? "none" : s;
}

} // namespace

ArefRing::ArefRing(unsigned index, int64_t depth, mlir::Operation *createOp)
    : ringIndex(index), creator(createOp),
      slots(static_cast<size_t>(depth < 1 ? 1 : depth)) {}

std::string ArefRing::put(int64_t k, llvm::ArrayRef<RuntimeValue> values) {
  Slot &s = slots[slotOf(k)];
  s.payload.clear();
  for (const RuntimeValue &v : values) {
    // The slot holds a copy: what the putter does with its value later, and
    // where the value came from, does not concern the getter.
    RuntimeValue copy = v;
    copy.borrow.reset();
    copy.pending.reset();
    s.payload.push_back(std::move(copy));
  }
  s.position = k;
  s.full = true;
  s.empty = false;
  s.taken = s.released = 0;
  ++s.generation;
  return "";
}

std::string ArefRing::get(int64_t k, std::vector<RuntimeValue> &values,
                          unsigned reader) {
  unsigned index = slotOf(k);
  Slot &s = slots[index];
  if (s.position != k)
    return "get of position k=" + std::to_string(k) + " found slot " +
           std::to_string(index) +
           " full with position k=" + std::to_string(s.position);
  uint32_t all = numReaders >= 32 ? ~0u : (1u << numReaders) - 1;
  s.taken |= 1u << reader;
  s.full = (s.taken & all) != all;
  s.empty = false;
  s.borrowed = true;
  values.clear();
  for (const RuntimeValue &v : s.payload) {
    RuntimeValue tagged = v;
    tagged.borrow = BorrowTag{this, index, s.generation, reader};
    values.push_back(std::move(tagged));
  }
  return "";
}

std::string ArefRing::consumed(int64_t k, mlir::Operation *by,
                               unsigned reader) {
  unsigned index = slotOf(k);
  Slot &s = slots[index];
  if (!s.holds(reader)) {
    if (numReaders == 1)
      return "consumed of position k=" + std::to_string(k) + " on slot " +
             std::to_string(index) + ", which is not borrowed (" +
             describeSlot(index) + ")";
    return "consumed of position k=" + std::to_string(k) + " on slot " +
           std::to_string(index) + ", which reader " + std::to_string(reader) +
           " does not hold (" + describeSlot(index) + ")";
  }
  if (s.position != k)
    return "consumed of position k=" + std::to_string(k) + " on slot " +
           std::to_string(index) +
           ", which is borrowed for position k=" + std::to_string(s.position);
  uint32_t all = numReaders >= 32 ? ~0u : (1u << numReaders) - 1;
  s.released |= 1u << reader;
  s.borrowed = (s.taken & ~s.released) != 0;
  s.releasedPosition = k;
  s.releasedGeneration = s.generation;
  s.releasedBy = by;
  if ((s.released & all) == all) {
    s.empty = true;
    s.full = false;
    s.borrowed = false;
  }
  return "";
}

bool ArefRing::isLive(const BorrowTag &tag) const {
  const Slot &s = slots[tag.slot];
  return s.generation == tag.generation && s.holds(tag.reader);
}

std::string ArefRing::describeSlot(unsigned index) const {
  const Slot &s = slots[index];
  std::string flags =
      std::string("E=") + (s.empty ? "1" : "0") + " F=" + (s.full ? "1" : "0");
  if (numReaders > 1 && !s.empty && (s.taken || s.released))
    return flags + ": position k=" + std::to_string(s.position) +
           " taken by reader(s) " + readerList(s.taken) + ", released by " +
           readerList(s.released) + " of " + std::to_string(numReaders);
  if (s.full)
    return flags + ": full with position k=" + std::to_string(s.position);
  if (s.borrowed)
    return flags + ": borrowed by the get of k=" + std::to_string(s.position) +
           ", not consumed yet";
  if (s.position < 0)
    return flags + ": empty, never written";
  return flags + ": empty, position k=" + std::to_string(s.position) +
         " consumed";
}

} // namespace tawa::interp
