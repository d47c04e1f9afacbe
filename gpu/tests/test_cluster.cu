// Thread-block cluster primitives (cluster.cuh), every kernel launched with
// clusters of 2 CTAs along x over a grid of several clusters:
//  - clusterCtaRank: every thread reports its rank, which must be
//    blockIdx.x % 2.
//  - mbarrierArriveCluster + clusterSync: each CTA's barrier (count 64) gets
//    32 arrivals from its own CTA and 32 from its peer. Rank 0 sends its peer
//    arrivals first; the clusterSync steps make it deterministic that rank
//    1's phase then completes while rank 0's (32 of 64) must not, which also
//    catches arrivals landing in the wrong CTA. Then rank 1 sends its own.
//  - tmaLoad2DMulticast: rank r loads rows [128r, 128r + 128) of the
//    cluster's 256 x 64 f16 tile into both CTAs; each CTA's poisoned shared
//    memory must then hold the whole 128B-swizzled tile.
// Waits are bounded, so that a lost arrival or copy fails instead of hanging.
#include "common.cuh"
#include "tawa/device/device.cuh"

using namespace tawa::device;
using namespace tawa::test;

namespace {

constexpr int kClusterX = 2;
constexpr uint16_t kPoison = 0xDEAD;

/// mbarrierWait with a deadline (about a second of SM clock).
__device__ bool waitBounded(MBarrier *bar, uint32_t parity) {
  const long long deadline = clock64() + (1ll << 31);
  while (!mbarrierTryWait(bar, parity))
    if (clock64() > deadline)
      return false;
  return true;
}

__global__ void rankKernel(uint32_t *ranks) {
  ranks[blockIdx.x * blockDim.x + threadIdx.x] = clusterCtaRank();
}

/// Status bits per thread: 1 = the mid-way check held, 2 = phase 0 completed.
/// 64 threads: 0..31 arrive on the peer's barrier, 32..63 on their own.
__global__ void arriveKernel(int *status) {
  __shared__ MBarrier bar;
  const uint32_t rank = clusterCtaRank();
  const bool toPeer = threadIdx.x < 32;
  if (threadIdx.x == 0) {
    mbarrierInit(&bar, 64);
    fenceMBarrierInit();
  }
  clusterSync(); // both barriers initialized and visible to the peer
  if (!toPeer || rank == 0)
    mbarrierArriveCluster(&bar, toPeer ? rank ^ 1 : rank);
  clusterSync(); // rank 1: 64 of 64 arrivals issued; rank 0: 32 of 64
  int s = 0;
  if (rank == 0)
    s |= (threadIdx.x == 0 && mbarrierTryWait(&bar, 0)) ? 0 : 1;
  else
    s |= waitBounded(&bar, 0) ? 1 : 0;
  clusterSync(); // rank 0 has checked before rank 1 releases its phase
  if (toPeer && rank == 1)
    mbarrierArriveCluster(&bar, rank ^ 1);
  s |= waitBounded(&bar, 0) ? 2 : 0;
  status[blockIdx.x * blockDim.x + threadIdx.x] = s;
  clusterSync(); // no CTA exits while its peer may still arrive on it
}

/// Cluster c loads rows [256c, 256c + 256) of a 64-column f16 tensor; each CTA
/// dumps its 32 KiB of shared memory.
__global__ void multicastKernel(const __grid_constant__ CUtensorMap map,
                                uint16_t *dump, int *done) {
  constexpr int kHalfElems = 128 * 64, kTileElems = kClusterX * kHalfElems;
  __shared__ alignas(1024) uint16_t tile[kTileElems];
  __shared__ MBarrier bar;
  const uint32_t rank = clusterCtaRank();
  const int cluster = blockIdx.x / kClusterX;
  // Poison shared memory so that bytes TMA failed to write are visible.
  for (int i = threadIdx.x; i < kTileElems; i += blockDim.x)
    tile[i] = kPoison;
  fenceProxyAsyncShared(); // generic writes before the async-proxy overwrite
  if (threadIdx.x == 0) {
    mbarrierInit(&bar, 1);
    fenceMBarrierInit();
  }
  clusterSync(); // the peer's barrier is initialized and its tile poisoned
  if (threadIdx.x == 0) {
    mbarrierArriveExpectTx(&bar, kTileElems * 2); // both halves land here
    tmaLoad2DMulticast(tile + rank * kHalfElems, &map, &bar, 0,
                       cluster * 256 + rank * 128, 0b11);
  }
  const bool ok = waitBounded(&bar, 0);
  for (int i = threadIdx.x; i < kTileElems; i += blockDim.x)
    dump[size_t(blockIdx.x) * kTileElems + i] = tile[i];
  if (ok)
    atomicAdd(&done[blockIdx.x], 1);
  clusterSync(); // no CTA exits while the peer's copy may still write to it
}

/// Launches `kernel` with clusters of kClusterX CTAs along x.
template <typename Kernel, typename... Args>
void launchClusters(Kernel kernel, int ctas, int threads, Args... args) {
  cudaLaunchAttribute attr;
  attr.id = cudaLaunchAttributeClusterDimension;
  attr.val.clusterDim.x = kClusterX;
  attr.val.clusterDim.y = 1;
  attr.val.clusterDim.z = 1;
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(ctas);
  config.blockDim = dim3(threads);
  config.attrs = &attr;
  config.numAttrs = 1;
  TAWA_CHECK_CUDA(cudaLaunchKernelEx(&config, kernel, args...));
  TAWA_CHECK_LAUNCH();
}

void runRank(Report &rep, int ctas) {
  char name[64];
  std::snprintf(name, sizeof name, "cluster_cta_rank_grid%d", ctas);
  const int threads = 64, n = ctas * threads;
  uint32_t *d;
  TAWA_CHECK_CUDA(cudaMalloc(&d, n * 4));
  TAWA_CHECK_CUDA(cudaMemset(d, 0xFF, n * 4)); // poison
  launchClusters(rankKernel, ctas, threads, d);
  std::vector<uint32_t> h(n);
  TAWA_CHECK_CUDA(cudaMemcpy(h.data(), d, n * 4, cudaMemcpyDeviceToHost));
  TAWA_CHECK_CUDA(cudaFree(d));
  int bad = 0;
  for (int i = 0; i < n; ++i)
    bad += h[i] != uint32_t(i / threads % kClusterX);
  if (bad)
    rep.fail(name, "%d of %d threads saw a wrong rank", bad, n);
  else
    rep.pass(name);
}

void runArrive(Report &rep, int ctas) {
  char name[64];
  std::snprintf(name, sizeof name, "cluster_mbarrier_arrive_remote_grid%d",
                ctas);
  const int threads = 64, n = ctas * threads;
  int *d;
  TAWA_CHECK_CUDA(cudaMalloc(&d, n * 4));
  TAWA_CHECK_CUDA(cudaMemset(d, 0, n * 4)); // a thread that never wrote fails
  launchClusters(arriveKernel, ctas, threads, d);
  std::vector<int> h(n);
  TAWA_CHECK_CUDA(cudaMemcpy(h.data(), d, n * 4, cudaMemcpyDeviceToHost));
  TAWA_CHECK_CUDA(cudaFree(d));
  int early = 0, late = 0, stuck = 0; // CTAs
  for (int b = 0; b < ctas; ++b) {
    int all = 3;
    for (int t = 0; t < threads; ++t)
      all &= h[b * threads + t];
    if (!(all & 1) && b % kClusterX == 0)
      ++early;
    if (!(all & 1) && b % kClusterX == 1)
      ++late;
    stuck += !(all & 2);
  }
  if (early || late || stuck)
    rep.fail(name,
             "%d rank-0 CTAs completed with 32 of 64 arrivals, %d rank-1 CTAs "
             "did not complete with 64 of 64, %d CTAs never completed",
             early, late, stuck);
  else
    rep.pass(name);
}

void runMulticast(Report &rep, int clusters, std::mt19937_64 &rng) {
  char name[64];
  const int rows = clusters * 256, cols = 64, ctas = clusters * kClusterX;
  const size_t tileElems = 256 * 64;
  std::snprintf(name, sizeof name, "cluster_tma2d_multicast_swizzle128_%dx%d",
                rows, cols);
  std::vector<uint16_t> h(size_t(rows) * cols);
  for (auto &v : h)
    v = static_cast<uint16_t>(rng() % 0xFFFF) | 1; // never 0, never poison
  for (auto &v : h)
    if (v == kPoison)
      v = 1;
  uint16_t *d, *dDump;
  int *dDone;
  TAWA_CHECK_CUDA(cudaMalloc(&d, h.size() * 2));
  TAWA_CHECK_CUDA(cudaMalloc(&dDump, ctas * tileElems * 2));
  TAWA_CHECK_CUDA(cudaMalloc(&dDone, ctas * 4));
  TAWA_CHECK_CUDA(
      cudaMemcpy(d, h.data(), h.size() * 2, cudaMemcpyHostToDevice));
  TAWA_CHECK_CUDA(cudaMemset(dDump, 0xFF, ctas * tileElems * 2));
  TAWA_CHECK_CUDA(cudaMemset(dDone, 0, ctas * 4));
  CUtensorMap map = encodeTiled(
      CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, d, {uint64_t(rows), uint64_t(cols)},
      {uint64_t(cols)}, {128, 64}, CU_TENSOR_MAP_SWIZZLE_128B);
  const int threads = 128;
  launchClusters(multicastKernel, ctas, threads, map, dDump, dDone);
  std::vector<uint16_t> dump(ctas * tileElems);
  std::vector<int> done(ctas);
  TAWA_CHECK_CUDA(
      cudaMemcpy(dump.data(), dDump, dump.size() * 2, cudaMemcpyDeviceToHost));
  TAWA_CHECK_CUDA(
      cudaMemcpy(done.data(), dDone, ctas * 4, cudaMemcpyDeviceToHost));
  TAWA_CHECK_CUDA(cudaFree(d));
  TAWA_CHECK_CUDA(cudaFree(dDump));
  TAWA_CHECK_CUDA(cudaFree(dDone));

  // Both CTAs of cluster c hold rows [256c, 256c + 256) as one 256-row
  // swizzled tile (each 128-row half starts on a 1024-byte atom boundary).
  size_t bad[kClusterX] = {}, poisoned = 0;
  int stuck = 0;
  for (int b = 0; b < ctas; ++b) {
    stuck += done[b] != threads;
    for (int r = 0; r < 256; ++r)
      for (int c = 0; c < cols; ++c) {
        const uint16_t want = h[(size_t(b / kClusterX) * 256 + r) * cols + c];
        const uint16_t got = dump[b * tileElems + hostSwizzle128(r, 2 * c) / 2];
        bad[b % kClusterX] += got != want;
        poisoned += got == kPoison;
      }
  }
  if (bad[0] || bad[1] || stuck)
    rep.fail(name,
             "%zu wrong elements in rank-0 CTAs, %zu in rank-1 CTAs (%zu still "
             "poisoned), %d CTAs timed out waiting",
             bad[0], bad[1], poisoned, stuck);
  else
    rep.pass(name);
}

} // namespace

int main() {
  const uint64_t seed = testSeed("test_cluster");
  std::mt19937_64 rng(seed);
  TAWA_CHECK_CUDA(cudaSetDevice(0));
  Report rep;
  runRank(rep, 8);
  runRank(rep, 132);
  runArrive(rep, 8);
  runArrive(rep, 264);
  runMulticast(rep, 1, rng);
  runMulticast(rep, 4, rng);
  runMulticast(rep, 66, rng);
  return rep.exitCode();
}
