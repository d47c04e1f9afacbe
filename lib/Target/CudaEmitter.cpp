//===- CudaEmitter.cpp - CUDA C++ emission of warp-specialized IR --------===//
//
// Translates the IR that -tawa-aref-lowering -tawa-layout-assignment leave
// (DESIGN.md §2.2, §2.3) op by op into CUDA C++ over the tawa device library,
// in the shape of gpu/reference/ref_gemm.cu:
//
//  * kernel parameters: one __grid_constant__ CUtensorMap per tensor
//    descriptor, plain scalars for the rest;
//  * a static shared-memory layout: rings (1024-aligned for the 128-byte
//    swizzle), epilogue staging boxes, then the mbarriers, initialized by
//    thread 0 before the partitions start;
//  * partition 0 (producer) runs on one elected thread of warp group 0,
//    partition 1 (consumers) on warp groups 1..G, each owning F = M / (64 G)
//    64-row fragments of every accumulator;
//  * scalars become C++ variables, scf ops C++ control flow;
//  * a chain of accumulator values (init constant, iter_arg, dot_async,
//    dot_wait, loop result) is ONE register array, because wgmma writes it
//    asynchronously: no copy may sit between issue and wait.
//
// Anything else is rejected at the user's source line rather than
// translated approximately.
//
//===----------------------------------------------------------------------===//

#include "tawa/Target/CudaEmitter.h"

#include "tawa/Dialect/TT/TTDialect.h"
#include "tawa/Dialect/Tawa/TawaDialect.h"
#include "tawa/Transforms/SourceLocation.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FormatVariadic.h"

#include <string>

using namespace mlir;

namespace tawa {
namespace {

constexpr int64_t kSwizzleBytes = 128;
constexpr int64_t kEpiBoxCols = 64;

/// One accumulator register array: `float name[frags][cols / 2]` per thread.
struct Acc {
  std::string name;
  int64_t frags = 0; // 64-row fragments per consumer group
  int64_t cols = 0;  // N of the tile
};

/// A tile living in shared memory: ring slot pointer plus its shape.
struct SmemTile {
  std::string ptr;
  RankedTensorType type; // the [rows, inner] tile as stored
  bool transposed = false;
};

/// A converted accumulator waiting for its store (arith.truncf).
struct Converted {
  Acc acc;
  Type elem;
};

enum class Region { Top, Producer, Consumer };

class Emitter {
public:
  Emitter(tt::FuncOp func, raw_ostream &os) : func(func), os(os) {}

  LogicalResult emit(KernelMetadata &metadata);

private:
  InFlightDiagnostic error(Operation *op) {
    hadError = true;
    return emitError(getUserLocation(op->getLoc())) << "CUDA emission: ";
  }
  InFlightDiagnostic error(Location loc) {
    hadError = true;
    return emitError(getUserLocation(loc)) << "CUDA emission: ";
  }

  raw_ostream &line() {
    for (int i = 0; i < indent; ++i)
      body << "  ";
    return body;
  }
  std::string fresh(StringRef prefix) {
    return (prefix + Twine(counter++)).str();
  }

  FailureOr<std::string> scalarType(Type type, Location loc);
  std::string lookup(Value v);
  std::string bind(Value v, StringRef prefix = "v");

  LogicalResult emitBlock(Block &block);
  LogicalResult emitOp(Operation *op);
  LogicalResult emitScalarArith(Operation *op);
  LogicalResult emitFor(scf::ForOp op);
  LogicalResult emitIf(scf::IfOp op);
  LogicalResult emitWhile(scf::WhileOp op);
  LogicalResult emitWarpSpecialize(WarpSpecializeOp op);
  LogicalResult emitDotAsync(DotAsyncOp op);
  LogicalResult emitDotWait(DotWaitOp op);
  LogicalResult emitStore(tt::DescriptorStoreOp op);
  LogicalResult emitAccElementwise(Operation *op);
  FailureOr<Acc> accOf(Value v, Operation *user, bool fill = true);
  FailureOr<std::string> splatOf(Value v);
  void emitFill(const Acc &acc, StringRef value) {
    line() << "#pragma unroll\n";
    line() << "for (int f = 0; f < " << acc.frags << "; ++f)\n";
    line() << "  fillFragment(" << acc.name << "[f], " << value << ");\n";
  }
  /// Accumulators that start at zero in a loop: instead of zero-filling the
  /// registers before the loop (ptxas then serializes the wgmmas, C7515),
  /// the first product issued runs with scale-d 0; the flag says whether
  /// one was issued, and a loop that ran zero times fills after it.
  llvm::StringMap<std::string> lazyZero;
  LogicalResult assignYield(ValueRange yielded, ArrayRef<std::string> vars,
                            ValueRange targets, Operation *op);

  tt::FuncOp func;
  raw_ostream &os;
  std::string bodyStorage;
  llvm::raw_string_ostream body{bodyStorage};
  int indent = 1;
  int counter = 0;
  bool hadError = false;
  Region region = Region::Top;
  int64_t groups = 0;

