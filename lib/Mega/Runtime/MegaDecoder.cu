//===- MegaDecoder.cu - the decode mega-kernel behind tawa_mega.h ---------===//
//
// Plans a decode step in process (the planner is plain C++), binds its
// buffers, lowers it to device tables and runs megaKernel<DecodeTasks>. The
// graph's task functions read their parameters from a device copy of the
// binding's OpParams and buffer addresses from a device pointer table that
// is uploaded when a binding changed.
//
//===----------------------------------------------------------------------===//

#include "tawa/Mega/DecodeBinding.h"
#include "tawa/Mega/DecodeGraph.h"
#include "tawa/Mega/DeviceTables.h"
#include "tawa/Mega/ModelConfig.h"
#include "tawa/Mega/Passes.h"
#include "tawa/Mega/Verifier.h"
#include "tawa/device/mega/decode_tasks.cuh"
#include "tawa/device/mega/launcher.cuh"
#include "tawa/runtime/tawa_mega.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <cuda_bf16.h>
#include <memory>
#include <string>
#include <vector>

using namespace tawa::mega;
using namespace tawa::device::mega;

namespace {

thread_local std::string lastError;

int failWith(const std::string &message) {
  lastError = message;
  return 1;
}

bool cudaOk(cudaError_t e, const char *what) {
  if (e == cudaSuccess)
    return true;
  lastError = std::string(what) + ": " + cudaGetErrorString(e);
  return false;
}

/// The staged layout of an [n, k] bf16 weight (TaskParams.h), columns
/// times `scale` (or as they are): one thread per element of the packed
/// copy, zeros in the columns past k.
__global__ void packStagedWeight(const __nv_bfloat16 *src,
                                 const __nv_bfloat16 *scale, __nv_bfloat16 *dst,
                                 int64_t n, int32_t k) {
  const int64_t cols = stagedWeightCols(k), rows = stagedWeightRows(n);
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
       e < rows * cols; e += int64_t(gridDim.x) * blockDim.x) {
    const int64_t row = e / cols;
    const int32_t col = int32_t(e % cols);
    float v = 0.f;
    if (row < n && col < k)
      v = __bfloat162float(src[row * k + col]) *
          (scale ? __bfloat162float(scale[col]) : 1.f);
    dst[stagedWeightOffset(row, col, k)] = __float2bfloat16_rn(v);
  }
}

/// The RoPE table (BufferKind::Constant `rope`, DecodeAttentionParams::rope):
/// row s of [maxSeq, D] holds bf16(cos(s · f_i)) for i < D/2, then
/// bf16(sin(s · f_i)), f_i = 1 / θ^(2i/D) in float, as the reference
/// computes them (float inverse frequencies, float products, then bf16).
__global__ void fillRopeTable(__nv_bfloat16 *table, int32_t maxSeq, int32_t d,
                              float theta) {
  const int half = d / 2;
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
       e < int64_t(maxSeq) * half; e += int64_t(gridDim.x) * blockDim.x) {
    const int s = int(e / half), i = int(e % half);
    const float invFreq = 1.0f / powf(theta, float(2 * i) / float(d));
    float sn, cs;
    sincosf(float(s) * invFreq, &sn, &cs);
    table[int64_t(s) * d + i] = __float2bfloat16_rn(cs);
    table[int64_t(s) * d + half + i] = __float2bfloat16_rn(sn);
  }
}

/// Places the binding's buffers of `kind` one after another, each 16-byte
/// aligned: their offsets (by buffer index; 0 for the others) and the bytes
/// in all.
size_t layOut(const DecodeBinding &binding, BufferKind kind,
              std::vector<size_t> &offsets) {
  offsets.assign(binding.buffers.size(), 0);
  size_t bytes = 0;
  for (size_t i = 0; i < binding.buffers.size(); ++i) {
    const BufferDesc &b = binding.buffers[i];
    if (b.kind != kind)
      continue;
    offsets[i] = bytes;
    const size_t elementBytes = b.type == BufferType::BF16 ? 2 : 4;
    bytes += (size_t(b.elements()) * elementBytes + 15) / 16 * 16;
  }
  return bytes;
}

} // namespace

