//===- ProgramPairing.cpp - two programs of adjacent x or y run as one ---===//
//
// Before (program x):              After (pair q: programs 2q and 2q + 1):
//   a = load A[x * BM, k]            a0 = load A[2q * BM, k]
//   b = load B[y * BN, k]            a1 = load A[(2q + 1) * BM, k]
//   acc = dot(a, b, acc)             b  = load B[y * BN, k]       (once)
//   store C[x * BM, y * BN], acc     acc0 = dot(a0, b, acc0)
//                                    acc1 = dot(a1, b, acc1)
//                                    store C[2q * BM, ...], acc0
//                                    if (2q + 1 < nx) store C[(2q+1) * BM, ...]
//
// What the second program computes is the first's with x + 1: operations
// that do not depend on x (directly or through the loop-carried values that
// do) are shared, the others cloned; the two K loops become one. The
// persistent loop (-tawa-persistent-programs, which must follow) walks the
// pairs. A pair shares every tile whose coordinates do not depend on x, so
// the bytes per flop fall as with a tile twice as tall. Along y it is the
// same with the roles of A and B swapped; there the two products share A,
// and the CUDA emitter issues them as one wgmma of twice the width.
//
// A kernel of a 1-D grid that computes its tile's row and column from
// program_id(0) (Triton's grouped order, or row- or column-major) is paired
// along the coordinate its B tile reads: pair q walks the R x ceil(C / 2)
// pairs of tiles (r, 2c) and (r, 2c + 1) in groups of rows, where the
// launch is the R * C programs of that rectangle (checked at run time; any
// other launch runs the kernel's own map, one tile per pair, the second
// product discarded).
//
//===----------------------------------------------------------------------===//

#include "tawa/Transforms/ArithMatchers.h"
#include "tawa/Transforms/Partition.h"
#include "tawa/Transforms/Passes.h"
#include "tawa/Transforms/SourceLocation.h"
#include "tawa/Transforms/TileLoopPrograms.h"
#include "tawa/Transforms/TileOrder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallBitVector.h"

namespace tawa {
#define GEN_PASS_DEF_PROGRAMPAIRING
#include "tawa/Transforms/Passes.h.inc"
} // namespace tawa

using namespace mlir;
using namespace tawa;

