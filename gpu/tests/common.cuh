// Host-side helpers shared by the GPU tests: checked CUDA calls, a seeded
// RNG, tensor-map encoding and the PASS/FAIL report.
#pragma once
#include <cuda.h>
#include <cuda_runtime.h>

#include <chrono>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

namespace tawa::test {

#define TAWA_CHECK_CUDA(expr)                                                  \
  do {                                                                         \
    cudaError_t err_ = (expr);                                                 \
    if (err_ != cudaSuccess) {                                                 \
      std::fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__,       \
                   #expr, cudaGetErrorString(err_));                           \
      std::exit(2);                                                            \
    }                                                                          \
  } while (0)

#define TAWA_CHECK_CU(expr)                                                    \
  do {                                                                         \
    CUresult res_ = (expr);                                                    \
    if (res_ != CUDA_SUCCESS) {                                                \
      const char *msg_ = nullptr;                                              \
      cuGetErrorString(res_, &msg_);                                           \
      std::fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__,       \
                   #expr, msg_ ? msg_ : "?");                                  \
      std::exit(2);                                                            \
    }                                                                          \
  } while (0)

/// Checks the launch itself and then the kernel's completion.
#define TAWA_CHECK_LAUNCH()                                                    \
  do {                                                                         \
    TAWA_CHECK_CUDA(cudaGetLastError());                                       \
    TAWA_CHECK_CUDA(cudaDeviceSynchronize());                                  \
  } while (0)

/// Seed from the clock unless TAWA_SEED is set; printed so that a failure
/// can be replayed.
inline uint64_t testSeed(const char *binary) {
  uint64_t seed;
  if (const char *env = std::getenv("TAWA_SEED"))
    seed = std::strtoull(env, nullptr, 0);
  else
    seed = static_cast<uint64_t>(
        std::chrono::high_resolution_clock::now().time_since_epoch().count());
  std::printf("%s: seed %llu (set TAWA_SEED to replay)\n", binary,
              static_cast<unsigned long long>(seed));
  return seed;
}

/// Collects per-case results and prints one line per case.
class Report {
public:
  void pass(const std::string &name) {
    std::printf("PASS %s\n", name.c_str());
    std::fflush(stdout);
  }
  void fail(const std::string &name, const char *fmt, ...) {
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    std::printf("FAIL %s: %s\n", name.c_str(), buf);
    std::fflush(stdout);
    ++failures_;
  }
  int exitCode() const { return failures_ ? 1 : 0; }
  int failures() const { return failures_; }

private:
  int failures_ = 0;
};

/// Row-major tensor of `rank` dims (outermost first), innermost contiguous,
/// with optional row pitch (elements) larger than the innermost extent.
inline CUtensorMap encodeTiled(CUtensorMapDataType type, int elemBytes,
                               void *base, std::vector<uint64_t> dims,
                               std::vector<uint64_t> pitchesElems,
                               std::vector<uint32_t> box,
                               CUtensorMapSwizzle swizzle) {
  // The driver wants innermost first and byte strides of dims 1..rank-1.
  const int rank = static_cast<int>(dims.size());
  cuuint64_t gdim[5], gstride[4];
  cuuint32_t bdim[5], estride[5];
  for (int i = 0; i < rank; ++i) {
    gdim[i] = dims[rank - 1 - i];
    bdim[i] = box[rank - 1 - i];
    estride[i] = 1;
  }
  for (int i = 0; i + 1 < rank; ++i)
    gstride[i] = pitchesElems[rank - 2 - i] * elemBytes;
  CUtensorMap map;
  TAWA_CHECK_CU(cuTensorMapEncodeTiled(
      &map, type, rank, base, gdim, gstride, bdim, estride,
      CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle,
      CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
  return map;
}

/// Swizzled byte offset inside a 128B-swizzled box (host mirror of the
/// device formula, written independently on purpose).
inline uint32_t hostSwizzle128(uint32_t row, uint32_t colByte) {
  uint32_t chunk = colByte / 16;
  return row * 128 + 16 * (chunk ^ (row % 8)) + colByte % 16;
}

} // namespace tawa::test