  DenseMap<Value, std::string> names;
  DenseMap<Value, Acc> accs;
  DenseMap<Value, SmemTile> tiles;
  DenseMap<Value, Converted> converted;
  struct Ring {
    std::string name;
    int64_t offset, slotBytes;
  };
  DenseMap<Value, Ring> rings;
  struct Bars {
    std::string name;
    int64_t count, arrivals;
  };
  DenseMap<Value, Bars> bars;
  SmallVector<std::pair<Value, std::string>> descParams;
  bool usesEpilogue = false;
};

//===----------------------------------------------------------------------===//
// Values and types
//===----------------------------------------------------------------------===//

FailureOr<std::string> Emitter::scalarType(Type type, Location loc) {
  if (type.isInteger(1))
    return std::string("bool");
  if (type.isInteger(32))
    return std::string("int32_t");
  if (type.isInteger(64))
    return std::string("int64_t");
  if (type.isF32())
    return std::string("float");
  error(loc) << "unsupported scalar type " << type;
  return failure();
}

std::string Emitter::lookup(Value v) {
  auto it = names.find(v);
  if (it != names.end())
    return it->second;
  // Only reachable for values the checks above let through unnamed.
  if (Operation *def = v.getDefiningOp())
    error(def) << "value used before it was emitted";
  else
    error(func) << "block argument without a C++ name";
  return "/*?*/0";
}

std::string Emitter::bind(Value v, StringRef prefix) {
  std::string name = fresh(prefix);
  names[v] = name;
  return name;
}

static bool isIdentifier(StringRef s) {
  if (s.empty() || !(isalpha(s[0]) || s[0] == '_'))
    return false;
  return llvm::all_of(s, [](char c) { return isalnum(c) || c == '_'; });
}

/// Element type names of the device library and the metadata format.
static std::optional<std::pair<StringRef, StringRef>> elemNames(Type t) {
  if (t.isF16())
    return std::make_pair(StringRef("__half"), StringRef("f16"));
  if (t.isBF16())
    return std::make_pair(StringRef("__nv_bfloat16"), StringRef("bf16"));
  if (isa<Float8E4M3FNType>(t))
    return std::make_pair(StringRef("__nv_fp8_e4m3"), StringRef("e4m3"));
  return std::nullopt;
}

static std::optional<StringRef> mmaType(Type t) {
  if (t.isF16())
    return StringRef("MmaType::F16");
  if (t.isBF16())
    return StringRef("MmaType::BF16");
  if (isa<Float8E4M3FNType>(t))
    return StringRef("MmaType::E4M3");
  return std::nullopt;
}

static bool isZeroSplat(Value v) {
  auto c = v.getDefiningOp<arith::ConstantOp>();
  auto splat = c ? dyn_cast<SplatElementsAttr>(c.getValue()) : nullptr;
  if (!splat)
    return false;
  auto f = dyn_cast<FloatAttr>(splat.getSplatValue<Attribute>());
  return f && f.getValue().isPosZero();
}

static int64_t elemBytes(Type t) { return (t.getIntOrFloatBitWidth() + 7) / 8; }

//===----------------------------------------------------------------------===//
// Blocks and ops
//===----------------------------------------------------------------------===//

LogicalResult Emitter::emitBlock(Block &block) {
  for (Operation &op : block) {
    if (failed(emitOp(&op)))
      return failure();
  }
  return success(!hadError);
}

LogicalResult Emitter::emitOp(Operation *op) {
  if (isa<scf::YieldOp, tt::ReturnOp, scf::ConditionOp>(op))
    return success(); // handled by the parent
  if (auto c = dyn_cast<arith::ConstantOp>(op)) {
    if (isa<RankedTensorType>(c.getType())) {
      // Splat tensor constants are materialized where used (accumulator
      // init, epilogue operand), inside the partition that needs them.
      if (!isa<SplatElementsAttr>(c.getValue()))
        return error(op) << "only splat tensor constants are supported";
      return success();
    }
  }
  if (auto forOp = dyn_cast<scf::ForOp>(op))
    return emitFor(forOp);
  if (auto ifOp = dyn_cast<scf::IfOp>(op))
    return emitIf(ifOp);
  if (auto whileOp = dyn_cast<scf::WhileOp>(op))
    return emitWhile(whileOp);
  if (auto ws = dyn_cast<WarpSpecializeOp>(op))
    return emitWarpSpecialize(ws);
  if (auto dot = dyn_cast<DotAsyncOp>(op))
    return emitDotAsync(dot);
  if (auto wait = dyn_cast<DotWaitOp>(op))
    return emitDotWait(wait);
  if (auto store = dyn_cast<tt::DescriptorStoreOp>(op))
    return emitStore(store);

  if (auto alloc = dyn_cast<SmemAllocOp>(op)) {
    // Placed by emit() before the body is translated.
    return success();
  }
  if (isa<MBarrierAllocOp>(op))
    return success();

  if (auto pid = dyn_cast<tt::GetProgramIdOp>(op)) {
    StringRef a = tt::stringifyProgramIDDim(pid.getAxis());
    line() << "const int32_t " << bind(pid.getResult()) << " = blockIdx." << a
           << ";\n";
    return success();
  }

  if (auto wait = dyn_cast<MBarrierWaitOp>(op)) {
    if (region == Region::Top)
      return error(op) << "mbarrier wait outside a partition";
    line() << "mbarrierWait(&" << bars[wait.getBars()].name << "["
           << lookup(wait.getSlot()) << "], " << lookup(wait.getParity())
           << ");\n";
    return success();
  }
  if (auto tx = dyn_cast<MBarrierExpectTxOp>(op)) {
    if (region != Region::Producer)
      return error(op) << "expect_tx is only supported in the producer";
    line() << "mbarrierArriveExpectTx(&" << bars[tx.getBars()].name << "["
           << lookup(tx.getSlot()) << "], " << tx.getBytes() << ");\n";
    return success();
  }
  if (auto arrive = dyn_cast<MBarrierArriveOp>(op)) {
    std::string target =
        bars[arrive.getBars()].name + "[" + lookup(arrive.getSlot()) + "]";
    if (arrive.getPerWarp()) {
      if (region != Region::Consumer)
        return error(op) << "per-warp arrival outside the consumer partition";
      // Lane 0 of each warp, after the warp's own wgmma wait retired its
      // reads of the slot: one arrival per consumer warp.
      line() << "if (laneZero)\n";
      line() << "  mbarrierArrive(&" << target << ");\n";
      return success();
    }
    if (region != Region::Producer)
      return error(op)
             << "single-thread arrival is only supported in the producer";
    line() << "mbarrierArrive(&" << target << ");\n";
    return success();
  }
  if (auto load = dyn_cast<TmaLoadOp>(op)) {
    if (region != Region::Producer)
      return error(op) << "TMA loads are only supported in the producer";
    if (load.getIndices().size() != 2)
      return error(op) << "only rank-2 TMA loads are supported";
    // wgmma reads K-major tiles whose rows are exactly one 128-byte swizzle
    // span; other boxes would need other swizzles and descriptors.
    RankedTensorType block =
        cast<tt::TensorDescType>(load.getDesc().getType()).getBlockType();
    if (block.getShape()[1] * elemBytes(block.getElementType()) !=
        kSwizzleBytes)
      return error(op) << "loaded tile " << block
                       << " must have an inner extent of exactly 128 bytes "
                          "(K-major operands, f16/bf16 BK = 64, e4m3 BK = 128)";
    auto it = rings.find(load.getBuffer());
    if (it == rings.end())
      return error(op) << "TMA load into an unknown buffer";
    // TTIR coordinates are outermost first, TMA's innermost first.
    line() << "tmaLoad2D(" << it->second.name << " + " << lookup(load.getSlot())
           << " * " << it->second.slotBytes << ", &" << names[load.getDesc()]
           << ", &" << bars[load.getBars()].name << "["
           << lookup(load.getSlot()) << "], " << lookup(load.getIndices()[1])
           << ", " << lookup(load.getIndices()[0]) << ");\n";
    return success();
  }
  if (auto slot = dyn_cast<SlotViewOp>(op)) {
    auto it = rings.find(slot.getBuffer());
    if (it == rings.end())
      return error(op) << "slot of an unknown buffer";
    std::string ptr = fresh("tile");
    line() << "uint8_t *" << ptr << " = " << it->second.name << " + "
           << lookup(slot.getSlot()) << " * " << it->second.slotBytes << ";\n";
    tiles[slot.getResult()] = {ptr, slot.getType(), false};
    return success();
  }
  if (auto trans = dyn_cast<tt::TransOp>(op)) {
    auto it = tiles.find(trans->getOperand(0));
    auto order = trans->getAttrOfType<DenseI32ArrayAttr>("order");
    if (it == tiles.end() || !order || order.size() != 2 || order[0] != 1 ||
        order[1] != 0)
      return error(op)
             << "only a [1, 0] transpose of a shared-memory tile is supported";
    SmemTile t = it->second;
    t.transposed = !t.transposed;
    tiles[trans->getResult(0)] = t;
    return success();
  }
  if (auto trunc = dyn_cast<arith::TruncFOp>(op)) {
    if (isa<RankedTensorType>(trunc.getType())) {
      FailureOr<Acc> acc = accOf(trunc.getIn(), op);
      if (failed(acc))
        return failure();
      Type elem = getElementTypeOrSelf(trunc.getType());
      if (!elem.isF16() && !elem.isBF16())
        return error(op) << "only f16 and bf16 outputs are supported";
      if (!llvm::all_of(trunc->getUsers(), [](Operation *u) {
            return isa<tt::DescriptorStoreOp>(u);
          }))
        return error(op) << "a converted accumulator may only be stored";
      converted[trunc.getResult()] = {*acc, elem};
      return success();
    }
  }
  if (isa<tt::SplatOp>(op))
    return success(); // materialized where used, like splat constants
  if (op->getNumResults() == 1 &&
      isa<RankedTensorType>(op->getResult(0).getType()))
    return emitAccElementwise(op);
  if (op->getDialect() && op->getDialect()->getNamespace() == "arith")
    return emitScalarArith(op);
  return error(op) << "unsupported operation '" << op->getName() << "'";
}

LogicalResult Emitter::emitScalarArith(Operation *op) {
  if (op->getNumResults() != 1)
    return error(op) << "unsupported operation '" << op->getName() << "'";
  Value res = op->getResult(0);
  FailureOr<std::string> type = scalarType(res.getType(), op->getLoc());
  if (failed(type))
    return failure();
  auto operand = [&](unsigned i) { return lookup(op->getOperand(i)); };
  // Unsigned views of an operand of the result's width.
  std::string utype = res.getType().isInteger(64) ? "uint64_t" : "uint32_t";
  auto uns = [&](unsigned i) {
    Type t = op->getOperand(i).getType();
    std::string u = t.isInteger(64) ? "uint64_t" : "uint32_t";
    return "(" + u + ")" + operand(i);
  };
  auto bin = [&](StringRef sym) {
    return "(" + operand(0) + " " + sym.str() + " " + operand(1) + ")";
  };
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
      expr = llvm::formatv("{0:e}f", f.getValueAsDouble()).str();
    } else {
      return error(op) << "unsupported constant";
    }
  } else {
    expr =
        llvm::TypeSwitch<Operation *, std::string>(op)
            .Case<arith::AddIOp, arith::AddFOp>([&](auto) { return bin("+"); })
            .Case<arith::SubIOp, arith::SubFOp>([&](auto) { return bin("-"); })
            .Case<arith::MulIOp, arith::MulFOp>([&](auto) { return bin("*"); })
            .Case<arith::DivSIOp, arith::DivFOp>([&](auto) { return bin("/"); })
            .Case<arith::RemSIOp>([&](auto) { return bin("%"); })
            .Case<arith::AndIOp>([&](auto) { return bin("&"); })
            .Case<arith::OrIOp>([&](auto) { return bin("|"); })
            .Case<arith::XOrIOp>([&](auto) { return bin("^"); })
            .Case<arith::ShLIOp>([&](auto) { return bin("<<"); })
            .Case<arith::ShRSIOp>([&](auto) { return bin(">>"); })
            .Case<arith::DivUIOp>([&](auto) {
              return "(" + *type + ")(" + uns(0) + " / " + uns(1) + ")";
            })
            .Case<arith::RemUIOp>([&](auto) {
              return "(" + *type + ")(" + uns(0) + " % " + uns(1) + ")";
            })
            .Case<arith::ShRUIOp>([&](auto) {
              return "(" + *type + ")(" + uns(0) + " >> " + uns(1) + ")";
            })
            .Case<arith::MinSIOp>([&](auto) {
              return "min(" + operand(0) + ", " + operand(1) + ")";
            })
            .Case<arith::MaxSIOp>([&](auto) {
              return "max(" + operand(0) + ", " + operand(1) + ")";
            })
            .Case<arith::MinUIOp>([&](auto) {
              return "(" + *type + ")min(" + uns(0) + ", " + uns(1) + ")";
            })
            .Case<arith::MaxUIOp>([&](auto) {
              return "(" + *type + ")max(" + uns(0) + ", " + uns(1) + ")";
            })
            .Case<arith::CeilDivSIOp>([&](auto) {
              return "tawaCeilDiv(" + operand(0) + ", " + operand(1) + ")";
            })
            .Case<arith::FloorDivSIOp>([&](auto) {
              return "tawaFloorDiv(" + operand(0) + ", " + operand(1) + ")";
            })
            .Case<arith::MaximumFOp, arith::MaxNumFOp>([&](auto) {
              return "fmaxf(" + operand(0) + ", " + operand(1) + ")";
            })
            .Case<arith::MinimumFOp, arith::MinNumFOp>([&](auto) {
              return "fminf(" + operand(0) + ", " + operand(1) + ")";
            })
            .Case<arith::ExtSIOp, arith::TruncIOp, arith::SIToFPOp,
                  arith::FPToSIOp>(
                [&](auto) { return "(" + *type + ")" + operand(0); })
            .Case<arith::ExtUIOp>([&](auto) {
              if (op->getOperand(0).getType().isInteger(1))
                return "(" + *type + ")" + operand(0);
              return "(" + *type + ")" + uns(0);
            })
            .Case<arith::SelectOp>([&](auto) {
              return "(" + operand(0) + " ? " + operand(1) + " : " +
                     operand(2) + ")";
            })
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
            .Default([&](Operation *) { return std::string(); });
    (void)utype;
  }
  if (expr.empty())
    return error(op) << "unsupported operation '" << op->getName() << "'";
  line() << "const " << *type << " " << bind(res) << " = " << expr << ";\n";
  return success(!hadError);
}

