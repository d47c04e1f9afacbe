//===- DecodeBindingTest.cpp - buffers and task parameters of a step ------===//

#include "tawa/Mega/DecodeBinding.h"
#include "TestInputs.h"
#include "tawa/Mega/DecodeGraph.h"
#include "tawa/Mega/Passes.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <utility>
#include <vector>

using namespace tawa::mega;

namespace {

DecodeBinding bind(const ModelConfig &c, const PlanOptions &o, TGraph &g) {
  g = buildDecodeGraph(c, o);
  DecodeBinding b;
  std::string error;
  EXPECT_TRUE(bindDecodeGraph(g, c, o, b, error)) << error;
  return b;
}

const Operator &opNamed(const TGraph &g, const std::string &name, int &index) {
  for (size_t i = 0; i < g.ops.size(); ++i)
    if (g.ops[i].name == name) {
      index = static_cast<int>(i);
      return g.ops[i];
    }
  ADD_FAILURE() << "no operator " << name;
  index = 0;
  return g.ops[0];
}

TEST(DecodeBinding, EveryTensorAndWeightHasOneBuffer) {
  ModelConfig c = loadInputConfig("qwen3-8b.json");
  PlanOptions o;
  o.batch = 4;
  o.maxSeq = 1024;
  TGraph g;
  DecodeBinding b = bind(c, o, g);
  ASSERT_EQ(b.params.size(), g.ops.size());
  std::set<std::string> names;
  size_t weights = 0, staged = 0, tensors = 0;
  for (const BufferDesc &d : b.buffers) {
    EXPECT_TRUE(names.insert(d.name).second) << d.name << " twice";
    weights += d.kind == BufferKind::Weight;
    if (d.kind == BufferKind::StagedWeight) {
      // The packed copy of a weight that is not bound to the kernel itself
      // ([N, K] with K a multiple of 32 here: the same shape).
      ++staged;
      EXPECT_EQ(d.name, d.source + "@staged");
      EXPECT_EQ(b.find(d.source), kNoBuffer) << d.source;
      EXPECT_EQ(d.shape.size(), 2u);
      EXPECT_EQ(d.shape[1] % 32, 0) << d.name;
    }
    tensors += d.tensor >= 0;
    if (d.tensor >= 0 && d.kind != BufferKind::State) {
      EXPECT_EQ(d.shape, g.tensors[d.tensor].shape) << d.name;
    } else if (d.tensor >= 0) {
      // A cache: the logical [B, kvHeads, maxSeq, D] held as a pool of
      // B * ceil(maxSeq / 64) pages of 64 positions.
      const std::vector<int64_t> &t = g.tensors[d.tensor].shape;
      EXPECT_EQ(d.shape, (std::vector<int64_t>{4 * 1024 / 64, t[1], 64, t[3]}))
          << d.name;
    }
  }
  EXPECT_EQ(tensors, g.tensors.size());
  // Per layer: 2 norms and q/k norms read as they are; q/k/v/o and
  // gate/up/down staged; plus embedding and final norm, and the untied LM
  // head staged.
  EXPECT_EQ(weights, size_t(c.numLayers) * 4 + 2);
  EXPECT_EQ(staged, size_t(c.numLayers) * 7 + 1);
  EXPECT_NE(b.find("lm_head.weight@staged"), kNoBuffer);
  EXPECT_EQ(b.buffers[b.tokens].type, BufferType::I32);
  EXPECT_EQ(b.buffers[b.positions].kind, BufferKind::Input);
  EXPECT_EQ(b.buffers[b.positions].shape, std::vector<int64_t>{4});
  EXPECT_EQ(b.buffers[b.logits].type, BufferType::F32);
  EXPECT_EQ(b.buffers[b.logits].kind, BufferKind::Output);
  EXPECT_EQ(b.buffers[b.find("l3.k_cache")].kind, BufferKind::State);
  // Every bf16 activation is polled (written once a step, element by
  // element); float ones (attention partials) are not.
  for (const char *polled : {"x.0", "l3.qkv", "l3.attn", "l3.h", "l3.act"}) {
    EXPECT_EQ(b.buffers[b.find(polled)].kind, BufferKind::Polled) << polled;
    EXPECT_EQ(b.buffers[b.find(polled)].type, BufferType::BF16) << polled;
  }
  for (const BufferDesc &d : b.buffers)
    if (d.kind == BufferKind::Polled || d.kind == BufferKind::Activation)
      EXPECT_EQ(d.kind == BufferKind::Polled, d.type == BufferType::BF16)
          << d.name;
  EXPECT_EQ(b.buffers[b.blockTable].kind, BufferKind::Input);
  EXPECT_EQ(b.buffers[b.blockTable].type, BufferType::I32);
  EXPECT_EQ(b.buffers[b.blockTable].shape, (std::vector<int64_t>{4, 16}));
  EXPECT_EQ(
      b.buffers[b.find("model.layers.35.mlp.down_proj.weight@staged")].shape,
      (std::vector<int64_t>{4096, 12288}));
}

TEST(DecodeBinding, FusedQkvReadsThreeWeightsBySegment) {
  ModelConfig c = loadInputConfig("qwen3-0.6b.json");
  PlanOptions o;
  TGraph g;
  DecodeBinding b = bind(c, o, g);
  int i = 0;
  opNamed(g, "l5.qkv", i);
  auto p = paramsAs<LinearParams>(b.params[i]);
  EXPECT_EQ(b.buffers[p.w0].source, "model.layers.5.self_attn.q_proj.weight");
  EXPECT_EQ(b.buffers[p.w1].source, "model.layers.5.self_attn.k_proj.weight");
  EXPECT_EQ(b.buffers[p.w2].source, "model.layers.5.self_attn.v_proj.weight");
  // The input norm is folded into the packed q, k and v weights.
  for (uint32_t w : {p.w0, p.w1, p.w2})
    EXPECT_EQ(b.buffers[w].scale, "model.layers.5.input_layernorm.weight");
  EXPECT_EQ(p.seg1, 16 * 128);
  EXPECT_EQ(p.seg2, (16 + 8) * 128);
  EXPECT_EQ(p.n, (16 + 2 * 8) * 128);
  EXPECT_EQ(p.k, 1024);
  EXPECT_EQ(b.buffers[p.normWeight].name,
            "model.layers.5.input_layernorm.weight");
  EXPECT_EQ(p.residual, kNoBuffer);
  EXPECT_EQ(p.paired, 0);
  EXPECT_EQ(p.colTiles, (p.n + p.tileN - 1) / p.tileN);

  opNamed(g, "l5.gate_up", i);
  p = paramsAs<LinearParams>(b.params[i]);
  EXPECT_EQ(p.paired, 1);
  EXPECT_EQ(b.buffers[p.w1].source, "model.layers.5.mlp.up_proj.weight");
  EXPECT_EQ(b.buffers[p.w1].scale,
            "model.layers.5.post_attention_layernorm.weight");
  // SiLU·mul is the tile's epilogue: it writes the down projection's input.
  EXPECT_EQ(b.buffers[p.out].name, "l5.act");

  opNamed(g, "l5.down", i);
  p = paramsAs<LinearParams>(b.params[i]);
  EXPECT_EQ(b.buffers[p.residual].name, "l5.h");
  EXPECT_EQ(b.buffers[p.w0].scale, ""); // no norm before the down projection
  EXPECT_EQ(b.buffers[p.out].name, "x.6");

  // Tied: the LM head reads the embedding table (packed; the embedding
  // task reads it as it is), as float logits.
  opNamed(g, "lm_head", i);
  p = paramsAs<LinearParams>(b.params[i]);
  EXPECT_EQ(b.buffers[p.w0].source, "model.embed_tokens.weight");
  EXPECT_EQ(b.buffers[p.w0].kind, BufferKind::StagedWeight);
  EXPECT_EQ(b.buffers[p.w0].scale, "model.norm.weight");
  EXPECT_NE(b.find("model.embed_tokens.weight"), kNoBuffer);
  EXPECT_EQ(p.outF32, 1);
  EXPECT_EQ(b.find("lm_head.weight"), kNoBuffer);
  // It raises each row's argmax key (scratch: the runtime zeroes it before
  // every step), which the argmax task reads instead of the logits; no other
  // linear has one.
  ASSERT_NE(p.argmaxKeys, kNoBuffer);
  EXPECT_EQ(b.buffers[p.argmaxKeys].name, "argmax_keys");
  EXPECT_EQ(b.buffers[p.argmaxKeys].kind, BufferKind::Scratch);
  EXPECT_EQ(b.buffers[p.argmaxKeys].elements(), 2 * o.batch);
  opNamed(g, "argmax", i);
  auto a = paramsAs<ArgmaxParams>(b.params[i]);
  EXPECT_EQ(a.keys, p.argmaxKeys);
  EXPECT_EQ(b.buffers[a.out].name, "next_tokens");
  opNamed(g, "l5.down", i);
  EXPECT_EQ(paramsAs<LinearParams>(b.params[i]).argmaxKeys, kNoBuffer);
}

// Above batch 1 the residual stream's row sums of squares travel from the
// linears that store it (O, down) to the RMSNorm linears that read it
// (gate/up, the next q/k/v, the LM head): one f32 scratch per tensor, the
// same buffer at both ends; layer 0's q/k/v (after the embedding) and every
// batch-1 linear square their own rows.
TEST(DecodeBinding, RowSquaresLinkResidualWritersToNorms) {
  ModelConfig c = loadInputConfig("qwen3-8b.json");
  for (int batch : {1, 4}) {
    PlanOptions o;
    o.batch = batch;
    o.maxSeq = 1024;
    TGraph g;
    DecodeBinding b = bind(c, o, g);
    auto linear = [&](const std::string &name) {
      int i = 0;
      opNamed(g, name, i);
      return paramsAs<LinearParams>(b.params[i]);
    };
    if (batch == 1) {
      for (size_t i = 0; i < g.ops.size(); ++i)
        if (g.ops[i].kind == OpKind::RmsNormLinear ||
            g.ops[i].kind == OpKind::LinearResidual) {
          auto p = paramsAs<LinearParams>(b.params[i]);
          EXPECT_EQ(p.rowSquaresIn, kNoBuffer) << g.ops[i].name;
          EXPECT_EQ(p.rowSquaresOut, kNoBuffer) << g.ops[i].name;
        }
      continue;
    }
    EXPECT_EQ(linear("l0.qkv").rowSquaresIn, kNoBuffer);
    for (int l = 0; l < c.numLayers; ++l) {
      const std::string lp = "l" + std::to_string(l) + ".";
      const LinearParams o_proj = linear(lp + "o_proj"),
                         gateUp = linear(lp + "gate_up"),
                         down = linear(lp + "down");
      ASSERT_NE(o_proj.rowSquaresOut, kNoBuffer);
      EXPECT_EQ(o_proj.rowSquaresIn, kNoBuffer);
      EXPECT_EQ(gateUp.rowSquaresIn, o_proj.rowSquaresOut);
      EXPECT_EQ(gateUp.rowSquaresOut, kNoBuffer);
      const BufferDesc &d = b.buffers[o_proj.rowSquaresOut];
      EXPECT_EQ(d.name, lp + "h.row_squares");
      EXPECT_EQ(d.kind, BufferKind::Scratch);
      EXPECT_EQ(d.type, BufferType::F32);
      EXPECT_EQ(d.shape, std::vector<int64_t>{batch});
      ASSERT_NE(down.rowSquaresOut, kNoBuffer);
      EXPECT_EQ(b.buffers[down.rowSquaresOut].name,
                "x." + std::to_string(l + 1) + ".row_squares");
      const LinearParams next =
          l + 1 < c.numLayers ? linear("l" + std::to_string(l + 1) + ".qkv")
                              : linear("lm_head");
      EXPECT_EQ(next.rowSquaresIn, down.rowSquaresOut);
    }
  }
}

// The argmax key orders logits as floats compare, then columns from the
// first: the maximum over a row's tiles decodes to the reference's argmax
// (torch.argmax: the first of equal maxima), NaN never wins.
TEST(ArgmaxKey, OrdersLikeTheFirstMaximum) {
  const float inf = INFINITY;
  const std::vector<float> values = {-inf, -3.5f, -1e-30f, -0.0f, 0.0f,
                                     1e-30f, 2.0f, 3.0f, inf};
  for (size_t i = 0; i < values.size(); ++i)
    for (size_t j = 0; j < values.size(); ++j)
      for (uint32_t ci : {0u, 7u, 151935u})
        for (uint32_t cj : {0u, 7u, 151935u}) {
          const uint64_t ki = argmaxKey(values[i], ci);
          const uint64_t kj = argmaxKey(values[j], cj);
          const bool iWins = values[i] > values[j] ||
                             (values[i] == values[j] && ci < cj);
          if (ci != cj || values[i] != values[j])
            EXPECT_EQ(ki > kj, iWins) << values[i] << "@" << ci << " vs "
                                      << values[j] << "@" << cj;
        }
  EXPECT_EQ(argmaxKey(NAN, 3), 0u);
  EXPECT_GT(argmaxKey(-inf, 5), 0u); // a real logit beats "no logit"
  EXPECT_EQ(argmaxColumn(argmaxKey(-inf, 5)), 5);
  EXPECT_EQ(argmaxColumn(argmaxKey(1.5f, 151935)), 151935);
  EXPECT_EQ(argmaxColumn(0), 0); // a row of NaN: column 0
  // The row maximum of keys is the first index of the maximum.
  const std::vector<float> row = {1.f, 4.f, -2.f, 4.f, NAN, 3.f};
  uint64_t best = 0;
  for (uint32_t c = 0; c < row.size(); ++c)
    best = std::max(best, argmaxKey(row[c], c));
  EXPECT_EQ(argmaxColumn(best), 1);
}

TEST(DecodeBinding, AttentionSplitsOnlyWhenTheGraphDoes) {
  ModelConfig c = loadInputConfig("qwen3-0.6b.json");
  PlanOptions o;
  o.maxSeq = 4096;
  TGraph g;
  DecodeBinding b = bind(c, o, g);
  int i = 0;
  opNamed(g, "l0.attention", i);
  auto p = paramsAs<DecodeAttentionParams>(b.params[i]);
  EXPECT_GT(p.chunks, 1);
  // No merge task: the chunks merge themselves into the output, counting
  // in a scratch buffer the runtime zeroes (one counter per row and KV
  // head).
  EXPECT_EQ(b.buffers[p.out].name, "l0.attn");
  ASSERT_NE(p.counters, kNoBuffer);
  EXPECT_EQ(b.buffers[p.counters].name, "l0.attn_count");
  EXPECT_EQ(b.buffers[p.counters].kind, BufferKind::Scratch);
  EXPECT_EQ(b.buffers[p.counters].type, BufferType::I32);
  EXPECT_EQ(b.buffers[p.counters].elements(), 8);
  EXPECT_EQ(b.buffers[p.partOut].name, "l0.attn_part");
  EXPECT_EQ(p.group, 2);
  EXPECT_FLOAT_EQ(p.scale, 1.0f / std::sqrt(128.0f));
  // q, k and v from the projection, normalized and rotated by the task.
  EXPECT_EQ(b.buffers[p.qkv].name, "l0.qkv");
  EXPECT_EQ(p.qkvCols, (16 + 2 * 8) * 128);
  EXPECT_EQ(p.qkNorm, 1);
  EXPECT_EQ(b.buffers[p.qNorm].name, "model.layers.0.self_attn.q_norm.weight");
  EXPECT_EQ(b.buffers[p.kNorm].name, "model.layers.0.self_attn.k_norm.weight");
  // RoPE from the runtime's table: one for every layer, [maxSeq, D].
  ASSERT_NE(p.rope, kNoBuffer);
  EXPECT_EQ(b.buffers[p.rope].name, "rope");
  EXPECT_EQ(b.buffers[p.rope].kind, BufferKind::Constant);
  EXPECT_EQ(b.buffers[p.rope].type, BufferType::BF16);
  EXPECT_EQ(b.buffers[p.rope].shape, (std::vector<int64_t>{o.maxSeq, 128}));
  {
    int j = 0;
    opNamed(g, "l1.attention", j);
    EXPECT_EQ(paramsAs<DecodeAttentionParams>(b.params[j]).rope, p.rope);
  }
  // One request: every task is AOT, so the worker may issue an attention
  // tile's cache copies before its inputs are ready.
  EXPECT_EQ(p.prefetch, 1);

  // With a merge operator, attention writes only the partial outputs.
  o.separateMerge = true;
  b = bind(c, o, g);
  opNamed(g, "l0.attention", i);
  p = paramsAs<DecodeAttentionParams>(b.params[i]);
  EXPECT_GT(p.chunks, 1);
  EXPECT_EQ(p.out, kNoBuffer);
  EXPECT_EQ(p.counters, kNoBuffer);
  EXPECT_EQ(b.find("l0.attn_count"), kNoBuffer);
  opNamed(g, "l0.attn_merge", i);
  auto m = paramsAs<AttentionMergeParams>(b.params[i]);
  EXPECT_EQ(b.buffers[m.out].name, "l0.attn");
  o.separateMerge = false;

  o.batch = 4; // chunks are at least 64 positions: no split
  o.maxSeq = 64;
  b = bind(c, o, g);
  opNamed(g, "l0.attention", i);
  p = paramsAs<DecodeAttentionParams>(b.params[i]);
  EXPECT_EQ(p.chunks, 1);
  EXPECT_EQ(b.buffers[p.out].name, "l0.attn");
  // 4 rows x 8 KV heads: no more tasks than SMs, so every task is still AOT.
  EXPECT_EQ(g.ops[i].launch, LaunchMode::Aot);
  EXPECT_EQ(p.prefetch, 1);

  o.batch = 16; // 128 attention tasks for 127 SMs: just-in-time
  o.sms = 127;
  b = bind(c, o, g);
  opNamed(g, "l0.attention", i);
  p = paramsAs<DecodeAttentionParams>(b.params[i]);
  EXPECT_EQ(g.ops[i].launch, LaunchMode::Jit);
  EXPECT_EQ(p.prefetch, 0); // just-in-time tasks could run in between
}

TEST(DecodeBinding, CachesArePagePoolsBehindTheBlockTable) {
  ModelConfig c = loadInputConfig("qwen3-0.6b.json");
  PlanOptions o;
  o.batch = 3;
  o.maxSeq = 1000;
  o.pageSize = 32;
  o.kvPages = 7; // fewer than the rows could use: they share the pool
  TGraph g;
  DecodeBinding b = bind(c, o, g);
  EXPECT_EQ(pagesPerRow(o), 32);
  EXPECT_EQ(b.buffers[b.blockTable].shape, (std::vector<int64_t>{3, 32}));
  EXPECT_EQ(b.buffers[b.find("l2.v_cache")].shape,
            (std::vector<int64_t>{7, 8, 32, 128}));
  int i = 0;
  opNamed(g, "l2.attention", i);
  auto p = paramsAs<DecodeAttentionParams>(b.params[i]);
  EXPECT_EQ(p.blockTable, b.blockTable);
  EXPECT_EQ(p.pageSize, 32);
  EXPECT_EQ(p.pageShift, 5);
  EXPECT_EQ(p.pagesPerRow, 32);
  EXPECT_EQ(b.buffers[p.kCache].name, "l2.k_cache");

  // The default pool: every row at maxSeq. One page of at least maxSeq per
  // row is a contiguous cache [B, kvHeads, pageSize, D].
  o.kvPages = 0;
  EXPECT_EQ(kvPoolPages(o), 3 * 32);
  o.pageSize = 1024;
  b = bind(c, o, g);
  EXPECT_EQ(b.buffers[b.find("l0.k_cache")].shape,
            (std::vector<int64_t>{3, 8, 1024, 128}));
  EXPECT_EQ(b.buffers[b.blockTable].shape, (std::vector<int64_t>{3, 1}));

  std::string error;
  for (int64_t bad : {0, 48, 1000}) {
    o.pageSize = bad;
    EXPECT_FALSE(checkPlanOptions(o, error)) << bad;
    EXPECT_NE(error.find("page-size must be a power of two"), std::string::npos)
        << error;
  }
  o.pageSize = 64;
  o.kvPages = -1;
  EXPECT_FALSE(checkPlanOptions(o, error));
  EXPECT_NE(error.find("kv-pages"), std::string::npos) << error;
}

// The task functions find a tile's rows as (tile / colTiles) * tileM: the
// graph's write boxes must say the same for every row tile (the embedding
// once assumed tiles of 64 rows, and with tiles of 8 rows 8-15 raced).
TEST(DecodeBinding, TilesWriteTheRowsTheirParametersName) {
  ModelConfig c = loadInputConfig("qwen3-tiny.json");
  for (auto [batch, rowTile] : {std::pair<int64_t, int64_t>{16, 8},
                                {12, 8},
                                {16, 64},
                                {100, 64},
                                {5, 2}}) {
    PlanOptions o;
    o.batch = batch;
    o.maxSeq = 512;
    o.rowTile = rowTile;
    TGraph g;
    DecodeBinding b = bind(c, o, g);
    int checked = 0;
    for (const Task &t : g.tasks) {
      const Operator &op = g.ops[t.op];
      int32_t tileM = 0, colTiles = 0;
      if (op.kind == OpKind::Embedding) {
        auto p = paramsAs<EmbeddingParams>(b.params[t.op]);
        tileM = p.tileM, colTiles = p.colTiles;
      } else if (op.kind == OpKind::RmsNormLinear ||
                 op.kind == OpKind::LinearResidual) {
        auto p = paramsAs<LinearParams>(b.params[t.op]);
        tileM = p.tileM, colTiles = p.colTiles;
      } else {
        continue;
      }
      ASSERT_EQ(tileM, std::min(batch, rowTile)) << op.name;
      const int64_t row0 = t.tile / colTiles * tileM;
      const Interval rows = t.writes[0].box[0];
      EXPECT_EQ(rows.begin, row0) << op.name << " tile " << t.tile;
      EXPECT_EQ(rows.end, std::min<int64_t>(batch, row0 + tileM))
          << op.name << " tile " << t.tile;
      ++checked;
    }
    EXPECT_GT(checked, 0);
  }
  PlanOptions o;
  std::string error;
  for (int64_t bad : {0, 65}) {
    o.rowTile = bad;
    EXPECT_FALSE(checkPlanOptions(o, error)) << bad;
    EXPECT_NE(error.find("row-tile must be in [1, 64]"), std::string::npos)
        << error;
  }
}

// Shifted tiles (PlanOptions::shiftChainedTiles, off by default): at batch
// 1 a linear that fills the workers after an operator of sms / 2 tasks —
// Qwen3-8B's O projection after its 64 attention tasks at context 512 on 128
// workers — has its first 64 tiles 48 columns wide and its last 64 16 (the
// ring's 136 KB holds one 16-column step of 128 KB); every linear tile's
// parameters name the columns its write box holds.
TEST(DecodeBinding, ShiftedTilesWriteTheColumnsTheirParametersName) {
  ModelConfig c = loadInputConfig("qwen3-8b.json");
  for (bool shift : {true, false})
    for (int64_t alternate : {int64_t(256) << 10, int64_t(512) << 10}) {
      PlanOptions o;
      o.batch = 1;
      o.maxSeq = 512;
      o.sms = 128;
      o.alternateTileBytes = alternate;
      o.shiftChainedTiles = shift;
      TGraph g;
      DecodeBinding b = bind(c, o, g);
      int checked = 0, shifted = 0;
      for (const Task &t : g.tasks) {
        const Operator &op = g.ops[t.op];
        if (op.kind != OpKind::RmsNormLinear &&
            op.kind != OpKind::LinearResidual)
          continue;
        auto p = paramsAs<LinearParams>(b.params[t.op]);
        const int32_t nt = int32_t(t.tile % p.colTiles);
        const Interval cols = t.writes[0].box[1];
        ASSERT_EQ(cols.begin, linearTileCol0(p, nt)) << op.name << " " << nt;
        ASSERT_EQ(cols.end - cols.begin, linearTileCols(p, nt))
            << op.name << " " << nt;
        ++checked;
        if (p.narrowFrom < p.colTiles)
          ++shifted;
        if (op.name == "l3.o_proj" && nt == 0) {
          const bool expectShift = shift && alternate < (int64_t(512) << 10);
          EXPECT_EQ(p.colTiles, alternate < (int64_t(512) << 10) ? 128 : 64);
          EXPECT_EQ(p.tileN, expectShift ? 48 : 64 - 32 * (p.colTiles == 128));
          EXPECT_EQ(p.narrowFrom, expectShift ? 64 : p.colTiles);
          EXPECT_EQ(p.narrowN, expectShift ? 16 : p.tileN);
        }
        if (op.name == "l3.qkv" || op.name == "l3.gate_up" ||
            op.name == "l3.down")
          EXPECT_EQ(p.narrowFrom, p.colTiles) << op.name;
      }
      EXPECT_GT(checked, 0);
      // The first QKV projection's 128 tasks (after the embedding's 64), and
      // the O projection's in each of the 36 layers unless it alternates. A
      // gate/up tile after an alternating O projection is not shifted: its
      // 16-column step (256 KB) is more than the ring's 136 KB.
      const int oShifted = alternate < (int64_t(512) << 10) ? 36 * 128 : 0;
      EXPECT_EQ(shifted, shift ? 128 + oShifted : 0);
    }
}

TEST(DecodeBinding, PassesKeepOperatorIndices) {
  ModelConfig c = loadInputConfig("llama-tiny.json");
  PlanOptions o;
  TGraph g;
  DecodeBinding b = bind(c, o, g);
  std::vector<std::string> before;
  for (const Operator &op : g.ops)
    before.push_back(op.name);
  std::string error;
  for (const PassInfo *pass : planPipeline())
    ASSERT_TRUE(pass->run(g, error)) << error;
  ASSERT_EQ(g.ops.size(), before.size());
  for (size_t i = 0; i < before.size(); ++i)
    EXPECT_EQ(g.ops[i].name, before[i]);
  // Llama has no q/k norm.
  int i = 0;
  opNamed(g, "l0.attention", i);
  auto p = paramsAs<DecodeAttentionParams>(b.params[i]);
  EXPECT_EQ(p.qkNorm, 0);
  EXPECT_EQ(p.qNorm, kNoBuffer);
  EXPECT_EQ(p.kNorm, kNoBuffer);
  EXPECT_EQ(b.buffers[p.qkv].name, "l0.qkv");
}

TEST(DecodeBinding, RejectsShapesTheTaskFunctionsDoNotTake) {
  ModelConfig c = loadInputConfig("qwen3-0.6b.json");
  PlanOptions o;
  std::string error;
  DecodeBinding b;
  ModelConfig odd = c;
  odd.headDim = 96;
  TGraph g = buildDecodeGraph(odd, o);
  EXPECT_FALSE(bindDecodeGraph(g, odd, o, b, error));
  EXPECT_NE(error.find("head_dim 96"), std::string::npos) << error;

  ModelConfig wide = c;
  wide.numHeads = 32;
  wide.numKvHeads = 2; // 16 q heads per KV head
  g = buildDecodeGraph(wide, o);
  EXPECT_FALSE(bindDecodeGraph(g, wide, o, b, error));
  EXPECT_NE(error.find("= 16"), std::string::npos) << error;

  // The LM head's float accumulator of 32 rows x 1152 columns and the
  // weight ring do not fit shared memory together.
  PlanOptions wideBatch;
  wideBatch.batch = 32;
  g = buildDecodeGraph(c, wideBatch);
  EXPECT_FALSE(bindDecodeGraph(g, c, wideBatch, b, error));
  EXPECT_NE(error.find("'lm_head': a 32 x 1152 tile does not fit"),
            std::string::npos)
      << error;

  TGraph generic;
  generic.ops.push_back(
      Operator{"custom", OpKind::Generic, -1, LaunchMode::Aot, {}, 0});
  EXPECT_FALSE(bindDecodeGraph(generic, c, o, b, error));
  EXPECT_NE(error.find("has no task function"), std::string::npos) << error;
}

} // namespace

