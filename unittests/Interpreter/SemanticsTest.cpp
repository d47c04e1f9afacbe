//===- SemanticsTest.cpp - what the interpreter computes ------------------===//
//
// TMA descriptor loads and stores at the edges of a tensor, tt.dot in
// float32, tt.reduce with its combiner region, and masked pointer loads.
//
//===----------------------------------------------------------------------===//

#include "InterpreterTestUtils.h"

#include "mlir/IR/Builders.h"

#include <cmath>

using namespace mlir;
using namespace tawa;
using namespace tawa::interp;
using namespace tawa::interp::testing;

namespace {

class SemanticsTest : public KernelFixture {
protected:
  ExecutionResult run(tt::FuncOp kernel, std::vector<RuntimeValue> args) {
    ExecutionOptions options;
    return runProgram(kernel, args, ProgramId{}, Grid{}, memory, options);
  }
  Builder b{&context};
};

// A 4x8 block loaded at (2, 5) of a 5x9 tensor hangs over the bottom and
// right edges: those elements read as zero. Stored at (0, 0) of a 3x6 tensor
// it is clipped to 3x6; nothing outside is written.
TEST_F(SemanticsTest, DescriptorLoadFillsOutOfBoundsWithZeroAndStoreClips) {
  tt::FuncOp kernel = parseKernel(R"(
    tt.func @copy(%src: !tt.tensordesc<tensor<4x8xf32>>,
                  %dst: !tt.tensordesc<tensor<4x8xf32>>, %r: i32, %c: i32) {
      %t = tt.descriptor_load %src[%r, %c] : !tt.tensordesc<tensor<4x8xf32>> -> tensor<4x8xf32>
      %z = arith.constant 0 : i32
      tt.descriptor_store %dst[%z, %z], %t : !tt.tensordesc<tensor<4x8xf32>>, tensor<4x8xf32>
      tt.return
    })");
  ASSERT_TRUE(kernel);
  auto block = tensor({4, 8}, b.getF32Type());
  RuntimeValue src =
      makeMatrix("src", b.getF32Type(), 5, 9, block,
                 [](int64_t r, int64_t c) { return r * 100 + c + 1; });
  RuntimeValue dst = makeMatrix("dst", b.getF32Type(), 3, 6, block,
                                [](int64_t, int64_t) { return -7.0; });
  memory.clearWritten();
  ExecutionResult r = run(kernel, {src, dst, makeInt(b.getI32Type(), 2),
                                   makeInt(b.getI32Type(), 5)});
  ASSERT_TRUE(r.completed()) << r.message;
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = 0; j < 6; ++j) {
      int64_t gr = 2 + i, gc = 5 + j;
      double want = (gr < 5 && gc < 9) ? gr * 100 + gc + 1 : 0.0;
      EXPECT_EQ(element(1, i, j), want) << "dst[" << i << ", " << j << "]";
    }
  // Every element of the 3x6 destination was written, none of the source.
  EXPECT_EQ(memory.countWritten(), 18);
}

// Negative coordinates are out of bounds too (TMA coordinates are signed).
TEST_F(SemanticsTest, DescriptorLoadAtNegativeCoordinates) {
  tt::FuncOp kernel = parseKernel(R"(
    tt.func @copy(%src: !tt.tensordesc<tensor<4x4xf16>>,
                  %dst: !tt.tensordesc<tensor<4x4xf16>>) {
      %m1 = arith.constant -1 : i32
      %m2 = arith.constant -2 : i32
      %z = arith.constant 0 : i32
      %t = tt.descriptor_load %src[%m1, %m2] : !tt.tensordesc<tensor<4x4xf16>> -> tensor<4x4xf16>
      tt.descriptor_store %dst[%z, %z], %t : !tt.tensordesc<tensor<4x4xf16>>, tensor<4x4xf16>
      tt.return
    })");
  ASSERT_TRUE(kernel);
  auto block = tensor({4, 4}, b.getF16Type());
  RuntimeValue src =
      makeMatrix("src", b.getF16Type(), 4, 4, block,
                 [](int64_t r, int64_t c) { return r * 4 + c + 1; });
  RuntimeValue dst = makeMatrix("dst", b.getF16Type(), 4, 4, block,
                                [](int64_t, int64_t) { return -7.0; });
  ExecutionResult r = run(kernel, {src, dst});
  ASSERT_TRUE(r.completed()) << r.message;
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t j = 0; j < 4; ++j) {
      int64_t gr = i - 1, gc = j - 2;
      double want = (gr >= 0 && gc >= 0) ? gr * 4 + gc + 1 : 0.0;
      EXPECT_EQ(element(1, i, j), want) << "dst[" << i << ", " << j << "]";
    }
}

