//===- InterpreterTestUtils.h - helpers of the interpreter's tests -*- C++
//-*-===//

#ifndef TAWA_UNITTESTS_INTERPRETER_TESTUTILS_H
#define TAWA_UNITTESTS_INTERPRETER_TESTUTILS_H

#include "tawa/InitAll.h"
#include "tawa/Interpreter/Interpreter.h"
#include "tawa/Interpreter/Numerics.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

namespace tawa::interp::testing {

/// An MLIR context with tawa's dialects and a parser for kernels written in
/// the tests.
class KernelFixture : public ::testing::Test {
protected:
  KernelFixture() {
    mlir::DialectRegistry registry;
    registerAllDialects(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
    context.disableMultithreading();
  }

  /// Parses `text` (a module body) and returns its first tt.func.
  tt::FuncOp parseKernel(const std::string &text) {
    module = mlir::parseSourceString<mlir::ModuleOp>(text, &context);
    if (!module)
      return nullptr;
    for (tt::FuncOp f : module->getOps<tt::FuncOp>())
      return f;
    return nullptr;
  }

  /// A row-major f32 buffer of `rows` x `cols` holding `fill(r, c)`, and a
  /// TMA descriptor over it with block `block`.
  template <typename F>
  RuntimeValue makeMatrix(const std::string &name, mlir::Type elem,
                          int64_t rows, int64_t cols,
                          mlir::RankedTensorType block, F fill) {
    unsigned index = memory.allocate(name, elem, rows * cols, {rows, cols});
    unsigned bytes = elementBytes(elem);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) {
        uint64_t bits = encodeFloat(elem, fill(r, c));
        memory.storeBits(index, (r * cols + c) * bytes, bytes, bits);
      }
    auto desc = std::make_shared<TensorDescriptor>();
    desc->base = memory.buffer(index).base;
    desc->elementType = elem;
    desc->shape = {rows, cols};
    desc->strides = {cols, 1};
    desc->block = block;
    RuntimeValue v;
    v.kind = RuntimeValue::Kind::Descriptor;
    v.descriptor = std::move(desc);
    return v;
  }

  /// Element (r, c) of a buffer made by makeMatrix, decoded; NaN (and a
  /// test failure) outside the buffer.
  double element(unsigned buffer, int64_t r, int64_t c) {
    const Buffer &b = memory.buffer(buffer);
    unsigned bytes = elementBytes(b.elementType);
    if (r < 0 || c < 0 || r >= b.shape[0] || c >= b.shape[1]) {
      ADD_FAILURE() << b.name << "[" << r << ", " << c << "] is outside "
                    << b.shape[0] << "x" << b.shape[1];
      return std::numeric_limits<double>::quiet_NaN();
    }
    uint64_t bits =
        memory.loadBits(buffer, (r * b.shape[1] + c) * bytes, bytes);
    return decodeFloat(b.elementType, bits);
  }

  mlir::RankedTensorType tensor(llvm::ArrayRef<int64_t> shape,
                                mlir::Type elem) {
    return mlir::RankedTensorType::get(shape, elem);
  }

  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  GlobalMemory memory;
};

} // namespace tawa::interp::testing

#endif // TAWA_UNITTESTS_INTERPRETER_TESTUTILS_H
