//===- EmitterProducts.cpp - wgmma products ----------------------------===//
//
// Tensor-core products: dot_async as wgmma over shared-memory descriptors
// (and fused pairs of twice the width), dot_wait as wgmma.wait_group.
//
//===----------------------------------------------------------------------===//

#include "Emitter.h"

#include "tawa/Transforms/IssueTurns.h"
#include "tawa/Transforms/Partition.h"

using namespace mlir;

namespace tawa {
namespace cuda {

/// Programs paired along y (-tawa-program-pairing) leave, per K step, two
/// products with the same A slot whose B operands are the same slot of two
/// rings of one shape (as stored [K, N], or transposed from [N, K]):
///   %d0 = dot_async %a, [trans](slot %r0[%s]), %acc0
///   %w0 = dot_wait %d0        (its result only yielded)
///   %d1 = dot_async %a, [trans](slot %r1[%s]), %acc1
/// With the two rings laid out slot by slot side by side, the B tiles read
/// as one tile of twice the rows, and the products issue as one wgmma of
/// twice the width into both accumulators (wgmmaSSPair). Here: the
/// candidates and the ring layout; emitDotAsync checks the accumulators and
/// emits the pair as one product or, where they do not allow it, as two
/// (correct either way: the layout changes only the addresses).
void Emitter::findFusedProducts() {
  auto bSlot = [](Value b) -> SlotViewOp {
    if (auto trans = b.getDefiningOp<tt::TransOp>())
      return trans.getSrc().getDefiningOp<SlotViewOp>();
    return b.getDefiningOp<SlotViewOp>();
  };
  DenseMap<Value, Value> partnerOf; // both directions
  func.walk([&](DotAsyncOp d0) {
    auto w0 = dyn_cast_or_null<DotWaitOp>(d0->getNextNode());
    if (!w0 || w0.getInputs().size() != 1 || w0.getInputs()[0] != d0.getD() ||
        !llvm::all_of(w0->getUsers(),
                      [](Operation *u) { return isa<scf::YieldOp>(u); }))
      return;
    auto d1 = dyn_cast_or_null<DotAsyncOp>(w0->getNextNode());
    auto w1 = d1 ? dyn_cast_or_null<DotWaitOp>(d1->getNextNode()) : DotWaitOp();
    if (!w1 || w1.getInputs().size() != 1 || w1.getInputs()[0] != d1.getD() ||
        w1.getPendings() != w0.getPendings() || d0.getA() != d1.getA() ||
        d0.getType() != d1.getType())
      return;
    SlotViewOp s0 = bSlot(d0.getB()), s1 = bSlot(d1.getB());
    bool kMajor = d0.getB().getDefiningOp<tt::TransOp>() != nullptr;
    if (!s0 || !s1 || s0.getTransposed() || s1.getTransposed() ||
        s0.getSlot() != s1.getSlot() ||
        kMajor != (d1.getB().getDefiningOp<tt::TransOp>() != nullptr) ||
        s0.getBuffer() == s1.getBuffer() ||
        s0.getBuffer().getType() != s1.getBuffer().getType() ||
        !s0.getBuffer().getDefiningOp<SmemAllocOp>() ||
        !s1.getBuffer().getDefiningOp<SmemAllocOp>())
      return;
    // [N, K] tiles of one box along K (the two tiles' rows are then
    // contiguous), or [K, N] tiles (boxes of 64 columns, the second tile's
    // boxes follow the first's); N of each at most 128.
    auto tile = cast<RankedTensorType>(s0.getType());
    int64_t n = tile.getShape()[kMajor ? 0 : 1];
    std::optional<SmemSwizzle> swizzle = tileSwizzle(tile);
    if (!swizzle || (kMajor && swizzle->boxes != 1) || (n != 64 && n != 128) ||
        cast<RankedTensorType>(d0.getType()).getShape()[1] != n)
      return;
    Value r0 = s0.getBuffer(), r1 = s1.getBuffer();
    auto known0 = partnerOf.find(r0), known1 = partnerOf.find(r1);
    if ((known0 != partnerOf.end() && known0->second != r1) ||
        (known1 != partnerOf.end() && known1->second != r0))
      return;
    if (known0 == partnerOf.end()) {
      // The first ring of the pair in the layout is the one allocated first.
      bool r0First = r0.getDefiningOp()->isBeforeInBlock(r1.getDefiningOp());
      ringPartner[r0First ? r0 : r1] = r0First ? r1 : r0;
      partnerOf[r0] = r1;
      partnerOf[r1] = r0;
    }
    // Fused only where r0's slot comes first: its tile pointer starts the
    // tile of twice the rows.
    if (ringPartner.count(r0))
      fusedProducts[d0] = d1;
  });
}

LogicalResult Emitter::emitDotAsync(DotAsyncOp op) {
  if (region != Region::Consumer)
    return error(op) << "dot_async outside the consumer partition";
  if (!op.getC().hasOneUse())
    return error(op) << "the accumulator operand has other uses; wgmma "
                        "updates it in place";
  if (fusedAway.contains(op)) {
    // Issued with the product before it (findFusedProducts).
    accs[op.getD()] = accs.lookup(op.getC());
    if (deferredEpi && isLastProduct(op))
      emitDeferredFlush(/*all=*/false);
    return success();
  }
  // A product restarted from zero (attention's S = Q K^T) does not
  // materialize the zeros: its first K step runs with scale-d 0.
  bool fromZero = !accs.count(op.getC()) && isZeroSplat(op.getC());
  FailureOr<Acc> acc = accOf(op.getC(), op, /*fill=*/!fromZero);
  if (failed(acc))
    return failure();
  if (auto fused = fusedProducts.find(op); fused != fusedProducts.end())
    if (emitFusedProducts(op, fused->second, *acc))
      return success();
  auto lazy = lazyZero.find(acc->name);
  std::string scaleD = fromZero ? "kk > 0 ? 1 : 0" : "1";
  if (lazy != lazyZero.end())
    scaleD = "(" + lazy->second + " || kk > 0) ? 1 : 0";
  bool turn = op->hasAttr(kIssueTurnAttr) && groups >= 2;
  if (turn && !turnHeld) {
    // Wait until the previous group has issued its products (the first
    // turn is group 0's: the last group passes it at the start).
    line() << "namedBarrierSync(kIssueTurnBarrier + cg, 2 * "
              "kWarpGroupThreads); // this group's turn to issue\n";
    turnHeld = true;
  }
  if (failed(emitProductIssue(op, op.getA(), op.getB(), *acc, scaleD)))
    return failure();
  if (turn && passesTurnAfter(op)) {
    if (groups == 2)
      line() << "namedBarrierArrive(kIssueTurnBarrier + 1 - cg, 2 * "
                "kWarpGroupThreads); // the other group's turn\n";
    else
      line() << "namedBarrierArrive(kIssueTurnBarrier + (cg + 1) % " << groups
             << ", 2 * kWarpGroupThreads); // the next group's turn\n";
    turnHeld = false;
  }
  if (lazy != lazyZero.end())
    line() << lazy->second << " = true;\n";
  // After the last product a loop iteration issues: the tensor cores have
  // all of them queued while the box is staged.
  if (deferredEpi && isLastProduct(op))
    emitDeferredFlush(/*all=*/false);
  accs[op.getD()] = *acc;
  return success();
}

/// The B operand's descriptor at K step kk, in the loops of a product, for
/// the slot laid out as `swizzle` (tileSwizzle of the slot): a K-major tile
/// is boxes of span-byte rows along K (step kk starts in box
/// (kk * kBytes) / span at byte (kk * kBytes) % span of each row); a [K, N]
/// slot (128-byte spans: N is at least 64) is boxes of K rows x 64 columns,
/// LBO = one box, K steps of mmaK rows.
void Emitter::emitBDescriptor(const SmemTile &tb, const SmemSwizzle &swizzle,
                              bool kMajor, int64_t n, int64_t k, int64_t mmaK,
                              int64_t kBytes) {
  int64_t span = swizzle.spanBytes;
  int64_t stepsPerBox = span / kBytes;
  if (kMajor)
    line() << "    const uint64_t descB = descAdvance(descKMajor"
           << swizzle.suffix() << "(" << tb.ptr << " + (kk / " << stepsPerBox
           << ") * " << n * span << "), (kk % " << stepsPerBox << ") * "
           << kBytes << ");\n";
  else
    line() << "    const uint64_t descB = descAdvance(descMNMajor"
           << swizzle.suffix() << "(" << tb.ptr << ", " << k * span
           << "), kk * " << mmaK * span << ");\n";
}

/// Issues the wgmmas of one product into `acc` and commits them as one
/// group: A and B from shared-memory ring slots.
LogicalResult Emitter::emitProductIssue(Operation *op, Value aValue,
                                        Value bValue, const Acc &acc,
                                        StringRef scaleD) {
  auto areg = aRegs.find(aValue);
  if (areg != aRegs.end())
    return emitProductIssueRS(op, areg->second, bValue, acc, scaleD);
  auto a = tiles.find(aValue), b = tiles.find(bValue);
  if (a == tiles.end() || b == tiles.end())
    return error(op) << "dot operands must be shared-memory ring slots (or, "
                        "A, a tile converted in registers)";
  const SmemTile &ta = a->second, &tb = b->second;
  Type elem = ta.type.getElementType();
  std::optional<StringRef> mma = mmaType(elem);
  if (!mma || tb.type.getElementType() != elem)
    return error(op) << "dot operands must both be f16, bf16 or e4m3";
  bool fp8 = isa<Float8E4M3FNType>(elem);
  int64_t eb = elemBytes(elem);
  // A is [M, K] as stored (K-major). B is K-major when it is the transpose
  // of an [N, K] slot, MN-major when the slot itself is [K, N] (16-bit
  // types only: fp8 wgmma reads K-major operands).
  bool bKMajor = tb.transposed;
  // A is MN-major when it is the transpose of a [K, M] slot (a tile
  // contiguous along M): boxes of K rows x 64 columns, one per 64-row
  // fragment for 16-bit types.
  bool aMNMajor = ta.transposed;
  int64_t k = ta.type.getShape()[aMNMajor ? 0 : 1];
  int64_t aRows = ta.type.getShape()[aMNMajor ? 1 : 0];
  int64_t bK = bKMajor ? tb.type.getShape()[1] : tb.type.getShape()[0];
  int64_t bN = bKMajor ? tb.type.getShape()[0] : tb.type.getShape()[1];
  if (aMNMajor && fp8)
    return error(op) << "fp8 products need a K-major A operand (A stored as "
                        "[M, K])";
  if (!bKMajor && fp8)
    return error(op) << "fp8 products need a K-major B operand (B stored as "
                        "[N, K] and transposed in the kernel)";
  // Both operands as TMA laid them out (tileSwizzle): A's rows are K
  // (K-major) or M (MN-major), B's K (K-major) or N (MN-major).
  std::optional<SmemSwizzle> aSwizzle = tileSwizzle(ta.type),
                             bSwizzle = tileSwizzle(tb.type);
  int64_t mmaK = fp8 ? 32 : 16;
  if (bK != k || k % mmaK != 0 || !aSwizzle || !bSwizzle)
    return error(op) << "operand tiles must share K and have rows of 32 or 64 "
                        "bytes or a multiple of 128 bytes";
  // Any MN-major B swizzle is read (descMNMajorSw128 over boxes of 128-byte
  // spans, Sw64 / Sw32 for rows of N = 32 / 16 at 16 bits); an MN-major A
  // has rows of M >= 64, a multiple of 128 bytes.
  if (aMNMajor && aSwizzle->spanBytes != 128)
    return error(op) << "an MN-major A operand needs rows of a multiple of "
                        "128 bytes (M of at least 64)";
  if (aRows != acc.frags * 64 * groups || bN != acc.cols)
    return error(op) << "operand tiles do not match the accumulator";
  int64_t kBytes = mmaK * eb;
  int64_t aSpan = aSwizzle->spanBytes;
  // K-major tiles are boxes of span-byte rows along K: step kk starts in
  // box (kk * kBytes) / span at byte (kk * kBytes) % span of each row.
  int64_t stepsPerBox = aSpan / kBytes;
  line() << "wgmmaFence();\n";
  line() << "#pragma unroll\n";
  line() << "for (int f = 0; f < " << acc.frags << "; ++f) {\n";
  line() << "#pragma unroll\n";
  line() << "  for (int kk = 0; kk < " << k / mmaK << "; ++kk) {\n";
  if (aMNMajor)
    line() << "    const uint64_t descA = descAdvance(descMNMajor"
           << aSwizzle->suffix() << "(" << ta.ptr << " + (cg * " << acc.frags
           << " + f) * " << k * aSpan << ", " << k * aSpan << "), kk * "
           << mmaK * aSpan << ");\n";
  else
    line() << "    const uint64_t descA = descAdvance(descKMajor"
           << aSwizzle->suffix() << "(" << ta.ptr << " + (kk / " << stepsPerBox
           << ") * " << aRows * aSpan << " + (cg * " << acc.frags << " + f) * "
           << 64 * aSpan << "), (kk % " << stepsPerBox << ") * " << kBytes
           << ");\n";
  emitBDescriptor(tb, *bSwizzle, bKMajor, bN, k, mmaK, kBytes);
  line() << "    wgmmaSS<" << acc.cols << ", " << *mma << ", "
         << (aMNMajor ? 1 : 0) << ", " << (bKMajor ? 0 : 1) << ">(" << acc.name
         << "[f], descA, descB, " << scaleD << ");\n";
  line() << "  }\n";
  line() << "}\n";
  line() << "wgmmaCommit();\n";
  return success();
}

/// The same with A in registers (layout a_reg: attention's P in P V), B
/// from a ring slot, described as emitProductIssue describes it.
LogicalResult Emitter::emitProductIssueRS(Operation *op, const ARegTile &a,
                                          Value bValue, const Acc &acc,
                                          StringRef scaleD) {
  auto b = tiles.find(bValue);
  if (b == tiles.end())
    return error(op) << "the B operand of a product must be a shared-memory "
                        "ring slot";
  const SmemTile &tb = b->second;
  Type elem = tb.type.getElementType();
  std::optional<StringRef> mma = mmaType(elem);
  if (!mma || a.elem != elem)
    return error(op) << "dot operands must both be f16, bf16 or e4m3";
  bool fp8 = isa<Float8E4M3FNType>(elem);
  int64_t eb = elemBytes(elem);
  bool bKMajor = tb.transposed;
  int64_t k = a.k;
  int64_t bK = bKMajor ? tb.type.getShape()[1] : tb.type.getShape()[0];
  int64_t bN = bKMajor ? tb.type.getShape()[0] : tb.type.getShape()[1];
  if (!bKMajor && fp8)
    return error(op) << "fp8 products need a K-major B operand (B stored as "
                        "[N, K] and transposed in the kernel)";
  std::optional<SmemSwizzle> bSwizzle = tileSwizzle(tb.type);
  int64_t mmaK = fp8 ? 32 : 16;
  if (bK != k || k % mmaK != 0 || !bSwizzle)
    return error(op) << "operand tiles must share K, and B have rows of 32 or "
                        "64 bytes or a multiple of 128 bytes";
  if (a.frags != acc.frags || bN != acc.cols)
    return error(op) << "operand tiles do not match the accumulator";
  int64_t kBytes = mmaK * eb;
  line() << "wgmmaFence();\n";
  line() << "#pragma unroll\n";
  line() << "for (int f = 0; f < " << acc.frags << "; ++f) {\n";
  line() << "#pragma unroll\n";
  line() << "  for (int kk = 0; kk < " << k / mmaK << "; ++kk) {\n";
  emitBDescriptor(tb, *bSwizzle, bKMajor, bN, k, mmaK, kBytes);
  line() << "    wgmmaRS<" << acc.cols << ", " << *mma << ", "
         << (bKMajor ? 0 : 1) << ">(" << acc.name << "[f], " << a.array
         << "[f][kk], descB, " << scaleD << ");\n";
  line() << "  }\n";
  line() << "}\n";
  line() << "wgmmaCommit();\n";
  return success();
}

/// A synchronous tt.dot (attention's products before a pipeline makes them
/// asynchronous): issue, commit, wait for it. A zero-splat accumulator is
/// not materialized: the first K step runs with scale-d 0.
LogicalResult Emitter::emitDot(tt::DotOp op) {
  if (region != Region::Consumer)
    return error(op) << "tt.dot outside the consumer partition";
  Value c = op.getC();
  if (accs.count(c) && !c.hasOneUse())
    return error(op) << "the accumulator operand has other uses; wgmma "
                        "updates it in place";
  bool fromZero = !accs.count(c) && isZeroSplat(c);
  FailureOr<Acc> chain = accOf(c, op, /*fill=*/!fromZero);
  if (failed(chain))
    return failure();
  const Acc acc = *chain;
  std::string scaleD = fromZero ? "kk > 0 ? 1 : 0" : "1";
  if (failed(emitProductIssue(op, op.getA(), op.getB(), acc, scaleD)))
    return failure();
  line() << "wgmmaWait<0>();\n";
  line() << "#pragma unroll\n";
  line() << "for (int f = 0; f < " << acc.frags << "; ++f)\n";
  line() << "  fenceFragment(" << acc.name << "[f]);\n";
  accs[op.getD()] = acc;
  return success();
}

/// A run of turn-taking products ends at this one when no other follows it
/// in its block before a wait or a nested region (tawa/Transforms/IssueTurns.h:
/// the CPU interpreter runs the same runs).
bool Emitter::passesTurnAfter(DotAsyncOp op) {
  return issueTurnRunEndsAfter(op);
}

bool Emitter::isLastProduct(DotAsyncOp op) {
  for (Operation *next = op->getNextNode(); next; next = next->getNextNode())
    if (isa<DotAsyncOp>(next))
      return false;
  return true;
}

bool Emitter::emitFusedProducts(DotAsyncOp first, DotAsyncOp second,
                                const Acc &acc0) {
  // Both accumulators must be carried by the same loop: a splat would start
  // the second chain here, before its own product, and with both bound at
  // the loop's entry their lazy-zero flags (scale-d 0 for the first
  // product) are reset together, and set together after each pair.
  auto c0 = dyn_cast<BlockArgument>(first.getC());
  auto c1 = dyn_cast<BlockArgument>(second.getC());
  auto acc1It = accs.find(second.getC());
  if (!c0 || !c1 || c0.getOwner() != c1.getOwner() || acc1It == accs.end() ||
      !second.getC().hasOneUse())
    return false;
  const Acc acc1 = acc1It->second;
  auto lazy0 = lazyZero.find(acc0.name), lazy1 = lazyZero.find(acc1.name);
  bool lazyBoth = lazy0 != lazyZero.end() && lazy1 != lazyZero.end();
  bool lazyNone = lazy0 == lazyZero.end() && lazy1 == lazyZero.end();
  auto a = tiles.find(first.getA()), b = tiles.find(first.getB());
  if (acc0.frags != 1 || acc1.frags != 1 || acc0.cols != acc1.cols ||
      !(lazyBoth || lazyNone) || a == tiles.end() || b == tiles.end())
    return false;
  Type elem = a->second.type.getElementType();
  std::optional<StringRef> mma = mmaType(elem);
  bool bKMajor = b->second.transposed;
  // A is MN-major where it is the transpose of a [K, M] slot (16-bit
  // types; one box of K rows x 64 columns per group, as emitProductIssue
  // reads it).
  bool aMNMajor = a->second.transposed;
  if (!mma || b->second.type.getElementType() != elem ||
      ((!bKMajor || aMNMajor) && isa<Float8E4M3FNType>(elem)))
    return false;
  int64_t eb = elemBytes(elem);
  int64_t k = a->second.type.getShape()[aMNMajor ? 0 : 1];
  int64_t aRows = a->second.type.getShape()[aMNMajor ? 1 : 0];
  // A (and a K-major B) of one box along K: K steps stay inside its rows.
  std::optional<SmemSwizzle> aSwizzle = tileSwizzle(a->second.type),
                             bSwizzle = tileSwizzle(b->second.type);
  if (!aSwizzle || !bSwizzle || (!bKMajor && bSwizzle->spanBytes != 128) ||
      aRows != 64 * groups ||
      (aMNMajor ? aSwizzle->spanBytes != 128 : aSwizzle->boxes != 1))
    return false;
  int64_t mmaK = isa<Float8E4M3FNType>(elem) ? 32 : 16;
  int64_t kBytes = mmaK * eb;
  // Equal flags (above): the first's stands for both.
  std::string scaleD =
      lazyBoth ? "(" + lazy0->second + " || kk > 0) ? 1 : 0" : "1";
  line() << "// Two products sharing A, their B tiles side by side: one "
            "wgmma of N = "
         << 2 * acc0.cols << ".\n";
  line() << "wgmmaFence();\n";
  line() << "#pragma unroll\n";
  line() << "for (int kk = 0; kk < " << k / mmaK << "; ++kk) {\n";
  if (aMNMajor)
    line() << "  const uint64_t descA = descAdvance(descMNMajor"
           << aSwizzle->suffix() << "(" << a->second.ptr << " + cg * "
           << k * aSwizzle->spanBytes << ", " << k * aSwizzle->spanBytes
           << "), kk * " << mmaK * aSwizzle->spanBytes << ");\n";
  else
    line() << "  const uint64_t descA = descAdvance(descKMajor"
           << aSwizzle->suffix() << "(" << a->second.ptr << " + cg * "
           << 64 * aSwizzle->spanBytes << "), kk * " << kBytes << ");\n";
  if (bKMajor)
    line() << "  const uint64_t descB = descAdvance(descKMajor"
           << bSwizzle->suffix() << "(" << b->second.ptr << "), kk * " << kBytes
           << ");\n";
  else
    line() << "  const uint64_t descB = descAdvance(descMNMajor"
           << bSwizzle->suffix() << "(" << b->second.ptr << ", "
           << k * bSwizzle->spanBytes << "), kk * "
           << mmaK * bSwizzle->spanBytes << ");\n";
  line() << "  wgmmaSSPair<" << 2 * acc0.cols << ", " << *mma << ", "
         << (aMNMajor ? 1 : 0) << ", " << (bKMajor ? 0 : 1) << ">(" << acc0.name
         << "[0], " << acc1.name << "[0], descA, descB, " << scaleD << ");\n";
  line() << "}\n";
  line() << "wgmmaCommit();\n";
  if (lazyBoth) {
    line() << lazy0->second << " = true;\n";
    line() << lazy1->second << " = true;\n";
  }
  accs[first.getD()] = acc0;
  // The first product's wait and the second product emit nothing: one
  // commit group per pair, waited for at the second's wait.
  fusedAway.insert(first->getNextNode());
  fusedAway.insert(second);
  return true;
}

/// The row sum of an exponential tile X computed before `wait` in its
/// block, where X is converted to a register A operand after `wait` in the
/// same block (attention's P, whose registers the waited P.V product reads):
/// the value to pin the wait after. Null if there is none.
static Value rowSumToPinAfter(DotWaitOp wait) {
  Block *block = wait->getBlock();
  for (Operation *next = wait->getNextNode(); next;
       next = next->getNextNode()) {
    // f16/bf16 (truncf) or e4m3 (fp_to_fp) register operands.
    if (!isa<arith::TruncFOp, tt::FpToFpOp>(next) ||
        layoutAttrOf(next->getResult(0)) != "a_reg")
      continue;
    Operation *exp = next->getOperand(0).getDefiningOp();
    if (!exp || exp->getBlock() != block || !exp->isBeforeInBlock(wait) ||
        !isa<math::Exp2Op, math::ExpOp>(exp))
      continue;
    for (Operation *user : exp->getResult(0).getUsers()) {
      auto reduce = dyn_cast<tt::ReduceOp>(user);
      if (reduce && reduce->getBlock() == block &&
          reduce->isBeforeInBlock(wait) &&
          isa_and_nonnull<arith::AddFOp>(tt::getSingleCombiner(reduce)))
        return reduce->getResult(0);
    }
  }
  return Value();
}

bool Emitter::pinsWait(Operation *reduce) {
  if (!options.softmaxOverlap || region != Region::Consumer)
    return false;
  for (Operation *next = reduce->getNextNode(); next;
       next = next->getNextNode())
    if (auto wait = dyn_cast<DotWaitOp>(next))
      if (rowSumToPinAfter(wait) == reduce->getResult(0))
        return true;
  return false;
}

LogicalResult Emitter::emitDotWait(DotWaitOp op) {
  if (region != Region::Consumer)
    return error(op) << "dot_wait outside the consumer partition";
  if (fusedAway.contains(op)) {
    // Waited for with the second of its pair (emitFusedProducts); the
    // result is only yielded.
    accs[op.getOutputs()[0]] = accs.lookup(op.getInputs()[0]);
    return success();
  }
  line() << "wgmmaWait<" << op.getPendings() << ">();\n";
  for (auto [in, out] : llvm::zip(op.getInputs(), op.getOutputs())) {
    if (!in.hasOneUse())
      return error(op) << "a waited accumulator must have no other uses";
    FailureOr<Acc> acc = accOf(in, op);
    if (failed(acc))
      return failure();
    accs[out] = *acc;
    // Ordinary reads of the registers must not be hoisted above the wait.
    bool readLater = llvm::any_of(out.getUsers(), [](Operation *u) {
      return !isa<scf::YieldOp, DotAsyncOp>(u);
    });
    if (readLater) {
      line() << "#pragma unroll\n";
      line() << "for (int f = 0; f < " << acc->frags << "; ++f)\n";
      line() << "  fenceFragment(" << acc->name << "[f]);\n";
    }
  }
  return success();
}

} // namespace cuda
} // namespace tawa
