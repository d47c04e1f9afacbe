//===- CudaEmitter.h - CUDA C++ emission of warp-specialized IR -*- C++ -*-===//
//
// Translates a kernel after -tawa-aref-lowering -tawa-layout-assignment into
// CUDA C++ over the tawa device library (include/tawa/device) plus its launch
// metadata (docs/METADATA.md).
//
//===----------------------------------------------------------------------===//

#ifndef TAWA_TARGET_CUDAEMITTER_H
#define TAWA_TARGET_CUDAEMITTER_H

#include "mlir/Support/LogicalResult.h"
#include "tawa/Dialect/TT/TTDialect.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

namespace tawa {

/// Writes the kernel `func` as CUDA C++ to `source` and its metadata JSON
/// (naming `cubinName` as the CUBIN) to `metadataJson`. Constructs outside
/// the supported scope are reported as errors at the user's source line and
/// make the result a failure; nothing is written then.
mlir::LogicalResult emitCuda(tt::FuncOp func, llvm::raw_ostream &source,
                             llvm::raw_ostream &metadataJson,
                             llvm::StringRef cubinName);

} // namespace tawa

#endif // TAWA_TARGET_CUDAEMITTER_H
