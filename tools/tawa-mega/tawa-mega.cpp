//===- tawa-mega.cpp - plan, transform and simulate tGraphs ---------------===//
//
// `tawa-mega plan` builds the tGraph of one decode step from a Hugging Face
// config and runs the pass pipeline; `opt` runs passes on a printed graph
// (the lit tests' driver); `simulate` runs a graph on the CPU simulation of
// the runtime. docs/MEGAKERNEL.md describes all three.
//
//===----------------------------------------------------------------------===//

#include "tawa/Mega/DecodeBinding.h"
#include "tawa/Mega/DecodeGraph.h"
#include "tawa/Mega/DeviceTables.h"
#include "tawa/Mega/ModelConfig.h"
#include "tawa/Mega/Passes.h"
#include "tawa/Mega/Simulator.h"
#include "tawa/Mega/Stats.h"
#include "tawa/Mega/TextFormat.h"
#include "tawa/Mega/Verifier.h"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

using namespace tawa::mega;

namespace {

const char *kUsage = R"(usage: tawa-mega COMMAND [options]

Plans the SM-level task graph (tGraph) of a mega-kernel: one decode step of a
Qwen3 / Llama decoder split into one-SM tasks and the events between them
(docs/MEGAKERNEL.md).

Commands:
  plan        build the tGraph of a model config and run the pass pipeline
  opt         parse a printed tGraph, verify it, run passes on it, print it
  simulate    run a tGraph on the CPU simulation of the runtime, in random
              orders, and check it
  lower       lower a linear tGraph to the device tables the persistent
              kernel reads (task and event descriptors, worker queues)
  bind        list the buffers of a model's decode step and each
              operator's task-function parameters
  passes      list the passes

'tawa-mega COMMAND --help' describes a command's options.
Exit status: 0 success, 1 the input was rejected or a check failed, 2 usage
error.
)";

const char *kPlanUsage = R"(usage: tawa-mega plan --model CONFIG.json [options]

Builds the tiles-form tGraph of one decode step of the model in CONFIG.json
(a Hugging Face config: model_type qwen3 or llama) and runs the pipeline
tile-deps, prune-transitive, fuse-successors, fuse-predecessors, normalize,
linearize, verifying the graph after each pass. Prints the final graph unless
--stats, --print-after-all, --print-after or -o is given.

Options:
  --model FILE         the model's config.json (required)
  --batch N            requests decoded together, 1..4096 (default 1)
  --max-seq S          KV-cache capacity per request, 1..1048576 (default 4096)
  --sms N              SMs an operator's tiles fill, 1..1024 (default 132;
                       the runtime plans for its workers: 128 on an H100
                       with 4 scheduler CTAs)
  --no-prune           leave out prune-transitive
  --separate-merge     merge a split attention's chunks in an operator of
                       its own (default: the last chunk task of each row and
                       KV head to end merges them; its output box is
                       printed combine:)
  --alternate-tile-bytes B
                       batch 1: a linear whose tiles, were it split into
                       sms / 2 of them, would read at most B bytes of
                       weights each gets sms / 2 tiles, so that consecutive
                       operators run on alternate halves of the workers
                       (default 524288; 0: every linear fills the SMs)
  --shift-chained-tiles
                       batch 1: a linear that fills the SMs right after an
                       operator of sms / 2 tasks gets two tile widths: its
                       first sms / 2 tiles, which the round-robin queues
                       give the workers that operator leaves idle (their
                       rings prefetch the tiles' weights meanwhile), wider
                       by the 16-column steps the weight ring holds, the
                       others narrower by as much (default: one width)
  --row-tile R         rows of a linear tile, 1..64 (default 64): a wider
                       batch is split into row tiles, each streaming its
                       columns' weights (tiles of at most 8 rows get the
                       136 KB weight ring, wider ones 72 KB)
  --print-after-all    print the graph after building it and after each pass
  --print-after=PASS   print the graph after PASS ('build' for the built
                       graph); a comma-separated list or repeated
  --stats              print a table of counts after each stage
  -o FILE              write the final graph to FILE
)";

const char *kOptUsage =
    R"(usage: tawa-mega opt FILE [--pass=NAME[,NAME...]]... [-o FILE]

