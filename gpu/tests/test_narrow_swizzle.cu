// Tiles whose rows are 64 or 32 bytes (BK = 32 or 16 at 16 bits, 64 or 32 at
// 8 bits), which TMA writes with its 64- and 32-byte swizzles:
//  * a tensor map built on the device with makeTensorMap2D<..., SpanBytes>
//    must place a box byte for byte where a host-encoded map of the same
//    swizzle does, and where the swizzle formula (16-byte chunk bits
//    xor the row bits above the span) says;
//  * wgmma over K-major A and B tiles of those rows, read through
//    descKMajorSw64 / descKMajorSw32 (A from shared memory or from
//    registers, and the paired form), must give A * B: D[64 x N] =
//    A[64 x K] * B[K x N], K one row of the span, accumulators poisoned
//    with NaN and the first wgmma with scaleD = 0;
//  * wgmma with an MN-major B of rows of 64 or 32 bytes (B stored [K, N],
//    N = 32 or 16 at 16 bits) read through descMNMajorSw64 / Sw32.
#include "common.cuh"
#include "mma_host.cuh"
#include "tawa/device/device.cuh"

#include <cmath>

using namespace tawa::device;
using namespace tawa::test;

namespace {

// ---------------------------------------------------------------------------
// Device-built tensor maps.
// ---------------------------------------------------------------------------

constexpr int kMapBoxRows = 64;

/// Loads one box of 16-bit elements (SpanBytes / 2 columns x kMapBoxRows
/// rows) at (col0, row0) through `hostMap` and through a map this CTA builds
/// for the same matrix, and dumps both boxes' raw shared-memory bytes.
template <int SpanBytes>
__global__ void deviceMapLoad(const __grid_constant__ CUtensorMap hostMap,
                              const uint16_t *base, uint32_t cols,
                              uint32_t rows, uint64_t pitchBytes,
                              CUtensorMap *deviceMap, int col0, int row0,
                              uint16_t *dumpHost, uint16_t *dumpDevice) {
  constexpr int kBoxBytes = kMapBoxRows * SpanBytes;
  // Both boxes start on a 1024-byte boundary: a whole swizzle pattern.
  extern __shared__ uint8_t raw[];
  uint8_t *boxes = reinterpret_cast<uint8_t *>(
      (reinterpret_cast<uintptr_t>(raw) + 1023) & ~uintptr_t(1023));
  __shared__ alignas(128) uint8_t staging[128];
  __shared__ MBarrier bar;
  if (threadIdx.x < 32)
    makeTensorMap2D<TensorMapElem::F16, SpanBytes / 2, kMapBoxRows, SpanBytes>(
        deviceMap, staging, base, cols, rows, pitchBytes);
  if (threadIdx.x == 0) {
    mbarrierInit(&bar, 1);
    fenceMBarrierInit();
    tensorMapAcquire(deviceMap);
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    mbarrierArriveExpectTx(&bar, 2 * kBoxBytes);
    tmaLoad2D(boxes, &hostMap, &bar, col0, row0);
    tmaLoad2D(boxes + kBoxBytes, deviceMap, &bar, col0, row0);
  }
  mbarrierWait(&bar, 0);
  for (int i = threadIdx.x; i < kBoxBytes / 2; i += blockDim.x) {
    dumpHost[i] = reinterpret_cast<const uint16_t *>(boxes)[i];
    dumpDevice[i] = reinterpret_cast<const uint16_t *>(boxes + kBoxBytes)[i];
  }
}

/// Where TMA's swizzle of SpanBytes puts byte `colByte` of row `row` of a
/// box: the 16-byte chunk index xor the address bits just above the span's
/// 128-byte pattern row (written out per span, independently of the device
/// library).
uint32_t hostSwizzled(int spanBytes, uint32_t row, uint32_t colByte) {
  const uint32_t linear = row * spanBytes + colByte;
  const uint32_t chunkBits = spanBytes == 128 ? 7 : spanBytes == 64 ? 3 : 1;
  return linear ^ (((linear >> 7) & chunkBits) << 4);
}

template <int SpanBytes> void runDeviceMap(Report &rep, std::mt19937_64 &rng) {
  char name[96];
  std::snprintf(name, sizeof name, "devicemap_swizzle%d_f16", SpanBytes);
  constexpr int kBoxCols = SpanBytes / 2;
  // Ragged edges: the box at (cols - kBoxCols / 2, rows - 10) is partly
  // outside, where both maps must read zeros.
  const uint32_t cols = 3 * kBoxCols + 8, rows = 150;
  const uint32_t pitch = cols + 8; // elements; a multiple of 16 bytes
  std::vector<uint16_t> host(size_t(rows) * pitch);
  for (auto &v : host)
    v = static_cast<uint16_t>(rng() % 0xFFFF) | 1; // never 0
  uint16_t *dBase, *dDumps;
  CUtensorMap *dMap;
  constexpr int kBoxElems = kMapBoxRows * kBoxCols;
  TAWA_CHECK_CUDA(cudaMalloc(&dBase, host.size() * 2));
  TAWA_CHECK_CUDA(cudaMalloc(&dDumps, 2 * kBoxElems * 2));
  TAWA_CHECK_CUDA(cudaMalloc(&dMap, sizeof(CUtensorMap)));
  TAWA_CHECK_CUDA(
      cudaMemcpy(dBase, host.data(), host.size() * 2, cudaMemcpyHostToDevice));
  TAWA_CHECK_CUDA(cudaMemset(dDumps, 0xFF, 2 * kBoxElems * 2));
  const CUtensorMapSwizzle swizzle =
      SpanBytes == 64 ? CU_TENSOR_MAP_SWIZZLE_64B : CU_TENSOR_MAP_SWIZZLE_32B;
  CUtensorMap hostMap =
      encodeTiled(CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, dBase, {rows, cols},
                  {pitch}, {kMapBoxRows, kBoxCols}, swizzle);
  const int col0 = cols - kBoxCols / 2, row0 = rows - 10;
  deviceMapLoad<SpanBytes><<<1, 128, 1024 + 2 * kMapBoxRows * SpanBytes>>>(
      hostMap, dBase, cols, rows, uint64_t(pitch) * 2, dMap, col0, row0, dDumps,
      dDumps + kBoxElems);
  TAWA_CHECK_LAUNCH();
  std::vector<uint16_t> dumps(2 * kBoxElems);
  TAWA_CHECK_CUDA(cudaMemcpy(dumps.data(), dDumps, dumps.size() * 2,
                             cudaMemcpyDeviceToHost));
  TAWA_CHECK_CUDA(cudaFree(dBase));
  TAWA_CHECK_CUDA(cudaFree(dDumps));
  TAWA_CHECK_CUDA(cudaFree(dMap));
  int bad = 0;
  for (int r = 0; r < kMapBoxRows; ++r)
    for (int c = 0; c < kBoxCols; ++c) {
      const int gr = row0 + r, gc = col0 + c;
      const uint16_t want = (gr < int(rows) && gc < int(cols))
                                ? host[size_t(gr) * pitch + gc]
                                : uint16_t(0);
      const uint32_t at = hostSwizzled(SpanBytes, r, 2 * c) / 2;
      if (dumps[at] != want || dumps[kBoxElems + at] != want) {
        if (bad++ == 0)
          rep.fail(name,
                   "row %d col %d: host map 0x%04x, device map 0x%04x, want "
                   "0x%04x",
                   r, c, dumps[at], dumps[kBoxElems + at], want);
      }
    }
  if (!bad)
    rep.pass(name);
}

// ---------------------------------------------------------------------------
// wgmma over narrow K-major tiles.
// ---------------------------------------------------------------------------

template <int SpanBytes>
__device__ __forceinline__ uint64_t descKMajor(const void *tile) {
  if constexpr (SpanBytes == 64)
    return descKMajorSw64(tile);
  else
    return descKMajorSw32(tile);
}

/// A is [64, K] and B [N, K] in shared memory, each one TMA box of rows of
/// SpanBytes = K * element bytes; K / kMmaK steps of 32 bytes along the
/// row. RegA: A read from global memory into the a_reg layout instead.
template <int N, MmaType T, int SpanBytes, bool RegA, bool Pair>
__global__ void __launch_bounds__(128, 1)
    narrowMma(const __grid_constant__ CUtensorMap mapA,
              const __grid_constant__ CUtensorMap mapB, const uint8_t *aGlobal,
              float *out) {
  constexpr int kSteps = SpanBytes / 32;
  extern __shared__ uint8_t raw[];
  uint8_t *sA = reinterpret_cast<uint8_t *>(
      (reinterpret_cast<uintptr_t>(raw) + 1023) & ~uintptr_t(1023));
  uint8_t *sB = sA + 64 * SpanBytes; // a multiple of 8 rows: pattern-aligned
  __shared__ MBarrier bar;
  const int tid = threadIdx.x;
  if (tid == 0) {
    mbarrierInit(&bar, 1);
    fenceMBarrierInit();
  }
  __syncthreads();
  if (tid == 0) {
    mbarrierArriveExpectTx(&bar, (64 + N) * SpanBytes);
    tmaLoad2D(sA, &mapA, &bar, 0, 0);
    tmaLoad2D(sB, &mapB, &bar, 0, 0);
  }
  mbarrierWait(&bar, 0);
  float d[N / 2], d0[N / 4], d1[N / 4];
  fillFragment(d, __int_as_float(0x7fc00000)); // NaN: scaleD = 0 ignores it
  fillFragment(d0, __int_as_float(0x7fc00000));
  fillFragment(d1, __int_as_float(0x7fc00000));
  uint32_t a[kSteps][4];
  if constexpr (RegA) {
    // a_reg layout: register j = 2s + h holds row r + 8h and the
    // (8 | 16)-byte column group s of this lane (see fragment.cuh).
    const int r = 16 * (tid / 32) + (tid % 32) / 4, q = tid % 4;
    for (int kk = 0; kk < kSteps; ++kk)
      for (int s = 0; s < 2; ++s)
        for (int h = 0; h < 2; ++h)
          a[kk][2 * s + h] = *reinterpret_cast<const uint32_t *>(
              aGlobal + (r + 8 * h) * SpanBytes + kk * 32 + s * 16 + q * 4);
  }
  const uint64_t descA = descKMajor<SpanBytes>(sA);
  const uint64_t descB = descKMajor<SpanBytes>(sB);
  wgmmaFence();
#pragma unroll
  for (int kk = 0; kk < kSteps; ++kk) {
    const uint64_t stepA = descAdvance(descA, kk * 32);
    const uint64_t stepB = descAdvance(descB, kk * 32);
    if constexpr (RegA)
      wgmmaRS<N, T, 0>(d, a[kk], stepB, kk > 0);
    else if constexpr (Pair)
      wgmmaSSPair<N, T>(d0, d1, stepA, stepB, kk > 0);
    else
      wgmmaSS<N, T>(d, stepA, stepB, kk > 0);
  }
  wgmmaCommit();
  wgmmaWait<0>();
  if constexpr (Pair) {
    fenceFragment(d0);
    fenceFragment(d1);
#pragma unroll
    for (int i = 0; i < N / 4; ++i) {
      out[accRow(tid, i) * N + accCol(tid, i)] = d0[i];
      out[accRow(tid, i) * N + N / 2 + accCol(tid, i)] = d1[i];
    }
  } else {
    fenceFragment(d);
#pragma unroll
    for (int i = 0; i < N / 2; ++i)
      out[accRow(tid, i) * N + accCol(tid, i)] = d[i];
  }
}

template <int N, MmaType T, int SpanBytes, bool RegA = false, bool Pair = false>
void runMma(Report &rep, std::mt19937_64 &rng) {
  using E = HostElem<T>;
  using Bits = typename E::Bits;
  constexpr int kK = SpanBytes / int(sizeof(Bits));
  char name[96];
  std::snprintf(name, sizeof name, "wgmma_m64n%dk%d_%s_%s_Kmajor_swizzle%d%s",
                N, kK, E::kName, RegA ? "regA" : "smemA", SpanBytes,
                Pair ? "_pair" : "");
  auto A = randomElems<T>(64 * kK, rng);        // A[m][k] at m * kK + k
  auto B = randomElems<T>(size_t(N) * kK, rng); // stored [n][k]
  Bits *dA, *dB;
  float *dOut;
  TAWA_CHECK_CUDA(cudaMalloc(&dA, A.size() * sizeof(Bits)));
  TAWA_CHECK_CUDA(cudaMalloc(&dB, B.size() * sizeof(Bits)));
  TAWA_CHECK_CUDA(cudaMalloc(&dOut, 64 * N * 4));
  TAWA_CHECK_CUDA(cudaMemcpy(dA, A.data(), A.size() * sizeof(Bits),
                             cudaMemcpyHostToDevice));
  TAWA_CHECK_CUDA(cudaMemcpy(dB, B.data(), B.size() * sizeof(Bits),
                             cudaMemcpyHostToDevice));
  TAWA_CHECK_CUDA(cudaMemset(dOut, 0xFF, 64 * N * 4)); // NaN poison
  const CUtensorMapSwizzle swizzle =
      SpanBytes == 64 ? CU_TENSOR_MAP_SWIZZLE_64B : CU_TENSOR_MAP_SWIZZLE_32B;
  CUtensorMap mA =
      encodeTiled(E::kMapType, sizeof(Bits), dA, {64, uint64_t(kK)},
                  {uint64_t(kK)}, {64, uint32_t(kK)}, swizzle);
  CUtensorMap mB =
      encodeTiled(E::kMapType, sizeof(Bits), dB, {uint64_t(N), uint64_t(kK)},
                  {uint64_t(kK)}, {uint32_t(N), uint32_t(kK)}, swizzle);
  narrowMma<N, T, SpanBytes, RegA, Pair>
      <<<1, 128, 1024 + (64 + N) * SpanBytes>>>(
          mA, mB, reinterpret_cast<const uint8_t *>(dA), dOut);
  TAWA_CHECK_LAUNCH();
  std::vector<float> out(64 * N);
  TAWA_CHECK_CUDA(
      cudaMemcpy(out.data(), dOut, out.size() * 4, cudaMemcpyDeviceToHost));
  TAWA_CHECK_CUDA(cudaFree(dA));
  TAWA_CHECK_CUDA(cudaFree(dB));
  TAWA_CHECK_CUDA(cudaFree(dOut));
  const double relTol = T == MmaType::E4M3 ? 5e-3 : 2e-3;
  int bad = 0, firstM = -1, firstN = -1;
  double firstGot = 0, firstWant = 0;
  for (int m = 0; m < 64; ++m)
    for (int n = 0; n < N; ++n) {
      double want = 0, mag = 0;
      for (int k = 0; k < kK; ++k) {
        const double p =
            E::toDouble(A[m * kK + k]) * E::toDouble(B[n * kK + k]);
        want += p;
        mag += std::fabs(p);
      }
      const double got = out[m * N + n];
      if (!(std::fabs(got - want) <= relTol * mag + 1e-5) && bad++ == 0) {
        firstM = m;
        firstN = n;
        firstGot = got;
        firstWant = want;
      }
    }
  if (bad)
    rep.fail(name, "%d wrong elements, first (%d,%d) got %g want %g", bad,
             firstM, firstN, firstGot, firstWant);
  else
    rep.pass(name);
}

/// A [64, 64] K-major (128-byte rows) and B stored [K = 64, N] MN-major with
/// rows of N 16-bit elements = SpanBytes (N = 32: 64 bytes, N = 16: 32 bytes),
/// one TMA box each; B read through descMNMajorSw64 / Sw32, K stepped by 16
/// rows.
template <int N, MmaType T>
__global__ void __launch_bounds__(128, 1)
    mnMajorBMma(const __grid_constant__ CUtensorMap mapA,
                const __grid_constant__ CUtensorMap mapB, float *out) {
  constexpr int kSpan = N * 2;
  extern __shared__ uint8_t raw[];
  uint8_t *sA = reinterpret_cast<uint8_t *>(
      (reinterpret_cast<uintptr_t>(raw) + 1023) & ~uintptr_t(1023));
  uint8_t *sB = sA + 64 * 128;
  __shared__ MBarrier bar;
  const int tid = threadIdx.x;
  if (tid == 0) {
    mbarrierInit(&bar, 1);
    fenceMBarrierInit();
  }
  __syncthreads();
  if (tid == 0) {
    mbarrierArriveExpectTx(&bar, 64 * 128 + 64 * kSpan);
    tmaLoad2D(sA, &mapA, &bar, 0, 0);
    tmaLoad2D(sB, &mapB, &bar, 0, 0);
  }
  mbarrierWait(&bar, 0);
  float d[N / 2];
  fillFragment(d, __int_as_float(0x7fc00000));
  const uint64_t descA = descKMajorSw128(sA);
  uint64_t descB;
  if constexpr (kSpan == 64)
    descB = descMNMajorSw64(sB, 64 * kSpan);
  else
    descB = descMNMajorSw32(sB, 64 * kSpan);
  wgmmaFence();
#pragma unroll
  for (int kk = 0; kk < 4; ++kk)
    wgmmaSS<N, T, 0, 1>(d, descAdvance(descA, kk * 32),
                        descAdvance(descB, kk * 16 * kSpan), kk > 0);
  wgmmaCommit();
  wgmmaWait<0>();
  fenceFragment(d);
#pragma unroll
  for (int i = 0; i < N / 2; ++i)
    out[accRow(tid, i) * N + accCol(tid, i)] = d[i];
}

template <int N, MmaType T>
void runMNMajorB(Report &rep, std::mt19937_64 &rng) {
  using E = HostElem<T>;
  using Bits = typename E::Bits;
  char name[96];
  std::snprintf(name, sizeof name, "wgmma_m64n%dk64_%s_MNmajorB_swizzle%d", N,
                E::kName, N * 2);
  auto A = randomElems<T>(64 * 64, rng); // A[m][k] at m * 64 + k
  auto B = randomElems<T>(64 * N, rng);  // stored [k][n] at k * N + n
  Bits *dA, *dB;
  float *dOut;
  TAWA_CHECK_CUDA(cudaMalloc(&dA, A.size() * sizeof(Bits)));
  TAWA_CHECK_CUDA(cudaMalloc(&dB, B.size() * sizeof(Bits)));
  TAWA_CHECK_CUDA(cudaMalloc(&dOut, 64 * N * 4));
  TAWA_CHECK_CUDA(cudaMemcpy(dA, A.data(), A.size() * sizeof(Bits),
                             cudaMemcpyHostToDevice));
  TAWA_CHECK_CUDA(cudaMemcpy(dB, B.data(), B.size() * sizeof(Bits),
                             cudaMemcpyHostToDevice));
  TAWA_CHECK_CUDA(cudaMemset(dOut, 0xFF, 64 * N * 4)); // NaN poison
  CUtensorMap mA = encodeTiled(E::kMapType, sizeof(Bits), dA, {64, 64}, {64},
                               {64, 64}, CU_TENSOR_MAP_SWIZZLE_128B);
  CUtensorMap mB = encodeTiled(E::kMapType, sizeof(Bits), dB, {64, uint64_t(N)},
                               {uint64_t(N)}, {64, uint32_t(N)},
                               N == 32 ? CU_TENSOR_MAP_SWIZZLE_64B
                                       : CU_TENSOR_MAP_SWIZZLE_32B);
  mnMajorBMma<N, T><<<1, 128, 1024 + 64 * 128 + 64 * N * 2>>>(mA, mB, dOut);
  TAWA_CHECK_LAUNCH();
  std::vector<float> out(64 * N);
  TAWA_CHECK_CUDA(
      cudaMemcpy(out.data(), dOut, out.size() * 4, cudaMemcpyDeviceToHost));
  TAWA_CHECK_CUDA(cudaFree(dA));
  TAWA_CHECK_CUDA(cudaFree(dB));
  TAWA_CHECK_CUDA(cudaFree(dOut));
  int bad = 0;
  for (int m = 0; m < 64; ++m)
    for (int n = 0; n < N; ++n) {
      double want = 0, mag = 0;
      for (int k = 0; k < 64; ++k) {
        const double p = E::toDouble(A[m * 64 + k]) * E::toDouble(B[k * N + n]);
        want += p;
        mag += std::fabs(p);
      }
      bad += !(std::fabs(out[m * N + n] - want) <= 2e-3 * mag + 1e-5);
    }
  if (bad)
    rep.fail(name, "%d wrong elements", bad);
  else
    rep.pass(name);
}

template <MmaType T> void runType(Report &rep, std::mt19937_64 &rng) {
  runMma<64, T, 64>(rep, rng);
  runMma<128, T, 64>(rep, rng);
  runMma<256, T, 64>(rep, rng);
  runMma<64, T, 32>(rep, rng);
  runMma<128, T, 32>(rep, rng);
  runMma<128, T, 64, false, true>(rep, rng);
  runMma<256, T, 32, false, true>(rep, rng);
  runMma<64, T, 64, true>(rep, rng);
  runMma<128, T, 32, true>(rep, rng);
}

} // namespace

int main() {
  const uint64_t seed = testSeed("test_narrow_swizzle");
  std::mt19937_64 rng(seed);
  TAWA_CHECK_CUDA(cudaSetDevice(0));
  Report rep;
  runDeviceMap<64>(rep, rng);
  runDeviceMap<32>(rep, rng);
  runType<MmaType::F16>(rep, rng);
  runType<MmaType::BF16>(rep, rng);
  runType<MmaType::E4M3>(rep, rng);
  runMNMajorB<32, MmaType::F16>(rep, rng);
  runMNMajorB<16, MmaType::F16>(rep, rng);
  runMNMajorB<32, MmaType::BF16>(rep, rng);
  runMNMajorB<16, MmaType::BF16>(rep, rng);
  return rep.exitCode();
}
