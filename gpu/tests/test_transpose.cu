// 8-bit tile transposes in shared memory alone (transpose.cuh): the 4 x 4
// byte transpose, and transposeTileB8Sw128 between 128-byte-swizzled tiles
// of several shapes by four warps, against a host transpose of random bytes.
// The source is written into shared memory in TMA's swizzled form and the
// destination read back through the same addressing, so a wrong offset, a
// missed or doubly written block, or a wrong byte order all fail.
#include "common.cuh"
#include "tawa/device/device.cuh"

using namespace tawa::device;
using namespace tawa::test;

namespace {

__global__ void bytes4x4Kernel(const uint32_t *in, uint32_t *out) {
  uint32_t a[4], b[4];
  for (int i = 0; i < 4; ++i)
    a[i] = in[4 * threadIdx.x + i];
  transposeBytes4x4(a, b);
  for (int j = 0; j < 4; ++j)
    out[4 * threadIdx.x + j] = b[j];
}

void runBytes4x4(Report &rep, std::mt19937_64 &rng) {
  const int n = 32;
  std::vector<uint32_t> in(4 * n), out(4 * n);
  for (uint32_t &w : in)
    w = static_cast<uint32_t>(rng());
  uint32_t *dIn, *dOut;
  TAWA_CHECK_CUDA(cudaMalloc(&dIn, in.size() * 4));
  TAWA_CHECK_CUDA(cudaMalloc(&dOut, out.size() * 4));
  TAWA_CHECK_CUDA(
      cudaMemcpy(dIn, in.data(), in.size() * 4, cudaMemcpyHostToDevice));
  bytes4x4Kernel<<<1, n>>>(dIn, dOut);
  TAWA_CHECK_LAUNCH();
  TAWA_CHECK_CUDA(
      cudaMemcpy(out.data(), dOut, out.size() * 4, cudaMemcpyDeviceToHost));
  TAWA_CHECK_CUDA(cudaFree(dIn));
  TAWA_CHECK_CUDA(cudaFree(dOut));
  int bad = 0;
  for (int t = 0; t < n; ++t)
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 4; ++j)
        bad += ((in[4 * t + i] >> (8 * j)) & 0xFF) !=
               ((out[4 * t + j] >> (8 * i)) & 0xFF);
  if (bad)
    rep.fail("transpose_bytes_4x4", "%d bytes misplaced", bad);
  else
    rep.pass("transpose_bytes_4x4");
}

/// One CTA of `warps` warps: global [R, C] row-major -> shared (swizzled) ->
/// transposed in shared -> global [C, R] row-major. Both shared tiles start
/// poisoned so that unwritten bytes show.
template <int R, int C>
__global__ void tileKernel(const uint8_t *in, uint8_t *out, int warps) {
  extern __shared__ __align__(1024) uint8_t smem[];
  uint8_t *src = smem, *dst = smem + R * C;
  for (int i = threadIdx.x; i < R * C; i += blockDim.x) {
    src[sw128Offset<R>(i / C, i % C)] = in[i];
    dst[i] = 0xA5;
  }
  __syncthreads();
  transposeTileB8Sw128<R, C>(src, dst, threadIdx.x / 32, warps);
  __syncthreads();
  for (int i = threadIdx.x; i < R * C; i += blockDim.x)
    out[i] = dst[sw128Offset<C>(i / R, i % R)];
}

template <int R, int C> void runTile(Report &rep, std::mt19937_64 &rng) {
  std::vector<uint8_t> in(R * C), out(R * C);
  for (uint8_t &x : in)
    x = static_cast<uint8_t>(rng());
  uint8_t *dIn, *dOut;
  TAWA_CHECK_CUDA(cudaMalloc(&dIn, R * C));
  TAWA_CHECK_CUDA(cudaMalloc(&dOut, R * C));
  TAWA_CHECK_CUDA(cudaMemcpy(dIn, in.data(), R * C, cudaMemcpyHostToDevice));
  auto kernel = tileKernel<R, C>;
  TAWA_CHECK_CUDA(cudaFuncSetAttribute(
      kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, 2 * R * C));
  for (int warps : {1, 4}) {
    TAWA_CHECK_CUDA(cudaMemset(dOut, 0, R * C));
    kernel<<<1, 32 * warps, 2 * R * C>>>(dIn, dOut, warps);
    TAWA_CHECK_LAUNCH();
    TAWA_CHECK_CUDA(
        cudaMemcpy(out.data(), dOut, R * C, cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int r = 0; r < R; ++r)
      for (int c = 0; c < C; ++c)
        bad += out[c * R + r] != in[r * C + c];
    std::string name = "transpose_tile_" + std::to_string(R) + "x" +
                       std::to_string(C) + "_" + std::to_string(warps) +
                       "warps";
    if (bad)
      rep.fail(name, "%d of %d bytes wrong", bad, R * C);
    else
      rep.pass(name);
  }
  TAWA_CHECK_CUDA(cudaFree(dIn));
  TAWA_CHECK_CUDA(cudaFree(dOut));
}

} // namespace

int main() {
  const uint64_t seed = testSeed("test_transpose");
  std::mt19937_64 rng(seed);
  TAWA_CHECK_CUDA(cudaSetDevice(0));
  Report rep;
  runBytes4x4(rep, rng);
  runTile<128, 128>(rep, rng);
  runTile<128, 256>(rep, rng);
  runTile<256, 128>(rep, rng);
  return rep.exitCode();
}
