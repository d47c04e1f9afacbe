//===- Compile.h - tawa::compile, the compiler as a library -----*- C++ -*-===//
//
// TTIR in, a warp-specialized sm_90a kernel out: the whole pipeline of
// DESIGN.md §2 behind one call, as tawac runs it.
//
//   mlir::MLIRContext ctx;  tawa::registerAllDialects(...)
//   tawa::CompileOptions options;            // defaults chosen by tawa
//   auto kernel = tawa::compile(ctx, ttirText, options);
//   if (succeeded(kernel)) write(kernel->cubin), write(kernel->metadataJson)
//
// Diagnostics (at the user's source lines) go to the context's handlers.
//
//===----------------------------------------------------------------------===//

#ifndef TAWA_DRIVER_COMPILE_H
#define TAWA_DRIVER_COMPILE_H

#include "tawa/Target/CudaEmitter.h"
#include "tawa/Transforms/Pipeline.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/StringRef.h"

#include <string>
#include <vector>

namespace tawa {

/// How far compile() goes; each stage includes the ones before it.
enum class CompileStage {
  Check,   ///< verify and check the supported subset
  WsIr,    ///< warp-specialized IR (arefs, pipelined loops)
  Lowered, ///< arefs lowered to rings and mbarriers, layouts assigned
  Cuda,    ///< CUDA C++ over the device library, and launch metadata
  Ptx,     ///< NVRTC: PTX for the target architecture
  Cubin,   ///< NVRTC + ptxas: a CUBIN, and ptxas's resource report
};

struct CompileOptions {
  WarpSpecializationOptions warpSpecialization;
  CompileStage stage = CompileStage::Cubin;
  /// CTAs per cluster: 2 runs a persistent kernel as 2-CTA clusters whose
  /// CTAs share loaded tiles through TMA multicast (an error where the
  /// kernel does not allow it), -1 where the kernel allows it, 1 never (the
  /// default: measured 1-4% slower on the H100 so far, docs/PERFORMANCE.md).
  int64_t cluster = 1;
  /// CUDA emission choices (the deferred epilogue).
  CudaEmitOptions emit;
  /// The CUBIN file name the metadata refers to (relative to the JSON).
  std::string cubinName = "kernel.cubin";
  /// A real architecture with the 'a' features (wgmma, setmaxnreg).
  std::string arch = "sm_90a";
};

struct CompiledKernel {
  KernelMetadata metadata;  ///< stage >= Cuda
  std::string cuda;         ///< stage >= Cuda
  std::string ptx;          ///< stage == Ptx
  std::vector<char> cubin;  ///< stage == Cubin
  std::string ptxasLog;     ///< stage == Cubin: ptxas -v output
  std::string cubinName;    ///< what the metadata names as the CUBIN
  /// The metadata as JSON (docs/METADATA.md), with the resource report once
  /// there is a CUBIN.
  std::string metadataJson() const;
};

/// Runs the pipeline on `module`, which then holds the IR of the last MLIR
/// stage reached (the input of the CUDA emitter for Cuda and beyond). The
/// module must hold exactly one kernel from stage Cuda on.
mlir::FailureOr<CompiledKernel> compile(mlir::ModuleOp module,
                                        const CompileOptions &options);

/// Parses `ttir` (as Triton prints it) and compiles it. `bufferName` names
/// the text in diagnostics that point into it.
mlir::FailureOr<CompiledKernel> compile(mlir::MLIRContext &context,
                                        llvm::StringRef ttir,
                                        const CompileOptions &options,
                                        llvm::StringRef bufferName = "<ttir>");

/// Reads registers, spill and stack bytes from ptxas -v output.
KernelResources parsePtxasResources(llvm::StringRef log);

} // namespace tawa

#endif // TAWA_DRIVER_COMPILE_H