namespace {

bool writesMemory(Operation *op) {
  WalkResult r = op->walk([](Operation *nested) {
    auto effects = dyn_cast<MemoryEffectOpInterface>(nested);
    if (!effects) {
      // Unknown effects: only ops whose regions hold the effects (scf,
      // tt.reduce) are known to be harmless by themselves.
      return nested->hasTrait<OpTrait::HasRecursiveMemoryEffects>() ||
                     nested->getNumRegions() == 0
                 ? WalkResult::advance()
                 : WalkResult::interrupt();
    }
    return effects.hasEffect<MemoryEffects::Write>() ? WalkResult::interrupt()
                                                     : WalkResult::advance();
  });
  return r.wasInterrupted();
}

bool isConstantInt(Value v, int64_t *value) {
  APInt c;
  if (!matchPattern(v, m_ConstantInt(&c)))
    return false;
  *value = c.getSExtValue();
  return true;
}

/// `v` = OpTy(x, constant) or OpTy(constant, x) with a positive constant:
/// x and the constant.
template <typename OpTy>
std::optional<std::pair<Value, int64_t>> byConstant(Value v) {
  auto op = v.getDefiningOp<OpTy>();
  if (!op)
    return std::nullopt;
  int64_t c;
  if (isConstantInt(op.getRhs(), &c) && c > 0)
    return std::make_pair(op.getLhs(), c);
  if (isConstantInt(op.getLhs(), &c) && c > 0)
    return std::make_pair(op.getRhs(), c);
  return std::nullopt;
}

/// A 1-D program grid whose program p computes the tile (row, col) of a
/// rows x cols rectangle, a bijection where the launch has rows * cols
/// programs. Either Triton's grouped order
///   width = cols * G; group = p / width; first = group * G
///   height = min(rows - first, G); in = p % width % height
///   row = first + in; col = p % width / height
/// (the kernel may use group, first and in instead of row: the pointer-tile
/// rewrite distributes row * BM over the sum), or p / n and p % n, one
/// extent being n and the other the launch's programs / n.
struct TileMap {
  /// The program index the map reads: program_id(0), or the tile index
  /// -tawa-tile-loop-programs computed from it.
  Value root;
  bool grouped = false;
  // Grouped order.
  Value group, first, in, row, col; // row and first may be null
  Value rows, cols;
  int64_t groupRows = 8;
  // p / n and p % n.
  Value quotient, remainder, divisor;
  /// The ops computing them from the program id.
  llvm::SmallPtrSet<Operation *, 16> ops;
  /// The values the kernel may read.
  SmallVector<Value> outputs() const {
    SmallVector<Value> out;
    for (Value v : {group, first, in, row, col, quotient, remainder})
      if (v)
        out.push_back(v);
    return out;
  }
};

std::optional<TileMap> matchGroupedOrder(Value p) {
  for (Operation *user : p.getUsers()) {
    // group = p / width, width = cols * G
    auto groupDiv = dyn_cast<arith::DivSIOp>(user);
    if (!groupDiv || groupDiv.getLhs() != p)
      continue;
    Value width = groupDiv.getRhs();
    auto widthOf = byConstant<arith::MulIOp>(width);
    if (!widthOf)
      continue;
    int64_t g = widthOf->second;
    arith::RemSIOp pRem;
    for (Operation *u : p.getUsers())
      if (auto r = dyn_cast<arith::RemSIOp>(u);
          r && r.getLhs() == p && r.getRhs() == width)
        pRem = r;
    if (!pRem)
      continue;
    // first = group * G; height = min(rows - first, G)
    for (Operation *groupUser : groupDiv->getUsers()) {
      Value first =
          groupUser->getNumResults() == 1 ? groupUser->getResult(0) : Value();
      auto firstOf = first ? byConstant<arith::MulIOp>(first) : std::nullopt;
      if (!firstOf || firstOf->first != groupDiv.getResult() ||
          firstOf->second != g)
        continue;
      for (Operation *firstUser : first.getUsers()) {
        auto left = dyn_cast<arith::SubIOp>(firstUser);
        if (!left || left.getRhs() != first)
          continue;
        for (Operation *leftUser : left->getUsers()) {
          Value height = leftUser->getResult(0);
          auto heightOf = byConstant<arith::MinSIOp>(height);
          if (!heightOf || heightOf->first != left.getResult() ||
              heightOf->second != g)
            continue;
          // in = p % width % height; col = p % width / height
          arith::RemSIOp inRem;
          arith::DivSIOp colDiv;
          // (Triton's persistent-matmul tutorial writes in = p % height,
          // also a bijection of each group onto its rows x columns.)
          for (Operation *u : pRem->getUsers()) {
            if (auto r = dyn_cast<arith::RemSIOp>(u);
                r && r.getLhs() == pRem.getResult() && r.getRhs() == height)
              inRem = r;
            if (auto d = dyn_cast<arith::DivSIOp>(u);
                d && d.getLhs() == pRem.getResult() && d.getRhs() == height)
              colDiv = d;
          }
          if (!inRem)
            for (Operation *u : p.getUsers())
              if (auto r = dyn_cast<arith::RemSIOp>(u);
                  r && r.getLhs() == p && r.getRhs() == height)
                inRem = r;
          if (!inRem || !colDiv)
            continue;
          TileMap map;
          map.root = p;
          map.grouped = true;
          map.group = groupDiv.getResult();
          map.in = inRem.getResult();
          map.col = colDiv.getResult();
          map.rows = left.getLhs();
          map.cols = widthOf->first;
          map.groupRows = g;
          for (Value v : {width, pRem.getResult(), map.group, first,
                          left.getResult(), height, map.in, map.col})
            map.ops.insert(v.getDefiningOp());
          // Where the kernel uses first, it is an output too.
          map.first = first;
          for (Operation *u : first.getUsers())
            if (auto add = dyn_cast<arith::AddIOp>(u))
              if (otherOperand<arith::AddIOp>(add.getResult(), first) ==
                  map.in) {
                map.row = add.getResult();
                map.ops.insert(add);
              }
          return map;
        }
      }
    }
  }
  return std::nullopt;
}

std::optional<TileMap> matchDivRem(Value p) {
  arith::DivSIOp div;
  arith::RemSIOp rem;
  for (Operation *user : p.getUsers()) {
    if (auto d = dyn_cast<arith::DivSIOp>(user); d && d.getLhs() == p)
      div = div ? arith::DivSIOp() : d;
    if (auto r = dyn_cast<arith::RemSIOp>(user); r && r.getLhs() == p)
      rem = rem ? arith::RemSIOp() : r;
  }
  if (!div || !rem || div.getRhs() != rem.getRhs())
    return std::nullopt;
  TileMap map;
  map.root = p;
  map.quotient = div.getResult();
  map.remainder = rem.getResult();
  map.divisor = div.getRhs();
  map.ops.insert(div);
  map.ops.insert(rem);
  return map;
}

/// Whether `v` is computed from `from` (through any ops but those of
/// `opaque`, whose results count as themselves only).
bool derivesFrom(Value v, Value from, llvm::DenseSet<Value> &seen,
                 const llvm::SmallPtrSetImpl<Operation *> *opaque = nullptr) {
  if (v == from)
    return true;
  if (!seen.insert(v).second)
    return false;
  Operation *def = v.getDefiningOp();
  if (!def || (opaque && opaque->contains(def)))
    return false;
  return llvm::any_of(def->getOperands(), [&](Value operand) {
    return derivesFrom(operand, from, seen, opaque);
  });
}

/// The kernel's tile map where it has one: a 1-D grid (program_id(0) read
/// once, by the map's ops alone; no other axis read), nothing but the map
/// reading its intermediate values, the rectangle's extents not computed
/// from the program id.
std::optional<TileMap> matchTileMap(tt::FuncOp func) {
  SmallVector<tt::GetProgramIdOp> pids;
  func.walk([&](tt::GetProgramIdOp pid) { pids.push_back(pid); });
  if (pids.size() != 1 || pids[0].getAxis() != tt::ProgramIDDim::X ||
      pids[0]->getBlock() != &func.getBody().front())
    return std::nullopt;
  Block &body = func.getBody().front();
  // The tile index of a kernel whose own tile loop became programs, else
  // the program id itself.
  Value root = pids[0].getResult();
  for (Operation &op : body)
    if (op.hasAttr(kTileIndexAttr))
      root = op.getResult(0);
  std::optional<TileMap> map = matchGroupedOrder(root);
  if (!map)
    map = matchDivRem(root);
  if (!map)
    return std::nullopt;
  SmallVector<Value> outputs = map->outputs();
  for (Operation *op : map->ops) {
    if (op->getBlock() != &body)
      return std::nullopt;
    if (llvm::is_contained(outputs, op->getResult(0)))
      continue;
    for (Operation *user : op->getUsers())
      if (!map->ops.contains(user))
        return std::nullopt;
  }
  for (Operation *user : root.getUsers())
    if (!map->ops.contains(user))
      return std::nullopt;
  for (Value extent : {map->rows, map->cols, map->divisor}) {
    llvm::DenseSet<Value> seen;
    if (extent && derivesFrom(extent, pids[0].getResult(), seen))
      return std::nullopt;
  }
  return map;
}

/// The output of `map` that the product's B tile reads and its A tile does
/// not (for the grouped order, only the column): the coordinate along which
/// pairs share A. Null where there is none.
Value pairedCoordinate(const TileMap &map, tt::DotOp dot) {
  // Through the kernel's ops only: the map's outputs are computed from one
  // another.
  auto reads = [&](Value operand, Value coordinate) {
    llvm::DenseSet<Value> seen;
    return derivesFrom(operand, coordinate, seen, &map.ops);
  };
  if (map.grouped)
    return reads(dot.getB(), map.col) && !reads(dot.getA(), map.col) &&
                   llvm::none_of(map.outputs(),
                                 [&](Value v) {
                                   return v != map.col && reads(dot.getB(), v);
                                 })
               ? map.col
               : Value();
  for (auto [c, other] : {std::make_pair(map.remainder, map.quotient),
                          std::make_pair(map.quotient, map.remainder)})
    if (reads(dot.getB(), c) && !reads(dot.getA(), c) &&
        !reads(dot.getB(), other))
      return c;
  return {};
}

/// The one tt.dot of the kernel's top-level loops, or null.
tt::DotOp singleLoopDot(tt::FuncOp func) {
  SmallVector<tt::DotOp> dots;
  for (auto forOp : func.getBody().front().getOps<scf::ForOp>())
    forOp.walk([&](tt::DotOp dot) { dots.push_back(dot); });
  return dots.size() == 1 ? dots.front() : tt::DotOp();
}

/// The values the second program computes differently from the first.
struct Varying {
  llvm::DenseSet<Value> values;