LogicalResult Emitter::assignYield(ValueRange yielded,
                                   ArrayRef<std::string> vars,
                                   ValueRange targets, Operation *op) {
  // Yields are parallel assignments (a rotation such as yield %b, %a is
  // common), so read every operand into a temporary first.
  SmallVector<std::pair<std::string, std::string>> moves;
  for (auto [i, v] : llvm::enumerate(yielded)) {
    Value target = targets[i];
    if (isa<RankedTensorType>(v.getType())) {
      FailureOr<Acc> acc = accOf(v, op);
      if (failed(acc))
        return failure();
      if (acc->name != accs[target].name)
        return error(op) << "an accumulator chain must stay in one register "
                            "array (yielded value is a different one)";
      continue;
    }
    std::string tmp = fresh("next");
    FailureOr<std::string> type = scalarType(v.getType(), op->getLoc());
    if (failed(type))
      return failure();
    line() << "const " << *type << " " << tmp << " = " << lookup(v) << ";\n";
    moves.push_back({vars[i], tmp});
  }
  for (auto &[var, tmp] : moves)
    line() << var << " = " << tmp << ";\n";
  return success();
}

LogicalResult Emitter::emitFor(scf::ForOp op) {
  if (!op.getInductionVar().getType().isInteger(32))
    return error(op) << "only i32 loops are supported";
  if (op.getUnsignedCmp())
    return error(op) << "unsigned loop bounds are not supported";
  SmallVector<std::string> vars;
  SmallVector<Acc> lazyAfter;
  for (auto [init, arg, res] :
       llvm::zip(op.getInitArgs(), op.getRegionIterArgs(), op.getResults())) {
    if (isa<RankedTensorType>(arg.getType())) {
      bool lazy = !accs.count(init) && isZeroSplat(init) && arg.hasOneUse() &&
                  isa<DotAsyncOp>(*arg.getUsers().begin()) &&
                  arg.getUsers().begin()->getBlock() == op.getBody();
      FailureOr<Acc> acc = accOf(init, op, /*fill=*/!lazy);
      if (failed(acc))
        return failure();
      if (lazy) {
        std::string flag = acc->name + "Live";
        line() << "bool " << flag << " = false; // a product was issued\n";
        lazyZero[acc->name] = flag;
        lazyAfter.push_back(*acc);
      }
      accs[arg] = *acc;
      accs[res] = *acc;
      vars.push_back(acc->name);
      continue;
    }
    FailureOr<std::string> type = scalarType(arg.getType(), op.getLoc());
    if (failed(type))
      return failure();
    std::string var = fresh("iter");
    line() << *type << " " << var << " = " << lookup(init) << ";\n";
    names[arg] = var;
    names[res] = var;
    vars.push_back(var);
  }
  std::string iv = fresh("k");
  names[op.getInductionVar()] = iv;
  line() << "for (int32_t " << iv << " = " << lookup(op.getLowerBound()) << "; "
         << iv << " < " << lookup(op.getUpperBound()) << "; " << iv
         << " += " << lookup(op.getStep()) << ") {\n";
  ++indent;
  if (failed(emitBlock(*op.getBody())))
    return failure();
  auto yield = cast<scf::YieldOp>(op.getBody()->getTerminator());
  if (failed(assignYield(yield.getOperands(), vars, op.getRegionIterArgs(),
                         yield)))
    return failure();
  --indent;
  line() << "}\n";
  for (const Acc &acc : lazyAfter) {
    std::string flag = lazyZero[acc.name];
    line() << "if (!" << flag << ") { // the loop ran zero times\n";
    ++indent;
    emitFill(acc, "0.0f");
    --indent;
    line() << "}\n";
    lazyZero.erase(acc.name);
  }
  return success();
}

