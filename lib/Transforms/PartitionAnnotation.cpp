//===- PartitionAnnotation.cpp - producer/consumer partitioning -----------===//
//
// Tawa paper §III-C1 (task-aware partitioning). Two backward slices over the
// use-def graph, including the loop-carried chains of scf loops:
//  - producer: from every tt.descriptor_load through its descriptor and
//    coordinates (the iteration statements);
//  - consumer: from every side-effecting sink (stores) through everything
//    except tt.descriptor_load results, which become cross-partition edges.
// An operation in both slices is replicated; a loop belongs to the partitions
// of the operations inside it.
//
//===----------------------------------------------------------------------===//

#include "tawa/Transforms/Partition.h"
#include "tawa/Transforms/Passes.h"
#include "tawa/Transforms/SourceLocation.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"

#include <optional>

namespace tawa {
#define GEN_PASS_DEF_PARTITIONANNOTATION
#include "tawa/Transforms/Passes.h.inc"
} // namespace tawa

using namespace mlir;
using namespace tawa;

bool tawa::isInPartition(Operation *op, int32_t p) {
  auto attr = op->getAttrOfType<DenseI32ArrayAttr>(kPartitionAttr);
  return attr && llvm::is_contained(attr.asArrayRef(), p);
}

namespace {

/// A backward slice over values, following loop-carried chains.
class BackwardSlice {
public:
  explicit BackwardSlice(Operation *root) : root(root) {}

  /// Values that end the walk (their defining op is not added).
  void addStop(Value v) { stops.insert(v); }
  void addOp(Operation *op) {
    if (!ops.insert(op).second)
      return;
    for (Value operand : op->getOperands())
      push(operand);
    // The loops around `op` must run in this partition too, with their bounds.
    for (Operation *parent = op->getParentOp(); parent && parent != root;
         parent = parent->getParentOp())
      addStructure(parent);
  }
  /// The loops and conditionals around `op`, without `op` itself.
  void addEnclosing(Operation *op) {
    for (Operation *parent = op->getParentOp(); parent && parent != root;
         parent = parent->getParentOp())
      addStructure(parent);
  }
  void run() {
    while (!worklist.empty()) {
      Value v = worklist.pop_back_val();
      visit(v);
    }
  }
  bool contains(Operation *op) const { return ops.contains(op); }
  bool reached(Value v) const { return values.contains(v); }

private:
  void push(Value v) {
    if (values.insert(v).second)
      worklist.push_back(v);
  }

  /// A loop or if that encloses slice operations: its control operands.
  void addStructure(Operation *op) {
    if (!ops.insert(op).second)
      return;
    if (auto forOp = dyn_cast<scf::ForOp>(op)) {
      push(forOp.getLowerBound());
      push(forOp.getUpperBound());
      push(forOp.getStep());
    } else if (auto whileOp = dyn_cast<scf::WhileOp>(op)) {
      // The loop runs as long as its condition says: all of it is needed.
      auto cond = whileOp.getConditionOp();
      addOp(cond);
    } else if (auto ifOp = dyn_cast<scf::IfOp>(op)) {
      push(ifOp.getCondition());
    }
    for (Operation *parent = op->getParentOp(); parent && parent != root;
         parent = parent->getParentOp())
      addStructure(parent);
  }

  void visit(Value v) {
    if (stops.contains(v))
      return;
    if (auto result = dyn_cast<OpResult>(v)) {
      Operation *def = result.getOwner();
      unsigned i = result.getResultNumber();
      if (auto forOp = dyn_cast<scf::ForOp>(def)) {
        addStructure(forOp);
        push(forOp.getRegionIterArgs()[i]);
        return;
      }
      if (auto whileOp = dyn_cast<scf::WhileOp>(def)) {
        addStructure(whileOp);
        push(whileOp.getConditionOp().getArgs()[i]);
        return;
      }
      if (auto ifOp = dyn_cast<scf::IfOp>(def)) {
        addStructure(ifOp);
        push(ifOp.thenYield().getOperand(i));
        if (!ifOp.getElseRegion().empty())
          push(ifOp.elseYield().getOperand(i));
        return;
      }
      addOp(def);
      return;
    }
    auto arg = cast<BlockArgument>(v);
    Operation *owner = arg.getOwner()->getParentOp();
    if (!owner || owner == root)
      return; // a function argument
    if (auto forOp = dyn_cast<scf::ForOp>(owner)) {
      addStructure(forOp);
      if (arg.getArgNumber() == 0)
        return; // the induction variable: bounds are already pushed
      unsigned i = arg.getArgNumber() - 1;
      push(forOp.getInitArgs()[i]);
      push(forOp.getYieldedValues()[i]);
      push(forOp.getResult(i));
      return;
    }
    if (auto whileOp = dyn_cast<scf::WhileOp>(owner)) {
      addStructure(whileOp);
      unsigned i = arg.getArgNumber();
      if (arg.getOwner() == whileOp.getBeforeBody()) {
        push(whileOp.getInits()[i]);
        push(whileOp.getYieldOp().getOperand(i));
      } else {
        push(whileOp.getConditionOp().getArgs()[i]);
      }
      return;
    }
    // Arguments of other regions (reduction combiners) belong to their op.
    addOp(owner);
  }

