//===- Grid.h - Launch-grid computation -------------------------*- C++ -*-===//
//
// The grid of a launch is a pure function of the metadata, the scalar
// arguments and the SM count, kept apart from the driver so it can be tested
// on machines without a GPU.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "tawa/runtime/Metadata.h"

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

namespace tawa::runtime {

struct LaunchDims {
  std::array<unsigned, 3> grid = {1, 1, 1};
  std::array<unsigned, 3> block = {1, 1, 1};
  std::array<unsigned, 3> cluster = {1, 1, 1};
  unsigned dynamicSmemBytes = 0;
  /// Number of tiles the grid formula counted before persistence clamped it.
  uint64_t tiles = 0;
  /// GridKind::Programs: the caller's program grid, which the kernel's
  /// NumPrograms parameters receive.
  std::array<uint64_t, 3> programs = {1, 1, 1};
  /// True when there is no work (some grid factor is zero); launch is a no-op.
  bool empty() const { return grid[0] == 0 || grid[1] == 0 || grid[2] == 0; }
};

/// A grid chosen by the caller, (x, y, z) in CTAs.
using ExplicitGrid = std::array<uint64_t, 3>;

/// `scalars[i]` holds the integer value of parameter i when it is an i32/i64
/// scalar; entries for other parameters are ignored. For "persistent" grids
/// grid.x = min(smCount, tiles), rounded to a multiple of the cluster; for
/// "tiles" grids every dimension is rounded up to a multiple of the cluster.
/// A caller-supplied `grid` replaces the formula (any kind); it is required
/// for "explicit" grids and must be whole clusters within CUDA's limits.
/// For "programs" grids it is required too and names programs, not CTAs:
/// grid.x = min(smCount, x * y * z) (whole clusters), programs = the grid.
LaunchDims computeLaunchDims(const KernelMetadata &md,
                             const std::vector<std::optional<int64_t>> &scalars,
                             unsigned smCount,
                             const std::optional<ExplicitGrid> &grid = {});

} // namespace tawa::runtime
