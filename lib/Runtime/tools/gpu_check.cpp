//===- gpu_check.cpp - Runtime self-check on a real GPU
//--------------------===//
//
// Exercises the whole runtime path on an sm_90 GPU: metadata with "source"
// (NVRTC + cache), tensor-map encoding for several dtypes, swizzles and
// out-of-bounds fills, >48 KiB dynamic shared memory, clusters, tiles and
// persistent grids. Without a driver it exits 77 (CTest's skip) so CPU-only
// builds stay green, unless TAWA_REQUIRE_GPU=1 (scripts/gpu-suite.sh), where
// a missing GPU is a failure. Prints one line per case, then
// "N passed, N failed".
//
//===----------------------------------------------------------------------===//

#include "tawa/runtime/Driver.h"
#include "tawa/runtime/Error.h"
#include "tawa/runtime/Kernel.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

using namespace tawa::runtime;

namespace {

struct Case {
  const char *metadata;
  int rows, cols, pitch;
};

struct DeviceBuffer {
  CUdeviceptr ptr = 0;
  size_t bytes = 0;
  explicit DeviceBuffer(size_t n) : bytes(n) {
    TAWA_CU_CHECK(Driver::get().cuMemAlloc(&ptr, n), std::to_string(n) + " B");
  }
  ~DeviceBuffer() {
    if (ptr)
      Driver::get().cuMemFree(ptr);
  }
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;
};

uint32_t loadElem(const std::vector<uint8_t> &buf, size_t index,
                  unsigned bytes) {
  uint32_t v = 0;
  std::memcpy(&v, buf.data() + index * bytes, bytes);
  return v;
}

bool isNanBits(uint32_t v, DType t) {
  switch (t) {
  case DType::F32:
    return (v & 0x7f800000u) == 0x7f800000u && (v & 0x007fffffu);
  case DType::F16:
    return (v & 0x7c00u) == 0x7c00u && (v & 0x03ffu);
  case DType::BF16:
    return (v & 0x7f80u) == 0x7f80u && (v & 0x007fu);
  default:
    return false;
  }
}

/// Whether column `col` (>= cols) lies in the 16-byte chunk that holds the
/// row's last element.
bool inChunkTail(size_t col, size_t cols, unsigned elemBytes) {
  size_t perChunk = 16 / elemBytes;
  return col < (cols + perChunk - 1) / perChunk * perChunk;
}

/// Random finite element bits (never NaN/Inf, so a NaN fill is recognizable).
uint32_t randomElem(std::mt19937 &rng, DType t) {
  uint32_t v = rng();
  switch (t) {
  case DType::F32:
    return ((v >> 23) & 0xff) == 0xff ? v & 0xbfffffffu : v;
  case DType::F16:
    v &= 0xffffu;
    return ((v >> 10) & 0x1f) == 0x1f ? v & 0xbfffu : v;
  case DType::BF16:
    v &= 0xffffu;
    return ((v >> 7) & 0xff) == 0xff ? v & 0xbfffu : v;
  default:
    return v;
  }
}

/// Runs one case; returns an empty string on success, else what went wrong.
std::string runCase(const Case &c, std::mt19937 &rng) {
  Driver &d = Driver::get();
  Kernel k =
      Kernel::load(std::string(TAWA_RUNTIME_KERNELS_DIR) + "/" + c.metadata);
  const TensorMapParam &tp = k.metadata().params[0].tensor;
  const DType dt = tp.dtype;
  const unsigned eb = dtypeInfo(dt).bytes;
  const int boxR = tp.box[0], boxC = tp.box[1];
  const int tilesX = (c.cols + boxC - 1) / boxC,
            tilesY = (c.rows + boxR - 1) / boxR;
  const size_t dumpRows = size_t(tilesY) * boxR,
               dumpCols = size_t(tilesX) * boxC;
  const size_t n = size_t(c.rows) * c.pitch;

  std::vector<uint8_t> hin(n * eb);
  for (size_t i = 0; i < n; ++i) {
    uint32_t v = randomElem(rng, dt);
    std::memcpy(hin.data() + i * eb, &v, eb);
  }
  DeviceBuffer in(n * eb), out(n * eb), dump(dumpRows * dumpCols * eb);
  TAWA_CU_CHECK(d.cuMemcpyHtoD(in.ptr, hin.data(), hin.size()), "input");
  // Poison: 0xff bytes are NaN in every float type; 0xab marks unwritten dump.
  TAWA_CU_CHECK(d.cuMemsetD8(out.ptr, 0xff, out.bytes), "poison out");
  TAWA_CU_CHECK(d.cuMemsetD8(dump.ptr, 0xab, dump.bytes), "poison dump");

  auto tensor = [&](CUdeviceptr p) {
    return KernelArg::tensor(TensorDesc{p, dt, {c.rows, c.cols}, {c.pitch, 1}});
  };
  std::vector<KernelArg> args = {
      tensor(in.ptr), tensor(out.ptr), KernelArg::integer(int64_t(dump.ptr)),
      KernelArg::integer(c.rows), KernelArg::integer(c.cols)};
  LaunchDims dims = k.launchDims(args);
  k.launch(args, nullptr);
  TAWA_CU_CHECK(d.cuCtxSynchronize(), std::string("after ") + c.metadata);

  std::vector<uint8_t> hout(out.bytes), hdump(dump.bytes);
  TAWA_CU_CHECK(d.cuMemcpyDtoH(hout.data(), out.ptr, out.bytes), "out");
  TAWA_CU_CHECK(d.cuMemcpyDtoH(hdump.data(), dump.ptr, dump.bytes), "dump");

  char buf[256];
  const uint32_t poison = eb == 4 ? 0xffffffffu : 0xffffu;
  for (int r = 0; r < c.rows; ++r)
    for (int col = 0; col < c.pitch; ++col) {
      size_t i = size_t(r) * c.pitch + col;
      uint32_t got = loadElem(hout, i, eb);
      uint32_t want = col < c.cols ? loadElem(hin, i, eb) : poison;
      // TMA stores write whole 16-byte chunks: the rest of a row's last
      // chunk may receive the box's out-of-bounds (fill) bytes.
      bool chunkTail = col >= c.cols && inChunkTail(col, c.cols, eb);
      if (chunkTail && (got == 0 || isNanBits(got, dt)))
        continue;
      if (got != want) {
        std::snprintf(buf, sizeof buf, "out[%d][%d] = 0x%x, want 0x%x (%s)", r,
                      col, got, want,
                      col < c.cols ? "copy" : "padding must stay untouched");
        return buf;
      }
    }
  for (size_t r = 0; r < dumpRows; ++r)
    for (size_t col = 0; col < dumpCols; ++col) {
      uint32_t got = loadElem(hdump, r * dumpCols + col, eb);
      bool inside = r < size_t(c.rows) && col < size_t(c.cols);
      bool ok = inside ? got == loadElem(hin, r * c.pitch + col, eb)
                : tp.oob == OobFill::Nan ? isNanBits(got, dt)
                                         : got == 0;
      if (!ok) {
        std::snprintf(buf, sizeof buf, "dump[%zu][%zu] = 0x%x (%s)", r, col,
                      got,
                      inside ? "shared-memory tile differs from input"
                             : "wrong out-of-bounds fill");
        return buf;
      }
    }
  std::printf("  grid (%u, %u, %u) cluster (%u, %u, %u) tiles %llu, ",
              dims.grid[0], dims.grid[1], dims.grid[2], dims.cluster[0],
              dims.cluster[1], dims.cluster[2],
              static_cast<unsigned long long>(dims.tiles));
  return "";
}

uint16_t floatToHalf(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u;
  int exp = int((x >> 23) & 0xff) - 127 + 15;
  uint32_t mant = x & 0x7fffffu;
  if (((x >> 23) & 0xff) == 0xff)
    return uint16_t(sign | 0x7c00u | (mant ? 0x200u : 0u));
  if (exp >= 31)
    return uint16_t(sign | 0x7c00u);
  if (exp <= 0) { // subnormal half, round to nearest even
    if (exp < -10)
      return uint16_t(sign);
    mant |= 0x800000u;
    int shift = 14 - exp;
    uint32_t h = mant >> shift, rem = mant & ((1u << shift) - 1),
             mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (h & 1)))
      ++h;
    return uint16_t(sign | h);
  }
  uint32_t h = (uint32_t(exp) << 10) | (mant >> 13), rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1)))
    ++h; // a carry into the exponent is the correct rounding
  return uint16_t(sign | h);
}

