//===- InitAll.h - register every dialect and pass of tawa -----*- C++ -*-===//

#ifndef TAWA_INITALL_H
#define TAWA_INITALL_H

#include "mlir/IR/DialectRegistry.h"

namespace tawa {
/// The dialects tawa reads and produces: tt, tawa, and the upstream arith,
/// math, scf and cf dialects that TTIR uses.
void registerAllDialects(mlir::DialectRegistry &registry);
/// Every tawa pass, plus the upstream cleanups tawa's pipelines use.
void registerAllPasses();
} // namespace tawa

#endif // TAWA_INITALL_H
