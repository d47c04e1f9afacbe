//===- PointerTileDescriptors.cpp - pointer tiles as TMA descriptors -----===//
//
// The classic Triton GEMM addresses its tiles with tensors of pointers:
//
//   a_ptrs = a_ptr + offs_am[:, None] * stride_am + offs_k[None, :]
//   for k: a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BK, other=0)
//          a_ptrs += BK
//
// Each element's address is affine in its tile index: base + sum over the two
// dimensions of (start_d + i_d) * stride_d, with start_d a scalar affine in
// the program ids and the loop's iteration count. Such a load is a TMA box
// load of a global [E0, E1] tensor at coordinates (start_0, start_1), and a
// bounds mask (index < bound) is the box's out-of-bounds zero fill. This pass
// rewrites such loads (and masked stores) into tt.make_tensor_descriptor,
// created once at the function's entry, and tt.descriptor_load /
// tt.descriptor_store, so that the rest of tawa sees a TMA kernel. Anything
// it cannot prove is left as it is; a 2-D load that feeds a product and
// cannot be rewritten is reported at its line with the reason.
//
//===----------------------------------------------------------------------===//

#include "tawa/Transforms/Passes.h"
#include "tawa/Transforms/SourceLocation.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/MapVector.h"

#include <limits>

namespace tawa {
#define GEN_PASS_DEF_POINTERTILEDESCRIPTORS
#include "tawa/Transforms/Passes.h.inc"
} // namespace tawa

using namespace mlir;
using namespace tawa;

namespace {

/// A scalar integer: constant + sum of coefficient x atom. Atoms are opaque
/// SSA values (arguments, the loop's induction variable, anything that is
/// not a sum or a product by a constant).
struct Linear {
  int64_t constant = 0;
  llvm::MapVector<Value, int64_t> terms;

  static Linear ofConstant(int64_t c) {
    Linear l;
    l.constant = c;
    return l;
  }
  static Linear ofAtom(Value v) {
    Linear l;
    l.terms[v] = 1;
    return l;
  }
  void add(const Linear &o, int64_t scale = 1) {
    constant += scale * o.constant;
    for (auto &[v, c] : o.terms)
      terms[v] += scale * c;
    prune();
  }
  void scale(int64_t s) {
    constant *= s;
    for (auto &term : terms)
      term.second *= s;
    prune();
  }
  void prune() {
    llvm::MapVector<Value, int64_t> kept;
    for (auto &[v, c] : terms)
      if (c != 0)
        kept[v] = c;
    terms = std::move(kept);
  }
  bool isConstant() const { return terms.empty(); }
};

std::optional<int64_t> constantInt(Value v) {
  APInt value;
  if (matchPattern(v, m_ConstantInt(&value)))
    return value.getSExtValue();
  return std::nullopt;
}

/// The linear form of a scalar integer (never fails: unknown values are
/// atoms). Sign extensions are looked through (Triton's block pointers,
/// rewritten into pointer tiles by its front end, compute offsets in i64);
/// a loop-carried offset advanced by a constant each iteration is its
/// initial value plus a multiple of the induction variable.
Linear linearScalar(Value v) {
  if (std::optional<int64_t> c = constantInt(v))
    return Linear::ofConstant(*c);
  Operation *def = v.getDefiningOp();
  if (auto ext = dyn_cast_or_null<arith::ExtSIOp>(def))
    return linearScalar(ext.getIn());
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    auto forOp = dyn_cast<scf::ForOp>(arg.getOwner()->getParentOp());
    if (forOp && arg.getArgNumber() > 0) {
      unsigned i = arg.getArgNumber() - 1;
      auto add = forOp.getYieldedValues()[i].getDefiningOp<arith::AddIOp>();
      std::optional<int64_t> lb = constantInt(forOp.getLowerBound());
      std::optional<int64_t> step = constantInt(forOp.getStep());
      if (add && lb && *lb == 0 && step && *step > 0) {
        Value other = add.getLhs() == arg   ? add.getRhs()
                      : add.getRhs() == arg ? add.getLhs()
                                            : Value();
        std::optional<int64_t> by = other ? constantInt(other) : std::nullopt;
        if (by && *by % *step == 0) {
          Linear l = linearScalar(forOp.getInitArgs()[i]);
          Linear moved = Linear::ofAtom(forOp.getInductionVar());
          moved.scale(*by / *step);
          l.add(moved);
          return l;
        }
      }
    }
  }
  if (auto add = dyn_cast_or_null<arith::AddIOp>(def)) {
    Linear l = linearScalar(add.getLhs());
    l.add(linearScalar(add.getRhs()));
    return l;
  }
  if (auto sub = dyn_cast_or_null<arith::SubIOp>(def)) {
    Linear l = linearScalar(sub.getLhs());
    l.add(linearScalar(sub.getRhs()), -1);
    return l;
  }
  if (auto mul = dyn_cast_or_null<arith::MulIOp>(def)) {
    for (int side = 0; side < 2; ++side)
      if (std::optional<int64_t> c = constantInt(mul->getOperand(side))) {
        Linear l = linearScalar(mul->getOperand(1 - side));
        l.scale(*c);
        return l;
      }
  }
  return Linear::ofAtom(v);
}

