//===- Graph.cpp - Dependence graph, machine models, parser, MII bounds ---===//

#include "tawa/Scheduler/Graph.h"

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <istream>
#include <sstream>

using namespace tawa::sched;

int Op::usage(int unit, int c) const {
  int n = 0;
  for (const UnitUse &u : uses)
    if (u.unit == unit && c >= u.first && c <= u.last)
      n += u.count;
  return n;
}

int Graph::findOp(const std::string &name) const {
  for (size_t i = 0; i < ops.size(); ++i)
    if (ops[i].name == name)
      return static_cast<int>(i);
  return -1;
}

int Graph::findUnit(const std::string &name) const {
  for (size_t i = 0; i < units.size(); ++i)
    if (units[i].name == name)
      return static_cast<int>(i);
  return -1;
}

bool Graph::hasVarLatency() const {
  return std::any_of(ops.begin(), ops.end(),
                     [](const Op &o) { return o.varLatency; });
}

int Graph::effectiveDelay(const Edge &e) const {
  // §5.3: a streaming load runs ahead on its own warp group, so its result is
  // modelled as already there when the consumer issues.
  return ops[e.src].streaming ? 0 : e.delay;
}

std::string Graph::validate() const {
  if (ops.empty())
    return "graph has no ops";
  if (numWarps < 1)
    return "warps must be >= 1";
  for (const Unit &u : units)
    if (u.capacity < 1)
      return "unit " + u.name + " has capacity < 1";
  for (const Op &o : ops) {
    if (o.cycles < 1)
      return "op " + o.name + " has cycles < 1";
    for (const UnitUse &u : o.uses) {
      if (u.unit < 0 || u.unit >= static_cast<int>(units.size()))
        return "op " + o.name + " uses an unknown unit";
      if (u.first < 0 || u.last < u.first || u.last >= o.cycles)
        return "op " + o.name + " has a reservation outside its cycles";
      if (u.count < 1)
        return "op " + o.name + " has a reservation count < 1";
    }
    if (o.regs < 0 || o.smem < 0 || o.spill < 0)
      return "op " + o.name + " has a negative footprint";
  }
  for (const Edge &e : edges) {
    if (e.src < 0 || e.dst < 0 || e.src >= static_cast<int>(ops.size()) ||
        e.dst >= static_cast<int>(ops.size()))
      return "edge with an unknown op";
    if (e.delay < 0 || e.distance < 0)
      return "edge " + ops[e.src].name + " -> " + ops[e.dst].name +
             " has a negative delay or distance";
  }
  return "";
}

//===----------------------------------------------------------------------===//
// Machine models
//===----------------------------------------------------------------------===//

bool tawa::sched::getMachineModel(const std::string &name, MachineModel &m) {
  // Register quantities are "registers per thread of a 128-thread warp
  // group": the 64K-entry register file is 512 of them, setmaxnreg caps one
  // group at 240 (H100) and the B200 keeps the same file. Shared memory is
  // the opt-in maximum per block in KiB.
  if (name == "h100") {
    m.name = "h100";
    m.units = {{"TC", 1}, {"TMA", 1}, {"EXP", 1}, {"ALU", 1}};
    m.regCapacity = 512;
    m.regLimit = 240;
    m.smemCapacity = 227;
    m.numWarps = 3;
    return true;
  }
  if (name == "b200") {
    // Blackwell adds Tensor Memory; moving accumulators between TMEM and
    // registers (tcgen05.ld/st) is its own pipe.
    m.name = "b200";
    m.units = {{"TC", 1}, {"TMA", 1}, {"EXP", 1}, {"ALU", 1}, {"TMEM", 1}};
    m.regCapacity = 512;
    m.regLimit = 240;
    m.smemCapacity = 227;
    m.numWarps = 4;
    return true;
  }
  return false;
}

void tawa::sched::applyMachineModel(const MachineModel &m, Graph &g) {
  g.machine = m.name;
  for (const Unit &u : m.units)
    if (g.findUnit(u.name) < 0)
      g.units.push_back(u);
  g.regCapacity = m.regCapacity;
  g.regLimit = m.regLimit;
  g.smemCapacity = m.smemCapacity;
  g.numWarps = m.numWarps;
}

//===----------------------------------------------------------------------===//
// Parser
//===----------------------------------------------------------------------===//

namespace {
bool parseInt(const std::string &s, int &out) {
  if (s.empty())
    return false;
  char *end = nullptr;
  long v = std::strtol(s.c_str(), &end, 10);
  if (*end != '\0' || v < INT_MIN / 4 || v > INT_MAX / 4)
    return false;
  out = static_cast<int>(v);
  return true;
}
} // namespace

