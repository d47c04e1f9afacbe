// The mega-kernel runtime on real tGraphs (docs/MEGAKERNEL.md, "GPU test"):
// plans the Qwen3 decode graphs in-process (TawaMega is plain C++), lowers
// them to device tables, runs the persistent kernel with synthetic tasks and
// checks, per graph: every task ran exactly once (AOT tasks on their worker),
// none started before every producer and every task of its wait event ended,
// no task read a producer's tile before it was written, every event received
// exactly its trigger count (JIT events dispatched once), the end event
// fired, one CTA per SM. Then the watchdog: a graph with an unsatisfiable
// event must end the kernel with a report naming it. Then the runtime's
// overhead: a step of empty tasks.
//
//   test_mega_runtime [--inputs DIR] [--quick] [--trace-csv FILE] [--reps N]
//                     [--only-overhead]
#include "../tests/common.cuh"
#include "synthetic_tasks.cuh"
#include "tawa/Mega/DecodeGraph.h"
#include "tawa/Mega/DeviceTables.h"
#include "tawa/Mega/ModelConfig.h"
#include "tawa/Mega/Passes.h"
#include "tawa/device/mega/launcher.cuh"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#ifndef TAWA_MEGA_INPUTS
#define TAWA_MEGA_INPUTS "test/Mega/Inputs"
#endif

using namespace tawa::test;
using namespace tawa::mega;
using tawa::device::mega::LaunchOptions;
using tawa::device::mega::MegaLauncher;
using tawa::device::mega::TaskRecord;
using tawa::device::mega::WaitReport;

namespace {

struct Planned {
  std::string name;
  TGraph graph;
  double planSeconds = 0;
};

bool plan(const std::string &inputs, const std::string &model, int64_t batch,
          int64_t maxSeq, int sms, Planned &out, std::string &error) {
  auto t0 = std::chrono::steady_clock::now();
  ModelConfig config;
  if (!loadModelConfig(inputs + "/" + model + ".json", config, error))
    return false;
  PlanOptions o;
  o.batch = batch;
  o.maxSeq = maxSeq;
  o.sms = sms;
  out.graph = buildDecodeGraph(config, o);
  for (const PassInfo *pass : planPipeline())
    if (!pass->run(out.graph, error))
      return false;
  out.name =
      model + " b" + std::to_string(batch) + " s" + std::to_string(maxSeq);
  out.planSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
          .count();
  return true;
}

bool lower(const TGraph &g, unsigned workers, bool producers,
           DeviceTables &tables, std::vector<uint8_t> &blob,
           std::string &error) {
  LoweringOptions o;
  o.workers = workers;
  o.producers = producers;
  if (!lowerToDeviceTables(g, o, tables, error))
    return false;
  blob = packTables(tables);
  return true;
}

/// Device buffers of the synthetic tasks.
struct Synthetic {
  uint32_t *scratch = nullptr, *early = nullptr, *unseen = nullptr;
  uint32_t numTasks = 0;
  explicit Synthetic(uint32_t n) : numTasks(n) {
    TAWA_CHECK_CUDA(cudaMalloc(&scratch, n * 4));
    TAWA_CHECK_CUDA(cudaMalloc(&early, n * 4));
    TAWA_CHECK_CUDA(cudaMalloc(&unseen, n * 4));
    TAWA_CHECK_CUDA(cudaMemset(scratch, 0, n * 4));
  }
  ~Synthetic() {
    cudaFree(scratch);
    cudaFree(early);
    cudaFree(unseen);
  }
  SyntheticTasks tasks(uint32_t epoch, uint32_t maxWorkNs, bool check) {
    TAWA_CHECK_CUDA(cudaMemset(early, 0, numTasks * 4));
    TAWA_CHECK_CUDA(cudaMemset(unseen, 0, numTasks * 4));
    return {scratch, early, unseen, epoch, maxWorkNs, check};
  }
};

uint64_t cyclesFor(double ms) {
  int khz = 0, device = 0;
  TAWA_CHECK_CUDA(cudaGetDevice(&device));
  TAWA_CHECK_CUDA(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, device));
  return static_cast<uint64_t>(ms * khz);
}

