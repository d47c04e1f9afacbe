//===- Value.h - run-time values of the CPU interpreter ---------*- C++ -*-===//
//
// A run-time value is a scalar or a tensor (its elements), a TMA descriptor,
// or an aref ring. Values obtained from an aref slot carry a borrow tag and
// the results of asynchronous products a pending tag: the interpreter checks
// on every read that the slot has not been released and the product has been
// retired by a dot_wait.
//
//===----------------------------------------------------------------------===//

#ifndef TAWA_INTERPRETER_VALUE_H
#define TAWA_INTERPRETER_VALUE_H

#include "tawa/Interpreter/Memory.h"

#include "mlir/IR/Types.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

namespace tawa::interp {

class ArefRing;

/// The elements of a scalar (empty shape) or a tensor, row-major. Float
/// elements live in `floats` (each exactly a value of `elementType`),
/// integers zero-extended to their width and pointers (addresses) in `ints`.
struct TensorData {
  mlir::Type elementType;
  llvm::SmallVector<int64_t, 4> shape;
  std::vector<double> floats;
  std::vector<uint64_t> ints;

  bool isFloat() const { return mlir::isa<mlir::FloatType>(elementType); }
  int64_t numElements() const {
    return static_cast<int64_t>(isFloat() ? floats.size() : ints.size());
  }
};

/// A value read out of slot `slot` of an aref by reader `reader` (a
/// cooperative consumer group; 0 for any other partition) while the slot
/// held its fill number `generation` (every put starts a new one).
struct BorrowTag {
  ArefRing *ring = nullptr;
  unsigned slot = 0;
  uint64_t generation = 0;
  unsigned reader = 0;
};

/// The result of asynchronous product `group` of task `task`.
struct PendingTag {
  unsigned task = 0;
  uint64_t group = 0;
};

struct RuntimeValue {
  enum class Kind { Data, Descriptor, Aref };
  Kind kind = Kind::Data;
  std::shared_ptr<const TensorData> data;
  std::shared_ptr<const TensorDescriptor> descriptor;
  std::shared_ptr<ArefRing> aref;
  std::optional<BorrowTag> borrow;
  std::optional<PendingTag> pending;

  static RuntimeValue of(std::shared_ptr<const TensorData> d) {
    RuntimeValue v;
    v.data = std::move(d);
    return v;
  }
};

/// A scalar integer (index, i1..i64 or pointer) of `type`.
RuntimeValue makeInt(mlir::Type type, uint64_t value);
/// A scalar float of `type` (rounded to it).
RuntimeValue makeFloat(mlir::Type type, double value);

} // namespace tawa::interp

#endif // TAWA_INTERPRETER_VALUE_H
