// RUN: tawa-opt %s -split-input-file -tawa-scaled-row-max | FileCheck %s
// RUN: tawa-opt %examples_ttir/attn_fwd_fp16_d64.ttir -tawa-scaled-row-max | FileCheck %s --check-prefix=D64
// The shared sample scales the reduced row itself (max(qk) * qk_scale):
// nothing to do.
// RUN: tawa-opt %shared_ttir/attn_fp16.ttir -tawa-scaled-row-max | FileCheck %s --check-prefix=NONE

// Attention's `s = dot * scale; m = max(s, 1); p = exp2(s - m)` in a loop:
// the scale's test sits where it is defined (before the loop); the reduction
// reads the product's unscaled operand under it; the fallback has its own
// product, marked rounded; the original product keeps its one other use and
// moves next to it, after the if.
// CHECK-LABEL: tt.func @row_max_in_loop
// CHECK-SAME: (%[[X:.*]]: tensor<128x128xf32>, %[[C:.*]]: f32
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[INF:.*]] = arith.constant 0x7F800000 : f32
// CHECK: %[[POS:.*]] = arith.cmpf ogt, %[[C]], %[[ZERO]] : f32
// CHECK: %[[FIN:.*]] = arith.cmpf olt, %[[C]], %[[INF]] : f32
// CHECK: %[[OK:.*]] = arith.andi %[[POS]], %[[FIN]] : i1
// CHECK: scf.for
// CHECK: %[[S:.*]] = tt.splat %[[C]] : f32 -> tensor<128x128xf32>
// CHECK-NEXT: %[[M:.*]] = scf.if %[[OK]] -> (tensor<128xf32>) {
// CHECK-NEXT: %[[R:.*]] = "tt.reduce"(%[[X]]) <{axis = 1 : i32}>
// CHECK: arith.maxnumf
// CHECK: %[[CR:.*]] = tt.splat %[[C]] : f32 -> tensor<128xf32>
// CHECK-NEXT: %[[RS:.*]] = arith.mulf %[[R]], %[[CR]] : tensor<128xf32>
// CHECK-NEXT: scf.yield %[[RS]]
// CHECK-NEXT: } else {
// CHECK-NEXT: %[[P2:.*]] = arith.mulf %[[X]], %[[S]] {tawa.rounded_product} : tensor<128x128xf32>
// CHECK-NEXT: %[[R2:.*]] = "tt.reduce"(%[[P2]]) <{axis = 1 : i32}>
// CHECK: scf.yield %[[R2]]
// CHECK-NEXT: }
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[X]], %[[S]] : tensor<128x128xf32>
// CHECK-NEXT: %[[E:.*]] = tt.expand_dims %[[M]]
// CHECK: %[[B:.*]] = tt.broadcast %[[E]]
// CHECK: arith.subf %[[P]], %[[B]]
tt.func @row_max_in_loop(%x: tensor<128x128xf32>, %c: f32, %n: i32) -> tensor<128x128xf32> {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %zero = arith.constant dense<0.0> : tensor<128x128xf32>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (tensor<128x128xf32>) : i32 {
    %s = tt.splat %c : f32 -> tensor<128x128xf32>
    %p = arith.mulf %x, %s : tensor<128x128xf32>
    %m = "tt.reduce"(%p) <{axis = 1 : i32}> ({
    ^bb0(%a: f32, %b: f32):
      %mx = arith.maxnumf %a, %b : f32
      tt.reduce.return %mx : f32
    }) : (tensor<128x128xf32>) -> tensor<128xf32>
    %e = tt.expand_dims %m {axis = 1 : i32} : tensor<128xf32> -> tensor<128x1xf32>
    %bc = tt.broadcast %e : tensor<128x1xf32> -> tensor<128x128xf32>
    %d = arith.subf %p, %bc : tensor<128x128xf32>
    %y = arith.addf %acc, %d : tensor<128x128xf32>
    scf.yield %y : tensor<128x128xf32>
  }
  tt.return %r : tensor<128x128xf32>
}

// -----

