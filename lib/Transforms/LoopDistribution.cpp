//===- LoopDistribution.cpp - warp-group regions connected by arefs -------===//
//
// Tawa paper §III-C2 (loop distribution). The kernel body becomes
//
//   %a = tawa.aref.create : !tawa.aref<[tile types of one group], D>
//   tawa.warp_specialize
//     partition warps(4) regs(40)   { producer clone: loads, aref.put }
//     partition warps(4N) regs(R)   { consumer clone: aref.get, math,
//                                     aref.consumed, epilogue }
//
// Each partition clones the loops that hold its operations, keeping only the
// loop-carried values it carries, and threads one i32 counter per aref through
// every loop around that aref's accesses: iteration k of the ring is the k-th
// access, whatever the loop nest looks like.
//
//===----------------------------------------------------------------------===//

#include "tawa/Transforms/ArefTiles.h"
#include "tawa/Transforms/Partition.h"
#include "tawa/Transforms/Passes.h"
#include "tawa/Transforms/SourceLocation.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/EquivalenceClasses.h"
#include "llvm/ADT/MapVector.h"

#include <algorithm>

namespace tawa {
#define GEN_PASS_DEF_LOOPDISTRIBUTION
#include "tawa/Transforms/Passes.h.inc"
} // namespace tawa

using namespace mlir;
using namespace tawa;

/// fp32 registers per thread that one warp group of 128 threads needs for
/// the accumulators live at once under `root`: the products of one loop
/// body add up (two programs paired by -tawa-program-pairing carry two
/// chains; attention's S = QK^T is live next to the carried O), products
/// outside loops count alone.
static int64_t accumulatorRegisters(Operation *root) {
  auto regs = [](tt::DotOp dot) -> int64_t {
    auto acc = cast<RankedTensorType>(dot.getType());
    return acc.getRank() == 2 ? acc.getShape()[0] * acc.getShape()[1] / 128 : 0;
  };
  int64_t most = 0;
  root->walk([&](tt::DotOp dot) {
    int64_t live = regs(dot);
    if (auto forOp = dyn_cast<scf::ForOp>(dot->getParentOp())) {
      live = 0;
      for (auto other : forOp.getBody()->getOps<tt::DotOp>())
        live += regs(other);
    }
    most = std::max(most, live);
  });
  return most;
}

int64_t tawa::defaultConsumerGroups(Operation *root) {
  // 128 registers per thread leave room for addresses and the epilogue
  // under the 232-register budget of a consumer thread; two groups split
  // each accumulator along M (64 rows each).
  // Three split 192-row accumulators (-tawa-row-block-widening).
  bool splittable = true, thirds = true;
  root->walk([&](tt::DotOp dot) {
    auto acc = cast<RankedTensorType>(dot.getType());
    splittable &= acc.getRank() == 2 && acc.getShape()[0] % 128 == 0;
    thirds &= acc.getRank() == 2 && acc.getShape()[0] == 192;
  });
  if (accumulatorRegisters(root) > 128 && thirds)
    return 3;
  return accumulatorRegisters(root) > 128 && splittable ? 2 : 1;
}

namespace {

/// TMA loads that travel together through one aref.
struct ArefGroup {
  SmallVector<tt::DescriptorLoadOp> loads; // in block order
  Value aref;
  /// The ring (aref and position counter) the group fills: its own, or one
  /// shared with the groups of the same descriptors in sibling loops.
  unsigned ring = 0;
  /// The operation of the loads' block after which every consumer read of the
  /// group's slot has happened (nullptr: no read).
  Operation *lastUse = nullptr;
};

/// The tt.dot ops that `load` feeds through pure, single-block value chains
/// (e.g. tt.trans for a transposed B operand).
SmallVector<Operation *> dotsFedBy(tt::DescriptorLoadOp load) {
  SmallVector<Operation *> dots;
  SmallVector<Value> worklist{load.getResult()};
  llvm::DenseSet<Operation *> seen;
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    for (Operation *user : v.getUsers()) {
      if (!seen.insert(user).second)
        continue;
      if (isa<tt::DotOp>(user)) {
        dots.push_back(user);
      } else if (isPure(user) && user->getNumRegions() == 0 &&
                 user->getBlock() == load->getBlock()) {
        for (Value r : user->getResults())
          worklist.push_back(r);
      }
    }
  }
  return dots;
}

/// Bit mask of partitions carrying each loop-carried value of `loop`.
ArrayRef<int32_t> carriedMasks(Operation *loop) {
  auto attr = loop->getAttrOfType<DenseI32ArrayAttr>(kIterArgPartitionsAttr);
  return attr ? attr.asArrayRef() : ArrayRef<int32_t>();
}

class Distributor {
public:
  /// pingpong: 1 on, 0 off, -1 auto (on when the consumer groups are the
  /// compiler's choice, one group's registers hold a whole tile's
  /// accumulators and the kernel has a tile loop).
  Distributor(tt::FuncOp func, int64_t depth, int64_t consumerGroups,
              int64_t pingpong)
      : func(func), depth(depth), consumerGroups(consumerGroups),
        pingpong(pingpong == 1), autoPingpong(pingpong < 0) {}

