//===- LoopGraph.cpp - a main loop as a tawa-sched dependence graph -------===//
//
// Twill schedules coarse operations: a TMA load, a matrix product, a block of
// CUDA-core work such as a softmax. buildLoopGraph cuts a loop's body into
// such operations and writes them, with costs from an H100 model and their
// dependences, in the text format of tawa-sched; -tawa-print-loop-graph
// prints it and -tawa-optimal-schedule solves it.
//
//===----------------------------------------------------------------------===//

#include "tawa/Transforms/LoopGraph.h"
#include "tawa/Transforms/Partition.h"
#include "tawa/Transforms/SourceLocation.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "llvm/ADT/EquivalenceClasses.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <set>
#include <tuple>

using namespace mlir;

namespace tawa {
namespace {

// H100 throughput per SM and clock (989 TFLOP/s dense fp16 over 132 SMs at
// 1.83 GHz is 2048 multiply-adds; 3.9 TFLOP/s of MUFU is 16 exponentials).
constexpr double kMacsPerClock = 2048, kFp8MacsPerClock = 4096;
constexpr double kExpPerClock = 16, kAluPerClock = 128, kCvtPerClock = 64;

int64_t elements(Type t) {
  auto tensor = dyn_cast<RankedTensorType>(t);
  return tensor ? tensor.getNumElements() : 1;
}

std::string position(Location loc) {
  if (auto file = dyn_cast<FileLineColLoc>(getUserLocation(loc)))
    return (file.getFilename().getValue() + ":" + Twine(file.getLine()) + ":" +
            Twine(file.getColumn()))
        .str();
  return "?";
}

int clocks(double c) { return std::max(1, static_cast<int>(std::ceil(c))); }

/// One coarse operation of the graph.
struct Node {
  std::string name;
  std::string unit;     // TMA, TC, or ALU (with EXP cycles added)
  double aluClocks = 0; // ALU part of a CUDA-core node
  double expClocks = 0; // EXP part of a CUDA-core node
  int cycles = 1;
  bool stream = false;
  int regs = 0, smemKiB = 0;
  Operation *anchor = nullptr;
};

/// CUDA-core work of one tensor operation. An scf.if costs its then branch
/// where it is marked as the expected one (kExpectThenAttr), else its
/// costlier branch.
struct CoreCost {
  double alu = 0, exp = 0;
  int64_t elements = 0;
};

CoreCost coreCost(Operation *op) {
  CoreCost c;
  if (auto ifOp = dyn_cast<scf::IfOp>(op)) {
    auto branch = [](Block *block) {
      CoreCost b;
      if (!block)
        return b;
      for (Operation &inner : block->without_terminator()) {
        CoreCost i = coreCost(&inner);
        b.alu += i.alu, b.exp += i.exp;
        b.elements = std::max(b.elements, i.elements);
      }
      return b;
    };
    CoreCost t = branch(ifOp.thenBlock()), e = branch(ifOp.elseBlock());
    bool expectThen = op->hasAttr(kExpectThenAttr);
    c = expectThen || t.alu + t.exp >= e.alu + e.exp ? t : e;
    c.elements = std::max(t.elements, expectThen ? 0 : e.elements);
    return c;
  }
  for (Value operand : op->getOperands())
    c.elements = std::max(c.elements, elements(operand.getType()));
  for (Type t : op->getResultTypes())
    c.elements = std::max(c.elements, elements(t));
  double e = static_cast<double>(c.elements);
  if (isa<math::Exp2Op, math::ExpOp>(op))
    c.exp = e / kExpPerClock;
  else if (isa<arith::TruncFOp, arith::ExtFOp, tt::FpToFpOp>(op))
    c.alu = e / kCvtPerClock;
  else if (isa<tt::ExpandDimsOp, tt::BroadcastOp, tt::SplatOp, tt::TransOp,
               arith::ConstantOp>(op))
    ; // layout bookkeeping: no work of its own
  else
    c.alu = e / kAluPerClock;
  return c;
}

} // namespace

scf::ForOp findMainLoop(tt::FuncOp func) {
  scf::ForOp loop;
  func.walk([&](scf::ForOp forOp) {
    bool hasDot = false, nestedLoop = false;
    forOp.getBody()->walk([&](Operation *op) {
      hasDot |= isa<tt::DotOp>(op);
      nestedLoop |= isa<scf::ForOp, scf::WhileOp>(op);
    });
    if (hasDot && !nestedLoop && !loop)
      loop = forOp;
  });
  return loop;
}

LoopGraph buildLoopGraph(scf::ForOp loop, int64_t accShare) {
  Block *body = loop.getBody();

  // Coarse operations: loads and products alone; the remaining tensor ops
  // joined through their SSA edges into CUDA-core blocks.
  llvm::EquivalenceClasses<Operation *> groups;
  SmallVector<Operation *> ops;
  for (Operation &op : body->without_terminator()) {
    // A transpose of a loaded tile is a shared-memory view: no work.
    if (isa<tt::TransOp>(op))
      continue;
    if (op.getNumResults() == 0 ||
        !llvm::any_of(op.getResultTypes(),
                      [](Type t) { return isa<RankedTensorType>(t); }))
      continue; // scalar index arithmetic: free in this model
    ops.push_back(&op);
    groups.insert(&op);
  }
  auto isCore = [](Operation *op) {
    return !isa<tt::DescriptorLoadOp, tt::DotOp>(op);
  };
  for (Operation *op : ops) {
    if (!isCore(op))
      continue;
    for (Value operand : op->getOperands())
      if (Operation *def = operand.getDefiningOp();
          def && !isa<tt::TransOp>(def))
        if (def->getBlock() == body && groups.contains(def) && isCore(def))
          groups.unionSets(def, op);
  }

  llvm::MapVector<Operation *, unsigned> nodeOfLeader;
  llvm::DenseMap<Operation *, unsigned> nodeOf;
  SmallVector<Node> nodes;
  unsigned loads = 0, dots = 0, blocks = 0;
  for (Operation *op : ops) {
    Operation *leader = groups.getLeaderValue(op);
    auto [it, inserted] = nodeOfLeader.try_emplace(leader, nodes.size());
    if (inserted) {
      Node n;
      n.anchor = op;
      if (isa<tt::DescriptorLoadOp>(op))
        n.name = "load" + std::to_string(loads++), n.unit = "TMA";
      else if (isa<tt::DotOp>(op))
        n.name = "mma" + std::to_string(dots++), n.unit = "TC";
      else
        n.name = "core" + std::to_string(blocks++), n.unit = "ALU";
      nodes.push_back(n);
    }
    nodeOf[op] = it->second;
    Node &n = nodes[it->second];
    if (auto load = dyn_cast<tt::DescriptorLoadOp>(op)) {
      auto t = cast<RankedTensorType>(load.getType());
      n.stream = true; // TMA loads run ahead on the producer (Twill §5.3)
      n.smemKiB = static_cast<int>(
          (t.getNumElements() * t.getElementTypeBitWidth() / 8 + 1023) / 1024);
    } else if (auto dot = dyn_cast<tt::DotOp>(op)) {
      auto a = cast<RankedTensorType>(dot.getA().getType());
      auto d = cast<RankedTensorType>(dot.getD().getType());
      int64_t r = a.getRank();
      double macs = double(d.getDimSize(r - 2)) * d.getDimSize(r - 1) *
                    a.getDimSize(r - 1);
      bool fp8 = a.getElementTypeBitWidth() == 8;
      n.cycles = clocks(macs / (fp8 ? kFp8MacsPerClock : kMacsPerClock));
      // An fp32 accumulator spread over the warp groups that share it.
      n.regs = static_cast<int>(d.getNumElements() / (128 * accShare));
    } else {
      CoreCost c = coreCost(op);
      n.aluClocks += c.alu;
      n.expClocks += c.exp;
      n.regs = std::max<int>(n.regs, static_cast<int>(c.elements / 128));
    }
  }
  for (Node &n : nodes)
    if (n.unit == "ALU")
      n.cycles =
          clocks(n.aluClocks) + (n.expClocks > 0 ? clocks(n.expClocks) : 0);

  // Dependences: SSA uses inside one iteration, and loop-carried values
  // from the yield to the uses of the iteration argument.
  std::set<std::tuple<unsigned, unsigned, int>> edges;
  for (Operation *op : ops)
    for (Value operand : op->getOperands()) {
      while (auto trans = operand.getDefiningOp<tt::TransOp>())
        operand = trans.getSrc();
      if (Operation *def = operand.getDefiningOp()) {
        if (nodeOf.count(def) && nodeOf[def] != nodeOf[op])
          edges.insert({nodeOf[def], nodeOf[op], 0});
        continue;
      }
      auto arg = dyn_cast<BlockArgument>(operand);
      if (!arg || arg.getOwner() != body || arg.getArgNumber() == 0)
        continue;
      Value yielded = loop.getYieldedValues()[arg.getArgNumber() - 1];
      if (Operation *def = yielded.getDefiningOp())
        if (nodeOf.count(def))
          edges.insert({nodeOf[def], nodeOf[op], 1});
    }

  std::string text;
  llvm::raw_string_ostream os(text);
  os << "# main loop of @" << loop->getParentOfType<tt::FuncOp>().getName()
     << " (" << position(loop.getLoc()) << "), clock cycles on one H100 SM\n";
  os << "machine h100\n";
  for (Node &n : nodes) {
    os << "op " << n.name << " " << n.cycles << " ";
    if (n.unit == "ALU" && n.expClocks > 0)
      os << "ALU:0-" << clocks(n.aluClocks) - 1
         << " EXP:" << clocks(n.aluClocks) << "-" << n.cycles - 1;
    else
      os << n.unit;
    if (n.stream)
      os << " stream";
    if (n.regs)
      os << " regs=" << n.regs;
    if (n.smemKiB)
      os << " smem=" << n.smemKiB;
    os << "   # " << n.anchor->getName() << " at "
       << position(n.anchor->getLoc()) << "\n";
  }
  for (auto [src, dst, distance] : edges)
    os << "edge " << nodes[src].name << " " << nodes[dst].name << " "
       << nodes[src].cycles << " " << distance << "\n";
  LoopGraph graph;
  graph.text = os.str();
  for (Node &n : nodes) {
    graph.names.push_back(n.name);
    graph.anchors.push_back(n.anchor);
  }
  return graph;
}

} // namespace tawa
