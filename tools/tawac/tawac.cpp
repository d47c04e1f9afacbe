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
#include "tawa/InitAll.h"
#include "tawa/Target/CudaEmitter.h"
#include "tawa/Transforms/Passes.h"
#include "tawa/Transforms/SourceLocation.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;
namespace cl = llvm::cl;

namespace {

/// Pipeline stages, in order; each includes the ones before it. Later stages
/// (PTX, CUBIN) are added to this list as the passes behind them land.
enum class Stage { Parse, Verify, Check, Summary, WsIr, Cuda };

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
        clEnumValN(Stage::Cuda, "cuda",
                   "after ws-ir, lower arefs and assign layouts, then write "
                   "CUDA C++ over the tawa device library to -o OUT.cu and "
                   "its launch metadata to OUT.json (needs -o)")),
    cl::cat(tawacCategory));

cl::opt<int64_t> arefDepth(
    "aref-depth",
    cl::desc("Slots D of each aref ring fed inside a loop (with --emit=ws-ir; "
             "default: the most, up to 4, that fit in shared memory)"),
    cl::value_desc("D"), cl::init(0), cl::cat(tawacCategory));

cl::opt<int64_t>
    mmaDepth("mma-depth",
             cl::desc("Products P left in flight by the MMA pipeline (with "
                      "--emit=ws-ir or cuda; must be < D; default: 1, or 0 "
                      "with --aref-depth=1)"),
             cl::value_desc("P"), cl::init(-1), cl::cat(tawacCategory));

cl::opt<int64_t> consumerGroups(
    "consumer-groups",
    cl::desc("Consumer warp groups that share the consumer region, 1 to 3 "
             "(with --emit=ws-ir or cuda; default: 1)"),
    cl::value_desc("N"), cl::init(1), cl::cat(tawacCategory));

cl::opt<bool> printDebugInfo(
    "print-debuginfo",
    cl::desc("Keep source locations (loc(...)) in the written IR so it can be "
             "fed back with the user's lines (default: on)"),
    cl::init(true), cl::cat(tawacCategory));

/// Writes OUT.cu and OUT.json for the module's single kernel.
int emitCudaFiles(ModuleOp module) {
  StringRef out = outputFile;
  if (out == "-" || !out.ends_with(".cu")) {
    llvm::errs() << "tawac: error: --emit=cuda needs -o OUT.cu (the metadata "
                    "goes to OUT.json)\n";
    return 1;
  }
  SmallVector<tawa::tt::FuncOp> kernels(module.getOps<tawa::tt::FuncOp>());
  if (kernels.size() != 1) {
    emitError(module.getLoc())
        << "--emit=cuda needs exactly one kernel, found " << kernels.size();
    return 1;
  }
  StringRef stem = out.drop_back(3);
  std::string jsonPath = (stem + ".json").str();
  std::string cubinName = (llvm::sys::path::filename(stem) + ".cubin").str();
  std::string source, json;
  llvm::raw_string_ostream sourceOs(source), jsonOs(json);
  if (failed(tawa::emitCuda(kernels.front(), sourceOs, jsonOs, cubinName)))
    return 1;
  std::string error;
  auto sourceFile = openOutputFile(out, &error);
  auto jsonFile = sourceFile ? openOutputFile(jsonPath, &error) : nullptr;
  if (!sourceFile || !jsonFile) {
    llvm::errs() << "tawac: error: " << error << "\n";
    return 1;
  }
  sourceFile->os() << source;
  jsonFile->os() << json;
  sourceFile->keep();
  jsonFile->keep();
  return 0;
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
      "  grid is the caller's, kind \"explicit\"). PTX and CUBIN stages are\n"
      "  not available yet: compile OUT.cu with nvcc for sm_90a.\n");

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

  if (emitStage >= Stage::Check) {
    PassManager pm(&context);
    pm.addPass(tawa::createSupportedSubsetCheck());
    if (emitStage >= Stage::WsIr) {
      tawa::LoopDistributionOptions distribution;
      distribution.arefDepth = arefDepth;
      distribution.consumerGroups = consumerGroups;
      tawa::MmaPipelineOptions pipeline;
      pipeline.mmaDepth = mmaDepth >= 0 ? mmaDepth : (arefDepth == 1 ? 0 : 1);
      OpPassManager &funcPm = pm.nest<tawa::tt::FuncOp>();
      funcPm.addPass(tawa::createPartitionAnnotation());
      funcPm.addPass(tawa::createLoopDistribution(distribution));
      funcPm.addPass(tawa::createMmaPipeline(pipeline));
      funcPm.addPass(tawa::createPipelineExpansion());
      pm.addPass(createCanonicalizerPass());
      pm.addPass(createCSEPass());
    }
    if (emitStage == Stage::Cuda) {
      OpPassManager &funcPm = pm.nest<tawa::tt::FuncOp>();
      funcPm.addPass(tawa::createArefLowering());
      funcPm.addPass(tawa::createLayoutAssignment());
    }
    if (failed(pm.run(*module)))
      return 1;
  }

  if (emitStage == Stage::Cuda)
    return emitCudaFiles(*module);

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