// C = A B + acc for 16x32 f16 A, 32x8 f16 B and a constant 16x8 f32 acc.
constexpr const char *kDotKernel = R"(
    tt.func @dot(%a: !tt.tensordesc<tensor<16x32xf16>>,
                 %b: !tt.tensordesc<tensor<32x8xf16>>,
                 %c: !tt.tensordesc<tensor<16x8xf32>>) {
      %z = arith.constant 0 : i32
      %x = tt.descriptor_load %a[%z, %z] : !tt.tensordesc<tensor<16x32xf16>> -> tensor<16x32xf16>
      %y = tt.descriptor_load %b[%z, %z] : !tt.tensordesc<tensor<32x8xf16>> -> tensor<32x8xf16>
      %acc = arith.constant dense<0.333333343> : tensor<16x8xf32>
      %d = tt.dot %x, %y, %acc : tensor<16x32xf16> * tensor<32x8xf16> -> tensor<16x8xf32>
      tt.descriptor_store %c[%z, %z], %d : !tt.tensordesc<tensor<16x8xf32>>, tensor<16x8xf32>
      tt.return
    })";

// tt.dot: float32 products and sums, k in increasing order, starting from
// the accumulator operand; f16 operands are converted exactly.
TEST_F(SemanticsTest, DotIsFloat32InIncreasingK) {
  tt::FuncOp kernel = parseKernel(kDotKernel);
  ASSERT_TRUE(kernel);
  Type f16 = b.getF16Type(), f32 = b.getF32Type();
  auto av = [&](int64_t r, int64_t c) {
    return roundToFloatType(f16, std::sin(double(r * 32 + c)) * 3.0);
  };
  auto bv = [&](int64_t r, int64_t c) {
    return roundToFloatType(f16, std::cos(double(r * 8 + c)) / 7.0);
  };
  RuntimeValue a = makeMatrix("a", f16, 16, 32, tensor({16, 32}, f16), av);
  RuntimeValue bb = makeMatrix("b", f16, 32, 8, tensor({32, 8}, f16), bv);
  RuntimeValue c = makeMatrix("c", f32, 16, 8, tensor({16, 8}, f32),
                              [](int64_t, int64_t) { return 0.0; });
  ExecutionResult r = run(kernel, {a, bb, c});
  ASSERT_TRUE(r.completed()) << r.message;
  for (int64_t i = 0; i < 16; ++i)
    for (int64_t j = 0; j < 8; ++j) {
      float acc = 0.333333343f;
      double exact = 0.333333343;
      for (int64_t k = 0; k < 32; ++k) {
        acc += static_cast<float>(av(i, k)) * static_cast<float>(bv(k, j));
        exact += av(i, k) * bv(k, j);
      }
      EXPECT_EQ(element(2, i, j), static_cast<double>(acc))
          << "c[" << i << ", " << j << "]";
      // And it is the matrix product (within float32 rounding).
      EXPECT_NEAR(element(2, i, j), exact, 1e-4);
    }
}