Parses the printed tGraph in FILE ('-' for standard input), verifies it, runs
the passes in the order given (verifying after each) and prints the result.
Without --pass it prints the graph back (print -> parse -> print is a fixed
point). 'tawa-mega passes' lists the passes.

Options:
  --pass=NAME[,NAME]   passes to run, in order; may be repeated
  -o FILE              write the result to FILE instead of standard output
)";

const char *kSimulateUsage =
    R"(usage: tawa-mega simulate (FILE | --model CONFIG.json [plan options]) [options]

Runs the tGraph in FILE, or the planned graph of CONFIG.json, on a CPU
simulation of the event-driven runtime in random seeded orders, and checks
that every event triggers exactly once, every task runs exactly once and only
after every task whose written box intersects a box it reads, that the graph
drains (else it reports the stuck tasks and events), and that each order
computes the same symbolic tile values as a reference topological order.

Options:
  --orders N           random orders to run, 1..100000 (default 8)
  --seed S             seed of the first order (default 1)
  --workers W          concurrent workers, 1..4096 (default 16)
  --mode MODE          auto (hybrid for a linear graph, jit otherwise), jit,
                       aot or hybrid (default auto)
  --all-stages         with --model: simulate the graph after every pass from
                       tile-deps on, and check that all give the same values
  --no-order-check     check values only, not the start order (to test the
                       data check)
  --batch, --max-seq, --sms, --no-prune, --separate-merge,
  --alternate-tile-bytes, --shift-chained-tiles, --row-tile
                       as for 'tawa-mega plan'
)";

const char *kLowerUsage =
    R"(usage: tawa-mega lower (FILE | --model CONFIG.json [plan options]) [options]

Lowers the linear tGraph in FILE, or the planned graph of CONFIG.json, to the
device tables of the persistent kernel (docs/MEGAKERNEL.md, "Device tables"):
16-byte task and event descriptors, AOT worker queues (round-robin in id
order), JIT classification, and each task's tile producers. Packs them,
reads the blob back (validating it) and prints a summary of what was read.

Options:
  --workers W          worker CTAs the AOT tasks are spread over, 1..4096
                       (default 128: 132 SMs minus 4 scheduler SMs)
  --no-producers       leave out the tile-producer lists (only the synthetic
                       tasks' dependency check reads them)
  --dump               print every event, task and queue instead of the summary
  -o FILE              write the packed tables to FILE
  --batch, --max-seq, --sms, --no-prune, --separate-merge,
  --alternate-tile-bytes, --shift-chained-tiles, --row-tile
                       as for 'tawa-mega plan'
)";

const char *kBindUsage =
    R"(usage: tawa-mega bind --model CONFIG.json [--batch N] [--max-seq S] [--sms N]
                      [--page-size P] [--kv-pages N]

Binds the decode graph of CONFIG.json to data (docs/MEGAKERNEL.md, "Binding"):
prints every buffer the step touches (weights under their Hugging Face names,
the graph's tensors, the step's inputs and outputs) with its type, shape and
kind, then each operator's task-function parameters (for linears the plan's
weight ring in bytes, ring=; for attention the shared memory below it,
low_smem=, and prefetch=1 when a worker may issue the tile's cache copies
before its inputs are ready: plans without just-in-time tasks). Fails, with
the reason, on shapes the task functions do not take.

The KV caches are paged (docs/MEGAKERNEL.md, "Paged KV cache"): each is a
pool of pages bf16[pages, kv_heads, P, head_dim], and the input block_table
(i32[batch, ceil(S / P)]) maps a row's page i to a pool page.

Options:
  --page-size P        cache positions per page, a power of two in
                       1..1048576 (default 64; P >= S, one page per row,
                       is a contiguous cache)
  --kv-pages N         pages in each cache pool, 0..1073741824 (default 0:
                       batch x ceil(S / P), every row at S)
  --batch, --max-seq, --sms, --separate-merge, --alternate-tile-bytes,
  --shift-chained-tiles, --row-tile
                       as for 'tawa-mega plan'
)";

[[noreturn]] void usageError(const std::string &message) {
  std::cerr << "tawa-mega: error: " << message << "\n";
  std::exit(2);
}

[[noreturn]] void fail(const std::string &message) {
  std::cerr << "tawa-mega: error: " << message << "\n";
  std::exit(1);
}

