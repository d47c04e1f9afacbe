//===- BarrierArrivalCheck.cpp - mbarrier counts against their arrivals ---===//
//
// A lowered kernel's rings synchronize through mbarriers whose phase
// completes after the count given at allocation. The count is set by the
// pass that builds the protocol (ArefLowering) and changed by those that
// extend it (ClusterMulticast doubles the releases); a count that the
// arrivals never reach is a hang on the GPU, which no CPU check saw before
// this pass (the interpreter runs the IR before lowering). By the ring
// protocol each partition that arrives on a barrier arrives once per phase
// (its arrive ops are alternative places on its paths), so the expected
// count follows from which partitions arrive and how: see Passes.td.
//
//===----------------------------------------------------------------------===//

#include "tawa/Dialect/Tawa/TawaDialect.h"
#include "tawa/Transforms/Partition.h"
#include "tawa/Transforms/Passes.h"

#include <map>

namespace tawa {
#define GEN_PASS_DEF_BARRIERARRIVALCHECK
#include "tawa/Transforms/Passes.h.inc"
} // namespace tawa

using namespace mlir;
using namespace tawa;

namespace {

/// How one partition arrives on one barrier in a phase.
struct PartitionArrivals {
  int64_t elected = 0; ///< arrivals of one elected thread (0 or 1, x2 cluster)
  int64_t warps = 0;   ///< per-warp arrivals
  bool conflicting = false;
  void add(int64_t &slot, int64_t n) {
    if (slot && slot != n)
      conflicting = true;
    slot = std::max(slot, n);
  }
  int64_t total() const { return elected + warps; }
};

struct BarrierArrivalCheckPass
    : public tawa::impl::BarrierArrivalCheckBase<BarrierArrivalCheckPass> {
  void runOnOperation() override {
    tt::FuncOp func = getOperation();
    bool failed = false;
    func.walk([&](WarpSpecializeOp ws) {
      ArrayRef<int32_t> warps = ws.getWarps();
      const bool pingpong = ws->hasAttr(kPingPongAttr);
      auto partitionOf = [&](Operation *op) -> int {
        for (auto [i, region] : llvm::enumerate(ws.getPartitions()))
          if (region.isAncestor(op->getParentRegion()))
            return static_cast<int>(i);
        return -1;
      };
      func.walk([&](MBarrierAllocOp alloc) {
        // Partition -> how it arrives, in partition order.
        std::map<int, PartitionArrivals> by;
        for (Operation *user : alloc.getResult().getUsers()) {
          int p = partitionOf(user);
          if (p < 0)
            continue;
          if (isa<MBarrierExpectTxOp>(user)) {
            by[p].add(by[p].elected, 1);
          } else if (auto arrive = dyn_cast<MBarrierArriveOp>(user)) {
            const int64_t cluster = arrive.getCluster() ? 2 : 1;
            if (arrive.getPerWarp()) {
              int64_t n = warps[p] - (user->hasAttr(kTransposerAttr) ? 1 : 0);
              by[p].add(by[p].warps, n * cluster);
            } else {
              by[p].add(by[p].elected, cluster);
            }
          }
        }
        if (by.empty())
          return;
        int64_t expected = 0, turns = 0;
        std::string how;
        for (auto &[p, a] : by) {
          if (a.conflicting) {
            alloc.emitError() << "internal error: partition " << p
                              << " arrives on this barrier in two ways "
                                 "(different per-phase counts)";
            failed = true;
            return;
          }
          // Ping-pong consumer groups take turns: one of them per phase.
          if (pingpong && p > 0)
            turns = std::max(turns, a.total());
          else
            expected += a.total();
          how += (how.empty() ? "" : ", ") + std::string("partition ") +
                 std::to_string(p) + ": " + std::to_string(a.total());
        }
        expected += turns;
        if (expected != static_cast<int64_t>(alloc.getArrivals())) {
          alloc.emitError()
              << "internal error: this barrier's phase completes after "
              << alloc.getArrivals() << " arrivals, but its users make "
              << expected << " per phase (" << how << "): the kernel would "
              << (expected < static_cast<int64_t>(alloc.getArrivals())
                      ? "hang"
                      : "complete phases early");
          failed = true;
        }
      });
    });
    if (failed)
      signalPassFailure();
  }
};

} // namespace
