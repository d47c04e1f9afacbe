// Latency of single decode tasks, phase by phase, on one CTA (the
// mega-kernel's worker shape: kTaskThreads threads, the task shared memory),
// with the rest of the GPU idle or streaming memory as the weight-reading
// workers do during a step. Answers where an attention task's microseconds go
// (docs/MEGAKERNEL.md, "Decode measured"): thread 0 records clock64() at the
// task's phase marks (TAWA_MEGA_TASK_STAMP), for a cold first run and hot
// repeats, and an instruction-fetch probe times a straight run of 4096
// independent FMAs cold and hot. For a linear task warp 0 also splits its
// weight-ring stages (TAWA_MEGA_STREAM_MARK) into the wait for the slot, the
// products and the refill's copies, and after the runs the norm's sums of
// squares are timed alone (twice, then twice loading one piece at a time), to
// tell instruction fetch from the loop itself. The totals are exact for the
// build that runs (the stream marks slow warp 0: build with
// -DTAWA_MEGA_NO_STREAM_MARKS for a linear task's own total); the split
// between phases is approximate (the compiler may move loads and arithmetic
// across a clock read).
//
//   nvcc -gencode=arch=compute_90a,code=sm_90a -std=c++17 -O3 -Iinclude \
//     gpu/tools/mega_task_latency.cu -o /tmp/mega_task_latency
//   (or the build's build/gpu/mega_task_latency)
//   /tmp/mega_task_latency [CASE]   (CASE: the index of one case; all by
//   default)
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "../tests/common.cuh"

__device__ long long gStamp[16];
#define TAWA_MEGA_TASK_STAMP(k)                                                \
  do {                                                                         \
    if (threadIdx.x == 0)                                                      \
      gStamp[k] = clock64();                                                   \
  } while (0)

// Warp 0's time in each step of the linear's weight stream, summed over
// its stages (gStreamCycles[k]: since the previous mark; [4]: stages). The
// mark's own loads (an L2 round trip: the stores of the previous mark
// evicted the lines from L1) are issued before its clock read and the next
// interval starts after they return, so no interval holds them; warp 0 is
// still slowed by them, so the totals of a build with the marks are not the
// task's: -DTAWA_MEGA_NO_STREAM_MARKS builds it without them.
__device__ long long gStreamCycles[5], gStreamLast;
#ifndef TAWA_MEGA_NO_STREAM_MARKS
#define TAWA_MEGA_STREAM_MARK(k)                                               \
  do {                                                                         \
    if (threadIdx.x == 0) {                                                    \
      const long long sum = gStreamCycles[(k) != 0 ? (k) : 4],                 \
                      last = gStreamLast;                                      \
      const long long now = clock64();                                         \
      gStreamCycles[(k) != 0 ? (k) : 4] =                                      \
          (k) != 0 ? sum + now - last : sum + 1;                               \
      long long after;                                                         \
      asm volatile("mov.u64 %0, %%clock64;" : "=l"(after)::"memory");          \
      gStreamLast = after;                                                     \
    }                                                                          \
  } while (0)
#endif

#include "tawa/device/mega/tasks/attention.cuh"
#include "tawa/device/mega/tasks/linear.cuh"

using namespace tawa::device::mega;
using tawa::mega::AttentionMergeParams;
using tawa::mega::DecodeAttentionParams;
using tawa::mega::LinearParams;

constexpr int kReps = 4;  ///< runs of a task per launch: cold, then hot
constexpr int kMarks = 8; ///< phase marks 0..7 (0: the call)

struct Result {
  long long mark[kReps][kMarks + 1]; ///< clock64; [kMarks]: after return
  long long stream[kReps][5];        ///< gStreamCycles of each run
  long long fmaCycles[2];            ///< the FMA probe, cold then hot
  long long normCycles[4];     ///< linear: the norm's sums of squares alone,
                               ///< twice as linear.cuh has it, twice one piece
  unsigned long long ns0, ns1; ///< globaltimer around the runs
  long long clk0, clk1;
};

