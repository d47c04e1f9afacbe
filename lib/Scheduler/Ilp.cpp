//===- Ilp.cpp - COIN-OR CBC wrapper --------------------------------------===//

#include "Ilp.h"

#include "CbcModel.hpp"
#include "CbcSolver.hpp"
#include "CoinPackedMatrix.hpp"
#include "CoinPackedVector.hpp"
#include "OsiClpSolverInterface.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>

using namespace tawa::sched;

int IlpModel::addCol(double lo, double hi, double obj, bool integer) {
  lo_.push_back(lo);
  hi_.push_back(hi);
  obj_.push_back(obj);
  integer_.push_back(integer);
  return static_cast<int>(lo_.size()) - 1;
}

void IlpModel::addRow(const std::vector<std::pair<int, double>> &terms,
                      double lo, double hi) {
  rows_.push_back(terms);
  rowLo_.push_back(lo);
  rowHi_.push_back(hi);
}

SolveStatus IlpModel::solve(double timeoutSeconds,
                            std::vector<double> &solution,
                            double &objective) const {
  // CbcMain0/1 keep parameter tables in globals; serialize callers.
  static std::mutex cbcMutex;
  std::lock_guard<std::mutex> lock(cbcMutex);

  auto t0 = std::chrono::steady_clock::now();
  OsiClpSolverInterface solver;
  CoinPackedMatrix matrix(false, 0, 0);
  matrix.setDimensions(0, numCols());
  for (const auto &row : rows_) {
    CoinPackedVector v;
    for (const auto &t : row)
      v.insert(t.first, t.second);
    matrix.appendRow(v);
  }
  solver.loadProblem(matrix, lo_.data(), hi_.data(), obj_.data(),
                     rowLo_.data(), rowHi_.data());
  for (int c = 0; c < numCols(); ++c)
    if (integer_[c])
      solver.setInteger(c);
  solver.messageHandler()->setLogLevel(0);

  CbcModel model(solver);
  model.messageHandler()->setLogLevel(0);
  CbcMain0(model);
  std::string sec = std::to_string(timeoutSeconds > 0.01 ? timeoutSeconds
                                                          : 0.01);
  // One thread: CI has two cores and the tests run in parallel.
  const char *argv[] = {"tawa-sched", "-log", "0", "-slog", "0", "-sec",
                        sec.c_str(), "-solve", "-quit"};
  CbcMain1(static_cast<int>(sizeof(argv) / sizeof(argv[0])), argv, model);

  const double *best = model.bestSolution();
  // status 0 = search finished; 1 = stopped on a limit. CBC also calls a
  // search cut short by the clock "infeasible" when it had no incumbent, so
  // only a finished search (secondary status 1 = relaxation infeasible, or 0
  // with a solution) counts as a proof.
  // When the limit strikes during preprocessing or the root LP, CBC even
  // reports "relaxation infeasible" (status 0, secondary 1); so a run that
  // used up its time proves nothing, whatever the flags say.
  double used = std::chrono::duration<double>(
                    std::chrono::steady_clock::now() - t0)
                    .count();
  bool finished = model.status() == 0 && !model.isSecondsLimitReached() &&
                  model.secondaryStatus() != 4 &&
                  used < 0.95 * timeoutSeconds;
  if (std::getenv("TAWA_SCHED_DEBUG_CBC"))
    std::fprintf(stderr, "cbc: status=%d secondary=%d optimal=%d "
                 "infeasible=%d secondsLimit=%d best=%d\n",
                 model.status(), model.secondaryStatus(),
                 model.isProvenOptimal(), model.isProvenInfeasible(),
                 model.isSecondsLimitReached(), best != nullptr);
  if (finished && model.isProvenOptimal() && best) {
    solution.assign(best, best + numCols());
    objective = model.getObjValue();
    return SolveStatus::Optimal;
  }
  if (finished && !best &&
      (model.isProvenInfeasible() ||
       model.isInitialSolveProvenPrimalInfeasible()))
    return SolveStatus::Infeasible;
  if (best) {
    solution.assign(best, best + numCols());
    objective = model.getObjValue();
    return SolveStatus::Feasible;
  }
  return SolveStatus::Timeout;
}
