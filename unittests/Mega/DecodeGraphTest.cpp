//===- DecodeGraphTest.cpp - model configs, tiling and the built graph ----===//

#include "tawa/Mega/DecodeGraph.h"
#include "TestInputs.h"
#include "tawa/Mega/Passes.h"
#include "tawa/Mega/Verifier.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

using namespace tawa::mega;

namespace {

/// The tasks of the operator named `name`.
size_t tasksOf(const TGraph &g, const std::string &name) {
  size_t n = 0;
  for (const Task &t : g.tasks)
    n += g.ops[t.op].name == name;
  return n;
}

TEST(ModelConfig, ReadsThePublicQwen3Shapes) {
  ModelConfig small = loadInputConfig("qwen3-0.6b.json");
  EXPECT_EQ(small.modelType, "qwen3");
  EXPECT_EQ(small.hiddenSize, 1024);
  EXPECT_EQ(small.numLayers, 28);
  EXPECT_EQ(small.numHeads, 16);
  EXPECT_EQ(small.numKvHeads, 8);
  EXPECT_EQ(small.headDim, 128);
  EXPECT_EQ(small.intermediateSize, 3072);
  EXPECT_EQ(small.vocabSize, 151936);
  EXPECT_TRUE(small.tieWordEmbeddings);
  EXPECT_TRUE(small.qkNorm);
  EXPECT_DOUBLE_EQ(small.ropeTheta, 1e6);
  EXPECT_DOUBLE_EQ(small.rmsNormEps, 1e-6);

  ModelConfig big = loadInputConfig("qwen3-8b.json");
  EXPECT_EQ(big.hiddenSize, 4096);
  EXPECT_EQ(big.numLayers, 36);
  EXPECT_EQ(big.numHeads, 32);
  EXPECT_EQ(big.intermediateSize, 12288);
  EXPECT_FALSE(big.tieWordEmbeddings);
}

TEST(ModelConfig, LlamaDerivesHeadDimAndHasNoQkNorm) {
  ModelConfig c = loadInputConfig("llama-tiny.json");
  EXPECT_EQ(c.headDim, 256 / 8);
  EXPECT_FALSE(c.qkNorm);
  EXPECT_DOUBLE_EQ(c.rmsNormEps, 1e-5);
}

TEST(ModelConfig, RejectsBadConfigsWithAReason) {
  struct Case {
    const char *json;
    const char *message;
  };
  const Case cases[] = {
      {R"({"model_type": "gpt2"})", "unsupported model_type 'gpt2'"},
      {R"({"hidden_size": 8})", "missing 'model_type'"},
      {R"({"model_type": "qwen3", "hidden_size": 8})",
       "missing 'num_hidden_layers'"},
      {R"({"model_type": "llama", "hidden_size": 8.5, "num_hidden_layers": 1,
          "num_attention_heads": 1, "intermediate_size": 8,
          "vocab_size": 8})",
       "'hidden_size' must be a positive integer"},
      {R"({"model_type": "llama", "hidden_size": 8, "num_hidden_layers": 1,
          "num_attention_heads": 4, "num_key_value_heads": 3,
          "intermediate_size": 8, "vocab_size": 8})",
       "not a multiple of num_key_value_heads 3"},
      {R"({"model_type": "llama", "hidden_size": 8, "num_hidden_layers": 1,
          "num_attention_heads": 1, "intermediate_size": 8, "vocab_size": 8,
          "tie_word_embeddings": 1})",
       "'tie_word_embeddings' must be true or false"},
      {R"({"model_type": "llama",)", "line 1: expected a string"},
      {R"({"model_type": "llama"} trailing)", "trailing text"},
  };
  for (const Case &c : cases) {
    ModelConfig config;
    std::string error;
    EXPECT_FALSE(parseModelConfig(c.json, "cfg", config, error)) << c.json;
    EXPECT_NE(error.find(c.message), std::string::npos)
        << "got: " << error << "\nwant: " << c.message;
  }
}

