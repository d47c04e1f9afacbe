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

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tawa {

/// One kernel parameter of the launch metadata (docs/METADATA.md).
struct KernelParam {
  std::string name;
  std::string kind;  ///< tensormap, ptr, i32, i64, f32
  std::string dtype; ///< tensormap only
  std::vector<int64_t> box;
  /// tensormap only: TMA's swizzle of the box in shared memory ("128B",
  /// "64B", "32B").
  std::string swizzle;
  /// tensormap only: the descriptor's block (the tile one access moves,
  /// outermost first), of which the box may be a fraction; "_block" in the
  /// JSON.
  std::vector<int64_t> block;
  int64_t axis = 0; ///< num_programs only: 0, 1, 2 for x, y, z
};

/// ptxas's resource report for the compiled kernel.
struct KernelResources {
  int64_t registers = -1;
  int64_t spillStoreBytes = 0, spillLoadBytes = 0;
  int64_t stackBytes = 0;
  /// ptxas's "Potential Performance Loss" reports, e.g. "C7515" (wgmma
  /// serialized because other instructions write an accumulator in flight):
  /// the message codes, in the log's order.
  std::vector<std::string> performanceWarnings;
};

/// What a launcher needs to know of an emitted kernel, plus the choices the
/// compiler made (written under "_tawa", which readers may ignore).
struct KernelMetadata {
  std::string kernel;
  int64_t threads = 0;
  int64_t dynamicSmemBytes = 0;
  std::vector<KernelParam> params;
  int64_t arefDepth = 0, mmaDepth = 0, consumerGroups = 0;
  /// The MMA depth of each version of a loop, where a loop has several
  /// (the default pipeline versions the K loop on its trip count).
  std::vector<int64_t> mmaDepthVersions;
  /// A persistent kernel walking the caller's program grid (grid kind
  /// "programs"), rather than one CTA per program ("explicit").
  bool programsGrid = false;
  /// Two consumer partitions on alternate tiles (ping-pong).
  bool pingpong = false;
  /// CTAs per cluster along x (2: -tawa-cluster-multicast).
  int64_t cluster = 1;
  /// Programs of adjacent x run in pairs (-tawa-program-pairing).
  bool pairedPrograms = false;
  /// Tile rows per group of the kernel's own tile walk, reordered by
  /// -tawa-tile-swizzle (0: the kernel's order).
  int64_t tileSwizzle = 0;
  /// Epilogue boxes per fragment stored during the next tile's K loop
  /// (CudaEmitOptions::epilogueOverlap as applied; 0: none).
  int64_t epilogueOverlap = 0;
  std::optional<KernelResources> resources;
  /// Emitted as a mega-kernel task (CudaEmitOptions::megaTask): `kernel` is
  /// then the namespace tawa::generated::<kernel> of its task function.
  bool megaTask = false;
};

/// Writes the kernel `func` as CUDA C++ to `source` and returns its launch
/// metadata. Constructs outside the supported scope are reported as errors
/// at the user's source line and make the result a failure; nothing is
/// written then.
/// Choices of the CUDA emitter itself.
struct CudaEmitOptions {
  /// Epilogue boxes (64 x 64 each) of every 64-row accumulator fragment that
  /// a persistent cooperative kernel keeps in registers, converted and
  /// packed, and stores during the next tile's first K steps, one box per
  /// step, while that tile's products run: 0 stores every box at once; -1
  /// (the default) half of them (2 of a 128 x 256 tile's 4), at most 64
  /// registers per thread.
  int64_t epilogueOverlap = -1;
  /// Keep the wait for a product that reads register operands (attention's
  /// P.V) after the row sums of the exponential tile converted into those
  /// registers next (a scheduling pin, pinAfterRowSums), so that the
  /// softmax overlaps the product: ptxas otherwise hoists the wait above it.
  bool softmaxOverlap = true;
  /// Emit the kernel as a task of the mega-kernel (docs/MEGAKERNEL.md,
  /// "Compiled tasks"): a __device__ function tawa::generated::<kernel>::task
  /// that runs one program of the kernel's grid on the calling CTA, whose
  /// program coordinates, grid and shared memory are arguments and whose
  /// tensor maps are pointers to global memory, instead of a __global__
  /// kernel. It sets up and tears down its own mbarriers, so a CTA can run
  /// it again and run other tasks in between; it leaves the registers to
  /// the kernel that calls it (no setmaxnreg). Clusters, persistent program
  /// walks and tensor maps built on the device are not supported in it.
  bool megaTask = false;
  /// The task's namespace under tawa::generated (a C++ identifier; empty:
  /// the kernel's name), so that two specializations of one kernel can be
  /// included in one mega-kernel.
  std::string taskName;
};

mlir::FailureOr<KernelMetadata> emitCuda(tt::FuncOp func,
                                         llvm::raw_ostream &source,
                                         const CudaEmitOptions &options = {});

/// The metadata as `tawa-kernel-metadata/1` JSON naming `cubinName`.
void writeMetadataJson(const KernelMetadata &metadata,
                       llvm::StringRef cubinName, llvm::raw_ostream &os);

} // namespace tawa

#endif // TAWA_TARGET_CUDAEMITTER_H
