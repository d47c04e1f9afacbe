// RUN: tawa-opt %s -split-input-file -verify-diagnostics -tawa-partition-annotation | FileCheck %s
// RUN: tawa-opt %shared_ttir/gemm_persistent.ttir -tawa-partition-annotation | FileCheck %s --check-prefix=PERSISTENT

// A GEMM main loop: coordinates and TMA loads go to the producer (0), the
// transpose, dot and epilogue to the consumer (1); program-id arithmetic that
// both need is replicated.

// CHECK-LABEL: tt.func @gemm
// CHECK: tt.get_program_id x {tawa.partition = array<i32: 0, 1>}
// CHECK: arith.muli %{{.*}} {tawa.partition = array<i32: 0, 1>}
// CHECK: scf.for
// CHECK:   arith.muli %{{.*}} {tawa.partition = array<i32: 0>}
// CHECK:   tt.descriptor_load %{{.*}} {tawa.partition = array<i32: 0>}
// CHECK:   tt.descriptor_load %{{.*}} {tawa.partition = array<i32: 0>}
// CHECK:   tt.trans %{{.*}} {order = array<i32: 1, 0>, tawa.partition = array<i32: 1>}
// CHECK:   tt.dot %{{.*}} {tawa.partition = array<i32: 1>}
// CHECK: } {tawa.iter_arg_partitions = array<i32: 2>, tawa.partition = array<i32: 0, 1>}
// CHECK: arith.truncf %{{.*}} {tawa.partition = array<i32: 1>}
// CHECK: tt.descriptor_store %{{.*}} {tawa.partition = array<i32: 1>}
tt.func @gemm(%a: !tt.tensordesc<tensor<128x64xf16>>, %b: !tt.tensordesc<tensor<128x64xf16>>,
              %c: !tt.tensordesc<tensor<128x128xf16>>, %k_tiles: i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c64 = arith.constant 64 : i32
  %c128 = arith.constant 128 : i32
  %zero = arith.constant dense<0.0> : tensor<128x128xf32>
  %pid = tt.get_program_id x : i32
  %row = arith.muli %pid, %c128 : i32
  %acc = scf.for %k = %c0 to %k_tiles step %c1 iter_args(%acc_in = %zero) -> (tensor<128x128xf32>) : i32 {
    %kk = arith.muli %k, %c64 : i32
    %ta = tt.descriptor_load %a[%row, %kk] : !tt.tensordesc<tensor<128x64xf16>> -> tensor<128x64xf16>
    %tb = tt.descriptor_load %b[%row, %kk] : !tt.tensordesc<tensor<128x64xf16>> -> tensor<128x64xf16>
    %tbt = tt.trans %tb {order = array<i32: 1, 0>} : tensor<128x64xf16> -> tensor<64x128xf16>
    %acc_out = tt.dot %ta, %tbt, %acc_in : tensor<128x64xf16> * tensor<64x128xf16> -> tensor<128x128xf32>
    scf.yield %acc_out : tensor<128x128xf32>
  }
  %out = arith.truncf %acc : tensor<128x128xf32> to tensor<128x128xf16>
  tt.descriptor_store %c[%row, %c0], %out : !tt.tensordesc<tensor<128x128xf16>>, tensor<128x128xf16>
  tt.return
}

// -----

// A loop-carried value only the producer needs (a running coordinate) is
// carried by the producer alone (mask 1); the accumulator by the consumer (2).

// CHECK-LABEL: tt.func @carried
// CHECK: scf.for
// CHECK: } {tawa.iter_arg_partitions = array<i32: 2, 1>, tawa.partition = array<i32: 0, 1>}
tt.func @carried(%a: !tt.tensordesc<tensor<64x64xf16>>, %c: !tt.tensordesc<tensor<64x64xf16>>, %n: i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c64 = arith.constant 64 : i32
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %r:2 = scf.for %k = %c0 to %n step %c1 iter_args(%acc_in = %zero, %off = %c0) -> (tensor<64x64xf32>, i32) : i32 {
    %t = tt.descriptor_load %a[%c0, %off] : !tt.tensordesc<tensor<64x64xf16>> -> tensor<64x64xf16>
    %acc_out = tt.dot %t, %t, %acc_in : tensor<64x64xf16> * tensor<64x64xf16> -> tensor<64x64xf32>
    %next = arith.addi %off, %c64 : i32
    scf.yield %acc_out, %next : tensor<64x64xf32>, i32
  }
  %out = arith.truncf %r#0 : tensor<64x64xf32> to tensor<64x64xf16>
  tt.descriptor_store %c[%c0, %c0], %out : !tt.tensordesc<tensor<64x64xf16>>, tensor<64x64xf16>
  tt.return
}

