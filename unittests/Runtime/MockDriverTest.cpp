// Launch-path tests against the recording mock driver (MockCuda.cpp), run
// with the mock first on LD_LIBRARY_PATH. Each test resets the mock's state.
#include "MockCuda.h"
#include "tawa/runtime/Driver.h"
#include "tawa/runtime/Error.h"
#include "tawa/runtime/Kernel.h"

#include <gtest/gtest.h>

#include <dlfcn.h>

#include <cstring>
#include <filesystem>
#include <fstream>

using namespace tawa::runtime;
namespace fs = std::filesystem;

namespace {

MockState *mock() {
  if (!Driver::available())
    return nullptr;
  void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  auto fn = h ? reinterpret_cast<MockState *(*)()>(dlsym(h, "tawa_mock_state"))
              : nullptr;
  return fn ? fn() : nullptr;
}

class MockDriverTest : public ::testing::Test {
protected:
  void SetUp() override {
    state_ = mock();
    if (!state_)
      GTEST_SKIP() << "the mock libcuda.so.1 is not the loaded driver";
    *state_ = MockState();
    dir_ =
        fs::temp_directory_path() /
        ("tawa-mock-" +
         std::string(
             ::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::create_directories(dir_);
    std::ofstream(dir_ / "k.cubin", std::ios::binary) << "\x7f"
                                                         "ELF fake image";
  }
  void TearDown() override {
    if (!dir_.empty())
      fs::remove_all(dir_);
  }

  std::string write(const std::string &grid, const std::string &cluster,
                    unsigned smem, const char *kernel = "gemm") {
    std::ofstream(dir_ / "k.json") << R"({"format": "tawa-kernel-metadata/1",
      "kernel": ")" << kernel << R"(", "cubin": "k.cubin",
      "block": [384, 1, 1], "cluster": )"
                                   << cluster << R"(,
      "dynamic_smem_bytes": )" << smem
                                   << R"(,
      "grid": )" << grid << R"(,
      "params": [
        {"name": "a", "kind": "tensormap", "dtype": "f16", "box": [128, 64], "swizzle": "128B"},
        {"name": "c", "kind": "tensormap", "dtype": "f32", "box": [64, 32], "swizzle": "none", "oob": "nan"},
        {"name": "p", "kind": "ptr"},
        {"name": "M", "kind": "i32"},
        {"name": "N", "kind": "i64"},
        {"name": "alpha", "kind": "f32"}]})";
    return (dir_ / "k.json").string();
  }

  static constexpr const char *kPersistent =
      R"({"kind": "persistent", "x": [{"param": "M", "size": 128}, {"param": "N", "size": 256}]})";
  static constexpr const char *kTiles =
      R"({"kind": "tiles", "x": [{"param": "N", "size": 256}], "y": [{"param": "M", "size": 128}]})";

  std::vector<KernelArg> args(int64_t m, int64_t n) {
    return {KernelArg::tensor({0x100000, DType::F16, {m, 72}, {72, 1}}),
            KernelArg::tensor({0x200000, DType::F32, {m, n}, {n + 4, 1}}),
            KernelArg::integer(0x300000),
            KernelArg::integer(m),
            KernelArg::integer(n),
            KernelArg::floating(0.5)};
  }

  MockState *state_ = nullptr;
  fs::path dir_;
};

TEST_F(MockDriverTest, LoadSetsDynamicSharedMemory) {
  {
    Kernel k = Kernel::load(write(kPersistent, "[1, 1, 1]", 200000));
    EXPECT_EQ(state_->modulesLoaded, 1);
    EXPECT_EQ(state_->maxDynamicSmem, 200000);
  }
  EXPECT_EQ(state_->modulesUnloaded, 1); // the destructor unloads
}