// The staged weight layout (TaskParams.h): K is cut into pieces of
// kPieceUnits 32-column steps (the last shorter) summing to K rounded up to
// 32; the packing is a permutation of the [N rounded up to 16, Kp] elements;
// what lane (g, t) loads for product h of a step is the m16n8k16 A fragment
// of rows g and g + 8 the linear multiplies with its input columns 8t + 4h ..
// 8t + 4h + 3, and a stage (a block's steps) is contiguous.
TEST(StagedWeights, PiecesAndLayout) {
  for (int32_t k :
       {8, 32, 64, 96, 256, 288, 688, 1000, 1024, 2048, 3072, 4096, 12288}) {
    const WeightPieces wp = weightPieces(k);
    const int32_t units = (k + 31) / 32;
    EXPECT_EQ(wp.count, (units + kPieceUnits - 1) / kPieceUnits) << k;
    EXPECT_EQ(wp.start(wp.count), units) << k;
    for (int32_t j = 0; j < wp.count; ++j) {
      EXPECT_GE(wp.length(j), 1) << k;
      EXPECT_EQ(wp.length(j),
                j + 1 < wp.count ? kPieceUnits : units - j * kPieceUnits)
          << k;
      EXPECT_EQ(wp.start(j + 1) - wp.start(j), wp.length(j)) << k;
    }
  }
  for (auto [n, k] : std::vector<std::pair<int64_t, int32_t>>{{48, 256},
                                                              {40, 688},
                                                              {1000, 96},
                                                              {16, 1024},
                                                              {7, 4096},
                                                              {33, 288}}) {
    const int64_t cols = stagedWeightCols(k), rows = stagedWeightRows(n);
    EXPECT_EQ(rows % kStageRows, 0);
    EXPECT_GE(rows, n);
    std::vector<int> hits(size_t(rows * cols), 0);
    for (int64_t r = 0; r < rows; ++r)
      for (int32_t col = 0; col < cols; ++col) {
        const int64_t at = stagedWeightOffset(r, col, k);
        ASSERT_GE(at, 0);
        ASSERT_LT(at, rows * cols);
        ++hits[size_t(at)];
      }
    EXPECT_EQ(std::count(hits.begin(), hits.end(), 1), rows * cols)
        << n << " x " << k;
    // A lane's 16 bytes of product h in step s of block b: the fragment
    // registers a0..a3 = rows g, g + 8 at columns c, c + 1, then c + 2,
    // c + 3 (c = 32 s + 8 t + 4 h); and every step is 1 KB after the last.
    std::vector<std::pair<int64_t, int32_t>> at(size_t(rows * cols));
    for (int64_t r = 0; r < rows; ++r)
      for (int32_t col = 0; col < cols; ++col)
        at[size_t(stagedWeightOffset(r, col, k))] = {r, col};
    for (int64_t b = 0; b * kStageRows < rows; ++b)
      for (int32_t step = 0; step < cols / 32; ++step)
        for (int h = 0; h < 2; ++h)
          for (int lane = 0; lane < 32; ++lane) {
            const int g = lane / 4, t = lane % 4;
            const int64_t base =
                b * kStageRows * cols + step * 512 + h * 256 + lane * 8;
            const int32_t c = 32 * step + 8 * t + 4 * h;
            const std::pair<int64_t, int32_t> want[8] = {
                {b * 16 + g, c},         {b * 16 + g, c + 1},
                {b * 16 + g + 8, c},     {b * 16 + g + 8, c + 1},
                {b * 16 + g, c + 2},     {b * 16 + g, c + 3},
                {b * 16 + g + 8, c + 2}, {b * 16 + g + 8, c + 3}};
            for (int e = 0; e < 8; ++e)
              ASSERT_EQ(at[size_t(base + e)], want[e])
                  << n << " x " << k << " block " << b << " step " << step
                  << " h " << h << " lane " << lane << " element " << e;
          }
  }
}

