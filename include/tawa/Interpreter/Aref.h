//===- Aref.h - aref rings with the semantics of Tawa's Fig. 4 --*- C++ -*-===//
//
// One aref is D slots. Each slot has the full/empty flags of Fig. 4 of the
// Tawa paper, initially E=1 F=0:
//   put(k)       needs E=1 (else the putter blocks); stores the payload;
//                sets F=1, E=0
//   get(k)       needs F=1 (else the getter blocks); returns the payload;
//                clears F and E: the slot is borrowed
//   consumed(k)  the slot must be borrowed; sets E=1
// and iteration k uses slot k mod D. On top of Fig. 4 the ring remembers the
// position k of each put, so that a get or consumed of another position than
// the slot holds is reported rather than silently served.
//
// A ring may have several readers: the cooperative consumer warp groups of
// one partition (C groups, each running the partition's code) each take and
// release every position, as on the device, where every group waits on the
// slot's full barrier and the empty barrier counts the arrivals of all C
// groups. A slot stays full until every reader took it and becomes empty
// when every reader released it; reader r's get and consumed are its own
// (a second get of the same position by one reader waits for the next lap).
// With one reader this is Fig. 4 exactly.
//
//===----------------------------------------------------------------------===//

#ifndef TAWA_INTERPRETER_AREF_H
#define TAWA_INTERPRETER_AREF_H

#include "tawa/Interpreter/Value.h"

#include "mlir/IR/Operation.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tawa::interp {

class ArefRing {
public:
  struct Slot {
    bool empty = true;     ///< E
    bool full = false;     ///< F: put, and some reader has not taken it
    bool borrowed = false; ///< some reader took it and has not released it
    int64_t position = -1; ///< k of the last put into the slot
    std::vector<RuntimeValue> payload;
    /// Readers (bit r) that took / released the current position.
    uint32_t taken = 0, released = 0;
    /// Incremented by every put: values carry the borrow they came from.
    uint64_t generation = 0;
    /// The last release, for messages about late reads.
    int64_t releasedPosition = -1;
    uint64_t releasedGeneration = 0;
    mlir::Operation *releasedBy = nullptr;

    bool holds(unsigned reader) const {
      return (taken >> reader & 1) && !(released >> reader & 1);
    }
  };

  ArefRing(unsigned index, int64_t depth, mlir::Operation *createOp = nullptr);

  unsigned index() const { return ringIndex; }
  int64_t depth() const { return static_cast<int64_t>(slots.size()); }
  mlir::Operation *createOp() const { return creator; }
  /// Readers that take every position (1 to 32; 1 unless set).
  unsigned readers() const { return numReaders; }
  void setReaders(unsigned n) { numReaders = n < 1 ? 1 : n > 32 ? 32 : n; }
  /// Slot k mod D; k must be non-negative.
  unsigned slotOf(int64_t k) const {
    return static_cast<unsigned>(k % depth());
  }
  const Slot &slot(unsigned s) const { return slots[s]; }

  bool canPut(int64_t k) const { return slots[slotOf(k)].empty; }
  /// Reader `reader` can take the slot: it is full and this reader has not
  /// taken its current position yet.
  bool canGet(int64_t k, unsigned reader = 0) const {
    const Slot &s = slots[slotOf(k)];
    return s.full && !(s.taken >> reader & 1);
  }

  /// Each of these needs its can*() to hold. They return "" on success, or
  /// what is wrong (a protocol violation) without changing the ring.
  std::string put(int64_t k, llvm::ArrayRef<RuntimeValue> values);
  std::string get(int64_t k, std::vector<RuntimeValue> &values,
                  unsigned reader = 0);
  std::string consumed(int64_t k, mlir::Operation *by, unsigned reader = 0);

  /// Whether a value read out of the ring under `tag` may still be read:
  /// its borrow is the slot's current one and its reader has not released
  /// it yet.
  bool isLive(const BorrowTag &tag) const;

  /// "E=0 F=0: borrowed by the get of k=3, not consumed yet" and the like.
  std::string describeSlot(unsigned s) const;

private:
  unsigned ringIndex;
  mlir::Operation *creator;
  std::vector<Slot> slots;
  unsigned numReaders = 1;
};

} // namespace tawa::interp

#endif // TAWA_INTERPRETER_AREF_H