/// Runs one step and waits for it; false (with `error`) if it did not run.
bool runStep(MegaLauncher &l, const SyntheticTasks &fn, uint64_t bound,
             std::string &error) {
  if (!l.prepare<SyntheticTasks>(error) || !l.clear(nullptr, error) ||
      !l.launch(fn, bound, nullptr, error))
    return false;
  cudaError_t e = cudaDeviceSynchronize();
  if (e != cudaSuccess) {
    error = cudaGetErrorString(e);
    return false;
  }
  return true;
}

std::vector<uint32_t> readWords(const uint32_t *p, size_t n) {
  std::vector<uint32_t> v(n);
  if (n)
    TAWA_CHECK_CUDA(cudaMemcpy(v.data(), p, n * 4, cudaMemcpyDeviceToHost));
  return v;
}

std::vector<WaitReport> readReports(const MegaLauncher &l) {
  uint32_t n = readWords(l.state().watchdog.reportCount, 1)[0];
  n = std::min(n, l.state().watchdog.capacity);
  std::vector<WaitReport> r(n);
  if (n)
    TAWA_CHECK_CUDA(cudaMemcpy(r.data(), l.state().watchdog.reports,
                               n * sizeof(WaitReport), cudaMemcpyDeviceToHost));
  return r;
}

/// Every check of a clean run; returns the number of problems (the first of
/// each kind is printed).
int checkRun(const std::string &name, const DeviceTables &t,
             const MegaLauncher &l, const Synthetic &syn, Report &report) {
  const TablesHeader &h = t.header;
  const auto &s = l.state();
  std::vector<TaskRecord> trace(h.numTasks);
  TAWA_CHECK_CUDA(cudaMemcpy(trace.data(), s.trace,
                             h.numTasks * sizeof(TaskRecord),
                             cudaMemcpyDeviceToHost));
  std::vector<uint32_t> arrivals = readWords(s.arrivals, h.numEvents);
  std::vector<uint32_t> dispatches = readWords(s.dispatches, h.numEvents);
  std::vector<uint32_t> early = readWords(syn.early, h.numTasks);
  std::vector<uint32_t> unseen = readWords(syn.unseen, h.numTasks);
  std::vector<uint32_t> sms = readWords(s.workerSms, l.grid());
  uint32_t over = readWords(s.overArrivals, 1)[0];
  uint32_t abort = readWords(s.watchdog.abort, 1)[0];
  std::vector<WaitReport> reports = readReports(l);

  int problems = 0;
  auto problem = [&](const char *what, const std::string &detail) {
    if (problems++ < 8)
      report.fail(name, "%s: %s", what, detail.c_str());
  };
  if (abort || !reports.empty())
    problem("watchdog fired",
            reports.empty() ? "no report" : describeWaitReport(reports[0]));
  std::vector<int64_t> aotWorker(h.numTasks, -1);
  for (uint32_t w = 0; w < h.numWorkers; ++w)
    for (uint32_t i = t.aotOffsets[w]; i < t.aotOffsets[w + 1]; ++i)
      aotWorker[t.aotTasks[i]] = w;
  std::vector<std::vector<uint32_t>> inTasks(h.numEvents);
  for (uint32_t i = 0; i < h.numTasks; ++i)
    inTasks[t.tasks[i].triggerEvent].push_back(i);
  uint64_t orderChecks = 0;
  for (uint32_t i = 0; i < h.numTasks; ++i) {
    const TaskRecord &r = trace[i];
    if (r.runs != 1)
      problem("task ran other than once",
              "task " + std::to_string(i) + " ran " + std::to_string(r.runs));
    if (aotWorker[i] >= 0 && r.worker != aotWorker[i])
      problem("AOT task on the wrong worker", "task " + std::to_string(i));
    if (early[i] || unseen[i])
      problem(early[i] ? "read a tile before its producer wrote it"
                       : "a plain load missed a released write",
              "task " + std::to_string(i) + ": " +
                  std::to_string(early[i] + unseen[i]) + " producers");
    auto before = [&](uint32_t p) {
      ++orderChecks;
      if (trace[p].endNs > r.startNs)
        problem("started before a predecessor ended",
                "task " + std::to_string(i) + " at " +
                    std::to_string(r.startNs) + ", task " + std::to_string(p) +
                    " ended " + std::to_string(trace[p].endNs));
    };
    for (uint32_t p : inTasks[t.tasks[i].waitEvent])
      before(p);
    for (uint32_t k = t.producerOffsets[i]; k < t.producerOffsets[i + 1]; ++k)
      before(t.producers[k]);
  }
  for (uint32_t e = 0; e < h.numEvents; ++e) {
    if (arrivals[e] != t.events[e].triggerCount)
      problem("event arrivals differ from its trigger count",
              "event " + std::to_string(e) + ": " +
                  std::to_string(arrivals[e]) + " of " +
                  std::to_string(t.events[e].triggerCount));
    uint32_t want = (t.events[e].flags & kEventDispatchesJit) ? 1 : 0;
    if (dispatches[e] != want)
      problem("JIT event dispatched other than once",
              "event " + std::to_string(e) + ": " +
                  std::to_string(dispatches[e]));
  }
  if (over)
    problem("arrivals past a trigger count", std::to_string(over));
  if (arrivals[h.endEvent] != t.events[h.endEvent].triggerCount)
    problem("the end event did not fire", "");
  std::vector<uint32_t> sorted = sms;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
    problem("two CTAs on one SM", "");
  if (!problems)
    std::printf("  %s: %u tasks ran once, %llu predecessor orders, %u events "
                "(%u JIT) fired once\n",
                name.c_str(), h.numTasks, (unsigned long long)orderChecks,
                h.numEvents, h.numJitEvents);
  return problems;
}