/// 4096 FMAs in 8 independent chains, straight-line (64 KB of code): its
/// hot time is issue-bound, its cold time adds the instruction fetches.
__device__ __noinline__ float fmaProbe(float x) {
  float a[8];
#pragma unroll
  for (int i = 0; i < 8; ++i)
    a[i] = x + i;
#pragma unroll
  for (int i = 0; i < 512; ++i)
#pragma unroll
    for (int c = 0; c < 8; ++c)
      asm volatile("fma.rn.f32 %0, %0, %1, %2;"
                   : "+f"(a[c])
                   : "f"(1.0001f), "f"(float(i & 7) * 1e-3f));
  float s = 0.f;
#pragma unroll
  for (int i = 0; i < 8; ++i)
    s += a[i];
  return s;
}

__device__ volatile int gStop;

/// CTA 0 runs the task kReps times; the other CTAs (if any) stream `load`
/// until it is done, as the weight-reading workers of a step do.
/// Kind: 0 attention, 1 merge, 2 attention prefetched, 3 linear prefetched,
/// 4 linear prefetched after an attention task (tile 0) on the same CTA,
/// whose code may have evicted the linear's from the instruction cache (the
/// marks are the linear's).
template <int Kind>
__global__ void __launch_bounds__(kTaskThreads, 1)
    latencyKernel(DecodeAttentionParams ap, AttentionMergeParams mp,
                  LinearParams lp, void *const *buffers, uint32_t tile,
                  const uint4 *load, size_t loadVecs, Result *out,
                  float *sink) {
  if (blockIdx.x != 0) {
    uint4 acc = make_uint4(0, 0, 0, 0);
    for (size_t i = (blockIdx.x * blockDim.x + threadIdx.x) * 4;;) {
      if (gStop)
        break;
      uint4 v[4];
#pragma unroll
      for (int u = 0; u < 4; ++u)
        v[u] = __ldcs(load + (i + u) % loadVecs);
#pragma unroll
      for (int u = 0; u < 4; ++u)
        acc.x ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
      i = (i + size_t(gridDim.x) * blockDim.x * 4) % loadVecs;
    }
    if (acc.x == 0x12345678u)
      sink[1] = 1.f;
    return;
  }
  if (threadIdx.x == 0)
    initTaskBarriers();
  __syncthreads();
  // Let the streaming CTAs reach full bandwidth first.
  if (gridDim.x > 1) {
    const long long t = clock64();
    while (clock64() - t < 200000) {
    }
  }
  unsigned long long ns0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(ns0));
  const long long clk0 = clock64();
  for (int r = 0; r < kReps; ++r) {
    __syncthreads();
    if (Kind == 4) {
      decodeAttentionTask(ap, buffers, 0, false);
      __syncthreads();
      if (threadIdx.x == 0)
        for (int k = 0; k < kMarks; ++k)
          gStamp[k] = 0;
      for (int k = 0; k < 5 && threadIdx.x == 0; ++k)
        gStreamCycles[k] = 0;
    }
    if (Kind >= 2) {
      // As a worker does before waiting for the task's inputs; then the
      // wait (the copies land meanwhile).
      if (Kind == 2)
        decodeAttentionPrefetch(ap, buffers, tile);
      else
        linearPrefetch(lp, buffers, tile);
      __syncthreads();
      const long long t = clock64();
      while (clock64() - t < 20000) {
      }
      __syncthreads();
    }
    TAWA_MEGA_TASK_STAMP(0);
    if (Kind >= 3)
      linearTask(lp, buffers, tile, true);
    else if (Kind != 1)
      decodeAttentionTask(ap, buffers, tile, Kind == 2);
    else
      attentionMergeTask(mp, buffers, tile);
    __syncthreads();
    if (threadIdx.x == 0) {
      const long long end = clock64();
      for (int k = 0; k < kMarks; ++k)
        out->mark[r][k] = gStamp[k];
      out->mark[r][kMarks] = end;
      for (int k = 0; k < kMarks; ++k)
        gStamp[k] = 0;
      for (int k = 0; k < 5; ++k) {
        out->stream[r][k] = gStreamCycles[k];
        gStreamCycles[k] = 0;
      }
    }
    __syncthreads();
  }
  unsigned long long ns1;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(ns1));
  const long long clk1 = clock64();
  if (Kind >= 3) {
    // The norm phase alone, on the input rows the last run left in shared
    // memory (one pass: all of K staged): a first call after the task, a
    // second right after it (its code fetched), then one piece at a time twice.
    // Cold much slower than hot: instruction fetch; both slow: the loop.
    const LinearSmem m(lp, buffers, tile);
    auto rowAt = [&](int r) { return m.xs + r * m.ldx; };
    float *scratch = m.rowParts;
    for (int v = 0; v < 4; ++v) {
      __syncthreads();
      const long long t = clock64();
      if (v < 2)
        addRowSquares<kNormGroup>(m.t.rows, m.kc, rowAt, scratch);
      else
        addRowSquares<1>(m.t.rows, m.kc, rowAt, scratch);
      __syncthreads();
      if (threadIdx.x == 0)
        out->normCycles[v] = clock64() - t;
    }
  }
  for (int r = 0; r < 2; ++r) {
    __syncthreads();
    const long long t = clock64();
    const float s = fmaProbe(float(threadIdx.x));
    __syncthreads();
    if (threadIdx.x == 0)
      out->fmaCycles[r] = clock64() - t;
    if (s == 12345.f)
      sink[0] = s;
  }
  if (threadIdx.x == 0) {
    out->ns0 = ns0;
    out->ns1 = ns1;
    out->clk0 = clk0;
    out->clk1 = clk1;
    gStop = 1;
  }
}

