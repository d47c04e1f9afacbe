// How fast one CTA (one warp group) multiplies 128 KB of bf16 weights held in
// shared memory by one input row, two ways (docs/MEGAKERNEL.md, "Next"):
//   mma.sync: the mega-kernel linear's way today — each of the 4 warps owns 16
//     weight rows x 1024 K, loads its operands with 16-byte ld.shared (A in
//     the fragment's order, the row's 8 elements a lane) and issues
//     m16n8k16 products into two accumulator sets, 4 steps of 32 K at a time
//     (and, to see whether the products' chains bound it, 8 steps into four
//     sets);
//   wgmma: 64 weight rows x 1024 K as the A operand of m64n8k16 straight from
//     shared memory (K-major, 128-byte swizzle: 16 blocks of 64 K), the input
//     row as B (n = 8, the other 7 columns zero), 64 instructions, one commit.
//   wgmma, K split: the same A read as 16 rows of 4096 K (row r's K quarter q
//     as row 16 q + r), the input's quarters as B's columns 0-3, the four
//     partials of a row added through shared memory: how a 16-column tile
//     (the O and down projections' at Qwen3-0.6B) would use m64.
// All compute y = W x for the same W and x; the results are checked against
// a double-precision product on the host, and each is timed hot (clock64 on
// thread 0 around the products and the CTA barrier after them; median of 16
// repetitions, and the first, from a cold instruction cache; µs at the
// device's nominal clock).
//
//   nvcc -gencode=arch=compute_90a,code=sm_90a -std=c++17 -O3 -Iinclude \
//     gpu/tools/gemv_wgmma_rate.cu -o /tmp/gemv_wgmma_rate
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

#include <cuda_bf16.h>

#include "tawa/device/mma.cuh"
#include "tawa/device/wgmma.cuh"

using namespace tawa::device;

constexpr int kRows = 64, kK = 1024, kReps = 16, kModes = 4;
constexpr int kWBytes = kRows * kK * 2; // 128 KB
constexpr int kXBytes = 8 * kK * 2;     // B: 8 columns of K (16 KB)
constexpr int kSmem = kWBytes + kXBytes + 256 + 1024;

/// Byte offset of (row r, k) in a K-major tile of 128-byte rows, 128-byte
/// swizzle, in blocks of 64 K (rows x 128 bytes each): the 16-byte chunk of
/// a row is XORed with the row's index inside its 8-row group.
__host__ __device__ constexpr uint32_t swizzledOffset(int r, int k, int rows) {
  return uint32_t((k / 64) * rows * 128 + r * 128 +
                  ((((k % 64) / 8) ^ (r % 8)) * 16) + (k % 8) * 2);
}

/// The mma.sync products of the staged layout (below), U steps of 32 K
/// loaded at once into Sets accumulator sets, timed kReps times into
/// `cycles` (thread 0's clock64 around the products and the barrier after
/// them); row sums stored to sums[64].
template <int U, int Sets>
__device__ void mmaTimed(const uint8_t *wm, const __nv_bfloat16 *xs,
                         float *sums, long long *cycles) {
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int g = lane / 4, tq = lane % 4;
  for (int rep = 0; rep < kReps; ++rep) {
    __syncthreads();
    const long long t0 = clock64();
    float acc[Sets][4] = {};
    const uint8_t *mine = wm + warp * (kK / 32) * 1024 + lane * 16;
#pragma unroll 1
    for (int s = 0; s < kK / 32; s += U) {
      uint4 a[U][2], b[U];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        a[u][0] = *reinterpret_cast<const uint4 *>(mine + (s + u) * 1024);
        a[u][1] = *reinterpret_cast<const uint4 *>(mine + (s + u) * 1024 + 512);
        b[u] = *reinterpret_cast<const uint4 *>(xs + 32 * (s + u) + 8 * tq);
      }
#pragma unroll
      for (int u = 0; u < U; ++u) {
        mmaBf16m16n8k16(acc[u % Sets], a[u][0].x, a[u][0].y, a[u][0].z,
                        a[u][0].w, b[u].x, b[u].y);
        mmaBf16m16n8k16(acc[u % Sets], a[u][1].x, a[u][1].y, a[u][1].z,
                        a[u][1].w, b[u].z, b[u].w);
      }
    }
    float s0 = 0.f, s1 = 0.f; // rows 16 w + g and + 8, input column 0
#pragma unroll
    for (int a = 0; a < Sets; ++a)
      s0 += acc[a][0], s1 += acc[a][2];
    if (tq == 0) {
      sums[warp * 16 + g] = s0;
      sums[warp * 16 + g + 8] = s1;
    }
    __syncthreads();
    cycles[rep] = clock64() - t0;
  }
}