/// A dimension's stride: factor x atom, or factor alone (no atom).
struct Stride {
  Value atom;
  int64_t factor = 1;
  bool isOne() const { return !atom && factor == 1; }
};

/// One dimension of an affine tile: element i of it is at coordinate
/// start + i (i in [0, extent)), optionally reduced mod `wrap`; it moves the
/// address by coordinate x stride.
struct Dim {
  bool present = false;
  Linear start;
  Value wrap;
  Stride stride;
};

/// An integer or pointer tensor of rank <= 2 whose element [i0, i1] is
/// base + uniform + sum_d coordinate_d x stride_d. `uniform` is a scalar
/// offset not yet attributed to a dimension (index vectors before their
/// stride is known; attributed when the form becomes a pointer tile).
struct Form {
  Value base; // pointer tiles only
  Dim dims[2];
  Linear uniform;
  int64_t rank = 0;
};

/// A bounds mask: per dimension, index vector start and bound (index <
/// bound), from cmpi slt of an index vector with a splat, conjoined.
struct MaskBound {
  bool present = false;
  Linear indexStart;
  Linear bound;
};

class Rewriter {
public:
  explicit Rewriter(tt::FuncOp func) : func(func) {}

  LogicalResult run() {
    SmallVector<Operation *> accesses;
    func.walk([&](Operation *op) {
      if (isa<tt::LoadOp, tt::StoreOp>(op))
        accesses.push_back(op);
    });
    bool rewrote = false;
    for (Operation *op : accesses) {
      std::string why;
      if (succeeded(rewrite(op, why))) {
        rewrote = true;
        continue;
      }
      auto load = dyn_cast<tt::LoadOp>(op);
      if (load && feedsProduct(load.getResult()))
        return emitError(getUserLocation(op->getLoc()))
               << "this tile load cannot become a TMA load: " << why;
    }
    if (rewrote)
      cleanUp();
    return success();
  }

private:
  tt::FuncOp func;
  /// Descriptors made so far, by a key of their operands.
  llvm::StringMap<Value> descriptors;

  static bool feedsProduct(Value v) {
    SmallVector<Value> work{v};
    llvm::SmallPtrSet<void *, 8> seen;
    while (!work.empty()) {
      Value x = work.pop_back_val();
      if (!seen.insert(x.getAsOpaquePointer()).second)
        continue;
      for (Operation *user : x.getUsers()) {
        if (isa<tt::DotOp>(user))
          return true;
        if (isa<tt::TransOp, arith::ExtFOp, arith::TruncFOp, tt::FpToFpOp>(
                user))
          work.push_back(user->getResult(0));
      }
    }
    return false;
  }

  //===--------------------------------------------------------------------===//
  // Forms
  //===--------------------------------------------------------------------===//

