// A kernel outside the subset tawa compiles: tawac stops after the check with
// exit status 1, reports each construct at the user's line in my_kernel.py
// (not in triton/language) and the count, and writes no output file. The IR
// itself is valid: --emit=verify accepts it.
// RUN: not tawac %s 2>&1 | FileCheck %s --implicit-check-not=error: --implicit-check-not=note: --implicit-check-not=triton/language
// RUN: sh -c 'tawac %s > /dev/null 2>&1; test $? -eq 1'
// RUN: tawac %s --emit=verify > /dev/null
// RUN: rm -f %t.out
// RUN: not tawac %s -o %t.out 2> /dev/null
// RUN: not ls %t.out

// CHECK: my_kernel.py:7:18: error: tawa cannot compile operation 'tt.dot' (defining 'acc') yet: tt.dot needs an f32 accumulator
// CHECK: my_kernel.py:9:12: error: tawa cannot compile operation 'tt.dot' (defining 'small') yet: wgmma cannot cover this tt.dot tile (M must be a multiple of 64, N a multiple of 8 up to 256)
// CHECK: my_kernel.py:11:8: error: tawa cannot compile operation 'tt.call' yet: calls are not supported (inline them)
// CHECK: my_kernel.py:20:0: error: tawa cannot compile operation 'tt.func' yet: functions that return values are not supported (only kernels are compiled)
// CHECK: my_kernel.py:3:0: error: 4 constructs outside the subset tawa compiles (see the errors above)

#loc = loc("my_kernel.py":3:0)
#loc20 = loc("my_kernel.py":20:0)
module {
  tt.func public @kernel(%a_desc: !tt.tensordesc<tensor<128x64xf16>> loc("a_desc"(#loc)), %b_desc: !tt.tensordesc<tensor<64x128xf16>> loc("b_desc"(#loc)), %s_desc: !tt.tensordesc<tensor<32x64xf16>> loc("s_desc"(#loc)), %x: i32 loc("x"(#loc))) attributes {noinline = false} {
    %c0_i32 = arith.constant 0 : i32 loc(#loc1)
    %acc16 = arith.constant dense<0.000000e+00> : tensor<128x128xf16> loc(#loc10)
    %acc32 = arith.constant dense<0.000000e+00> : tensor<32x128xf32> loc(#loc10)
    %a = tt.descriptor_load %a_desc[%c0_i32, %c0_i32] : !tt.tensordesc<tensor<128x64xf16>> -> tensor<128x64xf16> loc(#loc11)
    %b = tt.descriptor_load %b_desc[%c0_i32, %c0_i32] : !tt.tensordesc<tensor<64x128xf16>> -> tensor<64x128xf16> loc(#loc12)
    %acc = tt.dot %a, %b, %acc16, inputPrecision = tf32 : tensor<128x64xf16> * tensor<64x128xf16> -> tensor<128x128xf16> loc(#loc13)
    %small_a = tt.descriptor_load %s_desc[%c0_i32, %c0_i32] : !tt.tensordesc<tensor<32x64xf16>> -> tensor<32x64xf16> loc(#loc17)
    %small = tt.dot %small_a, %b, %acc32 : tensor<32x64xf16> * tensor<64x128xf16> -> tensor<32x128xf32> loc(#loc14)
    %y = tt.call @helper(%x) : (i32) -> i32 loc(#loc8)
    tt.return loc(#loc9)
  } loc(#loc)
  tt.func private @helper(%v: i32 loc("v"(#loc20))) -> i32 attributes {noinline = true} {
    tt.return %v : i32 loc(#loc21)
  } loc(#loc20)
} loc(#loc)
#loc1 = loc(unknown)
#loc2 = loc("my_kernel.py":4:10)
#loc3 = loc("triton/language/standard.py":173:27)
#loc4 = loc("my_kernel.py":5:20)
#loc5 = loc("my_kernel.py":6:20)
#loc6 = loc("my_kernel.py":7:18)
#loc7 = loc("my_kernel.py":9:12)
#loc8 = loc("my_kernel.py":11:8)
#loc9 = loc("my_kernel.py":12:4)
#loc10 = loc(callsite(#loc3 at #loc2))
#loc11 = loc("a"(#loc4))
#loc12 = loc("b"(#loc5))
#loc13 = loc("acc"(#loc6))
#loc14 = loc("small"(#loc7))
#loc18 = loc("my_kernel.py":8:22)
#loc17 = loc("small_a"(#loc18))
#loc21 = loc("my_kernel.py":21:11)
