//===- Modulo.cpp - Optimal modulo scheduling and cost normalization ------===//
//
// Both problems are small integer programs solved by CBC (Ilp.h).
//
//===----------------------------------------------------------------------===//

#include "Ilp.h"
#include "tawa/Scheduler/Scheduler.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <map>
#include <numeric>

using namespace tawa::sched;

namespace {
double secondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
      .count();
}
int floorMod(int a, int m) { return ((a % m) + m) % m; }
} // namespace

const char *tawa::sched::toString(SolveStatus s) {
  switch (s) {
  case SolveStatus::Optimal:
    return "optimal";
  case SolveStatus::Feasible:
    return "feasible";
  case SolveStatus::Infeasible:
    return "infeasible";
  case SolveStatus::Timeout:
    return "timeout";
  case SolveStatus::Error:
    return "error";
  }
  return "error";
}

std::string tawa::sched::verifyModuloSchedule(const Graph &g,
                                              const ModuloSchedule &s) {
  size_t n = g.ops.size();
  if (s.ii < 1 || s.start.size() != n)
    return "schedule has the wrong shape";
  int len = 0;
  for (size_t v = 0; v < n; ++v) {
    if (s.start[v] < 0)
      return "op " + g.ops[v].name + " starts before 0";
    len = std::max(len, s.start[v] + g.ops[v].cycles);
  }
  if (len > s.length)
    return "ops end after L";
  for (const Edge &e : g.edges)
    if (s.start[e.dst] + s.ii * e.distance <
        s.start[e.src] + g.effectiveDelay(e))
      return "dependence " + g.ops[e.src].name + " -> " + g.ops[e.dst].name +
             " violated";
  for (size_t f = 0; f < g.units.size(); ++f) {
    std::vector<int> rows(s.ii, 0);
    for (size_t v = 0; v < n; ++v)
      for (int c = 0; c < g.ops[v].cycles; ++c)
        rows[floorMod(s.start[v] + c, s.ii)] +=
            g.ops[v].usage(static_cast<int>(f), c);
    for (int r = 0; r < s.ii; ++r)
      if (rows[r] > g.units[f].capacity)
        return "unit " + g.units[f].name + " over capacity in row " +
               std::to_string(r);
  }
  return "";
}

//===----------------------------------------------------------------------===//
// Modulo scheduling ILP
//===----------------------------------------------------------------------===//

