//===- DecodeBinding.h - the data of a decode step's tasks ------*- C++ -*-===//
//
// Binds the operators of a decode graph (DecodeGraph.h) to data
// (docs/MEGAKERNEL.md, "Binding"): the buffers the step touches (the
// model's weights under their Hugging Face names, the graph's tensors, the
// step's inputs) and, per operator, the OpParams its task function reads
// (TaskParams.h). The host allocates or finds each buffer and hands the
// kernel a table of their device addresses in this order.
//
//===----------------------------------------------------------------------===//

#ifndef TAWA_MEGA_DECODEBINDING_H
#define TAWA_MEGA_DECODEBINDING_H

#include "tawa/Mega/ModelConfig.h"
#include "tawa/Mega/TGraph.h"
#include "tawa/Mega/TaskParams.h"

#include <cstdint>
#include <cstring>
#include <iosfwd>
#include <string>
#include <vector>

namespace tawa::mega {

enum class BufferKind {
  Weight,     ///< a model weight, read-only; name is its Hugging Face key
  Input,      ///< written by the host before a step (tokens, positions)
  Activation, ///< written and read within a step (float ones; see Polled)
  State,      ///< carried across steps (the KV cache)
  Output,     ///< read by the host after a step (logits, next tokens)
  /// A linear weight in the staged layout (TaskParams.h): the host packs
  /// weight `source` [N, K] into it (tawa_mega_pack_weight) once, its
  /// columns multiplied by weight `scale` [K] where one is named (the
  /// RMSNorm the linear folds in); its shape is [stagedWeightRows(N),
  /// stagedWeightCols(K)].
  StagedWeight,
  /// Counters a step's tasks keep among themselves (the attention chunks
  /// that have ended, per row and KV head): the runtime places them in its
  /// step state, which it zeroes before every step; the host binds nothing.
  Scratch,
  /// A table the runtime computes from the model's config when it is
  /// created and owns; the host binds nothing. One today: `rope`, BF16
  /// [maxSeq, headDim], row s the cosines then the sines of s · θ^(−2i/D)
  /// for i < D/2 (DecodeAttentionParams::rope), so that the mega-kernel
  /// holds no powf or sincosf code.
  Constant,
  /// A bf16 activation: written once in a step, element by element, by
  /// its producers, and read by polling (include/tawa/device/mega/poll.cuh)
  /// in batch-1 plans without just-in-time tasks. The runtime places every
  /// such buffer in one allocation of its own, which it fills with the
  /// poison 0xFFFF before each of those steps; the host binds nothing.
  Polled,
};

const char *bufferKindName(BufferKind kind);
const char *bufferTypeName(BufferType type);

struct BufferDesc {
  std::string name;
  BufferType type = BufferType::BF16;
  std::vector<int64_t> shape;
  BufferKind kind = BufferKind::Activation;
  /// The graph tensor this buffer holds, -1 for weights, `positions` and
  /// `block_table`. A KV cache holds its graph tensor (logical [B, kvHeads,
  /// maxSeq, D]) as a page pool [pages, kvHeads, pageSize, D].
  int tensor = -1;
  /// StagedWeight: the name of the weight it is packed from, and of the
  /// [K] weight its columns are multiplied by ("" for none).
  std::string source, scale;
  int64_t elements() const;
};

struct DecodeBinding {
  std::vector<BufferDesc> buffers;
  std::vector<OpParams> params; ///< one per graph operator, by op index
  /// Buffers the host touches every step.
  uint32_t tokens = kNoBuffer, positions = kNoBuffer, logits = kNoBuffer,
           nextTokens = kNoBuffer;
  /// I32 [batch, pagesPerRow]: row b's page i of every layer's KV cache is
  /// pool page blockTable[b][i] (written by the host, like positions).
  uint32_t blockTable = kNoBuffer;
  /// Index of the buffer called `name`, kNoBuffer if none.
  uint32_t find(const std::string &name) const;
};

/// Binds `g`, built by buildDecodeGraph(config, options) (any form: passes
/// keep the operators and tensors). Fails with a message on an operator it
/// does not know or shapes the task functions do not take (head_dim not a
/// multiple of 8 or over 256, hidden or intermediate size not a multiple of
/// 8, a tile of more than kMaxTileRows rows).
bool bindDecodeGraph(const TGraph &g, const ModelConfig &config,
                     const PlanOptions &options, DecodeBinding &out,
                     std::string &error);

/// Reads one operator's parameters as the struct of its kind.
template <typename T> T paramsAs(const OpParams &p) {
  T t;
  static_assert(sizeof(T) <= sizeof(OpParams), "fits");
  std::memcpy(&t, p.bytes, sizeof(T));
  return t;
}

/// One line per buffer and per operator's parameters (`tawa-mega bind`).
void printBinding(const TGraph &g, const DecodeBinding &b, std::ostream &os);

} // namespace tawa::mega

#endif // TAWA_MEGA_DECODEBINDING_H
