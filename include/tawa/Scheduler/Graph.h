//===- Graph.h - Loop dependence graphs for the Twill scheduler -*- C++ -*-===//
//
// Data model of the joint software-pipelining / warp-specialization scheduler
// (Twill, docs/SCHEDULER.md). Nothing here depends on MLIR: the compiler hook
// builds a Graph from IR later, the CLI and the tests build it from text.
//
//===----------------------------------------------------------------------===//
#ifndef TAWA_SCHEDULER_GRAPH_H
#define TAWA_SCHEDULER_GRAPH_H

#include <iosfwd>
#include <string>
#include <vector>

namespace tawa {
namespace sched {

/// A functional unit kind and how many instances the SM has.
struct Unit {
  std::string name;
  int capacity = 1;
};

/// One row range of a resource reservation table: the op occupies `count`
/// instances of `unit` in each of its cycles [first, last].
struct UnitUse {
  int unit = 0;
  int first = 0;
  int last = 0;
  int count = 1;
};

struct Op {
  std::string name;
  int cycles = 1; ///< Length of the op's reservation table (its RRT rows).
  std::vector<UnitUse> uses;
  /// Variable latency (TMA, global memory): must live on the designated
  /// variable-latency warp group W_vl.
  bool varLatency = false;
  /// Streaming variable-latency op (no incoming data dependences): it runs
  /// ahead of the pipeline, so its outgoing delays count as zero (§5.3).
  bool streaming = false;
  int regs = 0;  ///< Registers per thread of the owning warp group.
  int smem = 0;  ///< Shared memory footprint (KiB) of its result.
  int spill = 0; ///< Cycles to hand the result to another warp group.
  int line = 0;  ///< Source line for diagnostics (0 when built in code).

  /// Usage of `unit` in cycle `c` of this op.
  int usage(int unit, int c) const;
};

/// Dependence u -> v: v of iteration i+distance starts >= delay cycles after
/// u of iteration i. Blocking edges need a blocking wait in v (mbarrier /
/// tcgen05 wait), which stalls every other op issued by v's warp group.
struct Edge {
  int src = 0;
  int dst = 0;
  int delay = 0;
  int distance = 0;
  bool blocking = false;
};

struct Graph {
  std::string machine; ///< Informational: the machine model it came from.
  std::vector<Unit> units;
  std::vector<Op> ops;
  std::vector<Edge> edges;
  int numWarps = 1;     ///< Warp groups available (W_vl included).
  int regLimit = 0;     ///< Per warp group register limit, 0 = unlimited.
  int regCapacity = 0;  ///< Register file of the SM (same units), 0 = none.
  int smemCapacity = 0; ///< Shared memory of the SM (KiB), 0 = unlimited.
  /// Ablation: data may not cross warp groups except out of W_vl (whose
  /// results land in shared memory by construction).
  bool noCrossWarp = false;

  int findOp(const std::string &name) const;
  int findUnit(const std::string &name) const;
  bool hasVarLatency() const;
  /// Delay used by the schedulers (streaming sources count zero).
  int effectiveDelay(const Edge &e) const;
  /// Checks indices and values; returns an empty string when well formed.
  std::string validate() const;
};

/// Machine models as data. Units, memories and limits only; op costs come
/// from the graph (they depend on tile shapes).
struct MachineModel {
  std::string name;
  std::vector<Unit> units;
  int regCapacity = 0;
  int regLimit = 0;
  int smemCapacity = 0;
  int numWarps = 0;
};
/// "h100" or "b200"; returns false for an unknown name.
bool getMachineModel(const std::string &name, MachineModel &out);
/// Adds the model's units and limits to a graph (existing units are kept).
void applyMachineModel(const MachineModel &m, Graph &g);

/// Parses the text format described in docs/SCHEDULER.md. On failure returns
/// false and sets `error` to "file:line: error: message".
bool parseGraph(std::istream &in, const std::string &fileName, Graph &g,
                std::string &error);
bool parseGraphString(const std::string &text, Graph &g, std::string &error);

/// Resource-constrained lower bound on the initiation interval.
int computeResMII(const Graph &g);
/// Recurrence-constrained lower bound; -1 when a zero-distance cycle makes
/// the graph unschedulable at any II.
int computeRecMII(const Graph &g);
/// True when no dependence cycle has positive weight under II (delay - II *
/// distance), i.e. the recurrences admit II.
bool recurrencesAdmit(const Graph &g, int ii);

} // namespace sched
} // namespace tawa

#endif // TAWA_SCHEDULER_GRAPH_H
