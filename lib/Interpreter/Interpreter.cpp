//===- Interpreter.cpp - the CPU interpreter of tt and tawa IR ------------===//
//
// Each task (the kernel body, and each partition of a tawa.warp_specialize)
// keeps its own stack of frames, one per region it is inside, so that it can
// stop before any operation and resume there later: that is what lets the
// scheduler interleave partitions at operation granularity and block a task
// on an aref without threads.
//
//===----------------------------------------------------------------------===//

#include "tawa/Interpreter/Interpreter.h"

#include "OpSemantics.h"

#include "tawa/Dialect/Tawa/TawaDialect.h"
#include "tawa/Interpreter/Aref.h"
#include "tawa/Interpreter/Numerics.h"
#include "tawa/Interpreter/Scheduler.h"
#include "tawa/Protocol/IssueTurnProtocol.h"
#include "tawa/Transforms/IssueTurns.h"
#include "tawa/Transforms/Partition.h"
#include "tawa/Transforms/SourceLocation.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <optional>

using namespace mlir;

namespace tawa::interp {

std::string formatLocation(Location loc) {
  Location user = getUserLocation(loc);
  if (auto file = dyn_cast<FileLineColLoc>(user))
    return (file.getFilename().getValue() + ":" + Twine(file.getLine()) + ":" +
            Twine(file.getColumn()))
        .str();
  if (isa<UnknownLoc>(user))
    return "unknown location";
  std::string s;
  llvm::raw_string_ostream os(s);
  user.print(os);
  return s;
}

namespace {

std::string describeOp(Operation *op) {
  return (op->getName().getStringRef() + " at " + formatLocation(op->getLoc()))
      .str();
}

enum class FrameKind { Body, ForBody, WhileBefore, WhileAfter, IfRegion };

/// Where a task is inside one region, and the loop state of an scf.for.
struct Frame {
  FrameKind kind = FrameKind::Body;
  Block *block = nullptr;
  Block::iterator ip;
  Operation *owner = nullptr;
  int64_t iv = 0, ub = 0, step = 0;
  bool unsignedCmp = false;
};

/// A tawa.dot_async issued and not yet retired, and the slot values it reads.
struct InFlightProduct {
  uint64_t group = 0;
  Operation *op = nullptr;
  SmallVector<BorrowTag, 3> reads;
};

struct Task {
  unsigned id = 0;
  int partition = -1; ///< region index in the warp_specialize; -1: the body
  int32_t warps = 0;
  /// A cooperative consumer group: the partition's warps are `groups` warp
  /// groups, each a task of its own running the partition's code; this is
  /// group `group` (-1: the partition is not split).
  int group = -1;
  int groups = 1;
  Task *parent = nullptr;
  std::vector<Frame> frames;
  llvm::DenseMap<Value, RuntimeValue> env;
  bool finished = false;
  std::deque<InFlightProduct> inFlight;
  uint64_t nextGroup = 0;
  std::vector<unsigned> children; ///< partitions spawned, while waiting

  /// Issue turns (tawa/Protocol/IssueTurnProtocol.h): the runs of its
  /// region, whether it made its start arrivals, holds the turn, took the
  /// turn at the end; the named barrier it waits on and the phase it arrived
  /// in.
  const IssueTurnRuns *runs = nullptr;
  bool turnStarted = false, turnHeld = false, turnEnded = false;
  int waitBarrier = -1;
  uint64_t waitPhase = 0;
  Operation *waitAt = nullptr; ///< the product (null: the end) it waits at

  /// The aref reader this task is: its group, else 0.
  unsigned reader() const { return group < 0 ? 0u : unsigned(group); }
};

/// A named barrier (bar.sync / bar.arrive) of the issue turns: each phase
/// completes when every one of the `expected` groups has arrived.
struct NamedBarrier {
  uint64_t phase = 0;
  uint32_t arrived = 0; ///< groups (bit g) arrived in the current phase
  unsigned expected = protocol::kIssueTurnGroups;
};

/// The identity of an operand for the memo of cooperative groups: tensors
/// and other shared objects by address (run-time data is immutable),
/// scalars by value. The key keeps its object alive: an address compared
/// while its object could have been freed and the memory given to another
/// tensor would match that other tensor (a wrong result taken from the
/// memo, seen as a rare mismatch that depended on where malloc put things).
struct OperandKey {
  const void *object = nullptr;
  const void *type = nullptr;
  uint64_t bits = 0;
  std::shared_ptr<const void> owner; ///< not compared
  bool operator==(const OperandKey &o) const {
    return object == o.object && type == o.type && bits == o.bits;
  }
};

/// Results a cooperative group computed for an operation free of side
/// effects, for the other groups to take instead of computing them again.
struct MemoEntry {
  unsigned task = 0;
  SmallVector<OperandKey, 4> keys;
  SmallVector<RuntimeValue, 2> results;
};

enum class Step { Progress, Blocked, Stop };

class ProgramExecutor {
public:
  ProgramExecutor(tt::FuncOp func, ArrayRef<RuntimeValue> args, ProgramId pid,
                  Grid grid, GlobalMemory &memory,
                  const ExecutionOptions &options, uint64_t programSeed,
                  uint64_t stepBudget, uint64_t workBudget)
      : func(func), args(args), pid(pid), options(options),
        evaluator(memory, pid, grid, options.limits), scheduler(programSeed),
        stepBudget(stepBudget), workBudget(workBudget) {
    result.program = pid;
  }

  ExecutionResult run();

private:
  // Task bookkeeping.
  Task &newTask(Task *parent, int partition, int32_t warps, Block *body);
  std::string taskName(const Task &t) const;
  bool canProceed(Task &t);
  Step step(Task &t);
  /// Executes `op`, the next operation of `t`.
  Step execute(Task &t, Operation *op);
  Step finish(Task &t);

  // Values.
  const RuntimeValue *lookup(Task &t, Value v);
  /// The value of `v` as `op` reads it: fails (and stops the run) on a read
  /// of a released tile or an unretired product.
  bool read(Task &t, Operation *op, Value v, RuntimeValue &out);
  /// The value of `v` passed along without being read (yields, loop
  /// arguments, dot_wait operands, a product's accumulator).
  bool pass(Task &t, Operation *op, Value v, RuntimeValue &out);
  bool isRetired(const PendingTag &p) const;
  void bind(Task &t, ValueRange targets, ArrayRef<RuntimeValue> values);
  bool readInt(Task &t, Operation *op, Value v, int64_t &out,
               bool isUnsigned = false);

  // Operations with regions, terminators, arefs and products.
  Step enterFor(Task &t, scf::ForOp op);
  Step enterWhile(Task &t, scf::WhileOp op);
  Step enterIf(Task &t, scf::IfOp op);
  Step yield(Task &t, scf::YieldOp op);
  Step condition(Task &t, scf::ConditionOp op);
  Step warpSpecialize(Task &t, WarpSpecializeOp op);
  /// The ring and position k of an aref operation, or the Step that ends
  /// the run (a malformed operand, or k < 0: `verb` says what it does).
  std::optional<Step> ringAndPosition(Task &t, Operation *op, Value aref,
                                      Value kValue, StringRef verb,
                                      ArefRing *&ring, int64_t &k);
  Step arefPut(Task &t, ArefPutOp op);
  Step arefGet(Task &t, ArefGetOp op);
  Step arefConsumed(Task &t, ArefConsumedOp op);
  /// Hand-overs group `group` needs before its turn `turn`: consumer 0's
  /// n-th tile waits for the n-th hand-over from consumer 1 (none for its
  /// first), consumer 1's n-th tile for the (n+1)-th from consumer 0.
  static int64_t handoversNeeded(int64_t group, int64_t turn) {
    return group == 0 ? turn : turn + 1;
  }
  Step pingPongWait(Task &t, PingPongWaitOp op);
  Step pingPongArrive(Task &t, PingPongArriveOp op);
  Step dotAsync(Task &t, DotAsyncOp op);
  Step dotWait(Task &t, DotWaitOp op);
  Step generic(Task &t, Operation *op);

