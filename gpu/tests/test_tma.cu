// TMA round trips of 128B-swizzled tiles, 2D and 3D: every box of a tensor
// whose extents are not box multiples is loaded (one CTA per box), its raw
// shared-memory bytes are dumped (checks swizzle placement and out-of-bounds
// zero fill), and it is stored back with a TMA store into a poisoned tensor
// with padded rows and guard rows (checks that partial boxes write exactly the
// in-bounds elements). The 2D cases run twice: with the input's tensor map
// encoded on the host, and built on the device by makeTensorMap2D (the path
// of tt.make_tensor_descriptor).
#include "common.cuh"
#include "tawa/device/device.cuh"

#include <cstring>

using namespace tawa::device;
using namespace tawa::test;

namespace {

constexpr uint16_t kPoison = 0xDEAD;

/// Geometry of the input for a tensor map built on the device.
struct DeviceMapArgs {
  const uint16_t *base = nullptr;
  uint32_t cols = 0, rows = 0;
  uint64_t pitchBytes = 0;
  CUtensorMap *maps = nullptr; // one global slot per CTA
};

/// Box: kBoxOuter x kBoxRows x 64 elements of 16 bits (128-byte rows).
/// With BoxRows != 0 the input map is built on the device (rank 2 only).
template <int Rank, int BoxRows = 0>
__global__ void roundTrip(const __grid_constant__ CUtensorMap in,
                          const __grid_constant__ CUtensorMap out,
                          uint16_t *dump, int boxBytes, int tilesX, int tilesY,
                          int boxRows, int boxOuter, DeviceMapArgs dm) {
  extern __shared__ uint8_t raw[];
  uint8_t *box = reinterpret_cast<uint8_t *>(
      (reinterpret_cast<uintptr_t>(raw) + 1023) & ~uintptr_t(1023));
  __shared__ MBarrier bar;
  const int t = blockIdx.x;
  const int tx = t % tilesX, ty = (t / tilesX) % tilesY,
            tz = t / (tilesX * tilesY);
  // Poison shared memory so that bytes TMA failed to write are visible.
  for (int i = threadIdx.x; i < boxBytes / 2; i += blockDim.x)
    reinterpret_cast<uint16_t *>(box)[i] = kPoison;
  fenceProxyAsyncShared(); // generic writes before the async-proxy overwrite
  if (threadIdx.x == 0) {
    mbarrierInit(&bar, 1);
    fenceMBarrierInit();
  }
  const CUtensorMap *src = &in;
  if constexpr (BoxRows != 0) {
    __shared__ alignas(128) uint8_t staging[128];
    CUtensorMap *map = dm.maps + t;
    if (threadIdx.x < 32)
      makeTensorMap2D<TensorMapElem::F16, 64, BoxRows>(
          map, staging, dm.base, dm.cols, dm.rows, dm.pitchBytes);
    if (threadIdx.x == 0)
      tensorMapAcquire(map);
    src = map;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    mbarrierArriveExpectTx(&bar, boxBytes);
    if constexpr (Rank == 2)
      tmaLoad2D(box, src, &bar, tx * 64, ty * boxRows);
    else
      tmaLoad3D(box, &in, &bar, tx * 64, ty * boxRows, tz * boxOuter);
  }
  mbarrierWait(&bar, 0);
  for (int i = threadIdx.x; i < boxBytes / 2; i += blockDim.x)
    dump[size_t(t) * boxBytes / 2 + i] = reinterpret_cast<uint16_t *>(box)[i];
  __syncthreads();
  if (threadIdx.x == 0) {
    if constexpr (Rank == 2)
      tmaStore2D(&out, box, tx * 64, ty * boxRows);
    else
      tmaStore3D(&out, box, tx * 64, ty * boxRows, tz * boxOuter);
    tmaStoreCommit();
    tmaStoreWait<0>();
  }
}

/// dims outermost first: {Z, Y, X} (Z = 1 for rank 2). DeviceBoxRows != 0:
/// the input map is built on the device, with that many box rows.
template <int Rank, int DeviceBoxRows = 0>
void runCase(Report &rep, const char *label, int Z, int Y, int X, int boxOuter,
             int boxRows, std::mt19937_64 &rng) {
  static_assert(DeviceBoxRows == 0 || Rank == 2, "device maps are rank 2");
  char name[128];
  std::snprintf(name, sizeof name, "tma%dd_roundtrip_swizzle128_%s%s_%dx%dx%d",
                Rank, DeviceBoxRows ? "devicemap_" : "", label, Z, Y, X);
  const int inPitch = (X + 7) / 8 * 8; // TMA: row pitch a multiple of 16 B
  const int pitch = inPitch + 24; // padded rows: writes past X would land here
  const int guardRows = 3; // rows past Y (and past Z * Y) must stay poisoned
  const size_t inElems = size_t(Z) * Y * inPitch;
  const size_t outElems = size_t(Z) * Y * pitch + size_t(guardRows) * pitch;
  std::vector<uint16_t> hin(inElems);
  for (auto &v : hin)
    v = static_cast<uint16_t>(rng() % 0xFFFF) | 1; // never 0, never poison
  for (auto &v : hin)
    if (v == kPoison)
      v = 1;
  const int tilesX = (X + 63) / 64, tilesY = (Y + boxRows - 1) / boxRows;
  const int tilesZ = (Z + boxOuter - 1) / boxOuter;
  const int ctas = tilesX * tilesY * tilesZ;
  const int boxBytes = boxOuter * boxRows * 128;
  uint16_t *din, *dout, *ddump;
  TAWA_CHECK_CUDA(cudaMalloc(&din, inElems * 2));
  TAWA_CHECK_CUDA(cudaMalloc(&dout, outElems * 2));
  TAWA_CHECK_CUDA(cudaMalloc(&ddump, size_t(ctas) * boxBytes));
  TAWA_CHECK_CUDA(
      cudaMemcpy(din, hin.data(), inElems * 2, cudaMemcpyHostToDevice));
  std::vector<uint16_t> poison(outElems, kPoison);
  TAWA_CHECK_CUDA(
      cudaMemcpy(dout, poison.data(), outElems * 2, cudaMemcpyHostToDevice));
  TAWA_CHECK_CUDA(cudaMemset(ddump, 0xFF, size_t(ctas) * boxBytes));
  CUtensorMap mIn, mOut;
  if (Rank == 2) {
    mIn = encodeTiled(CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, din,
                      {uint64_t(Y), uint64_t(X)}, {uint64_t(inPitch)},
                      {uint32_t(boxRows), 64}, CU_TENSOR_MAP_SWIZZLE_128B);
    mOut = encodeTiled(CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, dout,
                       {uint64_t(Y), uint64_t(X)}, {uint64_t(pitch)},
                       {uint32_t(boxRows), 64}, CU_TENSOR_MAP_SWIZZLE_128B);
  } else {
    mIn = encodeTiled(CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, din,
                      {uint64_t(Z), uint64_t(Y), uint64_t(X)},
                      {uint64_t(Y) * inPitch, uint64_t(inPitch)},
                      {uint32_t(boxOuter), uint32_t(boxRows), 64},
                      CU_TENSOR_MAP_SWIZZLE_128B);
    mOut = encodeTiled(CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, dout,
                       {uint64_t(Z), uint64_t(Y), uint64_t(X)},
                       {uint64_t(Y) * pitch, uint64_t(pitch)},
                       {uint32_t(boxOuter), uint32_t(boxRows), 64},
                       CU_TENSOR_MAP_SWIZZLE_128B);
  }
  DeviceMapArgs dm;
  if (DeviceBoxRows) {
    dm.base = din;
    dm.cols = uint32_t(X);
    dm.rows = uint32_t(Y);
    dm.pitchBytes = uint64_t(inPitch) * 2;
    TAWA_CHECK_CUDA(cudaMalloc(&dm.maps, size_t(ctas) * sizeof(CUtensorMap)));
    // The host map must not be what the kernel loads through.
    std::memset(&mIn, 0, sizeof mIn);
  }
  const int smem = boxBytes + 1024;
  TAWA_CHECK_CUDA(
      cudaFuncSetAttribute(roundTrip<Rank, DeviceBoxRows>,
                           cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  roundTrip<Rank, DeviceBoxRows><<<ctas, 128, smem>>>(
      mIn, mOut, ddump, boxBytes, tilesX, tilesY, boxRows, boxOuter, dm);
  TAWA_CHECK_LAUNCH();
  if (dm.maps)
    TAWA_CHECK_CUDA(cudaFree(dm.maps));
  std::vector<uint16_t> dump(size_t(ctas) * boxBytes / 2), hout(outElems);
  TAWA_CHECK_CUDA(
      cudaMemcpy(dump.data(), ddump, dump.size() * 2, cudaMemcpyDeviceToHost));
  TAWA_CHECK_CUDA(
      cudaMemcpy(hout.data(), dout, outElems * 2, cudaMemcpyDeviceToHost));
  TAWA_CHECK_CUDA(cudaFree(din));
  TAWA_CHECK_CUDA(cudaFree(dout));
  TAWA_CHECK_CUDA(cudaFree(ddump));

  // Shared-memory image: box row (z, y) at 128-byte row index z * boxRows + y,
  // chunk swizzled with that row index mod 8.
  size_t badLoad = 0;
  for (int t = 0; t < ctas; ++t) {
    const int tx = t % tilesX, ty = (t / tilesX) % tilesY,
              tz = t / (tilesX * tilesY);
    for (int bz = 0; bz < boxOuter; ++bz)
      for (int by = 0; by < boxRows; ++by)
        for (int bx = 0; bx < 64; ++bx) {
          const int z = tz * boxOuter + bz, y = ty * boxRows + by,
                    x = tx * 64 + bx;
          const bool inside = z < Z && y < Y && x < X;
          const uint16_t want =
              inside ? hin[(size_t(z) * Y + y) * inPitch + x] : 0;
          const uint32_t off = hostSwizzle128(bz * boxRows + by, 2 * bx);
          badLoad += dump[size_t(t) * boxBytes / 2 + off / 2] != want;
        }
  }
  size_t badStore = 0, chunkTailWrites = 0;
  for (size_t i = 0; i < outElems; ++i) {
    const size_t row = i / pitch, x = i % pitch;
    const size_t z = row / Y, y = row % Y;
    const bool inside = z < size_t(Z) && x < size_t(X);
    const uint16_t want = inside ? hin[(z * Y + y) * inPitch + x] : kPoison;
    // TMA stores write whole 16-byte chunks: past an inner extent that is not
    // a multiple of 8 elements, the rest of the last chunk may receive the
    // box's (zero-filled) shared-memory bytes. Nothing beyond it may change.
    const bool chunkTail =
        z < size_t(Z) && x >= size_t(X) && x < size_t(X + 7) / 8 * 8;
    if (chunkTail && hout[i] == 0) {
      ++chunkTailWrites;
      continue;
    }
    badStore += hout[i] != want;
  }
  if (badLoad || badStore)
    rep.fail(name,
             "%zu wrong shared-memory elements after load, %zu wrong "
             "global elements after store",
             badLoad, badStore);
  else
    rep.pass(name);
  if (chunkTailWrites)
    std::printf("  note: %zu padding elements inside the last 16-byte chunk of "
                "a row were written with 0 (TMA store granularity)\n",
                chunkTailWrites);
}

} // namespace

int main() {
  const uint64_t seed = testSeed("test_tma");
  std::mt19937_64 rng(seed);
  TAWA_CHECK_CUDA(cudaSetDevice(0));
  Report rep;
  runCase<2>(rep, "exact", 1, 128, 128, 1, 64, rng);
  runCase<2>(rep, "edges", 1, 300, 200, 1, 64, rng); // partial rows & cols
  runCase<2>(rep, "tallbox", 1, 517, 136, 1, 256,
             rng);                                  // 256-row boxes (GEMM B)
  runCase<2>(rep, "narrow", 1, 77, 8, 1, 128, rng); // X < one box
  runCase<2>(rep, "odd_inner", 1, 150, 203, 1, 64, rng); // 406-byte rows
  runCase<2, 64>(rep, "edges", 1, 300, 200, 1, 64, rng);
  runCase<2, 256>(rep, "tallbox", 1, 517, 136, 1, 256, rng);
  runCase<2, 64>(rep, "odd_inner", 1, 150, 203, 1, 64, rng);
  runCase<3>(rep, "edges", 5, 70, 96, 2, 64, rng);
  runCase<3>(rep, "odd_outer", 3, 40, 72, 2, 16, rng);
  return rep.exitCode();
}