/// Options as (name, value) pairs: "--name=value", "--name value" for options
/// that take a value, flags alone; other words are positional.
struct Args {
  std::vector<std::pair<std::string, std::string>> options;
  std::vector<std::string> positional;
  bool help = false;
};

/// The plan options every command that plans a model takes (takePlanOption),
/// plus the command's own.
std::set<std::string> planValueOptions(std::set<std::string> own) {
  own.insert({"--model", "--batch", "--max-seq", "--sms",
              "--alternate-tile-bytes", "--row-tile"});
  return own;
}
std::set<std::string> planFlags(std::set<std::string> own, bool prune = true) {
  own.insert({"--separate-merge", "--shift-chained-tiles"});
  if (prune)
    own.insert("--no-prune");
  return own;
}

Args parseArgs(int argc, char **argv, int first,
               const std::set<std::string> &withValue,
               const std::set<std::string> &flags) {
  Args args;
  for (int i = first; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      args.help = true;
      continue;
    }
    if (a == "-" || a.empty() || a[0] != '-') {
      args.positional.push_back(a);
      continue;
    }
    std::string name = a, value;
    size_t eq = a.find('=');
    bool hasValue = eq != std::string::npos;
    if (hasValue) {
      name = a.substr(0, eq);
      value = a.substr(eq + 1);
    }
    if (flags.count(name)) {
      if (hasValue)
        usageError("option '" + name + "' takes no value");
      args.options.push_back({name, ""});
      continue;
    }
    if (!withValue.count(name))
      usageError("unknown option '" + name + "'");
    if (!hasValue) {
      if (i + 1 >= argc)
        usageError("option '" + name + "' needs a value");
      value = argv[++i];
    }
    args.options.push_back({name, value});
  }
  return args;
}

int64_t parseInt(const std::string &name, const std::string &text, int64_t lo,
                 int64_t hi) {
  errno = 0;
  char *end = nullptr;
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno || v < lo || v > hi)
    usageError("option '" + name + "' needs an integer in [" +
               std::to_string(lo) + ", " + std::to_string(hi) + "], got '" +
               text + "'");
  return v;
}

std::string readInput(const std::string &path) {
  std::stringstream buffer;
  if (path == "-") {
    buffer << std::cin.rdbuf();
    return buffer.str();
  }
  std::ifstream in(path);
  if (!in)
    fail("cannot open '" + path + "'");
  buffer << in.rdbuf();
  return buffer.str();
}

void writeOutput(const std::string &path, const std::string &text) {
  if (path.empty() || path == "-") {
    std::cout << text;
    return;
  }
  std::ofstream out(path);
  if (!out || !(out << text))
    fail("cannot write '" + path + "'");
}

void verifyOrFail(const TGraph &g, const std::string &context) {
  std::vector<std::string> errors = verifyGraph(g);
  if (errors.empty())
    return;
  for (const std::string &e : errors)
    std::cerr << "tawa-mega: error: " << context << e << "\n";
  std::exit(1);
}

void runPassOrFail(const PassInfo &pass, TGraph &g) {
  std::string error;
  if (!pass.run(g, error))
    fail(error);
  verifyOrFail(g, std::string("after ") + pass.name + ": ");
}

std::vector<std::string> splitCommas(const std::string &s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty())
      out.push_back(item);
  return out;
}

/// Plan options shared by `plan` and `simulate --model`.
struct PlanRequest {
  std::string model;
  PlanOptions options;
  bool prune = true;
};

bool takePlanOption(const std::string &name, const std::string &value,
                    PlanRequest &req) {
  if (name == "--model")
    req.model = value;
  else if (name == "--batch")
    req.options.batch = parseInt(name, value, 1, 4096);
  else if (name == "--max-seq")
    req.options.maxSeq = parseInt(name, value, 1, int64_t(1) << 20);
  else if (name == "--sms")
    req.options.sms = static_cast<int>(parseInt(name, value, 1, 1024));
  else if (name == "--no-prune")
    req.prune = false;
  else if (name == "--separate-merge")
    req.options.separateMerge = true;
  else if (name == "--shift-chained-tiles")
    req.options.shiftChainedTiles = true;
  else if (name == "--alternate-tile-bytes")
    req.options.alternateTileBytes = parseInt(name, value, 0, int64_t(1) << 40);
  else if (name == "--row-tile")
    req.options.rowTile = parseInt(name, value, 1, kRowTile);
  else
    return false;
  return true;
}

