//===- ClusterMulticast.cpp - 2-CTA clusters sharing tiles by TMA multicast
//===//
//
// A persistent kernel's CTAs c and c ^ 1 become one cluster that walks
// program indices in pairs. Where the two programs load the same block (a
// GEMM's B tile for programs that share a column of C), each CTA loads half
// of it and multicasts the half into both CTAs' ring slots, so the block
// crosses L2 once per pair. Whether the blocks are the same is decided at run
// time, per load, by comparing the coordinates computed for both programs:
// the rewrite is correct for any coordinate function, and fast where the
// program order pairs up tiles (Triton's grouped order puts programs 2c and
// 2c + 1 in one column).
//
// The protocol, on top of ArefLowering's (DESIGN.md §2.2):
// - both CTAs make the same ring positions in the same order (checked: no
//   control flow inside the program loop depends on the program index, and
//   both run the same number of tiles);
// - a slot is released in both CTAs (`cluster` arrivals; the empty barriers
//   expect twice the arrivals), so a producer's empty wait also covers its
//   partner's readers of the slot its multicast overwrites;
// - each CTA still announces the whole block's bytes on its own full
//   barrier; the partner's half may land first, which is allowed: the phase
//   cannot complete while the announcing arrival is pending.
//
//===----------------------------------------------------------------------===//

#include "tawa/Dialect/Tawa/TawaDialect.h"
#include "tawa/Transforms/Partition.h"
#include "tawa/Transforms/Passes.h"
#include "tawa/Transforms/SourceLocation.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace tawa {
#define GEN_PASS_DEF_CLUSTERMULTICAST
#include "tawa/Transforms/Passes.h.inc"
} // namespace tawa

using namespace mlir;
using namespace tawa;

namespace {

/// Whether a value can differ between the two CTAs of a cluster that run
/// different programs: it derives from the program index (the program
/// loop's induction variable or a tt.get_program_id) or from something the
/// analysis cannot see through. Memoized; a cycle through loop-carried
/// values is cut as "same" and decided by the other paths.
class ProgramDependence {
public:
  explicit ProgramDependence(Value programIndex) : index(programIndex) {}

  bool depends(Value v) {
    if (v == index)
      return true;
    auto it = memo.find(v);
    if (it != memo.end())
      return it->second;
    memo[v] = false; // in progress
    bool d = compute(v);
    memo[v] = d;
    return d;
  }

private:
  bool compute(Value v) {
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      Operation *owner = arg.getOwner()->getParentOp();
      if (isa<tt::FuncOp>(owner))
        return false; // a kernel argument: the same in every CTA
      if (auto forOp = dyn_cast<scf::ForOp>(owner)) {
        if (arg == forOp.getInductionVar())
          return depends(forOp.getLowerBound()) || depends(forOp.getStep());
        unsigned i = arg.getArgNumber() - 1;
        return depends(forOp.getInitArgs()[i]) ||
               depends(forOp.getYieldedValues()[i]);
      }
      return true;
    }
    Operation *def = v.getDefiningOp();
    if (isa<tt::GetProgramIdOp>(def))
      return true;
    if (auto forOp = dyn_cast<scf::ForOp>(def)) {
      unsigned i = cast<OpResult>(v).getResultNumber();
      return depends(forOp.getLowerBound()) || depends(forOp.getUpperBound()) ||
             depends(forOp.getStep()) || depends(forOp.getInitArgs()[i]) ||
             depends(forOp.getYieldedValues()[i]);
    }
    if (def->getNumRegions() || !isMemoryEffectFree(def))
      return true;
    return llvm::any_of(def->getOperands(),
                        [&](Value operand) { return depends(operand); });
  }

  Value index;
  llvm::DenseMap<Value, bool> memo;
};

