// RUN: tawa-opt %s -split-input-file -verify-diagnostics -tawa-mma-pipeline="mma-depth=2" | FileCheck %s
// RUN: tawa-opt %s -tawa-mma-pipeline="mma-depth=0" | FileCheck %s --check-prefix=P0
// RUN: tawa-opt %s -split-input-file -tawa-mma-pipeline | FileCheck %s --check-prefix=AUTO

// The accumulating product is issued asynchronously, the wait keeps P in
// flight, and only the release of the ring it reads moves to stage P.

// CHECK-LABEL: tt.func @consumer_loop
// CHECK: scf.for
// CHECK:   tawa.aref.get {{.*}}{tawa.stage = 0 : i32}
// CHECK:   tt.trans {{.*}}tawa.stage = 0 : i32
// CHECK:   %[[D:.*]] = tawa.dot_async {{.*}}{tawa.stage = 0 : i32}
// CHECK:   %[[W:.*]] = tawa.dot_wait %[[D]] {pendings = 2 : i32, tawa.stage = 0 : i32}
// CHECK:   tawa.aref.consumed {{.*}}{tawa.stage = 2 : i32}
// CHECK:   scf.yield %[[W]]
// CHECK: } {tawa.num_stages = 3 : i32}
// P0: tawa.dot_wait %{{.*}} {pendings = 0 : i32, tawa.stage = 0 : i32}
// P0: tawa.aref.consumed {{.*}}{tawa.stage = 0 : i32}
// P0: } {tawa.num_stages = 1 : i32}
tt.func @consumer_loop(%n: i32) {
  %ring = tawa.aref.create : !tawa.aref<[tensor<128x64xf16>, tensor<128x64xf16>], 3>
  tawa.warp_specialize partition warps(4) regs(40) {
  } partition warps(4) regs(232) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zero = arith.constant dense<0.0> : tensor<128x128xf32>
    %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero, %k = %c0) -> (tensor<128x128xf32>, i32) : i32 {
      %t:2 = tawa.aref.get %ring[%k] : !tawa.aref<[tensor<128x64xf16>, tensor<128x64xf16>], 3> -> tensor<128x64xf16>, tensor<128x64xf16>
      %bt = tt.trans %t#1 {order = array<i32: 1, 0>} : tensor<128x64xf16> -> tensor<64x128xf16>
      %d = tt.dot %t#0, %bt, %acc : tensor<128x64xf16> * tensor<64x128xf16> -> tensor<128x128xf32>
      tawa.aref.consumed %ring[%k] : !tawa.aref<[tensor<128x64xf16>, tensor<128x64xf16>], 3>
      %next = arith.addi %k, %c1 : i32
      scf.yield %d, %next : tensor<128x128xf32>, i32
    }
  }
  tt.return
}

// -----

// A ring of P slots cannot hold P products in flight plus the next load.
tt.func @too_shallow(%n: i32) {
  %ring = tawa.aref.create : !tawa.aref<[tensor<64x64xf16>], 2>
  tawa.warp_specialize partition warps(4) regs(40) {
  } partition warps(4) regs(232) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zero = arith.constant dense<0.0> : tensor<64x64xf32>
    %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero, %k = %c0) -> (tensor<64x64xf32>, i32) : i32 {
      %t = tawa.aref.get %ring[%k] : !tawa.aref<[tensor<64x64xf16>], 2> -> tensor<64x64xf16>
      // expected-error @below {{mma-depth 2 needs arefs of more than 2 slots, but this product reads a ring of 2: the producer would wait for a slot released only after more products than the ring holds (deadlock)}}
      %d = tt.dot %t, %t, %acc : tensor<64x64xf16> * tensor<64x64xf16> -> tensor<64x64xf32>
      tawa.aref.consumed %ring[%k] : !tawa.aref<[tensor<64x64xf16>], 2>
      %next = arith.addi %k, %c1 : i32
      scf.yield %d, %next : tensor<64x64xf32>, i32
    }
  }
  tt.return
}

// -----

