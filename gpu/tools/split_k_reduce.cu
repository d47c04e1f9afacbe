// What a split-K reduction across workers costs (docs/MEGAKERNEL.md, "Next":
// gate/up and down as one task). W writer CTAs each add a partial sum of the
// same N floats into one global accumulator, then arrive at a counter with a
// release reduction; READERS reader CTAs (default 1) poll the counter
// (acquire) and read the N sums, as the next operator's tiles would. Timed
// with %globaltimer from the writers' common start (they spin until a start
// flag) to the last reader's last read, for five ways of writing:
//   scalar: red.global.add.f32, one per output;
//   vector: red.global.add.v4.f32 (sm_90), one per 4 outputs;
//   slots:  each writer stores its partials to its own row (no reduction at
//           the writers); the reader adds the W rows itself;
//   bf16 hop: no reduction: writer w stores its N / W bf16 outputs and the
//           readers poll every output until it is no longer the poison the
//           host filled it with (the mega-kernel's batch-1 hop between two
//           linears today), the baseline the reductions add to;
//   counted fixed point: each writer adds 2^56 + its partial in fixed point
//           (2^-24 units, biased by 2^48 to stay positive) into a u64 per
//           output (red.global.add.u64): the top byte counts the writers, so
//           a reader polls the values themselves until every count is W (no
//           arrival counter, no fence), and integer sums are the same in any
//           order (deterministic, unlike the float reductions).
// Each writer adds 1.0 to every output, so every sum must be exactly W (1.0
// in the bf16 hop). A reader issues all of a thread's loads before it uses
// any (a loop of load-then-store waits an L2 round trip per 128 sums: the
// first version's reader did).
//
//   nvcc -gencode=arch=compute_90a,code=sm_90a -std=c++17 -O3 -Iinclude \
//     gpu/tools/split_k_reduce.cu -o /tmp/split_k_reduce && /tmp/split_k_reduce
// With arguments WRITERS N [READERS] (at most 128, 4096 and 64) it times that
// point alone, e.g. `3 1536`: a 16-row, 96-column tile whose K is split over
// 3 workers; `128 1024 64`: Qwen3-0.6B's gate/up and down as one task on 128
// workers, read by 64 QKV tiles (compare `64 1024 64`'s bf16 hop).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "../tests/common.cuh"
#include "tawa/device/mega/poll.cuh"
#include "tawa/device/mega/sync.cuh"