TEST(Tiling, ColumnTilesAreMultiplesOf64AndFitTheSMs) {
  EXPECT_EQ(chooseTileWidth(4096, 1, 132), 64);     // 0.6B QKV: 64 tiles
  EXPECT_EQ(chooseTileWidth(6144, 1, 132), 64);     // 8B QKV: 96 tiles
  EXPECT_EQ(chooseTileWidth(12288, 1, 132), 128);   // 8B gate/up: 96 tiles
  EXPECT_EQ(chooseTileWidth(151936, 1, 132), 1152); // LM head: 132 tiles
  EXPECT_EQ(chooseTileWidth(32, 1, 132), 32);       // narrower than a granule
  EXPECT_EQ(chooseTileWidth(1000, 1, 1), 1024);     // one SM: one tile
  EXPECT_EQ(chooseTileWidth(4096, 2, 132), 64);     // two row tiles
  for (int64_t n : {100, 1000, 4096, 151936})
    for (int sms : {1, 7, 132})
      EXPECT_LE((n + chooseTileWidth(n, 1, sms) - 1) /
                    chooseTileWidth(n, 1, sms),
                std::max<int64_t>(sms, 1))
          << n << " columns, " << sms << " SMs";
}

TEST(Tiling, LinearTilesAreMultiplesOf16AndFitTheWorkers) {
  // 128 workers (132 SMs less 4 scheduler CTAs), as the runtime plans.
  EXPECT_EQ(chooseTileWidth(4096, 1, 128, kLinearColumnGranule), 32);
  EXPECT_EQ(chooseTileWidth(6144, 1, 128, kLinearColumnGranule), 48);
  EXPECT_EQ(chooseTileWidth(12288, 1, 128, kLinearColumnGranule), 96);
  EXPECT_EQ(chooseTileWidth(151936, 1, 128, kLinearColumnGranule), 1200);
  EXPECT_EQ(chooseTileWidth(1024, 1, 128, kLinearColumnGranule), 16);
  for (int64_t n : {100, 1000, 4096, 151936})
    for (int sms : {1, 7, 128})
      EXPECT_LE((n + chooseTileWidth(n, 1, sms, kLinearColumnGranule) - 1) /
                    chooseTileWidth(n, 1, sms, kLinearColumnGranule),
                std::max<int64_t>(sms, 1))
          << n << " columns, " << sms << " workers";
}

TEST(Tiling, AttentionSplitsTheSequenceOnlyWhenRowsAreFew) {
  EXPECT_EQ(chooseKvChunks(4096, 1, 8, 132), 16); // 8 rows: 16 chunks of 256
  EXPECT_EQ(chooseKvChunks(4096, 16, 8, 132), 2); // 128 rows: 2 chunks
  EXPECT_EQ(chooseKvChunks(4096, 32, 8, 132), 1); // enough rows: no split
  EXPECT_EQ(chooseKvChunks(512, 1, 2, 132), 8);   // never below 64
  EXPECT_EQ(chooseKvChunks(300, 1, 1, 132), 3);   // 3 chunks of 128
  EXPECT_EQ(chooseKvChunks(100, 1, 1, 132), 1);
  EXPECT_EQ(chooseKvChunks(1, 1, 1, 132), 1);
}

/// Counts the elements of each tensor the tasks write, a combined box once
/// for its group.
std::map<int, int64_t> writtenVolume(const TGraph &g) {
  std::map<int, int64_t> volume;
  std::set<std::pair<int, std::vector<int64_t>>> combined;
  for (const Task &t : g.tasks)
    for (const Region &r : t.writes) {
      if (r.combine) {
        std::vector<int64_t> key;
        for (const Interval &iv : r.box)
          key.insert(key.end(), {iv.begin, iv.end});
        if (!combined.insert({r.tensor, key}).second)
          continue;
      }
      int64_t v = 1;
      for (const Interval &iv : r.box)
        v *= iv.end - iv.begin;
      volume[r.tensor] += v;
    }
  return volume;
}

TEST(DecodeGraph, TilesCoverEveryOutputExactlyOnce) {
  for (const char *model : {"qwen3-tiny.json", "llama-tiny.json"})
    for (int64_t batch : {1, 3, 70})
      for (int64_t maxSeq : {100, 512, 2048})
        for (bool separateMerge : {false, true}) {
          PlanOptions o;
          o.batch = batch;
          o.maxSeq = maxSeq;
          o.separateMerge = separateMerge;
          TGraph g = buildDecodeGraph(loadInputConfig(model), o);
          std::vector<std::string> errors = verifyGraph(g);
          ASSERT_TRUE(errors.empty()) << errors[0];
          // Disjoint writes (verified) whose volumes add up to the tensor's:
          // every element written once.
          std::map<int, int64_t> volume = writtenVolume(g);
          for (size_t t = 0; t < g.tensors.size(); ++t) {
            const Tensor &tensor = g.tensors[t];
            int64_t size = 1;
            for (int64_t d : tensor.shape)
              size *= d;
            int64_t want = tensor.role == TensorRole::Input ? 0 : size;
            EXPECT_EQ(volume[static_cast<int>(t)], want)
                << model << " batch " << batch << " tensor " << tensor.name;
          }
        }
}