  /// The form of an integer index tensor or a pointer tensor.
  FailureOr<Form> formOf(Value v, std::string &why) {
    auto type = dyn_cast<RankedTensorType>(v.getType());
    if (!type || type.getRank() > 2) {
      why = "its addresses are not a 1-D or 2-D tensor";
      return failure();
    }
    Operation *def = v.getDefiningOp();
    Form f;
    f.rank = type.getRank();
    if (auto splat = dyn_cast_or_null<tt::SplatOp>(def)) {
      if (isa<tt::PointerType>(splat.getSrc().getType()))
        f.base = splat.getSrc();
      else
        f.uniform = linearScalar(splat.getSrc());
      return f;
    }
    if (auto cst = dyn_cast_or_null<arith::ConstantOp>(def)) {
      auto dense = dyn_cast<SplatElementsAttr>(cst.getValue());
      if (!dense || !dense.getElementType().isInteger()) {
        why = "an offset is a constant that is not the same everywhere";
        return failure();
      }
      f.uniform =
          Linear::ofConstant(dense.getSplatValue<APInt>().getSExtValue());
      return f;
    }
    if (auto range = dyn_cast_or_null<tt::MakeRangeOp>(def)) {
      f.dims[0].present = true;
      f.dims[0].start = Linear::ofConstant(range.getStart());
      return f;
    }
    if (auto ext = dyn_cast_or_null<arith::ExtSIOp>(def)) {
      FailureOr<Form> src = formOf(ext.getIn(), why);
      if (succeeded(src))
        src->rank = f.rank;
      return src;
    }
    if (auto bcast = dyn_cast_or_null<tt::BroadcastOp>(def)) {
      FailureOr<Form> src = formOf(bcast.getSrc(), why);
      if (failed(src))
        return failure();
      src->rank = f.rank;
      return src;
    }
    if (auto expand = dyn_cast_or_null<tt::ExpandDimsOp>(def)) {
      FailureOr<Form> src = formOf(expand.getSrc(), why);
      if (failed(src) || src->rank != 1 || f.rank != 2) {
        if (succeeded(src))
          why = "an index vector is expanded to a shape that is not 2-D";
        return failure();
      }
      // expand_dims(v, 1) is [n, 1]: v varies along dimension 0.
      Form g = *src;
      g.rank = 2;
      if (expand.getAxis() == 0) {
        g.dims[1] = g.dims[0];
        g.dims[0] = Dim();
      }
      return g;
    }
    if (isa_and_nonnull<arith::AddIOp, tt::AddPtrOp>(def)) {
      FailureOr<Form> lhs = formOf(def->getOperand(0), why);
      if (failed(lhs))
        return failure();
      FailureOr<Form> rhs = formOf(def->getOperand(1), why);
      if (failed(rhs))
        return failure();
      return sum(*lhs, *rhs, why);
    }
    if (auto mul = dyn_cast_or_null<arith::MulIOp>(def)) {
      for (int side = 0; side < 2; ++side) {
        FailureOr<Form> factor = formOf(mul->getOperand(side), why);
        if (failed(factor))
          return failure();
        if (hasDims(*factor) || factor->base)
          continue;
        FailureOr<Form> other = formOf(mul->getOperand(1 - side), why);
        if (failed(other))
          return failure();
        return scaled(*other, factor->uniform, why);
      }
      why = "an offset multiplies two index vectors";
      return failure();
    }
    if (auto rem = dyn_cast_or_null<arith::RemSIOp>(def)) {
      // (start + range) % bound: the tutorial's wrap of the rows past M.
      FailureOr<Form> lhs = formOf(rem.getLhs(), why);
      if (failed(lhs))
        return failure();
      auto boundSplat = rem.getRhs().getDefiningOp<tt::SplatOp>();
      if (f.rank != 1 || !boundSplat || !lhs->dims[0].present ||
          lhs->dims[0].wrap || !lhs->uniform.isConstant() ||
          lhs->uniform.constant != 0 || !lhs->dims[0].stride.isOne()) {
        why = "an index vector is reduced modulo something other than a "
              "scalar bound";
        return failure();
      }
      lhs->dims[0].wrap = boundSplat.getSrc();
      return lhs;
    }
    if (auto arg = dyn_cast<BlockArgument>(v))
      return loopCarried(arg, why);
    why = "an address depends on '" +
          (def ? def->getName().getStringRef().str() : std::string("?")) +
          "', which is not an affine index computation";
    return failure();
  }

  static bool hasDims(const Form &f) {
    return f.dims[0].present || f.dims[1].present;
  }

  /// An index vector (before any stride) folds its uniform part into its
  /// start; with a stride, uniform parts stay apart until attributed.
  FailureOr<Form> sum(Form a, const Form &b, std::string &why) {
    if (a.base && b.base) {
      why = "two pointers are added";
      return failure();
    }
    if (b.base)
      a.base = b.base;
    a.rank = std::max(a.rank, b.rank);
    for (int d = 0; d < 2; ++d) {
      if (a.dims[d].present && b.dims[d].present) {
        why = "an offset adds two index vectors along the same dimension";
        return failure();
      }
      if (b.dims[d].present)
        a.dims[d] = b.dims[d];
    }
    a.uniform.add(b.uniform);
    // splat(s) + make_range: the vector starts at s.
    if (!a.base && a.rank == 1 && a.dims[0].present && !a.dims[0].wrap &&
        a.dims[0].stride.isOne()) {
      a.dims[0].start.add(a.uniform);
      a.uniform = Linear();
    }
    return a;
  }

