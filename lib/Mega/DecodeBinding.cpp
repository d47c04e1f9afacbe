//===- DecodeBinding.cpp - buffers and task parameters of a decode step ---===//
//
// Weights keep their Hugging Face names and layouts ([out, in], row-major),
// so the host binds a state dict without copying: the fused q/k/v projection
// reads three weights through row segments, gate/up reads two. Activations
// are bf16 like the reference, except where a float is what the consumer
// needs (attention partials, logits).
//
//===----------------------------------------------------------------------===//

#include "tawa/Mega/DecodeBinding.h"
#include "tawa/Mega/DecodeGraph.h"

#include <algorithm>

#include <cmath>
#include <cstring>
#include <map>
#include <ostream>

namespace tawa::mega {

const char *bufferKindName(BufferKind kind) {
  switch (kind) {
  case BufferKind::Weight:
    return "weight";
  case BufferKind::Input:
    return "input";
  case BufferKind::Activation:
    return "activation";
  case BufferKind::State:
    return "state";
  case BufferKind::Output:
    return "output";
  case BufferKind::StagedWeight:
    return "staged weight";
  case BufferKind::Scratch:
    return "scratch";
  case BufferKind::Constant:
    return "constant";
  case BufferKind::Polled:
    return "polled";
  }
  return "?";
}

const char *bufferTypeName(BufferType type) {
  switch (type) {
  case BufferType::BF16:
    return "bf16";
  case BufferType::F32:
    return "f32";
  case BufferType::I32:
    return "i32";
  }
  return "?";
}

int64_t BufferDesc::elements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

uint32_t DecodeBinding::find(const std::string &name) const {
  for (size_t i = 0; i < buffers.size(); ++i)
    if (buffers[i].name == name)
      return static_cast<uint32_t>(i);
  return kNoBuffer;
}

namespace {

constexpr uint8_t taskKindOf(OpKind k) { return uint8_t(int(k) + 1); }
static_assert(taskKindOf(OpKind::Embedding) == uint8_t(TaskKind::Embedding) &&
                  taskKindOf(OpKind::RmsNormLinear) ==
                      uint8_t(TaskKind::RmsNormLinear) &&
                  taskKindOf(OpKind::LinearResidual) ==
                      uint8_t(TaskKind::LinearResidual) &&
                  taskKindOf(OpKind::DecodeAttention) ==
                      uint8_t(TaskKind::DecodeAttention) &&
                  taskKindOf(OpKind::AttentionMerge) ==
                      uint8_t(TaskKind::AttentionMerge) &&
                  taskKindOf(OpKind::Argmax) == uint8_t(TaskKind::Argmax),
              "TaskKind is OpKind + 1 (DeviceTables.cpp writes kinds so)");

template <typename T> OpParams pack(const T &t) {
  OpParams p;
  std::memset(p.bytes, 0, sizeof p.bytes);
  std::memcpy(p.bytes, &t, sizeof t);
  return p;
}

class Binder {
public:
  Binder(const TGraph &g, const ModelConfig &c, const PlanOptions &o,
         DecodeBinding &b, std::string &error)
      : g(g), c(c), o(o), b(b), error(error) {}

  bool run();

private:
  const TGraph &g;
  const ModelConfig &c;
  const PlanOptions &o;
  DecodeBinding &b;
  std::string &error;
  std::map<std::string, uint32_t> byName;

  bool fail(const std::string &message) {
    error = message;
    return false;
  }

