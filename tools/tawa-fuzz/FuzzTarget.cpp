//===- FuzzTarget.cpp - one input through parse, checks and passes --------===//

#include "FuzzTarget.h"

#include "tawa/InitAll.h"
#include "tawa/Interpreter/DifferentialCheck.h"
#include "tawa/Target/CudaEmitter.h"
#include "tawa/Transforms/Pipeline.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>

using namespace mlir;

namespace tawa::fuzz {

const char *stageName(Stage stage) {
  switch (stage) {
  case Stage::ParseError:
    return "parse error";
  case Stage::OutsideSubset:
    return "outside the supported subset";
  case Stage::PipelineError:
    return "rejected by the warp-specialization passes";
  case Stage::Compiled:
    return "compiled";
  case Stage::Interpreted:
    return "compiled and matched on the interpreter";
  }
  return "?";
}

namespace {

[[noreturn]] void finding(const std::string &what) {
  llvm::errs() << "tawa-fuzz: " << what << "\n";
  std::abort();
}

/// The first error of `diagnostics` (DiagnosticCollector lines), or "".
std::string firstError(const std::string &diagnostics) {
  size_t at = diagnostics.find(": error: ");
  if (at == std::string::npos)
    return "";
  size_t start = diagnostics.rfind('\n', at);
  start = start == std::string::npos ? 0 : start + 1;
  return diagnostics.substr(start, diagnostics.find('\n', at) - start);
}

/// Aref lowering, layouts, 2-CTA clusters where `cluster` is -1 (where the
/// kernel allows them), then CUDA emission, on a copy of the warp-specialized
/// module: errors are fine, a failure without one is a finding (a crash is
/// one by itself).
void lowerAndEmit(ModuleOp wsModule, int64_t cluster) {
  OwningOpRef<ModuleOp> module(wsModule.clone());
  interp::DiagnosticCollector collect(module->getContext());
  PassManager pm(module->getContext());
  addLoweringPasses(pm, cluster);
  if (failed(pm.run(*module))) {
    if (firstError(collect.take()).empty())
      finding("the lowering passes failed without an error diagnostic");
    return;
  }
  for (tt::FuncOp func : module->getOps<tt::FuncOp>()) {
    std::string cuda;
    llvm::raw_string_ostream os(cuda);
    if (failed(emitCuda(func, os)) && firstError(collect.take()).empty())
      finding("CUDA emission failed without an error diagnostic");
  }
}

/// Limits that keep one input's run on the interpreter short.
interp::ExecutionLimits fuzzLimits() {
  interp::ExecutionLimits limits;
  limits.maxSteps = 20000;
  limits.maxTensorElements = int64_t(1) << 17;
  // Few steps of large products can still take long under ASan (a slow
  // unit of 29 s was seen, near the 30 s per-input timeout of CI's run).
  // Every sample's run takes less than 2^24 element operations.
  limits.maxWork = uint64_t(1) << 26;
  return limits;
}

/// Runs program 0 of the module's kernel, if it has one and the interpreter
/// can make its arguments.
void interpretAlone(ModuleOp module) {
  std::string error;
  tt::FuncOp kernel = interp::findKernel(module, error);
  if (!kernel)
    return;
  FailureOr<interp::KernelArguments> args =
      interp::makeKernelArguments(kernel, {}, /*dataSeed=*/1, error);
  if (failed(args))
    return;
  interp::ExecutionOptions options;
  options.limits = fuzzLimits();
  interp::runGrid(kernel, args->values, interp::Grid{}, args->memory, options);
}

} // namespace

Outcome runOneInput(StringRef input) {
  Outcome outcome;
  // A fresh context per input: nothing one input interns or breaks can
  // affect the next.
  DialectRegistry registry;
  registerAllDialects(registry);
  MLIRContext context(registry, MLIRContext::Threading::DISABLED);
  context.loadAllAvailableDialects();

  std::string parseDiagnostics;
  OwningOpRef<ModuleOp> module;
  {
    interp::DiagnosticCollector collect(&context);
    // MLIR's lexer stops at a NUL after the buffer (source files have one);
    // libFuzzer's bytes do not, so they are copied into a string that does.
    std::string text = input.str();
    module = parseSourceString<ModuleOp>(text, &context);
    parseDiagnostics = collect.take();
  }
  if (!module) {
    outcome.summary = firstError(parseDiagnostics);
    if (outcome.summary.empty())
      finding("the parser failed without an error diagnostic");
    return outcome;
  }

  std::string diagnostics;
  if (failed(interp::checkSupportedSubset(*module, diagnostics))) {
    outcome.stage = Stage::OutsideSubset;
    outcome.summary = firstError(diagnostics);
    if (outcome.summary.empty())
      finding("the supported-subset check failed without an error "
              "diagnostic");
    // The interpreter takes any verified kernel, the compiler's subset or
    // not (hand-written warp-specialized IR among them): it must not crash
    // on one either, whatever it concludes.
    interpretAlone(*module);
    return outcome;
  }

  // A configuration from the input's size: every one the compiler accepts,
  // and some it rejects, get their share of inputs.
  WarpSpecializationOptions config;
  size_t pick = input.size();
  config.arefDepth = static_cast<int64_t>(pick % 5);          // 0 = choose
  config.mmaDepth = static_cast<int64_t>((pick / 5) % 4) - 1; // -1 = choose
  config.consumerGroups = static_cast<int64_t>((pick / 20) % 3);
  config.persistent = (pick / 60) % 2 == 0;
  config.pingpong = static_cast<int64_t>((pick / 120) % 3) - 1; // -1: choose
  // Pairing: the compiler's choice (along y where the products fuse), x,
  // or y.
  using Pair = WarpSpecializationOptions::PairPrograms;
  static const Pair pairings[] = {Pair::Auto, Pair::X, Pair::Y};
  config.pairPrograms =
      config.persistent ? pairings[(pick / 720) % 3] : Pair::Off;
  // The tile walk's group rows (8: the default; 1: the kernel's order).
  static const int64_t swizzles[] = {8, 2, 3, 1};
  config.tileSwizzle = swizzles[(pick / 2160) % 4];
  FailureOr<OwningOpRef<ModuleOp>> compiled =
      interp::compileWarpSpecialized(*module, config, diagnostics);
  // Most kernels cannot pair programs; the rest of the pipeline should see
  // them anyway.
  if (failed(compiled) &&
      (config.pairPrograms == Pair::X || config.pairPrograms == Pair::Y) &&
      firstError(diagnostics).find("cannot pair programs") !=
          std::string::npos) {
    config.pairPrograms = Pair::Off;
    diagnostics.clear();
    compiled = interp::compileWarpSpecialized(*module, config, diagnostics);
  }
  if (failed(compiled)) {
    outcome.stage = Stage::PipelineError;
    outcome.summary = firstError(diagnostics);
    if (outcome.summary.empty())
      finding("the warp-specialization passes failed without an error "
              "diagnostic");
    return outcome;
  }
  outcome.stage = Stage::Compiled;
  lowerAndEmit(**compiled, (pick / 360) % 2 ? -1 : 1);

  // The interpreter, where it is cheap: one program, one schedule, small
  // limits. Inputs the original kernel cannot run (no kernel, an argument
  // it cannot make, a bad address) say nothing about the compiler.
  interp::DifferentialOptions options;
  options.grid = interp::Grid{};
  options.schedules = 1;
  options.limits = fuzzLimits();
  std::string error;
  FailureOr<std::unique_ptr<interp::DifferentialCheck>> check =
      interp::DifferentialCheck::create(*module, options, error);
  if (failed(check)) {
    outcome.summary = "not interpreted: " + error;
    return outcome;
  }
  interp::Verdict verdict = (*check)->check(**compiled);
  switch (verdict.status) {
  case interp::Verdict::Status::Match:
    outcome.stage = Stage::Interpreted;
    outcome.summary = "match";
    return outcome;
  case interp::Verdict::Status::Mismatch:
  case interp::Verdict::Status::Violation: {
    std::string details;
    for (const std::string &d : verdict.details)
      details += "\n  " + d;
    finding("the warp-specialized kernel fails where the original runs (" +
            verdict.kind + "): " + verdict.message + details);
  }
  case interp::Verdict::Status::Error:
  case interp::Verdict::Status::Rejected:
    outcome.summary = "not interpreted: " + verdict.message;
    return outcome;
  }
  return outcome;
}

} // namespace tawa::fuzz
