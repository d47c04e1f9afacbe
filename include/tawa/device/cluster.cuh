// Thread-block clusters (sm_90): a CTA's rank, the cluster-wide barrier,
// arrivals on a peer CTA's mbarrier, and TMA loads multicast into every CTA
// of a cluster. Kernels that use them must be launched with a cluster
// dimension (metadata "cluster"), and every CTA must still be resident when a
// peer touches its shared memory: bracket the kernel with clusterSync().
#pragma once
#include "tawa/device/mbarrier.cuh"
#include "tawa/device/sync.cuh"

namespace tawa::device {

/// This CTA's rank in its cluster (0 .. cluster size - 1).
__device__ __forceinline__ uint32_t clusterCtaRank() {
  uint32_t rank;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(rank));
  return rank;
}

/// Every thread of every CTA of the cluster arrives and waits. Release /
/// acquire at cluster scope: mbarrier initializations (after
/// fenceMBarrierInit) and shared-memory writes before it are visible to the
/// peers after it. Called by all threads of the CTA; not the .aligned form,
/// which would also require each warp to be converged.
__device__ __forceinline__ void clusterSync() {
  asm volatile("barrier.cluster.arrive.release;\n"
               "barrier.cluster.wait.acquire;\n" ::
                   : "memory");
}

/// Arrival on the mbarrier at the same shared-memory offset as `bar` in the
/// cluster's CTA `ctaRank` (which may be this CTA). The default semantics
/// (release at CTA scope) suffice for a slot release after wgmma.wait: the
/// reads being released are complete, and the peer's overwrite is a TMA
/// copy issued after it observes the phase. The .cluster-scope release
/// would add a GPU-wide memory barrier to every arrival.
__device__ __forceinline__ void mbarrierArriveCluster(MBarrier *bar,
                                                      uint32_t ctaRank) {
  asm volatile("{\n.reg .b32 remote;\n"
               "mapa.shared::cluster.u32 remote, %0, %1;\n"
               "mbarrier.arrive.shared::cluster.b64 _, [remote];\n}\n" ::"r"(
                   smemAddr(bar)),
               "r"(ctaRank)
               : "memory");
}

/// 2D box load (c0 innermost) written to `dst`'s offset in every CTA of
/// `ctaMask` (bit i: rank i), each copy completing its bytes on the mbarrier
/// at `bar`'s offset in that CTA. Each receiving CTA announces the bytes it
/// receives with mbarrierArriveExpectTx; a copy may land before that
/// announcement (the phase cannot complete while the announcing arrival is
/// pending).
__device__ __forceinline__ void tmaLoad2DMulticast(void *dst,
                                                   const CUtensorMap *map,
                                                   MBarrier *bar, int c0,
                                                   int c1, uint16_t ctaMask) {
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::"
               "complete_tx::bytes.multicast::cluster [%0], [%1, {%3, %4}], "
               "[%2], %5;\n" ::"r"(smemAddr(dst)),
               "l"(map), "r"(smemAddr(bar)), "r"(c0), "r"(c1), "h"(ctaMask)
               : "memory");
}

} // namespace tawa::device
