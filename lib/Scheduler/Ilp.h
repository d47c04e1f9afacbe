//===- Ilp.h - Small wrapper over COIN-OR CBC (private) ---------*- C++ -*-===//
#ifndef TAWA_LIB_SCHEDULER_ILP_H
#define TAWA_LIB_SCHEDULER_ILP_H

#include "tawa/Scheduler/Scheduler.h"

#include <utility>
#include <vector>

namespace tawa {
namespace sched {

/// Row-wise model builder; CBC sees it only in solve(), so the formulations
/// stay readable and the COIN headers stay out of the public API.
class IlpModel {
public:
  int addCol(double lo, double hi, double obj, bool integer);
  void addRow(const std::vector<std::pair<int, double>> &terms, double lo,
              double hi);
  /// Solves with CBC's default strategy (cuts + heuristics) under a time
  /// limit. Optimal/Infeasible are proofs; Feasible means the time ran out
  /// with an incumbent; Timeout means it ran out without one.
  SolveStatus solve(double timeoutSeconds, std::vector<double> &solution,
                    double &objective) const;
  int numCols() const { return static_cast<int>(lo_.size()); }

private:
  std::vector<double> lo_, hi_, obj_;
  std::vector<char> integer_;
  std::vector<std::vector<std::pair<int, double>>> rows_;
  std::vector<double> rowLo_, rowHi_;
};

} // namespace sched
} // namespace tawa

#endif