TEST(DecodeGraph, TaskCountsOfQwen3_0_6B) {
  PlanOptions o; // batch 1, context 4096, 132 SMs
  // Linears filling every SM (the default halves those whose tiles stay
  // small: below).
  o.alternateTileBytes = 0;
  TGraph g = buildDecodeGraph(loadInputConfig("qwen3-0.6b.json"), o);
  std::map<OpKind, size_t> perKind;
  for (const Task &t : g.tasks)
    ++perKind[g.ops[t.op].kind];
  EXPECT_EQ(g.tasks.size(), 16501u - 28u * 96u - 28u * 8u);
  // Per layer: QKV, attention (the last chunk of each KV head to end
  // merges the head's chunks), O, gate/up (SiLU·mul in its epilogue), down.
  EXPECT_EQ(g.ops.size(), 3u + 28u * 5u);
  EXPECT_EQ(perKind[OpKind::Embedding], 16u);
  EXPECT_EQ(perKind[OpKind::DecodeAttention], 28u * 8u * 16u);
  EXPECT_EQ(perKind[OpKind::AttentionMerge], 0u);
  // The 16 chunk tasks of a KV head all list its output box, combined.
  size_t combined = 0;
  for (const Task &t : g.tasks)
    for (const Region &r : t.writes)
      if (r.combine) {
        EXPECT_EQ(g.ops[t.op].kind, OpKind::DecodeAttention);
        EXPECT_EQ(g.tensors[r.tensor].name,
                  "l" + std::to_string(g.ops[t.op].layer) + ".attn");
        ++combined;
      }
  EXPECT_EQ(combined, 28u * 8u * 16u);
  EXPECT_EQ(perKind[OpKind::Argmax], 1u);
  // QKV 128 (of 32 columns) + gate/up 96 per layer, LM head 132.
  EXPECT_EQ(perKind[OpKind::RmsNormLinear], 28u * (128u + 96u) + 132u);
  // O and down: 64 each (of 16 columns).
  EXPECT_EQ(perKind[OpKind::LinearResidual], 28u * (64u + 64u));
  // One request: every task is known ahead (attention's tasks cost alike).
  for (const Operator &op : g.ops)
    EXPECT_EQ(op.launch, LaunchMode::Aot) << op.name;
  // The default batch-1 plan: every layer linear's tile at 66 tiles is at
  // most 256 KB of weights (QKV 64 columns, 128 KB; gate/up 48 columns of
  // both, 192 KB; O and down already 64 tiles), so each has 64 tiles; the
  // LM head's would be 4.7 MB and keeps 132.
  {
    PlanOptions d;
    TGraph h = buildDecodeGraph(loadInputConfig("qwen3-0.6b.json"), d);
    EXPECT_EQ(h.tasks.size(), g.tasks.size() - 28u * (64u + 32u));
    for (int l = 0; l < 28; ++l)
      for (const char *name : {"qkv", "o_proj", "gate_up", "down"})
        EXPECT_EQ(tasksOf(h, "l" + std::to_string(l) + "." + name), 64u)
            << l << " " << name;
    EXPECT_EQ(tasksOf(h, "lm_head"), 132u);
    // Only batch 1 alternates.
    d.batch = 2;
    TGraph b2 = buildDecodeGraph(loadInputConfig("qwen3-0.6b.json"), d);
    EXPECT_EQ(tasksOf(b2, "l0.qkv"), 128u);
  }
  // A merge operator per layer instead: a task per KV head.
  o.separateMerge = true;
  TGraph gm = buildDecodeGraph(loadInputConfig("qwen3-0.6b.json"), o);
  EXPECT_EQ(gm.tasks.size(), 16501u - 28u * 96u);
  EXPECT_EQ(gm.ops.size(), 3u + 28u * 6u);
  size_t merges = 0;
  for (const Task &t : gm.tasks) {
    merges += gm.ops[t.op].kind == OpKind::AttentionMerge;
    for (const Region &r : t.writes)
      EXPECT_FALSE(r.combine);
  }
  EXPECT_EQ(merges, 28u * 8u);
  // Several requests with more attention tasks than SMs (4 rows x 8 KV
  // heads x 5 chunks for 132): attention and merge are just-in-time (their
  // costs follow each request's length), the rest ahead of time.
  o.batch = 4;
  TGraph g4 = buildDecodeGraph(loadInputConfig("qwen3-0.6b.json"), o);
  for (const Operator &op : g4.ops)
    EXPECT_EQ(op.launch == LaunchMode::Jit,
              op.kind == OpKind::DecodeAttention ||
                  op.kind == OpKind::AttentionMerge)
        << op.name;
  // At most one attention task per SM (16 rows x 8 KV heads for 128, no
  // split): round-robin queues place them one a worker, as the scheduler
  // would, so every task is ahead of time.
  o.batch = 16;
  o.sms = 128;
  TGraph g16 = buildDecodeGraph(loadInputConfig("qwen3-0.6b.json"), o);
  for (const Operator &op : g16.ops)
    EXPECT_EQ(op.launch, LaunchMode::Aot) << op.name;
  o.sms = 127;
  g16 = buildDecodeGraph(loadInputConfig("qwen3-0.6b.json"), o);
  for (const Operator &op : g16.ops)
    EXPECT_EQ(op.launch == LaunchMode::Jit, op.kind == OpKind::DecodeAttention)
        << op.name;
}

