// Polled activations alone (tawa/device/mega/poll.cuh):
// - the premise: a computed bf16 is never the poison (float NaNs of either
//   sign round to another NaN), and unpoisoned() maps only the poison;
// - pollRowsToShared: CTA 1 writes rows of a poisoned buffer in a shuffled
//   order after a delay, CTA 0 polls them into shared memory while they
//   are written and writes them back out; checked element for element,
//   for rows whose elements are written one by one and 16 bytes at a time;
// - pollBf16 on a single element written late;
// - the watchdog: rows never written end the poll after its bound with a
//   report naming the worker, task and event given and the abort flag
//   raised, every thread returning false.
#include "common.cuh"
#include "tawa/device/mega/poll.cuh"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <vector>

using namespace tawa::test;
using namespace tawa::device::mega;

namespace {

constexpr int kThreads = 128;

__global__ void premiseKernel(uint16_t *out) {
  const float nans[] = {__int_as_float(0x7FC00000), __int_as_float(0xFFC00000),
                        __int_as_float(0xFFFFFFFF), __int_as_float(0x7F800001),
                        __int_as_float(0xFFBFFFFF)};
  for (int i = 0; i < 5; ++i)
    out[i] = __bfloat16_as_ushort(__float2bfloat16_rn(nans[i]));
}

/// CTA 1: after `delayCycles`, writes element order[i] = values[order[i]],
/// i < writes
/// (bf16 stores; or 16-byte stores of whole chunks when `chunked`, order
/// then indexing chunks). CTA 0: polls the rows into shared memory, then
/// copies them to `out` and records whether the poll succeeded.
__global__ void pollKernel(__nv_bfloat16 *rowsBuf, const __nv_bfloat16 *values,
                           const int *order, int writes, int rows, int len,
                           int pitch, int chunked, uint64_t delayCycles,
                           __nv_bfloat16 *out, int *ok, WatchdogState wd,
                           PollWatch w) {
  w.watchdog = &wd;
  extern __shared__ __align__(16) unsigned char smem[];
  __nv_bfloat16 *dst = reinterpret_cast<__nv_bfloat16 *>(smem);
  const int dstPitch = len + 8;
  if (blockIdx.x == 1) {
    const uint64_t t0 = clock64();
    while (clock64() - t0 < delayCycles) {
    }
    for (int i = threadIdx.x; i < writes; i += blockDim.x) {
      const int e = order[i];
      if (chunked) {
        const int r = e / (len / 8), c = (e % (len / 8)) * 8;
        *reinterpret_cast<uint4 *>(rowsBuf + size_t(r) * pitch + c) =
            *reinterpret_cast<const uint4 *>(values + size_t(r) * len + c);
      } else {
        rowsBuf[size_t(e / len) * pitch + e % len] = values[e];
      }
    }
    return;
  }
  const bool polled = pollRowsToShared(dst, dstPitch, rowsBuf, size_t(pitch),
                                       rows, len, kThreads, w);
  for (int i = threadIdx.x; i < rows * len; i += blockDim.x)
    out[i] = dst[(i / len) * dstPitch + i % len];
  if (threadIdx.x == 0)
    *ok = polled ? 1 : 2;
}

__global__ void pollOneKernel(__nv_bfloat16 *cell, __nv_bfloat16 value,
                              uint64_t delayCycles, __nv_bfloat16 *out,
                              WatchdogState wd, PollWatch w) {
  w.watchdog = &wd;
  if (blockIdx.x == 1) {
    const uint64_t t0 = clock64();
    while (clock64() - t0 < delayCycles) {
    }
    *cell = value;
    return;
  }
  *out = pollBf16(cell, w);
}

__nv_bfloat16 bf16Bits(uint16_t bits) {
  __nv_bfloat16 v;
  std::memcpy(&v, &bits, 2);
  return v;
}
uint16_t bitsOf(__nv_bfloat16 v) {
  uint16_t bits;
  std::memcpy(&bits, &v, 2);
  return bits;
}

void premise(Report &rep) {
  uint16_t *d;
  TAWA_CHECK_CUDA(cudaMalloc(&d, 5 * 2));
  premiseKernel<<<1, 1>>>(d);
  TAWA_CHECK_LAUNCH();
  uint16_t h[5];
  TAWA_CHECK_CUDA(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
  TAWA_CHECK_CUDA(cudaFree(d));
  int poisonedNaNs = 0;
  for (uint16_t b : h)
    poisonedNaNs += b == kPoisonBf16 || (b & 0x7F80) != 0x7F80 || !(b & 0x7F);
  if (poisonedNaNs)
    rep.fail("nan_is_not_poison",
             "%d of 5 float NaNs rounded to the poison "
             "or to a non-NaN (%04x %04x %04x %04x %04x)",
             poisonedNaNs, h[0], h[1], h[2], h[3], h[4]);
  else
    rep.pass("nan_is_not_poison");
  bool mapped = unpoisoned(0xFFFF) == 0x7FFF;
  for (uint32_t b = 0; b < 0xFFFF; ++b)
    mapped &= unpoisoned(uint16_t(b)) == b;
  mapped &= poisoned(uint4{0, 0, 0, 0xFFFF0000u}) &&
            poisoned(uint4{0x0000FFFFu, 0, 0, 0}) &&
            !poisoned(uint4{0x7FFF7FFFu, 0xFFFEFFFEu, 0x80008000u, 0});
  if (mapped)
    rep.pass("unpoisoned_maps_only_the_poison");
  else
    rep.fail("unpoisoned_maps_only_the_poison", "a mapping is wrong");
}

void pollCase(Report &rep, std::mt19937_64 &rng, int rows, int len,
              bool chunked, bool writeAll, const WatchdogState &wd,
              const PollWatch &w, uint32_t *abortFlag, uint32_t *reportCount) {
  const int pitch = len + 16;
  std::vector<uint16_t> values(size_t(rows) * len);
  for (auto &v : values) {
    v = uint16_t(rng());
    if (v == kPoisonBf16)
      v = 0;
  }
  const int n = chunked ? rows * len / 8 : rows * len;
  std::vector<int> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), rng);
  if (!writeAll)
    order.resize(n - 1); // one element (chunk) is never written
  __nv_bfloat16 *dRows, *dValues, *dOut;
  int *dOrder, *dOk;
  TAWA_CHECK_CUDA(cudaMalloc(&dRows, size_t(rows) * pitch * 2));
  TAWA_CHECK_CUDA(cudaMalloc(&dValues, values.size() * 2));
  TAWA_CHECK_CUDA(cudaMalloc(&dOut, values.size() * 2));
  TAWA_CHECK_CUDA(cudaMalloc(&dOrder, std::max<size_t>(1, order.size()) * 4));
  TAWA_CHECK_CUDA(cudaMalloc(&dOk, 4));
  TAWA_CHECK_CUDA(cudaMemset(dRows, kPoisonByte, size_t(rows) * pitch * 2));
  TAWA_CHECK_CUDA(cudaMemset(dOk, 0, 4));
  TAWA_CHECK_CUDA(cudaMemset(abortFlag, 0, 4));
  TAWA_CHECK_CUDA(cudaMemset(reportCount, 0, 4));
  TAWA_CHECK_CUDA(cudaMemcpy(dValues, values.data(), values.size() * 2,
                             cudaMemcpyHostToDevice));
  TAWA_CHECK_CUDA(cudaMemcpy(dOrder, order.data(), order.size() * 4,
                             cudaMemcpyHostToDevice));
  const int smem = rows * (len + 8) * 2;
  TAWA_CHECK_CUDA(cudaFuncSetAttribute(
      pollKernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  // The writer's CTA holds elements back for about 50 µs: the poller
  // starts on a poisoned buffer.
  pollKernel<<<2, kThreads, smem>>>(dRows, dValues, dOrder, int(order.size()),
                                    rows, len, pitch, chunked ? 1 : 0, 100000,
                                    dOut, dOk, wd, w);
  TAWA_CHECK_LAUNCH();
  std::vector<uint16_t> out(values.size());
  int ok = 0;
  uint32_t aborted = 0, reports = 0;
  TAWA_CHECK_CUDA(
      cudaMemcpy(out.data(), dOut, out.size() * 2, cudaMemcpyDeviceToHost));
  TAWA_CHECK_CUDA(cudaMemcpy(&ok, dOk, 4, cudaMemcpyDeviceToHost));
  TAWA_CHECK_CUDA(cudaMemcpy(&aborted, abortFlag, 4, cudaMemcpyDeviceToHost));
  TAWA_CHECK_CUDA(cudaMemcpy(&reports, reportCount, 4, cudaMemcpyDeviceToHost));
  for (void *p : {(void *)dRows, (void *)dValues, (void *)dOut, (void *)dOrder,
                  (void *)dOk})
    TAWA_CHECK_CUDA(cudaFree(p));
  const std::string name =
      std::string(writeAll ? "poll_rows" : "poll_timeout") + "_" +
      std::to_string(rows) + "x" + std::to_string(len) +
      (chunked ? "_chunks" : "");
  if (writeAll) {
    size_t wrong = 0;
    for (size_t i = 0; i < values.size(); ++i)
      wrong += out[i] != values[i];
    if (wrong || ok != 1 || aborted || reports)
      rep.fail(name, "%zu of %zu elements wrong, poll %s, abort %u, %u reports",
               wrong, values.size(), ok == 1 ? "ok" : "stopped", aborted,
               reports);
    else
      rep.pass(name);
  } else {
    // Only the threads whose 16 bytes hold the element never written time
    // out: one thread.
    if (ok != 2 || !aborted || reports != 1)
      rep.fail(name, "poll %s, abort %u, %u reports (expected stopped, 1, 1)",
               ok == 1   ? "ok"
               : ok == 2 ? "stopped"
                         : "not run",
               aborted, reports);
    else
      rep.pass(name);
  }
}

} // namespace

int main() {
  const uint64_t seed = testSeed("test_mega_poll");
  std::mt19937_64 rng(seed);
  TAWA_CHECK_CUDA(cudaSetDevice(0));
  Report rep;
  premise(rep);
  int khz = 0;
  TAWA_CHECK_CUDA(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0));
  uint32_t *words, *arrivals;
  WaitReport *reports;
  TAWA_CHECK_CUDA(cudaMalloc(&words, 8));
  TAWA_CHECK_CUDA(cudaMalloc(&arrivals, 16));
  TAWA_CHECK_CUDA(cudaMalloc(&reports, 64 * sizeof(WaitReport)));
  TAWA_CHECK_CUDA(cudaMemset(arrivals, 0, 16));
  tawa::mega::EventDesc *events;
  tawa::mega::EventDesc ev{};
  ev.triggerCount = 5;
  TAWA_CHECK_CUDA(cudaMalloc(&events, 4 * sizeof ev));
  for (int e = 0; e < 4; ++e)
    TAWA_CHECK_CUDA(
        cudaMemcpy(events + e, &ev, sizeof ev, cudaMemcpyHostToDevice));
  // 20 ms bound: far above the writer's delay.
  WatchdogState wd{words, reports, words + 1, 64, uint64_t(20.0 * khz)};
  // The kernels point `watchdog` at their copy of wd.
  const PollWatch w{nullptr, arrivals, events, 9, 1234, 3};
  for (bool chunked : {false, true}) {
    pollCase(rep, rng, 1, 1024, chunked, true, wd, w, words, words + 1);
    pollCase(rep, rng, 4, 3072, chunked, true, wd, w, words, words + 1);
    pollCase(rep, rng, 16, 256, chunked, true, wd, w, words, words + 1);
  }
  pollCase(rep, rng, 2, 512, true, false, wd, w, words, words + 1);
  WaitReport r{};
  TAWA_CHECK_CUDA(cudaMemcpy(&r, reports, sizeof r, cudaMemcpyDeviceToHost));
  if (r.unit == 9 && r.task == 1234 && r.event == 3 && r.triggerCount == 5 &&
      r.end == uint32_t(WaitEnd::TimedOut))
    rep.pass("poll_timeout_report");
  else
    rep.fail("poll_timeout_report", "report: %s",
             describeWaitReport(r).c_str());
  // One element written late.
  {
    __nv_bfloat16 *cell, *out;
    TAWA_CHECK_CUDA(cudaMalloc(&cell, 2));
    TAWA_CHECK_CUDA(cudaMalloc(&out, 2));
    TAWA_CHECK_CUDA(cudaMemset(cell, kPoisonByte, 2));
    TAWA_CHECK_CUDA(cudaMemset(words, 0, 8));
    pollOneKernel<<<2, 1>>>(cell, bf16Bits(0x3F80), 100000, out, wd, w);
    TAWA_CHECK_LAUNCH();
    __nv_bfloat16 got;
    TAWA_CHECK_CUDA(cudaMemcpy(&got, out, 2, cudaMemcpyDeviceToHost));
    if (bitsOf(got) == 0x3F80)
      rep.pass("poll_one");
    else
      rep.fail("poll_one", "read %04x, wrote 3f80", bitsOf(got));
    TAWA_CHECK_CUDA(cudaFree(cell));
    TAWA_CHECK_CUDA(cudaFree(out));
  }
  TAWA_CHECK_CUDA(cudaFree(words));
  TAWA_CHECK_CUDA(cudaFree(arrivals));
  TAWA_CHECK_CUDA(cudaFree(reports));
  TAWA_CHECK_CUDA(cudaFree(events));
  return rep.exitCode();
}