  // Cooperative groups and their issue turns.
  /// The cooperative groups partition `index` of `op` runs as (1: one task).
  static int cooperativeGroups(WarpSpecializeOp op, unsigned index);
  /// Arrival of group `g` at named barrier `id`; false when it stopped the
  /// run (a second arrival of the group in one phase).
  bool barrierArrive(Task &t, int id, Operation *at);
  /// bar.sync of `t` at named barrier `id` before `at` (null: the end of
  /// the partition): arrives once, then Progress when the phase completed,
  /// Blocked before.
  Step barrierSync(Task &t, int id, Operation *at);
  std::string describeBarrierWait(Task &t);
  void checkBarriersAtExit();
  static SmallVector<OperandKey, 4> memoKeys(ArrayRef<RuntimeValue> operands);
  /// Results of `op` another group computed from the same operands (taken
  /// out of the memo), if any.
  std::optional<SmallVector<RuntimeValue, 2>>
  memoTake(Task &t, Operation *op, ArrayRef<OperandKey> keys);
  void memoPut(Task &t, Operation *op, SmallVector<OperandKey, 4> keys,
               ArrayRef<RuntimeValue> results);
  /// Leaves the current frame of `t` and binds `values` to its owner's
  /// results; the parent frame moves past the owner.
  void popFrame(Task &t, ArrayRef<RuntimeValue> values);

  // Reports.
  Step violation(StringRef kind, const Twine &message,
                 std::vector<std::string> details = {});
  Step runtimeError(Outcome outcome, const Twine &message);
  std::string describeRing(const ArefRing &ring) const;
  std::string describePosition(Task &t);
  void reportDeadlock();
  void checkRingsAtExit();

