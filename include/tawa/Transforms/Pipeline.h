//===- Pipeline.h - tawa's pass pipelines, assembled in one place -*- C++ -*-===//
//
// tawac, tawa::compile and the checkers must run the very same passes for a
// given set of options; these builders are the one definition of that list.
//
//===----------------------------------------------------------------------===//

#ifndef TAWA_TRANSFORMS_PIPELINE_H
#define TAWA_TRANSFORMS_PIPELINE_H

#include "mlir/Pass/PassManager.h"

#include <cstdint>
#include <string>

namespace tawa {

/// The knobs of DESIGN.md §1. 0 / -1 let the compiler choose.
struct WarpSpecializationOptions {
  /// Slots D of every aref ring fed inside a loop; 0: the most, up to 4,
  /// that fit in shared memory.
  int64_t arefDepth = 0;
  /// Products P in flight in the MMA pipeline (P < D); -1: 1 where D > 1.
  int64_t mmaDepth = -1;
  /// Consumer warp groups, 1 to 3; 0: 2 when one group's share of the
  /// accumulator would exceed 128 registers per thread, else 1.
  int64_t consumerGroups = 0;
  /// Ping-pong consumers: two partitions of one warp group each, on
  /// alternate tiles (needs a tile loop: a persistent kernel). 1 on, 0 off,
  /// -1: where a tile's accumulators fit one group and consumerGroups is 0.
  int64_t pingpong = -1;
  /// Where the MMA pipeline depth comes from when mmaDepth is -1: the
  /// heuristic, or Twill's optimal schedule of the main loop.
  enum class Schedule { Heuristic, Optimal };
  Schedule schedule = Schedule::Heuristic;
  /// Make a kernel of one program per tile persistent (one CTA per SM
  /// walking the program grid) unless it walks program ids itself.
  bool persistent = true;
  /// Run programs of adjacent x (or y) in pairs that share the tiles both
  /// load (-tawa-program-pairing). X and Y need `persistent`: tawa::compile
  /// refuses them without it. Auto pairs along y where the pair's products
  /// fuse into one wgmma of twice the width (128 x 128 tiles), in persistent
  /// kernels with two cooperative consumer groups (consumerGroups 0 or 2,
  /// pingpong not forced) only, and leaves other kernels unchanged.
  enum class PairPrograms { Off, X, Y, Auto };
  PairPrograms pairPrograms = PairPrograms::Auto;
  /// Walk a user's row-major persistent tile loop in groups of this many
  /// tile rows (-tawa-tile-swizzle, guarded at run time); 1 keeps the
  /// user's order.
  int64_t tileSwizzle = 8;
  /// Pipeline attention-shaped loops at coarse grain (-tawa-coarse-pipeline,
  /// Tawa Algorithm 1): the next block's scores issued before this block's
  /// softmax completes.
  bool coarsePipeline = true;
  /// Two cooperative consumer groups take turns issuing a coarse-pipelined
  /// loop's products (warp-group ping-pong).
  bool issueTurns = true;
  /// A persistent kernel whose programs' work grows with program_id(0)
  /// (causal attention) walks x from the largest down.
  bool heavyFirst = true;
  /// A persistent kernel whose loops load data indexed by program_id(y)
  /// alone (attention's K and V) walks x fastest, so that a wave shares it.
  bool streamOrder = true;
  /// Split a loop whose select mask is all true on a prefix of its
  /// iterations (-tawa-masked-loop-split: causal attention's off-band key
  /// blocks run without the mask).
  bool splitMaskedLoops = true;
  /// How: "guard" (one loop, the mask under a branch on the induction
  /// variable) or "split" (two loops).
  std::string maskedLoopMode = "guard";
  /// Reduce raw scores before scaling them where that is exact
  /// (-tawa-scaled-row-max: a row max of x * c as max(x) * c for c > 0).
  bool scaledRowMax = true;
  /// Run 192 query rows per program on three consumer groups where a
  /// persistent attention kernel's 128 rows are independent and the groups'
  /// registers hold them (-tawa-row-block-widening: head dimension 64).
  bool widenRows = true;
};

/// tl.assume's hints dropped (-tawa-drop-assumptions), then the
/// supported-subset check (module level).
void addSupportedSubsetCheck(mlir::OpPassManager &pm);

/// The passes that shape a kernel's programs before it is split into
/// partitions: tile swizzle, program pairing and persistence (as the
/// options say), then the partition annotation. The main loop they leave is
/// the one -tawa-optimal-schedule solves.
void addProgramPasses(mlir::OpPassManager &pm,
                      const WarpSpecializationOptions &options);

/// addProgramPasses, then the optimal schedule (where asked for), loop
/// distribution, the MMA pipeline schedule and its expansion, then
/// canonicalization: the
/// `--emit=ws-ir` stage.
void addWarpSpecializationPasses(mlir::OpPassManager &pm,
                                 const WarpSpecializationOptions &options);

/// Aref lowering and layout assignment: the IR the CUDA emitter reads.
/// Arefs to rings and barriers, layouts; then, for `cluster` 2 (required)
/// or -1 (where the kernel allows), 2-CTA clusters with TMA multicast
/// (-tawa-cluster-multicast); 1: one-CTA launches.
void addLoweringPasses(mlir::OpPassManager &pm, int64_t cluster = 1);

} // namespace tawa

#endif // TAWA_TRANSFORMS_PIPELINE_H
