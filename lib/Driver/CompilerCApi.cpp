//===- CompilerCApi.cpp - C API of the tawa compiler ----------------------===//
//
// tawa_compiler.h over tawa::compile. Each call has its own MLIRContext, so
// calls on different threads share nothing. Diagnostics are rendered as
// tawac prints them and kept in the result.
//
//===----------------------------------------------------------------------===//

#include "tawa/Driver/tawa_compiler.h"

#include "tawa/Driver/Compile.h"
#include "tawa/InitAll.h"
#include "tawa/Transforms/SourceLocation.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

using namespace mlir;

struct tawa_compiler_result {
  bool ok = false;
  std::string diagnostics;
  std::string wsIr;
  std::string ir;
  std::string cuda;
  std::string metadata;
  std::string ptx;
  std::string cubin;
  std::string ptxasLog;
};

namespace {

thread_local std::string lastError;

std::string printModule(ModuleOp module) {
  std::string text;
  llvm::raw_string_ostream os(text);
  // Keep loc(...) so a dumped stage can be fed back with the user's lines.
  OpPrintingFlags flags;
  flags.enableDebugInfo(/*enable=*/true, /*prettyForm=*/false);
  module->print(os, flags);
  os << "\n";
  return text;
}

/// A verifier error on an op Triton inlined from its own library (tl.sum,
/// tl.zeros, ...) carries callsite(triton/language/... at kernel.py:L:C):
/// re-emit it at the user's line, as tawac does. Handlers run newest first,
/// so this one, registered after the printing handler, sees each diagnostic
/// before it.
void relocateToUserLines(MLIRContext &context) {
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
}

tawa::CompileStage toStage(int32_t stage) {
  switch (stage) {
  case TAWA_STAGE_WS_IR:
    return tawa::CompileStage::WsIr;
  case TAWA_STAGE_LOWERED:
    return tawa::CompileStage::Lowered;
  case TAWA_STAGE_CUDA:
    return tawa::CompileStage::Cuda;
  case TAWA_STAGE_PTX:
    return tawa::CompileStage::Ptx;
  case TAWA_STAGE_CUBIN:
    return tawa::CompileStage::Cubin;
  default:
    return tawa::CompileStage::Check;
  }
}

/// The options as tawa::CompileOptions; "" or the reason they are invalid,
/// with tawac's wording.
std::string toCompileOptions(const tawa_compiler_options &in,
                             tawa::CompileOptions &out) {
  using Pair = tawa::WarpSpecializationOptions::PairPrograms;
  using Schedule = tawa::WarpSpecializationOptions::Schedule;
  if (in.stage < TAWA_STAGE_CHECK || in.stage > TAWA_STAGE_CUBIN)
    return "unknown stage " + std::to_string(in.stage);
  if (in.cluster != 1 && in.cluster != 2)
    return "cluster must be 1 or 2 (got " + std::to_string(in.cluster) + ")";
  if (in.epilogue_overlap < -1 || in.epilogue_overlap > 8)
    return "epilogue_overlap must be 0 to 8 (got " +
           std::to_string(in.epilogue_overlap) + ")";
  if (in.tile_swizzle < 1 || in.tile_swizzle > 64)
    return "tile_swizzle must be 1 to 64 (got " +
           std::to_string(in.tile_swizzle) + ")";
  if (in.schedule != TAWA_SCHEDULE_HEURISTIC &&
      in.schedule != TAWA_SCHEDULE_OPTIMAL)
    return "unknown schedule " + std::to_string(in.schedule);
  if (in.pingpong < -1 || in.pingpong > 1)
    return "pingpong must be -1, 0 or 1 (got " + std::to_string(in.pingpong) +
           ")";
  Pair pair;
  switch (in.pair_programs) {
  case TAWA_PAIR_AUTO:
    pair = Pair::Auto;
    break;
  case TAWA_PAIR_OFF:
    pair = Pair::Off;
    break;
  case TAWA_PAIR_X:
    pair = Pair::X;
    break;
  case TAWA_PAIR_Y:
    pair = Pair::Y;
    break;
  default:
    return "unknown pair_programs " + std::to_string(in.pair_programs);
  }
  tawa::WarpSpecializationOptions &ws = out.warpSpecialization;
  ws.arefDepth = in.aref_depth;
  ws.mmaDepth = in.mma_depth;
  ws.consumerGroups = in.consumer_groups;
  ws.persistent = in.persistent != 0;
  ws.pingpong = in.pingpong;
  ws.schedule = in.schedule == TAWA_SCHEDULE_OPTIMAL ? Schedule::Optimal
                                                      : Schedule::Heuristic;
  ws.pairPrograms = pair;
  ws.tileSwizzle = in.tile_swizzle;
  out.cluster = in.cluster;
  out.emit.epilogueOverlap = in.epilogue_overlap;
  out.stage = toStage(in.stage);
  return "";
}

void compileInto(llvm::StringRef ttir, llvm::StringRef bufferName,
                 const tawa::CompileOptions &options, bool wantWsIr,
                 tawa_compiler_result &result) {
  DialectRegistry registry;
  tawa::registerAllDialects(registry);
  // No thread pool: the library runs inside the caller's process (Python).
  MLIRContext context(registry, MLIRContext::Threading::DISABLED);
  context.loadAllAvailableDialects();
  // Errors point at the user's source line; an IR dump would bury them.
  context.printOpOnDiagnostic(false);

  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(ttir, bufferName), llvm::SMLoc());
  llvm::raw_string_ostream diagnostics(result.diagnostics);
  SourceMgrDiagnosticHandler printer(sourceMgr, &context, diagnostics);
  relocateToUserLines(context);

