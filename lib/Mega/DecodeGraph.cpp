//===- DecodeGraph.cpp - one decode step of a decoder LLM as tasks --------===//
//
// Tensors are single-assignment within the step (each activation written once,
// by disjoint tiles). The KV cache is the one tensor both read and written:
// an attention task writes the step's row inside the chunk it reads, so no
// other task touches those bytes. Weights are read-only and do not appear:
// they create no dependency. RMSNorm is fused into the linear that consumes it
// (each linear tile reads whole input rows anyway, so it recomputes the rows'
// scale at the cost of B * hidden reads); the residual adds are fused into the
// O and down projections.
//
//===----------------------------------------------------------------------===//

#include "tawa/Mega/DecodeGraph.h"
#include "tawa/Mega/TaskParams.h"

#include <algorithm>
#include <cstdio>

namespace tawa::mega {
namespace {

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t roundUp(int64_t a, int64_t b) { return ceilDiv(a, b) * b; }

std::string formatDouble(double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.9g", v);
  return buf;
}

class Builder {
public:
  Builder(const ModelConfig &c, const PlanOptions &o) : c(c), o(o) {
    g.sms = o.sms;
    g.name = c.modelType + "-h" + std::to_string(c.hiddenSize) + "-l" +
             std::to_string(c.numLayers) + "-b" + std::to_string(o.batch) +
             "-s" + std::to_string(o.maxSeq);
    g.form = Form::Tiles;
  }

  TGraph build();

private:
  const ModelConfig &c;
  const PlanOptions &o;
  TGraph g;

  int tensor(const std::string &name, std::vector<int64_t> shape,
             TensorRole role = TensorRole::Activation) {
    g.tensors.push_back({name, std::move(shape), role, 0});
    return static_cast<int>(g.tensors.size()) - 1;
  }
  int op(const std::string &name, OpKind kind, int layer,
         std::vector<std::pair<std::string, std::string>> attrs,
         LaunchMode launch = LaunchMode::Aot) {
    Operator op;
    op.name = name;
    op.kind = kind;
    op.layer = layer;
    op.launch = launch;
    op.attrs = std::move(attrs);
    g.ops.push_back(std::move(op));
    return static_cast<int>(g.ops.size()) - 1;
  }
  void task(int op, int64_t tile, std::vector<Region> reads,
            std::vector<Region> writes) {
    Task t;
    t.op = op;
    t.tile = tile;
    t.reads = std::move(reads);
    t.writes = std::move(writes);
    g.tasks.push_back(std::move(t));
  }
  static Region box(int tensor, std::vector<Interval> box) {
    return Region{tensor, std::move(box)};
  }
  static std::string num(int64_t v) { return std::to_string(v); }
  /// Tasks of operator `opId` so far (an operator's tasks are contiguous).
  int64_t tasksOf(int opId) const {
    int64_t n = 0;
    for (auto it = g.tasks.rbegin(); it != g.tasks.rend() && it->op >= opId;
         ++it)
      n += it->op == opId;
    return n;
  }