__global__ void __launch_bounds__(128, 1)
    gemvKernel(const __nv_bfloat16 *w, const __nv_bfloat16 *x,
               const __nv_bfloat16 *xSplit, float *yMma, float *yMma4,
               float *yWgmma, float *ySplit, long long *cycles) {
  extern __shared__ uint8_t raw[];
  uint8_t *base = reinterpret_cast<uint8_t *>(
      (reinterpret_cast<uintptr_t>(raw) + 1023) & ~uintptr_t(1023));
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int g = lane / 4, tq = lane % 4;
  // --- mma.sync layout (linear.cuh's staged one): warp w's rows 16w..16w+15,
  // step s (32 K) is 1 KB; lane (g, t) holds, at +16 lane bytes, rows g and
  // g + 8 at K 32 s + 8 t + {0, 1}, then + {2, 3} (the first product's A
  // fragment), and at +512 + 16 lane the same for + {4, 5}, + {6, 7}; it
  // reads the input row's K 32 s + 8 t + [0, 8) (K permuted alike).
  uint8_t *wm = base;
  for (int i = tid; i < 4 * (kK / 32) * 32; i += 128) {
    const int wr = i / ((kK / 32) * 32), st = (i / 32) % (kK / 32), ln = i % 32,
              lg = ln / 4, lt = ln % 4;
    const uint32_t *r0 = reinterpret_cast<const uint32_t *>(
        w + size_t(16 * wr + lg) * kK + 32 * st + 8 * lt);
    const uint32_t *r8 = reinterpret_cast<const uint32_t *>(
        w + size_t(16 * wr + lg + 8) * kK + 32 * st + 8 * lt);
    uint8_t *at = wm + wr * (kK / 32) * 1024 + st * 1024 + ln * 16;
    *reinterpret_cast<uint4 *>(at) = make_uint4(r0[0], r8[0], r0[1], r8[1]);
    *reinterpret_cast<uint4 *>(at + 512) =
        make_uint4(r0[2], r8[2], r0[3], r8[3]);
  }
  __nv_bfloat16 *xs = reinterpret_cast<__nv_bfloat16 *>(base + kWBytes);
  for (int k = tid; k < kK; k += 128)
    xs[k] = x[k];
  __syncthreads();
  // Each repetition stores its sums to shared memory before the barrier
  // that ends its timing, so its products cannot move out of the timed
  // region (mma.sync is not volatile asm; run 262 timed 2 cycles without).
  float *sums = reinterpret_cast<float *>(base + kWBytes + kXBytes); // [64]
  long long tMma[2][kReps];
  mmaTimed<4, 2>(wm, xs, sums, tMma[0]); // linear.cuh's: U 4, two sets
  if (tq == 0) {
    yMma[warp * 16 + g] = sums[warp * 16 + g];
    yMma[warp * 16 + g + 8] = sums[warp * 16 + g + 8];
  }
  mmaTimed<8, 4>(wm, xs, sums, tMma[1]); // U 8, four sets
  if (tq == 0) {
    yMma4[warp * 16 + g] = sums[warp * 16 + g];
    yMma4[warp * 16 + g + 8] = sums[warp * 16 + g + 8];
  }
  __syncthreads();
  // --- wgmma layout: A = the 64 rows, B = x as column 0 of 8 (K-major).
  uint8_t *wa = base;
  for (int i = tid; i < kRows * kK / 8; i += 128) {
    const int r = i / (kK / 8), k8 = (i % (kK / 8)) * 8;
    *reinterpret_cast<uint4 *>(wa + swizzledOffset(r, k8, kRows)) =
        *reinterpret_cast<const uint4 *>(w + size_t(r) * kK + k8);
  }
  uint8_t *xb = base + kWBytes;
  for (int i = tid; i < 8 * kK / 8; i += 128) {
    const int n = i / (kK / 8), k8 = (i % (kK / 8)) * 8;
    uint4 v = make_uint4(0, 0, 0, 0);
    if (n == 0)
      v = *reinterpret_cast<const uint4 *>(x + k8);
    *reinterpret_cast<uint4 *>(xb + swizzledOffset(n, k8, 8)) = v;
  }
  fenceProxyAsyncShared();
  __syncthreads();
  long long tWg[kReps];
  float d[4] = {};
  // d = A · B: the 64 instructions of K 16, one commit, waited for.
  auto wgmmaProducts = [&] {
    const uint64_t descA = descKMajorSw128(wa), descB = descKMajorSw128(xb);
    wgmmaFence();
#pragma unroll
    for (int kb = 0; kb < kK / 64; ++kb)
#pragma unroll
      for (int s = 0; s < 4; ++s)
        wgmmaSS<8, MmaType::BF16>(
            d, descAdvance(descA, kb * kRows * 128 + s * 32),
            descAdvance(descB, kb * 8 * 128 + s * 32), kb + s > 0 ? 1 : 0);
    wgmmaCommit();
    wgmmaWait<0>();
    fenceFragment(d);
  };
  for (int rep = 0; rep < kReps; ++rep) {
    __syncthreads();
    const long long t0 = clock64();
    wgmmaProducts();
    __syncthreads();
    tWg[rep] = clock64() - t0;
  }
  // d: rows 16 w + g and + 8, columns 2 tq and 2 tq + 1.
  if (tq == 0) {
    yWgmma[warp * 16 + g] = d[0];
    yWgmma[warp * 16 + g + 8] = d[2];
  }
  // --- wgmma with K split (a tile of 16 output rows and 4096 K, as the O and
  // down tiles of 16 columns would be): the same 64 x 1024 A holds row r's
  // quarter q of K as row 16 q + r, B's column q the input's quarter q
  // (columns 4-7 zero), so D[16 q + r][q] is quarter q's partial sum of row
  // r; warp q holds it (lane (r % 8, q / 2), register q % 2, + 2 for r >= 8)
  // and the four partials are added through shared memory.
  __syncthreads();
  for (int i = tid; i < 8 * kK / 8; i += 128) {
    const int n = i / (kK / 8), k8 = (i % (kK / 8)) * 8;
    uint4 v = make_uint4(0, 0, 0, 0);
    if (n < 4)
      v = *reinterpret_cast<const uint4 *>(xSplit + n * kK + k8);
    *reinterpret_cast<uint4 *>(xb + swizzledOffset(n, k8, 8)) = v;
  }
  fenceProxyAsyncShared();
  float *parts = reinterpret_cast<float *>(base + kWBytes + kXBytes); // [4][16]
  __syncthreads();
  long long tSplit[kReps];
  float ySum = 0.f;
  for (int rep = 0; rep < kReps; ++rep) {
    __syncthreads();
    const long long t0 = clock64();
    wgmmaProducts();
    if (tq == warp / 2) {
      parts[warp * 16 + g] = d[warp % 2];
      parts[warp * 16 + g + 8] = d[2 + warp % 2];
    }
    __syncthreads();
    if (tid < 16)
      ySum = parts[tid] + parts[16 + tid] + parts[32 + tid] + parts[48 + tid];
    __syncthreads();
    tSplit[rep] = clock64() - t0;
  }
  if (tid < 16)
    ySplit[tid] = ySum;
  if (tid == 0)
    for (int rep = 0; rep < kReps; ++rep) {
      cycles[rep] = tMma[0][rep];
      cycles[kReps + rep] = tMma[1][rep];
      cycles[2 * kReps + rep] = tWg[rep];
      cycles[3 * kReps + rep] = tSplit[rep];
    }
}

