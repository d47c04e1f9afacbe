// How long a batch-16 linear tile's input rows take to land when every
// worker copies them at once (docs/MEGAKERNEL.md, "Next": batch 16's ready
// gaps). In the decode mega-kernel every tile of a linear needs all of the
// operator's input rows (16 rows of 4096 bf16 at 8B batch 16: 128 KB), so
// when an operator's event fires 128 CTAs bulk-copy the same L2-resident
// 128 KB, thread 0 issuing one copy a row in row order. Here one CTA per SM
// (its shared memory keeps a second out) does the same, all starting
// together (a grid barrier), and reports the median time from the issue to
// the last byte landing, for:
//   same:     every CTA the same rows, in row order (the kernel today);
//   rotated:  the same rows, CTA c starting at row c mod rows;
//   pieces:   the same rows as 2 KB copies, CTA c starting at piece c mod n;
//   distinct: CTA c its own rows (as many bytes, nothing shared).
// The data is L2-resident (written, then read by the warm-up rounds).
//
//   nvcc -gencode=arch=compute_90a,code=sm_90a -std=c++17 -O3 -Iinclude \
//     gpu/tools/broadcast_copy_rate.cu -o /tmp/broadcast_copy_rate
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
constexpr int kSmemBytes = 200 * 1024; // one CTA per SM
constexpr int kRounds = 40, kWarmup = 8;
constexpr uint32_t kPieceBytes = 2048;

enum Mode { kSame, kRotated, kPieces, kDistinct, kModes };
const char *const kModeNames[kModes] = {"same", "rotated", "pieces",
                                        "distinct"};

__global__ void __launch_bounds__(kThreads, 1)
    copyKernel(const uint8_t *src, int rows, uint32_t rowBytes, int mode,
               unsigned *arrived, unsigned long long *out) {
  extern __shared__ __align__(128) uint8_t buf[];
  __shared__ MBarrier bar;
  __shared__ uint64_t start;
  if (threadIdx.x == 0)
    mbarrierInit(&bar, 1);
  fenceMBarrierInit();
  __syncthreads();
  const size_t bytes = size_t(rows) * rowBytes;
  const uint8_t *from = src + (mode == kDistinct ? blockIdx.x * bytes : 0);
  for (int r = 0; r < kRounds; ++r) {
    if (threadIdx.x == 0) {
      waitForRound(arrived, r);
      start = globalTimerNs();
      mbarrierArriveExpectTx(&bar, uint32_t(bytes));
      if (mode == kPieces) {
        const int n = int(bytes / kPieceBytes);
        for (int i = 0; i < n; ++i) {
          const int p = (i + int(blockIdx.x)) % n;
          bulkLoad(buf + size_t(p) * kPieceBytes,
                   from + size_t(p) * kPieceBytes, kPieceBytes, &bar);
        }
      } else {
        for (int i = 0; i < rows; ++i) {
          const int row = mode == kRotated ? (i + int(blockIdx.x)) % rows : i;
          bulkLoad(buf + size_t(row) * rowBytes, from + size_t(row) * rowBytes,
                   rowBytes, &bar);
        }
      }
    }
    mbarrierWait(&bar, r & 1);
    __syncthreads();
    if (threadIdx.x == 0) {
      out[2 * (size_t(r) * gridDim.x + blockIdx.x)] = start;
      out[2 * (size_t(r) * gridDim.x + blockIdx.x) + 1] = globalTimerNs();
    }
  }
}

int main() {
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  const int workers = std::min(sms, 128); // the mega-kernel's worker count
  const uint32_t rowBytes = 8192;         // 4096 bf16
  const size_t region = size_t(workers) * 16 * rowBytes;
  uint8_t *src;
  unsigned *arrived;
  unsigned long long *out;
  if (!allocRounds(&src, region, 1, &arrived, &out, 2 * size_t(kRounds) * sms))
    return 1;
  cudaFuncSetAttribute(copyKernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                       kSmemBytes);
  std::printf("%d SMs; rows of %u B bulk-copied by thread 0 of each CTA, from "
              "L2; median of %d rounds (us), and all CTAs' bytes over the "
              "round's span\n",
              sms, rowBytes, kRounds - kWarmup);
  std::printf("%5s %5s %9s %9s %9s %11s\n", "CTAs", "rows", "mode", "median",
              "max", "TB/s all");
  for (int n : {1, workers})
    for (int rows : {1, 4, 16})
      for (int mode = 0; mode < kModes; ++mode) {
        if (rows * rowBytes < kPieceBytes * 2 && mode == kPieces)
          continue;
        cudaMemset(arrived, 0, sizeof(unsigned));
        copyKernel<<<n, kThreads, kSmemBytes>>>(src, rows, rowBytes, mode,
                                                arrived, out);
        std::vector<unsigned long long> h(2 * size_t(kRounds) * n);
        if (cudaMemcpy(h.data(), out, h.size() * sizeof(h[0]),
                       cudaMemcpyDeviceToHost) != cudaSuccess) {
          std::fprintf(stderr, "%s\n", cudaGetErrorString(cudaGetLastError()));
          return 1;
        }
        std::vector<double> t, worst, all;
        for (int r = kWarmup; r < kRounds; ++r) {
          unsigned long long first = ~0ull, last = 0;
          double w = 0;
          for (int c = 0; c < n; ++c) {
            const unsigned long long s = h[2 * (size_t(r) * n + c)],
                                     e = h[2 * (size_t(r) * n + c) + 1];
            t.push_back(double(e - s) / 1e3);
            w = std::max(w, double(e - s) / 1e3);
            first = std::min(first, s);
            last = std::max(last, e);
          }
          worst.push_back(w);
          all.push_back(double(n) * rows * rowBytes / double(last - first));
        }
        std::sort(t.begin(), t.end());
        std::sort(worst.begin(), worst.end());
        std::sort(all.begin(), all.end());
        std::printf("%5d %5d %9s %9.2f %9.2f %11.2f\n", n, rows,
                    kModeNames[mode], t[t.size() / 2], worst[worst.size() / 2],
                    all[all.size() / 2] / 1e3);
      }
  return 0;
}
