// Polled activations (docs/MEGAKERNEL.md, "Polled activations"): before a
// step the runtime fills every bf16 activation with the poison 0xFFFF, a NaN
// no conversion produces (a float NaN rounds to the canonical 0x7FFF), and
// each element is written once in the step. A task whose inputs are such
// activations need not wait for its event: it reads them with coherent
// loads (sync.cuh's loadRelaxed) until no element holds the poison. The data is
// its own signal, so the hop between two operators loses the producer's release
// fence, the arrival's trip to L2 and the separate read of the input after the
// event fired. Each 16-bit element is read whole (a vector load is several
// single-copy-atomic words), so an element that is not the poison is the
// value its producer wrote.
#pragma once
#include "tawa/Mega/DeviceLayout.h"
#include "tawa/device/mega/sync.cuh"
#include "tawa/device/mega/watchdog.cuh"

#include <cuda_bf16.h>

#include <cstdint>

namespace tawa::device::mega {

constexpr uint16_t kPoisonBf16 = 0xFFFF;
/// What the poison is written as in memset (every byte of a polled buffer).
constexpr unsigned char kPoisonByte = 0xFF;

/// Whether either bf16 of a 32-bit word is the poison.
__host__ __device__ constexpr bool poisonedWord(uint32_t w) {
  return (w & 0xFFFFu) == kPoisonBf16 || (w >> 16) == kPoisonBf16;
}
__host__ __device__ constexpr bool poisoned(uint4 v) {
  return poisonedWord(v.x) || poisonedWord(v.y) || poisonedWord(v.z) ||
         poisonedWord(v.w);
}
__host__ __device__ constexpr bool poisoned(uint16_t v) {
  return v == kPoisonBf16;
}

/// The bits a producer may store for a bf16 it copies rather than computes
/// (the embedding's rows): the poison, should a weight hold it, becomes the
/// canonical NaN, which is what a computed NaN would be.
__host__ __device__ constexpr uint16_t unpoisoned(uint16_t bits) {
  return bits == kPoisonBf16 ? uint16_t(0x7FFF) : bits;
}

/// What a task's polls report when the watchdog stops them: the waiting
/// worker, its task and the event the task would otherwise have waited for
/// (its arrivals and trigger count are read when reporting). A null
/// `watchdog` polls unbounded (tests only).
struct PollWatch {
  const WatchdogState *watchdog;
  const uint32_t *arrivals;            ///< by event, or null
  const tawa::mega::EventDesc *events; ///< by event, or null
  uint32_t worker, task, event;
};

/// The watchdog's check of a polling thread (every 64th poll): false when
/// the wait must stop, reported (this thread's bound passed) or not
/// (another waiter's did and the kernel is aborting).
__device__ inline bool pollMayGoOn(const Watchdog &clock, const PollWatch &w) {
  const bool stop = aborted(*w.watchdog);
  if (!stop && !clock.expired(*w.watchdog))
    return true;
  WaitReport r{};
  r.role = static_cast<uint32_t>(WaiterRole::Worker);
  r.unit = w.worker;
  r.task = w.task;
  r.event = w.event;
  r.arrivals = w.arrivals ? loadRelaxed(w.arrivals + w.event) : 0;
  r.triggerCount = w.events ? w.events[w.event].triggerCount : 0;
  r.waitedKCycles = static_cast<uint32_t>(clock.waited() >> 10);
  reportWait(*w.watchdog, r, stop ? WaitEnd::Stopped : WaitEnd::TimedOut);
  return false;
}

/// Reloads `v` from `p` until it holds no poison. Returns false when the
/// watchdog stopped the wait (this thread's bound passed: reported and the
/// kernel aborted; or another waiter's did); `v` is then what it last read.
template <typename T>
__device__ bool repoll(T &v, const T *p, const PollWatch &w) {
  if (!poisoned(v))
    return true;
  Watchdog clock;
  clock.arm();
  for (uint32_t polls = 1;; ++polls) {
    v = loadRelaxed(p);
    if (!poisoned(v))
      return true;
    if (w.watchdog && polls % 64 == 0 && !pollMayGoOn(clock, w))
      return false;
  }
}

/// repoll for several values of one thread at once: v[j] from at(j) for
/// the j whose bit is set in `valid` (N <= 32). Each round reloads every
/// value that still holds the poison before checking any, so the thread
/// waits about one round trip after its last value is written. Polled one
/// after the other, each value still poisoned at the first read cost a
/// round trip of its own after the previous one landed (run 256: the O and
/// down projections, two and three 16-byte chunks a thread, saw their
/// inputs 1.0-1.5 µs after their producers ended, QKV and gate/up, one
/// chunk, 0.35 µs; run 257: 0.76 and 0.74 µs with this). Reloading only the
/// lowest pending value until it landed, then all, was slower (run 258).
/// Returns false as repoll does.
template <int N, typename T, typename At>
__device__ __forceinline__ bool repollAll(T (&v)[N], At at, uint32_t valid,
                                          const PollWatch &w) {
  static_assert(N <= 32, "a bit of `valid` per value");
  uint32_t pending = 0;
#pragma unroll
  for (int j = 0; j < N; ++j)
    if ((valid >> j & 1) && poisoned(v[j]))
      pending |= 1u << j;
  if (pending == 0)
    return true;
  Watchdog clock;
  clock.arm();
  for (uint32_t polls = 1;; ++polls) {
#pragma unroll
    for (int j = 0; j < N; ++j)
      if (pending >> j & 1)
        v[j] = loadRelaxed(at(j));
    uint32_t still = 0;
#pragma unroll
    for (int j = 0; j < N; ++j)
      if ((pending >> j & 1) && poisoned(v[j]))
        still |= 1u << j;
    pending = still;
    if (pending == 0)
      return true;
    if (w.watchdog && polls % 64 == 0 && !pollMayGoOn(clock, w))
      return false;
  }
}

/// One polled bf16 (a residual the epilogue adds): its value once written,
/// whatever it holds when the watchdog stopped the wait.
__device__ __forceinline__ __nv_bfloat16 pollBf16(const __nv_bfloat16 *p,
                                                  const PollWatch &w) {
  const uint16_t *bits = reinterpret_cast<const uint16_t *>(p);
  uint16_t v = loadRelaxed(bits);
  repoll(v, bits, w);
  return __ushort_as_bfloat16(v);
}

/// The whole CTA (`threads` threads): `rows` rows of `len` bf16 (len a
/// multiple of 8; rows 16-byte aligned) from global `src` (row pitch
/// `srcPitch` elements) into shared `dst` (pitch `dstPitch`), 16 bytes at a
/// time once they hold no poison. kBatch loads a thread are in flight before
/// it checks any, and its reloads likewise (repollAll). Ends with a CTA
/// barrier; returns false (every thread) when the watchdog stopped a wait.
template <int kBatch = 8>
__device__ bool pollRowsToShared(__nv_bfloat16 *dst, int dstPitch,
                                 const __nv_bfloat16 *src, size_t srcPitch,
                                 int rows, int len, int threads,
                                 const PollWatch &w) {
  const int per = len / 8, total = rows * per;
  bool ok = true;
  for (int base = threadIdx.x; base < total; base += threads * kBatch) {
    uint4 v[kBatch];
    const uint4 *at[kBatch];
    uint32_t valid = 0;
#pragma unroll
    for (int j = 0; j < kBatch; ++j) {
      const int c = base + j * threads;
      at[j] = reinterpret_cast<const uint4 *>(src + size_t(c / per) * srcPitch +
                                              (c % per) * 8);
      if (c < total) {
        v[j] = loadRelaxed(at[j]);
        valid |= 1u << j;
      }
    }
    if (ok)
      ok = repollAll(
          v, [&](int j) { return at[j]; }, valid, w);
#pragma unroll
    for (int j = 0; j < kBatch; ++j) {
      const int c = base + j * threads;
      if (c < total)
        *reinterpret_cast<uint4 *>(dst + (c / per) * dstPitch + (c % per) * 8) =
            v[j];
    }
  }
  return __syncthreads_and(ok) != 0;
}

} // namespace tawa::device::mega