namespace {

using tawa::device::mega::globalTimerNs;
using tawa::device::mega::kPoisonByte;
using tawa::device::mega::loadAcquire;
using tawa::device::mega::poisoned;
using tawa::device::mega::reduceAddRelease;

constexpr int kThreads = 128;
constexpr int kMaxReaders = 64;
/// Float4 (or 8-bf16) loads a reader thread holds: N <= 4096.
constexpr int kReadVecs = 8;

struct Run {
  float *acc;         ///< [N] (scalar, vector) or [W][N] (slots)
  uint16_t *hop;      ///< [N] bf16 outputs (bf16 hop)
  uint32_t *bad;      ///< sums a reader found wrong
  uint32_t *arrivals; ///< writers that have arrived
  uint32_t *go;       ///< the start flag
  uint64_t *times;    ///< [0] start, [1 + r] reader r's end
  unsigned long long *fixed; ///< [N] counted fixed-point sums
  int writers, n, mode, readers;
};

constexpr int kCountShift = 56;
constexpr int kFracBits = 24;
constexpr long long kBias = 1ll << 48;

/// Thread t's vectors t, t + kThreads, ... of `src` (those below `count`,
/// N at most) into v: all loaded at once, then those not yet `ready`
/// loaded again together until every one is.
template <int N, typename V, typename ReadyFn>
__device__ void pollVectors(V (&v)[N], const V *src, int count, ReadyFn ready) {
  uint32_t pending = 0;
#pragma unroll
  for (int j = 0; j < N; ++j)
    if (threadIdx.x + j * kThreads < count) {
      v[j] = __ldcg(src + threadIdx.x + j * kThreads);
      pending |= 1u << j;
    }
  for (;;) {
    uint32_t still = 0;
#pragma unroll
    for (int j = 0; j < N; ++j)
      if ((pending >> j & 1) && !ready(v[j]))
        still |= 1u << j;
    if (!still)
      return;
#pragma unroll
    for (int j = 0; j < N; ++j)
      if (still >> j & 1)
        v[j] = __ldcg(src + threadIdx.x + j * kThreads);
    pending = still;
  }
}

__device__ void pollFixed(const Run &r) {
  // Thread t's pairs of outputs are t, t + kThreads, ...: 16-byte loads.
  constexpr int kPairs = 2 * kReadVecs;
  ulonglong2 v[kPairs];
  const int pairs = r.n / 2;
  const ulonglong2 *src = reinterpret_cast<const ulonglong2 *>(r.fixed);
  const unsigned long long want = r.writers;
  auto done = [&](ulonglong2 q) {
    return (q.x >> kCountShift) == want && (q.y >> kCountShift) == want;
  };
  pollVectors(v, src, pairs, done);
  uint32_t bad = 0;
  const unsigned long long mask = (1ull << kCountShift) - 1;
#pragma unroll
  for (int j = 0; j < kPairs; ++j)
    if (threadIdx.x + j * kThreads < pairs) {
      const float a =
          float(double((long long)(v[j].x & mask) - r.writers * kBias) /
                double(1 << kFracBits));
      const float b =
          float(double((long long)(v[j].y & mask) - r.writers * kBias) /
                double(1 << kFracBits));
      bad += (a != float(r.writers)) + (b != float(r.writers));
    }
  if (bad)
    atomicAdd(r.bad, bad);
}

__device__ void readSums(const Run &r) {
  // Thread t's float4s are t, t + kThreads, ...: all loads first.
  float4 v[kReadVecs];
  const int vecs = r.n / 4;
#pragma unroll
  for (int j = 0; j < kReadVecs; ++j) {
    const int i = threadIdx.x + j * kThreads;
    v[j] = make_float4(0.f, 0.f, 0.f, 0.f);
    if (i < vecs) {
      if (r.mode == 2) {
        for (int k = 0; k < r.writers; ++k) {
          const float4 p = __ldcg(
              reinterpret_cast<const float4 *>(r.acc + size_t(k) * r.n) + i);
          v[j].x += p.x, v[j].y += p.y, v[j].z += p.z, v[j].w += p.w;
        }
      } else {
        v[j] = __ldcg(reinterpret_cast<const float4 *>(r.acc) + i);
      }
    }
  }
  uint32_t bad = 0;
  const float want = float(r.writers);
#pragma unroll
  for (int j = 0; j < kReadVecs; ++j)
    if (threadIdx.x + j * kThreads < vecs)
      bad += (v[j].x != want) + (v[j].y != want) + (v[j].z != want) +
             (v[j].w != want);
  if (bad)
    atomicAdd(r.bad, bad);
}

__device__ void pollHop(const Run &r) {
  // Thread t's 8-output pieces are t, t + kThreads, ...: all loaded at once,
  // the pieces still holding the poison loaded again together.
  uint4 v[kReadVecs];
  const int pieces = r.n / 8;
  const uint4 *src = reinterpret_cast<const uint4 *>(r.hop);
  pollVectors(v, src, pieces, [](uint4 q) { return !poisoned(q); });
  uint32_t bad = 0;
#pragma unroll
  for (int j = 0; j < kReadVecs; ++j)
    if (threadIdx.x + j * kThreads < pieces) {
      const uint32_t w[4] = {v[j].x, v[j].y, v[j].z, v[j].w};
      for (int e = 0; e < 4; ++e)
        bad += (w[e] != 0x3F803F80u);
    }
  if (bad)
    atomicAdd(r.bad, bad);
}

__global__ void __launch_bounds__(kThreads) reduceKernel(Run r) {
  const int w = blockIdx.x;
  if (w >= r.writers) { // a reader
    const int reader = w - r.writers;
    if (threadIdx.x == 0) {
      if (reader == 0) {
        r.times[0] = globalTimerNs();
        atomicExch(r.go, 1u);
      }
      if (r.mode < 3)
        while (loadAcquire(r.arrivals) < uint32_t(r.writers)) {
        }
    }
    __syncthreads();
    if (r.mode == 4)
      pollFixed(r);
    else if (r.mode == 3)
      pollHop(r);
    else
      readSums(r);
    __syncthreads();
    if (threadIdx.x == 0)
      r.times[1 + reader] = globalTimerNs();
    return;
  }
  if (threadIdx.x == 0)
    while (*(volatile uint32_t *)r.go == 0) {
    }
  __syncthreads();
  if (r.mode == 0) {
    for (int i = threadIdx.x; i < r.n; i += kThreads)
      asm volatile("red.global.add.f32 [%0], %1;" ::"l"(r.acc + i), "f"(1.f)
                   : "memory");
  } else if (r.mode == 1) {
    for (int i = threadIdx.x * 4; i < r.n; i += kThreads * 4)
      asm volatile(
          "red.global.add.v4.f32 [%0], {%1, %2, %3, %4};" ::"l"(r.acc + i),
          "f"(1.f), "f"(1.f), "f"(1.f), "f"(1.f)
          : "memory");
  } else if (r.mode == 2) {
    for (int i = threadIdx.x * 4; i < r.n; i += kThreads * 4)
      *reinterpret_cast<float4 *>(r.acc + size_t(w) * r.n + i) =
          make_float4(1.f, 1.f, 1.f, 1.f);
  } else if (r.mode == 4) {
    const float partial = 1.f;
    const unsigned long long term =
        (1ull << kCountShift) +
        (unsigned long long)(llrintf(partial * float(1 << kFracBits)) + kBias);
    for (int i = threadIdx.x; i < r.n; i += kThreads)
      asm volatile("red.global.add.u64 [%0], %1;" ::"l"(r.fixed + i), "l"(term)
                   : "memory");
    return; // no arrival: the counts in the values
  } else {
    // Writer w's share of the outputs, 8 bf16 ones (0x3F80) a store.
    const int share = r.n / r.writers, first = w * share;
    for (int i = threadIdx.x * 8; i < share; i += kThreads * 8)
      *reinterpret_cast<uint4 *>(r.hop + first + i) =
          make_uint4(0x3F803F80u, 0x3F803F80u, 0x3F803F80u, 0x3F803F80u);
    return; // no arrival: the readers poll the values
  }
  __syncthreads();
  if (threadIdx.x == 0)
    reduceAddRelease(r.arrivals, 1);
}

} // namespace

