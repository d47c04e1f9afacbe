//===- IssueTurns.cpp - where the cooperative groups' turns run -----------===//

#include "tawa/Transforms/IssueTurns.h"

#include "tawa/Dialect/Tawa/TawaDialect.h"
#include "tawa/Transforms/Partition.h"

using namespace mlir;

namespace tawa {

bool issueTurnRunEndsAfter(Operation *dot) {
  for (Operation *next = dot->getNextNode(); next; next = next->getNextNode()) {
    if (auto product = dyn_cast<DotAsyncOp>(next))
      return !product->hasAttr(kIssueTurnAttr);
    if (isa<DotWaitOp>(next) || next->getNumRegions())
      return true;
  }
  return true;
}

IssueTurnRuns findIssueTurnRuns(Region &consumer, int64_t groups) {
  IssueTurnRuns runs;
  if (groups < 2)
    return runs;
  // The emitter's walk: operations in order, a nested region's operations
  // where the operation that holds it is emitted.
  bool held = false;
  consumer.walk<WalkOrder::PreOrder>([&](DotAsyncOp dot) {
    if (!dot->hasAttr(kIssueTurnAttr))
      return;
    runs.products.insert(dot);
    if (!held)
      runs.startAt.insert(dot);
    held = true;
    if (issueTurnRunEndsAfter(dot)) {
      runs.endAfter.insert(dot);
      held = false;
    }
  });
  return runs;
}

} // namespace tawa
