// Hand-written warp-specialized reference GEMM, C = A * B^T in f16 with f32
// accumulation, written with the tawa device library the way the compiler
// emits kernels: one producer warp group feeding a D-slot aref ring through
// TMA, two cooperative consumer warp groups (64 rows of the 128 x 256 tile
// each) running wgmma with MMA lag P, and a TMA-store epilogue. Persistent:
// every CTA walks tiles blockIdx.x, blockIdx.x + gridDim.x, ... and the ring
// state carries over from tile to tile, so the producer prefetches the next
// tile while the consumers run the epilogue. See docs/DEVICE.md.
#pragma once
#include "tawa/device/device.cuh"

namespace tawa::ref {

using namespace tawa::device;

constexpr int kBM = 128, kBN = 256, kBK = 64;
// D and P can be overridden at build time for tuning experiments
// (-DTAWA_REF_STAGES=3 ...); the CUBIN and its metadata use the defaults.
#ifndef TAWA_REF_STAGES
#define TAWA_REF_STAGES 4
#endif
#ifndef TAWA_REF_MMA_LAG
#define TAWA_REF_MMA_LAG 1
#endif
constexpr int kStages = TAWA_REF_STAGES;  // D: ring depth
constexpr int kMmaLag = TAWA_REF_MMA_LAG; // P: wgmma groups left in flight
// The consumer holds P + 1 slots (P in flight, one being issued); the
// producer needs one more to make progress.
static_assert(kMmaLag >= 0 && kMmaLag < kStages, "need P < D");
constexpr int kConsumers = 2;
constexpr int kThreads = kWarpGroupThreads * (1 + kConsumers);
constexpr int kGroupM = 8; // M tiles per raster group (L2 reuse of B)

constexpr int kStageABytes = kBM * kBK * 2; // 16 KB
constexpr int kStageBBytes = kBN * kBK * 2; // 32 KB
constexpr int kEpiBoxBytes = 64 * 64 * 2;   // one 64 x 64 C box
constexpr int kEpiBuffers = 2;              // per consumer
constexpr int kSmemA = 0;
constexpr int kSmemB = kSmemA + kStages * kStageABytes;
constexpr int kSmemEpi = kSmemB + kStages * kStageBBytes;
constexpr int kSmemBars = kSmemEpi + kConsumers * kEpiBuffers * kEpiBoxBytes;
constexpr int kSmemUsed = kSmemBars + 2 * kStages * 8;
// The dynamic shared-memory base is only guaranteed 16-byte aligned; the
// kernel rounds it up to 1024 (128B-swizzle atoms), hence the slack.
constexpr int kSmemBytes = kSmemUsed + 1024;
static_assert(kSmemBytes <= 227 * 1024, "exceeds Hopper shared memory");

/// Empty-barrier arrivals per phase: one per consumer warp (lane 0, after
/// the warp's own wgmma wait retired the reads of the slot).
constexpr int kEmptyArrivals = kConsumers * 4;

/// Grouped raster: consecutive tile ids walk kGroupM tiles down M before
/// moving along N, so concurrently running CTAs share A and B panels in L2.
__device__ __forceinline__ void tileCoords(int t, int mTiles, int nTiles,
                                           int &mt, int &nt) {
  const int perGroup = kGroupM * nTiles;
  const int first = (t / perGroup) * kGroupM;
  const int size = min(mTiles - first, kGroupM);
  const int r = t % perGroup;
  mt = first + r % size;
  nt = r / size;
}

} // namespace tawa::ref

extern "C" __global__ void
tawa_ref_gemm_f16(const __grid_constant__ CUtensorMap a,
                  const __grid_constant__ CUtensorMap b,
                  const __grid_constant__ CUtensorMap c, int M, int N, int K);
