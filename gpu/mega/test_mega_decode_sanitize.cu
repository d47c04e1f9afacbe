// The decode mega-kernel without PyTorch, for compute-sanitizer (racecheck,
// memcheck, synccheck): under racecheck PyTorch's own kernels stop the
// sanitizer, so this program binds every buffer of a small config through
// the C API (tawa_mega.h) to device memory filled with small random values,
// runs a few steps at several positions and checks that the watchdog stayed
// silent and the logits are finite.
//   test_mega_decode_sanitize CONFIG.json [batch] [max_seq] [steps]
#include "tawa/runtime/tawa_mega.h"

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <numeric>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace {

__global__ void fillBf16(__nv_bfloat16 *p, int64_t n, uint32_t seed,
                         float scale, float offset) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    uint32_t h = uint32_t(i) * 2654435761u ^ seed;
    h ^= h >> 15;
    h *= 2246822519u;
    h ^= h >> 13;
    float u = (h & 0xFFFFFF) / float(0x1000000) - 0.5f; // [-0.5, 0.5)
    p[i] = __float2bfloat16_rn(offset + scale * u);
  }
}

bool check(int rc, const char *what) {
  if (rc == 0)
    return true;
  std::fprintf(stderr, "FAIL %s: %s\n", what, tawa_mega_last_error());
  return false;
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s CONFIG.json [batch] [max_seq] [steps]\n",
                 argv[0]);
    return 2;
  }
  std::ifstream in(argv[1]);
  std::stringstream text;
  text << in.rdbuf();
  const int batch = argc > 2 ? std::atoi(argv[2]) : 2;
  const int maxSeq = argc > 3 ? std::atoi(argv[3]) : 1024;
  const int steps = argc > 4 ? std::atoi(argv[4]) : 3;
  tawa_mega_decoder *d = nullptr;
  // Pages of 64 positions, a pool with a spare page, and the rows' pages
  // shuffled through it.
  const int pageSize = 64;
  const int pagesPerRow = (maxSeq + pageSize - 1) / pageSize;
  const int kvPages = batch * pagesPerRow + 1;
  if (!check(tawa_mega_create(text.str().c_str(), batch, maxSeq, pageSize,
                              kvPages, 4, 0, &d),
             "create"))
    return 1;
  std::printf("%s\n", tawa_mega_summary(d));
  std::vector<void *> allocations;
  void *positions = nullptr, *logits = nullptr, *tokens = nullptr;
  int64_t vocab = 0;
  for (int i = 0; i < tawa_mega_num_buffers(d); ++i) {
    int type, kind, ndim;
    int64_t shape[8];
    tawa_mega_buffer_info(d, i, &type, &kind, &ndim, shape);
    if (kind >= 6) // scratch, constant, polled: the runtime's own
      continue;
    int64_t n = 1;
    for (int k = 0; k < ndim; ++k)
      n *= shape[k];
    const size_t bytes = size_t(n) * (type == 0 ? 2 : 4);
    void *p = nullptr;
    cudaMalloc(&p, bytes);
    allocations.push_back(p);
    const std::string name = tawa_mega_buffer_name(d, i);
    if (type == 0) {
      // Norm weights near 1, other weights and the cache small.
      bool norm = name.find("norm") != std::string::npos;
      fillBf16<<<256, 256>>>(static_cast<__nv_bfloat16 *>(p), n, 1234u + i,
                             norm ? 0.2f : 0.1f, norm ? 1.f : 0.f);
    } else {
      cudaMemset(p, 0, bytes);
    }
    if (name == "positions")
      positions = p;
    if (name == "block_table") {
      // The rows' pages: pool pages 1 .. kvPages - 1, shuffled.
      std::vector<int32_t> table(size_t(batch) * pagesPerRow);
      std::iota(table.begin(), table.end(), 1);
      std::shuffle(table.begin(), table.end(), std::mt19937(7));
      cudaMemcpy(p, table.data(), table.size() * 4, cudaMemcpyHostToDevice);
    }
    if (name == "tokens")
      tokens = p;
    if (name == "logits") {
      logits = p;
      vocab = shape[1];
    }
    if (!check(tawa_mega_bind(d, i, p), name.c_str()))
      return 1;
  }
  int failures = 0;
  for (int s = 0; s < steps; ++s) {
    // Positions spread over the cache, including its first and last slot.
    std::vector<int32_t> pos(batch), tok(batch);
    for (int b = 0; b < batch; ++b) {
      pos[b] = (s * 977 + b * 331) % maxSeq;
      if (s == 0 && b == 0)
        pos[b] = maxSeq - 1;
      tok[b] = (s * 131 + b * 17) % int(vocab);
    }
    cudaMemcpy(positions, pos.data(), batch * 4, cudaMemcpyHostToDevice);
    cudaMemcpy(tokens, tok.data(), batch * 4, cudaMemcpyHostToDevice);
    if (!check(tawa_mega_step(d, nullptr, 60000.0), "step"))
      return 1;
    cudaError_t e = cudaDeviceSynchronize();
    if (e != cudaSuccess) {
      std::fprintf(stderr, "FAIL step %d: %s\n", s, cudaGetErrorString(e));
      return 1;
    }
    if (!check(tawa_mega_check(d), "watchdog"))
      ++failures;
    std::vector<float> host(size_t(batch) * vocab);
    cudaMemcpy(host.data(), logits, host.size() * 4, cudaMemcpyDeviceToHost);
    for (float v : host)
      if (!std::isfinite(v)) {
        std::fprintf(stderr, "FAIL step %d: non-finite logits\n", s);
        ++failures;
        break;
      }
  }
  tawa_mega_destroy(d);
  for (void *p : allocations)
    cudaFree(p);
  std::printf("%s: %d steps, batch %d, max_seq %d\n",
              failures ? "FAIL" : "PASS", steps, batch, maxSeq);
  return failures ? 1 : 0;
}