struct tawa_mega_decoder {
  ModelConfig config;
  PlanOptions plan;
  TGraph graph;
  DecodeBinding binding;
  DeviceTables tables;
  MegaLauncher launcher;
  std::vector<void *> pointers;
  bool pointersDirty = true;
  OpParams *paramsDev = nullptr;
  void **pointersDev = nullptr;
  /// One record per AOT queue position, rebuilt whenever the addresses
  /// change (buildStagedTasks).
  StagedTask *stagedDev = nullptr;
  /// The BufferKind::Constant buffers, owned here.
  std::vector<void *> constantsDev;
  /// The BufferKind::Polled buffers, in one allocation owned here, which
  /// each step poisons first when the tasks poll (pollInputs).
  void *polledDev = nullptr;
  size_t polledBytes = 0;
  bool pollInputs = false;
  std::string summary;
  int clockKHz = 0;
  /// The step (state memset, cooperative launch) as a CUDA graph, captured
  /// on first use for a watchdog bound (`graphCycles`): launching the graph
  /// costs the host a few microseconds where the memset and the cooperative
  /// launch cost tens. `graphFailed`: capture was refused; launch directly.
  cudaGraphExec_t stepGraph = nullptr;
  uint64_t graphCycles = 0;
  bool graphFailed = false;
  cudaStream_t captureStream = nullptr;

  ~tawa_mega_decoder() {
    if (stepGraph)
      cudaGraphExecDestroy(stepGraph);
    if (captureStream)
      cudaStreamDestroy(captureStream);
    cudaFree(paramsDev);
    cudaFree(pointersDev);
    cudaFree(stagedDev);
    for (void *p : constantsDev)
      cudaFree(p);
    cudaFree(polledDev);
  }
};

namespace {

/// One step on `stream`: the state's memset, the poison of the polled
/// activations when the tasks poll, then the kernel.
bool launchStep(tawa_mega_decoder *d, cudaStream_t stream, uint64_t cycles,
                std::string &error) {
  WatchdogState watchdog = d->launcher.state().watchdog;
  watchdog.boundCycles = cycles;
  DecodeTasks fn{d->paramsDev, d->pointersDev,
                 d->stagedDev, d->pollInputs ? 1u : 0u,
                 watchdog,     d->launcher.state().arrivals};
  if (!d->launcher.clear(stream, error))
    return false;
  if (d->pollInputs && d->polledBytes) {
    const cudaError_t e =
        cudaMemsetAsync(d->polledDev, kPoisonByte, d->polledBytes, stream);
    if (e != cudaSuccess) {
      error =
          std::string("poisoning the activations: ") + cudaGetErrorString(e);
      return false;
    }
  }
  return d->launcher.launch(fn, cycles, stream, error);
}

/// Captures the step into d->stepGraph (on a stream of its own, so that the
/// caller's stream is untouched); false when the driver refuses.
bool captureStep(tawa_mega_decoder *d, uint64_t cycles) {
  if (d->stepGraph) {
    cudaGraphExecDestroy(d->stepGraph);
    d->stepGraph = nullptr;
  }
  if (!d->captureStream &&
      cudaStreamCreateWithFlags(&d->captureStream, cudaStreamNonBlocking) !=
          cudaSuccess)
    return false;
  if (cudaStreamBeginCapture(d->captureStream,
                             cudaStreamCaptureModeThreadLocal) != cudaSuccess)
    return false;
  std::string error;
  const bool recorded = launchStep(d, d->captureStream, cycles, error);
  cudaGraph_t graph = nullptr;
  const cudaError_t ended = cudaStreamEndCapture(d->captureStream, &graph);
  bool ok = recorded && ended == cudaSuccess && graph &&
            cudaGraphInstantiate(&d->stepGraph, graph, 0) == cudaSuccess;
  if (graph)
    cudaGraphDestroy(graph);
  if (!ok) {
    d->stepGraph = nullptr;
    cudaGetLastError(); // a refused capture leaves no sticky error
  }
  d->graphCycles = cycles;
  return ok;
}

} // namespace

