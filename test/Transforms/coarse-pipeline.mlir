// RUN: tawa-opt %s -split-input-file -tawa-coarse-pipeline | FileCheck %s
// RUN: tawa-opt %s -split-input-file -tawa-coarse-pipeline="issue-turns=false" | FileCheck %s --check-prefix=NOTURN
// RUN: tawa-opt %s -split-input-file -tawa-coarse-pipeline -tawa-pipeline-expand | FileCheck %s --check-prefix=EXP
// RUN: tawa-opt %s -split-input-file -tawa-coarse-pipeline -tawa-pipeline-expand -tawa-layout-assignment | FileCheck %s --check-prefix=LAYOUT

// Attention's loop: T (S = Q K^T, restarted from zero), C (softmax: row
// max, exp2, row sum, rescale factor) and U (O = O * alpha + P V) become
// stages 0 and 1, ordered issue T, issue U, wait T, C, wait U, convert P;
// both products are asynchronous and, with two cooperative consumer groups,
// take turns.

// CHECK-LABEL: tt.func @attention
// CHECK: scf.for
// CHECK:   tawa.aref.get %{{.*}} {tawa.order = 0 : i32, tawa.stage = 0 : i32}
// CHECK:   %[[T:.*]] = tawa.dot_async {{.*}}tawa.issue_turn, tawa.order = 0 : i32, tawa.stage = 0 : i32
// CHECK:   %[[S:.*]] = tawa.dot_wait %[[T]] {pendings = 1 : i32, tawa.order = 2 : i32, tawa.stage = 0 : i32}
// CHECK:   tawa.aref.consumed {{.*}}tawa.order = 2 : i32, tawa.stage = 0 : i32
// CHECK:   "tt.reduce"(%[[S]])
// CHECK:   math.exp2 {{.*}}tawa.order = 2 : i32, tawa.stage = 0 : i32
// The row vector alpha is broadcast in stage 1, where it rescales O.
// CHECK:   tt.broadcast {{.*}}tawa.order = 1 : i32, tawa.stage = 1 : i32
// CHECK:   arith.mulf %[[O:arg[0-9]+]], {{.*}}tawa.order = 1 : i32, tawa.stage = 1 : i32
// CHECK:   tawa.aref.get {{.*}}tawa.order = 1 : i32, tawa.stage = 1 : i32
// CHECK:   arith.truncf {{.*}}tawa.order = 4 : i32, tawa.stage = 0 : i32
// CHECK:   %[[U:.*]] = tawa.dot_async {{.*}}tawa.issue_turn, tawa.order = 1 : i32, tawa.stage = 1 : i32
// CHECK:   tawa.dot_wait %[[U]] {pendings = 0 : i32, tawa.order = 3 : i32, tawa.stage = 1 : i32}
// CHECK:   tawa.aref.consumed {{.*}}tawa.order = 3 : i32, tawa.stage = 1 : i32
// CHECK: } {tawa.num_stages = 2 : i32, tawa.pipeline_peel}
// NOTURN-LABEL: tt.func @attention
// NOTURN-NOT: tawa.issue_turn
// NOTURN: tawa.pipeline_peel

// Expanded: under a trip-count guard, T_0 and C_0 (its wait retires all),
// the loop from the second block (T_{j+1}, U_j, wait T with U in flight, C,
// wait U, P converted after U's wait), then U of the last block.
// EXP-LABEL: tt.func @attention
// EXP: %[[ANY:.*]] = arith.cmpi sgt
// EXP: scf.if %[[ANY]]
// EXP:   tawa.dot_async
// EXP:   tawa.dot_wait %{{.*}} {pendings = 0 : i32}
// EXP:   arith.truncf
// EXP:   scf.for {{.*}} iter_args(
// EXP:     %[[T1:.*]] = tawa.dot_async
// EXP:     arith.mulf %arg
// EXP:     tawa.aref.get
// EXP:     %[[U1:.*]] = tawa.dot_async %arg
// EXP:     tawa.dot_wait %[[T1]] {pendings = 1 : i32}
// EXP:     math.exp2
// EXP:     tawa.dot_wait %[[U1]] {pendings = 0 : i32}
// EXP:     tawa.aref.consumed
// EXP:     arith.truncf
// EXP:     scf.yield
// EXP:   arith.mulf
// EXP:   tawa.dot_async
// EXP:   tawa.dot_wait %{{.*}} {pendings = 0 : i32}
// EXP:   scf.yield
// EXP: } else {
// EXP:   scf.yield

