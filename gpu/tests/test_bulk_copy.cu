// The non-tensor bulk copy alone (tma.cuh: bulkLoad, and bulkLoad with the
// L2 evict-first policy of l2EvictFirstPolicy): one thread announces the
// bytes on an mbarrier and copies a range of random global memory into
// shared memory, the block waits on the barrier and writes shared memory
// back out; checked byte for byte against the source, for several sizes and
// source offsets (16-byte multiples, as the copy requires), the bytes around
// the copied range left untouched.
#include "common.cuh"
#include "tawa/device/device.cuh"

#include <cstring>
#include <vector>

using namespace tawa::device;
using namespace tawa::test;

namespace {

constexpr int kMaxBytes = 64 * 1024;

__global__ void bulkCopyKernel(const unsigned char *src, unsigned char *dst,
                               uint32_t bytes, int withPolicy) {
  extern __shared__ __align__(128) unsigned char smem[];
  __shared__ MBarrier bar;
  if (threadIdx.x == 0) {
    mbarrierInit(&bar, 1);
    fenceMBarrierInit();
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    mbarrierArriveExpectTx(&bar, bytes);
    if (withPolicy)
      bulkLoad(smem, src, bytes, &bar, l2EvictFirstPolicy());
    else
      bulkLoad(smem, src, bytes, &bar);
  }
  mbarrierWait(&bar, 0);
  for (uint32_t i = threadIdx.x; i < bytes; i += blockDim.x)
    dst[i] = smem[i];
}

void runCase(Report &rep, std::mt19937_64 &rng, uint32_t bytes, uint32_t offset,
             bool withPolicy) {
  const size_t total = kMaxBytes + 4096;
  std::vector<unsigned char> host(total), out(total);
  for (auto &b : host)
    b = static_cast<unsigned char>(rng());
  unsigned char *dSrc, *dDst;
  TAWA_CHECK_CUDA(cudaMalloc(&dSrc, total));
  TAWA_CHECK_CUDA(cudaMalloc(&dDst, total));
  TAWA_CHECK_CUDA(cudaMemcpy(dSrc, host.data(), total, cudaMemcpyHostToDevice));
  // Poison: bytes the kernel does not write must stay 0xA5.
  TAWA_CHECK_CUDA(cudaMemset(dDst, 0xA5, total));
  TAWA_CHECK_CUDA(cudaFuncSetAttribute(
      bulkCopyKernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kMaxBytes));
  bulkCopyKernel<<<1, 128, kMaxBytes>>>(dSrc + offset, dDst, bytes,
                                        withPolicy ? 1 : 0);
  TAWA_CHECK_LAUNCH();
  TAWA_CHECK_CUDA(cudaMemcpy(out.data(), dDst, total, cudaMemcpyDeviceToHost));
  TAWA_CHECK_CUDA(cudaFree(dSrc));
  TAWA_CHECK_CUDA(cudaFree(dDst));
  size_t wrong = 0, touched = 0;
  for (uint32_t i = 0; i < bytes; ++i)
    wrong += out[i] != host[offset + i];
  for (size_t i = bytes; i < total; ++i)
    touched += out[i] != 0xA5;
  const std::string name =
      std::string(withPolicy ? "bulk_load_evict_first" : "bulk_load") + "_" +
      std::to_string(bytes) + "B_at" + std::to_string(offset);
  if (wrong || touched)
    rep.fail(name,
             "%zu of %u bytes differ from the source, %zu bytes past the "
             "copy written",
             wrong, bytes, touched);
  else
    rep.pass(name);
}

} // namespace

int main() {
  const uint64_t seed = testSeed("test_bulk_copy");
  std::mt19937_64 rng(seed);
  TAWA_CHECK_CUDA(cudaSetDevice(0));
  Report rep;
  for (bool policy : {false, true}) {
    runCase(rep, rng, 16, 0, policy);
    runCase(rep, rng, 1040, 48, policy);
    runCase(rep, rng, kMaxBytes, 4096 - 16, policy);
  }
  return rep.exitCode();
}
