//===- IssueTurns.h - where the cooperative groups' turns run ---*- C++ -*-===//
//
// `tawa.issue_turn` (Partition.h, kIssueTurnAttr) marks products that the two
// cooperative consumer groups of a partition issue in turns. A *run* is a
// sequence of marked products that one group issues in one turn: it starts
// at a marked tawa.dot_async issued while the group does not hold the turn,
// and it ends after a marked product that no other product follows in its
// block before a tawa.dot_wait or an operation with regions. The CUDA
// emitter brackets each run with the turn's named barriers
// (tawa/Protocol/IssueTurnProtocol.h); the CPU interpreter runs the same
// runs. This is the one definition both use.
//
//===----------------------------------------------------------------------===//

#ifndef TAWA_TRANSFORMS_ISSUETURNS_H
#define TAWA_TRANSFORMS_ISSUETURNS_H

#include "mlir/IR/Operation.h"
#include "mlir/IR/Region.h"
#include "llvm/ADT/SmallPtrSet.h"

namespace tawa {

/// Whether a run of turn-taking products ends after `dot` (a
/// tawa.dot_async): no other product follows it in its block before a
/// tawa.dot_wait or an operation with regions, or the next product is not
/// marked.
bool issueTurnRunEndsAfter(mlir::Operation *dot);

/// The runs of a consumer region of `groups` cooperative groups, as the
/// emitter walks it (operations in order, nested regions where they
/// occur). Empty unless groups >= 2 and some product is marked.
struct IssueTurnRuns {
  /// Marked products before which a group waits for its turn.
  llvm::SmallPtrSet<mlir::Operation *, 8> startAt;
  /// Marked products after which a group hands the turn over.
  llvm::SmallPtrSet<mlir::Operation *, 8> endAfter;
  /// Every marked product.
  llvm::SmallPtrSet<mlir::Operation *, 8> products;
  bool empty() const { return products.empty(); }
};
IssueTurnRuns findIssueTurnRuns(mlir::Region &consumer, int64_t groups);

} // namespace tawa

#endif // TAWA_TRANSFORMS_ISSUETURNS_H
