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
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/SmallBitVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <cstdio>
#include <set>
#include <string>

using namespace mlir;

namespace tawa {
namespace {

constexpr int64_t kSwizzleBytes = 128;
constexpr int64_t kEpiBoxCols = 64;
/// More than half of an SM's 228 KiB of shared memory (with the 1 KiB each
/// CTA reserves): no second CTA fits next to one that asks for this much.
constexpr int64_t kExclusiveSmemBytes = 116 * 1024;

/// Cycles of the consumers' CUDA cores to stage one deferred 64 x 64
/// epilogue box (convert, stmatrix, fence, barrier, TMA store issue), from
/// the H100 at fixed clocks: storing all four boxes of a 128 x 256 tile
/// after the K loop took 7.5 % more cycles than deferring two at fp16,
/// K = 1024 (docs/PERFORMANCE.md, "At fixed clocks"): about 1,200 cycles
/// per tile of 16 K steps for four boxes per group staged while the tensor
/// cores idle, 300 per box.
constexpr int64_t kEpilogueBoxCycles = 300;

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

/// How a register tensor of the consumer is spread over a warp group's
/// threads (DESIGN.md §2.3): `acc` is the wgmma accumulator fragment
/// (`T x[F][N / 2]`, F 64-row fragments per consumer group), `row` one value
/// per accumulator row a thread holds (`T x[F][2]`), `col` one per column
/// (`T x[N / 4]`, entry 2j + e for column 8j + 2 (lane % 4) + e).
enum class Lay { Acc, Row, Col };

/// A register tensor that is not an accumulator chain: a register array, or
/// the index expression of a tt.make_range.
struct Reg {
  Lay lay = Lay::Acc;
  std::string array;      ///< "" for a range
  std::string rangeStart; ///< tt.make_range: its start
  int64_t frags = 0;      ///< acc and row: 64-row fragments per group
  int64_t cols = 0;       ///< acc and col: N
};

class Emitter {
public:
  Emitter(tt::FuncOp func, raw_ostream &os, const CudaEmitOptions &options)
      : func(func), os(os), options(options) {}

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
  /// A `const CUtensorMap *` expression for a tensor descriptor value.
  std::string descRef(Value desc) {
    if (isa<BlockArgument>(desc))
      return "&" + lookup(desc);
    return lookup(desc);
  }
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
  LogicalResult emitTensorOp(Operation *op);
  LogicalResult emitElementwise(Operation *op);
  FailureOr<std::string> at(Value v, Lay target, Operation *user);
  FailureOr<Lay> layoutOf(Value v, Operation *user);
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
  /// A new accumulator array: one that the then branch of the enclosing
  /// scf.if declared, when this is its else branch and the shape matches,
  /// else a fresh one. The arrays of a then branch are declared before the
  /// if (emitIf) so that the else branch can reuse them: ptxas keeps the
  /// wgmma accumulators of two versions of a loop in one set of registers
  /// only if they are one array (with two it spilled and serialized the
  /// wgmmas, C7512).
  Acc newAcc(int64_t frags, int64_t cols);
  SmallVector<Acc> *hoistedAccs = nullptr;
  SmallVector<Acc> reusableAccs;
  LogicalResult assignYield(ValueRange yielded, ArrayRef<std::string> vars,
                            ValueRange targets, Operation *op);

  tt::FuncOp func;
  raw_ostream &os;
  CudaEmitOptions options;
  std::string bodyStorage;
  llvm::raw_string_ostream body{bodyStorage};
  int indent = 1;
  int counter = 0;
  bool hadError = false;
  Region region = Region::Top;
  int64_t groups = 0;