  uint32_t add(const std::string &name, BufferType type,
               std::vector<int64_t> shape, BufferKind kind, int tensor = -1) {
    auto it = byName.find(name);
    if (it != byName.end())
      return it->second;
    BufferDesc d;
    d.name = name;
    d.type = type;
    d.shape = std::move(shape);
    d.kind = kind;
    d.tensor = tensor;
    b.buffers.push_back(std::move(d));
    uint32_t id = static_cast<uint32_t>(b.buffers.size() - 1);
    byName[name] = id;
    return id;
  }
  uint32_t weight(const std::string &name, std::vector<int64_t> shape) {
    return add(name, BufferType::BF16, std::move(shape), BufferKind::Weight);
  }
  /// The packed copy of weight `name` ([n, k]) that a linear streams, its
  /// columns multiplied by weight `scale` ([k]; "" for none). kNoBuffer
  /// (and an error) if another linear already packs `name` differently.
  uint32_t stagedWeight(const std::string &name, int64_t n, int64_t k,
                        const std::string &scale = "") {
    if (!scale.empty())
      weight(scale, {k});
    const size_t before = b.buffers.size();
    uint32_t id =
        add(name + "@staged", BufferType::BF16,
            {stagedWeightRows(n), stagedWeightCols(static_cast<int32_t>(k))},
            BufferKind::StagedWeight);
    if (b.buffers.size() == before && b.buffers[id].scale != scale) {
      fail("weight '" + name +
           "' is read by two linears that fold different "
           "norms into it");
      return kNoBuffer;
    }
    b.buffers[id].source = name;
    b.buffers[id].scale = scale;
    return id;
  }
  /// The buffer of graph tensor `name`; kNoBuffer (and an error) if the
  /// graph has none.
  uint32_t tensor(const std::string &name) {
    auto it = byName.find(name);
    if (it != byName.end())
      return it->second;
    int t = g.findTensor(name);
    if (t < 0) {
      error = "the graph has no tensor '" + name + "'";
      return kNoBuffer;
    }
    const Tensor &ts = g.tensors[t];
    BufferType type = BufferType::BF16;
    BufferKind kind = BufferKind::Activation;
    if (name == "tokens" || name == "next_tokens")
      type = BufferType::I32;
    else if (name == "logits" || name.find("attn_part") != std::string::npos ||
             name.find("attn_lse") != std::string::npos)
      type = BufferType::F32;
    std::vector<int64_t> shape = ts.shape;
    if (ts.role == TensorRole::Input) {
      kind = BufferKind::Input;
    } else if (ts.role == TensorRole::State) {
      // The graph's cache tensor is the logical [B, kvHeads, maxSeq, D],
      // which the tile analysis reasons about (a task's chunk of a row); the
      // buffer is the page pool behind the block table.
      kind = BufferKind::State;
      shape = {kvPoolPages(o), ts.shape[1], o.pageSize, ts.shape[3]};
    } else if (name == "logits" || name == "next_tokens") {
      kind = BufferKind::Output;
    } else if (type == BufferType::BF16) {
      kind = BufferKind::Polled;
    }
    return add(name, type, std::move(shape), kind, t);
  }

  std::string attr(const Operator &op, const std::string &key) const {
    for (const auto &kv : op.attrs)
      if (kv.first == key)
        return kv.second;
    return "";
  }
  bool intAttr(const Operator &op, const std::string &key, int32_t &v) {
    std::string s = attr(op, key);
    if (s.empty())
      return fail("operator '" + op.name + "' has no attribute '" + key + "'");
    v = static_cast<int32_t>(std::stoll(s));
    return true;
  }

  /// The LM head's per-row argmax keys (two i32 a row: one uint64), which
  /// its tiles raise atomically and the argmax task reads: scratch, zeroed
  /// by the runtime before every step.
  uint32_t argmaxKeys() {
    return add("argmax_keys", BufferType::I32, {o.batch, 2},
               BufferKind::Scratch);
  }

  /// Batch > 1: the F32 [B] scratch of each row's sum of squares of
  /// residual-stream tensor `name`, which its producer's epilogues add up
  /// and the next RMSNorm reads (LinearParams::rowSquaresIn). Batch 1:
  /// kNoBuffer (its tasks poll their inputs and square them as they land).
  uint32_t rowSquares(const std::string &name) {
    if (o.batch <= 1)
      return kNoBuffer;
    return add(name + ".row_squares", BufferType::F32, {o.batch},
               BufferKind::Scratch);
  }

  std::string layerPrefix(int l) const {
    return "model.layers." + std::to_string(l) + ".";
  }

