//===- ArefLowering.cpp - arefs to rings, mbarriers and TMA ---------------===//
//
// DESIGN.md §2.2, exactly. The slot and parity of ring position k are built
// from the functions of tawa/Protocol/ArefProtocol.h: folded with them when k
// is a constant, and otherwise emitted as the same arithmetic on i32.
//
//===----------------------------------------------------------------------===//

#include "tawa/Protocol/ArefProtocol.h"
#include "tawa/Transforms/ArefTiles.h"
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
  // Tiles stored transposed (fp8 B operands loaded [K, N]): TMA fills a
  // staging slot, completing stagingFull; the producer's warps transpose it
  // into the ring slot and each arrives on full. No staging empty barrier:
  // the ring slot's release means every warp has read its staging slot.
  SmallVector<Value> staging; // per payload tile; null where not transposed
  Value stagingFull;
  int64_t transposeWarps = 0;
  /// tawa.column_boxes: the one payload tile goes through the ring a column
  /// box at a time, ring position k * boxes + j holding box j of the tile
  /// of aref position k (0: the whole tile in a slot).
  int64_t boxes = 0;
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

  /// Which payload tiles the ring stores transposed: those that a get
  /// hands to a product as an fp8 B operand in [K, N] form.
  FailureOr<SmallVector<bool>> storedTransposed(tawa::ArefCreateOp create) {
    auto payload = create.getType().getPayload();
    SmallVector<bool> result(payload.size(), false);
    for (Operation *user : create->getUsers())
      if (auto get = dyn_cast<tawa::ArefGetOp>(user))
        for (auto [i, v] : llvm::enumerate(get.getValues()))
          result[i] = result[i] || needsStoredTranspose(v);
    for (Operation *user : create->getUsers()) {
      auto get = dyn_cast<tawa::ArefGetOp>(user);
      if (!get)
        continue;
      for (auto [i, v] : llvm::enumerate(get.getValues())) {
        if (!result[i])
          continue;
        for (Operation *reader : v.getUsers())
          if (!isa<tt::DotOp, tawa::DotAsyncOp>(reader) ||
              reader->getOperand(1) != v || reader->getOperand(0) == v)
            return emitError(getUserLocation(reader->getLoc()))
                   << "an fp8 tile read as a product's B operand in [K, N] "
                      "form is stored transposed (fp8 wgmma reads K-major "
                      "operands); it cannot also be read otherwise";
      }
    }
    return result;
  }

  /// Warps of the partition that puts into the ring (all of them transpose).
  FailureOr<int64_t> putWarps(tawa::ArefCreateOp create) {
    for (Operation *user : create->getUsers()) {
      if (!isa<tawa::ArefPutOp>(user))
        continue;
      auto ws = user->getParentOfType<tawa::WarpSpecializeOp>();
      if (!ws)
        break;
      for (auto [i, region] : llvm::enumerate(ws.getPartitions()))
        if (region.isAncestor(user->getParentRegion()))
          return static_cast<int64_t>(ws.getWarps()[i]);
    }
    return create.emitOpError("is filled outside a tawa.warp_specialize");
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
    FailureOr<SmallVector<bool>> transposed = storedTransposed(create);
    if (failed(transposed))
      return failure();
    auto ringOf = [&](RankedTensorType tile, bool swap) {
      SmallVector<int64_t> shape{ring.depth};
      llvm::append_range(shape, tile.getShape());
      if (swap)
        std::swap(shape[1], shape[2]);
      auto memref = MemRefType::get(shape, tile.getElementType(),
                                    MemRefLayoutAttrInterface(),
                                    b.getI64IntegerAttr(kSharedSpace));
      return tawa::SmemAllocOp::create(b, loc, memref).getResult();
    };
    if (auto boxes = create->getAttrOfType<IntegerAttr>(kColumnBoxesAttr)) {
      ring.boxes = boxes.getInt();
      auto tile = type.getPayload().size() == 1
                      ? dyn_cast<RankedTensorType>(type.getPayload().front())
                      : RankedTensorType();
      if (!tile || tile.getRank() != 2 || ring.boxes < 2 ||
          tile.getShape()[1] % ring.boxes != 0 || (*transposed)[0])
        return create.emitOpError("column boxes need one 2-D tile whose "
                                  "columns they divide, not stored "
                                  "transposed");
    }
    bool anyDirect = false;
    for (auto [t, swap] : llvm::zip(type.getPayload(), *transposed)) {
      auto tile = cast<RankedTensorType>(t);
      if (ring.boxes)
        tile = RankedTensorType::get(
            {tile.getShape()[0], tile.getShape()[1] / ring.boxes},
            tile.getElementType());
      ring.buffers.push_back(ringOf(tile, swap));
      ring.staging.push_back(swap ? ringOf(tile, false) : Value());
      anyDirect |= !swap;
    }
    auto bars = tawa::MBarriersType::get(b.getContext(), ring.depth);
    int64_t fullArrivals = proto::fullArrivalCount();
    if (llvm::is_contained(*transposed, true)) {
      FailureOr<int64_t> producerWarps = putWarps(create);
      if (failed(producerWarps))
        return failure();
      // Warp 0 issues the TMA copies and runs ahead; the other warps
      // transpose behind it and each arrives on the ring slot's full barrier.
      if (*producerWarps < 2)
        return create.emitOpError("a ring stored transposed needs a producer "
                                  "of two warps or more");
      ring.transposeWarps = *producerWarps - 1;
      ring.stagingFull = tawa::MBarrierAllocOp::create(
          b, loc, bars, b.getI32IntegerAttr(proto::fullArrivalCount()));
      fullArrivals = (anyDirect ? 1 : 0) + ring.transposeWarps;
    }
    ring.full = tawa::MBarrierAllocOp::create(
        b, loc, bars, b.getI32IntegerAttr(fullArrivals));
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
        if (ring.boxes) {
          // tawa.smem.read_boxes released each box as it read it.
          consumed.erase();
          continue;
        }
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
    if (ring.boxes) {
      // Box j of the tile at ring position k * boxes + j: each waits for
      // its slot, announces its bytes and copies its columns.
      tt::DescriptorLoadOp load = loads.front();
      auto tile = cast<RankedTensorType>(load.getType());
      const int64_t width = tile.getShape()[1] / ring.boxes;
      Value first =
          arith::MulIOp::create(b, loc, put.getK(), i32(b, loc, ring.boxes));
      for (int64_t j = 0; j < ring.boxes; ++j) {
        Value k =
            j ? arith::AddIOp::create(b, loc, first, i32(b, loc, j)).getResult()
              : first;
        Value slot = slotOf(b, loc, k, ring.depth);
        Value parity = parityOf(b, loc, k, ring.depth, /*producer=*/true);
        tawa::MBarrierWaitOp::create(b, loc, ring.empty, slot, parity);
        tawa::MBarrierExpectTxOp::create(
            b, loc, ring.full, slot, b.getI64IntegerAttr(bytes / ring.boxes));
        SmallVector<Value> indices(load.getIndices());
        if (j)
          indices.back() = arith::AddIOp::create(b, loc, indices.back(),
                                                 i32(b, loc, j * width));
        tawa::TmaLoadOp::create(b, load.getLoc(), load.getDesc(), indices,
                                ring.buffers.front(), slot, ring.full,
                                /*multicast=*/Value());
      }
      put.erase();
      load.erase();
      return success();
    }
    Value slot = slotOf(b, loc, put.getK(), ring.depth);
    Value parity = parityOf(b, loc, put.getK(), ring.depth, /*producer=*/true);
    tawa::MBarrierWaitOp::create(b, loc, ring.empty, slot, parity);
    int64_t stagedBytes = 0;
    for (auto [load, staging] : llvm::zip(loads, ring.staging))
      if (staging)
        stagedBytes += tileBytes(cast<RankedTensorType>(load.getType()));
    if (bytes > stagedBytes)
      tawa::MBarrierExpectTxOp::create(
          b, loc, ring.full, slot, b.getI64IntegerAttr(bytes - stagedBytes));
    for (auto [load, buffer, staging] :
         llvm::zip(loads, ring.buffers, ring.staging)) {
      if (staging)
        continue;
      tawa::TmaLoadOp::create(b, load.getLoc(), load.getDesc(),
                              load.getIndices(), buffer, slot, ring.full,
                              /*multicast=*/Value());
    }
    if (stagedBytes) {
      // Fill the staging slot, wait for it (every producer warp), transpose
      // into the ring slot, and release it to the consumers warp by warp.
      tawa::MBarrierExpectTxOp::create(b, loc, ring.stagingFull, slot,
                                       b.getI64IntegerAttr(stagedBytes));
      for (auto [load, staging] : llvm::zip(loads, ring.staging))
        if (staging)
          tawa::TmaLoadOp::create(b, load.getLoc(), load.getDesc(),
                                  load.getIndices(), staging, slot,
                                  ring.stagingFull, /*multicast=*/Value());
      Value filled =
          parityOf(b, loc, put.getK(), ring.depth, /*producer=*/false);
      UnitAttr transposer = b.getUnitAttr();
      tawa::MBarrierWaitOp::create(b, loc, ring.stagingFull, slot, filled)
          ->setAttr(kTransposerAttr, transposer);
      for (auto [load, buffer, staging] :
           llvm::zip(loads, ring.buffers, ring.staging))
        if (staging)
          tawa::SmemTransposeOp::create(b, load.getLoc(), staging, buffer, slot)
              ->setAttr(kTransposerAttr, transposer);
      tawa::MBarrierArriveOp::create(b, loc, ring.full, slot,
                                     /*per_warp=*/true, /*cluster=*/false)
          ->setAttr(kTransposerAttr, transposer);
    }
    put.erase();
    for (tt::DescriptorLoadOp load : loads)
      load.erase();
    return success();
  }

  void lowerGet(tawa::ArefGetOp get, Ring &ring) {
    Location loc = get.getLoc();
    OpBuilder b(get);
    if (ring.boxes) {
      Value tile = get.getValues().front();
      auto read = tawa::SmemReadBoxesOp::create(
          b, loc, tile.getType(), ring.buffers.front(), get.getK(), ring.full,
          ring.empty, b.getI64IntegerAttr(ring.boxes));
      tile.replaceAllUsesWith(read.getResult());
      get.erase();
      return;
    }
    Value slot = slotOf(b, loc, get.getK(), ring.depth);
    Value parity = parityOf(b, loc, get.getK(), ring.depth, /*producer=*/false);
    tawa::MBarrierWaitOp::create(b, loc, ring.full, slot, parity);
    for (auto [value, buffer, staging] :
         llvm::zip(get.getValues(), ring.buffers, ring.staging)) {
      auto view = tawa::SlotViewOp::create(b, loc, value.getType(), buffer,
                                           slot, /*transposed=*/!!staging);
      value.replaceAllUsesWith(view.getTile());
    }
    get.erase();
  }
};

} // namespace
