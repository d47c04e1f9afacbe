// RUN: tawa-opt %s -split-input-file -tawa-persistent-programs | FileCheck %s
// RUN: tawa-opt %shared_ttir/gemm_persistent.ttir -tawa-persistent-programs | FileCheck %s --check-prefix=USERLOOP
// RUN: tawa-opt %shared_ttir/gemm_grouped.ttir -tawa-persistent-programs | FileCheck %s --check-prefix=USERLOOP
// RUN: tawa-opt %shared_ttir/gemm_persistent.ttir -tawa-persistent-programs=force=true | FileCheck %s --check-prefix=FORCED
// Causal attention: query block x reads key blocks up to (x + 1) * BM, so
// the walk takes x from the largest down (the longest programs first); the
// non-causal kernel loads K and V in its loop at the head's rows
// (program_id(y)) alone, so x is walked fastest: a wave's CTAs run few heads
// and share their K and V blocks in L2 (stream-order; off: grouped).
// RUN: tawa-opt %shared_ttir/attn_fp16_causal.ttir -tawa-persistent-programs | FileCheck %s --check-prefix=CAUSAL
// RUN: tawa-opt %shared_ttir/attn_fp16.ttir -tawa-persistent-programs | FileCheck %s --check-prefix=NONCAUSAL
// RUN: tawa-opt %shared_ttir/attn_fp16.ttir -tawa-persistent-programs=stream-order=false | FileCheck %s --check-prefix=GROUPED
// RUN: tawa-opt %s -split-input-file -tawa-persistent-programs=stream-order=false | FileCheck %s --check-prefix=NOSTREAM
// Each CTA's share balanced: in odd complete rounds k of G CTAs, CTA c takes
// position k G + G - 1 - c instead of k G + c (a snake over the rounds).
// CAUSAL: %[[CTA:.*]] = tt.get_program_id x : i32
// CAUSAL: %[[G:.*]] = tt.get_num_programs x : i32
// CAUSAL: scf.for %[[T:.*]] = %[[CTA]] to %[[TOTAL:.*]] step %[[G]]
// CAUSAL-NEXT: %[[K:.*]] = arith.divsi %[[T]], %[[G]] : i32
// CAUSAL-NEXT: %[[R:.*]] = arith.divsi %[[TOTAL]], %[[G]] : i32
// CAUSAL-NEXT: %[[FULL:.*]] = arith.muli %[[R]], %[[G]] : i32
// CAUSAL: %[[KB:.*]] = arith.andi %[[K]], %[[ONE:.*]] : i32
// CAUSAL-NEXT: %[[ODD:.*]] = arith.cmpi eq, %[[KB]], %[[ONE]] : i32
// CAUSAL-NEXT: %[[IN:.*]] = arith.cmpi slt, %[[T]], %[[FULL]] : i32
// CAUSAL-NEXT: %[[G1:.*]] = arith.subi %[[G]], %[[ONE]] : i32
// CAUSAL-NEXT: %[[BACK:.*]] = arith.subi %[[G1]], %[[CTA]] : i32
// CAUSAL-NEXT: %[[BASE:.*]] = arith.muli %[[K]], %[[G]] : i32
// CAUSAL-NEXT: %[[MIR:.*]] = arith.addi %[[BASE]], %[[BACK]] : i32
// CAUSAL-NEXT: %[[SEL:.*]] = arith.andi %[[ODD]], %[[IN]] : i1
// CAUSAL-NEXT: %[[POS:.*]] = arith.select %[[SEL]], %[[MIR]], %[[T]] : i32
// CAUSAL-NEXT: arith.divsi %[[POS]]
// CAUSAL: %[[X:.*]] = arith.addi %{{.*}}, %{{.*}} : i32
// CAUSAL: %[[LAST:.*]] = arith.subi %[[NX:arg[0-9]+]], %{{.*}} : i32
// CAUSAL: %[[REV:.*]] = arith.subi %[[LAST]], %[[X]] : i32
// CAUSAL: arith.addi %[[REV]], %{{.*}} : i32
// NONCAUSAL: scf.for %[[T:.*]] = %{{.*}} to %{{.*}} step %{{.*}} : i32 {
// NONCAUSAL-NEXT: %[[PX:.*]] = arith.remsi %[[T]], %[[NX:arg[0-9]+]] : i32
// NONCAUSAL-NEXT: %[[R:.*]] = arith.divsi %[[T]], %[[NX]] : i32
// NONCAUSAL-NEXT: arith.remsi %[[R]], %[[NY:arg[0-9]+]] : i32
// NONCAUSAL-NOT: arith.minsi
// NONCAUSAL-NOT: arith.subi %arg22, %c1
// GROUPED: scf.for
// GROUPED: arith.minsi %{{.*}}, %c8_i32

