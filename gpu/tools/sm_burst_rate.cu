// How long a burst of weight copies takes to land when many SMs issue one at
// once, as a mega-kernel worker does when it prefetches its next linear
// tile: each CTA (one per SM: its shared memory keeps a second one out) has
// its 4 warps' lane 0 bulk-copy a quarter of `bytes` from memory (16 KB
// copies, L2 evict-first, each warp completing on its own mbarrier), and
// times it from the issue to the last copy landing. The rounds start
// together (a grid barrier) and read addresses no earlier round or CTA read,
// so every byte comes from DRAM. Prints, per (SMs, bytes): the median burst
// time over the rounds, the per-SM rate that is (bytes / time), and the
// rate of all the SMs together (their bytes over the round's span from the
// first issue to the last landing).
//
//   nvcc -gencode=arch=compute_90a,code=sm_90a -std=c++17 -O3 -Iinclude \
//     gpu/tools/sm_burst_rate.cu -o /tmp/sm_burst_rate
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "copy_rounds.cuh"
#include "tawa/device/mbarrier.cuh"
#include "tawa/device/sync.cuh"
#include "tawa/device/tma.cuh"

using namespace tawa::device;

constexpr int kThreads = 128, kWarps = kThreads / 32;
constexpr uint32_t kCopyBytes = 16384;
constexpr int kSmemBytes = 200 * 1024; // one CTA per SM
constexpr int kRounds = 24, kWarmup = 4;

__global__ void __launch_bounds__(kThreads, 1)
    burstKernel(const uint8_t *src, size_t regionBytes, uint32_t bytes,
                unsigned *arrived, unsigned long long *out) {
  extern __shared__ __align__(128) uint8_t buf[];
  __shared__ MBarrier bars[kWarps];
  __shared__ uint64_t start;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (threadIdx.x < kWarps)
    mbarrierInit(&bars[threadIdx.x], 1);
  fenceMBarrierInit();
  __syncthreads();
  const uint32_t quarter = bytes / kWarps;
  const uint64_t policy = l2EvictFirstPolicy();
  for (int r = 0; r < kRounds; ++r) {
    // Every CTA of the grid starts the round together.
    if (threadIdx.x == 0) {
      waitForRound(arrived, r);
      start = globalTimerNs();
    }
    __syncthreads();
    if (lane == 0) {
      mbarrierArriveExpectTx(&bars[warp], quarter);
      const size_t at =
          ((size_t(r) * gridDim.x + blockIdx.x) * bytes + warp * quarter) %
          regionBytes;
      for (uint32_t c = 0; c < quarter; c += kCopyBytes)
        bulkLoad(buf + warp * quarter + c, src + at + c,
                 min(kCopyBytes, quarter - c), &bars[warp], policy);
    }
    mbarrierWait(&bars[warp], r & 1);
    __syncthreads();
    if (threadIdx.x == 0) {
      const uint64_t end = globalTimerNs();
      out[2 * (size_t(r) * gridDim.x + blockIdx.x)] = start;
      out[2 * (size_t(r) * gridDim.x + blockIdx.x) + 1] = end;
    }
  }
}

int main() {
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  const size_t region = size_t(4) << 30; // far larger than L2
  uint8_t *src;
  unsigned *arrived;
  unsigned long long *out;
  if (!allocRounds(&src, region, 1, &arrived, &out, 2 * size_t(kRounds) * sms))
    return 1;
  cudaFuncSetAttribute(burstKernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                       kSmemBytes);
  std::printf("%d SMs; bursts of 16 KB bulk copies from DRAM, 4 warps a CTA, "
              "median of %d rounds\n",
              sms, kRounds - kWarmup);
  std::printf("%5s %8s %10s %12s %12s\n", "SMs", "KB", "burst us",
              "GB/s per SM", "TB/s all");
  std::vector<int> counts = {1, 16, 32, 64, 96, sms};
  for (int n : counts)
    for (uint32_t kb : {32u, 64u, 128u, 192u}) {
      cudaMemset(arrived, 0, sizeof(unsigned));
      burstKernel<<<n, kThreads, kSmemBytes>>>(src, region, kb * 1024, arrived,
                                               out);
      std::vector<unsigned long long> h(2 * size_t(kRounds) * n);
      if (cudaMemcpy(h.data(), out, h.size() * sizeof(h[0]),
                     cudaMemcpyDeviceToHost) != cudaSuccess) {
        std::fprintf(stderr, "%s\n", cudaGetErrorString(cudaGetLastError()));
        return 1;
      }
      std::vector<double> burst, all;
      for (int r = kWarmup; r < kRounds; ++r) {
        unsigned long long first = ~0ull, last = 0;
        for (int c = 0; c < n; ++c) {
          const unsigned long long s = h[2 * (size_t(r) * n + c)],
                                   e = h[2 * (size_t(r) * n + c) + 1];
          burst.push_back(double(e - s) / 1e3);
          first = std::min(first, s);
          last = std::max(last, e);
        }
        all.push_back(double(n) * kb * 1024 / (double(last - first)));
      }
      std::sort(burst.begin(), burst.end());
      std::sort(all.begin(), all.end());
      const double med = burst[burst.size() / 2];
      std::printf("%5d %8u %10.2f %12.1f %12.2f\n", n, kb, med,
                  kb * 1024 / (med * 1e3), all[all.size() / 2] / 1e3);
    }
  return 0;
}
