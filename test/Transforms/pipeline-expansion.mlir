// RUN: tawa-opt %s -split-input-file -verify-diagnostics -tawa-pipeline-expand | FileCheck %s
// RUN: tawa-opt %shared_ttir/gemm_persistent.ttir -tawa-partition-annotation -tawa-loop-distribution -tawa-mma-pipeline="mma-depth=1" -tawa-pipeline-expand -canonicalize | FileCheck %s --check-prefix=PERSISTENT

// Stage 2 releases the slot of iteration k-2, read from a 2-deep shift
// register of the ring counter; after the loop the products are retired and
// the last two iterations are released, each guarded by the trip count.

// CHECK-LABEL: tt.func @lag2
// CHECK: %[[R:.*]]:4 = scf.for %[[IV:.*]] = %[[LB:.*]] to %{{.*}} step %[[STEP:.*]] iter_args(%[[ACC:.*]] = %{{.*}}, %[[K:.*]] = %{{.*}}, %[[R1:.*]] = %{{.*}}, %[[R2:.*]] = %{{.*}})
// CHECK:   tawa.aref.get %{{.*}}[%[[K]]]
// CHECK:   tawa.dot_async
// CHECK:   %[[W:.*]] = tawa.dot_wait %{{.*}} {pendings = 2 : i32}
// CHECK:   %[[GUARD:.*]] = arith.cmpi sge, %[[IV]], %{{.*}}
// CHECK:   scf.if %[[GUARD]] {
// CHECK:     tawa.aref.consumed %{{.*}}[%[[R2]]]
// CHECK:   }
// CHECK:   %[[NEXT:.*]] = arith.addi %[[K]]
// CHECK:   scf.yield %[[W]], %[[NEXT]], %[[K]], %[[R1]]
// CHECK: %[[DONE:.*]] = tawa.dot_wait %[[R]]#0 {pendings = 0 : i32}
// CHECK: %[[TRIP:.*]] = arith.maxsi
// CHECK: %[[G2:.*]] = arith.cmpi sge, %[[TRIP]], %c2
// CHECK: scf.if %[[G2]] {
// CHECK:   tawa.aref.consumed %{{.*}}[%[[R]]#3]
// CHECK: %[[G1:.*]] = arith.cmpi sge, %[[TRIP]], %c1
// CHECK: scf.if %[[G1]] {
// CHECK:   tawa.aref.consumed %{{.*}}[%[[R]]#2]
// CHECK: tt.return %[[DONE]]
tt.func @lag2(%n: i32) -> tensor<64x64xf32> {
  %ring = tawa.aref.create : !tawa.aref<[tensor<64x64xf16>], 3>
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero, %k = %c0) -> (tensor<64x64xf32>, i32) : i32 {
    %t = tawa.aref.get %ring[%k] {tawa.stage = 0 : i32} : !tawa.aref<[tensor<64x64xf16>], 3> -> tensor<64x64xf16>
    %d = tawa.dot_async %t, %t, %acc {tawa.stage = 0 : i32} : tensor<64x64xf16> * tensor<64x64xf16> -> tensor<64x64xf32>
    %w = tawa.dot_wait %d {pendings = 2 : i32, tawa.stage = 0 : i32} : tensor<64x64xf32>
    tawa.aref.consumed %ring[%k] {tawa.stage = 2 : i32} : !tawa.aref<[tensor<64x64xf16>], 3>
    %next = arith.addi %k, %c1 {tawa.stage = 0 : i32} : i32
    scf.yield %w, %next : tensor<64x64xf32>, i32
  } {tawa.num_stages = 3 : i32}
  tt.return %r#0 : tensor<64x64xf32>
}

// -----

tt.func @late_value_escapes(%n: i32) -> i32 {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%k = %c0) -> (i32) : i32 {
    // expected-error @below {{a value computed in pipeline stage 1 is used outside that stage, which the expander does not support yet}}
    %late = arith.addi %k, %c1 {tawa.stage = 1 : i32} : i32
    scf.yield %late : i32
  }
  tt.return %r : i32
}

// The persistent GEMM: the drain after each tile's k-loop releases the last
// slot before the epilogue, and the ring counter flows on to the next tile.
// PERSISTENT: } partition warps(8) regs(232) {
// PERSISTENT:   scf.for {{.*}} iter_args(%[[T:.*]] = %c0_i32) -> (i32)
// PERSISTENT:     %[[L:.*]]:3 = scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}, %[[K:.*]] = %[[T]], %[[R1:.*]] = %c0_i32)
// PERSISTENT:       tawa.dot_async
// PERSISTENT:       tawa.dot_wait {{.*}}{pendings = 1 : i32}
// PERSISTENT:       scf.if
// PERSISTENT:         tawa.aref.consumed %{{.*}}[%[[R1]]]
// PERSISTENT:     tawa.dot_wait %[[L]]#0 {pendings = 0 : i32}
// PERSISTENT:     scf.if
// PERSISTENT:       tawa.aref.consumed %{{.*}}[%[[L]]#2]
// PERSISTENT:     tt.descriptor_store
// PERSISTENT:     scf.yield %[[L]]#1 : i32
