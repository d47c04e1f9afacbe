// Reference warp-specialized GEMM kernel (entry tawa_ref_gemm_f16). Built as
// a CUBIN for the runtime (metadata: ref_gemm.json) and linked into
// ref_gemm_test for standalone checks and timing.
#include "ref_gemm.cuh"

#include <type_traits>

using namespace tawa::device;
using namespace tawa::ref;

extern "C" __global__ void __launch_bounds__(kThreads, 1)
    tawa_ref_gemm_f16(const __grid_constant__ CUtensorMap a,
                      const __grid_constant__ CUtensorMap b,
                      const __grid_constant__ CUtensorMap c, int M, int N,
                      int K) {
  extern __shared__ uint8_t smemRaw[];
  uint8_t *smem = reinterpret_cast<uint8_t *>(
      (reinterpret_cast<uintptr_t>(smemRaw) + 1023) & ~uintptr_t(1023));
  uint8_t *sA = smem + kSmemA;
  uint8_t *sB = smem + kSmemB;
  MBarrier *full = reinterpret_cast<MBarrier *>(smem + kSmemBars);
  MBarrier *empty = full + kStages;

  const int mTiles = (M + kBM - 1) / kBM;
  const int nTiles = (N + kBN - 1) / kBN;
  const int tiles = mTiles * nTiles;
  const int kIters = (K + kBK - 1) / kBK;

  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      mbarrierInit(&full[s], 1);
      mbarrierInit(&empty[s], kEmptyArrivals);
    }
    fenceMBarrierInit();
    tmaPrefetchDescriptor(&a);
    tmaPrefetchDescriptor(&b);
    tmaPrefetchDescriptor(&c);
  }
  __syncthreads();

  const int wg = warpGroupIndex();
  if (wg == 0) {
    // Producer: one elected thread issues all TMA loads; the rest of the
    // warp group only hands its registers to the consumers.
    setmaxnregDec<40>();
    if (warpInGroup() == 0 && electOne()) {
      RingState<kStages> ring;
      for (int t = blockIdx.x; t < tiles; t += gridDim.x) {
        int mt, nt;
        tileCoords(t, mTiles, nTiles, mt, nt);
        for (int k = 0; k < kIters; ++k) {
          // Empty-wait parity starts at 1: a fresh barrier sits in phase 0,
          // so the first lap over the ring passes at once.
          mbarrierWait(&empty[ring.slot], ring.phase ^ 1);
          mbarrierArriveExpectTx(&full[ring.slot], kStageABytes + kStageBBytes);
          tmaLoad2D(sA + ring.slot * kStageABytes, &a, &full[ring.slot],
                    k * kBK, mt * kBM);
          tmaLoad2D(sB + ring.slot * kStageBBytes, &b, &full[ring.slot],
                    k * kBK, nt * kBN);
          ring.advance();
        }
      }
    }
    return;
  }

  setmaxnregInc<232>();
  const int cg = wg - 1; // consumer index: rows [64 cg, 64 cg + 64) of a tile
  const int tid = threadIdx.x % kWarpGroupThreads;
  const bool laneZero = threadIdx.x % 32 == 0;
  uint8_t *epi = smem + kSmemEpi + cg * kEpiBuffers * kEpiBoxBytes;
  RingState<kStages> ring;
  float acc[kBN / 2];

  for (int t = blockIdx.x; t < tiles; t += gridDim.x) {
    int mt, nt;
    tileCoords(t, mTiles, nTiles, mt, nt);

    // Main loop with MMA lag P: the wgmmas of the last P iterations stay in
    // flight while the next iteration waits for its data; the slot of
    // iteration k - P is released only after wgmmaWait<P>() retired the group
    // that read it.
    for (int k = 0; k < kIters; ++k) {
      mbarrierWait(&full[ring.slot], ring.phase);
      const uint64_t descA =
          descKMajorSw128(sA + ring.slot * kStageABytes + cg * 64 * 128);
      const uint64_t descB = descKMajorSw128(sB + ring.slot * kStageBBytes);
      wgmmaFence();
#pragma unroll
      for (int kk = 0; kk < kBK / kMmaK<MmaType::F16>; ++kk)
        wgmmaSS<kBN, MmaType::F16>(acc, descAdvance(descA, kk * 32),
                                   descAdvance(descB, kk * 32),
                                   (k > 0 || kk > 0) ? 1 : 0);
      wgmmaCommit();
      wgmmaWait<kMmaLag>();
      if (k >= kMmaLag && laneZero)
        mbarrierArrive(&empty[(ring.slot + kStages - kMmaLag) % kStages]);
      ring.advance();
    }
    wgmmaWait<0>();
    fenceFragment(acc);
    // Release the slots of the last min(P, kIters) iterations.
    for (int j = min(kMmaLag, kIters); j >= 1; --j)
      if (laneZero)
        mbarrierArrive(&empty[(ring.slot + kStages - j) % kStages]);

    // Epilogue: four 64 x 64 boxes through two swizzled buffers per consumer.
    // Before a buffer is rewritten, the TMA store that read it (two boxes ago,
    // possibly in the previous tile) must have finished reading.
    const int row0 = mt * kBM + cg * 64;
    const int barrierId = 1 + cg;
    auto storeBox = [&](auto boxTag) {
      constexpr int box = decltype(boxTag)::value;
      uint8_t *buf = epi + (box % kEpiBuffers) * kEpiBoxBytes;
      if (tid == 0)
        tmaStoreWaitRead<kEpiBuffers - 1>();
      namedBarrierSync(barrierId, kWarpGroupThreads);
      storeAccBoxSwizzled<__half, box>(acc, buf);
      fenceProxyAsyncShared();
      namedBarrierSync(barrierId, kWarpGroupThreads);
      if (tid == 0) {
        tmaStore2D(&c, buf, nt * kBN + box * 64, row0);
        tmaStoreCommit();
      }
    };
    storeBox(std::integral_constant<int, 0>{});
    storeBox(std::integral_constant<int, 1>{});
    storeBox(std::integral_constant<int, 2>{});
    storeBox(std::integral_constant<int, 3>{});
  }
  // Global writes of the last stores must land before the CTA retires.
  if (tid == 0)
    tmaStoreWait<0>();
}