TGraph buildOrFail(const PlanRequest &req) {
  ModelConfig config;
  std::string error;
  if (!loadModelConfig(req.model, config, error))
    fail(error);
  if (!checkPlanOptions(req.options, error))
    usageError(error);
  TGraph g = buildDecodeGraph(config, req.options);
  verifyOrFail(g, "the built graph: ");
  return g;
}

int planCommand(int argc, char **argv) {
  Args args =
      parseArgs(argc, argv, 2, planValueOptions({"--print-after", "-o"}),
                planFlags({"--print-after-all", "--stats"}));
  if (args.help) {
    std::cout << kPlanUsage;
    return 0;
  }
  if (!args.positional.empty())
    usageError("plan takes no file argument (got '" + args.positional[0] +
               "'); use --model CONFIG.json");
  PlanRequest req;
  bool printAll = false, stats = false;
  std::set<std::string> printAfter;
  std::string outPath;
  for (auto &[name, value] : args.options) {
    if (takePlanOption(name, value, req))
      continue;
    if (name == "--print-after-all")
      printAll = true;
    else if (name == "--stats")
      stats = true;
    else if (name == "-o")
      outPath = value;
    else if (name == "--print-after")
      for (const std::string &p : splitCommas(value)) {
        if (p != "build" && !findPass(p))
          usageError("unknown pass '" + p +
                     "' in --print-after (see "
                     "'tawa-mega passes')");
        printAfter.insert(p);
      }
  }
  if (req.model.empty())
    usageError("plan needs --model CONFIG.json (try 'tawa-mega plan --help')");

  TGraph g = buildOrFail(req);
  auto stage = [&](const std::string &name) {
    if (printAll || printAfter.count(name)) {
      std::cout << "# ==== tawa-mega: after " << name << " ====\n";
      printGraph(g, std::cout);
    }
    if (stats)
      printStatsRow(std::cout, name, computeStats(g));
  };
  if (stats) {
    std::cout << "# " << g.name << " (" << g.sms << " SMs)\n";
    printStatsHeader(std::cout);
  }
  stage("build");
  for (const PassInfo *pass : planPipeline(req.prune)) {
    runPassOrFail(*pass, g);
    stage(pass->name);
  }
  if (!outPath.empty())
    writeOutput(outPath, printGraph(g));
  else if (!printAll && printAfter.empty() && !stats)
    printGraph(g, std::cout);
  return 0;
}

TGraph parseOrFail(const std::string &path) {
  std::string text = readInput(path);
  TGraph g;
  std::string error;
  if (!parseGraph(text, path == "-" ? "<stdin>" : path, g, error))
    fail(error);
  verifyOrFail(g, (path == "-" ? std::string("<stdin>") : path) + ": ");
  return g;
}

int optCommand(int argc, char **argv) {
  Args args = parseArgs(argc, argv, 2, {"--pass", "-o"}, {});
  if (args.help) {
    std::cout << kOptUsage;
    return 0;
  }
  if (args.positional.size() != 1)
    usageError("opt takes one graph file ('-' for standard input), got " +
               std::to_string(args.positional.size()));
  std::vector<const PassInfo *> passes;
  std::string outPath;
  for (auto &[name, value] : args.options) {
    if (name == "-o") {
      outPath = value;
      continue;
    }
    std::vector<std::string> names = splitCommas(value);
    if (names.empty())
      usageError("option '--pass' needs a pass name");
    for (const std::string &p : names) {
      const PassInfo *pass = findPass(p);
      if (!pass)
        usageError("unknown pass '" + p + "' (see 'tawa-mega passes')");
      passes.push_back(pass);
    }
  }
  TGraph g = parseOrFail(args.positional[0]);
  for (const PassInfo *pass : passes)
    runPassOrFail(*pass, g);
  writeOutput(outPath, printGraph(g));
  return 0;
}

