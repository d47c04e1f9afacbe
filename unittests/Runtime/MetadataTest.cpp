#include "tawa/runtime/Metadata.h"
#include "tawa/runtime/Error.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

using namespace tawa::runtime;

namespace {

// The example of docs/METADATA.md, without its explanatory comments.
const char *kGemm = R"({
  "format": "tawa-kernel-metadata/1",
  "kernel": "tawa_ref_gemm_f16",
  "cubin": "ref_gemm.cubin",
  "block": [384, 1, 1],
  "cluster": [1, 1, 1],
  "dynamic_smem_bytes": 213504,
  "grid": {"kind": "persistent",
           "x": [{"param": "M", "size": 128}, {"param": "N", "size": 256}],
           "y": [], "z": []},
  "params": [
    {"name": "a", "kind": "tensormap", "dtype": "f16", "box": [128, 64],
     "swizzle": "128B", "oob": "zero"},
    {"name": "b", "kind": "tensormap", "dtype": "f16", "box": [256, 64],
     "swizzle": "128B", "oob": "zero"},
    {"name": "c", "kind": "tensormap", "dtype": "f16", "box": [64, 64],
     "swizzle": "128B"},
    {"name": "M", "kind": "i32"},
    {"name": "N", "kind": "i32"},
    {"name": "K", "kind": "i32"}
  ]
})";

std::string replaced(std::string text, const std::string &from,
                     const std::string &to) {
  size_t pos = text.find(from);
  EXPECT_NE(pos, std::string::npos) << from;
  if (pos != std::string::npos)
    text.replace(pos, from.size(), to);
  return text;
}

std::string errorOf(const std::string &text) {
  try {
    parseMetadata(text, "k.json");
  } catch (const Error &e) {
    return e.what();
  }
  return "<no error>";
}

TEST(Metadata, ParsesDocumentedExample) {
  KernelMetadata md = parseMetadata(kGemm, "k.json");
  EXPECT_EQ(md.kernel, "tawa_ref_gemm_f16");
  EXPECT_EQ(md.cubin, "ref_gemm.cubin");
  EXPECT_TRUE(md.source.empty());
  EXPECT_EQ(md.block, (std::array<unsigned, 3>{384, 1, 1}));
  EXPECT_EQ(md.dynamicSmemBytes, 213504u);
  EXPECT_EQ(md.grid.kind, GridKind::Persistent);
  ASSERT_EQ(md.grid.dims[0].size(), 2u);
  EXPECT_EQ(md.grid.dims[0][1].param, "N");
  EXPECT_EQ(md.grid.dims[0][1].paramIndex, 4u);
  EXPECT_EQ(md.grid.dims[0][1].size, 256);
  ASSERT_EQ(md.params.size(), 6u);
  const ParamSpec &a = md.params[0];
  EXPECT_EQ(a.kind, ParamKind::TensorMap);
  EXPECT_EQ(a.tensor.dtype, DType::F16);
  EXPECT_EQ(a.tensor.box, (std::vector<uint32_t>{128, 64}));
  EXPECT_EQ(a.tensor.swizzle, Swizzle::B128);
  EXPECT_EQ(a.tensor.oob, OobFill::Zero);
  EXPECT_EQ(a.tensor.l2Promotion, L2Promotion::B256); // default
  EXPECT_EQ(md.params[5].kind, ParamKind::I32);
}

TEST(Metadata, DefaultsAndOptionalFields) {
  std::string text = replaced(kGemm, R"("cluster": [1, 1, 1],)", "");
  text = replaced(text, R"("y": [], "z": [])", R"("_note": "ignored")");
  KernelMetadata md = parseMetadata(text, "k.json");
  EXPECT_EQ(md.cluster, (std::array<unsigned, 3>{1, 1, 1}));
  EXPECT_TRUE(md.grid.dims[1].empty());
}

TEST(Metadata, SourceWithNvrtcOptions) {
  std::string text =
      replaced(kGemm, R"("cubin": "ref_gemm.cubin",)",
               R"("source": "k.cu", "nvrtc_options": ["-DX=1"],)");
  KernelMetadata md = parseMetadata(text, "k.json");
  EXPECT_EQ(md.source, "k.cu");
  EXPECT_EQ(md.nvrtcOptions, std::vector<std::string>{"-DX=1"});
}