// One program per (x, y, z): the body moves into a loop over program indices
// t = CTA id, CTA id + CTAs, ... < nx * ny * nz, and program ids / counts
// become t's coordinates (x fastest) and the program grid arguments.
// CHECK-LABEL: tt.func @tile
// CHECK-SAME: %[[N:arg[0-9]+]]: i32, %[[NX:arg[0-9]+]]: i32 {tawa.num_programs = 0 : i32}, %[[NY:arg[0-9]+]]: i32 {tawa.num_programs = 1 : i32}, %[[NZ:arg[0-9]+]]: i32 {tawa.num_programs = 2 : i32})
// CHECK: %[[CTA:.*]] = tt.get_program_id x : i32
// CHECK: %[[CTAS:.*]] = tt.get_num_programs x : i32
// A kernel that reads program_id(y) walks each z plane 8 x values at a
// time: pz = t / (nx ny); r = t mod (nx ny); first = r / (8 ny) * 8;
// h = min(nx - first, 8); px = first + (r mod 8 ny) mod h; py = (r mod 8 ny) / h.
// CHECK: %[[XY:.*]] = arith.muli %[[NX]], %[[NY]] : i32
// CHECK: %[[ALL:.*]] = arith.muli %[[XY]], %[[NZ]] : i32
// CHECK: %[[W:.*]] = arith.muli %c8_i32, %[[NY]] : i32
// CHECK: scf.for %[[T:.*]] = %[[CTA]] to %[[ALL]] step %[[CTAS]] : i32 {
// CHECK: %[[PZ:.*]] = arith.divsi %[[T]], %[[XY]] : i32
// CHECK: %[[R:.*]] = arith.remsi %[[T]], %[[XY]] : i32
// CHECK: %[[G:.*]] = arith.divsi %[[R]], %[[W]] : i32
// CHECK: %[[FIRST:.*]] = arith.muli %[[G]], %c8_i32 : i32
// CHECK: %[[LEFT:.*]] = arith.subi %[[NX]], %[[FIRST]] : i32
// CHECK: %[[H:.*]] = arith.minsi %[[LEFT]], %c8_i32 : i32
// CHECK: %[[IN:.*]] = arith.remsi %[[R]], %[[W]] : i32
// CHECK: %[[OFF:.*]] = arith.remsi %[[IN]], %[[H]] : i32
// CHECK: %[[PX:.*]] = arith.addi %[[FIRST]], %[[OFF]] : i32
// CHECK: %[[PY:.*]] = arith.divsi %[[IN]], %[[H]] : i32
// CHECK: arith.muli %[[PX]], %[[N]]
// CHECK: arith.addi %{{.*}}, %[[PY]]
// CHECK: arith.addi %{{.*}}, %[[PZ]]
// CHECK: arith.addi %{{.*}}, %[[NY]]
// CHECK: tt.store
// CHECK: }
// CHECK-NEXT: tt.return
// CHECK-NOT: tt.get_program_id y
tt.func @tile(%out: !tt.ptr<i32>, %n: i32) {
  %x = tt.get_program_id x : i32
  %y = tt.get_program_id y : i32
  %z = tt.get_program_id z : i32
  %ny = tt.get_num_programs y : i32
  %a = arith.muli %x, %n : i32
  %b = arith.addi %a, %y : i32
  %c = arith.addi %b, %z : i32
  %d = arith.addi %c, %ny : i32
  %p = tt.addptr %out, %c : !tt.ptr<i32>, i32
  tt.store %p, %d : !tt.ptr<i32>
  tt.return
}

// -----

