// Mega-kernel event counters (tawa/device/mega/sync.cuh): release/acquire
// message passing between CTAs, and "the last arrival sees every earlier
// one". Producer CTAs write a block of data with all their threads, then one
// acq_rel arrival; consumer CTAs acquire-poll the counter, then read every
// producer's block with plain loads. A round's values depend on the round,
// so a stale line is caught. Each arrival whose old value is count-1 marks
// the event: every event must be marked exactly once, and the marker must
// see every producer's data. Cooperative launch: all CTAs resident.
#include "common.cuh"
#include "tawa/device/mega/sync.cuh"

using namespace tawa::test;
using namespace tawa::device::mega;

constexpr int kThreads = 128;
constexpr int kWordsPerCta = 512;

__device__ uint32_t value(uint32_t round, uint32_t producer, uint32_t i,
                          uint32_t seed) {
  return (round * 0x9E3779B9u) ^ (producer * 0x85EBCA6Bu) ^ (i * 0xC2B2AE35u) ^
         seed;
}

__global__ void __launch_bounds__(kThreads)
    eventsKernel(uint32_t *data, uint32_t *counters, uint32_t *marks,
                 uint32_t *bad, uint32_t *timeouts, uint32_t producers,
                 uint32_t rounds, uint32_t seed, uint64_t bound) {
  __shared__ int ready;
  const bool isProducer = blockIdx.x < producers;
  for (uint32_t r = 0; r < rounds; ++r) {
    uint32_t *block = data + (size_t(r % 2) * producers) * kWordsPerCta;
    if (isProducer) {
      // Random per-round delay so arrivals interleave differently.
      uint64_t t0 = clock64();
      while (clock64() - t0 < (value(r, blockIdx.x, 0, seed) & 1023)) {
      }
      for (int i = threadIdx.x; i < kWordsPerCta; i += kThreads)
        block[blockIdx.x * kWordsPerCta + i] = value(r, blockIdx.x, i, seed);
      __syncthreads();
      if (threadIdx.x == 0) {
        uint32_t old = fetchAddAcqRel(&counters[r], 1);
        ready = old + 1 == producers;
        if (ready)
          atomicAdd(&marks[r], 1);
      }
      __syncthreads();
    } else {
      if (threadIdx.x == 0) {
        uint64_t t0 = clock64();
        ready = 1;
        while (loadAcquire(&counters[r]) < producers)
          if (clock64() - t0 > bound) {
            atomicAdd(timeouts, 1);
            ready = 0;
            break;
          }
      }
      __syncthreads();
      if (!ready)
        return;
    }
    // Consumers and the last producer (which acquired every other arrival)
    // check every block.
    const bool checks = ready;
    if (checks)
      for (uint32_t p = 0; p < producers; ++p)
        for (int i = threadIdx.x; i < kWordsPerCta; i += kThreads)
          if (block[p * kWordsPerCta + i] != value(r, p, i, seed))
            atomicAdd(bad, 1);
    // Round r+2 reuses this block: producers wait until every checker of
    // round r is done with it (a second counter per round).
    __syncthreads();
    if (checks && threadIdx.x == 0)
      fetchAddAcqRel(&counters[rounds + r], 1);
    if (isProducer && threadIdx.x == 0) {
      uint64_t t0 = clock64();
      while (loadAcquire(&counters[rounds + r]) < gridDim.x - producers + 1)
        if (clock64() - t0 > bound) {
          atomicAdd(timeouts, 1);
          break;
        }
    }
    __syncthreads();
  }
}

int main() {
  Report report;
  uint64_t seed = testSeed("test_mega_events");
  int sms = 0;
  TAWA_CHECK_CUDA(
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  for (uint32_t producers : {1u, 7u, 64u}) {
    const uint32_t consumers = sms - producers, rounds = 400;
    uint32_t *data, *counters, *marks, *bad, *timeouts;
    TAWA_CHECK_CUDA(cudaMalloc(&data, 2 * producers * kWordsPerCta * 4));
    TAWA_CHECK_CUDA(cudaMalloc(&counters, 2 * rounds * 4));
    TAWA_CHECK_CUDA(cudaMalloc(&marks, rounds * 4));
    TAWA_CHECK_CUDA(cudaMalloc(&bad, 4));
    TAWA_CHECK_CUDA(cudaMalloc(&timeouts, 4));
    TAWA_CHECK_CUDA(cudaMemset(data, 0, 2 * producers * kWordsPerCta * 4));
    TAWA_CHECK_CUDA(cudaMemset(counters, 0, 2 * rounds * 4));
    TAWA_CHECK_CUDA(cudaMemset(marks, 0, rounds * 4));
    TAWA_CHECK_CUDA(cudaMemset(bad, 0, 4));
    TAWA_CHECK_CUDA(cudaMemset(timeouts, 0, 4));
    uint32_t s32 = static_cast<uint32_t>(seed) + producers;
    uint64_t bound = 4000000000ull;
    uint32_t p = producers, r = rounds;
    void *args[] = {&data, &counters, &marks, &bad,  &timeouts,
                    &p,    &r,        &s32,   &bound};
    TAWA_CHECK_CUDA(cudaLaunchCooperativeKernel(
        (const void *)eventsKernel, dim3(producers + consumers), dim3(kThreads),
        args, 0, nullptr));
    TAWA_CHECK_LAUNCH();
    uint32_t hostBad = 0, hostTimeouts = 0;
    std::vector<uint32_t> hostMarks(rounds), hostCounters(2 * rounds);
    TAWA_CHECK_CUDA(cudaMemcpy(&hostBad, bad, 4, cudaMemcpyDeviceToHost));
    TAWA_CHECK_CUDA(
        cudaMemcpy(&hostTimeouts, timeouts, 4, cudaMemcpyDeviceToHost));
    TAWA_CHECK_CUDA(cudaMemcpy(hostMarks.data(), marks, rounds * 4,
                               cudaMemcpyDeviceToHost));
    TAWA_CHECK_CUDA(cudaMemcpy(hostCounters.data(), counters, 2 * rounds * 4,
                               cudaMemcpyDeviceToHost));
    std::string name = "events producers=" + std::to_string(producers) +
                       " consumers=" + std::to_string(consumers);
    uint32_t wrongMarks = 0, wrongCounts = 0;
    for (uint32_t i = 0; i < rounds; ++i) {
      wrongMarks += hostMarks[i] != 1;
      wrongCounts += hostCounters[i] != producers;
    }
    if (hostTimeouts)
      report.fail(name, "%u waits timed out", hostTimeouts);
    else if (hostBad)
      report.fail(name, "%u words read before their release", hostBad);
    else if (wrongMarks || wrongCounts)
      report.fail(name, "%u rounds not completed exactly once, %u counts off",
                  wrongMarks, wrongCounts);
    else
      report.pass(name);
    cudaFree(data);
    cudaFree(counters);
    cudaFree(marks);
    cudaFree(bad);
    cudaFree(timeouts);
  }
  return report.exitCode();
}
