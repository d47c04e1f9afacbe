//===- Joint.cpp - Joint SWP + WS as an SMT problem (Z3) ------------------===//
//
// The constraint system of §4 over the straight-line program Q made of
// N = ceil(L/II) copies of one iteration, copy i offset by i*II, T = (N-1)*II
// + L cycles long. Encoding choices (all boolean, so Z3's finite-domain SAT
// core with native pseudo-boolean constraints does the work):
//  * op[v,i,t] is x[v][t - i*II] for a one-hot x[v] over copy 0's start:
//    this is Uniqueness + Consistency by construction, and bounding x[v] to
//    [0, L - cycles(v)] is Completion.
//  * start-time comparisons use an order encoding le[v][t] <=> start(v) <= t,
//    which turns Dependence and Cross-Warp Spills into binary clauses. They
//    are stated in the modular form start(v) + II*dist >= start(u) + delay,
//    which is what the paper's per-copy form says for every pair of copies
//    inside Q, and which also holds for distances >= N (no pair inside Q).
//  * Capacity is stated on the II rows of the modulo reservation table: the
//    steady state of Q uses every row and prologue/epilogue use subsets.
//
//===----------------------------------------------------------------------===//

#include "tawa/Scheduler/Scheduler.h"

#include <z3++.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <set>

using namespace tawa::sched;

namespace {

double secondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
      .count();
}

/// Live interval per (op, copy) in Q, computed directly (the checker's view
/// of the SMT liveness constraints): live on [def, lastUse - 1], or through T
/// when a use lies in a copy beyond Q (the loop-carried value is live out).
struct Interval {
  int from = 0, to = -1; // inclusive; empty when to < from
};
std::vector<std::vector<Interval>> liveIntervals(const Graph &g,
                                                 const ModuloSchedule &s,
                                                 int copies, int horizon) {
  size_t n = g.ops.size();
  std::vector<std::vector<Interval>> live(n, std::vector<Interval>(copies));
  for (size_t v = 0; v < n; ++v)
    for (int i = 0; i < copies; ++i) {
      int def = s.start[v] + i * s.ii;
      int end = def; // exclusive
      bool liveOut = false;
      for (const Edge &e : g.edges) {
        if (e.src != static_cast<int>(v))
          continue;
        if (i + e.distance >= copies)
          liveOut = true;
        else
          end = std::max(end, s.start[e.dst] + (i + e.distance) * s.ii);
      }
      live[v][i] = {def, liveOut ? horizon : end - 1};
    }
  return live;
}

/// True when an op starting at tv (copy 0) meets op o, started at to (copy
/// 0) and running cycles(o), in any pair of copies of Q.
bool overlapsInQ(int tv, int to, int cycles, int ii, int copies) {
  for (int k = -(copies - 1); k <= copies - 1; ++k) {
    int t = tv + k * ii;
    if (t >= to && t <= to + cycles - 1)
      return true;
  }
  return false;
}

} // namespace

