//===- Metadata.h - Kernel metadata (tawa-kernel-metadata/1) ----*- C++ -*-===//
//
// The in-memory form of docs/METADATA.md. Parsing is strict: every error names
// the file, the JSON path of the offending field and what was expected, so a
// compiler bug shows up as a precise message rather than a bad launch.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "tawa/runtime/DType.h"

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tawa::runtime {

inline constexpr const char *kMetadataFormat = "tawa-kernel-metadata/1";

/// Ptr is a raw device address (for pointer-based loads and stores).
/// NumPrograms is an i32 the runtime fills with one extent of the launch's
/// program grid (GridKind::Programs); the caller does not pass it.
enum class ParamKind { TensorMap, Ptr, I32, I64, F32, NumPrograms };
enum class Swizzle { None, B32, B64, B128 };
enum class OobFill { Zero, Nan };
enum class L2Promotion { None, B64, B128, B256 };

const char *paramKindName(ParamKind kind);
const char *swizzleName(Swizzle swizzle);
/// Bytes of one swizzle span (0 for Swizzle::None, which imposes no limit).
unsigned swizzleSpanBytes(Swizzle swizzle);

struct TensorMapParam {
  DType dtype = DType::F16;
  /// Box extents in tensor order, outermost first (like Triton's block_shape).
  std::vector<uint32_t> box;
  Swizzle swizzle = Swizzle::None;
  OobFill oob = OobFill::Zero;
  L2Promotion l2Promotion = L2Promotion::B256;
};

struct ParamSpec {
  std::string name;
  ParamKind kind = ParamKind::I32;
  TensorMapParam tensor; ///< meaningful only for ParamKind::TensorMap
  unsigned axis = 0;     ///< ParamKind::NumPrograms: 0, 1, 2 for x, y, z
  /// Whether the caller passes this parameter (all but NumPrograms).
  bool passedByCaller() const { return kind != ParamKind::NumPrograms; }
};

/// Explicit: the caller supplies the grid at launch (compiler output for
/// Triton kernels, whose launch grid Triton's caller chooses). Programs: the
/// caller supplies that grid too, but as a grid of programs that a
/// persistent kernel walks itself: the runtime launches min(#SMs, programs)
/// CTAs and passes the program grid in the NumPrograms parameters.
enum class GridKind { Tiles, Persistent, Explicit, Programs };

/// One factor of a grid dimension: ceil(value of scalar `param` / size).
struct GridTerm {
  std::string param;
  unsigned paramIndex = 0; ///< index into KernelMetadata::params
  int64_t size = 1;
};

struct GridSpec {
  GridKind kind = GridKind::Tiles;
  std::array<std::vector<GridTerm>, 3> dims; ///< x, y, z; empty counts as 1
};

struct KernelMetadata {
  std::string kernel;
  /// Exactly one of cubin / source is set; both are relative to baseDir
  /// unless absolute. "source" is CUDA C++ that the runtime compiles with
  /// NVRTC (through the on-disk cache) at load time.
  std::string cubin;
  std::string source;
  std::vector<std::string> nvrtcOptions;
  std::array<unsigned, 3> block = {1, 1, 1};
  std::array<unsigned, 3> cluster = {1, 1, 1};
  unsigned dynamicSmemBytes = 0;
  GridSpec grid;
  std::vector<ParamSpec> params;
  /// Directory of the JSON file ("" when parsed from a string).
  std::string baseDir;

  /// Resolves a path named in the metadata against baseDir.
  std::string resolve(const std::string &relative) const;
};

/// Parses metadata text; `sourceName` prefixes every error message.
KernelMetadata parseMetadata(std::string_view text,
                             const std::string &sourceName = "<metadata>");
/// Reads and parses a metadata file; baseDir becomes the file's directory.
KernelMetadata loadMetadataFile(const std::string &path);

} // namespace tawa::runtime