  bool bindOp(const Operator &op, OpParams &p);
  bool bindLinear(const Operator &op, OpParams &p);
};

bool Binder::run() {
  const int64_t D = c.headDim, H = c.hiddenSize, I = c.intermediateSize;
  // Attention puts D / 8 lanes on a cache row and 32 / (D / 8) rows on a
  // warp; the q heads of a KV head are a template parameter.
  if (D < 8 || D > 256 || (D & (D - 1)) != 0)
    return fail("head_dim " + std::to_string(D) +
                ": the task functions take powers of two from 8 to 256");
  const int64_t group = c.numHeads / c.numKvHeads;
  if (group > 8 || (group & (group - 1)) != 0)
    return fail(
        "num_attention_heads / num_key_value_heads = " + std::to_string(group) +
        ": decode attention takes 1, 2, 4 or 8 q heads per KV head");
  if (H % 8 != 0 || I % 8 != 0)
    return fail("hidden_size and intermediate_size must be multiples of 8 "
                "(16-byte weight rows)");
  b.buffers.clear();
  b.params.clear();
  b.tokens = tensor("tokens");
  b.positions = add("positions", BufferType::I32, {o.batch}, BufferKind::Input);
  b.blockTable = add("block_table", BufferType::I32, {o.batch, pagesPerRow(o)},
                     BufferKind::Input);
  for (const Operator &op : g.ops) {
    OpParams p;
    if (!bindOp(op, p))
      return false;
    b.params.push_back(p);
  }
  b.logits = tensor("logits");
  b.nextTokens = tensor("next_tokens");
  // Every graph tensor gets a buffer, even one no task function names.
  for (const Tensor &t : g.tensors)
    if (tensor(t.name) == kNoBuffer)
      return false;
  return true;
}

bool Binder::bindLinear(const Operator &op, OpParams &out) {
  LinearParams p{};
  p.normWeight = p.w1 = p.w2 = p.residual = p.argmaxKeys = kNoBuffer;
  p.rowSquaresIn = p.rowSquaresOut = kNoBuffer;
  if (!intAttr(op, "m", p.m) || !intAttr(op, "n", p.n) ||
      !intAttr(op, "k", p.k) || !intAttr(op, "tile_m", p.tileM) ||
      !intAttr(op, "tile_n", p.tileN))
    return false;
  if (p.tileM > kMaxTileRows)
    return fail("operator '" + op.name + "': tiles of more than " +
                std::to_string(kMaxTileRows) + " rows");
  // A worker starts loading its next linear's weights into the top of
  // shared memory before the linear runs; only AOT tasks are known ahead.
  if (op.launch != LaunchMode::Aot)
    return fail("operator '" + op.name +
                "': a linear must be launched ahead of time (its weights are "
                "prefetched by the worker it is queued on)");
  p.colTiles = (p.n + p.tileN - 1) / p.tileN;
  p.narrowFrom = p.colTiles;
  p.narrowN = p.tileN;
  if (!attr(op, "narrow_from").empty()) {
    if (!intAttr(op, "narrow_from", p.narrowFrom) ||
        !intAttr(op, "narrow_n", p.narrowN))
      return false;
    const int64_t wide = int64_t(p.narrowFrom) * p.tileN;
    if (p.narrowFrom < 0 || p.narrowN <= 0 || p.narrowN > p.tileN ||
        wide >= p.n || p.narrowN % kStageRows != 0)
      return fail("operator '" + op.name + "': bad narrow tiles (" +
                  std::to_string(p.narrowFrom) + " of " +
                  std::to_string(p.tileN) + " columns, then " +
                  std::to_string(p.narrowN) + ", N = " + std::to_string(p.n) +
                  ")");
    p.colTiles =
        p.narrowFrom + int32_t((p.n - wide + p.narrowN - 1) / p.narrowN);
  }
  p.seg1 = p.seg2 = p.n;
  p.eps = static_cast<float>(c.rmsNormEps);
  p.ringBytes = linearRingBytes(p.tileM);
  const int64_t H = c.hiddenSize, I = c.intermediateSize, D = c.headDim;
  const int64_t nH = c.numHeads, nKV = c.numKvHeads;
  const std::string &n = op.name;
  if (n == "lm_head") {
    p.in = tensor("x." + std::to_string(c.numLayers));
    p.normWeight = weight("model.norm.weight", {H});
    if (c.numLayers > 0)
      p.rowSquaresIn = rowSquares("x." + std::to_string(c.numLayers));
    p.w0 = stagedWeight(c.tieWordEmbeddings ? "model.embed_tokens.weight"
                                            : "lm_head.weight",
                        c.vocabSize, H, "model.norm.weight");
    p.out = tensor("logits");
    p.outF32 = 1;
    p.argmaxKeys = argmaxKeys();
  } else {
    std::string::size_type dot = n.find('.');
    if (n[0] != 'l' || dot == std::string::npos)
      return fail("operator '" + n + "': not a decode-graph linear");
    int l = std::stoi(n.substr(1, dot - 1));
    std::string what = n.substr(dot + 1), lp = "l" + std::to_string(l) + ".";
    std::string wp = layerPrefix(l);
    if (what == "qkv") {
      p.in = tensor("x." + std::to_string(l));
      // x.0 is the embedding's, which adds no squares.
      if (l > 0)
        p.rowSquaresIn = rowSquares("x." + std::to_string(l));
      const std::string norm = wp + "input_layernorm.weight";
      p.normWeight = weight(norm, {H});
      p.w0 = stagedWeight(wp + "self_attn.q_proj.weight", nH * D, H, norm);
      p.w1 = stagedWeight(wp + "self_attn.k_proj.weight", nKV * D, H, norm);
      p.w2 = stagedWeight(wp + "self_attn.v_proj.weight", nKV * D, H, norm);
      p.seg1 = static_cast<int32_t>(nH * D);
      p.seg2 = static_cast<int32_t>((nH + nKV) * D);
      p.out = tensor(lp + "qkv");
    } else if (what == "o_proj") {
      p.in = tensor(lp + "attn");
      p.w0 = stagedWeight(wp + "self_attn.o_proj.weight", H, nH * D);
      p.residual = tensor("x." + std::to_string(l));
      p.out = tensor(lp + "h");
      p.rowSquaresOut = rowSquares(lp + "h");
    } else if (what == "gate_up") {
      p.in = tensor(lp + "h");
      p.rowSquaresIn = rowSquares(lp + "h");
      const std::string norm = wp + "post_attention_layernorm.weight";
      p.normWeight = weight(norm, {H});
      p.w0 = stagedWeight(wp + "mlp.gate_proj.weight", I, H, norm);
      p.w1 = stagedWeight(wp + "mlp.up_proj.weight", I, H, norm);
      p.paired = 1;
      p.out = tensor(lp + "act");
    } else if (what == "down") {
      p.in = tensor(lp + "act");
      p.w0 = stagedWeight(wp + "mlp.down_proj.weight", H, I);
      p.residual = tensor(lp + "h");
      p.out = tensor("x." + std::to_string(l + 1));
      p.rowSquaresOut = rowSquares("x." + std::to_string(l + 1));
    } else {
      return fail("operator '" + n + "': not a decode-graph linear");
    }
  }
  if (p.in == kNoBuffer || p.out == kNoBuffer || p.w0 == kNoBuffer ||
      (op.kind == OpKind::LinearResidual) != (p.residual != kNoBuffer))
    return error.empty() ? fail("operator '" + n + "': inconsistent linear")
                         : false;
  if (p.k % 8 != 0)
    return fail("operator '" + n + "': K = " + std::to_string(p.k) +
                " is not a multiple of 8");
  // A stage is one block of 16 rows of one packed matrix (TaskParams.h).
  if ((p.tileN % kStageRows != 0 && p.colTiles > 1) ||
      (p.seg1 % kStageRows != 0 && p.seg1 != p.n) ||
      (p.seg2 % kStageRows != 0 && p.seg2 != p.n) ||
      (p.paired && p.n % kStageRows != 0))
    return fail("operator '" + n + "': the staged weights need tiles, " +
                (p.paired ? "N" : "the q/k/v segments") + " in multiples of " +
                std::to_string(kStageRows) +
                " rows (N = " + std::to_string(p.n) +
                ", tile_n = " + std::to_string(p.tileN) + ")");
  if (linearChunk(p.tileM, p.tileN * (p.paired ? 2 : 1), p.k) == 0)
    return fail("operator '" + n + "': a " + std::to_string(p.tileM) + " x " +
                std::to_string(p.tileN) + " tile does not fit shared memory");
  out = pack(p);
  return true;
}

bool Binder::bindOp(const Operator &op, OpParams &out) {
  const int64_t D = c.headDim, H = c.hiddenSize;
  const int64_t nH = c.numHeads, nKV = c.numKvHeads;
  const int32_t B = static_cast<int32_t>(o.batch);
  const std::string lp =
      op.layer >= 0 ? "l" + std::to_string(op.layer) + "." : "";
  const std::string wp = op.layer >= 0 ? layerPrefix(op.layer) : "";
  const int32_t qkvCols = static_cast<int32_t>((nH + 2 * nKV) * D);
  switch (op.kind) {
  case OpKind::Embedding: {
    EmbeddingParams p{};
    p.tokens = tensor("tokens");
    p.table = weight("model.embed_tokens.weight", {c.vocabSize, H});
    p.out = tensor("x.0");
    p.batch = B;
    p.hidden = static_cast<int32_t>(H);
    p.vocab = static_cast<int32_t>(c.vocabSize);
    if (!intAttr(op, "tile_n", p.tileN))
      return false;
    p.colTiles = (p.hidden + p.tileN - 1) / p.tileN;
    p.tileM = static_cast<int32_t>(tileRows(o));
    out = pack(p);
    return p.out != kNoBuffer;
  }
  case OpKind::RmsNormLinear:
  case OpKind::LinearResidual:
    return bindLinear(op, out);
  case OpKind::DecodeAttention: {
    DecodeAttentionParams p{};
    p.qkv = tensor(lp + "qkv");
    p.qNorm =
        c.qkNorm ? weight(wp + "self_attn.q_norm.weight", {D}) : kNoBuffer;
    p.kNorm =
        c.qkNorm ? weight(wp + "self_attn.k_norm.weight", {D}) : kNoBuffer;
    p.kCache = tensor(lp + "k_cache");
    p.vCache = tensor(lp + "v_cache");
    p.positions = b.positions;
    p.blockTable = b.blockTable;
    // One RoPE table for every layer, filled by the runtime.
    p.rope = add("rope", BufferType::BF16, {o.maxSeq, D}, BufferKind::Constant);
    p.pageSize = static_cast<int32_t>(o.pageSize);
    p.pageShift = 0;
    while ((int64_t(1) << p.pageShift) < o.pageSize)
      ++p.pageShift;
    p.pagesPerRow = static_cast<int32_t>(pagesPerRow(o));
    p.batch = B;
    p.kvHeads = static_cast<int32_t>(nKV);
    p.group = static_cast<int32_t>(nH / nKV);
    p.headDim = static_cast<int32_t>(D);
    p.maxSeq = static_cast<int32_t>(o.maxSeq);
    // Below the plan's weight ring (every linear tile has tileRows rows).
    p.lowSmemBytes =
        taskLowSmemBytes(linearRingBytes(static_cast<int32_t>(tileRows(o))));
    if (!intAttr(op, "chunks", p.chunks) || !intAttr(op, "chunk", p.chunkLen))
      return false;
    p.out = p.partOut = p.partLse = p.counters = kNoBuffer;
    if (p.chunks > 1) {
      p.partOut = tensor(lp + "attn_part");
      p.partLse = tensor(lp + "attn_lse");
      // No merge operator: the chunks merge themselves (DecodeGraph.cpp).
      if (std::none_of(g.ops.begin(), g.ops.end(), [&](const Operator &x) {
            return x.kind == OpKind::AttentionMerge && x.layer == op.layer;
          })) {
        p.out = tensor(lp + "attn");
        p.counters = add(lp + "attn_count", BufferType::I32, {B, nKV},
                         BufferKind::Scratch);
      }
    } else {
      p.out = tensor(lp + "attn");
    }
    p.qkvCols = qkvCols;
    p.qkNorm = c.qkNorm ? 1 : 0;
    p.prefetch =
        std::none_of(g.ops.begin(), g.ops.end(), [](const Operator &x) {
          return x.launch == LaunchMode::Jit;
        });
    p.scale = static_cast<float>(1.0 / std::sqrt(double(D)));
    p.eps = static_cast<float>(c.rmsNormEps);
    out = pack(p);
    return error.empty() && p.qkv != kNoBuffer;
  }
  case OpKind::AttentionMerge: {
    AttentionMergeParams p{};
    p.partOut = tensor(lp + "attn_part");
    p.partLse = tensor(lp + "attn_lse");
    p.out = tensor(lp + "attn");
    p.batch = B;
    p.kvHeads = static_cast<int32_t>(nKV);
    p.group = static_cast<int32_t>(nH / nKV);
    p.headDim = static_cast<int32_t>(D);
    if (!intAttr(op, "chunks", p.chunks))
      return false;
    out = pack(p);
    return error.empty();
  }
  case OpKind::Argmax: {
    ArgmaxParams p{};
    p.keys = argmaxKeys();
    p.out = tensor("next_tokens");
    out = pack(p);
    return error.empty();
  }
  case OpKind::Generic:
    break;
  }
  return fail("operator '" + op.name + "' of kind '" + opKindName(op.kind) +
              "' has no task function");
}

void printShape(std::ostream &os, const std::vector<int64_t> &shape) {
  os << '[';
  for (size_t i = 0; i < shape.size(); ++i)
    os << (i ? "," : "") << shape[i];
  os << ']';
}

} // namespace

bool bindDecodeGraph(const TGraph &g, const ModelConfig &config,
                     const PlanOptions &options, DecodeBinding &out,
                     std::string &error) {
  DecodeBinding b;
  error.clear();
  if (!Binder(g, config, options, b, error).run())
    return false;
  out = std::move(b);
  return true;
}

void printBinding(const TGraph &g, const DecodeBinding &b, std::ostream &os) {
  for (size_t i = 0; i < b.buffers.size(); ++i) {
    const BufferDesc &d = b.buffers[i];
    os << "buffer " << i << " " << d.name << " " << bufferTypeName(d.type);
    printShape(os, d.shape);
    os << " " << bufferKindName(d.kind);
    if (d.kind == BufferKind::StagedWeight)
      os << " of " << d.source << (d.scale.empty() ? "" : " times ") << d.scale;
    os << "\n";
  }
  auto name = [&](uint32_t id) -> std::string {
    return id == kNoBuffer ? "-" : b.buffers[id].name;
  };
  for (size_t i = 0; i < b.params.size() && i < g.ops.size(); ++i) {
    const Operator &op = g.ops[i];
    const OpParams &raw = b.params[i];
    os << "params " << i << " " << op.name << " " << opKindName(op.kind) << ":";
    switch (op.kind) {
    case OpKind::Embedding: {
      auto p = paramsAs<EmbeddingParams>(raw);
      os << " tokens=" << name(p.tokens) << " table=" << name(p.table)
         << " out=" << name(p.out) << " tile_n=" << p.tileN;
      if (p.tileM < p.batch) // several row tiles
        os << " tile_m=" << p.tileM;
      break;
    }
    case OpKind::RmsNormLinear:
    case OpKind::LinearResidual: {
      auto p = paramsAs<LinearParams>(raw);
      os << " in=" << name(p.in) << " norm=" << name(p.normWeight)
         << " w=" << name(p.w0);
      if (p.w1 != kNoBuffer)
        os << "," << name(p.w1);
      if (p.w2 != kNoBuffer)
        os << "," << name(p.w2);
      os << " out=" << name(p.out) << " residual=" << name(p.residual);
      if (p.argmaxKeys != kNoBuffer)
        os << " argmax=" << name(p.argmaxKeys);
      os << " m=" << p.m << " n=" << p.n << " k=" << p.k << " tile=" << p.tileM
         << "x" << p.tileN;
      if (p.narrowFrom < p.colTiles)
        os << " narrow=" << p.narrowN << "@" << p.narrowFrom;
      os << " segments=" << p.seg1 << "," << p.seg2 << " paired=" << p.paired
         << " f32=" << p.outF32 << " ring=" << p.ringBytes;
      if (p.rowSquaresIn != kNoBuffer || p.rowSquaresOut != kNoBuffer)
        os << " row_squares=" << name(p.rowSquaresIn) << ","
           << name(p.rowSquaresOut);
      break;
    }
    case OpKind::DecodeAttention: {
      auto p = paramsAs<DecodeAttentionParams>(raw);
      os << " qkv=" << name(p.qkv) << " q_norm=" << name(p.qNorm)
         << " k_norm=" << name(p.kNorm) << " caches=" << name(p.kCache) << ","
         << name(p.vCache) << " table=" << name(p.blockTable)
         << " pages_per_row=" << p.pagesPerRow << " page=" << p.pageSize
         << " out=" << name(p.out) << " part=" << name(p.partOut) << ","
         << name(p.partLse) << " counters=" << name(p.counters)
         << " group=" << p.group << " d=" << p.headDim
         << " rope=" << name(p.rope) << " chunks=" << p.chunks << "x"
         << p.chunkLen << " low_smem=" << p.lowSmemBytes
         << " prefetch=" << p.prefetch;
      break;
    }
    case OpKind::AttentionMerge: {
      auto p = paramsAs<AttentionMergeParams>(raw);
      os << " part=" << name(p.partOut) << "," << name(p.partLse)
         << " out=" << name(p.out) << " chunks=" << p.chunks;
      break;
    }
    case OpKind::Argmax: {
      auto p = paramsAs<ArgmaxParams>(raw);
      os << " keys=" << name(p.keys) << " out=" << name(p.out);
      break;
    }
    case OpKind::Generic:
      break;
    }
    os << "\n";
  }
}

} // namespace tawa::mega
