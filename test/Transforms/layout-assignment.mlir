// RUN: tawa-opt %s -split-input-file -verify-diagnostics -tawa-layout-assignment | FileCheck %s
// RUN: tawac %shared_ttir/gemm_bias_relu.ttir --emit=ws-ir -o %t.bias.mlir
// RUN: tawa-opt %t.bias.mlir -tawa-layout-assignment | FileCheck %s --check-prefix=BIAS
// After aref lowering (the order tawac runs), wgmma operands are slot views
// of shared memory, A included.
// RUN: tawa-opt %t.bias.mlir -tawa-aref-lowering -tawa-layout-assignment | FileCheck %s --check-prefix=LOWERED
// LOWERED: tawa.smem.slot %{{.*}} {tawa.layouts = ["smem"]} : memref<{{.*}}x128x64xf16, 3>
// LOWERED: tawa.smem.slot %{{.*}} {tawa.layouts = ["smem"]} : memref<{{.*}}x64x128xf16, 3>
// D = alpha A B^T + beta C: C's slot stays in shared memory; a tawa.smem.load
// before the extf reads it into the accumulator layout the sum needs, and
// the slot is released after it (three slots of A and B: the whole tile of
// C in one). With four (the default), C comes in column boxes: the
// tawa.smem.read_boxes that reads them takes the accumulator layout of its
// readers.
// RUN: tawac %examples_ttir/gemm_axpby_bf16.ttir --emit=ws-ir --aref-depth=3 -o %t.axpby.mlir
// RUN: tawa-opt %t.axpby.mlir -tawa-aref-lowering -tawa-layout-assignment | FileCheck %s --check-prefix=AXPBY
// RUN: tawac %examples_ttir/gemm_axpby_bf16.ttir --emit=ws-ir -o %t.axpby4.mlir
// RUN: tawa-opt %t.axpby4.mlir -tawa-aref-lowering -tawa-layout-assignment | FileCheck %s --check-prefix=AXPBY4
// AXPBY4: %[[C:.*]] = tawa.smem.read_boxes {{.*}} boxes 4 {tawa.layouts = ["acc"]} : memref<1x128x64xbf16, 3>, !tawa.mbarriers<1> -> tensor<128x256xbf16>
// AXPBY4-NEXT: %[[F:.*]] = arith.extf %[[C]] {tawa.layouts = ["acc"]}
// AXPBY4: arith.mulf %{{.*}}, %[[F]] {tawa.layouts = ["acc"]}
// AXPBY4-NOT: tawa.smem.load
// AXPBY: %[[C:.*]] = tawa.smem.slot %{{.*}} {tawa.layouts = ["smem"]} : memref<1x128x256xbf16, 3> -> tensor<128x256xbf16>
// AXPBY-NEXT: %[[R:.*]] = tawa.smem.load %[[C]] {tawa.layouts = ["acc"]} : tensor<128x256xbf16> -> tensor<128x256xbf16>
// AXPBY-NEXT: %[[F:.*]] = arith.extf %[[R]] {tawa.layouts = ["acc"]}
// AXPBY: tawa.mbarrier.arrive
// AXPBY: arith.mulf %{{.*}}, %[[F]] {tawa.layouts = ["acc"]}
// AXPBY: arith.addf {{.*}}tawa.layouts = ["acc"]
// RUN: tawac %examples_ttir/attn_fwd_fp16_causal.ttir --emit=ws-ir -o %t.attn.mlir
// RUN: tawa-opt %t.attn.mlir -tawa-layout-assignment | FileCheck %s --check-prefix=ATTN