LogicalResult Emitter::emitIf(scf::IfOp op) {
  SmallVector<std::string> vars;
  for (Value res : op.getResults()) {
    if (isa<RankedTensorType>(res.getType()))
      return error(op) << "tensor results of scf.if are not supported";
    FailureOr<std::string> type = scalarType(res.getType(), op.getLoc());
    if (failed(type))
      return failure();
    std::string var = fresh("sel");
    line() << *type << " " << var << ";\n";
    names[res] = var;
    vars.push_back(var);
  }
  line() << "if (" << lookup(op.getCondition()) << ") {\n";
  ++indent;
  if (failed(emitBlock(*op.thenBlock())) ||
      failed(
          assignYield(op.thenYield().getOperands(), vars, op.getResults(), op)))
    return failure();
  --indent;
  if (!op.getElseRegion().empty()) {
    line() << "} else {\n";
    ++indent;
    if (failed(emitBlock(*op.elseBlock())) ||
        failed(assignYield(op.elseYield().getOperands(), vars, op.getResults(),
                           op)))
      return failure();
    --indent;
  }
  line() << "}\n";
  return success();
}

LogicalResult Emitter::emitWhile(scf::WhileOp op) {
  // while (true) { before; if (!cond) break; after; } with the before
  // arguments as variables; results are the condition's forwarded values.
  SmallVector<std::string> vars, outs;
  for (auto [init, arg] : llvm::zip(op.getInits(), op.getBeforeArguments())) {
    if (isa<RankedTensorType>(arg.getType()))
      return error(op) << "tensor values in scf.while are not supported";
    FailureOr<std::string> type = scalarType(arg.getType(), op.getLoc());
    if (failed(type))
      return failure();
    std::string var = fresh("w");
    line() << *type << " " << var << " = " << lookup(init) << ";\n";
    names[arg] = var;
    vars.push_back(var);
  }
  for (Value res : op.getResults()) {
    FailureOr<std::string> type = scalarType(res.getType(), op.getLoc());
    if (failed(type))
      return failure();
    std::string var = fresh("wout");
    line() << *type << " " << var << ";\n";
    names[res] = var;
    outs.push_back(var);
  }
  line() << "while (true) {\n";
  ++indent;
  if (failed(emitBlock(op.getBefore().front())))
    return failure();
  scf::ConditionOp cond = op.getConditionOp();
  for (auto [v, out] : llvm::zip(cond.getArgs(), outs))
    line() << out << " = " << lookup(v) << ";\n";
  line() << "if (!" << lookup(cond.getCondition()) << ")\n";
  line() << "  break;\n";
  for (auto [arg, out] : llvm::zip(op.getAfterArguments(), outs))
    names[arg] = out;
  if (failed(emitBlock(op.getAfter().front())))
    return failure();
  auto yield = cast<scf::YieldOp>(op.getAfter().front().getTerminator());
  if (failed(assignYield(yield.getOperands(), vars, op.getBeforeArguments(),
                         yield)))
    return failure();
  --indent;
  line() << "}\n";
  return success();
}