bool tawa::sched::parseGraph(std::istream &in, const std::string &fileName,
                             Graph &g, std::string &error) {
  std::string line;
  int lineNo = 0;
  auto fail = [&](const std::string &msg) {
    error = fileName + ":" + std::to_string(lineNo) + ": error: " + msg;
    return false;
  };
  // Edges may name ops declared later; resolve after the whole file.
  struct PendingEdge {
    std::string src, dst;
    Edge e;
    bool defaultDelay;
    int line;
  };
  std::vector<PendingEdge> pending;
  bool sawWarps = false;
  while (std::getline(in, line)) {
    ++lineNo;
    size_t hash = line.find('#');
    if (hash != std::string::npos)
      line.resize(hash);
    std::istringstream ls(line);
    std::vector<std::string> tok;
    for (std::string t; ls >> t;)
      tok.push_back(t);
    if (tok.empty())
      continue;
    const std::string &kw = tok[0];
    if (kw == "machine") {
      MachineModel m;
      if (tok.size() != 2 || !getMachineModel(tok[1], m))
        return fail("expected 'machine h100' or 'machine b200'");
      applyMachineModel(m, g);
    } else if (kw == "unit") {
      int cap;
      if (tok.size() != 3 || !parseInt(tok[2], cap) || cap < 1)
        return fail("expected 'unit NAME CAPACITY' with CAPACITY >= 1");
      int idx = g.findUnit(tok[1]);
      if (idx >= 0)
        g.units[idx].capacity = cap; // Overrides a machine model's unit.
      else
        g.units.push_back({tok[1], cap});
    } else if (kw == "op") {
      Op o;
      o.line = lineNo;
      if (tok.size() < 3 || !parseInt(tok[2], o.cycles) || o.cycles < 1)
        return fail("expected 'op NAME CYCLES [UNIT[:FIRST-LAST]]... [flags]' "
                    "with CYCLES >= 1");
      o.name = tok[1];
      if (g.findOp(o.name) >= 0)
        return fail("op '" + o.name + "' is already defined");
      for (size_t i = 3; i < tok.size(); ++i) {
        const std::string &t = tok[i];
        size_t eq = t.find('=');
        if (t == "var") {
          o.varLatency = true;
        } else if (t == "stream") {
          o.streaming = o.varLatency = true;
        } else if (eq != std::string::npos) {
          std::string key = t.substr(0, eq);
          int v;
          if (!parseInt(t.substr(eq + 1), v) || v < 0)
            return fail("flag '" + t + "' needs a non-negative integer");
          if (key == "regs")
            o.regs = v;
          else if (key == "smem")
            o.smem = v;
          else if (key == "spill")
            o.spill = v;
          else
            return fail("unknown flag '" + key +
                        "' (expected regs=, smem=, spill=)");
        } else {
          UnitUse u;
          std::string name = t;
          u.first = 0;
          u.last = o.cycles - 1;
          size_t colon = t.find(':');
          if (colon != std::string::npos) {
            name = t.substr(0, colon);
            std::string range = t.substr(colon + 1);
            size_t dash = range.find('-');
            bool ok = dash == std::string::npos
                          ? parseInt(range, u.first) &&
                                parseInt(range, u.last)
                          : parseInt(range.substr(0, dash), u.first) &&
                                parseInt(range.substr(dash + 1), u.last);
            if (!ok || u.first < 0 || u.last < u.first ||
                u.last >= o.cycles)
              return fail("bad cycle range in '" + t + "' (need 0 <= FIRST "
                          "<= LAST < " + std::to_string(o.cycles) + ")");
          }
          u.unit = g.findUnit(name);
          if (u.unit < 0)
            return fail("unknown unit '" + name +
                        "' (declare it with 'unit' or 'machine' first)");
          o.uses.push_back(u);
        }
      }
      g.ops.push_back(o);
    } else if (kw == "edge") {
      PendingEdge p;
      p.line = lineNo;
      p.defaultDelay = false;
      std::vector<std::string> rest(tok.begin() + 1, tok.end());
      if (!rest.empty() && rest.back() == "blocking") {
        p.e.blocking = true;
        rest.pop_back();
      }
      if (rest.size() == 2) {
        p.defaultDelay = true; // delay = cycles(src), distance 0
      } else if (rest.size() != 4 || !parseInt(rest[2], p.e.delay) ||
                 !parseInt(rest[3], p.e.distance) || p.e.delay < 0 ||
                 p.e.distance < 0) {
        return fail("expected 'edge SRC DST [DELAY DISTANCE] [blocking]' with "
                    "non-negative DELAY and DISTANCE");
      }
      p.src = rest[0];
      p.dst = rest[1];
      pending.push_back(p);
    } else if (kw == "warps") {
      if (tok.size() != 2 || !parseInt(tok[1], g.numWarps) || g.numWarps < 1)
        return fail("expected 'warps N' with N >= 1");
      sawWarps = true;
    } else if (kw == "reglimit" || kw == "regcap" || kw == "smemcap") {
      int v;
      if (tok.size() != 2 || !parseInt(tok[1], v) || v < 0)
        return fail("expected '" + kw + " N' with N >= 0");
      (kw == "reglimit" ? g.regLimit
                        : kw == "regcap" ? g.regCapacity : g.smemCapacity) = v;
    } else if (kw == "nocrosswarp") {
      if (tok.size() != 1)
        return fail("'nocrosswarp' takes no arguments");
      g.noCrossWarp = true;
    } else {
      return fail("unknown keyword '" + kw + "'");
    }
  }
  (void)sawWarps;
  for (PendingEdge &p : pending) {
    lineNo = p.line;
    p.e.src = g.findOp(p.src);
    p.e.dst = g.findOp(p.dst);
    if (p.e.src < 0)
      return fail("unknown op '" + p.src + "'");
    if (p.e.dst < 0)
      return fail("unknown op '" + p.dst + "'");
    if (p.defaultDelay)
      p.e.delay = g.ops[p.e.src].cycles;
    g.edges.push_back(p.e);
  }
  lineNo = 0;
  if (g.ops.empty()) {
    error = fileName + ": error: the graph has no ops";
    return false;
  }
  std::string v = g.validate();
  if (!v.empty()) {
    error = fileName + ": error: " + v;
    return false;
  }
  return true;
}

