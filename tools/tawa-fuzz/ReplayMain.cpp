//===- ReplayMain.cpp - run saved fuzz inputs through the fuzz target -----===//
//
// `tawa-fuzz-replay FILE...` runs each file through the same body as the
// fuzzer and prints how far it got; a former crasher that still crashes
// takes the process down, which fails the test that runs it.
//
//===----------------------------------------------------------------------===//

#include "FuzzTarget.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

int main(int argc, char **argv) {
  if (argc < 2) {
    llvm::errs() << "usage: tawa-fuzz-replay FILE...\n";
    return 2;
  }
  int status = 0;
  for (int i = 1; i < argc; ++i) {
    auto file = llvm::MemoryBuffer::getFile(argv[i], /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
    if (!file) {
      llvm::errs() << "tawa-fuzz-replay: cannot read '" << argv[i]
                   << "': " << file.getError().message() << "\n";
      status = 2;
      continue;
    }
    tawa::fuzz::Outcome outcome = tawa::fuzz::runOneInput((*file)->getBuffer());
    llvm::outs() << llvm::sys::path::filename(argv[i]) << ": "
                 << tawa::fuzz::stageName(outcome.stage);
    if (!outcome.summary.empty())
      llvm::outs() << ": " << outcome.summary;
    llvm::outs() << "\n";
    llvm::outs().flush();
  }
  return status;
}
