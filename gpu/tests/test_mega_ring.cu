// Mega-kernel id rings (tawa/device/mega/queue.cuh): every lane of many
// producer warps pushes distinct ids into R rings; one consumer thread per
// ring pops until it has all of its ring's ids. Small rings force producers
// to wait for free slots and to lap each other. Every id must arrive exactly
// once, at the ring it was sent to; the watchdog must stay silent.
#include "common.cuh"
#include "tawa/device/mega/queue.cuh"

using namespace tawa::test;
using namespace tawa::device::mega;

__global__ void ringKernel(uint32_t *tails, uint32_t *slots, uint32_t mask,
                           uint32_t rings, uint32_t producerCtas,
                           uint32_t idsPerThread, uint32_t *received,
                           uint32_t *wrongRing, WatchdogState wd) {
  const uint32_t producerThreads = producerCtas * blockDim.x;
  if (blockIdx.x < producerCtas) {
    uint32_t thread = blockIdx.x * blockDim.x + threadIdx.x;
    for (uint32_t k = 0; k < idsPerThread; ++k) {
      uint32_t id = k * producerThreads + thread;
      uint32_t ring = (id * 2654435761u >> 7) % rings;
      IdRing r{tails + ring, slots + size_t(ring) * (mask + 1), mask};
      if (!ringPush(r, id, wd, [&] { return WaitReport{1, thread}; }))
        return;
    }
    return;
  }
  // One consumer thread per ring.
  uint32_t ring = (blockIdx.x - producerCtas) * blockDim.x + threadIdx.x;
  if (ring >= rings)
    return;
  uint32_t total = producerThreads * idsPerThread, expected = 0;
  for (uint32_t id = 0; id < total; ++id)
    expected += (id * 2654435761u >> 7) % rings == ring;
  IdRing r{tails + ring, slots + size_t(ring) * (mask + 1), mask};
  uint32_t head = 0;
  for (uint32_t got = 0; got < expected; ++got) {
    uint32_t id = 0;
    if (!boundedWait(
            wd, [&] { return ringTryPop(r, head, id); },
            [&] {
              return WaitReport{2, ring};
            }))
      return;
    atomicAdd(&received[id], 1);
    if ((id * 2654435761u >> 7) % rings != ring)
      atomicAdd(wrongRing, 1);
  }
}

int main() {
  Report report;
  testSeed("test_mega_ring");
  struct Case {
    uint32_t capacity, rings, producerCtas, idsPerThread;
  };
  for (Case c :
       {Case{4, 3, 8, 40}, Case{16, 32, 64, 25}, Case{1024, 128, 100, 10}}) {
    const uint32_t threads = 128,
                   total = c.producerCtas * threads * c.idsPerThread;
    const uint32_t consumerCtas = (c.rings + threads - 1) / threads;
    uint32_t *tails, *slots, *received, *wrong, *words;
    WaitReport *reports;
    TAWA_CHECK_CUDA(cudaMalloc(&tails, c.rings * 4));
    TAWA_CHECK_CUDA(cudaMalloc(&slots, size_t(c.rings) * c.capacity * 4));
    TAWA_CHECK_CUDA(cudaMalloc(&received, total * 4));
    TAWA_CHECK_CUDA(cudaMalloc(&wrong, 4));
    TAWA_CHECK_CUDA(cudaMalloc(&words, 8));
    TAWA_CHECK_CUDA(cudaMalloc(&reports, 64 * sizeof(WaitReport)));
    TAWA_CHECK_CUDA(cudaMemset(tails, 0, c.rings * 4));
    TAWA_CHECK_CUDA(cudaMemset(slots, 0, size_t(c.rings) * c.capacity * 4));
    TAWA_CHECK_CUDA(cudaMemset(received, 0, total * 4));
    TAWA_CHECK_CUDA(cudaMemset(wrong, 0, 4));
    TAWA_CHECK_CUDA(cudaMemset(words, 0, 8));
    WatchdogState wd{words, reports, words + 1, 64, 4000000000ull};
    uint32_t mask = c.capacity - 1;
    void *args[] = {&tails,    &slots,          &mask,
                    &c.rings,  &c.producerCtas, &c.idsPerThread,
                    &received, &wrong,          &wd};
    TAWA_CHECK_CUDA(cudaLaunchCooperativeKernel(
        (const void *)ringKernel, dim3(c.producerCtas + consumerCtas),
        dim3(threads), args, 0, nullptr));
    TAWA_CHECK_LAUNCH();
    std::vector<uint32_t> got(total);
    uint32_t hostWrong = 0, hostWords[2];
    TAWA_CHECK_CUDA(
        cudaMemcpy(got.data(), received, total * 4, cudaMemcpyDeviceToHost));
    TAWA_CHECK_CUDA(cudaMemcpy(&hostWrong, wrong, 4, cudaMemcpyDeviceToHost));
    TAWA_CHECK_CUDA(cudaMemcpy(hostWords, words, 8, cudaMemcpyDeviceToHost));
    uint32_t notOnce = 0;
    for (uint32_t v : got)
      notOnce += v != 1;
    std::string name = "ring capacity=" + std::to_string(c.capacity) +
                       " rings=" + std::to_string(c.rings) +
                       " ids=" + std::to_string(total);
    if (hostWords[0] || hostWords[1])
      report.fail(name, "watchdog fired (%u reports)", hostWords[1]);
    else if (notOnce || hostWrong)
      report.fail(name,
                  "%u ids not received exactly once, %u on the wrong ring",
                  notOnce, hostWrong);
    else
      report.pass(name);
    cudaFree(tails);
    cudaFree(slots);
    cudaFree(received);
    cudaFree(wrong);
    cudaFree(words);
    cudaFree(reports);
  }
  return report.exitCode();
}
