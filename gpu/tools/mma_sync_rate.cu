// Latency and issue rate of mma.sync m16n8k16 (bf16 in, f32 accumulate) on
// Hopper, as the mega-kernel's linear and attention tasks use it: 4 warps a
// CTA (one per SM sub-partition), each running `chains` independent
// accumulator chains, on one SM and on every SM. Cycles per product per
// warp at 1 chain are the latency; with enough chains, the issue interval.
//
//   nvcc -gencode=arch=compute_90a,code=sm_90a -std=c++17 -O3 -Iinclude \
//     gpu/tools/mma_sync_rate.cu -o /tmp/mma_sync_rate
#include <cstdint>
#include <cstdio>

#include "tawa/device/mma.cuh"

using namespace tawa::device;

constexpr int kIters = 4096;

template <int Chains>
__global__ void chainKernel(float *sink, long long *cycles) {
  float acc[Chains][4] = {};
  const uint32_t a0 = threadIdx.x, a1 = a0 * 3, a2 = a0 * 5, a3 = a0 * 7;
  const uint32_t b0 = a0 ^ 9, b1 = a0 ^ 11;
  __syncthreads();
  const long long t0 = clock64();
  for (int i = 0; i < kIters; ++i) {
#pragma unroll
    for (int c = 0; c < Chains; ++c)
      mmaBf16m16n8k16(acc[c], a0, a1, a2, a3, b0, b1);
  }
  const long long t1 = clock64();
  float s = 0.f;
  for (int c = 0; c < Chains; ++c)
    s += acc[c][0] + acc[c][1] + acc[c][2] + acc[c][3];
  sink[blockIdx.x * blockDim.x + threadIdx.x] = s;
  if (threadIdx.x == 0 && blockIdx.x == 0)
    *cycles = t1 - t0;
}

template <int Chains> bool run(int grid, float *sink, long long *cycles) {
  for (int rep = 0; rep < 2; ++rep) // the second run is timed
    chainKernel<Chains><<<grid, 128>>>(sink, cycles);
  long long h = 0;
  if (cudaMemcpy(&h, cycles, sizeof h, cudaMemcpyDeviceToHost) != cudaSuccess) {
    std::fprintf(stderr, "%s\n", cudaGetErrorString(cudaGetLastError()));
    return false;
  }
  std::printf("%3d CTAs, %2d chains: %6.2f cycles per product per warp "
              "(%6.1f per chain step)\n",
              grid, Chains, double(h) / (kIters * Chains), double(h) / kIters);
  return true;
}

int main() {
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  float *sink;
  long long *cycles;
  if (cudaMalloc(&sink, size_t(sms) * 128 * sizeof(float)) != cudaSuccess ||
      cudaMalloc(&cycles, sizeof(long long)) != cudaSuccess) {
    std::fprintf(stderr, "cudaMalloc failed\n");
    return 1;
  }
  for (int grid : {1, sms})
    if (!run<1>(grid, sink, cycles) || !run<2>(grid, sink, cycles) ||
        !run<4>(grid, sink, cycles) || !run<8>(grid, sink, cycles) ||
        !run<16>(grid, sink, cycles))
      return 1;
  return 0;
}
