//===- tawac.cpp - the tawa compiler driver -------------------------------===//
//
//   tawac IN.ttir [--emit=STAGE] [-o OUT]
//
// Reads the TTIR Triton printed for a kernel and runs tawa's pipeline up to
// STAGE. Errors are reported at the user's source line and end with a
// non-zero exit status.
//
//===----------------------------------------------------------------------===//

#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Transforms/Passes.h"
#include "tawa/Analysis/KernelSummary.h"
#include "tawa/Driver/Compile.h"
#include "tawa/InitAll.h"
#include "tawa/Transforms/SourceLocation.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;
namespace cl = llvm::cl;

namespace {

/// Pipeline stages, in order; each includes the ones before it.
enum class Stage {
  Parse,
  Verify,
  Check,
  Summary,
  WsIr,
  Lowered,
  Cuda,
  Ptx,
  Cubin
};

cl::OptionCategory tawacCategory("tawac options");

cl::opt<std::string> inputFile(cl::Positional, cl::desc("<input .ttir file>"),
                               cl::Required, cl::cat(tawacCategory));

cl::opt<std::string> outputFile("o", cl::desc("Output file (default: stdout)"),
                                cl::value_desc("file"), cl::init("-"),
                                cl::cat(tawacCategory));

cl::opt<Stage> emitStage(
    "emit", cl::desc("Stop after this stage and write its result:"),
    cl::init(Stage::Check),
    cl::values(
        clEnumValN(Stage::Parse, "parse",
                   "parse only; write the IR in generic form, unverified"),
        clEnumValN(Stage::Verify, "verify",
                   "parse and verify every operation; write the IR"),
        clEnumValN(Stage::Check, "check",
                   "also check that tawa supports every construct (the "
                   "default); write the IR"),
        clEnumValN(Stage::Summary, "summary",
                   "after the check, write a readable summary of each "
                   "kernel: arguments, grid axes, loops, TMA loads, dots, "
                   "reductions, stores"),
        clEnumValN(Stage::WsIr, "ws-ir",
                   "after the check, warp-specialize: producer and consumer "
                   "regions connected by arefs, MMA pipeline expanded; write "
                   "that IR"),
        clEnumValN(Stage::Lowered, "lowered",
                   "after ws-ir, lower arefs to shared-memory rings and "
                   "mbarriers and assign layouts; write that IR (what the "
                   "CUDA emitter reads)"),
        clEnumValN(Stage::Cuda, "cuda",
                   "after lowered, write CUDA C++ over the tawa device "
                   "library to -o OUT.cu and its launch metadata to OUT.json "
                   "(needs -o)"),
        clEnumValN(Stage::Ptx, "ptx",
                   "after cuda, compile with NVRTC and write sm_90a PTX"),
        clEnumValN(Stage::Cubin, "cubin",
                   "after cuda, compile with NVRTC and ptxas to -o OUT.cubin "
                   "and write the launch metadata, with ptxas's register and "
                   "spill report, to OUT.json (needs -o)")),
    cl::cat(tawacCategory));

cl::opt<int64_t> arefDepth(
    "aref-depth",
    cl::desc("Slots D of each aref ring fed inside a loop (default: the most, "
             "up to 4, that fit in shared memory)"),
    cl::value_desc("D"), cl::init(0), cl::cat(tawacCategory));

cl::opt<int64_t>
    mmaDepth("mma-depth",
             cl::desc("Products P left in flight by the MMA pipeline; must "
                      "be < D (default: 2 for two cooperative consumer "
                      "groups holding 128 accumulator registers each, e.g. "
                      "128x256 tiles, on rings of 4 or more slots, with a "
                      "copy of the K loop and epilogue for P = 1 that runs "
                      "where the loop has at most 8 iterations (chosen at "
                      "run time); else 1; 0 where D = 1)"),
             cl::value_desc("P"), cl::init(-1), cl::cat(tawacCategory));

cl::opt<int64_t> consumerGroups(
    "consumer-groups",
    cl::desc("Consumer warp groups that share the consumer region, 1 to 3 "
             "(default: 3 for a 192-row block widened by --widen-rows; 2 "
             "where one group's share of the accumulator would take more "
             "than 128 registers per thread; else 1)"),
    cl::value_desc("N"), cl::init(0), cl::cat(tawacCategory));

cl::opt<bool> persistent(
    "persistent",
    cl::desc("Run a kernel written as one program per tile persistently: one "
             "CTA per SM walks the program grid the caller launches with, and "
             "the aref rings carry over between tiles (default: on; a kernel "
             "that walks program ids itself is left as written, unless "
             "--pair-programs made its tiles programs)"),
    cl::init(true), cl::cat(tawacCategory));

cl::opt<std::string> pairPrograms(
    "pair-programs", cl::ValueOptional,
    cl::desc("Run programs of adjacent program_id(0) (=x; bare "
             "--pair-programs) or program_id(1) (=y) in pairs, one CTA "
             "loading once the tiles both read (x: a GEMM's B tile, the bytes "
             "per flop of a tile twice as tall; y: its A tile, and the two "
             "products issue as one wgmma of twice the width); in a 1-D grid "
             "whose programs compute their tile's row and column from "
             "program_id(0) (Triton's grouped order, or pid / n and pid % n), "
             "y pairs the tiles of adjacent columns (auto also where the "
             "kernel walks its tiles in its own persistent loop, made one "
             "program per tile first); x and y need "
             "--persistent and are an error where the kernel cannot, with "
             "the reason; =off never pairs; default: auto, along y where the "
             "products fuse (tiles of 128 or 64 rows and 64 or 128 columns "
             "of a persistent kernel whose epilogue applies no math function "
             "or division to the accumulator and whose ring, at the "
             "--aref-depth given, still fits), else off"),
    cl::value_desc("auto|off|x|y"), cl::init("auto"), cl::cat(tawacCategory));

cl::opt<int64_t> tileSwizzle(
    "tile-swizzle",
    cl::desc("Where the kernel walks its own tiles row-major (a persistent "
             "tile loop; Triton's grouped-GEMM idiom), walk them N tile rows "
             "at a time so that consecutive tiles share operands in L2; the "
             "same tiles are computed, guarded at run time by a grid that "
             "covers the walk (default: 8; 1 keeps the kernel's order)"),
    cl::value_desc("N"), cl::init(8), cl::cat(tawacCategory));

cl::opt<int64_t> epilogueOverlap(
    "epilogue-overlap",
    cl::desc("Epilogue boxes (64 x 64) of each 64-row accumulator fragment "
             "that a persistent kernel with one consumer partition keeps in "
             "registers and stores during the next tile's first K steps, one "
             "per step, while that tile's products run; 0 stores them all "
             "after the K loop (default: half of them, at most 64 more "
             "registers per thread, e.g. 2 of a 128x256 tile's 4; with "
             "--schedule=optimal, none where the solved K loop leaves the "
             "consumers no room to stage one per step, and all the 64 "
             "registers hold where it does and one product is in flight; "
             "ping-pong kernels and kernels that build their store's tensor "
             "map on the device store at once)"),
    cl::value_desc("N"), cl::init(-1), cl::cat(tawacCategory));

cl::opt<int64_t> cluster(
    "cluster",
    cl::desc("CTAs per cluster: 2 runs a persistent kernel as 2-CTA clusters "
             "that load each tile both CTAs need once, by TMA multicast (an "
             "error where the kernel cannot: it must be persistent, not "
             "ping-pong, with the same loop trip counts for every program); "
             "1 (the default) never"),
    cl::value_desc("N"), cl::init(1), cl::cat(tawacCategory));

cl::opt<cl::boolOrDefault> pingpong(
    "pingpong",
    cl::desc("Ping-pong consumers: two consumer warp groups, each on its own "
             "tile, alternate so that one's epilogue overlaps the other's "
             "products (needs a tile loop: a persistent kernel; default: on "
             "where the consumer groups are the compiler's choice and one "
             "group's registers hold a tile's accumulators, e.g. 128x128, "
             "and --pair-programs did not pair them)"),
    cl::cat(tawacCategory));

cl::opt<bool> coarsePipeline(
    "coarse-pipeline",
    cl::desc("Pipeline attention-shaped loops at coarse grain (Tawa "
             "Algorithm 1): the next key block's scores are issued before "
             "this block's softmax and its update of the output run "
             "(default: on)"),
    cl::init(true), cl::cat(tawacCategory));

cl::opt<bool> streamOrder(
    "stream-order",
    cl::desc("In a kernel made persistent whose loops load data indexed by "
             "program_id(1) and not program_id(0) (attention's K and V "
             "blocks, per head), walk program_id(0) fastest so that the CTAs "
             "running at once share those loads in L2; off keeps the grouped "
             "order of 8 x at a time (default: on; causal kernels walk "
             "heavy-first instead)"),
    cl::init(true), cl::cat(tawacCategory));

cl::opt<bool> heavyFirst(
    "heavy-first",
    cl::desc("In a kernel made persistent whose programs' work grows with "
             "program_id(0) (a loop bound such as causal attention's "
             "(pid_m + 1) * BM), walk x from the largest down so that the "
             "longest programs start first, each CTA taking its rounds' "
             "positions in snake order so that its share is balanced "
             "(default: on)"),
    cl::init(true), cl::cat(tawacCategory));

cl::opt<bool> splitMaskedLoops(
    "split-masked-loops",
    cl::desc("Split a loop whose mask (a select on a comparison of rows "
             "with the loop's columns, as causal attention's) keeps every "
             "element on a prefix of its iterations into the unmasked "
             "prefix and the rest (default: on)"),
    cl::init(true), cl::cat(tawacCategory));

cl::opt<std::string> maskedLoopMode(
    "masked-loop-mode",
    cl::desc("With --split-masked-loops: 'guard' keeps one loop and runs the "
             "mask's comparison and select only on the iterations where it "
             "may drop an element (a branch on the induction variable), so a "
             "pipelined loop is expanded once; 'split' makes two loops, the "
             "unmasked prefix and the rest (default: guard)"),
    cl::init("guard"), cl::cat(tawacCategory));

cl::opt<bool> widenRows(
    "widen-rows",
    cl::desc("Run 192 query rows per program (three consumer warp groups of "
             "64 rows) where a persistent attention kernel's 128 rows are "
             "independent and the groups' registers hold its accumulators "
             "(head dimension 64); the last block of each row range writes "
             "only its own rows (default: on)"),
    cl::init(true), cl::cat(tawacCategory));

cl::opt<bool> scaledRowMax(
    "scaled-row-max",
    cl::desc("Take the row max (or min) of scores scaled by a positive "
             "scalar as the scaled max of the raw scores, under a run-time "
             "check of the scale, so that the scaling fuses with the "
             "subtraction that follows (default: on)"),
    cl::init(true), cl::cat(tawacCategory));

cl::opt<bool> softmaxOverlap(
    "softmax-overlap",
    cl::desc("Keep the wait for the product that reads P from registers "
             "(attention's P.V) after the next block's row sums, so that the "
             "softmax overlaps that product; ptxas otherwise moves the wait "
             "above the softmax (default: on)"),
    cl::init(true), cl::cat(tawacCategory));

cl::opt<bool> issueTurns(
    "issue-turns",
    cl::desc("With --coarse-pipeline, two cooperative consumer warp groups "
             "take turns issuing their products, so that one group's "
             "softmax runs under the other's (warp-group ping-pong, named "
             "barriers; default: on)"),
    cl::init(true), cl::cat(tawacCategory));

cl::opt<tawa::WarpSpecializationOptions::Schedule> schedule(
    "schedule", cl::desc("Where the main loop's pipeline comes from:"),
    cl::init(tawa::WarpSpecializationOptions::Schedule::Heuristic),
    cl::values(
        clEnumValN(tawa::WarpSpecializationOptions::Schedule::Heuristic,
                   "heuristic",
                   "the MMA-depth rule of --mma-depth (the default)"),
        clEnumValN(tawa::WarpSpecializationOptions::Schedule::Optimal,
                   "optimal",
                   "Twill's optimal modulo schedule and warp assignment of "
                   "the main loop (solved with CBC and Z3): the products in "
                   "flight its schedule needs are the least P, and the "
                   "--mma-depth rule may keep more (an explicit --mma-depth "
                   "still wins)")),
    cl::cat(tawacCategory));

cl::opt<bool> megaTask(
    "mega-task",
    cl::desc("With --emit=cuda, write the kernel as a task of tawa's "
             "mega-kernel: a __device__ function tawa::generated::KERNEL::task "
             "that runs one program on the calling CTA (docs/MEGAKERNEL.md, "
             "\"Compiled tasks\"); implies --persistent=false and "
             "--pair-programs=off"),
    cl::init(false), cl::cat(tawacCategory));

cl::opt<std::string>
    taskName("task-name",
             cl::desc("With --mega-task, the namespace of the task under "
                      "tawa::generated (default: the kernel's name)"),
             cl::value_desc("NAME"), cl::init(""), cl::cat(tawacCategory));

cl::opt<bool> printDebugInfo(
    "print-debuginfo",
    cl::desc("Keep source locations (loc(...)) in the written IR so it can be "
             "fed back with the user's lines (default: on)"),
    cl::init(true), cl::cat(tawacCategory));

cl::opt<bool> printResources(
    "print-resources",
    cl::desc("With --emit=cubin, also print ptxas's resource report "
             "(registers, spills, shared memory) to stderr"),
    cl::init(false), cl::cat(tawacCategory));

/// Writes `text` to `path`; false (with a message) on failure.
bool writeFile(StringRef path, StringRef text) {
  std::string error;
  auto file = openOutputFile(path, &error);
  if (!file) {
    llvm::errs() << "tawac: error: " << error << "\n";
    return false;
  }
  file->os() << text;
  file->keep();
  return true;
}

/// Writes the files of --emit=cuda|ptx|cubin.
int writeKernel(const tawa::CompiledKernel &kernel, StringRef stem) {
  std::string json = kernel.metadataJson();
  switch (emitStage) {
  case Stage::Cuda:
    return writeFile(outputFile, kernel.cuda) &&
                   writeFile((stem + ".json").str(), json)
               ? 0
               : 1;
  case Stage::Ptx:
    return writeFile(outputFile, kernel.ptx) ? 0 : 1;
  default:
    if (printResources)
      llvm::errs() << kernel.ptxasLog;
    // A serialized wgmma pipeline costs most of the tensor cores: say so
    // even without --print-resources.
    if (kernel.metadata.resources)
      for (const std::string &code :
           kernel.metadata.resources->performanceWarnings)
        llvm::errs() << "tawac: warning: ptxas reports a potential "
                        "performance loss ("
                     << code
                     << "; --print-resources shows its message) in kernel '"
                     << kernel.metadata.kernel << "'\n";
    return writeFile(outputFile,
                     StringRef(kernel.cubin.data(), kernel.cubin.size())) &&
                   writeFile((stem + ".json").str(), json)
               ? 0
               : 1;
  }
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(tawacCategory);
  cl::SetVersionPrinter([](llvm::raw_ostream &os) {
    os << "tawac (tawa " TAWA_VERSION_STRING ")\n";
  });
  cl::ParseCommandLineOptions(
      argc, argv,
      "tawac: compile Triton TTIR with tawa\n\n"
      "  Reads the TTIR that Triton 3.6 prints for a kernel "
      "(kernel.asm['ttir'])\n"
      "  and runs tawa's pipeline up to --emit. Unsupported constructs are\n"
      "  reported at the kernel's source line; any error gives exit status 1.\n"
      "  --emit=ws-ir writes the warp-specialized IR; --emit=cuda writes CUDA\n"
      "  C++ (OUT.cu) and launch metadata (OUT.json, naming OUT.cubin; the\n"
      "  grid is the caller's, kind \"explicit\"); --emit=ptx and\n"
      "  --emit=cubin compile that source with NVRTC for sm_90a, and\n"
      "  --emit=cubin writes OUT.json next to OUT.cubin. With --mega-task,\n"
      "  --emit=cuda writes the kernel as a task of tawa's mega-kernel.\n");
  if (cluster != 1 && cluster != 2) {
    llvm::errs() << "tawac: error: --cluster must be 1 or 2 (got " << cluster
                 << ")\n";
    return 1;
  }
  if (epilogueOverlap < -1 || epilogueOverlap > 8) {
    llvm::errs() << "tawac: error: --epilogue-overlap must be 0 to 8 (got "
                 << epilogueOverlap << ")\n";
    return 1;
  }
  if (tileSwizzle < 1 || tileSwizzle > 64) {
    llvm::errs() << "tawac: error: --tile-swizzle must be 1 to 64 (got "
                 << tileSwizzle << ")\n";
    return 1;
  }
  if (!megaTask && !taskName.empty()) {
    llvm::errs() << "tawac: error: --task-name needs --mega-task\n";
    return 1;
  }
  if (megaTask) {
    // A task is one program of the caller's grid, run by one CTA.
    if (persistent.getNumOccurrences() && persistent) {
      llvm::errs() << "tawac: error: --mega-task runs one program per task: "
                      "drop --persistent\n";
      return 1;
    }
    if (pairPrograms.getNumOccurrences() && pairPrograms != "off") {
      llvm::errs() << "tawac: error: --mega-task runs one program per task: "
                      "drop --pair-programs\n";
      return 1;
    }
    if (cluster != 1) {
      llvm::errs() << "tawac: error: --mega-task runs on one CTA: drop "
                      "--cluster\n";
      return 1;
    }
    if (emitStage != Stage::Cuda) {
      llvm::errs() << "tawac: error: --mega-task needs --emit=cuda (the task "
                      "is compiled with the mega-kernel that includes it)\n";
      return 1;
    }
    auto identifier = [](StringRef s) {
      return !s.empty() && !llvm::isDigit(s.front()) &&
             llvm::all_of(s,
                          [](char c) { return llvm::isAlnum(c) || c == '_'; });
    };
    if (!taskName.empty() && !identifier(taskName)) {
      llvm::errs() << "tawac: error: --task-name must be a C++ identifier "
                      "(got '"
                   << taskName << "')\n";
      return 1;
    }
    persistent = false;
    pairPrograms = "off";
  }
  using Pair = tawa::WarpSpecializationOptions::PairPrograms;
  Pair pairing;
  if (pairPrograms == "auto")
    pairing = Pair::Auto;
  else if (pairPrograms == "off")
    pairing = Pair::Off;
  else if (pairPrograms == "x" || pairPrograms.empty())
    pairing = Pair::X;
  else if (pairPrograms == "y")
    pairing = Pair::Y;
  else {
    llvm::errs() << "tawac: error: --pair-programs takes auto, off, x or y, "
                    "not '"
                 << pairPrograms << "'\n";
    return 1;
  }
  if ((pairing == Pair::X || pairing == Pair::Y) && !persistent) {
    llvm::errs() << "tawac: error: --pair-programs needs a persistent kernel "
                    "(the caller's program grid stays the original one); "
                    "drop --persistent=false\n";
    return 1;
  }

  DialectRegistry registry;
  tawa::registerAllDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  // Errors point at the user's source line; an IR dump would bury them.
  context.printOpOnDiagnostic(false);

  std::string error;
  auto input = openInputFile(inputFile, &error);
  if (!input) {
    llvm::errs() << "tawac: error: " << error << "\n";
    return 1;
  }
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(input), llvm::SMLoc());
  SourceMgrDiagnosticHandler diagHandler(sourceMgr, &context);
  // A verifier error on an op Triton inlined from its own library (tl.sum,
  // tl.zeros, ...) carries callsite(triton/language/... at kernel.py:L:C);
  // re-emit it at the user's line, as the subset check reports. Handlers run
  // newest first, so this one sees each diagnostic before diagHandler.
  context.getDiagEngine().registerHandler([](Diagnostic &diag) {
    Location loc = diag.getLocation();
    Location user = tawa::getUserLocation(loc);
    if (diag.getSeverity() != DiagnosticSeverity::Error ||
        !isa<CallSiteLoc>(loc) || user == loc)
      return failure();
    InFlightDiagnostic moved = emitError(user);
    moved << diag.str();
    for (Diagnostic &note : diag.getNotes())
      moved.attachNote(note.getLocation()) << note.str();
    return success();
  });

