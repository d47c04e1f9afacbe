//===- DecodeGraph.h - one decode step of a decoder LLM as tasks -*- C++
//-*-===//
//
// Builds the tiles-form tGraph of one decode step (docs/MEGAKERNEL.md, "The
// graph"): the operators of a Qwen3 / Llama decoder, each split along its
// output into tiles sized for one SM, each tile a task with the boxes it reads
// and writes. Dependencies are left to the tile-level analysis.
//
//===----------------------------------------------------------------------===//

#ifndef TAWA_MEGA_DECODEGRAPH_H
#define TAWA_MEGA_DECODEGRAPH_H

#include "tawa/Mega/ModelConfig.h"
#include "tawa/Mega/TGraph.h"

#include <algorithm>

namespace tawa::mega {

/// Granularity of a pointwise tile's output columns (embedding, SiLU·mul).
constexpr int64_t kColumnGranule = 64;
/// Granularity of a linear tile's output columns: the 16 weight rows of the
/// linear task's tensor-core product (mma m16n8k16). Narrow tiles let every
/// operator of a large model fill the workers once (Qwen3-8B's O and down
/// projections: 128 tiles of 32 columns, not 64 of 64).
constexpr int64_t kLinearColumnGranule = 16;
/// Rows of a linear tile by default (PlanOptions::rowTile): one wgmma M
/// group of 64 rows covers a decode batch of up to 64 requests, so decode
/// linears split only their columns.
constexpr int64_t kRowTile = 64;
/// Shortest KV chunk a decode attention task takes when the sequence is split
/// (shorter chunks give a small batch more parallel tasks, each with the
/// fixed cost of a task and a merge input).
constexpr int64_t kMinKvChunk = 64;
/// Granularity of a KV chunk's length, in cache positions.
constexpr int64_t kKvChunkGranule = 64;

/// The column width of a tile of an operator with `columns` output columns
/// and `rowTiles` row tiles: the narrowest multiple of `granule` that keeps
/// the task count at or below `sms` (so that every weight element is read by
/// one SM and the tiles of one operator fill the machine once).
int64_t chooseTileWidth(int64_t columns, int64_t rowTiles, int sms,
                        int64_t granule = kColumnGranule);

/// Rows of a linear or embedding tile of the plan: min(batch, rowTile). The
/// task functions find a tile's rows as (tile / colTiles) * this.
inline int64_t tileRows(const PlanOptions &options) {
  return std::min(options.batch, options.rowTile);
}

/// Number of sequence chunks a decode attention task row is split into:
/// enough to give each SM a task when batch * kvHeads is small, never chunks
/// shorter than kMinKvChunk, lengths a multiple of kKvChunkGranule; 1 means
/// no split (and no merge task).
int64_t chooseKvChunks(int64_t maxSeq, int64_t batch, int64_t kvHeads, int sms);

/// Checks the options (batch in [1, 4096], maxSeq in [1, 1 << 20], pageSize
/// a power of two in [1, 1 << 20], kvPages in [0, 1 << 30], sms in [1, 1024]);
/// returns false and sets `error` otherwise.
bool checkPlanOptions(const PlanOptions &options, std::string &error);

/// Pages of the block table's row: ceil(maxSeq / pageSize).
int64_t pagesPerRow(const PlanOptions &options);
/// Pages in the KV pool: options.kvPages, or batch * pagesPerRow if 0.
int64_t kvPoolPages(const PlanOptions &options);

/// The tiles-form graph of one decode step.
TGraph buildDecodeGraph(const ModelConfig &config, const PlanOptions &options);

} // namespace tawa::mega

#endif // TAWA_MEGA_DECODEGRAPH_H
