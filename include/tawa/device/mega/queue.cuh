// Id rings in global memory (docs/MEGAKERNEL.md, "Runtime protocol"): a
// worker's JIT task queue and a scheduler's event queue. Many producers (any
// scheduler warp; any worker that completes an event), one consumer (the
// worker's thread 0; the scheduler warp's lane 0). A slot holds id + 1, 0
// when empty: the consumer clears it, a producer claims a position with an
// atomic add and publishes with a compare-and-swap from 0, so a producer that
// laps a slow one waits instead of overwriting it.
#pragma once
#include "tawa/device/mega/sync.cuh"
#include "tawa/device/mega/watchdog.cuh"

#include <cstdint>

namespace tawa::device::mega {

struct IdRing {
  uint32_t *tail;  ///< positions claimed by producers
  uint32_t *slots; ///< mask + 1 slots
  uint32_t mask;   ///< capacity - 1, capacity a power of two
};

/// The consumer's side: takes the id at `head` if one was published there.
__device__ __forceinline__ bool ringTryPop(const IdRing &r, uint32_t &head,
                                           uint32_t &id) {
  uint32_t *slot = &r.slots[head & r.mask];
  uint32_t v = loadAcquire(slot);
  if (v == 0)
    return false;
  storeRelaxed(slot, 0);
  ++head;
  id = v - 1;
  return true;
}

/// A producer's side: false when the watchdog stopped it before the slot
/// freed up (it has reported `what`).
template <typename Describe>
__device__ bool ringPush(const IdRing &r, uint32_t id, const WatchdogState &s,
                         Describe &&what) {
  uint32_t pos = fetchAddRelaxed(r.tail, 1);
  uint32_t *slot = &r.slots[pos & r.mask];
  return boundedWait(
      s, [&] { return compareSwapRelease(slot, 0, id + 1) == 0; }, what);
}

} // namespace tawa::device::mega
