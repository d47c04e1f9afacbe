//===- tawa-sched.cpp - Optimal SWP + WS schedules for a dependence graph -===//

#include "tawa/Scheduler/Scheduler.h"

#ifdef TAWA_SCHED_READS_TTIR
#include "tawa/Driver/LoopGraphExport.h"
#endif

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <iterator>
#include <sstream>

using namespace tawa::sched;

static const char *kHelp = R"(usage: tawa-sched [options] GRAPH|KERNEL.ttir

Finds the minimal-II software pipeline (modulo schedule) of a loop dependence
graph together with a warp-group assignment that realizes it (Twill: optimal
modulo scheduling with CBC, then the joint SWP+WS constraints with Z3, searching
II and L as in Algorithm 1). GRAPH is a file or '-' for stdin.

A TTIR kernel (a .ttir or .mlir file, or text with a 'module' or 'tt.func'
line) is read with tawa's compiler (where tawa-sched is built with it,
TAWA_ENABLE_COMPILER; otherwise it is an error): its main loop (the
innermost loop with a tt.dot) is cut into TMA loads, products and CUDA-core
blocks with H100 costs after tawac's program passes, the graph that
'tawac --schedule=optimal' solves, and that graph is solved, by default
normalized as tawac does (--normalize 64).

Options:
  --svg FILE        write an SVG timeline of the steady state (units and
                    warp groups)
  --modulo-only     stop after the modulo-scheduling ILP (no warp assignment)
  --timeout SECONDS time limit for the whole search (default 120); running
                    out is reported as a timeout, never as infeasible
  --normalize U     first rescale all cycle counts with the cost-normalization
                    ILP (sum of distinct normalized costs <= U)
  --max-ii N        give up (infeasible) above this II
  --warps N         override the graph's number of warp groups
  --no-cross-warp   forbid data edges between warp groups (except out of the
                    variable-latency group); same as 'nocrosswarp' in GRAPH
  --no-spill-block  receiving spilled registers does not count as blocking
  --print-graph     print the graph (as read or extracted, before any
                    normalization) and stop
  -h, --help        this text

Graph format (one statement per line, '#' starts a comment):
  machine h100|b200        load units TC TMA EXP ALU (b200: + TMEM) and the
                           model's warps, register and shared-memory limits
  unit NAME CAP            functional unit with CAP instances
  op NAME CYCLES [UNIT[:FIRST-LAST]]... [var] [stream] [regs=N] [smem=N]
                 [spill=N] an op, the units it occupies (all its cycles, or
                           cycles FIRST..LAST), variable latency, streaming
                           (zero delay on its out-edges), registers per thread
                           of its warp group, shared memory (KiB), cycles to
                           hand its result to another warp group
  edge SRC DST [DELAY DISTANCE] [blocking]
                           dependence (default delay = cycles(SRC), distance 0);
                           blocking: DST waits with a blocking sync
  warps N                  warp groups (group 0 holds all variable-latency ops
                           when there are any)
  reglimit N | regcap N | smemcap N
                           per-group register limit, SM register file, SM
                           shared memory (0 = unlimited)
  nocrosswarp              ablation: no cross-warp communication

Output: 'II=<n> L=<n>' on the first line, then the modulo schedule, the warp
assignment and the solve times. Exit status: 0 scheduled, 1 usage or parse
error, 2 infeasible, 3 timeout, 4 solver error.
)";

/// Whether `text` is an MLIR module (TTIR) rather than a graph: graph
/// statements never begin with 'module' or 'tt.func'.
static bool looksLikeTtir(const std::string &name, const std::string &text) {
  auto endsWith = [&](const char *ext) {
    std::string e = ext;
    return name.size() >= e.size() &&
           name.compare(name.size() - e.size(), e.size(), e) == 0;
  };
  if (endsWith(".ttir") || endsWith(".mlir"))
    return true;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    std::string first;
    words >> first;
    if (first == "module" || first.rfind("tt.func", 0) == 0)
      return true;
  }
  return false;
}

