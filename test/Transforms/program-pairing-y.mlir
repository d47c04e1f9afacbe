// RUN: tawa-opt %s -split-input-file -verify-diagnostics -tawa-program-pairing=axis=y | FileCheck %s
// RUN: tawa-opt %s -split-input-file -verify-diagnostics -tawa-program-pairing=axis=y -tawa-persistent-programs | FileCheck %s --check-prefix=LOOP
// RUN: tawa-opt %s -split-input-file -tawa-program-pairing=axis=auto | FileCheck %s --check-prefix=AUTO
// RUN: not tawa-opt %s -split-input-file -tawa-program-pairing=axis=z 2>&1 | FileCheck %s --check-prefix=BAD

// Programs 2q and 2q + 1 along y: B's rows depend on y (one load each), A's
// do not (one load for both: the products share A, and the CUDA emitter
// issues them as one wgmma of twice the width); the second program stores
// only inside the grid.
// CHECK-LABEL: tt.func @batched
// CHECK-SAME: tawa.paired_programs = 1 : i32
// CHECK: %[[Q:[0-9]+]] = tt.get_program_id y
// CHECK: %[[Y0:[0-9]+]] = arith.muli %[[Q]], %c2_i32
// CHECK: %[[Y1:[0-9]+]] = arith.addi %[[Y0]], %c1_i32
// CHECK: %[[NY:[0-9]+]] = tt.get_num_programs y
// CHECK: %[[IN:[0-9]+]] = arith.cmpi slt, %[[Y1]], %[[NY]]
// CHECK-NOT: tt.get_program_id y
// CHECK: %[[R:[0-9]+]]:2 = scf.for {{.*}} iter_args(%[[ACC0:arg[0-9]+]] = %cst, %[[ACC1:arg[0-9]+]] = %cst) -> (tensor<128x128xf32>, tensor<128x128xf32>)
// CHECK: %[[A:[0-9]+]] = tt.descriptor_load %arg0
// CHECK-DAG: arith.muli %[[Y0]], %c128_i32
// CHECK-DAG: arith.muli %[[Y1]], %c128_i32
// CHECK: %[[B0:[0-9]+]] = tt.descriptor_load %arg1
// CHECK: %[[B1:[0-9]+]] = tt.descriptor_load %arg1
// CHECK-NOT: tt.descriptor_load
// CHECK: %[[BT0:[0-9]+]] = tt.trans %[[B0]]
// CHECK: %[[BT1:[0-9]+]] = tt.trans %[[B1]]
// CHECK: %[[D0:[0-9]+]] = tt.dot %[[A]], %[[BT0]], %[[ACC0]]
// CHECK: %[[D1:[0-9]+]] = tt.dot %[[A]], %[[BT1]], %[[ACC1]]
// CHECK: scf.yield %[[D0]], %[[D1]]
// CHECK: tt.descriptor_store %arg2
// CHECK: scf.if %[[IN]] {
// CHECK:   arith.muli %[[Y1]], %c128_i32
// CHECK:   %[[H1:[0-9]+]] = arith.truncf %[[R]]#1
// CHECK:   tt.descriptor_store %arg2[{{.*}}], %[[H1]]
// CHECK: }
// CHECK-NEXT: tt.return

// The persistent loop walks nx * ceil(ny / 2) * nz pairs (groups of 8
// along x, each with the group's x values for every pair along y).
// LOOP-LABEL: tt.func @batched
// LOOP: %[[HY:[0-9]+]] = arith.divsi {{.*}}, %c2_i32
// LOOP: %[[XY:[0-9]+]] = arith.muli %arg6, %[[HY]]
// LOOP: arith.muli %c8_i32{{.*}}, %[[HY]]
// LOOP: scf.for %[[T:arg[0-9]+]] = {{.*}} to
// LOOP: arith.remsi %[[T]], %[[XY]]

