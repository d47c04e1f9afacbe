// Host side of the mega-kernel runtime: uploads the packed tables, owns the
// step's mutable state (one allocation, zeroed by one memset before each
// run), launches the persistent kernel cooperatively with one CTA per SM,
// and reads the state back for checks (docs/MEGAKERNEL.md, "Launching").
#pragma once
#include "tawa/Mega/DeviceLayout.h"
#include "tawa/device/mega/runtime.cuh"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace tawa::device::mega {

struct LaunchOptions {
  int schedulerCtas = 4; ///< MPK: 4 SMs, 16 scheduler warps
  uint32_t ringCapacity = 1024;
  bool trace = false;          ///< per-task TaskRecord
  bool countDispatches = true; ///< per-event JIT dispatch counts
  uint32_t reportCapacity = 1024;
  /// Dynamic shared memory per CTA: enough that only one CTA fits on an SM;
  /// the decode tasks use it all (tawa::mega::kTaskSmemBytes).
  uint32_t sharedBytes = 224 * 1024;
  /// Bytes of task scratch (counters the tasks keep among themselves),
  /// zeroed with the rest of the state before every step; scratch().
  size_t scratchBytes = 0;
};

class MegaLauncher {
public:
  ~MegaLauncher() {
    cudaFree(tablesDev_);
    cudaFree(stateDev_);
  }

  /// Uploads `blob` (whose header is `h`) and allocates the state. Fails
  /// with a message when the device cannot hold one CTA per SM or the
  /// tables were made for another worker count.
  bool init(const std::vector<uint8_t> &blob, const LaunchOptions &o,
            std::string &error) {
    std::memcpy(&header_, blob.data(), sizeof header_);
    options_ = o;
    int device = 0, sms = 0;
    if (!ok(cudaGetDevice(&device), error) ||
        !ok(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount,
                                   device),
            error))
      return false;
    grid_ = static_cast<uint32_t>(sms);
    if (header_.numWorkers + o.schedulerCtas != grid_) {
      error = "tables are for " + std::to_string(header_.numWorkers) +
              " workers; this GPU has " + std::to_string(sms) + " SMs and " +
              std::to_string(o.schedulerCtas) + " scheduler CTAs were asked";
      return false;
    }
    if (header_.numJitEvents && o.schedulerCtas < 1) {
      error = "the tables have JIT events but no scheduler CTA was asked";
      return false;
    }
    if (o.ringCapacity == 0 || (o.ringCapacity & (o.ringCapacity - 1))) {
      error = "ring capacity must be a power of two";
      return false;
    }
    if (!ok(cudaMalloc(&tablesDev_, blob.size()), error) ||
        !ok(cudaMemcpy(tablesDev_, blob.data(), blob.size(),
                       cudaMemcpyHostToDevice),
            error))
      return false;
    tables_ = viewTables(tablesDev_, header_);
    layoutState();
    if (!ok(cudaMalloc(&stateDev_, stateBytes_), error))
      return false;
    bindState();
    return true;
  }

  /// Zeroes the step's state (counters, rings, reports, trace).
  bool clear(cudaStream_t stream, std::string &error) {
    return ok(cudaMemsetAsync(stateDev_, 0, stateBytes_, stream), error);
  }

  /// Sets the kernel's shared memory and checks that exactly one CTA fits
  /// on an SM; once per task-function type, before launch().
  template <typename TaskFn> bool prepare(std::string &error) {
    auto kernel = megaKernel<TaskFn>;
    if (!ok(cudaFuncSetAttribute(kernel,
                                 cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 static_cast<int>(options_.sharedBytes)),
            error))
      return false;
    int perSm = 0;
    if (!ok(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                &perSm, kernel, kMegaThreads, options_.sharedBytes),
            error))
      return false;
    if (perSm != 1) {
      error = "expected exactly one CTA per SM, occupancy allows " +
              std::to_string(perSm);
      return false;
    }
    return true;
  }

  /// Launches one step on state cleared before (clear()); asynchronous.
  template <typename TaskFn>
  bool launch(const TaskFn &fn, uint64_t watchdogBoundCycles,
              cudaStream_t stream, std::string &error) {
    auto kernel = megaKernel<TaskFn>;
    state_.watchdog.boundCycles = watchdogBoundCycles;
    TablesView t = tables_;
    RuntimeState s = state_;
    TaskFn f = fn;
    void *args[] = {&t, &s, &f};
    return ok(cudaLaunchCooperativeKernel(
                  reinterpret_cast<const void *>(kernel), dim3(grid_),
                  dim3(kMegaThreads), args, options_.sharedBytes, stream),
              error);
  }

  /// Copies `count` words of a state array back.
  template <typename T>
  std::vector<T> read(const T *devicePtr, size_t count) const {
    std::vector<T> out(count);
    if (count)
      cudaMemcpy(out.data(), devicePtr, count * sizeof(T),
                 cudaMemcpyDeviceToHost);
    return out;
  }

  const TablesHeader &header() const { return header_; }
  const TablesView &tables() const { return tables_; }
  const RuntimeState &state() const { return state_; }
  uint32_t grid() const { return grid_; }
  uint32_t numSchedulers() const { return options_.schedulerCtas * kMegaWarps; }
  size_t stateBytes() const { return stateBytes_; }
  /// The task scratch (LaunchOptions::scratchBytes, 16-byte aligned), null
  /// when none was asked.
  void *scratch() const { return at<void>(at_.scratch); }

