//===- Interpreter.h - the CPU interpreter of tt and tawa IR ----*- C++ -*-===//
//
// Executes a kernel (a tt.func) on the CPU, one program of the grid after
// another: the input TTIR as Triton wrote it, and the warp-specialized IR
// the compiler makes of it. A tawa.warp_specialize runs each partition as a
// task; a seeded scheduler interleaves the tasks, and arefs block and
// release them with the semantics of Fig. 4 of the Tawa paper (Aref.h).
//
// Besides the results the run checks the protocol: a deadlock (every
// unfinished partition blocked) is reported with each partition's position;
// a consumed on a slot that is not borrowed, a read of a tile after its slot
// was released, a release while an asynchronous product still reads the
// slot, and a read of a tawa.dot_async result that no tawa.dot_wait retired
// are violations. tawa.dot_wait {pendings = P} retires all but the newest P
// products of its task, oldest first (wgmma commit groups). Ping-pong
// consumers hand the turn to each other with tawa.pingpong.arrive; a
// tawa.pingpong.wait blocks until its hand-over has been made.
//
// A consumer partition of C cooperative warp groups (as the CUDA emitter
// splits it: 4C warps, no ping-pong) runs as C tasks, one per group, each
// taking and releasing every aref position it reads; with two groups and
// products marked tawa.issue_turn, the groups take turns issuing them
// through the named barriers of tawa/Protocol/IssueTurnProtocol.h (a group
// blocks in bar.sync until the other group's arrival completes the phase).
//
//===----------------------------------------------------------------------===//

#ifndef TAWA_INTERPRETER_INTERPRETER_H
#define TAWA_INTERPRETER_INTERPRETER_H

#include "tawa/Dialect/TT/TTDialect.h"
#include "tawa/Interpreter/Memory.h"
#include "tawa/Interpreter/Value.h"
#include "tawa/Protocol/IssueTurnProtocol.h"

#include "mlir/IR/Location.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace tawa::interp {

struct Grid {
  int64_t x = 1, y = 1, z = 1;
  int64_t count() const { return x * y * z; }
};

struct ProgramId {
  int64_t x = 0, y = 0, z = 0;
};

/// Bounds that turn a runaway input (a huge loop or tensor) into an error.
struct ExecutionLimits {
  /// Operations executed over one run, all programs together.
  uint64_t maxSteps = 500000000;
  /// Elements of one tensor value.
  int64_t maxTensorElements = int64_t(1) << 22;
  /// Element operations over one run, all programs together: each
  /// operation counts the elements of its tensor results, a product
  /// (tt.dot, tawa.dot_async) its M x N x K multiply-adds. Bounds the time
  /// of a run that few steps make long (a loop of large products).
  uint64_t maxWork = UINT64_MAX;
};

struct ExecutionOptions {
  /// Names the interleaving of every program's partitions.
  uint64_t seed = 1;
  ExecutionLimits limits;
  /// Called before each operation with the partition that executes it (-1:
  /// the kernel body), in execution order: the interleaving, for tests and
  /// debugging.
  /// `group` is the cooperative group of a split consumer partition, -1
  /// otherwise.
  std::function<void(int partition, int group, mlir::Operation *op)> onStep;
  /// The issue-turn protocol of cooperative groups, or a deliberately
  /// broken variant of it (the seeded bugs the interpreter must catch).
  protocol::IssueTurnVariant turnVariant = protocol::IssueTurnVariant::Correct;
};

enum class Outcome {
  Completed,
  Deadlock,
  ProtocolViolation,
  RuntimeError, ///< an error of the kernel itself (bad address, /0, limits)
  Unsupported,  ///< an operation the interpreter does not implement
};

struct ExecutionResult {
  Outcome outcome = Outcome::Completed;
  /// "deadlock", "use-after-consumed", "use-after-release",
  /// "unretired-read", "consumed-not-borrowed", "wrong-position",
  /// "negative-position", "pingpong-phase", "in-flight-at-exit",
  /// "unreleased-at-exit", "untaken-at-exit", "barrier-overflow",
  /// "barrier-at-exit", "turn-overlap", "issue-outside-turn",
  /// "runtime-error" or "unsupported".
  std::string kind;
  /// One line: what happened, where (the user's source line).
  std::string message;
  /// More lines: each partition's position for a deadlock.
  std::vector<std::string> details;
  ProgramId program;
  uint64_t steps = 0;
  /// Element operations (ExecutionLimits::maxWork).
  uint64_t work = 0;
  int64_t programs = 0;
  /// The most cooperative groups a consumer partition ran as (0: none was
  /// split), and the issue turns the groups took (bar.sync passed before a
  /// run of products), over all programs.
  int cooperativeGroups = 0;
  uint64_t issueTurns = 0;

  bool completed() const { return outcome == Outcome::Completed; }
};

/// Runs program `pid` of `func` with one value per argument of `func`.
ExecutionResult runProgram(tt::FuncOp func, llvm::ArrayRef<RuntimeValue> args,
                           ProgramId pid, Grid grid, GlobalMemory &memory,
                           const ExecutionOptions &options);

/// Runs every program of `grid` (x fastest), each interleaved by a scheduler
/// seeded from `options.seed` and the program's index; stops at the first
/// program that does not complete.
ExecutionResult runGrid(tt::FuncOp func, llvm::ArrayRef<RuntimeValue> args,
                        Grid grid, GlobalMemory &memory,
                        const ExecutionOptions &options);

/// "kernels.py:38:20": the user's line of `loc` (tawa::getUserLocation).
std::string formatLocation(mlir::Location loc);

} // namespace tawa::interp

#endif // TAWA_INTERPRETER_INTERPRETER_H
