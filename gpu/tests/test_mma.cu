// mma.sync m16n8k16 (bf16 in, float accumulate) alone: a warp loads random A
// (16×16) and B (16×8) into the fragments documented in mma.cuh, runs K / 16
// products into one accumulator, and stores D; checked element by element
// against a float64 product on the host. A second case accumulates onto a
// nonzero D (the += of the primitive). A third reads A transposed from
// shared memory with ldmatrixX4Trans (A = Vᵀ for V [16][16] stored
// row-major with a pitch of 128 elements, the decode attention's value
// rows) and packs B from floats with packBf16x2.
#include "common.cuh"
#include "mma_host.cuh"
#include "tawa/device/device.cuh"

#include <cmath>
#include <string>
#include <utility>
#include <vector>

using namespace tawa::device;
using namespace tawa::test;

namespace {

using Elem = HostElem<MmaType::BF16>;

/// A: [16][K] row-major, B: [8][K] (column n of B is row n), D: [16][8].
__global__ void mmaKernel(const uint16_t *A, const uint16_t *B, float *D,
                          int K) {
  const int lane = threadIdx.x, g = lane / 4, t = lane % 4;
  auto pair = [](const uint16_t *p) {
    return uint32_t(p[0]) | (uint32_t(p[1]) << 16);
  };
  float d[4] = {D[g * 8 + 2 * t], D[g * 8 + 2 * t + 1],
                D[(g + 8) * 8 + 2 * t], D[(g + 8) * 8 + 2 * t + 1]};
  for (int k0 = 0; k0 < K; k0 += 16) {
    const uint16_t *lo = A + g * K + k0, *hi = A + (g + 8) * K + k0;
    const uint16_t *col = B + g * K + k0;
    mmaBf16m16n8k16(d, pair(lo + 2 * t), pair(hi + 2 * t), pair(lo + 2 * t + 8),
                    pair(hi + 2 * t + 8), pair(col + 2 * t),
                    pair(col + 2 * t + 8));
  }
  D[g * 8 + 2 * t] = d[0];
  D[g * 8 + 2 * t + 1] = d[1];
  D[(g + 8) * 8 + 2 * t] = d[2];
  D[(g + 8) * 8 + 2 * t + 1] = d[3];
}

/// D [16][8] against float64: want(m, n) gives the exact sum and the sum of
/// its terms' magnitudes (the scale of the relative error).
template <typename Want>
void checkProduct(Report &rep, const std::string &name,
                  const std::vector<float> &D, Want want) {
  int bad = 0;
  double worst = 0;
  for (int m = 0; m < 16; ++m)
    for (int n = 0; n < 8; ++n) {
      const std::pair<double, double> w = want(m, n);
      const double err = std::fabs(D[m * 8 + n] - w.first) / (w.second + 1e-30);
      worst = std::max(worst, err);
      bad += !(err <= 1e-4); // a fragment mistake gives O(1)
    }
  if (bad)
    rep.fail(name, "%d of 128 elements wrong (worst relative error %.3g)", bad,
             worst);
  else
    rep.pass(name);
}

/// V: [16 k][16 m] row-major, B: [8][16] floats; D = Vᵀ·Bᵀ, [16][8].
__global__ void mmaTransKernel(const uint16_t *V, const float *B, float *D) {
  constexpr int kPitch = 128;
  __shared__ __align__(16) uint16_t vs[16 * kPitch];
  const int lane = threadIdx.x, g = lane / 4, t = lane % 4;
  for (int i = lane; i < 256; i += 32)
    vs[(i / 16) * kPitch + i % 16] = V[i];
  __syncwarp();
  const int mat = lane / 8, row = (mat >= 2 ? 8 : 0) + lane % 8;
  const uint32_t addr = static_cast<uint32_t>(
      __cvta_generic_to_shared(vs + row * kPitch + (mat & 1 ? 8 : 0)));
  uint32_t a0, a1, a2, a3;
  ldmatrixX4Trans(addr, a0, a1, a2, a3);
  float d[4] = {0.f, 0.f, 0.f, 0.f};
  mmaBf16m16n8k16(d, a0, a1, a2, a3,
                  packBf16x2(B[g * 16 + 2 * t], B[g * 16 + 2 * t + 1]),
                  packBf16x2(B[g * 16 + 2 * t + 8], B[g * 16 + 2 * t + 9]));
  D[g * 8 + 2 * t] = d[0];
  D[g * 8 + 2 * t + 1] = d[1];
  D[(g + 8) * 8 + 2 * t] = d[2];
  D[(g + 8) * 8 + 2 * t + 1] = d[3];
}

void runTransCase(Report &rep, std::mt19937_64 &rng) {
  std::uniform_real_distribution<float> dist(-2.f, 2.f);
  std::vector<uint16_t> V(256);
  std::vector<float> B(128), D(128);
  for (auto &v : V)
    v = Elem::fromFloat(dist(rng));
  for (auto &b : B) // exactly representable: the packing must not round
    b = float(Elem::toDouble(Elem::fromFloat(dist(rng))));
  uint16_t *dV;
  float *dB, *dD;
  TAWA_CHECK_CUDA(cudaMalloc(&dV, V.size() * 2));
  TAWA_CHECK_CUDA(cudaMalloc(&dB, B.size() * 4));
  TAWA_CHECK_CUDA(cudaMalloc(&dD, D.size() * 4));
  TAWA_CHECK_CUDA(cudaMemcpy(dV, V.data(), V.size() * 2, cudaMemcpyHostToDevice));
  TAWA_CHECK_CUDA(cudaMemcpy(dB, B.data(), B.size() * 4, cudaMemcpyHostToDevice));
  mmaTransKernel<<<1, 32>>>(dV, dB, dD);
  TAWA_CHECK_LAUNCH();
  TAWA_CHECK_CUDA(cudaMemcpy(D.data(), dD, D.size() * 4, cudaMemcpyDeviceToHost));
  TAWA_CHECK_CUDA(cudaFree(dV));
  TAWA_CHECK_CUDA(cudaFree(dB));
  TAWA_CHECK_CUDA(cudaFree(dD));
  checkProduct(rep, "mma_bf16_ldmatrix_trans", D, [&](int m, int n) {
    double want = 0, mag = 0;
    for (int k = 0; k < 16; ++k) {
      const double p = Elem::toDouble(V[k * 16 + m]) * double(B[n * 16 + k]);
      want += p;
      mag += std::fabs(p);
    }
    return std::make_pair(want, mag);
  });
}

void runCase(Report &rep, std::mt19937_64 &rng, int K, bool accumulate) {
  std::uniform_real_distribution<float> dist(-2.f, 2.f);
  std::vector<uint16_t> A(16 * K), B(8 * K);
  std::vector<float> D0(16 * 8, 0.f), D(16 * 8);
  for (auto &a : A)
    a = Elem::fromFloat(dist(rng));
  for (auto &b : B)
    b = Elem::fromFloat(dist(rng));
  if (accumulate)
    for (auto &d : D0)
      d = dist(rng);
  uint16_t *dA, *dB;
  float *dD;
  TAWA_CHECK_CUDA(cudaMalloc(&dA, A.size() * 2));
  TAWA_CHECK_CUDA(cudaMalloc(&dB, B.size() * 2));
  TAWA_CHECK_CUDA(cudaMalloc(&dD, D.size() * 4));
  TAWA_CHECK_CUDA(cudaMemcpy(dA, A.data(), A.size() * 2, cudaMemcpyHostToDevice));
  TAWA_CHECK_CUDA(cudaMemcpy(dB, B.data(), B.size() * 2, cudaMemcpyHostToDevice));
  TAWA_CHECK_CUDA(cudaMemcpy(dD, D0.data(), D0.size() * 4, cudaMemcpyHostToDevice));
  mmaKernel<<<1, 32>>>(dA, dB, dD, K);
  TAWA_CHECK_LAUNCH();
  TAWA_CHECK_CUDA(cudaMemcpy(D.data(), dD, D.size() * 4, cudaMemcpyDeviceToHost));
  TAWA_CHECK_CUDA(cudaFree(dA));
  TAWA_CHECK_CUDA(cudaFree(dB));
  TAWA_CHECK_CUDA(cudaFree(dD));
  checkProduct(rep,
               "mma_bf16_m16n8k16_k" + std::to_string(K) +
                   (accumulate ? "_accumulate" : ""),
               D, [&](int m, int n) {
                 double want = D0[m * 8 + n], mag = std::fabs(want);
                 for (int k = 0; k < K; ++k) {
                   const double p = Elem::toDouble(A[m * K + k]) *
                                    Elem::toDouble(B[n * K + k]);
                   want += p;
                   mag += std::fabs(p);
                 }
                 return std::make_pair(want, mag);
               });
}

} // namespace

int main() {
  const uint64_t seed = testSeed("test_mma");
  std::mt19937_64 rng(seed);
  TAWA_CHECK_CUDA(cudaSetDevice(0));
  Report rep;
  runCase(rep, rng, 16, false);
  runCase(rep, rng, 512, false);
  runCase(rep, rng, 64, true);
  runTransCase(rep, rng);
  return rep.exitCode();
}
