#include "tawa/runtime/Grid.h"
#include "tawa/runtime/Error.h"
#include "tawa/runtime/Kernel.h"

#include <gtest/gtest.h>

using namespace tawa::runtime;

namespace {

KernelMetadata gemm(const char *kind, const char *cluster = "[1, 1, 1]") {
  std::string text = std::string(R"({
    "format": "tawa-kernel-metadata/1", "kernel": "k", "cubin": "k.cubin",
    "block": [384, 1, 1], "cluster": )") +
                     cluster + R"(,
    "dynamic_smem_bytes": 1024,
    "grid": {"kind": ")" +
                     kind + R"(",
             "x": [{"param": "N", "size": 256}],
             "y": [{"param": "M", "size": 128}], "z": []},
    "params": [{"name": "M", "kind": "i32"}, {"name": "N", "kind": "i64"},
               {"name": "alpha", "kind": "f32"}]})";
  return parseMetadata(text, "g.json");
}

std::vector<std::optional<int64_t>> mn(int64_t m, int64_t n) {
  return {m, n, std::nullopt};
}

TEST(Grid, TilesIsCeilDivisionPerAxis) {
  KernelMetadata md = gemm("tiles");
  LaunchDims d = computeLaunchDims(md, mn(1000, 1000), 132);
  EXPECT_EQ(d.grid, (std::array<unsigned, 3>{4, 8, 1}));
  EXPECT_EQ(d.block, (std::array<unsigned, 3>{384, 1, 1}));
  EXPECT_EQ(d.dynamicSmemBytes, 1024u);
  EXPECT_EQ(d.tiles, 32u);
  d = computeLaunchDims(md, mn(1, 1), 132);
  EXPECT_EQ(d.grid, (std::array<unsigned, 3>{1, 1, 1}));
  d = computeLaunchDims(md, mn(128, 256), 132);
  EXPECT_EQ(d.grid, (std::array<unsigned, 3>{1, 1, 1}));
  d = computeLaunchDims(md, mn(129, 257), 132);
  EXPECT_EQ(d.grid, (std::array<unsigned, 3>{2, 2, 1}));
}

TEST(Grid, PersistentClampsToSmCount) {
  KernelMetadata md = gemm("persistent");
  LaunchDims d = computeLaunchDims(md, mn(8192, 8192), 132);
  EXPECT_EQ(d.grid, (std::array<unsigned, 3>{132, 1, 1}));
  EXPECT_EQ(d.tiles, 64u * 32u);
  d = computeLaunchDims(md, mn(300, 300), 132);
  EXPECT_EQ(d.grid, (std::array<unsigned, 3>{6, 1, 1}));
  EXPECT_EQ(d.tiles, 6u);
  EXPECT_THROW(computeLaunchDims(md, mn(300, 300), 0), Error);
}

TEST(Grid, ClustersRoundToWholeClusters) {
  KernelMetadata tiles = gemm("tiles", "[2, 1, 1]");
  LaunchDims d = computeLaunchDims(tiles, mn(128, 768), 132);
  EXPECT_EQ(d.grid, (std::array<unsigned, 3>{4, 1, 1})); // 3 rounded up
  EXPECT_EQ(d.cluster, (std::array<unsigned, 3>{2, 1, 1}));
  KernelMetadata pers = gemm("persistent", "[4, 1, 1]");
  d = computeLaunchDims(pers, mn(8192, 8192), 130);
  EXPECT_EQ(d.grid[0], 128u); // 130 rounded down to whole clusters
  d = computeLaunchDims(pers, mn(128, 256), 130);
  EXPECT_EQ(d.grid[0], 4u); // one tile still gets one whole cluster
}

TEST(Grid, EmptyProblemLaunchesNothing) {
  KernelMetadata md = gemm("tiles");
  EXPECT_TRUE(computeLaunchDims(md, mn(0, 100), 132).empty());
  EXPECT_TRUE(computeLaunchDims(gemm("persistent"), mn(100, 0), 132).empty());
  EXPECT_FALSE(computeLaunchDims(md, mn(1, 1), 132).empty());
}

TEST(Grid, RejectsBadScalars) {
  KernelMetadata md = gemm("tiles");
  try {
    computeLaunchDims(md, mn(-5, 100), 132);
    FAIL();
  } catch (const Error &e) {
    EXPECT_STREQ(e.what(), "grid: parameter 'M' of k is negative (-5)");
  }
  try {
    computeLaunchDims(md, {std::nullopt, 5, std::nullopt}, 132);
    FAIL();
  } catch (const Error &e) {
    EXPECT_STREQ(e.what(), "grid: no integer value for parameter 'M' of k");
  }
  try {
    computeLaunchDims(md, mn(128LL * 70000, 1), 132);
    FAIL();
  } catch (const Error &e) {
    EXPECT_STREQ(e.what(),
                 "grid: y = 70000 exceeds the CUDA limit 65535 for k");
  }
}

