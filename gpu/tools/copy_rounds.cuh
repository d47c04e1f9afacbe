// What the copy micro-benchmarks (sm_burst_rate.cu, broadcast_copy_rate.cu,
// input_behind_ring.cu) share: rounds that every CTA of the grid starts
// together, the GPU-wide timer (the mega-kernel's trace clock), and their
// buffers.
#pragma once
#include "tawa/device/mega/sync.cuh"

#include <cstdint>
#include <cstdio>

#include <cuda_runtime.h>

using tawa::device::mega::globalTimerNs;

/// Thread 0 of each CTA: returns once every CTA of the grid has reached round
/// `r` (`arrived` zero before the launch).
__device__ __forceinline__ void waitForRound(unsigned *arrived, int r) {
  atomicAdd(arrived, 1u);
  const unsigned want = (r + 1) * gridDim.x;
  while (*static_cast<volatile unsigned *>(arrived) < want) {
  }
}

/// The source bytes (`srcBytes`, set to `fill`), the round counter and
/// `outWords` 64-bit results; false (and a message) when an allocation fails.
inline bool allocRounds(uint8_t **src, size_t srcBytes, int fill,
                        unsigned **arrived, unsigned long long **out,
                        size_t outWords) {
  if (cudaMalloc(src, srcBytes) != cudaSuccess ||
      cudaMalloc(arrived, sizeof(unsigned)) != cudaSuccess ||
      cudaMalloc(out, outWords * sizeof(unsigned long long)) != cudaSuccess) {
    std::fprintf(stderr, "cudaMalloc failed\n");
    return false;
  }
  cudaMemset(*src, fill, srcBytes);
  return true;
}
