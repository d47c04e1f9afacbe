//===- SourceLocation.h - map Triton locations to the user's file -*- C++
//-*-===//

#ifndef TAWA_TRANSFORMS_SOURCELOCATION_H
#define TAWA_TRANSFORMS_SOURCELOCATION_H

#include "mlir/IR/Location.h"
#include <string>

namespace tawa {

/// The location to report a diagnostic at: the innermost file:line:col frame
/// of `loc` that is not inside Triton's own library (triton/language/...),
/// which for TTIR is the line of the user's kernel. Falls back to the innermost
/// frame, then to `loc` itself.
mlir::Location getUserLocation(mlir::Location loc);

/// The variable name Triton attached to `loc` (NameLoc), or "" if none.
std::string getValueName(mlir::Location loc);

} // namespace tawa

#endif // TAWA_TRANSFORMS_SOURCELOCATION_H
