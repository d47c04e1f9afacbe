//===- Metadata.cpp - Kernel metadata parsing
//------------------------------===//

#include "tawa/runtime/Metadata.h"
#include "tawa/runtime/Error.h"
#include "tawa/runtime/Json.h"

#include <fstream>
#include <initializer_list>
#include <sstream>

namespace tawa::runtime {

const char *paramKindName(ParamKind kind) {
  switch (kind) {
  case ParamKind::TensorMap:
    return "tensormap";
  case ParamKind::Ptr:
    return "ptr";
  case ParamKind::I32:
    return "i32";
  case ParamKind::I64:
    return "i64";
  case ParamKind::F32:
    return "f32";
  case ParamKind::NumPrograms:
    return "num_programs";
  }
  return "?";
}

const char *swizzleName(Swizzle swizzle) {
  switch (swizzle) {
  case Swizzle::None:
    return "none";
  case Swizzle::B32:
    return "32B";
  case Swizzle::B64:
    return "64B";
  case Swizzle::B128:
    return "128B";
  }
  return "?";
}

unsigned swizzleSpanBytes(Swizzle swizzle) {
  switch (swizzle) {
  case Swizzle::None:
    return 0;
  case Swizzle::B32:
    return 32;
  case Swizzle::B64:
    return 64;
  case Swizzle::B128:
    return 128;
  }
  return 0;
}

std::string KernelMetadata::resolve(const std::string &relative) const {
  if (relative.empty() || relative.front() == '/' || baseDir.empty())
    return relative;
  return baseDir + "/" + relative;
}

namespace {

/// Walks the JSON tree keeping the path of the current field, so every
/// message reads "<file>: <path>: <problem>".
class Reader {
public:
  explicit Reader(std::string source) : source_(std::move(source)) {}

  [[noreturn]] void fail(const std::string &path,
                         const std::string &what) const {
    throw Error(source_ + ": " + path + ": " + what);
  }

  const JsonValue &field(const JsonValue &obj, const std::string &objPath,
                         const char *key) const {
    const JsonValue *v = obj.find(key);
    if (!v)
      fail(objPath, std::string("missing required field \"") + key + "\"");
    return *v;
  }

  /// Rejects keys the format does not define (a misspelt key would otherwise
  /// be silently ignored); keys starting with '_' are free for comments.
  void onlyKeys(const JsonValue &obj, const std::string &path,
                std::initializer_list<const char *> allowed) const {
    for (const auto &[key, value] : obj.asObject()) {
      if (!key.empty() && key[0] == '_')
        continue;
      bool known = false;
      for (const char *a : allowed)
        known |= key == a;
      if (!known) {
        std::string list;
        for (const char *a : allowed)
          list += std::string(list.empty() ? "" : ", ") + a;
        fail(path,
             "unknown field \"" + key + "\" (expected one of: " + list + ")");
      }
    }
  }

  void expectKind(const JsonValue &v, const std::string &path,
                  JsonValue::Kind kind) const {
    if (v.kind() != kind)
      fail(path, std::string("expected ") + JsonValue::kindName(kind) +
                     ", found " + JsonValue::kindName(v.kind()));
  }

  const std::string &string(const JsonValue &v, const std::string &path) const {
    expectKind(v, path, JsonValue::Kind::String);
    if (v.asString().empty())
      fail(path, "must not be empty");
    return v.asString();
  }

  int64_t integer(const JsonValue &v, const std::string &path, int64_t lo,
                  int64_t hi) const {
    if (!v.isInteger())
      fail(path, std::string("expected an integer, found ") +
                     (v.isNumber() ? "a non-integral number"
                                   : JsonValue::kindName(v.kind())));
    if (v.asInt() < lo || v.asInt() > hi)
      fail(path, "value " + std::to_string(v.asInt()) + " outside [" +
                     std::to_string(lo) + ", " + std::to_string(hi) + "]");
    return v.asInt();
  }