std::string tawa::sched::verifyJoint(const Graph &g, const ModuloSchedule &s,
                                     const std::vector<int> &warp,
                                     bool spillsBlock) {
  std::string err = verifyModuloSchedule(g, s);
  if (!err.empty())
    return err;
  size_t n = g.ops.size();
  if (warp.size() != n)
    return "warp assignment has the wrong size";
  bool hasVar = g.hasVarLatency();
  for (size_t v = 0; v < n; ++v) {
    if (warp[v] < 0 || warp[v] >= g.numWarps)
      return "op " + g.ops[v].name + " on a warp group that does not exist";
    if (hasVar && (warp[v] == 0) != g.ops[v].varLatency)
      return "op " + g.ops[v].name + " breaks the variable-latency warp rule";
  }
  int copies = s.stages();
  int horizon = (copies - 1) * s.ii + s.length;
  std::vector<char> blocks(n, 0);
  for (const Edge &e : g.edges) {
    bool cross = warp[e.src] != warp[e.dst];
    if (e.blocking)
      blocks[e.dst] = 1;
    if (cross && g.ops[e.src].spill > 0) {
      if (s.start[e.dst] + s.ii * e.distance <
          s.start[e.src] + g.effectiveDelay(e) + g.ops[e.src].spill)
        return "cross-warp spill delay " + g.ops[e.src].name + " -> " +
               g.ops[e.dst].name + " violated";
      if (spillsBlock)
        blocks[e.dst] = 1;
    }
    if (cross && g.noCrossWarp && !g.ops[e.src].varLatency &&
        !g.ops[e.dst].varLatency)
      return "cross-warp edge " + g.ops[e.src].name + " -> " +
             g.ops[e.dst].name + " while cross-warp communication is off";
  }
  for (size_t v = 0; v < n; ++v) {
    if (!blocks[v])
      continue;
    for (size_t o = 0; o < n; ++o)
      if (o != v && warp[o] == warp[v] &&
          overlapsInQ(s.start[v], s.start[o], g.ops[o].cycles, s.ii, copies))
        return "blocking op " + g.ops[v].name + " starts while " +
               g.ops[o].name + " runs on the same warp group";
  }
  auto live = liveIntervals(g, s, copies, horizon);
  for (int t = 0; t <= horizon; ++t) {
    long smem = 0, regs = 0;
    std::vector<long> perWarp(g.numWarps, 0);
    for (size_t v = 0; v < n; ++v)
      for (int i = 0; i < copies; ++i)
        if (t >= live[v][i].from && t <= live[v][i].to) {
          smem += g.ops[v].smem;
          regs += g.ops[v].regs;
          perWarp[warp[v]] += g.ops[v].regs;
        }
    if (g.smemCapacity && smem > g.smemCapacity)
      return "shared memory over capacity at t=" + std::to_string(t);
    if (g.regCapacity && regs > g.regCapacity)
      return "register file over capacity at t=" + std::to_string(t);
    if (g.regLimit)
      for (int w = 0; w < g.numWarps; ++w)
        if (perWarp[w] > g.regLimit)
          return "warp group " + std::to_string(w) +
                 " over its register limit at t=" + std::to_string(t);
  }
  return "";
}

