//===- ModelConfig.h - decoder LLM shapes from a config.json ----*- C++ -*-===//
//
// The fields of a Hugging Face `config.json` that shape one decode step of a
// Qwen3 or Llama decoder, and the options of the step (batch, maximum
// sequence length, SM count) the tGraph is planned for.
//
//===----------------------------------------------------------------------===//

#ifndef TAWA_MEGA_MODELCONFIG_H
#define TAWA_MEGA_MODELCONFIG_H

#include <cstdint>
#include <string>

namespace tawa::mega {

struct ModelConfig {
  std::string modelType; ///< "qwen3" or "llama"
  int64_t hiddenSize = 0;
  int64_t numLayers = 0;
  int64_t numHeads = 0;
  int64_t numKvHeads = 0;
  int64_t headDim = 0; ///< hidden_size / num_attention_heads when absent
  int64_t intermediateSize = 0;
  int64_t vocabSize = 0;
  double ropeTheta = 10000.0;
  double rmsNormEps = 1e-6;
  bool tieWordEmbeddings = false;
  /// Qwen3 normalizes each q and k head (q_norm, k_norm); Llama does not.
  bool qkNorm = false;
};

/// Reads a config from JSON text. On error returns false and sets `error`
/// ("config.json: missing 'hidden_size'", with the line of a syntax error).
bool parseModelConfig(const std::string &jsonText, const std::string &source,
                      ModelConfig &config, std::string &error);

/// Reads a config from a file.
bool loadModelConfig(const std::string &path, ModelConfig &config,
                     std::string &error);

struct PlanOptions {
  int64_t batch = 1;
  int64_t maxSeq = 4096; ///< KV-cache capacity (context length) per request
  /// The KV cache is paged: a pool of `kvPages` pages of `pageSize`
  /// positions per layer (bf16 [kvPages, kvHeads, pageSize, headDim], each
  /// KV head's positions of a page contiguous) and a block table mapping row
  /// b's page i (positions [i pageSize, (i + 1) pageSize)) to a pool page.
  /// pageSize is a power of two (the task functions shift and mask, as
  /// TensorRT-LLM's paged cache requires too); one page per row of
  /// pageSize >= maxSeq with kvPages = batch and the table b -> b is a
  /// contiguous cache [batch, kvHeads, pageSize, headDim].
  int64_t pageSize = 64;
  /// Pages in the pool; 0: enough for every row at maxSeq
  /// (batch * ceil(maxSeq / pageSize)).
  int64_t kvPages = 0;
  int sms = 132; ///< SMs an operator's tiles fill (H100 SXM; the runtime
                 ///< passes its worker count)
  /// Where attention splits the sequence into chunks: false (the default),
  /// the last chunk task of each (row, KV head) to end merges the chunks
  /// (a combined box, TGraph.h); true, a merge operator after attention.
  bool separateMerge = false;
  /// Batch-1 plans: a linear whose weights, split into sms / 2 tiles, are
  /// at most this many bytes a tile gets sms / 2 tiles instead of sms, so
  /// that consecutive operators run on disjoint halves of the workers
  /// and each tile's weights stream into its worker while the previous
  /// operator runs: with the round-robin queues, an operator of sms / 2
  /// tiles after another runs on the workers the other left idle. A linear
  /// tile that ran right after its worker's previous one started without
  /// its weights (the worker's ring held the previous tile's) and was the
  /// operator's straggler (run 251, Qwen3-0.6B: 1.5-2 µs a chained QKV or
  /// gate/up tile). Default: four of the batch-1 ring's 128 KB (a QKV tile of
  /// Qwen3-0.6B is 128 KB, a gate/up one 192 KB; Qwen3-8B's O projection,
  /// 512 KB a tile, then runs on the workers its attention leaves idle:
  /// 8B batch 1 -1.7 % at context 512 on an H200 against 256 KB, 1.7B's
  /// down, 384 KB, within noise, run 370); 0: every linear fills the SMs.
  int64_t alternateTileBytes = 512 * 1024;
  /// Batch 1: a linear that fills the workers right after an operator of
  /// sms / 2 tasks (attention) has its first sms / 2 tiles, which the
  /// round-robin queues give the workers that operator left idle (their
  /// rings prefetched the tiles' first weights while it ran), wider by the
  /// whole column granules the ring holds, and its last sms / 2,
  /// queued behind that operator's tasks (their weights stream only once
  /// those end), narrower by as much: the tiles would otherwise end with
  /// the latter (a trace's stragglers, bench/mega_stragglers.py). Off by
  /// default: Qwen3-8B's O projection so shifted (48 and 16 columns) was
  /// within noise of uniform tiles and slower than alternating it (run 372,
  /// H200: 4079.7 / 4096.1 / 4056.4 µs in-kernel at context 512).
  bool shiftChainedTiles = false;
  /// Rows of a linear (and embedding) tile, in [1, 64]: a batch wider than
  /// this is split into row tiles, each of which streams the weights of its
  /// columns (the tiles of the same columns read them from L2 when they run
  /// together). Tiles of at most 8 rows get the 136 KB weight ring, wider
  /// ones the 72 KB one (TaskParams.h). Batch 16 in tiles of 8 was slower
  /// than one tile of 16 (run 329, H200: Qwen3-8B +24-31 %, 1.7B +13 %,
  /// 0.6B +4 %); the runtime plans with 64 unless built with
  /// -DTAWA_MEGA_ROW_TILE.
  int64_t rowTile = 64;
};

} // namespace tawa::mega

#endif // TAWA_MEGA_MODELCONFIG_H
