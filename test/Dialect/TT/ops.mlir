// RUN: tawa-opt %s | tawa-opt | FileCheck %s
// Every tt operation in its printed form, round-tripped.

// CHECK-LABEL: tt.func public @ops
tt.func public @ops(%p: !tt.ptr<f16>, %pi: !tt.ptr<i64>, %d: !tt.tensordesc<tensor<64x32xf16>>, %n: i32) {
  // CHECK: tt.get_program_id x : i32
  %pid = tt.get_program_id x : i32
  // CHECK: tt.get_num_programs z : i32
  %np = tt.get_num_programs z : i32
  // CHECK: tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %r = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  // CHECK: tt.splat %{{.*}} : i32 -> tensor<64xi32>
  %s = tt.splat %n : i32 -> tensor<64xi32>
  %cmp = arith.cmpi slt, %r, %s : tensor<64xi32>
  // CHECK: tt.splat %{{.*}} : !tt.ptr<f16> -> tensor<64x!tt.ptr<f16>>
  %ps = tt.splat %p : !tt.ptr<f16> -> tensor<64x!tt.ptr<f16>>
  // CHECK: tt.addptr %{{.*}}, %{{.*}} : tensor<64x!tt.ptr<f16>>, tensor<64xi32>
  %pa = tt.addptr %ps, %r : tensor<64x!tt.ptr<f16>>, tensor<64xi32>
  %zero = arith.constant dense<0.0> : tensor<64xf16>
  // CHECK: tt.load %{{.*}}, %{{.*}}, %{{.*}} : tensor<64x!tt.ptr<f16>>
  %v = tt.load %pa, %cmp, %zero : tensor<64x!tt.ptr<f16>>
  // CHECK: tt.load %{{.*}} cacheModifier = cg : tensor<64x!tt.ptr<f16>>
  %v2 = tt.load %pa cacheModifier = cg : tensor<64x!tt.ptr<f16>>
  // CHECK: tt.store %{{.*}}, %{{.*}}, %{{.*}} : tensor<64x!tt.ptr<f16>>
  tt.store %pa, %v, %cmp : tensor<64x!tt.ptr<f16>>
  // CHECK: tt.load %{{.*}} : !tt.ptr<i64>
  %i = tt.load %pi : !tt.ptr<i64>
  // CHECK: tt.int_to_ptr %{{.*}} : i64 -> !tt.ptr<f16>
  %ip = tt.int_to_ptr %i : i64 -> !tt.ptr<f16>
  // CHECK: tt.expand_dims %{{.*}} {axis = 0 : i32} : tensor<64xf16> -> tensor<1x64xf16>
  %e = tt.expand_dims %v {axis = 0 : i32} : tensor<64xf16> -> tensor<1x64xf16>
  // CHECK: tt.broadcast %{{.*}} : tensor<1x64xf16> -> tensor<32x64xf16>
  %b = tt.broadcast %e : tensor<1x64xf16> -> tensor<32x64xf16>
  // CHECK: tt.trans %{{.*}} {order = array<i32: 1, 0>} : tensor<32x64xf16> -> tensor<64x32xf16>
  %t = tt.trans %b {order = array<i32: 1, 0>} : tensor<32x64xf16> -> tensor<64x32xf16>
  // CHECK: tt.descriptor_load %{{.*}}[%{{.*}}, %{{.*}}] : !tt.tensordesc<tensor<64x32xf16>> -> tensor<64x32xf16>
  %l = tt.descriptor_load %d[%pid, %n] : !tt.tensordesc<tensor<64x32xf16>> -> tensor<64x32xf16>
  %acc = arith.constant dense<0.0> : tensor<64x64xf32>
  // CHECK: tt.dot %{{.*}}, %{{.*}}, %{{.*}}, inputPrecision = tf32 : tensor<64x32xf16> * tensor<32x64xf16> -> tensor<64x64xf32>
  %dot = tt.dot %l, %b, %acc, inputPrecision = tf32 : tensor<64x32xf16> * tensor<32x64xf16> -> tensor<64x64xf32>
  // CHECK: tt.dot %{{.*}}, %{{.*}}, %{{.*}} : tensor<64x32xf16> * tensor<32x64xf16> -> tensor<64x64xf32>
  %dot2 = tt.dot %l, %b, %acc : tensor<64x32xf16> * tensor<32x64xf16> -> tensor<64x64xf32>
  // CHECK: "tt.reduce"(%{{.*}}) <{axis = 1 : i32}> ({
  // CHECK: tt.reduce.return %{{.*}} : f32
  %red = "tt.reduce"(%dot) <{axis = 1 : i32}> ({
  ^bb0(%x: f32, %y: f32):
    %m = arith.maxnumf %x, %y : f32
    tt.reduce.return %m : f32
  }) : (tensor<64x64xf32>) -> tensor<64xf32>
  // CHECK: tt.fp_to_fp %{{.*}}, rounding = rtne : tensor<64x64xf32> -> tensor<64x64xf8E4M3FN>
  %f8 = tt.fp_to_fp %dot, rounding = rtne : tensor<64x64xf32> -> tensor<64x64xf8E4M3FN>
  // CHECK: tt.fp_to_fp %{{.*}} : tensor<64x64xf8E4M3FN> -> tensor<64x64xf32>
  %up = tt.fp_to_fp %f8 : tensor<64x64xf8E4M3FN> -> tensor<64x64xf32>
  // CHECK: tt.descriptor_store %{{.*}}[%{{.*}}, %{{.*}}], %{{.*}} : !tt.tensordesc<tensor<64x32xf16>>, tensor<64x32xf16>
  tt.descriptor_store %d[%pid, %n], %t : !tt.tensordesc<tensor<64x32xf16>>, tensor<64x32xf16>
  %c1 = arith.constant 1 : i64
  // CHECK: tt.make_tensor_descriptor %{{.*}}, [%{{.*}}, %{{.*}}], [%{{.*}}, %{{.*}}] : <f16>, <tensor<64x32xf16>>
  %md = tt.make_tensor_descriptor %ip, [%n, %n], [%c1, %c1] : <f16>, <tensor<64x32xf16>>
  // CHECK: tt.atomic_rmw fadd, acq_rel, gpu, %{{.*}}, %{{.*}}, %{{.*}} : (tensor<64x!tt.ptr<f16>>, tensor<64xf16>, tensor<64xi1>) -> tensor<64xf16>
  %old = tt.atomic_rmw fadd, acq_rel, gpu, %pa, %v, %cmp : (tensor<64x!tt.ptr<f16>>, tensor<64xf16>, tensor<64xi1>) -> tensor<64xf16>
  // CHECK: tt.reshape %{{.*}} allow_reorder : tensor<64x64xf32> -> tensor<4096xf32>
  %rs = tt.reshape %dot allow_reorder : tensor<64x64xf32> -> tensor<4096xf32>
  // CHECK: tt.return
  tt.return
}

// CHECK-LABEL: tt.func private @helper
// CHECK: tt.return %{{.*}} : i32
tt.func private @helper(%x: i32) -> i32 {
  tt.return %x : i32
}

// CHECK-LABEL: tt.func @caller
// CHECK: tt.call @helper(%{{.*}}) : (i32) -> i32
tt.func @caller(%x: i32) {
  %y = tt.call @helper(%x) : (i32) -> i32
  tt.return
}

// Unknown tt operations in generic form are accepted (the subset check reports them).
// CHECK-LABEL: tt.func @unknown
// CHECK: "tt.some_future_op"(%{{.*}}) {flag} : (i32) -> i32
tt.func @unknown(%x: i32) {
  %y = "tt.some_future_op"(%x) {flag} : (i32) -> i32
  tt.return
}
