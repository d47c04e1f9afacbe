// Whether a batch-16 linear tile's input rows land behind its own weight
// prefetch (docs/MEGAKERNEL.md, "Next": batch 16's ready gaps). In the
// decode mega-kernel a worker bulk-copies its next tile's first weight
// stages (the ring: 72 KB at batch 16) from DRAM when its previous task
// ends, then waits for the tile's event and bulk-copies the input rows, which
// every worker reads from L2. Run 316 traced 2.1-3.6 µs from a linear task's
// start to its inputs in, where the copy alone takes 0.5-1.1 µs
// (broadcast_copy_rate.cu). Here one CTA per worker (128, all starting
// together) issues `ring` bytes of DRAM bulk copies (16 KB each, evict-first,
// addresses no earlier round read), waits `delay` ns (the event's arrival
// after the prefetch), then copies 16 input rows (the same L2-resident rows
// for every CTA) and reports the median time from that issue to the rows
// landing, for two ways of copying them:
//   bulk:     thread 0 issues one cp.async.bulk a row (the kernel today);
//   cp.async: every thread copies 16-byte pieces (cp.async.cg, LDGSTS: the
//             load/store unit's path, not the bulk-copy engine's).
//
//   nvcc -gencode=arch=compute_90a,code=sm_90a -std=c++17 -O3 -Iinclude \
//     gpu/tools/input_behind_ring.cu -o /tmp/input_behind_ring
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "copy_rounds.cuh"
#include "tawa/device/mbarrier.cuh"
#include "tawa/device/sync.cuh"
#include "tawa/device/tma.cuh"

using namespace tawa::device;

constexpr int kThreads = 128;
constexpr int kWorkers = 128;
constexpr uint32_t kRingMax = 72 * 1024, kInputMax = 128 * 1024;
constexpr int kSmemBytes = kRingMax + kInputMax;
constexpr uint32_t kCopyBytes = 16384;
constexpr int kRows = 16;
constexpr int kRounds = 40, kWarmup = 8;

__device__ __forceinline__ void cpAsync16(void *dst, const void *src) {
  asm volatile(
      "cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(smemAddr(dst)),
      "l"(src)
      : "memory");
}

__device__ __forceinline__ void cpAsyncArriveNoinc(MBarrier *bar) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(
                   smemAddr(bar))
               : "memory");
}

struct Args {
  const uint8_t *weights; ///< DRAM region, far larger than L2
  size_t weightBytes;
  const uint8_t *rows; ///< kRows input rows, L2-resident
  uint32_t rowBytes, ring, delayNs;
  bool cpAsync;
  unsigned *arrived;
  unsigned long long *out; ///< [round][cta]: input landed after its issue
};

__global__ void __launch_bounds__(kThreads, 1) behindKernel(Args a) {
  extern __shared__ __align__(128) uint8_t smem[];
  uint8_t *ring = smem, *in = smem + kRingMax;
  __shared__ MBarrier ringBar, bulkBar, asyncBar;
  __shared__ uint64_t issued;
  if (threadIdx.x == 0) {
    mbarrierInit(&ringBar, 1);
    mbarrierInit(&bulkBar, 1);
    mbarrierInit(&asyncBar, kThreads);
  }
  fenceMBarrierInit();
  __syncthreads();
  const uint64_t policy = l2EvictFirstPolicy();
  const uint32_t inBytes = kRows * a.rowBytes;
  for (int r = 0; r < kRounds; ++r) {
    if (threadIdx.x == 0) {
      waitForRound(a.arrived, r);
      if (a.ring) {
        mbarrierArriveExpectTx(&ringBar, a.ring);
        const size_t at =
            (size_t(r) * gridDim.x + blockIdx.x) * kRingMax % a.weightBytes;
        for (uint32_t c = 0; c < a.ring; c += kCopyBytes)
          bulkLoad(ring + c, a.weights + at + c, min(kCopyBytes, a.ring - c),
                   &ringBar, policy);
      }
      const uint64_t until = globalTimerNs() + a.delayNs;
      while (globalTimerNs() < until) {
      }
      issued = globalTimerNs();
    }
    __syncthreads();
    if (a.cpAsync) {
      for (uint32_t o = threadIdx.x * 16; o < inBytes; o += kThreads * 16)
        cpAsync16(in + o, a.rows + o);
      cpAsyncArriveNoinc(&asyncBar);
      mbarrierWait(&asyncBar, r & 1);
    } else {
      if (threadIdx.x == 0) {
        mbarrierArriveExpectTx(&bulkBar, inBytes);
        for (int i = 0; i < kRows; ++i)
          bulkLoad(in + i * a.rowBytes, a.rows + i * a.rowBytes, a.rowBytes,
                   &bulkBar);
      }
      mbarrierWait(&bulkBar, r & 1);
    }
    if (threadIdx.x == 0) {
      a.out[size_t(r) * gridDim.x + blockIdx.x] = globalTimerNs() - issued;
      if (a.ring)
        mbarrierWait(&ringBar, r & 1);
    }
    __syncthreads();
  }
}

int main() {
  const size_t weightBytes = size_t(2) << 30;
  uint8_t *weights, *rows;
  unsigned *arrived;
  unsigned long long *out;
  if (!allocRounds(&weights, weightBytes, 1, &arrived, &out,
                   size_t(kRounds) * kWorkers) ||
      cudaMalloc(&rows, kInputMax) != cudaSuccess)
    return 1;
  cudaMemset(rows, 2, kInputMax);
  cudaFuncSetAttribute(behindKernel,
                       cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes);
  std::printf("%d CTAs; 16 input rows from L2 after `ring` bytes of DRAM bulk "
              "copies and `delay`; median over CTAs and %d rounds of the "
              "rows' landing after their issue (us)\n",
              kWorkers, kRounds - kWarmup);
  std::printf("%8s %8s %8s %9s %9s\n", "row B", "ring KB", "delay ns", "bulk",
              "cp.async");
  for (uint32_t rowBytes : {8192u, 2048u})
    for (uint32_t ring : {0u, 32u * 1024, kRingMax})
      for (uint32_t delay : {0u, 1000u, 2000u}) {
        if (ring == 0 && delay)
          continue;
        double med[2];
        for (int mode = 0; mode < 2; ++mode) {
          cudaMemset(arrived, 0, sizeof(unsigned));
          Args a{weights, weightBytes, rows,    rowBytes, ring,
                 delay,   mode == 1,   arrived, out};
          behindKernel<<<kWorkers, kThreads, kSmemBytes>>>(a);
          std::vector<unsigned long long> h(size_t(kRounds) * kWorkers);
          if (cudaMemcpy(h.data(), out, h.size() * sizeof(h[0]),
                         cudaMemcpyDeviceToHost) != cudaSuccess) {
            std::fprintf(stderr, "%s\n",
                         cudaGetErrorString(cudaGetLastError()));
            return 1;
          }
          std::vector<double> t(h.begin() + size_t(kWarmup) * kWorkers,
                                h.end());
          std::sort(t.begin(), t.end());
          med[mode] = t[t.size() / 2] / 1e3;
        }
        std::printf("%8u %8u %8u %9.2f %9.2f\n", rowBytes, ring / 1024, delay,
                    med[0], med[1]);
      }
  return 0;
}