// auto: the same pairing here (one product, A independent of y, 128 x 128).
// AUTO-LABEL: tt.func @batched
// AUTO-SAME: tawa.paired_programs = 1 : i32
// AUTO: tt.get_program_id y
// AUTO: tt.dot
// AUTO: tt.dot
// BAD: axis must be x, y or auto, not 'z'
tt.func @batched(%a: !tt.tensordesc<tensor<128x64xf16>>, %b: !tt.tensordesc<tensor<128x64xf16>>, %c: !tt.tensordesc<tensor<128x128xf16>>, %M: i32, %N: i32, %K: i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c64 = arith.constant 64 : i32
  %c128 = arith.constant 128 : i32
  %zero = arith.constant dense<0.0> : tensor<128x128xf32>
  %pm = tt.get_program_id x : i32
  %pn = tt.get_program_id y : i32
  %bid = tt.get_program_id z : i32
  %kt = arith.divsi %K, %c64 : i32
  %acc = scf.for %k = %c0 to %kt step %c1 iter_args(%x = %zero) -> (tensor<128x128xf32>) : i32 {
    %ab = arith.muli %bid, %M : i32
    %am = arith.muli %pm, %c128 : i32
    %ar = arith.addi %ab, %am : i32
    %kk = arith.muli %k, %c64 : i32
    %ta = tt.descriptor_load %a[%ar, %kk] : !tt.tensordesc<tensor<128x64xf16>> -> tensor<128x64xf16>
    %bb = arith.muli %bid, %N : i32
    %bn = arith.muli %pn, %c128 : i32
    %br = arith.addi %bb, %bn : i32
    %tb = tt.descriptor_load %b[%br, %kk] : !tt.tensordesc<tensor<128x64xf16>> -> tensor<128x64xf16>
    %bt = tt.trans %tb {order = array<i32: 1, 0>} : tensor<128x64xf16> -> tensor<64x128xf16>
    %d = tt.dot %ta, %bt, %x : tensor<128x64xf16> * tensor<64x128xf16> -> tensor<128x128xf32>
    scf.yield %d : tensor<128x128xf32>
  }
  %cb = arith.muli %bid, %M : i32
  %cm = arith.muli %pm, %c128 : i32
  %cr = arith.addi %cb, %cm : i32
  %cn = arith.muli %pn, %c128 : i32
  %h = arith.truncf %acc : tensor<128x128xf32> to tensor<128x128xf16>
  tt.descriptor_store %c[%cr, %cn], %h : !tt.tensordesc<tensor<128x128xf16>>, tensor<128x128xf16>
  tt.return
}

// -----

// 128 x 256 tiles: a pair would need N = 512; auto leaves the kernel as
// written (axis=y would still pair it).
// AUTO-LABEL: tt.func @wide
// AUTO-NOT: tawa.paired_programs
// AUTO: tt.get_program_id y
// AUTO-NOT: tt.get_program_id y
// AUTO: tt.dot
// AUTO-NOT: tt.dot
// CHECK-LABEL: tt.func @wide
// CHECK-SAME: tawa.paired_programs = 1 : i32
tt.func @wide(%a: !tt.tensordesc<tensor<128x64xf16>>, %b: !tt.tensordesc<tensor<256x64xf16>>, %c: !tt.tensordesc<tensor<128x256xf16>>, %M: i32, %N: i32, %K: i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c64 = arith.constant 64 : i32
  %c128 = arith.constant 128 : i32
  %zero = arith.constant dense<0.0> : tensor<128x256xf32>
  %pm = tt.get_program_id x : i32
  %pn = tt.get_program_id y : i32
  %bid = tt.get_program_id z : i32
  %kt = arith.divsi %K, %c64 : i32
  %acc = scf.for %k = %c0 to %kt step %c1 iter_args(%x = %zero) -> (tensor<128x256xf32>) : i32 {
    %ab = arith.muli %bid, %M : i32
    %am = arith.muli %pm, %c128 : i32
    %ar = arith.addi %ab, %am : i32
    %kk = arith.muli %k, %c64 : i32
    %ta = tt.descriptor_load %a[%ar, %kk] : !tt.tensordesc<tensor<128x64xf16>> -> tensor<128x64xf16>
    %bb = arith.muli %bid, %N : i32
    %bn = arith.muli %pn, %c128 : i32
    %br = arith.addi %bb, %bn : i32
    %tb = tt.descriptor_load %b[%br, %kk] : !tt.tensordesc<tensor<256x64xf16>> -> tensor<256x64xf16>
    %bt = tt.trans %tb {order = array<i32: 1, 0>} : tensor<256x64xf16> -> tensor<64x256xf16>
    %d = tt.dot %ta, %bt, %x : tensor<128x64xf16> * tensor<64x256xf16> -> tensor<128x256xf32>
    scf.yield %d : tensor<128x256xf32>
  }
  %cb = arith.muli %bid, %M : i32
  %cm = arith.muli %pm, %c128 : i32
  %cr = arith.addi %cb, %cm : i32
  %cn = arith.muli %pn, %c128 : i32
  %h = arith.truncf %acc : tensor<128x256xf32> to tensor<128x256xf16>
  tt.descriptor_store %c[%cr, %cn], %h : !tt.tensordesc<tensor<128x256xf16>>, tensor<128x256xf16>
  tt.return
}

