//===- AttentionModel.h - model of the attention pipeline's protocol ------===//
//
// An explicit-state model of the attention forward pipeline as tawa emits it
// (docs/CODEGEN.md "attention", "issue turns"; docs/VERIFICATION.md): one
// producer thread putting, per tile, the Q block into one ring and each key
// block's K and V into two more (each ring D slots with full/empty
// mbarriers, TMA completing asynchronously), and C cooperative consumer warp
// groups running the coarse-grained pipeline of -tawa-coarse-pipeline
// (peeled: S_0 = Q K_0^T issued and waited before the loop; iteration j
// issues S_j, then O += P_{j-1} V_{j-1}, waits for S_j leaving the update in
// flight, releases K_j, waits for the update, releases V_{j-1}; the last
// update after the loop), with wgmma groups retiring in order at any time.
// Two groups take turns issuing their products through the named barriers
// of tawa/Protocol/IssueTurnProtocol.h (group 1 passes the first turn, each
// run of products between bar.sync on the group's barrier and bar.arrive on
// the other's, group 0 takes the last turn).
//
// The explorer (Explorer.h) visits every interleaving and checks: no
// deadlock; no TMA into a slot that an unretired wgmma reads or that a group
// has not released; no read of an unfilled or stale slot; no wait passing in
// a wrong phase; no arrival beyond a barrier's count; on the named barriers,
// no second arrival of one group in a phase, no phase left half-arrived when
// all actors finished, no group taking its turn while the other holds its
// own, no turn product issued outside a turn.
//
// No MLIR: plain C++17, slot arithmetic from ArefProtocol.h.
//
//===----------------------------------------------------------------------===//

#ifndef TAWA_LIB_PROTOCOL_ATTENTIONMODEL_H
#define TAWA_LIB_PROTOCOL_ATTENTIONMODEL_H

#include "ProtocolModel.h"

#include "tawa/Protocol/IssueTurnProtocol.h"

#include <optional>
#include <string>
#include <vector>

namespace tawa::protocol {

/// Deliberately broken ring protocols of the attention pipeline.
enum class AttentionRingVariant {
  Correct,
  /// K_j is released before the wgmma.wait_group that retires S_j =
  /// Q K_j^T (<0> before the loop, <1> in it).
  ReleaseKBeforeWait,
  /// In the loop, V_{j-1} is released after wgmma.wait_group<1> instead of
  /// <0>: the update that reads it may still run.
  ReleaseVAfterWaitOne,
  /// Q is released right after the tile's last S product is issued,
  /// before the wait that retires it.
  ReleaseQEarly,
};

const char *attentionRingVariantName(AttentionRingVariant v);
const std::vector<AttentionRingVariant> &allAttentionRingVariants();

struct AttentionConfig {
  unsigned depth = 2;         ///< D of the Q, K and V rings (1..4)
  unsigned groups = 2;        ///< cooperative consumer warp groups (1..2)
  bool issueTurns = true;     ///< two groups take turns issuing products
  unsigned warpsPerGroup = 1; ///< empty[] arrivals per group and release
  std::vector<unsigned> trips = {2}; ///< key blocks of each tile
  IssueTurnVariant turnVariant = IssueTurnVariant::Correct;
  AttentionRingVariant ringVariant = AttentionRingVariant::Correct;
  bool stopAtFirst = false;
  uint64_t maxStates = 0;
};

/// Empty when the configuration is within the model's limits, else why not.
std::string validateAttentionConfig(const AttentionConfig &config);

/// Explores every interleaving of the configured pipeline breadth-first.
CheckResult checkAttentionProtocol(const AttentionConfig &config);

/// The consumer program of group `group`, one instruction a line (what the
/// model executes; for the documentation and the tests).
std::vector<std::string> attentionConsumerProgram(const AttentionConfig &config,
                                                  unsigned group);

} // namespace tawa::protocol

#endif // TAWA_LIB_PROTOCOL_ATTENTIONMODEL_H
