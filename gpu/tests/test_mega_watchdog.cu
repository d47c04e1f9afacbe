// The mega-kernel watchdog (tawa/device/mega/watchdog.cuh): a wait that can
// never end must give up after its bound with a report of what it waited for
// and raise the abort flag; other waiters must then stop with their own
// reports; a wait that ends before the bound must report nothing.
#include "common.cuh"
#include "tawa/device/mega/watchdog.cuh"

#include <chrono>

using namespace tawa::test;
using namespace tawa::device::mega;

/// CTA 0 thread 0 waits on a flag nobody sets, with a short bound; the other
/// CTAs' thread 0 wait on the same flag with a bound 1000x longer, so they
/// can only end through the abort flag. If `release` is set, CTA 0 sets the
/// flag itself after `releaseCycles`, before the bound.
__global__ void watchdogKernel(uint32_t *flag, WatchdogState shortBound,
                               WatchdogState longBound, uint32_t release,
                               uint64_t releaseCycles, uint32_t *outcome) {
  if (threadIdx.x != 0)
    return;
  if (blockIdx.x == 0 && release) {
    uint64_t t0 = clock64();
    while (clock64() - t0 < releaseCycles) {
    }
    storeRelease(flag, 1);
  }
  const WatchdogState &s = blockIdx.x == 0 ? shortBound : longBound;
  bool ok = boundedWait(
      s, [&] { return loadAcquire(flag) != 0; },
      [&] { return WaitReport{1, blockIdx.x, 100 + blockIdx.x, 7, 3, 4}; });
  outcome[blockIdx.x] = ok ? 1 : 2;
}

int main() {
  Report report;
  testSeed("test_mega_watchdog");
  int khz = 0;
  TAWA_CHECK_CUDA(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0));
  const uint32_t ctas = 16;
  const double boundMs = 10;
  for (uint32_t release : {0u, 1u}) {
    uint32_t *flag, *words, *outcome;
    WaitReport *reports;
    TAWA_CHECK_CUDA(cudaMalloc(&flag, 4));
    TAWA_CHECK_CUDA(cudaMalloc(&words, 8));
    TAWA_CHECK_CUDA(cudaMalloc(&outcome, ctas * 4));
    TAWA_CHECK_CUDA(cudaMalloc(&reports, 64 * sizeof(WaitReport)));
    TAWA_CHECK_CUDA(cudaMemset(flag, 0, 4));
    TAWA_CHECK_CUDA(cudaMemset(words, 0, 8));
    TAWA_CHECK_CUDA(cudaMemset(outcome, 0, ctas * 4));
    uint64_t bound = uint64_t(boundMs * khz);
    WatchdogState shortBound{words, reports, words + 1, 64, bound};
    WatchdogState longBound = shortBound;
    longBound.boundCycles = bound * 1000;
    auto t0 = std::chrono::steady_clock::now();
    watchdogKernel<<<ctas, 32>>>(flag, shortBound, longBound, release,
                                 bound / 4, outcome);
    TAWA_CHECK_LAUNCH();
    double ms = std::chrono::duration<double, std::milli>(
                    std::chrono::steady_clock::now() - t0)
                    .count();
    uint32_t hostWords[2];
    std::vector<uint32_t> out(ctas);
    std::vector<WaitReport> rep(64);
    TAWA_CHECK_CUDA(cudaMemcpy(hostWords, words, 8, cudaMemcpyDeviceToHost));
    TAWA_CHECK_CUDA(
        cudaMemcpy(out.data(), outcome, ctas * 4, cudaMemcpyDeviceToHost));
    TAWA_CHECK_CUDA(cudaMemcpy(rep.data(), reports, 64 * sizeof(WaitReport),
                               cudaMemcpyDeviceToHost));
    if (release) {
      uint32_t done = 0;
      for (uint32_t o : out)
        done += o == 1;
      if (hostWords[0] || hostWords[1] || done != ctas)
        report.fail("watchdog quiet",
                    "abort %u, %u reports, %u of %u waits ended", hostWords[0],
                    hostWords[1], done, ctas);
      else
        report.pass("watchdog quiet: a wait ended before its bound");
    } else {
      uint32_t timedOut = 0, stopped = 0, named = 0;
      for (uint32_t i = 0; i < std::min<uint32_t>(hostWords[1], 64); ++i) {
        timedOut += rep[i].end == uint32_t(WaitEnd::TimedOut);
        stopped += rep[i].end == uint32_t(WaitEnd::Stopped);
        named += rep[i].task == 100 + rep[i].unit && rep[i].event == 7 &&
                 rep[i].arrivals == 3 && rep[i].triggerCount == 4;
      }
      uint32_t gaveUp = 0;
      for (uint32_t o : out)
        gaveUp += o == 2;
      std::printf("  stuck wait: kernel ended after %.1f ms (bound %.0f ms), "
                  "%u timed out, %u stopped\n",
                  ms, boundMs, timedOut, stopped);
      if (!hostWords[0] || hostWords[1] != ctas || gaveUp != ctas ||
          timedOut != 1 || stopped != ctas - 1 || named != ctas)
        report.fail("watchdog stuck wait",
                    "abort %u, %u reports (%u timed "
                    "out, %u stopped, %u complete), %u waits gave up",
                    hostWords[0], hostWords[1], timedOut, stopped, named,
                    gaveUp);
      else if (ms < boundMs || ms > 5000)
        report.fail("watchdog stuck wait", "ended after %.1f ms", ms);
      else
        report.pass("watchdog stuck wait: one timeout, the others stopped");
    }
    cudaFree(flag);
    cudaFree(words);
    cudaFree(outcome);
    cudaFree(reports);
  }
  return report.exitCode();
}