JointResult tawa::sched::solveJoint(const Graph &g, int ii, int length,
                                    const JointOptions &opts,
                                    const ModuloSchedule *seed) {
  auto t0 = std::chrono::steady_clock::now();
  JointResult res;
  size_t n = g.ops.size();
  const int copies = (length + ii - 1) / ii;
  const int horizon = (copies - 1) * ii + length; // T
  const int numWarps = g.numWarps;
  const bool hasVar = g.hasVarLatency();
  const int firstCompute = hasVar ? 1 : 0;
  for (const Op &o : g.ops)
    if (o.cycles > length) {
      res.status = SolveStatus::Infeasible;
      res.message = "op " + o.name + " is longer than L";
      return res;
    }

  try {
    z3::context ctx;
    // Everything below is boolean or pseudo-boolean: the finite-domain
    // solver handles PB constraints natively in its SAT core.
    z3::solver solver(ctx, "QF_FD");
    auto mk = [&](const std::string &name) { return ctx.bool_const(name.c_str()); };
    auto exprFalse = ctx.bool_val(false), exprTrue = ctx.bool_val(true);

    // x[v][t], le[v][t]
    std::vector<int> maxStart(n);
    std::vector<std::vector<z3::expr>> x(n), le(n);
    for (size_t v = 0; v < n; ++v) {
      maxStart[v] = length - g.ops[v].cycles;
      z3::expr_vector one(ctx);
      for (int t = 0; t <= maxStart[v]; ++t) {
        x[v].push_back(mk("x_" + g.ops[v].name + "_" + std::to_string(t)));
        one.push_back(x[v].back());
      }
      std::vector<int> ones(one.size(), 1);
      solver.add(z3::pbeq(one, ones.data(), 1)); // Uniqueness
      for (int t = 0; t <= maxStart[v]; ++t) {
        le[v].push_back(mk("le_" + g.ops[v].name + "_" + std::to_string(t)));
        z3::expr prev = t ? le[v][t - 1] : exprFalse;
        solver.add(le[v][t] == (prev || x[v][t]));
      }
    }
    // start(v) <= t
    auto leq = [&](size_t v, int t) -> z3::expr {
      if (t < 0)
        return exprFalse;
      if (t >= maxStart[v])
        return exprTrue;
      return le[v][t];
    };
    // op[v, i, t]
    auto opAt = [&](size_t v, int i, int t) -> z3::expr {
      int s = t - i * ii;
      if (s < 0 || s > maxStart[v])
        return exprFalse;
      return x[v][s];
    };
    // start(dst) >= start(src) + k, optionally guarded.
    auto addDiff = [&](size_t src, size_t dst, int k, const z3::expr *guard) {
      for (int t = 0; t <= maxStart[dst]; ++t) {
        z3::expr c = z3::implies(leq(dst, t), leq(src, t - k));
        solver.add(guard ? z3::implies(*guard, c) : c);
      }
    };

    // Dependence
    for (const Edge &e : g.edges)
      addDiff(e.src, e.dst, g.effectiveDelay(e) - ii * e.distance, nullptr);

    // Capacity on the modulo reservation table.
    for (size_t f = 0; f < g.units.size(); ++f) {
      std::vector<std::map<std::pair<int, int>, int>> rows(ii);
      for (size_t v = 0; v < n; ++v)
        for (int c = 0; c < g.ops[v].cycles; ++c) {
          int use = g.ops[v].usage(static_cast<int>(f), c);
          if (use)
            for (int t = 0; t <= maxStart[v]; ++t)
              rows[(t + c) % ii][{static_cast<int>(v), t}] += use;
        }
      for (auto &row : rows) {
        if (row.empty())
          continue;
        z3::expr_vector es(ctx);
        std::vector<int> coeffs;
        for (auto &kv : row) {
          es.push_back(x[kv.first.first][kv.first.second]);
          coeffs.push_back(kv.second);
        }
        solver.add(z3::pble(es, coeffs.data(), g.units[f].capacity));
      }
    }

    // Warp Uniqueness and Variable Latency.
    std::vector<std::vector<z3::expr>> opw(n);
    for (size_t v = 0; v < n; ++v) {
      z3::expr_vector one(ctx);
      for (int w = 0; w < numWarps; ++w) {
        opw[v].push_back(
            mk("w_" + g.ops[v].name + "_" + std::to_string(w)));
        one.push_back(opw[v].back());
      }
      std::vector<int> ones(one.size(), 1);
      solver.add(z3::pbeq(one, ones.data(), 1));
      if (hasVar)
        solver.add(opw[v][0] == ctx.bool_val(g.ops[v].varLatency));
    }
    // Compute warp groups are interchangeable: number them in order of first
    // use so the solver does not re-prove UNSAT for every relabelling.
    {
      std::vector<size_t> order;
      for (size_t v = 0; v < n; ++v)
        if (!(hasVar && g.ops[v].varLatency))
          order.push_back(v);
      for (size_t j = 0; j < order.size(); ++j)
        for (int w = firstCompute + 1; w < numWarps; ++w) {
          z3::expr_vector earlier(ctx);
          for (size_t k = 0; k < j; ++k)
            earlier.push_back(opw[order[k]][w - 1]);
          solver.add(z3::implies(opw[order[j]][w],
                                 earlier.empty() ? exprFalse
                                                 : z3::mk_or(earlier)));
        }
    }
    // same(a,b) is forced true when a and b share a group, diff(a,b) when
    // they do not; each is only used where being true adds constraints.
    std::map<std::pair<size_t, size_t>, z3::expr> sameMap, diffMap;
    auto same = [&](size_t a, size_t b) -> z3::expr {
      auto key = std::make_pair(std::min(a, b), std::max(a, b));
      auto it = sameMap.find(key);
      if (it != sameMap.end())
        return it->second;
      z3::expr s = mk("same_" + g.ops[a].name + "_" + g.ops[b].name);
      for (int w = 0; w < numWarps; ++w)
        solver.add(z3::implies(opw[a][w] && opw[b][w], s));
      sameMap.emplace(key, s);
      return s;
    };
    auto diff = [&](size_t a, size_t b) -> z3::expr {
      auto key = std::make_pair(std::min(a, b), std::max(a, b));
      auto it = diffMap.find(key);
      if (it != diffMap.end())
        return it->second;
      z3::expr d = mk("diff_" + g.ops[a].name + "_" + g.ops[b].name);
      for (int w = 0; w < numWarps; ++w)
        solver.add(z3::implies(opw[a][w] && !opw[b][w], d));
      diffMap.emplace(key, d);
      return d;
    };

    // Cross-Warp Spills, the no-cross-warp ablation, and which ops start with
    // a blocking wait (explicit blocking edges, and receiving spilled
    // registers from another group, which waits on a barrier).
    std::vector<z3::expr> blocks(n, exprFalse);
    std::vector<char> explicitBlock(n, 0);
    for (const Edge &e : g.edges)
      if (e.blocking)
        explicitBlock[e.dst] = 1;
    std::vector<z3::expr_vector> spillIn;
    for (size_t v = 0; v < n; ++v)
      spillIn.emplace_back(ctx);
    for (const Edge &e : g.edges) {
      if (e.src == e.dst)
        continue;
      if (g.ops[e.src].spill > 0) {
        z3::expr d = diff(e.src, e.dst);
        addDiff(e.src, e.dst,
                g.effectiveDelay(e) + g.ops[e.src].spill - ii * e.distance,
                &d);
        if (opts.spillsBlock)
          spillIn[e.dst].push_back(d);
      }
      if (g.noCrossWarp && !g.ops[e.src].varLatency &&
          !g.ops[e.dst].varLatency)
        for (int w = 0; w < numWarps; ++w)
          solver.add(opw[e.src][w] == opw[e.dst][w]);
    }
    for (size_t v = 0; v < n; ++v) {
      if (explicitBlock[v])
        blocks[v] = exprTrue;
      else if (!spillIn[v].empty())
        blocks[v] = z3::mk_or(spillIn[v]);
    }
    // Concurrency: nothing else of v's group may be running when v starts.
    for (size_t v = 0; v < n; ++v) {
      if (!explicitBlock[v] && spillIn[v].empty())
        continue;
      for (size_t o = 0; o < n; ++o) {
        if (o == v)
          continue;
        z3::expr sw = same(v, o);
        for (int tv = 0; tv <= maxStart[v]; ++tv)
          for (int to = 0; to <= maxStart[o]; ++to)
            if (overlapsInQ(tv, to, g.ops[o].cycles, ii, copies))
              solver.add(!(x[v][tv] && x[o][to] && sw && blocks[v]));
      }
    }

    // Liveness and memory capacity (only for values with a footprint).
    bool needRegs = g.regLimit > 0 || g.regCapacity > 0;
    bool needSmem = g.smemCapacity > 0;
    std::vector<std::vector<std::vector<z3::expr>>> live(n);
    for (size_t v = 0; v < n; ++v) {
      if (!((needRegs && g.ops[v].regs) || (needSmem && g.ops[v].smem)))
        continue;
      live[v].resize(copies);
      for (int i = 0; i < copies; ++i) {
        auto &lv = live[v][i];
        for (int t = 0; t <= horizon; ++t)
          lv.push_back(mk("live_" + g.ops[v].name + "_" + std::to_string(i) +
                          "_" + std::to_string(t)));
        // Init: live at T iff a user lies in a copy beyond Q.
        bool liveOut = false;
        for (const Edge &e : g.edges)
          if (e.src == static_cast<int>(v) && i + e.distance >= copies)
            liveOut = true;
        solver.add(lv[horizon] == ctx.bool_val(liveOut));
        // Backward propagation (LiveProp-1/2, DeadProp-1/2 folded into one
        // equivalence): live before t iff not defined at t and either live
        // at t or used at t. The "not defined at t" guard on the use case
        // keeps a zero-delay use from making the value live before its def.
        for (int t = horizon; t >= 1; --t) {
          z3::expr_vector users(ctx);
          for (const Edge &e : g.edges)
            if (e.src == static_cast<int>(v) && i + e.distance < copies) {
              z3::expr u = opAt(e.dst, i + e.distance, t);
              if (!u.is_false())
                users.push_back(u);
            }
          z3::expr used = users.empty() ? exprFalse : z3::mk_or(users);
          z3::expr def = opAt(v, i, t);
          solver.add(lv[t - 1] == (!def && (lv[t] || used)));
        }
      }
    }
    for (int t = 0; t <= horizon; ++t) {
      z3::expr_vector smemEs(ctx), regEs(ctx);
      std::vector<int> smemC, regC;
      std::vector<z3::expr_vector> perWarp;
      std::vector<std::vector<int>> perWarpC(numWarps);
      for (int w = 0; w < numWarps; ++w)
        perWarp.emplace_back(ctx);
      for (size_t v = 0; v < n; ++v) {
        if (live[v].empty())
          continue;
        for (int i = 0; i < copies; ++i) {
          const z3::expr &l = live[v][i][t];
          if (needSmem && g.ops[v].smem) {
            smemEs.push_back(l);
            smemC.push_back(g.ops[v].smem);
          }
          if (g.regCapacity && g.ops[v].regs) {
            regEs.push_back(l);
            regC.push_back(g.ops[v].regs);
          }
          if (g.regLimit && g.ops[v].regs)
            for (int w = 0; w < numWarps; ++w) {
              perWarp[w].push_back(l && opw[v][w]);
              perWarpC[w].push_back(g.ops[v].regs);
            }
        }
      }
      if (!smemEs.empty())
        solver.add(z3::pble(smemEs, smemC.data(), g.smemCapacity));
      if (!regEs.empty())
        solver.add(z3::pble(regEs, regC.data(), g.regCapacity));
      for (int w = 0; w < numWarps; ++w)
        if (!perWarp[w].empty())
          solver.add(z3::pble(perWarp[w], perWarpC[w].data(), g.regLimit));
    }

    // Try the ILP's schedule first (only the warp assignment is then open);
    // a failure under these assumptions proves nothing, so fall back to the
    // full problem.
    auto setTimeout = [&](double secs) {
      z3::params p(ctx);
      double ms = std::max(1.0, secs * 1000.0);
      p.set("timeout", static_cast<unsigned>(std::min(ms, 4.0e9)));
      solver.set(p);
    };
    z3::check_result r = z3::unknown;
    bool decided = false;
    if (seed && seed->start.size() == n) {
      z3::expr_vector assume(ctx);
      bool fits = true;
      for (size_t v = 0; v < n; ++v) {
        if (seed->start[v] > maxStart[v]) {
          fits = false;
          break;
        }
        assume.push_back(x[v][seed->start[v]]);
      }
      if (fits) {
        setTimeout(std::max(0.001, std::min(
            opts.timeoutSeconds / 4, opts.timeoutSeconds - secondsSince(t0))));
        if (solver.check(assume) == z3::sat) {
          r = z3::sat;
          decided = true;
        }
      }
    }
    if (!decided) {
      double left = opts.timeoutSeconds - secondsSince(t0);
      if (left <= 0) {
        res.status = SolveStatus::Timeout;
        res.seconds = secondsSince(t0);
        return res;
      }
      setTimeout(left);
      r = solver.check();
    }
    res.seconds = secondsSince(t0);
    if (r == z3::unsat) {
      res.status = SolveStatus::Infeasible;
      return res;
    }
    if (r == z3::unknown) {
      res.status = SolveStatus::Timeout;
      res.message = solver.reason_unknown();
      return res;
    }
    z3::model model = solver.get_model();
    ModuloSchedule &s = res.schedule;
    s.ii = ii;
    s.start.assign(n, 0);
    res.warp.assign(n, 0);
    for (size_t v = 0; v < n; ++v) {
      for (int t = 0; t <= maxStart[v]; ++t)
        if (model.eval(x[v][t], true).is_true())
          s.start[v] = t;
      for (int w = 0; w < numWarps; ++w)
        if (model.eval(opw[v][w], true).is_true())
          res.warp[v] = w;
    }
    // Keep L (and so the copy count of Q) as solved: liveness across the
    // boundary of Q depends on it, and the checker must see the same Q.
    s.length = length;
    res.status = SolveStatus::Feasible;
    std::string err = verifyJoint(g, s, res.warp, opts.spillsBlock);
    if (!err.empty()) {
      res.status = SolveStatus::Error;
      res.message = "Z3 model fails the checker: " + err;
    }
    return res;
  } catch (const z3::exception &ex) {
    res.status = SolveStatus::Error;
    res.message = std::string("z3: ") + ex.msg();
    res.seconds = secondsSince(t0);
    return res;
  }
}