  /// A linear over rows of `in` ([B, k]) into `columns` output columns. Each
  /// tile reads whole input rows (the reduction dimension is not split) and
  /// writes `writeBox(rows, cols)`; `extraReads` adds reads per tile (the
  /// residual's tile). Returns the width.
  /// `weightRows`: weight rows a column reads (2 for gate/up).
  template <typename WriteFn, typename ExtraFn>
  int64_t linearTiles(int opId, int in, int64_t k, int64_t columns,
                      WriteFn writeBox, ExtraFn extraReads,
                      int64_t weightRows = 1) {
    int64_t rowTiles = ceilDiv(o.batch, o.rowTile);
    int sms = o.sms;
    if (o.batch == 1 && o.alternateTileBytes > 0 && o.sms >= 2) {
      const int64_t half =
          chooseTileWidth(columns, rowTiles, o.sms / 2, kLinearColumnGranule);
      if (half * weightRows * k * 2 <= o.alternateTileBytes)
        sms = o.sms / 2;
    }
    int64_t width =
        chooseTileWidth(columns, rowTiles, sms, kLinearColumnGranule);
    int64_t colTiles = ceilDiv(columns, width);
    // Shifted tiles (PlanOptions::shiftChainedTiles): the first colTiles / 2
    // `width + shift` columns wide, the rest `width - shift`.
    int64_t shift = 0;
    if (o.batch == 1 && o.shiftChainedTiles && sms == o.sms && o.sms % 2 == 0 &&
        colTiles == o.sms && columns == colTiles * width && opId > 0 &&
        tasksOf(opId - 1) == o.sms / 2) {
      const int64_t granuleBytes = kLinearColumnGranule * weightRows * k * 2;
      // Whole granules of the ring: one more would give the wide tiles
      // more bytes than their head start.
      const int64_t granules =
          linearRingBytes(int32_t(tileRows(o))) / granuleBytes;
      shift = std::min(granules * kLinearColumnGranule,
                       width - kLinearColumnGranule);
    }
    const int64_t half = colTiles / 2;
    auto colStart = [&](int64_t nt) {
      return nt <= half
                 ? nt * (width + shift)
                 : half * (width + shift) + (nt - half) * (width - shift);
    };
    Operator &opRef = g.ops[opId];
    opRef.attrs.insert(opRef.attrs.begin(), {{"m", num(o.batch)},
                                             {"n", num(columns)},
                                             {"k", num(k)},
                                             {"tile_m", num(tileRows(o))},
                                             {"tile_n", num(width + shift)}});
    if (shift > 0) {
      opRef.attrs.push_back({"narrow_from", num(half)});
      opRef.attrs.push_back({"narrow_n", num(width - shift)});
    }
    for (int64_t mt = 0; mt < rowTiles; ++mt)
      for (int64_t nt = 0; nt < colTiles; ++nt) {
        Interval rows{mt * o.rowTile, std::min(o.batch, (mt + 1) * o.rowTile)};
        Interval cols{colStart(nt), std::min(columns, colStart(nt + 1))};
        std::vector<Region> reads{box(in, {rows, {0, k}})};
        for (Region &r : extraReads(rows, cols))
          reads.push_back(std::move(r));
        task(opId, mt * colTiles + nt, std::move(reads),
             {writeBox(rows, cols)});
      }
    return width;
  }
};

TGraph Builder::build() {
  const int64_t B = o.batch, H = c.hiddenSize, D = c.headDim;
  const int64_t nH = c.numHeads, nKV = c.numKvHeads, group = nH / nKV;
  const int64_t I = c.intermediateSize, V = c.vocabSize, S = o.maxSeq;
  const std::string eps = formatDouble(c.rmsNormEps);
  auto noExtra = [](Interval, Interval) { return std::vector<Region>{}; };

  int tokens = tensor("tokens", {B, 1}, TensorRole::Input);
  int x = tensor("x.0", {B, H});
  {
    int embed = op("embed", OpKind::Embedding, -1,
                   {{"vocab", num(V)}, {"hidden", num(H)}});
    int64_t rowTiles = ceilDiv(B, o.rowTile);
    int64_t width = chooseTileWidth(H, rowTiles, o.sms);
    g.ops[embed].attrs.push_back({"tile_n", num(width)});
    int64_t colTiles = ceilDiv(H, width);
    for (int64_t mt = 0; mt < rowTiles; ++mt)
      for (int64_t nt = 0; nt < colTiles; ++nt) {
        Interval rows{mt * o.rowTile, std::min(B, (mt + 1) * o.rowTile)};
        Interval cols{nt * width, std::min(H, (nt + 1) * width)};
        task(embed, mt * colTiles + nt, {box(tokens, {rows, {0, 1}})},
             {box(x, {rows, cols})});
      }
  }

  const int64_t chunks = chooseKvChunks(S, B, nKV, o.sms);
  const int64_t chunkLen = roundUp(ceilDiv(S, chunks), kKvChunkGranule);
  for (int64_t l = 0; l < c.numLayers; ++l) {
    const std::string p = "l" + num(l) + ".";
    const int layer = static_cast<int>(l);

    // QKV projection of the normalized residual stream.
    const int64_t qkvCols = (nH + 2 * nKV) * D;
    int qkv = tensor(p + "qkv", {B, qkvCols});
    int qkvOp = op(p + "qkv", OpKind::RmsNormLinear, layer, {{"eps", eps}});
    linearTiles(
        qkvOp, x, H, qkvCols,
        [&](Interval r, Interval cl) {
          return box(qkv, {r, cl});
        },
        noExtra);

    int kCache = tensor(p + "k_cache", {B, nKV, S, D}, TensorRole::State);
    int vCache = tensor(p + "v_cache", {B, nKV, S, D}, TensorRole::State);
    // Decode attention, GQA: one task per (batch row, KV head, chunk) reads
    // the group's q heads and the chunk of the head's cache. When the
    // sequence is split, the chunks' partial outputs are merged per (row, KV
    // head): by the chunk task of the pair that ends last (the pair's output
    // box is combined by its chunk tasks; no operator and no hop between
    // attention and the O projection), or with separateMerge by a merge
    // operator. Each task applies the
    // q/k RMSNorm (Qwen3) and RoPE to its heads itself, and the chunk that
    // holds the step's position (known only at run time) appends the new k
    // and v there: a task's written cache box is its own chunk. It is taken
    // to read the row's whole QKV output, so that the attention tasks wait
    // for one event of all the projection's tiles rather than for
    // projection tiles that straddle heads (a tile triggering two events
    // would need an empty task after normalization).
    int attn = tensor(p + "attn", {B, nH * D});
    int partO = -1, partLse = -1;
    if (chunks > 1) {
      partO = tensor(p + "attn_part", {B, nKV, chunks, group * D});
      partLse = tensor(p + "attn_lse", {B, nKV, chunks, group});
    }
    // Just-in-time where each request's length makes the tasks' costs vary
    // and there are more tasks than workers to balance them over (MPK
    // §5.2). With one request they cost alike; with at most one task per
    // worker, round-robin queues place them as the scheduler would, one a
    // worker. Ahead of time they skip the scheduler's hop, and a worker
    // starts loading its task's cache rows before the task's inputs are
    // ready.
    const LaunchMode attnLaunch =
        B == 1 || B * nKV * chunks <= o.sms ? LaunchMode::Aot : LaunchMode::Jit;
    int attnOp = op(p + "attention", OpKind::DecodeAttention, layer,
                    {{"batch", num(B)},
                     {"kv_heads", num(nKV)},
                     {"group", num(group)},
                     {"head_dim", num(D)},
                     {"qk_norm", c.qkNorm ? "1" : "0"},
                     {"rope_theta", formatDouble(c.ropeTheta)},
                     {"eps", eps},
                     {"max_seq", num(S)},
                     {"chunks", num(chunks)},
                     {"chunk", num(chunkLen)}},
                    attnLaunch);
    for (int64_t b = 0; b < B; ++b)
      for (int64_t h = 0; h < nKV; ++h)
        for (int64_t ch = 0; ch < chunks; ++ch) {
          Interval row{b, b + 1};
          Interval qCols{h * group * D, (h + 1) * group * D};
          Interval seq{ch * chunkLen, std::min(S, (ch + 1) * chunkLen)};
          std::vector<Interval> cacheBox{row, {h, h + 1}, seq, {0, D}};
          std::vector<Region> writes{box(kCache, cacheBox),
                                     box(vCache, cacheBox)};
          if (chunks > 1) {
            writes.push_back(
                box(partO, {row, {h, h + 1}, {ch, ch + 1}, {0, group * D}}));
            writes.push_back(
                box(partLse, {row, {h, h + 1}, {ch, ch + 1}, {0, group}}));
            if (!o.separateMerge) {
              writes.push_back(box(attn, {row, qCols}));
              writes.back().combine = true;
            }
          } else {
            writes.push_back(box(attn, {row, qCols}));
          }
          task(attnOp, (b * nKV + h) * chunks + ch,
               {box(qkv, {row, {0, qkvCols}}), box(kCache, cacheBox),
                box(vCache, cacheBox)},
               std::move(writes));
        }
    if (chunks > 1 && o.separateMerge) {
      int mergeOp = op(p + "attn_merge", OpKind::AttentionMerge, layer,
                       {{"chunks", num(chunks)},
                        {"group", num(group)},
                        {"head_dim", num(D)}},
                       attnLaunch);
      for (int64_t b = 0; b < B; ++b)
        for (int64_t h = 0; h < nKV; ++h) {
          Interval row{b, b + 1};
          task(mergeOp, b * nKV + h,
               {box(partO, {row, {h, h + 1}, {0, chunks}, {0, group * D}}),
                box(partLse, {row, {h, h + 1}, {0, chunks}, {0, group}})},
               {box(attn, {row, {h * group * D, (h + 1) * group * D}})});
        }
    }

    // O projection plus the residual stream.
    int mid = tensor(p + "h", {B, H});
    int oOp = op(p + "o_proj", OpKind::LinearResidual, layer, {});
    linearTiles(
        oOp, attn, nH * D, H,
        [&](Interval r, Interval cl) {
          return box(mid, {r, cl});
        },
        [&](Interval r, Interval cl) {
          return std::vector<Region>{box(x, {r, cl})};
        });

    // Post-attention RMSNorm fused into gate/up, and SiLU·mul into its
    // epilogue: a tile computes the gate and the up columns of the same
    // indices (it reads both weights' rows) and writes silu(gate) · up, so
    // no operator and no hop sits between it and the down projection.
    int act = tensor(p + "act", {B, I});
    int guOp = op(p + "gate_up", OpKind::RmsNormLinear, layer, {{"eps", eps}});
    linearTiles(
        guOp, mid, H, I,
        [&](Interval r, Interval cl) {
          return box(act, {r, cl});
        },
        noExtra, 2);

    // Down projection plus the residual stream: the next layer's input.
    int next = tensor("x." + num(l + 1), {B, H});
    int downOp = op(p + "down", OpKind::LinearResidual, layer, {});
    linearTiles(
        downOp, act, I, H,
        [&](Interval r, Interval cl) {
          return box(next, {r, cl});
        },
        [&](Interval r, Interval cl) {
          return std::vector<Region>{box(mid, {r, cl})};
        });
    x = next;
  }

  // Final RMSNorm fused into the LM head, then the greedy token per row.
  int logits = tensor("logits", {B, V});
  int lmOp = op("lm_head", OpKind::RmsNormLinear, -1,
                {{"eps", eps}, {"tied", c.tieWordEmbeddings ? "1" : "0"}});
  linearTiles(
      lmOp, x, H, V,
      [&](Interval r, Interval cl) {
        return box(logits, {r, cl});
      },
      noExtra);
  int nextTokens = tensor("next_tokens", {B, 1});
  int argmaxOp = op("argmax", OpKind::Argmax, -1, {{"vocab", num(V)}});
  for (int64_t b = 0; b < B; ++b)
    task(argmaxOp, b, {box(logits, {{b, b + 1}, {0, V}})},
         {box(nextTokens, {{b, b + 1}, {0, 1}})});
  return std::move(g);
}

} // namespace

int64_t chooseTileWidth(int64_t columns, int64_t rowTiles, int sms,
                        int64_t granule) {
  if (columns <= granule)
    return columns;
  int64_t tilesWanted =
      std::max<int64_t>(1, sms / std::max<int64_t>(1, rowTiles));
  int64_t width = roundUp(ceilDiv(columns, tilesWanted), granule);
  return std::min(width, roundUp(columns, granule));
}

int64_t chooseKvChunks(int64_t maxSeq, int64_t batch, int64_t kvHeads,
                       int sms) {
  int64_t maxChunks = std::max<int64_t>(1, maxSeq / kMinKvChunk);
  int64_t wanted = ceilDiv(sms, std::max<int64_t>(1, batch * kvHeads));
  int64_t chunks = std::max<int64_t>(1, std::min(wanted, maxChunks));
  // Chunks are whole multiples of kKvChunkGranule positions; recount after
  // rounding so that no chunk is empty.
  int64_t len = roundUp(ceilDiv(maxSeq, chunks), kKvChunkGranule);
  return ceilDiv(maxSeq, len);
}

bool checkPlanOptions(const PlanOptions &options, std::string &error) {
  if (options.batch < 1 || options.batch > 4096) {
    error = "batch must be in [1, 4096], got " + std::to_string(options.batch);
    return false;
  }
  if (options.maxSeq < 1 || options.maxSeq > (int64_t(1) << 20)) {
    error = "max-seq must be in [1, 1048576], got " +
            std::to_string(options.maxSeq);
    return false;
  }
  if (options.pageSize < 1 || options.pageSize > (int64_t(1) << 20) ||
      (options.pageSize & (options.pageSize - 1)) != 0) {
    error = "page-size must be a power of two in [1, 1048576], got " +
            std::to_string(options.pageSize);
    return false;
  }
  if (options.kvPages < 0 || options.kvPages > (int64_t(1) << 30)) {
    error = "kv-pages must be in [0, 1073741824] (0: batch * ceil(max-seq / "
            "page-size)), got " +
            std::to_string(options.kvPages);
    return false;
  }
  if (options.sms < 1 || options.sms > 1024) {
    error = "sms must be in [1, 1024], got " + std::to_string(options.sms);
    return false;
  }
  if (options.rowTile < 1 || options.rowTile > kRowTile) {
    error = "row-tile must be in [1, " + std::to_string(kRowTile) + "], got " +
            std::to_string(options.rowTile);
    return false;
  }
  return true;
}

int64_t pagesPerRow(const PlanOptions &options) {
  return ceilDiv(options.maxSeq, options.pageSize);
}

int64_t kvPoolPages(const PlanOptions &options) {
  return options.kvPages > 0 ? options.kvPages
                             : options.batch * pagesPerRow(options);
}

TGraph buildDecodeGraph(const ModelConfig &config, const PlanOptions &options) {
  return Builder(config, options).build();
}

} // namespace tawa::mega