  OwningOpRef<ModuleOp> module =
      parseSourceFile<ModuleOp>(sourceMgr, ParserConfig(&context));
  if (!module)
    return;
  // The warp-specialized IR is a stage the full pipeline passes through but
  // does not keep: a copy of the input stops there.
  OwningOpRef<ModuleOp> wsCopy;
  if (wantWsIr && options.stage > tawa::CompileStage::WsIr)
    wsCopy = module->clone();

  FailureOr<tawa::CompiledKernel> kernel = tawa::compile(*module, options);
  if (failed(kernel))
    return;
  result.ok = true;
  if (options.stage <= tawa::CompileStage::Lowered)
    result.ir = printModule(*module);
  if (wantWsIr && options.stage == tawa::CompileStage::WsIr)
    result.wsIr = result.ir;
  if (options.stage >= tawa::CompileStage::Cuda) {
    result.cuda = std::move(kernel->cuda);
    result.metadata = kernel->metadataJson();
  }
  result.ptx = std::move(kernel->ptx);
  result.cubin.assign(kernel->cubin.begin(), kernel->cubin.end());
  result.ptxasLog = std::move(kernel->ptxasLog);

  if (wsCopy) {
    // Its diagnostics repeat the full run's; keep only the full run's.
    ScopedDiagnosticHandler quiet(&context,
                                  [](Diagnostic &) { return success(); });
    tawa::CompileOptions wsOptions = options;
    wsOptions.stage = tawa::CompileStage::WsIr;
    if (succeeded(tawa::compile(*wsCopy, wsOptions)))
      result.wsIr = printModule(*wsCopy);
  }
}

} // namespace

extern "C" {

int tawa_compiler_c_api_version(void) { return TAWA_COMPILER_C_API_VERSION; }

const char *tawa_compiler_version(void) { return TAWA_VERSION_STRING; }

const char *tawa_compiler_last_error(void) { return lastError.c_str(); }

void tawa_compiler_options_init(tawa_compiler_options *options) {
  if (!options)
    return;
  *options = tawa_compiler_options{};
  options->stage = TAWA_STAGE_CUBIN;
  options->aref_depth = 0;
  options->mma_depth = -1;
  options->consumer_groups = 0;
  options->persistent = 1;
  options->pingpong = -1;
  options->schedule = TAWA_SCHEDULE_HEURISTIC;
  options->pair_programs = TAWA_PAIR_AUTO;
  options->tile_swizzle = 8;
  options->epilogue_overlap = -1;
  options->cluster = 1;
  options->want_ws_ir = 0;
}

int tawa_compiler_compile(const char *ttir, size_t ttirSize,
                          const char *bufferName, const char *cubinName,
                          const tawa_compiler_options *options,
                          tawa_compiler_result **out) {
  if (!ttir || !options || !out) {
    lastError = "tawa_compiler_compile: ttir, options and out must be given";
    return -1;
  }
  *out = nullptr;
  tawa::CompileOptions compileOptions;
  std::string invalid = toCompileOptions(*options, compileOptions);
  if (!invalid.empty()) {
    lastError = "tawa_compiler_compile: " + invalid;
    return -1;
  }
  if (cubinName)
    compileOptions.cubinName = cubinName;
  auto *result = new tawa_compiler_result;
  compileInto(llvm::StringRef(ttir, ttirSize),
              bufferName ? bufferName : "<ttir>", compileOptions,
              options->want_ws_ir != 0, *result);
  *out = result;
  return 0;
}

int tawa_compiler_result_ok(const tawa_compiler_result *result) {
  return result && result->ok ? 1 : 0;
}

const char *tawa_compiler_result_output(const tawa_compiler_result *result,
                                        int which, size_t *size) {
  const std::string *text = nullptr;
  if (result) {
    switch (which) {
    case TAWA_OUT_DIAGNOSTICS:
      text = &result->diagnostics;
      break;
    case TAWA_OUT_WS_IR:
      text = &result->wsIr;
      break;
    case TAWA_OUT_CUDA:
      text = &result->cuda;
      break;
    case TAWA_OUT_METADATA:
      text = &result->metadata;
      break;
    case TAWA_OUT_PTX:
      text = &result->ptx;
      break;
    case TAWA_OUT_CUBIN:
      text = &result->cubin;
      break;
    case TAWA_OUT_PTXAS_LOG:
      text = &result->ptxasLog;
      break;
    case TAWA_OUT_IR:
      text = &result->ir;
      break;
    default:
      break;
    }
  }
  if (!text || text->empty()) {
    if (size)
      *size = 0;
    return nullptr;
  }
  if (size)
    *size = text->size();
  return text->c_str();
}

void tawa_compiler_result_free(tawa_compiler_result *result) { delete result; }

} // extern "C"
