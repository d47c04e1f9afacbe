// RUN: tawa-opt %s -split-input-file -verify-diagnostics -tawa-program-pairing | FileCheck %s
// RUN: tawa-opt %s -split-input-file -verify-diagnostics -tawa-program-pairing -tawa-persistent-programs | FileCheck %s --check-prefix=LOOP

// Programs 2q and 2q + 1 of a batched GEMM: A's rows depend on x (one load
// each), B's do not (one load for both), the K loops become one loop with
// two accumulators, and the second program stores only inside the grid.
// CHECK-LABEL: tt.func @batched
// CHECK-SAME: tawa.paired_programs
// CHECK: %[[Q:[0-9]+]] = tt.get_program_id x
// CHECK: %[[X0:[0-9]+]] = arith.muli %[[Q]], %c2_i32
// CHECK: %[[X1:[0-9]+]] = arith.addi %[[X0]], %c1_i32
// CHECK: %[[NX:[0-9]+]] = tt.get_num_programs x
// CHECK: %[[IN:[0-9]+]] = arith.cmpi slt, %[[X1]], %[[NX]]
// CHECK-NOT: tt.get_program_id x
// CHECK: %[[R:[0-9]+]]:2 = scf.for {{.*}} iter_args(%[[ACC0:arg[0-9]+]] = %cst, %[[ACC1:arg[0-9]+]] = %cst) -> (tensor<128x128xf32>, tensor<128x128xf32>)
// CHECK-DAG: arith.muli %[[X0]], %c128_i32
// CHECK-DAG: arith.muli %[[X1]], %c128_i32
// CHECK: %[[A0:[0-9]+]] = tt.descriptor_load %arg0
// CHECK: %[[A1:[0-9]+]] = tt.descriptor_load %arg0
// CHECK: %[[B:[0-9]+]] = tt.descriptor_load %arg1
// CHECK-NOT: tt.descriptor_load
// CHECK: %[[BT:[0-9]+]] = tt.trans %[[B]]
// CHECK: %[[D0:[0-9]+]] = tt.dot %[[A0]], %[[BT]], %[[ACC0]]
// CHECK: %[[D1:[0-9]+]] = tt.dot %[[A1]], %[[BT]], %[[ACC1]]
// CHECK: scf.yield %[[D0]], %[[D1]]
// CHECK: %[[H0:[0-9]+]] = arith.truncf %[[R]]#0
// CHECK: tt.descriptor_store %arg2[{{.*}}], %[[H0]]
// CHECK: scf.if %[[IN]] {
// CHECK:   arith.muli %[[X1]], %c128_i32
// CHECK:   %[[H1:[0-9]+]] = arith.truncf %[[R]]#1
// CHECK:   tt.descriptor_store %arg2[{{.*}}], %[[H1]]
// CHECK: }
// CHECK-NEXT: tt.return

// The persistent loop walks ceil(nx / 2) * ny * nz pairs, x of a pair in
// [0, ceil(nx / 2)) (in groups of 8 along x: the kernel reads y).
// LOOP-LABEL: tt.func @batched
// LOOP: %[[HX:[0-9]+]] = arith.divsi {{.*}}, %c2_i32
// LOOP: %[[XY:[0-9]+]] = arith.muli %[[HX]], %arg7
// LOOP: scf.for %[[T:arg[0-9]+]] = {{.*}} to
// LOOP: arith.remsi %[[T]], %[[XY]]
// LOOP: arith.subi %[[HX]],
// LOOP: arith.cmpi slt, {{.*}}, %arg6
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