  DenseMap<Value, std::string> names;
  DenseMap<Value, Acc> accs;
  DenseMap<Value, Reg> regs;
  DenseMap<Value, SmemTile> tiles;
  DenseMap<Value, Converted> converted;
  struct Ring {
    std::string name;
    int64_t offset, slotBytes;
    int64_t stride; ///< bytes from one slot to the next
  };
  DenseMap<Value, Ring> rings;
  /// Products issued as one wgmma of twice the width (findFusedProducts):
  /// the first's dot_async -> the second's; the second's dot_async and the
  /// first's dot_wait emit nothing of their own.
  DenseMap<Operation *, DotAsyncOp> fusedProducts;
  llvm::DenseSet<Operation *> fusedAway;
  /// Ring buffers laid out slot by slot side by side (the B tiles of fused
  /// products): first -> second.
  DenseMap<Value, Value> ringPartner;
  void findFusedProducts();
  bool emitFusedProducts(DotAsyncOp first, DotAsyncOp second, const Acc &acc0);
  static bool isLastProduct(DotAsyncOp op);
  struct Bars {
    std::string name;
    int64_t count, arrivals;
  };
  DenseMap<Value, Bars> bars;
  SmallVector<std::pair<Value, std::string>> descParams;
  /// Device-built tensor maps: global slots per SM (`tawaTensorMaps`) and
  /// 128-byte shared staging buffers, one per creating warp.
  struct DeviceMap {
    int64_t slot;                 ///< first slot (consumers: + cg)
    SmallVector<int64_t, 2> box;  ///< outermost first
    std::string elem;             ///< TensorMapElem
  };
  DenseMap<Operation *, DeviceMap> deviceMaps;
  int64_t deviceMapSlots = 0;
  /// Full barriers the producer tracks, to drain their fills before it
  /// rewrites a tensor map that loads in flight may still read.
  struct FillParity {
    std::string name;
    int64_t depth;
  };
  llvm::MapVector<Value, FillParity> fillParity;
  MBarrierWaitOp lastProducerWait;
  LogicalResult emitMakeTensorDesc(tt::MakeTensorDescOp op);
  bool usesEpilogue = false;
  /// The deferred epilogue (CudaEmitOptions::epilogueOverlap) where it
  /// applies: the last `deferred` boxes of each fragment's store stay in
  /// registers (`pendC`, packed) and are staged one per product issued in
  /// the next tile's K loop, so that the tensor cores work while they are
  /// written; the rest are stored at once.
  /// Stores that run in the same tile iteration (a paired kernel's two) keep
  /// their boxes in separate segments (`pendC`, `pendC1`, ...); the versions
  /// of a K loop (alternatives of one scf.if) share them.
  struct DeferredEpilogue {
    int64_t frags = 0, boxes = 0, deferred = 0;
    SmallVector<std::string> segmentDescs;
    DenseMap<Operation *, unsigned> segmentOf;
  };
  std::optional<DeferredEpilogue> deferredEpi;
  void planDeferredEpilogue(WarpSpecializeOp ws);
  static std::string pendSuffix(unsigned segment) {
    return segment ? std::to_string(segment) : std::string();
  }
  /// Stages the next pending box of the first segment that has one (or,
  /// `all`, every pending box of every segment) and issues its TMA store.
  void emitDeferredFlush(bool all);
  /// The same for one segment; `chained`: an `else` of the previous one.
  void emitDeferredFlushSegment(bool all, unsigned segment, bool chained);
  bool programsGrid = false;
  /// CTAs per cluster (tawa.cluster on the warp_specialize).
  int64_t clusterSize = 1;
};

//===----------------------------------------------------------------------===//
// Values and types
//===----------------------------------------------------------------------===//

FailureOr<std::string> Emitter::scalarType(Type type, Location loc) {
  if (auto ptr = dyn_cast<tt::PointerType>(type)) {
    FailureOr<std::string> pointee = scalarType(ptr.getPointeeType(), loc);
    if (failed(pointee))
      return failure();
    return *pointee + " *";
  }
  if (type.isInteger(1))
    return std::string("bool");
  if (type.isInteger(8))
    return std::string("int8_t");
  if (type.isInteger(16))
    return std::string("int16_t");
  if (type.isInteger(32))
    return std::string("int32_t");
  if (type.isInteger(64))
    return std::string("int64_t");
  if (type.isF32())
    return std::string("float");
  if (type.isF16())
    return std::string("__half");
  if (type.isBF16())
    return std::string("__nv_bfloat16");
  if (isa<Float8E4M3FNType>(type))
    return std::string("__nv_fp8_e4m3");
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

/// A float constant as CUDA C++, exact for every f32 value.
static std::string floatLiteral(FloatAttr f) {
  double v = f.getValueAsDouble();
  if (std::isnan(v))
    return "__int_as_float(0x7fc00000)";
  if (std::isinf(v))
    return v > 0 ? "__int_as_float(0x7f800000)" : "__int_as_float(0xff800000)";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.9ef", v);
  return buf;
}

/// The `tawa.layouts` entry of a value (its defining op's attribute, or its
/// loop's `tawa.iter_arg_layouts`), "" if none.
static StringRef layoutAttrOf(Value v) {
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
  if (auto make = dyn_cast<tt::MakeTensorDescOp>(op))
    return emitMakeTensorDesc(make);
  if (auto wait = dyn_cast<PingPongWaitOp>(op)) {
    // Consumer g's n-th tile waits for the other's n-th hand-over (consumer
    // 0 starts without one): order[g] completes once per hand-over to g.
    if (region != Region::Consumer)
      return error(op) << "ping-pong wait outside a consumer partition";
    std::string turn = lookup(wait.getTurn());
    if (wait.getGroup() == 0)
      line() << "if (" << turn << " > 0)\n  ";
    else
      line();
    body << "mbarrierWait(&pingpongOrder[" << wait.getGroup() << "], "
         << (wait.getGroup() == 0 ? "(" + turn + " - 1)" : turn)
         << " & 1);\n";
    return success();
  }
  if (auto arrive = dyn_cast<PingPongArriveOp>(op)) {
    if (region != Region::Consumer)
      return error(op) << "ping-pong arrive outside a consumer partition";
    // The group's first thread has passed every full wait of the tile.
    line() << "if (tid == 0)\n";
    line() << "  mbarrierArrive(&pingpongOrder[" << 1 - arrive.getGroup()
           << "]);\n";
    return success();
  }

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
  if (auto num = dyn_cast<tt::GetNumProgramsOp>(op)) {
    StringRef a = tt::stringifyProgramIDDim(num.getAxis());
    line() << "const int32_t " << bind(num.getResult()) << " = gridDim." << a
           << ";\n";
    return success();
  }

  if (auto wait = dyn_cast<MBarrierWaitOp>(op)) {
    if (region == Region::Top)
      return error(op) << "mbarrier wait outside a partition";
    line() << "mbarrierWait(&" << bars[wait.getBars()].name << "["
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
      line() << fb->second.name << "[" << lookup(tx.getSlot()) << "] = "
             << lookup(lastProducerWait.getParity()) << " ^ 1;\n";
    }
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
    // A tile is stored as boxes of 128-byte rows (the 128-byte swizzle
    // span), one box per 128 bytes of its inner extent: that is what the
    // wgmma descriptors of emitDotAsync read.
    RankedTensorType block =
        cast<tt::TensorDescType>(load.getDesc().getType()).getBlockType();
    int64_t innerBytes =
        block.getShape()[1] * elemBytes(block.getElementType());
    if (innerBytes % kSwizzleBytes != 0)
      return error(op) << "loaded tile " << block
                       << " must have an inner extent that is a multiple of "
                          "128 bytes (f16/bf16: 64, e4m3: 128 elements), the "
                          "128-byte swizzle span wgmma operands use";
    auto it = rings.find(load.getBuffer());
    if (it == rings.end())
      return error(op) << "TMA load into an unknown buffer";
    int64_t rows = block.getShape()[0];
    int64_t boxInner = kSwizzleBytes / elemBytes(block.getElementType());
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
      for (int64_t j = 0; j < innerBytes / kSwizzleBytes; ++j) {
        line() << "  if (leader)\n";
        line() << "    tmaLoad2DMulticast(" << dst << " + "
               << j * rows * kSwizzleBytes << " + ctaRank * "
               << half * kSwizzleBytes << ", " << descRef(load.getDesc())
               << ", " << bar << ", " << lookup(load.getIndices()[1]) << " + "
               << j * boxInner << ", " << lookup(load.getIndices()[0])
               << " + int(ctaRank) * " << half << ", 0x3);\n";
      }
      line() << "} else {\n";
      for (int64_t j = 0; j < innerBytes / kSwizzleBytes; ++j)
        for (int64_t r = 0; r < 2; ++r) {
          line() << "  if (leader)\n";
          line() << "    tmaLoad2D(" << dst << " + "
                 << j * rows * kSwizzleBytes + r * half * kSwizzleBytes
                 << ", " << descRef(load.getDesc()) << ", " << bar << ", "
                 << lookup(load.getIndices()[1]) << " + " << j * boxInner
                 << ", " << lookup(load.getIndices()[0]) << " + " << r * half
                 << ");\n";
        }
      line() << "}\n";
      return success();
    }
    // TTIR coordinates are outermost first, TMA's innermost first.
    for (int64_t j = 0; j < innerBytes / kSwizzleBytes; ++j) {
      line() << "if (leader)\n";
      line() << "  tmaLoad2D(" << dst;
      if (j)
        body << " + " << j * rows * kSwizzleBytes;
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
    // An accumulator converted for a TMA store is staged by the store.
    if (isa<RankedTensorType>(trunc.getType()) &&
        !trunc->use_empty() &&
        llvm::all_of(trunc->getUsers(), [](Operation *u) {
          return isa<tt::DescriptorStoreOp>(u);
        })) {
      FailureOr<Acc> acc = accOf(trunc.getIn(), op);
      if (failed(acc))
        return failure();
      Type elem = getElementTypeOrSelf(trunc.getType());
      if (!elem.isF16() && !elem.isBF16())
        return error(op) << "only f16 and bf16 outputs are supported";
      converted[trunc.getResult()] = {*acc, elem};
      return success();
    }
  }
  if (op->getNumResults() == 1 &&
      isa<RankedTensorType>(op->getResult(0).getType()))
    return emitTensorOp(op);
  if (op->getNumResults() == 1 &&
      isa<arith::ArithDialect, math::MathDialect>(op->getDialect()))
    return emitScalarArith(op);
  if (isa<tt::AddPtrOp, tt::IntToPtrOp, tt::PtrToIntOp, tt::LoadOp>(op))
    return emitScalarArith(op);
  return error(op) << "unsupported operation '" << op->getName() << "'";
}

/// The C++ expression of one element of `op`'s result from the expressions
/// of its operands' elements: shared by scalars and register tensors.
/// Returns "" for operations it does not know.
static std::string elementExpr(Operation *op, ArrayRef<std::string> x,
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
  auto cast = [&](const std::string &e) {
    return "(" + ctype.str() + ")" + e;
  };
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
      .Case<arith::MulIOp, arith::MulFOp>([&](auto) { return bin("*"); })
      .Case<arith::DivSIOp, arith::DivFOp>([&](auto) { return bin("/"); })
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
      .Case<arith::ExtSIOp, arith::TruncIOp, arith::SIToFPOp,
            arith::FPToSIOp>([&](auto) { return cast(x[0]); })
      .Case<arith::ExtUIOp>([&](auto) {
        return elemOf(0).isInteger(1) ? cast(x[0]) : cast(uns(0));
      })
      .Case<arith::ExtFOp, arith::TruncFOp, tt::FpToFpOp>(
          [&](auto) { return fromFloat(toFloat(0)); })
      .Case<math::Exp2Op>([&](auto) { return "exp2f(" + x[0] + ")"; })
      .Case<math::ExpOp>([&](auto) { return "expf(" + x[0] + ")"; })
      .Case<math::LogOp>([&](auto) { return "logf(" + x[0] + ")"; })
      .Case<math::SqrtOp>([&](auto) { return "sqrtf(" + x[0] + ")"; })
      .Case<math::AbsFOp>([&](auto) { return "fabsf(" + x[0] + ")"; })
      .Case<arith::SelectOp>([&](auto) {
        return "(" + x[0] + " ? " + x[1] + " : " + x[2] + ")";
      })
      .Case<tt::AddPtrOp>([&](auto) { return "(" + x[0] + " + " + x[1] + ")"; })
      .Case<tt::IntToPtrOp>([&](auto) {
        return "reinterpret_cast<" + ctype.str() + ">(" + x[0] + ")";
      })
      .Case<tt::PtrToIntOp>([&](auto) {
        return "reinterpret_cast<int64_t>(" + x[0] + ")";
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
  // Accumulator chains: loop-carried tensors that feed a product directly.
  auto feedsProduct = [&](Value arg) {
    return isa<RankedTensorType>(arg.getType()) && arg.hasOneUse() &&
           isa<DotAsyncOp>(*arg.getUsers().begin()) &&
           arg.getUsers().begin()->getBlock() == op.getBody();
  };
  int64_t chains = llvm::count_if(op.getRegionIterArgs(), feedsProduct);
  for (auto [init, arg, res] :
       llvm::zip(op.getInitArgs(), op.getRegionIterArgs(), op.getResults())) {
    if (isa<RankedTensorType>(arg.getType())) {
      StringRef lay = layoutAttrOf(arg);
      if (!lay.empty() && lay != "acc")
        return error(op) << "a loop-carried register tensor in the '" << lay
                         << "' layout (such as running softmax statistics) is "
                            "not supported by CUDA emission yet";
      // Zero only where the loop runs no product (the first product then
      // ignores the registers: scale-d 0). With two chains (paired programs)
      // that fill after the loop makes ptxas serialize every wgmma (C7515),
      // so those are zeroed before the loop instead.
      bool lazy = chains == 1 && !accs.count(init) && isZeroSplat(init) &&
                  feedsProduct(arg);
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
  // The then branch's accumulator arrays are declared here, before the if
  // (inserted at `mark` once the branch is written), for the else branch.
  size_t mark = bodyStorage.size();
  SmallVector<Acc> hoisted;
  SmallVector<Acc> *outerHoisted = hoistedAccs;
  SmallVector<Acc> outerReusable = std::move(reusableAccs);
  reusableAccs.clear();
  auto restore = llvm::make_scope_exit([&] {
    hoistedAccs = outerHoisted;
    reusableAccs = std::move(outerReusable);
  });
  line() << "if (" << lookup(op.getCondition()) << ") {\n";
  ++indent;
  hoistedAccs = &hoisted;
  if (failed(emitBlock(*op.thenBlock())) ||
      failed(
          assignYield(op.thenYield().getOperands(), vars, op.getResults(), op)))
    return failure();
  hoistedAccs = nullptr;
  --indent;
  std::string declarations;
  for (const Acc &acc : hoisted)
    declarations += std::string(2 * indent, ' ') + "float " + acc.name + "[" +
                    std::to_string(acc.frags) + "][" +
                    std::to_string(acc.cols / 2) + "];\n";
  bodyStorage.insert(mark, declarations);
  if (!op.getElseRegion().empty()) {
    line() << "} else {\n";
    ++indent;
    reusableAccs = hoisted;
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
  // One 4-warp producer, then either one consumer partition of 1 or 2 warp
  // groups (cooperative: they split each tile's rows) or, ping-pong, two
  // consumer partitions of one warp group each (each on its own tiles).
  bool pingpong = op->hasAttr("tawa.pingpong");
  bool shapeOk = warps.size() >= 2 && warps[0] == 4;
  for (int32_t w : warps.drop_front())
    shapeOk &= w % 4 == 0 && w >= 4;
  if (pingpong)
    shapeOk &= warps.size() == 3 && warps[1] == 4 && warps[2] == 4;
  else
    shapeOk &= warps.size() == 2 && warps[1] <= 8;
  if (!shapeOk)
    return error(op) << "supported: one 4-warp producer and either one "
                        "consumer partition of 1 or 2 warp groups or two "
                        "ping-pong partitions of one warp group each";
  groups = pingpong ? 1 : warps[1] / 4;
  if (!pingpong)
    planDeferredEpilogue(op);

  line() << "if (warpGroupIndex() == 0) {\n";
  ++indent;
  line() << "// Producer: warp 0 runs the producer program, its elected lane "
            "issues\n";
  line() << "// expect_tx and TMA; the other warps only hand their registers "
            "over.\n";
  line() << "setmaxnregDec<" << regs[0] << ">();\n";
  line() << "if (warpInGroup() == 0) {\n";
  ++indent;
  line() << "const bool leader = electOne();\n";
  line() << "(void)leader;\n";
  region = Region::Producer;
  for (auto &[v, fb] : fillParity) {
    line() << "int32_t " << fb.name << "[" << fb.depth
           << "]; // parity of each slot's last fill, -1: none\n";
    line() << "for (int s = 0; s < " << fb.depth << "; ++s)\n";
    line() << "  " << fb.name << "[s] = -1;\n";
  }
  if (failed(emitBlock(op.getPartitions()[0].front())))
    return failure();
  --indent;
  line() << "}\n";
  --indent;
  line() << "} else {\n";
  ++indent;
  region = Region::Consumer;
  line() << "setmaxnregInc<" << regs[1] << ">();\n";
  line() << "// wg: this consumer warp group (its epilogue buffers, named "
            "barrier and\n";
  line() << "// tensor-map slots); cg: its place among the groups that split "
            "a tile, which\n";
  line() << "// owns rows [64 F cg, 64 F (cg + 1)) of every accumulator.\n";
  line() << "const int wg = warpGroupIndex() - 1;\n";
  line() << "const int tid = threadIdx.x % kWarpGroupThreads;\n";
  line() << "const bool laneZero = threadIdx.x % 32 == 0;\n";
  line() << "uint32_t epiBox = 0; // epilogue boxes staged so far\n";
  line() << "(void)wg; (void)tid; (void)laneZero; (void)epiBox;\n";
  for (unsigned p = 1; p < warps.size(); ++p) {
    if (pingpong) {
      line() << (p == 1 ? "if" : "} else if") << " (wg == " << p - 1
             << ") { // ping-pong consumer " << p - 1 << ": its own tiles\n";
      ++indent;
      line() << "const int cg = 0;\n";
    } else {
      line() << "{\n";
      ++indent;
      line() << "const int cg = wg;\n";
    }
    line() << "(void)cg;\n";
    if (deferredEpi) {
      line() << "// Deferred epilogue: the last " << deferredEpi->deferred
             << " boxes of each fragment of a tile's store, packed, stored "
                "during the next tile's first products.\n";
      for (unsigned seg = 0; seg < deferredEpi->segmentDescs.size(); ++seg) {
        std::string x = pendSuffix(seg);
        line() << "uint32_t pendC" << x << "[" << deferredEpi->frags << "]["
               << deferredEpi->deferred * 16 << "];\n";
        line() << "int32_t pendRow" << x << " = 0, pendCol" << x << " = 0;\n";
        line() << "uint32_t pendBoxes" << x << " = 0; // boxes of pendC" << x
               << " not stored yet\n";
      }
    }
    if (failed(emitBlock(op.getPartitions()[p].front())))
      return failure();
    if (deferredEpi)
      emitDeferredFlush(/*all=*/true);
    --indent;
  }
  line() << "}\n";
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
    if (!s0 || !s1 || s0.getSlot() != s1.getSlot() ||
        kMajor != (d1.getB().getDefiningOp<tt::TransOp>() != nullptr) ||
        s0.getBuffer() == s1.getBuffer() ||
        s0.getBuffer().getType() != s1.getBuffer().getType() ||
        !s0.getBuffer().getDefiningOp<SmemAllocOp>() ||
        !s1.getBuffer().getDefiningOp<SmemAllocOp>())
      return;
    // [N, K] tiles of one 128-byte swizzle span along K (the two tiles'
    // rows are then contiguous), or [K, N] tiles (boxes of 64 columns, the
    // second tile's boxes follow the first's); N of each at most 128.
    auto tile = cast<RankedTensorType>(s0.getType());
    int64_t n = tile.getShape()[kMajor ? 0 : 1];
    if ((kMajor && tile.getShape()[1] * elemBytes(tile.getElementType()) !=
                       kSwizzleBytes) ||
        (n != 64 && n != 128) ||
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
  FailureOr<Acc> acc = accOf(op.getC(), op);
  if (failed(acc))
    return failure();
  if (auto fused = fusedProducts.find(op); fused != fusedProducts.end())
    if (emitFusedProducts(op, fused->second, *acc))
      return success();
  auto a = tiles.find(op.getA()), b = tiles.find(op.getB());
  if (a == tiles.end() || b == tiles.end())
    return error(op) << "dot operands must be shared-memory ring slots";
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
  int64_t k = ta.type.getShape()[1];
  int64_t bK = bKMajor ? tb.type.getShape()[1] : tb.type.getShape()[0];
  int64_t bN = bKMajor ? tb.type.getShape()[0] : tb.type.getShape()[1];
  if (ta.transposed)
    return error(op) << "an MN-major (transposed) A operand is not supported";
  if (!bKMajor && fp8)
    return error(op) << "fp8 products need a K-major B operand (B stored as "
                        "[N, K] and transposed in the kernel)";
  if (bK != k || (k * eb) % kSwizzleBytes != 0)
    return error(op) << "operand tiles must share K, a multiple of 128 bytes";
  if (ta.type.getShape()[0] != acc->frags * 64 * groups || bN != acc->cols)
    return error(op) << "operand tiles do not match the accumulator";
  int64_t mmaK = fp8 ? 32 : 16;
  int64_t kBytes = mmaK * eb;
  int64_t aRows = ta.type.getShape()[0];
  auto lazy = lazyZero.find(acc->name);
  std::string scaleD = "1";
  if (lazy != lazyZero.end())
    scaleD = "(" + lazy->second + " || kk > 0) ? 1 : 0";
  // K-major tiles are boxes of 128-byte rows along K: step kk starts in box
  // (kk * kBytes) / 128 at byte (kk * kBytes) % 128 of each row.
  int64_t stepsPerBox = kSwizzleBytes / kBytes;
  line() << "wgmmaFence();\n";
  line() << "#pragma unroll\n";
  line() << "for (int f = 0; f < " << acc->frags << "; ++f) {\n";
  line() << "#pragma unroll\n";
  line() << "  for (int kk = 0; kk < " << k / mmaK << "; ++kk) {\n";
  line() << "    const uint64_t descA = descAdvance(descKMajorSw128(" << ta.ptr
         << " + (kk / " << stepsPerBox << ") * " << aRows * kSwizzleBytes
         << " + (cg * " << acc->frags << " + f) * " << 64 * kSwizzleBytes
         << "), (kk % " << stepsPerBox << ") * " << kBytes << ");\n";
  if (bKMajor)
    line() << "    const uint64_t descB = descAdvance(descKMajorSw128("
           << tb.ptr << " + (kk / " << stepsPerBox << ") * "
           << bN * kSwizzleBytes << "), (kk % " << stepsPerBox << ") * "
           << kBytes << ");\n";
  else
    // [K, N] slot: boxes of K rows x 64 columns, LBO = one box, K steps of
    // 16 rows.
    line() << "    const uint64_t descB = descAdvance(descMNMajorSw128("
           << tb.ptr << ", " << k * kSwizzleBytes << "), kk * "
           << mmaK * kSwizzleBytes << ");\n";
  line() << "    wgmmaSS<" << acc->cols << ", " << *mma << ", 0, "
         << (bKMajor ? 0 : 1) << ">(" << acc->name << "[f], descA, descB, "
         << scaleD << ");\n";
  line() << "  }\n";
  line() << "}\n";
  line() << "wgmmaCommit();\n";
  if (lazy != lazyZero.end())
    line() << lazy->second << " = true;\n";
  // After the last product a loop iteration issues: the tensor cores have
  // all of them queued while the box is staged.
  if (deferredEpi && isLastProduct(op))
    emitDeferredFlush(/*all=*/false);
  accs[op.getD()] = *acc;
  return success();
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
  if (!c0 || !c1 || c0.getOwner() != c1.getOwner() ||
      acc1It == accs.end() || !second.getC().hasOneUse())
    return false;
  const Acc acc1 = acc1It->second;
  auto lazy0 = lazyZero.find(acc0.name), lazy1 = lazyZero.find(acc1.name);
  bool lazyBoth = lazy0 != lazyZero.end() && lazy1 != lazyZero.end();
  bool lazyNone = lazy0 == lazyZero.end() && lazy1 == lazyZero.end();
  auto a = tiles.find(first.getA()), b = tiles.find(first.getB());
  if (acc0.frags != 1 || acc1.frags != 1 || acc0.cols != acc1.cols ||
      !(lazyBoth || lazyNone) || a == tiles.end() || b == tiles.end() ||
      a->second.transposed)
    return false;
  Type elem = a->second.type.getElementType();
  std::optional<StringRef> mma = mmaType(elem);
  bool bKMajor = b->second.transposed;
  if (!mma || b->second.type.getElementType() != elem ||
      (!bKMajor && isa<Float8E4M3FNType>(elem)))
    return false;
  int64_t eb = elemBytes(elem);
  int64_t k = a->second.type.getShape()[1];
  int64_t aRows = a->second.type.getShape()[0];
  if (k * eb != kSwizzleBytes || aRows != 64 * groups)
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
  line() << "  const uint64_t descA = descAdvance(descKMajorSw128("
         << a->second.ptr << " + cg * " << 64 * kSwizzleBytes << "), kk * "
         << kBytes << ");\n";
  if (bKMajor)
    line() << "  const uint64_t descB = descAdvance(descKMajorSw128("
           << b->second.ptr << "), kk * " << kBytes << ");\n";
  else
    line() << "  const uint64_t descB = descAdvance(descMNMajorSw128("
           << b->second.ptr << ", " << k * kSwizzleBytes << "), kk * "
           << mmaK * kSwizzleBytes << ");\n";
  line() << "  wgmmaSSPair<" << 2 * acc0.cols << ", " << *mma << ", 0, "
         << (bKMajor ? 0 : 1) << ">(" << acc0.name << "[0], " << acc1.name
         << "[0], descA, descB, " << scaleD << ");\n";
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
    if (accs.count(src)) {
      accs[res] = accs[src];
      return success();
    }
    auto it = regs.find(src);
    if (it == regs.end())
      return error(op) << "operand has no register layout";
    regs[res] = it->second;
    return success();
  }
  return emitElementwise(op);
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

  std::string name, idx = *lay == Lay::Acc   ? "[f][i]"
                          : *lay == Lay::Row ? "[f][h]"
                                             : "[j]";
  if (*lay == Lay::Acc && elem.isF32()) {
    // Update an accumulator in place when this op is its only reader, so
    // that a rescaled accumulator stays the register array wgmma writes.
    std::optional<Acc> into;
    for (Value v : op->getOperands())
      if (accs.count(v) && v.hasOneUse())
        into = accs[v];
    if (!into)
      into = newAcc(frags, cols);
    name = into->name;
    accs[res] = *into;
  } else {
    Reg r;
    r.lay = *lay;
    r.array = fresh("t");
    r.frags = frags;
    r.cols = cols;
    name = r.array;
    line() << *ctype << " " << name
           << (*lay == Lay::Acc   ? "[" + std::to_string(frags) + "][" +
                                      std::to_string(cols / 2) + "]"
               : *lay == Lay::Row ? "[" + std::to_string(frags) + "][2]"
                                  : "[" + std::to_string(cols / 4) + "]")
           << ";\n";
    regs[res] = r;
  }
  line() << "#pragma unroll\n";
  if (*lay == Lay::Col) {
    line() << "for (int j = 0; j < " << cols / 4 << "; ++j)\n";
  } else {
    line() << "for (int f = 0; f < " << frags << "; ++f)\n";
    line() << "#pragma unroll\n";
    line() << (*lay == Lay::Acc ? "  for (int i = 0; i < " +
                                      std::to_string(cols / 2) + "; ++i)\n"
                                : std::string("  for (int h = 0; h < 2; ++h)\n"));
  }
  line() << "    " << name << idx << " = " << expr << ";\n";
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
  std::string desc = descRef(op.getDesc());
  std::string row0 = lookup(op.getIndices()[0]),
              col0 = lookup(op.getIndices()[1]);
  int64_t deferred = 0;
  unsigned segment = 0;
  if (deferredEpi) {
    auto seg = deferredEpi->segmentOf.find(op);
    if (deferredEpi->frags != acc.frags || deferredEpi->boxes != boxes ||
        seg == deferredEpi->segmentOf.end() ||
        deferredEpi->segmentDescs[seg->second] != desc)
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
            "staged through two swizzled buffers; a buffer is rewritten only "
            "after the TMA store that read it did.";
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
  for (int64_t b = boxes - deferred; b < boxes; ++b)
    line() << "packAccBox<" << cty << ", " << b << ", "
           << (b - (boxes - deferred)) * 16 << ">(" << acc.name << "[f], pendC"
           << x << "[f]);\n";
  for (int64_t b = 0; b < boxes - deferred; ++b) {
    line() << "{\n";
    ++indent;
    line() << "uint8_t *buf = epi + (wg * 2 + (epiBox & 1)) * "
           << 64 * kSwizzleBytes << ";\n";
    line() << "if (tid == 0)\n";
    line() << "  tmaStoreWaitRead<1>();\n";
    line() << "namedBarrierSync(1 + wg, kWarpGroupThreads);\n";
    line() << "storeAccBoxSwizzled<" << cty << ", " << b << ">(" << acc.name
           << "[f], buf);\n";
    line() << "fenceProxyAsyncShared();\n";
    line() << "namedBarrierSync(1 + wg, kWarpGroupThreads);\n";
    line() << "if (tid == 0) {\n";
    line() << "  tmaStore2D(" << desc << ", buf, " << col0 << " + "
           << b * kEpiBoxCols << ", row);\n";
    line() << "  tmaStoreCommit();\n";
    line() << "}\n";
    line() << "++epiBox;\n";
    --indent;
    line() << "}\n";
  }
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
  bool deviceMaps = false;
  consumer.walk([&](Operation *op) {
    if (isa<tt::MakeTensorDescOp>(op))
      deviceMaps = true;
    if (auto store = dyn_cast<tt::DescriptorStoreOp>(op))
      stores.push_back(store);
  });
  // A map the consumer rebuilds could change under a pending store.
  if (deviceMaps || stores.empty())
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
    auto type = dyn_cast<RankedTensorType>(store.getSrc().getType());
    if (!trunc || !arg || arg.getOwner() != &func.getBody().front() || !type ||
        type.getRank() != 2 || type.getShape()[0] % (64 * groups) != 0 ||
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
    std::string desc = descRef(store.getDesc());
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
  // half at K = 1024), with two the default's half (measured above).
  int64_t segments = plan.segmentDescs.size();
  int64_t fit = std::max<int64_t>(0, 64 / (16 * plan.frags * segments));
  std::optional<int64_t> slack;
  int64_t inFlight = 0;
  for (Operation *store : placed)
    store->getParentOfType<LoopLikeOpInterface>()->walk([&](scf::ForOp loop) {
      if (auto a =
              loop->getAttrOfType<IntegerAttr>("tawa.schedule_consumer_slack"))
        slack = slack ? std::min(*slack, a.getInt()) : a.getInt();
      for (auto wait : loop.getBody()->getOps<DotWaitOp>())
        inFlight = std::max<int64_t>(inFlight, wait.getPendings());
    });
  int64_t half = (plan.boxes + 1) / 2;
  int64_t request =
      options.epilogueOverlap >= 0 ? options.epilogueOverlap
      : slack ? (*slack < kEpilogueBoxCycles ? 0
                 : inFlight >= 2             ? half
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
  line() << "uint8_t *buf = epi + (wg * 2 + (epiBox & 1)) * "
         << 64 * kSwizzleBytes << ";\n";
  line() << "if (tid == 0)\n";
  line() << "  tmaStoreWaitRead<1>();\n";
  line() << "namedBarrierSync(1 + wg, kWarpGroupThreads);\n";
  line() << "switch (p) {\n";
  for (int64_t p = 0; p < total; ++p)
    line() << "case " << p << ": storePackedBoxSwizzled<"
           << (p % d.deferred) * 16 << ">(pendC" << x << "[" << p / d.deferred
           << "], buf); break;\n";
  line() << "}\n";
  line() << "fenceProxyAsyncShared();\n";
  line() << "namedBarrierSync(1 + wg, kWarpGroupThreads);\n";
  line() << "if (tid == 0) {\n";
  line() << "  tmaStore2D(" << d.segmentDescs[segment] << ", buf, pendCol" << x
         << " + (int32_t)(" << d.boxes - d.deferred << " + p % " << d.deferred
         << ") * " << kEpiBoxCols << ", pendRow" << x << " + (int32_t)(cg * "
         << d.frags << " + p / " << d.deferred << ") * 64);\n";
  line() << "  tmaStoreCommit();\n";
  line() << "}\n";
  line() << "++epiBox;\n";
  line() << "--pendBoxes" << x << ";\n";
  --indent;
  line() << "}\n";
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
  Type elem = cast<tt::TensorDescType>(op.getType())
                  .getBlockType()
                  .getElementType();
  std::string map = fresh("tmap");
  std::string args =
      map + ", descStaging + " +
      (region == Region::Producer ? std::string("0")
                                  : std::string("128 * (1 + wg)")) +
      ", " + lookup(op.getBase()) + ", (uint32_t)" + lookup(op.getShape()[1]) +
      ", (uint32_t)" + lookup(op.getShape()[0]) + ", (uint64_t)" +
      lookup(op.getStrides()[0]) + " * " + std::to_string(elemBytes(elem));
  std::string make = "makeTensorMap2D<TensorMapElem::" + m.elem + ", " +
                     std::to_string(m.box[1]) + ", " +
                     std::to_string(m.box[0]) + ">(" + args + ");\n";
  if (region == Region::Producer) {
    line() << "CUtensorMap *" << map << " = &tawaTensorMaps[smId()]["
           << m.slot << "];\n";
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
    line() << "CUtensorMap *" << map << " = &tawaTensorMaps[smId()]["
           << m.slot << " + wg];\n";
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
  if (auto c = ws->getAttrOfType<IntegerAttr>("tawa.cluster")) {
    clusterSize = c.getInt();
    if (clusterSize != 2)
      return error(ws) << "only clusters of 2 CTAs are supported";
    if (ws->hasAttr("tawa.pingpong"))
      return error(ws) << "clusters with ping-pong consumers are not "
                          "supported";
  }
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
      p.block.assign(block.getShape().begin(), block.getShape().end());
      // Loads move the tile as boxes of 128-byte rows (emitOp, TmaLoadOp);
      // stores move 64-row x 64-column boxes (one fragment's slice each).
      p.box = {block.getShape()[0],
               std::min<int64_t>(block.getShape()[1],
                                 kSwizzleBytes /
                                     elemBytes(block.getElementType()))};
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
      // Loads split between the CTAs of a cluster move half-height boxes.
      if (llvm::any_of(arg.getUsers(), [](Operation *u) {
            auto load = dyn_cast<TmaLoadOp>(u);
            return load && load.getMulticast();
          }))
        p.box[0] /= 2;
      descParams.push_back({arg, name});
      p.ctype = "const __grid_constant__ CUtensorMap";
    } else if (auto axis = func.getArgAttrOfType<IntegerAttr>(
                   arg.getArgNumber(), "tawa.num_programs")) {
      // The program grid of a persistent kernel (-tawa-persistent-programs),
      // filled by the runtime from the caller's grid.
      p.kind = "num_programs";
      p.axis = axis.getInt();
      p.ctype = "int32_t";
      programsGrid = true;
    } else if (auto ptr = dyn_cast<tt::PointerType>(arg.getType())) {
      FailureOr<std::string> ctype = scalarType(ptr, arg.getLoc());
      if (failed(ctype))
        return failure();
      p.kind = "ptr";
      p.ctype = *ctype;
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
  // The B tiles of fused products go slot by slot side by side, so that
  // the two read as one tile of twice the rows.
  findFusedProducts();
  int64_t offset = 0;
  SmallVector<std::string> layout;
  auto ringBytes = [](Value buffer) {
    auto type = cast<MemRefType>(buffer.getType());
    int64_t bytes = elemBytes(type.getElementType());
    for (int64_t d : type.getShape())
      bytes *= d;
    return std::make_pair(bytes, bytes / type.getShape()[0]);
  };
  auto placeRing = [&](Value buffer, int64_t at, int64_t stride) {
    int64_t slotBytes = ringBytes(buffer).second;
    std::string name = fresh("ring");
    rings[buffer] = {name, at, slotBytes, stride};
    std::string apart =
        stride != slotBytes
            ? llvm::formatv(", slots {0} bytes apart", stride).str()
            : std::string();
    layout.push_back(llvm::formatv("uint8_t *{0} = smem + {1}; // {2}{3}", name,
                                   at, buffer.getType(), apart)
                         .str());
  };
  for (Operation &op : entry) {
    auto alloc = dyn_cast<SmemAllocOp>(op);
    if (!alloc || rings.count(alloc.getResult()))
      continue; // not a ring, or the second of a side-by-side pair
    auto [bytes, slotBytes] = ringBytes(alloc.getResult());
    offset = llvm::alignTo(offset, 1024);
    auto partner = ringPartner.find(alloc.getResult());
    if (partner == ringPartner.end()) {
      placeRing(alloc.getResult(), offset, slotBytes);
      offset += bytes;
      continue;
    }
    placeRing(alloc.getResult(), offset, 2 * slotBytes);
    placeRing(partner->second, offset + slotBytes, 2 * slotBytes);
    offset += 2 * bytes;
  }
  // Consumer warp groups of all consumer partitions (ping-pong: 2 of 1).
  int64_t totalGroups = 0;
  for (int32_t w : ws.getWarps().drop_front())
    totalGroups += w / 4;
  groups = ws.getWarps().size() == 2 ? ws.getWarps()[1] / 4 : 1;
  // Device-side tensor descriptors: one global slot per SM and creating
  // warp (the producer's, or one per consumer group).
  bool producerMaps = false;
  WalkResult mapWalk = ws.walk([&](tt::MakeTensorDescOp make) {
    bool inProducer =
        ws.getPartitions()[0].isAncestor(make->getParentRegion());
    RankedTensorType block =
        cast<tt::TensorDescType>(make.getType()).getBlockType();
    Type elem = block.getElementType();
    DeviceMap m;
    m.slot = deviceMapSlots;
    deviceMapSlots += inProducer ? 1 : totalGroups;
    producerMaps |= inProducer;
    m.elem = elem.isF16()    ? "F16"
             : elem.isBF16() ? "BF16"
             : elem.isF32()  ? "F32"
             : isa<Float8E4M3FNType>(elem)
                 ? "U8"
                 : "";
    bool stored = false, loaded = false;
    for (Operation *u : make->getUsers()) {
      stored |= isa<tt::DescriptorStoreOp>(u);
      loaded |= !isa<tt::DescriptorStoreOp>(u);
    }
    if (m.elem.empty() || block.getRank() != 2 || (stored && loaded)) {
      error(make) << "supported device-side descriptors: rank 2, f16, bf16, "
                     "f32 or e4m3, either loaded or stored";
      return WalkResult::interrupt();
    }
    if (stored)
      m.box = {64, kEpiBoxCols};
    else
      m.box = {block.getShape()[0],
               std::min<int64_t>(block.getShape()[1],
                                 kSwizzleBytes / elemBytes(elem))};
    deviceMaps[make] = m;
    return WalkResult::advance();
  });
  if (mapWalk.wasInterrupted())
    return failure();
  if (producerMaps)
    ws.getPartitions()[0].walk([&](TmaLoadOp load) {
      if (!fillParity.count(load.getBars()))
        fillParity[load.getBars()] = {
            fresh("fills"),
            cast<MBarriersType>(load.getBars().getType()).getCount()};
    });
  bool stores = false;
  ws.walk([&](tt::DescriptorStoreOp) { stores = true; });
  offset = llvm::alignTo(offset, 1024);
  int64_t epiOffset = offset;
  if (stores)
    offset += totalGroups * 2 * 64 * kSwizzleBytes;
  layout.push_back(llvm::formatv("uint8_t *epi = smem + {0}; // 2 x 64x64 "
                                 "staging boxes per consumer group",
                                 epiOffset)
                       .str());
  if (deviceMapSlots) {
    offset = llvm::alignTo(offset, 128);
    layout.push_back(llvm::formatv("uint8_t *descStaging = smem + {0}; // "
                                   "tensor maps built by the producer warp "
                                   "and each consumer group",
                                   offset)
                         .str());
    offset += 128 * (1 + totalGroups);
  }
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
  if (ws->hasAttr("tawa.pingpong")) {
    layout.push_back(llvm::formatv("MBarrier *pingpongOrder = reinterpret_cast<"
                                   "MBarrier *>(smem + {0}); // hand-overs to "
                                   "ping-pong consumer 0, 1",
                                   offset)
                         .str());
    inits.push_back("for (int s = 0; s < 2; ++s)\n      "
                    "mbarrierInit(&pingpongOrder[s], 1);");
    offset += 16;
  }
  int64_t smemBytes = offset + 1024;
  // Device-built tensor maps live in per-SM slots: the CTA must have its SM
  // to itself, which asking for more than half of its shared memory ensures.
  if (deviceMapSlots)
    smemBytes = std::max<int64_t>(smemBytes, kExclusiveSmemBytes);
  if (smemBytes > 232448)
    return error(ws) << "needs " << smemBytes
                     << " bytes of shared memory; Hopper has 232448";

  if (failed(emitBlock(entry)))
    return failure();
  int64_t threads = 128 * (1 + totalGroups);

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
  if (deviceMapSlots) {
    os << "// Tensor maps built by the kernel (tt.make_tensor_descriptor): "
          "one slot per SM\n// and creating warp; each CTA has its SM to "
          "itself (see its shared memory).\n";
    os << "constexpr int kTawaMaxSms = 256;\n";
    os << "__device__ __align__(128) CUtensorMap tawaTensorMaps[kTawaMaxSms]["
       << deviceMapSlots << "];\n\n";
  }
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
  if (deviceMapSlots)
    os << "  if (smId() >= kTawaMaxSms)\n    __trap();\n";
  os << "  if (threadIdx.x == 0) {\n";
  for (const std::string &i : inits)
    os << "    " << i << "\n";
  os << "    fenceMBarrierInit();\n";
  for (auto &[v, name] : descParams)
    os << "    tmaPrefetchDescriptor(&" << name << ");\n";
  if (clusterSize > 1) {
    // The partner arrives on these barriers and multicasts into this CTA's
    // slots: its barriers must be initialized first, and neither CTA may
    // exit while the other can still reach its shared memory.
    os << "  }\n  clusterSync();\n";
    os << "  const uint32_t ctaRank = clusterCtaRank();\n  (void)ctaRank;\n";
    os << bodyStorage;
    os << "  clusterSync();\n";
  } else {
    os << "  }\n  __syncthreads();\n";
    os << bodyStorage;
  }
  os << "}\n";

  // Metadata (docs/METADATA.md). The grid is Triton's launch grid, chosen
  // by the caller.
  md.kernel = kernelName;
  md.threads = threads;
  md.dynamicSmemBytes = smemBytes;
  for (const Param &p : params)
    md.params.push_back(p);
  md.consumerGroups = totalGroups;
  md.pingpong = ws->hasAttr("tawa.pingpong");
  md.cluster = clusterSize;
  md.programsGrid = programsGrid;
  md.pairedPrograms = func->hasAttr("tawa.paired_programs");
  if (auto swizzle = func->getAttrOfType<IntegerAttr>("tawa.tile_swizzle"))
    md.tileSwizzle = swizzle.getInt();
  if (deferredEpi)
    md.epilogueOverlap = deferredEpi->deferred;
  for (Operation &op : entry)
    if (auto alloc = dyn_cast<SmemAllocOp>(op))
      md.arefDepth = std::max<int64_t>(
          md.arefDepth, cast<MemRefType>(alloc.getType()).getShape()[0]);
  std::set<int64_t> depths;
  ws.walk([&](DotWaitOp wait) {
    // A wait in the K loop, on the product issued in the same iteration
    // (not the drain after the loop, which waits for all).
    auto issue = wait->getNumOperands()
                     ? wait->getOperand(0).getDefiningOp<DotAsyncOp>()
                     : DotAsyncOp();
    if (issue && issue->getBlock() == wait->getBlock()) {
      md.mmaDepth = std::max<int64_t>(md.mmaDepth, wait.getPendings());
      depths.insert(wait.getPendings());
    }
  });
  if (depths.size() > 1)
    md.mmaDepthVersions.assign(depths.begin(), depths.end());
  return success(!hadError);
}

} // namespace

FailureOr<KernelMetadata> emitCuda(tt::FuncOp func, raw_ostream &source,
                                   const CudaEmitOptions &options) {
  // Buffer the output so that a failure writes nothing.
  std::string src;
  llvm::raw_string_ostream srcOs(src);
  Emitter emitter(func, srcOs, options);
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
  json << "  \"cluster\": [" << md.cluster << ", 1, 1],\n";
  json << "  \"dynamic_smem_bytes\": " << md.dynamicSmemBytes << ",\n";
  json << "  \"grid\": {\"kind\": \""
       << (md.programsGrid ? "programs" : "explicit") << "\"},\n";
  json << "  \"params\": [\n";
  for (auto [i, p] : llvm::enumerate(md.params)) {
    json << "    {\"name\": \"" << p.name << "\", \"kind\": \"" << p.kind
         << "\"";
    if (p.kind == "num_programs")
      json << ", \"axis\": \"" << "xyz"[p.axis] << "\"";
    if (p.kind == "tensormap") {
      json << ", \"dtype\": \"" << p.dtype << "\", \"box\": [";
      llvm::interleaveComma(p.box, json);
      json << "], \"swizzle\": \"128B\", \"oob\": \"zero\", \"_block\": [";
      llvm::interleaveComma(p.block, json);
      json << "]";
    }
    json << "}" << (i + 1 < md.params.size() ? "," : "") << "\n";
  }
  json << "  ],\n";
  json << "  \"_tawa\": {\"aref_depth\": " << md.arefDepth
       << ", \"mma_depth\": " << md.mmaDepth;
  if (!md.mmaDepthVersions.empty()) {
    json << ", \"mma_depth_versions\": [";
    for (auto [i, d] : llvm::enumerate(md.mmaDepthVersions))
      json << (i ? ", " : "") << d;
    json << "]";
  }
  json
       << ", \"consumer_groups\": " << md.consumerGroups
       << ", \"persistent\": " << (md.programsGrid ? "true" : "false")
       << ", \"pingpong\": " << (md.pingpong ? "true" : "false")
       << ", \"cluster\": " << md.cluster;
  if (md.pairedPrograms)
    json << ", \"paired_programs\": true";
  if (md.tileSwizzle)
    json << ", \"tile_swizzle\": " << md.tileSwizzle;
  if (md.epilogueOverlap)
    json << ", \"epilogue_overlap\": " << md.epilogueOverlap;
  if (md.resources)
    json << ", \"registers\": " << md.resources->registers
         << ", \"spill_store_bytes\": " << md.resources->spillStoreBytes
         << ", \"spill_load_bytes\": " << md.resources->spillLoadBytes
         << ", \"stack_bytes\": " << md.resources->stackBytes;
  if (md.resources && !md.resources->performanceWarnings.empty()) {
    json << ", \"ptxas_performance_warnings\": [";
    for (auto [i, code] : llvm::enumerate(md.resources->performanceWarnings))
      json << (i ? ", " : "") << "\"" << code << "\"";
    json << "]";
  }
  json << "}\n}\n";
}

} // namespace tawa
