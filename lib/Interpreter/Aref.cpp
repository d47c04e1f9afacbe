//===- Aref.cpp - aref rings with the semantics of Tawa's Fig. 4 ----------===//

#include "tawa/Interpreter/Aref.h"

namespace tawa::interp {

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
  return "";
}

std::string ArefRing::get(int64_t k, std::vector<RuntimeValue> &values) {
  unsigned index = slotOf(k);
  Slot &s = slots[index];
  if (s.position != k)
    return "get of position k=" + std::to_string(k) + " found slot " +
           std::to_string(index) +
           " full with position k=" + std::to_string(s.position);
  s.full = false;
  s.empty = false;
  s.borrowed = true;
  ++s.generation;
  values.clear();
  for (const RuntimeValue &v : s.payload) {
    RuntimeValue tagged = v;
    tagged.borrow = BorrowTag{this, index, s.generation};
    values.push_back(std::move(tagged));
  }
  return "";
}

std::string ArefRing::consumed(int64_t k, mlir::Operation *by) {
  unsigned index = slotOf(k);
  Slot &s = slots[index];
  if (!s.borrowed)
    return "consumed of position k=" + std::to_string(k) + " on slot " +
           std::to_string(index) + ", which is not borrowed (" +
           describeSlot(index) + ")";
  if (s.position != k)
    return "consumed of position k=" + std::to_string(k) + " on slot " +
           std::to_string(index) +
           ", which is borrowed for position k=" + std::to_string(s.position);
  s.borrowed = false;
  s.empty = true;
  s.releasedPosition = k;
  s.releasedGeneration = s.generation;
  s.releasedBy = by;
  return "";
}

bool ArefRing::isLive(const BorrowTag &tag) const {
  const Slot &s = slots[tag.slot];
  return s.borrowed && s.generation == tag.generation;
}

std::string ArefRing::describeSlot(unsigned index) const {
  const Slot &s = slots[index];
  std::string flags =
      std::string("E=") + (s.empty ? "1" : "0") + " F=" + (s.full ? "1" : "0");
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