  /// Whether `op` (with what its regions use from outside) reads a varying
  /// value.
  bool reads(Operation *op) const {
    WalkResult r = op->walk([&](Operation *nested) {
      for (Value operand : nested->getOperands()) {
        Operation *def = operand.getDefiningOp();
        bool inside =
            def ? op->isAncestor(def)
                : op->isAncestor(operand.getParentRegion()->getParentOp());
        if (!inside && values.contains(operand))
          return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    return r.wasInterrupted();
  }
};

struct ProgramPairing : public tawa::impl::ProgramPairingBase<ProgramPairing> {
  using ProgramPairingBase::ProgramPairingBase;

  /// The axis being paired and its name in messages.
  tt::ProgramIDDim dim = tt::ProgramIDDim::X;
  std::string pidName = "program_id(0)";
  /// auto: failures are not errors (the kernel is left as written).
  bool quiet = false;

  void runOnOperation() override {
    tt::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    if (axis != "x" && axis != "y" && axis != "auto") {
      func.emitError("tawa-program-pairing: axis must be x, y or auto, not '")
          << axis << "'";
      return signalPassFailure();
    }
    if (axis != "x") {
      dim = tt::ProgramIDDim::Y;
      pidName = "program_id(1)";
    }
    if (axis == "auto") {
      // Pairs on a copy: where the kernel cannot be paired, it stays as the
      // user wrote it. A kernel that walks its tiles itself (Triton's
      // persistent matmul) pairs them as programs (-tawa-tile-loop-programs).
      quiet = true;
      auto copy = cast<tt::FuncOp>(func->clone()); // not inserted anywhere
      bool ok =
          (!walksProgramsItself(copy) || succeeded(tileLoopToPrograms(copy))) &&
          productsFuseAlongY(copy) && succeeded(pair(copy)) && ringsFit(copy);
      if (ok) {
        func.getBody().takeBody(copy.getBody());
        func->setAttr(kPairedProgramsAttr, copy->getAttr(kPairedProgramsAttr));
      }
      copy.erase();
      return;
    }
    if (failed(pair(func)))
      signalPassFailure();
  }

  /// Whether a ring of the given depth (`arefDepth`; 0: the compiler's
  /// choice, which fits) holds the paired K loop's tiles in Hopper's shared
  /// memory: auto pairing makes a slot half as large again, so an explicit
  /// depth that fit the kernel as written may not fit it paired.
  bool ringsFit(tt::FuncOp func) {
    if (arefDepth <= 0)
      return true;
    int64_t slotBytes = 0;
    for (auto forOp : func.getBody().front().getOps<scf::ForOp>())
      forOp.walk([&](tt::DescriptorLoadOp load) {
        auto type = cast<RankedTensorType>(load.getType());
        slotBytes += type.getNumElements() *
                     type.getElementType().getIntOrFloatBitWidth() / 8;
      });
    return slotBytes * arefDepth <= 227 * 1024;
  }

  LogicalResult fail(Operation *at, const Twine &why) {
    if (quiet)
      return failure();
    return emitError(getUserLocation(at->getLoc()))
           << "cannot pair programs: " << why;
  }

  /// Whether pairing along y would give two products that share A and
  /// read B tiles of their own (a TMA load depending on program_id(y), or
  /// its transpose), with accumulators of 128 rows and 64 or 128 columns
  /// each: the CUDA emitter then issues them as one wgmma of twice the
  /// width.
  static bool productsFuseAlongY(tt::FuncOp func) {
    if (!func.getBody().hasOneBlock())
      return false;
    tt::DotOp dot = singleLoopDot(func);
    if (!dot)
      return false;
    // The pairing axis: program_id(1), or the column a 1-D tile map
    // computes (the coordinate B reads).
    Value seed;
    if (std::optional<TileMap> map = matchTileMap(func))
      seed = pairedCoordinate(*map, dot);
    llvm::DenseSet<Value> onY;
    func.walk([&](Operation *op) {
      bool reads = false;
      if (auto pid = dyn_cast<tt::GetProgramIdOp>(op))
        reads = pid.getAxis() == tt::ProgramIDDim::Y;
      for (Value operand : op->getOperands())
        reads |= onY.contains(operand) || (seed && operand == seed);
      if (reads)
        for (Value r : op->getResults())
          onY.insert(r);
    });
    auto type = cast<RankedTensorType>(dot.getType());
    // 128 rows: two cooperative consumer groups of one 64-row fragment each,
    // as a 128 x 2N tile. 64 rows: each ping-pong group holds a pair's 64 x
    // 2N accumulators (128 registers at N = 128), a ping-pong 64 x 256 tile.
    if (type.getRank() != 2 ||
        (type.getShape()[0] != 128 && type.getShape()[0] != 64) ||
        (type.getShape()[1] != 64 && type.getShape()[1] != 128))
      return false;
    // A: a TMA load, or the transpose of one (A stored [K, M]).
    auto aTrans = dot.getA().getDefiningOp<tt::TransOp>();
    auto a = aTrans ? aTrans.getSrc().getDefiningOp<tt::DescriptorLoadOp>()
                    : dot.getA().getDefiningOp<tt::DescriptorLoadOp>();
    auto trans = dot.getB().getDefiningOp<tt::TransOp>();
    auto b = trans ? trans.getSrc().getDefiningOp<tt::DescriptorLoadOp>()
                   : dot.getB().getDefiningOp<tt::DescriptorLoadOp>();
    // An epilogue with transcendentals or divisions on the accumulator
    // (SiLU, GELU, softmax-like scaling): ping-pong runs it under the other
    // group's products, where the paired groups would each run it after
    // their K loop (examples/gemm_scale_silu_fp16_128x128: paired 0.91x
    // ping-pong on the H100, run 164), so auto leaves such kernels unpaired.
    if (heavyEpilogue(func, dot))
      return false;
    // An 8-bit B stored [K, N] is transposed in shared memory for wgmma
    // (K-major only), and transposed tiles do not fuse.
    auto bType = cast<RankedTensorType>(dot.getB().getType());
    if (!trans && bType.getElementType().getIntOrFloatBitWidth() == 8)
      return false;
    return a && b && !onY.contains(a.getResult()) &&
           onY.contains(b.getResult());
  }

  /// Whether, after the K loop of `dot`, the kernel applies math-dialect
  /// functions or divisions to tensors of the accumulator's shape.
  static bool heavyEpilogue(tt::FuncOp func, tt::DotOp dot) {
    Operation *loop = dot->getParentOp();
    while (loop && loop->getParentOp() != func.getOperation())
      loop = loop->getParentOp();
    if (!loop)
      return false;
    auto accShape = cast<RankedTensorType>(dot.getType()).getShape();
    for (Operation *op = loop->getNextNode(); op; op = op->getNextNode()) {
      WalkResult r = op->walk([&](Operation *nested) {
        bool heavy = (nested->getDialect() &&
                      nested->getDialect()->getNamespace() == "math") ||
                     isa<arith::DivFOp, arith::RemFOp>(nested);
        bool onTile = llvm::any_of(nested->getResultTypes(), [&](Type t) {
          auto tensor = dyn_cast<RankedTensorType>(t);
          return tensor && tensor.getShape() == accShape;
        });
        return heavy && onTile ? WalkResult::interrupt()
                               : WalkResult::advance();
      });
      if (r.wasInterrupted())
        return true;
    }
    return false;
  }

  LogicalResult pair(tt::FuncOp func) {
    if (!func.getBody().hasOneBlock())
      return fail(func, "the kernel body has more than one block");
    Block &body = func.getBody().front();
    if (walksProgramsItself(func))
      return fail(func, "the kernel walks program ids itself");
    SmallVector<tt::GetProgramIdOp> pids;
    func.walk([&](tt::GetProgramIdOp pid) {
      if (pid.getAxis() == dim)
        pids.push_back(pid);
    });
    // Along y, a 1-D grid whose programs compute a tile's row and column
    // pairs along the column its B tile reads.
    std::optional<TileMap> map;
    if (pids.empty() && dim == tt::ProgramIDDim::Y)
      map = matchTileMap(func);
    if (pids.empty() && !map)
      return fail(func,
                  "the kernel does not read " + pidName +
                      (dim == tt::ProgramIDDim::Y
                           ? " and does not compute its tile's row and "
                             "column from program_id(0) (Triton's grouped "
                             "order, or row- or column-major)"
                           : ""));

    // The K loop: the one top-level loop with a product.
    scf::ForOp kLoop;
    for (auto forOp : body.getOps<scf::ForOp>()) {
      if (!forOp->walk([](tt::DotOp) { return WalkResult::interrupt(); })
               .wasInterrupted())
        continue;
      if (kLoop)
        return fail(forOp, "the kernel has more than one top-level loop "
                           "with a tt.dot");
      kLoop = forOp;
    }
    if (!kLoop)
      return fail(func, "the kernel has no top-level loop with a tt.dot");

    Location loc = func.getLoc();
    Value x0, x1, second;
    if (map) {
      if (failed(pairTileMap(func, *map, kLoop, x0, x1, second)))
        return failure();
    } else {
      OpBuilder b(&body, body.begin());
      auto axisAttr = tt::ProgramIDDimAttr::get(func.getContext(), dim);
      Type i32 = b.getI32Type();
      Value q = tt::GetProgramIdOp::create(b, loc, i32, axisAttr);
      Value two = arith::ConstantIntOp::create(b, loc, 2, 32);
      Value one = arith::ConstantIntOp::create(b, loc, 1, 32);
      x0 = arith::MulIOp::create(b, loc, q, two);
      x1 = arith::AddIOp::create(b, loc, x0, one);
      Value nx = tt::GetNumProgramsOp::create(b, loc, i32, axisAttr);
      second = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, x1, nx);
      for (tt::GetProgramIdOp pid : pids) {
        pid.getResult().replaceAllUsesWith(x0);
        pid.erase();
      }
    }
    Operation *firstOriginal = second.getDefiningOp()->getNextNode();

    Varying varying;
    varying.values.insert(x0);
    IRMapping copy; // the second program's values
    copy.map(x0, x1);

    // Checks before anything else changes.
    {
      Varying probe = varying;
      for (Operation *op = &body.front(); op != firstOriginal;
           op = op->getNextNode())
        if (writesMemory(op))
          return fail(op, "an operation before the K loop writes memory");
      for (Operation *op = firstOriginal; op != kLoop; op = op->getNextNode()) {
        if (writesMemory(op))
          return fail(op, "an operation before the K loop writes memory");
        if (probe.reads(op))
          for (Value r : op->getResults())
            probe.values.insert(r);
      }
      for (Value bound :
           {kLoop.getLowerBound(), kLoop.getUpperBound(), kLoop.getStep()})
        if (probe.values.contains(bound))
          return fail(kLoop, "the K loop's bounds depend on " + pidName);
      if (writesMemory(kLoop))
        return fail(kLoop, "the K loop writes memory");
      WalkResult pointerLoad =
          kLoop.walk([&](tt::LoadOp load) { return WalkResult::interrupt(); });
      if (pointerLoad.wasInterrupted())
        return fail(kLoop, "the K loop loads through pointers (a second "
                           "program past the grid could read out of bounds)");
      for (Operation *op = kLoop->getNextNode(); op != body.getTerminator();
           op = op->getNextNode())
        if (op->walk([](tt::DescriptorLoadOp) {
                return WalkResult::interrupt();
              }).wasInterrupted())
          return fail(op, "a TMA load follows the K loop");
    }

    // Before the K loop: clone what depends on x right after the original.
    for (Operation *op = firstOriginal; op != kLoop;) {
      Operation *next = op->getNextNode();
      if (varying.reads(op)) {
        OpBuilder after(op->getContext());
        after.setInsertionPointAfter(op);
        after.clone(*op, copy);
        for (Value r : op->getResults())
          varying.values.insert(r);
      }
      op = next;
    }

    FailureOr<scf::ForOp> fusedLoop = fuseKLoop(kLoop, varying, copy);
    if (failed(fusedLoop))
      return failure();

    // After it: the second program's epilogue, where it is a program.
    Operation *terminator = body.getTerminator();
    SmallVector<Operation *> epilogue;
    bool written = false;
    for (Operation *op = (*fusedLoop)->getNextNode(); op != terminator;
         op = op->getNextNode()) {
      bool writes = writesMemory(op);
      if (varying.reads(op)) {
        epilogue.push_back(op);
        for (Value r : op->getResults())
          varying.values.insert(r);
      } else if (writes) {
        // Once for both programs, it would move before the second
        // program's earlier stores.
        return fail(op,
                    "a store after the K loop does not depend on " + pidName);
      } else if (written && !isMemoryEffectFree(op)) {
        // Shared, it would read before the second program's stores.
        return fail(op, "a load after a store does not depend on " + pidName);
      }
      written |= writes;
    }
    OpBuilder end(terminator);
    auto ifOp = scf::IfOp::create(end, loc, TypeRange{}, second,
                                  /*withElseRegion=*/false);
    OpBuilder thenB = OpBuilder::atBlockBegin(ifOp.thenBlock());
    for (Operation *op : epilogue)
      thenB.clone(*op, copy);
    func->setAttr(kPairedProgramsAttr,
                  end.getI32IntegerAttr(static_cast<int32_t>(dim)));
    return success();
  }

  /// Pairs along the coordinate of `map` that B reads: pair q is the tiles
  /// (s, 2c) and (s, 2c + 1), (s, c) the q-th of the rectangle of pairs in
  /// groups of rows, where the launch is the rectangle's programs (one
  /// axis); any other launch runs the kernel's own map with the second
  /// program's store off. Sets the first program's coordinate x0, the
  /// second's x1, and whether the second is a tile of the rectangle.
  LogicalResult pairTileMap(tt::FuncOp func, const TileMap &map,
                            scf::ForOp kLoop, Value &x0, Value &x1,
                            Value &second) {
    Block &body = func.getBody().front();
    SmallVector<tt::DotOp> dots;
    kLoop.walk([&](tt::DotOp dot) { dots.push_back(dot); });
    if (dots.size() != 1)
      return fail(kLoop, "the K loop has more than one tt.dot");
    Value paired = pairedCoordinate(map, dots.front());
    if (!paired)
      return fail(dots.front(),
                  map.grouped
                      ? "the product's B operand does not read the tile "
                        "column alone, or its A operand reads it too"
                      : "the product's B operand reads no tile coordinate "
                        "that its A operand does not read");
    SmallVector<Value> outputs = map.outputs();
    Operation *last = nullptr;
    for (Value v : outputs)
      if (!last || last->isBeforeInBlock(v.getDefiningOp()))
        last = v.getDefiningOp();
    for (Value v : outputs)
      for (OpOperand &use : v.getUses()) {
        Operation *owner = body.findAncestorOpInBlock(*use.getOwner());
        if (!owner || map.ops.contains(owner))
          continue;
        if (!last->isBeforeInBlock(owner))
          return fail(owner, "the tile's coordinates are used before all "
                             "are computed");
      }

    OpBuilder b(func.getContext());
    b.setInsertionPointAfter(last);
    Location loc = map.root.getLoc();
    Type i32 = b.getI32Type();
    auto axis = [&](tt::ProgramIDDim d) {
      return tt::ProgramIDDimAttr::get(func.getContext(), d);
    };
    auto constant = [&](int64_t v) -> Value {
      return arith::ConstantIntOp::create(b, loc, v, 32);
    };
    Value q =
        tt::GetProgramIdOp::create(b, loc, i32, axis(tt::ProgramIDDim::X));
    Value nx =
        tt::GetNumProgramsOp::create(b, loc, i32, axis(tt::ProgramIDDim::X));
    Value ny =
        tt::GetNumProgramsOp::create(b, loc, i32, axis(tt::ProgramIDDim::Y));
    Value nz =
        tt::GetNumProgramsOp::create(b, loc, i32, axis(tt::ProgramIDDim::Z));
    // The programs along x: the launch's, or the count of a kernel whose own
    // tile loop became programs (-tawa-tile-loop-programs), which the count
    // of pairs below replaces.
    Value programs = nx;
    for (Operation &op : func.getBody().front())
      if (op.hasAttr(kProgramCountAttr)) {
        programs = op.getResult(0);
        op.removeAttr(kProgramCountAttr);
      }
    Value one = constant(1), two = constant(2);
    Value group = constant(map.groupRows);
    // Divisors at least 1: the selects below evaluate both sides.
    auto atLeastOne = [&](Value v) -> Value {
      return arith::MaxSIOp::create(b, loc, v, one);
    };
    Value sharedExtent, pairedExtent;
    if (map.grouped) {
      sharedExtent = map.rows;
      pairedExtent = map.cols;
    } else {
      Value other =
          arith::DivSIOp::create(b, loc, programs, atLeastOne(map.divisor));
      bool pairsRemainder = paired == map.remainder;
      pairedExtent = pairsRemainder ? map.divisor : other;
      sharedExtent = pairsRemainder ? other : map.divisor;
    }
    Value half = arith::DivSIOp::create(
        b, loc, arith::AddIOp::create(b, loc, pairedExtent, one), two);
    // The launch is the rectangle: then its programs are its tiles, once.
    Value ok = arith::AndIOp::create(
        b, loc,
        arith::CmpIOp::create(
            b, loc, arith::CmpIPredicate::eq, programs,
            arith::MulIOp::create(b, loc, sharedExtent, pairedExtent)),
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                              arith::MulIOp::create(b, loc, ny, nz), one));
    Value count = arith::SelectOp::create(
        b, loc, ok, arith::MulIOp::create(b, loc, sharedExtent, half),
        programs);
    count.getDefiningOp()->setAttr(kProgramCountAttr, b.getUnitAttr());
    // Pair q of the rectangle of pairs, in groups of rows (its parts kept
    // for a grouped map's outputs).
    Value width = arith::MulIOp::create(b, loc, group, atLeastOne(half));
    GroupedOrder pairs =
        buildGroupedOrderParts(b, loc, q, sharedExtent, width, group, one);
    Value newGroup = pairs.group, newFirst = pairs.first;
    Value newIn = pairs.rowInGroup, newRow = pairs.row;
    Value newCol = arith::MulIOp::create(b, loc, pairs.col, two);

    SmallVector<std::pair<Value, Value>> replace; // (kernel's, the pair's)
    if (map.grouped) {
      replace = {{map.group, newGroup},
                 {map.first, newFirst},
                 {map.in, newIn},
                 {map.col, newCol}};
      if (map.row)
        replace.push_back({map.row, newRow});
    } else {
      Value shared = paired == map.remainder ? map.quotient : map.remainder;
      replace = {{shared, newRow}, {paired, newCol}};
    }
    for (auto [old, fresh] : replace) {
      auto select = arith::SelectOp::create(b, loc, ok, fresh, old);
      if (old == paired)
        x0 = select;
      old.replaceUsesWithIf(select, [&](OpOperand &use) {
        return use.getOwner() != select && !map.ops.contains(use.getOwner());
      });
    }
    x1 = arith::AddIOp::create(b, loc, x0, one);
    second = arith::AndIOp::create(
        b, loc, ok,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, x1,
                              pairedExtent));
    return success();
  }