  std::array<unsigned, 3> dim3(const JsonValue &v, const std::string &path,
                               int64_t hi) const {
    expectKind(v, path, JsonValue::Kind::Array);
    if (v.asArray().size() != 3)
      fail(path, "expected 3 integers [x, y, z], found " +
                     std::to_string(v.asArray().size()) + " elements");
    std::array<unsigned, 3> out;
    for (int i = 0; i < 3; ++i)
      out[i] = static_cast<unsigned>(
          integer(v.asArray()[i], path + "[" + std::to_string(i) + "]", 1, hi));
    return out;
  }

private:
  std::string source_;
};

template <typename T>
T pickEnum(const Reader &r, const std::string &path, const std::string &value,
           std::initializer_list<std::pair<const char *, T>> choices) {
  std::string list;
  for (const auto &[name, e] : choices) {
    if (value == name)
      return e;
    list += std::string(list.empty() ? "" : ", ") + "\"" + name + "\"";
  }
  r.fail(path,
         "invalid value \"" + value + "\" (expected one of: " + list + ")");
}

ParamSpec parseParam(const Reader &r, const JsonValue &v,
                     const std::string &path) {
  r.expectKind(v, path, JsonValue::Kind::Object);
  ParamSpec p;
  p.name = r.string(r.field(v, path, "name"), path + ".name");
  std::string kind = r.string(r.field(v, path, "kind"), path + ".kind");
  p.kind = pickEnum<ParamKind>(r, path + ".kind", kind,
                               {{"tensormap", ParamKind::TensorMap},
                                {"ptr", ParamKind::Ptr},
                                {"i32", ParamKind::I32},
                                {"i64", ParamKind::I64},
                                {"f32", ParamKind::F32},
                                {"num_programs", ParamKind::NumPrograms}});
  if (p.kind == ParamKind::NumPrograms) {
    r.onlyKeys(v, path, {"name", "kind", "axis"});
    p.axis = pickEnum<unsigned>(
        r, path + ".axis", r.string(r.field(v, path, "axis"), path + ".axis"),
        {{"x", 0u}, {"y", 1u}, {"z", 2u}});
    return p;
  }
  if (p.kind != ParamKind::TensorMap) {
    r.onlyKeys(v, path, {"name", "kind"});
    return p;
  }
  r.onlyKeys(
      v, path,
      {"name", "kind", "dtype", "box", "swizzle", "oob", "l2_promotion"});
  TensorMapParam &t = p.tensor;
  std::string dtype = r.string(r.field(v, path, "dtype"), path + ".dtype");
  std::optional<DType> parsed = parseDType(dtype);
  if (!parsed) {
    std::string list;
    for (const DTypeInfo &info : allDTypes())
      list += std::string(list.empty() ? "" : ", ") + "\"" + info.name + "\"";
    r.fail(path + ".dtype",
           "unknown dtype \"" + dtype + "\" (expected one of: " + list + ")");
  }
  t.dtype = *parsed;
  const JsonValue &box = r.field(v, path, "box");
  r.expectKind(box, path + ".box", JsonValue::Kind::Array);
  if (box.asArray().empty() || box.asArray().size() > 5)
    r.fail(path + ".box", "rank must be 1 to 5, found " +
                              std::to_string(box.asArray().size()));
  for (size_t i = 0; i < box.asArray().size(); ++i)
    t.box.push_back(static_cast<uint32_t>(r.integer(
        box.asArray()[i], path + ".box[" + std::to_string(i) + "]", 1, 256)));
  std::string swizzle =
      r.string(r.field(v, path, "swizzle"), path + ".swizzle");
  t.swizzle = pickEnum<Swizzle>(r, path + ".swizzle", swizzle,
                                {{"none", Swizzle::None},
                                 {"32B", Swizzle::B32},
                                 {"64B", Swizzle::B64},
                                 {"128B", Swizzle::B128}});
  unsigned innerBytes = t.box.back() * dtypeInfo(t.dtype).bytes;
  if (innerBytes % 16 != 0)
    r.fail(path + ".box", "inner box extent " + std::to_string(t.box.back()) +
                              " x " + std::to_string(dtypeInfo(t.dtype).bytes) +
                              " B = " + std::to_string(innerBytes) +
                              " B is not a multiple of 16 bytes");
  if (t.swizzle != Swizzle::None && innerBytes > swizzleSpanBytes(t.swizzle))
    r.fail(path + ".box", "inner box extent is " + std::to_string(innerBytes) +
                              " B, wider than the " + swizzle +
                              " swizzle span");
  if (const JsonValue *oob = v.find("oob"))
    t.oob = pickEnum<OobFill>(r, path + ".oob", r.string(*oob, path + ".oob"),
                              {{"zero", OobFill::Zero}, {"nan", OobFill::Nan}});
  if (t.oob == OobFill::Nan && !dtypeInfo(t.dtype).tmaIsFloat)
    r.fail(path + ".oob", std::string("\"nan\" fill needs a floating-point "
                                      "dtype TMA understands, not ") +
                              dtype);
  if (const JsonValue *l2 = v.find("l2_promotion"))
    t.l2Promotion = pickEnum<L2Promotion>(r, path + ".l2_promotion",
                                          r.string(*l2, path + ".l2_promotion"),
                                          {{"none", L2Promotion::None},
                                           {"64B", L2Promotion::B64},
                                           {"128B", L2Promotion::B128},
                                           {"256B", L2Promotion::B256}});
  return p;
}

std::vector<GridTerm> parseGridDim(const Reader &r, const JsonValue &v,
                                   const std::string &path,
                                   const std::vector<ParamSpec> &params) {
  r.expectKind(v, path, JsonValue::Kind::Array);
  std::vector<GridTerm> terms;
  for (size_t i = 0; i < v.asArray().size(); ++i) {
    std::string tp = path + "[" + std::to_string(i) + "]";
    const JsonValue &t = v.asArray()[i];
    r.expectKind(t, tp, JsonValue::Kind::Object);
    r.onlyKeys(t, tp, {"param", "size"});
    GridTerm term;
    term.param = r.string(r.field(t, tp, "param"), tp + ".param");
    term.size =
        r.integer(r.field(t, tp, "size"), tp + ".size", 1, int64_t(1) << 32);
    bool found = false;
    for (size_t p = 0; p < params.size(); ++p) {
      if (params[p].name != term.param)
        continue;
      if (params[p].kind != ParamKind::I32 && params[p].kind != ParamKind::I64)
        r.fail(tp + ".param", "parameter \"" + term.param + "\" is " +
                                  paramKindName(params[p].kind) +
                                  ", but grid factors need an i32 or i64 "
                                  "scalar");
      term.paramIndex = static_cast<unsigned>(p);
      found = true;
      break;
    }
    if (!found)
      r.fail(tp + ".param", "no parameter named \"" + term.param + "\"");
    terms.push_back(std::move(term));
  }
  return terms;
}

} // namespace

KernelMetadata parseMetadata(std::string_view text,
                             const std::string &sourceName) {
  JsonValue root = parseJson(text, sourceName);
  Reader r(sourceName);
  const std::string top = "$";
  r.expectKind(root, top, JsonValue::Kind::Object);
  r.onlyKeys(root, top,
             {"format", "kernel", "cubin", "source", "nvrtc_options", "block",
              "cluster", "dynamic_smem_bytes", "grid", "params"});
  const std::string &format =
      r.string(r.field(root, top, "format"), "$.format");
  if (format != kMetadataFormat)
    r.fail("$.format", "unsupported format \"" + format +
                           "\" (this runtime "
                           "reads \"" +
                           kMetadataFormat + "\")");

  KernelMetadata md;
  md.kernel = r.string(r.field(root, top, "kernel"), "$.kernel");
  const JsonValue *cubin = root.find("cubin");
  const JsonValue *source = root.find("source");
  if (!cubin == !source)
    r.fail(top, "exactly one of \"cubin\" and \"source\" must be given");
  if (cubin)
    md.cubin = r.string(*cubin, "$.cubin");
  if (source)
    md.source = r.string(*source, "$.source");
  if (const JsonValue *opts = root.find("nvrtc_options")) {
    if (!source)
      r.fail("$.nvrtc_options", "only meaningful together with \"source\"");
    r.expectKind(*opts, "$.nvrtc_options", JsonValue::Kind::Array);
    for (size_t i = 0; i < opts->asArray().size(); ++i)
      md.nvrtcOptions.push_back(r.string(
          opts->asArray()[i], "$.nvrtc_options[" + std::to_string(i) + "]"));
  }

  md.block = r.dim3(r.field(root, top, "block"), "$.block", 1024);
  uint64_t threads = uint64_t(md.block[0]) * md.block[1] * md.block[2];
  if (threads > 1024 || md.block[2] > 64)
    r.fail("$.block", std::to_string(threads) +
                          " threads per CTA; at most 1024 (and z <= 64)");
  if (const JsonValue *cluster = root.find("cluster"))
    md.cluster = r.dim3(*cluster, "$.cluster", 8);
  if (uint64_t(md.cluster[0]) * md.cluster[1] * md.cluster[2] > 8)
    r.fail("$.cluster", "more than 8 CTAs per cluster (the portable limit)");
  // 227 KiB is the opt-in maximum of sm_90; the device's own limit is checked
  // again at load time.
  md.dynamicSmemBytes =
      static_cast<unsigned>(r.integer(r.field(root, top, "dynamic_smem_bytes"),
                                      "$.dynamic_smem_bytes", 0, 232448));

  const JsonValue &params = r.field(root, top, "params");
  r.expectKind(params, "$.params", JsonValue::Kind::Array);
  for (size_t i = 0; i < params.asArray().size(); ++i) {
    std::string path = "$.params[" + std::to_string(i) + "]";
    ParamSpec p = parseParam(r, params.asArray()[i], path);
    for (const ParamSpec &prev : md.params)
      if (prev.name == p.name)
        r.fail(path + ".name", "duplicate parameter name \"" + p.name + "\"");
    md.params.push_back(std::move(p));
  }

  const JsonValue &grid = r.field(root, top, "grid");
  r.expectKind(grid, "$.grid", JsonValue::Kind::Object);
  r.onlyKeys(grid, "$.grid", {"kind", "x", "y", "z"});
  md.grid.kind = pickEnum<GridKind>(
      r, "$.grid.kind",
      r.string(r.field(grid, "$.grid", "kind"), "$.grid.kind"),
      {{"tiles", GridKind::Tiles},
       {"persistent", GridKind::Persistent},
       {"explicit", GridKind::Explicit},
       {"programs", GridKind::Programs}});
  const char *axes[3] = {"x", "y", "z"};
  for (int d = 0; d < 3; ++d)
    if (const JsonValue *dim = grid.find(axes[d]))
      md.grid.dims[d] =
          parseGridDim(r, *dim, std::string("$.grid.") + axes[d], md.params);
  // An explicit grid has no formula; factors would be silently ignored.
  bool callerGrid = md.grid.kind == GridKind::Explicit ||
                    md.grid.kind == GridKind::Programs;
  if (callerGrid)
    for (int d = 0; d < 3; ++d)
      if (!md.grid.dims[d].empty())
        r.fail(std::string("$.grid.") + axes[d],
               std::string(md.grid.kind == GridKind::Explicit
                               ? "an explicit"
                               : "a programs") +
                   " grid takes no factors (the caller passes the grid at "
                   "launch)");
  for (size_t i = 0; i < md.params.size(); ++i)
    if (md.params[i].kind == ParamKind::NumPrograms &&
        md.grid.kind != GridKind::Programs)
      r.fail("$.params[" + std::to_string(i) + "].kind",
             "num_programs parameters need a \"programs\" grid");
  if (md.grid.kind == GridKind::Programs &&
      (md.cluster[1] != 1 || md.cluster[2] != 1))
    r.fail("$.cluster", "a programs grid launches a one-dimensional grid, so "
                        "clusters may only extend along x");
  if (md.grid.kind == GridKind::Persistent &&
      (md.cluster[1] != 1 || md.cluster[2] != 1))
    r.fail("$.cluster", "a persistent grid is one-dimensional, so clusters "
                        "may only extend along x");
  return md;
}

KernelMetadata loadMetadataFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw Error("cannot open kernel metadata '" + path + "'");
  std::ostringstream text;
  text << in.rdbuf();
  KernelMetadata md = parseMetadata(text.str(), path);
  size_t slash = path.find_last_of('/');
  md.baseDir = slash == std::string::npos ? "." : path.substr(0, slash);
  if (md.baseDir.empty())
    md.baseDir = "/";
  return md;
}

} // namespace tawa::runtime