// -----

// The store does not depend on y: both programs store the same tile, so
// they cannot pair. axis=y says why; auto leaves the kernel as written,
// without a message.
// AUTO-LABEL: tt.func @bound_depends_on_y
// AUTO-NOT: tawa.paired_programs
// AUTO: tt.get_program_id y
// AUTO: tt.dot
// AUTO-NOT: tt.dot
tt.func @bound_depends_on_y(%a: !tt.tensordesc<tensor<128x64xf16>>, %b: !tt.tensordesc<tensor<128x64xf16>>, %c: !tt.tensordesc<tensor<128x128xf16>>, %M: i32, %N: i32, %K: i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c64 = arith.constant 64 : i32
  %c128 = arith.constant 128 : i32
  %zero = arith.constant dense<0.0> : tensor<128x128xf32>
  %pm = tt.get_program_id x : i32
  %pn = tt.get_program_id y : i32
  %bid = tt.get_program_id z : i32
  %kt0 = arith.divsi %K, %c64 : i32
  %kt = arith.addi %kt0, %pn : i32
  // expected-error @+1 {{cannot pair programs: the K loop's bounds depend on program_id(1)}}
  %acc = scf.for %k = %c0 to %kt step %c1 iter_args(%x = %zero) -> (tensor<128x128xf32>) : i32 {
    %ab = arith.muli %bid, %M : i32
    %am = arith.muli %pm, %c128 : i32
    %ar = arith.addi %ab, %am : i32
    %kk = arith.muli %k, %c64 : i32
    %ta = tt.descriptor_load %a[%ar, %kk] : !tt.tensordesc<tensor<128x64xf16>> -> tensor<128x64xf16>
    %bb = arith.muli %bid, %N : i32
    %bn = arith.muli %pn, %c128 : i32
    %br = arith.addi %bb, %bn : i32
    %tb = tt.descriptor_load %b[%br, %kk] : !tt.tensordesc<tensor<128x64xf16>> -> tensor<128x64xf16>
    %bt = tt.trans %tb {order = array<i32: 1, 0>} : tensor<128x64xf16> -> tensor<64x128xf16>
    %d = tt.dot %ta, %bt, %x : tensor<128x64xf16> * tensor<64x128xf16> -> tensor<128x128xf32>
    scf.yield %d : tensor<128x128xf32>
  }
  %cb = arith.muli %bid, %M : i32
  %cm = arith.muli %pm, %c128 : i32
  %cr = arith.addi %cb, %cm : i32
  %cn = arith.muli %pn, %c128 : i32
  %h = arith.truncf %acc : tensor<128x128xf32> to tensor<128x128xf16>
  tt.descriptor_store %c[%cr, %cn], %h : !tt.tensordesc<tensor<128x128xf16>>, tensor<128x128xf16>
  tt.return
}
