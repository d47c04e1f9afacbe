// Accumulator-fragment operations alone: the element -> (row, col) mapping
// (values are placed by the mapping and read back through it), row max/sum
// with quad shuffles, row and column broadcasts, accumulator -> register A
// conversion (f16, bf16, e4m3 with its byte permute; checked by feeding the
// result to a register-A wgmma), the stmatrix + TMA-store epilogue into a
// 128B-swizzled tile, with clipping at tensor edges, and its inverse: a
// TMA-loaded tile read into the accumulator layout with ldmatrix.
#include "common.cuh"
#include "mma_host.cuh"
#include "tawa/device/device.cuh"

#include <algorithm>
#include <cfloat>
#include <cstdio>
#include <cmath>
#include <limits>
#include <vector>

using namespace tawa::device;
using namespace tawa::test;

namespace {

template <int N> __device__ void loadAcc(const float *x, float (&d)[N / 2]) {
  const int tid = threadIdx.x % 128;
#pragma unroll
  for (int i = 0; i < N / 2; ++i)
    d[i] = x[accRow(tid, i) * N + accCol(tid, i)];
}

// ---------------------------------------------------------------------------
// Reductions and broadcasts.
// ---------------------------------------------------------------------------

template <int N>
__global__ void __launch_bounds__(128, 1)
    reduceKernel(const float *x, const float *rowv, const float *colv,
                 float *rowMaxOut, float *rowSumOut, float *out) {
  float d[N / 2];
  loadAcc<N>(x, d);
  float mx[2], sm[2], pinned[2];
  rowMax(d, mx);
  rowSum(d, sm);
  // The pinned sum is the same sum (its pin may store into this scratch
  // word, the inputs here being of either sign; runPin checks the store).
  __shared__ uint32_t scratch;
  rowSumPinned(d, pinned, reinterpret_cast<uint8_t *>(&scratch));
  if (pinned[0] != sm[0] || pinned[1] != sm[1])
    sm[0] = sm[1] = __int_as_float(0x7fc00000); // fails the sum check
  const int tid = threadIdx.x;
  // Every lane of the quad holds the full-row result; each writes its own
  // slot so that a lane with a partial result is caught.
  for (int h = 0; h < 2; ++h) {
    const int row = accRow(tid, 2 * h);
    rowMaxOut[row * 4 + tid % 4] = mx[h];
    rowSumOut[row * 4 + tid % 4] = sm[h];
  }
  float rv[2] = {rowv[accRow(tid, 0)], rowv[accRow(tid, 2)]};
  float cv[N / 4];
  loadColSlice<N / 2>(colv, cv);
  applyRow(d, rv, [](float a, float b) { return a * b; });
  applyCol(d, cv, [](float a, float b) { return a + b; });
#pragma unroll
  for (int i = 0; i < N / 2; ++i)
    out[accRow(tid, i) * N + accCol(tid, i)] = d[i];
}

template <int N> void runReduce(Report &rep, std::mt19937_64 &rng) {
  char name[64];
  std::snprintf(name, sizeof name, "acc_row_reduce_broadcast_n%d", N);
  std::uniform_real_distribution<float> dist(-4.f, 4.f);
  std::vector<float> x(64 * N), rv(64), cv(N);
  for (auto &v : x)
    v = dist(rng);
  for (auto &v : rv)
    v = dist(rng);
  for (auto &v : cv)
    v = dist(rng);
  float *dx, *drv, *dcv, *dmax, *dsum, *dout;
  TAWA_CHECK_CUDA(cudaMalloc(&dx, x.size() * 4));
  TAWA_CHECK_CUDA(cudaMalloc(&drv, 64 * 4));
  TAWA_CHECK_CUDA(cudaMalloc(&dcv, N * 4));
  TAWA_CHECK_CUDA(cudaMalloc(&dmax, 256 * 4));
  TAWA_CHECK_CUDA(cudaMalloc(&dsum, 256 * 4));
  TAWA_CHECK_CUDA(cudaMalloc(&dout, x.size() * 4));
  TAWA_CHECK_CUDA(
      cudaMemcpy(dx, x.data(), x.size() * 4, cudaMemcpyHostToDevice));
  TAWA_CHECK_CUDA(cudaMemcpy(drv, rv.data(), 64 * 4, cudaMemcpyHostToDevice));
  TAWA_CHECK_CUDA(cudaMemcpy(dcv, cv.data(), N * 4, cudaMemcpyHostToDevice));
  TAWA_CHECK_CUDA(cudaMemset(dmax, 0xFF, 256 * 4));
  TAWA_CHECK_CUDA(cudaMemset(dsum, 0xFF, 256 * 4));
  TAWA_CHECK_CUDA(cudaMemset(dout, 0xFF, x.size() * 4));
  reduceKernel<N><<<1, 128>>>(dx, drv, dcv, dmax, dsum, dout);
  TAWA_CHECK_LAUNCH();
  std::vector<float> gmax(256), gsum(256), out(x.size());
  TAWA_CHECK_CUDA(
      cudaMemcpy(gmax.data(), dmax, 256 * 4, cudaMemcpyDeviceToHost));
  TAWA_CHECK_CUDA(
      cudaMemcpy(gsum.data(), dsum, 256 * 4, cudaMemcpyDeviceToHost));
  TAWA_CHECK_CUDA(
      cudaMemcpy(out.data(), dout, x.size() * 4, cudaMemcpyDeviceToHost));
  for (float *p : {dx, drv, dcv, dmax, dsum, dout})
    TAWA_CHECK_CUDA(cudaFree(p));
  int badMax = 0, badSum = 0, badOut = 0;
  for (int r = 0; r < 64; ++r) {
    float m = -INFINITY;
    double s = 0, mag = 0;
    for (int c = 0; c < N; ++c) {
      m = std::max(m, x[r * N + c]);
      s += x[r * N + c];
      mag += std::fabs(x[r * N + c]);
    }
    for (int q = 0; q < 4; ++q) {
      badMax += gmax[r * 4 + q] != m;
      badSum += !(std::fabs(gsum[r * 4 + q] - s) <= 1e-5 * mag + 1e-6);
    }
    for (int c = 0; c < N; ++c) {
      const float want = x[r * N + c] * rv[r] + cv[c];
      badOut += !(std::fabs(out[r * N + c] - want) <=
                  1e-5f * (std::fabs(want) + 1.f));
    }
  }
  if (badMax || badSum || badOut)
    rep.fail(
        name,
        "%d wrong row maxima, %d wrong row sums, %d wrong broadcast elements",
        badMax, badSum, badOut);
  else
    rep.pass(name);
}

// ---------------------------------------------------------------------------
// Accumulator -> A operand conversion, checked through a register-A wgmma:
// D[64 x 64] = convert(X[64 x KX]) * B with B K-major in shared memory.
// ---------------------------------------------------------------------------

template <MmaType T>
__global__ void __launch_bounds__(128, 1)
    convertKernel(const float *x, const __grid_constant__ CUtensorMap mapB,
                  float *out) {
  constexpr int KX = T == MmaType::E4M3 ? 128 : 64; // 128 bytes of K
  extern __shared__ uint8_t raw[];
  uint8_t *sB = reinterpret_cast<uint8_t *>(
      (reinterpret_cast<uintptr_t>(raw) + 1023) & ~uintptr_t(1023));
  __shared__ MBarrier bar;
  if (threadIdx.x == 0) {
    mbarrierInit(&bar, 1);
    fenceMBarrierInit();
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    mbarrierArriveExpectTx(&bar, 64 * 128);
    tmaLoad2D(sB, &mapB, &bar, 0, 0);
  }
  float src[KX / 2];
  loadAcc<KX>(x, src);
  uint32_t a[4][4];
  if constexpr (T == MmaType::F16)
    accToA16<__half>(src, a);
  else if constexpr (T == MmaType::BF16)
    accToA16<__nv_bfloat16>(src, a);
  else
    accToAE4M3(src, a);
  mbarrierWait(&bar, 0);
  float d[32];
  const uint64_t descB = descKMajorSw128(sB);
  wgmmaFence();
#pragma unroll
  for (int kk = 0; kk < 4; ++kk)
    wgmmaRS<64, T>(d, a[kk], descAdvance(descB, kk * 32), kk > 0);
  wgmmaCommit();
  wgmmaWait<0>();
  fenceFragment(d);
  const int tid = threadIdx.x;
#pragma unroll
  for (int i = 0; i < 32; ++i)
    out[accRow(tid, i) * 64 + accCol(tid, i)] = d[i];
}

template <MmaType T> void runConvert(Report &rep, std::mt19937_64 &rng) {
  using E = HostElem<T>;
  using Bits = typename E::Bits;
  constexpr int KX = T == MmaType::E4M3 ? 128 : 64;
  char name[64];
  std::snprintf(name, sizeof name, "acc_to_regA_%s", E::kName);
  std::uniform_real_distribution<float> dist(-3.f, 3.f);
  std::vector<float> x(64 * KX);
  for (auto &v : x)
    v = dist(rng);
  auto B = randomElems<T>(64 * KX, rng); // stored [n][k]
  float *dx, *dout;
  Bits *dB;
  TAWA_CHECK_CUDA(cudaMalloc(&dx, x.size() * 4));
  TAWA_CHECK_CUDA(cudaMalloc(&dB, B.size() * sizeof(Bits)));
  TAWA_CHECK_CUDA(cudaMalloc(&dout, 64 * 64 * 4));
  TAWA_CHECK_CUDA(
      cudaMemcpy(dx, x.data(), x.size() * 4, cudaMemcpyHostToDevice));
  TAWA_CHECK_CUDA(cudaMemcpy(dB, B.data(), B.size() * sizeof(Bits),
                             cudaMemcpyHostToDevice));
  TAWA_CHECK_CUDA(cudaMemset(dout, 0xFF, 64 * 64 * 4));
  CUtensorMap mB = encodeTiled(E::kMapType, sizeof(Bits), dB,
                               {64, uint64_t(KX)}, {uint64_t(KX)},
                               {64, uint32_t(KX)}, CU_TENSOR_MAP_SWIZZLE_128B);
  const int smem = 1024 + 64 * 128;
  TAWA_CHECK_CUDA(cudaFuncSetAttribute(
      convertKernel<T>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  convertKernel<T><<<1, 128, smem>>>(dx, mB, dout);
  TAWA_CHECK_LAUNCH();
  std::vector<float> out(64 * 64);
  TAWA_CHECK_CUDA(
      cudaMemcpy(out.data(), dout, out.size() * 4, cudaMemcpyDeviceToHost));
  TAWA_CHECK_CUDA(cudaFree(dx));
  TAWA_CHECK_CUDA(cudaFree(dB));
  TAWA_CHECK_CUDA(cudaFree(dout));
  int bad = 0;
  for (int m = 0; m < 64; ++m)
    for (int n = 0; n < 64; ++n) {
      double want = 0, mag = 0;
      for (int k = 0; k < KX; ++k) {
        const double p = E::toDouble(E::fromFloat(x[m * KX + k])) *
                         E::toDouble(B[n * KX + k]);
        want += p;
        mag += std::fabs(p);
      }
      bad += !(std::fabs(out[m * 64 + n] - want) <= 5e-3 * mag + 1e-5);
    }
  if (bad)
    rep.fail(name, "%d of %d wrong elements", bad, 64 * 64);
  else
    rep.pass(name);
}

// ---------------------------------------------------------------------------
// stmatrix epilogue: a 64 x 256 accumulator -> four swizzled 64 x 64 boxes ->
// TMA stores into C at (row0, col0), clipped by C's extents.
// ---------------------------------------------------------------------------

// Packed: boxes 1 and 3 go through packAccBox into one array (at offsets 16
// and 0, the accumulator then overwritten) and storePackedBoxSwizzled, as
// the deferred epilogue stores them during the next tile's K loop.
template <typename T, bool Packed>
__global__ void __launch_bounds__(128, 1)
    epilogueKernel(const float *x, const __grid_constant__ CUtensorMap mapC,
                   int row0, int col0) {
  extern __shared__ uint8_t raw[];
  uint8_t *boxes = reinterpret_cast<uint8_t *>(
      (reinterpret_cast<uintptr_t>(raw) + 1023) & ~uintptr_t(1023));
  float d[128];
  loadAcc<256>(x, d);
  if (Packed) {
    uint32_t p[32];
    packAccBox<T, 3, 0>(d, p);
    packAccBox<T, 1, 16>(d, p);
    storeAccBoxSwizzled<T, 0>(d, boxes);
    storeAccBoxSwizzled<T, 2>(d, boxes + 2 * 8192);
#pragma unroll
    for (int i = 0; i < 128; ++i)
      d[i] = -1.0f;
    storePackedBoxSwizzled<16>(p, boxes + 8192);
    storePackedBoxSwizzled<0>(p, boxes + 3 * 8192);
  } else {
    storeAccBoxSwizzled<T, 0>(d, boxes);
    storeAccBoxSwizzled<T, 1>(d, boxes + 8192);
    storeAccBoxSwizzled<T, 2>(d, boxes + 2 * 8192);
    storeAccBoxSwizzled<T, 3>(d, boxes + 3 * 8192);
  }
  fenceProxyAsyncShared();
  namedBarrierSync(1, 128);
  if (threadIdx.x == 0) {
    for (int b = 0; b < 4; ++b)
      tmaStore2D(&mapC, boxes + b * 8192, col0 + 64 * b, row0);
    tmaStoreCommit();
    tmaStoreWait<0>();
  }
}

/// A 64 x W fragment of random values stored by `launch(x, map)` into C
/// (rows x cols, row pitch cols + 16, poisoned) at (row0, col0) through a
/// map of boxes {64, boxCols} with `swizzle`: every element of C checked,
/// the fragment's clipped by C's extents, the rest still poison.
template <MmaType T, int W, typename Launch>
void checkFragmentStore(Report &rep, const char *name, int rows, int cols,
                        int row0, int col0, uint32_t boxCols,
                        CUtensorMapSwizzle swizzle, std::mt19937_64 &rng,
                        Launch launch) {
  using E = HostElem<T>;
  const uint16_t kPoison = 0x7FFF;
  const int pitch = cols + 16;
  std::uniform_real_distribution<float> dist(-8.f, 8.f);
  std::vector<float> x(64 * W);
  for (auto &v : x)
    v = dist(rng);
  float *dx;
  uint16_t *dc;
  TAWA_CHECK_CUDA(cudaMalloc(&dx, x.size() * 4));
  TAWA_CHECK_CUDA(cudaMalloc(&dc, size_t(rows + 2) * pitch * 2));
  TAWA_CHECK_CUDA(
      cudaMemcpy(dx, x.data(), x.size() * 4, cudaMemcpyHostToDevice));
  std::vector<uint16_t> poison(size_t(rows + 2) * pitch, kPoison);
  TAWA_CHECK_CUDA(
      cudaMemcpy(dc, poison.data(), poison.size() * 2, cudaMemcpyHostToDevice));
  CUtensorMap mC =
      encodeTiled(E::kMapType, 2, dc, {uint64_t(rows), uint64_t(cols)},
                  {uint64_t(pitch)}, {64, boxCols}, swizzle);
  launch(dx, mC);
  TAWA_CHECK_LAUNCH();
  std::vector<uint16_t> out(poison.size());
  TAWA_CHECK_CUDA(
      cudaMemcpy(out.data(), dc, out.size() * 2, cudaMemcpyDeviceToHost));
  TAWA_CHECK_CUDA(cudaFree(dx));
  TAWA_CHECK_CUDA(cudaFree(dc));
  int bad = 0;
  for (int r = 0; r < rows + 2; ++r)
    for (int c = 0; c < pitch; ++c) {
      const int tr = r - row0, tc = c - col0;
      const bool written =
          r < rows && c < cols && tr >= 0 && tr < 64 && tc >= 0 && tc < W;
      const uint16_t want = written ? E::fromFloat(x[tr * W + tc]) : kPoison;
      bad += out[size_t(r) * pitch + c] != want;
    }
  if (bad)
    rep.fail(name, "%d wrong elements", bad);
  else
    rep.pass(name);
}

template <MmaType T, bool Packed = false>
void runEpilogue(Report &rep, const char *label, int rows, int cols, int row0,
                 int col0, std::mt19937_64 &rng) {
  using DevT = std::conditional_t<T == MmaType::F16, __half, __nv_bfloat16>;
  char name[96];
  std::snprintf(name, sizeof name, "stmatrix_epilogue_%s%s_%s",
                HostElem<T>::kName, Packed ? "_packed" : "", label);
  const int smem = 1024 + 4 * 8192;
  TAWA_CHECK_CUDA(
      cudaFuncSetAttribute(epilogueKernel<DevT, Packed>,
                           cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  checkFragmentStore<T, 256>(
      rep, name, rows, cols, row0, col0, 64, CU_TENSOR_MAP_SWIZZLE_128B, rng,
      [&](const float *dx, const CUtensorMap &mC) {
        epilogueKernel<DevT, Packed><<<1, 128, smem>>>(dx, mC, row0, col0);
      });
}

// ---------------------------------------------------------------------------
// Narrow tiles: a 64 x N accumulator fragment (N = 32, 16, 8) -> one box of
// 64 rows x 2N bytes in the 64- or 32-byte swizzle (N = 8: 16-byte rows,
// unswizzled) -> one TMA store into C at (row0, col0), clipped by C's
// extents.
// ---------------------------------------------------------------------------

template <typename T, int N>
__global__ void __launch_bounds__(128, 1)
    narrowEpilogueKernel(const float *x,
                         const __grid_constant__ CUtensorMap mapC, int row0,
                         int col0) {
  __shared__ alignas(1024) uint8_t box[64 * N * 2];
  float d[N / 2];
  loadAcc<N>(x, d);
  storeAccNarrowSwizzled<T>(d, box);
  fenceProxyAsyncShared();
  namedBarrierSync(1, 128);
  if (threadIdx.x == 0) {
    tmaStore2D(&mapC, box, col0, row0);
    tmaStoreCommit();
    tmaStoreWait<0>();
  }
}

template <MmaType T, int N>
void runNarrowEpilogue(Report &rep, const char *label, int rows, int cols,
                       int row0, int col0, std::mt19937_64 &rng) {
  using DevT = std::conditional_t<T == MmaType::F16, __half, __nv_bfloat16>;
  char name[96];
  std::snprintf(name, sizeof name, "stmatrix_epilogue_64x%d_%s_%s", N,
                HostElem<T>::kName, label);
  checkFragmentStore<T, N>(
      rep, name, rows, cols, row0, col0, N,
      N == 32   ? CU_TENSOR_MAP_SWIZZLE_64B
      : N == 16 ? CU_TENSOR_MAP_SWIZZLE_32B
                : CU_TENSOR_MAP_SWIZZLE_NONE,
      rng,
      [&](const float *dx, const CUtensorMap &mC) {
        narrowEpilogueKernel<DevT, N><<<1, 128>>>(dx, mC, row0, col0);
      });
}

// ---------------------------------------------------------------------------
// ldmatrix prologue of an epilogue operand: a 128 x 256 tile TMA loads as
// four boxes of 128 rows x 64 columns (128-byte swizzle), as a ring slot
// holds it; the warp group reads rows [64 Frag, 64 Frag + 64) into the
// accumulator layout with loadAccBoxSwizzled and writes each element back
// through the accumulator mapping.
// ---------------------------------------------------------------------------

template <typename T, int Frag>
__global__ void __launch_bounds__(128, 1)
    smemToAccKernel(const __grid_constant__ CUtensorMap mapC, float *out) {
  extern __shared__ uint8_t raw[];
  uint8_t *tile = reinterpret_cast<uint8_t *>(
      (reinterpret_cast<uintptr_t>(raw) + 1023) & ~uintptr_t(1023));
  __shared__ MBarrier bar;
  if (threadIdx.x == 0) {
    mbarrierInit(&bar, 1);
    fenceMBarrierInit();
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    mbarrierArriveExpectTx(&bar, 4 * 128 * 128);
    for (int b = 0; b < 4; ++b)
      tmaLoad2D(tile + b * 128 * 128, &mapC, &bar, 64 * b, 0);
  }
  mbarrierWait(&bar, 0);
  T d[128];
#pragma unroll
  for (int i = 0; i < 128; ++i)
    d[i] = T(-1.0f);
  const uint8_t *rows = tile + Frag * 64 * 128;
  loadAccBoxSwizzled<T, 0>(rows, d);
  loadAccBoxSwizzled<T, 1>(rows + 128 * 128, d);
  loadAccBoxSwizzled<T, 2>(rows + 2 * 128 * 128, d);
  loadAccBoxSwizzled<T, 3>(rows + 3 * 128 * 128, d);
  const int tid = threadIdx.x;
#pragma unroll
  for (int i = 0; i < 128; ++i)
    out[(64 * Frag + accRow(tid, i)) * 256 + accCol(tid, i)] = float(d[i]);
}

template <MmaType T, int Frag>
void runSmemToAcc(Report &rep, std::mt19937_64 &rng) {
  using E = HostElem<T>;
  using DevT = std::conditional_t<T == MmaType::F16, __half, __nv_bfloat16>;
  char name[96];
  std::snprintf(name, sizeof name, "ldmatrix_smem_to_acc_%s_rows%d", E::kName,
                64 * Frag);
  std::uniform_real_distribution<float> dist(-8.f, 8.f);
  std::vector<uint16_t> c(128 * 256);
  for (auto &v : c)
    v = E::fromFloat(dist(rng));
  uint16_t *dc;
  float *dout;
  TAWA_CHECK_CUDA(cudaMalloc(&dc, c.size() * 2));
  TAWA_CHECK_CUDA(cudaMalloc(&dout, c.size() * 4));
  TAWA_CHECK_CUDA(
      cudaMemcpy(dc, c.data(), c.size() * 2, cudaMemcpyHostToDevice));
  // NaN everywhere: rows the fragment does not cover must stay NaN.
  TAWA_CHECK_CUDA(cudaMemset(dout, 0xff, c.size() * 4));
  CUtensorMap mC = encodeTiled(E::kMapType, 2, dc, {128, 256}, {256}, {128, 64},
                               CU_TENSOR_MAP_SWIZZLE_128B);
  const int smem = 1024 + 4 * 128 * 128;
  TAWA_CHECK_CUDA(
      cudaFuncSetAttribute(smemToAccKernel<DevT, Frag>,
                           cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  smemToAccKernel<DevT, Frag><<<1, 128, smem>>>(mC, dout);
  TAWA_CHECK_LAUNCH();
  std::vector<float> out(c.size());
  TAWA_CHECK_CUDA(
      cudaMemcpy(out.data(), dout, out.size() * 4, cudaMemcpyDeviceToHost));
  TAWA_CHECK_CUDA(cudaFree(dc));
  TAWA_CHECK_CUDA(cudaFree(dout));
  int bad = 0;
  for (int r = 0; r < 128; ++r)
    for (int col = 0; col < 256; ++col) {
      const float got = out[r * 256 + col];
      if (r / 64 == Frag)
        bad += got != float(E::toDouble(c[r * 256 + col]));
      else
        bad += !std::isnan(got);
    }
  if (bad)
    rep.fail(name, "%d wrong elements", bad);
  else
    rep.pass(name);
}

// ---------------------------------------------------------------------------
// exp2Approx / expApprox (math.cuh) against the host's exp2 / exp.
// ---------------------------------------------------------------------------

__global__ void expKernel(const float *x, float *e2, float *e, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    e2[i] = exp2Approx(x[i]);
    e[i] = expApprox(x[i]);
  }
}

void runExp(Report &rep, std::mt19937_64 &rng) {
  std::vector<float> x;
  std::uniform_real_distribution<float> dist(-120.0f, 120.0f);
  for (int i = 0; i < 4096; ++i)
    x.push_back(dist(rng));
  // Softmax's edge cases: exp2(-inf) = 0 (masked scores), exp2(0) = 1.
  const float inf = std::numeric_limits<float>::infinity();
  x.insert(x.end(), {-inf, 0.0f, -0.0f, 1.0f, -1.0f, 127.0f, -126.0f, inf});
  // Around the ends of the range, integers and their neighbours, huge
  // inputs, NaN.
  x.insert(x.end(), {-126.5f, -126.49f, -126.51f, -127.0f, -149.0f, -1e30f,
                     127.5f, 127.99f, 128.0f, 128.01f, 1e30f});
  for (int k = -125; k <= 127; ++k)
    x.insert(x.end(), {float(k), std::nextafter(float(k), -inf),
                       std::nextafter(float(k), inf)});
  const int firstNaN = int(x.size());
  x.push_back(std::numeric_limits<float>::quiet_NaN());
  const int n = int(x.size());
  float *dx, *d2, *de;
  TAWA_CHECK_CUDA(cudaMalloc(&dx, n * 4));
  TAWA_CHECK_CUDA(cudaMalloc(&d2, n * 4));
  TAWA_CHECK_CUDA(cudaMalloc(&de, n * 4));
  TAWA_CHECK_CUDA(cudaMemcpy(dx, x.data(), n * 4, cudaMemcpyHostToDevice));
  expKernel<<<(n + 255) / 256, 256>>>(dx, d2, de, n);
  TAWA_CHECK_CUDA(cudaDeviceSynchronize());
  std::vector<float> e2(n), e(n);
  TAWA_CHECK_CUDA(cudaMemcpy(e2.data(), d2, n * 4, cudaMemcpyDeviceToHost));
  TAWA_CHECK_CUDA(cudaMemcpy(e.data(), de, n * 4, cudaMemcpyDeviceToHost));
  TAWA_CHECK_CUDA(cudaFree(dx));
  TAWA_CHECK_CUDA(cudaFree(d2));
  TAWA_CHECK_CUDA(cudaFree(de));
  auto close = [](double got, double want, double tol) {
    if (std::isinf(want) || want == 0.0)
      return got == want;
    if (want > double(std::numeric_limits<float>::max()))
      return std::isinf(got) && got > 0;
    if (want < 1.2e-38) // below the smallest normal: flushed to zero
      return got == 0.0 || std::fabs(got - want) <= tol * want;
    return std::fabs(got - want) <= tol * want;
  };
  int bad2 = 0, bade = 0;
  for (int i = 0; i < firstNaN; ++i) {
    bad2 += !close(e2[i], std::exp2(double(x[i])), 2e-6);
    // x log2 e is rounded to float first: |x| <= 127 adds ~128 ulp of x.
    bade += !close(e[i], std::exp(double(x[i])), 2e-5);
  }
  for (int i = firstNaN; i < n; ++i)
    bad2 += !std::isnan(e2[i]);
  if (bad2)
    rep.fail("exp2Approx", "%d of %d wrong", bad2, n);
  else
    rep.pass("exp2Approx");
  if (bade)
    rep.fail("expApprox", "%d of %d wrong", bade, n);
  else
    rep.pass("expApprox");
}

// divFull (math.cuh) against the host's double-precision quotient: at most
// 2 ulp of the float result (the ulp of a subnormal being 2^-149), and the
// IEEE special cases exactly.
__global__ void divKernel(const float *a, const float *b, float *q, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    q[i] = divFull(a[i], b[i]);
}

void runDiv(Report &rep, std::mt19937_64 &rng) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> a, b;
  // Random signs, mantissas and exponents 2^-140 ... 2^127 on both sides,
  // quotients kept below FLT_MAX / 4 (overflow is checked below).
  std::uniform_real_distribution<float> mant(1.0f, 2.0f);
  std::uniform_int_distribution<int> expo(-140, 127), sign(0, 1);
  while (a.size() < 8192) {
    float x = std::ldexp(mant(rng), expo(rng)) * (sign(rng) ? -1.0f : 1.0f);
    float y = std::ldexp(mant(rng), expo(rng)) * (sign(rng) ? -1.0f : 1.0f);
    if (std::fabs(double(x) / double(y)) >= 0.25 * double(FLT_MAX))
      continue;
    a.push_back(x);
    b.push_back(y);
  }
  // Divisors around the ends of the range, where div.full rescales: above
  // 2^126, subnormal, the smallest normal; attention's row sums (1 ... 1e4).
  const float edgeB[] = {0x1p126f,  0x1.8p126f, 3e38f, FLT_MAX,  0x1p-126f,
                         0x1p-127f, 1e-45f,     7e-39f, 1.0f,    3.0f,
                         1234.5f,   -0x1p127f,  -1e-40f};
  const float edgeA[] = {1.0f, -7.5f, 3e38f, 1e-38f, 1e-45f, 0x1p-100f, 2.0f};
  for (float y : edgeB)
    for (float x : edgeA)
      if (std::fabs(double(x) / double(y)) < 0.25 * double(FLT_MAX)) {
        a.push_back(x);
        b.push_back(y);
      }
  const int nApprox = int(a.size());
  // Exact cases: {a, b, expected}.
  const float exact[][3] = {
      {0.0f, 5.0f, 0.0f},     {-0.0f, 5.0f, -0.0f},  {0.0f, -5.0f, -0.0f},
      {1.0f, 0.0f, inf},      {-1.0f, 0.0f, -inf},   {1.0f, -0.0f, -inf},
      {1.0f, inf, 0.0f},      {-1.0f, inf, -0.0f},   {3e38f, inf, 0.0f},
      {inf, 2.0f, inf},       {-inf, 2.0f, -inf},    {3e38f, 1e-3f, inf},
      {-3e38f, 1e-20f, -inf}, {8.0f, 2.0f, 4.0f},    {1.0f, 1.0f, 1.0f},
      {0.0f, 0.0f, nan},      {inf, inf, nan},       {nan, 1.0f, nan},
      {1.0f, nan, nan},       {0.0f, inf, 0.0f}};
  for (const auto &e : exact) {
    a.push_back(e[0]);
    b.push_back(e[1]);
  }
  const int n = int(a.size());
  float *da, *db, *dq;
  TAWA_CHECK_CUDA(cudaMalloc(&da, n * 4));
  TAWA_CHECK_CUDA(cudaMalloc(&db, n * 4));
  TAWA_CHECK_CUDA(cudaMalloc(&dq, n * 4));
  TAWA_CHECK_CUDA(cudaMemcpy(da, a.data(), n * 4, cudaMemcpyHostToDevice));
  TAWA_CHECK_CUDA(cudaMemcpy(db, b.data(), n * 4, cudaMemcpyHostToDevice));
  divKernel<<<(n + 255) / 256, 256>>>(da, db, dq, n);
  TAWA_CHECK_LAUNCH();
  std::vector<float> q(n);
  TAWA_CHECK_CUDA(cudaMemcpy(q.data(), dq, n * 4, cudaMemcpyDeviceToHost));
  TAWA_CHECK_CUDA(cudaFree(da));
  TAWA_CHECK_CUDA(cudaFree(db));
  TAWA_CHECK_CUDA(cudaFree(dq));
  int bad = 0;
  for (int i = 0; i < nApprox; ++i) {
    const double want = double(a[i]) / double(b[i]);
    const double aw = std::fabs(want);
    const double ulp = aw < double(FLT_MIN)
                           ? std::ldexp(1.0, -149)
                           : std::ldexp(1.0, std::ilogb(float(aw)) - 23);
    if (!(std::fabs(double(q[i]) - want) <= 2 * ulp)) {
      if (bad < 5)
        std::printf("  divFull(%a, %a) = %a, want %a\n", a[i], b[i], q[i],
                    want);
      ++bad;
    }
  }
  for (int i = nApprox, k = 0; i < n; ++i, ++k) {
    const float want = exact[k][2];
    const bool ok = std::isnan(want)
                        ? std::isnan(q[i])
                        : q[i] == want && std::signbit(q[i]) ==
                                              std::signbit(want);
    if (!ok) {
      std::printf("  divFull(%a, %a) = %a, want %a\n", a[i], b[i], q[i],
                  want);
      ++bad;
    }
  }
  if (bad)
    rep.fail("divFull", "%d of %d wrong", bad, n);
  else
    rep.pass("divFull");
}

// The scheduling pin stores only for a negative sum (never for sums of
// exponentials: zero, positive, +inf, NaN).
__global__ void pinKernel(const float *sums, uint32_t *word) {
  __shared__ uint32_t scratch;
  if (threadIdx.x == 0)
    scratch = 0xA5A5A5A5u;
  __syncthreads();
  float rows[2] = {sums[2 * threadIdx.x], sums[2 * threadIdx.x + 1]};
  pinAfterRowSums(rows, reinterpret_cast<uint8_t *>(&scratch));
  __syncthreads();
  if (threadIdx.x == 0)
    *word = scratch;
}

void runPin(Report &rep) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> never = {0.0f, -0.0f, 1.0f, 3e38f, inf, nan};
  int bad = 0;
  for (int negative = 0; negative < 2; ++negative) {
    std::vector<float> sums(64);
    for (size_t i = 0; i < sums.size(); ++i)
      sums[i] = never[i % never.size()];
    if (negative)
      sums[37] = -1e-30f;
    float *ds;
    uint32_t *dw, word = 0;
    TAWA_CHECK_CUDA(cudaMalloc(&ds, sums.size() * 4));
    TAWA_CHECK_CUDA(cudaMalloc(&dw, 4));
    TAWA_CHECK_CUDA(
        cudaMemcpy(ds, sums.data(), sums.size() * 4, cudaMemcpyHostToDevice));
    pinKernel<<<1, 32>>>(ds, dw);
    TAWA_CHECK_LAUNCH();
    TAWA_CHECK_CUDA(cudaMemcpy(&word, dw, 4, cudaMemcpyDeviceToHost));
    TAWA_CHECK_CUDA(cudaFree(ds));
    TAWA_CHECK_CUDA(cudaFree(dw));
    bad += word != (negative ? 0u : 0xA5A5A5A5u);
  }
  if (bad)
    rep.fail("pin_after_row_sums", "stored for a sum >= 0 or NaN, or not "
                                   "for a negative one");
  else
    rep.pass("pin_after_row_sums");
}

} // namespace

int main() {
  const uint64_t seed = testSeed("test_fragment");
  std::mt19937_64 rng(seed);
  TAWA_CHECK_CUDA(cudaSetDevice(0));
  Report rep;
  runExp(rep, rng);
  runDiv(rep, rng);
  runPin(rep);
  // Fragments of 6, 10 and 32 values per row half: the tree's odd widths.
  runReduce<24>(rep, rng);
  runReduce<40>(rep, rng);
  runReduce<64>(rep, rng);
  runReduce<128>(rep, rng);
  runReduce<256>(rep, rng);
  runConvert<MmaType::F16>(rep, rng);
  runConvert<MmaType::BF16>(rep, rng);
  runConvert<MmaType::E4M3>(rep, rng);
  runEpilogue<MmaType::F16>(rep, "full", 64, 256, 0, 0, rng);
  runEpilogue<MmaType::F16>(rep, "clipped", 50, 200, 0, 0, rng);
  runEpilogue<MmaType::BF16>(rep, "offset_clipped", 100, 296, 40, 64, rng);
  runEpilogue<MmaType::F16, true>(rep, "full", 64, 256, 0, 0, rng);
  runEpilogue<MmaType::BF16, true>(rep, "offset_clipped", 100, 296, 40, 64,
                                   rng);
  runNarrowEpilogue<MmaType::F16, 32>(rep, "full", 64, 32, 0, 0, rng);
  runNarrowEpilogue<MmaType::BF16, 32>(rep, "offset_clipped", 100, 72, 40, 48,
                                       rng);
  runNarrowEpilogue<MmaType::F16, 16>(rep, "full", 64, 16, 0, 0, rng);
  runNarrowEpilogue<MmaType::BF16, 16>(rep, "offset_clipped", 90, 40, 32, 32,
                                       rng);
  runNarrowEpilogue<MmaType::F16, 8>(rep, "full", 64, 8, 0, 0, rng);
  runNarrowEpilogue<MmaType::BF16, 8>(rep, "offset_clipped", 70, 24, 16, 8,
                                      rng);
  runSmemToAcc<MmaType::F16, 0>(rep, rng);
  runSmemToAcc<MmaType::BF16, 1>(rep, rng);
  return rep.exitCode();
}
