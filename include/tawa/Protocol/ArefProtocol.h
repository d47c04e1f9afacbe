//===- ArefProtocol.h - slot and phase arithmetic of lowered arefs -*- C++ -*-//
//
// The arithmetic of DESIGN.md §2.2, in one place: the aref lowering pass, the
// CUDA emitter and the protocol model checker (lib/Protocol) all use these
// functions, so that what the checker proves is what the compiler emits.
// Header-only, C++17, no MLIR and no CUDA; every function is constexpr and,
// under nvcc, also __device__, so kernels can call it.
//
// Terms. An aref ring has D slots; each slot has a `full` and an `empty`
// mbarrier. A *ring position* k counts the puts (or gets) on the ring from the
// start of the kernel: a persistent kernel carries it across tiles, so k is
// not the loop index of one tile. A fresh mbarrier is in phase 0;
// `try_wait.parity p` passes once the phase with parity p has completed, i.e.
// while the barrier's current phase has parity !p.
//
//===----------------------------------------------------------------------===//

#ifndef TAWA_PROTOCOL_AREFPROTOCOL_H
#define TAWA_PROTOCOL_AREFPROTOCOL_H

#include <cstdint>

// Device code may call these too (the emitted kernels' ring arithmetic).
#ifdef __CUDACC__
#define TAWA_PROTOCOL_HD __host__ __device__
#else
#define TAWA_PROTOCOL_HD
#endif

namespace tawa::protocol {

/// Ring positions and loop indices (64-bit: never wraps in a kernel).
using Iter = std::int64_t;

/// Returned by releasedAfterIssue() when the k-th issue releases nothing.
inline constexpr Iter kNoRelease = -1;

/// Warps in one warp group (the unit of a wgmma).
inline constexpr unsigned kWarpsPerWarpGroup = 4;

/// Slot used by ring position k: k mod D.
TAWA_PROTOCOL_HD constexpr unsigned slotOf(Iter k, unsigned depth) {
  return static_cast<unsigned>(k % depth);
}

/// Lap of ring position k: how many times the slot index wrapped before it.
/// The lap-th phase of full[slotOf(k)] publishes k; its lap-th phase of
/// empty[] is completed by the releases of k.
TAWA_PROTOCOL_HD constexpr Iter lapOf(Iter k, unsigned depth) {
  return k / depth;
}

/// Phase bit of ring position k: flips each time the slot index wraps to 0
/// (the `phase` of the device library's RingState after k advances).
TAWA_PROTOCOL_HD constexpr unsigned phaseOf(Iter k, unsigned depth) {
  return static_cast<unsigned>(lapOf(k, depth) & 1);
}

/// Parity the producer waits on empty[slotOf(k)] before its k-th put. Starts
/// at 1: a fresh barrier is in phase 0, so the first lap passes at once; on
/// lap L > 0 it waits for phase L-1, completed by the releases of k - D.
TAWA_PROTOCOL_HD constexpr unsigned producerEmptyParity(Iter k,
                                                        unsigned depth) {
  return phaseOf(k, depth) ^ 1u;
}

/// Parity the consumer waits on full[slotOf(k)] before its k-th get: phase
/// lap(k), completed by the producer's arrive.expect_tx plus the TMA bytes.
TAWA_PROTOCOL_HD constexpr unsigned consumerFullParity(Iter k, unsigned depth) {
  return phaseOf(k, depth);
}

/// Whether try_wait.parity(parity) passes on a barrier in phase `phase`.
TAWA_PROTOCOL_HD constexpr bool parityWaitPasses(Iter phase, unsigned parity) {
  return static_cast<unsigned>(phase & 1) != parity;
}

/// Loop index whose slot is released right after the MMA of loop index k was
/// issued and wgmma.wait_group<lag> returned (k - lag), or kNoRelease while
/// k < lag: those slots are released by the drain after the loop.
TAWA_PROTOCOL_HD constexpr Iter releasedAfterIssue(Iter k, unsigned lag) {
  return k >= static_cast<Iter>(lag) ? k - static_cast<Iter>(lag) : kNoRelease;
}

/// Slots released by the drain (wgmma.wait_group<0>) after a loop of
/// `trips` iterations: the last min(lag, trips) loop indices.
TAWA_PROTOCOL_HD constexpr unsigned drainedSlots(Iter trips, unsigned lag) {
  return trips < static_cast<Iter>(lag) ? static_cast<unsigned>(trips) : lag;
}

/// Loop index released by the j-th drain release (j in [0, drainedSlots)),
/// oldest first.
TAWA_PROTOCOL_HD constexpr Iter drainedIteration(Iter trips, unsigned lag,
                                                 unsigned j) {
  return trips - drainedSlots(trips, lag) + j;
}

/// Arrival count of every empty[] barrier: one arrival per consumer warp
/// (lane 0, after that warp's own wgmma wait), for `groups` consumer warp
/// groups of `warpsPerGroup` warps each.
TAWA_PROTOCOL_HD constexpr unsigned
emptyArrivalCount(unsigned groups,
                  unsigned warpsPerGroup = kWarpsPerWarpGroup) {
  return groups * warpsPerGroup;
}

/// Arrival count of every full[] barrier: the elected producer thread's single
/// arrive.expect_tx; the TMA bytes complete the transaction count.
TAWA_PROTOCOL_HD constexpr unsigned fullArrivalCount() { return 1; }

/// Whether an MMA lag fits a ring: the producer's put k waits for the release
/// of k - D, which comes after the issue of k - D + lag, which needs put
/// k - D + lag; that is only earlier than k when lag < D.
TAWA_PROTOCOL_HD constexpr bool lagFitsRing(unsigned lag, unsigned depth) {
  return lag < depth;
}

} // namespace tawa::protocol

#undef TAWA_PROTOCOL_HD

#endif // TAWA_PROTOCOL_AREFPROTOCOL_H
