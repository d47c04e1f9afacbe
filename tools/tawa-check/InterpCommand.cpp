//===- InterpCommand.cpp - tawa-check interp ------------------------------===//
//
// Runs a kernel's TTIR and its warp-specialized IR on the CPU interpreter
// (lib/Interpreter) on the same random inputs and compares the results;
// reports deadlocks and aref protocol violations with the partitions'
// positions.
//
//===----------------------------------------------------------------------===//

#include "InterpCommand.h"

#include "tawa/InitAll.h"
#include "tawa/Interpreter/DifferentialCheck.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

using namespace mlir;
using namespace tawa::interp;

namespace {

using Pair = tawa::WarpSpecializationOptions::PairPrograms;

const char *kInterpUsage = R"(usage: tawa-check interp KERNEL.ttir [options]

Runs the kernel (Triton TTIR) and the warp-specialized IR the compiler makes
of it (tawac --emit=ws-ir) on the CPU, on the same random inputs over the
whole grid, and compares every buffer bit for bit. The partitions of the
warp-specialized kernel run as tasks interleaved by a seeded random
scheduler; arefs block them with the semantics of Fig. 4 of the Tawa paper
(per slot E/F flags, slot k mod D). Checks: no deadlock (every unfinished
partition blocked: reported with each partition's op, source line, aref,
position k and slot), no consumed of a slot that is not borrowed, no read
of a tile after its slot was consumed, no consumed while a tawa.dot_async
that reads the slot is in flight, no read of a tawa.dot_async result before
a tawa.dot_wait retired it (products in flight form a FIFO; pendings=P
retires all but the newest P), and no product in flight, borrowed slot or
untaken put when a program ends. Ping-pong consumers take turns through
tawa.pingpong.wait/arrive. A consumer partition of two (or more)
cooperative warp groups runs as one task per group, each taking and
releasing every slot; two groups take turns issuing the products marked
tawa.issue_turn through named barriers (a group blocks until the other
hands the turn over; a barrier arrived at twice by one group in a phase, a
group issuing outside its turn, or a barrier left half-arrived at the end
is reported). A kernel the compiler makes persistent runs on
fewer CTAs than programs (--ctas), so the original must not have two
programs write the same element (checked).

Options:
  --aref-depth D       aref ring depth D (0: the compiler chooses; default)
  --mma-depth P        products in flight P (-1: the compiler chooses;
                       default)
  --consumer-groups N  consumer warp groups (0: the compiler chooses;
                       default)
  --pingpong           two ping-pong consumer partitions on alternate tiles
                       (two consumer groups; needs a tile loop)
  --no-pingpong        never ping-pong (the compiler otherwise chooses it
                       where a tile's accumulators fit one group)
  --no-coarse-pipeline do not pipeline attention-shaped loops at coarse
                       grain (tawac --coarse-pipeline=false)
  --no-issue-turns     cooperative groups do not take turns issuing their
                       products (tawac --issue-turns=false)
  --masked-loop-mode M guard (default) or split: how a loop whose mask keeps
                       every element on a prefix of its iterations drops
                       the mask there (tawac --masked-loop-mode)
  --turn-variant NAME  run the cooperative groups' issue turns with a
                       deliberately broken protocol (a seeded bug the check
                       must catch): turn-no-first-pass, turn-no-last-take,
                       turn-no-hand-over, turn-last-take-by-group-1,
                       turn-wrong-barrier, turn-early-hand-over,
                       turn-double-first-pass
  --schedule S         where an automatic MMA depth comes from: heuristic
                       (default) or optimal (Twill's schedule)
  --no-persistent      keep one program per tile (the compiler otherwise
                       makes such a kernel persistent)
  --pair-programs      run programs of adjacent x in pairs that share the
                       tiles both load (tawac --pair-programs=x; persistent)
  --pair-programs-y    the same along y (tawac --pair-programs=y)
  --no-pair-programs   never pair (the compiler otherwise pairs along y
                       where the pair's products fuse into one wgmma)
  --tile-swizzle N     walk a kernel's own row-major tile loop N tile rows
                       at a time (tawac --tile-swizzle; default 8, 1 keeps
                       the kernel's order; applies to --sweep too)
  --ctas N             CTAs that run a persistent compiled kernel over the
                       grid's programs (default: half of them, rounded up)
  --sweep              instead of one configuration, every one the compiler
                       accepts: D in 1..4, P in 0..2 with P < D, N in 1..2,
                       persistent or not, and ping-pong for N = 2
                       (configurations it rejects are listed as such; with
                       P given, --schedule has nothing to choose)
  --ws-ir FILE         check this warp-specialized IR (same kernel name and
                       signature) instead of compiling KERNEL.ttir
  --schedules N        run the warp-specialized kernel under N schedules,
                       seeds S, S+1, ... (default 3)
  --seed S             first schedule seed (default 1)
  --data-seed S        seed of the random inputs (default 1)
  --shape NAME=VALUE   an argument's value (repeatable): an integer
                       expression for an integer (M=144, N=2*M+16), a number
                       for a float, DIM,DIM,... for a tensor descriptor's
                       global shape (a_desc=M,K), a size, [v0,v1,...] or
                       ptrs:TYPE[N0,N1,...] (a table of pointers to new
                       buffers) for a pointer. Defaults: M=144 N=208 K=304
                       L=seq_len=176 G=2, other integers 64, floats 0.125,
                       descriptors 1.5 blocks per dimension, pointers 1024
                       elements; inputs uniform in [-1, 1)
  --grid X[,Y[,Z]]     the grid (default: along each axis the kernel's
                       program id reads, the programs before the first one
                       that stores nothing)
  --max-steps N        give up after N operations per run (default 5e8)
  -h, --help           this text

Output: the kernel, its arguments and grid, what the original wrote, then
one line per configuration: 'match', or the first mismatch (buffer, index,
both values), the deadlock with every partition's position, the protocol
violation, a run-time error, or the compiler's diagnostic for a
configuration it rejects. 'match' ends with a line saying what was compared.
Exit status: 0 every checked configuration matched; 1 a mismatch,
deadlock, violation or error; 2 usage error; 3 the compiler rejected the
kernel or every configuration.
)";

[[noreturn]] void usageError(const std::string &message) {
  std::fprintf(stderr, "tawa-check: error: %s\n", message.c_str());
  std::exit(2);
}

int64_t parseInteger(const std::string &option, const std::string &text,
                     int64_t lo, int64_t hi) {
  char *end = nullptr;
  long long value = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end || value < lo || value > hi)
    usageError("option '" + option + "' needs an integer in [" +
               std::to_string(lo) + ", " + std::to_string(hi) + "], got '" +
               text + "'");
  return value;
}

Grid parseGrid(const std::string &text) {
  std::vector<int64_t> dims;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    std::string part = text.substr(
        start, comma == std::string::npos ? std::string::npos : comma - start);
    dims.push_back(parseInteger("--grid", part, 1, 1 << 20));
    if (comma == std::string::npos)
      break;
    start = comma + 1;
  }
  if (dims.size() > 3)
    usageError("option '--grid' takes at most three extents, got '" + text +
               "'");
  Grid g;
  g.x = dims[0];
  if (dims.size() > 1)
    g.y = dims[1];
  if (dims.size() > 2)
    g.z = dims[2];
  return g;
}

std::string configName(const tawa::WarpSpecializationOptions &c) {
  auto show = [](int64_t v, int64_t unset) {
    return v == unset ? std::string("auto") : std::to_string(v);
  };
  return "D=" + show(c.arefDepth, 0) + " P=" + show(c.mmaDepth, -1) +
         " C=" + show(c.consumerGroups, 0) +
         (c.pingpong == 1 ? " pingpong" : "") +
         (c.persistent ? "" : " non-persistent") +
         (c.pairPrograms == Pair::X     ? " paired"
          : c.pairPrograms == Pair::Y   ? " paired-y"
          : c.pairPrograms == Pair::Off ? " unpaired"
                                        : "") +
         (c.tileSwizzle != tawa::WarpSpecializationOptions().tileSwizzle
              ? " tile-swizzle=" + std::to_string(c.tileSwizzle)
              : "") +
         (c.schedule == tawa::WarpSpecializationOptions::Schedule::Optimal
              ? " optimal"
              : "") +
         (c.coarsePipeline ? "" : " no-coarse") +
         (c.issueTurns ? "" : " no-turns") +
         (c.maskedLoopMode == tawa::WarpSpecializationOptions().maskedLoopMode
              ? ""
              : " masked-loop-mode=" + c.maskedLoopMode);
}

/// Every configuration the compiler accepts (and some it rejects, which the
/// sweep lists as such).
std::vector<tawa::WarpSpecializationOptions>
sweepConfigurations(int64_t tileSwizzle) {
  std::vector<tawa::WarpSpecializationOptions> configs;
  for (bool persistent : {true, false})
    for (int64_t d = 1; d <= 4; ++d)
      for (int64_t p = 0; p <= 2 && p < d; ++p)
        for (int64_t c = 1; c <= 2; ++c)
          for (bool pingpong : {false, true}) {
            // Ping-pong takes two consumer groups and a tile loop.
            if (pingpong && (c != 2 || !persistent))
              continue;
            tawa::WarpSpecializationOptions cfg;
            cfg.arefDepth = d;
            cfg.mmaDepth = p;
            cfg.consumerGroups = c;
            cfg.persistent = persistent;
            cfg.pingpong = pingpong ? 1 : 0;
            cfg.tileSwizzle = tileSwizzle;
            configs.push_back(cfg);
          }
  return configs;
}

std::string join(const std::vector<std::string> &items) {
  std::string s;
  for (const std::string &i : items)
    s += (s.empty() ? "" : ", ") + i;
  return s;
}

OwningOpRef<ModuleOp> parseFile(const std::string &path, MLIRContext &context) {
  std::string error;
  auto file = llvm::MemoryBuffer::getFileOrSTDIN(path);
  if (!file) {
    std::fprintf(stderr, "tawa-check: error: cannot read '%s': %s\n",
                 path.c_str(), file.getError().message().c_str());
    return nullptr;
  }
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(*file), llvm::SMLoc());
  SourceMgrDiagnosticHandler handler(sourceMgr, &context);
  return parseSourceFile<ModuleOp>(sourceMgr, ParserConfig(&context));
}

/// Prints one configuration's verdict; returns it for the summary.
void printVerdict(const std::string &label, const Verdict &v,
                  unsigned schedules) {
  switch (v.status) {
  case Verdict::Status::Match:
    std::printf("%s: match (%u schedule%s%s%s)\n", label.c_str(), schedules,
                schedules == 1 ? "" : "s", v.launch.empty() ? "" : "; ",
                v.launch.c_str());
    return;
  case Verdict::Status::Rejected:
    std::printf("%s: rejected by the compiler: %s\n", label.c_str(),
                v.message.c_str());
    for (const std::string &d : v.details)
      std::printf("  %s\n", d.c_str());
    return;
  case Verdict::Status::Mismatch:
    std::printf("%s: MISMATCH under schedule seed %llu\n  %s\n", label.c_str(),
                static_cast<unsigned long long>(v.seed), v.message.c_str());
    break;
  case Verdict::Status::Violation:
    std::printf("%s: %s under schedule seed %llu\n  %s\n", label.c_str(),
                v.kind == "deadlock"
                    ? "DEADLOCK"
                    : ("PROTOCOL VIOLATION (" + v.kind + ")").c_str(),
                static_cast<unsigned long long>(v.seed), v.message.c_str());
    break;
  case Verdict::Status::Error:
    std::printf("%s: ERROR (%s) under schedule seed %llu\n  %s\n",
                label.c_str(), v.kind.c_str(),
                static_cast<unsigned long long>(v.seed), v.message.c_str());
    break;
  }
  for (const std::string &d : v.details)
    std::printf("    %s\n", d.c_str());
}

} // namespace