private:
  static bool ok(cudaError_t e, std::string &error) {
    if (e == cudaSuccess)
      return true;
    error = cudaGetErrorString(e);
    return false;
  }

  size_t place(size_t bytes) {
    size_t at = (stateBytes_ + 15) / 16 * 16;
    stateBytes_ = at + bytes;
    return at;
  }

  void layoutState() {
    const size_t nE = header_.numEvents, nW = header_.numWorkers;
    const size_t nS = std::max<size_t>(numSchedulers(), 1);
    const size_t cap = options_.ringCapacity;
    stateBytes_ = 0;
    at_.trace =
        options_.trace ? place(header_.numTasks * sizeof(TaskRecord)) : kAbsent;
    at_.reports = place(options_.reportCapacity * sizeof(WaitReport));
    at_.arrivals = place(nE * 4);
    at_.workerTails = place(nW * 4);
    at_.workerSlots = place(nW * cap * 4);
    at_.schedulerTails = place(nS * 4);
    at_.schedulerSlots = place(nS * cap * 4);
    at_.dispatches = options_.countDispatches ? place(nE * 4) : kAbsent;
    at_.workerSms = place(grid_ * 4);
    at_.stepNs = place(2 * 8);
    at_.words = place(4 * 4); // overArrivals, abort, reportCount
    at_.scratch =
        options_.scratchBytes ? place(options_.scratchBytes) : kAbsent;
  }

  template <typename T> T *at(size_t offset) const {
    return offset == kAbsent
               ? nullptr
               : reinterpret_cast<T *>(static_cast<char *>(stateDev_) + offset);
  }

  void bindState() {
    RuntimeState &s = state_;
    s.arrivals = at<uint32_t>(at_.arrivals);
    s.workerTails = at<uint32_t>(at_.workerTails);
    s.workerSlots = at<uint32_t>(at_.workerSlots);
    s.schedulerTails = at<uint32_t>(at_.schedulerTails);
    s.schedulerSlots = at<uint32_t>(at_.schedulerSlots);
    s.ringCapacity = options_.ringCapacity;
    s.dispatches = at<uint32_t>(at_.dispatches);
    s.trace = at<TaskRecord>(at_.trace);
    s.workerSms = at<uint32_t>(at_.workerSms);
    s.stepNs = at<unsigned long long>(at_.stepNs);
    uint32_t *words = at<uint32_t>(at_.words);
    s.overArrivals = words;
    s.watchdog.abort = words + 1;
    s.watchdog.reportCount = words + 2;
    s.watchdog.reports = at<WaitReport>(at_.reports);
    s.watchdog.capacity = options_.reportCapacity;
  }

  static constexpr size_t kAbsent = ~size_t(0);
  struct Offsets {
    size_t trace, reports, arrivals, workerTails, workerSlots, schedulerTails,
        schedulerSlots, dispatches, workerSms, stepNs, words, scratch;
  };

  TablesHeader header_{};
  LaunchOptions options_;
  TablesView tables_{};
  RuntimeState state_{};
  Offsets at_{};
  void *tablesDev_ = nullptr;
  void *stateDev_ = nullptr;
  size_t stateBytes_ = 0;
  uint32_t grid_ = 0;
};

} // namespace tawa::device::mega
