//===- RowBlockWidening.cpp - 192 query rows per program ------------------===//
//
// FlashAttention-3 runs head dimension 64 on 192-row query tiles, three
// consumer warp groups of 64 rows each sharing every K and V block: at D =
// 64 a group's softmax (its 8192 exponentials per block) costs as much as
// its two products, and a third group per SM hides more of it. A Triton
// source cannot write a 192-row block, so tawa widens the source's 128:
// where the rows of a program are independent of each other (nothing mixes
// them: they are dimension 0 of every value derived from the row-indexed
// loads), program x may as well process rows [192 x, 192 x + 192).
// Measured on the H100 before this pass existed (hand-edited CUDA, run
// 207): +10 % at D = 64.
//
//===----------------------------------------------------------------------===//

#include "tawa/Transforms/Passes.h"

#include "tawa/Dialect/TT/TTDialect.h"
#include "tawa/Dialect/Tawa/TawaDialect.h"
#include "tawa/Transforms/Partition.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"

#include "llvm/ADT/SetVector.h"

namespace tawa {
#define GEN_PASS_DEF_ROWBLOCKWIDENING
#include "tawa/Transforms/Passes.h.inc"
} // namespace tawa

using namespace mlir;
using namespace tawa;

namespace {

constexpr int64_t kSourceRows = 128;
constexpr int64_t kWideRows = 192;
/// Accumulator columns three groups' registers hold (S 128 + O 64).
constexpr int64_t kMaxAccumulatorColumns = 192;

bool isRowShaped(Type t) {
  auto tensor = dyn_cast<RankedTensorType>(t);
  return tensor && tensor.getRank() >= 1 && tensor.getShape()[0] == kSourceRows;
}

bool isElementwise(Operation *op) {
  if (op->getNumResults() != 1 || op->getNumRegions())
    return false;
  Dialect *d = op->getDialect();
  return d && (isa<arith::ArithDialect, math::MathDialect>(d)) &&
         !isa<arith::ConstantOp>(op);
}

/// The values of a kernel whose dimension 0 is the program's query rows.
struct RowClosure {
  llvm::SetVector<Value> rows;
  llvm::SmallPtrSet<Operation *, 4> rowLoads, rowStores;
  bool ok = true;

  void mark(Value v) {
    if (!isRowShaped(v.getType())) {
      ok = false;
      return;
    }
    rows.insert(v);
  }