// Auto depth, two cooperative groups holding 128 accumulator registers each
// on a ring of 4: P = 2, except in loops of at most 8 iterations, which run a
// copy with P = 1. The loop and the rest of its block (the epilogue) move
// into both branches; the value the tile loop carries becomes the if's
// result.
// AUTO-LABEL: tt.func @wide_cooperative
// AUTO: scf.for {{.*}} iter_args(%{{.*}} = %c0_i32) -> (i32)
// AUTO:   %[[SPAN:.*]] = arith.subi %arg0, %c0_i32
// AUTO:   %[[LIMIT:.*]] = arith.muli %c1_i32, %c8_i32
// AUTO:   %[[SHORT:.*]] = arith.cmpi sle, %[[SPAN]], %[[LIMIT]]
// AUTO:   %[[R:.*]] = scf.if %[[SHORT]] -> (i32) {
// AUTO:     %[[S:.*]]:2 = scf.for
// AUTO:       tawa.dot_wait {{.*}}{pendings = 1 : i32, tawa.stage = 0 : i32}
// AUTO:       tawa.aref.consumed {{.*}}{tawa.stage = 1 : i32}
// AUTO:     } {tawa.num_stages = 2 : i32}
// AUTO:     tt.descriptor_store
// AUTO:     scf.yield %[[S]]#1 : i32
// AUTO:   } else {
// AUTO:     %[[L:.*]]:2 = scf.for
// AUTO:       tawa.dot_wait {{.*}}{pendings = 2 : i32, tawa.stage = 0 : i32}
// AUTO:       tawa.aref.consumed {{.*}}{tawa.stage = 2 : i32}
// AUTO:     } {tawa.num_stages = 3 : i32}
// AUTO:     tt.descriptor_store
// AUTO:     scf.yield %[[L]]#1 : i32
// AUTO:   }
// AUTO:   scf.yield %[[R]] : i32
tt.func @wide_cooperative(%n: i32, %tiles: i32, %c: !tt.tensordesc<tensor<128x256xf16>>) {
  %ring = tawa.aref.create : !tawa.aref<[tensor<128x64xf16>, tensor<256x64xf16>], 4>
  tawa.warp_specialize partition warps(4) regs(40) {
  } partition warps(8) regs(232) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zero = arith.constant dense<0.0> : tensor<128x256xf32>
    %t = scf.for %tile = %c0 to %tiles step %c1 iter_args(%k0 = %c0) -> (i32) : i32 {
      %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero, %k = %k0) -> (tensor<128x256xf32>, i32) : i32 {
        %s:2 = tawa.aref.get %ring[%k] : !tawa.aref<[tensor<128x64xf16>, tensor<256x64xf16>], 4> -> tensor<128x64xf16>, tensor<256x64xf16>
        %bt = tt.trans %s#1 {order = array<i32: 1, 0>} : tensor<256x64xf16> -> tensor<64x256xf16>
        %d = tt.dot %s#0, %bt, %acc : tensor<128x64xf16> * tensor<64x256xf16> -> tensor<128x256xf32>
        tawa.aref.consumed %ring[%k] : !tawa.aref<[tensor<128x64xf16>, tensor<256x64xf16>], 4>
        %next = arith.addi %k, %c1 : i32
        scf.yield %d, %next : tensor<128x256xf32>, i32
      }
      %h = arith.truncf %r#0 : tensor<128x256xf32> to tensor<128x256xf16>
      tt.descriptor_store %c[%c0, %c0], %h : !tt.tensordesc<tensor<128x256xf16>>, tensor<128x256xf16>
      scf.yield %r#1 : i32
    }
  }
  tt.return
}

// -----

// A tensor the enclosing loop carries cannot leave an scf.if through code
// generation: one version, P = 2.
// AUTO-LABEL: tt.func @tensor_escapes
// AUTO-NOT: scf.if
// AUTO: tawa.dot_wait {{.*}}{pendings = 2 : i32, tawa.stage = 0 : i32}
// AUTO-NOT: pendings = 1
// AUTO: tt.return
tt.func @tensor_escapes(%n: i32, %tiles: i32) {
  %ring = tawa.aref.create : !tawa.aref<[tensor<128x64xf16>, tensor<256x64xf16>], 4>
  tawa.warp_specialize partition warps(4) regs(40) {
  } partition warps(8) regs(232) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zero = arith.constant dense<0.0> : tensor<128x256xf32>
    %t:2 = scf.for %tile = %c0 to %tiles step %c1 iter_args(%k0 = %c0, %a0 = %zero) -> (i32, tensor<128x256xf32>) : i32 {
      %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %a0, %k = %k0) -> (tensor<128x256xf32>, i32) : i32 {
        %s:2 = tawa.aref.get %ring[%k] : !tawa.aref<[tensor<128x64xf16>, tensor<256x64xf16>], 4> -> tensor<128x64xf16>, tensor<256x64xf16>
        %bt = tt.trans %s#1 {order = array<i32: 1, 0>} : tensor<256x64xf16> -> tensor<64x256xf16>
        %d = tt.dot %s#0, %bt, %acc : tensor<128x64xf16> * tensor<64x256xf16> -> tensor<128x256xf32>
        tawa.aref.consumed %ring[%k] : !tawa.aref<[tensor<128x64xf16>, tensor<256x64xf16>], 4>
        %next = arith.addi %k, %c1 : i32
        scf.yield %d, %next : tensor<128x256xf32>, i32
      }
      scf.yield %r#1, %r#0 : i32, tensor<128x256xf32>
    }
  }
  tt.return
}