int simulateCommand(int argc, char **argv) {
  Args args =
      parseArgs(argc, argv, 2,
                planValueOptions({"--orders", "--seed", "--workers", "--mode"}),
                planFlags({"--all-stages", "--no-order-check"}));
  if (args.help) {
    std::cout << kSimulateUsage;
    return 0;
  }
  PlanRequest req;
  SimOptions sim;
  bool allStages = false;
  for (auto &[name, value] : args.options) {
    if (takePlanOption(name, value, req))
      continue;
    if (name == "--orders")
      sim.orders = static_cast<unsigned>(parseInt(name, value, 1, 100000));
    else if (name == "--seed")
      sim.seed =
          static_cast<uint64_t>(parseInt(name, value, 0, int64_t(1) << 62));
    else if (name == "--workers")
      sim.workers = static_cast<unsigned>(parseInt(name, value, 1, 4096));
    else if (name == "--mode") {
      if (!parseSimMode(value, sim.mode))
        usageError("unknown mode '" + value + "' (auto, jit, aot or hybrid)");
    } else if (name == "--all-stages")
      allStages = true;
    else if (name == "--no-order-check")
      sim.checkProducerOrder = false;
  }
  bool fromModel = !req.model.empty();
  if (fromModel == !args.positional.empty() || args.positional.size() > 1)
    usageError("simulate takes one graph file or --model CONFIG.json "
               "(try 'tawa-mega simulate --help')");
  if (allStages && !fromModel)
    usageError("--all-stages needs --model");

  auto report = [&](const TGraph &g, const std::string &stage,
                    const SimOptions &options) {
    SimResult r = simulate(g, options);
    if (!r.ok)
      fail(stage + ": " + r.message);
    char hex[32];
    std::snprintf(hex, sizeof(hex), "%016llx",
                  static_cast<unsigned long long>(r.digest));
    std::cout << stage << ": " << r.message << "; digest " << hex << "\n";
    return r.digest;
  };

  if (!fromModel) {
    TGraph g = parseOrFail(args.positional[0]);
    report(g, g.name + " (" + formName(g.form) + ")", sim);
    return 0;
  }
  TGraph g = buildOrFail(req);
  uint64_t first = 0;
  bool haveFirst = false;
  std::vector<const PassInfo *> pipeline = planPipeline(req.prune);
  for (size_t i = 0; i < pipeline.size(); ++i) {
    runPassOrFail(*pipeline[i], g);
    if (!allStages && i + 1 != pipeline.size())
      continue;
    // Queues by id need the linear form; earlier stages run just in time.
    SimOptions stageSim = sim;
    if (g.form != Form::Linear)
      stageSim.mode = SimMode::Jit;
    uint64_t digest =
        report(g, g.name + " after " + pipeline[i]->name, stageSim);
    if (!haveFirst) {
      first = digest;
      haveFirst = true;
    } else if (digest != first) {
      fail("the graph after " + std::string(pipeline[i]->name) +
           " computes different values than after " + pipeline[0]->name);
    }
  }
  return 0;
}

/// Counts a reader of the tables cares about: sizes, the spread of the AOT
/// queues, and the longest dependency chain.
void printTablesSummary(const DeviceTables &t, std::ostream &os) {
  const TablesHeader &h = t.header;
  os << "tables tasks=" << h.numTasks << " events=" << h.numEvents
     << " ops=" << h.numOps << " workers=" << h.numWorkers
     << " aot=" << h.numAotTasks << " jit=" << h.numJitTasks
     << " jit-events=" << h.numJitEvents
     << " producer-edges=" << h.numProducerEdges << " bytes=" << h.totalBytes
     << "\n";
  uint32_t lo = UINT32_MAX, hi = 0, empty = 0;
  for (uint32_t w = 0; w < h.numWorkers; ++w) {
    uint32_t n = t.aotOffsets[w + 1] - t.aotOffsets[w];
    lo = std::min(lo, n);
    hi = std::max(hi, n);
  }
  for (const TaskDesc &d : t.tasks)
    empty += d.kind == kEmptyTaskKind ? 1 : 0;
  os << "aot-queue-length min=" << lo << " max=" << hi << "\n";
  os << "empty-tasks=" << empty
     << " critical-path-tasks=" << criticalPathTasks(t) << "\n";
}