  FailureOr<Form> scaled(Form f, const Linear &by, std::string &why) {
    Stride s;
    if (by.isConstant()) {
      s.factor = by.constant;
    } else if (by.constant == 0 && by.terms.size() == 1) {
      s.atom = by.terms.front().first;
      s.factor = by.terms.front().second;
    } else {
      why = "a stride is neither a constant nor a constant times a scalar";
      return failure();
    }
    for (Dim &d : f.dims) {
      if (!d.present)
        continue;
      if (d.stride.atom && s.atom) {
        why = "a stride is a product of two scalars";
        return failure();
      }
      if (s.atom)
        d.stride.atom = s.atom;
      d.stride.factor *= s.factor;
    }
    if (!f.uniform.isConstant() && s.atom) {
      // (start + i) * stride with a scalar start: fold the start in first.
      why = "an offset multiplies a scalar start by a scalar stride";
      return failure();
    }
    if (s.atom) {
      int64_t c = f.uniform.constant * s.factor;
      f.uniform = Linear();
      if (c != 0)
        f.uniform.terms[s.atom] = c;
    } else {
      f.uniform.scale(s.factor);
    }
    return f;
  }

  /// A pointer tile carried by an scf.for and advanced by a uniform offset
  /// every iteration: its form at the iteration count t.
  FailureOr<Form> loopCarried(BlockArgument arg, std::string &why) {
    auto forOp = dyn_cast<scf::ForOp>(arg.getOwner()->getParentOp());
    if (!forOp || arg.getArgNumber() == 0) {
      why = "an address is a block argument that is not a loop-carried "
            "pointer tile";
      return failure();
    }
    unsigned i = arg.getArgNumber() - 1;
    FailureOr<Form> init = formOf(forOp.getInitArgs()[i], why);
    if (failed(init))
      return failure();
    auto advance = forOp.getYieldedValues()[i].getDefiningOp<tt::AddPtrOp>();
    if (!advance || advance.getPtr() != arg) {
      why = "a loop-carried pointer tile is not advanced by tt.addptr of "
            "itself";
      return failure();
    }
    FailureOr<Form> step = formOf(advance.getOffset(), why);
    if (failed(step))
      return failure();
    if (hasDims(*step) || step->base) {
      why = "a loop-carried pointer tile advances by different amounts per "
            "element";
      return failure();
    }
    for (auto &[atom, c] : step->uniform.terms)
      if (!isInvariant(atom, forOp)) {
        why = "a loop-carried pointer tile advances by an amount that "
              "changes in the loop";
        return failure();
      }
    // The iteration count as the induction variable: lower bound 0 and a
    // constant step that divides each coordinate's advance.
    std::optional<int64_t> lb = constantInt(forOp.getLowerBound());
    std::optional<int64_t> stepSize = constantInt(forOp.getStep());
    if (!lb || *lb != 0 || !stepSize || *stepSize <= 0) {
      why = "the loop that advances a pointer tile does not start at 0 with "
            "a constant step";
      return failure();
    }
    if (failed(attribute(*init, why)))
      return failure();
    Form perStep = *init;
    perStep.uniform = step->uniform;
    SmallVector<Linear, 2> advanceBy;
    if (failed(attributeTo(perStep, advanceBy, why)))
      return failure();
    Value iv = forOp.getInductionVar();
    for (int d = 0; d < 2; ++d) {
      Linear &a = advanceBy[d];
      if (a.isConstant() && a.constant == 0)
        continue;
      if (!a.isConstant() || a.constant % *stepSize != 0) {
        why = "a pointer tile's per-iteration advance is not a constant "
              "multiple of the loop step along one dimension";
        return failure();
      }
      Linear moved = Linear::ofAtom(iv);
      moved.scale(a.constant / *stepSize);
      init->dims[d].start.add(moved);
    }
    return init;
  }

  static bool isInvariant(Value v, Operation *loop) {
    if (auto arg = dyn_cast<BlockArgument>(v))
      return !loop->isAncestor(arg.getOwner()->getParentOp());
    return !loop->isAncestor(v.getDefiningOp());
  }