//===----------------------------------------------------------------------===//
// Partitions
//===----------------------------------------------------------------------===//

LogicalResult Emitter::emitWarpSpecialize(WarpSpecializeOp op) {
  if (region != Region::Top)
    return error(op) << "nested warp_specialize";
  ArrayRef<int32_t> warps = op.getWarps(), regs = op.getRegs();
  if (warps.size() != 2 || warps[0] != 4 || warps[1] % 4 != 0 ||
      warps[1] / 4 < 1 || warps[1] / 4 > 2)
    return error(op) << "supported: one 4-warp producer and 1 or 2 consumer "
                        "warp groups";
  groups = warps[1] / 4;

  line() << "if (warpGroupIndex() == 0) {\n";
  ++indent;
  line() << "// Producer: one elected thread issues waits, expect_tx and TMA "
            "loads;\n";
  line() << "// the rest of the warp group only hands its registers over.\n";
  line() << "setmaxnregDec<" << regs[0] << ">();\n";
  line() << "if (warpInGroup() == 0 && electOne()) {\n";
  ++indent;
  region = Region::Producer;
  if (failed(emitBlock(op.getPartitions()[0].front())))
    return failure();
  --indent;
  line() << "}\n";
  --indent;
  line() << "} else {\n";
  ++indent;
  region = Region::Consumer;
  line() << "setmaxnregInc<" << regs[1] << ">();\n";
  line() << "// Consumer group cg owns rows [64 F cg, 64 F (cg + 1)) of every "
            "accumulator tile.\n";
  line() << "const int cg = warpGroupIndex() - 1;\n";
  line() << "const int tid = threadIdx.x % kWarpGroupThreads;\n";
  line() << "const bool laneZero = threadIdx.x % 32 == 0;\n";
  line() << "uint32_t epiBox = 0; // epilogue boxes staged so far\n";
  line() << "(void)cg; (void)tid; (void)laneZero; (void)epiBox;\n";
  if (failed(emitBlock(op.getPartitions()[1].front())))
    return failure();
  line() << "// Global writes of the last stores must land before the CTA "
            "retires.\n";
  line() << "if (tid == 0)\n";
  line() << "  tmaStoreWait<0>();\n";
  --indent;
  line() << "}\n";
  region = Region::Top;
  return success();
}

//===----------------------------------------------------------------------===//
// Accumulators
//===----------------------------------------------------------------------===//

FailureOr<std::string> Emitter::splatOf(Value v) {
  if (auto c = v.getDefiningOp<arith::ConstantOp>()) {
    if (auto splat = dyn_cast<SplatElementsAttr>(c.getValue())) {
      if (auto f = dyn_cast<FloatAttr>(splat.getSplatValue<Attribute>()))
        return llvm::formatv("{0:e}f", f.getValueAsDouble()).str();
    }
  }
  if (auto s = v.getDefiningOp<tt::SplatOp>()) {
    if (s->getOperand(0).getType().isF32())
      return lookup(s->getOperand(0));
  }
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
  if (rows % (64 * groups) != 0 || (cols != 64 && cols != 128 && cols != 256)) {
    error(user) << "accumulator " << type << " does not split into 64-row "
                << "fragments over " << groups
                << " consumer group(s) with N in {64, 128, 256}";
    return failure();
  }
  // Only splats start a chain; any other value must have come from one.
  FailureOr<std::string> init = splatOf(v);
  if (failed(init)) {
    error(user) << "accumulator value is not a splat or part of an "
                   "accumulator chain";
    return failure();
  }
  Acc acc{fresh("acc"), rows / (64 * groups), cols};
  // Correct but slow: ptxas keeps at most ~232 registers per consumer thread.
  if (acc.frags * cols / 2 > 128)
    emitWarning(getUserLocation(user->getLoc()))
        << "CUDA emission: the accumulator takes " << acc.frags * cols / 2
        << " registers per consumer thread and will spill; use more consumer "
           "groups (--consumer-groups="
        << 2 * groups << ")";
  line() << "float " << acc.name << "[" << acc.frags << "][" << cols / 2
         << "];\n";
  if (fill)
    emitFill(acc, *init);
  // A constant used twice starts two chains; only this use is bound.
  return acc;
}

