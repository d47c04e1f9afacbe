// What issuing cp.async.bulk copies costs the issuing warp: one warp fills
// 16 KB of shared memory as 1, 2, ..., 16 copies (from lanes 0..N-1, or all
// from lane 0), from L2-resident global memory, with and without an L2
// cache policy, and reports the cycles from the barrier's arm to the last
// copy issued, and to the barrier's completion (means over 192 rounds
// after 8 warm-up rounds). The mega-kernel's linear fills a ring stage of
// 16 weight rows with one copy per row (docs/PERFORMANCE.md, run 108).
//
//   nvcc -gencode=arch=compute_90a,code=sm_90a -std=c++17 -O3 -Iinclude \
//     gpu/tools/bulk_copy_issue.cu -o /tmp/bulk_copy_issue
#include <cstdint>
#include <cstdio>

#include "tawa/device/mbarrier.cuh"
#include "tawa/device/sync.cuh"
#include "tawa/device/tma.cuh"

using namespace tawa::device;

constexpr uint32_t kStageBytes = 16384;
constexpr int kRounds = 200, kWarmup = 8;

__global__ void issueKernel(const uint8_t *src, long long *out, int copies,
                            bool oneLane, bool policy) {
  extern __shared__ __align__(128) uint8_t stage[];
  __shared__ MBarrier bar;
  const int lane = threadIdx.x % 32;
  if (threadIdx.x == 0) {
    mbarrierInit(&bar, 1);
    fenceMBarrierInit();
  }
  __syncthreads();
  if (threadIdx.x >= 32)
    return;
  const uint32_t bytes = kStageBytes / copies;
  const uint64_t evictFirst = l2EvictFirstPolicy();
  auto copy = [&](int c, int round) {
    const uint8_t *from = src + (round % 8) * kStageBytes + c * bytes;
    if (policy)
      bulkLoad(stage + c * bytes, from, bytes, &bar, evictFirst);
    else
      bulkLoad(stage + c * bytes, from, bytes, &bar);
  };
  long long issue = 0, total = 0;
  uint32_t phase = 0;
  for (int round = 0; round < kRounds; ++round) {
    const long long t0 = clock64();
    if (lane == 0)
      mbarrierArriveExpectTx(&bar, kStageBytes);
    __syncwarp();
    if (oneLane) {
      if (lane == 0)
        for (int c = 0; c < copies; ++c)
          copy(c, round);
    } else if (lane < copies) {
      copy(lane, round);
    }
    __syncwarp();
    const long long t1 = clock64();
    mbarrierWait(&bar, phase);
    phase ^= 1;
    const long long t2 = clock64();
    if (round >= kWarmup) {
      issue += t1 - t0;
      total += t2 - t0;
    }
  }
  if (lane == 0) {
    out[0] = issue / (kRounds - kWarmup);
    out[1] = total / (kRounds - kWarmup);
  }
}

int main() {
  uint8_t *src;
  long long *out, h[2];
  if (cudaMalloc(&src, 8 * kStageBytes) != cudaSuccess ||
      cudaMalloc(&out, sizeof h) != cudaSuccess) {
    std::fprintf(stderr, "cudaMalloc failed\n");
    return 1;
  }
  cudaMemset(src, 1, 8 * kStageBytes);
  cudaFuncSetAttribute(issueKernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                       kStageBytes);
  for (bool policy : {true, false})
    for (int copies : {1, 2, 4, 8, 16})
      for (bool oneLane : {false, true}) {
        if (copies == 1 && oneLane)
          continue;
        issueKernel<<<1, 128, kStageBytes>>>(src, out, copies, oneLane, policy);
        if (cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost) !=
            cudaSuccess) {
          std::fprintf(stderr, "%s\n", cudaGetErrorString(cudaGetLastError()));
          return 1;
        }
        std::printf("%s, %2d copies of %5u B from %s: issued in %5lld "
                    "cycles, landed in %5lld\n",
                    policy ? "evict-first" : "no policy  ", copies,
                    kStageBytes / copies, oneLane ? "lane 0" : "lanes ", h[0],
                    h[1]);
      }
  return 0;
}
