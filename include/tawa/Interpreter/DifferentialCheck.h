//===- DifferentialCheck.h - the compiled kernel against the original -*- C++
//-*-===//
//
// Runs a kernel's input TTIR and its warp-specialized IR on identical random
// inputs over the whole grid and compares every buffer afterwards, bit for
// bit: the warp-specialized IR performs the same float32 operations in the
// same order (tt.dot and tawa.dot_async are one and the same product here),
// so any difference is a wrong result, not rounding. The warp-specialized
// run is repeated under several schedules; each must complete without a
// deadlock or protocol violation and match.
//
//===----------------------------------------------------------------------===//

#ifndef TAWA_INTERPRETER_DIFFERENTIALCHECK_H
#define TAWA_INTERPRETER_DIFFERENTIALCHECK_H

#include "tawa/Interpreter/KernelArguments.h"
#include "tawa/Protocol/IssueTurnProtocol.h"
#include "tawa/Transforms/Pipeline.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tawa::interp {

struct DifferentialOptions {
  /// NAME=VALUE argument specs (KernelArguments.h).
  std::vector<std::string> shapes;
  /// The grid; inferred (inferGrid) when absent.
  std::optional<Grid> grid;
  uint64_t dataSeed = 1;
  /// Schedules seed, seed + 1, ..., seed + schedules - 1.
  uint64_t seed = 1;
  unsigned schedules = 1;
  ExecutionLimits limits;
  int64_t maxProgramsPerAxis = 64;
  /// CTAs that run a compiled kernel made persistent (PersistentPrograms:
  /// it takes the program grid as arguments and walks it); 0: half the
  /// programs, rounded up, so that CTAs run several tiles each.
  int64_t ctas = 0;
  /// The issue-turn protocol the cooperative groups follow, or a broken
  /// variant of it (ExecutionOptions::turnVariant).
  protocol::IssueTurnVariant turnVariant = protocol::IssueTurnVariant::Correct;
};

struct Verdict {
  enum class Status {
    Match,
    Mismatch,  ///< a buffer differs
    Violation, ///< a deadlock or protocol violation
    Error,     ///< the compiled kernel failed at run time
    Rejected,  ///< the compiler refused the configuration (diagnostics)
  };
  Status status = Status::Match;
  /// "match", "mismatch", a violation kind (Interpreter.h), "runtime-error",
  /// "unsupported" or "rejected".
  std::string kind = "match";
  std::string message;
  std::vector<std::string> details;
  uint64_t seed = 0;      ///< the schedule that failed
  unsigned schedules = 0; ///< schedules run
  /// How the compiled kernel was launched, when not like the original:
  /// "persistent: 1 CTA for 2 programs".
  std::string launch;
  /// Cooperative consumer groups of the compiled kernel's consumer
  /// partition (0: not split) and the issue turns they took in the last
  /// schedule run.
  int cooperativeGroups = 0;
  uint64_t issueTurns = 0;
};

/// The one kernel (tt.func with a body) of `module`, or null.
tt::FuncOp findKernel(mlir::ModuleOp module, std::string &error);

/// Diagnostics as "file:line:col: error: message" lines.
class DiagnosticCollector {
public:
  explicit DiagnosticCollector(mlir::MLIRContext *context);
  ~DiagnosticCollector();
  std::string take();

private:
  mlir::MLIRContext *context;
  mlir::DiagnosticEngine::HandlerID id;
  std::string text;
};

/// Runs the supported-subset check on `module` itself.
mlir::LogicalResult checkSupportedSubset(mlir::ModuleOp module,
                                         std::string &diagnostics);

/// A copy of `original` after the supported-subset check and the
/// warp-specialization passes (Pipeline.h), or the diagnostics.
mlir::FailureOr<mlir::OwningOpRef<mlir::ModuleOp>>
compileWarpSpecialized(mlir::ModuleOp original,
                       const WarpSpecializationOptions &options,
                       std::string &diagnostics);

class DifferentialCheck {
public:
  /// Makes the inputs, finds the grid and runs the original kernel. Fails
  /// (with `error`) if the kernel fails, or if two of its programs write the
  /// same element: the compiled kernel may run the programs in another order.
  static mlir::FailureOr<std::unique_ptr<DifferentialCheck>>
  create(mlir::ModuleOp original, const DifferentialOptions &options,
         std::string &error);

  /// Runs `compiled` (a module holding the kernel under the same name and
  /// signature, or the signature plus the program-grid arguments of a
  /// persistent kernel) under every schedule and compares it with the
  /// original.
  Verdict check(mlir::ModuleOp compiled);
  /// compileWarpSpecialized, then check.
  Verdict checkConfiguration(const WarpSpecializationOptions &config);

  tt::FuncOp kernel() const { return original; }
  Grid grid() const { return theGrid; }
  /// "given", or what inferGrid found.
  const std::string &gridOrigin() const { return gridHow; }
  const KernelArguments &arguments() const { return args; }
  /// "c_desc (29952 of 29952 elements)" per buffer the original wrote.
  std::vector<std::string> outputs() const;
  int64_t elementsWritten() const { return expected.countWritten(); }
  uint64_t originalSteps() const { return originalRun.steps; }

private:
  DifferentialCheck() = default;
  /// Runs the original kernel into `expected`; fails if it fails or if two
  /// of its programs write the same element.
  mlir::LogicalResult runOriginal(std::string &error);
  /// The first difference between the original's memory and `actual`.
  std::optional<std::string> compare(const GlobalMemory &actual,
                                     int64_t &differences) const;

  DifferentialOptions options;
  tt::FuncOp original;
  KernelArguments args;
  Grid theGrid;
  std::string gridHow;
  GlobalMemory expected;
  ExecutionResult originalRun;
};

} // namespace tawa::interp

#endif // TAWA_INTERPRETER_DIFFERENTIALCHECK_H
