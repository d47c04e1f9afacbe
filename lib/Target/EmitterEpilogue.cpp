//===- EmitterEpilogue.cpp - stores and the deferred epilogue ----------===//
//
// Accumulators stored through TMA in 64 x 64 boxes staged in swizzled
// shared memory, and the deferred epilogue that stores part of a tile
// during the next tile's products.
//
//===----------------------------------------------------------------------===//

#include "Emitter.h"

#include "tawa/Transforms/Partition.h"

using namespace mlir;

namespace tawa {
namespace cuda {

void Emitter::emitStagedBoxStore(llvm::function_ref<void()> stage,
                                 StringRef desc, const std::string &col,
                                 const std::string &row) {
  line() << "uint8_t *buf = " << epiBufferExpr() << ";\n";
  line() << "if (tid == 0)\n";
  line() << "  " << epiWaitRead() << "\n";
  line() << "namedBarrierSync(1 + wg, kWarpGroupThreads);\n";
  stage();
  line() << "fenceProxyAsyncShared();\n";
  line() << "namedBarrierSync(1 + wg, kWarpGroupThreads);\n";
  line() << "if (tid == 0) {\n";
  line() << "  tmaStore2D(" << desc << ", buf, " << col << ", " << row
         << ");\n";
  line() << "  tmaStoreCommit();\n";
  line() << "}\n";
  line() << "++epiBox;\n";
}

LogicalResult Emitter::emitStore(tt::DescriptorStoreOp op) {
  if (region != Region::Consumer)
    return error(op) << "stores are only supported in the consumer partition";
  auto it = converted.find(op.getSrc());
  if (it == converted.end())
    return error(op) << "only stores of an accumulator converted to f16/bf16 "
                        "(arith.truncf) are supported";
  if (op.getIndices().size() != 2)
    return error(op) << "only rank-2 stores are supported";
  const Acc &acc = it->second.acc;
  StringRef cty = elemNames(it->second.elem)->first;
  usesEpilogue = true;
  int64_t boxes = acc.cols / kEpiBoxCols;
  std::string desc = descRef(op.getDesc());
  std::string row0 = lookup(op.getIndices()[0]),
              col0 = lookup(op.getIndices()[1]);
  // Through tawa.clip_rows: a fragment's boxes are stored only where its
  // first row is below the limit (RowBlockWidening's limits sit a multiple
  // of 64 rows from the block's first row). The condition is the same for
  // the whole group, so its named barriers stay matched.
  std::string limit;
  if (auto clip = op.getDesc().getDefiningOp<ClipRowsOp>()) {
    if (deferredEpi && deferredEpi->segmentOf.count(op))
      return error(op) << "internal error: a clipped store the deferred "
                          "epilogue planned for";
    limit = lookup(clip.getLimit());
  }
  auto openGuard = [&] {
    if (!limit.empty()) {
      line() << "if (row < " << limit << ") { // rows past it are not ours\n";
      ++indent;
    }
  };
  auto closeGuard = [&] {
    if (!limit.empty()) {
      --indent;
      line() << "}\n";
    }
  };
  if (acc.cols < kEpiBoxCols) {
    // A tile narrower than a box: each 64-row fragment is one box of the
    // tile's width in the 64- or 32-byte swizzle (never deferred).
    if (deferredEpi && deferredEpi->segmentOf.count(op))
      return error(op) << "internal error: a narrow store the deferred "
                          "epilogue planned for";
    line() << "// Epilogue: one box of 64 x " << acc.cols << " per fragment ("
           << (acc.cols * 2 >= 32
                   ? std::to_string(acc.cols * 2) + "-byte swizzle"
                   : std::to_string(acc.cols * 2) + "-byte rows, unswizzled")
           << "), staged through "
           << (epiBuffers == 2 ? "two swizzled buffers" : "one swizzled buffer")
           << "; a buffer is rewritten only after the TMA store that read it "
              "did.\n";
    line() << "#pragma unroll\n";
    line() << "for (int f = 0; f < " << acc.frags << "; ++f) {\n";
    ++indent;
    line() << "const int32_t row = " << row0 << " + (cg * " << acc.frags
           << " + f) * 64;\n";
    openGuard();
    emitStagedBoxStore(
        [&] {
          line() << "storeAccNarrowSwizzled<" << cty << ">(" << acc.name
                 << "[f], buf);\n";
        },
        desc, col0, "row");
    closeGuard();
    --indent;
    line() << "}\n";
    return success();
  }
  int64_t deferred = 0;
  unsigned segment = 0;
  if (deferredEpi) {
    auto seg = deferredEpi->segmentOf.find(op);
    if (deferredEpi->frags != acc.frags || deferredEpi->boxes != boxes ||
        seg == deferredEpi->segmentOf.end() ||
        deferredEpi->segmentDescs[seg->second] != op.getDesc())
      return error(op) << "internal error: a store the deferred epilogue "
                          "did not plan for";
    segment = seg->second;
    deferred = deferredEpi->deferred;
    line() << "// The previous tile's boxes still pending (its K loop had "
              "fewer steps than boxes).\n";
    emitDeferredFlushSegment(/*all=*/true, segment, /*chained=*/false);
  }
  std::string x = pendSuffix(segment);
  line() << "// Epilogue: " << boxes
         << " boxes of 64 x 64 per fragment, "
            "staged through "
         << (epiBuffers == 2 ? "two swizzled buffers" : "one swizzled buffer")
         << "; a buffer is rewritten only after the TMA store that read it "
            "did.";
  if (deferred)
    body << " Boxes " << boxes - deferred << " to " << boxes - 1
         << " are packed into pendC" << x << " for the next tile's K loop.";
  body << "\n";
  line() << "#pragma unroll\n";
  line() << "for (int f = 0; f < " << acc.frags << "; ++f) {\n";
  ++indent;
  line() << "const int32_t row = " << row0 << " + (cg * " << acc.frags
         << " + f) * 64;\n";
  if (deferred == boxes)
    line() << "(void)row;\n";
  openGuard();
  for (int64_t b = boxes - deferred; b < boxes; ++b)
    line() << "packAccBox<" << cty << ", " << b << ", "
           << (b - (boxes - deferred)) * 16 << ">(" << acc.name << "[f], pendC"
           << x << "[f]);\n";
  for (int64_t b = 0; b < boxes - deferred; ++b) {
    line() << "{\n";
    ++indent;
    emitStagedBoxStore(
        [&] {
          line() << "storeAccBoxSwizzled<" << cty << ", " << b << ">("
                 << acc.name << "[f], buf);\n";
        },
        desc, col0 + " + " + std::to_string(b * kEpiBoxCols), "row");
    --indent;
    line() << "}\n";
  }
  closeGuard();
  --indent;
  line() << "}\n";
  if (deferred) {
    line() << "pendRow" << x << " = " << row0 << ";\n";
    line() << "pendCol" << x << " = " << col0 << ";\n";
    line() << "pendBoxes" << x << " = " << acc.frags * deferred << ";\n";
  }
  return success();
}

void Emitter::planDeferredEpilogue(WarpSpecializeOp ws) {
  deferredEpi.reset();
  if (options.epilogueOverlap == 0 || ws.getPartitions().size() != 2)
    return;
  mlir::Region &consumer = ws.getPartitions()[1];
  SmallVector<tt::DescriptorStoreOp> stores;
  bool rebuiltMaps = false;
  consumer.walk([&](Operation *op) {
    if (isa<tt::MakeTensorDescOp>(op))
      if (auto loop = op->getParentOfType<LoopLikeOpInterface>())
        rebuiltMaps |= consumer.isAncestor(loop->getParentRegion());
    if (auto store = dyn_cast<tt::DescriptorStoreOp>(op))
      stores.push_back(store);
  });
  // A map the consumer rebuilds in its loops could change under a pending
  // store; one built once, before them (the pointer-tile rewrite's, kept out
  // of the tile loop), cannot.
  if (rebuiltMaps || stores.empty())
    return;
  // Two stores never run in the same iteration when they sit in different
  // branches of one scf.if (the versions of a K loop).
  auto exclusive = [](Operation *a, Operation *b) {
    for (Operation *p = a->getParentOp(); p; p = p->getParentOp()) {
      auto ifOp = dyn_cast<scf::IfOp>(p);
      if (!ifOp || !ifOp->isAncestor(b))
        continue;
      bool aThen = ifOp.getThenRegion().isAncestor(a->getParentRegion());
      bool bThen = ifOp.getThenRegion().isAncestor(b->getParentRegion());
      return aThen != bThen;
    }
    return false;
  };
  DeferredEpilogue plan;
  SmallVector<Operation *> placed;
  for (tt::DescriptorStoreOp store : stores) {
    auto trunc = store.getSrc().getDefiningOp<arith::TruncFOp>();
    auto arg = dyn_cast<BlockArgument>(store.getDesc());
    bool hostMap = arg && arg.getOwner() == &func.getBody().front();
    bool deviceMap = store.getDesc().getDefiningOp<tt::MakeTensorDescOp>();
    auto type = dyn_cast<RankedTensorType>(store.getSrc().getType());
    if (!trunc || !(hostMap || deviceMap) || !type || type.getRank() != 2 ||
        type.getShape()[0] % (64 * groups) != 0 ||
        type.getShape()[1] % kEpiBoxCols != 0)
      return;
    // Deferred boxes are stored by the products of the next tile: the store
    // must sit in a tile loop whose body runs a K loop of products.
    auto loop = store->getParentOfType<LoopLikeOpInterface>();
    if (!loop || !consumer.isAncestor(loop->getParentRegion()))
      return;
    bool kLoop = false;
    loop->walk([&](DotAsyncOp dot) {
      auto inner = dot->getParentOfType<LoopLikeOpInterface>();
      kLoop |= inner && inner != loop && loop->isProperAncestor(inner);
    });
    if (!kLoop)
      return;
    int64_t frags = type.getShape()[0] / (64 * groups);
    int64_t boxes = type.getShape()[1] / kEpiBoxCols;
    if (plan.frags && (plan.frags != frags || plan.boxes != boxes))
      return;
    plan.frags = frags;
    plan.boxes = boxes;
    // The first segment no store of the same iteration uses.
    llvm::SmallBitVector used(placed.size() + 1);
    for (Operation *other : placed)
      if (!exclusive(store, other))
        used.set(plan.segmentOf[other]);
    unsigned segment = used.find_first_unset();
    Value desc = store.getDesc();
    if (segment == plan.segmentDescs.size())
      plan.segmentDescs.push_back(desc);
    else if (plan.segmentDescs[segment] != desc)
      return;
    plan.segmentOf[store] = segment;
    placed.push_back(store);
  }
  // Default: half of a fragment's boxes, at most 64 registers (16 per
  // packed box) over all segments. Measured on the H100 (128 x 256 tiles, 5
  // interleaved rounds, M = N = 8192, runs 16 and 17): deferring 2 of 4
  // boxes against 0 gained 1.6-4 % at K = 512-2048 and 0.1-3.4 % at K =
  // 4096 (fp16, bf16, fp8), nothing at 16384; deferring all 4 was 0.7 %
  // slower than 2 (geomean of 9 points; docs/PERFORMANCE.md, "The deferred
  // epilogue").
  //
  // Under --schedule=optimal the solved K loop says how many cycles per
  // iteration the consumers' CUDA cores are free
  // (tawa.schedule_consumer_slack): where staging one box does not fit
  // there, none is deferred. Where it fits, how many to defer depends on
  // the products queued on the tensor cores while a box is staged, which the
  // steady-state schedule does not see: with one product in flight every box
  // the registers hold (measured at fixed clocks: 1.6-2.5 % fewer cycles than
  // half at K = 1024), with two the default's half (measured above). Where
  // the two groups take turns issuing their products (attention), the queue
  // also holds the other group's: each group's products in flight count
  // twice. (Measured on attention, runs 184 and 193: deferring every box
  // there ran at 0.978-1.004 of half.)
  int64_t segments = plan.segmentDescs.size();
  int64_t fit = std::max<int64_t>(0, 64 / (16 * plan.frags * segments));
  std::optional<int64_t> slack;
  int64_t inFlight = 0;
  bool turns = false;
  for (Operation *store : placed)
    store->getParentOfType<LoopLikeOpInterface>()->walk([&](scf::ForOp loop) {
      if (auto a =
              loop->getAttrOfType<IntegerAttr>("tawa.schedule_consumer_slack"))
        slack = slack ? std::min(*slack, a.getInt()) : a.getInt();
      for (auto wait : loop.getBody()->getOps<DotWaitOp>())
        inFlight = std::max<int64_t>(inFlight, wait.getPendings());
      for (auto dot : loop.getBody()->getOps<DotAsyncOp>())
        turns |= dot->hasAttr(kIssueTurnAttr);
    });
  int64_t queued = turns && groups >= 2 ? groups * inFlight : inFlight;
  int64_t half = (plan.boxes + 1) / 2;
  int64_t request = options.epilogueOverlap >= 0 ? options.epilogueOverlap
                    : slack ? (*slack < kEpilogueBoxCycles ? 0
                               : queued >= 2               ? half
                                                           : plan.boxes)
                            : half;
  plan.deferred = std::min(
      {plan.boxes, request, options.epilogueOverlap < 0 ? fit : plan.boxes});
  if (plan.deferred > 0)
    deferredEpi = plan;
}

void Emitter::emitDeferredFlush(bool all) {
  unsigned n = deferredEpi->segmentDescs.size();
  for (unsigned seg = 0; seg < n; ++seg)
    emitDeferredFlushSegment(all, seg, /*chained=*/!all && seg > 0);
}

void Emitter::emitDeferredFlushSegment(bool all, unsigned segment,
                                       bool chained) {
  const DeferredEpilogue &d = *deferredEpi;
  int64_t total = d.frags * d.deferred;
  std::string x = pendSuffix(segment);
  line() << (chained ? "else " : "") << (all ? "while" : "if") << " (pendBoxes"
         << x << " != 0) {\n";
  ++indent;
  line() << "const uint32_t p = " << total << " - pendBoxes" << x << ";\n";
  emitStagedBoxStore(
      [&] {
        line() << "switch (p) {\n";
        for (int64_t p = 0; p < total; ++p)
          line() << "case " << p << ": storePackedBoxSwizzled<"
                 << (p % d.deferred) * 16 << ">(pendC" << x << "["
                 << p / d.deferred << "], buf); break;\n";
        line() << "}\n";
      },
      descRef(d.segmentDescs[segment]),
      "pendCol" + x + " + (int32_t)(" + std::to_string(d.boxes - d.deferred) +
          " + p % " + std::to_string(d.deferred) + ") * " +
          std::to_string(kEpiBoxCols),
      "pendRow" + x + " + (int32_t)(cg * " + std::to_string(d.frags) +
          " + p / " + std::to_string(d.deferred) + ") * 64");
  line() << "--pendBoxes" << x << ";\n";
  --indent;
  line() << "}\n";
}

/// A store through a tensor of pointers in a register layout (attention's
/// row statistics): each element from one thread. The four lanes of a quad
/// hold the same rows of a row vector and every thread of every group the
/// same columns of a column vector, so only one of them stores.
LogicalResult Emitter::emitPointerStore(tt::StoreOp op) {
  if (region != Region::Consumer)
    return error(op) << "pointer stores are only supported in the consumer "
                        "partition";
  if (!isa<RankedTensorType>(op.getValue().getType()))
    return error(op) << "scalar stores are not supported by CUDA emission";
  FailureOr<Lay> lay = layoutOf(op.getPtr(), op);
  if (failed(lay))
    return failure();
  FailureOr<std::string> ptr = at(op.getPtr(), *lay, op);
  FailureOr<std::string> value = at(op.getValue(), *lay, op);
  if (failed(ptr) || failed(value))
    return failure();
  std::string mask;
  if (op.getMask()) {
    FailureOr<std::string> m = at(op.getMask(), *lay, op);
    if (failed(m))
      return failure();
    mask = *m;
  }
  auto type = cast<RankedTensorType>(op.getValue().getType());
  Reg shape;
  shape.lay = *lay;
  if (*lay == Lay::Acc || *lay == Lay::Row)
    shape.frags = type.getShape()[0] / (64 * groups);
  if (*lay == Lay::Acc || *lay == Lay::Col)
    shape.cols = type.getShape().back();
  std::string owner = *lay == Lay::Row   ? "tid % 4 == 0"
                      : *lay == Lay::Col ? "cg == 0 && tid < 4"
                                         : "";
  if (!owner.empty())
    line() << "if (" << owner << ") {\n";
  ++indent;
  emitRegLoops(shape);
  line() << "    " << (mask.empty() ? "" : "if (" + mask + ") ") << "*(" << *ptr
         << ") = " << *value << ";\n";
  --indent;
  if (!owner.empty())
    line() << "}\n";
  return success();
}

} // namespace cuda
} // namespace tawa
