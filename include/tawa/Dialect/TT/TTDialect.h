//===- TTDialect.h - tawa's tt (Triton TTIR) dialect -----------*- C++ -*-===//

#ifndef TAWA_DIALECT_TT_TTDIALECT_H
#define TAWA_DIALECT_TT_TTDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "tawa/Dialect/TT/TTDialect.h.inc"
#include "tawa/Dialect/TT/TTEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "tawa/Dialect/TT/TTAttrs.h.inc"

#define GET_TYPEDEF_CLASSES
#include "tawa/Dialect/TT/TTTypes.h.inc"

namespace tawa::tt {
/// The pointee of a pointer, or a tensor of pointees for a tensor of pointers.
mlir::Type getPointeeTypeOf(mlir::Type ptrLike);
/// i1, or a tensor of i1 with the shape of `type` when it is a tensor.
mlir::Type getI1SameShape(mlir::Type type);
} // namespace tawa::tt

#define GET_OP_CLASSES
#include "tawa/Dialect/TT/TTOps.h.inc"

namespace tawa::tt {
/// The one operation a single-operand tt.reduce combines its two arguments
/// with (either order) and returns, or null if the combiner is anything else.
mlir::Operation *getSingleCombiner(ReduceOp reduce);
} // namespace tawa::tt

#endif // TAWA_DIALECT_TT_TTDIALECT_H