// -----

// A product after the loop in its block (here a second K loop) keeps the
// first loop in one version (P = 2); the last loop is versioned, so every
// copy of every loop is pipelined.
// AUTO-LABEL: tt.func @product_after_loop
// AUTO: scf.for {{.*}} -> (i32)
// AUTO-NEXT: scf.for
// AUTO-NOT: tt.dot
// AUTO: tawa.dot_wait {{.*}}{pendings = 2 : i32, tawa.stage = 0 : i32}
// AUTO-NOT: tt.dot
// AUTO: } {tawa.num_stages = 3 : i32}
// AUTO-NEXT: arith.subi %arg1
// AUTO-NOT: tt.dot
// AUTO: scf.if
// AUTO-NOT: tt.dot
// AUTO: tawa.dot_wait {{.*}}{pendings = 1 : i32, tawa.stage = 0 : i32}
// AUTO-NOT: tt.dot
// AUTO: } else {
// AUTO-NOT: tt.dot
// AUTO: tawa.dot_wait {{.*}}{pendings = 2 : i32, tawa.stage = 0 : i32}
// AUTO-NOT: tt.dot
// AUTO: tt.return
tt.func @product_after_loop(%n: i32, %m: i32, %tiles: i32) {
  %ring = tawa.aref.create : !tawa.aref<[tensor<128x64xf16>, tensor<256x64xf16>], 4>
  tawa.warp_specialize partition warps(4) regs(40) {
  } partition warps(8) regs(232) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zero = arith.constant dense<0.0> : tensor<128x256xf32>
    %t = scf.for %tile = %c0 to %tiles step %c1 iter_args(%k0 = %c0) -> (i32) : i32 {
      %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero, %k = %k0) -> (tensor<128x256xf32>, i32) : i32 {
        %s:2 = tawa.aref.get %ring[%k] : !tawa.aref<[tensor<128x64xf16>, tensor<256x64xf16>], 4> -> tensor<128x64xf16>, tensor<256x64xf16>
        %bt = tt.trans %s#1 {order = array<i32: 1, 0>} : tensor<256x64xf16> -> tensor<64x256xf16>
        %d = tt.dot %s#0, %bt, %acc : tensor<128x64xf16> * tensor<64x256xf16> -> tensor<128x256xf32>
        tawa.aref.consumed %ring[%k] : !tawa.aref<[tensor<128x64xf16>, tensor<256x64xf16>], 4>
        %next = arith.addi %k, %c1 : i32
        scf.yield %d, %next : tensor<128x256xf32>, i32
      }
      %q:2 = scf.for %i = %c0 to %m step %c1 iter_args(%acc = %r#0, %k = %r#1) -> (tensor<128x256xf32>, i32) : i32 {
        %s:2 = tawa.aref.get %ring[%k] : !tawa.aref<[tensor<128x64xf16>, tensor<256x64xf16>], 4> -> tensor<128x64xf16>, tensor<256x64xf16>
        %bt = tt.trans %s#1 {order = array<i32: 1, 0>} : tensor<256x64xf16> -> tensor<64x256xf16>
        %d = tt.dot %s#0, %bt, %acc : tensor<128x64xf16> * tensor<64x256xf16> -> tensor<128x256xf32>
        tawa.aref.consumed %ring[%k] : !tawa.aref<[tensor<128x64xf16>, tensor<256x64xf16>], 4>
        %next = arith.addi %k, %c1 : i32
        scf.yield %d, %next : tensor<128x256xf32>, i32
      }
      scf.yield %q#1 : i32
    }
  }
  tt.return
}