  /// Applies the rules both ways until nothing changes; false where a row
  /// value meets an operation that could mix rows or is not understood.
  bool close() {
    for (size_t i = 0; ok && i < rows.size(); ++i) {
      Value v = rows[i];
      // Its definition: what must carry rows too.
      if (Operation *def = v.getDefiningOp()) {
        if (auto c = dyn_cast<arith::ConstantOp>(def)) {
          auto dense = dyn_cast<DenseElementsAttr>(c.getValue());
          ok &= dense && dense.isSplat();
        } else if (isa<tt::SplatOp>(def)) {
          // retyped
        } else if (isa<tt::DescriptorLoadOp>(def)) {
          ok &= rowLoads.contains(def);
        } else if (auto dot = dyn_cast<tt::DotOp>(def)) {
          mark(dot.getA());
          mark(dot.getC());
          ok &=
              !isRowShaped(dot.getB().getType()) || !rows.contains(dot.getB());
        } else if (auto red = dyn_cast<tt::ReduceOp>(def)) {
          ok &= red.getAxis() == 1 && red->getNumOperands() == 1;
          mark(red->getOperand(0));
        } else if (auto ex = dyn_cast<tt::ExpandDimsOp>(def)) {
          ok &= ex.getAxis() == 1;
          mark(ex.getSrc());
        } else if (auto br = dyn_cast<tt::BroadcastOp>(def)) {
          mark(br.getSrc());
        } else if (auto forOp = dyn_cast<scf::ForOp>(def)) {
          unsigned n = cast<OpResult>(v).getResultNumber();
          mark(forOp.getInitArgs()[n]);
          mark(forOp.getRegionIterArgs()[n]);
          mark(forOp.getYieldedValues()[n]);
        } else if (isElementwise(def)) {
          for (Value o : def->getOperands())
            if (isa<RankedTensorType>(o.getType()))
              mark(o);
        } else {
          ok = false;
        }
      } else if (auto arg = dyn_cast<BlockArgument>(v)) {
        auto forOp = dyn_cast<scf::ForOp>(arg.getOwner()->getParentOp());
        if (!forOp || arg.getArgNumber() == 0) {
          ok = false;
          continue;
        }
        unsigned n = arg.getArgNumber() - 1;
        mark(forOp.getInitArgs()[n]);
        mark(forOp.getResult(n));
        mark(forOp.getYieldedValues()[n]);
      }
      // Its uses: what carries rows on.
      for (OpOperand &use : v.getUses()) {
        Operation *user = use.getOwner();
        if (auto dot = dyn_cast<tt::DotOp>(user)) {
          if (use.getOperandNumber() == 1) {
            ok = false;
            continue;
          }
          mark(dot.getA());
          mark(dot.getC());
          mark(dot.getD());
        } else if (auto red = dyn_cast<tt::ReduceOp>(user)) {
          ok &= red.getAxis() == 1 && red->getNumResults() == 1;
          if (ok)
            mark(red->getResult(0));
        } else if (auto ex = dyn_cast<tt::ExpandDimsOp>(user)) {
          ok &= ex.getAxis() == 1;
          if (ok)
            mark(ex.getResult());
        } else if (auto br = dyn_cast<tt::BroadcastOp>(user)) {
          mark(br.getResult());
        } else if (auto forOp = dyn_cast<scf::ForOp>(user)) {
          unsigned n = use.getOperandNumber();
          if (n < 3) {
            ok = false;
            continue;
          }
          mark(forOp.getRegionIterArgs()[n - 3]);
          mark(forOp.getResult(n - 3));
        } else if (auto yield = dyn_cast<scf::YieldOp>(user)) {
          auto forOp = dyn_cast<scf::ForOp>(yield->getParentOp());
          if (!forOp) {
            ok = false;
            continue;
          }
          mark(forOp.getResult(use.getOperandNumber()));
          mark(forOp.getRegionIterArgs()[use.getOperandNumber()]);
        } else if (auto store = dyn_cast<tt::DescriptorStoreOp>(user)) {
          ok &= use.get() == store.getSrc() && rowStores.contains(store);
        } else if (isElementwise(user)) {
          mark(user->getResult(0));
          for (Value o : user->getOperands())
            if (isa<RankedTensorType>(o.getType()))
              mark(o);
        } else {
          ok = false;
        }
      }
    }
    return ok;
  }
};

RankedTensorType widened(RankedTensorType t) {
  SmallVector<int64_t> shape(t.getShape());
  shape[0] = kWideRows;
  return RankedTensorType::get(shape, t.getElementType(), t.getEncoding());
}

struct RowBlockWidening
    : public tawa::impl::RowBlockWideningBase<RowBlockWidening> {
  void runOnOperation() override {
    tt::FuncOp func = getOperation();
    if (func.isExternal() || !func.getBody().hasOneBlock())
      return;
    Block &body = func.getBody().front();

    // program_id(x), used once: pid * 128.
    SmallVector<tt::GetProgramIdOp> pids;
    func.walk([&](tt::GetProgramIdOp pid) {
      if (pid.getAxis() == tt::ProgramIDDim::X)
        pids.push_back(pid);
    });
    if (pids.size() != 1 || !pids[0]->hasOneUse() ||
        pids[0]->getBlock() != &body)
      return;
    auto mul = dyn_cast<arith::MulIOp>(*pids[0]->getUsers().begin());
    if (!mul || mul->getBlock() != &body)
      return;
    Value pid = pids[0].getResult();
    Value factor = mul.getLhs() == pid ? mul.getRhs() : mul.getLhs();
    APInt c;
    if (!matchPattern(factor, m_ConstantInt(&c)) ||
        c.getSExtValue() != kSourceRows)
      return;

    // Row indices: pid * 128, or base + pid * 128 with a base that does
    // not read the program id; each used only as a descriptor access's row.
    struct RowIndex {
      Value index, base; // base null: pid * 128 alone
    };
    SmallVector<RowIndex> indices;
    for (Operation *user : mul->getUsers()) {
      if (auto add = dyn_cast<arith::AddIOp>(user)) {
        Value base =
            add.getLhs() == mul.getResult() ? add.getRhs() : add.getLhs();
        if (base == mul.getResult())
          return;
        indices.push_back({add.getResult(), base});
      } else if (isa<tt::DescriptorLoadOp, tt::DescriptorStoreOp>(user)) {
        indices.push_back({mul.getResult(), Value()});
      } else {
        return;
      }
    }
    SmallVector<tt::DescriptorLoadOp> loads;
    SmallVector<tt::DescriptorStoreOp> stores;
    llvm::SmallDenseMap<Operation *, Value> baseOf;
    for (const RowIndex &ri : indices)
      for (OpOperand &use : ri.index.getUses()) {
        Operation *user = use.getOwner();
        auto checkIndex = [&](OperandRange idx, Value desc) {
          auto type = dyn_cast<tt::TensorDescType>(desc.getType());
          return type && idx.size() == 2 && idx[0] == ri.index &&
                 idx[1] != ri.index && isa<BlockArgument>(desc) &&
                 type.getBlockType().getShape()[0] == kSourceRows;
        };
        if (auto load = dyn_cast<tt::DescriptorLoadOp>(user)) {
          if (!checkIndex(load.getIndices(), load.getDesc()))
            return;
          loads.push_back(load);
        } else if (auto store = dyn_cast<tt::DescriptorStoreOp>(user)) {
          if (!checkIndex(store.getIndices(), store.getDesc()))
            return;
          stores.push_back(store);
        } else {
          return;
        }
        baseOf[user] = ri.base;
      }
    if (loads.empty() || stores.empty())
      return;
    // The row-indexed descriptors are accessed only there.
    llvm::SetVector<Value> descs;
    for (auto load : loads)
      descs.insert(load.getDesc());
    for (auto store : stores)
      descs.insert(store.getDesc());
    for (Value d : descs)
      for (Operation *u : d.getUsers())
        if (!llvm::is_contained(loads, u) && !llvm::is_contained(stores, u))
          return;

    RowClosure closure;
    for (auto load : loads)
      closure.rowLoads.insert(load);
    for (auto store : stores)
      closure.rowStores.insert(store);
    for (auto load : loads)
      closure.mark(load.getResult());
    for (auto store : stores)
      closure.mark(store.getSrc());
    if (!closure.close())
      return;

    // Attention-shaped, and three groups' accumulators fit.
    int64_t accColumns = 0;
    bool rowReduce = false;
    for (Value v : closure.rows) {
      if (auto dot = v.getDefiningOp<tt::DotOp>())
        if (v == dot.getD())
          accColumns += cast<RankedTensorType>(v.getType()).getShape()[1];
      if (auto red = v.getDefiningOp<tt::ReduceOp>())
        rowReduce |= red.getAxis() == 1;
    }
    bool chainedProducts = false;
    func.walk([&](scf::ForOp loop) {
      chainedProducts |=
          llvm::range_size(loop.getBody()->getOps<tt::DotOp>()) == 2;
    });
    if (!rowReduce || !chainedProducts || accColumns == 0 ||
        accColumns > kMaxAccumulatorColumns)
      return;

    // Rewrite. Types first: every row value gets 192 rows.
    MLIRContext *ctx = &getContext();
    for (Value v : closure.rows) {
      auto t = cast<RankedTensorType>(v.getType());
      v.setType(widened(t));
      if (auto c = v.getDefiningOp<arith::ConstantOp>()) {
        auto dense = cast<DenseElementsAttr>(c.getValue());
        c.setValueAttr(DenseElementsAttr::get(
            cast<ShapedType>(v.getType()), dense.getSplatValue<Attribute>()));
      }
    }
    // The row-indexed descriptors: arguments of 192-row blocks; the
    // source's block stays on record for the caller's grid.
    SmallVector<Type> argTypes(func.getArgumentTypes());
    for (Value d : descs) {
      auto arg = cast<BlockArgument>(d);
      auto type = cast<tt::TensorDescType>(arg.getType());
      func.setArgAttr(
          arg.getArgNumber(), "tawa.source_block",
          DenseI64ArrayAttr::get(ctx, type.getBlockType().getShape()));
      auto wide = tt::TensorDescType::get(ctx, widened(type.getBlockType()));
      arg.setType(wide);
      argTypes[arg.getArgNumber()] = wide;
    }
    func.setFunctionType(
        FunctionType::get(ctx, argTypes, func.getFunctionType().getResults()));

    OpBuilder b(mul);
    Location loc = mul.getLoc();
    Value wideRows = arith::ConstantIntOp::create(b, loc, kWideRows, 32);
    mul->replaceUsesOfWith(factor, wideRows);
    // The programs' rows end at 128 nx; the widened count of programs.
    b.setInsertionPoint(pids[0]);
    Value nx = tt::GetNumProgramsOp::create(
        b, loc, b.getI32Type(),
        tt::ProgramIDDimAttr::get(ctx, tt::ProgramIDDim::X));
    Value sourceRows = arith::ConstantIntOp::create(b, loc, kSourceRows, 32);
    Value end = arith::MulIOp::create(b, loc, nx, sourceRows);
    Value roundUp = arith::ConstantIntOp::create(b, loc, kWideRows - 1, 32);
    Value count = arith::DivSIOp::create(
        b, loc, arith::AddIOp::create(b, loc, end, roundUp),
        arith::ConstantIntOp::create(b, loc, kWideRows, 32));
    count.getDefiningOp()->setAttr(kProgramCountAttr, b.getUnitAttr());
    for (auto store : stores) {
      b.setInsertionPoint(store);
      Value limit = end;
      if (Value base = baseOf[store.getOperation()])
        limit = arith::AddIOp::create(b, store.getLoc(), base, end);
      Value clipped = ClipRowsOp::create(
          b, store.getLoc(), store.getDesc().getType(), store.getDesc(), limit);
      store.getDescMutable().assign(clipped);
    }
    func->setAttr("tawa.widened_rows",
                  b.getDenseI64ArrayAttr({kSourceRows, kWideRows}));
  }
};

} // namespace