// The linear's accumulator (linearAccBytes): a tile with at least
// kLinearAccSlices weight blocks has one [rows][vcols] accumulator (each
// warp owns blocks), a narrower one a slice per warp; the bytes the binding
// sizes for the plan's tile must hold either for every tile of the operator
// (the last may be narrower), and a pass must still fit beside them.
TEST(LinearAccumulator, CoversEveryNarrowerTile) {
  for (int32_t rows : {1, 2, 4, 8, 13, 16, 32, 64})
    for (int32_t vmax = 16; vmax <= 2432; vmax += 16) {
      const int32_t bound = linearAccBytes(rows, vmax);
      for (int32_t v = 16; v <= vmax; v += 16) {
        const int32_t slices =
            v / 16 >= kLinearAccSlices ? 1 : kLinearAccSlices;
        ASSERT_LE(slices * rows * v * 4, bound)
            << "rows " << rows << ", tile of " << v << " of " << vmax;
      }
      // No more than one block's worth of waste beyond the slices a tile of
      // three blocks needs.
      EXPECT_LE(bound, alignUp128(rows * 16 * 4 *
                                  std::max(vmax / 16, 3 * kLinearAccSlices)));
    }
  // The shapes the decode plans use still stage all of K in one pass where
  // they did (8B and 0.6B at batch 1 and 16), and 8B's down projection at
  // batch 16 in three.
  EXPECT_EQ(linearChunk(16, 48, 4096), 4096);
  EXPECT_EQ(linearChunk(16, 192, 4096), 4096);
  EXPECT_EQ(linearChunk(1, 32, 12288), 12288);
  const int32_t down = linearChunk(16, 32, 12288);
  EXPECT_EQ((12288 + down - 1) / down, 3);
}
