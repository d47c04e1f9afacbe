// The runtime's watchdog (docs/MEGAKERNEL.md, "Watchdog"): every wait in the
// persistent kernel is bounded in SM clock cycles. A waiter past the bound
// writes what it waited for to a host-visible report and raises the abort
// flag; every other waiter sees the flag, reports its own wait and leaves, so
// a broken graph ends the kernel with a picture of where it stood instead of
// hanging the GPU.
#pragma once
#include "tawa/device/mega/sync.cuh"

#include <cstdint>
#include <cstdio>
#include <string>

namespace tawa::device::mega {

enum class WaiterRole : uint32_t { Worker = 1, Scheduler = 2 };
enum class WaitEnd : uint32_t { TimedOut = 1, Stopped = 2 };

/// What one waiter reported. Host-visible, 32 bytes.
struct WaitReport {
  uint32_t role;         ///< WaiterRole
  uint32_t unit;         ///< worker index or scheduler warp index
  uint32_t task;         ///< task it would run next, kNoId if none
  uint32_t event;        ///< event it waited on, kNoId if it waited on a ring
  uint32_t arrivals;     ///< the event's arrivals when it gave up
  uint32_t triggerCount; ///< the event's trigger count
  uint32_t end;          ///< WaitEnd: its own timeout, or stopped by another's
  uint32_t waitedKCycles;
};
static_assert(sizeof(WaitReport) == 32, "WaitReport is 32 bytes");

/// One report as a line, for the host: "worker 16 timed out: task 3552
/// event 1402 arrivals 2 of 3 after 19531 kcycles".
inline std::string describeWaitReport(const WaitReport &r) {
  char buf[200];
  std::snprintf(
      buf, sizeof buf,
      "%s %u %s: task %d event %d arrivals %u of %u after %u "
      "kcycles",
      r.role == uint32_t(WaiterRole::Worker) ? "worker" : "scheduler", r.unit,
      r.end == uint32_t(WaitEnd::TimedOut) ? "timed out" : "stopped",
      int(r.task), int(r.event), r.arrivals, r.triggerCount, r.waitedKCycles);
  return buf;
}

/// Kernel-wide watchdog state (global memory, zeroed before a run).
struct WatchdogState {
  uint32_t *abort;       ///< non-zero once any wait timed out
  WaitReport *reports;   ///< capacity entries
  uint32_t *reportCount; ///< reports written (may exceed capacity)
  uint32_t capacity;
  uint64_t boundCycles; ///< longest allowed wait, in SM clock cycles
};

/// One wait's clock.
struct Watchdog {
  uint64_t begin;
  __device__ void arm() { begin = clock64(); }
  __device__ uint64_t waited() const { return clock64() - begin; }
  __device__ bool expired(const WatchdogState &s) const {
    return waited() > s.boundCycles;
  }
};

__device__ __forceinline__ bool aborted(const WatchdogState &s) {
  return loadRelaxed(s.abort) != 0;
}

/// Records one report; the abort flag is raised on a timeout.
__device__ inline void reportWait(const WatchdogState &s, WaitReport r,
                                  WaitEnd end) {
  r.end = static_cast<uint32_t>(end);
  uint32_t slot = fetchAddRelaxed(s.reportCount, 1);
  if (slot < s.capacity)
    s.reports[slot] = r;
  if (end == WaitEnd::TimedOut) {
    __threadfence();
    storeRelease(s.abort, 1);
  }
}

/// Polls until the wait is over (returns true), or until this waiter times
/// out or another did (returns false after reporting `what`). `poll` is
/// called first, so a wait that is already over costs one poll.
template <typename Poll, typename Describe>
__device__ bool boundedWait(const WatchdogState &s, Poll &&poll,
                            Describe &&what) {
  if (poll())
    return true;
  Watchdog clock;
  clock.arm();
  for (uint32_t polls = 1;; ++polls) {
    if (poll())
      return true;
    // The abort flag is a global load after the poll's acquire: checked
    // every 64 polls (and the clock with it), it stays off the poll's path.
    if (polls % 64 != 0)
      continue;
    bool stop = aborted(s);
    if (stop || clock.expired(s)) {
      WaitReport r = what();
      r.waitedKCycles = static_cast<uint32_t>(clock.waited() >> 10);
      reportWait(s, r, stop ? WaitEnd::Stopped : WaitEnd::TimedOut);
      return false;
    }
  }
}

} // namespace tawa::device::mega
