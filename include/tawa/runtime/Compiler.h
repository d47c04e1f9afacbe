//===- Compiler.h - NVRTC compilation with an on-disk cache -----*- C++ -*-===//
//
// CUDA C++ (hand-written or emitted by tawa) is compiled to an sm_90a CUBIN
// with NVRTC. Compiling the device library takes seconds, so results are kept
// on disk under a key that hashes everything that can change the output.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace tawa::runtime {

struct CompileOptions {
  std::string arch = "sm_90a";
  /// Options appended after the defaults (-std=c++17, include paths, arch).
  std::vector<std::string> extraOptions;
  /// Cache directory; empty means defaultCacheDir().
  std::string cacheDir;
  bool useCache = true;
  /// Stop at PTX (CompileResult::ptx) instead of a CUBIN; not cached.
  bool emitPtx = false;
};

struct CompileResult {
  std::vector<char> cubin;
  std::string key;       ///< hex SHA-256 cache key
  std::string cachePath; ///< where the CUBIN is (or would be) cached
  bool cacheHit = false;
  std::string log; ///< NVRTC's log ("" on a cache hit)
  std::string ptx; ///< with CompileOptions::emitPtx
};

/// Runtime version string folded into every cache key.
const char *runtimeVersion();

/// $TAWA_CACHE_DIR, else $XDG_CACHE_HOME/tawa, else ~/.cache/tawa.
std::string defaultCacheDir();

/// Include directory holding tawa/device/*.cuh: $TAWA_INCLUDE_DIR if set,
/// else the source tree's include/ recorded at build time.
std::string deviceIncludeDir();

/// The complete NVRTC option list for `options` (defaults first).
std::vector<std::string> nvrtcOptionList(const CompileOptions &options);

/// Cache key over the runtime version, NVRTC's version, the kernel name, the
/// option list, the source and the contents of the device-library headers
/// (which the source may include, and whose edits must invalidate entries).
std::string compileCacheKey(std::string_view source, const std::string &name,
                            const std::vector<std::string> &optionList);

/// Compiles `source` (program name `name`, used in diagnostics) to a CUBIN.
/// Throws Error with NVRTC's log on failure.
CompileResult compileCuda(std::string_view source, const std::string &name,
                          const CompileOptions &options = {});

/// compileCuda for callers built without exceptions (the MLIR compiler):
/// false with the error's message in `error` instead of a throw.
bool tryCompileCuda(std::string_view source, const std::string &name,
                    const CompileOptions &options, CompileResult &result,
                    std::string &error) noexcept;

} // namespace tawa::runtime