TEST(KernelArgs, ChecksCountKindAndRange) {
  KernelMetadata md = gemm("tiles");
  auto errorOf = [&](const std::vector<KernelArg> &args) -> std::string {
    try {
      checkKernelArgs(md, args);
    } catch (const Error &e) {
      return e.what();
    }
    return "<no error>";
  };
  EXPECT_EQ(errorOf({KernelArg::integer(1)}), "k: expected 3 arguments, got 1");
  EXPECT_EQ(errorOf({KernelArg::floating(1.5), KernelArg::integer(1),
                     KernelArg::floating(1)}),
            "k: argument 0 'M' (i32): got a float");
  EXPECT_EQ(
      errorOf({KernelArg::integer(int64_t(1) << 31), KernelArg::integer(1),
               KernelArg::floating(1)}),
      "k: argument 0 'M' (i32): value 2147483648 does not fit in 32 bits");
  EXPECT_EQ(errorOf({KernelArg::integer(1), KernelArg::tensor({}),
                     KernelArg::floating(1)}),
            "k: argument 1 'N' (i64): got a tensor");
  auto scalars = checkKernelArgs(md, {KernelArg::integer(7),
                                      KernelArg::integer(int64_t(1) << 40),
                                      KernelArg::integer(2)});
  EXPECT_EQ(scalars[0], 7);
  EXPECT_EQ(scalars[1], int64_t(1) << 40);
  EXPECT_FALSE(
      scalars[2].has_value()); // f32 takes an integer, not a grid value
}

TEST(Grid, ExplicitGridComesFromTheCaller) {
  KernelMetadata md = parseMetadata(R"({
    "format": "tawa-kernel-metadata/1", "kernel": "k", "cubin": "k.cubin",
    "block": [256, 1, 1], "dynamic_smem_bytes": 1024,
    "grid": {"kind": "explicit"},
    "params": [{"name": "M", "kind": "i32"}]})",
                                    "e.json");
  EXPECT_EQ(md.grid.kind, GridKind::Explicit);
  std::vector<std::optional<int64_t>> scalars = {1000};
  // Without a grid there is nothing to launch with.
  EXPECT_THROW(computeLaunchDims(md, scalars, 132), Error);
  LaunchDims d = computeLaunchDims(md, scalars, 132, ExplicitGrid{8, 3, 1});
  EXPECT_EQ(d.grid, (std::array<unsigned, 3>{8, 3, 1}));
  EXPECT_EQ(d.block, (std::array<unsigned, 3>{256, 1, 1}));
  EXPECT_EQ(d.tiles, 24u);
  d = computeLaunchDims(md, scalars, 132, ExplicitGrid{0, 1, 1});
  EXPECT_TRUE(d.empty());
  EXPECT_THROW(computeLaunchDims(md, scalars, 132, ExplicitGrid{1, 65536, 1}),
               Error);
}

TEST(Grid, CallerGridReplacesTheFormula) {
  KernelMetadata md = gemm("tiles", "[2, 1, 1]");
  LaunchDims d =
      computeLaunchDims(md, mn(1000, 1000), 132, ExplicitGrid{6, 1, 1});
  EXPECT_EQ(d.grid, (std::array<unsigned, 3>{6, 1, 1}));
  // Whole clusters only; the caller's grid is never rounded.
  EXPECT_THROW(
      computeLaunchDims(md, mn(1000, 1000), 132, ExplicitGrid{5, 1, 1}), Error);
}

TEST(Grid, ExplicitGridTakesNoFactors) {
  EXPECT_THROW(parseMetadata(R"({
    "format": "tawa-kernel-metadata/1", "kernel": "k", "cubin": "k.cubin",
    "block": [256, 1, 1], "dynamic_smem_bytes": 0,
    "grid": {"kind": "explicit", "x": [{"param": "M", "size": 128}]},
    "params": [{"name": "M", "kind": "i32"}]})",
                             "e.json"),
               Error);
}

TEST(Grid, ProgramsClampToSmCountAndKeepTheProgramGrid) {
  KernelMetadata md = parseMetadata(R"({
    "format": "tawa-kernel-metadata/1", "kernel": "k", "cubin": "k.cubin",
    "block": [384, 1, 1], "cluster": [2, 1, 1], "dynamic_smem_bytes": 0,
    "grid": {"kind": "programs"},
    "params": [{"name": "nx", "kind": "num_programs", "axis": "x"}]})",
                                    "p.json");
  LaunchDims d = computeLaunchDims(md, {std::nullopt}, 132, ExplicitGrid{32, 64, 1});
  EXPECT_EQ(d.grid, (std::array<unsigned, 3>{132, 1, 1}));
  EXPECT_EQ(d.programs, (std::array<uint64_t, 3>{32, 64, 1}));
  EXPECT_EQ(d.tiles, 2048u);
  d = computeLaunchDims(md, {std::nullopt}, 132, ExplicitGrid{5, 1, 1});
  EXPECT_EQ(d.grid, (std::array<unsigned, 3>{4, 1, 1})); // whole clusters
  d = computeLaunchDims(md, {std::nullopt}, 132, ExplicitGrid{0, 4, 1});
  EXPECT_TRUE(d.empty());
  EXPECT_THROW(computeLaunchDims(md, {std::nullopt}, 132), Error);
  EXPECT_THROW(computeLaunchDims(md, {std::nullopt}, 0, ExplicitGrid{1, 1, 1}),
               Error);
}

} // namespace