template <typename T> static T *upload(const std::vector<T> &v) {
  T *d;
  TAWA_CHECK_CUDA(cudaMalloc(&d, v.size() * sizeof(T)));
  TAWA_CHECK_CUDA(
      cudaMemcpy(d, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice));
  return d;
}

static std::vector<__nv_bfloat16> randomBf16(std::mt19937_64 &rng, size_t n,
                                             float scale) {
  std::uniform_real_distribution<float> u(-scale, scale);
  std::vector<__nv_bfloat16> v(n);
  for (auto &x : v)
    x = __float2bfloat16(u(rng));
  return v;
}

static void report(const char *name, int kind, const Result &r, double ghz) {
  static const char *attnPhase[kMarks] = {
      "call",   "geometry", "q/k norm+RoPE", "kv wait",
      "scores", "softmax",  "P.V",           "final sums"};
  static const char *linearPhase[kMarks] = {
      "call",      "input copy", "norm", "weights x input",
      "row scale", "stores",     "",     ""};
  const char *const *phase = kind >= 3 ? linearPhase : attnPhase;
  std::printf("%s (%.2f GHz; FMA probe cold %lld, hot %lld cycles)\n", name,
              ghz, r.fmaCycles[0], r.fmaCycles[1]);

  for (int rep = 0; rep < kReps; ++rep) {
    std::printf("  run %d%s: total %6.2f us |", rep, rep ? " hot " : " cold",
                (r.mark[rep][kMarks] - r.mark[rep][0]) / ghz / 1e3);
    long long prev = r.mark[rep][0];
    for (int k = 1; k <= kMarks; ++k) {
      if (k < kMarks && r.mark[rep][k] == 0)
        continue;
      std::printf(" %s %.2f", k < kMarks ? phase[k] : "end",
                  (r.mark[rep][k] - prev) / ghz / 1e3);
      prev = r.mark[rep][k];
    }
    std::printf("\n");
    if (kind >= 3 && r.stream[rep][4] > 0) {
      // Warp 0's stages: waiting for the slot, its products, its refill.
      const double n = double(r.stream[rep][4]);
      std::printf("    warp 0, %lld stages, per stage: slot wait %.3f us, "
                  "products %.3f us, refill %.3f us\n",
                  r.stream[rep][4], r.stream[rep][1] / n / ghz / 1e3,
                  r.stream[rep][2] / n / ghz / 1e3,
                  r.stream[rep][3] / n / ghz / 1e3);
    }
  }
  if (kind >= 3)
    std::printf("  norm alone: %.2f then %.2f us; one piece at a time %.2f "
                "then %.2f us\n",
                r.normCycles[0] / ghz / 1e3, r.normCycles[1] / ghz / 1e3,
                r.normCycles[2] / ghz / 1e3, r.normCycles[3] / ghz / 1e3);
}