LogicalResult Emitter::emitDotAsync(DotAsyncOp op) {
  if (region != Region::Consumer)
    return error(op) << "dot_async outside the consumer partition";
  if (!op.getC().hasOneUse())
    return error(op) << "the accumulator operand has other uses; wgmma "
                        "updates it in place";
  FailureOr<Acc> acc = accOf(op.getC(), op);
  if (failed(acc))
    return failure();
  auto a = tiles.find(op.getA()), b = tiles.find(op.getB());
  if (a == tiles.end() || b == tiles.end())
    return error(op) << "dot operands must be shared-memory ring slots";
  const SmemTile &ta = a->second, &tb = b->second;
  Type elem = ta.type.getElementType();
  std::optional<StringRef> mma = mmaType(elem);
  if (!mma || tb.type.getElementType() != elem)
    return error(op) << "dot operands must both be f16, bf16 or e4m3";
  // K-major A ([M, K] slot) and K-major B (tt.trans of an [N, K] slot), each
  // row exactly one 128-byte swizzle span.
  int64_t k = ta.type.getShape()[1];
  if (ta.transposed || !tb.transposed || tb.type.getShape()[1] != k ||
      k * elemBytes(elem) != kSwizzleBytes)
    return error(op) << "supported operands: K-major A [M, K] and K-major B "
                        "(transpose of [N, K]) with K * element size = 128 "
                        "bytes";
  if (ta.type.getShape()[0] != acc->frags * 64 * groups ||
      tb.type.getShape()[0] != acc->cols)
    return error(op) << "operand tiles do not match the accumulator";
  int64_t mmaK = isa<Float8E4M3FNType>(elem) ? 32 : 16;
  int64_t kBytes = mmaK * elemBytes(elem);
  auto lazy = lazyZero.find(acc->name);
  std::string scaleD = "1";
  if (lazy != lazyZero.end())
    scaleD = "(" + lazy->second + " || kk > 0) ? 1 : 0";
  line() << "wgmmaFence();\n";
  line() << "#pragma unroll\n";
  line() << "for (int f = 0; f < " << acc->frags << "; ++f) {\n";
  line() << "  const uint64_t descA = descKMajorSw128(" << ta.ptr << " + (cg * "
         << acc->frags << " + f) * " << 64 * kSwizzleBytes << ");\n";
  line() << "  const uint64_t descB = descKMajorSw128(" << tb.ptr << ");\n";
  line() << "#pragma unroll\n";
  line() << "  for (int kk = 0; kk < " << k / mmaK << "; ++kk)\n";
  line() << "    wgmmaSS<" << acc->cols << ", " << *mma << ">(" << acc->name
         << "[f], descAdvance(descA, kk * " << kBytes
         << "), descAdvance(descB, kk * " << kBytes << "), " << scaleD
         << ");\n";
  line() << "}\n";
  line() << "wgmmaCommit();\n";
  if (lazy != lazyZero.end())
    line() << lazy->second << " = true;\n";
  accs[op.getD()] = *acc;
  return success();
}