float halfToFloat(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1f, mant = h & 0x3ffu;
  if (exp == 0) {
    float v = std::ldexp(float(mant), -24);
    return sign ? -v : v;
  }
  uint32_t bits = exp == 31 ? sign | 0x7f800000u | (mant << 13)
                            : sign | ((exp - 15 + 127) << 23) | (mant << 13);
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

/// The reference GEMM (C = A B^T, fp16) launched through the runtime from its
/// metadata, checked against a double-precision host product.
std::string runGemm(const Kernel &k, int m, int n, int kk, std::mt19937 &rng) {
  Driver &d = Driver::get();
  const int pitch = (n + 7) / 8 * 8; // 16-byte rows for the C tensor map
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  std::vector<uint16_t> a(size_t(m) * kk), b(size_t(n) * kk);
  for (auto &v : a)
    v = floatToHalf(dist(rng));
  for (auto &v : b)
    v = floatToHalf(dist(rng));
  DeviceBuffer da(a.size() * 2), db(b.size() * 2), dc(size_t(m) * pitch * 2);
  TAWA_CU_CHECK(d.cuMemcpyHtoD(da.ptr, a.data(), da.bytes), "A");
  TAWA_CU_CHECK(d.cuMemcpyHtoD(db.ptr, b.data(), db.bytes), "B");
  TAWA_CU_CHECK(d.cuMemsetD8(dc.ptr, 0xff, dc.bytes), "poison C");
  k.launch({KernelArg::tensor({da.ptr, DType::F16, {m, kk}, {kk, 1}}),
            KernelArg::tensor({db.ptr, DType::F16, {n, kk}, {kk, 1}}),
            KernelArg::tensor({dc.ptr, DType::F16, {m, n}, {pitch, 1}}),
            KernelArg::integer(m), KernelArg::integer(n),
            KernelArg::integer(kk)});
  TAWA_CU_CHECK(d.cuCtxSynchronize(), "after GEMM");
  std::vector<uint16_t> c(size_t(m) * pitch);
  TAWA_CU_CHECK(d.cuMemcpyDtoH(c.data(), dc.ptr, dc.bytes), "C");
  double num = 0, den = 0;
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < pitch; ++j) {
      uint16_t got = c[size_t(i) * pitch + j];
      if (j >= n) {
        // Only the rest of the row's last 16-byte chunk may be written (TMA
        // stores whole chunks), and then only with the zeros of the
        // out-of-bounds part of the tile.
        bool tail = inChunkTail(j, n, 2);
        if (got != 0xffff && !(tail && (got == 0 || got == 0x8000)))
          return "padding C[" + std::to_string(i) + "][" + std::to_string(j) +
                 "] = 0x" + std::to_string(got) + " was written" +
                 (tail ? " with a non-zero value" : " past the last chunk");
        continue;
      }
      double ref = 0;
      for (int p = 0; p < kk; ++p)
        ref += double(halfToFloat(a[size_t(i) * kk + p])) *
               halfToFloat(b[size_t(j) * kk + p]);
      float v = halfToFloat(got);
      if (!std::isfinite(v))
        return "C[" + std::to_string(i) + "][" + std::to_string(j) +
               "] is not finite (unwritten?)";
      num += (v - ref) * (v - ref);
      den += ref * ref;
    }
  double rel = std::sqrt(num / den);
  std::printf("  rel err %.2e, ", rel);
  if (!(rel < 1e-2))
    return "relative error " + std::to_string(rel) + " >= 1e-2";
  return "";
}

} // namespace

