//===- TawaDialect.h - arefs and warp-specialized regions ------*- C++ -*-===//

#ifndef TAWA_DIALECT_TAWA_TAWADIALECT_H
#define TAWA_DIALECT_TAWA_TAWADIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "tawa/Dialect/Tawa/TawaDialect.h.inc"

#define GET_TYPEDEF_CLASSES
#include "tawa/Dialect/Tawa/TawaTypes.h.inc"

#define GET_OP_CLASSES
#include "tawa/Dialect/Tawa/TawaOps.h.inc"

#endif // TAWA_DIALECT_TAWA_TAWADIALECT_H
