//===- ProtocolModel.h - explicit-state model of the lowered aref ring ----===//
//
// An explicit-state model checker for the aref lowering protocol of
// DESIGN.md §2.2 (see docs/VERIFICATION.md). It explores every interleaving
// of one producer (the elected TMA thread), C consumer warp groups with an
// MMA lag P, the asynchronous TMA completions and the asynchronous, in-order
// retirement of wgmma groups, over a D-slot ring carried across the tiles of
// a persistent kernel. The slot/phase arithmetic comes from
// tawa/Protocol/ArefProtocol.h, the same header the lowering uses.
//
// No MLIR dependency: plain C++17.
//
//===----------------------------------------------------------------------===//

#ifndef TAWA_LIB_PROTOCOL_PROTOCOLMODEL_H
#define TAWA_LIB_PROTOCOL_PROTOCOLMODEL_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tawa::protocol {

/// Deliberately broken lowerings; each must be caught by the checker.
enum class Variant {
  Correct,
  /// Consumer waits full[] with parity starting at 1 instead of 0.
  ConsumerParityOne,
  /// Consumer arrives on empty[] for k - P before wgmma.wait_group<P>.
  ConsumedBeforeWait,
  /// empty[] initialized with one arrival more than the consumers make.
  EmptyCountTooHigh,
  /// empty[] initialized with one arrival fewer than the consumers make.
  EmptyCountTooLow,
  /// Producer waits empty[] with parity starting at 0 instead of 1.
  ProducerParityZero,
  /// 2-CTA clusters (ModelConfig::ctas = 2) only: consumers release a slot
  /// in their own CTA only, and empty[] counts the arrivals of one CTA, so a
  /// producer's multicast can overwrite a slot its partner still reads.
  ClusterLocalRelease,
  /// 2-CTA clusters only: each producer announces only its own half's bytes
  /// on full[], so the phase can complete before the other half has landed.
  ClusterExpectHalf,
};

/// Command-line spelling of a variant ("correct", "consumer-parity-1", ...).
const char *variantName(Variant v);
std::optional<Variant> parseVariant(const std::string &name);
/// All variants, Correct first.
const std::vector<Variant> &allVariants();

enum class ViolationKind {
  /// Some actor has not finished and no step (async events included) is
  /// enabled.
  Deadlock,
  /// A TMA was issued into a slot that an unretired wgmma still reads.
  OverwriteInFlightMma,
  /// A TMA was issued into a slot whose previous value a consumer group has
  /// not released (still owns it, or has not even read it yet), or that a
  /// previous TMA is still filling.
  OverwriteUnreleased,
  /// A consumer's full[] wait passed while the slot held no data for any
  /// ring position (never filled, or a TMA still writing it).
  ReadUnfilled,
  /// A consumer's full[] wait for ring position k passed while the slot held
  /// another position's data (parity aliasing: a waiter two phases behind).
  ReadStale,
  /// A wait passed on a barrier phase other than the one it waits for.
  WrongPhase,
  /// An arrival meant for phase L of a barrier landed in another phase
  /// (phase L had already completed: more arrivals than the count).
  ArrivalOverflow,
  /// Named barriers of the issue turns (AttentionModel.h): one group arrived
  /// twice in one phase, which would complete it without the other group.
  BarrierOverflow,
  /// Every actor finished with a named barrier phase partly arrived: the
  /// groups reached it a different number of times.
  BarrierUnbalanced,
  /// A group took its issue turn while the other group held its own.
  TurnOverlap,
  /// A group issued a turn-taking product without holding the turn.
  IssueOutsideTurn,
};

const char *violationKindName(ViolationKind k);

struct ModelConfig {
  unsigned depth = 2;         ///< D, ring slots (1..8)
  unsigned lag = 0;           ///< P, wgmma groups left in flight (0..7)
  unsigned consumers = 1;     ///< C, consumer warp groups (1..4)
  unsigned warpsPerGroup = 1; ///< W, empty[] arrivals per group and release
  std::vector<unsigned> trips = {3}; ///< loop trip count of each tile
  Variant variant = Variant::Correct;
  /// CTAs per cluster: 1, or 2 for 2-CTA clusters sharing blocks by TMA
  /// multicast (lib/Transforms/ClusterMulticast.cpp): each CTA has its own
  /// producer, C consumer groups and ring; a ring position's block is either
  /// shared (CTA r copies half r into both CTAs' slots) or not (each CTA
  /// copies both halves itself), explored both ways; consumers release a
  /// slot in both CTAs and empty[] counts twice the arrivals.
  unsigned ctas = 1;
  /// Stop at the first violation (the broken-variant tests only need one).
  bool stopAtFirst = false;
  /// Give up (result.complete = false) after this many states; 0: no limit.
  uint64_t maxStates = 0;
};

struct Violation {
  ViolationKind kind;
  std::string message;              ///< what went wrong, in one line
  std::vector<std::string> trace;   ///< actor steps from the initial state
  std::vector<std::string> blocked; ///< deadlocks: what each actor waits on
};

struct CheckResult {
  uint64_t states = 0;      ///< distinct canonical states reached
  uint64_t transitions = 0; ///< steps taken
  /// Violating steps (and deadlocked states), over the whole exploration.
  uint64_t violationCount = 0;
  /// Per kind, the first (shortest, breadth-first) violation with its trace.
  std::vector<Violation> violations;
  bool complete = true; ///< false when maxStates cut the search short
  /// Whether a violation of this kind was found.
  bool has(ViolationKind k) const;
};

/// Empty string when the configuration is within the model's limits, else
/// why not.
std::string validateConfig(const ModelConfig &config);

/// Explores every interleaving of the configured protocol breadth-first.
/// The configuration must be valid (validateConfig).
CheckResult checkProtocol(const ModelConfig &config);

/// Human-readable trace of a violation, one step a line, indented.
std::string formatViolation(const Violation &v);

} // namespace tawa::protocol

#endif // TAWA_LIB_PROTOCOL_PROTOCOLMODEL_H
