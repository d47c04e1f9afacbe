// How much code an SM keeps hot (docs/MEGAKERNEL.md, "Decode measured"): a
// lone linear tile of the decode mega-kernel takes 3.0 µs hot and 8.4 µs
// from a cold instruction cache (gpu/tools/mega_task_latency.cu), and a step
// runs each worker through several tasks' code a layer. One CTA of the
// worker's shape (4 warps, one a scheduler) runs a working set of n distinct
// 8 KB blocks of straight-line code (512 FMAs each, 8 independent chains)
// three times in a row; the third pass is hot if n blocks fit the cache. It
// prints the cycles per instruction of the first and the third pass for n =
// 1 .. kBlocks, on an idle GPU and with the other SMs streaming memory (as
// the weight-reading workers do; instruction misses are served by L2).
//
//   nvcc -gencode=arch=compute_90a,code=sm_90a -std=c++17 -O3 \
//     gpu/tools/icache_probe.cu -o /tmp/icache_probe && /tmp/icache_probe
#include <cstdio>
#include <cuda_runtime.h>

constexpr int kBlocks = 40;        ///< 320 KB of code in all
constexpr int kFmasPerBlock = 512; ///< 16 bytes each: 8 KB a block
constexpr int kPasses = 3;

/// Block `Id`: 512 FMAs, straight-line; distinct code per Id (the constants
/// differ), so n blocks are n * 8 KB of instructions.
template <int Id> __device__ __noinline__ float codeBlock(float x) {
  float a[8];
#pragma unroll
  for (int i = 0; i < 8; ++i)
    a[i] = x + i;
#pragma unroll
  for (int i = 0; i < kFmasPerBlock / 8; ++i)
#pragma unroll
    for (int c = 0; c < 8; ++c)
      asm volatile("fma.rn.f32 %0, %0, %1, %2;"
                   : "+f"(a[c])
                   : "f"(1.0001f), "f"(float(Id) * 1e-3f));
  float s = 0.f;
#pragma unroll
  for (int i = 0; i < 8; ++i)
    s += a[i];
  return s;
}

/// Runs blocks [0, n): a switch on the block's index, so that the working
/// set is exactly the blocks called.
template <int Id = 0> __device__ float runBlocks(int n, float x) {
  if constexpr (Id < kBlocks) {
    if (Id >= n)
      return x;
    return runBlocks<Id + 1>(n, codeBlock<Id>(x));
  } else {
    return x;
  }
}

__device__ volatile int gStop;

__global__ void __launch_bounds__(128, 1)
    probeKernel(int n, long long *cycles, float *sink, const uint4 *load,
                size_t loadVecs) {
  if (blockIdx.x != 0) {
    // The other SMs stream memory until CTA 0 is done.
    unsigned acc = 0;
    for (size_t i = (blockIdx.x * blockDim.x + threadIdx.x) * 4; !gStop;
         i = (i + size_t(gridDim.x) * blockDim.x * 4) % loadVecs) {
#pragma unroll
      for (int u = 0; u < 4; ++u) {
        const uint4 v = __ldcs(load + (i + u) % loadVecs);
        acc ^= v.x ^ v.y ^ v.z ^ v.w;
      }
    }
    if (acc == 0x12345678u)
      sink[1] = 1.f;
    return;
  }
  if (gridDim.x > 1) { // let the streams reach full bandwidth
    const long long t = clock64();
    while (clock64() - t < 200000) {
    }
  }
  float x = float(threadIdx.x);
  for (int p = 0; p < kPasses; ++p) {
    __syncthreads();
    const long long t = clock64();
    x = runBlocks(n, x);
    __syncthreads();
    if (threadIdx.x == 0)
      cycles[p] = clock64() - t;
  }
  if (x == 12345.f)
    sink[0] = x;
  if (threadIdx.x == 0)
    gStop = 1;
}

int main() {
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  const size_t loadBytes = size_t(1) << 30;
  uint4 *load;
  float *sink;
  long long *dCycles;
  if (cudaMalloc(&load, loadBytes) != cudaSuccess ||
      cudaMalloc(&sink, 16) != cudaSuccess ||
      cudaMalloc(&dCycles, kPasses * sizeof(long long)) != cudaSuccess) {
    std::fprintf(stderr, "allocation failed\n");
    return 1;
  }
  cudaMemset(load, 1, loadBytes);
  std::printf("cycles per instruction, first pass (cold) / third (hot if it "
              "fits), %d KB blocks\n",
              kFmasPerBlock * 16 / 1024);
  std::printf("%6s %8s | %10s %10s | %10s %10s\n", "blocks", "code KB",
              "idle cold", "idle 3rd", "busy cold", "busy 3rd");
  for (int n = 1; n <= kBlocks; n += n < 8 ? 1 : 2) {
    double cpi[2][2];
    for (int busy = 0; busy < 2; ++busy) {
      const int zero = 0;
      cudaMemcpyToSymbol(gStop, &zero, sizeof zero);
      // Evict the code from L2 too: the first pass is fetched from memory.
      cudaMemset(load, 1, size_t(64) << 20);
      probeKernel<<<busy ? sms : 1, 128>>>(n, dCycles, sink, load,
                                           loadBytes / 16);
      long long c[kPasses];
      if (cudaDeviceSynchronize() != cudaSuccess ||
          cudaMemcpy(c, dCycles, sizeof c, cudaMemcpyDeviceToHost) !=
              cudaSuccess) {
        std::fprintf(stderr, "%s\n", cudaGetErrorString(cudaGetLastError()));
        return 1;
      }
      const double instrs = double(n) * kFmasPerBlock;
      cpi[busy][0] = c[0] / instrs;
      cpi[busy][1] = c[kPasses - 1] / instrs;
    }
    std::printf("%6d %8d | %10.2f %10.2f | %10.2f %10.2f\n", n,
                n * kFmasPerBlock * 16 / 1024, cpi[0][0], cpi[0][1], cpi[1][0],
                cpi[1][1]);
  }
  return 0;
}