void writeTraceCsv(const std::string &path, const DeviceTables &t,
                   const MegaLauncher &l) {
  std::vector<TaskRecord> trace(t.header.numTasks);
  TAWA_CHECK_CUDA(cudaMemcpy(trace.data(), l.state().trace,
                             trace.size() * sizeof(TaskRecord),
                             cudaMemcpyDeviceToHost));
  uint64_t t0 = ~uint64_t(0);
  for (const TaskRecord &r : trace)
    t0 = std::min(t0, r.startNs);
  std::ofstream out(path);
  out << "task,kind,op,worker,start_ns,end_ns\n";
  for (size_t i = 0; i < trace.size(); ++i)
    out << i << "," << int(t.tasks[i].kind) << "," << t.tasks[i].op << ","
        << trace[i].worker << "," << trace[i].startNs - t0 << ","
        << trace[i].endNs - t0 << "\n";
}

struct StepTimes {
  double inKernelUs = 0; ///< first CTA in to last CTA out (globaltimer)
  double eventUs = 0;    ///< CUDA events around the launch
};

/// Median step times of `reps` runs of empty tasks, state cleared outside
/// the timed region.
StepTimes timeEmptySteps(MegaLauncher &l, Synthetic &syn, int reps,
                         Report &report, const std::string &name) {
  cudaEvent_t a, b;
  TAWA_CHECK_CUDA(cudaEventCreate(&a));
  TAWA_CHECK_CUDA(cudaEventCreate(&b));
  std::vector<float> ms;
  std::vector<double> inKernel;
  std::string error;
  SyntheticTasks empty = syn.tasks(0, 0, false);
  if (!l.prepare<SyntheticTasks>(error)) {
    report.fail(name, "%s", error.c_str());
    return {};
  }
  for (int i = 0; i < reps + 2; ++i) {
    if (!l.clear(nullptr, error))
      break;
    TAWA_CHECK_CUDA(cudaEventRecord(a));
    if (!l.launch(empty, cyclesFor(1000), nullptr, error))
      break;
    TAWA_CHECK_CUDA(cudaEventRecord(b));
    TAWA_CHECK_CUDA(cudaEventSynchronize(b));
    float m = 0;
    TAWA_CHECK_CUDA(cudaEventElapsedTime(&m, a, b));
    unsigned long long ns[2];
    TAWA_CHECK_CUDA(
        cudaMemcpy(ns, l.state().stepNs, sizeof ns, cudaMemcpyDeviceToHost));
    if (i >= 2) {
      ms.push_back(m);
      inKernel.push_back((ns[1] - ns[0]) / 1000.0);
    }
  }
  if (!error.empty() || readWords(l.state().watchdog.abort, 1)[0] ||
      ms.empty()) {
    report.fail(name, "timing run failed: %s", error.c_str());
    return {};
  }
  std::sort(ms.begin(), ms.end());
  std::sort(inKernel.begin(), inKernel.end());
  return {inKernel[inKernel.size() / 2], 1000.0 * ms[ms.size() / 2]};
}