// A loop-carried value that does not depend on x (a running K offset) stays
// one iteration argument, so the B load that reads it is still shared.
// CHECK-LABEL: tt.func @shared_counter
// CHECK: scf.for {{.*}} iter_args(%{{[a-z0-9]+}} = %cst, %[[OFF:arg[0-9]+]] = %c0_i32, %{{[a-z0-9]+}} = %cst) -> (tensor<64x64xf32>, i32, tensor<64x64xf32>)
// CHECK-COUNT-2: tt.descriptor_load %arg0
// CHECK-NOT: tt.descriptor_load %arg0
// CHECK: tt.descriptor_load %arg1[%c0_i32, %[[OFF]]]
// CHECK-NOT: tt.descriptor_load
// CHECK: scf.yield
tt.func @shared_counter(%a: !tt.tensordesc<tensor<64x64xf16>>, %b: !tt.tensordesc<tensor<64x64xf16>>, %c: !tt.tensordesc<tensor<64x64xf32>>, %K: i32) {
  %c0 = arith.constant 0 : i32
  %c64 = arith.constant 64 : i32
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %pm = tt.get_program_id x : i32
  %row = arith.muli %pm, %c64 : i32
  %r:2 = scf.for %k = %c0 to %K step %c64 iter_args(%x = %zero, %off = %c0) -> (tensor<64x64xf32>, i32) : i32 {
    %ta = tt.descriptor_load %a[%row, %off] : !tt.tensordesc<tensor<64x64xf16>> -> tensor<64x64xf16>
    %tb = tt.descriptor_load %b[%c0, %off] : !tt.tensordesc<tensor<64x64xf16>> -> tensor<64x64xf16>
    %d = tt.dot %ta, %tb, %x : tensor<64x64xf16> * tensor<64x64xf16> -> tensor<64x64xf32>
    %next = arith.addi %off, %c64 : i32
    scf.yield %d, %next : tensor<64x64xf32>, i32
  }
  tt.descriptor_store %c[%row, %c0], %r#0 : !tt.tensordesc<tensor<64x64xf32>>, tensor<64x64xf32>
  tt.return
}

// -----

// expected-error @below {{cannot pair programs: the kernel does not read program_id(0)}}
tt.func @no_program_id(%a: !tt.tensordesc<tensor<64x64xf16>>, %c: !tt.tensordesc<tensor<64x64xf32>>, %K: i32) {
  %c0 = arith.constant 0 : i32
  %c64 = arith.constant 64 : i32
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %r = scf.for %k = %c0 to %K step %c64 iter_args(%x = %zero) -> (tensor<64x64xf32>) : i32 {
    %t = tt.descriptor_load %a[%c0, %k] : !tt.tensordesc<tensor<64x64xf16>> -> tensor<64x64xf16>
    %d = tt.dot %t, %t, %x : tensor<64x64xf16> * tensor<64x64xf16> -> tensor<64x64xf32>
    scf.yield %d : tensor<64x64xf32>
  }
  tt.descriptor_store %c[%c0, %c0], %r : !tt.tensordesc<tensor<64x64xf32>>, tensor<64x64xf32>
  tt.return
}

// -----

// Both tiles depend on x: nothing to share.
tt.func @nothing_shared(%a: !tt.tensordesc<tensor<64x64xf16>>, %c: !tt.tensordesc<tensor<64x64xf32>>, %K: i32) {
  %c0 = arith.constant 0 : i32
  %c64 = arith.constant 64 : i32
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %pm = tt.get_program_id x : i32
  %row = arith.muli %pm, %c64 : i32
  // expected-error @below {{cannot pair programs: every tile the K loop loads depends on program_id(0): the pair would share none}}
  %r = scf.for %k = %c0 to %K step %c64 iter_args(%x = %zero) -> (tensor<64x64xf32>) : i32 {
    %t = tt.descriptor_load %a[%row, %k] : !tt.tensordesc<tensor<64x64xf16>> -> tensor<64x64xf16>
    %d = tt.dot %t, %t, %x : tensor<64x64xf16> * tensor<64x64xf16> -> tensor<64x64xf32>
    scf.yield %d : tensor<64x64xf32>
  }
  tt.descriptor_store %c[%row, %c0], %r : !tt.tensordesc<tensor<64x64xf32>>, tensor<64x64xf32>
  tt.return
}

// -----

// The trip count would differ between the two programs.
tt.func @bound_depends_on_x(%a: !tt.tensordesc<tensor<64x64xf16>>, %b: !tt.tensordesc<tensor<64x64xf16>>, %c: !tt.tensordesc<tensor<64x64xf32>>) {
  %c0 = arith.constant 0 : i32
  %c64 = arith.constant 64 : i32
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %pm = tt.get_program_id x : i32
  %row = arith.muli %pm, %c64 : i32
  // expected-error @below {{cannot pair programs: the K loop's bounds depend on program_id(0)}}
  %r = scf.for %k = %c0 to %row step %c64 iter_args(%x = %zero) -> (tensor<64x64xf32>) : i32 {
    %t = tt.descriptor_load %a[%row, %k] : !tt.tensordesc<tensor<64x64xf16>> -> tensor<64x64xf16>
    %u = tt.descriptor_load %b[%c0, %k] : !tt.tensordesc<tensor<64x64xf16>> -> tensor<64x64xf16>
    %d = tt.dot %t, %u, %x : tensor<64x64xf16> * tensor<64x64xf16> -> tensor<64x64xf32>
    scf.yield %d : tensor<64x64xf32>
  }
  tt.descriptor_store %c[%row, %c0], %r : !tt.tensordesc<tensor<64x64xf32>>, tensor<64x64xf32>
  tt.return
}

