//===- KernelArguments.h - inputs for a kernel run on the CPU ---*- C++ -*-===//
//
// A kernel's arguments, made from its signature and `NAME=VALUE` specs
// (tawa-check interp --shape):
//
//   integer scalar   M=144            an integer expression: integers and
//                                     names of integer arguments joined by
//                                     + - * (products bind first), -x
//   float scalar     sm_scale=0.125
//   tensor desc.     a_desc=M,K       the global shape, one expression per
//                                     dimension; a row-major buffer of random
//                                     elements. Triton expands a host
//                                     descriptor into the descriptor, its
//                                     shape (i32 each) and its strides (i64
//                                     each): those arguments follow it.
//   pointer          bias=N           a buffer of N random elements
//                    sizes=[144,208,304]       exactly these elements
//                    a_ptrs=ptrs:f16[M*K,64]   a table of pointers (i64) to
//                                     new buffers of random f16 elements
//
// Defaults: integers named M, N, K, L, seq_len and G are 144, 208, 304, 176,
// 176 and 2 (ragged against 64-, 128- and 256-wide tiles), other integers 64,
// floats 0.125, descriptors 1.5 blocks rounded up to 16 in every dimension,
// pointers 1024 elements. Random elements are uniform in [-1, 1) rounded to
// the element type (integers in [0, 16)), drawn from one data seed.
//
//===----------------------------------------------------------------------===//

#ifndef TAWA_INTERPRETER_KERNELARGUMENTS_H
#define TAWA_INTERPRETER_KERNELARGUMENTS_H

#include "tawa/Interpreter/Interpreter.h"

#include <string>
#include <vector>

namespace tawa::interp {

struct KernelArguments {
  GlobalMemory memory;
  std::vector<RuntimeValue> values; ///< one per argument of the kernel
  /// What was made, in argument order: "M=144", "a_desc 144x304 f16", ...
  std::vector<std::string> summary;
  /// Remarks about the choices (a value against tt.divisibility, ...).
  std::vector<std::string> warnings;
};

/// The name Triton gave argument `index` of `func` (its NameLoc), or
/// "arg<index>".
std::string argumentName(tt::FuncOp func, unsigned index);

/// Builds the arguments of `func` from `specs` ("NAME=VALUE" each). Fails
/// with `error` set on a spec that names no argument, cannot be parsed or
/// does not fit the argument's type.
mlir::FailureOr<KernelArguments>
makeKernelArguments(tt::FuncOp func, llvm::ArrayRef<std::string> specs,
                    uint64_t dataSeed, std::string &error);

/// The grid along which the kernel's outputs are covered: along each axis
/// that tt.get_program_id reads, the number of programs before the first one
/// (with the other axes at 0) that stores nothing (its descriptor stores
/// clip away, its masks drop everything), at most `maxPerAxis`. The probes
/// run on copies of `args.memory`. `how` says what was found.
mlir::FailureOr<Grid> inferGrid(tt::FuncOp func, const KernelArguments &args,
                                const ExecutionLimits &limits,
                                int64_t maxPerAxis, std::string &how,
                                std::string &error);

} // namespace tawa::interp

#endif // TAWA_INTERPRETER_KERNELARGUMENTS_H
