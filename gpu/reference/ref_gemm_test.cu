// Standalone driver for the reference GEMM: correctness on odd shapes against
// an fp32 GPU reference, then timing against cublasGemmEx at M = N = 8192.
//   ref_gemm_test [--no-bench] [--bench-only] [--small]   (--small: one small
//   case with several tiles per CTA, for compute-sanitizer)
#include "../tests/common.cuh"
#include "ref_gemm.cuh"

#include <cublas_v2.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>
#include <cstring>

using namespace tawa::test;

namespace {

__global__ void fillRandom(__half *p, size_t n, uint64_t seed) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n;
       i += size_t(gridDim.x) * blockDim.x) {
    // splitmix64 of (seed, i): independent per element, fresh per seed.
    uint64_t z = seed + 0x9E3779B97F4A7C15ull * (i + 1);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    p[i] = __float2half((float)(z >> 40) / float(1 << 24) * 2.0f - 1.0f);
  }
}

__global__ void fillValue(__half *p, size_t n, __half v) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n;
       i += size_t(gridDim.x) * blockDim.x)
    p[i] = v;
}

/// Naive fp32 reference: one thread per C element.
__global__ void refGemm(const __half *a, const __half *b, float *c, int M,
                        int N, int K) {
  const int n = blockIdx.x * blockDim.x + threadIdx.x;
  const int m = blockIdx.y;
  if (n >= N)
    return;
  float acc = 0.f;
  for (int k = 0; k < K; ++k)
    acc +=
        __half2float(a[size_t(m) * K + k]) * __half2float(b[size_t(n) * K + k]);
  c[size_t(m) * N + n] = acc;
}

struct Gemm {
  int M, N, K, ldc;
  __half *a = nullptr, *b = nullptr, *c = nullptr;
  CUtensorMap ma, mb, mc;
  int grid;

  Gemm(int M_, int N_, int K_, int maxCtas) : M(M_), N(N_), K(K_) {
    // TMA row pitch must be a multiple of 16 bytes; 8 more columns let the
    // check see that nothing past the row's last 16-byte chunk is written.
    ldc = (N + 7) / 8 * 8 + (N % 8 ? 8 : 0);
    TAWA_CHECK_CUDA(cudaMalloc(&a, size_t(M) * K * 2));
    TAWA_CHECK_CUDA(cudaMalloc(&b, size_t(N) * K * 2));
    TAWA_CHECK_CUDA(cudaMalloc(&c, size_t(M) * ldc * 2));
    ma = encodeTiled(CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, a,
                     {uint64_t(M), uint64_t(K)}, {uint64_t(K)},
                     {tawa::ref::kBM, tawa::ref::kBK},
                     CU_TENSOR_MAP_SWIZZLE_128B);
    mb = encodeTiled(CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, b,
                     {uint64_t(N), uint64_t(K)}, {uint64_t(K)},
                     {tawa::ref::kBN, tawa::ref::kBK},
                     CU_TENSOR_MAP_SWIZZLE_128B);
    mc = encodeTiled(CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, c,
                     {uint64_t(M), uint64_t(N)}, {uint64_t(ldc)}, {64, 64},
                     CU_TENSOR_MAP_SWIZZLE_128B);
    const int tiles = ((M + tawa::ref::kBM - 1) / tawa::ref::kBM) *
                      ((N + tawa::ref::kBN - 1) / tawa::ref::kBN);
    grid = std::min(maxCtas, tiles);
  }
  ~Gemm() {
    cudaFree(a);
    cudaFree(b);
    cudaFree(c);
  }
  void launch() {
    tawa_ref_gemm_f16<<<grid, tawa::ref::kThreads, tawa::ref::kSmemBytes>>>(
        ma, mb, mc, M, N, K);
  }
};

