//===- OptimalSchedule.cpp - Twill's schedule for a kernel's main loop ----===//
//
// The compiler hook of the optimal scheduler (DESIGN.md §4): the main loop's
// dependence graph (LoopGraph.h) is solved by tawa::sched's Algorithm 1
// (optimal modulo schedule, then the joint software-pipelining and warp-
// specialization problem), and the solution is written as the attributes the
// heuristic path produces or reads:
//
//   tawa.schedule_lag = the fewest products left in flight that realize the
//       schedule, i.e. how many iterations after its issue each product
//       completes in it (floor((start + cycles) / II) - floor(start / II));
//       MmaPipeline keeps at least that many in flight (more where its
//       measured rule asks for more and the ring holds them: the same steady
//       state), writes the stage annotations it writes for a heuristic P,
//       and the generic expander realizes them;
//   tawa.schedule = "optimal", tawa.schedule_ii, tawa.schedule_length on the
//       loop, tawa.schedule_start / tawa.schedule_warp on each coarse op, as
//       a record of the solution;
//   tawa.schedule_consumer_slack on the loop: the clock cycles per iteration
//       the consumer warp groups' CUDA cores are free in the steady state (II
//       minus their ALU and EXP ops), where the CUDA emitter may place the
//       fixed-latency work of the previous tile's deferred epilogue.
//
// The solver's warp assignment must agree with the partitions: TMA loads on
// the variable-latency (producer) group, everything else off it. A solution
// tawa cannot realize is an error, as is a solver timeout (never reported as
// infeasible).
//
//===----------------------------------------------------------------------===//

#include "tawa/Transforms/LoopGraph.h"
#include "tawa/Transforms/Partition.h"
#include "tawa/Transforms/Passes.h"
#include "tawa/Transforms/SourceLocation.h"

#ifdef TAWA_HAVE_SCHEDULER
#include "tawa/Scheduler/Scheduler.h"
#endif

#include "mlir/IR/Builders.h"

#include <algorithm>

namespace tawa {
#define GEN_PASS_DEF_OPTIMALSCHEDULE
#include "tawa/Transforms/Passes.h.inc"
} // namespace tawa

using namespace mlir;
using namespace tawa;

namespace {

#ifdef TAWA_HAVE_SCHEDULER
/// Clock cycles per iteration that the solved steady state leaves to the
/// consumer warp groups' CUDA cores: II minus the cycles of their ALU and EXP
/// ops, both in the extracted graph's clock cycles (the solution is in
/// normalized units: iiBeforeNormalization reads its II in cycles).
int64_t consumerSlack(const LoopGraph &lg, const tawa::sched::SearchResult &r) {
  namespace s = tawa::sched;
  s::Graph cycles;
  std::string err;
  if (!s::parseGraphString(lg.text, cycles, err) || cycles.ops.empty() ||
      r.warp.size() > cycles.ops.size())
    return 0;
  int64_t ii = s::iiBeforeNormalization(cycles, r);
  int64_t busy = 0;
  for (size_t i = 0; i < cycles.ops.size(); ++i) {
    const s::Op &op = cycles.ops[i];
    bool consumer = r.warp.empty() ? !op.varLatency : r.warp[i] != 0;
    bool cudaCores = llvm::any_of(op.uses, [&](const s::UnitUse &u) {
      StringRef unit = cycles.units[u.unit].name;
      return unit == "ALU" || unit == "EXP";
    });
    if (consumer && cudaCores)
      busy += op.cycles;
  }
  return std::max<int64_t>(0, ii - busy);
}
#endif

struct OptimalSchedule
    : public tawa::impl::OptimalScheduleBase<OptimalSchedule> {
  using OptimalScheduleBase::OptimalScheduleBase;

  void runOnOperation() override {
    tt::FuncOp func = getOperation();
    scf::ForOp loop = findMainLoop(func);
    if (!loop)
      return;
    // Warp groups that will share each accumulator: LoopDistribution's
    // default.
    LoopGraph lg = buildLoopGraph(loop, defaultConsumerGroups(loop));
#ifndef TAWA_HAVE_SCHEDULER
    (void)lg;
    emitError(getUserLocation(loop.getLoc()))
        << "tawa was built without the Twill scheduler "
           "(TAWA_ENABLE_SCHEDULER=OFF): no optimal schedule";
    return signalPassFailure();
#else
    namespace s = tawa::sched;
    s::Graph g;
    std::string err;
    if (!s::parseGraphString(lg.text, g, err)) {
      emitError(getUserLocation(loop.getLoc()))
          << "internal error: the extracted loop graph does not parse: " << err;
      return signalPassFailure();
    }
    if (normalize > 0) {
      s::NormalizeResult nr = s::normalizeGraph(g, normalize, timeout);
      if (nr.status != s::SolveStatus::Optimal &&
          nr.status != s::SolveStatus::Feasible) {
        emitError(getUserLocation(loop.getLoc()))
            << "the optimal scheduler found no schedule for this loop ("
            << s::toString(nr.status) << " in cost normalization)";
        return signalPassFailure();
      }
    }
    s::SearchOptions opts;
    opts.timeoutSeconds = timeout;
    s::SearchResult r = s::search(g, opts);
    if (r.status != s::SolveStatus::Optimal &&
        r.status != s::SolveStatus::Feasible) {
      emitError(getUserLocation(loop.getLoc()))
          << "the optimal scheduler found no schedule for this loop ("
          << s::toString(r.status) << (r.message.empty() ? "" : ": ")
          << r.message << ")";
      return signalPassFailure();
    }

    OpBuilder b(loop);
    const int ii = r.schedule.ii;
    int64_t lag = 0;
    for (auto [i, anchor] : llvm::enumerate(lg.anchors)) {
      int start = r.schedule.start[i];
      int warp = r.warp.empty() ? -1 : r.warp[i];
      anchor->setAttr("tawa.schedule_start", b.getI32IntegerAttr(start));
      anchor->setAttr("tawa.schedule_warp", b.getI32IntegerAttr(warp));
      bool load = isa<tt::DescriptorLoadOp>(anchor);
      if (warp >= 0 && load != (warp == 0)) {
        emitError(getUserLocation(anchor->getLoc()))
            << "the optimal schedule puts this operation on warp group " << warp
            << ", which tawa cannot realize: TMA loads run on the "
            << "producer (group 0) and everything else on the consumers";
        return signalPassFailure();
      }
      if (isa<tt::DotOp>(anchor)) {
        int cycles = g.ops[i].cycles;
        lag = std::max<int64_t>(lag, (start + cycles) / ii - start / ii);
      }
    }
    loop->setAttr("tawa.schedule", b.getStringAttr("optimal"));
    loop->setAttr("tawa.schedule_ii", b.getI32IntegerAttr(ii));
    loop->setAttr("tawa.schedule_length",
                  b.getI32IntegerAttr(r.schedule.length));
    loop->setAttr("tawa.schedule_lag", b.getI32IntegerAttr(lag));
    loop->setAttr("tawa.schedule_consumer_slack",
                  b.getI32IntegerAttr(consumerSlack(lg, r)));
#endif
  }
};

} // namespace
