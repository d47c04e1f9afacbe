// Every supported wgmma shape and type alone: D[64 x N] = A[64 x K] * B[K x N]
// for f16/bf16 (K = 4 x k16) and e4m3 (K = 4 x k32), N in {64, 128, 256},
// A from shared memory (descriptor) or registers, B K-major or (16-bit types)
// MN-major. Operands arrive by TMA with 128-byte swizzle, so the descriptors
// are checked against the layout TMA really writes. Accumulators start as NaN
// and the first wgmma uses scaleD = 0, which must overwrite them. The paired
// form (wgmmaSSPair, N = 128 and 256) holds the accumulator as two arrays,
// each read back as a fragment of N / 2 columns: the first must hold the
// columns [0, N/2), the second [N/2, N).
#include "common.cuh"
#include "mma_host.cuh"
#include "tawa/device/device.cuh"

#include <cmath>

using namespace tawa::device;
using namespace tawa::test;

namespace {

constexpr int kRowBytes = 128; // K extent of A and B tiles, in bytes

template <int N, MmaType T, bool RegA, int TransA, int TransB, bool Pair>
__global__ void __launch_bounds__(128, 1)
    mmaKernel(const __grid_constant__ CUtensorMap mapA,
              const __grid_constant__ CUtensorMap mapB, const uint8_t *aGlobal,
              float *out) {
  constexpr int kElemBytes = T == MmaType::E4M3 ? 1 : 2;
  constexpr int kK = kRowBytes / kElemBytes;
  constexpr int kStepBytes = 32; // one instruction's K, in bytes
  extern __shared__ uint8_t raw[];
  uint8_t *sA = reinterpret_cast<uint8_t *>(
      (reinterpret_cast<uintptr_t>(raw) + 1023) & ~uintptr_t(1023));
  uint8_t *sB = sA + 64 * kRowBytes;
  __shared__ MBarrier bar;
  const int tid = threadIdx.x;
  if (tid == 0) {
    mbarrierInit(&bar, 1);
    fenceMBarrierInit();
  }
  __syncthreads();
  if (tid == 0) {
    mbarrierArriveExpectTx(&bar, 64 * kRowBytes + N * kRowBytes);
    tmaLoad2D(sA, &mapA, &bar, 0, 0); // MN-major A (64 M): a single box
    if constexpr (TransB) {
      // K rows x 64 N columns per box, one box per 64 columns.
      for (int j = 0; j < N / 64; ++j)
        tmaLoad2D(sB + j * kK * 128, &mapB, &bar, j * 64, 0);
    } else {
      tmaLoad2D(sB, &mapB, &bar, 0, 0);
    }
  }
  mbarrierWait(&bar, 0);

  float d[N / 2];
  fillFragment(d, __int_as_float(0x7fc00000)); // NaN: scaleD = 0 must ignore it
  float d0[N / 4], d1[N / 4];
  fillFragment(d0, __int_as_float(0x7fc00000));
  fillFragment(d1, __int_as_float(0x7fc00000));
  const uint64_t descA =
      TransA ? descMNMajorSw128(sA, kK * 128) : descKMajorSw128(sA);
  const uint64_t descB =
      TransB ? descMNMajorSw128(sB, kK * 128) : descKMajorSw128(sB);
  uint32_t a[4][4];
  if constexpr (RegA) {
    // a_reg layout: register j = 2s + h holds row r + 8h and the
    // (8 | 16)-byte column group s of this lane (see fragment.cuh).
    const int r = 16 * (tid / 32) + (tid % 32) / 4, q = tid % 4;
    for (int kk = 0; kk < 4; ++kk)
      for (int s = 0; s < 2; ++s)
        for (int h = 0; h < 2; ++h) {
          const int byteCol = kk * kStepBytes + s * 16 + q * 4;
          a[kk][2 * s + h] = *reinterpret_cast<const uint32_t *>(
              aGlobal + (r + 8 * h) * kRowBytes + byteCol);
        }
  }
  wgmmaFence();
#pragma unroll
  for (int kk = 0; kk < 4; ++kk) {
    const uint64_t b =
        descAdvance(descB, TransB ? kk * 16 * 128 : kk * kStepBytes);
    if constexpr (RegA)
      wgmmaRS<N, T, TransB>(d, a[kk], b, kk > 0);
    else if constexpr (Pair)
      wgmmaSSPair<N, T, TransA, TransB>(
          d0, d1, descAdvance(descA, TransA ? kk * 16 * 128 : kk * kStepBytes),
          b, kk > 0);
    else
      wgmmaSS<N, T, TransA, TransB>(
          d, descAdvance(descA, TransA ? kk * 16 * 128 : kk * kStepBytes), b,
          kk > 0);
  }
  wgmmaCommit();
  wgmmaWait<0>();
  if constexpr (Pair) {
    fenceFragment(d0);
    fenceFragment(d1);
    // Each half read as a fragment of N / 2 columns.
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

template <int N, MmaType T, bool RegA, int TransB, int TransA = 0,
          bool Pair = false>
void runCase(Report &rep, std::mt19937_64 &rng) {
  using E = HostElem<T>;
  using Bits = typename E::Bits;
  constexpr int kK = kRowBytes / sizeof(Bits);
  char name[96];
  std::snprintf(name, sizeof name, "wgmma_m64n%dk%d_%s_%s_B%s%s", N, kMmaK<T>,
                E::kName, RegA ? "regA" : (TransA ? "smemA_MNmajor" : "smemA"),
                TransB ? "MNmajor" : "Kmajor", Pair ? "_pair" : "");
  auto A = randomElems<T>(64 * kK, rng); // logical A[m][k] at m * kK + k
  // Global storage of A: K-major = [m][k], MN-major = [k][m].
  std::vector<Bits> Ag(A.size());
  for (int m = 0; m < 64; ++m)
    for (int k = 0; k < kK; ++k)
      (TransA ? Ag[k * 64 + m] : Ag[m * kK + k]) = A[m * kK + k];
  auto B = randomElems<T>(size_t(N) * kK, rng); // logical B[k][n] at k * N + n
  // Global storage of B: K-major = [n][k], MN-major = [k][n].
  std::vector<Bits> Bg(B.size());
  for (int k = 0; k < kK; ++k)
    for (int n = 0; n < N; ++n)
      (TransB ? Bg[k * N + n] : Bg[n * kK + k]) = B[k * N + n];
  Bits *dA, *dB;
  float *dOut;
  TAWA_CHECK_CUDA(cudaMalloc(&dA, A.size() * sizeof(Bits)));
  TAWA_CHECK_CUDA(cudaMalloc(&dB, Bg.size() * sizeof(Bits)));
  TAWA_CHECK_CUDA(cudaMalloc(&dOut, 64 * N * 4));
  TAWA_CHECK_CUDA(cudaMemcpy(dA, Ag.data(), Ag.size() * sizeof(Bits),
                             cudaMemcpyHostToDevice));
  TAWA_CHECK_CUDA(cudaMemcpy(dB, Bg.data(), Bg.size() * sizeof(Bits),
                             cudaMemcpyHostToDevice));
  TAWA_CHECK_CUDA(cudaMemset(dOut, 0xFF, 64 * N * 4)); // NaN poison
  // Both layouts are one 64 x 128-byte box (64 M = 128 bytes of 16-bit data).
  CUtensorMap mA =
      TransA ? encodeTiled(E::kMapType, sizeof(Bits), dA, {uint64_t(kK), 64},
                           {64}, {uint32_t(kK), 64}, CU_TENSOR_MAP_SWIZZLE_128B)
             : encodeTiled(E::kMapType, sizeof(Bits), dA, {64, uint64_t(kK)},
                           {uint64_t(kK)}, {64, uint32_t(kK)},
                           CU_TENSOR_MAP_SWIZZLE_128B);
  CUtensorMap mB =
      TransB ? encodeTiled(E::kMapType, sizeof(Bits), dB,
                           {uint64_t(kK), uint64_t(N)}, {uint64_t(N)},
                           {uint32_t(kK), 64}, CU_TENSOR_MAP_SWIZZLE_128B)
             : encodeTiled(E::kMapType, sizeof(Bits), dB,
                           {uint64_t(N), uint64_t(kK)}, {uint64_t(kK)},
                           {uint32_t(N), uint32_t(kK)},
                           CU_TENSOR_MAP_SWIZZLE_128B);
  const int smem = 1024 + 64 * kRowBytes + N * kRowBytes;
  auto kernel = mmaKernel<N, T, RegA, TransA, TransB, Pair>;
  TAWA_CHECK_CUDA(cudaFuncSetAttribute(
      kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  kernel<<<1, 128, smem>>>(mA, mB, reinterpret_cast<const uint8_t *>(dA), dOut);
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
        const double p = E::toDouble(A[m * kK + k]) * E::toDouble(B[k * N + n]);
        want += p;
        mag += std::fabs(p);
      }
      const double got = out[m * N + n];
      if (!(std::fabs(got - want) <= relTol * mag + 1e-5)) {
        if (bad++ == 0) {
          firstM = m;
          firstN = n;
          firstGot = got;
          firstWant = want;
        }
      }
    }
  if (bad)
    rep.fail(name, "%d wrong elements, first (%d,%d) got %g want %g", bad,
             firstM, firstN, firstGot, firstWant);
  else
    rep.pass(name);
}

template <MmaType T> void runType(Report &rep, std::mt19937_64 &rng) {
  runCase<64, T, false, 0>(rep, rng);
  runCase<128, T, false, 0>(rep, rng);
  runCase<256, T, false, 0>(rep, rng);
  runCase<64, T, true, 0>(rep, rng);
  runCase<128, T, true, 0>(rep, rng);
  runCase<256, T, true, 0>(rep, rng);
  runCase<128, T, false, 0, 0, true>(rep, rng);
  runCase<256, T, false, 0, 0, true>(rep, rng);
  if constexpr (T != MmaType::E4M3) {
    runCase<64, T, false, 1>(rep, rng);
    runCase<128, T, false, 1>(rep, rng);
    runCase<256, T, false, 1>(rep, rng);
    runCase<64, T, true, 1>(rep, rng);
    runCase<128, T, true, 1>(rep, rng);
    runCase<256, T, true, 1>(rep, rng);
    runCase<64, T, false, 0, 1>(rep, rng);
    runCase<256, T, false, 0, 1>(rep, rng);
    runCase<128, T, false, 1, 1>(rep, rng);
  }
}

} // namespace

int main() {
  const uint64_t seed = testSeed("test_wgmma");
  std::mt19937_64 rng(seed);
  TAWA_CHECK_CUDA(cudaSetDevice(0));
  Report rep;
  runType<MmaType::F16>(rep, rng);
  runType<MmaType::BF16>(rep, rng);
  runType<MmaType::E4M3>(rep, rng);
  return rep.exitCode();
}