  ParserConfig config(&context, /*verifyAfterParse=*/emitStage != Stage::Parse);
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, config);
  if (!module)
    return 1;

  // --emit=cuda and cubin write two files: OUT.{cu,cubin} and OUT.json.
  std::string stem;
  if (emitStage == Stage::Cuda || emitStage == Stage::Cubin) {
    StringRef ext = emitStage == Stage::Cuda ? ".cu" : ".cubin";
    StringRef out = outputFile;
    if (out == "-" || !out.ends_with(ext)) {
      llvm::errs() << "tawac: error: --emit="
                   << (emitStage == Stage::Cuda ? "cuda" : "cubin")
                   << " needs -o OUT" << ext
                   << " (the metadata goes to OUT.json)\n";
      return 1;
    }
    stem = out.drop_back(ext.size()).str();
  }

  if (emitStage >= Stage::Check) {
    tawa::CompileOptions options;
    options.warpSpecialization.arefDepth = arefDepth;
    options.warpSpecialization.mmaDepth = mmaDepth;
    options.warpSpecialization.consumerGroups = consumerGroups;
    options.warpSpecialization.persistent = persistent;
    options.warpSpecialization.pairPrograms = pairing;
    options.warpSpecialization.tileSwizzle = tileSwizzle;
    options.warpSpecialization.schedule = schedule;
    options.warpSpecialization.coarsePipeline = coarsePipeline;
    options.warpSpecialization.issueTurns = issueTurns;
    options.warpSpecialization.heavyFirst = heavyFirst;
    options.warpSpecialization.streamOrder = streamOrder;
    options.warpSpecialization.splitMaskedLoops = splitMaskedLoops;
    options.warpSpecialization.scaledRowMax = scaledRowMax;
    options.warpSpecialization.widenRows = widenRows;
    if (maskedLoopMode != "guard" && maskedLoopMode != "split") {
      llvm::errs() << "tawac: error: --masked-loop-mode must be 'guard' or "
                      "'split', not '"
                   << maskedLoopMode << "'\n";
      return 1;
    }
    options.warpSpecialization.maskedLoopMode = maskedLoopMode;
    options.cluster = cluster;
    options.emit.epilogueOverlap = epilogueOverlap;
    options.emit.softmaxOverlap = softmaxOverlap;
    options.emit.megaTask = megaTask;
    options.emit.taskName = taskName;
    options.warpSpecialization.pingpong = pingpong == cl::BOU_UNSET  ? -1
                                          : pingpong == cl::BOU_TRUE ? 1
                                                                     : 0;
    switch (emitStage) {
    case Stage::WsIr:
      options.stage = tawa::CompileStage::WsIr;
      break;
    case Stage::Lowered:
      options.stage = tawa::CompileStage::Lowered;
      break;
    case Stage::Cuda:
      options.stage = tawa::CompileStage::Cuda;
      break;
    case Stage::Ptx:
      options.stage = tawa::CompileStage::Ptx;
      break;
    case Stage::Cubin:
      options.stage = tawa::CompileStage::Cubin;
      break;
    default:
      options.stage = tawa::CompileStage::Check;
    }
    options.cubinName =
        (llvm::sys::path::filename(stem.empty() ? "kernel" : stem) + ".cubin")
            .str();
    FailureOr<tawa::CompiledKernel> kernel = tawa::compile(*module, options);
    if (failed(kernel))
      return 1;
    if (emitStage >= Stage::Cuda)
      return writeKernel(*kernel, stem);
  }

  auto output = openOutputFile(outputFile, &error);
  if (!output) {
    llvm::errs() << "tawac: error: " << error << "\n";
    return 1;
  }
  if (emitStage == Stage::Summary) {
    tawa::printKernelSummary(*module, output->os());
  } else {
    OpPrintingFlags flags;
    if (printDebugInfo)
      flags.enableDebugInfo(/*enable=*/true, /*prettyForm=*/false);
    if (emitStage == Stage::Parse)
      flags.printGenericOpForm().assumeVerified();
    module->print(output->os(), flags);
    output->os() << "\n";
  }
  output->keep();
  return 0;
}