// Layouts: P travels to the next iteration as a register A operand, the
// rescale factor as a row vector; the guard's results take its branches'.
// LAYOUT-LABEL: tt.func @attention
// LAYOUT: tawa.iter_arg_layouts = ["row", "row", "acc", "", "", "row", "a_reg"]
// LAYOUT: } {tawa.layouts = ["row", "row", "acc", "", ""]
tt.func @attention(%n: i32, %scale: f32) {
  %q = tawa.aref.create : !tawa.aref<[tensor<128x64xf16>], 1>
  %k = tawa.aref.create : !tawa.aref<[tensor<64x64xf16>], 2>
  %v = tawa.aref.create : !tawa.aref<[tensor<64x64xf16>], 2>
  tawa.warp_specialize partition warps(4) regs(40) {
  } partition warps(8) regs(232) {
    %c0 = arith.constant 0 : i32
    %c64 = arith.constant 64 : i32
    %c1 = arith.constant 1 : i32
    %zero = arith.constant dense<0.0> : tensor<128x64xf32>
    %ninf = arith.constant dense<0xFF800000> : tensor<128xf32>
    %one = arith.constant dense<1.0> : tensor<128xf32>
    %qt = tawa.aref.get %q[%c0] : !tawa.aref<[tensor<128x64xf16>], 1> -> tensor<128x64xf16>
    %r:5 = scf.for %s = %c0 to %n step %c64 iter_args(%m = %ninf, %l = %one, %o = %zero, %ki = %c0, %vi = %c0) -> (tensor<128xf32>, tensor<128xf32>, tensor<128x64xf32>, i32, i32) : i32 {
      %kt = tawa.aref.get %k[%ki] : !tawa.aref<[tensor<64x64xf16>], 2> -> tensor<64x64xf16>
      %ktt = tt.trans %kt {order = array<i32: 1, 0>} : tensor<64x64xf16> -> tensor<64x64xf16>
      %qk = tt.dot %qt, %ktt, %zero : tensor<128x64xf16> * tensor<64x64xf16> -> tensor<128x64xf32>
      tawa.aref.consumed %k[%ki] : !tawa.aref<[tensor<64x64xf16>], 2>
      %ki1 = arith.addi %ki, %c1 : i32
      %mx = "tt.reduce"(%qk) <{axis = 1 : i32}> ({
      ^bb0(%a: f32, %b: f32):
        %x = arith.maxnumf %a, %b : f32
        tt.reduce.return %x : f32
      }) : (tensor<128x64xf32>) -> tensor<128xf32>
      %mn = arith.maxnumf %m, %mx : tensor<128xf32>
      %mne = tt.expand_dims %mn {axis = 1 : i32} : tensor<128xf32> -> tensor<128x1xf32>
      %mnb = tt.broadcast %mne : tensor<128x1xf32> -> tensor<128x64xf32>
      %d = arith.subf %qk, %mnb : tensor<128x64xf32>
      %p = math.exp2 %d : tensor<128x64xf32>
      %da = arith.subf %m, %mn : tensor<128xf32>
      %alpha = math.exp2 %da : tensor<128xf32>
      %ls = "tt.reduce"(%p) <{axis = 1 : i32}> ({
      ^bb0(%a: f32, %b: f32):
        %x = arith.addf %a, %b : f32
        tt.reduce.return %x : f32
      }) : (tensor<128x64xf32>) -> tensor<128xf32>
      %la = arith.mulf %l, %alpha : tensor<128xf32>
      %ln = arith.addf %la, %ls : tensor<128xf32>
      %ae = tt.expand_dims %alpha {axis = 1 : i32} : tensor<128xf32> -> tensor<128x1xf32>
      %ab = tt.broadcast %ae : tensor<128x1xf32> -> tensor<128x64xf32>
      %os = arith.mulf %o, %ab : tensor<128x64xf32>
      %vt = tawa.aref.get %v[%vi] : !tawa.aref<[tensor<64x64xf16>], 2> -> tensor<64x64xf16>
      %ph = arith.truncf %p : tensor<128x64xf32> to tensor<128x64xf16>
      %on = tt.dot %ph, %vt, %os : tensor<128x64xf16> * tensor<64x64xf16> -> tensor<128x64xf32>
      tawa.aref.consumed %v[%vi] : !tawa.aref<[tensor<64x64xf16>], 2>
      %vi1 = arith.addi %vi, %c1 : i32
      scf.yield %mn, %ln, %on, %ki1, %vi1 : tensor<128xf32>, tensor<128xf32>, tensor<128x64xf32>, i32, i32
    }
  }
  tt.return
}

// -----

// A GEMM loop (one product accumulating into a loop-carried value) is left
// alone.
// CHECK-LABEL: tt.func @gemm
// CHECK-NOT: tawa.stage
// CHECK-NOT: tawa.pipeline_peel
// CHECK: tt.dot
tt.func @gemm(%n: i32) {
  %ring = tawa.aref.create : !tawa.aref<[tensor<128x64xf16>, tensor<128x64xf16>], 3>
  tawa.warp_specialize partition warps(4) regs(40) {
  } partition warps(8) regs(232) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zero = arith.constant dense<0.0> : tensor<128x128xf32>
    %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero, %k = %c0) -> (tensor<128x128xf32>, i32) : i32 {
      %t:2 = tawa.aref.get %ring[%k] : !tawa.aref<[tensor<128x64xf16>, tensor<128x64xf16>], 3> -> tensor<128x64xf16>, tensor<128x64xf16>
      %bt = tt.trans %t#1 {order = array<i32: 1, 0>} : tensor<128x64xf16> -> tensor<64x128xf16>
      %d = tt.dot %t#0, %bt, %acc : tensor<128x64xf16> * tensor<64x128xf16> -> tensor<128x128xf32>
      tawa.aref.consumed %ring[%k] : !tawa.aref<[tensor<128x64xf16>, tensor<128x64xf16>], 3>
      %k1 = arith.addi %k, %c1 : i32
      scf.yield %d, %k1 : tensor<128x128xf32>, i32
    }
  }
  tt.return
}