// Without program_id(y): launch order, x fastest.
// CHECK-LABEL: tt.func @row
// CHECK-SAME: %[[NX:arg[0-9]+]]: i32 {tawa.num_programs = 0 : i32}, %[[NY:arg[0-9]+]]: i32 {tawa.num_programs = 1 : i32}
// CHECK: scf.for %[[T:.*]] = %{{.*}} to %{{.*}} step %{{.*}} : i32 {
// CHECK: %[[PX:.*]] = arith.remsi %[[T]], %[[NX]] : i32
// CHECK: %[[R:.*]] = arith.divsi %[[T]], %[[NX]] : i32
// CHECK: arith.remsi %[[R]], %[[NY]] : i32
// CHECK: arith.divsi %[[R]], %[[NY]] : i32
// CHECK: tt.addptr %{{.*}}, %[[PX]]
// CHECK-NOT: arith.minsi
tt.func @row(%out: !tt.ptr<i32>) {
  %x = tt.get_program_id x : i32
  %p = tt.addptr %out, %x : !tt.ptr<i32>, i32
  tt.store %p, %x : !tt.ptr<i32>
  tt.return
}

// -----

// A kernel without program ids still runs once per program of its grid.
// CHECK-LABEL: tt.func @single
// CHECK: scf.for
// CHECK:   tt.store
tt.func @single(%out: !tt.ptr<i32>) {
  %c1 = arith.constant 1 : i32
  tt.store %out, %c1 : !tt.ptr<i32>
  tt.return
}

// The user's own loops over program ids (persistent and grouped GEMMs) are
// kept as written: no program-grid arguments appear.
// USERLOOP-NOT: tawa.num_programs
// With force, even they are wrapped (each CTA then runs the programs of the
// user's fixed grid in turn: correct, and useful only for tests).
// FORCED: tawa.num_programs = 2
// FORCED: scf.for
// FORCED: scf.for

// -----

// A tensor map built from the kernel's arguments alone (what the pointer-tile
// rewrite makes) stays before the program loop, built once per CTA; one that
// reads a program id moves into the loop with the rest of the body.
// CHECK-LABEL: tt.func @invariant_tensor_map
// CHECK: %[[STRIDE:.*]] = arith.extsi %arg2 : i32 to i64
// CHECK: %[[MAP:.*]] = tt.make_tensor_descriptor %arg0, [%arg1, %arg1], [%[[STRIDE]], %{{.*}}]
// CHECK: scf.for
// CHECK: tt.make_tensor_descriptor %arg0, [%{{.*}}, %arg1]
// CHECK: tt.descriptor_load %[[MAP]]
// CHECK: } {tawa.program_loop}
tt.func @invariant_tensor_map(%p: !tt.ptr<f16> {tt.divisibility = 16 : i32}, %m: i32, %stride: i32, %out: !tt.tensordesc<tensor<64x64xf16>>) {
  %c1 = arith.constant 1 : i64
  %s = arith.extsi %stride : i32 to i64
  %map = tt.make_tensor_descriptor %p, [%m, %m], [%s, %c1] : <f16>, <tensor<64x64xf16>>
  %pid = tt.get_program_id x : i32
  %rows = arith.muli %pid, %m : i32
  %map2 = tt.make_tensor_descriptor %p, [%rows, %m], [%s, %c1] : <f16>, <tensor<64x64xf16>>
  %c0 = arith.constant 0 : i32
  %off = arith.muli %pid, %c0 : i32
  %t = tt.descriptor_load %map[%off, %c0] : !tt.tensordesc<tensor<64x64xf16>> -> tensor<64x64xf16>
  %t2 = tt.descriptor_load %map2[%off, %c0] : !tt.tensordesc<tensor<64x64xf16>> -> tensor<64x64xf16>
  %sum = arith.addf %t, %t2 : tensor<64x64xf16>
  tt.descriptor_store %out[%off, %c0], %sum : !tt.tensordesc<tensor<64x64xf16>>, tensor<64x64xf16>
  tt.return
}

// -----