// -----

// A loop solved by -tawa-optimal-schedule: its lag is the least P. Where it
// exceeds the rule's P (one 4-warp group: the rule says 1), it wins, with no
// short-loop version; the ring of 3 holds it (P < D).
// AUTO-LABEL: tt.func @solved_lag_above_rule
// AUTO-NOT: scf.if
// AUTO: tawa.dot_wait {{.*}}{pendings = 2 : i32, tawa.stage = 0 : i32}
// AUTO: tawa.aref.consumed {{.*}}{tawa.stage = 2 : i32}
// AUTO: tawa.schedule_lag = 2 : i32
tt.func @solved_lag_above_rule(%n: i32) {
  %ring = tawa.aref.create : !tawa.aref<[tensor<128x64xf16>, tensor<128x64xf16>], 3>
  tawa.warp_specialize partition warps(4) regs(40) {
  } partition warps(4) regs(232) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zero = arith.constant dense<0.0> : tensor<128x128xf32>
    %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero, %k = %c0) -> (tensor<128x128xf32>, i32) : i32 {
      %t:2 = tawa.aref.get %ring[%k] : !tawa.aref<[tensor<128x64xf16>, tensor<128x64xf16>], 3> -> tensor<128x64xf16>, tensor<128x64xf16>
      %bt = tt.trans %t#1 {order = array<i32: 1, 0>} : tensor<128x64xf16> -> tensor<64x128xf16>
      %d = tt.dot %t#0, %bt, %acc : tensor<128x64xf16> * tensor<64x128xf16> -> tensor<128x128xf32>
      tawa.aref.consumed %ring[%k] : !tawa.aref<[tensor<128x64xf16>, tensor<128x64xf16>], 3>
      %next = arith.addi %k, %c1 : i32
      scf.yield %d, %next : tensor<128x128xf32>, i32
    } {tawa.schedule_lag = 2 : i32}
  }
  tt.return
}

// -----

// A solved lag of 1 under the rule's 2 (two cooperative groups, 128 x 256):
// the rule decides above the bound, short-loop version included.
// AUTO-LABEL: tt.func @solved_lag_below_rule
// AUTO: scf.if
// AUTO:   tawa.dot_wait {{.*}}{pendings = 1 : i32, tawa.stage = 0 : i32}
// AUTO: } else {
// AUTO:   tawa.dot_wait {{.*}}{pendings = 2 : i32, tawa.stage = 0 : i32}
tt.func @solved_lag_below_rule(%n: i32, %tiles: i32, %c: !tt.tensordesc<tensor<128x256xf16>>) {
  %ring = tawa.aref.create : !tawa.aref<[tensor<128x64xf16>, tensor<256x64xf16>], 4>
  tawa.warp_specialize partition warps(4) regs(40) {
  } partition warps(8) regs(232) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zero = arith.constant dense<0.0> : tensor<128x256xf32>
    %t = scf.for %tile = %c0 to %tiles step %c1 iter_args(%k0 = %c0) -> (i32) : i32 {
      %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero, %k = %k0) -> (tensor<128x256xf32>, i32) : i32 {
        %s:2 = tawa.aref.get %ring[%k] : !tawa.aref<[tensor<128x64xf16>, tensor<256x64xf16>], 4> -> tensor<128x64xf16>, tensor<256x64xf16>
        %bt = tt.trans %s#1 {order = array<i32: 1, 0>} : tensor<256x64xf16> -> tensor<64x256xf16>
        %d = tt.dot %s#0, %bt, %acc : tensor<128x64xf16> * tensor<64x256xf16> -> tensor<128x256xf32>
        tawa.aref.consumed %ring[%k] : !tawa.aref<[tensor<128x64xf16>, tensor<256x64xf16>], 4>
        %next = arith.addi %k, %c1 : i32
        scf.yield %d, %next : tensor<128x256xf32>, i32
      } {tawa.schedule_lag = 1 : i32}
      %h = arith.truncf %r#0 : tensor<128x256xf32> to tensor<128x256xf16>
      tt.descriptor_store %c[%c0, %c0], %h : !tt.tensordesc<tensor<128x256xf16>>, tensor<128x256xf16>
      scf.yield %r#1 : i32
    }
  }
  tt.return
}