int lowerCommand(int argc, char **argv) {
  Args args = parseArgs(argc, argv, 2, planValueOptions({"--workers", "-o"}),
                        planFlags({"--no-producers", "--dump"}));
  if (args.help) {
    std::cout << kLowerUsage;
    return 0;
  }
  PlanRequest req;
  LoweringOptions lowering;
  bool dump = false;
  std::string outPath;
  for (auto &[name, value] : args.options) {
    if (takePlanOption(name, value, req))
      continue;
    if (name == "--workers")
      lowering.workers = static_cast<unsigned>(parseInt(name, value, 1, 4096));
    else if (name == "--no-producers")
      lowering.producers = false;
    else if (name == "--dump")
      dump = true;
    else if (name == "-o")
      outPath = value;
  }
  bool fromModel = !req.model.empty();
  if (fromModel == !args.positional.empty() || args.positional.size() > 1)
    usageError("lower takes one graph file or --model CONFIG.json "
               "(try 'tawa-mega lower --help')");
  TGraph g;
  if (fromModel) {
    g = buildOrFail(req);
    for (const PassInfo *pass : planPipeline(req.prune))
      runPassOrFail(*pass, g);
  } else {
    g = parseOrFail(args.positional[0]);
  }
  DeviceTables tables;
  std::string error;
  if (!lowerToDeviceTables(g, lowering, tables, error))
    fail(error);
  std::vector<uint8_t> blob = packTables(tables);
  // Print what the kernel would read, not what was built: the round trip
  // through the blob is checked on every run.
  DeviceTables read;
  if (!unpackTables(blob.data(), blob.size(), read, error))
    fail("the packed tables do not read back: " + error);
  if (!outPath.empty()) {
    std::ofstream out(outPath, std::ios::binary);
    if (!out || !out.write(reinterpret_cast<const char *>(blob.data()),
                           static_cast<std::streamsize>(blob.size())))
      fail("cannot write '" + outPath + "'");
  }
  if (dump)
    printTables(read, std::cout);
  else
    printTablesSummary(read, std::cout);
  return 0;
}

int bindCommand(int argc, char **argv) {
  Args args =
      parseArgs(argc, argv, 2, planValueOptions({"--page-size", "--kv-pages"}),
                planFlags({}, /*prune=*/false));
  if (args.help) {
    std::cout << kBindUsage;
    return 0;
  }
  if (!args.positional.empty())
    usageError("bind takes no file argument (got '" + args.positional[0] +
               "'); use --model CONFIG.json");
  PlanRequest req;
  for (auto &[name, value] : args.options) {
    if (name == "--page-size")
      req.options.pageSize = parseInt(name, value, 1, int64_t(1) << 20);
    else if (name == "--kv-pages")
      req.options.kvPages = parseInt(name, value, 0, int64_t(1) << 30);
    else
      takePlanOption(name, value, req);
  }
  if (req.model.empty())
    usageError("bind needs --model CONFIG.json (try 'tawa-mega bind --help')");
  ModelConfig config;
  std::string error;
  if (!loadModelConfig(req.model, config, error))
    fail(error);
  TGraph g = buildOrFail(req);
  DecodeBinding binding;
  if (!bindDecodeGraph(g, config, req.options, binding, error))
    fail(error);
  printBinding(g, binding, std::cout);
  return 0;
}

int passesCommand(int argc, char **argv) {
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::cout << "usage: tawa-mega passes\n\nLists the passes 'tawa-mega "
                   "opt --pass=' runs, in pipeline order.\n";
      return 0;
    }
    usageError("passes takes no arguments (got '" + a + "')");
  }
  for (const PassInfo &p : allPasses())
    std::printf("  %-18s %s\n", p.name, p.summary);
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 2)
    usageError("no command (try 'tawa-mega --help')");
  std::string command = argv[1];
  if (command == "--help" || command == "-h" || command == "help") {
    std::cout << kUsage;
    return 0;
  }
  if (command == "plan")
    return planCommand(argc, argv);
  if (command == "opt")
    return optCommand(argc, argv);
  if (command == "simulate")
    return simulateCommand(argc, argv);
  if (command == "lower")
    return lowerCommand(argc, argv);
  if (command == "bind")
    return bindCommand(argc, argv);
  if (command == "passes")
    return passesCommand(argc, argv);
  usageError("unknown command '" + command + "' (try 'tawa-mega --help')");
}
