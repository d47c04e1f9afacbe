//===- ArithMatchers.h - matching integer index arithmetic ------*- C++ -*-===//
//
// Small helpers the passes that recognize a kernel's tile arithmetic
// (-tawa-tile-swizzle, -tawa-program-pairing) share.
//
//===----------------------------------------------------------------------===//

#ifndef TAWA_TRANSFORMS_ARITHMATCHERS_H
#define TAWA_TRANSFORMS_ARITHMATCHERS_H

#include "mlir/IR/Value.h"

namespace tawa {

/// `v` = OpTy(a, other) or OpTy(other, a) for a commutative OpTy: `other`,
/// else null.
template <typename OpTy>
mlir::Value otherOperand(mlir::Value v, mlir::Value a) {
  auto op = v.getDefiningOp<OpTy>();
  if (!op)
    return {};
  if (op.getLhs() == a)
    return op.getRhs();
  if (op.getRhs() == a)
    return op.getLhs();
  return {};
}

} // namespace tawa

#endif // TAWA_TRANSFORMS_ARITHMATCHERS_H