  Operation *root;
  llvm::DenseSet<Operation *> ops;
  llvm::DenseSet<Value> values;
  llvm::DenseSet<Value> stops;
  llvm::SmallVector<Value> worklist;
};

/// A TMA store and a TMA load of the same descriptor that may follow it in
/// program order: in a loop around both (a later iteration) or later in the
/// function. The producer runs its loads ahead of the consumer's stores, so
/// the load would read the tensor before the store wrote it. (Distinct
/// descriptors are assumed not to overlap, as Triton does.)
std::optional<std::pair<tt::DescriptorStoreOp, tt::DescriptorLoadOp>>
findStoreBeforeLoad(ArrayRef<tt::DescriptorLoadOp> loads,
                    ArrayRef<tt::DescriptorStoreOp> stores) {
  for (tt::DescriptorStoreOp store : stores)
    for (tt::DescriptorLoadOp load : loads) {
      if (store.getDesc() != load.getDesc())
        continue;
      for (Operation *loop = store->getParentOp(); loop;
           loop = loop->getParentOp())
        if (isa<LoopLikeOpInterface>(loop) && loop->isAncestor(load))
          return std::make_pair(store, load);
      // Straight-line order: the ancestors of both in the innermost block
      // that holds both.
      for (Operation *s = store; s && s->getBlock(); s = s->getParentOp())
        if (Operation *l = s->getBlock()->findAncestorOpInBlock(*load)) {
          if (s != l && s->isBeforeInBlock(l))
            return std::make_pair(store, load);
          break;
        }
    }
  return std::nullopt;
}

bool writesMemory(Operation *op) {
  if (auto effects = dyn_cast<MemoryEffectOpInterface>(op))
    return effects.hasEffect<MemoryEffects::Write>();
  // An unregistered op may do anything: treat it as a sink.
  return !op->isRegistered();
}

struct PartitionAnnotation
    : public tawa::impl::PartitionAnnotationBase<PartitionAnnotation> {
  void runOnOperation() override {
    tt::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    BackwardSlice producer(func), consumer(func);
    SmallVector<tt::DescriptorLoadOp> loads;
    SmallVector<tt::DescriptorStoreOp> stores;
    func.walk([&](Operation *op) {
      if (op->getParentOfType<tt::ReduceOp>() ||
          op->getParentOfType<tt::ScanOp>())
        return;
      if (auto load = dyn_cast<tt::DescriptorLoadOp>(op)) {
        loads.push_back(load);
        producer.addOp(load);
        consumer.addStop(load.getResult());
        // The consumer takes every tile the producer puts, used or not, so
        // it runs the loops around each load even where nothing it computes
        // needs them (a kernel whose results are dead).
        consumer.addEnclosing(load);
      } else if (writesMemory(op)) {
        if (auto store = dyn_cast<tt::DescriptorStoreOp>(op))
          stores.push_back(store);
        consumer.addOp(op);
      }
    });
    if (loads.empty()) {
      emitError(getUserLocation(func.getLoc()))
          << "kernel @" << func.getName()
          << " has no TMA loads (tt.descriptor_load): there is nothing to "
             "warp-specialize";
      return signalPassFailure();
    }
    if (auto hazard = findStoreBeforeLoad(loads, stores)) {
      InFlightDiagnostic diag =
          emitError(getUserLocation(hazard->first.getLoc()))
          << "tawa cannot warp-specialize a TMA store to a descriptor that a "
             "TMA load reads later: the producer warp group would load before "
             "this store";
      diag.attachNote(getUserLocation(hazard->second.getLoc()))
          << "the load of the same descriptor";
      return signalPassFailure();
    }
    producer.run();
    consumer.run();

    Builder b(func.getContext());
    // Innermost first, so that loops see the annotations of their bodies.
    func.getBody().walk<WalkOrder::PostOrder>([&](Operation *op) {
      Operation *parent = op->getParentOp();
      if (isa<tt::ReduceOp, tt::ScanOp>(parent) ||
          op->hasTrait<OpTrait::IsTerminator>())
        return;
      SmallVector<int32_t> parts;
      bool inProducer = producer.contains(op),
           inConsumer = consumer.contains(op);
      // A loop runs in every partition that has operations inside it.
      op->walk([&](Operation *nested) {
        if (nested == op)
          return;
        inProducer |= isInPartition(nested, kProducer);
        inConsumer |= isInPartition(nested, kConsumer);
      });
      if (inProducer)
        parts.push_back(kProducer);
      // Dead operations stay with the consumer so that nothing disappears
      // silently; the canonicalizer may remove them later.
      if (inConsumer || !inProducer)
        parts.push_back(kConsumer);
      op->setAttr(kPartitionAttr, b.getDenseI32ArrayAttr(parts));

      auto annotateCarried = [&](ValueRange carried, ValueRange results) {
        SmallVector<int32_t> masks;
        for (auto [arg, res] : llvm::zip(carried, results)) {
          int32_t mask = 0;
          if (producer.reached(arg) || producer.reached(res))
            mask |= 1 << kProducer;
          // A value no slice reached (a dead counter) is carried where dead
          // operations go, the consumer, so that its update has its operand.
          if (consumer.reached(arg) || consumer.reached(res) || mask == 0)
            mask |= 1 << kConsumer;
          masks.push_back(mask);
        }
        op->setAttr(kIterArgPartitionsAttr, b.getDenseI32ArrayAttr(masks));
      };
      if (auto forOp = dyn_cast<scf::ForOp>(op))
        annotateCarried(forOp.getRegionIterArgs(), forOp.getResults());
      else if (auto whileOp = dyn_cast<scf::WhileOp>(op))
        annotateCarried(whileOp.getBeforeArguments(), whileOp.getResults());
    });
  }
};

} // namespace
