// How fast can one CTA per SM stream weights into shared memory? A probe for
// the decode mega-kernel's linear task (docs/MEGAKERNEL.md, "Performance"):
// `ctas` CTAs of 128 threads each read their own contiguous share of a
// 2 GiB buffer, four warps per CTA, each warp with `slots` ring slots of
// `slotKB` KB filled by bulk copies (cp.async.bulk + mbarrier) or, with
// mode=ldg, by 16-byte loads (`slots` loads per lane in flight); the data is
// summed so that it is used. Prints GB/s per configuration.
//   nvcc -gencode=arch=compute_90a,code=sm_90a -std=c++17 -O3 -I include \
//     bench/mega/stream_probe.cu -o /tmp/stream_probe && /tmp/stream_probe
#include "tawa/device/mbarrier.cuh"
#include "tawa/device/tma.cuh"

#include <cstdio>
#include <cuda_runtime.h>
#include <vector>

using namespace tawa::device;

__global__ void __launch_bounds__(128, 1)
    bulkStream(const uint4 *data, size_t bytesPerCta, int slots, int slotBytes,
               float *sink) {
  extern __shared__ __align__(128) unsigned char smem[];
  MBarrier *bars = reinterpret_cast<MBarrier *>(smem);
  unsigned char *ring = smem + 1024;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (threadIdx.x == 0) {
    for (int i = 0; i < 4 * slots; ++i)
      mbarrierInit(bars + i, 1);
    fenceMBarrierInit();
  }
  __syncthreads();
  const char *base =
      reinterpret_cast<const char *>(data) + size_t(blockIdx.x) * bytesPerCta;
  const size_t stages = bytesPerCta / slotBytes;
  unsigned char *mine = ring + size_t(warp) * slots * slotBytes;
  MBarrier *myBars = bars + warp * slots;
  auto issue = [&](size_t i, int s) {
    mbarrierArriveExpectTx(myBars + s, slotBytes);
    bulkLoad(mine + size_t(s) * slotBytes, base + i * slotBytes, slotBytes,
             myBars + s);
  };
  if (lane == 0)
    for (int m = 0; m < slots; ++m)
      if (warp + size_t(m) * 4 < stages)
        issue(warp + size_t(m) * 4, m);
  float acc = 0.f;
  uint32_t parity = 0;
  for (size_t m = 0;; ++m) {
    size_t i = warp + m * 4;
    if (i >= stages)
      break;
    int s = int(m % slots);
    mbarrierWait(myBars + s, (parity >> s) & 1);
    parity ^= 1u << s;
    const uint4 *v =
        reinterpret_cast<const uint4 *>(mine + size_t(s) * slotBytes);
    for (int e = lane; e < slotBytes / 16; e += 32)
      acc += __uint_as_float(v[e].x & 0xFFFF0000u);
    __syncwarp();
    size_t next = i + size_t(slots) * 4;
    if (lane == 0 && next < stages)
      issue(next, s);
  }
  if (acc == 12345.f)
    *sink = acc;
}

__global__ void __launch_bounds__(128, 1)
    ldgStream(const uint4 *data, size_t bytesPerCta, int depth, float *sink) {
  const uint4 *p = data + size_t(blockIdx.x) * (bytesPerCta / 16);
  const size_t n = bytesPerCta / 16;
  float acc = 0.f;
  // depth independent 16-byte loads per lane per iteration.
  for (size_t i = threadIdx.x; i < n; i += size_t(128) * depth) {
    uint4 v[16];
#pragma unroll
    for (int d = 0; d < 16; ++d)
      if (d < depth && i + size_t(d) * 128 < n)
        asm("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];"
            : "=r"(v[d].x), "=r"(v[d].y), "=r"(v[d].z), "=r"(v[d].w)
            : "l"(p + i + size_t(d) * 128));
#pragma unroll
    for (int d = 0; d < 16; ++d)
      if (d < depth && i + size_t(d) * 128 < n)
        acc += __uint_as_float(v[d].x & 0xFFFF0000u);
  }
  if (acc == 12345.f)
    *sink = acc;
}

int main() {
  const size_t total = size_t(2) << 30;
  uint4 *data;
  float *sink;
  cudaMalloc(&data, total);
  cudaMemset(data, 0, total);
  cudaMalloc(&sink, 4);
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  cudaFuncSetAttribute(bulkStream, cudaFuncAttributeMaxDynamicSharedMemorySize,
                       200 * 1024);
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  auto timeIt = [&](auto launch, int ctas) {
    launch();
    cudaEventRecord(a);
    for (int r = 0; r < 5; ++r)
      launch();
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    float ms = 0;
    cudaEventElapsedTime(&ms, a, b);
    size_t bytesPerCta = total / ctas / 65536 * 65536;
    return 5.0 * bytesPerCta * ctas / (ms * 1e-3) / 1e9;
  };
  for (int ctas : {64, 96, 132}) {
    size_t bytesPerCta = total / ctas / 65536 * 65536;
    for (int slotKB : {4, 8, 16, 32})
      for (int slots : {2, 3, 4, 6, 8, 12}) {
        size_t smem = 1024 + size_t(4) * slots * slotKB * 1024;
        if (smem > 200 * 1024)
          continue;
        double gbs = timeIt(
            [&] {
              bulkStream<<<ctas, 128, smem>>>(data, bytesPerCta, slots,
                                              slotKB * 1024, sink);
            },
            ctas);
        printf(
            "bulk ctas %3d slot %2d KB x %2d per warp (%3zu KB in flight per "
            "SM): %7.1f GB/s total, %6.1f per SM\n",
            ctas, slotKB, slots, size_t(4) * slots * slotKB, gbs, gbs / ctas);
      }
    for (int depth : {2, 4, 8, 16}) {
      double gbs = timeIt(
          [&] { ldgStream<<<ctas, 128>>>(data, bytesPerCta, depth, sink); },
          ctas);
      printf("ldg  ctas %3d depth %2d (%3d KB in flight per SM): %7.1f GB/s "
             "total, %6.1f per SM\n",
             ctas, depth, depth * 2, gbs, gbs / ctas);
    }
  }
  cudaError_t e = cudaDeviceSynchronize();
  printf("%s\n", cudaGetErrorString(e));
  return e != cudaSuccess;
}
