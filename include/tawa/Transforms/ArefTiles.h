//===- ArefTiles.h - where a product's operand tile comes from -*- C++ -*-===//
//
// The pipeline passes (MmaPipeline, CoarsePipeline) release or move the
// ring slot a product reads: one definition of how an operand is traced to
// the tawa.aref.get that borrowed it.
//
//===----------------------------------------------------------------------===//

#ifndef TAWA_TRANSFORMS_AREFTILES_H
#define TAWA_TRANSFORMS_AREFTILES_H

#include "tawa/Dialect/TT/TTDialect.h"
#include "tawa/Dialect/Tawa/TawaDialect.h"

namespace tawa {

/// The aref.get whose slot `v` is (possibly through tt.trans views), if any.
inline ArefGetOp arefGetOfTile(mlir::Value v) {
  while (auto trans = v.getDefiningOp<tt::TransOp>())
    v = trans.getSrc();
  return v.getDefiningOp<ArefGetOp>();
}

} // namespace tawa

#endif // TAWA_TRANSFORMS_AREFTILES_H
