// 8-bit tile transposes in shared memory alone (transpose.cuh): the 4 x 4
// byte transpose, transposeTileB8Sw128 between 128-byte-swizzled tiles and
// transposeTileB8 between tiles with 32- or 64-byte extents (in TMA's 32-
// and 64-byte swizzles) of several shapes, by one, three and four warps,
// against a host transpose of random bytes.
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

/// Where TMA puts byte `col` of row `row` of a tile of `rows` rows of
/// `cols` bytes, written out here from the swizzle's definition (not with
/// the library's helpers under test): boxes of 128-byte spans for rows of a
/// multiple of 128 bytes, one box in the rows' own 64- or 32-byte swizzle
/// otherwise; in a box the 16-byte chunk index is XORed with bits 7 and up
/// of the unswizzled offset, masked to the span's chunks.
__device__ uint32_t tmaTileOffset(int rows, int cols, int row, int col) {
  const int span = cols % 128 == 0 ? 128 : cols;
  const uint32_t linear = uint32_t(row) * span + col % span;
  const uint32_t swizzled = linear ^ (((linear >> 7) & (span / 16 - 1)) << 4);
  return uint32_t(col / span) * rows * span + swizzled;
}

/// One CTA of `warps` warps: global [R, C] row-major -> shared (swizzled) ->
/// transposed in shared -> global [C, R] row-major. The destination starts
/// poisoned so that unwritten bytes show. `General`: transposeTileB8, else
/// transposeTileB8Sw128.
template <int R, int C, bool General>
__global__ void tileKernel(const uint8_t *in, uint8_t *out, int warps) {
  extern __shared__ __align__(1024) uint8_t smem[];
  uint8_t *src = smem, *dst = smem + R * C;
  for (int i = threadIdx.x; i < R * C; i += blockDim.x) {
    src[tmaTileOffset(R, C, i / C, i % C)] = in[i];
    dst[i] = 0xA5;
  }
  __syncthreads();
  if constexpr (General)
    transposeTileB8<R, C>(src, dst, threadIdx.x / 32, warps);
  else
    transposeTileB8Sw128<R, C>(src, dst, threadIdx.x / 32, warps);
  __syncthreads();
  for (int i = threadIdx.x; i < R * C; i += blockDim.x)
    out[i] = dst[tmaTileOffset(C, R, i / R, i % R)];
}

template <int R, int C, bool General = false>
void runTile(Report &rep, std::mt19937_64 &rng) {
  std::vector<uint8_t> in(R * C), out(R * C);
  for (uint8_t &x : in)
    x = static_cast<uint8_t>(rng());
  uint8_t *dIn, *dOut;
  TAWA_CHECK_CUDA(cudaMalloc(&dIn, R * C));
  TAWA_CHECK_CUDA(cudaMalloc(&dOut, R * C));
  TAWA_CHECK_CUDA(cudaMemcpy(dIn, in.data(), R * C, cudaMemcpyHostToDevice));
  auto kernel = tileKernel<R, C, General>;
  TAWA_CHECK_CUDA(cudaFuncSetAttribute(
      kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, 2 * R * C));
  for (int warps : {1, 3, 4}) {
    TAWA_CHECK_CUDA(cudaMemset(dOut, 0, R * C));
    kernel<<<1, 32 * warps, 2 * R * C>>>(dIn, dOut, warps);
    TAWA_CHECK_LAUNCH();
    TAWA_CHECK_CUDA(
        cudaMemcpy(out.data(), dOut, R * C, cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int r = 0; r < R; ++r)
      for (int c = 0; c < C; ++c)
        bad += out[c * R + r] != in[r * C + c];
    std::string name = std::string(General ? "transpose_tile_general_"
                                           : "transpose_tile_") +
                       std::to_string(R) + "x" +
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
  // Extents of 32 and 64 bytes (fp8 tiles with BLOCK_K or BLOCK_N of 32 or
  // 64), and the general transpose on 128-byte tiles too.
  runTile<128, 64, true>(rep, rng);
  runTile<64, 128, true>(rep, rng);
  runTile<32, 128, true>(rep, rng);
  runTile<128, 32, true>(rep, rng);
  runTile<64, 64, true>(rep, rng);
  runTile<32, 64, true>(rep, rng);
  runTile<64, 256, true>(rep, rng);
  runTile<256, 32, true>(rep, rng);
  runTile<128, 128, true>(rep, rng);
  runTile<128, 256, true>(rep, rng);
  return rep.exitCode();
}