// The splat on the left, a NaN-propagating min, a scale defined in the body:
// the same rewrite; the product, read only by the reduction, is gone.
// CHECK-LABEL: tt.func @row_min_only_use
// CHECK: %[[C:.*]] = arith.mulf %{{.*}}, %{{.*}} : f32
// CHECK-NEXT: arith.constant 0.000000e+00 : f32
// CHECK: %[[OK:.*]] = arith.andi
// CHECK: %[[S:.*]] = tt.splat %[[C]]
// CHECK-NEXT: %[[M:.*]] = scf.if %[[OK]]
// CHECK: arith.minimumf
// CHECK: } else {
// CHECK-NEXT: arith.mulf %[[S]], %{{.*}} {tawa.rounded_product}
// CHECK: arith.minimumf
// CHECK: tt.return %[[M]]
tt.func @row_min_only_use(%x: tensor<64x32xf32>, %a: f32, %b: f32) -> tensor<64xf32> {
  %c = arith.mulf %a, %b : f32
  %s = tt.splat %c : f32 -> tensor<64x32xf32>
  %p = arith.mulf %s, %x : tensor<64x32xf32>
  %m = "tt.reduce"(%p) <{axis = 1 : i32}> ({
  ^bb0(%u: f32, %v: f32):
    %mn = arith.minimumf %u, %v : f32
    tt.reduce.return %mn : f32
  }) : (tensor<64x32xf32>) -> tensor<64xf32>
  tt.return %m : tensor<64xf32>
}

// -----

// A whole 1-D tensor reduced to a scalar: the scalar result is scaled.
// CHECK-LABEL: tt.func @full_max
// CHECK: scf.if %{{.*}} -> (f32)
// CHECK: %[[R:.*]] = "tt.reduce"(%arg0)
// CHECK: %[[RS:.*]] = arith.mulf %[[R]], %arg1 : f32
// CHECK-NEXT: scf.yield %[[RS]] : f32
tt.func @full_max(%x: tensor<128xf32>, %c: f32) -> f32 {
  %s = tt.splat %c : f32 -> tensor<128xf32>
  %p = arith.mulf %x, %s : tensor<128xf32>
  %m = "tt.reduce"(%p) <{axis = 0 : i32}> ({
  ^bb0(%u: f32, %v: f32):
    %mx = arith.maximumf %u, %v : f32
    tt.reduce.return %mx : f32
  }) : (tensor<128xf32>) -> f32
  tt.return %m : f32
}

// -----

// Left alone: a sum (scaling does not commute with rounding in a sum), a
// product by a tensor that is not a splat, a max of something else.
// CHECK-LABEL: tt.func @untouched
// CHECK-NOT: scf.if
// CHECK-NOT: tawa.rounded_product
// CHECK: tt.return
tt.func @untouched(%x: tensor<64x32xf32>, %y: tensor<64x32xf32>, %c: f32) -> (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) {
  %s = tt.splat %c : f32 -> tensor<64x32xf32>
  %p = arith.mulf %x, %s : tensor<64x32xf32>
  %sum = "tt.reduce"(%p) <{axis = 1 : i32}> ({
  ^bb0(%u: f32, %v: f32):
    %a = arith.addf %u, %v : f32
    tt.reduce.return %a : f32
  }) : (tensor<64x32xf32>) -> tensor<64xf32>
  %q = arith.mulf %x, %y : tensor<64x32xf32>
  %m1 = "tt.reduce"(%q) <{axis = 1 : i32}> ({
  ^bb0(%u: f32, %v: f32):
    %a = arith.maxnumf %u, %v : f32
    tt.reduce.return %a : f32
  }) : (tensor<64x32xf32>) -> tensor<64xf32>
  %d = arith.subf %x, %s : tensor<64x32xf32>
  %m2 = "tt.reduce"(%d) <{axis = 1 : i32}> ({
  ^bb0(%u: f32, %v: f32):
    %a = arith.maxnumf %u, %v : f32
    tt.reduce.return %a : f32
  }) : (tensor<64x32xf32>) -> tensor<64xf32>
  tt.return %sum, %m1, %m2 : tensor<64xf32>, tensor<64xf32>, tensor<64xf32>
}

// The d64 example (`s = tl.dot(q, k.T) * qk_scale`): one rewrite, in the
// key loop; the exponent reads the original product.
// D64: arith.cmpf ogt
// D64: scf.for
// D64: %[[QK:.*]] = tt.dot
// D64: scf.if
// D64-NEXT: "tt.reduce"(%[[QK]])
// D64: tawa.rounded_product
// D64: %[[S:.*]] = arith.mulf %[[QK]], %{{.*}} : tensor<128x128xf32>
// D64: arith.subf %[[S]],
// D64-NOT: tawa.rounded_product

// NONE-NOT: tawa.rounded_product
// NONE-NOT: scf.if
