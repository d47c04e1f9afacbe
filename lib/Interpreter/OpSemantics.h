//===- OpSemantics.h - what one operation computes --------------*- C++ -*-===//
//
// The data semantics of every operation the interpreter executes that is
// neither control flow nor an aref or warp-group operation: arith, math and
// the tt operations. Elementwise operations take the shape of their operands
// rather than of their result type, so that tt.reduce can run its combiner
// region on whole slices at once (Interpreter.cpp handles control flow and
// the protocol; this file never blocks).
//
//===----------------------------------------------------------------------===//

#ifndef TAWA_LIB_INTERPRETER_OPSEMANTICS_H
#define TAWA_LIB_INTERPRETER_OPSEMANTICS_H

#include "tawa/Interpreter/Interpreter.h"

#include "mlir/IR/Operation.h"

#include <string>

namespace tawa::interp {

class OpEvaluator {
public:
  OpEvaluator(GlobalMemory &memory, ProgramId pid, Grid grid,
              const ExecutionLimits &limits)
      : memory(memory), pid(pid), grid(grid), limits(limits) {}

  /// Computes the results of `op` from the values of its operands. On
  /// failure `errorOutcome` and `errorMessage` say why.
  mlir::LogicalResult evaluate(mlir::Operation *op,
                               llvm::ArrayRef<RuntimeValue> operands,
                               llvm::SmallVectorImpl<RuntimeValue> &results);

  /// d = a * b + c in float32 (or wrapping integers), the reduction over k
  /// in increasing order, rounded once to d's element type.
  mlir::LogicalResult dot(mlir::Operation *op, const TensorData &a,
                          const TensorData &b, const TensorData &c,
                          mlir::Type resultType, RuntimeValue &result);

  Outcome errorOutcome = Outcome::RuntimeError;
  std::string errorMessage;

private:
  mlir::LogicalResult fail(mlir::Operation *op, const llvm::Twine &message);
  mlir::LogicalResult unsupported(mlir::Operation *op);
  mlir::LogicalResult checkSize(mlir::Operation *op,
                                llvm::ArrayRef<int64_t> shape);

  mlir::LogicalResult constant(mlir::Operation *op, RuntimeValue &result);
  /// The unary and binary float operations of arith, math and tt, computed
  /// elementwise as the element type's hardware would.
  mlir::LogicalResult
  floatElementwise(mlir::Operation *op, llvm::ArrayRef<RuntimeValue> operands,
                   llvm::SmallVectorImpl<RuntimeValue> &results, bool &handled);
  mlir::LogicalResult arith(mlir::Operation *op,
                            llvm::ArrayRef<RuntimeValue> operands,
                            llvm::SmallVectorImpl<RuntimeValue> &results,
                            bool &handled);
  mlir::LogicalResult math(mlir::Operation *op,
                           llvm::ArrayRef<RuntimeValue> operands,
                           llvm::SmallVectorImpl<RuntimeValue> &results,
                           bool &handled);
  mlir::LogicalResult triton(mlir::Operation *op,
                             llvm::ArrayRef<RuntimeValue> operands,
                             llvm::SmallVectorImpl<RuntimeValue> &results,
                             bool &handled);
  mlir::LogicalResult reduce(tt::ReduceOp op,
                             llvm::ArrayRef<RuntimeValue> operands,
                             llvm::SmallVectorImpl<RuntimeValue> &results);
  mlir::LogicalResult load(tt::LoadOp op, llvm::ArrayRef<RuntimeValue> operands,
                           llvm::SmallVectorImpl<RuntimeValue> &results);
  mlir::LogicalResult store(tt::StoreOp op,
                            llvm::ArrayRef<RuntimeValue> operands);
  mlir::LogicalResult
  descriptorLoad(tt::DescriptorLoadOp op, llvm::ArrayRef<RuntimeValue> operands,
                 llvm::SmallVectorImpl<RuntimeValue> &results);
  mlir::LogicalResult descriptorStore(tt::DescriptorStoreOp op,
                                      llvm::ArrayRef<RuntimeValue> operands);
  /// Where an access of `bytes` at `address` failed, for a message.
  std::string describeBadAddress(uint64_t address, unsigned bytes) const;

  GlobalMemory &memory;
  ProgramId pid;
  Grid grid;
  const ExecutionLimits &limits;
};

} // namespace tawa::interp

#endif // TAWA_LIB_INTERPRETER_OPSEMANTICS_H
