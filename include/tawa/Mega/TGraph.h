//===- TGraph.h - the SM-level task graph of a mega-kernel ------*- C++ -*-===//
//
// The tGraph of the Mirage Persistent Kernel (MPK, DESIGN.md §7,
// docs/MEGAKERNEL.md): operators decomposed into tasks, one tile of one
// operator each, run by one worker CTA, and events, counters with a trigger
// count that launch the tasks waiting on them. Tasks record the tensor boxes
// they read and write, so dependencies can be computed from data (tile-level
// dependency analysis) and checked again by the CPU simulation.
//
// Plain C++17, no MLIR: the runtime side can use it.
//
//===----------------------------------------------------------------------===//

#ifndef TAWA_MEGA_TGRAPH_H
#define TAWA_MEGA_TGRAPH_H

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace tawa::mega {

/// Half-open index interval [begin, end).
struct Interval {
  int64_t begin = 0;
  int64_t end = 0;
  bool operator==(const Interval &o) const {
    return begin == o.begin && end == o.end;
  }
};

/// A box of one tensor: one interval per dimension.
struct Region {
  int tensor = -1;
  std::vector<Interval> box;
  /// Only in a task's writes: the box is combined by a group, the tasks of
  /// one operator that all list this same box. Whichever of them ends last
  /// writes it, from what the others wrote to their own boxes (the split
  /// attention's merge, done by the last chunk of a head). For dependencies
  /// and the simulation it is written by every member: a reader waits for
  /// the whole group. Printed `combine:TENSOR[...]`.
  bool combine = false;
  bool operator==(const Region &o) const {
    return tensor == o.tensor && box == o.box && combine == o.combine;
  }
};

/// True when both regions name the same tensor and their boxes intersect.
bool overlaps(const Region &a, const Region &b);

enum class TensorRole {
  /// Read by the step, written by no task (the tokens).
  Input,
  /// Written by exactly one task per element during the step.
  Activation,
  /// Carried across steps and updated by the step (the KV cache).
  State,
};

struct Tensor {
  std::string name;
  std::vector<int64_t> shape;
  TensorRole role = TensorRole::Activation;
  int line = 0; ///< source line when parsed, 0 when built in memory
};

/// What one task computes; the device side will have one task function per
/// kind (docs/MEGAKERNEL.md, "Adding a task kind").
enum class OpKind {
  Embedding,       ///< rows of the embedding table for the step's tokens
  RmsNormLinear,   ///< RMSNorm of whole input rows fused into a linear tile
  LinearResidual,  ///< linear tile plus the residual's matching tile
  DecodeAttention, ///< one (batch row, KV head, sequence chunk) of attention,
                   ///< with q/k RMSNorm (Qwen3), RoPE and the KV-cache append
  AttentionMerge,  ///< merge the per-chunk partial outputs (log-sum-exp)
  Argmax,          ///< greedy next token of one batch row
  Generic,         ///< no device function; for hand-written test graphs
};

const char *opKindName(OpKind kind);
/// Returns false when `name` names no kind.
bool parseOpKind(const std::string &name, OpKind &kind);

/// MPK §5.2: ahead-of-time tasks are queued to a worker before they are
/// ready; just-in-time tasks are dispatched by a scheduler once launched.
enum class LaunchMode { Aot, Jit };

struct Operator {
  std::string name;
  OpKind kind = OpKind::Generic;
  int layer = -1; ///< decoder layer, -1 outside the layers
  LaunchMode launch = LaunchMode::Aot;
  /// Shape and tiling parameters for the task function, printed verbatim
  /// (integers or decimal numbers), in insertion order.
  std::vector<std::pair<std::string, std::string>> attrs;
  int line = 0;
};

/// The task id of an empty task's operator: it computes nothing and only
/// forwards its dependent event to its trigger event (normalization).
constexpr int kEmptyOp = -1;

struct Task {
  int op = kEmptyOp;
  int64_t tile = 0; ///< index of the tile in its operator's tile grid
  std::vector<Region> reads;
  std::vector<Region> writes;
  std::vector<int> waits;    ///< dependent events, sorted, unique
  std::vector<int> triggers; ///< trigger events, sorted, unique
  int line = 0;
  bool isEmpty() const { return op == kEmptyOp; }
};

struct Event {
  /// Arrivals (task completions) that trigger the event; the start event has
  /// none.
  int64_t count = 0;
  /// In the linear form: the contiguous task-id range [first, last] the event
  /// launches; -1 when it launches nothing or the graph is not linear.
  int64_t first = -1;
  int64_t last = -1;
  int line = 0;
};

/// Which invariants hold; every pass states the form it needs and makes.
enum class Form {
  Tiles,      ///< tasks with their tiles, no events yet
  Events,     ///< events between tasks; a task may wait on and trigger many
  Normalized, ///< each task waits on exactly one event and triggers one
  Linear,     ///< normalized, and each event launches a contiguous id range
};

const char *formName(Form form);
bool parseForm(const std::string &name, Form &form);

struct TGraph {
  std::string name = "tgraph";
  Form form = Form::Tiles;
  int sms = 132;  ///< SM count the tiles were sized for
  int start = -1; ///< start event (count 0), once roots are attached
  int end = -1;   ///< end event (the graph drained), once roots are attached
  std::vector<Tensor> tensors;
  std::vector<Operator> ops;
  std::vector<Task> tasks;
  std::vector<Event> events;
  int line = 0;

  /// Index of the tensor called `name`, -1 if none.
  int findTensor(const std::string &name) const;
  /// "task 12 (l0.qkv tile 3)" / "task 40 (empty)": names a task in messages.
  std::string describeTask(int task) const;
};

/// Tasks that trigger each event (InTasks), sorted.
std::vector<std::vector<int>> eventInTasks(const TGraph &g);
/// Tasks that wait on each event (OutTasks), sorted.
std::vector<std::vector<int>> eventOutTasks(const TGraph &g);

/// Removes the events marked in `dead`, renumbers the rest in order and
/// rewrites the tasks' lists (and start/end) to the new numbers. A task's
/// reference to a dead event is dropped.
void eraseEvents(TGraph &g, const std::vector<bool> &dead);

/// Sorts and deduplicates a task's wait and trigger lists.
void canonicalizeTask(Task &task);

/// Sets each event's count to the number of tasks that trigger it.
void recountEvents(TGraph &g);

} // namespace tawa::mega

#endif // TAWA_MEGA_TGRAPH_H
