//===- KernelArgumentsTest.cpp - kernel inputs from NAME=VALUE specs ------===//

#include "InterpreterTestUtils.h"

#include "tawa/Interpreter/KernelArguments.h"

using namespace mlir;
using namespace tawa;
using namespace tawa::interp;
using namespace tawa::interp::testing;

namespace {

class KernelArgumentsTest : public KernelFixture {};

// A Triton host descriptor is the descriptor followed by its shape (i32) and
// strides (i64); they get the shape from the spec and row-major strides.
const char *kGemmSignature = R"(
  #loc = loc("k.py":1:0)
  tt.func @gemm(%a: !tt.tensordesc<tensor<128x64xf16>> loc("a_desc"(#loc)),
                %a0: i32 loc("a_desc"(#loc)), %a1: i32 loc("a_desc"(#loc)),
                %a2: i64 loc("a_desc"(#loc)), %a3: i64 loc("a_desc"(#loc)),
                %bias: !tt.ptr<f32> loc("bias"(#loc)),
                %sizes: !tt.ptr<i32> loc("sizes"(#loc)),
                %tables: !tt.ptr<i64> loc("tables"(#loc)),
                %M: i32 {tt.divisibility = 16 : i32} loc("M"(#loc)),
                %K: i32 loc("K"(#loc)), %scale: f32 loc("scale"(#loc))) {
    tt.return
  })";

TEST_F(KernelArgumentsTest, HostDescriptorsPointersAndScalars) {
  tt::FuncOp kernel = parseKernel(kGemmSignature);
  ASSERT_TRUE(kernel);
  std::string error;
  FailureOr<KernelArguments> args = makeKernelArguments(
      kernel,
      {"a_desc=M,2*K+16", "K=40", "bias=M+1", "sizes=[3, M, -2]",
       "tables=ptrs:f16[M*K,8]", "scale=0.5"},
      /*dataSeed=*/1, error);
  ASSERT_TRUE(succeeded(args)) << error;
  EXPECT_EQ(argumentName(kernel, 0), "a_desc");
  const TensorDescriptor &desc = *args->values[0].descriptor;
  EXPECT_EQ(desc.shape, (SmallVector<int64_t, 4>{144, 96}));
  EXPECT_EQ(desc.strides, (SmallVector<int64_t, 4>{96, 1}));
  EXPECT_EQ(args->values[1].data->ints[0], 144u);
  EXPECT_EQ(args->values[2].data->ints[0], 96u);
  EXPECT_EQ(args->values[3].data->ints[0], 96u);
  EXPECT_EQ(args->values[4].data->ints[0], 1u);
  EXPECT_EQ(args->values[8].data->ints[0], 144u); // M's default
  EXPECT_EQ(args->values[9].data->ints[0], 40u);
  EXPECT_EQ(args->values[10].data->floats[0], 0.5);

  const GlobalMemory &mem = args->memory;
  // a_desc, bias, sizes, tables[0], tables[1], tables.
  ASSERT_EQ(mem.size(), 6u);
  EXPECT_EQ(mem.buffer(1).numElements(), 145);
  EXPECT_EQ(mem.loadBits(2, 4, 4), 144u);
  EXPECT_EQ(signExtend(mem.loadBits(2, 8, 4), 32), -2);
  EXPECT_EQ(mem.buffer(3).numElements(), 144 * 40);
  EXPECT_EQ(mem.loadBits(5, 8, 8), mem.buffer(4).base);
  // Random inputs are in [-1, 1) and nothing counts as written yet.
  for (int64_t i = 0; i < 100; ++i) {
    double v =
        decodeFloat(mem.buffer(0).elementType, mem.loadBits(0, i * 2, 2));
    EXPECT_GE(v, -1.0);
    EXPECT_LT(v, 1.0);
  }
  EXPECT_EQ(mem.countWritten(), 0);
  EXPECT_EQ(args->summary.front(), "M=144");
}

TEST_F(KernelArgumentsTest, SameSeedSameData) {
  tt::FuncOp kernel = parseKernel(kGemmSignature);
  ASSERT_TRUE(kernel);
  std::string error;
  auto a = makeKernelArguments(kernel, {}, 5, error);
  auto b = makeKernelArguments(kernel, {}, 5, error);
  auto c = makeKernelArguments(kernel, {}, 6, error);
  ASSERT_TRUE(succeeded(a) && succeeded(b) && succeeded(c)) << error;
  EXPECT_EQ(a->memory.buffer(0).bytes, b->memory.buffer(0).bytes);
  EXPECT_NE(a->memory.buffer(0).bytes, c->memory.buffer(0).bytes);
}

TEST_F(KernelArgumentsTest, BadSpecsAreErrors) {
  tt::FuncOp kernel = parseKernel(kGemmSignature);
  ASSERT_TRUE(kernel);
  auto fails = [&](std::vector<std::string> specs, StringRef message) {
    std::string error;
    EXPECT_TRUE(failed(makeKernelArguments(kernel, specs, 1, error)));
    EXPECT_NE(error.find(message.str()), std::string::npos) << error;
  };
  fails({"Q=3"}, "no argument 'Q' to give a value (arguments: a_desc, bias, "
                 "sizes, tables, M, K, scale)");
  fails({"a_desc=M"}, "has 2 dimensions, 'M' gives 1");
  fails({"a_desc=M,X"}, "'X' is not an integer argument");
  fails({"K=K+1"}, "'K' is defined in terms of itself");
  fails({"M=3+"}, "expected an integer or an argument name in '3+'");
  fails({"tables=ptrs:q9[4]"}, "'q9' is not an element type");
  fails({"scale=abc"}, "'abc' is not a number");
  fails({"noequals"}, "'noequals' is not NAME=VALUE");
}

} // namespace
