// mbarrier ring protocol (DESIGN.md §2.2) across thousands of ring laps:
// one producer warp and C consumer warps share a D-slot ring with full/empty
// barriers. The producer writes each slot with ordinary stores (or a TMA load
// with expect_tx), consumers check every value and release the slot. Random
// per-lap delays shuffle the interleavings; any overwrite of an unconsumed
// slot or read of an unfilled one shows up as a wrong value.
#include "common.cuh"
#include "tawa/device/device.cuh"

using namespace tawa::device;
using namespace tawa::test;

namespace {

constexpr int kSlotWords = 32;

__device__ uint32_t expected(uint32_t lap, uint32_t lane, uint32_t seed) {
  return (lap * 2654435761u) ^ (lane * 40503u) ^ seed;
}

/// Busy-waits a pseudo-random number of cycles (0..mask).
__device__ void jitter(uint32_t &state, uint32_t mask) {
  state = state * 1664525u + 1013904223u;
  const long long until = clock64() + ((state >> 8) & mask);
  while (clock64() < until) {
  }
}

/// Arrival modes for the empty barrier: one per consumer thread, or one per
/// consumer warp from lane 0 after __syncwarp.
template <int D, bool PerThreadRelease>
__global__ void ringKernel(int consumers, int laps, uint32_t seed,
                           unsigned long long *checksums, int *errors) {
  __shared__ uint32_t data[D][kSlotWords];
  __shared__ MBarrier full[D], empty[D];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (threadIdx.x == 0) {
    for (int s = 0; s < D; ++s) {
      mbarrierInit(&full[s], 32); // every producer lane arrives
      mbarrierInit(&empty[s], PerThreadRelease ? 32 * consumers : consumers);
    }
    fenceMBarrierInit();
  }
  __syncthreads();
  uint32_t rng = seed ^ (threadIdx.x * 7919u);
  if (warp == 0) {
    RingState<D> ring;
    for (int lap = 0; lap < laps; ++lap) {
      mbarrierWait(&empty[ring.slot], ring.phase ^ 1);
      jitter(rng, 255);
      data[ring.slot][lane] = expected(lap, lane, seed);
      mbarrierArrive(&full[ring.slot]);
      ring.advance();
    }
  } else {
    RingState<D> ring;
    unsigned long long sum = 0;
    int bad = 0;
    for (int lap = 0; lap < laps; ++lap) {
      mbarrierWait(&full[ring.slot], ring.phase);
      const uint32_t v = data[ring.slot][lane];
      bad += v != expected(lap, lane, seed);
      sum += v;
      jitter(rng, 511);
      if (PerThreadRelease) {
        mbarrierArrive(&empty[ring.slot]);
      } else {
        __syncwarp();
        if (lane == 0)
          mbarrierArrive(&empty[ring.slot]);
      }
      ring.advance();
    }
    checksums[threadIdx.x - 32] = sum;
    atomicAdd(errors, bad);
  }
}

/// TMA-fed ring: each lap the producer loads a 16 x 64 f16 box (tile index
/// lap mod tiles) with arrive.expect_tx; consumers check the swizzled bytes.
template <int D>
__global__ void tmaRingKernel(const __grid_constant__ CUtensorMap map,
                              const uint16_t *src, int tiles, int laps,
                              int consumers, int *errors, int *done) {
  constexpr int kRows = 16, kCols = 64;
  __shared__ alignas(1024) uint16_t buf[D][kRows * kCols];
  __shared__ MBarrier full[D], empty[D];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (threadIdx.x == 0) {
    for (int s = 0; s < D; ++s) {
      mbarrierInit(&full[s], 1);
      mbarrierInit(&empty[s], consumers);
    }
    fenceMBarrierInit();
  }
  __syncthreads();
  if (warp == 0) {
    if (electOne()) {
      RingState<D> ring;
      for (int lap = 0; lap < laps; ++lap) {
        mbarrierWait(&empty[ring.slot], ring.phase ^ 1);
        mbarrierArriveExpectTx(&full[ring.slot], kRows * kCols * 2);
        tmaLoad2D(buf[ring.slot], &map, &full[ring.slot], 0,
                  (lap % tiles) * kRows);
        ring.advance();
      }
    }
  } else {
    RingState<D> ring;
    int bad = 0;
    for (int lap = 0; lap < laps; ++lap) {
      mbarrierWait(&full[ring.slot], ring.phase);
      const int tile = lap % tiles;
      for (int e = lane; e < kRows * kCols; e += 32) {
        const int r = e / kCols, col = e % kCols;
        const uint16_t got = buf[ring.slot][swizzle128Offset(r, 2 * col) / 2];
        bad += got != src[(tile * kRows + r) * kCols + col];
      }
      __syncwarp();
      if (lane == 0)
        mbarrierArrive(&empty[ring.slot]);
      ring.advance();
    }
    atomicAdd(errors, bad);
    if (lane == 0)
      atomicAdd(done, 1);
  }
}

template <int D, bool PerThread>
void runRing(Report &rep, int consumers, int laps, uint32_t seed) {
  char name[96];
  std::snprintf(name, sizeof name, "mbarrier_ring_D%d_consumers%d_%s_laps%d", D,
                consumers, PerThread ? "thread_release" : "warp_release", laps);
  unsigned long long *dSums;
  int *dErr;
  const int n = 32 * consumers;
  TAWA_CHECK_CUDA(cudaMalloc(&dSums, n * 8));
  TAWA_CHECK_CUDA(cudaMalloc(&dErr, 4));
  TAWA_CHECK_CUDA(cudaMemset(dSums, 0xFF, n * 8)); // poison
  TAWA_CHECK_CUDA(cudaMemset(dErr, 0, 4));
  ringKernel<D, PerThread>
      <<<1, 32 * (1 + consumers)>>>(consumers, laps, seed, dSums, dErr);
  TAWA_CHECK_LAUNCH();
  std::vector<unsigned long long> sums(n);
  int err;
  TAWA_CHECK_CUDA(
      cudaMemcpy(sums.data(), dSums, n * 8, cudaMemcpyDeviceToHost));
  TAWA_CHECK_CUDA(cudaMemcpy(&err, dErr, 4, cudaMemcpyDeviceToHost));
  TAWA_CHECK_CUDA(cudaFree(dSums));
  TAWA_CHECK_CUDA(cudaFree(dErr));
  int badSums = 0;
  for (int t = 0; t < n; ++t) {
    unsigned long long want = 0;
    const uint32_t lane = t % 32;
    for (uint32_t lap = 0; lap < uint32_t(laps); ++lap)
      want += (lap * 2654435761u) ^ (lane * 40503u) ^ seed;
    badSums += sums[t] != want;
  }
  if (err || badSums)
    rep.fail(name, "%d wrong slot reads, %d wrong checksums", err, badSums);
  else
    rep.pass(name);
}

template <int D>
void runTmaRing(Report &rep, int consumers, int laps, std::mt19937_64 &rng) {
  char name[96];
  std::snprintf(name, sizeof name, "mbarrier_tma_ring_D%d_consumers%d_laps%d",
                D, consumers, laps);
  const int tiles = 37, rows = tiles * 16, cols = 64;
  std::vector<uint16_t> h(rows * cols);
  for (auto &x : h)
    x = static_cast<uint16_t>(rng());
  uint16_t *d;
  int *dErr, *dDone;
  TAWA_CHECK_CUDA(cudaMalloc(&d, h.size() * 2));
  TAWA_CHECK_CUDA(cudaMalloc(&dErr, 4));
  TAWA_CHECK_CUDA(cudaMalloc(&dDone, 4));
  TAWA_CHECK_CUDA(
      cudaMemcpy(d, h.data(), h.size() * 2, cudaMemcpyHostToDevice));
  TAWA_CHECK_CUDA(cudaMemset(dErr, 0, 4));
  TAWA_CHECK_CUDA(cudaMemset(dDone, 0, 4));
  CUtensorMap map = encodeTiled(
      CU_TENSOR_MAP_DATA_TYPE_UINT16, 2, d, {uint64_t(rows), uint64_t(cols)},
      {uint64_t(cols)}, {16, 64}, CU_TENSOR_MAP_SWIZZLE_128B);
  tmaRingKernel<D><<<1, 32 * (1 + consumers)>>>(map, d, tiles, laps, consumers,
                                                dErr, dDone);
  TAWA_CHECK_LAUNCH();
  int err, done;
  TAWA_CHECK_CUDA(cudaMemcpy(&err, dErr, 4, cudaMemcpyDeviceToHost));
  TAWA_CHECK_CUDA(cudaMemcpy(&done, dDone, 4, cudaMemcpyDeviceToHost));
  TAWA_CHECK_CUDA(cudaFree(d));
  TAWA_CHECK_CUDA(cudaFree(dErr));
  TAWA_CHECK_CUDA(cudaFree(dDone));
  if (err || done != consumers)
    rep.fail(name, "%d wrong elements, %d of %d consumer warps finished", err,
             done, consumers);
  else
    rep.pass(name);
}

} // namespace

int main() {
  const uint64_t seed = testSeed("test_mbarrier");
  std::mt19937_64 rng(seed);
  TAWA_CHECK_CUDA(cudaSetDevice(0));
  Report rep;
  const uint32_t s32 = static_cast<uint32_t>(rng());
  runRing<1, true>(rep, 1, 2000, s32);
  runRing<2, true>(rep, 2, 5000, s32);
  runRing<2, false>(rep, 8, 5000, s32);
  runRing<3, false>(rep, 4, 5000, s32);
  runRing<4, true>(rep, 8, 5000, s32);
  runRing<4, false>(rep, 1, 5000, s32);
  runRing<6, false>(rep, 3, 5000, s32);
  runTmaRing<2>(rep, 1, 4000, rng);
  runTmaRing<4>(rep, 8, 4000, rng);
  runTmaRing<3>(rep, 2, 4000, rng);
  return rep.exitCode();
}