// The accumulator chain, the tiles in shared memory, and a row statistic.
// CHECK-LABEL: tt.func @chain
// CHECK: tawa.aref.get {{.*}}tawa.layouts = ["smem"]
// CHECK: tt.trans {{.*}}tawa.layouts = ["smem"]
// CHECK: tawa.dot_async {{.*}}tawa.layouts = ["acc"]
// CHECK: tawa.dot_wait {{.*}}tawa.layouts = ["acc"]
// CHECK: } {tawa.iter_arg_layouts = ["acc", ""], tawa.layouts = ["acc", ""]}
// CHECK: "tt.reduce"
// CHECK: }) {tawa.layouts = ["row"]} : (tensor<64x64xf32>) -> tensor<64xf32>
// CHECK: tt.expand_dims {{.*}}tawa.layouts = ["row"]
// CHECK: tt.broadcast {{.*}}tawa.layouts = ["acc"]
// CHECK: arith.subf {{.*}}tawa.layouts = ["acc"]
// CHECK: arith.truncf {{.*}}tawa.layouts = ["acc"]
tt.func @chain(%c: !tt.tensordesc<tensor<64x64xf16>>, %n: i32) {
  %ring = tawa.aref.create : !tawa.aref<[tensor<64x64xf16>], 2>
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero, %k = %c0) -> (tensor<64x64xf32>, i32) : i32 {
    %t = tawa.aref.get %ring[%k] : !tawa.aref<[tensor<64x64xf16>], 2> -> tensor<64x64xf16>
    %tt = tt.trans %t {order = array<i32: 1, 0>} : tensor<64x64xf16> -> tensor<64x64xf16>
    %d = tawa.dot_async %t, %tt, %acc : tensor<64x64xf16> * tensor<64x64xf16> -> tensor<64x64xf32>
    %w = tawa.dot_wait %d {pendings = 0 : i32} : tensor<64x64xf32>
    %next = arith.addi %k, %c1 : i32
    scf.yield %w, %next : tensor<64x64xf32>, i32
  }
  %m = "tt.reduce"(%r#0) <{axis = 1 : i32}> ({
  ^bb0(%x: f32, %y: f32):
    %mx = arith.maxnumf %x, %y : f32
    tt.reduce.return %mx : f32
  }) : (tensor<64x64xf32>) -> tensor<64xf32>
  %me = tt.expand_dims %m {axis = 1 : i32} : tensor<64xf32> -> tensor<64x1xf32>
  %mb = tt.broadcast %me : tensor<64x1xf32> -> tensor<64x64xf32>
  %s = arith.subf %r#0, %mb : tensor<64x64xf32>
  %h = arith.truncf %s : tensor<64x64xf32> to tensor<64x64xf16>
  tt.descriptor_store %c[%c0, %c0], %h : !tt.tensordesc<tensor<64x64xf16>>, tensor<64x64xf16>
  tt.return
}

// -----

// A row statistic cannot also index columns.
tt.func @conflict(%acc: tensor<64x64xf32>, %c: !tt.tensordesc<tensor<64x64xf32>>) {
  %c0 = arith.constant 0 : i32
  %z = arith.constant dense<0.0> : tensor<64x64xf32>
  %a = tt.dot %acc, %acc, %z : tensor<64x64xf32> * tensor<64x64xf32> -> tensor<64x64xf32>
  %m = "tt.reduce"(%a) <{axis = 1 : i32}> ({
  ^bb0(%x: f32, %y: f32):
    %mx = arith.maxnumf %x, %y : f32
    tt.reduce.return %mx : f32
  }) : (tensor<64x64xf32>) -> tensor<64xf32>
  // expected-error @below {{this value would need both the 'row' and the 'col' layout; tawa does not convert between layouts yet (in 'tt.expand_dims')}}
  %me = tt.expand_dims %m {axis = 0 : i32} : tensor<64xf32> -> tensor<1x64xf32>
  %mb = tt.broadcast %me : tensor<1x64xf32> -> tensor<64x64xf32>
  %s = arith.subf %a, %mb : tensor<64x64xf32>
  tt.descriptor_store %c[%c0, %c0], %s : !tt.tensordesc<tensor<64x64xf32>>, tensor<64x64xf32>
  tt.return
}

// The bias of gemm_bias_relu is indexed like the accumulator's columns, from
// its pointer arithmetic to its load; the ReLU epilogue is in the accumulator.
// BIAS: tt.make_range {{.*}}tawa.layouts = ["col"]
// BIAS: tt.addptr {{.*}}tawa.layouts = ["col"]
// BIAS: tt.load {{.*}}tawa.layouts = ["col"]
// BIAS: tt.expand_dims {{.*}}{axis = 0 : i32, tawa.layouts = ["col"]}
// BIAS: tt.broadcast {{.*}}tawa.layouts = ["acc"]
// BIAS: arith.maxnumf {{.*}}tawa.layouts = ["acc"]

// Causal attention: the index vector offs_m is a row vector, offs_n a column
// vector (each use of the shared tt.make_range gets its own copy); the
// probabilities become the register A operand of PV.
// ATTN-DAG: tt.make_range {{.*}}tawa.layouts = ["row"]
// ATTN-DAG: tt.make_range {{.*}}tawa.layouts = ["col"]
// ATTN: tt.expand_dims {{.*}}{axis = 1 : i32, tawa.layouts = ["row"]} : tensor<128xi32>
// ATTN: tt.expand_dims {{.*}}{axis = 0 : i32, tawa.layouts = ["col"]} : tensor<128xi32>
// ATTN: arith.select {{.*}}tawa.layouts = ["acc"]
// ATTN: arith.truncf {{.*}}tawa.layouts = ["a_reg"]
// ATTN: tawa.dot_async {{.*}}tawa.layouts = ["acc"]
