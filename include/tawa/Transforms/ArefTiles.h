//===- ArefTiles.h - where a product's operand tile comes from -*- C++ -*-===//
//
// The pipeline passes (MmaPipeline, CoarsePipeline) release or move the
// ring slot a product reads: one definition of how an operand is traced to
// the tawa.aref.get that borrowed it, and of which tiles a ring stores
// transposed (LoopDistribution budgets them, ArefLowering writes them).
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

/// Whether a loaded 8-bit tile is the B operand of a product as loaded, [K,
/// N] with N contiguous: fp8 wgmma reads only K-major operands, so its ring
/// slot must hold the transpose (tawa.smem.transpose, written by the
/// producer from a staging slot that TMA fills).
inline bool needsStoredTranspose(mlir::Value tile) {
  auto type = mlir::dyn_cast<mlir::RankedTensorType>(tile.getType());
  if (!type || type.getRank() != 2 || type.getElementTypeBitWidth() != 8)
    return false;
  for (mlir::OpOperand &use : tile.getUses()) {
    mlir::Operation *user = use.getOwner();
    if ((mlir::isa<tt::DotOp>(user) || mlir::isa<DotAsyncOp>(user)) &&
        use.getOperandNumber() == 1)
      return true;
  }
  return false;
}

} // namespace tawa

#endif // TAWA_TRANSFORMS_AREFTILES_H