  /// Splits `f.uniform` into per-dimension coordinate shifts: a term
  /// c x atom goes to the dimension whose stride is that atom (c divisible
  /// by its factor), a constant to the dimension of stride 1.
  LogicalResult attributeTo(const Form &f, SmallVector<Linear, 2> &shift,
                            std::string &why) {
    shift.assign(2, Linear());
    auto dimOfAtom = [&](Value atom) -> int {
      for (int d = 0; d < 2; ++d)
        if (f.dims[d].present && f.dims[d].stride.atom == atom)
          return d;
      return -1;
    };
    for (auto &[atom, c] : f.uniform.terms) {
      int d = dimOfAtom(atom);
      if (d < 0 || c % f.dims[d].stride.factor != 0) {
        why = "a uniform offset is not a whole number of rows or columns";
        return failure();
      }
      shift[d].add(Linear::ofConstant(c / f.dims[d].stride.factor));
    }
    if (f.uniform.constant != 0) {
      int unit = -1, count = 0;
      for (int d = 0; d < 2; ++d)
        if (f.dims[d].present && f.dims[d].stride.isOne()) {
          unit = d;
          ++count;
        }
      if (count != 1) {
        why = "a constant offset cannot be attributed to one dimension";
        return failure();
      }
      shift[unit].add(Linear::ofConstant(f.uniform.constant));
    }
    return success();
  }

  LogicalResult attribute(Form &f, std::string &why) {
    SmallVector<Linear, 2> shift;
    if (failed(attributeTo(f, shift, why)))
      return failure();
    for (int d = 0; d < 2; ++d) {
      if (shift[d].isConstant() && shift[d].constant == 0)
        continue;
      if (f.dims[d].wrap) {
        why = "a wrapped index vector is shifted";
        return failure();
      }
      f.dims[d].start.add(shift[d]);
    }
    f.uniform = Linear();
    return success();
  }

  //===--------------------------------------------------------------------===//
  // Masks
  //===--------------------------------------------------------------------===//

  LogicalResult maskBounds(Value mask, MaskBound bounds[2], std::string &why) {
    Operation *def = mask.getDefiningOp();
    if (auto bcast = dyn_cast_or_null<tt::BroadcastOp>(def))
      return maskBounds(bcast.getSrc(), bounds, why);
    if (auto andOp = dyn_cast_or_null<arith::AndIOp>(def))
      return success(succeeded(maskBounds(andOp.getLhs(), bounds, why)) &&
                     succeeded(maskBounds(andOp.getRhs(), bounds, why)));
    if (auto cmp = dyn_cast_or_null<arith::CmpIOp>(def)) {
      // index >= 0 (block pointers' lower bound check): TMA reads zeros
      // below coordinate 0 as well.
      if (cmp.getPredicate() == arith::CmpIPredicate::sge) {
        FailureOr<Form> zero = formOf(cmp.getRhs(), why);
        if (succeeded(zero) && !hasDims(*zero) && !zero->base &&
            zero->uniform.isConstant() && zero->uniform.constant == 0)
          return success();
      }
      auto bound = cmp.getRhs().getDefiningOp<tt::SplatOp>();
      if (cmp.getPredicate() != arith::CmpIPredicate::slt || !bound) {
        why = "the mask is not a conjunction of 'index < scalar bound'";
        return failure();
      }
      FailureOr<Form> index = formOf(cmp.getLhs(), why);
      if (failed(index))
        return failure();
      int d = -1;
      for (int k = 0; k < 2; ++k)
        if (index->dims[k].present)
          d = d < 0 ? k : 2;
      if (d < 0 || d > 1 || index->dims[d].wrap ||
          !index->dims[d].stride.isOne() || !index->uniform.isConstant() ||
          index->uniform.constant != 0 || bounds[d].present) {
        why = "the mask is not a conjunction of 'index < scalar bound', one "
              "per dimension";
        return failure();
      }
      bounds[d].present = true;
      bounds[d].indexStart = index->dims[d].start;
      bounds[d].bound = linearScalar(bound.getSrc());
      return success();
    }
    why = "the mask is not a conjunction of 'index < scalar bound'";
    return failure();
  }

  //===--------------------------------------------------------------------===//
  // Rewriting
  //===--------------------------------------------------------------------===//

  /// Values usable at the function's entry: arguments and constants.
  bool availableAtEntry(const Linear &l) {
    for (auto &[atom, c] : l.terms) {
      auto arg = dyn_cast<BlockArgument>(atom);
      if (!arg || arg.getOwner() != &func.getBody().front())
        return false;
    }
    return true;
  }