// ExecutionLimits::maxWork: a tensor result counts its elements, a product
// its multiply-adds. kDotKernel: loads 16x32 + 32x8, a 16x8 constant,
// a 16x8x32 product: 512 + 256 + 128 + 4096 = 4992 element operations.
TEST_F(SemanticsTest, WorkLimitCountsElementsAndMultiplyAdds) {
  tt::FuncOp kernel = parseKernel(kDotKernel);
  ASSERT_TRUE(kernel);
  Type f16 = b.getF16Type(), f32 = b.getF32Type();
  auto one = [](int64_t, int64_t) { return 1.0; };
  RuntimeValue a = makeMatrix("a", f16, 16, 32, tensor({16, 32}, f16), one);
  RuntimeValue bb = makeMatrix("b", f16, 32, 8, tensor({32, 8}, f16), one);
  RuntimeValue c = makeMatrix("c", f32, 16, 8, tensor({16, 8}, f32), one);
  ExecutionOptions options;
  options.limits.maxWork = 4992;
  ExecutionResult r =
      runProgram(kernel, {a, bb, c}, ProgramId{}, Grid{}, memory, options);
  ASSERT_TRUE(r.completed()) << r.message;
  EXPECT_EQ(r.work, 4992u);
  float want = 0.333333343f; // the accumulator, then 32 products of 1 x 1
  for (int k = 0; k < 32; ++k)
    want += 1.0f;
  EXPECT_EQ(element(2, 3, 4), double(want));
  options.limits.maxWork = 4991;
  r = runProgram(kernel, {a, bb, c}, ProgramId{}, Grid{}, memory, options);
  EXPECT_EQ(r.outcome, Outcome::RuntimeError);
  EXPECT_NE(r.message.find("work limit"), std::string::npos) << r.message;
  // Over a grid the limit is shared by all programs.
  options.limits.maxWork = 2 * 4992 - 1;
  r = runGrid(kernel, {a, bb, c}, Grid{2, 1, 1}, memory, options);
  EXPECT_EQ(r.outcome, Outcome::RuntimeError);
  EXPECT_EQ(r.programs, 2);
}

// tt.reduce folds along its axis left to right with its combiner region:
// a sum over rows (axis 1) and a maximum over columns (axis 0).
TEST_F(SemanticsTest, ReduceRunsItsCombinerAlongTheAxis) {
  tt::FuncOp kernel = parseKernel(R"(
    tt.func @reduce(%src: !tt.tensordesc<tensor<4x8xf32>>,
                    %sums: !tt.ptr<f32>, %maxes: !tt.ptr<f32>) {
      %z = arith.constant 0 : i32
      %t = tt.descriptor_load %src[%z, %z] : !tt.tensordesc<tensor<4x8xf32>> -> tensor<4x8xf32>
      %s = "tt.reduce"(%t) <{axis = 1 : i32}> ({
      ^bb0(%x: f32, %y: f32):
        %r = arith.addf %x, %y : f32
        tt.reduce.return %r : f32
      }) : (tensor<4x8xf32>) -> tensor<4xf32>
      %m = "tt.reduce"(%t) <{axis = 0 : i32}> ({
      ^bb0(%x: f32, %y: f32):
        %r = arith.maxnumf %x, %y : f32
        tt.reduce.return %r : f32
      }) : (tensor<4x8xf32>) -> tensor<8xf32>
      %i4 = tt.make_range {end = 4 : i32, start = 0 : i32} : tensor<4xi32>
      %p4 = tt.splat %sums : !tt.ptr<f32> -> tensor<4x!tt.ptr<f32>>
      %q4 = tt.addptr %p4, %i4 : tensor<4x!tt.ptr<f32>>, tensor<4xi32>
      tt.store %q4, %s : tensor<4x!tt.ptr<f32>>
      %i8 = tt.make_range {end = 8 : i32, start = 0 : i32} : tensor<8xi32>
      %p8 = tt.splat %maxes : !tt.ptr<f32> -> tensor<8x!tt.ptr<f32>>
      %q8 = tt.addptr %p8, %i8 : tensor<8x!tt.ptr<f32>>, tensor<8xi32>
      tt.store %q8, %m : tensor<8x!tt.ptr<f32>>
      tt.return
    })");
  ASSERT_TRUE(kernel);
  Type f32 = b.getF32Type();
  auto v = [](int64_t r, int64_t c) {
    return static_cast<double>(static_cast<float>(std::sin(r * 8.0 + c) * 10));
  };
  RuntimeValue src = makeMatrix("src", f32, 4, 8, tensor({4, 8}, f32), v);
  unsigned sums = memory.allocate("sums", f32, 4);
  unsigned maxes = memory.allocate("maxes", f32, 8);
  auto ptr = tt::PointerType::get(f32, 1);
  ExecutionResult r = run(kernel, {src, makeInt(ptr, memory.buffer(sums).base),
                                   makeInt(ptr, memory.buffer(maxes).base)});
  ASSERT_TRUE(r.completed()) << r.message;
  for (int64_t i = 0; i < 4; ++i) {
    float want = static_cast<float>(v(i, 0));
    for (int64_t j = 1; j < 8; ++j)
      want += static_cast<float>(v(i, j));
    EXPECT_EQ(decodeFloat(f32, memory.loadBits(sums, i * 4, 4)), want);
  }
  for (int64_t j = 0; j < 8; ++j) {
    double want = v(0, j);
    for (int64_t i = 1; i < 4; ++i)
      want = std::max(want, v(i, j));
    EXPECT_EQ(decodeFloat(f32, memory.loadBits(maxes, j * 4, 4)), want);
  }
}