  LogicalResult run();

private:
  LogicalResult collectGroups();
  LogicalResult checkAnnotations();
  bool available(Value v, Region *region);
  LogicalResult checkOperands(Operation *op, Region *region, int32_t p);
  void cloneBlockInto(Block &src, OpBuilder &b, int32_t p);
  void cloneOp(Operation *op, OpBuilder &b, int32_t p);
  void cloneFor(scf::ForOp forOp, OpBuilder &b, int32_t p);
  void cloneWhile(scf::WhileOp whileOp, OpBuilder &b, int32_t p);
  SmallVector<unsigned> groupsInside(Operation *op);
  void cloneLoopBody(Block &src, OpBuilder &b, int32_t p, Operation *loop);
  void cloneTileBody(Block &src, OpBuilder &b, int32_t p);
  /// Sets tileLoop; what prevents ping-pong (where, why) if anything does.
  std::optional<std::pair<Operation *, std::string>> findTileLoop();
  Value increment(OpBuilder &b, Location loc, Value v);
  Value skippedPositions(ArefGroup &group, OpBuilder &eb, Location loc);
  void strip(Operation *op);

  tt::FuncOp func;
  int64_t depth, consumerGroups;
  /// Ping-pong consumers (DESIGN.md §3): two consumer partitions of one warp
  /// group each take alternate iterations of the tile loop (the loop around
  /// the K loop), so that one's epilogue overlaps the other's products.
  bool pingpong, autoPingpong;
  Operation *tileLoop = nullptr;
  /// In the consumer clone being built: which tiles it takes (-1: all).
  int parity = -1;
  SmallVector<ArefGroup> groups;
  /// The first group of each ring: loops in sequence that load the same
  /// descriptors (a causal kernel's off-band and on-band loops) fill one
  /// ring, its position carried from one loop into the next, instead of one
  /// ring each (which would halve the depth the shared memory allows).
  SmallVector<unsigned> ringLeader;
  llvm::DenseMap<Operation *, unsigned> groupOfLoad;
  // Per partition while cloning:
  IRMapping map;
  SmallVector<Value> counter; // current position of each ring
  Region *partitionRegion = nullptr;
  LogicalResult status = success();
};