// -----

// A store in the K loop would run for a second program past the grid.
tt.func @store_in_loop(%a: !tt.tensordesc<tensor<64x64xf16>>, %b: !tt.tensordesc<tensor<64x64xf16>>, %c: !tt.tensordesc<tensor<64x64xf32>>, %K: i32) {
  %c0 = arith.constant 0 : i32
  %c64 = arith.constant 64 : i32
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %pm = tt.get_program_id x : i32
  %row = arith.muli %pm, %c64 : i32
  // expected-error @below {{cannot pair programs: the K loop writes memory}}
  %r = scf.for %k = %c0 to %K step %c64 iter_args(%x = %zero) -> (tensor<64x64xf32>) : i32 {
    %t = tt.descriptor_load %a[%row, %k] : !tt.tensordesc<tensor<64x64xf16>> -> tensor<64x64xf16>
    %u = tt.descriptor_load %b[%c0, %k] : !tt.tensordesc<tensor<64x64xf16>> -> tensor<64x64xf16>
    %d = tt.dot %t, %u, %x : tensor<64x64xf16> * tensor<64x64xf16> -> tensor<64x64xf32>
    tt.descriptor_store %c[%row, %k], %d : !tt.tensordesc<tensor<64x64xf32>>, tensor<64x64xf32>
    scf.yield %d : tensor<64x64xf32>
  }
  tt.return
}

// -----

// A kernel that walks program ids itself (the user's persistent GEMM).
// expected-error @below {{cannot pair programs: the kernel walks program ids itself}}
tt.func @walks_itself(%a: !tt.tensordesc<tensor<64x64xf16>>, %b: !tt.tensordesc<tensor<64x64xf16>>, %c: !tt.tensordesc<tensor<64x64xf32>>, %K: i32, %T: i32) {
  %c0 = arith.constant 0 : i32
  %c64 = arith.constant 64 : i32
  %c132 = arith.constant 132 : i32
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %pm = tt.get_program_id x : i32
  scf.for %tile = %pm to %T step %c132 : i32 {
    %row = arith.muli %tile, %c64 : i32
    %r = scf.for %k = %c0 to %K step %c64 iter_args(%x = %zero) -> (tensor<64x64xf32>) : i32 {
      %t = tt.descriptor_load %a[%row, %k] : !tt.tensordesc<tensor<64x64xf16>> -> tensor<64x64xf16>
      %u = tt.descriptor_load %b[%c0, %k] : !tt.tensordesc<tensor<64x64xf16>> -> tensor<64x64xf16>
      %d = tt.dot %t, %u, %x : tensor<64x64xf16> * tensor<64x64xf16> -> tensor<64x64xf32>
      scf.yield %d : tensor<64x64xf32>
    }
    tt.descriptor_store %c[%row, %c0], %r : !tt.tensordesc<tensor<64x64xf32>>, tensor<64x64xf32>
  }
  tt.return
}

// -----

// A store that does not depend on x would run once for both programs,
// before the second one's own stores.
tt.func @shared_store(%a: !tt.tensordesc<tensor<64x64xf16>>, %b: !tt.tensordesc<tensor<64x64xf16>>, %c: !tt.tensordesc<tensor<64x64xf32>>, %K: i32) {
  %c0 = arith.constant 0 : i32
  %c64 = arith.constant 64 : i32
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %pm = tt.get_program_id x : i32
  %row = arith.muli %pm, %c64 : i32
  %r = scf.for %k = %c0 to %K step %c64 iter_args(%x = %zero) -> (tensor<64x64xf32>) : i32 {
    %t = tt.descriptor_load %a[%row, %k] : !tt.tensordesc<tensor<64x64xf16>> -> tensor<64x64xf16>
    %u = tt.descriptor_load %b[%c0, %k] : !tt.tensordesc<tensor<64x64xf16>> -> tensor<64x64xf16>
    %d = tt.dot %t, %u, %x : tensor<64x64xf16> * tensor<64x64xf16> -> tensor<64x64xf32>
    scf.yield %d : tensor<64x64xf32>
  }
  tt.descriptor_store %c[%row, %c0], %r : !tt.tensordesc<tensor<64x64xf32>>, tensor<64x64xf32>
  // expected-error @below {{cannot pair programs: a store after the K loop does not depend on program_id(0)}}
  tt.descriptor_store %c[%c0, %c0], %zero : !tt.tensordesc<tensor<64x64xf32>>, tensor<64x64xf32>
  tt.return
}