// -----

// expected-error @below {{kernel @no_tma has no TMA loads (tt.descriptor_load): there is nothing to warp-specialize}}
tt.func @no_tma(%p: !tt.ptr<f32>) {
  %v = arith.constant 1.0 : f32
  tt.store %p, %v : !tt.ptr<f32>
  tt.return
}

// The user's persistent loop: both partitions run the tile loop, the producer
// computes load coordinates, the consumer the store coordinates.
// PERSISTENT: scf.for
// PERSISTENT:   scf.for
// PERSISTENT:     tt.descriptor_load {{.*}}tawa.partition = array<i32: 0>
// PERSISTENT:     tt.dot {{.*}}tawa.partition = array<i32: 1>
// PERSISTENT:   } {tawa.iter_arg_partitions = array<i32: 2>, tawa.partition = array<i32: 0, 1>}
// PERSISTENT:   tt.descriptor_store {{.*}}tawa.partition = array<i32: 1>
// PERSISTENT: } {tawa.iter_arg_partitions = array<i32>, tawa.partition = array<i32: 0, 1>}

// -----

// A TMA store to the descriptor the loop also loads from: the producer would
// load iteration k+1 before the consumer stored iteration k (found by
// tawa-check interp as a mismatch before this check existed).
tt.func @store_then_load(%a: !tt.tensordesc<tensor<64x64xf16>>, %b: !tt.tensordesc<tensor<64x64xf16>>, %n: i32) {
  %c0 = arith.constant 0 : i32
  %c64 = arith.constant 64 : i32
  %z = arith.constant dense<0.0> : tensor<64x64xf32>
  %r = scf.for %k = %c0 to %n step %c64 iter_args(%x = %z) -> (tensor<64x64xf32>) : i32 {
    %t = tt.descriptor_load %a[%c0, %k] : !tt.tensordesc<tensor<64x64xf16>> -> tensor<64x64xf16>
    // expected-note @below {{the load of the same descriptor}}
    %u = tt.descriptor_load %b[%c0, %c0] : !tt.tensordesc<tensor<64x64xf16>> -> tensor<64x64xf16>
    %d = tt.dot %t, %u, %x : tensor<64x64xf16> * tensor<64x64xf16> -> tensor<64x64xf32>
    %h = arith.truncf %d : tensor<64x64xf32> to tensor<64x64xf16>
    // expected-error @below {{tawa cannot warp-specialize a TMA store to a descriptor that a TMA load reads later: the producer warp group would load before this store}}
    tt.descriptor_store %b[%c0, %c0], %h : !tt.tensordesc<tensor<64x64xf16>>, tensor<64x64xf16>
    scf.yield %d : tensor<64x64xf32>
  }
  tt.return
}

// -----

// Straight-line: a store, then a load of the same descriptor.
tt.func @store_before_load(%a: !tt.tensordesc<tensor<64x64xf16>>, %o: !tt.tensordesc<tensor<64x64xf16>>) {
  %c0 = arith.constant 0 : i32
  %t = tt.descriptor_load %a[%c0, %c0] : !tt.tensordesc<tensor<64x64xf16>> -> tensor<64x64xf16>
  // expected-error @below {{tawa cannot warp-specialize a TMA store to a descriptor that a TMA load reads later}}
  tt.descriptor_store %o[%c0, %c0], %t : !tt.tensordesc<tensor<64x64xf16>>, tensor<64x64xf16>
  // expected-note @below {{the load of the same descriptor}}
  %u = tt.descriptor_load %o[%c0, %c0] : !tt.tensordesc<tensor<64x64xf16>> -> tensor<64x64xf16>
  tt.descriptor_store %a[%c0, %c0], %u : !tt.tensordesc<tensor<64x64xf16>>, tensor<64x64xf16>
  tt.return
}
