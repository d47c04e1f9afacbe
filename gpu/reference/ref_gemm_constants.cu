// Prints the reference GEMM's launch constants as JSON, so that a CPU test can
// hold ref_gemm.json to the values the kernel was compiled with.
#include "ref_gemm.cuh"

#include <cstdio>

int main() {
  using namespace tawa::ref;
  std::printf("{\"block\": [%d, 1, 1], \"dynamic_smem_bytes\": %d, "
              "\"tile\": [%d, %d], \"box_a\": [%d, %d], \"box_b\": [%d, %d], "
              "\"box_c\": [64, 64]}\n",
              kThreads, kSmemBytes, kBM, kBN, kBM, kBK, kBN, kBK);
  return 0;
}
