//===- Compile.cpp - tawa::compile ----------------------------------------===//

#include "tawa/Driver/Compile.h"

#include "tawa/Dialect/TT/TTDialect.h"
#include "tawa/runtime/Compiler.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;

namespace tawa {

std::string CompiledKernel::metadataJson() const {
  std::string json;
  llvm::raw_string_ostream os(json);
  writeMetadataJson(metadata, cubinName, os);
  return json;
}

KernelResources parsePtxasResources(llvm::StringRef log) {
  KernelResources r;
  llvm::SmallVector<llvm::StringRef> m;
  llvm::Regex regs("Used ([0-9]+) registers");
  llvm::Regex spills("([0-9]+) bytes spill stores, ([0-9]+) bytes spill loads");
  llvm::Regex stack("([0-9]+) bytes stack frame");
  if (regs.match(log, &m))
    llvm::to_integer(m[1], r.registers);
  if (spills.match(log, &m)) {
    llvm::to_integer(m[1], r.spillStoreBytes);
    llvm::to_integer(m[2], r.spillLoadBytes);
  }
  if (stack.match(log, &m))
    llvm::to_integer(m[1], r.stackBytes);
  llvm::Regex loss("\\((C[0-9]+)\\) Potential Performance Loss");
  llvm::SmallVector<llvm::StringRef> lines;
  log.split(lines, '\n');
  for (llvm::StringRef line : lines)
    if (loss.match(line, &m))
      r.performanceWarnings.push_back(m[1].str());
  return r;
}

FailureOr<CompiledKernel> compile(ModuleOp module,
                                  const CompileOptions &options) {
  MLIRContext *ctx = module.getContext();
  using Pair = WarpSpecializationOptions::PairPrograms;
  Pair pair = options.warpSpecialization.pairPrograms;
  if ((pair == Pair::X || pair == Pair::Y) &&
      !options.warpSpecialization.persistent)
    return module.emitError("paired programs need a persistent kernel (the "
                            "caller's program grid stays the original one)");
  PassManager pm(ctx);
  addSupportedSubsetCheck(pm);
  if (options.stage >= CompileStage::WsIr)
    addWarpSpecializationPasses(pm, options.warpSpecialization);
  if (options.stage >= CompileStage::Lowered)
    addLoweringPasses(pm, options.cluster);
  if (failed(pm.run(module)))
    return failure();

  CompiledKernel kernel;
  kernel.cubinName = options.cubinName;
  if (options.stage < CompileStage::Cuda)
    return kernel;

  SmallVector<tt::FuncOp> kernels(module.getOps<tt::FuncOp>());
  if (kernels.size() != 1)
    return emitError(module.getLoc())
           << "CUDA emission needs exactly one kernel, found "
           << kernels.size();
  llvm::raw_string_ostream cudaOs(kernel.cuda);
  FailureOr<KernelMetadata> metadata =
      emitCuda(kernels.front(), cudaOs, options.emit);
  if (failed(metadata))
    return failure();
  kernel.metadata = std::move(*metadata);
  if (options.stage < CompileStage::Ptx)
    return kernel;

  runtime::CompileOptions nvrtc;
  nvrtc.arch = options.arch;
  nvrtc.emitPtx = options.stage == CompileStage::Ptx;
  // The resource report comes from ptxas, which NVRTC runs for a CUBIN.
  if (!nvrtc.emitPtx)
    nvrtc.extraOptions.push_back("--ptxas-options=-v");
  nvrtc.useCache = false;
  runtime::CompileResult result;
  std::string error;
  std::string name = kernel.metadata.kernel + ".cu";
  if (!runtime::tryCompileCuda(kernel.cuda, name, nvrtc, result, error))
    return emitError(kernels.front().getLoc())
           << "NVRTC could not compile the generated CUDA C++ (a tawa bug): "
           << error;
  if (nvrtc.emitPtx) {
    kernel.ptx = std::move(result.ptx);
    return kernel;
  }
  kernel.cubin = std::move(result.cubin);
  kernel.ptxasLog = result.log;
  kernel.metadata.resources = parsePtxasResources(result.log);
  return kernel;
}

FailureOr<CompiledKernel> compile(MLIRContext &context, llvm::StringRef ttir,
                                  const CompileOptions &options,
                                  llvm::StringRef bufferName) {
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(ttir, bufferName), llvm::SMLoc());
  ParserConfig config(&context);
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, config);
  if (!module)
    return failure();
  return compile(*module, options);
}

} // namespace tawa
