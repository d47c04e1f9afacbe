//===- Emitter.h - the CUDA emitter's state, shared by its parts -*- C++
//-*-===//
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
//
// The emitter is one class whose methods live in files by concern:
//   CudaEmitter.cpp        kernel skeleton, parameters, shared-memory plan,
//                          partitions, metadata
//   EmitterControlFlow.cpp values, scalar code, scf loops and branches
//   EmitterMemory.cpp      rings, mbarriers, TMA loads, device-built maps
//   EmitterFragments.cpp   register tensors: layouts, accumulators, splats
//   EmitterProducts.cpp    wgmma products and their waits
//   EmitterElementwise.cpp element-wise and scalar arithmetic
//   EmitterEpilogue.cpp    stores and the deferred epilogue
//
//===----------------------------------------------------------------------===//

#ifndef TAWA_LIB_TARGET_EMITTER_H
#define TAWA_LIB_TARGET_EMITTER_H

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

namespace tawa {
/// Internal to lib/Target: the emitter behind emitCuda.
namespace cuda {

using namespace mlir;

/// Pure arithmetic (arith or math) without regions: what the element-wise
/// fusion moves into its user's loop, and what may stand between a boxed
/// read and the loop it is deferred into.
bool isPureArith(Operation *op);

/// How a tile that TMA moves lies in shared memory: rows swizzled in spans
/// of `spanBytes` (one choice that is both the tensor map's swizzle mode and
/// the wgmma descriptors' layout type), stored as `boxes` boxes of
/// rows x spanBytes one after the other along the inner extent, one TMA
/// copy each. Computed only by tileSwizzle.
struct SmemSwizzle {
  int64_t spanBytes = 0;
  int64_t boxes = 0;
  /// The device library's suffix for this layout (descKMajorSw64, ...).
  std::string suffix() const { return "Sw" + std::to_string(spanBytes); }
  /// The launch metadata's name for it (docs/METADATA.md).
  std::string metadataName() const { return std::to_string(spanBytes) + "B"; }
};

/// The layout of a tile whose rows are `innerBytes` long: rows of a
/// multiple of 128 bytes as boxes of 128-byte spans, 64- and 32-byte rows as
/// one box swizzled in their own span (BK = 32 or 16 at 16 bits, 64 or 32
/// at 8); none for other rows, which neither TMA's swizzles nor a swizzled
/// wgmma descriptor cover.
inline std::optional<SmemSwizzle> tileSwizzle(int64_t innerBytes) {
  if (innerBytes > 0 && innerBytes % 128 == 0)
    return SmemSwizzle{128, innerBytes / 128};
  if (innerBytes == 64 || innerBytes == 32)
    return SmemSwizzle{innerBytes, 1};
  return std::nullopt;
}

/// Epilogue staging boxes: 64 rows x 64 columns of a 16-bit type, rows of
/// 128 bytes in the 128-byte swizzle storeAccBoxSwizzled writes.
constexpr int64_t kEpiBoxCols = 64;
constexpr int64_t kEpiBoxBytes = 64 * kEpiBoxCols * 2;
/// The columns of a store's box: 64, or the whole tile where it is narrower
/// (32, 16 or 8 columns of a 16-bit type: one box of 64 rows in the 64- or
/// 32-byte swizzle, or unswizzled 16-byte rows, staged in the same
/// buffers).
inline int64_t storeBoxCols(int64_t tileCols) {
  return tileCols < kEpiBoxCols ? tileCols : kEpiBoxCols;
}
/// Whether a stored tile of this shape can go out in such boxes.
inline bool storableTile(RankedTensorType tile) {
  int64_t cols = tile.getShape().back();
  int64_t bytes = cols * ((tile.getElementTypeBitWidth() + 7) / 8);
  return cols % kEpiBoxCols == 0 ||
         (tile.getElementTypeBitWidth() == 16 &&
          (bytes == 64 || bytes == 32 || bytes == 16));
}
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
    if (auto clip = desc.getDefiningOp<ClipRowsOp>())
      return descRef(clip.getDesc());
    // A task's maps are pointers already (CudaEmitOptions::megaTask).
    if (isa<BlockArgument>(desc))
      return (options.megaTask ? "" : "&") + lookup(desc);
    return lookup(desc);
  }
  std::string bind(Value v, StringRef prefix = "v");

