//===- ArefLowering.cpp - arefs to rings, mbarriers and TMA ---------------===//
//
// DESIGN.md §2.2, exactly. The slot and parity of ring position k are built
// from the functions of tawa/Protocol/ArefProtocol.h: folded with them when k
// is a constant, and otherwise emitted as the same arithmetic on i32.
//
//===----------------------------------------------------------------------===//

#include "tawa/Protocol/ArefProtocol.h"
#include "tawa/Transforms/Partition.h"
#include "tawa/Transforms/Passes.h"
#include "tawa/Transforms/SourceLocation.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Matchers.h"

namespace tawa {
#define GEN_PASS_DEF_AREFLOWERING
#include "tawa/Transforms/Passes.h.inc"
} // namespace tawa

using namespace mlir;
using namespace tawa;
namespace proto = tawa::protocol;

namespace {

/// Shared memory (NVVM address space 3).
constexpr unsigned kSharedSpace = 3;

struct Ring {
  int64_t depth = 1;
  SmallVector<Value> buffers; // one per payload tile
  Value full, empty;
};

Value i32(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIntOp::create(b, loc, v, 32);
}

/// slotOf(k, D).
Value slotOf(OpBuilder &b, Location loc, Value k, int64_t depth) {
  APInt c;
  if (matchPattern(k, m_ConstantInt(&c)))
    return i32(b, loc, proto::slotOf(c.getSExtValue(), depth));
  return arith::RemUIOp::create(b, loc, k, i32(b, loc, depth));
}

/// producerEmptyParity(k, D) or consumerFullParity(k, D).
Value parityOf(OpBuilder &b, Location loc, Value k, int64_t depth,
               bool producer) {
  APInt c;
  if (matchPattern(k, m_ConstantInt(&c)))
    return i32(b, loc,
               producer ? proto::producerEmptyParity(c.getSExtValue(), depth)
                        : proto::consumerFullParity(c.getSExtValue(), depth));
  // phaseOf(k, D) = lapOf(k, D) & 1 = (k / D) & 1.
  Value lap = arith::DivUIOp::create(b, loc, k, i32(b, loc, depth));
  Value phase = arith::AndIOp::create(b, loc, lap, i32(b, loc, 1));
  return producer ? arith::XOrIOp::create(b, loc, phase, i32(b, loc, 1))
                  : phase;
}

int64_t tileBytes(RankedTensorType t) {
  return t.getNumElements() * ((t.getElementTypeBitWidth() + 7) / 8);
}

struct ArefLowering : public tawa::impl::ArefLoweringBase<ArefLowering> {
  void runOnOperation() override {
    tt::FuncOp func = getOperation();
    SmallVector<tawa::ArefCreateOp> creates;
    func.walk([&](tawa::ArefCreateOp op) { creates.push_back(op); });
    for (tawa::ArefCreateOp create : creates)
      if (failed(lower(create)))
        return signalPassFailure();
  }

  /// Consumer warps that release the ring: every warp of each partition that
  /// marks its slots consumed (one arrival per warp and phase). Ping-pong
  /// partitions take alternate tiles, so each slot is released by the warps
  /// of one of them.
  FailureOr<int64_t> consumerWarps(tawa::ArefCreateOp create) {
    int64_t warps = 0;
    bool disjoint = false;
    llvm::SmallPtrSet<Region *, 4> seen;
    for (Operation *user : create->getUsers()) {
      if (!isa<tawa::ArefConsumedOp>(user))
        continue;
      auto ws = user->getParentOfType<tawa::WarpSpecializeOp>();
      if (!ws)
        return create.emitOpError("is released outside a tawa.warp_specialize");
      disjoint = ws->hasAttr(kPingPongAttr);
      for (auto [i, region] : llvm::enumerate(ws.getPartitions()))
        if (region.isAncestor(user->getParentRegion()) &&
            seen.insert(&region).second)
          warps = disjoint ? std::max<int64_t>(warps, ws.getWarps()[i])
                           : warps + ws.getWarps()[i];
    }
    return warps ? warps : 1;
  }

