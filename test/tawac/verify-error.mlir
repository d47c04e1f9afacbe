// Malformed TTIR parses (--emit=parse writes it, unverified, in generic form)
// but fails verification at the user's line in kernel.py, with exit status 1.
// RUN: tawac %s --emit=parse | FileCheck %s --check-prefix=PARSE
// RUN: not tawac %s --emit=verify 2>&1 | FileCheck %s --implicit-check-not=error:
// RUN: not tawac %s 2>&1 | FileCheck %s --implicit-check-not=error:
// RUN: sh -c 'tawac %s --emit=verify 2> /dev/null; test $? -eq 1'

// PARSE: "tt.dot"(%{{.*}}, %{{.*}}, %{{.*}}) {{.*}}: (tensor<128x64xf16>, tensor<32x128xf16>, tensor<128x128xf32>) -> tensor<128x128xf32>
// CHECK: kernel.py:9:23: error: 'tt.dot' op reduction dimensions differ: a is [128, 64] and b is [32, 128]

#loc = loc("kernel.py":3:0)
module {
  tt.func public @kernel(%a_desc: !tt.tensordesc<tensor<128x64xf16>> loc("a_desc"(#loc)), %b_desc: !tt.tensordesc<tensor<32x128xf16>> loc("b_desc"(#loc))) attributes {noinline = false} {
    %c0_i32 = arith.constant 0 : i32 loc(#loc1)
    %acc = arith.constant dense<0.000000e+00> : tensor<128x128xf32> loc(#loc1)
    %a = tt.descriptor_load %a_desc[%c0_i32, %c0_i32] : !tt.tensordesc<tensor<128x64xf16>> -> tensor<128x64xf16> loc(#loc1)
    %b = tt.descriptor_load %b_desc[%c0_i32, %c0_i32] : !tt.tensordesc<tensor<32x128xf16>> -> tensor<32x128xf16> loc(#loc1)
    %d = tt.dot %a, %b, %acc : tensor<128x64xf16> * tensor<32x128xf16> -> tensor<128x128xf32> loc(#loc3)
    tt.return loc(#loc1)
  } loc(#loc)
} loc(#loc)
#loc1 = loc(unknown)
#loc2 = loc("kernel.py":9:23)
#loc3 = loc("acc"(#loc2))
