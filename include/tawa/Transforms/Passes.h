//===- Passes.h - tawa passes ----------------------------------*- C++ -*-===//

#ifndef TAWA_TRANSFORMS_PASSES_H
#define TAWA_TRANSFORMS_PASSES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "tawa/Dialect/TT/TTDialect.h"
#include "tawa/Dialect/Tawa/TawaDialect.h"

namespace tawa {

#define GEN_PASS_DECL
#include "tawa/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "tawa/Transforms/Passes.h.inc"

} // namespace tawa

#endif // TAWA_TRANSFORMS_PASSES_H