  Value materialize(OpBuilder &b, Location loc, const Linear &l) {
    Value sum;
    for (auto &[atom, c] : l.terms) {
      Value term = atom;
      if (term.getType().getIntOrFloatBitWidth() > 32)
        term = arith::TruncIOp::create(b, loc, b.getI32Type(), term);
      if (c != 1)
        term = arith::MulIOp::create(
            b, loc, term, arith::ConstantIntOp::create(b, loc, c, 32));
      sum = sum ? arith::AddIOp::create(b, loc, sum, term).getResult() : term;
    }
    if (!sum || l.constant != 0) {
      Value c = arith::ConstantIntOp::create(b, loc, l.constant, 32);
      sum = sum ? arith::AddIOp::create(b, loc, sum, c).getResult() : c;
    }
    return sum;
  }

  static int64_t divisibility(Value v) {
    auto arg = dyn_cast<BlockArgument>(v);
    if (!arg)
      return 1;
    auto func = dyn_cast<tt::FuncOp>(arg.getOwner()->getParentOp());
    if (!func)
      return 1;
    if (auto d = func.getArgAttrOfType<IntegerAttr>(arg.getArgNumber(),
                                                    "tt.divisibility"))
      return d.getInt();
    return 1;
  }

  LogicalResult rewrite(Operation *op, std::string &why) {
    auto load = dyn_cast<tt::LoadOp>(op);
    auto store = dyn_cast<tt::StoreOp>(op);
    Value ptr = load ? load.getPtr() : store.getPtr();
    Value mask = load ? load.getMask() : store.getMask();
    auto type = dyn_cast<RankedTensorType>(ptr.getType());
    if (!type || type.getRank() != 2) {
      why = "only 2-D tiles of pointers become TMA loads";
      return failure();
    }
    auto elemPtr = cast<tt::PointerType>(type.getElementType());
    Type elem = elemPtr.getPointeeType();
    int64_t elemBytes = (elem.getIntOrFloatBitWidth() + 7) / 8;
    if (!elem.isF16() && !elem.isBF16() && !isa<Float8E4M3FNType>(elem)) {
      why = "TMA tiles of this element type are not supported";
      return failure();
    }
    FailureOr<Form> form = formOf(ptr, why);
    if (failed(form))
      return failure();
    if (!form->base || !form->dims[0].present || !form->dims[1].present) {
      why = "the addresses do not span a 2-D tile of one base pointer";
      return failure();
    }
    if (failed(attribute(*form, why)))
      return failure();
    // The contiguous dimension becomes the descriptor's inner one; a tile
    // contiguous along rows is loaded as its transpose and transposed back.
    int inner;
    if (form->dims[1].stride.isOne())
      inner = 1;
    else if (form->dims[0].stride.isOne())
      inner = 0;
    else {
      why = "neither dimension of the tile is contiguous (stride 1): TMA "
            "needs a unit stride known when compiling (a Triton launch "
            "specializes a stride argument equal to 1 to a constant unless "
            "the kernel lists it in do_not_specialize)";
      return failure();
    }
    if (store && inner != 1) {
      why = "stores of tiles contiguous along rows are not supported";
      return failure();
    }
    int outer = 1 - inner;
    const Stride &rowStride = form->dims[outer].stride;
    if (rowStride.atom ? !availableAtEntry(Linear::ofAtom(rowStride.atom))
                       : false) {
      why = "the row stride is not a kernel argument";
      return failure();
    }
    int64_t strideAlign =
        rowStride.factor * (rowStride.atom ? divisibility(rowStride.atom) : 1);
    if ((strideAlign * elemBytes) % 16 != 0) {
      why = "the row stride is not known to be a multiple of 16 bytes (TMA "
            "needs it: give the stride argument tt.divisibility = 16)";
      return failure();
    }
    if (!availableAtEntry(Linear::ofAtom(form->base))) {
      // E.g. a batched GEMM's `a_ptr += pid_b * stride_ab`: the tile lives
      // in a 3-D view, and descriptors here are 2-D views built once.
      why = "the tile's base pointer is not a kernel argument but is offset "
            "per program (e.g. by a batch index); only tiles of a 2-D view "
            "starting at a pointer argument become TMA loads";
      return failure();
    }
    if (divisibility(form->base) < 16) {
      why = "the base pointer argument is not known to be 16-byte aligned "
            "(TMA needs it: tt.divisibility = 16, which a Triton launch gives "
            "a pointer that is)";
      return failure();
    }
    MaskBound bounds[2];
    if (mask && failed(maskBounds(mask, bounds, why)))
      return failure();
    if (load && load.getOther()) {
      auto other = load.getOther().getDefiningOp<arith::ConstantOp>();
      auto dense = other ? dyn_cast<SplatElementsAttr>(other.getValue())
                         : SplatElementsAttr();
      if (!dense || !dense.getSplatValue<APFloat>().isZero()) {
        why = "masked-off elements read a value other than 0 (TMA fills "
              "out-of-bounds elements with zeros)";
        return failure();
      }
    }
    // Extents: coordinate start + i < start + bound - index start.
    Linear extent[2];
    bool unbounded[2] = {false, false};
    for (int d = 0; d < 2; ++d) {
      Dim &dim = form->dims[d];
      if (bounds[d].present) {
        if (dim.wrap) {
          why = "a masked dimension is also wrapped modulo a bound";
          return failure();
        }
        extent[d] = dim.start;
        extent[d].add(bounds[d].bound);
        extent[d].add(bounds[d].indexStart, -1);
        if (!availableAtEntry(extent[d])) {
          why = "the mask's bound is not the same for every tile and "
                "iteration";
          return failure();
        }
      } else if (dim.wrap) {
        // Rows past the bound read zeros instead of wrapping around; they
        // only reach memory through stores the kernel masks (checked).
        if (!availableAtEntry(Linear::ofAtom(dim.wrap))) {
          why = "an index vector wraps modulo a value that is not a kernel "
                "argument";
          return failure();
        }
        if (!everyStoreMasked()) {
          why = "an index vector wraps modulo a bound and some store is not "
                "masked: the wrapped rows could reach memory";
          return failure();
        }
        extent[d] = Linear::ofAtom(dim.wrap);
        dim.wrap = Value();
      } else {
        unbounded[d] = true;
      }
    }

    // The descriptor, at the entry, once per base, extents, strides, block.
    OpBuilder eb = OpBuilder::atBlockBegin(&func.getBody().front());
    Location loc = op->getLoc();
    auto shape = type.getShape();
    SmallVector<int64_t, 2> block = {shape[outer], shape[inner]};
    std::string key;
    llvm::raw_string_ostream ks(key);
    ks << form->base.getAsOpaquePointer() << "/" << block[0] << "x" << block[1]
       << "/" << rowStride.atom.getAsOpaquePointer() << "*" << rowStride.factor;
    SmallVector<Value, 2> extents;
    for (int d : {outer, inner}) {
      if (unbounded[d]) {
        ks << "/max";
        extents.push_back(arith::ConstantIntOp::create(
            eb, loc, std::numeric_limits<int32_t>::max(), 32));
        continue;
      }
      ks << "/" << extent[d].constant;
      for (auto &[atom, c] : extent[d].terms)
        ks << "+" << c << "*" << atom.getAsOpaquePointer();
      extents.push_back(materialize(eb, loc, extent[d]));
    }
    Value &desc = descriptors[key];
    if (!desc) {
      Value stride;
      if (rowStride.atom) {
        stride = rowStride.atom;
        if (stride.getType().getIntOrFloatBitWidth() < 64)
          stride = arith::ExtSIOp::create(eb, loc, eb.getI64Type(), stride);
      }
      if (!stride || rowStride.factor != 1) {
        Value factor =
            arith::ConstantIntOp::create(eb, loc, rowStride.factor, 64);
        stride =
            stride ? arith::MulIOp::create(eb, loc, stride, factor).getResult()
                   : factor;
      }
      Value one = arith::ConstantIntOp::create(eb, loc, 1, 64);
      auto blockType = RankedTensorType::get(block, elem);
      auto descType = tt::TensorDescType::get(func.getContext(), blockType);
      desc = tt::MakeTensorDescOp::create(eb, loc, descType, form->base,
                                          extents, ValueRange{stride, one},
                                          /*padding=*/nullptr);
    }

    OpBuilder b(op);
    SmallVector<Value, 2> coords = {
        materialize(b, loc, form->dims[outer].start),
        materialize(b, loc, form->dims[inner].start)};
    if (load) {
      auto tile = RankedTensorType::get(block, elem);
      Value loaded = tt::DescriptorLoadOp::create(b, loc, tile, desc, coords);
      if (inner == 0)
        loaded = tt::TransOp::create(b, loc, load.getType(), loaded,
                                     b.getDenseI32ArrayAttr({1, 0}));
      load.replaceAllUsesWith(loaded);
    } else {
      tt::DescriptorStoreOp::create(b, loc, desc, store.getValue(), coords);
    }
    op->erase();
    return success();
  }