/// maxCtas below the tile count makes each CTA walk several tiles, so the
/// ring state and the epilogue buffers carry across tiles.
bool checkCase(Report &rep, int M, int N, int K, int maxCtas, uint64_t seed) {
  char name[96];
  std::snprintf(name, sizeof name, "ref_gemm_M%d_N%d_K%d_ctas%d", M, N, K,
                maxCtas);
  Gemm g(M, N, K, maxCtas);
  fillRandom<<<256, 256>>>(g.a, size_t(M) * K, seed);
  fillRandom<<<256, 256>>>(g.b, size_t(N) * K, seed ^ 0xABCDEFull);
  // Poison C, padding columns included: NaN everywhere we must write, and a
  // padding value that must survive.
  fillValue<<<256, 256>>>(g.c, size_t(M) * g.ldc, __ushort_as_half(0x7E00));
  TAWA_CHECK_LAUNCH();
  float *ref;
  TAWA_CHECK_CUDA(cudaMalloc(&ref, size_t(M) * N * 4));
  refGemm<<<dim3((N + 127) / 128, M), 128>>>(g.a, g.b, ref, M, N, K);
  TAWA_CHECK_LAUNCH();
  g.launch();
  TAWA_CHECK_LAUNCH();
  std::vector<__half> hc(size_t(M) * g.ldc);
  std::vector<float> hr(size_t(M) * N);
  TAWA_CHECK_CUDA(
      cudaMemcpy(hc.data(), g.c, hc.size() * 2, cudaMemcpyDeviceToHost));
  TAWA_CHECK_CUDA(
      cudaMemcpy(hr.data(), ref, hr.size() * 4, cudaMemcpyDeviceToHost));
  TAWA_CHECK_CUDA(cudaFree(ref));
  size_t bad = 0, firstBad = 0;
  double maxErr = 0;
  for (int m = 0; m < M; ++m) {
    for (int n = 0; n < g.ldc; ++n) {
      const uint16_t bits = __half_as_ushort(hc[size_t(m) * g.ldc + n]);
      bool ok;
      if (n >= N) {
        // TMA stores write whole 16-byte chunks (a hardware limitation), so
        // columns up to the next multiple of 8 may receive the kernel's value
        // for them, A * 0 = 0 (B's rows past N are zero-filled); padding
        // beyond that chunk must stay untouched.
        ok = bits == 0x7E00 || (n < (N + 7) / 8 * 8 && bits == 0);
      } else {
        const float got = __half2float(hc[size_t(m) * g.ldc + n]);
        const float want = hr[size_t(m) * N + n];
        const double err = std::fabs(double(got) - want);
        ok = std::isfinite(got) && err <= 1e-2 + 2e-3 * std::fabs(want);
        if (std::isfinite(got))
          maxErr = std::max(maxErr, err);
      }
      if (!ok && bad++ == 0)
        firstBad = size_t(m) * g.ldc + n;
    }
  }
  if (bad) {
    rep.fail(name, "%zu bad elements, first at row %zu col %zu (max err %.3g)",
             bad, firstBad / g.ldc, firstBad % g.ldc, maxErr);
    return false;
  }
  std::printf("  max abs err %.3g\n", maxErr);
  rep.pass(name);
  return true;
}

