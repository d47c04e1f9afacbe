//===- TileOrder.h - Triton's grouped tile order ----------------*- C++ -*-===//
//
// The order -tawa-tile-swizzle gives a kernel's own tile walk and
// -tawa-persistent-programs gives a 2-D program grid: one definition.
//
//===----------------------------------------------------------------------===//

#ifndef TAWA_TRANSFORMS_TILEORDER_H
#define TAWA_TRANSFORMS_TILEORDER_H

#include "mlir/IR/Builders.h"

#include <utility>

namespace tawa {

/// Index `t` of [0, rows * cols) to (row, col) in groups of `group` rows,
/// column by column within a group (the last group has the rows left): a
/// bijection. `width` is group * cols. With `minHeight`, a group's height is
/// clamped below by it (where `rows` may be a placeholder, as in a branch a
/// run-time guard discards, and must still not divide by zero).
std::pair<mlir::Value, mlir::Value>
buildGroupedOrder(mlir::OpBuilder &b, mlir::Location loc, mlir::Value t,
                  mlir::Value rows, mlir::Value width, mlir::Value group,
                  mlir::Value minHeight = {});

/// buildGroupedOrder's values: t's group (t / width), the group's first row
/// (group * G), the row within the group, the row and the column.
struct GroupedOrder {
  mlir::Value group, first, rowInGroup, row, col;
};
GroupedOrder buildGroupedOrderParts(mlir::OpBuilder &b, mlir::Location loc,
                                    mlir::Value t, mlir::Value rows,
                                    mlir::Value width, mlir::Value group,
                                    mlir::Value minHeight = {});

} // namespace tawa

#endif // TAWA_TRANSFORMS_TILEORDER_H
