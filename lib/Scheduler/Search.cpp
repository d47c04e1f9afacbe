//===- Search.cpp - Algorithm 1: the II / L search ------------------------===//

#include "tawa/Scheduler/Scheduler.h"

#include <algorithm>
#include <chrono>

using namespace tawa::sched;

SearchResult tawa::sched::search(const Graph &g, const SearchOptions &opts) {
  auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
        .count();
  };
  SearchResult res;
  std::string bad = g.validate();
  if (!bad.empty()) {
    res.status = SolveStatus::Error;
    res.message = bad;
    return res;
  }
  res.resMII = computeResMII(g);
  res.recMII = computeRecMII(g);
  if (res.recMII < 0) {
    res.status = SolveStatus::Infeasible;
    res.message = "a dependence cycle has distance 0 and positive delay";
    return res;
  }
  int maxII = opts.maxII;
  if (maxII <= 0) {
    // Issuing one iteration after the other always satisfies resources and
    // recurrences; beyond that, a larger II cannot help the SMT constraints
    // either (nothing overlaps any more).
    maxII = 1;
    for (const Op &o : g.ops)
      maxII += o.cycles;
    for (const Edge &e : g.edges)
      maxII += g.effectiveDelay(e);
  }
  // Algorithm 1 starts at II = 1; every II below max(ResMII, RecMII) is
  // infeasible for the ILP, so starting there skips only proven failures.
  int first = std::max({1, res.resMII, res.recMII});
  for (int ii = first; ii <= maxII; ++ii) {
    double left = opts.timeoutSeconds - elapsed();
    if (left <= 0) {
      res.status = SolveStatus::Timeout;
      res.message = "time limit reached before II=" + std::to_string(ii);
      break;
    }
    ModuloResult m = solveModulo(g, ii, left);
    res.attempts.push_back(
        {Attempt::ModuloILP, ii, m.schedule.length, m.status, m.seconds});
    if (m.status == SolveStatus::Infeasible)
      continue;
    if (m.status != SolveStatus::Optimal) {
      // An incumbent without proof of minimal L would skip L values.
      res.status = m.status == SolveStatus::Error ? SolveStatus::Error
                                                  : SolveStatus::Timeout;
      res.message = m.status == SolveStatus::Error
                        ? m.message
                        : "modulo ILP timed out at II=" + std::to_string(ii);
      break;
    }
    if (opts.moduloOnly) {
      res.status = SolveStatus::Optimal;
      res.schedule = m.schedule;
      break;
    }
    int len0 = m.schedule.length;
    int stages = m.schedule.stages();
    bool stop = false;
    for (int len = len0; (len + ii - 1) / ii == stages; ++len) {
      JointOptions jo = opts.joint;
      jo.timeoutSeconds = opts.timeoutSeconds - elapsed();
      if (jo.timeoutSeconds <= 0) {
        res.status = SolveStatus::Timeout;
        res.message = "time limit reached before II=" + std::to_string(ii) +
                      " L=" + std::to_string(len);
        stop = true;
        break;
      }
      JointResult j = solveJoint(g, ii, len, jo, &m.schedule);
      res.attempts.push_back({Attempt::JointSMT, ii, len, j.status, j.seconds});
      if (j.status == SolveStatus::Feasible) {
        res.status = SolveStatus::Optimal;
        res.schedule = j.schedule;
        res.warp = j.warp;
        stop = true;
        break;
      }
      if (j.status != SolveStatus::Infeasible) {
        res.status = j.status;
        res.message = j.status == SolveStatus::Timeout
                          ? "SMT timed out at II=" + std::to_string(ii) +
                                " L=" + std::to_string(len)
                          : j.message;
        stop = true;
        break;
      }
    }
    if (stop)
      break;
  }
  if (res.status == SolveStatus::Error && res.message.empty()) {
    res.status = SolveStatus::Infeasible;
    res.message = "no schedule up to II=" + std::to_string(maxII);
  }
  res.seconds = elapsed();
  return res;
}

int tawa::sched::iiBeforeNormalization(const Graph &unnormalized,
                                       const SearchResult &r) {
  int rawBound =
      std::max({1, computeResMII(unnormalized), computeRecMII(unnormalized)});
  int bound = std::max({1, r.resMII, r.recMII});
  return static_cast<int>(
      static_cast<double>(rawBound) * r.schedule.ii / bound + 0.5);
}
