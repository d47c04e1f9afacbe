//===- EmitterFragments.cpp - register tensors and their layouts -------===//
//
// Register tensors in the layouts of -tawa-layout-assignment (DESIGN.md
// §2.3): accumulator arrays, row and column vectors, splats, and the
// index expressions of one element in each layout.
//
//===----------------------------------------------------------------------===//

#include "Emitter.h"

using namespace mlir;

namespace tawa {
namespace cuda {

/// The `tawa.layouts` entry of a value (its defining op's attribute, or its
/// loop's `tawa.iter_arg_layouts`), "" if none.
StringRef layoutAttrOf(Value v) {
  ArrayAttr arr;
  unsigned index = 0;
  if (auto res = dyn_cast<OpResult>(v)) {
    arr = res.getOwner()->getAttrOfType<ArrayAttr>("tawa.layouts");
    index = res.getResultNumber();
  } else {
    auto arg = cast<BlockArgument>(v);
    Operation *parent = arg.getOwner()->getParentOp();
    arr = parent ? parent->getAttrOfType<ArrayAttr>("tawa.iter_arg_layouts")
                 : nullptr;
    index = arg.getArgNumber() - (isa_and_nonnull<scf::ForOp>(parent) ? 1 : 0);
  }
  if (!arr || index >= arr.size())
    return "";
  auto str = dyn_cast<StringAttr>(arr[index]);
  return str ? str.getValue() : "";
}

Acc Emitter::newAcc(int64_t frags, int64_t cols) {
  for (auto *it = reusableAccs.begin(); it != reusableAccs.end(); ++it)
    if (it->frags == frags && it->cols == cols) {
      Acc acc = *it;
      reusableAccs.erase(it);
      return acc;
    }
  Acc acc{fresh("acc"), frags, cols};
  if (hoistedAccs)
    hoistedAccs->push_back(acc);
  else
    line() << "float " << acc.name << "[" << frags << "][" << cols / 2
           << "];\n";
  return acc;
}

//===----------------------------------------------------------------------===//
// Accumulators
//===----------------------------------------------------------------------===//

FailureOr<std::string> Emitter::splatOf(Value v) {
  // Shape changes of a splat are the same splat.
  while (isa_and_nonnull<tt::ExpandDimsOp, tt::BroadcastOp, tt::ReshapeOp>(
      v.getDefiningOp()))
    v = v.getDefiningOp()->getOperand(0);
  if (auto c = v.getDefiningOp<arith::ConstantOp>()) {
    if (auto splat = dyn_cast<SplatElementsAttr>(c.getValue())) {
      Attribute a = splat.getSplatValue<Attribute>();
      if (auto f = dyn_cast<FloatAttr>(a)) {
        if (f.getType().isF32())
          return floatLiteral(f);
        FailureOr<std::string> t = scalarType(f.getType(), c.getLoc());
        if (failed(t))
          return failure();
        return *t + "(" + floatLiteral(f) + ")";
      }
      if (auto i = dyn_cast<IntegerAttr>(a)) {
        if (i.getType().isInteger(1))
          return std::string(i.getValue().isZero() ? "false" : "true");
        return std::to_string(i.getValue().getSExtValue());
      }
    }
  }
  if (auto s = v.getDefiningOp<tt::SplatOp>())
    return lookup(s->getOperand(0));
  return failure();
}

FailureOr<Lay> Emitter::layoutOf(Value v, Operation *user) {
  StringRef l = layoutAttrOf(v);
  if (l == "acc")
    return Lay::Acc;
  if (l == "row")
    return Lay::Row;
  if (l == "col")
    return Lay::Col;
  error(user) << "a register tensor of layout '" << l
              << "' is not supported by CUDA emission (supported: acc, row, "
                 "col)";
  return failure();
}

/// Index expressions of one element, by the layout being iterated.
static std::string colIndex(Lay target) {
  return target == Lay::Acc ? "accCol(tid, i)"
                            : "(8 * (j >> 1) + 2 * (tid % 4) + (j & 1))";
}
static std::string rowIndex(Lay target, int64_t frags) {
  std::string base = "(cg * " + std::to_string(frags) + " + f) * 64 + ";
  return target == Lay::Acc
             ? "(" + base + "accRow(tid, i))"
             : "(" + base + "16 * (tid / 32) + (tid % 32) / 4 + 8 * h)";
}

FailureOr<std::string> Emitter::at(Value v, Lay target, Operation *user) {
  if (auto fused = fusedExprs.find(v); fused != fusedExprs.end()) {
    if (target != Lay::Acc) {
      error(user) << "internal error: a fused accumulator-layout value read "
                     "in a row or column layout";
      return failure();
    }
    return fused->second;
  }
  auto acc = accs.find(v);
  if (acc != accs.end()) {
    if (target != Lay::Acc) {
      error(user) << "an accumulator read in a row or column layout";
      return failure();
    }
    return acc->second.name + "[f][i]";
  }
  FailureOr<std::string> s = splatOf(v);
  if (succeeded(s))
    return s;
  auto it = regs.find(v);
  if (it == regs.end()) {
    error(user) << "operand has no register layout (it is not an "
                   "accumulator, a splat or a row/column vector)";
    return failure();
  }
  const Reg &r = it->second;
  if (r.array.empty()) {
    if (r.lay == Lay::Col && (target == Lay::Acc || target == Lay::Col))
      return "(" + r.rangeStart + " + " + colIndex(target) + ")";
    if (r.lay == Lay::Row && (target == Lay::Acc || target == Lay::Row))
      return "(" + r.rangeStart + " + " + rowIndex(target, r.frags) + ")";
  } else if (r.lay == target) {
    return r.array + (target == Lay::Acc   ? "[f][i]"
                      : target == Lay::Row ? "[f][h]"
                                           : "[j]");
  } else if (target == Lay::Acc) {
    return r.array + (r.lay == Lay::Col ? "[2 * (i >> 2) + (i & 1)]"
                                        : "[f][(i >> 1) & 1]");
  }
  error(user) << "cannot read a " << (r.lay == Lay::Row ? "row" : "column")
              << " vector in the " << (target == Lay::Row ? "row" : "column")
              << " layout (a layout conversion)";
  return failure();
}

FailureOr<Acc> Emitter::accOf(Value v, Operation *user, bool fill) {
  auto it = accs.find(v);
  if (it != accs.end())
    return it->second;
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (region != Region::Consumer || !type || type.getRank() != 2 ||
      !type.getElementType().isF32()) {
    error(user) << "only f32 rank-2 accumulators in the consumer partition "
                   "are supported";
    return failure();
  }
  int64_t rows = type.getShape()[0], cols = type.getShape()[1];
  if (rows % (64 * groups) != 0 ||
      !llvm::is_contained({8, 16, 32, 64, 128, 256}, cols)) {
    error(user) << "accumulator " << type << " does not split into 64-row "
                << "fragments over " << groups
                << " consumer group(s) with N in {8, 16, 32, 64, 128, 256}";
    return failure();
  }
  // Only splats start a chain; any other value must have come from one.
  FailureOr<std::string> init = splatOf(v);
  if (failed(init)) {
    error(user) << "accumulator value is not a splat or part of an "
                   "accumulator chain";
    return failure();
  }
  Acc acc = newAcc(rows / (64 * groups), cols);
  // Correct but slow: ptxas keeps at most ~232 registers per consumer thread.
  if (acc.frags * cols / 2 > 128)
    emitWarning(getUserLocation(user->getLoc()))
        << "CUDA emission: the accumulator takes " << acc.frags * cols / 2
        << " registers per consumer thread and will spill; use more consumer "
           "groups (--consumer-groups="
        << 2 * groups << ")";
  if (fill)
    emitFill(acc, *init);
  // A constant used twice starts two chains; only this use is bound.
  return acc;
}

std::string Emitter::regIndex(Lay lay) {
  return lay == Lay::Acc ? "[f][i]" : lay == Lay::Row ? "[f][h]" : "[j]";
}

FailureOr<Reg> Emitter::declareReg(Lay lay, RankedTensorType type,
                                   Operation *user, StringRef prefix) {
  FailureOr<std::string> ctype =
      scalarType(type.getElementType(), user->getLoc());
  if (failed(ctype))
    return failure();
  Reg r;
  r.lay = lay;
  r.array = fresh(prefix);
  if (lay == Lay::Acc || lay == Lay::Row) {
    if (type.getShape()[0] % (64 * groups) != 0) {
      error(user) << "a tensor of " << type.getShape()[0]
                  << " rows does not split into 64-row fragments over "
                  << groups << " consumer group(s)";
      return failure();
    }
    r.frags = type.getShape()[0] / (64 * groups);
  }
  if (lay == Lay::Acc || lay == Lay::Col)
    r.cols = type.getShape().back();
  line() << *ctype << " " << r.array;
  if (lay == Lay::Acc)
    body << "[" << r.frags << "][" << r.cols / 2 << "]";
  else if (lay == Lay::Row)
    body << "[" << r.frags << "][2]";
  else
    body << "[" << r.cols / 4 << "]";
  body << ";\n";
  return r;
}

void Emitter::emitRegLoops(const Reg &r) {
  line() << "#pragma unroll\n";
  if (r.lay == Lay::Col) {
    line() << "for (int j = 0; j < " << r.cols / 4 << "; ++j)\n";
    return;
  }
  line() << "for (int f = 0; f < " << r.frags << "; ++f)\n";
  line() << "#pragma unroll\n";
  if (r.lay == Lay::Acc)
    line() << "  for (int i = 0; i < " << r.cols / 2 << "; ++i)\n";
  else
    line() << "  for (int h = 0; h < 2; ++h)\n";
}

LogicalResult Emitter::emitRegCopy(const Reg &target, Value source,
                                   Operation *user) {
  FailureOr<std::string> x = at(source, target.lay, user);
  if (failed(x))
    return failure();
  emitRegLoops(target);
  line() << "    " << target.array << regIndex(target.lay) << " = " << *x
         << ";\n";
  return success();
}

LogicalResult Emitter::bindCarriedReg(Value init, Value arg, Value res,
                                      Operation *op, std::string &var) {
  FailureOr<Lay> lay = layoutOf(arg, op);
  if (failed(lay))
    return failure();
  FailureOr<Reg> r =
      declareReg(*lay, cast<RankedTensorType>(arg.getType()), op, "carried");
  if (failed(r) || failed(emitRegCopy(*r, init, op)))
    return failure();
  regs[arg] = *r;
  regs[res] = *r;
  var = r->array;
  return success();
}

LogicalResult Emitter::emitSmemLoad(SmemLoadOp op) {
  if (region != Region::Consumer)
    return error(op) << "a shared-memory tile is read into registers only "
                        "in the consumer partition";
  auto it = tiles.find(op.getTile());
  if (it == tiles.end())
    return error(op) << "only a ring slot's tile can be read into registers";
  const SmemTile &t = it->second;
  auto type = cast<RankedTensorType>(op.getType());
  FailureOr<Lay> lay = layoutOf(op.getResult(), op);
  if (failed(lay))
    return failure();
  if (*lay != Lay::Acc || type.getRank() != 2)
    return error(op) << "a tile loaded by TMA is read into registers only in "
                        "the accumulator layout (combined with an "
                        "accumulator), not as a row or column vector";
  std::optional<std::pair<StringRef, StringRef>> names =
      elemNames(type.getElementType());
  std::optional<SmemSwizzle> swizzle = tileSwizzle(t.type);
  // ldmatrix reads 16-bit elements; a box of the 128-byte swizzle holds 64
  // of them per row, the width loadAccBoxSwizzled reads.
  if (t.transposed || !names || elemBytes(type.getElementType()) != 2 ||
      !swizzle || swizzle->spanBytes != 128)
    return error(op) << "reading a tile loaded by TMA into the accumulator "
                        "layout needs 16-bit elements (f16, bf16), rows of a "
                        "multiple of 64 elements and no transpose; got "
                     << type;
  FailureOr<Reg> r = declareReg(Lay::Acc, type, op, "c");
  if (failed(r))
    return failure();
  const int64_t rows = type.getShape()[0];
  line() << "// " << t.ptr << " (" << swizzle->boxes << " boxes of " << rows
         << " rows x 128 bytes) read into the accumulator layout: this "
            "group's 64-row fragments, 64 columns per ldmatrix box.\n";
  line() << "#pragma unroll\n";
  line() << "for (int f = 0; f < " << r->frags << "; ++f) {\n";
  for (int64_t b = 0; b < swizzle->boxes; ++b)
    line() << "  loadAccBoxSwizzled<" << names->first << ", " << b << ">("
           << t.ptr << " + " << b * rows * 128 << " + (cg * " << r->frags
           << " + f) * " << 64 * 128 << ", " << r->array << "[f]);\n";
  line() << "}\n";
  regs[op.getResult()] = *r;
  return success();
}

/// The elementwise op whose loop reads a boxed read's registers, where the
/// read can be deferred into that loop box by box: its value flows, through
/// ops fused into their users (fusesIntoUser), into one accumulator-layout
/// op of the same block, with only element-wise arithmetic, splats and
/// slot releases before it (nothing that waits on the producer, which
/// fills box j + 1 only after box j's release).
Operation *Emitter::boxedReadUser(SmemReadBoxesOp op) {
  Value v = op.getResult();
  Operation *user = nullptr;
  while (v.hasOneUse()) {
    user = *v.getUsers().begin();
    if (user->getBlock() != op->getBlock() || user->getNumResults() != 1)
      return nullptr;
    if (!fusesIntoUser(user))
      break;
    v = user->getResult(0);
  }
  if (!user || !v.hasOneUse() || layoutAttrOf(user->getResult(0)) != "acc" ||
      !isa<arith::ArithDialect, math::MathDialect>(user->getDialect()) ||
      isa<arith::TruncFOp, arith::ExtFOp>(user))
    return nullptr;
  for (Operation *o = op->getNextNode(); o && o != user; o = o->getNextNode())
    if (!isPureArith(o) && !isa<MBarrierArriveOp, tt::SplatOp>(o))
      return nullptr;
  return user;
}

void Emitter::emitBoxRead(SmemReadBoxesOp op, const Reg &r, int64_t j) {
  MemRefType buffer = op.getBuffer().getType();
  const Ring &ring = rings.find(op.getBuffer())->second;
  const int64_t rows = buffer.getShape()[1], depth = buffer.getShape()[0];
  const int64_t slotBoxes = buffer.getShape()[2] * 2 / 128;
  std::string elem =
      elemNames(cast<RankedTensorType>(op.getType()).getElementType())
          ->first.str();
  line() << "{ // box " << j << " of " << op.getBoxes() << " of " << ring.name
         << ": ring position " << op.getBoxes() << " k + " << j << "\n";
  line() << "  const uint32_t pos = uint32_t(" << lookup(op.getPosition())
         << ") * " << op.getBoxes() << "u + " << j << "u;\n";
  line() << "  const uint32_t slot = pos % " << depth << "u;\n";
  line() << "  mbarrierWait(&" << bars[op.getFull()].name << "[slot], (pos / "
         << depth << "u) & 1u);\n";
  line() << "  #pragma unroll\n";
  line() << "  for (int f = 0; f < " << r.frags << "; ++f) {\n";
  for (int64_t b = 0; b < slotBoxes; ++b)
    line() << "    loadAccBoxSwizzled<" << elem << ", " << j * slotBoxes + b
           << ">(" << ring.name << " + slot * " << ring.stride << " + "
           << b * rows * 128 << " + (cg * " << r.frags << " + f) * " << 64 * 128
           << ", " << r.array << "[f]);\n";
  line() << "  }\n";
  // Every lane's ldmatrix has read the slot before lane 0 releases it.
  line() << "  __syncwarp();\n";
  line() << "  if (laneZero)\n";
  line() << "    mbarrierArrive(&" << bars[op.getEmpty()].name << "[slot]);\n";
  line() << "}\n";
}

LogicalResult Emitter::emitSmemReadBoxes(SmemReadBoxesOp op) {
  if (region != Region::Consumer)
    return error(op) << "a tile is read box by box only in the consumer "
                        "partition";
  if (!rings.count(op.getBuffer()))
    return error(op) << "read of an unknown ring";
  auto type = cast<RankedTensorType>(op.getType());
  MemRefType buffer = op.getBuffer().getType();
  auto slotType = RankedTensorType::get(buffer.getShape().drop_front(),
                                        type.getElementType());
  FailureOr<Lay> lay = layoutOf(op.getResult(), op);
  if (failed(lay))
    return failure();
  std::optional<SmemSwizzle> swizzle = tileSwizzle(slotType);
  if (*lay != Lay::Acc || !elemNames(type.getElementType()) ||
      elemBytes(type.getElementType()) != 2 || !swizzle ||
      swizzle->spanBytes != 128)
    return error(op) << "a tile read box by box goes into the accumulator "
                        "layout and needs 16-bit elements in 128-byte boxes; "
                        "got "
                     << type;
  FailureOr<Reg> r = declareReg(Lay::Acc, type, op, "c");
  if (failed(r))
    return failure();
  regs[op.getResult()] = *r;
  if (Operation *user = boxedReadUser(op)) {
    // Read box by box inside the user's loop (emitElementwise): box j's
    // registers die as they are combined, instead of all the tile's being
    // live across the waits, which ptxas cannot schedule past.
    line() << "// " << rings.find(op.getBuffer())->second.name
           << ": read box by box in the loop that combines it (below).\n";
    boxedReads[user] = op;
    return success();
  }
  for (int64_t j = 0, boxes = op.getBoxes(); j < boxes; ++j)
    emitBoxRead(op, *r, j);
  return success();
}

} // namespace cuda
} // namespace tawa