extern "C" {

const char *tawa_mega_last_error(void) { return lastError.c_str(); }

int tawa_mega_create(const char *configJson, int batch, int maxSeq,
                     int pageSize, int kvPages, int schedulerCtas, int flags,
                     tawa_mega_decoder **out) {
  if (!configJson || !out)
    return failWith("tawa_mega_create: null argument");
  *out = nullptr;
  auto d = std::make_unique<tawa_mega_decoder>();
  std::string error;
  if (!parseModelConfig(configJson, "config", d->config, error))
    return failWith(error);
  // Before any CUDA call: a library built for one model's attention
  // (TAWA_MEGA_ATTN_GROUPS, TAWA_MEGA_ATTN_ANY_HEAD_DIM) has no code for
  // another's. (Group sizes no build has are refused by the binder.)
  const int64_t group =
      d->config.numKvHeads > 0 ? d->config.numHeads / d->config.numKvHeads : 0;
  if (attentionGroupBit(int(group)) >= 0 &&
      !attentionCompiled(int(group), int(d->config.headDim)))
    return failWith(
        "this build of the mega-kernel library has no attention for " +
        std::to_string(group) + " q heads per KV head and head dimension " +
        std::to_string(d->config.headDim) + " (compiled: groups mask " +
        std::to_string(TAWA_MEGA_ATTN_GROUPS) + ", any head dimension " +
        std::to_string(TAWA_MEGA_ATTN_ANY_HEAD_DIM) +
        "); build it without -DTAWA_MEGA_ATTN_GROUPS / "
        "-DTAWA_MEGA_ATTN_ANY_HEAD_DIM, or for this model");
  int device = 0, sms = 0;
  if (!cudaOk(cudaGetDevice(&device), "cudaGetDevice") ||
      !cudaOk(
          cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device),
          "SM count") ||
      !cudaOk(
          cudaDeviceGetAttribute(&d->clockKHz, cudaDevAttrClockRate, device),
          "clock rate"))
    return 1;
  if (schedulerCtas < 1 || schedulerCtas >= sms)
    return failWith("scheduler CTAs must be in [1, " + std::to_string(sms - 1) +
                    "], got " + std::to_string(schedulerCtas));
  d->plan.batch = batch;
  d->plan.maxSeq = maxSeq;
  d->plan.pageSize = pageSize;
  d->plan.kvPages = kvPages;
  // Tiles are sized for the workers: an operator's tasks fill them once.
  d->plan.sms = sms - schedulerCtas;
  d->plan.separateMerge = (flags & TAWA_MEGA_SEPARATE_MERGE) != 0;
#ifdef TAWA_MEGA_ALTERNATE_TILE_BYTES // A/B builds (PlanOptions says why)
  d->plan.alternateTileBytes = TAWA_MEGA_ALTERNATE_TILE_BYTES;
#endif
#ifdef TAWA_MEGA_SHIFT_CHAINED_TILES // A/B builds (PlanOptions says why)
  d->plan.shiftChainedTiles = TAWA_MEGA_SHIFT_CHAINED_TILES != 0;
#endif
#ifdef TAWA_MEGA_ROW_TILE // A/B builds of the host plan alone
  d->plan.rowTile = TAWA_MEGA_ROW_TILE;
#endif
  if (!checkPlanOptions(d->plan, error))
    return failWith(error);
  d->graph = buildDecodeGraph(d->config, d->plan);
  if (!bindDecodeGraph(d->graph, d->config, d->plan, d->binding, error))
    return failWith(error);
  for (const PassInfo *pass : planPipeline()) {
    if (!pass->run(d->graph, error))
      return failWith(std::string(pass->name) + ": " + error);
  }
  std::vector<std::string> problems = verifyGraph(d->graph, 1);
  if (!problems.empty())
    return failWith("planned graph does not verify: " + problems[0]);
  LoweringOptions lowering;
  lowering.workers = static_cast<unsigned>(sms - schedulerCtas);
  lowering.producers = false;
  if (!lowerToDeviceTables(d->graph, lowering, d->tables, error))
    return failWith(error);
  // Polled, in plans whose tasks cannot be queued behind a polling one
  // (runtime.cuh, workerLoop), and at batch 1: a task polls its input rows
  // with 16-byte loads, eight in flight a thread, where a bulk copy moves
  // any number of rows at once; at batch 4 (8-96 KB a task) the steps were
  // 4-7 % slower polled, at batch 1 (2-24 KB) 12 % (Qwen3-0.6B) and 2.4 %
  // (8B) faster (runs 245-246).
  d->pollInputs = TAWA_MEGA_POLL_INPUTS != 0 && batch == 1 &&
                  d->tables.header.numJitTasks == 0;
  if (d->pollInputs && TAWA_MEGA_RELAXED_ARRIVALS != 0)
    markRelaxedArrivals(d->tables, [](uint8_t kind) {
      return tawa::mega::pollingTaskKind(kind);
    });
  LaunchOptions launch;
  launch.schedulerCtas = schedulerCtas;
  launch.sharedBytes = static_cast<uint32_t>(kTaskSmemBytes);
  launch.countDispatches = false;
  launch.trace = (flags & TAWA_MEGA_TRACE) != 0;
  // Scratch buffers live in the launcher's state, zeroed before each step.
  std::vector<size_t> scratchAt, polledAt;
  launch.scratchBytes = layOut(d->binding, BufferKind::Scratch, scratchAt);
  if (!d->launcher.init(packTables(d->tables), launch, error) ||
      !d->launcher.prepare<DecodeTasks>(error))
    return failWith(error);
  const size_t nb = d->binding.buffers.size();
  d->pointers.assign(nb, nullptr);
  for (size_t i = 0; i < nb; ++i)
    if (d->binding.buffers[i].kind == BufferKind::Scratch)
      d->pointers[i] =
          static_cast<char *>(d->launcher.scratch()) + scratchAt[i];
  // The polled activations, 16-byte aligned in one allocation (one memset
  // poisons them all).
  d->polledBytes = layOut(d->binding, BufferKind::Polled, polledAt);
  if (d->polledBytes &&
      !cudaOk(cudaMalloc(&d->polledDev, d->polledBytes), "cudaMalloc"))
    return 1;
  for (size_t i = 0; i < nb; ++i)
    if (d->binding.buffers[i].kind == BufferKind::Polled)
      d->pointers[i] = static_cast<char *>(d->polledDev) + polledAt[i];
  for (size_t i = 0; i < nb; ++i) {
    const BufferDesc &b = d->binding.buffers[i];
    if (b.kind != BufferKind::Constant)
      continue;
    if (b.name != "rope" || b.type != BufferType::BF16 || b.shape.size() != 2)
      return failWith("constant buffer '" + b.name +
                      "': the runtime computes only `rope`");
    void *table = nullptr;
    if (!cudaOk(cudaMalloc(&table, size_t(b.elements()) * 2), "cudaMalloc"))
      return 1;
    d->constantsDev.push_back(table);
    d->pointers[i] = table;
    const int32_t rows = int32_t(b.shape[0]), dim = int32_t(b.shape[1]);
    const int64_t work = int64_t(rows) * (dim / 2);
    fillRopeTable<<<unsigned(std::min<int64_t>((work + 255) / 256, 4096)),
                    256>>>(static_cast<__nv_bfloat16 *>(table), rows, dim,
                           static_cast<float>(d->config.ropeTheta));
    if (!cudaOk(cudaGetLastError(), "filling the RoPE table") ||
        !cudaOk(cudaDeviceSynchronize(), "filling the RoPE table"))
      return 1;
  }
  if (!cudaOk(cudaMalloc(&d->paramsDev,
                         d->binding.params.size() * sizeof(OpParams)),
              "cudaMalloc") ||
      !cudaOk(cudaMemcpy(d->paramsDev, d->binding.params.data(),
                         d->binding.params.size() * sizeof(OpParams),
                         cudaMemcpyHostToDevice),
              "cudaMemcpy") ||
      !cudaOk(cudaMalloc(&d->pointersDev, nb * sizeof(void *)), "cudaMalloc") ||
      !cudaOk(cudaMalloc(&d->stagedDev,
                         std::max<size_t>(1, d->tables.header.numAotTasks) *
                             sizeof(StagedTask)),
              "cudaMalloc"))
    return 1;
  const TablesHeader &h = d->tables.header;
  d->summary =
      d->graph.name + ": " + std::to_string(h.numTasks) + " tasks (" +
      std::to_string(h.numJitTasks) + " JIT), " + std::to_string(h.numEvents) +
      " events, " + std::to_string(h.numWorkers) + " workers, " +
      std::to_string(schedulerCtas) + " scheduler CTAs, " + std::to_string(nb) +
      " buffers" + (d->pollInputs ? ", polled inputs" : "");
  *out = d.release();
  return 0;
}

