//===- SourceLocation.cpp - map Triton locations to the user's file -------===//

#include "tawa/Transforms/SourceLocation.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/SmallVector.h"

using namespace mlir;

/// Frames of `loc`, innermost first: for callsite(callee at caller) the callee
/// frames come before the caller frames.
static void collectFrames(Location loc,
                          llvm::SmallVectorImpl<FileLineColLoc> &frames) {
  if (auto file = dyn_cast<FileLineColLoc>(loc)) {
    frames.push_back(file);
  } else if (auto name = dyn_cast<NameLoc>(loc)) {
    collectFrames(name.getChildLoc(), frames);
  } else if (auto call = dyn_cast<CallSiteLoc>(loc)) {
    collectFrames(call.getCallee(), frames);
    collectFrames(call.getCaller(), frames);
  } else if (auto fused = dyn_cast<FusedLoc>(loc)) {
    for (Location inner : fused.getLocations())
      collectFrames(inner, frames);
  } else if (auto opaque = dyn_cast<OpaqueLoc>(loc)) {
    collectFrames(opaque.getFallbackLocation(), frames);
  }
}

static bool isTritonLibraryFile(StringRef file) {
  return file.contains("triton/language/") ||
         file.contains("triton/runtime/") || file.starts_with("<");
}

Location tawa::getUserLocation(Location loc) {
  llvm::SmallVector<FileLineColLoc> frames;
  collectFrames(loc, frames);
  for (FileLineColLoc frame : frames)
    if (!isTritonLibraryFile(frame.getFilename().getValue()))
      return frame;
  if (!frames.empty())
    return frames.front();
  return loc;
}

std::string tawa::getValueName(Location loc) {
  if (auto name = dyn_cast<NameLoc>(loc))
    return name.getName().str();
  if (auto call = dyn_cast<CallSiteLoc>(loc)) {
    std::string inner = getValueName(call.getCallee());
    return inner.empty() ? getValueName(call.getCaller()) : inner;
  }
  if (auto fused = dyn_cast<FusedLoc>(loc))
    for (Location inner : fused.getLocations()) {
      std::string name = getValueName(inner);
      if (!name.empty())
        return name;
    }
  return "";
}