  /// Replaces `loop` by one loop that runs both programs' iterations: the
  /// loop-carried values the second program computes differently get a
  /// second iteration argument; the body's ops that read one are cloned.
  FailureOr<scf::ForOp> fuseKLoop(scf::ForOp loop, Varying &varying,
                                  IRMapping &copy) {
    Block *body = loop.getBody();
    auto yield = cast<scf::YieldOp>(body->getTerminator());
    unsigned n = loop.getNumRegionIterArgs();
    // Which iteration arguments vary: a fixed point over the body.
    llvm::SmallBitVector argVaries(n);
    for (unsigned i = 0; i < n; ++i)
      argVaries[i] = varying.values.contains(loop.getInitArgs()[i]);
    Varying settled;
    for (bool changed = true; changed;) {
      changed = false;
      Varying inside = varying;
      for (unsigned i = 0; i < n; ++i)
        if (argVaries[i])
          inside.values.insert(loop.getRegionIterArgs()[i]);
      for (Operation &op : body->without_terminator())
        if (inside.reads(&op))
          for (Value r : op.getResults())
            inside.values.insert(r);
      for (unsigned i = 0; i < n; ++i)
        if (!argVaries[i] && inside.values.contains(yield.getOperand(i))) {
          argVaries[i] = true;
          changed = true;
        }
      settled = inside;
    }
    bool sharesTile = llvm::any_of(
        body->getOps<tt::DescriptorLoadOp>(), [&](tt::DescriptorLoadOp load) {
          return !settled.values.contains(load.getResult());
        });
    if (!sharesTile)
      return fail(loop, "every tile the K loop loads depends on " + pidName +
                            ": the pair would share none");
    SmallVector<unsigned> second;
    for (unsigned i = 0; i < n; ++i)
      if (argVaries[i])
        second.push_back(i);
    if (second.empty())
      return fail(loop, "nothing the K loop carries depends on " + pidName +
                            ": pairing would share everything");

    SmallVector<Value> inits(loop.getInitArgs());
    for (unsigned i : second)
      inits.push_back(copy.lookupOrDefault(loop.getInitArgs()[i]));
    OpBuilder b(loop);
    auto fused =
        scf::ForOp::create(b, loop.getLoc(), loop.getLowerBound(),
                           loop.getUpperBound(), loop.getStep(), inits);
    for (NamedAttribute attr : loop->getDiscardableAttrs())
      fused->setAttr(attr.getName(), attr.getValue());
    Block *fusedBody = fused.getBody();
    if (!fusedBody->empty())
      fusedBody->getTerminator()->erase();

    IRMapping first; // the first program's values inside the new body
    first.map(loop.getInductionVar(), fused.getInductionVar());
    copy.map(loop.getInductionVar(), fused.getInductionVar());
    for (unsigned i = 0; i < n; ++i) {
      first.map(loop.getRegionIterArgs()[i], fused.getRegionIterArgs()[i]);
      copy.map(loop.getRegionIterArgs()[i], fused.getRegionIterArgs()[i]);
    }
    for (auto [k, i] : llvm::enumerate(second))
      copy.map(loop.getRegionIterArgs()[i], fused.getRegionIterArgs()[n + k]);
    OpBuilder fb = OpBuilder::atBlockEnd(fusedBody);
    for (Operation &op : body->without_terminator()) {
      Operation *one = fb.clone(op, first);
      // `settled` holds every value of the body the second program computes
      // differently (the fixed point above).
      if (settled.reads(&op)) {
        fb.clone(op, copy);
      } else {
        for (auto [r, c] : llvm::zip(op.getResults(), one->getResults()))
          copy.map(r, c);
      }
    }
    SmallVector<Value> yields;
    for (Value v : yield.getOperands())
      yields.push_back(first.lookupOrDefault(v));
    for (unsigned i : second)
      yields.push_back(copy.lookupOrDefault(yield.getOperand(i)));
    scf::YieldOp::create(fb, yield.getLoc(), yields);

    for (unsigned i = 0; i < n; ++i)
      loop.getResult(i).replaceAllUsesWith(fused.getResult(i));
    // The epilogue now reads the fused loop's results.
    for (auto [k, i] : llvm::enumerate(second)) {
      copy.map(fused.getResult(i), fused.getResult(n + k));
      varying.values.insert(fused.getResult(i));
    }
    loop.erase();
    return fused;
  }
};

} // namespace
