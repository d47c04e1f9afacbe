//===- IssueTurnProtocol.h - the issue turns of cooperative groups -*- C++ -*-//
//
// G cooperative consumer warp groups (two, or three on widened row blocks)
// that share one consumer region take turns issuing their tensor-core
// products, round robin (FlashAttention-3's warp-group ping-pong,
// `tawa.issue_turn` written by -tawa-coarse-pipeline). The CUDA emitter
// realizes a turn with G named barriers of 2 x 128 threads
// (include/tawa/device/sync.cuh, lib/Target/EmitterProducts.cpp "issue
// turns", lib/Target/CudaEmitter.cpp):
//
//   at the start of the partition  group G-1: bar.arrive turnBarrier(0)
//   before a run of turn products  group g:   bar.sync   turnBarrier(g)
//   after the run                  group g:   bar.arrive handOverBarrier(g)
//   at the end of the partition    group 0:   bar.sync   turnBarrier(0)
//
// with handOverBarrier(g) = turnBarrier((g + 1) mod G), so that group 0
// issues first, the groups take turns in order, and every barrier phase
// gets the arrivals of two groups, the one that waits and the one before
// it (none is left half-arrived at the end). This header is that protocol in
// one place, for the two checkers that model it: the CPU interpreter (which
// runs the warp-specialized IR and reads the runs from the tawa.issue_turn
// attributes) and the protocol model checker (lib/Protocol/AttentionModel.cpp).
// test/Target/attention.test pins the emitted statements to it. Header-only,
// C++17, no MLIR, no CUDA.
//
// A *variant* is a deliberately broken protocol that the checkers must
// catch (the seeded bugs of docs/VERIFICATION.md).
//
//===----------------------------------------------------------------------===//

#ifndef TAWA_PROTOCOL_ISSUETURNPROTOCOL_H
#define TAWA_PROTOCOL_ISSUETURNPROTOCOL_H

#include <optional>
#include <string>
#include <vector>

namespace tawa::protocol {

/// Groups whose arrivals complete a phase of one turn barrier: the group
/// that waits on it and the one that hands it the turn.
inline constexpr int kIssueTurnGroups = 2;
/// kIssueTurnBarrier of include/tawa/device/sync.cuh.
inline constexpr int kIssueTurnBarrierBase = 8;
/// Threads that complete a phase of a turn barrier: two warp groups.
inline constexpr int kIssueTurnBarrierThreads = 2 * 128;

enum class IssueTurnVariant {
  Correct,
  /// Group 1 does not pass the first turn at the start of the partition.
  NoFirstPass,
  /// Group 0 does not take the turn group 1 passes after its last run.
  NoLastTake,
  /// Group 1 never hands the turn over after its runs.
  NoHandOver,
  /// Off by one at the end: the last turn is taken by group 1 (the group
  /// that passed the first) instead of group 0.
  LastTakeByGroup1,
  /// Group 0 waits for its turn on the barrier it hands the turn over on
  /// (group 1's) instead of its own.
  WrongBarrier,
  /// The turn is handed over after the first product of a run instead of
  /// the last, so the other group may issue while this one still does.
  EarlyHandOver,
  /// Group 1 passes the first turn twice.
  DoubleFirstPass,
};

/// The barrier on which group g waits for its turn.
constexpr int turnBarrier(int g) { return kIssueTurnBarrierBase + g; }
/// The barrier on which group g of `groups` hands the turn to the next.
constexpr int handOverBarrier(int g, int groups = 2) {
  return kIssueTurnBarrierBase + (g + 1) % groups;
}

/// The barrier on which group g waits before a run under variant v.
inline int turnSyncBarrier(int g, IssueTurnVariant v, int groups = 2) {
  if (v == IssueTurnVariant::WrongBarrier && g == 0)
    return handOverBarrier(0, groups);
  return turnBarrier(g);
}

/// What group g does at the start of the partition: the barriers it
/// arrives on, in order (empty: nothing). The last group passes the first
/// turn (in the variants' names, "group 1" of two).
inline std::vector<int> turnStartArrivals(int g, IssueTurnVariant v,
                                          int groups = 2) {
  bool last = g == groups - 1;
  switch (v) {
  case IssueTurnVariant::NoFirstPass:
    return {};
  case IssueTurnVariant::DoubleFirstPass:
    return last ? std::vector<int>{turnBarrier(0), turnBarrier(0)}
                : std::vector<int>{};
  default:
    return last ? std::vector<int>{turnBarrier(0)} : std::vector<int>{};
  }
}

/// The barrier group g waits on at the end of the partition, if any.
inline std::optional<int> turnEndSync(int g, IssueTurnVariant v,
                                      int groups = 2) {
  switch (v) {
  case IssueTurnVariant::NoLastTake:
    return std::nullopt;
  case IssueTurnVariant::LastTakeByGroup1:
    return g == groups - 1 ? std::optional<int>(turnBarrier(groups - 1))
                           : std::nullopt;
  default:
    return g == 0 ? std::optional<int>(turnBarrier(0)) : std::nullopt;
  }
}

/// Whether group g hands the turn over after a run.
inline bool turnHandsOver(int g, IssueTurnVariant v, int groups = 2) {
  return !(v == IssueTurnVariant::NoHandOver && g == groups - 1);
}

/// Whether the hand-over follows the first product of a run (the broken
/// variant) rather than the last.
inline bool turnHandsOverEarly(IssueTurnVariant v) {
  return v == IssueTurnVariant::EarlyHandOver;
}

inline const char *issueTurnVariantName(IssueTurnVariant v) {
  switch (v) {
  case IssueTurnVariant::Correct:
    return "correct";
  case IssueTurnVariant::NoFirstPass:
    return "turn-no-first-pass";
  case IssueTurnVariant::NoLastTake:
    return "turn-no-last-take";
  case IssueTurnVariant::NoHandOver:
    return "turn-no-hand-over";
  case IssueTurnVariant::LastTakeByGroup1:
    return "turn-last-take-by-group-1";
  case IssueTurnVariant::WrongBarrier:
    return "turn-wrong-barrier";
  case IssueTurnVariant::EarlyHandOver:
    return "turn-early-hand-over";
  case IssueTurnVariant::DoubleFirstPass:
    return "turn-double-first-pass";
  }
  return "?";
}

inline const std::vector<IssueTurnVariant> &allIssueTurnVariants() {
  static const std::vector<IssueTurnVariant> all = {
      IssueTurnVariant::Correct,          IssueTurnVariant::NoFirstPass,
      IssueTurnVariant::NoLastTake,       IssueTurnVariant::NoHandOver,
      IssueTurnVariant::LastTakeByGroup1, IssueTurnVariant::WrongBarrier,
      IssueTurnVariant::EarlyHandOver,    IssueTurnVariant::DoubleFirstPass};
  return all;
}

inline std::optional<IssueTurnVariant>
parseIssueTurnVariant(const std::string &name) {
  for (IssueTurnVariant v : allIssueTurnVariants())
    if (name == issueTurnVariantName(v))
      return v;
  return std::nullopt;
}

} // namespace tawa::protocol

#endif // TAWA_PROTOCOL_ISSUETURNPROTOCOL_H