float medianMs(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void bench(Report &rep, int sms, uint64_t seed) {
  cublasHandle_t handle;
  if (cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS) {
    rep.fail("bench", "cublasCreate failed");
    return;
  }
  cudaEvent_t e0, e1;
  TAWA_CHECK_CUDA(cudaEventCreate(&e0));
  TAWA_CHECK_CUDA(cudaEventCreate(&e1));
  std::printf("%-6s %-6s %-6s %10s %10s %8s %8s\n", "M", "N", "K", "tawa TF/s",
              "cuBLAS TF/s", "ratio", "maxdiff");
  const int Ks[] = {256, 1024, 2048, 4096, 8192, 16384};
  for (int K : Ks) {
    const int M = 8192, N = 8192;
    Gemm g(M, N, K, sms);
    fillRandom<<<1024, 256>>>(g.a, size_t(M) * K, seed + K);
    fillRandom<<<1024, 256>>>(g.b, size_t(N) * K, seed + 2 * K);
    __half *cb;
    TAWA_CHECK_CUDA(cudaMalloc(&cb, size_t(M) * N * 2));
    TAWA_CHECK_LAUNCH();
    const __half alpha = __float2half(1.f), beta = __float2half(0.f);
    const float alphaF = 1.f, betaF = 0.f;
    (void)alpha;
    (void)beta;
    auto runCublas = [&] {
      return cublasGemmEx(handle, CUBLAS_OP_T, CUBLAS_OP_N, N, M, K, &alphaF,
                          g.b, CUDA_R_16F, K, g.a, CUDA_R_16F, K, &betaF, cb,
                          CUDA_R_16F, N, CUBLAS_COMPUTE_32F,
                          CUBLAS_GEMM_DEFAULT);
    };
    const int iters = K >= 16384 ? 20 : 50;
    std::vector<float> tOurs, tBlas;
    for (int rep2 = 0; rep2 < 5; ++rep2) { // warm-up
      g.launch();
      runCublas();
    }
    TAWA_CHECK_LAUNCH();
    for (int i = 0; i < iters; ++i) {
      float ms;
      TAWA_CHECK_CUDA(cudaEventRecord(e0));
      g.launch();
      TAWA_CHECK_CUDA(cudaEventRecord(e1));
      TAWA_CHECK_CUDA(cudaEventSynchronize(e1));
      TAWA_CHECK_CUDA(cudaEventElapsedTime(&ms, e0, e1));
      tOurs.push_back(ms);
      TAWA_CHECK_CUDA(cudaEventRecord(e0));
      if (runCublas() != CUBLAS_STATUS_SUCCESS) {
        rep.fail("bench", "cublasGemmEx failed");
        return;
      }
      TAWA_CHECK_CUDA(cudaEventRecord(e1));
      TAWA_CHECK_CUDA(cudaEventSynchronize(e1));
      TAWA_CHECK_CUDA(cudaEventElapsedTime(&ms, e0, e1));
      tBlas.push_back(ms);
    }
    TAWA_CHECK_LAUNCH();
    // The timed outputs must agree with cuBLAS (a fast wrong kernel is no
    // result).
    std::vector<__half> h1(size_t(M) * N), h2(size_t(M) * N);
    TAWA_CHECK_CUDA(
        cudaMemcpy(h1.data(), g.c, h1.size() * 2, cudaMemcpyDeviceToHost));
    TAWA_CHECK_CUDA(
        cudaMemcpy(h2.data(), cb, h2.size() * 2, cudaMemcpyDeviceToHost));
    double maxDiff = 0;
    size_t bad = 0;
    for (size_t i = 0; i < h1.size(); ++i) {
      const double x = __half2float(h1[i]), y = __half2float(h2[i]);
      const double d = std::fabs(x - y);
      if (!(d <= 2e-2 + 4e-3 * std::fabs(y)))
        ++bad;
      if (d > maxDiff || std::isnan(d))
        maxDiff = d;
    }
    const double flops = 2.0 * M * N * double(K);
    const double ours = flops / (medianMs(tOurs) * 1e-3) / 1e12;
    const double blas = flops / (medianMs(tBlas) * 1e-3) / 1e12;
    std::printf("%-6d %-6d %-6d %10.1f %10.1f %8.3f %8.3g\n", M, N, K, ours,
                blas, ours / blas, maxDiff);
    char name[64];
    std::snprintf(name, sizeof name, "ref_gemm_vs_cublas_K%d", K);
    if (bad)
      rep.fail(name, "%zu elements differ from cuBLAS", bad);
    else
      rep.pass(name);
    TAWA_CHECK_CUDA(cudaFree(cb));
  }
  cublasDestroy(handle);
}

} // namespace

int main(int argc, char **argv) {
  bool doBench = true, small = false, benchOnly = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--no-bench"))
      doBench = false;
    if (!std::strcmp(argv[i], "--small"))
      small = true;
    if (!std::strcmp(argv[i], "--bench-only"))
      benchOnly = true;
  }
  const uint64_t seed = testSeed("ref_gemm_test");
  std::printf("ref_gemm: D = %d stages, P = %d, %d bytes of shared memory\n",
              tawa::ref::kStages, tawa::ref::kMmaLag, tawa::ref::kSmemBytes);
  int dev = 0, sms = 0;
  TAWA_CHECK_CUDA(cudaSetDevice(dev));
  TAWA_CHECK_CUDA(
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  TAWA_CHECK_CUDA(cudaFuncSetAttribute(
      tawa_ref_gemm_f16, cudaFuncAttributeMaxDynamicSharedMemorySize,
      tawa::ref::kSmemBytes));
  Report rep;
  if (small) {
    checkCase(rep, 200, 300, 136, 2, seed);
    return rep.exitCode();
  }
  // Odd M and N, K not a multiple of 64, single partial tiles, and enough
  // tiles per CTA that the ring wraps across tiles many times.
  const int cases[][3] = {
      {1, 1, 8},        {127, 255, 72},     {129, 257, 8},
      {200, 300, 136},  {1000, 999, 520},   {2049, 1537, 1000},
      {4096, 4096, 64}, {3000, 5000, 2056}, {128, 256, 4096}};
  for (auto &c : cases) {
    if (benchOnly)
      break;
    checkCase(rep, c[0], c[1], c[2], sms, seed + c[0] * 31 + c[2]);
  }
  if (!benchOnly) {
    checkCase(rep, 1000, 999, 520, 3, seed + 7);
    checkCase(rep, 777, 1300, 4104, 5, seed + 11);
  }
  if (doBench)
    bench(rep, sms, seed);
  return rep.exitCode();
}
