// A verifier error on an op that Triton inlined from its own library (here the
// tt.reduce of tl.max, located at callsite(triton/language/standard.py at
// kernel.py)) is reported at the user's line, not inside triton/language.
// RUN: not tawac %s 2>&1 | FileCheck %s --implicit-check-not=error: --implicit-check-not=triton/language
// RUN: not tawac %s --emit=verify 2>&1 | FileCheck %s --implicit-check-not=error: --implicit-check-not=triton/language
// tawa-opt keeps MLIR's own rendering: the library frame, called from the user's line.
// RUN: not tawa-opt %s 2>&1 | FileCheck %s --check-prefix=OPT

// CHECK: kernel.py:9:23: error: 'tt.reduce' op result type 'tensor<64xf32>' should be 'tensor<128xf32>'
// OPT: triton/language/standard.py:191:40: error: 'tt.reduce' op result type 'tensor<64xf32>' should be 'tensor<128xf32>'
// OPT: kernel.py:9:23: note: called from

#loc = loc("kernel.py":3:0)
#loc1 = loc(unknown)
#loc2 = loc("kernel.py":9:23)
#loc3 = loc("m"(#loc2))
module {
  tt.func public @kernel(%x: tensor<128x64xf32> loc("x"(#loc))) {
    %m = "tt.reduce"(%x) <{axis = 1 : i32}> ({
    ^bb0(%a: f32 loc(callsite(#loc1 at #loc3)), %b: f32 loc(callsite(#loc1 at #loc3))):
      %s = arith.maxnumf %a, %b : f32 loc(#loc5)
      tt.reduce.return %s : f32 loc(#loc5)
    }) : (tensor<128x64xf32>) -> tensor<64xf32> loc(#loc5)
    tt.return loc(#loc1)
  } loc(#loc)
} loc(#loc)
#loc4 = loc("triton/language/standard.py":191:40)
#loc5 = loc(callsite(#loc4 at #loc3))
