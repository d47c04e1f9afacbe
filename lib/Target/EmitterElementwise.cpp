//===- EmitterElementwise.cpp - element-wise and scalar arithmetic -----===//
//
// Element-wise operations on scalars and on register tensors (fully
// unrolled loops over the layout's registers), from one table of C++
// expressions per operation.
//
//===----------------------------------------------------------------------===//

#include "Emitter.h"

#include "tawa/Transforms/Partition.h"

using namespace mlir;

namespace tawa {
namespace cuda {

/// The C++ expression of one element of `op`'s result from the expressions
/// of its operands' elements: shared by scalars and register tensors.
/// Returns "" for operations it does not know.
std::string elementExpr(Operation *op, ArrayRef<std::string> x,
                        StringRef ctype) {
  Type resElem = getElementTypeOrSelf(op->getResult(0).getType());
  auto elemOf = [&](unsigned i) {
    return getElementTypeOrSelf(op->getOperand(i).getType());
  };
  // Unsigned views of an operand of its own width.
  auto uns = [&](unsigned i) {
    std::string u = elemOf(i).isInteger(64) ? "uint64_t" : "uint32_t";
    return "(" + u + ")" + x[i];
  };
  auto bin = [&](StringRef sym) {
    return "(" + x[0] + " " + sym.str() + " " + x[1] + ")";
  };
  auto cast = [&](const std::string &e) { return "(" + ctype.str() + ")" + e; };
  // 16-bit floats take part in arithmetic as float.
  auto toFloat = [&](unsigned i) {
    Type t = elemOf(i);
    if (t.isF16())
      return "__half2float(" + x[i] + ")";
    if (t.isBF16())
      return "__bfloat162float(" + x[i] + ")";
    return x[i];
  };
  auto fromFloat = [&](const std::string &e) {
    if (resElem.isF16())
      return "__float2half_rn(" + e + ")";
    if (resElem.isBF16())
      return "__float2bfloat16_rn(" + e + ")";
    return e;
  };
  return llvm::TypeSwitch<Operation *, std::string>(op)
      .Case<arith::AddIOp, arith::AddFOp>([&](auto) { return bin("+"); })
      .Case<arith::SubIOp, arith::SubFOp>([&](auto) { return bin("-"); })
      .Case<arith::MulIOp>([&](auto) { return bin("*"); })
      .Case<arith::MulFOp>([&](auto) {
        // A product marked rounded on its own (kRoundedProductAttr).
        if (op->hasAttr(kRoundedProductAttr) && resElem.isF32())
          return "__fmul_rn(" + x[0] + ", " + x[1] + ")";
        return bin("*");
      })
      .Case<arith::DivSIOp>([&](auto) { return bin("/"); })
      .Case<arith::DivFOp>([&](auto) {
        // Triton's f32 division, div.full.f32 (math.cuh): without the IEEE
        // slow path, and one reciprocal per divisor.
        if (resElem.isF32())
          return "divFull(" + x[0] + ", " + x[1] + ")";
        return bin("/");
      })
      .Case<arith::RemSIOp>([&](auto) { return bin("%"); })
      .Case<arith::AndIOp>([&](auto) { return bin("&"); })
      .Case<arith::OrIOp>([&](auto) { return bin("|"); })
      .Case<arith::XOrIOp>([&](auto) { return bin("^"); })
      .Case<arith::ShLIOp>([&](auto) { return bin("<<"); })
      .Case<arith::ShRSIOp>([&](auto) { return bin(">>"); })
      .Case<arith::NegFOp>([&](auto) { return "(-" + x[0] + ")"; })
      .Case<arith::DivUIOp>(
          [&](auto) { return cast("(" + uns(0) + " / " + uns(1) + ")"); })
      .Case<arith::RemUIOp>(
          [&](auto) { return cast("(" + uns(0) + " % " + uns(1) + ")"); })
      .Case<arith::ShRUIOp>(
          [&](auto) { return cast("(" + uns(0) + " >> " + uns(1) + ")"); })
      .Case<arith::MinSIOp>(
          [&](auto) { return "min(" + x[0] + ", " + x[1] + ")"; })
      .Case<arith::MaxSIOp>(
          [&](auto) { return "max(" + x[0] + ", " + x[1] + ")"; })
      .Case<arith::MinUIOp>(
          [&](auto) { return cast("min(" + uns(0) + ", " + uns(1) + ")"); })
      .Case<arith::MaxUIOp>(
          [&](auto) { return cast("max(" + uns(0) + ", " + uns(1) + ")"); })
      .Case<arith::CeilDivSIOp>(
          [&](auto) { return "tawaCeilDiv(" + x[0] + ", " + x[1] + ")"; })
      .Case<arith::FloorDivSIOp>(
          [&](auto) { return "tawaFloorDiv(" + x[0] + ", " + x[1] + ")"; })
      .Case<arith::MaximumFOp, arith::MaxNumFOp>(
          [&](auto) { return "fmaxf(" + x[0] + ", " + x[1] + ")"; })
      .Case<arith::MinimumFOp, arith::MinNumFOp>(
          [&](auto) { return "fminf(" + x[0] + ", " + x[1] + ")"; })
      .Case<arith::ExtSIOp, arith::TruncIOp, arith::SIToFPOp, arith::FPToSIOp>(
          [&](auto) { return cast(x[0]); })
      .Case<arith::ExtUIOp>([&](auto) {
        return elemOf(0).isInteger(1) ? cast(x[0]) : cast(uns(0));
      })
      .Case<arith::ExtFOp, arith::TruncFOp, tt::FpToFpOp>(
          [&](auto) { return fromFloat(toFloat(0)); })
      // The MUFU unit's approximations, as Triton lowers f32 exp2 and exp
      // (math.cuh); softmax's throughput depends on them.
      .Case<math::Exp2Op>([&](auto) { return "exp2Approx(" + x[0] + ")"; })
      .Case<math::ExpOp>([&](auto) { return "expApprox(" + x[0] + ")"; })
      .Case<math::LogOp>([&](auto) { return "logf(" + x[0] + ")"; })
      .Case<math::Log2Op>([&](auto) { return "log2f(" + x[0] + ")"; })
      .Case<math::SqrtOp>([&](auto) { return "sqrtf(" + x[0] + ")"; })
      .Case<math::AbsFOp>([&](auto) { return "fabsf(" + x[0] + ")"; })
      .Case<arith::SelectOp>(
          [&](auto) { return "(" + x[0] + " ? " + x[1] + " : " + x[2] + ")"; })
      .Case<tt::AddPtrOp>([&](auto) { return "(" + x[0] + " + " + x[1] + ")"; })
      .Case<tt::IntToPtrOp>([&](auto) {
        return "reinterpret_cast<" + ctype.str() + ">(" + x[0] + ")";
      })
      .Case<tt::PtrToIntOp>(
          [&](auto) { return "reinterpret_cast<int64_t>(" + x[0] + ")"; })
      .Case<arith::CmpIOp>([&](arith::CmpIOp cmp) {
        using P = arith::CmpIPredicate;
        switch (cmp.getPredicate()) {
        case P::eq:
          return bin("==");
        case P::ne:
          return bin("!=");
        case P::slt:
          return bin("<");
        case P::sle:
          return bin("<=");
        case P::sgt:
          return bin(">");
        case P::sge:
          return bin(">=");
        case P::ult:
          return "(" + uns(0) + " < " + uns(1) + ")";
        case P::ule:
          return "(" + uns(0) + " <= " + uns(1) + ")";
        case P::ugt:
          return "(" + uns(0) + " > " + uns(1) + ")";
        case P::uge:
          return "(" + uns(0) + " >= " + uns(1) + ")";
        }
        return std::string();
      })
      .Case<arith::CmpFOp>([&](arith::CmpFOp cmp) {
        // Ordered predicates are false on NaN, as C++ comparisons are.
        using P = arith::CmpFPredicate;
        switch (cmp.getPredicate()) {
        case P::OEQ:
          return bin("==");
        case P::OGT:
          return bin(">");
        case P::OGE:
          return bin(">=");
        case P::OLT:
          return bin("<");
        case P::OLE:
          return bin("<=");
        case P::UNE:
          return bin("!=");
        default:
          return std::string();
        }
      })
      .Default([&](Operation *) { return std::string(); });
}

LogicalResult Emitter::emitScalarArith(Operation *op) {
  if (op->getNumResults() != 1)
    return error(op) << "unsupported operation '" << op->getName() << "'";
  Value res = op->getResult(0);
  FailureOr<std::string> type = scalarType(res.getType(), op->getLoc());
  if (failed(type))
    return failure();
  std::string expr;
  if (auto c = dyn_cast<arith::ConstantOp>(op)) {
    if (auto i = dyn_cast<IntegerAttr>(c.getValue())) {
      if (res.getType().isInteger(1))
        expr = i.getValue().isZero() ? "false" : "true";
      else if (res.getType().isInteger(64))
        expr = "int64_t(" + std::to_string(i.getInt()) + "ll)";
      else
        expr = std::to_string(i.getInt());
    } else if (auto f = dyn_cast<FloatAttr>(c.getValue())) {
      expr = floatLiteral(f);
    } else {
      return error(op) << "unsupported constant";
    }
  } else {
    SmallVector<std::string> operands;
    for (Value v : op->getOperands())
      operands.push_back(lookup(v));
    if (auto load = dyn_cast<tt::LoadOp>(op)) {
      expr = "*(" + operands[0] + ")";
      if (load.getMask())
        expr = "(" + operands[1] + " ? " + expr + " : " +
               (load.getOther() ? operands[2] : *type + "(0)") + ")";
    } else {
      expr = elementExpr(op, operands, *type);
    }
  }
  if (expr.empty())
    return error(op) << "unsupported operation '" << op->getName() << "'";
  line() << "const " << *type << " " << bind(res) << " = " << expr << ";\n";
  return success(!hadError);
}

LogicalResult Emitter::emitTensorOp(Operation *op) {
  if (region != Region::Consumer)
    return error(op) << "register tensors are only supported in the "
                        "consumer partition";
  Value res = op->getResult(0);
  if (isa<arith::ConstantOp, tt::SplatOp>(op))
    return success(); // materialized where used
  if (auto range = dyn_cast<tt::MakeRangeOp>(op)) {
    FailureOr<Lay> lay = layoutOf(res, op);
    if (failed(lay))
      return failure();
    if (*lay == Lay::Acc)
      return error(op) << "a 1-D range in the accumulator layout";
    Reg r;
    r.lay = *lay;
    r.rangeStart = std::to_string(range.getStart());
    int64_t n = cast<RankedTensorType>(res.getType()).getShape()[0];
    r.frags = n / (64 * groups);
    r.cols = n;
    if (*lay == Lay::Row && n % (64 * groups) != 0)
      return error(op) << "a row vector of " << n
                       << " elements does not split into 64-row fragments "
                          "over "
                       << groups << " consumer group(s)";
    regs[res] = r;
    return success();
  }
  if (isa<tt::ExpandDimsOp, tt::BroadcastOp, tt::ReshapeOp>(op)) {
    // The threads' elements stay where they are; only the shape changes.
    Value src = op->getOperand(0);
    if (succeeded(splatOf(src)))
      return success();
    // Copies first: inserting `res` may grow the map and move what a
    // reference into it (or an iterator) points to.
    if (accs.count(src)) {
      Acc acc = accs.lookup(src);
      accs[res] = acc;
      return success();
    }
    auto it = regs.find(src);
    if (it == regs.end())
      return error(op) << "operand has no register layout";
    Reg r = it->second;
    regs[res] = r;
    return success();
  }
  return emitElementwise(op);
}

/// Whether `op` is computed inside its only user's loop instead of its own.
/// Only in accumulator layout, for pure element-wise arithmetic whose one
/// user (element-wise, accumulator layout, not a conversion staged by a
/// store) follows it in the same block with nothing but element-wise
/// arithmetic in between, and not in a block that issues products (the
/// software-pipelined loops of attention keep their schedule as written).
bool isPureArith(Operation *op) {
  return isa<arith::ArithDialect, math::MathDialect>(op->getDialect()) &&
         op->getNumRegions() == 0 && isPure(op);
}

bool Emitter::fusesIntoUser(Operation *op) {
  const auto isArith = isPureArith;
  if (!isArith(op) || op->getNumResults() != 1 ||
      !op->getResult(0).hasOneUse() || layoutAttrOf(op->getResult(0)) != "acc")
    return false;
  Operation *user = *op->getResult(0).getUsers().begin();
  if (user->getBlock() != op->getBlock() || !isArith(user) ||
      user->getNumResults() != 1 || layoutAttrOf(user->getResult(0)) != "acc" ||
      isa<arith::TruncFOp, arith::ExtFOp>(user))
    return false;
  // Moving the computation to the user must not move it past anything
  // that could change its operands; a slot's release (an mbarrier arrive)
  // changes no register (an epilogue operand read from a slot into
  // registers is released before it is combined), nor does a splat.
  for (Operation *o = op->getNextNode(); o && o != user; o = o->getNextNode())
    if (!isArith(o) && !isa<MBarrierArriveOp, tt::SplatOp>(o))
      return false;
  for (Operation &o : *op->getBlock())
    if (isa<tt::DotOp, DotAsyncOp>(o))
      return false;
  return true;
}

Operation *Emitter::fusedInto(Operation *op) {
  while (op->getNumResults() == 1 && fusedExprs.count(op->getResult(0)))
    op = *op->getResult(0).getUsers().begin();
  return op;
}

LogicalResult Emitter::emitElementwise(Operation *op) {
  Value res = op->getResult(0);
  auto type = cast<RankedTensorType>(res.getType());
  FailureOr<Lay> lay = layoutOf(res, op);
  if (failed(lay))
    return failure();
  Type elem = type.getElementType();
  FailureOr<std::string> ctype = scalarType(elem, op->getLoc());
  if (failed(ctype))
    return failure();
  int64_t frags = 0, cols = 0;
  if (*lay == Lay::Acc) {
    if (type.getRank() != 2)
      return error(op) << "an accumulator-layout tensor must be 2-D";
    frags = type.getShape()[0] / (64 * groups);
    cols = type.getShape()[1];
  } else if (*lay == Lay::Row) {
    frags = type.getShape()[0] / (64 * groups);
  } else {
    cols = type.getShape().back();
  }
  SmallVector<std::string> x;
  for (Value v : op->getOperands()) {
    FailureOr<std::string> e = at(v, *lay, op);
    if (failed(e))
      return failure();
    x.push_back(*e);
  }
  std::string expr;
  if (auto load = dyn_cast<tt::LoadOp>(op)) {
    expr = "*(" + x[0] + ")";
    if (load.getMask())
      expr = "(" + x[1] + " ? " + expr + " : " +
             (load.getOther() ? x[2] : *ctype + "(0)") + ")";
  } else {
    expr = elementExpr(op, x, *ctype);
  }
  if (expr.empty())
    return error(op) << "unsupported tensor operation '" << op->getName()
                     << "'";
  if (*lay == Lay::Acc && fusesIntoUser(op)) {
    fusedExprs[res] = "(" + expr + ")";
    return success();
  }

  Reg target;
  if (*lay == Lay::Acc && elem.isF32()) {
    // Update an accumulator in place when this op is its only reader (the
    // ops fused into it count as this op), so that a rescaled accumulator
    // stays the register array wgmma writes.
    auto onlyReader = [&](Value v) {
      return llvm::all_of(v.getUsers(), [&](Operation *u) {
        return u == op || fusedInto(u) == op;
      });
    };
    std::optional<Acc> into;
    for (Value v : op->getOperands())
      if (accs.count(v) && onlyReader(v))
        into = accs.lookup(v);
    // Values read by the ops fused into this one, too.
    SmallVector<Value> work(op->getOperands());
    while (!into && !work.empty()) {
      Value v = work.pop_back_val();
      if (accs.count(v) && onlyReader(v))
        into = accs.lookup(v);
      if (Operation *def = v.getDefiningOp(); def && fusedExprs.count(v))
        work.append(def->operand_begin(), def->operand_end());
    }
    if (!into)
      into = newAcc(frags, cols);
    target.lay = Lay::Acc;
    target.array = into->name;
    target.frags = frags;
    target.cols = cols;
    accs[res] = *into;
  } else {
    FailureOr<Reg> r = declareReg(*lay, type, op);
    if (failed(r))
      return failure();
    target = *r;
    regs[res] = *r;
  }
  if (auto read = boxedReads.lookup(op)) {
    // One loop per box of the deferred read, right after that box arrives
    // (emitSmemReadBoxes): columns [64 j, 64 j + 64) are entries
    // [32 j, 32 j + 32) of each fragment.
    const Reg &c = regs[read.getResult()];
    const int64_t boxes = read.getBoxes();
    const int64_t perBox = target.cols / 2 / boxes;
    for (int64_t j = 0; j < boxes; ++j) {
      emitBoxRead(read, c, j);
      line() << "#pragma unroll\n";
      line() << "for (int f = 0; f < " << target.frags << "; ++f)\n";
      line() << "#pragma unroll\n";
      line() << "  for (int i = " << j * perBox << "; i < " << (j + 1) * perBox
             << "; ++i)\n";
      line() << "    " << target.array << regIndex(*lay) << " = " << expr
             << ";\n";
    }
    return success();
  }
  emitRegLoops(target);
  line() << "    " << target.array << regIndex(*lay) << " = " << expr << ";\n";
  return success();
}

/// The register array (`name[f]` is one fragment's float[N / 2]) of an
/// accumulator-layout tile: an accumulator chain or an element-wise result.
static std::optional<std::pair<std::string, int64_t>>
fragmentArray(const DenseMap<Value, Acc> &accs,
              const DenseMap<Value, Reg> &regs, Value v) {
  if (auto acc = accs.find(v); acc != accs.end())
    return std::make_pair(acc->second.name, acc->second.cols);
  if (auto r = regs.find(v);
      r != regs.end() && r->second.lay == Lay::Acc && !r->second.array.empty())
    return std::make_pair(r->second.array, r->second.cols);
  return std::nullopt;
}

LogicalResult Emitter::emitReduce(tt::ReduceOp op) {
  if (region != Region::Consumer)
    return error(op) << "reductions are only supported in the consumer "
                        "partition";
  if (op->getNumOperands() != 1 || op->getNumResults() != 1)
    return error(op) << "only reductions of one tensor are supported";
  auto type = dyn_cast<RankedTensorType>(op->getOperand(0).getType());
  auto axis = op->getAttrOfType<IntegerAttr>("axis");
  if (!type || type.getRank() != 2 || !type.getElementType().isF32() || !axis ||
      axis.getInt() != 1)
    return error(op) << "only row reductions (axis 1) of f32 tiles are "
                        "supported by CUDA emission";
  FailureOr<Lay> lay = layoutOf(op->getResult(0), op);
  if (failed(lay))
    return failure();
  auto src = fragmentArray(accs, regs, op->getOperand(0));
  if (*lay != Lay::Row || !src)
    return error(op) << "a row reduction must read an accumulator-layout "
                        "tile and give a row vector";
  // The combiner: one operation of the region's two arguments.
  Block &combiner = op->getRegion(0).front();
  Operation *combine = nullptr;
  for (Operation &inner : combiner.without_terminator()) {
    if (combine)
      return error(op) << "a reduction's combiner must be one operation";
    combine = &inner;
  }
  if (!combine || combine->getNumOperands() != 2 ||
      combine->getOperand(0) != combiner.getArgument(0) ||
      combine->getOperand(1) != combiner.getArgument(1) ||
      combiner.getTerminator()->getOperand(0) != combine->getResult(0))
    return error(op) << "a reduction's combiner must be one operation of its "
                        "two arguments";
  std::string expr = elementExpr(combine, {"a", "b"}, "float");
  if (expr.empty() ||
      !isa<arith::AddFOp, arith::MulFOp, arith::MaxNumFOp, arith::MaximumFOp,
           arith::MinNumFOp, arith::MinimumFOp>(combine))
    return error(op) << "unsupported reduction combiner '" << combine->getName()
                     << "'";
  FailureOr<Reg> out = declareReg(
      Lay::Row, cast<RankedTensorType>(op->getResult(0).getType()), op);
  if (failed(out))
    return failure();
  // Each thread combines its own columns of its two rows, then the quad
  // (the four lanes that share the rows) with two xor shuffles.
  line() << "#pragma unroll\n";
  line() << "for (int f = 0; f < " << out->frags << "; ++f)\n";
  if (pinsWait(op)) {
    // The sums a later wait for P.V is pinned after: pinned after the
    // thread's own sums, before the shuffles.
    line() << "  rowSumPinned(" << src->first << "[f], " << out->array
           << "[f], smem);\n";
  } else {
    line() << "  rowReduce(" << src->first << "[f], " << out->array
           << "[f], [](float a, float b) { return " << expr << "; });\n";
  }
  regs[op->getResult(0)] = *out;
  return success();
}

LogicalResult Emitter::emitARegConversion(Operation *op) {
  if (region != Region::Consumer)
    return error(op) << "register operands are only built in the consumer "
                        "partition";
  Value src = op->getOperand(0);
  auto type = cast<RankedTensorType>(op->getResult(0).getType());
  Type elem = type.getElementType();
  auto array = fragmentArray(accs, regs, src);
  if (!array || type.getRank() != 2)
    return error(op) << "only an accumulator-layout tile converts to a "
                        "register A operand";
  auto srcType = cast<RankedTensorType>(src.getType());
  if (!srcType.getElementType().isF32())
    return error(op) << "a register A operand converts from f32";
  int64_t frags = srcType.getShape()[0] / (64 * groups);
  int64_t k = srcType.getShape()[1];
  ARegTile a;
  a.array = fresh("areg");
  a.frags = frags;
  a.k = k;
  a.elem = elem;
  // A fragment's K columns in steps of the product's K: 16 (16-bit types:
  // a pairwise pack, fragment.cuh) or 32 (e4m3: packed and byte-permuted
  // across the quad).
  if (elem.isF16() || elem.isBF16()) {
    line() << "uint32_t " << a.array << aRegShape(a) << ";\n";
    line() << "#pragma unroll\n";
    line() << "for (int f = 0; f < " << frags << "; ++f)\n";
    line() << "  accToA16<" << (elem.isF16() ? "__half" : "__nv_bfloat16")
           << ">(" << array->first << "[f], " << a.array << "[f]);\n";
  } else if (isa<Float8E4M3FNType>(elem)) {
    if (k % 32 != 0)
      return error(op) << "an e4m3 register operand needs K a multiple of 32";
    line() << "uint32_t " << a.array << aRegShape(a) << ";\n";
    line() << "#pragma unroll\n";
    line() << "for (int f = 0; f < " << frags << "; ++f)\n";
    line() << "  accToAE4M3(" << array->first << "[f], " << a.array
           << "[f]);\n";
  } else {
    return error(op) << "a register A operand must be f16, bf16 or e4m3";
  }
  aRegs[op->getResult(0)] = a;
  return success();
}

std::string Emitter::aRegShape(const ARegTile &a) {
  int64_t mmaK = isa<Float8E4M3FNType>(a.elem) ? 32 : 16;
  return "[" + std::to_string(a.frags) + "][" + std::to_string(a.k / mmaK) +
         "][4]";
}

void Emitter::emitARegCopy(const ARegTile &dst, const ARegTile &src) {
  int64_t mmaK = isa<Float8E4M3FNType>(src.elem) ? 32 : 16;
  line() << "#pragma unroll\n";
  line() << "for (int f = 0; f < " << src.frags << "; ++f)\n";
  line() << "#pragma unroll\n";
  line() << "  for (int kk = 0; kk < " << src.k / mmaK << "; ++kk)\n";
  line() << "#pragma unroll\n";
  line() << "    for (int r = 0; r < 4; ++r)\n";
  line() << "      " << dst.array << "[f][kk][r] = " << src.array
         << "[f][kk][r];\n";
}

} // namespace cuda
} // namespace tawa