  bool everyStoreMasked() {
    bool masked = true;
    func.walk([&](tt::StoreOp store) {
      if (!store.getMask())
        masked = false;
    });
    return masked;
  }

  //===--------------------------------------------------------------------===//
  // Clean-up: the pointer tiles nothing reads any more.
  //===--------------------------------------------------------------------===//

  void cleanUp() {
    bool changed = true;
    while (changed) {
      changed = false;
      SmallVector<scf::ForOp> loops;
      func.walk([&](scf::ForOp forOp) { loops.push_back(forOp); });
      // One loop at a time: rebuilding a loop deletes the loops inside it.
      for (scf::ForOp forOp : loops)
        if (dropDeadIterArgs(forOp)) {
          changed = true;
          break;
        }
      SmallVector<Operation *> dead;
      func.walk([&](Operation *op) {
        if (op->getNumRegions() == 0 && isOpTriviallyDead(op))
          dead.push_back(op);
      });
      for (Operation *op : dead) {
        op->erase();
        changed = true;
      }
    }
  }

  /// Removes iter_args whose result is unused and whose value only feeds
  /// pure operations that end in its own yield.
  static bool dropDeadIterArgs(scf::ForOp forOp) {
    auto yield = cast<scf::YieldOp>(forOp.getBody()->getTerminator());
    llvm::BitVector drop(forOp.getNumRegionIterArgs());
    llvm::SmallPtrSet<Operation *, 8> cycles; // ops of the dropped cycles
    for (unsigned i = 0; i < forOp.getNumRegionIterArgs(); ++i) {
      if (!forOp.getResult(i).use_empty())
        continue;
      bool closed = true;
      SmallVector<Value> work{forOp.getRegionIterArgs()[i]};
      llvm::SmallPtrSet<Operation *, 8> seen;
      while (!work.empty() && closed) {
        Value v = work.pop_back_val();
        for (OpOperand &use : v.getUses()) {
          Operation *user = use.getOwner();
          if (user == yield) {
            closed &= use.getOperandNumber() == i;
            continue;
          }
          if (!isPure(user) || user->getNumRegions()) {
            closed = false;
            break;
          }
          if (seen.insert(user).second)
            for (Value r : user->getResults())
              work.push_back(r);
        }
      }
      if (closed) {
        drop.set(i);
        cycles.insert(seen.begin(), seen.end());
      }
    }
    if (drop.none())
      return false;
    SmallVector<Value> inits, yields;
    for (unsigned i = 0; i < drop.size(); ++i)
      if (!drop[i]) {
        inits.push_back(forOp.getInitArgs()[i]);
        yields.push_back(yield.getOperand(i));
      }
    OpBuilder b(forOp);
    auto newFor =
        scf::ForOp::create(b, forOp.getLoc(), forOp.getLowerBound(),
                           forOp.getUpperBound(), forOp.getStep(), inits);
    newFor->setAttrs(forOp->getAttrs());
    Block *newBody = newFor.getBody();
    // The new body's block arguments stand for the kept ones; the dropped
    // ones' cycles are erased with the old loop's body.
    IRMapping map;
    map.map(forOp.getInductionVar(), newFor.getInductionVar());
    unsigned k = 0;
    for (unsigned i = 0; i < drop.size(); ++i)
      if (!drop[i])
        map.map(forOp.getRegionIterArgs()[i], newFor.getRegionIterArgs()[k++]);
    OpBuilder nb = OpBuilder::atBlockEnd(newBody);
    if (!newBody->empty() && isa<scf::YieldOp>(newBody->back()))
      newBody->back().erase();
    for (Operation &op : forOp.getBody()->without_terminator())
      if (!cycles.contains(&op))
        nb.clone(op, map);
    SmallVector<Value> mapped;
    for (Value y : yields)
      mapped.push_back(map.lookupOrDefault(y));
    scf::YieldOp::create(nb, yield.getLoc(), mapped);
    k = 0;
    for (unsigned i = 0; i < drop.size(); ++i)
      if (!drop[i])
        forOp.getResult(i).replaceAllUsesWith(newFor.getResult(k++));
    forOp.erase();
    return true;
  }
};

struct PointerTileDescriptors
    : public tawa::impl::PointerTileDescriptorsBase<PointerTileDescriptors> {
  void runOnOperation() override {
    if (getOperation().isExternal())
      return;
    Rewriter rewriter(getOperation());
    if (failed(rewriter.run()))
      signalPassFailure();
  }
};

} // namespace
