// Size of the persistent kernel's CTAs (docs/MEGAKERNEL.md, "Runtime
// protocol"): a worker runs each task with all of its warps; a scheduler CTA
// holds as many scheduler warps. 4 by default (what is measured); build with
// -DTAWA_MEGA_WARPS=8 to try more warps per task (tawa.mega:
// TAWA_MEGA_NVCC_FLAGS).
#pragma once

#ifndef TAWA_MEGA_WARPS
#define TAWA_MEGA_WARPS 4
#endif

/// The attention variants compiled in: bit i of TAWA_MEGA_ATTN_GROUPS is the
/// group size 1 << i (q heads per KV head: 1, 2, 4, 8; default all), and
/// TAWA_MEGA_ATTN_ANY_HEAD_DIM 0 leaves out the path for head dimensions
/// other than 128. Each group × head-dimension variant is 70-100 KB of
/// machine code, most of the kernel's; a build for one model needs one
/// (tawa.mega builds it so: python/tawa/mega/build.py). The host refuses a
/// plan whose attention the build lacks (attentionCompiled).
#ifndef TAWA_MEGA_ATTN_GROUPS
#define TAWA_MEGA_ATTN_GROUPS 0xF
#endif
#ifndef TAWA_MEGA_ATTN_ANY_HEAD_DIM
#define TAWA_MEGA_ATTN_ANY_HEAD_DIM 1
#endif

/// 1: in batch-1 plans (which have no just-in-time tasks), linears and
/// attention poll their bf16 inputs instead of waiting for their events
/// (poll.cuh; MegaDecoder.cu says why batch 1); 0: every task waits for its
/// event (what runs 1-244 measured).
#ifndef TAWA_MEGA_POLL_INPUTS
#define TAWA_MEGA_POLL_INPUTS 1
#endif

/// 1: in plans that poll their inputs, a task whose trigger event launches
/// only polling tasks arrives with a relaxed reduction (kTaskRelaxedArrival:
/// nothing acquires through that event, so the worker does not wait for its
/// writes to reach L2); 0: every arrival releases.
#ifndef TAWA_MEGA_RELAXED_ARRIVALS
#define TAWA_MEGA_RELAXED_ARRIVALS 1
#endif

/// 1: tasks stamp their phases into the trace (TaskStamps in sync.cuh:
/// when their inputs were in, when they had computed, how long warp 0 waited
/// for weights, attention's thread 0 for its cache blocks; bench/mega_chain.py
/// --ready reads them); 0: the trace has start, end and worker only. A
/// diagnostic build: the stamps' code made the step about 4 % slower even
/// untraced (runs 255-256).
#ifndef TAWA_MEGA_TRACE_PHASES
#define TAWA_MEGA_TRACE_PHASES 0
#endif

/// k > 0 (with TAWA_MEGA_TRACE_PHASES): the trace's weight_wait_ns of a
/// task is instead the time thread 0 spent between its phase marks k - 1 (or
/// the latest mark before) and k (TAWA_MEGA_TASK_STAMP; attention: 3 its
/// block's keys waited for (with the previous block's copies issued), 4 the
/// scores, 5 the value rows permuted and the softmax, 6 P·V, 7 after its last
/// block; other tasks' column is then meaningless). A diagnostic build: one
/// phase per build.
#ifndef TAWA_MEGA_TRACE_ATTN_PHASE
#define TAWA_MEGA_TRACE_ATTN_PHASE 0
#endif

/// 1: linears with LinearParams::rowSquaresOut add the squares of the rows
/// they store into it, and an RMSNorm linear with rowSquaresIn (batch > 1)
/// reads its rows' sums there instead of squaring its input rows (run 318:
/// 8B batch 16 -2.0 %, 0.6B batch 16 -1.6 %); 0: every RMSNorm tile squares
/// its own input rows (what runs up to 317 measured).
#ifndef TAWA_MEGA_NORM_FROM_SUMS
#define TAWA_MEGA_NORM_FROM_SUMS 1
#endif

/// An attention task whose chunk has at most this many cache blocks has
/// only its first block prefetched (decodeAttentionPrefetch), and issues
/// the second once its q/k/v row is in: behind both blocks' 128 KB the row
/// lands later, which short tasks feel (batch 16 at context 512, chunks of
/// two blocks: 8B -0.5 %, 0.6B -1.8 %; run 321), while long ones lose the
/// second block's head start (8B batch 16 at context 4096, chunks of 16
/// blocks: +1.2 % with one block, run 325; two builds that behave the same
/// there differed by 2 %, run 326, so these are near the layout spread).
/// 0: always two blocks.
#ifndef TAWA_MEGA_ATTN_PREFETCH_ONE_UPTO
#define TAWA_MEGA_ATTN_PREFETCH_ONE_UPTO 4
#endif

namespace tawa::device::mega {

/// The bit of TAWA_MEGA_ATTN_GROUPS for `group` q heads per KV head, or -1
/// for a group decode attention does not take (only 1, 2, 4 and 8).
__host__ __device__ constexpr int attentionGroupBit(int group) {
  return group == 1   ? 0
         : group == 2 ? 1
         : group == 4 ? 2
         : group == 8 ? 3
                      : -1;
}

/// Whether this build has the attention of `group` q heads per KV head and
/// head dimension `headDim`.
__host__ __device__ constexpr bool attentionCompiled(int group, int headDim) {
  const int bit = attentionGroupBit(group);
  return bit >= 0 && ((TAWA_MEGA_ATTN_GROUPS) >> bit & 1) != 0 &&
         (headDim == 128 || (TAWA_MEGA_ATTN_ANY_HEAD_DIM) != 0);
}

constexpr int kMegaWarps = TAWA_MEGA_WARPS;
constexpr int kMegaThreads = kMegaWarps * 32;
static_assert(kMegaWarps >= 1 && kMegaWarps <= 16,
              "a CTA of the mega-kernel has 1 to 16 warps");

} // namespace tawa::device::mega