ModuloResult tawa::sched::solveModulo(const Graph &g, int ii,
                                      double timeoutSeconds) {
  auto t0 = std::chrono::steady_clock::now();
  ModuloResult res;
  size_t n = g.ops.size();
  if (ii < 1) {
    res.status = SolveStatus::Error;
    res.message = "II must be >= 1";
    return res;
  }
  // Horizon: placing ops one after another, each waits at most for its
  // predecessors' delays plus ii-1 cycles to reach a free modulo row, so any
  // II-feasible ordering fits in this many cycles. A schedule that needs
  // more is reported infeasible at this II (and the search moves on).
  int horizon = 0;
  for (size_t v = 0; v < n; ++v) {
    int out = g.ops[v].cycles;
    for (const Edge &e : g.edges)
      if (e.src == static_cast<int>(v))
        out = std::max(out, g.effectiveDelay(e));
    horizon += out + ii;
  }

  IlpModel m;
  // x[v][t]: op v (iteration 0) starts at cycle t.
  std::vector<std::vector<int>> x(n);
  for (size_t v = 0; v < n; ++v)
    for (int t = 0; t + g.ops[v].cycles <= horizon; ++t)
      x[v].push_back(m.addCol(0, 1, 0, true));
  int lenCol = m.addCol(0, horizon, 1, true);

  for (size_t v = 0; v < n; ++v) {
    std::vector<std::pair<int, double>> one, len{{lenCol, 1}};
    for (size_t t = 0; t < x[v].size(); ++t) {
      one.push_back({x[v][t], 1});
      len.push_back({x[v][t], -static_cast<double>(t + g.ops[v].cycles)});
    }
    m.addRow(one, 1, 1);   // Each op starts exactly once.
    m.addRow(len, 0, 1e9); // L covers every op.
  }
  // Dependences in the strong time-indexed form: if u starts at or after t,
  // v may not start before t + delay - ii * distance. Much tighter LP
  // relaxation than the aggregated start-time difference.
  for (const Edge &e : g.edges) {
    int k = g.effectiveDelay(e) - ii * e.distance;
    const auto &xu = x[e.src], &xv = x[e.dst];
    for (int t = 0; t < static_cast<int>(xu.size()); ++t) {
      int lim = std::min<int>(t + k, xv.size());
      if (lim <= 0)
        continue;
      std::map<int, double> terms;
      for (int tau = t; tau < static_cast<int>(xu.size()); ++tau)
        terms[xu[tau]] += 1;
      for (int tau = 0; tau < lim; ++tau)
        terms[xv[tau]] += 1;
      m.addRow({terms.begin(), terms.end()}, -1e9, 1);
    }
  }
  // Modulo reservation table: per unit and row r of [0, ii).
  for (size_t f = 0; f < g.units.size(); ++f) {
    std::vector<std::map<int, double>> rows(ii);
    for (size_t v = 0; v < n; ++v)
      for (int c = 0; c < g.ops[v].cycles; ++c) {
        int use = g.ops[v].usage(static_cast<int>(f), c);
        if (!use)
          continue;
        for (size_t t = 0; t < x[v].size(); ++t)
          rows[(t + c) % ii][x[v][t]] += use;
      }
    for (auto &r : rows)
      if (!r.empty())
        m.addRow({r.begin(), r.end()}, -1e9, g.units[f].capacity);
  }

  std::vector<double> sol;
  double obj = 0;
  res.status = m.solve(timeoutSeconds, sol, obj);
  res.seconds = secondsSince(t0);
  if (res.status != SolveStatus::Optimal && res.status != SolveStatus::Feasible)
    return res;
  ModuloSchedule &s = res.schedule;
  s.ii = ii;
  s.start.assign(n, 0);
  for (size_t v = 0; v < n; ++v)
    for (size_t t = 0; t < x[v].size(); ++t)
      if (sol[x[v][t]] > 0.5)
        s.start[v] = static_cast<int>(t);
  int lo = *std::min_element(s.start.begin(), s.start.end());
  s.length = 0;
  for (size_t v = 0; v < n; ++v) {
    s.start[v] -= lo;
    s.length = std::max(s.length, s.start[v] + g.ops[v].cycles);
  }
  std::string err = verifyModuloSchedule(g, s);
  if (!err.empty()) {
    res.status = SolveStatus::Error;
    res.message = "CBC returned an invalid schedule: " + err;
  }
  return res;
}

//===----------------------------------------------------------------------===//
// Cost normalization
//===----------------------------------------------------------------------===//