/// Whether `op` holds ring operations (whose order both CTAs must share).
bool holdsRingOps(Operation *op) {
  WalkResult r = op->walk([](Operation *inner) {
    if (isa<MBarrierWaitOp, MBarrierArriveOp, MBarrierExpectTxOp, TmaLoadOp,
            PingPongWaitOp, PingPongArriveOp, scf::ForOp, scf::WhileOp>(inner))
      return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return r.wasInterrupted();
}

struct ClusterMulticast
    : public tawa::impl::ClusterMulticastBase<ClusterMulticast> {
  using ClusterMulticastBase::ClusterMulticastBase;

  /// Reports why the kernel keeps one-CTA launches: an error with
  /// `required`, else nothing.
  LogicalResult decline(Operation *at, const Twine &why) {
    if (required)
      emitError(getUserLocation(at->getLoc()))
          << "cannot run this kernel as 2-CTA clusters: " << why;
    return failure();
  }

  void runOnOperation() override {
    tt::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    WarpSpecializeOp ws;
    func.walk([&](WarpSpecializeOp op) { ws = op; });
    if (!ws) {
      (void)decline(func, "it is not warp-specialized");
      return signalFailureIfRequired();
    }
    if (failed(rewrite(func, ws)))
      return signalFailureIfRequired();
  }

  void signalFailureIfRequired() {
    if (required)
      signalPassFailure();
  }

  LogicalResult rewrite(tt::FuncOp func, WarpSpecializeOp ws) {
    if (ws->hasAttr(kPingPongAttr) || ws.getPartitions().size() != 2)
      return decline(ws, "ping-pong consumers are not supported with "
                         "clusters");

    // The program loop of each partition.
    SmallVector<scf::ForOp, 2> loops;
    for (Region &region : ws.getPartitions()) {
      scf::ForOp loop;
      int count = 0;
      for (Operation &op : region.front())
        if (auto forOp = dyn_cast<scf::ForOp>(op);
            forOp && forOp->hasAttr(kProgramLoopAttr))
          loop = forOp, ++count;
      if (count != 1)
        return decline(ws, "it is not a persistent kernel of one program "
                           "loop per partition (-tawa-persistent-programs)");
      if (!loop.getLowerBound().getDefiningOp<tt::GetProgramIdOp>() ||
          !loop.getStep().getDefiningOp<tt::GetNumProgramsOp>())
        return decline(loop, "unexpected program loop bounds");
      loops.push_back(loop);
    }

    // Conditions inside each program loop.
    for (scf::ForOp loop : loops) {
      ProgramDependence dep(loop.getInductionVar());
      Operation *bad = nullptr;
      std::string why;
      loop.getBody()->walk([&](Operation *op) {
        if (auto forOp = dyn_cast<scf::ForOp>(op)) {
          if (dep.depends(forOp.getLowerBound()) ||
              dep.depends(forOp.getUpperBound()) ||
              dep.depends(forOp.getStep()))
            bad = op, why = "a loop's bounds depend on the program index, so "
                            "the two CTAs could fall out of step";
        } else if (auto ifOp = dyn_cast<scf::IfOp>(op)) {
          if (holdsRingOps(op) && dep.depends(ifOp.getCondition()))
            bad = op, why = "a branch around ring operations depends on the "
                            "program index";
        } else if (isa<scf::WhileOp>(op)) {
          if (holdsRingOps(op))
            bad = op, why = "a while loop around ring operations";
        } else if (isa<tt::MakeTensorDescOp>(op)) {
          bad = op, why = "tensor maps built by the kernel";
        } else if (isa<tt::AtomicRMWOp, tt::AtomicCASOp>(op)) {
          bad = op, why = "atomics";
        }
        return bad ? WalkResult::interrupt() : WalkResult::advance();
      });
      if (bad)
        return decline(bad, why);
    }

    // Barriers the producer waits on before it fills a slot: the slot
    // releases that must be made in both CTAs. A barrier that TMA fills (its
    // phase announced by arrive_expect_tx) is a full barrier even where
    // producer warps wait on it (those that transpose a staged tile): its
    // phase completes on the one announcing arrival and the bytes of both
    // halves, so its count stays.
    Region &producer = ws.getPartitions()[0];
    auto filledByTma = [](Value bars) {
      return llvm::any_of(bars.getUsers(), [&](Operation *user) {
        if (isa<MBarrierExpectTxOp>(user))
          return true;
        auto load = dyn_cast<TmaLoadOp>(user);
        return load && load.getBars() == bars;
      });
    };
    llvm::SetVector<Value> emptyBars;
    producer.walk([&](MBarrierWaitOp wait) {
      if (!filledByTma(wait.getBars()))
        emptyBars.insert(wait.getBars());
    });
    SmallVector<MBarrierArriveOp> releases;
    for (Value bars : emptyBars) {
      auto alloc = bars.getDefiningOp<MBarrierAllocOp>();
      if (!alloc)
        return decline(ws, "a barrier array that is not allocated by the "
                           "kernel");
      for (Operation *user : bars.getUsers())
        if (auto arrive = dyn_cast<MBarrierArriveOp>(user)) {
          if (!arrive.getPerWarp() ||
              producer.isAncestor(user->getParentRegion()))
            return decline(user, "a slot released other than by the "
                                 "consumers' per-warp arrivals");
          releases.push_back(arrive);
        }
    }

    // Loads that may be shared, per descriptor: a host tensor map, rank 2,
    // each half of the block a whole number of 8-row swizzle atoms.
    SmallVector<TmaLoadOp> loads;
    producer.walk([&](TmaLoadOp load) { loads.push_back(load); });
    llvm::DenseSet<Value> unsharable;
    for (TmaLoadOp load : loads) {
      auto desc = dyn_cast<BlockArgument>(load.getDesc());
      auto type = dyn_cast<tt::TensorDescType>(load.getDesc().getType());
      if (!desc || !isa<tt::FuncOp>(desc.getOwner()->getParentOp()) || !type ||
          type.getBlockType().getRank() != 2 ||
          type.getBlockType().getShape()[0] % 16 != 0)
        unsharable.insert(load.getDesc());
    }
    // The partner's coordinates must be recomputable: pure arithmetic,
    // inside the program loop, of values both CTAs share and the index.
    {
      Value index = loops[0].getInductionVar();
      ProgramDependence dep(index);
      llvm::DenseMap<Value, bool> known;
      std::function<bool(Value)> recomputable = [&](Value v) -> bool {
        if (v == index || !dep.depends(v))
          return true;
        if (auto it = known.find(v); it != known.end())
          return it->second;
        Operation *def = v.getDefiningOp();
        bool ok = def && !def->getNumRegions() && isMemoryEffectFree(def) &&
                  loops[0]->isAncestor(def) &&
                  llvm::all_of(def->getOperands(), recomputable);
        known[v] = ok;
        return ok;
      };
      for (TmaLoadOp load : loads)
        if (!llvm::all_of(load.getIndices(), recomputable))
          unsharable.insert(load.getDesc());
    }
    if (llvm::all_of(loads, [&](TmaLoadOp l) {
          return unsharable.contains(l.getDesc());
        }))
      return decline(ws, "no loaded block can be split between two CTAs");

    // Decided: rewrite. Program loops first.
    OpBuilder b(func.getContext());
    Value partnerIndex; // producer only
    Value clampedIndex;
    for (auto [p, loop] : llvm::enumerate(loops)) {
      Location loc = loop.getLoc();
      b.setInsertionPoint(loop);
      Value total = loop.getUpperBound();
      Value one = arith::ConstantIntOp::create(b, loc, total.getType(), 1);
      Value minusTwo =
          arith::ConstantIntOp::create(b, loc, total.getType(), -2);
      Value last = arith::SubIOp::create(b, loc, total, one);
      Value even = arith::AndIOp::create(
          b, loc, arith::AddIOp::create(b, loc, total, one), minusTwo);
      loop.getUpperBoundMutable().assign(even);

      b.setInsertionPointToStart(loop.getBody());
      Value t = loop.getInductionVar();
      auto clamped = arith::MinSIOp::create(b, loc, t, last);
      auto valid =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, t, total);
      t.replaceAllUsesExcept(clamped,
                             SmallPtrSet<Operation *, 2>{clamped, valid});
      if (p == 0) {
        clampedIndex = clamped;
        partnerIndex = arith::MinSIOp::create(
            b, loc, arith::XOrIOp::create(b, loc, t, one), last);
        continue;
      }
      // Stores of a program index past the end (a rerun of the partner's
      // tile) are dropped.
      SmallVector<Operation *> stores;
      loop.getBody()->walk([&](Operation *op) {
        if (isa<tt::StoreOp, tt::DescriptorStoreOp>(op))
          stores.push_back(op);
      });
      for (Operation *store : stores) {
        b.setInsertionPoint(store);
        auto guard = scf::IfOp::create(b, store->getLoc(), valid,
                                       /*withElseRegion=*/false);
        store->moveBefore(guard.thenBlock()->getTerminator());
      }
    }

    // Multicast flags: this program's coordinates equal the partner's,
    // computed by cloning the coordinate arithmetic with the partner's index.
    ProgramDependence dep(loops[0].getInductionVar());
    for (TmaLoadOp load : loads) {
      if (unsharable.contains(load.getDesc()))
        continue;
      b.setInsertionPoint(load);
      IRMapping partner;
      partner.map(clampedIndex, partnerIndex);
      bool clonable = true;
      std::function<Value(Value)> clone = [&](Value v) -> Value {
        if (!clonable || !dep.depends(v))
          return v;
        if (Value mapped = partner.lookupOrNull(v))
          return mapped;
        Operation *def = v.getDefiningOp();
        if (!def || def->getNumRegions() || !isMemoryEffectFree(def) ||
            !loops[0]->isAncestor(def)) {
          clonable = false;
          return v;
        }
        for (Value operand : def->getOperands())
          (void)clone(operand);
        if (!clonable)
          return v;
        // Right after the original, so that it stays as loop-invariant.
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointAfter(def);
        Operation *copy = b.clone(*def, partner);
        return copy->getResult(cast<OpResult>(v).getResultNumber());
      };
      Value shared;
      for (Value index : load.getIndices()) {
        Value other = clone(index);
        if (!clonable)
          break;
        if (other == index)
          continue;
        Value same = arith::CmpIOp::create(
            b, load.getLoc(), arith::CmpIPredicate::eq, index, other);
        shared = shared ? arith::AndIOp::create(b, load.getLoc(), shared, same)
                        : same;
      }
      assert(clonable && "checked by recomputable() before the rewrite");
      if (!shared)
        shared = arith::ConstantIntOp::create(b, load.getLoc(), 1, 1);
      load.getMulticastMutable().assign(shared);
    }

    for (MBarrierArriveOp arrive : releases)
      arrive.setCluster(true);
    for (Value bars : emptyBars) {
      auto alloc = bars.getDefiningOp<MBarrierAllocOp>();
      alloc.setArrivals(alloc.getArrivals() * 2);
    }
    ws->setAttr("tawa.cluster", b.getI32IntegerAttr(2));
    return success();
  }
};

} // namespace
