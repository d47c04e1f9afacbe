//===- CompileTest.cpp - tawa::compile ------------------------------------===//
//
// The library entry point runs the same pipeline as tawac: every stage from
// the supported-subset check to a CUBIN (NVRTC needs no GPU), with the
// compiler's choices and ptxas's report in the metadata, and diagnostics at
// the user's line for what it cannot compile.
//
//===----------------------------------------------------------------------===//

#include "tawa/Driver/Compile.h"
#include "tawa/InitAll.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/MemoryBuffer.h"

#include <gtest/gtest.h>

#include <string>

namespace {

std::string readExample(const char *name) {
  auto buf = llvm::MemoryBuffer::getFile(std::string(TAWA_EXAMPLES_TTIR) +
                                         "/" + name);
  EXPECT_TRUE(static_cast<bool>(buf)) << name;
  return buf ? (*buf)->getBuffer().str() : "";
}

class CompileTest : public ::testing::Test {
protected:
  CompileTest() : context(registry()) { context.loadAllAvailableDialects(); }
  static mlir::DialectRegistry registry() {
    mlir::DialectRegistry r;
    tawa::registerAllDialects(r);
    return r;
  }
  mlir::MLIRContext context;
};

TEST_F(CompileTest, CubinWithMetadataAndResources) {
  tawa::CompileOptions options;
  options.cubinName = "gemm.cubin";
  mlir::FailureOr<tawa::CompiledKernel> k =
      tawa::compile(context, readExample("gemm_fp16.ttir"), options);
  ASSERT_TRUE(mlir::succeeded(k));
  // An ELF image for sm_90a.
  ASSERT_GT(k->cubin.size(), 4u);
  EXPECT_EQ(std::string(k->cubin.data() + 1, 3), "ELF");
  EXPECT_NE(k->cuda.find("matmul_kernel("), std::string::npos);
  EXPECT_EQ(k->metadata.kernel, "matmul_kernel");
  // The compiler's defaults for a 128 x 256 x 64 fp16 tile: two consumer
  // groups (384 threads), four 48 KiB slots, two products in flight, and
  // persistent (it is written one program per tile).
  EXPECT_EQ(k->metadata.threads, 384);
  EXPECT_EQ(k->metadata.consumerGroups, 2);
  EXPECT_EQ(k->metadata.arefDepth, 4);
  EXPECT_EQ(k->metadata.mmaDepth, 2);
  EXPECT_TRUE(k->metadata.programsGrid);
  EXPECT_FALSE(k->metadata.pingpong);
  ASSERT_TRUE(k->metadata.resources.has_value());
  EXPECT_GT(k->metadata.resources->registers, 0);
  EXPECT_EQ(k->metadata.resources->spillStoreBytes, 0);
  std::string json = k->metadataJson();
  EXPECT_NE(json.find("\"cubin\": \"gemm.cubin\""), std::string::npos);
  EXPECT_NE(json.find("\"spill_store_bytes\": 0"), std::string::npos);
  // The default kernel keeps its wgmma pipeline.
  EXPECT_TRUE(k->metadata.resources->performanceWarnings.empty());
  EXPECT_EQ(json.find("ptxas_performance_warnings"), std::string::npos);
}

TEST(PtxasResources, ParsesTheReportAndPerformanceLosses) {
  tawa::KernelResources r = tawa::parsePtxasResources(
      "ptxas info    : (C7515) Potential Performance Loss: wgmma.mma_async "
      "instructions are serialized due to non wgmma instructions defining "
      "accumulator registers of a wgmma between start and end of the "
      "pipeline stage in the function 'k'\n"
      "ptxas info    : Compiling entry function 'k' for 'sm_90a'\n"
      "ptxas info    : Function properties for k\n"
      "    16 bytes stack frame, 8 bytes spill stores, 4 bytes spill loads\n"
      "ptxas info    : Used 168 registers, used 16 barriers\n");
  EXPECT_EQ(r.registers, 168);
  EXPECT_EQ(r.spillStoreBytes, 8);
  EXPECT_EQ(r.spillLoadBytes, 4);
  EXPECT_EQ(r.stackBytes, 16);
  ASSERT_EQ(r.performanceWarnings.size(), 1u);
  EXPECT_EQ(r.performanceWarnings[0], "C7515");
  tawa::KernelResources clean =
      tawa::parsePtxasResources("ptxas info    : Used 40 registers\n");
  EXPECT_TRUE(clean.performanceWarnings.empty());
}

TEST_F(CompileTest, OptionsReachThePasses) {
  tawa::CompileOptions options;
  options.stage = tawa::CompileStage::Cuda;
  options.warpSpecialization = {/*arefDepth=*/3, /*mmaDepth=*/2,
                                /*consumerGroups=*/2};
  auto k = tawa::compile(context, readExample("gemm_bf16.ttir"), options);
  ASSERT_TRUE(mlir::succeeded(k));
  EXPECT_EQ(k->metadata.arefDepth, 3);
  EXPECT_EQ(k->metadata.mmaDepth, 2);
  EXPECT_TRUE(k->cubin.empty()); // stopped at CUDA C++
  EXPECT_NE(k->cuda.find("wgmmaWait<2>();"), std::string::npos);
}

TEST_F(CompileTest, PtxStage) {
  tawa::CompileOptions options;
  options.stage = tawa::CompileStage::Ptx;
  auto k = tawa::compile(context, readExample("gemm_fp8.ttir"), options);
  ASSERT_TRUE(mlir::succeeded(k));
  EXPECT_NE(k->ptx.find(".target sm_90a"), std::string::npos);
  EXPECT_NE(k->ptx.find("wgmma.mma_async.sync.aligned.m64n256k32.f32.e4m3.e4m3"),
            std::string::npos);
}

TEST_F(CompileTest, ErrorsAtTheUsersLine) {
  std::string errors;
  mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &d) {
    llvm::raw_string_ostream os(errors);
    os << d.getLocation() << ": " << d.str() << "\n";
    return mlir::success();
  });
  // P >= D would deadlock: rejected at the dot's line in kernels.py.
  tawa::CompileOptions options;
  options.warpSpecialization = {/*arefDepth=*/2, /*mmaDepth=*/2, 0};
  auto k = tawa::compile(context, readExample("gemm_fp16.ttir"), options);
  EXPECT_TRUE(mlir::failed(k));
  EXPECT_NE(errors.find("kernels.py"), std::string::npos) << errors;
  EXPECT_NE(errors.find("deadlock"), std::string::npos) << errors;
}

TEST_F(CompileTest, ParseErrorIsAFailure) {
  mlir::ScopedDiagnosticHandler handler(
      &context, [](mlir::Diagnostic &) { return mlir::success(); });
  auto k = tawa::compile(context, "tt.func @broken(", {});
  EXPECT_TRUE(mlir::failed(k));
}

} // namespace