int interpCommand(int argc, char **argv) {
  std::string input, wsIrPath;
  tawa::WarpSpecializationOptions config;
  bool configGiven = false, sweep = false;
  DifferentialOptions options;
  options.schedules = 3;
  for (int i = 0; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc)
        usageError("option '" + arg + "' needs a value");
      return argv[++i];
    };
    if (arg == "-h" || arg == "--help") {
      std::fputs(kInterpUsage, stdout);
      return 0;
    } else if (arg == "--aref-depth") {
      config.arefDepth = parseInteger(arg, value(), 0, 16);
      configGiven = true;
    } else if (arg == "--mma-depth") {
      config.mmaDepth = parseInteger(arg, value(), -1, 15);
      configGiven = true;
    } else if (arg == "--consumer-groups") {
      config.consumerGroups = parseInteger(arg, value(), 0, 3);
      configGiven = true;
    } else if (arg == "--pingpong") {
      config.pingpong = 1;
      configGiven = true;
    } else if (arg == "--no-pingpong") {
      config.pingpong = 0;
      configGiven = true;
    } else if (arg == "--schedule") {
      std::string which = value();
      if (which == "optimal")
        config.schedule = tawa::WarpSpecializationOptions::Schedule::Optimal;
      else if (which != "heuristic")
        usageError("option '--schedule' takes 'heuristic' or 'optimal', got '" +
                   which + "'");
      configGiven = true;
    } else if (arg == "--no-coarse-pipeline") {
      config.coarsePipeline = false;
      configGiven = true;
    } else if (arg == "--no-issue-turns") {
      config.issueTurns = false;
      configGiven = true;
    } else if (arg == "--masked-loop-mode") {
      std::string which = value();
      if (which != "guard" && which != "split")
        usageError("option '--masked-loop-mode' takes 'guard' or 'split', "
                   "got '" +
                   which + "'");
      config.maskedLoopMode = which;
      configGiven = true;
    } else if (arg == "--turn-variant") {
      std::string name = value();
      std::optional<tawa::protocol::IssueTurnVariant> v =
          tawa::protocol::parseIssueTurnVariant(name);
      if (!v)
        usageError("unknown --turn-variant '" + name + "'");
      options.turnVariant = *v;
    } else if (arg == "--no-persistent") {
      config.persistent = false;
      configGiven = true;
    } else if (arg == "--pair-programs") {
      config.pairPrograms = Pair::X;
      configGiven = true;
    } else if (arg == "--pair-programs-y") {
      config.pairPrograms = Pair::Y;
      configGiven = true;
    } else if (arg == "--no-pair-programs") {
      config.pairPrograms = Pair::Off;
      configGiven = true;
    } else if (arg == "--tile-swizzle") {
      config.tileSwizzle = parseInteger(arg, value(), 1, 64);
    } else if (arg == "--ctas") {
      options.ctas = parseInteger(arg, value(), 1, 1 << 20);
    } else if (arg == "--sweep") {
      sweep = true;
    } else if (arg == "--ws-ir") {
      wsIrPath = value();
    } else if (arg == "--schedules") {
      options.schedules =
          static_cast<unsigned>(parseInteger(arg, value(), 1, 100000));
    } else if (arg == "--seed") {
      options.seed = static_cast<uint64_t>(
          parseInteger(arg, value(), 0, std::numeric_limits<int64_t>::max()));
    } else if (arg == "--data-seed") {
      options.dataSeed = static_cast<uint64_t>(
          parseInteger(arg, value(), 0, std::numeric_limits<int64_t>::max()));
    } else if (arg == "--shape") {
      options.shapes.push_back(value());
    } else if (arg == "--grid") {
      options.grid = parseGrid(value());
    } else if (arg == "--max-steps") {
      options.limits.maxSteps = static_cast<uint64_t>(
          parseInteger(arg, value(), 1, std::numeric_limits<int64_t>::max()));
    } else if (!arg.empty() && arg[0] == '-' && arg != "-") {
      usageError("unknown option '" + arg + "'");
    } else if (input.empty()) {
      input = arg;
    } else {
      usageError("more than one kernel given ('" + input + "', '" + arg + "')");
    }
  }
  if (input.empty())
    usageError("no kernel given (try 'tawa-check interp --help')");
  if (sweep && (configGiven || !wsIrPath.empty()))
    usageError("--sweep chooses the configurations itself: it takes neither "
               "--aref-depth, --mma-depth, --consumer-groups, --pingpong, "
               "--no-pingpong, --no-persistent, --pair-programs, --schedule, "
               "--no-coarse-pipeline, --no-issue-turns, --masked-loop-mode "
               "nor --ws-ir");
  if ((config.pairPrograms == Pair::X || config.pairPrograms == Pair::Y) &&
      !config.persistent)
    usageError("--pair-programs needs a persistent kernel: it cannot go "
               "with --no-persistent");
  if (!wsIrPath.empty() && configGiven)
    usageError("--ws-ir checks a given warp-specialized IR: the configuration "
               "options do not apply");

  DialectRegistry registry;
  tawa::registerAllDialects(registry);
  MLIRContext context(registry);
  context.disableMultithreading();
  context.loadAllAvailableDialects();
  OwningOpRef<ModuleOp> module = parseFile(input, context);
  if (!module)
    return 1;

  std::string diagnostics;
  if (failed(checkSupportedSubset(*module, diagnostics))) {
    std::printf("%s: rejected by the compiler (outside the supported "
                "subset):\n%s",
                input.c_str(), diagnostics.c_str());
    return 3;
  }
  std::string error;
  FailureOr<std::unique_ptr<DifferentialCheck>> check =
      DifferentialCheck::create(*module, options, error);
  if (failed(check)) {
    std::printf("%s: %s\n", input.c_str(), error.c_str());
    return 1;
  }
  DifferentialCheck &dc = **check;
  Grid grid = dc.grid();
  std::printf("kernel: @%s (%s)\n", dc.kernel().getName().str().c_str(),
              input.c_str());
  std::printf("arguments: %s\n", join(dc.arguments().summary).c_str());
  for (const std::string &w : dc.arguments().warnings)
    std::printf("note: %s\n", w.c_str());
  std::printf("grid: %lldx%lldx%lld (%s)\n", static_cast<long long>(grid.x),
              static_cast<long long>(grid.y), static_cast<long long>(grid.z),
              dc.gridOrigin().c_str());
  std::vector<std::string> outputs = dc.outputs();
  std::printf("original: %lld program%s, %llu operations; writes %s\n",
              static_cast<long long>(grid.count()),
              grid.count() == 1 ? "" : "s",
              static_cast<unsigned long long>(dc.originalSteps()),
              outputs.empty() ? "nothing" : join(outputs).c_str());

  std::vector<std::pair<std::string, Verdict>> verdicts;
  if (!wsIrPath.empty()) {
    OwningOpRef<ModuleOp> ws = parseFile(wsIrPath, context);
    if (!ws)
      return 1;
    verdicts.emplace_back("ws-ir " + wsIrPath, dc.check(*ws));
  } else if (sweep) {
    for (const tawa::WarpSpecializationOptions &cfg : sweepConfigurations(config.tileSwizzle)) {
      verdicts.emplace_back(configName(cfg), dc.checkConfiguration(cfg));
      printVerdict(verdicts.back().first, verdicts.back().second,
                   options.schedules);
      std::fflush(stdout);
    }
  } else {
    verdicts.emplace_back(configName(config), dc.checkConfiguration(config));
  }
  if (sweep == false)
    printVerdict(verdicts.back().first, verdicts.back().second,
                 options.schedules);

  unsigned matched = 0, rejected = 0, failedCount = 0;
  for (auto &[label, v] : verdicts) {
    if (v.status == Verdict::Status::Match)
      ++matched;
    else if (v.status == Verdict::Status::Rejected)
      ++rejected;
    else
      ++failedCount;
  }
  std::string seeds =
      options.schedules == 1
          ? "seed " + std::to_string(options.seed)
          : "seeds " + std::to_string(options.seed) + "-" +
                std::to_string(options.seed + options.schedules - 1);
  if (failedCount)
    return 1;
  if (matched == 0)
    return 3;
  std::printf(
      "match: @%s, %lldx%lldx%lld grid (%lld program%s), outputs %s "
      "compared bit for bit with the original; %u configuration%s "
      "matched%s, %u schedule%s each (%s)\n",
      dc.kernel().getName().str().c_str(), static_cast<long long>(grid.x),
      static_cast<long long>(grid.y), static_cast<long long>(grid.z),
      static_cast<long long>(grid.count()), grid.count() == 1 ? "" : "s",
      outputs.empty() ? "(none written)" : join(outputs).c_str(), matched,
      matched == 1 ? "" : "s",
      rejected ? (", " + std::to_string(rejected) + " rejected by the compiler")
                     .c_str()
               : "",
      options.schedules, options.schedules == 1 ? "" : "s", seeds.c_str());
  // One configuration: how its consumer partition ran.
  const Verdict &last = verdicts.back().second;
  if (verdicts.size() == 1 && last.cooperativeGroups > 1)
    std::printf("note: the consumer partition ran as %d cooperative groups, "
                "which took %llu issue turns under schedule seed %llu\n",
                last.cooperativeGroups,
                static_cast<unsigned long long>(last.issueTurns),
                static_cast<unsigned long long>(last.seed));
  return 0;
}
