//===- IssueTurnProtocol.h - the issue turns of cooperative groups -*- C++ -*-//
//
// Two cooperative consumer warp groups that share one consumer region take
// turns issuing their tensor-core products (FlashAttention-3's warp-group
// ping-pong, `tawa.issue_turn` written by -tawa-coarse-pipeline). The CUDA
// emitter realizes a turn with two named barriers of 2 x 128 threads
// (include/tawa/device/sync.cuh, lib/Target/EmitterProducts.cpp "issue
// turns", lib/Target/CudaEmitter.cpp):
//
//   at the start of the partition  group 1: bar.arrive turnBarrier(0)
//   before a run of turn products  group g: bar.sync   turnBarrier(g)
//   after the run                  group g: bar.arrive handOverBarrier(g)
//   at the end of the partition    group 0: bar.sync   turnBarrier(0)
//
// so that group 0 issues first, the groups alternate, and every barrier
// phase gets one arrival of each group (none is left half-arrived at the
// end). This header is that protocol in one place, for the two checkers
// that model it: the CPU interpreter (which runs the warp-specialized IR and
// reads the runs from the tawa.issue_turn attributes) and the protocol model
// checker (lib/Protocol/AttentionModel.cpp). test/Target/attention.test pins
// the emitted statements to it. Header-only, C++17, no MLIR, no CUDA.
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

/// Groups that take turns (the emitter takes turns only with two).
inline constexpr int kIssueTurnGroups = 2;
/// kIssueTurnBarrier of include/tawa/device/sync.cuh.
inline constexpr int kIssueTurnBarrierBase = 8;
/// Threads that complete a phase of a turn barrier: both warp groups.
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
/// The barrier on which group g hands the turn to the other group.
constexpr int handOverBarrier(int g) { return kIssueTurnBarrierBase + 1 - g; }

/// The barrier on which group g waits before a run under variant v.
inline int turnSyncBarrier(int g, IssueTurnVariant v) {
  if (v == IssueTurnVariant::WrongBarrier && g == 0)
    return handOverBarrier(0);
  return turnBarrier(g);
}

/// What group g does at the start of the partition: the barriers it
/// arrives on, in order (empty: nothing).
inline std::vector<int> turnStartArrivals(int g, IssueTurnVariant v) {
  switch (v) {
  case IssueTurnVariant::NoFirstPass:
    return {};
  case IssueTurnVariant::DoubleFirstPass:
    return g == 1 ? std::vector<int>{turnBarrier(0), turnBarrier(0)}
                  : std::vector<int>{};
  default:
    return g == 1 ? std::vector<int>{turnBarrier(0)} : std::vector<int>{};
  }
}

/// The barrier group g waits on at the end of the partition, if any.
inline std::optional<int> turnEndSync(int g, IssueTurnVariant v) {
  switch (v) {
  case IssueTurnVariant::NoLastTake:
    return std::nullopt;
  case IssueTurnVariant::LastTakeByGroup1:
    return g == 1 ? std::optional<int>(turnBarrier(1)) : std::nullopt;
  default:
    return g == 0 ? std::optional<int>(turnBarrier(0)) : std::nullopt;
  }
}

/// Whether group g hands the turn over after a run.
inline bool turnHandsOver(int g, IssueTurnVariant v) {
  return !(v == IssueTurnVariant::NoHandOver && g == 1);
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
