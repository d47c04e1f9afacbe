//===- EmitterMemory.cpp - rings, mbarriers, TMA loads -----------------===//
//
// Shared-memory traffic: aref rings and their mbarriers (DESIGN.md §2.2),
// TMA loads into ring slots, slot views, the ping-pong hand-over, and
// tensor maps the kernel builds on the device.
//
//===----------------------------------------------------------------------===//

#include "Emitter.h"

#include "tawa/Transforms/Partition.h"

using namespace mlir;

namespace tawa {
namespace cuda {

LogicalResult Emitter::emitMemoryOp(Operation *op) {
  if (auto wait = dyn_cast<PingPongWaitOp>(op)) {
    // Consumer g's n-th tile waits for the other's n-th hand-over (consumer
    // 0 starts without one): order[g] completes once per hand-over to g.
    if (region != Region::Consumer)
      return error(op) << "ping-pong wait outside a consumer partition";
    std::string turn = lookup(wait.getTurn());
    if (sharedPingPong) {
      // Both consumers' waits in one line: wg 0 skips its first turn and
      // waits on parity (turn - 1) & 1, wg 1 on turn & 1.
      line() << "if (" << turn << " + wg > 0)\n";
      line() << "  mbarrierWait(&pingpongOrder[wg], (" << turn
             << " + wg - 1) & 1);\n";
      return success();
    }
    if (wait.getGroup() == 0)
      line() << "if (" << turn << " > 0)\n  ";
    else
      line();
    body << "mbarrierWait(&pingpongOrder[" << wait.getGroup() << "], "
         << (wait.getGroup() == 0 ? "(" + turn + " - 1)" : turn) << " & 1);\n";
    return success();
  }
  if (auto arrive = dyn_cast<PingPongArriveOp>(op)) {
    if (region != Region::Consumer)
      return error(op) << "ping-pong arrive outside a consumer partition";
    // The group's first thread has passed every full wait of the tile.
    line() << "if (tid == 0)\n";
    if (sharedPingPong)
      line() << "  mbarrierArrive(&pingpongOrder[wg ^ 1]);\n";
    else
      line() << "  mbarrierArrive(&pingpongOrder[" << 1 - arrive.getGroup()
             << "]);\n";
    return success();
  }
  if (auto wait = dyn_cast<MBarrierWaitOp>(op)) {
    if (region == Region::Top)
      return error(op) << "mbarrier wait outside a partition";
    std::string guard;
    if (producerAllWarps && region == Region::Producer) {
      // Warp 0 waits for free slots, the transposing warps for staged tiles.
      line() << (wait->hasAttr(kTransposerAttr) ? "if (warpInGroup() != 0)\n"
                                                : "if (warpInGroup() == 0)\n");
      guard = "  ";
    }
    line() << guard << "mbarrierWait(&" << bars[wait.getBars()].name << "["
           << lookup(wait.getSlot()) << "], " << lookup(wait.getParity())
           << ");\n";
    if (region == Region::Producer)
      lastProducerWait = wait;
    return success();
  }
  if (auto tx = dyn_cast<MBarrierExpectTxOp>(op)) {
    if (region != Region::Producer)
      return error(op) << "expect_tx is only supported in the producer";
    line() << "if (leader)\n";
    line() << "  mbarrierArriveExpectTx(&" << bars[tx.getBars()].name << "["
           << lookup(tx.getSlot()) << "], " << tx.getBytes() << ");\n";
    auto fb = fillParity.find(tx.getBars());
    if (fb != fillParity.end()) {
      // The put waited on empty[slot] with parity p (DESIGN.md §2.2); the
      // fill it starts completes full[slot]'s phase of parity p ^ 1.
      if (!lastProducerWait || lastProducerWait.getSlot() != tx.getSlot())
        return error(op) << "internal error: expect_tx without the empty "
                            "wait of its put";
      line() << fb->second.name << "[" << lookup(tx.getSlot())
             << "] = " << lookup(lastProducerWait.getParity()) << " ^ 1;\n";
    }
    return success();
  }
  if (auto arrive = dyn_cast<MBarrierArriveOp>(op)) {
    std::string target =
        bars[arrive.getBars()].name + "[" + lookup(arrive.getSlot()) + "]";
    if (arrive.getPerWarp() && region == Region::Producer) {
      // After the warp's slot transposes (each lane fenced its writes for
      // the async proxy): one arrival per producer warp.
      if (!producerAllWarps || arrive.getCluster() ||
          !arrive->hasAttr(kTransposerAttr))
        return error(op) << "internal error: a per-warp producer arrival "
                            "that is not a transposing warp's";
      line() << "__syncwarp();\n";
      line() << "if (warpInGroup() != 0 && threadIdx.x % 32 == 0)\n";
      line() << "  mbarrierArrive(&" << target << ");\n";
      return success();
    }
    if (arrive.getPerWarp()) {
      if (region != Region::Consumer)
        return error(op) << "per-warp arrival outside the consumer partition";
      // Lane 0 of each warp, after the warp's own wgmma wait retired its
      // reads of the slot: one arrival per consumer warp.
      line() << "if (laneZero)";
      if (arrive.getCluster()) {
        // The slot is released in both CTAs: either may multicast into it.
        body << " {\n";
        for (int64_t r = 0; r < clusterSize; ++r)
          line() << "  mbarrierArriveCluster(&" << target << ", " << r
                 << ");\n";
        line() << "}\n";
        return success();
      }
      body << "\n";
      line() << "  mbarrierArrive(&" << target << ");\n";
      return success();
    }
    if (arrive.getCluster())
      return error(op) << "cluster arrivals are only supported per warp";
    if (region != Region::Producer)
      return error(op)
             << "single-thread arrival is only supported in the producer";
    line() << "if (leader)\n";
    line() << "  mbarrierArrive(&" << target << ");\n";
    return success();
  }
  if (auto load = dyn_cast<TmaLoadOp>(op)) {
    if (region != Region::Producer)
      return error(op) << "TMA loads are only supported in the producer";
    if (load.getIndices().size() != 2)
      return error(op) << "only rank-2 TMA loads are supported";
    // A tile is stored as tileSwizzle lays it out, one TMA copy per box of
    // rows x span bytes: that is what the wgmma descriptors of emitDotAsync
    // read.
    RankedTensorType block =
        cast<tt::TensorDescType>(load.getDesc().getType()).getBlockType();
    std::optional<SmemSwizzle> swizzle = tileSwizzle(block);
    if (!swizzle)
      return error(op) << "loaded tile " << block
                       << " must have rows of 32 or 64 bytes or a multiple "
                          "of 128 bytes (f16/bf16: 16, 32 or a multiple of 64 "
                          "elements; e4m3: 32, 64 or a multiple of 128), the "
                          "swizzle spans of TMA and wgmma operands";
    int64_t span = swizzle->spanBytes;
    auto it = rings.find(load.getBuffer());
    if (it == rings.end())
      return error(op) << "TMA load into an unknown buffer";
    int64_t rows = block.getShape()[0];
    int64_t boxInner = span / elemBytes(block.getElementType());
    // A ring of column boxes (tawa.smem.read_boxes) holds the block's first
    // columns only: copy the slot's boxes.
    int64_t boxes = swizzle->boxes;
    ArrayRef<int64_t> slotShape =
        load.getBuffer().getType().getShape().drop_front();
    if (slotShape != block.getShape()) {
      std::optional<SmemSwizzle> slotSwizzle =
          tileSwizzle(RankedTensorType::get(slotShape, block.getElementType()));
      if (slotShape.size() != 2 || slotShape[0] != rows ||
          slotShape[1] > block.getShape()[1] || !slotSwizzle ||
          slotSwizzle->spanBytes != span)
        return error(op) << "internal error: a TMA load into a slot of "
                         << load.getBuffer().getType()
                         << " that is not the first column boxes of " << block;
      boxes = slotSwizzle->boxes;
    }
    std::string dst = it->second.name + " + " + lookup(load.getSlot()) + " * " +
                      std::to_string(it->second.stride);
    std::string bar =
        "&" + bars[load.getBars()].name + "[" + lookup(load.getSlot()) + "]";
    if (Value multicast = load.getMulticast()) {
      // Each CTA of the pair loads the rows [half * r, half * (r + 1)) of
      // every box: both halves into its own slot where the partner's block
      // differs, its own half into both slots where they are the same.
      if (clusterSize != 2)
        return error(op) << "internal error: a multicast load outside a "
                            "kernel of 2-CTA clusters";
      int64_t half = rows / 2;
      line() << "if (" << lookup(multicast) << ") {\n";
      for (int64_t j = 0; j < boxes; ++j) {
        line() << "  if (leader)\n";
        line() << "    tmaLoad2DMulticast(" << dst << " + " << j * rows * span
               << " + ctaRank * " << half * span << ", "
               << descRef(load.getDesc()) << ", " << bar << ", "
               << lookup(load.getIndices()[1]) << " + " << j * boxInner << ", "
               << lookup(load.getIndices()[0]) << " + int(ctaRank) * " << half
               << ", 0x3);\n";
      }
      line() << "} else {\n";
      for (int64_t j = 0; j < boxes; ++j)
        for (int64_t r = 0; r < 2; ++r) {
          line() << "  if (leader)\n";
          line() << "    tmaLoad2D(" << dst << " + "
                 << j * rows * span + r * half * span << ", "
                 << descRef(load.getDesc()) << ", " << bar << ", "
                 << lookup(load.getIndices()[1]) << " + " << j * boxInner
                 << ", " << lookup(load.getIndices()[0]) << " + " << r * half
                 << ");\n";
        }
      line() << "}\n";
      return success();
    }
    // TTIR coordinates are outermost first, TMA's innermost first.
    for (int64_t j = 0; j < boxes; ++j) {
      line() << "if (leader)\n";
      line() << "  tmaLoad2D(" << dst;
      if (j)
        body << " + " << j * rows * span;
      body << ", " << descRef(load.getDesc()) << ", " << bar << ", "
           << lookup(load.getIndices()[1]);
      if (j)
        body << " + " << j * boxInner;
      body << ", " << lookup(load.getIndices()[0]) << ");\n";
    }
    return success();
  }
  if (auto slot = dyn_cast<SlotViewOp>(op)) {
    auto it = rings.find(slot.getBuffer());
    if (it == rings.end())
      return error(op) << "slot of an unknown buffer";
    std::string ptr = fresh("tile");
    line() << "uint8_t *" << ptr << " = " << it->second.name << " + "
           << lookup(slot.getSlot()) << " * " << it->second.stride << ";\n";
    if (slot.getTransposed()) {
      // The slot holds the tile's transpose: as stored it is [C, R], and the
      // value (the tile) is that stored tile transposed.
      auto stored = RankedTensorType::get(
          slot.getBuffer().getType().getShape().drop_front(),
          slot.getBuffer().getType().getElementType());
      tiles[slot.getResult()] = {ptr, stored, true};
      return success();
    }
    tiles[slot.getResult()] = {ptr, slot.getType(), false};
    return success();
  }
  if (auto transpose = dyn_cast<SmemTransposeOp>(op)) {
    if (region != Region::Producer || !producerAllWarps)
      return error(op) << "internal error: a slot transpose outside a "
                          "producer run by all its warps";
    auto src = rings.find(transpose.getSrc()),
         dst = rings.find(transpose.getDst());
    if (src == rings.end() || dst == rings.end())
      return error(op) << "transpose between unknown buffers";
    ArrayRef<int64_t> shape = transpose.getSrc().getType().getShape();
    // Both tiles are boxes in the swizzle of their row length (TMA's form
    // for the source, the K-major operand form for the destination): 32-,
    // 64- or 128-byte spans. transposeTileB8Sw128 (conflict-free) moves
    // tiles whose extents are both multiples of 128 bytes, transposeTileB8
    // the others.
    int64_t eb = elemBytes(transpose.getSrc().getType().getElementType());
    std::optional<SmemSwizzle> srcSwizzle = tileSwizzle(shape[2] * eb),
                               dstSwizzle = tileSwizzle(shape[1] * eb);
    if (!srcSwizzle || !dstSwizzle)
      return error(op) << "a stored transpose needs tile extents of 32 or 64 "
                          "bytes or multiples of 128 bytes, got "
                       << shape[1] << " x " << shape[2];
    const bool both128 =
        srcSwizzle->spanBytes == 128 && dstSwizzle->spanBytes == 128;
    line() << "if (warpInGroup() != 0)\n";
    line() << "  " << (both128 ? "transposeTileB8Sw128" : "transposeTileB8")
           << "<" << shape[1] << ", " << shape[2] << ">(" << src->second.name
           << " + " << lookup(transpose.getSlot()) << " * "
           << src->second.stride << ", " << dst->second.name << " + "
           << lookup(transpose.getSlot()) << " * " << dst->second.stride
           << ", warpInGroup() - 1, kProducerWarps - 1);\n";
    return success();
  }
  return error(op) << "internal error: not a memory operation";
}

LogicalResult Emitter::emitMakeTensorDesc(tt::MakeTensorDescOp op) {
  auto it = deviceMaps.find(op);
  if (it == deviceMaps.end())
    return error(op) << "internal error: tensor descriptor without a slot";
  const DeviceMap &m = it->second;
  if (op.getShape().size() != 2)
    return error(op) << "only rank-2 device-side tensor descriptors are "
                        "supported";
  APInt one;
  if (!matchPattern(op.getStrides()[1], m_ConstantInt(&one)) || one != 1)
    return error(op) << "the innermost stride of a tensor descriptor must be "
                        "the constant 1";
  Type elem =
      cast<tt::TensorDescType>(op.getType()).getBlockType().getElementType();
  std::string map = fresh("tmap");
  std::string args =
      map + ", descStaging + " +
      (region == Region::Producer ? std::string("0")
                                  : std::string("128 * (1 + wg)")) +
      ", " + lookup(op.getBase()) + ", (uint32_t)" + lookup(op.getShape()[1]) +
      ", (uint32_t)" + lookup(op.getShape()[0]) + ", (uint64_t)" +
      lookup(op.getStrides()[0]) + " * " + std::to_string(elemBytes(elem));
  // The swizzle span is a template argument where it is not the device
  // library's default of 128 bytes.
  std::string make =
      "makeTensorMap2D<TensorMapElem::" + m.elem + ", " +
      std::to_string(m.box[1]) + ", " + std::to_string(m.box[0]) +
      (m.spanBytes != 128 ? ", " + std::to_string(m.spanBytes) : "") + ">(" +
      args + ");\n";
  if (region == Region::Producer) {
    line() << "CUtensorMap *" << map << " = &tawaTensorMaps[smId()][" << m.slot
           << "];\n";
    line() << "// TMA loads still in flight may read the map being replaced: "
              "wait for\n";
    line() << "// the last fill of every slot first.\n";
    for (auto &[bar, fb] : fillParity) {
      line() << "for (int s = 0; s < " << fb.depth << "; ++s)\n";
      line() << "  if (" << fb.name << "[s] >= 0)\n";
      line() << "    mbarrierWait(&" << bars[bar].name << "[s], " << fb.name
             << "[s]);\n";
    }
    line() << make;
    line() << "if (leader)\n";
    line() << "  tensorMapAcquire(" << map << ");\n";
  } else if (region == Region::Consumer) {
    line() << "CUtensorMap *" << map << " = &tawaTensorMaps[smId()][" << m.slot
           << " + wg];\n";
    line() << "if (tid < 32) {\n";
    line() << "  // Stores through the map being replaced must be done.\n";
    line() << "  if (tid == 0)\n";
    line() << "    tmaStoreWait<0>();\n";
    line() << "  __syncwarp();\n";
    line() << "  " << make;
    line() << "  if (tid == 0)\n";
    line() << "    tensorMapAcquire(" << map << ");\n";
    line() << "}\n";
  } else {
    return error(op) << "a tensor descriptor built outside the partitions";
  }
  names[op.getResult()] = map;
  return success();
}

} // namespace cuda
} // namespace tawa