bool tawa::sched::parseGraphString(const std::string &text, Graph &g,
                                   std::string &error) {
  std::istringstream in(text);
  return parseGraph(in, "<string>", g, error);
}

//===----------------------------------------------------------------------===//
// MII bounds
//===----------------------------------------------------------------------===//

int tawa::sched::computeResMII(const Graph &g) {
  int mii = 1;
  for (size_t f = 0; f < g.units.size(); ++f) {
    long total = 0;
    for (const Op &o : g.ops)
      for (const UnitUse &u : o.uses)
        if (u.unit == static_cast<int>(f))
          total += static_cast<long>(u.last - u.first + 1) * u.count;
    int cap = g.units[f].capacity;
    mii = std::max<long>(mii, (total + cap - 1) / cap);
  }
  return mii;
}

bool tawa::sched::recurrencesAdmit(const Graph &g, int ii) {
  // Longest paths with weights delay - ii * distance (Floyd-Warshall): a
  // positive cycle means some recurrence needs more than ii cycles.
  const long neg = LONG_MIN / 4;
  size_t n = g.ops.size();
  std::vector<long> d(n * n, neg);
  for (const Edge &e : g.edges) {
    long w = g.effectiveDelay(e) - static_cast<long>(ii) * e.distance;
    long &cell = d[e.src * n + e.dst];
    cell = std::max(cell, w);
  }
  for (size_t k = 0; k < n; ++k)
    for (size_t i = 0; i < n; ++i) {
      if (d[i * n + k] == neg)
        continue;
      for (size_t j = 0; j < n; ++j)
        if (d[k * n + j] != neg)
          d[i * n + j] = std::max(d[i * n + j], d[i * n + k] + d[k * n + j]);
    }
  for (size_t i = 0; i < n; ++i)
    if (d[i * n + i] > 0)
      return false;
  return true;
}

int tawa::sched::computeRecMII(const Graph &g) {
  long sumDelay = 0;
  for (const Edge &e : g.edges)
    sumDelay += g.effectiveDelay(e);
  // A cycle's II requirement is at most its total delay, so sumDelay + 1 is
  // admitted unless a zero-distance cycle exists (then nothing is).
  int hi = static_cast<int>(std::max<long>(1, sumDelay + 1));
  if (!recurrencesAdmit(g, hi))
    return -1;
  int lo = 1;
  while (lo < hi) { // Admissibility is monotone in ii.
    int mid = lo + (hi - lo) / 2;
    if (recurrencesAdmit(g, mid))
      hi = mid;
    else
      lo = mid + 1;
  }
  return lo;
}