TEST(Metadata, ErrorsNameFileFieldAndProblem) {
  EXPECT_EQ(errorOf(replaced(kGemm, R"("kernel": "tawa_ref_gemm_f16",)", "")),
            "k.json: $: missing required field \"kernel\"");
  EXPECT_EQ(errorOf(replaced(kGemm, R"("dtype": "f16", "box": [128, 64])",
                             R"("dtype": "f8", "box": [128, 64])")),
            "k.json: $.params[0].dtype: unknown dtype \"f8\" (expected one of: "
            "\"f16\", \"bf16\", \"f32\", \"e4m3\", \"e5m2\", \"i8\", \"i32\", \"i64\")");
  EXPECT_EQ(errorOf(replaced(kGemm, "[128, 64]", "[128, 257]")),
            "k.json: $.params[0].box[1]: value 257 outside [1, 256]");
  EXPECT_EQ(errorOf(replaced(kGemm, "[128, 64]", "[128, 128]")),
            "k.json: $.params[0].box: inner box extent is 256 B, wider than "
            "the 128B swizzle span");
  EXPECT_EQ(errorOf(replaced(kGemm, "[128, 64]", "[128, 4]")),
            "k.json: $.params[0].box: inner box extent 4 x 2 B = 8 B is not a "
            "multiple of 16 bytes");
  EXPECT_EQ(errorOf(replaced(kGemm, R"("swizzle": "128B", "oob": "zero"})",
                             R"("swizzle": "256B", "oob": "zero"})")),
            "k.json: $.params[0].swizzle: invalid value \"256B\" (expected one "
            "of: \"none\", \"32B\", \"64B\", \"128B\")");
  EXPECT_EQ(errorOf(replaced(kGemm, R"({"param": "N", "size": 256})",
                             R"({"param": "Q", "size": 256})")),
            "k.json: $.grid.x[1].param: no parameter named \"Q\"");
  EXPECT_EQ(errorOf(replaced(kGemm, R"({"param": "N", "size": 256})",
                             R"({"param": "a", "size": 256})")),
            "k.json: $.grid.x[1].param: parameter \"a\" is tensormap, but grid "
            "factors need an i32 or i64 scalar");
  EXPECT_EQ(errorOf(replaced(kGemm, R"({"param": "N", "size": 256})",
                             R"({"param": "N", "size": 0})")),
            "k.json: $.grid.x[1].size: value 0 outside [1, 4294967296]");
  EXPECT_EQ(errorOf(replaced(kGemm, "tawa-kernel-metadata/1",
                             "tawa-kernel-metadata/2")),
            "k.json: $.format: unsupported format \"tawa-kernel-metadata/2\" "
            "(this runtime reads \"tawa-kernel-metadata/1\")");
  EXPECT_EQ(
      errorOf(replaced(kGemm, "[384, 1, 1]", "[384, 4, 1]")),
      "k.json: $.block: 1536 threads per CTA; at most 1024 (and z <= 64)");
  EXPECT_EQ(errorOf(replaced(kGemm, "[384, 1, 1]", "[384, 1]")),
            "k.json: $.block: expected 3 integers [x, y, z], found 2 elements");
  EXPECT_EQ(errorOf(replaced(kGemm, "213504", "213504.5")),
            "k.json: $.dynamic_smem_bytes: expected an integer, found a "
            "non-integral number");
  EXPECT_EQ(errorOf(replaced(kGemm, "213504", "300000")),
            "k.json: $.dynamic_smem_bytes: value 300000 outside [0, 232448]");
  EXPECT_EQ(errorOf(replaced(kGemm, R"("cluster": [1, 1, 1])",
                             R"("cluster": [1, 2, 1])")),
            "k.json: $.cluster: a persistent grid is one-dimensional, so "
            "clusters may only extend along x");
  EXPECT_EQ(errorOf(replaced(kGemm, R"("kind": "persistent")",
                             R"("kind": "persistant")")),
            "k.json: $.grid.kind: invalid value \"persistant\" (expected one "
            "of: \"tiles\", \"persistent\", \"explicit\", \"programs\")");
  EXPECT_EQ(errorOf(replaced(kGemm, R"({"name": "K", "kind": "i32"})",
                             R"({"name": "K", "kind": "u32"})")),
            "k.json: $.params[5].kind: invalid value \"u32\" (expected one of: "
            "\"tensormap\", \"ptr\", \"i32\", \"i64\", \"f32\", "
            "\"num_programs\")");
  // Program counts belong to a programs grid, which has no formula.
  EXPECT_EQ(errorOf(replaced(kGemm, R"({"name": "K", "kind": "i32"})",
                             R"({"name": "nx", "kind": "num_programs", "axis": "x"})")),
            "k.json: $.params[5].kind: num_programs parameters need a "
            "\"programs\" grid");
  EXPECT_EQ(errorOf(replaced(kGemm, R"("kind": "persistent")",
                             R"("kind": "programs")")),
            "k.json: $.grid.x: a programs grid takes no factors (the caller "
            "passes the grid at launch)");
  EXPECT_EQ(errorOf(replaced(replaced(kGemm, R"("kind": "persistent",
           "x": [{"param": "M", "size": 128}, {"param": "N", "size": 256}],
           "y": [], "z": []})", R"("kind": "programs"})"),
                             R"({"name": "K", "kind": "i32"})",
                             R"({"name": "nx", "kind": "num_programs", "axis": "w"})")),
            "k.json: $.params[5].axis: invalid value \"w\" (expected one of: "
            "\"x\", \"y\", \"z\")");
  EXPECT_EQ(errorOf(replaced(kGemm, R"({"name": "K", "kind": "i32"})",
                             R"({"name": "M", "kind": "i32"})")),
            "k.json: $.params[5].name: duplicate parameter name \"M\"");
  EXPECT_EQ(errorOf(replaced(kGemm, R"("cubin": "ref_gemm.cubin",)", "")),
            "k.json: $: exactly one of \"cubin\" and \"source\" must be given");
  EXPECT_EQ(errorOf(replaced(kGemm, R"("kernel": "tawa_ref_gemm_f16",)",
                             R"("kernel": "tawa_ref_gemm_f16", "kernal": 1,)")),
            "k.json: $: unknown field \"kernal\" (expected one of: format, "
            "kernel, cubin, source, nvrtc_options, block, cluster, "
            "dynamic_smem_bytes, grid, params)");
  EXPECT_EQ(errorOf(replaced(kGemm, R"("oob": "zero"},
    {"name": "b")",
                             R"("oob": "nan", "dtype2": 1},
    {"name": "b")")),
            "k.json: $.params[0]: unknown field \"dtype2\" (expected one of: "
            "name, kind, dtype, box, swizzle, oob, l2_promotion)");
  EXPECT_EQ(errorOf("[1]"), "k.json: $: expected object, found array");
  EXPECT_EQ(errorOf("{\"format\": }"),
            "k.json:1:12: expected a JSON value but found '}'");
}

TEST(Metadata, NanFillNeedsFloat) {
  std::string text = replaced(kGemm, R"("dtype": "f16", "box": [128, 64],
     "swizzle": "128B", "oob": "zero")",
                              R"("dtype": "i8", "box": [128, 64],
     "swizzle": "128B", "oob": "nan")");
  EXPECT_EQ(errorOf(text), "k.json: $.params[0].oob: \"nan\" fill needs a "
                           "floating-point dtype TMA understands, not i8");
}