// Attention reads the projection's output straight: the QKV tiles need not
// align with heads, so the 8B projection's 6144 columns fill all 128 workers
// (48 columns each) and every attention task of a row waits for one event.
TEST(DecodeGraph, QkvFillsTheWorkersAndAttentionWaitsOnce) {
  PlanOptions o;
  o.sms = 128;
  o.maxSeq = 512;
  TGraph g = buildDecodeGraph(loadInputConfig("qwen3-8b.json"), o);
  EXPECT_EQ(tasksOf(g, "l0.qkv"), 128u);
  std::string error;
  ASSERT_TRUE(analyzeTileDependencies(g, error)) << error;
  std::map<int, int> producerOf; // event -> the task that triggers it
  for (size_t t = 0; t < g.tasks.size(); ++t)
    for (int e : g.tasks[t].triggers)
      producerOf[e] = static_cast<int>(t);
  size_t attention = 0;
  for (const Task &t : g.tasks)
    if (g.ops[t.op].name == "l0.attention") {
      ++attention;
      // Every QKV tile and nothing else: the cache rows a task reads are
      // written by no other task.
      std::set<int64_t> tiles;
      for (int e : t.waits) {
        const Task &p = g.tasks[producerOf.at(e)];
        EXPECT_EQ(g.ops[p.op].name, "l0.qkv");
        tiles.insert(p.tile);
      }
      EXPECT_EQ(tiles.size(), 128u);
    }
  EXPECT_EQ(attention, 8u * 8u); // 8 KV heads x 8 chunks of 64
}

TEST(DecodeGraph, LargeBatchesSplitLinearRows) {
  PlanOptions o;
  o.batch = 100; // two row tiles of 64
  o.maxSeq = 256;
  TGraph g = buildDecodeGraph(loadInputConfig("qwen3-tiny.json"), o);
  size_t embed = 0;
  for (const Task &t : g.tasks)
    embed += g.ops[t.op].kind == OpKind::Embedding;
  // Two row tiles; each keeps at most 132 / 2 = 66 column tiles (256 / 64).
  EXPECT_EQ(embed, 2u * 4u);
}

TEST(PlanOptions, Ranges) {
  std::string error;
  PlanOptions o;
  EXPECT_TRUE(checkPlanOptions(o, error));
  o.batch = 0;
  EXPECT_FALSE(checkPlanOptions(o, error));
  EXPECT_NE(error.find("batch must be in [1, 4096]"), std::string::npos);
  o.batch = 1;
  o.sms = 0;
  EXPECT_FALSE(checkPlanOptions(o, error));
}

} // namespace