  LogicalResult emitBlock(Block &block);
  LogicalResult emitOp(Operation *op);
  /// Ring, mbarrier, TMA-load and ping-pong operations (EmitterMemory.cpp).
  LogicalResult emitMemoryOp(Operation *op);
  LogicalResult emitScalarArith(Operation *op);
  LogicalResult emitFor(scf::ForOp op);
  LogicalResult emitIf(scf::IfOp op);
  LogicalResult emitWhile(scf::WhileOp op);
  LogicalResult emitWarpSpecialize(WarpSpecializeOp op);
  /// setmaxnreg.{inc,dec} of a partition's registers, or, in a mega-kernel
  /// task, a comment saying why there is none.
  void emitSetMaxNReg(StringRef direction, int32_t regs);
  /// tawaCeilDiv and tawaFloorDiv, which the body's divisions call.
  void emitHelpers();
  /// `smem`, the dynamic shared memory from `smemRaw` aligned to 1024 bytes,
  /// and the pointers of its layout.
  void emitSmemLayout(ArrayRef<std::string> layout);
  /// Thread 0 initializing the mbarriers and prefetching the tensor maps;
  /// leaves its block open.
  void emitBarrierInits(ArrayRef<std::string> inits);
  /// The source of a mega-kernel task (CudaEmitOptions::megaTask) around
  /// the translated body: `params` are the declarations of its arguments.
  void emitTaskSource(StringRef kernelName, ArrayRef<std::string> params,
                      ArrayRef<std::string> layout, ArrayRef<std::string> inits,
                      int64_t smemBytes, int64_t threads);
  LogicalResult emitDotAsync(DotAsyncOp op);
  LogicalResult emitDotWait(DotWaitOp op);
  /// Whether the row sum `reduce` is what a later wait for P.V of its block
  /// is pinned after (rowSumToPinAfter): it is then emitted rowSumPinned.
  /// Without the pin ptxas moves that wait (and the rewrite of the register
  /// operand after it) above the softmax it should overlap.
  bool pinsWait(Operation *reduce);
  LogicalResult emitDot(tt::DotOp op);
  /// A tile converted to a register A operand (layout a_reg): per fragment
  /// and K step of the product, the four 32-bit registers of wgmma's A.
  struct ARegTile {
    std::string array; ///< uint32_t array[frags][k / mmaK][4]
    int64_t frags = 0, k = 0;
    Type elem;
  };
  DenseMap<Value, ARegTile> aRegs;
  LogicalResult emitProductIssue(Operation *op, Value a, Value b,
                                 const Acc &acc, StringRef scaleD);
  void emitBDescriptor(const SmemTile &tb, const SmemSwizzle &swizzle,
                       bool kMajor, int64_t n, int64_t k, int64_t mmaK,
                       int64_t kBytes);
  LogicalResult emitProductIssueRS(Operation *op, const ARegTile &a, Value b,
                                   const Acc &acc, StringRef scaleD);
  /// `[frags][k / mmaK][4]`, the shape of an a_reg array.
  static std::string aRegShape(const ARegTile &a);
  /// dst = src, register by register.
  void emitARegCopy(const ARegTile &dst, const ARegTile &src);
  /// A conversion of an accumulator-layout tile to the a_reg layout.
  LogicalResult emitARegConversion(Operation *op);
  /// tt.reduce along the rows of an accumulator-layout tile.
  LogicalResult emitReduce(tt::ReduceOp op);
  /// A shared-memory tile read into accumulator-layout registers.
  LogicalResult emitSmemLoad(SmemLoadOp op);
  LogicalResult emitSmemReadBoxes(SmemReadBoxesOp op);
  Operation *boxedReadUser(SmemReadBoxesOp op);
  void emitBoxRead(SmemReadBoxesOp op, const Reg &r, int64_t j);
  /// Boxed reads deferred into the loop of the op that combines them.
  DenseMap<Operation *, SmemReadBoxesOp> boxedReads;
  LogicalResult emitStore(tt::DescriptorStoreOp op);
  LogicalResult emitPointerStore(tt::StoreOp op);
  LogicalResult emitTensorOp(Operation *op);
  LogicalResult emitElementwise(Operation *op);
  FailureOr<std::string> at(Value v, Lay target, Operation *user);
  FailureOr<Lay> layoutOf(Value v, Operation *user);
  FailureOr<Acc> accOf(Value v, Operation *user, bool fill = true);
  FailureOr<std::string> splatOf(Value v);
  /// Declares the register array of a `lay` tensor of `type` (not an
  /// accumulator chain: a row or column vector, or an acc-layout tile).
  FailureOr<Reg> declareReg(Lay lay, RankedTensorType type, Operation *user,
                            StringRef prefix = "t");
  /// Writes `target[...] = source[...]` over every register of `target`'s
  /// layout, `source` read in that layout.
  LogicalResult emitRegCopy(const Reg &target, Value source, Operation *user);
  /// The loop headers over every register of a layout, and the index suffix
  /// of one register.
  void emitRegLoops(const Reg &r);
  static std::string regIndex(Lay lay);
  /// A loop-carried tensor that is not an accumulator chain (softmax
  /// statistics): its array, copied from the initial value.
  LogicalResult bindCarriedReg(Value init, Value arg, Value res, Operation *op,
                               std::string &var);
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
  /// Element-wise accumulator-layout values not materialized: the one op
  /// that reads them computes them per element, in its own loop
  /// (fusesIntoUser). An epilogue's activation (x * sigmoid(x)) then keeps
  /// one array live instead of one per operation.
  DenseMap<Value, std::string> fusedExprs;
  bool fusesIntoUser(Operation *op);
  /// The op whose loop computes `op`'s fused value (itself if not fused).
  Operation *fusedInto(Operation *op);
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
  /// The mbarrier arrays in shared memory, in the order they are laid out
  /// (name, count): a mega-kernel task invalidates them when it ends.
  SmallVector<std::pair<std::string, int64_t>> barrierArrays;
  SmallVector<std::pair<Value, std::string>> descParams;
  /// Device-built tensor maps: global slots per SM (`tawaTensorMaps`) and
  /// 128-byte shared staging buffers, one per creating warp.
  struct DeviceMap {
    int64_t slot;                ///< first slot (consumers: + cg)
    SmallVector<int64_t, 2> box; ///< outermost first
    std::string elem;            ///< TensorMapElem
    int64_t spanBytes = 128;     ///< the box's swizzle span (tileSwizzle)
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
  // Every producer warp runs the producer program (it transposes slots:
  // tawa.smem.transpose); else warp 0 alone does.
  bool producerAllWarps = false;
  /// Ping-pong turn ops are emitted with their barriers indexed by the
  /// run-time `wg` (emitPingPongConsumers).
  bool sharedPingPong = false;
  LogicalResult emitPingPongConsumers(WarpSpecializeOp op);
  LogicalResult emitMakeTensorDesc(tt::MakeTensorDescOp op);
  bool usesEpilogue = false;
  /// Epilogue staging boxes per consumer group: 2, alternating, or 1 where
  /// shared memory has no room for a second.
  int64_t epiBuffers = 2;
  /// The staging box of the next store, and the wait for the TMA store
  /// reads that must finish before it is rewritten.
  std::string epiBufferExpr() const {
    return epiBuffers == 2 ? "epi + (wg * 2 + (epiBox & 1)) * " +
                                 std::to_string(kEpiBoxBytes)
                           : "epi + wg * " + std::to_string(kEpiBoxBytes);
  }
  std::string epiWaitRead() const {
    return "tmaStoreWaitRead<" + std::to_string(epiBuffers - 1) + ">();";
  }
  /// One 64-row box through the group's staging buffer `buf`: wait until
  /// the buffer's last TMA store read it, `stage` writes it, then fence and
  /// store it to (col, row) of `desc`.
  void emitStagedBoxStore(llvm::function_ref<void()> stage, StringRef desc,
                          const std::string &col, const std::string &row);
  /// The issue turn of cooperative consumer groups (kIssueTurnAttr): whether
  /// this group holds it at the point being emitted, and whether the kernel
  /// takes turns at all.
  bool turnHeld = false;
  bool issueTurns = false;
  static bool passesTurnAfter(DotAsyncOp op);
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
    SmallVector<Value> segmentDescs; ///< each segment's tensor descriptor
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

inline bool isIdentifier(StringRef s) {
  if (s.empty() || !(isalpha(s[0]) || s[0] == '_'))
    return false;
  return llvm::all_of(s, [](char c) { return isalnum(c) || c == '_'; });
}

/// Element type names of the device library and the metadata format.
inline std::optional<std::pair<StringRef, StringRef>> elemNames(Type t) {
  if (t.isF16())
    return std::make_pair(StringRef("__half"), StringRef("f16"));
  if (t.isBF16())
    return std::make_pair(StringRef("__nv_bfloat16"), StringRef("bf16"));
  if (isa<Float8E4M3FNType>(t))
    return std::make_pair(StringRef("__nv_fp8_e4m3"), StringRef("e4m3"));
  return std::nullopt;
}

inline std::optional<StringRef> mmaType(Type t) {
  if (t.isF16())
    return StringRef("MmaType::F16");
  if (t.isBF16())
    return StringRef("MmaType::BF16");
  if (isa<Float8E4M3FNType>(t))
    return StringRef("MmaType::E4M3");
  return std::nullopt;
}

inline bool isZeroSplat(Value v) {
  auto c = v.getDefiningOp<arith::ConstantOp>();
  auto splat = c ? dyn_cast<SplatElementsAttr>(c.getValue()) : nullptr;
  if (!splat)
    return false;
  auto f = dyn_cast<FloatAttr>(splat.getSplatValue<Attribute>());
  return f && f.getValue().isPosZero();
}

inline int64_t elemBytes(Type t) { return (t.getIntOrFloatBitWidth() + 7) / 8; }

/// tileSwizzle of a tile as stored, its last extent contiguous.
inline std::optional<SmemSwizzle> tileSwizzle(RankedTensorType tile) {
  return tileSwizzle(tile.getShape().back() * elemBytes(tile.getElementType()));
}

/// A float constant as CUDA C++, exact for every f32 value.
inline std::string floatLiteral(FloatAttr f) {
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
StringRef layoutAttrOf(Value v);

/// The C++ expression of one element of `op`'s result from the expressions
/// of its operands' elements: shared by scalars and register tensors.
/// Returns "" for operations it does not know.
std::string elementExpr(Operation *op, ArrayRef<std::string> x,
                        StringRef ctype);

} // namespace cuda
} // namespace tawa

#endif // TAWA_LIB_TARGET_EMITTER_H