TEST_F(MockDriverTest, LaunchMarshalsEverything) {
  Kernel k = Kernel::load(write(kPersistent, "[1, 1, 1]", 1024));
  state_->paramCount = 6;
  int streamTag;
  k.launch(args(1000, 1000), reinterpret_cast<CUstream>(&streamTag));
  ASSERT_EQ(state_->numLaunches, 1);
  const MockLaunch &l = state_->launches[0];
  EXPECT_EQ(l.grid[0], 32u); // 8 x 4 tiles, fewer than 132 SMs
  EXPECT_EQ(l.grid[1], 1u);
  EXPECT_EQ(l.block[0], 384u);
  EXPECT_EQ(l.smem, 1024u);
  EXPECT_EQ(l.stream, reinterpret_cast<CUstream>(&streamTag));
  EXPECT_EQ(l.numAttrs, 0u);
  EXPECT_FALSE(l.hasExtra);
  // Tensor maps are passed by pointer to 64-byte-aligned storage.
  EXPECT_EQ(reinterpret_cast<uintptr_t>(l.paramAddr[0]) % 64, 0u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(l.paramAddr[1]) % 64, 0u);
  EXPECT_EQ(l.paramWord[0], 0x100000u);
  EXPECT_EQ(l.paramWord[1], 0x200000u);
  EXPECT_EQ(l.paramWord[2], 0x300000u);
  EXPECT_EQ(static_cast<uint32_t>(l.paramWord[3]), 1000u);
  EXPECT_EQ(l.paramWord[4], 1000u);
  float alpha;
  std::memcpy(&alpha, &l.paramWord[5], 4);
  EXPECT_EQ(alpha, 0.5f);

  ASSERT_EQ(state_->numEncodes, 2);
  const MockEncode &a = state_->encodes[0], &c = state_->encodes[1];
  EXPECT_EQ(a.type, CU_TENSOR_MAP_DATA_TYPE_FLOAT16);
  EXPECT_EQ(a.dim[0], 72u);
  EXPECT_EQ(a.dim[1], 1000u);
  EXPECT_EQ(a.stride[0], 144u);
  EXPECT_EQ(a.box[0], 64u);
  EXPECT_EQ(a.box[1], 128u);
  EXPECT_EQ(a.swizzle, CU_TENSOR_MAP_SWIZZLE_128B);
  EXPECT_EQ(a.oob, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  EXPECT_EQ(c.type, CU_TENSOR_MAP_DATA_TYPE_FLOAT32);
  EXPECT_EQ(c.stride[0], 1004u * 4);
  EXPECT_EQ(c.swizzle, CU_TENSOR_MAP_SWIZZLE_NONE);
  EXPECT_EQ(c.oob, CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA);
}

TEST_F(MockDriverTest, PersistentGridUsesDeviceSmCount) {
  state_->smCount = 114;
  Kernel k = Kernel::load(write(kPersistent, "[1, 1, 1]", 0));
  k.launch(args(8192, 8192));
  EXPECT_EQ(state_->launches[0].grid[0], 114u);
  EXPECT_EQ(k.launchDims(args(8192, 8192)).tiles, 64u * 32u);
}

TEST_F(MockDriverTest, ClusterAttributeAndTilesGrid) {
  Kernel k = Kernel::load(write(kTiles, "[2, 1, 1]", 0));
  k.launch(args(300, 700));
  const MockLaunch &l = state_->launches[0];
  EXPECT_EQ(l.grid[0], 4u); // 3 column tiles rounded up to whole clusters
  EXPECT_EQ(l.grid[1], 3u);
  EXPECT_EQ(l.numAttrs, 1u);
  EXPECT_EQ(l.cluster[0], 2u);
  EXPECT_EQ(l.cluster[1], 1u);
}

TEST_F(MockDriverTest, PreparedLaunchEncodesOnce) {
  Kernel k = Kernel::load(write(kPersistent, "[1, 1, 1]", 0));
  state_->paramCount = 2;
  PreparedLaunch p = k.prepare(args(256, 512));
  EXPECT_EQ(state_->numEncodes, 2);
  EXPECT_EQ(state_->numLaunches, 0);
  p.launch();
  p.launch();
  PreparedLaunch moved = std::move(p);
  moved.launch();
  EXPECT_EQ(state_->numEncodes, 2);
  ASSERT_EQ(state_->numLaunches, 3);
  EXPECT_EQ(state_->launches[2].paramWord[1], 0x200000u);
  EXPECT_EQ(state_->launches[2].paramAddr[0], state_->launches[0].paramAddr[0]);
}

TEST_F(MockDriverTest, PreparedLaunchKeepsAnExplicitGrid) {
  Kernel k = Kernel::load(write(kPersistent, "[1, 1, 1]", 0));
  PreparedLaunch p = k.prepare(args(256, 512), ExplicitGrid{7, 2, 1});
  p.launch();
  ASSERT_EQ(state_->numLaunches, 1);
  EXPECT_EQ(state_->launches[0].grid[0], 7u);
  EXPECT_EQ(state_->launches[0].grid[1], 2u);
  EXPECT_EQ(state_->launches[0].grid[2], 1u);
}

TEST_F(MockDriverTest, ProgramsGridFillsTheKernelsProgramCounts) {
  // A persistent kernel made from a one-program-per-tile Triton kernel: the
  // caller passes Triton's grid of programs, the runtime launches one CTA
  // per SM (at most) and hands the program grid to the kernel.
  std::ofstream(dir_ / "p.json") << R"({"format": "tawa-kernel-metadata/1",
    "kernel": "gemm", "cubin": "k.cubin", "block": [384, 1, 1],
    "dynamic_smem_bytes": 1024, "grid": {"kind": "programs"},
    "params": [{"name": "M", "kind": "i32"},
               {"name": "num_programs_x", "kind": "num_programs", "axis": "x"},
               {"name": "N", "kind": "i32"},
               {"name": "num_programs_y", "kind": "num_programs", "axis": "y"},
               {"name": "num_programs_z", "kind": "num_programs", "axis": "z"}]})";
  std::ofstream(dir_ / "k.cubin") << "\x7f" "ELF";
  Kernel k = Kernel::load((dir_ / "p.json").string());
  state_->paramCount = 5;
  std::vector<KernelArg> a = {KernelArg::integer(7), KernelArg::integer(9)};
  k.launch(a, ExplicitGrid{64, 40, 2});
  ASSERT_EQ(state_->numLaunches, 1);
  const MockLaunch &l = state_->launches[0];
  EXPECT_EQ(l.grid[0], 132u); // 5120 programs on 132 SMs
  EXPECT_EQ(l.grid[1], 1u);
  EXPECT_EQ(static_cast<uint32_t>(l.paramWord[0]), 7u);
  EXPECT_EQ(static_cast<uint32_t>(l.paramWord[1]), 64u);
  EXPECT_EQ(static_cast<uint32_t>(l.paramWord[2]), 9u);
  EXPECT_EQ(static_cast<uint32_t>(l.paramWord[3]), 40u);
  EXPECT_EQ(static_cast<uint32_t>(l.paramWord[4]), 2u);
  k.launch(a, ExplicitGrid{3, 1, 1}); // fewer programs than SMs
  EXPECT_EQ(state_->launches[1].grid[0], 3u);
  // The caller passes only its own arguments, and always a grid.
  EXPECT_THROW(k.launch({KernelArg::integer(7)}, ExplicitGrid{1, 1, 1}),
               Error);
  EXPECT_THROW(k.launch(a), Error);
}