int main() {
  std::mt19937 rng(12345);
  std::normal_distribution<float> normal;
  std::vector<__nv_bfloat16> w(size_t(kRows) * kK), x(kK), xSplit(4 * kK);
  for (auto &v : w)
    v = __float2bfloat16(0.05f * normal(rng));
  for (auto &v : x)
    v = __float2bfloat16(normal(rng));
  for (auto &v : xSplit)
    v = __float2bfloat16(normal(rng));
  auto at = [](const std::vector<__nv_bfloat16> &v, size_t i) {
    return double(__bfloat162float(v[i]));
  };
  // Rows 0-63 of W times x; and the 16 rows of 4096 K that W holds as its
  // four quarters (row 16 q + r: row r's K [1024 q, 1024 q + 1024)) times
  // xSplit.
  std::vector<double> want(kRows, 0.0), wantSplit(16, 0.0);
  for (int r = 0; r < kRows; ++r)
    for (int k = 0; k < kK; ++k) {
      want[r] += at(w, size_t(r) * kK + k) * at(x, k);
      wantSplit[r % 16] +=
          at(w, size_t(r) * kK + k) * at(xSplit, (r / 16) * kK + k);
    }
  __nv_bfloat16 *dW, *dX, *dXs;
  float *dY;
  long long *dC;
  cudaMalloc(&dW, w.size() * 2);
  cudaMalloc(&dX, x.size() * 2);
  cudaMalloc(&dXs, xSplit.size() * 2);
  cudaMalloc(&dY, (3 * kRows + 16) * sizeof(float));
  cudaMalloc(&dC, kModes * kReps * sizeof(long long));
  cudaMemcpy(dW, w.data(), w.size() * 2, cudaMemcpyHostToDevice);
  cudaMemcpy(dX, x.data(), x.size() * 2, cudaMemcpyHostToDevice);
  cudaMemcpy(dXs, xSplit.data(), xSplit.size() * 2, cudaMemcpyHostToDevice);
  cudaMemset(dY, 0xFF, (3 * kRows + 16) * sizeof(float)); // NaN until written
  cudaFuncSetAttribute(gemvKernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                       kSmem);
  gemvKernel<<<1, 128, kSmem>>>(dW, dX, dXs, dY, dY + kRows, dY + 2 * kRows,
                                dY + 3 * kRows, dC);
  if (cudaDeviceSynchronize() != cudaSuccess) {
    std::fprintf(stderr, "%s\n", cudaGetErrorString(cudaGetLastError()));
    return 1;
  }
  std::vector<float> y(3 * kRows + 16);
  long long reps[kModes * kReps], c[kModes], first[kModes];
  cudaMemcpy(y.data(), dY, y.size() * sizeof(float), cudaMemcpyDeviceToHost);
  cudaMemcpy(reps, dC, sizeof reps, cudaMemcpyDeviceToHost);
  for (int m = 0; m < kModes; ++m) {
    first[m] = reps[m * kReps];
    std::sort(reps + m * kReps, reps + (m + 1) * kReps);
    c[m] = reps[m * kReps + kReps / 2];
  }
  int khz = 0;
  cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0);
  bool ok = true;
  const char *names[kModes] = {"mma.sync (U 4, 2 sets: linear.cuh's)",
                               "mma.sync (U 8, 4 sets)", "wgmma",
                               "wgmma, K split 4 ways (16 rows x 4096)"};
  for (int m = 0; m < kModes; ++m) {
    const int rows = m < 3 ? kRows : 16;
    const std::vector<double> &ref = m < 3 ? want : wantSplit;
    double err = 0.0, scale = 0.0;
    for (int r = 0; r < rows; ++r) {
      err = std::max(err, std::fabs(double(y[m * kRows + r]) - ref[r]));
      scale = std::max(scale, std::fabs(ref[r]));
    }
    const bool good = err <= 1e-3 * scale; // float sums of bf16 products
    ok &= good;
    std::printf("%s, 128 KB of weights x 1 row: %6lld cycles (%.3f us at "
                "%.2f GHz; first, cold: %lld), max error %.2e of %.2e: %s\n",
                names[m], c[m], double(c[m]) * 1e3 / khz, khz * 1e-6, first[m],
                err, scale, good ? "PASS" : "FAIL");
  }
  return ok ? 0 : 1;
}