int main(int argc, char **argv) {
  const int only = argc > 1 ? std::atoi(argv[1]) : -1; // one case, or all
  std::mt19937_64 rng(tawa::test::testSeed(argv[0]));
  // Qwen3-8B's attention at batch 1, context 512: 8 KV heads of 4 q heads,
  // D 128, chunks of 64 positions, the step's position 511 (chunk 7).
  const int B = 1, kvHeads = 8, G = 4, D = 128, maxSeq = 576, chunks = 8,
            chunkLen = 64, pos = 511;
  const int qkvCols = (kvHeads * G + 2 * kvHeads) * D;
  std::vector<void *> buf(28);
  buf[0] = upload(randomBf16(rng, size_t(B) * qkvCols, 2.f));
  buf[1] = upload(randomBf16(rng, D, 1.f));
  buf[2] = upload(randomBf16(rng, D, 1.f));
  buf[3] = upload(randomBf16(rng, size_t(B) * kvHeads * 1024 * D, 1.f));
  buf[4] = upload(randomBf16(rng, size_t(B) * kvHeads * 1024 * D, 1.f));
  buf[5] = upload(std::vector<int32_t>(B, pos));
  buf[6] = upload(std::vector<uint16_t>(size_t(B) * kvHeads * G * D));
  buf[7] = upload(std::vector<float>(size_t(B) * kvHeads * chunks * G * D));
  buf[8] = upload(std::vector<float>(size_t(B) * kvHeads * chunks * G));
  // Qwen3-0.6B's QKV projection (RMSNorm, K 1024, 4096 columns in tiles of
  // 32) and O projection (residual, K 2048, 1024 columns in tiles of 16).
  const int kA = 1024, nA = 4096, kB = 2048, nB = 1024;
  buf[9] = upload(randomBf16(rng, kA, 2.f));
  buf[10] = upload(randomBf16(rng, kA, 1.f));
  buf[11] = upload(randomBf16(rng, size_t(nA) * kA, 0.05f));
  buf[12] = upload(std::vector<uint16_t>(nA));
  buf[13] = upload(randomBf16(rng, kB, 1.f));
  buf[14] = upload(randomBf16(rng, size_t(nB) * kB, 0.05f));
  buf[15] = upload(std::vector<uint16_t>(nB));
  buf[16] = upload(randomBf16(rng, nB, 1.f));
  // Qwen3-8B's gate/up tile (RMSNorm, K 4096, 96 columns of gate and of
  // up: 192 weight rows) at 1 and at 16 rows of the batch.
  const int kG = 4096, nG = 96;
  buf[17] = upload(randomBf16(rng, size_t(16) * kG, 2.f));
  buf[18] = upload(randomBf16(rng, kG, 1.f));
  buf[19] = upload(randomBf16(rng, size_t(nG) * kG, 0.05f));
  buf[20] = upload(randomBf16(rng, size_t(nG) * kG, 0.05f));
  buf[21] = upload(std::vector<uint16_t>(size_t(16) * nG));
  // The cache as one page per row (B = 1; 1024 >= maxSeq positions, of
  // which the first maxSeq are filled): block table {0}.
  buf[22] = upload(std::vector<int32_t>(B, 0));
  // The RoPE table (the runtime's `rope`: cos then sin, bf16 [maxSeq, D]).
  {
    std::vector<__nv_bfloat16> rope(size_t(maxSeq) * D);
    for (int s = 0; s < maxSeq; ++s)
      for (int i = 0; i < D / 2; ++i) {
        const double a = s * std::pow(1e6, -2.0 * i / D);
        rope[size_t(s) * D + i] = __float2bfloat16(float(std::cos(a)));
        rope[size_t(s) * D + D / 2 + i] = __float2bfloat16(float(std::sin(a)));
      }
    buf[23] = upload(rope);
  }
  // Qwen3-8B's O projection tile (residual, K 4096, 32 columns) at 1 row.
  const int kO = 4096, nO = 32;
  buf[24] = upload(randomBf16(rng, kO, 2.f));
  buf[25] = upload(randomBf16(rng, size_t(nO) * kO, 0.05f));
  buf[26] = upload(std::vector<uint16_t>(nO));
  buf[27] = upload(randomBf16(rng, nO, 1.f));
  void **dBuf = upload(buf);
  const uint32_t none = tawa::mega::kNoBuffer;
  LinearParams lpA{};
  lpA.in = 9, lpA.normWeight = 10, lpA.w0 = lpA.w1 = lpA.w2 = 11;
  lpA.out = 12, lpA.residual = none, lpA.argmaxKeys = none, lpA.m = 1;
  lpA.rowSquaresIn = lpA.rowSquaresOut = none;
  lpA.n = nA, lpA.k = kA;
  lpA.tileM = 1, lpA.tileN = 32, lpA.colTiles = nA / 32;
  lpA.seg1 = lpA.seg2 = nA, lpA.eps = 1e-6f;
  lpA.ringBytes = tawa::mega::linearRingBytes(1);
  LinearParams lpB = lpA;
  lpB.in = 13, lpB.normWeight = none, lpB.w0 = lpB.w1 = lpB.w2 = 14;
  lpB.out = 15, lpB.residual = 16, lpB.n = nB, lpB.k = kB, lpB.tileN = 16;
  lpB.colTiles = nB / 16, lpB.seg1 = lpB.seg2 = nB;

  // The same QKV projection in tiles of 64 columns (the alternating-halves
  // plan's: four 16-row blocks, one a warp).
  LinearParams lpA64 = lpA;
  lpA64.tileN = 64, lpA64.colTiles = nA / 64;

  LinearParams lpG1{};
  lpG1.in = 17, lpG1.normWeight = 18, lpG1.w0 = 19, lpG1.w1 = 20;
  lpG1.w2 = none, lpG1.out = 21, lpG1.residual = none, lpG1.m = 1;
  lpG1.argmaxKeys = lpG1.rowSquaresIn = lpG1.rowSquaresOut = none;
  lpG1.n = nG, lpG1.k = kG, lpG1.tileM = 1, lpG1.tileN = nG;
  lpG1.colTiles = 1, lpG1.seg1 = lpG1.seg2 = nG, lpG1.paired = 1;
  lpG1.eps = 1e-6f, lpG1.ringBytes = tawa::mega::linearRingBytes(1);
  // Qwen3-0.6B's gate/up tile at batch 1 (K 1024, 48 columns of gate and of
  // up: 96 weight rows, 192 KB, more than the 128 KB ring), on the 8B
  // tile's buffers (large enough; the weights' values do not matter here).
  LinearParams lpG06 = lpG1;
  lpG06.n = 48, lpG06.k = 1024, lpG06.tileN = 48;
  lpG06.seg1 = lpG06.seg2 = 48;
  LinearParams lpO8{};
  lpO8.in = 24, lpO8.normWeight = none, lpO8.w0 = lpO8.w1 = lpO8.w2 = 25;
  lpO8.out = 26, lpO8.residual = 27, lpO8.argmaxKeys = none, lpO8.m = 1;
  lpO8.rowSquaresIn = lpO8.rowSquaresOut = none;
  lpO8.n = nO, lpO8.k = kO, lpO8.tileM = 1, lpO8.tileN = nO;
  lpO8.colTiles = 1, lpO8.seg1 = lpO8.seg2 = nO, lpO8.eps = 1e-6f;
  lpO8.ringBytes = tawa::mega::linearRingBytes(1);
  LinearParams lpG16 = lpG1;
  lpG16.m = lpG16.tileM = 16;
  lpG16.ringBytes = tawa::mega::linearRingBytes(16);

  DecodeAttentionParams ap{};
  ap.qkv = 0, ap.qNorm = 1, ap.kNorm = 2, ap.kCache = 3, ap.vCache = 4;
  ap.positions = 5, ap.out = 6, ap.partOut = 7, ap.partLse = 8;
  // Timed alone: the chunk writes its partial output; the merge is timed as
  // a task of its own (kind 1).
  ap.counters = tawa::mega::kNoBuffer;
  ap.blockTable = 22, ap.pageSize = 1024, ap.pageShift = 10;
  ap.pagesPerRow = 1;
  ap.batch = B, ap.kvHeads = kvHeads, ap.group = G, ap.headDim = D;
  ap.maxSeq = maxSeq, ap.chunks = chunks, ap.chunkLen = chunkLen;
  ap.qkvCols = qkvCols, ap.qkNorm = 1;
  ap.lowSmemBytes =
      tawa::mega::taskLowSmemBytes(tawa::mega::linearRingBytes(1));
  ap.prefetch = 1, ap.scale = 1.f / std::sqrt(float(D)), ap.eps = 1e-6f;
  ap.rope = 23;
  // One task over the whole context (512 positions, no split and no merge):
  // the 8B group of 4 q heads, or one q head per task (group 1).
  DecodeAttentionParams apWhole = ap;
  apWhole.chunks = 1, apWhole.chunkLen = maxSeq;
  DecodeAttentionParams apWhole1 = apWhole;
  apWhole1.group = 1;
  // Batch 16's attention task (just in time, so nothing prefetched; below
  // the 72 KB ring of 16-row linear tiles): 4 q heads over 512 positions.
  DecodeAttentionParams apWhole16 = apWhole;
  apWhole16.prefetch = 0;
  apWhole16.lowSmemBytes =
      tawa::mega::taskLowSmemBytes(tawa::mega::linearRingBytes(16));
  AttentionMergeParams mp{};
  mp.partOut = 7, mp.partLse = 8, mp.out = 6, mp.batch = B;
  mp.kvHeads = kvHeads, mp.group = G, mp.headDim = D, mp.chunks = chunks;

  int sms = 0, clockKHz = 0;
  TAWA_CHECK_CUDA(
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  TAWA_CHECK_CUDA(cudaDeviceGetAttribute(&clockKHz, cudaDevAttrClockRate, 0));
  const size_t loadBytes = size_t(1) << 30;
  uint4 *load;
  TAWA_CHECK_CUDA(cudaMalloc(&load, loadBytes));
  TAWA_CHECK_CUDA(cudaMemset(load, 1, loadBytes));
  float *sink;
  TAWA_CHECK_CUDA(cudaMalloc(&sink, 16));
  Result *dRes;
  TAWA_CHECK_CUDA(cudaMalloc(&dRes, sizeof(Result)));
  const int smem = tawa::mega::kTaskSmemBytes;
  // The kernel of each task kind (latencyKernel's Kind).
  decltype(&latencyKernel<0>)
      const kernels[] = {latencyKernel<0>, latencyKernel<1>, latencyKernel<2>,
                         latencyKernel<3>, latencyKernel<4>};
  for (auto kernel : kernels)
    TAWA_CHECK_CUDA(cudaFuncSetAttribute(
        kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  std::printf("device: %d SMs, nominal clock %.2f GHz\n", sms, clockKHz / 1e6);

  struct Case {
    const char *name;
    int kind;
    uint32_t tile;
    int grid;
    bool flushL2; ///< code and data from memory, not L2, on the first run
    const LinearParams *lp = nullptr;          ///< kinds 3, 4
    const DecodeAttentionParams *ap = nullptr; ///< kinds 0, 2: not 8B's
  } cases[] = {
      {"attention 8B chunk 0 (64 positions), idle GPU", 0, 0, 1, true},
      {"attention 8B chunk 7 (holds the new row), idle GPU", 0, 7, 1, true},
      {"attention 8B chunk 0, other SMs streaming", 0, 0, sms, true},
      {"attention 8B chunk 7, other SMs streaming", 0, 7, sms, true},
      {"attention 8B chunk 7, other SMs streaming, L2 warm", 0, 7, sms, false},
      {"attention 8B chunk 7 prefetched, other SMs streaming", 2, 7, sms, true},
      {"attention 8B chunk 0 prefetched, streaming, L2 warm", 2, 0, sms, false},
      {"merge 8B head 0, idle GPU", 1, 0, 1, true},
      {"merge 8B head 0, other SMs streaming", 1, 0, sms, true},
      {"merge 8B head 0, other SMs streaming, L2 warm", 1, 0, sms, false},
      {"attention 8B chunk 7 prefetched, idle GPU", 2, 7, 1, true},
      {"linear 0.6B QKV tile (RMSNorm) prefetched, streaming, L2 warm", 3, 5,
       sms, false, &lpA},
      {"linear 0.6B O tile (residual) prefetched, streaming, L2 warm", 3, 5,
       sms, false, &lpB},
      {"attention 8B 4 q heads x 512 positions prefetched, streaming, L2 "
       "warm",
       2, 0, sms, false, nullptr, &apWhole},
      {"attention 8B 1 q head x 512 positions prefetched, streaming, L2 warm",
       2, 0, sms, false, nullptr, &apWhole1},
      {"attention 8B 4 q heads x 512 positions as at batch 16 (not "
       "prefetched, 72 KB ring), streaming, L2 warm",
       0, 0, sms, false, nullptr, &apWhole16},
      {"linear 8B gate/up tile (192 weight rows, RMSNorm), 1 row, "
       "prefetched, streaming, L2 warm",
       3, 0, sms, false, &lpG1},
      {"linear 8B gate/up tile, 16 rows (72 KB ring), prefetched, streaming, "
       "L2 warm",
       3, 0, sms, false, &lpG16},
      {"linear 8B gate/up tile, 1 row, prefetched, idle GPU, L2 warm", 3, 0, 1,
       false, &lpG1},
      {"linear 8B gate/up tile, 16 rows (72 KB ring), prefetched, idle GPU, "
       "L2 warm",
       3, 0, 1, false, &lpG16},
      {"linear 8B O tile (residual, 32 columns), 1 row, prefetched, "
       "streaming, L2 warm",
       3, 0, sms, false, &lpO8},
      {"linear 8B O tile, 1 row, prefetched, streaming, weights from memory", 3,
       0, sms, true, &lpO8},
      {"linear 8B O tile, 1 row, prefetched, idle GPU, L2 warm", 3, 0, 1, false,
       &lpO8},
      {"linear 0.6B QKV tile prefetched after an 8B attention task, "
       "streaming, L2 warm",
       4, 5, sms, false, &lpA},
      {"linear 0.6B O tile prefetched after an 8B attention task, streaming, "
       "L2 warm",
       4, 5, sms, false, &lpB},
      {"linear 0.6B QKV tile of 64 columns prefetched, streaming, L2 warm", 3,
       5, sms, false, &lpA64},
      {"linear 0.6B QKV tile of 64 columns prefetched after an 8B attention "
       "task, streaming, L2 warm",
       4, 5, sms, false, &lpA64},
      {"linear 0.6B gate/up tile (96 weight rows, RMSNorm), 1 row, "
       "prefetched, streaming, L2 warm",
       3, 0, sms, false, &lpG06},
  };
  for (int ci = 0; ci < int(sizeof(cases) / sizeof(cases[0])); ++ci) {
    const Case &c = cases[ci];
    if (only >= 0 && ci != only)
      continue;
    int zero = 0;
    TAWA_CHECK_CUDA(cudaMemcpyToSymbol(gStop, &zero, sizeof(int)));
    // Fresh code and data caches: the first run is cold as in a step.
    if (c.flushL2)
      TAWA_CHECK_CUDA(cudaMemset(load, 1, size_t(64) << 20));
    const LinearParams lp = c.lp ? *c.lp : lpA;
    kernels[c.kind]<<<c.grid, kTaskThreads, smem>>>(c.ap ? *c.ap : ap, mp, lp,
                                                    dBuf, c.tile, load,
                                                    loadBytes / 16, dRes, sink);
    TAWA_CHECK_LAUNCH();
    Result r;
    TAWA_CHECK_CUDA(cudaMemcpy(&r, dRes, sizeof(r), cudaMemcpyDeviceToHost));
    const double ghz = double(r.clk1 - r.clk0) / double(r.ns1 - r.ns0);
    report(c.name, c.kind, r, ghz);
  }
  return 0;
}
