#include "tawa/runtime/Compiler.h"
#include "tawa/runtime/tawa_runtime.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

namespace {

TEST(CApi, Versions) {
  EXPECT_EQ(tawa_c_api_version(), TAWA_C_API_VERSION);
  EXPECT_STREQ(tawa_runtime_version(), tawa::runtime::runtimeVersion());
}

TEST(CApi, LoadFailureSetsLastError) {
  tawa_kernel *k = nullptr;
  EXPECT_EQ(tawa_kernel_load("/nonexistent/k.json", nullptr, &k), -1);
  EXPECT_EQ(k, nullptr);
  EXPECT_EQ(std::string(tawa_last_error()),
            "cannot open kernel metadata '/nonexistent/k.json'");
  EXPECT_EQ(tawa_kernel_load(nullptr, nullptr, &k), -1);
  EXPECT_EQ(std::string(tawa_last_error()), "tawa_kernel_load: null argument");
  EXPECT_EQ(tawa_kernel_launch(nullptr, nullptr, 0, nullptr), -1);
  EXPECT_EQ(std::string(tawa_last_error()), "null tawa_kernel");
  const uint32_t grid[3] = {1, 1, 1};
  EXPECT_EQ(tawa_kernel_launch_grid(nullptr, nullptr, 0, grid, nullptr), -1);
  EXPECT_EQ(std::string(tawa_last_error()), "null tawa_kernel");
  tawa_plan *plan = nullptr;
  EXPECT_EQ(tawa_kernel_prepare_grid(nullptr, nullptr, 0, grid, &plan), -1);
  EXPECT_EQ(std::string(tawa_last_error()), "null tawa_kernel");
  EXPECT_EQ(plan, nullptr);
  EXPECT_EQ(tawa_kernel_num_params(nullptr), -1);
}

TEST(CApi, DriverAvailabilityIsReported) {
  if (tawa_driver_available()) {
    int sms = 0;
    EXPECT_EQ(tawa_device_sm_count(&sms), 0) << tawa_last_error();
    EXPECT_GT(sms, 0);
  } else {
    // Without a driver the reason must say what is missing.
    std::string why = tawa_last_error();
    EXPECT_FALSE(why.empty());
    int sms = 0;
    EXPECT_EQ(tawa_device_sm_count(&sms), -1);
    EXPECT_EQ(std::string(tawa_last_error()), why);
  }
}

TEST(CApi, CompileReportsPathAndHit) {
  namespace fs = std::filesystem;
  const char *src = "extern \"C\" __global__ void k(int *p) { *p = 1; }";
  const char *opts[] = {"-DCAPI_TEST=1", nullptr};
  char path[4096];
  int hit = -1;
  ASSERT_EQ(tawa_compile_cuda(src, "capi.cu", opts, path, sizeof path, &hit), 0)
      << tawa_last_error();
  EXPECT_TRUE(fs::exists(path));
  ASSERT_EQ(tawa_compile_cuda(src, "capi.cu", opts, path, sizeof path, &hit),
            0);
  EXPECT_EQ(hit, 1);
  char tiny[4];
  EXPECT_EQ(tawa_compile_cuda(src, "capi.cu", opts, tiny, sizeof tiny, &hit),
            -1);
  EXPECT_NE(std::string(tawa_last_error()).find("too small"),
            std::string::npos);
  fs::remove(path);
}

} // namespace