// Masked pointer loads take `other` where the mask is false and touch no
// memory there; an unmasked access outside every buffer is an error.
TEST_F(SemanticsTest, MaskedLoadAndOutOfBoundsPointer) {
  tt::FuncOp kernel = parseKernel(R"(
    tt.func @masked(%p: !tt.ptr<i32>, %out: !tt.ptr<i32>, %n: i32) {
      %i = tt.make_range {end = 8 : i32, start = 0 : i32} : tensor<8xi32>
      %nn = tt.splat %n : i32 -> tensor<8xi32>
      %mask = arith.cmpi slt, %i, %nn : tensor<8xi32>
      %ps = tt.splat %p : !tt.ptr<i32> -> tensor<8x!tt.ptr<i32>>
      %pp = tt.addptr %ps, %i : tensor<8x!tt.ptr<i32>>, tensor<8xi32>
      %other = arith.constant dense<-5> : tensor<8xi32>
      %v = tt.load %pp, %mask, %other : tensor<8x!tt.ptr<i32>>
      %os = tt.splat %out : !tt.ptr<i32> -> tensor<8x!tt.ptr<i32>>
      %op = tt.addptr %os, %i : tensor<8x!tt.ptr<i32>>, tensor<8xi32>
      tt.store %op, %v : tensor<8x!tt.ptr<i32>>
      tt.return
    })");
  ASSERT_TRUE(kernel);
  Type i32 = b.getI32Type();
  auto ptr = tt::PointerType::get(i32, 1);
  unsigned in = memory.allocate("in", i32, 5);
  for (int64_t i = 0; i < 5; ++i)
    memory.storeBits(in, i * 4, 4, static_cast<uint64_t>(10 + i));
  unsigned out = memory.allocate("out", i32, 8);
  ExecutionResult r =
      run(kernel, {makeInt(ptr, memory.buffer(in).base),
                   makeInt(ptr, memory.buffer(out).base), makeInt(i32, 5)});
  ASSERT_TRUE(r.completed()) << r.message;
  for (int64_t i = 0; i < 8; ++i)
    EXPECT_EQ(signExtend(memory.loadBits(out, i * 4, 4), 32),
              i < 5 ? 10 + i : -5);

  // With n = 6 the load reaches element 5 of a 5-element buffer.
  ExecutionResult bad =
      run(kernel, {makeInt(ptr, memory.buffer(in).base),
                   makeInt(ptr, memory.buffer(out).base), makeInt(i32, 6)});
  EXPECT_EQ(bad.outcome, Outcome::RuntimeError);
  EXPECT_NE(bad.message.find("byte 20 of 'in', which has 20 bytes"),
            std::string::npos)
      << bad.message;
}

} // namespace
