// Size of the persistent kernel's CTAs (docs/MEGAKERNEL.md, "Runtime
// protocol"): a worker runs each task with all of its warps; a scheduler CTA
// holds as many scheduler warps. 4 by default (what is measured); build with
// -DTAWA_MEGA_WARPS=8 to try more warps per task (tawa.mega:
// TAWA_MEGA_NVCC_FLAGS).
#pragma once

#ifndef TAWA_MEGA_WARPS
#define TAWA_MEGA_WARPS 4
#endif

namespace tawa::device::mega {

constexpr int kMegaWarps = TAWA_MEGA_WARPS;
constexpr int kMegaThreads = kMegaWarps * 32;
static_assert(kMegaWarps >= 1 && kMegaWarps <= 16,
              "a CTA of the mega-kernel has 1 to 16 warps");

} // namespace tawa::device::mega
