// TMA (cp.async.bulk.tensor) tiled loads and stores. Tensor maps are built on
// the host (cuTensorMapEncodeTiled) and passed as __grid_constant__ kernel
// parameters; the map decides box size, 128-byte swizzle and out-of-bounds
// zero fill, so the device side only names coordinates (innermost first).
#pragma once
#include "tawa/device/mbarrier.cuh"
#include "tawa/device/types.cuh"

namespace tawa::device {

/// Pulls the descriptor into the constant cache ahead of the first copy.
__device__ __forceinline__ void tmaPrefetchDescriptor(const CUtensorMap *map) {
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(map) : "memory");
}

/// 2D box load at element coordinates (c0 innermost, c1) into `dst`
/// (1024-byte aligned for 128B swizzle); completes `bytes` on `bar`, which the
/// caller announced with mbarrierArriveExpectTx.
__device__ __forceinline__ void tmaLoad2D(void *dst, const CUtensorMap *map,
                                          MBarrier *bar, int c0, int c1) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::"
      "complete_tx::bytes [%0], [%1, {%3, %4}], [%2];\n" ::"r"(smemAddr(dst)),
      "l"(map), "r"(smemAddr(bar)), "r"(c0), "r"(c1)
      : "memory");
}

/// Bulk (non-tensor) copy of `bytes` contiguous bytes (a multiple of 16;
/// both addresses 16-byte aligned) from global memory into `dst`; completes
/// `bytes` on `bar`, which the caller announced with mbarrierArriveExpectTx.
__device__ __forceinline__ void bulkLoad(void *dst, const void *src,
                                         uint32_t bytes, MBarrier *bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::"
               "bytes [%0], [%1], %2, [%3];\n" ::"r"(smemAddr(dst)),
               "l"(src), "r"(bytes), "r"(smemAddr(bar))
               : "memory");
}

/// An L2 cache policy for data read once: its lines are the first evicted,
/// so that a stream of such data does not push out of L2 what is read again
/// (other tasks' activations, the kernel's instructions).
__device__ __forceinline__ uint64_t l2EvictFirstPolicy() {
  uint64_t policy;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;\n"
               : "=l"(policy));
  return policy;
}

/// bulkLoad with an L2 cache policy (l2EvictFirstPolicy).
__device__ __forceinline__ void bulkLoad(void *dst, const void *src,
                                         uint32_t bytes, MBarrier *bar,
                                         uint64_t policy) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::"
      "bytes.L2::cache_hint [%0], [%1], %2, [%3], %4;\n" ::"r"(smemAddr(dst)),
      "l"(src), "r"(bytes), "r"(smemAddr(bar)), "l"(policy)
      : "memory");
}

/// 3D box load (c0 innermost).
__device__ __forceinline__ void tmaLoad3D(void *dst, const CUtensorMap *map,
                                          MBarrier *bar, int c0, int c1,
                                          int c2) {
  asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::"
               "complete_tx::bytes [%0], [%1, {%3, %4, %5}], [%2];\n" ::"r"(
                   smemAddr(dst)),
               "l"(map), "r"(smemAddr(bar)), "r"(c0), "r"(c1), "r"(c2)
               : "memory");
}

/// 2D box store from shared memory; parts of the box outside the tensor are
/// not written. The writing threads must have executed
/// fenceProxyAsyncShared() and synchronized with the issuing thread.
__device__ __forceinline__ void tmaStore2D(const CUtensorMap *map,
                                           const void *src, int c0, int c1) {
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group "
               "[%0, {%2, %3}], [%1];\n" ::"l"(map),
               "r"(smemAddr(src)), "r"(c0), "r"(c1)
               : "memory");
}

/// 3D box store.
__device__ __forceinline__ void
tmaStore3D(const CUtensorMap *map, const void *src, int c0, int c1, int c2) {
  asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.bulk_group "
               "[%0, {%2, %3, %4}], [%1];\n" ::"l"(map),
               "r"(smemAddr(src)), "r"(c0), "r"(c1), "r"(c2)
               : "memory");
}

/// Closes the group of stores issued so far by this thread.
__device__ __forceinline__ void tmaStoreCommit() {
  asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
}

/// Waits until at most N committed store groups still *read* shared memory
/// (the buffers may then be overwritten; global writes may still be in
/// flight).
template <int N> __device__ __forceinline__ void tmaStoreWaitRead() {
  asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(N) : "memory");
}

/// Waits until at most N committed store groups are incomplete (global
/// memory written).
template <int N> __device__ __forceinline__ void tmaStoreWait() {
  asm volatile("cp.async.bulk.wait_group %0;\n" ::"n"(N) : "memory");
}

/// Byte offset of element (row, byte column `colByte`) inside a box written
/// by TMA with 128-byte swizzle, rows of 128 bytes: the 16-byte chunk index
/// is XORed with row mod 8. The box must start 1024-byte aligned.
__host__ __device__ constexpr uint32_t swizzle128Offset(uint32_t row,
                                                        uint32_t colByte) {
  return row * 128u + ((((colByte >> 4) ^ (row & 7u)) << 4) | (colByte & 15u));
}

/// The same for boxes whose rows are 64 or 32 bytes, in TMA's 64- and
/// 32-byte swizzles: the 16-byte chunk index is XORed with bits 7 and up of
/// the unswizzled offset (row / 2 mod 4 for 64-byte rows, row / 4 mod 2 for
/// 32-byte rows). The box must start 512- (256-) byte aligned.
template <int Span>
__host__ __device__ constexpr uint32_t swizzledOffset(uint32_t row,
                                                      uint32_t colByte) {
  static_assert(Span == 128 || Span == 64 || Span == 32,
                "TMA swizzles 128-, 64- or 32-byte spans");
  const uint32_t linear = row * Span + colByte;
  return linear ^ (((linear >> 7) & (Span / 16 - 1)) << 4);
}

} // namespace tawa::device