LogicalResult Emitter::emitDotWait(DotWaitOp op) {
  if (region != Region::Consumer)
    return error(op) << "dot_wait outside the consumer partition";
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

LogicalResult Emitter::emitAccElementwise(Operation *op) {
  if (!isa<arith::AddFOp, arith::SubFOp, arith::MulFOp, arith::DivFOp,
           arith::MaximumFOp, arith::MaxNumFOp, arith::MinimumFOp,
           arith::MinNumFOp>(op) ||
      op->getNumOperands() != 2)
    return error(op) << "unsupported tensor operation '" << op->getName()
                     << "' (epilogues support element-wise f32 arithmetic "
                        "with a scalar or splat operand)";
  if (isa<arith::ConstantOp, tt::SplatOp>(op))
    return success();
  // One operand is the accumulator, updated in place; the other a splat.
  int accIdx = accs.count(op->getOperand(0)) ? 0 : 1;
  Value accV = op->getOperand(accIdx), other = op->getOperand(1 - accIdx);
  if (!accs.count(accV))
    return error(op) << "element-wise operand is not an accumulator";
  if (!accV.hasOneUse())
    return error(op) << "an accumulator updated in place must have no "
                        "other uses";
  FailureOr<std::string> s = splatOf(other);
  if (failed(s))
    return error(op) << "the other operand must be a scalar splat or a splat "
                        "constant";
  Acc acc = accs[accV];
  std::string x = acc.name + "[f][i]";
  std::string a = accIdx == 0 ? x : *s, b = accIdx == 0 ? *s : x;
  std::string expr =
      llvm::TypeSwitch<Operation *, std::string>(op)
          .Case<arith::AddFOp>([&](auto) { return a + " + " + b; })
          .Case<arith::SubFOp>([&](auto) { return a + " - " + b; })
          .Case<arith::MulFOp>([&](auto) { return a + " * " + b; })
          .Case<arith::DivFOp>([&](auto) { return a + " / " + b; })
          .Case<arith::MaximumFOp, arith::MaxNumFOp>(
              [&](auto) { return "fmaxf(" + a + ", " + b + ")"; })
          .Default([&](Operation *) { return "fminf(" + a + ", " + b + ")"; });
  line() << "#pragma unroll\n";
  line() << "for (int f = 0; f < " << acc.frags << "; ++f)\n";
  line() << "#pragma unroll\n";
  line() << "  for (int i = 0; i < " << acc.cols / 2 << "; ++i)\n";
  line() << "    " << x << " = " << expr << ";\n";
  accs[op->getResult(0)] = acc;
  return success();
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
  std::string desc = names[op.getDesc()];
  std::string row0 = lookup(op.getIndices()[0]),
              col0 = lookup(op.getIndices()[1]);
  line() << "// Epilogue: " << boxes
         << " boxes of 64 x 64 per fragment, "
            "staged through two swizzled buffers; a buffer is rewritten only "
            "after the TMA store that read it did.\n";
  line() << "#pragma unroll\n";
  line() << "for (int f = 0; f < " << acc.frags << "; ++f) {\n";
  ++indent;
  line() << "const int32_t row = " << row0 << " + (cg * " << acc.frags
         << " + f) * 64;\n";
  for (int64_t b = 0; b < boxes; ++b) {
    line() << "{\n";
    ++indent;
    line() << "uint8_t *buf = epi + (cg * 2 + (epiBox & 1)) * "
           << 64 * kSwizzleBytes << ";\n";
    line() << "if (tid == 0)\n";
    line() << "  tmaStoreWaitRead<1>();\n";
    line() << "namedBarrierSync(1 + cg, kWarpGroupThreads);\n";
    line() << "storeAccBoxSwizzled<" << cty << ", " << b << ">(" << acc.name
           << "[f], buf);\n";
    line() << "fenceProxyAsyncShared();\n";
    line() << "namedBarrierSync(1 + cg, kWarpGroupThreads);\n";
    line() << "if (tid == 0) {\n";
    line() << "  tmaStore2D(&" << desc << ", buf, " << col0 << " + "
           << b * kEpiBoxCols << ", row);\n";
    line() << "  tmaStoreCommit();\n";
    line() << "}\n";
    line() << "++epiBox;\n";
    --indent;
    line() << "}\n";
  }
  --indent;
  line() << "}\n";
  return success();
}

//===----------------------------------------------------------------------===//
// Kernel
//===----------------------------------------------------------------------===//

LogicalResult Emitter::emit(KernelMetadata &md) {
  Block &entry = func.getBody().front();
  std::string kernelName = func.getSymName().str();

  // Parameters, named after the user's arguments where Triton kept them.
  llvm::StringSet<> used;
  struct Param : KernelParam {
    std::string ctype;
  };
  SmallVector<Param> params;
  WarpSpecializeOp ws;
  for (Operation &op : entry)
    if (auto w = dyn_cast<WarpSpecializeOp>(op))
      ws = w;
  if (!ws)
    return error(func) << "no warp_specialize op: run the ws-ir pipeline "
                          "with -tawa-aref-lowering -tawa-layout-assignment";
  for (BlockArgument arg : entry.getArguments()) {
    std::string base = "arg" + std::to_string(arg.getArgNumber());
    if (auto nameLoc = dyn_cast<NameLoc>(arg.getLoc()))
      if (isIdentifier(nameLoc.getName().strref()))
        base = nameLoc.getName().str();
    std::string name = base;
    for (int i = 1; used.contains(name); ++i)
      name = base + "_" + std::to_string(i);
    used.insert(name);
    names[arg] = name;
    Param p;
    p.name = name;
    if (auto desc = dyn_cast<tt::TensorDescType>(arg.getType())) {
      RankedTensorType block = desc.getBlockType();
      auto en = elemNames(block.getElementType());
      if (block.getRank() != 2 || !en)
        return error(arg.getLoc())
               << "only rank-2 f16/bf16/e4m3 tensor descriptors are supported";
      p.kind = "tensormap";
      p.dtype = en->second.str();
      p.box.assign(block.getShape().begin(), block.getShape().end());
      // Store descriptors move 64-row x 64-column boxes (one fragment's
      // slice each); loads move the whole tile.
      bool stored = llvm::any_of(arg.getUsers(), [](Operation *u) {
        return isa<tt::DescriptorStoreOp>(u);
      });
      bool loaded = llvm::any_of(arg.getUsers(), [](Operation *u) {
        return !isa<tt::DescriptorStoreOp>(u);
      });
      // One tensor map has one box: the store's 64 x 64 or the load's tile.
      if (stored && loaded)
        return error(arg.getLoc()) << "a descriptor both loaded and stored "
                                      "is not supported";
      if (stored) {
        // Checked again at the store, at its line, for a clear message.
        if (p.box[1] % kEpiBoxCols != 0)
          return error(*llvm::find_if(arg.getUsers(),
                                      [](Operation *u) {
                                        return isa<tt::DescriptorStoreOp>(u);
                                      }))
                 << "stored tiles must be a multiple of 64 columns";
        p.box = {64, kEpiBoxCols};
      }
      descParams.push_back({arg, name});
      p.ctype = "const __grid_constant__ CUtensorMap";
    } else if (arg.getType().isInteger(32) || arg.getType().isInteger(64)) {
      p.kind = arg.getType().isInteger(32) ? "i32" : "i64";
      p.ctype = arg.getType().isInteger(32) ? "int32_t" : "int64_t";
    } else if (arg.getType().isF32()) {
      p.kind = "f32";
      p.ctype = "float";
    } else {
      return error(arg.getLoc())
             << "unsupported kernel argument type " << arg.getType();
    }
    params.push_back(p);
  }

  // Shared memory: rings first (each 1024-aligned for the 128-byte swizzle
  // atoms), epilogue boxes, then the mbarriers.
  int64_t offset = 0;
  SmallVector<std::string> layout;
  for (Operation &op : entry) {
    if (auto alloc = dyn_cast<SmemAllocOp>(op)) {
      auto type = cast<MemRefType>(alloc.getType());
      int64_t bytes = elemBytes(type.getElementType());
      for (int64_t d : type.getShape())
        bytes *= d;
      offset = llvm::alignTo(offset, 1024);
      std::string name = fresh("ring");
      rings[alloc.getResult()] = {name, offset, bytes / type.getShape()[0]};
      layout.push_back(
          llvm::formatv("uint8_t *{0} = smem + {1}; // {2}", name, offset, type)
              .str());
      offset += bytes;
    }
  }
  groups = ws.getWarps().size() == 2 ? ws.getWarps()[1] / 4 : 1;
  bool stores = false;
  ws.walk([&](tt::DescriptorStoreOp) { stores = true; });
  offset = llvm::alignTo(offset, 1024);
  int64_t epiOffset = offset;
  if (stores)
    offset += groups * 2 * 64 * kSwizzleBytes;
  layout.push_back(llvm::formatv("uint8_t *epi = smem + {0}; // 2 x 64x64 "
                                 "staging boxes per consumer group",
                                 epiOffset)
                       .str());
  SmallVector<std::string> inits;
  for (Operation &op : entry) {
    if (auto alloc = dyn_cast<MBarrierAllocOp>(op)) {
      int64_t count = alloc.getType().getCount();
      std::string name = fresh("bars");
      bars[alloc.getResult()] = {name, count, alloc.getArrivals()};
      layout.push_back(llvm::formatv("MBarrier *{0} = reinterpret_cast<"
                                     "MBarrier *>(smem + {1});",
                                     name, offset)
                           .str());
      inits.push_back(llvm::formatv("for (int s = 0; s < {0}; ++s)\n      "
                                    "mbarrierInit(&{1}[s], {2});",
                                    count, name, alloc.getArrivals())
                          .str());
      offset += 8 * count;
    }
  }
  int64_t smemBytes = offset + 1024;
  if (smemBytes > 232448)
    return error(ws) << "needs " << smemBytes
                     << " bytes of shared memory; Hopper has 232448";

  if (failed(emitBlock(entry)))
    return failure();
  int64_t threads = 128 * (1 + groups);

  // Source.
  os << "// Generated by tawac --emit=cuda from kernel " << kernelName
     << ". Do not edit.\n";
  os << "#include \"tawa/device/device.cuh\"\n\n";
  os << "using namespace tawa::device;\n\n";
  os << "namespace {\n"
     << "// arith.ceildivsi / floordivsi: rounding toward +/- infinity.\n"
     << "template <typename T> __device__ __forceinline__ T tawaCeilDiv(T a, "
        "T b) {\n"
     << "  T q = a / b;\n  return q + T((a % b != 0) && ((a < 0) == (b < 0)));"
        "\n}\n"
     << "template <typename T> __device__ __forceinline__ T tawaFloorDiv(T a, "
        "T b) {\n"
     << "  T q = a / b;\n  return q - T((a % b != 0) && ((a < 0) != (b < 0)));"
        "\n}\n"
     << "} // namespace\n\n";
  os << "extern \"C\" __global__ void __launch_bounds__(" << threads
     << ", 1)\n    " << kernelName << "(";
  for (auto [i, p] : llvm::enumerate(params))
    os << (i ? ",\n        " : "") << p.ctype << " " << p.name;
  os << ") {\n";
  os << "  extern __shared__ uint8_t smemRaw[];\n";
  os << "  // The dynamic shared-memory base is only 16-byte aligned; round up "
        "to the\n  // 1024 bytes of a 128B-swizzle atom (the metadata "
        "reserves the slack).\n";
  os << "  uint8_t *smem = reinterpret_cast<uint8_t *>(\n"
     << "      (reinterpret_cast<uintptr_t>(smemRaw) + 1023) & "
        "~uintptr_t(1023));\n";
  for (const std::string &l : layout)
    os << "  " << l << "\n";
  os << "  (void)epi;\n";
  os << "  if (threadIdx.x == 0) {\n";
  for (const std::string &i : inits)
    os << "    " << i << "\n";
  os << "    fenceMBarrierInit();\n";
  for (auto &[v, name] : descParams)
    os << "    tmaPrefetchDescriptor(&" << name << ");\n";
  os << "  }\n  __syncthreads();\n";
  os << bodyStorage;
  os << "}\n";

  // Metadata (docs/METADATA.md). The grid is Triton's launch grid, chosen
  // by the caller.
  md.kernel = kernelName;
  md.threads = threads;
  md.dynamicSmemBytes = smemBytes;
  for (const Param &p : params)
    md.params.push_back(p);
  md.consumerGroups = groups;
  for (Operation &op : entry)
    if (auto alloc = dyn_cast<SmemAllocOp>(op))
      md.arefDepth = std::max<int64_t>(
          md.arefDepth, cast<MemRefType>(alloc.getType()).getShape()[0]);
  ws.walk([&](DotWaitOp wait) {
    if (wait->getParentOfType<scf::ForOp>())
      md.mmaDepth = std::max<int64_t>(md.mmaDepth, wait.getPendings());
  });
  return success(!hadError);
}

} // namespace

