//===- Kernel.h - Loading and launching tawa kernels ------------*- C++ -*-===//
//
// A Kernel is one entry point of a CUBIN plus its metadata. launch() turns
// caller arguments (tensors and scalars) into kernel parameters: tensors
// become CUtensorMaps built with the metadata's box and swizzle, and the grid
// follows from the metadata's formula.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "tawa/runtime/Compiler.h"
#include "tawa/runtime/Grid.h"
#include "tawa/runtime/Metadata.h"
#include "tawa/runtime/TensorMap.h"

#include <cuda.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tawa::runtime {

class KernelArg {
public:
  enum class Kind { Tensor, Int, Float };
  static KernelArg tensor(TensorDesc desc);
  /// Integers are range-checked against the parameter's type at launch.
  static KernelArg integer(int64_t value);
  static KernelArg floating(double value);

  Kind kind() const { return kind_; }
  const TensorDesc &tensorDesc() const { return tensor_; }
  int64_t intValue() const { return int_; }
  double floatValue() const { return float_; }

private:
  Kind kind_ = Kind::Int;
  TensorDesc tensor_;
  int64_t int_ = 0;
  double float_ = 0;
};

struct LoadOptions {
  /// Use this CUBIN instead of the one the metadata names.
  std::string cubinOverride;
  /// NVRTC settings for metadata that names "source".
  CompileOptions compile;
};

/// A launch whose arguments are validated and whose tensor maps are encoded,
/// ready to be issued repeatedly with one driver call each (benchmarks, and
/// steady-state serving where the tensors stay put). It refers to the
/// tensors' memory by address: keep them alive while it is used.
class PreparedLaunch {
public:
  PreparedLaunch(PreparedLaunch &&) noexcept;
  PreparedLaunch &operator=(PreparedLaunch &&) noexcept;
  ~PreparedLaunch();

  const LaunchDims &dims() const;
  /// Issues the kernel on `stream` (asynchronous; no-op for an empty grid).
  void launch(CUstream stream = nullptr) const;

private:
  friend class Kernel;
  struct Impl;
  explicit PreparedLaunch(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

class Kernel {
public:
  /// Loads `metadataPath` and the CUBIN it names (or compiles its source)
  /// into the current context (see ensureContext()).
  static Kernel load(const std::string &metadataPath,
                     const LoadOptions &options = {});
  /// Loads an in-memory image for already-parsed metadata.
  static Kernel fromImage(KernelMetadata metadata,
                          const std::vector<char> &image);

  Kernel(Kernel &&) noexcept;
  Kernel &operator=(Kernel &&) noexcept;
  ~Kernel();

  const KernelMetadata &metadata() const;
  CUfunction function() const;
  /// The launch geometry these arguments give (validates the scalars).
  LaunchDims launchDims(const std::vector<KernelArg> &args,
                        const std::optional<ExplicitGrid> &grid = {}) const;
  /// Validates the arguments, encodes the tensor maps and launches on
  /// `stream` (asynchronous; a grid with no work launches nothing).
  void launch(const std::vector<KernelArg> &args,
              CUstream stream = nullptr) const;
  /// launch() with a caller-chosen grid, which replaces the metadata's
  /// formula (required for an "explicit" grid).
  void launch(const std::vector<KernelArg> &args, const ExplicitGrid &grid,
              CUstream stream = nullptr) const;
  /// Does everything launch() does except the launch itself.
  PreparedLaunch prepare(const std::vector<KernelArg> &args,
                         const std::optional<ExplicitGrid> &grid = {}) const;

private:
  struct Impl;
  explicit Kernel(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

/// Argument checks shared by launch() and launchDims(); pure, for tests.
/// Returns the scalar values by parameter index for computeLaunchDims().
std::vector<std::optional<int64_t>>
checkKernelArgs(const KernelMetadata &md, const std::vector<KernelArg> &args);

} // namespace tawa::runtime
