//===- Scheduler.h - Optimal modulo scheduling and warp assignment -*- C++ -*-===//
//
// The solvers of the Twill formulation: cost normalization (ILP), optimal
// modulo scheduling at a fixed II (ILP, COIN-OR CBC), the joint SWP+WS
// problem at fixed II and L (SMT, Z3) and the II/L search of Algorithm 1.
// A solver that runs out of time says Timeout; only a proof says Infeasible.
//
//===----------------------------------------------------------------------===//
#ifndef TAWA_SCHEDULER_SCHEDULER_H
#define TAWA_SCHEDULER_SCHEDULER_H

#include "tawa/Scheduler/Graph.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tawa {
namespace sched {

enum class SolveStatus { Optimal, Feasible, Infeasible, Timeout, Error };
const char *toString(SolveStatus s);

/// A modulo schedule: op v of iteration k starts at start[v] + k * ii.
struct ModuloSchedule {
  int ii = 0;
  int length = 0; ///< L = max_v start[v] + cycles(v) (min start is 0).
  std::vector<int> start;
  int stages() const { return ii ? (length + ii - 1) / ii : 0; }
};

/// Checks dependences (modular form) and modulo resource usage; returns an
/// empty string when valid, else a description of the first violation.
std::string verifyModuloSchedule(const Graph &g, const ModuloSchedule &s);

//===----------------------------------------------------------------------===//
// Cost normalization (§5.2)
//===----------------------------------------------------------------------===//

struct NormalizeResult {
  SolveStatus status = SolveStatus::Error;
  std::vector<int64_t> costs; ///< C', same order as the input.
  double distortion = 0;      ///< F = max |C[i] C'[j] - C[j] C'[i]|.
  double seconds = 0;
};
/// Minimizes F subject to -F <= C[i]C'[j] - C[j]C'[i] <= F and
/// 1 <= sum C' <= U (ties: the smallest sum, which keeps later problems
/// small). Equal inputs share one variable; all inputs must be >= 0.
NormalizeResult normalizeCosts(const std::vector<int64_t> &costs, int64_t u,
                               double timeoutSeconds = 10);
/// Normalizes op cycles, RRT ranges, edge delays and spill costs of `g`
/// together (they share one time base). Returns the ILP result.
NormalizeResult normalizeGraph(Graph &g, int64_t u,
                               double timeoutSeconds = 10);

//===----------------------------------------------------------------------===//
// Optimal modulo scheduling at fixed II (ILP, CBC)
//===----------------------------------------------------------------------===//

struct ModuloResult {
  SolveStatus status = SolveStatus::Error;
  ModuloSchedule schedule;
  double seconds = 0;
  std::string message;
};
/// Minimum-length modulo schedule at `ii` (time-indexed formulation with the
/// strong dependence rows). Infeasible means no schedule of length <= the
/// horizon bound exists at this II.
ModuloResult solveModulo(const Graph &g, int ii, double timeoutSeconds);

//===----------------------------------------------------------------------===//
// Joint SWP + WS at fixed II and L (SMT, Z3)
//===----------------------------------------------------------------------===//

struct JointResult {
  SolveStatus status = SolveStatus::Error;
  ModuloSchedule schedule;
  std::vector<int> warp; ///< Warp group of each op (W_vl = 0 when used).
  double seconds = 0;
  std::string message;
};
struct JointOptions {
  double timeoutSeconds = 60;
  /// Blocking sync for register data received from another warp group (the
  /// paper's "similar constraint for cross-warp spills").
  bool spillsBlock = true;
};
/// Finds M* (same II, length <= L) and a warp assignment satisfying every
/// constraint family of §4 over the straight-line program Q of ceil(L/II)
/// overlapped copies. `seed` (optional) is the ILP schedule: it is tried
/// first (as assumptions, leaving only the warp assignment open) with a
/// quarter of the budget; a failure there proves nothing and the full
/// problem follows.
JointResult solveJoint(const Graph &g, int ii, int length,
                       const JointOptions &opts,
                       const ModuloSchedule *seed = nullptr);
/// Independent checker for a joint solution (used by tests and the CLI).
std::string verifyJoint(const Graph &g, const ModuloSchedule &s,
                        const std::vector<int> &warp, bool spillsBlock = true);

//===----------------------------------------------------------------------===//
// Algorithm 1
//===----------------------------------------------------------------------===//

struct Attempt {
  enum Kind { ModuloILP, JointSMT } kind;
  int ii = 0;
  int length = 0;
  SolveStatus status = SolveStatus::Error;
  double seconds = 0;
};
struct SearchOptions {
  double timeoutSeconds = 120; ///< For the whole search.
  bool moduloOnly = false;     ///< Stop after the first feasible ILP.
  int maxII = 0;               ///< 0: sum of all RRT lengths + delays.
  JointOptions joint;
};
struct SearchResult {
  /// Optimal: minimal II found (joint, or ILP with moduloOnly). Infeasible:
  /// nothing up to maxII. Timeout: a solver ran out of time (nothing is
  /// claimed about the II being searched).
  SolveStatus status = SolveStatus::Error;
  ModuloSchedule schedule;
  std::vector<int> warp;
  int resMII = 0, recMII = 0;
  std::vector<Attempt> attempts;
  double seconds = 0;
  std::string message;
};
SearchResult search(const Graph &g, const SearchOptions &opts);

/// The solution's II in the units of `unnormalized`, the graph before cost
/// normalization: normalization keeps ratios only approximately (an op never
/// drops below one unit), so the II is read relative to the bound it was
/// solved against, max(ResMII, RecMII) of the solved graph, and applied to
/// the same bound of `unnormalized`.
int iiBeforeNormalization(const Graph &unnormalized, const SearchResult &r);

//===----------------------------------------------------------------------===//
// Output
//===----------------------------------------------------------------------===//

/// SVG timeline of the steady state: one lane per functional unit instance
/// and per warp group, ops labelled with their iteration offset.
std::string renderSvg(const Graph &g, const ModuloSchedule &s,
                      const std::vector<int> &warp);

} // namespace sched
} // namespace tawa

#endif // TAWA_SCHEDULER_SCHEDULER_H