void tawa_mega_destroy(tawa_mega_decoder *d) { delete d; }

int tawa_mega_num_buffers(const tawa_mega_decoder *d) {
  return static_cast<int>(d->binding.buffers.size());
}

const char *tawa_mega_buffer_name(const tawa_mega_decoder *d, int index) {
  if (index < 0 || index >= tawa_mega_num_buffers(d))
    return nullptr;
  return d->binding.buffers[index].name.c_str();
}

int tawa_mega_buffer_info(const tawa_mega_decoder *d, int index, int *type,
                          int *kind, int *ndim, int64_t *shape) {
  if (index < 0 || index >= tawa_mega_num_buffers(d))
    return failWith("buffer index " + std::to_string(index) + " out of range");
  const BufferDesc &b = d->binding.buffers[index];
  if (b.shape.size() > 8)
    return failWith("buffer '" + b.name + "' has more than 8 dimensions");
  *type = static_cast<int>(b.type);
  *kind = static_cast<int>(b.kind);
  *ndim = static_cast<int>(b.shape.size());
  for (size_t i = 0; i < b.shape.size(); ++i)
    shape[i] = b.shape[i];
  return 0;
}

/// Buffer `index` if it is a staged weight, else null.
static const BufferDesc *stagedBuffer(const tawa_mega_decoder *d, int index) {
  if (index < 0 || index >= tawa_mega_num_buffers(d) ||
      d->binding.buffers[index].kind != BufferKind::StagedWeight)
    return nullptr;
  return &d->binding.buffers[index];
}