LogicalResult Distributor::checkAnnotations() {
  WalkResult result = func.getBody().walk([&](Operation *op) {
    if (isa<tt::ReduceOp, tt::ScanOp>(op->getParentOp()) ||
        op->hasTrait<OpTrait::IsTerminator>())
      return WalkResult::advance();
    if (!op->hasAttr(kPartitionAttr)) {
      op->emitOpError(
          "has no tawa.partition annotation: run "
          "-tawa-partition-annotation before -tawa-loop-distribution");
      return WalkResult::interrupt();
    }
    if (isa<scf::IfOp>(op) && isInPartition(op, kProducer) &&
        isInPartition(op, kConsumer)) {
      emitError(getUserLocation(op->getLoc()))
          << "a conditional (scf.if) whose body is split between the producer "
             "and the consumer warp groups is not supported yet";
      return WalkResult::interrupt();
    }
    if (auto whileOp = dyn_cast<scf::WhileOp>(op))
      if (TypeRange(whileOp.getBeforeArguments()) !=
          TypeRange(whileOp.getAfterArguments())) {
        emitError(getUserLocation(op->getLoc()))
            << "a while loop whose condition forwards values of other types "
               "than it carries is not supported yet";
        return WalkResult::interrupt();
      }
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

LogicalResult Distributor::collectGroups() {
  SmallVector<tt::DescriptorLoadOp> loads;
  func.walk([&](tt::DescriptorLoadOp load) { loads.push_back(load); });
  // Loads of one block feeding one dot share an aref (Tawa §III-C2).
  llvm::EquivalenceClasses<Operation *> classes;
  llvm::DenseMap<std::pair<Block *, Operation *>, Operation *> firstForDot;
  for (tt::DescriptorLoadOp load : loads) {
    classes.insert(load);
    for (Operation *dot : dotsFedBy(load)) {
      auto key = std::make_pair(load->getBlock(), dot);
      auto [it, inserted] = firstForDot.try_emplace(key, load);
      if (!inserted)
        classes.unionSets(it->second, load.getOperation());
    }
  }
  llvm::DenseMap<Operation *, unsigned> groupOfLeader;
  for (tt::DescriptorLoadOp load : loads) {
    Operation *leader = classes.getLeaderValue(load.getOperation());
    auto [it, inserted] = groupOfLeader.try_emplace(leader, groups.size());
    if (inserted)
      groups.emplace_back();
    groups[it->second].loads.push_back(load);
    groupOfLoad[load] = it->second;
  }
  for (ArefGroup &group : groups) {
    for (tt::DescriptorLoadOp load : group.loads) {
      for (Operation *parent = load->getParentOp(); parent != func;
           parent = parent->getParentOp())
        if (!isa<scf::ForOp, scf::WhileOp>(parent))
          return emitError(getUserLocation(load->getLoc()))
                 << "a TMA load inside '" << parent->getName()
                 << "' is not supported yet (only inside scf.for and "
                    "scf.while loops)";
      // A tt.trans of a loaded tile is a view of the same shared-memory
      // buffer (wgmma reads it transposed): its users read the slot too.
      SmallVector<Operation *> users;
      SmallVector<Value> worklist{load.getResult()};
      while (!worklist.empty())
        for (Operation *user : worklist.pop_back_val().getUsers()) {
          users.push_back(user);
          if (isa<tt::TransOp>(user))
            worklist.push_back(user->getResult(0));
        }
      for (Operation *user : users) {
        Operation *inBlock = load->getBlock()->findAncestorOpInBlock(*user);
        if (!inBlock)
          return emitError(getUserLocation(user->getLoc()))
                 << "a TMA-loaded tile used outside the block of its load "
                    "is not supported yet";
        if (!group.lastUse || group.lastUse->isBeforeInBlock(inBlock))
          group.lastUse = inBlock;
      }
    }
  }
  // Groups of the same descriptors and tiles, each directly in its own
  // scf.for, the loops siblings in one block: one ring.
  auto sameRing = [](ArefGroup &a, ArefGroup &b) {
    if (a.loads.size() != b.loads.size())
      return false;
    for (auto [x, y] : llvm::zip(a.loads, b.loads))
      if (x.getDesc() != y.getDesc() || x.getType() != y.getType())
        return false;
    Operation *pa = a.loads.front()->getParentOp();
    Operation *pb = b.loads.front()->getParentOp();
    return pa != pb && isa<scf::ForOp>(pa) && isa<scf::ForOp>(pb) &&
           pa->getBlock() == pb->getBlock();
  };
  for (unsigned g = 0; g < groups.size(); ++g) {
    ArefGroup &group = groups[g];
    auto shared = llvm::find_if(ringLeader, [&](unsigned leader) {
      return sameRing(groups[leader], group);
    });
    if (shared != ringLeader.end()) {
      group.ring = shared - ringLeader.begin();
      continue;
    }
    group.ring = ringLeader.size();
    ringLeader.push_back(g);
  }
  return success();
}

SmallVector<unsigned> Distributor::groupsInside(Operation *op) {
  SmallVector<unsigned> inside;
  for (ArefGroup &group : groups)
    if (op->isProperAncestor(group.loads.front()) &&
        !llvm::is_contained(inside, group.ring))
      inside.push_back(group.ring);
  // Ping-pong consumers also thread a count of tile-loop iterations, the
  // counter after the rings'.
  if (parity >= 0 && op->isAncestor(tileLoop))
    inside.push_back(ringLeader.size());
  return inside;
}

std::optional<std::pair<Operation *, std::string>> Distributor::findTileLoop() {
  using Why = std::pair<Operation *, std::string>;
  for (ArefGroup &group : groups) {
    Operation *kLoop = group.loads.front()->getParentOp();
    if (!isa<scf::ForOp>(kLoop))
      continue;
    Operation *candidate = kLoop->getParentOp();
    if (!isa<scf::ForOp, scf::WhileOp>(candidate))
      continue;
    if (tileLoop && tileLoop != candidate)
      return Why(candidate, "ping-pong consumers need one tile loop around "
                            "the K loops");
    tileLoop = candidate;
  }
  if (!tileLoop)
    return Why(func, "ping-pong consumers need a loop over tiles around the "
                     "K loop (a persistent kernel)");
  // A tile's work must not feed the next tile: the other consumer partition
  // would not have it.
  Block *body = isa<scf::ForOp>(tileLoop)
                    ? cast<scf::ForOp>(tileLoop).getBody()
                    : cast<scf::WhileOp>(tileLoop).getAfterBody();
  for (Value v : body->getTerminator()->getOperands())
    if (isa<RankedTensorType>(v.getType()))
      return Why(tileLoop, "ping-pong consumers need a tile loop that "
                           "carries no tile from one tile to the next");
  for (ArefGroup &group : groups) {
    Operation *parent = group.loads.front()->getParentOp();
    if (parent != tileLoop && parent->getParentOp() != tileLoop)
      return Why(group.loads.front(),
                 "ping-pong consumers need every TMA load in the tile loop or "
                 "directly in a K loop inside it");
  }
  return std::nullopt;
}

/// Scalar bookkeeping of a tile loop's body that both ping-pong consumers
/// run for every tile (the next tile's index, loop bounds): operations with
/// no regions and no tensor results that write no memory.
static bool isTileControl(Operation *op) {
  if (op->getNumRegions() || op->getNumResults() == 0 ||
      isa<tt::MakeTensorDescOp>(op) ||
      op->getDialect()->getNamespace() == "tawa")
    return false;
  if (llvm::any_of(op->getResultTypes(),
                   [](Type t) { return isa<RankedTensorType>(t); }))
    return false;
  return isMemoryEffectFree(op) || isa<tt::LoadOp>(op);
}

void Distributor::cloneLoopBody(Block &src, OpBuilder &b, int32_t p,
                                Operation *loop) {
  if (parity >= 0 && loop == tileLoop)
    cloneTileBody(src, b, p);
  else
    cloneBlockInto(src, b, p);
}

void Distributor::cloneTileBody(Block &src, OpBuilder &b, int32_t p) {
  Location loc = tileLoop->getLoc();
  unsigned tiles = ringLeader.size();
  // Bookkeeping first, for every tile.
  for (Operation &op : src.without_terminator())
    if (isTileControl(&op) && isInPartition(&op, p))
      cloneOp(&op, b, p);
  // Then the work of this partition's tiles: (tile count mod 2) == its
  // group (an op, not the constant `parity`, so both programs stay the same).
  Value two = arith::ConstantIntOp::create(b, loc, 2, 32);
  Value tileParity = arith::RemUIOp::create(b, loc, counter[tiles], two);
  Value group = tawa::PingPongGroupOp::create(b, loc, b.getI32Type());
  Value mine = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                     tileParity, group);
  SmallVector<unsigned> inner; // rings filled inside the tile loop
  for (ArefGroup &group : groups)
    if (tileLoop->isProperAncestor(group.loads.front()) &&
        !llvm::is_contained(inner, group.ring))
      inner.push_back(group.ring);
  SmallVector<Type> types(inner.size(), b.getI32Type());
  auto ifOp = scf::IfOp::create(b, loc, types, mine, /*withElseRegion=*/true);
  SmallVector<Value> before(counter.begin(), counter.end());
  {
    OpBuilder tb = OpBuilder::atBlockEnd(ifOp.thenBlock());
    // This partition's turn: the number of its own tiles so far.
    Value turn = arith::DivUIOp::create(tb, loc, counter[tiles], two);
    tawa::PingPongWaitOp::create(tb, loc, turn, tb.getI32IntegerAttr(parity));
    Operation *lastKLoop = nullptr;
    for (Operation &op : src.without_terminator())
      for (ArefGroup &group : groups)
        if (op.isProperAncestor(group.loads.front()))
          lastKLoop = &op;
    for (Operation &op : src.without_terminator()) {
      if (failed(status))
        return;
      if (!isTileControl(&op))
        cloneOp(&op, tb, p);
      if (&op == lastKLoop)
        tawa::PingPongArriveOp::create(tb, loc, tb.getI32IntegerAttr(parity));
    }
    if (!lastKLoop)
      tawa::PingPongArriveOp::create(tb, loc, tb.getI32IntegerAttr(parity));
    SmallVector<Value> yields;
    for (unsigned g : inner)
      yields.push_back(counter[g]);
    scf::YieldOp::create(tb, loc, yields);
  }
  {
    // The other partition's tile: skip the ring positions it uses, one per
    // iteration of the K loop holding the group's loads (one per tile for a
    // load directly in the tile loop).
    OpBuilder eb = OpBuilder::atBlockEnd(ifOp.elseBlock());
    SmallVector<Value> yields;
    for (unsigned r : inner) {
      // Every loop filling ring r (loops in sequence may share it).
      Value skipped;
      for (ArefGroup &group : groups) {
        if (group.ring != r)
          continue;
        Value trips = skippedPositions(group, eb, loc);
        if (!trips)
          return;
        skipped =
            skipped ? arith::AddIOp::create(eb, loc, skipped, trips).getResult()
                    : trips;
      }
      yields.push_back(arith::AddIOp::create(eb, loc, before[r], skipped));
    }
    scf::YieldOp::create(eb, loc, yields);
  }
  for (auto [k, r] : llvm::enumerate(inner))
    counter[r] = ifOp.getResult(k);
  counter[tiles] = increment(b, loc, counter[tiles]);
}

/// Ring positions one tile's run of `group`'s loads takes: 1 for loads in
/// the tile loop itself, else its K loop's trip count (null after an error).
Value Distributor::skippedPositions(ArefGroup &group, OpBuilder &eb,
                                    Location loc) {
  Operation *parent = group.loads.front()->getParentOp();
  if (parent == tileLoop)
    return arith::ConstantIntOp::create(eb, loc, 1, 32);
  auto kLoop = cast<scf::ForOp>(parent);
  Value lb = map.lookupOrDefault(kLoop.getLowerBound());
  Value ub = map.lookupOrDefault(kLoop.getUpperBound());
  Value step = map.lookupOrDefault(kLoop.getStep());
  if (!available(lb, partitionRegion) || !available(ub, partitionRegion) ||
      !available(step, partitionRegion)) {
    emitError(getUserLocation(kLoop.getLoc()))
        << "ping-pong consumers need K-loop bounds that are plain "
           "scalar arithmetic (to skip the other consumer's tiles)";
    status = failure();
    return Value();
  }
  Value span = arith::SubIOp::create(eb, loc, ub, lb);
  Value zero = arith::ConstantIntOp::create(eb, loc, 0, 32);
  span = arith::MaxSIOp::create(eb, loc, span, zero);
  return arith::CeilDivSIOp::create(eb, loc, span, step);
}

Value Distributor::increment(OpBuilder &b, Location loc, Value v) {
  Value one = arith::ConstantIntOp::create(b, loc, 1, 32);
  return arith::AddIOp::create(b, loc, v, one);
}

void Distributor::strip(Operation *op) {
  op->walk([](Operation *nested) {
    nested->removeAttr(kPartitionAttr);
    nested->removeAttr(kIterArgPartitionsAttr);
  });
}

/// A value the clone for partition `p` may use: a function argument, a value
/// defined inside the new region, or an aref.
bool Distributor::available(Value v, Region *region) {
  Value mapped = map.lookupOrDefault(v);
  if (auto arg = dyn_cast<BlockArgument>(mapped))
    if (arg.getOwner()->getParentOp() == func)
      return true;
  if (isa_and_nonnull<tawa::ArefCreateOp>(mapped.getDefiningOp()))
    return true;
  return region->isAncestor(mapped.getParentRegion());
}

LogicalResult Distributor::checkOperands(Operation *op, Region *region,
                                         int32_t p) {
  WalkResult result = op->walk([&](Operation *nested) {
    for (Value operand : nested->getOperands()) {
      // Values defined inside `op` itself are cloned along with it.
      if (auto res = dyn_cast<OpResult>(operand))
        if (op->isAncestor(res.getOwner()))
          continue;
      if (auto arg = dyn_cast<BlockArgument>(operand))
        if (op->isAncestor(arg.getOwner()->getParentOp()))
          continue;
      if (!available(operand, region)) {
        emitError(getUserLocation(nested->getLoc()))
            << "internal error: '" << nested->getName() << "' in the "
            << (p == kProducer ? "producer" : "consumer")
            << " warp group uses a value the partitioning did not give it";
        return WalkResult::interrupt();
      }
    }
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

void Distributor::cloneBlockInto(Block &src, OpBuilder &b, int32_t p) {
  for (Operation &op : src.without_terminator()) {
    if (failed(status))
      return;
    cloneOp(&op, b, p);
  }
}

void Distributor::cloneOp(Operation *op, OpBuilder &b, int32_t p) {
  Location loc = op->getLoc();
  if (auto load = dyn_cast<tt::DescriptorLoadOp>(op)) {
    unsigned g = groupOfLoad.lookup(load);
    ArefGroup &group = groups[g];
    Value &position = counter[group.ring];
    if (p == kProducer) {
      b.clone(*op, map);
      strip(map.lookupOrDefault(load.getResult()).getDefiningOp());
      if (load == group.loads.back()) {
        SmallVector<Value> values;
        for (tt::DescriptorLoadOp l : group.loads)
          values.push_back(map.lookupOrDefault(l.getResult()));
        tawa::ArefPutOp::create(b, loc, group.aref, position, values);
        position = increment(b, loc, position);
      }
    } else if (load == group.loads.front()) {
      SmallVector<Type> types;
      for (tt::DescriptorLoadOp l : group.loads)
        types.push_back(l.getType());
      auto get = tawa::ArefGetOp::create(b, loc, types, group.aref, position);
      for (auto [l, v] : llvm::zip(group.loads, get.getValues()))
        map.map(l.getResult(), v);
      if (!group.lastUse) {
        tawa::ArefConsumedOp::create(b, loc, group.aref, position);
        position = increment(b, loc, position);
      }
    }
    if (p == kProducer || load != group.loads.front())
      return;
  } else if (isInPartition(op, p)) {
    if (auto forOp = dyn_cast<scf::ForOp>(op))
      cloneFor(forOp, b, p);
    else if (auto whileOp = dyn_cast<scf::WhileOp>(op))
      cloneWhile(whileOp, b, p);
    else if (failed(checkOperands(op, partitionRegion, p)))
      status = failure();
    else
      strip(b.clone(*op, map));
  }
  if (p != kConsumer)
    return;
  // Release every group whose last consumer use was this operation.
  for (ArefGroup &group : groups)
    if (group.lastUse == op) {
      tawa::ArefConsumedOp::create(b, loc, group.aref, counter[group.ring]);
      counter[group.ring] = increment(b, loc, counter[group.ring]);
    }
}

void Distributor::cloneFor(scf::ForOp forOp, OpBuilder &b, int32_t p) {
  ArrayRef<int32_t> masks = carriedMasks(forOp);
  SmallVector<unsigned> kept;
  for (unsigned i = 0; i < forOp.getNumRegionIterArgs(); ++i)
    if (i < masks.size() && (masks[i] & (1 << p)))
      kept.push_back(i);
  SmallVector<unsigned> counters = groupsInside(forOp);

  SmallVector<Value> inits;
  for (unsigned i : kept)
    inits.push_back(map.lookupOrDefault(forOp.getInitArgs()[i]));
  for (unsigned g : counters)
    inits.push_back(counter[g]);
  auto newFor = scf::ForOp::create(b, forOp.getLoc(),
                                   map.lookupOrDefault(forOp.getLowerBound()),
                                   map.lookupOrDefault(forOp.getUpperBound()),
                                   map.lookupOrDefault(forOp.getStep()), inits);
  for (NamedAttribute attr : forOp->getDiscardableAttrs())
    if (attr.getName() != kPartitionAttr &&
        attr.getName() != kIterArgPartitionsAttr)
      newFor->setAttr(attr.getName(), attr.getValue());

  Block *body = newFor.getBody();
  map.map(forOp.getInductionVar(), newFor.getInductionVar());
  for (auto [k, i] : llvm::enumerate(kept))
    map.map(forOp.getRegionIterArgs()[i], newFor.getRegionIterArgs()[k]);
  for (auto [k, g] : llvm::enumerate(counters))
    counter[g] = newFor.getRegionIterArgs()[kept.size() + k];

  OpBuilder inner = OpBuilder::atBlockBegin(body);
  // scf.for::create with inits adds a yield; rebuild it at the end.
  if (!body->empty())
    body->getTerminator()->erase();
  cloneLoopBody(*forOp.getBody(), inner, p, forOp);
  SmallVector<Value> yields;
  for (unsigned i : kept)
    yields.push_back(map.lookupOrDefault(forOp.getYieldedValues()[i]));
  for (unsigned g : counters)
    yields.push_back(counter[g]);
  scf::YieldOp::create(inner, forOp.getLoc(), yields);

  for (auto [k, i] : llvm::enumerate(kept))
    map.map(forOp.getResult(i), newFor.getResult(k));
  for (auto [k, g] : llvm::enumerate(counters))
    counter[g] = newFor.getResult(kept.size() + k);
}

void Distributor::cloneWhile(scf::WhileOp whileOp, OpBuilder &b, int32_t p) {
  ArrayRef<int32_t> masks = carriedMasks(whileOp);
  SmallVector<unsigned> kept;
  for (unsigned i = 0; i < whileOp.getBeforeArguments().size(); ++i)
    if (i < masks.size() && (masks[i] & (1 << p)))
      kept.push_back(i);
  SmallVector<unsigned> counters = groupsInside(whileOp);

  SmallVector<Value> inits;
  SmallVector<Type> types;
  for (unsigned i : kept) {
    inits.push_back(map.lookupOrDefault(whileOp.getInits()[i]));
    types.push_back(whileOp.getBeforeArguments()[i].getType());
  }
  for (unsigned g : counters) {
    inits.push_back(counter[g]);
    types.push_back(b.getI32Type());
  }
  auto newWhile =
      scf::WhileOp::create(b, whileOp.getLoc(), types, inits, nullptr, nullptr);
  // The builder made both blocks, with arguments of `types`.
  Block *before = newWhile.getBeforeBody();
  Block *after = newWhile.getAfterBody();

  auto bindArgs = [&](Block *src, Block *dst) {
    for (auto [k, i] : llvm::enumerate(kept))
      map.map(src->getArgument(i), dst->getArgument(k));
    for (auto [k, g] : llvm::enumerate(counters))
      counter[g] = dst->getArgument(kept.size() + k);
  };
  // Before region: the condition and the values it forwards.
  bindArgs(whileOp.getBeforeBody(), before);
  OpBuilder beforeBuilder = OpBuilder::atBlockEnd(before);
  cloneBlockInto(*whileOp.getBeforeBody(), beforeBuilder, p);
  scf::ConditionOp cond = whileOp.getConditionOp();
  SmallVector<Value> forwarded;
  for (unsigned i : kept)
    forwarded.push_back(map.lookupOrDefault(cond.getArgs()[i]));
  for (unsigned g : counters)
    forwarded.push_back(counter[g]);
  scf::ConditionOp::create(beforeBuilder, cond.getLoc(),
                           map.lookupOrDefault(cond.getCondition()), forwarded);

  // After region: the body.
  bindArgs(whileOp.getAfterBody(), after);
  OpBuilder afterBuilder = OpBuilder::atBlockEnd(after);
  cloneLoopBody(*whileOp.getAfterBody(), afterBuilder, p, whileOp);
  SmallVector<Value> yields;
  for (unsigned i : kept)
    yields.push_back(map.lookupOrDefault(whileOp.getYieldOp().getOperand(i)));
  for (unsigned g : counters)
    yields.push_back(counter[g]);
  scf::YieldOp::create(afterBuilder, whileOp.getLoc(), yields);

  for (auto [k, i] : llvm::enumerate(kept))
    map.map(whileOp.getResult(i), newWhile.getResult(k));
  for (auto [k, g] : llvm::enumerate(counters))
    counter[g] = newWhile.getResult(kept.size() + k);
  b.setInsertionPointAfter(newWhile);
}

LogicalResult Distributor::run() {
  if (func.isExternal())
    return success();
  if (!func.getBody().hasOneBlock())
    return func.emitError("a kernel body of more than one block is not "
                          "supported");
  if (failed(collectGroups()) || failed(checkAnnotations()))
    return failure();
  if (groups.empty())
    return emitError(getUserLocation(func.getLoc()))
           << "kernel @" << func.getName()
           << " has no TMA loads: there is nothing to warp-specialize";

  Block &body = func.getBody().front();
  Operation *ret = body.getTerminator();
  OpBuilder b(ret);
  Location loc = func.getLoc();

  if (autoPingpong && consumerGroups == 0) {
    // Ping-pong where one warp group can hold a whole tile's accumulators in
    // 128 registers per thread (128 x 128 tiles) and there is a tile loop:
    // measured 2-6% faster on the H100 than splitting the tile on tawa's
    // program loop, and 3% faster than one consumer group on the grouped
    // sample's own loop once its tiles are walked in groups of rows
    // (docs/PERFORMANCE.md, runs 13 and 14).
    bool fits = accumulatorRegisters(func) <= 128, anyDot = false;
    func.walk([&](tt::DotOp dot) {
      auto acc = cast<RankedTensorType>(dot.getType());
      anyDot = true;
      fits &= acc.getRank() == 2 && acc.getShape()[0] % 64 == 0;
    });
    pingpong = anyDot && fits && !findTileLoop();
    if (!pingpong)
      tileLoop = nullptr;
  }
  // A group is streamed when its loads sit in a loop with no nested loop of
  // loads (a K loop): its ring gets D slots. Other groups are loaded once per
  // tile: one slot outside loops, two inside one (a persistent tile loop),
  // so that the next tile's load can overlap this tile's work, unless the
  // load follows the tile's streamed loop (below).
  auto tileBytes = [](Type t) {
    auto tensor = cast<RankedTensorType>(t);
    return tensor.getNumElements() *
           ((tensor.getElementTypeBitWidth() + 7) / 8);
  };
  auto streamed = [&](const ArefGroup &group) {
    Operation *parent = group.loads.front()->getParentOp();
    if (parent == func)
      return false;
    return !llvm::any_of(groups, [&](const ArefGroup &other) {
      Operation *p = other.loads.front()->getParentOp();
      return p != parent && parent->isProperAncestor(p);
    });
  };
  // A tile loaded after its tile's streamed loop (an epilogue operand) needs
  // one slot: the producer reaches the next tile's copy only after issuing
  // that tile's streamed loads, long after the consumers released this one.
  auto loadedAfterStream = [&](const ArefGroup &group) {
    for (Operation *o = group.loads.front()->getPrevNode(); o;
         o = o->getPrevNode())
      for (const ArefGroup &other : groups)
        if (&other != &group && streamed(other) &&
            o->isProperAncestor(other.loads.front()))
          return true;
    return false;
  };
  // Ping-pong consumers each wait only on their own tiles' slots, with the
  // parity of the ring position: a slot both groups used in turn could be
  // waited on by the group a tile ahead before the other's fill completed
  // its phase. Two slots give each group its own.
  auto perTileDepth = [&](const ArefGroup &group) -> int64_t {
    if (pingpong)
      return 2;
    return group.loads.front()->getParentOp() == func ||
                   loadedAfterStream(group)
               ? 1
               : 2;
  };
  // A tile the ring stores transposed also takes a staging slot (TMA's
  // copy, which the producer transposes into the ring).
  int64_t streamSlotBytes = 0, perTileBytes = 0;
  for (unsigned leader : ringLeader)
    for (tt::DescriptorLoadOp load : groups[leader].loads)
      (streamed(groups[leader]) ? streamSlotBytes : perTileBytes) +=
          tileBytes(load.getType()) *
          (needsStoredTranspose(load.getResult()) ? 2 : 1) *
          (streamed(groups[leader]) ? 1 : perTileDepth(groups[leader]));
  // An epilogue operand (one 2-D tile of 16-bit elements loaded after the
  // streamed loop, read only element by element: combined with the
  // accumulator) whose rows span several 128-byte boxes can come through a
  // ring of one box, read box by box (tawa.smem.read_boxes): a 128 x 256
  // bf16 tile of C then takes 16 KiB instead of 64. Not under ping-pong,
  // whose groups each need their own slot.
  auto columnBoxes = [&](unsigned leader) -> int64_t {
    const ArefGroup &group = groups[leader];
    if (pingpong || group.loads.size() != 1 || streamed(group) ||
        !loadedAfterStream(group) ||
        llvm::count_if(groups, [&](const ArefGroup &other) {
          return ringLeader[other.ring] == leader;
        }) != 1)
      return 0;
    tt::DescriptorLoadOp load = group.loads.front();
    auto tile = cast<RankedTensorType>(load.getType());
    if (tile.getRank() != 2 || tile.getElementTypeBitWidth() != 16 ||
        tile.getShape()[0] % 64 != 0 || needsStoredTranspose(load.getResult()))
      return 0;
    const int64_t rowBytes = tile.getShape()[1] * 2;
    if (rowBytes % 128 != 0 || rowBytes < 256)
      return 0;
    for (Operation *user : load->getUsers())
      if (!user->hasTrait<OpTrait::Elementwise>())
        return 0;
    return rowBytes / 128;
  };
  int64_t boxedLeader = -1, boxes = 0, boxedPerTile = perTileBytes;
  for (unsigned leader : ringLeader)
    if (int64_t n = columnBoxes(leader)) {
      const int64_t bytes = tileBytes(groups[leader].loads.front().getType());
      boxedLeader = leader;
      boxes = n;
      boxedPerTile = perTileBytes - bytes + bytes / n;
      break;
    }
  bool boxed = false;
  if (depth == 0) {
    // Hopper: 227 KiB of shared memory per CTA; keep 32 KiB for the
    // epilogue's staging buffers (two 8 KiB boxes per consumer group). More
    // than 4 slots rarely pays.
    auto depthWith = [&](int64_t staging, int64_t perTile) {
      const int64_t budget = 227 * 1024 - staging - perTile;
      return streamSlotBytes
                 ? std::clamp<int64_t>(budget / streamSlotBytes, 1, 4)
                 : 1;
    };
    depth = depthWith(32 * 1024, perTileBytes);
    // Two slots leave the loads' latency exposed; where one staging box per
    // group (the emitter's choice when two do not fit) buys a third slot
    // (a 128 x 256 tile of C beside 48 KiB slots of A and B), take it.
    if (depth < 3 && depthWith(16 * 1024, perTileBytes) >= 3)
      depth = depthWith(16 * 1024, perTileBytes);
    // Where the epilogue operand read box by box buys another slot, take it:
    // a fourth slot measured 5 % on the 128 x 256 GEMM (run 200), and the
    // hand-written form of this ring 2.6 % on D = alpha A B^T + beta C
    // (run 201, docs/PERFORMANCE.md).
    if (boxes && depthWith(16 * 1024, boxedPerTile) > depth) {
      depth = depthWith(16 * 1024, boxedPerTile);
      boxed = true;
    }
  } else if (boxes && streamSlotBytes * depth + perTileBytes > 227 * 1024) {
    // An explicit depth that the whole tile leaves no room for may fit
    // beside its boxes.
    boxed = true;
  }
  if (boxed)
    perTileBytes = boxedPerTile;
  else
    boxedLeader = -1;
  if (streamSlotBytes * depth + perTileBytes > 227 * 1024)
    return emitError(getUserLocation(func.getLoc()))
           << "aref rings of " << depth << " slots need "
           << streamSlotBytes * depth + perTileBytes
           << " bytes of shared memory, more than the 232448 of a Hopper "
              "CTA; lower --aref-depth";

  for (unsigned leader : ringLeader) {
    ArefGroup &group = groups[leader];
    SmallVector<Type> payload;
    for (tt::DescriptorLoadOp load : group.loads)
      payload.push_back(load.getType());
    auto type = tawa::ArefType::get(
        func.getContext(), payload,
        streamed(group) ? depth
        : pingpong      ? perTileDepth(group)
                        : std::min<int64_t>(depth, perTileDepth(group)));
    auto create = tawa::ArefCreateOp::create(b, loc, type);
    if (static_cast<int64_t>(leader) == boxedLeader)
      create->setAttr(kColumnBoxesAttr, b.getI64IntegerAttr(boxes));
    group.aref = create.getResult();
  }
  for (ArefGroup &group : groups)
    group.aref = groups[ringLeader[group.ring]].aref;

  if (consumerGroups == 0 && pingpong)
    consumerGroups = 2;
  if (consumerGroups == 0)
    consumerGroups = defaultConsumerGroups(func);

  if (pingpong) {
    if (consumerGroups != 2)
      return emitError(getUserLocation(func.getLoc()))
             << "ping-pong takes two consumer warp groups";
    if (!tileLoop)
      if (auto why = findTileLoop())
        return emitError(getUserLocation(why->first->getLoc())) << why->second;
  }

  // One producer warp group with few registers; the consumer groups share the
  // rest of the 64K-register file (setmaxnreg takes multiples of 8, <= 256).
  // Three consumer groups get 160 each with a 32-register producer (its
  // loop of TMA issues needs fewer than 32), not 152 with 40.
  int32_t consumerWarps = 4 * consumerGroups;
  const int32_t producerRegs = consumerGroups == 3 && !pingpong ? 32 : 40;
  int32_t consumerRegs = std::min<int64_t>(
      232, ((65536 - 128 * producerRegs) / (32 * consumerWarps)) / 8 * 8);
  // Ping-pong: one partition (of one warp group) per consumer.
  SmallVector<int32_t> warps{4}, regs{producerRegs};
  for (int64_t i = 0; i < (pingpong ? consumerGroups : 1); ++i) {
    warps.push_back(pingpong ? 4 : consumerWarps);
    regs.push_back(consumerRegs);
  }
  auto ws = tawa::WarpSpecializeOp::create(
      b, loc, b.getDenseI32ArrayAttr(warps), b.getDenseI32ArrayAttr(regs),
      /*regions=*/warps.size());
  if (pingpong)
    ws->setAttr(kPingPongAttr, b.getUnitAttr());

  for (unsigned region = 0; region < warps.size(); ++region) {
    int32_t p = region == 0 ? kProducer : kConsumer;
    parity = pingpong && region > 0 ? static_cast<int>(region) - 1 : -1;
    partitionRegion = &ws.getPartitions()[region];
    Block *block = &partitionRegion->emplaceBlock();
    OpBuilder rb = OpBuilder::atBlockEnd(block);
    map.clear();
    Value zero = arith::ConstantIntOp::create(rb, loc, 0, 32);
    counter.assign(ringLeader.size() + (parity >= 0 ? 1 : 0), zero);
    cloneBlockInto(body, rb, p);
    if (failed(status))
      return failure();
  }
  parity = -1;

  // The original body, minus the new ops and the return, is now dead.
  SmallVector<Operation *> dead;
  for (Operation &op : body.without_terminator()) {
    if (&op == ws.getOperation() || isa<tawa::ArefCreateOp>(op))
      continue;
    dead.push_back(&op);
  }
  for (Operation *op : llvm::reverse(dead)) {
    op->dropAllUses();
    op->erase();
  }
  return success();
}

struct LoopDistribution
    : public tawa::impl::LoopDistributionBase<LoopDistribution> {
  using LoopDistributionBase::LoopDistributionBase;
  void runOnOperation() override {
    if (arefDepth < 0) {
      getOperation().emitError("aref-depth must be at least 1 (or 0: auto)");
      return signalPassFailure();
    }
    if (consumerGroups < 0 || consumerGroups > 3) {
      getOperation().emitError("consumer-groups must be 1, 2 or 3 (or 0: "
                               "auto)");
      return signalPassFailure();
    }
    Distributor distributor(getOperation(), arefDepth, consumerGroups,
                            pingpong);
    if (failed(distributor.run()))
      signalPassFailure();
  }
};

} // namespace
