// A syntax error is reported at its line and column in the input, at every
// stage (even --emit=parse), with exit status 1 and no IR dump.
// RUN: not tawac %s 2>&1 | FileCheck %s --implicit-check-not=error:
// RUN: not tawac %s --emit=parse 2>&1 | FileCheck %s --implicit-check-not=error:
// RUN: sh -c 'tawac %s 2> /dev/null; test $? -eq 1'

#loc = loc("kernels.py":3:0)
module {
  tt.func public @kernel(%x: i32 loc("x"(#loc))) {
    %c1 = arith.constant 1 : i32 loc(#loc)
    // CHECK: syntax-error.mlir:[[@LINE+1]]:28: error: expected ':'
    %y = arith.addi %x, %c1, : i32 loc(#loc)
    tt.return loc(#loc)
  } loc(#loc)
} loc(#loc)