const char *tawa_mega_buffer_source(const tawa_mega_decoder *d, int index) {
  const BufferDesc *b = stagedBuffer(d, index);
  return b ? b->source.c_str() : nullptr;
}

const char *tawa_mega_buffer_scale(const tawa_mega_decoder *d, int index) {
  const BufferDesc *b = stagedBuffer(d, index);
  return b && !b->scale.empty() ? b->scale.c_str() : nullptr;
}

int tawa_mega_pack_weight(const void *src, const void *scale, void *dst,
                          int64_t n, int32_t k, void *streamPtr) {
  if (!src || !dst || n <= 0 || k <= 0)
    return failWith("tawa_mega_pack_weight: null buffer or empty shape");
  const int64_t total = stagedWeightRows(n) * stagedWeightCols(k);
  const int threads = 256;
  const int64_t blocks =
      std::min<int64_t>((total + threads - 1) / threads, int64_t(1) << 20);
  packStagedWeight<<<unsigned(blocks), threads, 0,
                     static_cast<cudaStream_t>(streamPtr)>>>(
      static_cast<const __nv_bfloat16 *>(src),
      static_cast<const __nv_bfloat16 *>(scale),
      static_cast<__nv_bfloat16 *>(dst), n, k);
  return cudaOk(cudaGetLastError(), "packing a staged weight") ? 0 : 1;
}

