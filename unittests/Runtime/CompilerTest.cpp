#include "tawa/runtime/Compiler.h"
#include "tawa/runtime/Error.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

using namespace tawa::runtime;
namespace fs = std::filesystem;

namespace {

const char *kSource = R"(
extern "C" __global__ void scale(float *x, float s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= s;
}
)";

class CompilerTest : public ::testing::Test {
protected:
  void SetUp() override {
    dir_ =
        fs::temp_directory_path() /
        ("tawa-cache-test-" +
         std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
         "-" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    options_.cacheDir = dir_.string();
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path dir_;
  CompileOptions options_;
};

TEST_F(CompilerTest, KeyIsStableAndCoversEveryInput) {
  auto opts = nvrtcOptionList(options_);
  std::string key = compileCacheKey(kSource, "scale.cu", opts);
  EXPECT_EQ(key.size(), 64u);
  EXPECT_EQ(key, compileCacheKey(kSource, "scale.cu", opts));
  EXPECT_NE(key, compileCacheKey(std::string(kSource) + " ", "scale.cu", opts));
  EXPECT_NE(key, compileCacheKey(kSource, "other.cu", opts));
  auto more = opts;
  more.push_back("-DX=1");
  EXPECT_NE(key, compileCacheKey(kSource, "scale.cu", more));
  CompileOptions sm100 = options_;
  sm100.arch = "sm_100a";
  EXPECT_NE(key, compileCacheKey(kSource, "scale.cu", nvrtcOptionList(sm100)));
}

TEST_F(CompilerTest, KeyCoversDeviceHeaders) {
  // Point the device include dir at a private tree and edit a header in it.
  fs::path inc = dir_ / "include";
  fs::create_directories(inc / "tawa" / "device");
  std::ofstream(inc / "tawa" / "device" / "x.cuh") << "// v1\n";
  ASSERT_EQ(setenv("TAWA_INCLUDE_DIR", inc.c_str(), 1), 0);
  auto opts = nvrtcOptionList(options_);
  std::string k1 = compileCacheKey(kSource, "scale.cu", opts);
  std::ofstream(inc / "tawa" / "device" / "x.cuh") << "// v2\n";
  std::string k2 = compileCacheKey(kSource, "scale.cu", opts);
  unsetenv("TAWA_INCLUDE_DIR");
  EXPECT_NE(k1, k2);
  EXPECT_EQ(opts[2], "-I" + inc.string());
}

TEST_F(CompilerTest, OptionListHasArchAndIncludes) {
  options_.extraOptions = {"-lineinfo"};
  auto opts = nvrtcOptionList(options_);
  ASSERT_GE(opts.size(), 5u);
  EXPECT_EQ(opts[0], "--gpu-architecture=sm_90a");
  EXPECT_EQ(opts[1], "-std=c++17");
  EXPECT_EQ(opts[2].rfind("-I", 0), 0u);
  EXPECT_TRUE(fs::exists(opts[2].substr(2) + "/tawa")) << opts[2];
  EXPECT_TRUE(fs::exists(opts[3].substr(2) + "/cuda.h")) << opts[3];
  EXPECT_EQ(opts.back(), "-lineinfo");
}

TEST_F(CompilerTest, MissThenHitOnDisk) {
  CompileResult first = compileCuda(kSource, "scale.cu", options_);
  EXPECT_FALSE(first.cacheHit);
  ASSERT_GT(first.cubin.size(), 4u);
  EXPECT_EQ(std::string(first.cubin.data() + 1, 3), "ELF");
  EXPECT_EQ(first.cachePath, (dir_ / (first.key + ".cubin")).string());
  ASSERT_TRUE(fs::exists(first.cachePath));
  EXPECT_EQ(fs::file_size(first.cachePath), first.cubin.size());

  CompileResult second = compileCuda(kSource, "scale.cu", options_);
  EXPECT_TRUE(second.cacheHit);
  EXPECT_EQ(second.key, first.key);
  EXPECT_EQ(second.cubin, first.cubin);

  // A damaged entry is not trusted: it is recompiled and rewritten.
  std::ofstream(first.cachePath, std::ios::trunc) << "garbage";
  CompileResult third = compileCuda(kSource, "scale.cu", options_);
  EXPECT_FALSE(third.cacheHit);
  EXPECT_EQ(fs::file_size(first.cachePath), first.cubin.size());

  // With the cache off nothing is read.
  CompileOptions off = options_;
  off.useCache = false;
  EXPECT_FALSE(compileCuda(kSource, "scale.cu", off).cacheHit);

  // No temporary files are left behind.
  size_t files = 0;
  for (const auto &e : fs::directory_iterator(dir_)) {
    EXPECT_EQ(e.path().extension(), ".cubin") << e.path();
    ++files;
  }
  EXPECT_EQ(files, 1u);
}

TEST_F(CompilerTest, CompileErrorCarriesLog) {
  try {
    compileCuda("extern \"C\" __global__ void k() { undefined_thing(); }",
                "broken.cu", options_);
    FAIL() << "compiled broken source";
  } catch (const Error &e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("nvrtcCompileProgram failed"), std::string::npos) << msg;
    EXPECT_NE(msg.find("broken.cu"), std::string::npos) << msg;
    EXPECT_NE(msg.find("undefined_thing"), std::string::npos) << msg;
  }
  EXPECT_FALSE(fs::exists(dir_) && !fs::is_empty(dir_));
}

TEST_F(CompilerTest, CompilesTheRuntimeCheckKernel) {
  std::ifstream in(std::string(TAWA_RUNTIME_KERNELS_DIR) + "/tma_copy.cu");
  std::string src((std::istreambuf_iterator<char>(in)),
                  std::istreambuf_iterator<char>());
  ASSERT_FALSE(src.empty());
  options_.extraOptions = {"-DBOX_ROWS=64", "-DBOX_COLS=32", "-DELEM_BYTES=4",
                           "-DSWIZZLE_BITS=3"};
  CompileResult r = compileCuda(src, "tma_copy.cu", options_);
  EXPECT_GT(r.cubin.size(), 1000u);
}

TEST(CacheDir, FollowsEnvironment) {
  const char *saved = std::getenv("TAWA_CACHE_DIR");
  std::string keep = saved ? saved : "";
  setenv("TAWA_CACHE_DIR", "/tmp/somewhere", 1);
  EXPECT_EQ(defaultCacheDir(), "/tmp/somewhere");
  unsetenv("TAWA_CACHE_DIR");
  setenv("XDG_CACHE_HOME", "/tmp/xdg", 1);
  EXPECT_EQ(defaultCacheDir(), "/tmp/xdg/tawa");
  unsetenv("XDG_CACHE_HOME");
  if (const char *home = std::getenv("HOME"))
    EXPECT_EQ(defaultCacheDir(), std::string(home) + "/.cache/tawa");
  if (saved)
    setenv("TAWA_CACHE_DIR", keep.c_str(), 1);
}

} // namespace