TEST_F(MockDriverTest, EmptyProblemLaunchesNothing) {
  Kernel k = Kernel::load(write(kPersistent, "[1, 1, 1]", 0));
  // M = 0 cannot be described by a tensor map (extent 0), so only N = 0 is
  // a launchable empty problem here.
  std::vector<KernelArg> a = args(16, 0);
  a[1] = KernelArg::tensor({0x200000, DType::F32, {16, 4}, {4, 1}});
  k.launch(a);
  EXPECT_EQ(state_->numLaunches, 0);
}

TEST_F(MockDriverTest, ErrorsNameCallAndContext) {
  auto errorOf = [](auto &&fn) -> std::string {
    try {
      fn();
    } catch (const Error &e) {
      return e.what();
    }
    return "<no error>";
  };
  EXPECT_EQ(
      errorOf([&] {
        Kernel::load(write(kPersistent, "[1, 1, 1]", 0, "missing_kernel"));
      }),
      "cuModuleGetFunction failed: CUDA_ERROR_NOT_FOUND (mock driver) [the "
      "CUBIN has no entry 'missing_kernel'; is it declared extern \"C\" "
      "__global__?]");
  state_->staticSmem = 4096;
  EXPECT_EQ(
      errorOf([&] { Kernel::load(write(kPersistent, "[1, 1, 1]", 230000)); }),
      "kernel gemm: 4096 B static + 230000 B dynamic shared memory exceeds "
      "the device's per-block limit of 232448 B");
  state_->staticSmem = 0;
  state_->maxThreads = 256;
  EXPECT_EQ(
      errorOf([&] { Kernel::load(write(kPersistent, "[1, 1, 1]", 0)); }),
      "kernel gemm: metadata asks for 384 threads per CTA but the compiled "
      "function allows at most 256 (check __launch_bounds__ and register use)");
  state_->maxThreads = 1024;
  std::ofstream(dir_ / "k.cubin", std::ios::trunc) << "not an image";
  EXPECT_EQ(errorOf([&] { Kernel::load(write(kPersistent, "[1, 1, 1]", 0)); }),
            "cuModuleLoadData failed: CUDA_ERROR_UNKNOWN (mock driver) [kernel "
            "gemm]");
  std::ofstream(dir_ / "k.cubin", std::ios::binary | std::ios::trunc) << "\x7f"
                                                                         "ELF";
  Kernel k = Kernel::load(write(kPersistent, "[1, 1, 1]", 0));
  state_->switchContext = true;
  EXPECT_EQ(errorOf([&] { k.launch(args(128, 256)); }),
            "gemm: launched from a thread whose current context is not the one "
            "the kernel was loaded into");
  state_->switchContext = false;
  fs::remove(dir_ / "k.cubin");
  EXPECT_NE(errorOf([&] {
              Kernel::load(write(kPersistent, "[1, 1, 1]", 0));
            }).find("cannot open CUBIN"),
            std::string::npos);
}

} // namespace
