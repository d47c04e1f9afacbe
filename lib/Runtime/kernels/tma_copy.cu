// TMA round trip used to check the runtime on a GPU (tawa-runtime-gpu-check,
// bench/runtime_check.py). Each tile is loaded by TMA into shared memory with
// the map's swizzle and out-of-bounds fill, stored back by TMA (checks store
// clipping), and also written out un-swizzled by ordinary threads to `dump`
// (checks the swizzle mode, the fill value and the box geometry the host
// encoded). Self-contained on purpose: it tests the runtime, not the device
// library. Compile-time geometry comes from NVRTC options in the metadata:
//   BOX_ROWS, BOX_COLS   box extents (outer, inner), in elements
//   ELEM_BYTES           element size
//   SWIZZLE_BITS         0 none, 1 32B, 2 64B, 3 128B
// The loop over tiles makes one source serve both "tiles" and "persistent"
// grids (and surplus CTAs from cluster rounding simply find no tile).

#define ROW_BYTES (BOX_COLS * ELEM_BYTES)
#define TILE_BYTES (BOX_ROWS * ROW_BYTES)

struct alignas(64) TmaDesc {
  unsigned long long opaque[16];
};

__device__ __forceinline__ unsigned smemAddr(const void *p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

extern "C" __global__ void __launch_bounds__(128, 1)
    tawa_tma_copy_2d(const __grid_constant__ TmaDesc in,
                     const __grid_constant__ TmaDesc out, unsigned *dump,
                     int rows, int cols) {
  // The 128B swizzle pattern repeats every 1024 bytes and TMA applies it to
  // absolute shared-memory address bits, so the tile starts on a 1024-byte
  // boundary; the metadata's dynamic_smem_bytes includes 1024 bytes of slack
  // because the dynamic window's own alignment is not guaranteed.
  extern __shared__ unsigned char smemRaw[];
  unsigned char *tile =
      smemRaw + ((1024 - (smemAddr(smemRaw) & 1023)) & 1023);
  __shared__ alignas(8) unsigned long long bar;

  const int tilesX = (cols + BOX_COLS - 1) / BOX_COLS;
  const int tilesY = (rows + BOX_ROWS - 1) / BOX_ROWS;
  const int tiles = tilesX * tilesY;
  const int cta = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  const int ctas = gridDim.x * gridDim.y * gridDim.z;
  const unsigned pitchWords = tilesX * ROW_BYTES / 4;

  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smemAddr(&bar)));
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();

  unsigned phase = 0;
  for (int t = cta; t < tiles; t += ctas, phase ^= 1) {
    const int c0 = (t % tilesX) * BOX_COLS; // innermost coordinate first
    const int c1 = (t / tilesX) * BOX_ROWS;
    if (threadIdx.x == 0) {
      asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(
                       smemAddr(&bar)),
                   "r"(TILE_BYTES)
                   : "memory");
      asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::"
                   "complete_tx::bytes [%0], [%1, {%2, %3}], [%4];" ::"r"(
                       smemAddr(tile)),
                   "l"(&in), "r"(c0), "r"(c1), "r"(smemAddr(&bar))
                   : "memory");
    }
    unsigned done = 0;
    do {
      asm volatile("{\n .reg .pred p;\n"
                   " mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
                   " selp.u32 %0, 1, 0, p;\n}"
                   : "=r"(done)
                   : "r"(smemAddr(&bar)), "r"(phase)
                   : "memory");
    } while (!done);

    for (int i = threadIdx.x; i < TILE_BYTES / 4; i += blockDim.x) {
      unsigned logical = i * 4;
      // Swizzle<B,4,3>: 16-byte chunk bits [4, 4+B) xor row bits [7, 7+B).
      unsigned physical =
          logical ^ (((logical >> 7) & ((1u << SWIZZLE_BITS) - 1)) << 4);
      unsigned r = logical / ROW_BYTES, w = (logical % ROW_BYTES) / 4;
      dump[(c1 + r) * pitchWords + (c0 * ELEM_BYTES) / 4 + w] =
          *reinterpret_cast<const unsigned *>(tile + physical);
    }

    if (threadIdx.x == 0) {
      asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group "
                   "[%0, {%1, %2}], [%3];" ::"l"(&out),
                   "r"(c0), "r"(c1), "r"(smemAddr(tile))
                   : "memory");
      asm volatile("cp.async.bulk.commit_group;" ::: "memory");
      // The next tile's load overwrites `tile`: the store must have read it.
      asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
    }
    __syncthreads();
  }
  if (threadIdx.x == 0)
    asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
}
