// Tensor maps built on the device (tt.make_tensor_descriptor): a kernel that
// learns its operands' addresses and sizes only at run time (say, from a
// table of groups) writes its own CUtensorMap into global memory and hands
// it to TMA. The fields are set with tensormap.replace on a zeroed staging
// copy in shared memory, which one warp then copies to global memory with
// the release fence of the tensormap proxy; the thread that issues TMA
// through it first executes the matching acquire.
#pragma once
#include "tawa/device/sync.cuh"
#include "tawa/device/types.cuh"

namespace tawa::device {

/// Element type codes of the tensor-map format (CUtensorMapDataType).
/// tensormap.replace's element-type codes. They follow CUtensorMapDataType
/// up to f32 (7) and differ after it: the device encoding has f32.ftz = 8,
/// f64 = 9, bf16 = 10 (the host enum: f64 = 8, bf16 = 9, f32.ftz = 10). A
/// bf16 map built with 9 is an f64 one, and TMA faults on it.
enum class TensorMapElem : uint32_t { U8 = 0, F16 = 6, F32 = 7, BF16 = 10 };

/// The SM this thread runs on (0 .. number of SMs - 1).
__device__ __forceinline__ uint32_t smId() {
  uint32_t id;
  asm volatile("mov.u32 %0, %%smid;\n" : "=r"(id));
  return id;
}

/// Writes to `map` (global, 128-byte aligned) a 2-D tiled tensor map of the
/// row-major matrix at `base`: `cols` x `rows` elements (cols contiguous),
/// rows `rowStrideBytes` apart, boxes of BoxCols x BoxRows, swizzled in
/// spans of SpanBytes (128, 64 or 32; at least a box row), out-of-bounds
/// elements read as zero. `staging` is 128 bytes of 128-byte aligned shared
/// memory owned by the calling warp. Every lane of one warp calls it,
/// converged.
template <TensorMapElem Elem, uint32_t BoxCols, uint32_t BoxRows,
          uint32_t SpanBytes = 128>
__device__ __forceinline__ void
makeTensorMap2D(CUtensorMap *map, void *staging, const void *base,
                uint32_t cols, uint32_t rows, uint64_t rowStrideBytes) {
  static_assert(SpanBytes == 128 || SpanBytes == 64 || SpanBytes == 32,
                "TMA swizzles rows in spans of 128, 64 or 32 bytes");
  // The map's swizzle mode field: 1 = 32 bytes, 2 = 64, 3 = 128.
  constexpr uint32_t kSwizzleMode = SpanBytes == 128  ? 3
                                    : SpanBytes == 64 ? 2
                                                      : 1;
  const int lane = threadIdx.x % 32;
  static_cast<uint32_t *>(staging)[lane] = 0; // 32 lanes x 4 bytes
  __syncwarp();
  if (lane == 0) {
    const uint32_t s = smemAddr(staging);
    // Rank, box sizes and dimensions are counted innermost first; the rank
    // field holds rank - 1 and the stride of dimension d + 1 is ordinal d.
    asm volatile(
        "tensormap.replace.tile.global_address.shared::cta.b1024.b64 [%0], "
        "%1;\n"
        "tensormap.replace.tile.rank.shared::cta.b1024.b32 [%0], 1;\n"
        "tensormap.replace.tile.box_dim.shared::cta.b1024.b32 [%0], 0, %2;\n"
        "tensormap.replace.tile.box_dim.shared::cta.b1024.b32 [%0], 1, %3;\n"
        "tensormap.replace.tile.global_dim.shared::cta.b1024.b32 [%0], 0, "
        "%4;\n"
        "tensormap.replace.tile.global_dim.shared::cta.b1024.b32 [%0], 1, "
        "%5;\n"
        "tensormap.replace.tile.global_stride.shared::cta.b1024.b64 [%0], 0, "
        "%6;\n"
        "tensormap.replace.tile.element_stride.shared::cta.b1024.b32 [%0], 0, "
        "1;\n"
        "tensormap.replace.tile.element_stride.shared::cta.b1024.b32 [%0], 1, "
        "1;\n"
        "tensormap.replace.tile.elemtype.shared::cta.b1024.b32 [%0], %7;\n"
        "tensormap.replace.tile.interleave_layout.shared::cta.b1024.b32 [%0], "
        "0;\n"
        "tensormap.replace.tile.swizzle_mode.shared::cta.b1024.b32 [%0], "
        "%8;\n"
        "tensormap.replace.tile.fill_mode.shared::cta.b1024.b32 [%0], 0;\n" ::
            "r"(s),
        "l"(reinterpret_cast<uint64_t>(base)), "n"(BoxCols), "n"(BoxRows),
        "r"(cols), "r"(rows), "l"(rowStrideBytes),
        "n"(static_cast<uint32_t>(Elem)), "n"(kSwizzleMode)
        : "memory");
  }
  __syncwarp();
  asm volatile("tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic."
               "release.gpu.sync.aligned [%0], [%1], 128;\n" ::"l"(map),
               "r"(smemAddr(staging))
               : "memory");
}

/// Makes a tensor map written by makeTensorMap2D visible to this thread's
/// later TMA operations (tensormap proxy acquire).
__device__ __forceinline__ void tensorMapAcquire(const CUtensorMap *map) {
  asm volatile(
      "fence.proxy.tensormap::generic.acquire.gpu [%0], 128;\n" ::"l"(map)
      : "memory");
}

} // namespace tawa::device