// Loads inside a loop indexed by program_id(y) alone (attention's K and V):
// launch order, x fastest, so that the CTAs running at once share them.
// CHECK-LABEL: tt.func @stream_y
// CHECK-SAME: %[[NX:arg[0-9]+]]: i32 {tawa.num_programs = 0 : i32}
// CHECK: scf.for %[[T:.*]] = %{{.*}} to %{{.*}} step %{{.*}} : i32 {
// CHECK-NEXT: %[[PX:.*]] = arith.remsi %[[T]], %[[NX]] : i32
// CHECK-NOT: arith.minsi
// CHECK: } {tawa.program_loop}
// NOSTREAM-LABEL: tt.func @stream_y
// NOSTREAM: arith.minsi %{{.*}}, %c8_i32
tt.func @stream_y(%kv: !tt.tensordesc<tensor<64x64xf16>>, %q: !tt.tensordesc<tensor<64x64xf16>>, %out: !tt.tensordesc<tensor<64x64xf16>>, %n: i32) {
  %c0 = arith.constant 0 : i32
  %c64 = arith.constant 64 : i32
  %x = tt.get_program_id x : i32
  %y = tt.get_program_id y : i32
  %row = arith.muli %x, %c64 : i32
  %head = arith.muli %y, %n : i32
  %qrow = arith.addi %head, %row : i32
  %qt = tt.descriptor_load %q[%qrow, %c0] : !tt.tensordesc<tensor<64x64xf16>> -> tensor<64x64xf16>
  %acc = scf.for %i = %c0 to %n step %c64 iter_args(%a = %qt) -> (tensor<64x64xf16>) : i32 {
    %r = arith.addi %head, %i : i32
    %t = tt.descriptor_load %kv[%r, %c0] : !tt.tensordesc<tensor<64x64xf16>> -> tensor<64x64xf16>
    %s = arith.addf %a, %t : tensor<64x64xf16>
    scf.yield %s : tensor<64x64xf16>
  }
  tt.descriptor_store %out[%qrow, %c0], %acc : !tt.tensordesc<tensor<64x64xf16>>, tensor<64x64xf16>
  tt.return
}

// -----

// A loop's load that also depends on x (a GEMM's A tile) keeps the grouped
// order.
// CHECK-LABEL: tt.func @stream_xy
// CHECK: scf.for
// CHECK: arith.minsi %{{.*}}, %c8_i32
tt.func @stream_xy(%a: !tt.tensordesc<tensor<64x64xf16>>, %b: !tt.tensordesc<tensor<64x64xf16>>, %out: !tt.tensordesc<tensor<64x64xf16>>, %n: i32) {
  %c0 = arith.constant 0 : i32
  %c64 = arith.constant 64 : i32
  %x = tt.get_program_id x : i32
  %y = tt.get_program_id y : i32
  %m = arith.muli %x, %c64 : i32
  %nn = arith.muli %y, %c64 : i32
  %z = arith.constant dense<0.0> : tensor<64x64xf16>
  %acc = scf.for %k = %c0 to %n step %c64 iter_args(%acc0 = %z) -> (tensor<64x64xf16>) : i32 {
    %ta = tt.descriptor_load %a[%m, %k] : !tt.tensordesc<tensor<64x64xf16>> -> tensor<64x64xf16>
    %tb = tt.descriptor_load %b[%nn, %k] : !tt.tensordesc<tensor<64x64xf16>> -> tensor<64x64xf16>
    %s = arith.addf %ta, %tb : tensor<64x64xf16>
    %s2 = arith.addf %acc0, %s : tensor<64x64xf16>
    scf.yield %s2 : tensor<64x64xf16>
  }
  tt.descriptor_store %out[%m, %nn], %acc : !tt.tensordesc<tensor<64x64xf16>>, tensor<64x64xf16>
  tt.return
}

// -----

// A pointer the loop advances, started at an x-dependent position, read at
// the y-dependent offset: x is found through the loop-carried value's
// initial value, so the order stays grouped.
// CHECK-LABEL: tt.func @stream_carried_x
// CHECK: scf.for
// CHECK: arith.minsi %{{.*}}, %c8_i32
tt.func @stream_carried_x(%p: !tt.ptr<f32>, %out: !tt.ptr<f32>, %n: i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %x = tt.get_program_id x : i32
  %y = tt.get_program_id y : i32
  %start = arith.addi %x, %y : i32
  %head = arith.muli %y, %n : i32
  %p0 = tt.addptr %p, %x : !tt.ptr<f32>, i32
  %z = arith.constant 0.0 : f32
  %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%ptr = %p0, %acc = %z) -> (!tt.ptr<f32>, f32) : i32 {
    %q = tt.addptr %ptr, %head : !tt.ptr<f32>, i32
    %v = tt.load %q : !tt.ptr<f32>
    %s = arith.addf %acc, %v : f32
    %next = tt.addptr %ptr, %n : !tt.ptr<f32>, i32
    scf.yield %next, %s : !tt.ptr<f32>, f32
  }
  %o = tt.addptr %out, %start : !tt.ptr<f32>, i32
  tt.store %o, %r#1 : !tt.ptr<f32>
  tt.return
}