NormalizeResult tawa::sched::normalizeCosts(const std::vector<int64_t> &costs,
                                            int64_t u, double timeoutSeconds) {
  auto t0 = std::chrono::steady_clock::now();
  NormalizeResult res;
  res.costs.assign(costs.size(), 0);
  // Equal costs must keep equal ratios, so one variable per distinct
  // positive value; zeros stay zero. Dividing by the gcd keeps the
  // coefficients (C[i] * C'[j]) small without changing any ratio.
  std::vector<int64_t> vals;
  for (int64_t c : costs) {
    if (c < 0) {
      res.status = SolveStatus::Error;
      return res;
    }
    if (c > 0)
      vals.push_back(c);
  }
  std::sort(vals.begin(), vals.end());
  vals.erase(std::unique(vals.begin(), vals.end()), vals.end());
  if (vals.empty() || u < 1) {
    res.status = vals.empty() ? SolveStatus::Optimal : SolveStatus::Error;
    res.seconds = secondsSince(t0);
    return res;
  }
  int64_t g = 0;
  for (int64_t v : vals)
    g = std::gcd(g, v);
  std::vector<double> c;
  for (int64_t v : vals)
    c.push_back(static_cast<double>(v / g));
  size_t n = vals.size();

  // Phase 1 minimizes F; phase 2 fixes F and minimizes sum C' so that exact
  // ratios come out at the smallest time base.
  std::vector<double> best;
  double fStar = 0;
  double budget = timeoutSeconds;
  for (int phase = 0; phase < 2; ++phase) {
    IlpModel m;
    std::vector<int> cp;
    for (size_t i = 0; i < n; ++i)
      cp.push_back(m.addCol(0, static_cast<double>(u), phase ? 1 : 0, true));
    int f = m.addCol(0, phase ? fStar : 1e18, phase ? 0 : 1, true);
    for (size_t i = 0; i < n; ++i)
      for (size_t j = i + 1; j < n; ++j) {
        // -F <= C[i] C'[j] - C[j] C'[i] <= F
        m.addRow({{cp[j], c[i]}, {cp[i], -c[j]}, {f, -1}}, -1e18, 0);
        m.addRow({{cp[j], c[i]}, {cp[i], -c[j]}, {f, 1}}, 0, 1e18);
      }
    std::vector<std::pair<int, double>> sum;
    for (int col : cp)
      sum.push_back({col, 1});
    m.addRow(sum, 1, static_cast<double>(u));
    std::vector<double> sol;
    double obj = 0;
    double left = budget - secondsSince(t0);
    SolveStatus st = m.solve(left, sol, obj);
    if (st != SolveStatus::Optimal) {
      if (phase == 1 && !best.empty())
        break; // Keep phase 1's optimal F with its (larger) sum.
      res.status = st == SolveStatus::Feasible ? SolveStatus::Timeout : st;
      res.seconds = secondsSince(t0);
      return res;
    }
    best.assign(sol.begin(), sol.begin() + n);
    fStar = std::round(sol[f]);
  }
  std::map<int64_t, int64_t> map;
  for (size_t i = 0; i < n; ++i)
    map[vals[i]] = static_cast<int64_t>(std::llround(best[i]));
  for (size_t i = 0; i < costs.size(); ++i)
    res.costs[i] = costs[i] > 0 ? map[costs[i]] : 0;
  // Report F in the caller's units (the ILP ran on costs divided by gcd).
  double dist = 0;
  for (size_t i = 0; i < n; ++i)
    for (size_t j = 0; j < n; ++j)
      dist = std::max(dist, std::fabs(static_cast<double>(vals[i]) *
                                          map[vals[j]] -
                                      static_cast<double>(vals[j]) *
                                          map[vals[i]]));
  res.distortion = dist;
  res.status = SolveStatus::Optimal;
  res.seconds = secondsSince(t0);
  return res;
}

NormalizeResult tawa::sched::normalizeGraph(Graph &g, int64_t u,
                                            double timeoutSeconds) {
  // One time base for everything measured in cycles.
  std::vector<int64_t> costs;
  for (const Op &o : g.ops) {
    costs.push_back(o.cycles);
    costs.push_back(o.spill);
    for (const UnitUse &uu : o.uses) {
      costs.push_back(uu.first);
      costs.push_back(uu.last + 1);
    }
  }
  for (const Edge &e : g.edges)
    costs.push_back(e.delay);
  NormalizeResult r = normalizeCosts(costs, u, timeoutSeconds);
  if (r.status != SolveStatus::Optimal)
    return r;
  size_t k = 0;
  for (Op &o : g.ops) {
    // An op still takes at least one cycle; a reservation keeps at least one
    // row and stays inside the op.
    o.cycles = std::max<int>(1, r.costs[k++]);
    o.spill = static_cast<int>(r.costs[k++]);
    for (UnitUse &uu : o.uses) {
      int first = static_cast<int>(r.costs[k++]);
      int end = static_cast<int>(r.costs[k++]);
      uu.first = std::min(first, o.cycles - 1);
      uu.last = std::min(std::max(end, uu.first + 1), o.cycles) - 1;
    }
  }
  for (Edge &e : g.edges)
    e.delay = static_cast<int>(r.costs[k++]);
  return r;
}
