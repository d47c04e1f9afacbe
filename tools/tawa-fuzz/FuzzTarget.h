//===- FuzzTarget.h - one input through parse, checks and passes -*- C++
//-*-===//
//
// The body of tawa's fuzz target, shared by the libFuzzer binary (tawa-fuzz,
// built with clang and sanitizers when TAWA_ENABLE_FUZZER is on) and by
// tawa-fuzz-replay, which runs saved inputs in every build so that the
// crashers once found stay fixed.
//
//===----------------------------------------------------------------------===//

#ifndef TAWA_TOOLS_TAWA_FUZZ_FUZZTARGET_H
#define TAWA_TOOLS_TAWA_FUZZ_FUZZTARGET_H

#include "llvm/ADT/StringRef.h"

#include <string>

namespace tawa::fuzz {

/// How far an input got. Every stage that stops must have said why in a
/// diagnostic; a stop without one is a bug, reported by aborting.
enum class Stage {
  ParseError,    ///< does not parse or verify
  OutsideSubset, ///< the supported-subset check rejects it
  PipelineError, ///< a warp-specialization pass rejects it
  Compiled,      ///< ws-ir made, the interpreter not run or inconclusive
  Interpreted,   ///< ws-ir made and matched the original on the CPU
};

struct Outcome {
  Stage stage = Stage::ParseError;
  /// The first error diagnostic, or what the interpreter concluded.
  std::string summary;
};

const char *stageName(Stage stage);

/// Parses `input` as MLIR (tt, tawa, arith, math, scf), runs the supported-
/// subset check and the warp-specialization passes of Pipeline.h (with a
/// configuration drawn from the input's size) and, if they succeed, runs
/// the original and the compiled kernel on the CPU interpreter with tight
/// limits. Aborts on a stage failing silently, on a warp-specialized kernel
/// that deadlocks, breaks the aref protocol or computes something else than
/// the original where the original itself ran to completion; crashes and
/// sanitizer reports are the fuzzer's to catch.
Outcome runOneInput(llvm::StringRef input);

} // namespace tawa::fuzz

#endif // TAWA_TOOLS_TAWA_FUZZ_FUZZTARGET_H
