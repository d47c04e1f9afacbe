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
#include "tawa/Transforms/SourceLocation.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

#include <deque>
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
  Task *parent = nullptr;
  std::vector<Frame> frames;
  llvm::DenseMap<Value, RuntimeValue> env;
  bool finished = false;
  std::deque<InFlightProduct> inFlight;
  uint64_t nextGroup = 0;
  std::vector<unsigned> children; ///< partitions spawned, while waiting
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
  return result;
}

bool ProgramExecutor::canProceed(Task &t) {
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
           ring->canGet(k);
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
  if (t.frames.empty())
    return finish(t);
  Frame &f = t.frames.back();
  if (f.ip == f.block->end()) {
    // The end of a partition region (which has no terminator).
    if (f.kind != FrameKind::Body)
      return runtimeError(Outcome::RuntimeError,
                          "a region of " + describeOp(f.owner) +
                              " ends without a terminator");
    return finish(t);
  }
  if (++result.steps > stepBudget)
    return runtimeError(Outcome::RuntimeError,
                        "more than " + Twine(options.limits.maxSteps) +
                            " operations executed: over the interpreter's "
                            "step limit (an endless loop?)");
  Operation *op = &*f.ip;
  result.work += workOf(op);
  if (result.work > workBudget)
    return runtimeError(Outcome::RuntimeError,
                        "more than " + Twine(options.limits.maxWork) +
                            " element operations executed: over the "
                            "interpreter's work limit");
  if (options.onStep)
    options.onStep(t.partition, op);
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
  if (auto create = dyn_cast<ArefCreateOp>(op)) {
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

Step ProgramExecutor::warpSpecialize(Task &t, WarpSpecializeOp op) {
  if (t.children.empty()) {
    ArrayRef<int32_t> warps = op.getWarps();
    for (auto [i, region] : llvm::enumerate(op.getPartitions())) {
      Block *body = region.empty() ? nullptr : &region.front();
      Task &child = newTask(&t, static_cast<int>(i),
                            i < warps.size() ? warps[i] : 0, body);
      t.children.push_back(child.id);
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
  if (!ring->canGet(k))
    return Step::Blocked;
  std::vector<RuntimeValue> values;
  std::string wrong = ring->get(k, values);
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
  if (!slot.borrowed)
    return violation("consumed-not-borrowed",
                     describeOp(op) + " in " + taskName(t) + " on " +
                         describeRing(ring) + ": " + ring.consumed(k, op));
  if (slot.position != k)
    return violation("wrong-position", describeOp(op) + " in " + taskName(t) +
                                           " on " + describeRing(ring) + ": " +
                                           ring.consumed(k, op));
  // The hardware reads wgmma operands from shared memory until the product
  // retires: releasing the slot earlier lets the producer overwrite them.
  BorrowTag current{&ring, slotIndex, slot.generation};
  for (auto &task : tasks)
    for (const InFlightProduct &p : task->inFlight)
      for (const BorrowTag &b : p.reads)
        if (b.ring == current.ring && b.slot == current.slot &&
            b.generation == current.generation)
          return violation("use-after-release",
                           describeOp(op) + " in " + taskName(t) +
                               " releases position k=" + Twine(k) + " (slot " +
                               Twine(slotIndex) + ") of " + describeRing(ring) +
                               " while " + describeOp(p.op) +
                               ", which reads it, is still in flight (no "
                               "tawa.dot_wait has retired it)");
  std::string wrong = ring.consumed(k, op);
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
  if (failed(evaluator.dot(op, *a.data, *b.data, *c.data, op.getType(), d)))
    return runtimeError(evaluator.errorOutcome, evaluator.errorMessage);
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
  if (failed(evaluator.evaluate(op, operands, results)))
    return runtimeError(evaluator.errorOutcome, evaluator.errorMessage);
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
        r.programs = total.programs + 1;
        if (!r.completed())
          return r;
        total = std::move(r);
      }
  return total;
}

} // namespace tawa::interp