int main(int argc, char **argv) {
  bool small = false, errorCases = true;
  std::string gemm;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--small"))
      small = true;
    // Under compute-sanitizer every failing driver call counts as an error,
    // including the ones this check provokes on purpose.
    else if (!std::strcmp(argv[i], "--no-error-cases"))
      errorCases = false;
    else if (!std::strcmp(argv[i], "--gemm") && i + 1 < argc)
      gemm = argv[++i];
    else {
      std::fprintf(
          stderr,
          "usage: %s [--small] [--no-error-cases] [--gemm ref_gemm.json]\n",
          argv[0]);
      return 2;
    }
  }
  std::string why;
  if (!Driver::available(&why)) {
    std::printf("tawa-runtime-gpu-check: no usable CUDA driver: %s\n",
                why.c_str());
    const char *require = std::getenv("TAWA_REQUIRE_GPU");
    if (!require || std::string(require) != "1")
      return 77;
    std::printf("0 passed, 1 failed\n");
    return 1;
  }
  unsigned seed = std::random_device{}();
  std::printf("tawa-runtime-gpu-check: seed %u, %u SMs\n", seed,
              currentDeviceSmCount());
  std::mt19937 rng(seed);
  const Case cases[] = {
      {"copy_f32_none.json", 1000, 1000, 1000},
      {"copy_f32_none.json", 1, 4, 4},
      {"copy_f32_sw128_nan.json", 257, 300, 304},
      {"copy_f16_sw64_cluster2.json", 33, 40, 40},
      {"copy_f16_sw64_cluster2.json", 100, 72, 80},
      {"copy_f16_sw64_cluster2.json", 33, 37, 40}, // partial last chunk
      {"copy_bf16_sw32.json", 1000, 1000, 1000},
      {"copy_bf16_sw32.json", 5, 8, 8},
  };
  int passed = 0, failed = 0;
  for (const Case &c : cases) {
    if (small && size_t(c.rows) * c.cols > 10000)
      continue;
    std::printf("%s %dx%d (pitch %d):\n", c.metadata, c.rows, c.cols, c.pitch);
    std::string err;
    try {
      err = runCase(c, rng);
    } catch (const std::exception &e) {
      err = e.what();
    }
    if (err.empty()) {
      std::printf("PASS\n");
      ++passed;
    } else {
      std::printf("FAIL: %s\n", err.c_str());
      ++failed;
    }
  }
  // Errors must name the failing call and the missing symbol.
  if (errorCases) {
    std::printf("missing entry point reports the symbol: ");
    try {
      KernelMetadata md = loadMetadataFile(
          std::string(TAWA_RUNTIME_KERNELS_DIR) + "/copy_f32_none.json");
      std::string src = md.resolve(md.source);
      CompileOptions opts;
      opts.extraOptions = md.nvrtcOptions;
      std::FILE *f = std::fopen(src.c_str(), "rb");
      std::string text;
      for (int ch; f && (ch = std::fgetc(f)) != EOF;)
        text += static_cast<char>(ch);
      if (f)
        std::fclose(f);
      CompileResult r = compileCuda(text, src, opts);
      md.kernel = "no_such_kernel";
      Kernel::fromImage(md, r.cubin);
      std::printf("FAIL: loading succeeded\n");
      ++failed;
    } catch (const Error &e) {
      bool ok = std::strstr(e.what(), "cuModuleGetFunction") &&
                std::strstr(e.what(), "CUDA_ERROR_NOT_FOUND") &&
                std::strstr(e.what(), "no_such_kernel");
      std::printf("%s (%s)\n", ok ? "PASS" : "FAIL", e.what());
      ++(ok ? passed : failed);
    }
  }
  if (!gemm.empty()) {
    const int shapes[][3] = {
        {1, 1, 8}, {127, 255, 72}, {200, 300, 136}, {129, 520, 1032}};
    try {
      Kernel k = Kernel::load(gemm);
      for (const auto &s : shapes) {
        if (small && s[0] * s[1] > 60000)
          continue;
        std::printf("ref GEMM via runtime M=%d N=%d K=%d:", s[0], s[1], s[2]);
        std::string err;
        try {
          err = runGemm(k, s[0], s[1], s[2], rng);
        } catch (const std::exception &e) {
          err = e.what();
        }
        std::printf("%s%s\n", err.empty() ? "PASS" : "FAIL: ", err.c_str());
        ++(err.empty() ? passed : failed);
      }
    } catch (const std::exception &e) {
      std::printf("FAIL: loading %s: %s\n", gemm.c_str(), e.what());
      ++failed;
    }
  }
  std::printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
