//===- Partition.h - the partition attributes passes exchange --*- C++ -*-===//
//
// PartitionAnnotation writes these attributes; LoopDistribution reads them.
// Passes talk only through IR, so these names are the whole interface.
//
//===----------------------------------------------------------------------===//

#ifndef TAWA_TRANSFORMS_PARTITION_H
#define TAWA_TRANSFORMS_PARTITION_H

#include "mlir/IR/Operation.h"
#include "llvm/ADT/StringRef.h"

namespace tawa {

/// Partition 0 is the producer warp group (TMA loads and their iteration
/// statements); partition 1 the consumer warp group(s) (tile statements and
/// the epilogue).
enum Partition : int32_t { kProducer = 0, kConsumer = 1 };

/// `array<i32: ...>` on an operation: the partitions that execute it.
inline constexpr llvm::StringLiteral kPartitionAttr = "tawa.partition";
/// `array<i32: ...>` on a loop: per loop-carried value, the bit mask
/// (1 << partition) of the partitions that carry it.
inline constexpr llvm::StringLiteral kIterArgPartitionsAttr =
    "tawa.iter_arg_partitions";

/// `i32` on an operation of a loop body: the pipeline stage it runs in (an
/// operation of stage s in iteration k works for iteration k - s).
inline constexpr llvm::StringLiteral kStageAttr = "tawa.stage";
/// `i32` on a loop: the number of pipeline stages of its body.
inline constexpr llvm::StringLiteral kNumStagesAttr = "tawa.num_stages";
/// `i32` on an operation of a loop body: its place in the expanded loop's
/// body, which runs operations by (order, position) whatever their stage
/// (-tawa-coarse-pipeline: the next block's scores issued before this
/// block's update).
inline constexpr llvm::StringLiteral kOrderAttr = "tawa.order";
/// Unit attribute on a loop: PipelineExpansion peels the first iteration's
/// early stages before the loop and the last iteration's late stages after
/// it, under a guard that the loop runs at all, instead of guarding late
/// stages inside the loop (their results, such as an accumulator, may then
/// be loop-carried).
inline constexpr llvm::StringLiteral kPeelAttr = "tawa.pipeline_peel";
/// Unit attribute on a tawa.dot_async: the cooperative consumer groups take
/// turns issuing such products (FlashAttention-3's warp-group ping-pong): a
/// group waits for its turn before the first of a run of them and passes the
/// turn after the last, through two named barriers (CUDA emission).
inline constexpr llvm::StringLiteral kIssueTurnAttr = "tawa.issue_turn";
/// On the producer ops of a ring stored transposed that the transposing
/// warps run (the staging wait, tawa.smem.transpose, their arrival): warp 0
/// of the producer issues TMA and runs ahead; warps 1.. transpose behind it.
inline constexpr llvm::StringLiteral kTransposerAttr = "tawa.transposer";

/// Unit attribute on an f32 arith.mulf that must be rounded on its own:
/// never fused into an FMA nor merged with an equal product elsewhere
/// (emitted as __fmul_rn). -tawa-scaled-row-max marks its fallback's copy of
/// a product this way, so that the original keeps one use to fuse with.
inline constexpr llvm::StringLiteral kRoundedProductAttr =
    "tawa.rounded_product";

/// Unit attribute on an scf.if whose then branch is the one expected to run
/// (-tawa-scaled-row-max's test of the scale): cost models count that
/// branch rather than the costlier one.
inline constexpr llvm::StringLiteral kExpectThenAttr = "tawa.expect_then";

/// Unit attribute on a tawa.warp_specialize whose consumer partitions take
/// alternate tiles (ping-pong): each ring slot is released by one of them.
inline constexpr llvm::StringLiteral kPingPongAttr = "tawa.pingpong";

/// On a tawa.aref.create of one 2-D tile loaded once per tile after the
/// streamed K loop (an epilogue operand): the number of column boxes (128
/// bytes wide) ArefLowering streams it in, through a ring of one box
/// (LoopDistribution: where that buys the main ring a slot).
inline constexpr llvm::StringLiteral kColumnBoxesAttr = "tawa.column_boxes";

/// Unit attribute on the loop over program indices that
/// -tawa-persistent-programs wraps around a kernel body.
inline constexpr llvm::StringLiteral kProgramLoopAttr = "tawa.program_loop";

/// i32 attribute on a kernel whose programs -tawa-program-pairing paired:
/// the axis (0 = x, 1 = y); -tawa-persistent-programs walks ceil(n / 2)
/// pairs along it.
inline constexpr llvm::StringLiteral kPairedProgramsAttr =
    "tawa.paired_programs";

/// Unit attribute on the op whose i32 result is the number of programs
/// along x that -tawa-persistent-programs walks instead of the launch's
/// (-tawa-program-pairing's pairs of a 1-D tile map). Computed from the
/// kernel's arguments and tt.get_num_programs alone.
inline constexpr llvm::StringLiteral kProgramCountAttr = "tawa.program_count";

/// Unit attribute on the op whose i32 result is a kernel's tile index where
/// -tawa-tile-loop-programs turned its own tile loop into programs (the
/// value the kernel's tile map reads in place of program_id(0)).
inline constexpr llvm::StringLiteral kTileIndexAttr = "tawa.tile_index";

/// Integer attribute (the group's tile rows) on a kernel whose own tile
/// walk -tawa-tile-swizzle reordered for L2 reuse.
inline constexpr llvm::StringLiteral kTileSwizzleAttr = "tawa.tile_swizzle";

/// Whether `func` walks program ids itself: a loop that stores results and
/// whose lower bound or initial loop-carried values derive from
/// `tt.get_program_id` (the user's persistent and grouped GEMMs; not a K
/// loop starting at a program-dependent position).
bool walksProgramsItself(mlir::Operation *func);

/// Whether `v` is computed from a tt.get_program_id (through any ops).
bool derivesFromProgramId(mlir::Value v);

/// Whether `op` is annotated as executing in partition `p`.
bool isInPartition(mlir::Operation *op, int32_t p);

/// The cooperative consumer warp groups chosen when none are asked for (and
/// no ping-pong): 2 where the accumulators live at once under `root` (those
/// one loop carries, together) take more than 128 fp32 registers per thread
/// of one group and every accumulator splits into 64-row halves, else 1.
/// LoopDistribution applies it; OptimalSchedule, which runs before, costs
/// accumulators with it.
int64_t defaultConsumerGroups(mlir::Operation *root);

} // namespace tawa

#endif // TAWA_TRANSFORMS_PARTITION_H