int main(int argc, char **argv) {
  const char *modes[] = {"scalar red.add.f32", "vector red.add.v4.f32",
                         "slots, reader adds", "bf16 hop (poll)",
                         "counted fixed point u64"};
  const int maxW = 128, maxN = 4096;
  std::vector<int> writerCounts{64, 96, 128}, outputCounts{1024, 2048, 4096};
  int readers = 1;
  if (argc == 3 || argc == 4) {
    const int w = std::atoi(argv[1]), n = std::atoi(argv[2]);
    readers = argc == 4 ? std::atoi(argv[3]) : 1;
    // N a multiple of 4: the vector mode adds 4 outputs at once.
    if (w < 1 || w > maxW || n < 4 || n > maxN || n % 4 != 0 || readers < 1 ||
        readers > kMaxReaders) {
      std::fprintf(stderr,
                   "usage: %s [WRITERS (1-%d) N (4-%d, a multiple of 4) "
                   "[READERS (1-%d)]]\n",
                   argv[0], maxW, maxN, kMaxReaders);
      return 2;
    }
    writerCounts = {w};
    outputCounts = {n};
  } else if (argc != 1) {
    std::fprintf(stderr, "usage: %s [WRITERS N [READERS]]\n", argv[0]);
    return 2;
  }
  float *acc;
  uint16_t *hop;
  uint32_t *flags;
  uint64_t *times;
  TAWA_CHECK_CUDA(cudaMalloc(&acc, sizeof(float) * maxW * maxN));
  TAWA_CHECK_CUDA(cudaMalloc(&hop, sizeof(uint16_t) * maxN));
  TAWA_CHECK_CUDA(cudaMalloc(&flags, 16));
  TAWA_CHECK_CUDA(cudaMalloc(&times, 8 * (1 + kMaxReaders)));
  unsigned long long *fixed;
  TAWA_CHECK_CUDA(cudaMalloc(&fixed, 8 * maxN));
  int failures = 0;
  std::printf("writers outputs readers mode                     median us  "
              "(min)\n");
  for (int writers : writerCounts)
    for (int n : outputCounts)
      for (int mode = 0; mode < 5; ++mode) {
        // The bf16 hop splits N evenly over the writers in 8-output stores.
        if (mode == 3 && n % (8 * writers) != 0)
          continue;
        std::vector<double> us;
        for (int rep = 0; rep < 21; ++rep) {
          TAWA_CHECK_CUDA(
              cudaMemset(acc, 0, sizeof(float) * size_t(writers) * n));
          TAWA_CHECK_CUDA(cudaMemset(hop, kPoisonByte, sizeof(uint16_t) * n));
          TAWA_CHECK_CUDA(cudaMemset(flags, 0, 16));
          TAWA_CHECK_CUDA(cudaMemset(fixed, 0, 8 * size_t(n)));
          Run r{acc,   hop,     flags + 2, flags, flags + 1, times,
                fixed, writers, n,         mode,  readers};
          reduceKernel<<<writers + readers, kThreads>>>(r);
          TAWA_CHECK_LAUNCH();
          TAWA_CHECK_CUDA(cudaDeviceSynchronize());
          std::vector<uint64_t> t(1 + readers);
          TAWA_CHECK_CUDA(cudaMemcpy(t.data(), times, 8 * t.size(),
                                     cudaMemcpyDeviceToHost));
          uint32_t bad = 0;
          TAWA_CHECK_CUDA(
              cudaMemcpy(&bad, flags + 2, 4, cudaMemcpyDeviceToHost));
          if (bad != 0 && failures++ < 5)
            std::printf("FAIL: %s, %d writers, %d outputs: %u wrong sums\n",
                        modes[mode], writers, n, bad);
          const uint64_t end = *std::max_element(t.begin() + 1, t.end());
          if (rep > 0) // the first launch is a warm-up
            us.push_back((end - t[0]) / 1e3);
        }
        std::sort(us.begin(), us.end());
        std::printf("%7d %7d %7d %-24s %9.2f (%6.2f)\n", writers, n, readers,
                    modes[mode], us[us.size() / 2], us[0]);
      }
  std::printf(failures ? "FAILED\n" : "all sums exact\n");
  return failures ? 1 : 0;
}