/// An event in the middle of the graph whose range is AOT-only (or, with
/// `jit`, one that dispatches JIT tasks).
uint32_t pickEvent(const DeviceTables &t, bool jit) {
  for (uint32_t e = t.header.numEvents / 2; e < t.header.numEvents; ++e) {
    const EventDesc &d = t.events[e];
    if (d.firstTask == kNoId || (d.flags & (kEventIsStart | kEventIsEnd)))
      continue;
    if (bool(d.flags & kEventDispatchesJit) == jit)
      return e;
  }
  return kNoId;
}

void watchdogCase(const std::string &name, const DeviceTables &tables,
                  std::vector<uint8_t> blob, bool jit, int schedulerCtas,
                  Report &report) {
  uint32_t e = pickEvent(tables, jit);
  if (e == kNoId) {
    report.fail(name, "no suitable event");
    return;
  }
  const EventDesc orig = tables.events[e];
  EventDesc broken = orig;
  broken.triggerCount += 1; // one arrival too many: never fires
  std::memcpy(blob.data() + tables.header.eventsOffset + e * sizeof(EventDesc),
              &broken, sizeof broken);
  MegaLauncher l;
  LaunchOptions o;
  o.schedulerCtas = schedulerCtas;
  o.trace = true;
  std::string error;
  if (!l.init(blob, o, error)) {
    report.fail(name, "%s", error.c_str());
    return;
  }
  Synthetic syn(tables.header.numTasks);
  const double boundMs = 20;
  auto t0 = std::chrono::steady_clock::now();
  if (!runStep(l, syn.tasks(7, 0, true), cyclesFor(boundMs), error)) {
    report.fail(name, "kernel failed: %s", error.c_str());
    return;
  }
  double wallMs = std::chrono::duration<double, std::milli>(
                      std::chrono::steady_clock::now() - t0)
                      .count();
  std::vector<WaitReport> reports = readReports(l);
  uint32_t abort = readWords(l.state().watchdog.abort, 1)[0];
  std::vector<TaskRecord> trace(tables.header.numTasks);
  TAWA_CHECK_CUDA(cudaMemcpy(trace.data(), l.state().trace,
                             trace.size() * sizeof(TaskRecord),
                             cudaMemcpyDeviceToHost));
  uint32_t rangeRan = 0;
  for (uint32_t i = orig.firstTask; i <= orig.lastTask; ++i)
    rangeRan += trace[i].runs;
  int timedOut = 0;
  const WaitReport *named = nullptr;
  for (const WaitReport &r : reports) {
    timedOut += r.end == 1;
    if (r.event == e && r.arrivals == orig.triggerCount &&
        r.triggerCount == orig.triggerCount + 1 &&
        (r.task == kNoId ||
         (r.task >= orig.firstTask && r.task <= orig.lastTask)))
      named = named ? named : &r;
  }
  std::printf("  %s: event %u (count %u -> %u, tasks %u..%u): kernel ended "
              "after %.1f ms (bound %.0f ms), %zu reports, %d timed out\n",
              name.c_str(), e, orig.triggerCount, broken.triggerCount,
              orig.firstTask, orig.lastTask, wallMs, boundMs, reports.size(),
              timedOut);
  for (size_t i = 0; i < reports.size() && i < 3; ++i)
    std::printf("    report: %s\n", describeWaitReport(reports[i]).c_str());
  if (!abort || timedOut == 0)
    report.fail(name, "no waiter timed out (abort %u)", abort);
  else if (rangeRan)
    report.fail(name, "%u tasks of the stuck event ran", rangeRan);
  else if (!jit && !named)
    report.fail(name, "no report names event %u with %u of %u arrivals", e,
                orig.triggerCount, orig.triggerCount + 1);
  else if (jit && reports.empty())
    report.fail(name, "no report");
  else
    report.pass(name);
  if (named)
    std::printf("    names it: %s\n", describeWaitReport(*named).c_str());
}

} // namespace

