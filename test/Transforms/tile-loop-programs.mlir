// RUN: tawa-opt %s -split-input-file -verify-diagnostics -tawa-tile-loop-programs | FileCheck %s
// RUN: tawa-opt %s -split-input-file -verify-diagnostics -tawa-tile-loop-programs -tawa-persistent-programs | FileCheck %s --check-prefix=LOOP

// A kernel's own persistent walk (t = program_id(0) to T step S) becomes one
// program per tile: program q is tile q / g * S + q % g, g = min(#programs,
// S), over T / S * g + min(T % S, g) programs.
// CHECK-LABEL: tt.func @walk
// CHECK-NOT: scf.for %{{.*}} = %{{[0-9]+}} to %{{.*}} step %c132
// CHECK: %[[Q:[0-9]+]] = tt.get_program_id x
// CHECK: %[[N:[0-9]+]] = tt.get_num_programs x
// CHECK: %[[MIN:[0-9]+]] = arith.minsi %[[N]], %c132_i32
// CHECK: %[[G:[0-9]+]] = arith.maxsi %[[MIN]], %c1_i32
// CHECK-DAG: %[[R:[0-9]+]] = arith.remsi %[[Q]], %[[G]]
// CHECK-DAG: %[[D:[0-9]+]] = arith.divsi %[[Q]], %[[G]]
// CHECK: %[[DS:[0-9]+]] = arith.muli %[[D]], %c132_i32
// CHECK: %[[T:[0-9]+]] = arith.addi %[[DS]], %[[R]] {tawa.tile_index}
// CHECK: arith.addi {{.*}} {tawa.program_count}
// CHECK: arith.divsi %[[T]], %{{[0-9]+}}
// CHECK: scf.for
// CHECK: tt.dot
// CHECK: tt.descriptor_store
// CHECK-NEXT: tt.return

// The persistent loop walks the count, the tile index computed from the
// loop's index.
// LOOP-LABEL: tt.func @walk
// LOOP: %[[COUNT:[0-9]+]] = arith.addi {{.*}} {tawa.program_count}
// LOOP: %[[TOTAL0:[0-9]+]] = arith.muli %[[COUNT]], %arg7
// LOOP: %[[TOTAL:[0-9]+]] = arith.muli %[[TOTAL0]], %arg8
// LOOP: scf.for %{{.*}} = %{{.*}} to %[[TOTAL]] step
tt.func @walk(%a: !tt.tensordesc<tensor<128x64xf16>>, %b: !tt.tensordesc<tensor<128x64xf16>>, %c: !tt.tensordesc<tensor<128x128xf16>>, %M: i32, %N: i32, %K: i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c64 = arith.constant 64 : i32
  %c128 = arith.constant 128 : i32
  %c132 = arith.constant 132 : i32
  %zero = arith.constant dense<0.0> : tensor<128x128xf32>
  %start = tt.get_program_id x : i32
  %rows = arith.divsi %M, %c128 : i32
  %cols = arith.divsi %N, %c128 : i32
  %tiles = arith.muli %rows, %cols : i32
  %kt = arith.divsi %K, %c64 : i32
  scf.for %t = %start to %tiles step %c132 : i32 {
    %row = arith.divsi %t, %cols : i32
    %col = arith.remsi %t, %cols : i32
    %acc = scf.for %k = %c0 to %kt step %c1 iter_args(%x = %zero) -> (tensor<128x128xf32>) : i32 {
      %am = arith.muli %row, %c128 : i32
      %kk = arith.muli %k, %c64 : i32
      %ta = tt.descriptor_load %a[%am, %kk] : !tt.tensordesc<tensor<128x64xf16>> -> tensor<128x64xf16>
      %bn = arith.muli %col, %c128 : i32
      %tb = tt.descriptor_load %b[%bn, %kk] : !tt.tensordesc<tensor<128x64xf16>> -> tensor<128x64xf16>
      %bt = tt.trans %tb {order = array<i32: 1, 0>} : tensor<128x64xf16> -> tensor<64x128xf16>
      %d = tt.dot %ta, %bt, %x : tensor<128x64xf16> * tensor<64x128xf16> -> tensor<128x128xf32>
      scf.yield %d : tensor<128x128xf32>
    }
    %h = arith.truncf %acc : tensor<128x128xf32> to tensor<128x128xf16>
    %cm = arith.muli %row, %c128 : i32
    %cn = arith.muli %col, %c128 : i32
    tt.descriptor_store %c[%cm, %cn], %h : !tt.tensordesc<tensor<128x128xf16>>, tensor<128x128xf16>
  }
  tt.return
}

// -----

// A walk that carries a value from one tile to the next is not a set of
// independent programs.
// expected-error @+1 {{tawa-tile-loop-programs: the tile loop carries values from one tile to the next}}
tt.func @carried(%c: !tt.tensordesc<tensor<128x128xf16>>, %M: i32) {
  %c0 = arith.constant 0 : i32
  %c132 = arith.constant 132 : i32
  %h = arith.constant dense<0.0> : tensor<128x128xf16>
  %start = tt.get_program_id x : i32
  %r = scf.for %t = %start to %M step %c132 iter_args(%n = %c0) -> (i32) : i32 {
    tt.descriptor_store %c[%n, %c0], %h : !tt.tensordesc<tensor<128x128xf16>>, tensor<128x128xf16>
    %n1 = arith.addi %n, %c132 : i32
    scf.yield %n1 : i32
  }
  tt.return
}

// -----

// The program id read in the tile's body too: the programs would read the
// tile index there.
// expected-error @+1 {{tawa-tile-loop-programs: program_id(0) is read other than as the tile loop's start}}
tt.func @pid_in_body(%c: !tt.tensordesc<tensor<128x128xf16>>, %M: i32) {
  %c0 = arith.constant 0 : i32
  %c132 = arith.constant 132 : i32
  %h = arith.constant dense<0.0> : tensor<128x128xf16>
  %start = tt.get_program_id x : i32
  scf.for %t = %start to %M step %c132 : i32 {
    tt.descriptor_store %c[%start, %t], %h : !tt.tensordesc<tensor<128x128xf16>>, tensor<128x128xf16>
  }
  tt.return
}
