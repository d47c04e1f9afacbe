//===- TileLoopPrograms.h - a kernel's own tile loop as programs -*- C++
//-*-===//
//
// -tawa-tile-loop-programs, also run by -tawa-program-pairing on its copy of
// a kernel that walks its tiles itself.
//
//===----------------------------------------------------------------------===//

#ifndef TAWA_TRANSFORMS_TILELOOPPROGRAMS_H
#define TAWA_TRANSFORMS_TILELOOPPROGRAMS_H

#include "tawa/Dialect/TT/TTDialect.h"

#include <string>

namespace tawa {

/// Rewrites a kernel whose body is `for t = program_id(0) to T step S
/// { tile t }` into one program per tile: the tile index computed from
/// program_id(0) (the op marked tawa.tile_index), the number of programs an
/// op marked tawa.program_count. Fails, with the reason in `why`, where the
/// kernel is not of that form (and leaves it unchanged).
mlir::LogicalResult tileLoopToPrograms(tt::FuncOp func,
                                       std::string *why = nullptr);

} // namespace tawa

#endif // TAWA_TRANSFORMS_TILELOOPPROGRAMS_H