int tawa_mega_bind(tawa_mega_decoder *d, int index, void *ptr) {
  if (index < 0 || index >= tawa_mega_num_buffers(d))
    return failWith("buffer index " + std::to_string(index) + " out of range");
  if (d->binding.buffers[index].kind == BufferKind::Scratch)
    return failWith("buffer '" + d->binding.buffers[index].name +
                    "' is scratch: the runtime places it in its own state");
  if (d->binding.buffers[index].kind == BufferKind::Constant)
    return failWith("buffer '" + d->binding.buffers[index].name +
                    "' is a constant the runtime computes and owns");
  if (d->binding.buffers[index].kind == BufferKind::Polled)
    return failWith("buffer '" + d->binding.buffers[index].name +
                    "' is a polled activation: the runtime places it");
  if (!ptr || reinterpret_cast<uintptr_t>(ptr) % 16 != 0)
    return failWith("buffer '" + d->binding.buffers[index].name +
                    "': address is null or not 16-byte aligned");
  d->pointers[index] = ptr;
  d->pointersDirty = true;
  return 0;
}

int tawa_mega_step(tawa_mega_decoder *d, void *streamPtr, double watchdogMs) {
  cudaStream_t stream = static_cast<cudaStream_t>(streamPtr);
  if (d->pointersDirty) {
    for (size_t i = 0; i < d->pointers.size(); ++i)
      if (!d->pointers[i])
        return failWith("buffer '" + d->binding.buffers[i].name +
                        "' is not bound");
    // Synchronous, so a step captured into a CUDA graph later reads a table
    // that is already in place.
    if (!cudaOk(cudaMemcpy(d->pointersDev, d->pointers.data(),
                           d->pointers.size() * sizeof(void *),
                           cudaMemcpyHostToDevice),
                "uploading buffer addresses"))
      return 1;
    // Each AOT task's parameters with these addresses resolved; on the
    // legacy stream and waited for, like the upload above.
    const uint32_t positions = d->tables.header.numAotTasks;
    if (positions) {
      buildStagedTasks<<<(positions + 255) / 256, 256>>>(
          d->launcher.tables(), d->paramsDev, d->pointersDev, d->stagedDev,
          positions);
      if (!cudaOk(cudaGetLastError(), "building the staged tasks") ||
          !cudaOk(cudaDeviceSynchronize(), "building the staged tasks"))
        return 1;
    }
    d->pointersDirty = false;
  }
  std::string error;
  const double ms = watchdogMs > 0 ? watchdogMs : 2000.0;
  const uint64_t cycles = static_cast<uint64_t>(ms * d->clockKHz);
  // A stream being captured by the caller gets the memset and the kernel
  // themselves (a graph node of ours would not be part of their capture).
  cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusNone;
  if (!cudaOk(cudaStreamIsCapturing(stream, &capturing), "the stream"))
    return 1;
  if (capturing == cudaStreamCaptureStatusNone && !d->graphFailed) {
    if ((!d->stepGraph || d->graphCycles != cycles) && !captureStep(d, cycles))
      d->graphFailed = true; // from now on launched directly
    else
      return cudaOk(cudaGraphLaunch(d->stepGraph, stream), "launching the step")
                 ? 0
                 : 1;
  }
  if (!launchStep(d, stream, cycles, error))
    return failWith(error);
  return 0;
}