TEST(Metadata, LoadsFileAndResolvesPaths) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / "tawa-metadata-test";
  fs::create_directories(dir);
  fs::path file = dir / "gemm.json";
  std::ofstream(file) << kGemm;
  KernelMetadata md = loadMetadataFile(file.string());
  EXPECT_EQ(md.baseDir, dir.string());
  EXPECT_EQ(md.resolve(md.cubin), (dir / "ref_gemm.cubin").string());
  EXPECT_EQ(md.resolve("/abs/x.cubin"), "/abs/x.cubin");
  fs::remove_all(dir);

  try {
    loadMetadataFile((dir / "missing.json").string());
    FAIL() << "no error for a missing file";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("cannot open kernel metadata"),
              std::string::npos);
  }
}

TEST(Metadata, ShippedCheckKernelsParse) {
  for (const char *name :
       {"copy_f32_none.json", "copy_f32_sw128_nan.json",
        "copy_f16_sw64_cluster2.json", "copy_bf16_sw32.json"}) {
    KernelMetadata md =
        loadMetadataFile(std::string(TAWA_RUNTIME_KERNELS_DIR) + "/" + name);
    EXPECT_EQ(md.kernel, "tawa_tma_copy_2d") << name;
    EXPECT_EQ(md.params[2].kind, ParamKind::Ptr) << name;
  }
}

TEST(DTypes, TableIsConsistent) {
  ASSERT_EQ(allDTypes().size(), 8u);
  for (size_t i = 0; i < allDTypes().size(); ++i) {
    const DTypeInfo &info = allDTypes()[i];
    EXPECT_EQ(static_cast<size_t>(info.dtype), i);
    EXPECT_EQ(parseDType(info.name), info.dtype);
    EXPECT_EQ(&dtypeInfo(info.dtype), &info);
  }
  EXPECT_EQ(dtypeInfo(DType::F16).bytes, 2u);
  EXPECT_EQ(dtypeInfo(DType::BF16).tmaType, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16);
  EXPECT_EQ(dtypeInfo(DType::F32).bytes, 4u);
  EXPECT_EQ(dtypeInfo(DType::E4M3).tmaType, CU_TENSOR_MAP_DATA_TYPE_UINT8);
  EXPECT_FALSE(dtypeInfo(DType::E5M2).tmaIsFloat);
  EXPECT_EQ(dtypeInfo(DType::I32).tmaType, CU_TENSOR_MAP_DATA_TYPE_INT32);
  EXPECT_EQ(dtypeInfo(DType::I64).bytes, 8u);
  EXPECT_EQ(parseDType("i64"), DType::I64);
  EXPECT_FALSE(parseDType("F16").has_value()); // spellings are exact
  EXPECT_EQ(swizzleSpanBytes(Swizzle::B64), 64u);
  EXPECT_EQ(swizzleSpanBytes(Swizzle::None), 0u);
}

} // namespace
