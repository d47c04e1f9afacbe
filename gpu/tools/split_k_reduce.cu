// What a split-K reduction across workers costs (docs/MEGAKERNEL.md, "Next":
// gate/up and down as one task). W writer CTAs each add a partial sum of the
// same N floats into one global accumulator, then arrive at a counter with a
// release reduction; a reader CTA polls the counter (acquire) and reads the N
// sums, as the next operator's tiles would. Timed with %globaltimer from the
// writers' common start (they spin until a start flag) to the reader's last
// read, for three ways of writing:
//   scalar: red.global.add.f32, one per output;
//   vector: red.global.add.v4.f32 (sm_90), one per 4 outputs;
//   slots:  each writer stores its partials to its own row (no reduction at
//           the writers); the reader adds the W rows itself.
// Each writer adds 1.0 to every output, so every sum must be exactly W.
//
//   nvcc -gencode=arch=compute_90a,code=sm_90a -std=c++17 -O3 -Iinclude \
//     gpu/tools/split_k_reduce.cu -o /tmp/split_k_reduce && /tmp/split_k_reduce
// With arguments WRITERS N (at most 128 and 4096) it times that point alone,
// e.g. `3 1536`: a 16-row, 96-column tile whose K is split over 3 workers.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "../tests/common.cuh"
#include "tawa/device/mega/sync.cuh"

namespace {

using tawa::device::mega::globalTimerNs;
using tawa::device::mega::loadAcquire;
using tawa::device::mega::reduceAddRelease;

constexpr int kThreads = 128;

struct Run {
  float *acc;         ///< [N] (scalar, vector) or [W][N] (slots)
  float *out;         ///< [N] the reader's sums
  uint32_t *arrivals; ///< writers that have arrived
  uint32_t *go;       ///< the start flag
  uint64_t *times;    ///< [0] start, [1] the reader's end
  int writers, n, mode;
};

__global__ void __launch_bounds__(kThreads) reduceKernel(Run r) {
  const int w = blockIdx.x;
  if (w == r.writers) { // the reader
    if (threadIdx.x == 0) {
      atomicExch(r.go, 1u);
      r.times[0] = globalTimerNs();
      while (loadAcquire(r.arrivals) < uint32_t(r.writers)) {
      }
    }
    __syncthreads();
    for (int i = threadIdx.x; i < r.n; i += kThreads) {
      float s = 0.f;
      if (r.mode == 2)
        for (int k = 0; k < r.writers; ++k)
          s += __ldcg(r.acc + size_t(k) * r.n + i);
      else
        s = __ldcg(r.acc + i);
      r.out[i] = s;
    }
    __syncthreads();
    if (threadIdx.x == 0)
      r.times[1] = globalTimerNs();
    return;
  }
  if (threadIdx.x == 0)
    while (*(volatile uint32_t *)r.go == 0) {
    }
  __syncthreads();
  if (r.mode == 0) {
    for (int i = threadIdx.x; i < r.n; i += kThreads)
      asm volatile("red.global.add.f32 [%0], %1;" ::"l"(r.acc + i), "f"(1.f)
                   : "memory");
  } else if (r.mode == 1) {
    for (int i = threadIdx.x * 4; i < r.n; i += kThreads * 4)
      asm volatile(
          "red.global.add.v4.f32 [%0], {%1, %2, %3, %4};" ::"l"(r.acc + i),
          "f"(1.f), "f"(1.f), "f"(1.f), "f"(1.f)
          : "memory");
  } else {
    for (int i = threadIdx.x * 4; i < r.n; i += kThreads * 4)
      *reinterpret_cast<float4 *>(r.acc + size_t(w) * r.n + i) =
          make_float4(1.f, 1.f, 1.f, 1.f);
  }
  __syncthreads();
  if (threadIdx.x == 0)
    reduceAddRelease(r.arrivals, 1);
}

} // namespace

int main(int argc, char **argv) {
  const char *modes[] = {"scalar red.add.f32", "vector red.add.v4.f32",
                         "slots, reader adds"};
  const int maxW = 128, maxN = 4096;
  std::vector<int> writerCounts{64, 96, 128}, outputCounts{1024, 2048, 4096};
  if (argc == 3) {
    const int w = std::atoi(argv[1]), n = std::atoi(argv[2]);
    // N a multiple of 4: the vector mode adds 4 outputs at once.
    if (w < 1 || w > maxW || n < 4 || n > maxN || n % 4 != 0) {
      std::fprintf(stderr,
                   "usage: %s [WRITERS (1-%d) N (4-%d, a multiple of 4)]\n",
                   argv[0], maxW, maxN);
      return 2;
    }
    writerCounts = {w};
    outputCounts = {n};
  } else if (argc != 1) {
    std::fprintf(stderr, "usage: %s [WRITERS N]\n", argv[0]);
    return 2;
  }
  float *acc, *out;
  uint32_t *flags;
  uint64_t *times;
  TAWA_CHECK_CUDA(cudaMalloc(&acc, sizeof(float) * maxW * maxN));
  TAWA_CHECK_CUDA(cudaMalloc(&out, sizeof(float) * maxN));
  TAWA_CHECK_CUDA(cudaMalloc(&flags, 8));
  TAWA_CHECK_CUDA(cudaMalloc(&times, 16));
  int failures = 0;
  std::printf("writers outputs mode                     median us  (min)\n");
  for (int writers : writerCounts)
    for (int n : outputCounts)
      for (int mode = 0; mode < 3; ++mode) {
        std::vector<double> us;
        for (int rep = 0; rep < 21; ++rep) {
          TAWA_CHECK_CUDA(
              cudaMemset(acc, 0, sizeof(float) * size_t(writers) * n));
          TAWA_CHECK_CUDA(cudaMemset(flags, 0, 8));
          Run r{acc, out, flags, flags + 1, times, writers, n, mode};
          reduceKernel<<<writers + 1, kThreads>>>(r);
          TAWA_CHECK_LAUNCH();
          TAWA_CHECK_CUDA(cudaDeviceSynchronize());
          uint64_t t[2];
          TAWA_CHECK_CUDA(cudaMemcpy(t, times, 16, cudaMemcpyDeviceToHost));
          std::vector<float> h(n);
          TAWA_CHECK_CUDA(cudaMemcpy(h.data(), out, sizeof(float) * n,
                                     cudaMemcpyDeviceToHost));
          for (int i = 0; i < n; ++i)
            if (h[i] != float(writers)) {
              if (failures++ < 5)
                std::printf("FAIL: %s, %d writers: out[%d] = %g\n", modes[mode],
                            writers, i, h[i]);
              break;
            }
          if (rep > 0) // the first launch is a warm-up
            us.push_back((t[1] - t[0]) / 1e3);
        }
        std::sort(us.begin(), us.end());
        std::printf("%7d %7d %-24s %9.2f (%6.2f)\n", writers, n, modes[mode],
                    us[us.size() / 2], us[0]);
      }
  std::printf(failures ? "FAILED\n" : "all sums exact\n");
  return failures ? 1 : 0;
}