static int usageError(const std::string &msg) {
  std::cerr << "tawa-sched: error: " << msg
            << "\n(run 'tawa-sched --help' for usage)\n";
  return 1;
}

int main(int argc, char **argv) {
  std::string input, svgPath;
  SearchOptions opts;
  long normalizeU = 0;
  int warpsOverride = 0;
  bool noCross = false, printGraph = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&](const char *what) -> const char * {
      if (i + 1 >= argc) {
        usageError(a + " needs " + what);
        std::exit(1);
      }
      return argv[++i];
    };
    auto number = [&](const char *what) -> double {
      const char *s = next(what);
      char *end = nullptr;
      double v = std::strtod(s, &end);
      if (*end || v <= 0) {
        usageError(a + " needs a positive " + what + ", got '" + s + "'");
        std::exit(1);
      }
      return v;
    };
    if (a == "-h" || a == "--help") {
      std::cout << kHelp;
      return 0;
    } else if (a == "--svg") {
      svgPath = next("a file name");
    } else if (a == "--modulo-only") {
      opts.moduloOnly = true;
    } else if (a == "--timeout") {
      opts.timeoutSeconds = number("number of seconds");
    } else if (a == "--normalize") {
      normalizeU = static_cast<long>(number("integer U"));
    } else if (a == "--max-ii") {
      opts.maxII = static_cast<int>(number("integer"));
    } else if (a == "--warps") {
      warpsOverride = static_cast<int>(number("integer"));
    } else if (a == "--no-cross-warp") {
      noCross = true;
    } else if (a == "--print-graph") {
      printGraph = true;
    } else if (a == "--no-spill-block") {
      opts.joint.spillsBlock = false;
    } else if (a.size() > 1 && a[0] == '-') {
      return usageError("unknown option '" + a + "'");
    } else if (input.empty()) {
      input = a;
    } else {
      return usageError("more than one input graph");
    }
  }
  if (input.empty())
    return usageError("no input graph");

  std::string text;
  if (input == "-") {
    text.assign(std::istreambuf_iterator<char>(std::cin), {});
  } else {
    std::ifstream in(input);
    if (!in)
      return usageError("cannot open '" + input + "'");
    text.assign(std::istreambuf_iterator<char>(in), {});
  }
  std::string graphName = input == "-" ? "<stdin>" : input;
  bool fromTtir = looksLikeTtir(input, text);
  if (fromTtir) {
#ifdef TAWA_SCHED_READS_TTIR
    std::string graphText;
    if (!tawa::exportLoopGraph(text, graphName, graphText))
      return 1;
    text = std::move(graphText);
    graphName += " (its main loop's graph)";
    if (!normalizeU)
      normalizeU = 64; // what -tawa-optimal-schedule does
#else
    return usageError(
        "'" + graphName +
        "' is TTIR, and this tawa-sched was built without the "
        "compiler (TAWA_ENABLE_COMPILER=OFF): give it a graph, "
        "e.g. from 'tawa-opt KERNEL.ttir -tawa-print-loop-graph'");
#endif
  }
  if (printGraph) {
    std::cout << text;
    return 0;
  }

  Graph g;
  std::string err;
  std::istringstream graphIn(text);
  if (!parseGraph(graphIn, graphName, g, err)) {
    std::cerr << err << "\n";
    return 1;
  }
  if (warpsOverride)
    g.numWarps = warpsOverride;
  if (noCross)
    g.noCrossWarp = true;

  std::ostringstream log; // Everything after the first line.
  if (fromTtir) {
    // The extracted graph's first line says which loop it is.
    std::string head = text.substr(0, text.find('\n'));
    if (head.rfind("# ", 0) == 0)
      head = head.substr(2);
    log << "graph: " << head << " (--print-graph prints it)\n";
  }
  // The graph in its own units, to read a normalized II in them.
  Graph unnormalized;
  if (normalizeU) {
    unnormalized = g;
    NormalizeResult nr = normalizeGraph(g, normalizeU, opts.timeoutSeconds);
    if (nr.status != SolveStatus::Optimal) {
      std::cout << "no schedule: cost normalization " << toString(nr.status)
                << "\n";
      return nr.status == SolveStatus::Timeout ? 3 : 4;
    }
    log << "cost normalization: U=" << normalizeU
        << " F=" << nr.distortion << " (" << std::fixed
        << std::setprecision(3) << nr.seconds << " s)\n";
  }

  SearchResult r = search(g, opts);
  if (r.status != SolveStatus::Optimal) {
    std::cout << "no schedule: " << toString(r.status) << ": " << r.message
              << "\n";
  } else {
    std::cout << "II=" << r.schedule.ii << " L=" << r.schedule.length << "\n";
  }
  std::cout << log.str();
  std::cout << "bounds: ResMII=" << r.resMII << " RecMII=" << r.recMII << "\n";
  if (normalizeU && r.status == SolveStatus::Optimal) {
    int rawBound =
        std::max({1, computeResMII(unnormalized), computeRecMII(unnormalized)});
    int bound = std::max({1, r.resMII, r.recMII});
    std::cout << "before normalization: bound max(ResMII, RecMII)=" << rawBound
              << ", II ~ " << iiBeforeNormalization(unnormalized, r)
              << " (II / bound = " << std::fixed << std::setprecision(3)
              << double(r.schedule.ii) / bound << ")\n";
    std::cout.unsetf(std::ios::fixed);
  }
  const size_t n = g.ops.size();
  if (r.status == SolveStatus::Optimal) {
    const ModuloSchedule &s = r.schedule;
    std::cout << "modulo schedule (" << s.stages()
              << " stages; row = start mod II):\n";
    size_t w = 2;
    for (const Op &o : g.ops)
      w = std::max(w, o.name.size());
    for (size_t v = 0; v < n; ++v) {
      std::cout << "  " << std::left << std::setw(static_cast<int>(w))
                << g.ops[v].name << std::right << " start=" << std::setw(3)
                << s.start[v] << " stage=" << s.start[v] / s.ii
                << " row=" << std::setw(3) << s.start[v] % s.ii
                << " cycles=" << g.ops[v].cycles;
      if (!r.warp.empty())
        std::cout << " wg=" << r.warp[v];
      std::cout << "\n";
    }
    if (!r.warp.empty()) {
      std::cout << "warp assignment"
                << (g.hasVarLatency() ? " (WG0 = variable-latency group)" : "")
                << ":\n";
      for (int wg = 0; wg < g.numWarps; ++wg) {
        std::cout << "  WG" << wg << ":";
        for (size_t v = 0; v < n; ++v)
          if (r.warp[v] == wg)
            std::cout << " " << g.ops[v].name;
        std::cout << "\n";
      }
    } else {
      std::cout << "warp assignment: not computed (--modulo-only)\n";
    }
  }
  std::cout << "solve times:\n" << std::fixed << std::setprecision(3);
  for (const Attempt &a : r.attempts) {
    if (a.kind == Attempt::ModuloILP)
      std::cout << "  ILP II=" << a.ii << ": " << toString(a.status);
    else
      std::cout << "  SMT II=" << a.ii << " L=" << a.length << ": "
                << (a.status == SolveStatus::Feasible
                        ? "sat"
                        : a.status == SolveStatus::Infeasible
                              ? "unsat"
                              : toString(a.status));
    if (a.kind == Attempt::ModuloILP && a.status == SolveStatus::Optimal)
      std::cout << " L=" << a.length;
    std::cout << " " << a.seconds << " s\n";
  }
  std::cout << "  total " << r.seconds << " s\n";

  if (!svgPath.empty() && r.status == SolveStatus::Optimal) {
    std::ofstream svg(svgPath);
    if (!svg) {
      std::cerr << "tawa-sched: error: cannot write '" << svgPath << "'\n";
      return 1;
    }
    svg << renderSvg(g, r.schedule, r.warp);
    std::cout << "svg: " << svgPath << "\n";
  }
  switch (r.status) {
  case SolveStatus::Optimal:
    return 0;
  case SolveStatus::Infeasible:
    return 2;
  case SolveStatus::Timeout:
    return 3;
  default:
    return 4;
  }
}
