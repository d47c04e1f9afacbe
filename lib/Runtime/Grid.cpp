//===- Grid.cpp - Launch-grid computation
//----------------------------------===//

#include "tawa/runtime/Grid.h"

#include <limits>
#include "tawa/runtime/Error.h"

namespace tawa::runtime {

namespace {

constexpr uint64_t kMaxGridX = (uint64_t(1) << 31) - 1;
constexpr uint64_t kMaxGridYZ = 65535;

uint64_t ceilDiv(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

uint64_t roundUp(uint64_t a, uint64_t b) { return ceilDiv(a, b) * b; }

/// Product of ceil(param / size) over the terms; saturates far above any
/// legal grid so that the range check below reports the overflow.
uint64_t evalDim(const std::vector<GridTerm> &terms, const KernelMetadata &md,
                 const std::vector<std::optional<int64_t>> &scalars) {
  uint64_t product = 1;
  for (const GridTerm &t : terms) {
    if (t.paramIndex >= scalars.size() || !scalars[t.paramIndex])
      throw Error("grid: no integer value for parameter '" + t.param + "' of " +
                  md.kernel);
    int64_t value = *scalars[t.paramIndex];
    if (value < 0)
      throw Error("grid: parameter '" + t.param + "' of " + md.kernel +
                  " is negative (" + std::to_string(value) + ")");
    uint64_t factor =
        ceilDiv(static_cast<uint64_t>(value), static_cast<uint64_t>(t.size));
    if (factor != 0 && product > (uint64_t(1) << 62) / factor)
      product = uint64_t(1) << 62;
    else
      product *= factor;
  }
  return product;
}

/// The 1-D grid of a kernel that loops over `work` items itself: at most one
/// CTA per SM, in whole clusters (rounded down, so that no CTA waits for an
/// SM a sibling holds, but at least one cluster when there is work).
std::array<unsigned, 3> oneCtaPerSm(uint64_t work, unsigned smCount,
                                    uint64_t clusterX) {
  uint64_t x = std::min<uint64_t>(work, smCount);
  if (x != 0)
    x = std::max<uint64_t>(clusterX, x / clusterX * clusterX);
  return {static_cast<unsigned>(x), x ? 1u : 0u, x ? 1u : 0u};
}

} // namespace

LaunchDims computeLaunchDims(const KernelMetadata &md,
                             const std::vector<std::optional<int64_t>> &scalars,
                             unsigned smCount,
                             const std::optional<ExplicitGrid> &grid) {
  LaunchDims dims;
  dims.block = md.block;
  dims.cluster = md.cluster;
  dims.dynamicSmemBytes = md.dynamicSmemBytes;
  const char *axes = "xyz";
  if (md.grid.kind == GridKind::Programs) {
    if (!grid)
      throw Error("grid: " + md.kernel +
                  " walks a grid of programs; the launch must supply it");
    for (int d = 0; d < 3; ++d)
      if ((*grid)[d] > (d == 0 ? kMaxGridX : kMaxGridYZ))
        throw Error(std::string("grid: ") + axes[d] + " = " +
                    std::to_string((*grid)[d]) + " exceeds the CUDA limit " +
                    std::to_string(d == 0 ? kMaxGridX : kMaxGridYZ) +
                    " for " + md.kernel);
    if (smCount == 0)
      throw Error("grid: a programs grid needs the SM count, got 0");
    dims.programs = *grid;
    uint64_t programs = (*grid)[0] * (*grid)[1] * (*grid)[2];
    if (programs > uint64_t(std::numeric_limits<int32_t>::max()))
      throw Error("grid: " + std::to_string(programs) +
                  " programs do not fit the kernel's 32-bit program ids");
    dims.tiles = programs;
    dims.grid = oneCtaPerSm(programs, smCount, md.cluster[0]);
    return dims;
  }
  if (grid) {
    // Taken as given, not rounded: a silently enlarged grid would run CTAs
    // the kernel does not expect.
    for (int d = 0; d < 3; ++d) {
      uint64_t v = (*grid)[d];
      uint64_t limit = d == 0 ? kMaxGridX : kMaxGridYZ;
      if (v > limit)
        throw Error(std::string("grid: ") + axes[d] + " = " +
                    std::to_string(v) + " exceeds the CUDA limit " +
                    std::to_string(limit) + " for " + md.kernel);
      if (v % md.cluster[d] != 0)
        throw Error(std::string("grid: ") + axes[d] + " = " +
                    std::to_string(v) + " is not a multiple of the cluster (" +
                    std::to_string(md.cluster[d]) + ") for " + md.kernel);
      dims.grid[d] = static_cast<unsigned>(v);
    }
    dims.tiles = (*grid)[0] * (*grid)[1] * (*grid)[2];
    return dims;
  }
  if (md.grid.kind == GridKind::Explicit)
    throw Error("grid: " + md.kernel +
                " has an explicit grid; the launch must supply one");
  uint64_t g[3];
  for (int d = 0; d < 3; ++d)
    g[d] = evalDim(md.grid.dims[d], md, scalars);

  if (md.grid.kind == GridKind::Persistent) {
    if (smCount == 0)
      throw Error("grid: a persistent grid needs the SM count, got 0");
    uint64_t tiles = g[0] * g[1] * g[2];
    if (g[0] && g[1] && g[2] && tiles / g[0] / g[1] != g[2])
      tiles = uint64_t(1) << 62;
    dims.tiles = tiles;
    dims.grid = oneCtaPerSm(tiles, smCount, md.cluster[0]);
    return dims;
  }

  dims.tiles = g[0] * g[1] * g[2];
  for (int d = 0; d < 3; ++d) {
    uint64_t v = roundUp(g[d], md.cluster[d]);
    uint64_t limit = d == 0 ? kMaxGridX : kMaxGridYZ;
    if (v > limit)
      throw Error(std::string("grid: ") + axes[d] + " = " + std::to_string(v) +
                  " exceeds the CUDA limit " + std::to_string(limit) + " for " +
                  md.kernel);
    dims.grid[d] = static_cast<unsigned>(v);
  }
  return dims;
}

} // namespace tawa::runtime