  LogicalResult lower(tawa::ArefCreateOp create) {
    auto type = create.getType();
    Location loc = create.getLoc();
    OpBuilder b(create);
    FailureOr<int64_t> warps = consumerWarps(create);
    if (failed(warps))
      return failure();

    Ring ring;
    ring.depth = type.getDepth();
    for (Type t : type.getPayload()) {
      auto tile = cast<RankedTensorType>(t);
      SmallVector<int64_t> shape{ring.depth};
      llvm::append_range(shape, tile.getShape());
      auto memref = MemRefType::get(shape, tile.getElementType(),
                                    MemRefLayoutAttrInterface(),
                                    b.getI64IntegerAttr(kSharedSpace));
      ring.buffers.push_back(tawa::SmemAllocOp::create(b, loc, memref));
    }
    auto bars = tawa::MBarriersType::get(b.getContext(), ring.depth);
    ring.full = tawa::MBarrierAllocOp::create(
        b, loc, bars, b.getI32IntegerAttr(proto::fullArrivalCount()));
    ring.empty = tawa::MBarrierAllocOp::create(
        b, loc, bars,
        b.getI32IntegerAttr(proto::emptyArrivalCount(
            /*groups=*/1, /*warpsPerGroup=*/static_cast<unsigned>(*warps))));

    for (Operation *user : llvm::make_early_inc_range(create->getUsers())) {
      if (auto put = dyn_cast<tawa::ArefPutOp>(user)) {
        if (failed(lowerPut(put, ring)))
          return failure();
      } else if (auto get = dyn_cast<tawa::ArefGetOp>(user)) {
        lowerGet(get, ring);
      } else if (auto consumed = dyn_cast<tawa::ArefConsumedOp>(user)) {
        OpBuilder ub(consumed);
        Value slot = slotOf(ub, consumed.getLoc(), consumed.getK(), ring.depth);
        tawa::MBarrierArriveOp::create(ub, consumed.getLoc(), ring.empty, slot,
                                       /*per_warp=*/true, /*cluster=*/false);
        consumed.erase();
      } else {
        return user->emitOpError("uses an aref in a way the lowering does not "
                                 "know");
      }
    }
    create.erase();
    return success();
  }

  LogicalResult lowerPut(tawa::ArefPutOp put, Ring &ring) {
    Location loc = put.getLoc();
    SmallVector<tt::DescriptorLoadOp> loads;
    int64_t bytes = 0;
    for (Value v : put.getValues()) {
      auto load = v.getDefiningOp<tt::DescriptorLoadOp>();
      if (!load || !load->hasOneUse())
        return emitError(getUserLocation(put.getLoc()))
               << "only tiles loaded by TMA for this aref alone can be put "
                  "into it (the producer writes slots with TMA)";
      loads.push_back(load);
      bytes += tileBytes(cast<RankedTensorType>(load.getType()));
    }
    OpBuilder b(put);
    Value slot = slotOf(b, loc, put.getK(), ring.depth);
    Value parity = parityOf(b, loc, put.getK(), ring.depth, /*producer=*/true);
    tawa::MBarrierWaitOp::create(b, loc, ring.empty, slot, parity);
    tawa::MBarrierExpectTxOp::create(b, loc, ring.full, slot,
                                     b.getI64IntegerAttr(bytes));
    for (auto [load, buffer] : llvm::zip(loads, ring.buffers)) {
      tawa::TmaLoadOp::create(b, load.getLoc(), load.getDesc(),
                              load.getIndices(), buffer, slot, ring.full,
                              /*multicast=*/Value());
    }
    put.erase();
    for (tt::DescriptorLoadOp load : loads)
      load.erase();
    return success();
  }

  void lowerGet(tawa::ArefGetOp get, Ring &ring) {
    Location loc = get.getLoc();
    OpBuilder b(get);
    Value slot = slotOf(b, loc, get.getK(), ring.depth);
    Value parity = parityOf(b, loc, get.getK(), ring.depth, /*producer=*/false);
    tawa::MBarrierWaitOp::create(b, loc, ring.full, slot, parity);
    for (auto [value, buffer] : llvm::zip(get.getValues(), ring.buffers)) {
      auto view =
          tawa::SlotViewOp::create(b, loc, value.getType(), buffer, slot);
      value.replaceAllUsesWith(view.getTile());
    }
    get.erase();
  }
};

} // namespace