int tawa_mega_check(tawa_mega_decoder *d) {
  const RuntimeState &s = d->launcher.state();
  uint32_t reportCount = 0;
  if (!cudaOk(cudaMemcpy(&reportCount, s.watchdog.reportCount, 4,
                         cudaMemcpyDeviceToHost),
              "reading the state"))
    return 1;
  // Arrivals past a trigger count, of either kind (runtime.cuh, arrive):
  // every event's final count against its trigger count. The release
  // reductions of plans without JIT tasks are seen only here; the atomic
  // arrivals also count them in the state's overArrivals word, which would
  // report the same arrivals twice.
  const std::vector<EventDesc> &events = d->tables.events;
  std::vector<uint32_t> arrivals(events.size());
  if (!arrivals.empty() &&
      !cudaOk(cudaMemcpy(arrivals.data(), s.arrivals, arrivals.size() * 4,
                         cudaMemcpyDeviceToHost),
              "reading the state"))
    return 1;
  std::string over;
  for (size_t e = 0; e < events.size(); ++e)
    if (arrivals[e] > events[e].triggerCount && over.size() < 200)
      over += " event " + std::to_string(e) + ": " +
              std::to_string(arrivals[e]) + " arrivals for a count of " +
              std::to_string(events[e].triggerCount) + ";";
  if (reportCount == 0 && over.empty())
    return 0;
  std::string msg;
  if (!over.empty())
    msg += "arrivals past a count:" + over + " ";
  uint32_t n = std::min(reportCount, s.watchdog.capacity);
  std::vector<WaitReport> reports(n);
  if (n && !cudaOk(cudaMemcpy(reports.data(), s.watchdog.reports,
                              n * sizeof(WaitReport), cudaMemcpyDeviceToHost),
                   "reading reports"))
    return 1;
  msg += std::to_string(reportCount) + " watchdog reports";
  int shown = 0;
  for (const WaitReport &r : reports)
    if (r.end == 1 && shown++ < 4)
      msg += "; " + describeWaitReport(r);
  return failWith("mega-kernel step failed: " + msg);
}

const char *tawa_mega_summary(const tawa_mega_decoder *d) {
  return d->summary.c_str();
}

uint64_t tawa_mega_last_step_ns(tawa_mega_decoder *d) {
  unsigned long long ns[2] = {0, 0};
  cudaMemcpy(ns, d->launcher.state().stepNs, sizeof ns, cudaMemcpyDeviceToHost);
  return ns[1] > ns[0] ? ns[1] - ns[0] : 0;
}

int tawa_mega_num_ctas(const tawa_mega_decoder *d) {
  return static_cast<int>(d->launcher.grid());
}

int tawa_mega_worker_sms(tawa_mega_decoder *d, uint32_t *sms, int n) {
  const int grid = tawa_mega_num_ctas(d);
  if (n < grid)
    return failWith("tawa_mega_worker_sms: " + std::to_string(n) +
                    " values for " + std::to_string(grid) + " CTAs");
  return cudaOk(cudaMemcpy(sms, d->launcher.state().workerSms,
                           size_t(grid) * sizeof(uint32_t),
                           cudaMemcpyDeviceToHost),
                "reading the CTAs' SMs")
             ? 0
             : 1;
}

int tawa_mega_num_tasks(const tawa_mega_decoder *d) {
  return static_cast<int>(d->tables.tasks.size());
}

int tawa_mega_task_ops(const tawa_mega_decoder *d, int32_t *ops) {
  for (size_t i = 0; i < d->tables.tasks.size(); ++i) {
    uint16_t op = d->tables.tasks[i].op;
    ops[i] = op == kEmptyOpIndex ? -1 : int32_t(op);
  }
  return 0;
}

int tawa_mega_num_ops(const tawa_mega_decoder *d) {
  return static_cast<int>(d->graph.ops.size());
}

const char *tawa_mega_op_name(const tawa_mega_decoder *d, int op) {
  if (op < 0 || op >= tawa_mega_num_ops(d))
    return nullptr;
  return d->graph.ops[op].name.c_str();
}

int tawa_mega_trace(tawa_mega_decoder *d, uint64_t *records) {
  const RuntimeState &s = d->launcher.state();
  if (!s.trace)
    return failWith("the decoder was created without TAWA_MEGA_TRACE");
  std::vector<TaskRecord> trace(d->tables.tasks.size());
  if (!cudaOk(cudaMemcpy(trace.data(), s.trace,
                         trace.size() * sizeof(TaskRecord),
                         cudaMemcpyDeviceToHost),
              "reading the trace"))
    return 1;
  for (size_t i = 0; i < trace.size(); ++i) {
    uint64_t *r = records + TAWA_MEGA_TRACE_VALUES * i;
    r[0] = trace[i].startNs;
    r[1] = trace[i].endNs;
    r[2] = trace[i].worker;
    r[3] = trace[i].readyNs;
    r[4] = trace[i].computedNs;
    r[5] = trace[i].weightWaitNs;
  }
  return 0;
}

} // extern "C"