int main(int argc, char **argv) {
  std::string inputs = TAWA_MEGA_INPUTS, traceCsv;
  bool quick = false, onlyOverhead = false;
  int reps = 20;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--inputs" && i + 1 < argc)
      inputs = argv[++i];
    else if (a == "--trace-csv" && i + 1 < argc)
      traceCsv = argv[++i];
    else if (a == "--reps" && i + 1 < argc)
      reps = std::atoi(argv[++i]);
    else if (a == "--quick")
      quick = true;
    else if (a == "--only-overhead")
      onlyOverhead = true;
    else {
      std::fprintf(stderr,
                   "usage: %s [--inputs DIR] [--quick] "
                   "[--trace-csv FILE] [--reps N] [--only-overhead]\n",
                   argv[0]);
      return 2;
    }
  }
  Report report;
  uint64_t seed = testSeed("test_mega_runtime");
  int device = 0, sms = 0;
  TAWA_CHECK_CUDA(cudaGetDevice(&device));
  TAWA_CHECK_CUDA(
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  const int schedulerCtas = 4;
  const unsigned workers = sms - schedulerCtas;
  std::printf("%d SMs: %u workers, %d scheduler CTAs (%d warps)\n", sms,
              workers, schedulerCtas, schedulerCtas * 4);

  struct Case {
    const char *model;
    int64_t batch, maxSeq;
  };
  std::vector<Case> cases = {{"qwen3-tiny", 3, 600}};
  if (onlyOverhead)
    cases.clear();
  else if (!quick)
    for (const char *m : {"qwen3-0.6b", "qwen3-8b"})
      for (int64_t b : {1, 16})
        for (int64_t s : {512, 4096})
          cases.push_back({m, b, s});

  // 1. Correctness on every graph: without task work, then with 0-3 µs of
  // busy time per task so that waits and JIT dispatch interleave differently.
  for (const Case &c : cases) {
    Planned p;
    std::string error;
    DeviceTables tables;
    std::vector<uint8_t> blob;
    if (!plan(inputs, c.model, c.batch, c.maxSeq, sms, p, error) ||
        !lower(p.graph, workers, true, tables, blob, error)) {
      report.fail(c.model, "%s", error.c_str());
      continue;
    }
    std::printf("%s: %u tasks (%u JIT), %u events, %u producer edges, "
                "critical path %lld tasks, planned in %.2f s\n",
                p.name.c_str(), tables.header.numTasks,
                tables.header.numJitTasks, tables.header.numEvents,
                tables.header.numProducerEdges,
                (long long)criticalPathTasks(tables), p.planSeconds);
    MegaLauncher l;
    LaunchOptions o;
    o.schedulerCtas = schedulerCtas;
    o.trace = true;
    if (!l.init(blob, o, error)) {
      report.fail(p.name, "%s", error.c_str());
      continue;
    }
    Synthetic syn(tables.header.numTasks);
    for (uint32_t work : {0u, 3000u}) {
      std::string name = p.name + (work ? " work<3us" : " no-work");
      uint32_t epoch = static_cast<uint32_t>(seed) + work + 1;
      if (!runStep(l, syn.tasks(epoch, work, true), cyclesFor(2000), error)) {
        report.fail(name, "kernel failed: %s", error.c_str());
        return report.exitCode();
      }
      if (checkRun(name, tables, l, syn, report) == 0)
        report.pass(name);
      if (!traceCsv.empty() && work && c.model == std::string("qwen3-8b") &&
          c.batch == 1 && c.maxSeq == 4096)
        writeTraceCsv(traceCsv, tables, l);
    }
  }

  // 2. Watchdog: an unsatisfiable AOT event and an unsatisfiable JIT event
  // in a plan with JIT tasks (attention is JIT once it has more tasks than
  // the workers: qwen3-0.6b at batch 12 has 12 x 8 KV heads x 2 chunks,
  // qwen3-tiny at batch 40 40 x 2 x 2), whose arrivals are atomics; and an
  // unsatisfiable AOT event at batch 1, where every task is AOT and the
  // arrivals are release reductions (runtime.cuh, arrive).
  if (!onlyOverhead) {
    const char *model = quick ? "qwen3-tiny" : "qwen3-0.6b";
    for (int batch : {quick ? 40 : 12, 1}) {
      Planned p;
      std::string error;
      DeviceTables tables;
      std::vector<uint8_t> blob;
      if (plan(inputs, model, batch, 512, sms, p, error) &&
          lower(p.graph, workers, true, tables, blob, error)) {
        watchdogCase("watchdog aot-event " + p.name, tables, blob, false,
                     schedulerCtas, report);
        if (batch > 1)
          watchdogCase("watchdog jit-event " + p.name, tables, blob, true,
                       schedulerCtas, report);
      } else {
        report.fail("watchdog", "%s", error.c_str());
      }
    }
  }

  // 3. Overhead: steps of empty tasks (no check, no trace).
  std::printf("overhead (empty tasks, median of %d steps, kernel launch "
              "included):\n",
              reps);
  std::vector<Case> timed = {
      {"qwen3-0.6b", 1, 4096}, {"qwen3-8b", 1, 4096}, {"qwen3-8b", 16, 4096}};
  if (quick)
    timed = {{"qwen3-tiny", 3, 600}};
  for (const Case &c : timed)
    for (int scheds : {4, 1}) {
      Planned p;
      std::string error;
      DeviceTables tables;
      std::vector<uint8_t> blob;
      unsigned w = sms - scheds;
      if (!plan(inputs, c.model, c.batch, c.maxSeq, sms, p, error) ||
          !lower(p.graph, w, false, tables, blob, error)) {
        report.fail(c.model, "%s", error.c_str());
        continue;
      }
      MegaLauncher l;
      LaunchOptions o;
      o.schedulerCtas = scheds;
      o.countDispatches = false;
      if (!l.init(blob, o, error)) {
        report.fail(p.name, "%s", error.c_str());
        continue;
      }
      Synthetic syn(tables.header.numTasks);
      std::string name = "overhead " + p.name + " " + std::to_string(scheds) +
                         " scheduler CTAs";
      StepTimes times = timeEmptySteps(l, syn, reps, report, name);
      double us = times.inKernelUs;
      if (us <= 0)
        continue;
      const TablesHeader &h = tables.header;
      double perWorker = double(h.numTasks) / w;
      int64_t path = criticalPathTasks(tables);
      std::printf("  %-22s %u sched CTAs: step %8.1f us in kernel (%8.1f us "
                  "with launch) | %5u tasks (%5u JIT) | %.1f ns/task overall "
                  "| %.2f us/task per worker (%.0f tasks each) | %.2f us per "
                  "critical-path hop (%lld)\n",
                  p.name.c_str(), scheds, us, times.eventUs, h.numTasks,
                  h.numJitTasks, 1000.0 * us / h.numTasks, us / perWorker,
                  perWorker, us / path, (long long)path);
      report.pass(name);
    }
  return report.exitCode();
}
