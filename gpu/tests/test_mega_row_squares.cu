// The linear epilogue that leaves its rows' sums of squares for the next
// RMSNorm (tasks/linear.cuh: storeAddingRowSquares, LinearParams::
// rowSquaresOut) alone: one CTA of the task's threads stores a tile of
// `rows` x `vcols` outputs (at a row and column offset inside a larger
// output, with and without a residual added) and adds each row's squares of
// the stored bf16 values into a float per row, which other tiles of the
// same rows also add into. Widths that are multiples of 32 (a warp's lanes
// one row), that divide 32 (runs of lanes per row) and neither (element by
// element). Values are multiples of 1/4 below 4 in magnitude, so the bf16
// outputs are exact and every sum is exact in float in any order: outputs
// and sums are checked bit for bit against the host.
#include "common.cuh"
#include "tawa/device/mega/tasks/linear.cuh"

#include <vector>

using namespace tawa::test;
using namespace tawa::device::mega;

namespace {

/// The tile's value before the residual: a multiple of 1/4 in [-2, 2].
__host__ __device__ float tileValue(int r, int v, int salt) {
  return float((r * 7 + v * 3 + salt) % 17 - 8) * 0.25f;
}

/// Tiles (row0 + [0, rows), col0 + [0, vcols)) of `tiles` column tiles, one
/// CTA each, adding into the same per-row sums.
__global__ void rowSquaresKernel(LinearParams p, void *const *buffers,
                                 int row0, int rows, int vcols, int salt) {
  const LinearTile t{p,         buffers, row0, rows,
                     int(blockIdx.x) * vcols, vcols, vcols, nullptr};
  storeAddingRowSquares(t, bufferAt<float>(buffers, p.rowSquaresOut),
                        [&](int r, int v) { return tileValue(r, v, salt); });
}

float bf16Round(float x) {
  return __bfloat162float(__float2bfloat16_rn(x));
}

void runCase(Report &rep, std::mt19937_64 &rng, int rows, int vcols,
             bool residual) {
  const int row0 = 2, m = row0 + rows + 1, tiles = 3, n = tiles * vcols;
  const int salt = int(rng() % 17);
  std::vector<__nv_bfloat16> res(size_t(m) * n);
  for (size_t i = 0; i < res.size(); ++i)
    res[i] = __float2bfloat16_rn(float(int(rng() % 9) - 4) * 0.25f);
  __nv_bfloat16 *out, *resDev;
  float *sums;
  TAWA_CHECK_CUDA(cudaMalloc(&out, res.size() * 2));
  TAWA_CHECK_CUDA(cudaMalloc(&resDev, res.size() * 2));
  TAWA_CHECK_CUDA(cudaMalloc(&sums, m * sizeof(float)));
  TAWA_CHECK_CUDA(
      cudaMemcpy(resDev, res.data(), res.size() * 2, cudaMemcpyHostToDevice));
  TAWA_CHECK_CUDA(cudaMemset(out, 0xFF, res.size() * 2)); // poisoned
  TAWA_CHECK_CUDA(cudaMemset(sums, 0, m * sizeof(float)));
  void *hostBufs[3] = {out, resDev, sums};
  void **bufs;
  TAWA_CHECK_CUDA(cudaMalloc(&bufs, sizeof hostBufs));
  TAWA_CHECK_CUDA(
      cudaMemcpy(bufs, hostBufs, sizeof hostBufs, cudaMemcpyHostToDevice));
  LinearParams p{};
  p.in = p.normWeight = p.w0 = p.w1 = p.w2 = p.argmaxKeys = p.rowSquaresIn =
      tawa::mega::kNoBuffer;
  p.out = 0;
  p.residual = residual ? 1 : tawa::mega::kNoBuffer;
  p.rowSquaresOut = 2;
  p.m = m, p.n = n, p.k = 64, p.tileM = rows, p.tileN = vcols;
  p.colTiles = tiles, p.seg1 = p.seg2 = n;
  rowSquaresKernel<<<tiles, kTaskThreads>>>(p, bufs, row0, rows, vcols, salt);
  TAWA_CHECK_LAUNCH();
  std::vector<__nv_bfloat16> got(res.size());
  std::vector<float> gotSums(m);
  TAWA_CHECK_CUDA(
      cudaMemcpy(got.data(), out, got.size() * 2, cudaMemcpyDeviceToHost));
  TAWA_CHECK_CUDA(cudaMemcpy(gotSums.data(), sums, m * sizeof(float),
                             cudaMemcpyDeviceToHost));
  char name[96];
  std::snprintf(name, sizeof name, "row_squares_rows%d_cols%d%s", rows, vcols,
                residual ? "_residual" : "");
  int bad = 0;
  for (int r = 0; r < m; ++r) {
    float want = 0.f;
    for (int c = 0; c < n; ++c) {
      const size_t at = size_t(r) * n + c;
      const bool inTile = r >= row0 && r < row0 + rows;
      float value = 0.f;
      if (inTile) {
        value = bf16Round(tileValue(r - row0, c % vcols, salt));
        if (residual)
          value = bf16Round(value + __bfloat162float(res[at]));
        want += value * value;
      }
      const uint16_t g = __bfloat16_as_ushort(got[at]);
      const uint16_t w =
          inTile ? __bfloat16_as_ushort(__float2bfloat16_rn(value)) : 0xFFFF;
      if (g != w && bad++ < 3)
        rep.fail(name, "out[%d][%d] = %04x, want %04x", r, c, g, w);
    }
    if (gotSums[r] != want && bad++ < 3)
      rep.fail(name, "row %d: sum of squares %g, want %g", r, gotSums[r],
               want);
  }
  if (bad == 0)
    rep.pass(name);
  TAWA_CHECK_CUDA(cudaFree(out));
  TAWA_CHECK_CUDA(cudaFree(resDev));
  TAWA_CHECK_CUDA(cudaFree(sums));
  TAWA_CHECK_CUDA(cudaFree(bufs));
}

} // namespace

int main() {
  const uint64_t seed = testSeed("test_mega_row_squares");
  std::mt19937_64 rng(seed);
  TAWA_CHECK_CUDA(cudaSetDevice(0));
  Report rep;
  for (int rows : {1, 3, 16})
    for (int vcols : {16, 32, 48, 64, 96})
      for (bool residual : {false, true})
        runCase(rep, rng, rows, vcols, residual);
  return rep.exitCode();
}