FailureOr<KernelMetadata> emitCuda(tt::FuncOp func, raw_ostream &source) {
  // Buffer the output so that a failure writes nothing.
  std::string src;
  llvm::raw_string_ostream srcOs(src);
  Emitter emitter(func, srcOs);
  KernelMetadata metadata;
  if (failed(emitter.emit(metadata)))
    return failure();
  source << src;
  return metadata;
}

void writeMetadataJson(const KernelMetadata &md, StringRef cubinName,
                       raw_ostream &json) {
  json << "{\n  \"format\": \"tawa-kernel-metadata/1\",\n";
  json << "  \"kernel\": \"" << md.kernel << "\",\n";
  json << "  \"cubin\": \"" << cubinName << "\",\n";
  json << "  \"block\": [" << md.threads << ", 1, 1],\n";
  json << "  \"cluster\": [1, 1, 1],\n";
  json << "  \"dynamic_smem_bytes\": " << md.dynamicSmemBytes << ",\n";
  json << "  \"grid\": {\"kind\": \"explicit\"},\n";
  json << "  \"params\": [\n";
  for (auto [i, p] : llvm::enumerate(md.params)) {
    json << "    {\"name\": \"" << p.name << "\", \"kind\": \"" << p.kind
         << "\"";
    if (p.kind == "tensormap") {
      json << ", \"dtype\": \"" << p.dtype << "\", \"box\": [";
      llvm::interleaveComma(p.box, json);
      json << "], \"swizzle\": \"128B\", \"oob\": \"zero\"";
    }
    json << "}" << (i + 1 < md.params.size() ? "," : "") << "\n";
  }
  json << "  ],\n";
  json << "  \"_tawa\": {\"aref_depth\": " << md.arefDepth
       << ", \"mma_depth\": " << md.mmaDepth
       << ", \"consumer_groups\": " << md.consumerGroups;
  if (md.resources)
    json << ", \"registers\": " << md.resources->registers
         << ", \"spill_store_bytes\": " << md.resources->spillStoreBytes
         << ", \"spill_load_bytes\": " << md.resources->spillLoadBytes
         << ", \"stack_bytes\": " << md.resources->stackBytes;
  json << "}\n}\n";
}

} // namespace tawa