  tt::FuncOp func;
  ArrayRef<RuntimeValue> args;
  ProgramId pid;
  const ExecutionOptions &options;
  OpEvaluator evaluator;
  SeededScheduler scheduler;
  uint64_t stepBudget, workBudget;
  std::vector<std::unique_ptr<Task>> tasks;
  std::vector<std::shared_ptr<ArefRing>> rings;
  /// Ping-pong hand-overs made by consumer group 0 and 1 so far.
  int64_t handovers[2] = {0, 0};
  /// Named barriers of the issue turns, by id.
  std::map<int, NamedBarrier> barriers;
  /// Issue-turn runs of each split consumer region.
  llvm::DenseMap<Region *, std::unique_ptr<IssueTurnRuns>> turnRuns;
  llvm::DenseMap<Operation *, std::deque<MemoEntry>> memo;
  ExecutionResult result;
  bool stopped = false;
};

//===----------------------------------------------------------------------===//
// Tasks and scheduling
//===----------------------------------------------------------------------===//

Task &ProgramExecutor::newTask(Task *parent, int partition, int32_t warps,
                               Block *body) {
  auto t = std::make_unique<Task>();
  t->id = static_cast<unsigned>(tasks.size());
  t->parent = parent;
  t->partition = partition;
  t->warps = warps;
  if (body) {
    Frame f;
    f.kind = FrameKind::Body;
    f.block = body;
    f.ip = body->begin();
    t->frames.push_back(f);
  }
  tasks.push_back(std::move(t));
  return *tasks.back();
}

std::string ProgramExecutor::taskName(const Task &t) const {
  if (t.partition < 0)
    return "kernel body";
  if (t.group >= 0)
    return "partition " + std::to_string(t.partition) + " group " +
           std::to_string(t.group) + " (" + std::to_string(t.warps) + " warps)";
  return "partition " + std::to_string(t.partition) + " (" +
         std::to_string(t.warps) + " warps)";
}

ExecutionResult ProgramExecutor::run() {
  if (func.isExternal()) {
    runtimeError(Outcome::Unsupported,
                 "@" + func.getName() + " is a declaration, not a kernel");
    return result;
  }
  Block &entry = func.getBody().front();
  if (entry.getNumArguments() != args.size()) {
    runtimeError(Outcome::RuntimeError, "@" + func.getName() + " takes " +
                                            Twine(entry.getNumArguments()) +
                                            " arguments, given " +
                                            Twine(args.size()));
    return result;
  }
  Task &body = newTask(nullptr, -1, 0, &entry);
  for (auto [arg, value] : llvm::zip(entry.getArguments(), args))
    body.env[arg] = value;

  std::vector<Task *> runnable;
  while (!stopped) {
    runnable.clear();
    bool allFinished = true;
    for (auto &t : tasks) {
      if (t->finished)
        continue;
      allFinished = false;
      if (canProceed(*t))
        runnable.push_back(t.get());
    }
    if (allFinished)
      break;
    if (runnable.empty()) {
      reportDeadlock();
      break;
    }
    Task &t = *runnable[scheduler.pick(runnable.size())];
    for (unsigned n = scheduler.burst(); n > 0 && !stopped; --n) {
      Step s = step(t);
      if (s != Step::Progress || t.finished)
        break;
    }
  }
  if (!stopped)
    checkRingsAtExit();
  if (!stopped)
    checkBarriersAtExit();
  return result;
}

bool ProgramExecutor::canProceed(Task &t) {
  if (t.waitBarrier >= 0)
    return barriers[t.waitBarrier].phase > t.waitPhase;
  if (t.frames.empty())
    return true;
  Frame &f = t.frames.back();
  if (f.ip == f.block->end())
    return true;
  Operation *op = &*f.ip;
  auto ringAndK = [&](Value aref, Value kValue, ArefRing *&ring,
                      int64_t &k) -> bool {
    const RuntimeValue *r = lookup(t, aref);
    const RuntimeValue *kv = lookup(t, kValue);
    if (!r || !r->aref || !kv || !kv->data || kv->data->ints.empty())
      return false;
    ring = r->aref.get();
    k = signExtend(kv->data->ints[0], 32);
    return true;
  };
  ArefRing *ring;
  int64_t k;
  // A malformed aref operation (or a negative position) is left runnable so
  // that its step reports what is wrong.
  if (auto put = dyn_cast<ArefPutOp>(op))
    return !ringAndK(put.getAref(), put.getK(), ring, k) || k < 0 ||
           ring->canPut(k);
  if (auto get = dyn_cast<ArefGetOp>(op))
    return !ringAndK(get.getAref(), get.getK(), ring, k) || k < 0 ||
           ring->canGet(k, t.reader());
  if (auto wait = dyn_cast<PingPongWaitOp>(op)) {
    const RuntimeValue *turn = lookup(t, wait.getTurn());
    int64_t group = wait.getGroup();
    if (!turn || !turn->data || turn->data->ints.empty() || group < 0 ||
        group > 1)
      return true;
    return handovers[1 - group] >=
           handoversNeeded(group, signExtend(turn->data->ints[0], 32));
  }
  if (isa<WarpSpecializeOp>(op) && !t.children.empty())
    return llvm::all_of(t.children,
                        [&](unsigned c) { return tasks[c]->finished; });
  return true;
}

Step ProgramExecutor::finish(Task &t) {
  t.finished = true;
  t.frames.clear();
  if (!t.inFlight.empty()) {
    const InFlightProduct &oldest = t.inFlight.front();
    return violation(
        "in-flight-at-exit",
        taskName(t) + " of program (" + Twine(pid.x) + ", " + Twine(pid.y) +
            ", " + Twine(pid.z) + ") ends with " + Twine(t.inFlight.size()) +
            " tawa.dot_async product(s) in flight, the oldest "
            "issued by " +
            describeOp(oldest.op) + ": no tawa.dot_wait retired them");
  }
  return Step::Progress;
}

/// The element operations of one operation (ExecutionLimits::maxWork).
static uint64_t workOf(Operation *op) {
  auto elements = [](Type type) -> uint64_t {
    auto tensor = dyn_cast<RankedTensorType>(type);
    return tensor && tensor.hasStaticShape() ? tensor.getNumElements() : 0;
  };
  if (isa<tt::DotOp, DotAsyncOp>(op) && op->getNumOperands() >= 2) {
    auto a = dyn_cast<RankedTensorType>(op->getOperand(0).getType());
    if (a && a.hasStaticShape() && a.getRank() == 2)
      return elements(op->getResult(0).getType()) * a.getShape()[1];
  }
  uint64_t work = 0;
  for (Type type : op->getResultTypes())
    work += elements(type);
  return work;
}

Step ProgramExecutor::step(Task &t) {
  if (t.runs && !t.turnStarted) {
    // The last group passes the first turn to group 0 as the partition
    // starts.
    t.turnStarted = true;
    for (int id :
         protocol::turnStartArrivals(t.group, options.turnVariant, t.groups))
      if (!barrierArrive(t, id, nullptr))
        return Step::Stop;
  }
  if (t.frames.empty())
    return finish(t);
  Frame &f = t.frames.back();
  if (f.ip == f.block->end()) {
    // The end of a partition region (which has no terminator).
    if (f.kind != FrameKind::Body)
      return runtimeError(Outcome::RuntimeError,
                          "a region of " + describeOp(f.owner) +
                              " ends without a terminator");
    if (t.runs && !t.turnEnded) {
      // Group 0 takes the turn the last group passed after its last run, so
      // that no barrier phase is left half-arrived.
      if (std::optional<int> id =
              protocol::turnEndSync(t.group, options.turnVariant, t.groups)) {
        Step s = barrierSync(t, *id, nullptr);
        if (s != Step::Progress)
          return s;
      }
      t.turnEnded = true;
    }
    return finish(t);
  }
  if (++result.steps > stepBudget)
    return runtimeError(Outcome::RuntimeError,
                        "more than " + Twine(options.limits.maxSteps) +
                            " operations executed: over the interpreter's "
                            "step limit (an endless loop?)");
  Operation *op = &*f.ip;
  uint64_t work = workOf(op);
  result.work += work;
  if (result.work > workBudget)
    return runtimeError(Outcome::RuntimeError,
                        "more than " + Twine(options.limits.maxWork) +
                            " element operations executed: over the "
                            "interpreter's work limit");
  if (options.onStep)
    options.onStep(t.partition, t.group, op);
  Step s = execute(t, op);
  // A blocked operation did nothing: it is charged when it runs.
  if (s == Step::Blocked)
    result.work -= std::min(result.work, work);
  return s;
}

Step ProgramExecutor::execute(Task &t, Operation *op) {
  Frame &f = t.frames.back();
  if (auto y = dyn_cast<scf::YieldOp>(op))
    return yield(t, y);
  if (auto c = dyn_cast<scf::ConditionOp>(op))
    return condition(t, c);
  if (auto forOp = dyn_cast<scf::ForOp>(op))
    return enterFor(t, forOp);
  if (auto whileOp = dyn_cast<scf::WhileOp>(op))
    return enterWhile(t, whileOp);
  if (auto ifOp = dyn_cast<scf::IfOp>(op))
    return enterIf(t, ifOp);
  if (isa<tt::ReturnOp>(op)) {
    for (Value v : op->getOperands()) {
      RuntimeValue ignored;
      if (!pass(t, op, v, ignored))
        return Step::Stop;
    }
    return finish(t);
  }
  if (auto ws = dyn_cast<WarpSpecializeOp>(op))
    return warpSpecialize(t, ws);
  if (auto group = dyn_cast<PingPongGroupOp>(op)) {
    // Partition 1 is consumer 0, partition 2 consumer 1 (the verifier).
    if (t.partition != 1 && t.partition != 2)
      return runtimeError(Outcome::RuntimeError,
                          describeOp(op) + " outside a ping-pong consumer");
    bind(t, op->getResults(),
         {makeInt(group.getType(), static_cast<uint64_t>(t.partition - 1))});
    ++f.ip;
    return Step::Progress;
  }
  if (auto create = dyn_cast<ArefCreateOp>(op)) {
    if (t.group >= 0)
      return runtimeError(Outcome::Unsupported,
                          describeOp(op) +
                              " creates an aref inside a cooperative consumer "
                              "partition (each group would make its own)");
    auto type = cast<ArefType>(create.getType());
    auto ring = std::make_shared<ArefRing>(static_cast<unsigned>(rings.size()),
                                           type.getDepth(), op);
    rings.push_back(ring);
    RuntimeValue v;
    v.kind = RuntimeValue::Kind::Aref;
    v.aref = std::move(ring);
    bind(t, op->getResults(), {v});
    ++f.ip;
    return Step::Progress;
  }
  if (auto put = dyn_cast<ArefPutOp>(op))
    return arefPut(t, put);
  if (auto get = dyn_cast<ArefGetOp>(op))
    return arefGet(t, get);
  if (auto consumed = dyn_cast<ArefConsumedOp>(op))
    return arefConsumed(t, consumed);
  if (auto wait = dyn_cast<PingPongWaitOp>(op))
    return pingPongWait(t, wait);
  if (auto arrive = dyn_cast<PingPongArriveOp>(op))
    return pingPongArrive(t, arrive);
  if (auto dot = dyn_cast<DotAsyncOp>(op))
    return dotAsync(t, dot);
  if (auto wait = dyn_cast<DotWaitOp>(op))
    return dotWait(t, wait);
  if (op->getNumRegions() != 0 && !isa<tt::ReduceOp>(op))
    return runtimeError(Outcome::Unsupported,
                        "the interpreter does not implement '" +
                            op->getName().getStringRef() + "' (at " +
                            formatLocation(op->getLoc()) + ")");
  return generic(t, op);
}

//===----------------------------------------------------------------------===//
// Values
//===----------------------------------------------------------------------===//

const RuntimeValue *ProgramExecutor::lookup(Task &t, Value v) {
  for (Task *s = &t; s; s = s->parent) {
    auto it = s->env.find(v);
    if (it != s->env.end())
      return &it->second;
  }
  return nullptr;
}

bool ProgramExecutor::isRetired(const PendingTag &p) const {
  const Task &owner = *tasks[p.task];
  return owner.inFlight.empty() || p.group < owner.inFlight.front().group;
}

bool ProgramExecutor::pass(Task &t, Operation *op, Value v, RuntimeValue &out) {
  const RuntimeValue *value = lookup(t, v);
  if (!value) {
    runtimeError(Outcome::RuntimeError,
                 describeOp(op) + " uses a value that has not been computed");
    return false;
  }
  out = *value;
  return true;
}

bool ProgramExecutor::read(Task &t, Operation *op, Value v, RuntimeValue &out) {
  if (!pass(t, op, v, out))
    return false;
  if (out.borrow && !out.borrow->ring->isLive(*out.borrow)) {
    const ArefRing &ring = *out.borrow->ring;
    const ArefRing::Slot &slot = ring.slot(out.borrow->slot);
    std::string when;
    if (slot.releasedGeneration == out.borrow->generation && slot.releasedBy)
      when = "after " + describeOp(slot.releasedBy) +
             " released position k=" + std::to_string(slot.releasedPosition);
    else
      when = "after the slot was released and filled again";
    violation("use-after-consumed",
              describeOp(op) + " in " + taskName(t) + " reads a tile of " +
                  describeRing(ring) + " slot " +
                  std::to_string(out.borrow->slot) + " " + when);
    return false;
  }
  if (out.pending && !isRetired(*out.pending)) {
    const Task &owner = *tasks[out.pending->task];
    Operation *issue = nullptr;
    for (const InFlightProduct &p : owner.inFlight)
      if (p.group == out.pending->group)
        issue = p.op;
    violation("unretired-read",
              describeOp(op) + " in " + taskName(t) + " reads the result of " +
                  (issue ? describeOp(issue) : std::string("tawa.dot_async")) +
                  " before a tawa.dot_wait retired it (" +
                  Twine(owner.inFlight.size()) + " product(s) in flight)");
    return false;
  }
  return true;
}

bool ProgramExecutor::readInt(Task &t, Operation *op, Value v, int64_t &out,
                              bool isUnsigned) {
  RuntimeValue value;
  if (!read(t, op, v, value))
    return false;
  if (value.kind != RuntimeValue::Kind::Data || !value.data ||
      value.data->ints.size() != 1 || !value.data->shape.empty()) {
    runtimeError(Outcome::RuntimeError,
                 describeOp(op) + " expects an integer scalar operand");
    return false;
  }
  unsigned w = integerWidth(value.data->elementType);
  out = isUnsigned ? static_cast<int64_t>(value.data->ints[0])
                   : signExtend(value.data->ints[0], w);
  return true;
}

void ProgramExecutor::bind(Task &t, ValueRange targets,
                           ArrayRef<RuntimeValue> values) {
  for (auto [target, value] : llvm::zip(targets, values))
    t.env[target] = value;
}

//===----------------------------------------------------------------------===//
// Control flow
//===----------------------------------------------------------------------===//

void ProgramExecutor::popFrame(Task &t, ArrayRef<RuntimeValue> values) {
  Operation *owner = t.frames.back().owner;
  t.frames.pop_back();
  bind(t, owner->getResults(), values);
  ++t.frames.back().ip;
}

Step ProgramExecutor::enterFor(Task &t, scf::ForOp op) {
  bool isUnsigned = op.getUnsignedCmp();
  int64_t lb, ub, step;
  if (!readInt(t, op, op.getLowerBound(), lb, isUnsigned) ||
      !readInt(t, op, op.getUpperBound(), ub, isUnsigned) ||
      !readInt(t, op, op.getStep(), step, isUnsigned))
    return Step::Stop;
  SmallVector<RuntimeValue> inits;
  for (Value v : op.getInitArgs()) {
    RuntimeValue r;
    if (!pass(t, op, v, r))
      return Step::Stop;
    inits.push_back(std::move(r));
  }
  if (step <= 0 && !(isUnsigned && step != 0))
    return runtimeError(Outcome::RuntimeError,
                        describeOp(op) + " has a step that is not positive (" +
                            Twine(step) + "): it would never end");
  bool enter = isUnsigned
                   ? static_cast<uint64_t>(lb) < static_cast<uint64_t>(ub)
                   : lb < ub;
  if (!enter) {
    bind(t, op.getResults(), inits);
    ++t.frames.back().ip;
    return Step::Progress;
  }
  Frame f;
  f.kind = FrameKind::ForBody;
  f.block = op.getBody();
  f.ip = f.block->begin();
  f.owner = op;
  f.iv = lb;
  f.ub = ub;
  f.step = step;
  f.unsignedCmp = isUnsigned;
  t.frames.push_back(f);
  t.env[op.getInductionVar()] =
      makeInt(op.getInductionVar().getType(), static_cast<uint64_t>(lb));
  bind(t, op.getRegionIterArgs(), inits);
  return Step::Progress;
}

Step ProgramExecutor::enterWhile(Task &t, scf::WhileOp op) {
  SmallVector<RuntimeValue> inits;
  for (Value v : op.getInits()) {
    RuntimeValue r;
    if (!pass(t, op, v, r))
      return Step::Stop;
    inits.push_back(std::move(r));
  }
  Frame f;
  f.kind = FrameKind::WhileBefore;
  f.block = &op.getBefore().front();
  f.ip = f.block->begin();
  f.owner = op;
  t.frames.push_back(f);
  bind(t, f.block->getArguments(), inits);
  return Step::Progress;
}

Step ProgramExecutor::enterIf(Task &t, scf::IfOp op) {
  int64_t cond;
  if (!readInt(t, op, op.getCondition(), cond, /*isUnsigned=*/true))
    return Step::Stop;
  Region &region = (cond & 1) ? op.getThenRegion() : op.getElseRegion();
  if (region.empty()) {
    // No else region: the op has no results.
    ++t.frames.back().ip;
    return Step::Progress;
  }
  Frame f;
  f.kind = FrameKind::IfRegion;
  f.block = &region.front();
  f.ip = f.block->begin();
  f.owner = op;
  t.frames.push_back(f);
  return Step::Progress;
}

Step ProgramExecutor::yield(Task &t, scf::YieldOp op) {
  SmallVector<RuntimeValue> values;
  for (Value v : op.getOperands()) {
    RuntimeValue r;
    if (!pass(t, op, v, r))
      return Step::Stop;
    values.push_back(std::move(r));
  }
  Frame &f = t.frames.back();
  switch (f.kind) {
  case FrameKind::ForBody: {
    auto forOp = cast<scf::ForOp>(f.owner);
    int64_t next;
    bool more;
    if (f.unsignedCmp) {
      uint64_t n = static_cast<uint64_t>(f.iv) + static_cast<uint64_t>(f.step);
      more = n > static_cast<uint64_t>(f.iv) && n < static_cast<uint64_t>(f.ub);
      next = static_cast<int64_t>(n);
    } else {
      more = !__builtin_add_overflow(f.iv, f.step, &next) && next < f.ub;
    }
    unsigned width = integerWidth(forOp.getInductionVar().getType());
    // The induction variable wraps in its own width: beyond it, stop.
    if (more && !f.unsignedCmp &&
        signExtend(static_cast<uint64_t>(next), width) != next)
      more = false;
    if (!more) {
      popFrame(t, values);
      return Step::Progress;
    }
    f.iv = next;
    f.ip = f.block->begin();
    t.env[forOp.getInductionVar()] =
        makeInt(forOp.getInductionVar().getType(), static_cast<uint64_t>(next));
    bind(t, forOp.getRegionIterArgs(), values);
    return Step::Progress;
  }
  case FrameKind::IfRegion:
    popFrame(t, values);
    return Step::Progress;
  case FrameKind::WhileAfter: {
    auto whileOp = cast<scf::WhileOp>(f.owner);
    f.kind = FrameKind::WhileBefore;
    f.block = &whileOp.getBefore().front();
    f.ip = f.block->begin();
    bind(t, f.block->getArguments(), values);
    return Step::Progress;
  }
  default:
    return runtimeError(Outcome::Unsupported,
                        describeOp(op) + " ends a region the interpreter "
                                         "does not execute");
  }
}

Step ProgramExecutor::condition(Task &t, scf::ConditionOp op) {
  Frame &f = t.frames.back();
  if (f.kind != FrameKind::WhileBefore)
    return runtimeError(Outcome::Unsupported,
                        describeOp(op) + " outside an scf.while");
  int64_t cond;
  if (!readInt(t, op, op.getCondition(), cond, /*isUnsigned=*/true))
    return Step::Stop;
  SmallVector<RuntimeValue> values;
  for (Value v : op.getArgs()) {
    RuntimeValue r;
    if (!pass(t, op, v, r))
      return Step::Stop;
    values.push_back(std::move(r));
  }
  if (!(cond & 1)) {
    popFrame(t, values);
    return Step::Progress;
  }
  auto whileOp = cast<scf::WhileOp>(f.owner);
  f.kind = FrameKind::WhileAfter;
  f.block = &whileOp.getAfter().front();
  f.ip = f.block->begin();
  bind(t, f.block->getArguments(), values);
  return Step::Progress;
}

int ProgramExecutor::cooperativeGroups(WarpSpecializeOp op, unsigned index) {
  // As the CUDA emitter splits them: the consumer partition of a producer /
  // consumer pair, four warps a group, unless ping-pong consumers take
  // alternate tiles (then each partition is one group).
  ArrayRef<int32_t> warps = op.getWarps();
  if (index != 1 || warps.size() != 2 || op.getNumRegions() != 2 ||
      op->hasAttr(kPingPongAttr) || warps[1] % 4 != 0 || warps[1] / 4 < 2 ||
      warps[1] / 4 > 32)
    return 1;
  return warps[1] / 4;
}

Step ProgramExecutor::warpSpecialize(Task &t, WarpSpecializeOp op) {
  if (t.children.empty()) {
    ArrayRef<int32_t> warps = op.getWarps();
    for (auto [i, region] : llvm::enumerate(op.getPartitions())) {
      Block *body = region.empty() ? nullptr : &region.front();
      int32_t w = i < warps.size() ? warps[i] : 0;
      int groups = body ? cooperativeGroups(op, i) : 1;
      if (groups == 1) {
        Task &child = newTask(&t, static_cast<int>(i), w, body);
        t.children.push_back(child.id);
        continue;
      }
      // Every group takes and releases every position of the rings the
      // partition reads (the empty barrier counts all groups' arrivals).
      region.walk([&](Operation *use) {
        Value aref;
        if (auto get = dyn_cast<ArefGetOp>(use))
          aref = get.getAref();
        else if (auto consumed = dyn_cast<ArefConsumedOp>(use))
          aref = consumed.getAref();
        if (!aref)
          return;
        const RuntimeValue *ring = lookup(t, aref);
        if (ring && ring->aref)
          ring->aref->setReaders(static_cast<unsigned>(groups));
      });
      auto &runs = turnRuns[&region];
      if (!runs)
        runs =
            std::make_unique<IssueTurnRuns>(findIssueTurnRuns(region, groups));
      result.cooperativeGroups = std::max(result.cooperativeGroups, groups);
      for (int g = 0; g < groups; ++g) {
        Task &child = newTask(&t, static_cast<int>(i), 4, body);
        child.group = g;
        child.groups = groups;
        if (!runs->empty())
          child.runs = runs.get();
        t.children.push_back(child.id);
      }
    }
    if (!t.children.empty())
      return Step::Progress;
  }
  if (!llvm::all_of(t.children, [&](unsigned c) { return tasks[c]->finished; }))
    return Step::Blocked;
  t.children.clear();
  ++t.frames.back().ip;
  return Step::Progress;
}

//===----------------------------------------------------------------------===//
// Arefs and asynchronous products
//===----------------------------------------------------------------------===//

std::string ProgramExecutor::describeRing(const ArefRing &ring) const {
  return "aref #" + std::to_string(ring.index()) +
         " (D=" + std::to_string(ring.depth()) + ")";
}

std::optional<Step>
ProgramExecutor::ringAndPosition(Task &t, Operation *op, Value arefValue,
                                 Value kValue, StringRef verb, ArefRing *&ring,
                                 int64_t &k) {
  RuntimeValue aref;
  if (!pass(t, op, arefValue, aref) || !readInt(t, op, kValue, k))
    return Step::Stop;
  if (!aref.aref)
    return runtimeError(Outcome::RuntimeError,
                        describeOp(op) + ": operand is not an aref");
  ring = aref.aref.get();
  if (k < 0)
    return violation("negative-position", describeOp(op) + " in " +
                                              taskName(t) + " " + verb +
                                              " position k=" + Twine(k) +
                                              " of " + describeRing(*ring));
  return std::nullopt;
}

Step ProgramExecutor::arefPut(Task &t, ArefPutOp op) {
  ArefRing *ring;
  int64_t k;
  if (auto stop =
          ringAndPosition(t, op, op.getAref(), op.getK(), "puts", ring, k))
    return *stop;
  if (!ring->canPut(k))
    return Step::Blocked;
  SmallVector<RuntimeValue> values;
  for (Value v : op.getValues()) {
    RuntimeValue r;
    if (!read(t, op, v, r))
      return Step::Stop;
    values.push_back(std::move(r));
  }
  ring->put(k, values);
  ++t.frames.back().ip;
  return Step::Progress;
}

Step ProgramExecutor::arefGet(Task &t, ArefGetOp op) {
  ArefRing *ring;
  int64_t k;
  if (auto stop =
          ringAndPosition(t, op, op.getAref(), op.getK(), "gets", ring, k))
    return *stop;
  if (!ring->canGet(k, t.reader()))
    return Step::Blocked;
  std::vector<RuntimeValue> values;
  std::string wrong = ring->get(k, values, t.reader());
  if (!wrong.empty())
    return violation("wrong-position", describeOp(op) + " in " + taskName(t) +
                                           " on " + describeRing(*ring) + ": " +
                                           wrong);
  if (values.size() != op.getNumResults())
    return runtimeError(Outcome::RuntimeError,
                        describeOp(op) + " takes " + Twine(op.getNumResults()) +
                            " values out of a slot that holds " +
                            Twine(values.size()));
  bind(t, op.getResults(), values);
  ++t.frames.back().ip;
  return Step::Progress;
}

Step ProgramExecutor::arefConsumed(Task &t, ArefConsumedOp op) {
  ArefRing *ringPtr;
  int64_t k;
  if (auto stop = ringAndPosition(t, op, op.getAref(), op.getK(), "releases",
                                  ringPtr, k))
    return *stop;
  ArefRing &ring = *ringPtr;
  unsigned slotIndex = ring.slotOf(k);
  const ArefRing::Slot &slot = ring.slot(slotIndex);
  unsigned reader = t.reader();
  if (!slot.holds(reader))
    return violation("consumed-not-borrowed", describeOp(op) + " in " +
                                                  taskName(t) + " on " +
                                                  describeRing(ring) + ": " +
                                                  ring.consumed(k, op, reader));
  if (slot.position != k)
    return violation("wrong-position", describeOp(op) + " in " + taskName(t) +
                                           " on " + describeRing(ring) + ": " +
                                           ring.consumed(k, op, reader));
  // The hardware reads wgmma operands from shared memory until the product
  // retires: releasing the slot earlier lets the producer overwrite them.
  // (A cooperative group's release counts for its own reads: the slot is
  // not refilled before every group released it.)
  BorrowTag current{&ring, slotIndex, slot.generation, reader};
  for (auto &task : tasks)
    for (const InFlightProduct &p : task->inFlight)
      for (const BorrowTag &b : p.reads)
        if (b.ring == current.ring && b.slot == current.slot &&
            b.generation == current.generation && b.reader == reader)
          return violation("use-after-release",
                           describeOp(op) + " in " + taskName(t) +
                               " releases position k=" + Twine(k) + " (slot " +
                               Twine(slotIndex) + ") of " + describeRing(ring) +
                               " while " + describeOp(p.op) +
                               ", which reads it, is still in flight (no "
                               "tawa.dot_wait has retired it)");
  std::string wrong = ring.consumed(k, op, reader);
  if (!wrong.empty())
    return violation("wrong-position", describeOp(op) + ": " + wrong);
  ++t.frames.back().ip;
  return Step::Progress;
}

Step ProgramExecutor::pingPongWait(Task &t, PingPongWaitOp op) {
  int64_t turn;
  if (!readInt(t, op, op.getTurn(), turn))
    return Step::Stop;
  int64_t group = op.getGroup();
  if (group < 0 || group > 1)
    return runtimeError(Outcome::RuntimeError, describeOp(op) + ": group " +
                                                   Twine(group) +
                                                   " is neither 0 nor 1");
  if (turn < 0)
    return violation("negative-position", describeOp(op) + " in " +
                                              taskName(t) + " waits for turn " +
                                              Twine(turn));
  int64_t needed = handoversNeeded(group, turn);
  int64_t done = handovers[1 - group];
  if (done < needed)
    return Step::Blocked;
  // The device waits on the parity of a barrier that completes once per
  // hand-over: a hand-over more than one ahead looks like the one before.
  if (done > needed)
    return violation("pingpong-phase",
                     describeOp(op) + " in " + taskName(t) +
                         " waits for hand-over " + Twine(needed) +
                         " from consumer " + Twine(1 - group) +
                         ", which has already made " + Twine(done) +
                         ": a parity wait cannot tell them apart");
  ++t.frames.back().ip;
  return Step::Progress;
}

Step ProgramExecutor::pingPongArrive(Task &t, PingPongArriveOp op) {
  int64_t group = op.getGroup();
  if (group < 0 || group > 1)
    return runtimeError(Outcome::RuntimeError, describeOp(op) + ": group " +
                                                   Twine(group) +
                                                   " is neither 0 nor 1");
  ++handovers[group];
  ++t.frames.back().ip;
  return Step::Progress;
}

Step ProgramExecutor::dotAsync(Task &t, DotAsyncOp op) {
  bool turn = t.runs && t.runs->products.contains(op);
  if (turn && t.runs->startAt.contains(op) && !t.turnHeld) {
    // bar.sync on this group's turn barrier: wait for the other group's
    // hand-over.
    Step s = barrierSync(
        t, protocol::turnSyncBarrier(t.group, options.turnVariant, t.groups),
        op);
    if (s != Step::Progress)
      return s;
    for (auto &other : tasks)
      if (other.get() != &t && other->runs == t.runs && other->turnHeld &&
          other->parent == t.parent && !other->finished)
        return violation("turn-overlap",
                         taskName(t) + " takes its issue turn before " +
                             describeOp(op) + " while " + taskName(*other) +
                             " still holds its turn");
    t.turnHeld = true;
    ++result.issueTurns;
  }
  if (turn && !t.turnHeld) {
    std::string holder;
    for (auto &other : tasks)
      if (other.get() != &t && other->runs == t.runs && other->turnHeld &&
          other->parent == t.parent && !other->finished)
        holder = " (" + taskName(*other) + " holds it)";
    return violation("issue-outside-turn",
                     describeOp(op) + " in " + taskName(t) +
                         " issues a product marked tawa.issue_turn while the "
                         "group does not hold the turn" +
                         holder);
  }
  RuntimeValue a, b, c;
  if (!read(t, op, op.getA(), a) || !read(t, op, op.getB(), b) ||
      !pass(t, op, op.getC(), c))
    return Step::Stop;
  // The accumulator may be a product still in flight in this task: wgmma
  // groups that chain one accumulator execute in order.
  if (c.pending && c.pending->task != t.id && !isRetired(*c.pending)) {
    RuntimeValue ignored;
    read(t, op, op.getC(), ignored);
    return Step::Stop;
  }
  if (c.borrow && !c.borrow->ring->isLive(*c.borrow)) {
    RuntimeValue ignored;
    read(t, op, op.getC(), ignored);
    return Step::Stop;
  }
  if (!a.data || !b.data || !c.data)
    return runtimeError(Outcome::RuntimeError,
                        describeOp(op) + ": operands are not tensors");
  RuntimeValue d;
  SmallVector<OperandKey, 4> keys;
  std::optional<SmallVector<RuntimeValue, 2>> memoized;
  if (t.groups > 1) {
    keys = memoKeys({a, b, c});
    memoized = memoTake(t, op, keys);
  }
  if (memoized) {
    d = (*memoized)[0];
    result.work -= std::min(result.work, workOf(op));
  } else {
    if (failed(evaluator.dot(op, *a.data, *b.data, *c.data, op.getType(), d)))
      return runtimeError(evaluator.errorOutcome, evaluator.errorMessage);
    if (t.groups > 1)
      memoPut(t, op, std::move(keys), {d});
  }
  InFlightProduct product;
  product.group = t.nextGroup++;
  product.op = op;
  for (const RuntimeValue *v : {&a, &b, &c})
    if (v->borrow)
      product.reads.push_back(*v->borrow);
  d.pending = PendingTag{t.id, product.group};
  t.inFlight.push_back(std::move(product));
  bind(t, op->getResults(), {d});
  ++t.frames.back().ip;
  if (turn && t.turnHeld &&
      (t.runs->endAfter.contains(op) ||
       (protocol::turnHandsOverEarly(options.turnVariant) &&
        t.runs->startAt.contains(op)))) {
    // bar.arrive on the other group's turn barrier: hand the turn over.
    t.turnHeld = false;
    if (protocol::turnHandsOver(t.group, options.turnVariant, t.groups) &&
        !barrierArrive(t, protocol::handOverBarrier(t.group, t.groups), op))
      return Step::Stop;
  }
  return Step::Progress;
}

Step ProgramExecutor::dotWait(Task &t, DotWaitOp op) {
  int64_t pendings = std::max<int64_t>(0, op.getPendings());
  while (static_cast<int64_t>(t.inFlight.size()) > pendings)
    t.inFlight.pop_front();
  SmallVector<RuntimeValue> values;
  for (Value v : op.getInputs()) {
    RuntimeValue r;
    if (!pass(t, op, v, r))
      return Step::Stop;
    values.push_back(std::move(r));
  }
  bind(t, op->getResults(), values);
  ++t.frames.back().ip;
  return Step::Progress;
}

Step ProgramExecutor::generic(Task &t, Operation *op) {
  SmallVector<RuntimeValue, 4> operands;
  for (Value v : op->getOperands()) {
    RuntimeValue r;
    if (!read(t, op, v, r))
      return Step::Stop;
    operands.push_back(std::move(r));
  }
  SmallVector<RuntimeValue, 2> results;
  // Cooperative groups run the same code on the same values: what one group
  // computed without side effects, the next takes instead of computing it
  // again (the same results: run-time data is immutable and the evaluation
  // deterministic).
  bool memoizable = t.groups > 1 && isMemoryEffectFree(op);
  SmallVector<OperandKey, 4> keys;
  std::optional<SmallVector<RuntimeValue, 2>> memoized;
  if (memoizable) {
    keys = memoKeys(operands);
    memoized = memoTake(t, op, keys);
  }
  if (t.groups > 1 && isa<tt::AtomicRMWOp, tt::AtomicCASOp>(op))
    return runtimeError(Outcome::Unsupported,
                        describeOp(op) +
                            ": an atomic in a cooperative consumer partition "
                            "(every group would apply it; the split of the "
                            "tile between the groups is not modelled)");
  if (memoized) {
    results = std::move(*memoized);
    result.work -= std::min(result.work, workOf(op));
  } else {
    if (failed(evaluator.evaluate(op, operands, results)))
      return runtimeError(evaluator.errorOutcome, evaluator.errorMessage);
    if (memoizable)
      memoPut(t, op, std::move(keys), results);
  }
  if (results.size() != op->getNumResults())
    return runtimeError(Outcome::RuntimeError,
                        describeOp(op) + " produced " + Twine(results.size()) +
                            " values for " + Twine(op->getNumResults()) +
                            " results");
  // A transposed or reshaped slot tile is a view of the same shared memory
  // (the wgmma descriptor reads the slot): it stays tied to the borrow.
  if (isa<tt::TransOp, tt::ReshapeOp>(op) && operands[0].borrow)
    results[0].borrow = operands[0].borrow;
  bind(t, op->getResults(), results);
  ++t.frames.back().ip;
  return Step::Progress;
}

//===----------------------------------------------------------------------===//
// Cooperative groups: issue turns and the memo
//===----------------------------------------------------------------------===//

bool ProgramExecutor::barrierArrive(Task &t, int id, Operation *at) {
  NamedBarrier &bar = barriers[id];
  uint32_t bit = 1u << t.group;
  if (bar.arrived & bit) {
    // bar.arrive counts threads: the second arrival of one group would
    // complete the phase without the other group.
    violation("barrier-overflow",
              taskName(t) + " arrives at named barrier " + Twine(id) +
                  (at ? " after " + describeOp(at)
                      : Twine(" at the start of the partition")) +
                  " a second time in phase " + Twine(bar.phase) +
                  ": the phase would complete on its arrivals alone (" +
                  Twine(protocol::kIssueTurnBarrierThreads) +
                  " threads), without the other group");
    return false;
  }
  bar.arrived |= bit;
  if (static_cast<unsigned>(llvm::popcount(bar.arrived)) >= bar.expected) {
    ++bar.phase;
    bar.arrived = 0;
  }
  return true;
}

Step ProgramExecutor::barrierSync(Task &t, int id, Operation *at) {
  if (t.waitBarrier < 0) {
    uint64_t phase = barriers[id].phase;
    if (!barrierArrive(t, id, at))
      return Step::Stop;
    t.waitBarrier = id;
    t.waitPhase = phase;
    t.waitAt = at;
  }
  if (barriers[id].phase <= t.waitPhase)
    return Step::Blocked;
  t.waitBarrier = -1;
  t.waitAt = nullptr;
  return Step::Progress;
}

std::string ProgramExecutor::describeBarrierWait(Task &t) {
  const NamedBarrier &bar = barriers[t.waitBarrier];
  std::string where =
      t.waitAt ? "before " + describeOp(t.waitAt) : "at the end of its region";
  std::string missing;
  for (auto &other : tasks)
    if (other->parent == t.parent && other->partition == t.partition &&
        other->group >= 0 && !(bar.arrived >> other->group & 1))
      missing += (missing.empty() ? "" : ", ") + std::string("group ") +
                 std::to_string(other->group) +
                 (other->finished ? " (finished)" : "");
  return taskName(t) + ": blocked in bar.sync " +
         std::to_string(t.waitBarrier) + " (the issue turn of group " +
         std::to_string(t.waitBarrier - protocol::kIssueTurnBarrierBase) +
         ") " + where + ": phase " + std::to_string(bar.phase) + " has " +
         std::to_string(llvm::popcount(bar.arrived)) + " of " +
         std::to_string(bar.expected) + " arrivals; waiting for " +
         (missing.empty() ? std::string("nobody") : missing);
}

void ProgramExecutor::checkBarriersAtExit() {
  for (const auto &[id, bar] : barriers) {
    if (!bar.arrived)
      continue;
    std::string who;
    for (unsigned g = 0; g < 32; ++g)
      if (bar.arrived >> g & 1)
        who += (who.empty() ? "group " : ", group ") + std::to_string(g);
    violation("barrier-at-exit",
              "program (" + Twine(pid.x) + ", " + Twine(pid.y) + ", " +
                  Twine(pid.z) + ") ends with named barrier " + Twine(id) +
                  " (the issue turn of group " +
                  Twine(id - protocol::kIssueTurnBarrierBase) + ") in phase " +
                  Twine(bar.phase) + " arrived at by " + who +
                  " only: the groups reached it a different number of times");
    return;
  }
}

SmallVector<OperandKey, 4>
ProgramExecutor::memoKeys(ArrayRef<RuntimeValue> operands) {
  SmallVector<OperandKey, 4> keys;
  for (const RuntimeValue &v : operands) {
    OperandKey key;
    if (v.data && v.data->shape.empty() && v.data->numElements() == 1) {
      key.type = v.data->elementType.getAsOpaquePointer();
      if (v.data->isFloat())
        std::memcpy(&key.bits, &v.data->floats[0], sizeof key.bits);
      else
        key.bits = v.data->ints[0];
    } else if (v.data) {
      key.object = v.data.get();
      key.owner = v.data;
    } else if (v.descriptor) {
      key.object = v.descriptor.get();
      key.owner = v.descriptor;
    } else {
      key.object = v.aref.get();
      key.owner = v.aref;
    }
    keys.push_back(key);
  }
  return keys;
}

std::optional<SmallVector<RuntimeValue, 2>>
ProgramExecutor::memoTake(Task &t, Operation *op, ArrayRef<OperandKey> keys) {
  auto it = memo.find(op);
  if (it == memo.end())
    return std::nullopt;
  std::deque<MemoEntry> &entries = it->second;
  for (auto e = entries.begin(); e != entries.end(); ++e) {
    if (e->task == t.id || e->keys.size() != keys.size() ||
        !std::equal(keys.begin(), keys.end(), e->keys.begin()))
      continue;
    SmallVector<RuntimeValue, 2> results = std::move(e->results);
    entries.erase(e);
    return results;
  }
  return std::nullopt;
}

void ProgramExecutor::memoPut(Task &t, Operation *op,
                              SmallVector<OperandKey, 4> keys,
                              ArrayRef<RuntimeValue> results) {
  MemoEntry entry;
  entry.task = t.id;
  entry.keys = std::move(keys);
  for (const RuntimeValue &r : results) {
    RuntimeValue plain = r;
    plain.borrow.reset();
    plain.pending.reset();
    entry.results.push_back(std::move(plain));
  }
  // Groups stay within a few iterations of each other (they share the
  // rings); a group that went its own way leaves entries that age out.
  std::deque<MemoEntry> &entries = memo[op];
  entries.push_back(std::move(entry));
  if (entries.size() > 16)
    entries.pop_front();
}

//===----------------------------------------------------------------------===//
// Reports
//===----------------------------------------------------------------------===//

Step ProgramExecutor::violation(StringRef kind, const Twine &message,
                                std::vector<std::string> details) {
  if (stopped)
    return Step::Stop;
  stopped = true;
  result.outcome = Outcome::ProtocolViolation;
  result.kind = kind.str();
  result.message = message.str();
  result.details = std::move(details);
  return Step::Stop;
}

Step ProgramExecutor::runtimeError(Outcome outcome, const Twine &message) {
  if (stopped)
    return Step::Stop;
  stopped = true;
  result.outcome = outcome;
  result.kind =
      outcome == Outcome::Unsupported ? "unsupported" : "runtime-error";
  result.message = message.str();
  return Step::Stop;
}

std::string ProgramExecutor::describePosition(Task &t) {
  std::string who = taskName(t) + ": ";
  if (t.finished)
    return who + "finished";
  if (t.waitBarrier >= 0)
    return describeBarrierWait(t);
  if (t.frames.empty())
    return who + "about to finish";
  Frame &f = t.frames.back();
  if (f.ip == f.block->end())
    return who + "at the end of its region";
  Operation *op = &*f.ip;
  auto slotState = [&](Value arefValue, Value kValue, StringRef what) {
    const RuntimeValue *aref = lookup(t, arefValue);
    const RuntimeValue *kv = lookup(t, kValue);
    if (!aref || !aref->aref || !kv || !kv->data)
      return who + "blocked in " + describeOp(op);
    const ArefRing &ring = *aref->aref;
    int64_t k = signExtend(kv->data->ints[0], 32);
    unsigned s = ring.slotOf(k);
    return who + "blocked in " + describeOp(op) + " on " + describeRing(ring) +
           ", position k=" + std::to_string(k) + ", slot " + std::to_string(s) +
           ": " + what.str() + " (" + ring.describeSlot(s) + ")";
  };
  if (auto put = dyn_cast<ArefPutOp>(op))
    return slotState(put.getAref(), put.getK(), "the slot is not empty");
  if (auto get = dyn_cast<ArefGetOp>(op))
    return slotState(get.getAref(), get.getK(), "the slot is not full");
  if (auto wait = dyn_cast<PingPongWaitOp>(op)) {
    const RuntimeValue *turn = lookup(t, wait.getTurn());
    int64_t group = wait.getGroup();
    if (turn && turn->data && !turn->data->ints.empty() && group >= 0 &&
        group <= 1)
      return who + "blocked in " + describeOp(op) + " for turn " +
             std::to_string(signExtend(turn->data->ints[0], 32)) +
             ": it needs hand-over " +
             std::to_string(
                 handoversNeeded(group, signExtend(turn->data->ints[0], 32))) +
             " from consumer " + std::to_string(1 - group) + ", which made " +
             std::to_string(handovers[1 - group]);
  }
  if (isa<WarpSpecializeOp>(op))
    return who + "waits for its partitions at " + describeOp(op);
  return who + "at " + describeOp(op);
}

void ProgramExecutor::reportDeadlock() {
  std::vector<std::string> details;
  for (auto &t : tasks)
    if (t->partition >= 0 ||
        (!t->finished && !t->frames.empty() &&
         t->frames.back().ip != t->frames.back().block->end() &&
         !isa<WarpSpecializeOp>(&*t->frames.back().ip)))
      details.push_back(describePosition(*t));
  violation("deadlock",
            "deadlock in program (" + Twine(pid.x) + ", " + Twine(pid.y) +
                ", " + Twine(pid.z) + ") after " + Twine(result.steps) +
                " operations: every unfinished partition is blocked",
            std::move(details));
}

void ProgramExecutor::checkRingsAtExit() {
  for (const auto &ring : rings)
    for (unsigned s = 0; s < ring->depth(); ++s) {
      const ArefRing::Slot &slot = ring->slot(s);
      if (slot.borrowed) {
        violation("unreleased-at-exit",
                  "program (" + Twine(pid.x) + ", " + Twine(pid.y) + ", " +
                      Twine(pid.z) + ") ends with slot " + Twine(s) + " of " +
                      describeRing(*ring) +
                      " still borrowed by the get of "
                      "position k=" +
                      Twine(slot.position) +
                      ": a tawa.aref.consumed is missing");
        return;
      }
      if (slot.full) {
        violation("untaken-at-exit",
                  "program (" + Twine(pid.x) + ", " + Twine(pid.y) + ", " +
                      Twine(pid.z) + ") ends with slot " + Twine(s) + " of " +
                      describeRing(*ring) + " full with position k=" +
                      Twine(slot.position) + ", which no tawa.aref.get took");
        return;
      }
    }
}

uint64_t programSeed(uint64_t seed, int64_t index) {
  SplitMix64 mix(seed ^ (0x9e3779b97f4a7c15ull * (uint64_t(index) + 1)));
  return mix.next();
}

} // namespace

ExecutionResult runProgram(tt::FuncOp func, ArrayRef<RuntimeValue> args,
                           ProgramId pid, Grid grid, GlobalMemory &memory,
                           const ExecutionOptions &options) {
  int64_t index = (pid.z * grid.y + pid.y) * grid.x + pid.x;
  ProgramExecutor exec(func, args, pid, grid, memory, options,
                       programSeed(options.seed, index),
                       options.limits.maxSteps, options.limits.maxWork);
  ExecutionResult r = exec.run();
  r.programs = 1;
  return r;
}

ExecutionResult runGrid(tt::FuncOp func, ArrayRef<RuntimeValue> args, Grid grid,
                        GlobalMemory &memory, const ExecutionOptions &options) {
  ExecutionResult total;
  for (int64_t z = 0; z < grid.z; ++z)
    for (int64_t y = 0; y < grid.y; ++y)
      for (int64_t x = 0; x < grid.x; ++x) {
        ProgramId pid{x, y, z};
        int64_t index = (z * grid.y + y) * grid.x + x;
        uint64_t budget = options.limits.maxSteps > total.steps
                              ? options.limits.maxSteps - total.steps
                              : 0;
        uint64_t workBudget = options.limits.maxWork > total.work
                                  ? options.limits.maxWork - total.work
                                  : 0;
        ProgramExecutor exec(func, args, pid, grid, memory, options,
                             programSeed(options.seed, index), budget,
                             workBudget);
        ExecutionResult r = exec.run();
        r.steps += total.steps;
        r.work += total.work;
        r.issueTurns += total.issueTurns;
        r.cooperativeGroups =
            std::max(r.cooperativeGroups, total.cooperativeGroups);
        r.programs = total.programs + 1;
        if (!r.completed())
          return r;
        total = std::move(r);
      }
  return total;
}

} // namespace tawa::interp
