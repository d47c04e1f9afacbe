// RUN: tawa-opt %s -split-input-file -tawa-tile-swizzle | FileCheck %s
// RUN: tawa-opt %s -split-input-file -tawa-tile-swizzle=group-rows=1 | FileCheck %s --check-prefix=OFF

// A persistent row-major tile walk: the tile's row and column come from
// groups of 8 rows when the grid covers the walk (S > 0, #programs >= S,
// R, C >= 1, C <= 2^27), else from the user's split.
// CHECK-LABEL: tt.func @for_walk
// CHECK-SAME: tawa.tile_swizzle = 8 : i64
// CHECK: %[[R:[0-9]+]] = arith.divsi {{.*}}, %c128_i32
// CHECK: %[[C:[0-9]+]] = arith.divsi {{.*}}, %c256_i32
// CHECK: %[[P:[0-9]+]] = tt.get_num_programs x
// CHECK: %[[G1:[0-9]+]] = arith.cmpi sge, %c132_i32, %c1_i32
// CHECK: %[[G2:[0-9]+]] = arith.cmpi sge, %[[P]], %c132_i32
// CHECK: %[[G3:[0-9]+]] = arith.cmpi sge, %[[R]], %c1_i32
// CHECK: %[[G4:[0-9]+]] = arith.cmpi sge, %[[C]], %c1_i32
// CHECK: %[[G5:[0-9]+]] = arith.cmpi sge, %c134217728_i32, %[[C]]
// CHECK: %[[OK:[0-9]+]] = arith.andi {{.*}}, %[[G5]]
// CHECK: %[[SR:[0-9]+]] = arith.select %[[OK]], %[[R]], %c1_i32
// CHECK: %[[SC:[0-9]+]] = arith.select %[[OK]], %[[C]], %c1_i32
// CHECK: %[[W:[0-9]+]] = arith.muli %[[SC]], %c8_i32
// CHECK: scf.for %[[T:arg[0-9]+]] =
// CHECK: %[[FM0:[0-9]+]] = arith.divsi %[[T]], %[[W]]
// CHECK: %[[FM:[0-9]+]] = arith.muli %[[FM0]], %c8_i32
// CHECK: %[[LEFT:[0-9]+]] = arith.subi %[[SR]], %[[FM]]
// CHECK: %[[H0:[0-9]+]] = arith.minsi %[[LEFT]], %c8_i32
// CHECK: %[[H:[0-9]+]] = arith.maxsi %[[H0]], %c1_i32
// CHECK: %[[IN:[0-9]+]] = arith.remsi %[[T]], %[[W]]
// CHECK: %[[RR:[0-9]+]] = arith.remsi %[[IN]], %[[H]]
// CHECK: %[[SWM:[0-9]+]] = arith.addi %[[FM]], %[[RR]]
// CHECK: %[[SWN:[0-9]+]] = arith.divsi %[[IN]], %[[H]]
// CHECK: %[[UM:[0-9]+]] = arith.divsi %[[T]], %[[C]]
// CHECK: %[[UN:[0-9]+]] = arith.remsi %[[T]], %[[C]]
// CHECK: %[[M:[0-9]+]] = arith.select %[[OK]], %[[SWM]], %[[UM]]
// CHECK: %[[N:[0-9]+]] = arith.select %[[OK]], %[[SWN]], %[[UN]]
// CHECK: arith.muli %[[M]], %c128_i32
// CHECK: arith.muli %[[N]], %c256_i32
// OFF-LABEL: tt.func @for_walk
// OFF-NOT: tile_swizzle
// OFF-NOT: arith.select
tt.func @for_walk(%a: !tt.tensordesc<tensor<128x64xf16>>, %b: !tt.tensordesc<tensor<256x64xf16>>, %c: !tt.tensordesc<tensor<128x256xf16>>, %M: i32, %N: i32, %K: i32) {
  %zero = arith.constant dense<0.0> : tensor<128x256xf32>
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c64 = arith.constant 64 : i32
  %c128 = arith.constant 128 : i32
  %c132 = arith.constant 132 : i32
  %c256 = arith.constant 256 : i32
  %start = tt.get_program_id x : i32
  %nm = arith.divsi %M, %c128 : i32
  %nn = arith.divsi %N, %c256 : i32
  %kt = arith.divsi %K, %c64 : i32
  %nt = arith.muli %nm, %nn : i32
  scf.for %tile = %start to %nt step %c132 : i32 {
    %pm = arith.divsi %tile, %nn : i32
    %pn = arith.remsi %tile, %nn : i32
    %acc = scf.for %k = %c0 to %kt step %c1 iter_args(%x = %zero) -> (tensor<128x256xf32>) : i32 {
      %am = arith.muli %pm, %c128 : i32
      %kk = arith.muli %k, %c64 : i32
      %ta = tt.descriptor_load %a[%am, %kk] : !tt.tensordesc<tensor<128x64xf16>> -> tensor<128x64xf16>
      %bn = arith.muli %pn, %c256 : i32
      %tb = tt.descriptor_load %b[%bn, %kk] : !tt.tensordesc<tensor<256x64xf16>> -> tensor<256x64xf16>
      %bt = tt.trans %tb {order = array<i32: 1, 0>} : tensor<256x64xf16> -> tensor<64x256xf16>
      %d = tt.dot %ta, %bt, %x : tensor<128x64xf16> * tensor<64x256xf16> -> tensor<128x256xf32>
      scf.yield %d : tensor<128x256xf32>
    }
    %om = arith.muli %pm, %c128 : i32
    %on = arith.muli %pn, %c256 : i32
    %h = arith.truncf %acc : tensor<128x256xf32> to tensor<128x256xf16>
    tt.descriptor_store %c[%om, %on], %h : !tt.tensordesc<tensor<128x256xf16>>, tensor<128x256xf16>
  }
  tt.return
}

// -----

// Triton's grouped-GEMM idiom: one scf.while per window of a loop over
// windows. The loop over windows carries a flag (every earlier window's
// size >= 0, its end not wrapped) that joins the guard.
// CHECK-LABEL: tt.func @while_walk
// CHECK-SAME: tawa.tile_swizzle = 8 : i64
// CHECK: %[[T0:[0-9]+]] = tt.get_program_id x
// CHECK: %[[W:[0-9]+]]:3 = scf.for %{{.*}} iter_args(%[[TILE:arg[0-9]+]] = %[[T0]], %[[LAST:arg[0-9]+]] = %c0_i32, %[[MONO:arg[0-9]+]] = %true)
// CHECK: %[[NT:[0-9]+]] = arith.muli %[[NM:[0-9]+]], %[[NN:[0-9]+]]
// CHECK: tt.get_num_programs x
// CHECK: %[[OK:[0-9]+]] = arith.andi {{.*}}, %[[MONO]]
// CHECK: %[[RES:[0-9]+]] = scf.while
// CHECK: arith.subi
// CHECK: arith.select %[[OK]]
// CHECK: arith.select %[[OK]]
// CHECK: %[[END:[0-9]+]] = arith.addi %[[LAST]], %[[NT]]
// CHECK: %[[END2:[0-9]+]] = arith.addi %[[LAST]], %[[NT]]
// CHECK: %[[SIZED:[0-9]+]] = arith.cmpi sge, %[[NT]], %c0_i32
// CHECK: %[[NOWRAP:[0-9]+]] = arith.cmpi sge, %[[END2]], %[[LAST]]
// CHECK: %[[BOTH:[0-9]+]] = arith.andi %[[SIZED]], %[[NOWRAP]]
// CHECK: %[[NEXT:[0-9]+]] = arith.andi %[[MONO]], %[[BOTH]]
// CHECK: scf.yield %[[RES]], %[[END]], %[[NEXT]]
// OFF-LABEL: tt.func @while_walk
// OFF-NOT: arith.select
tt.func @while_walk(%a: !tt.tensordesc<tensor<128x64xf16>>, %b: !tt.tensordesc<tensor<128x64xf16>>, %c: !tt.tensordesc<tensor<128x128xf16>>, %sizes: !tt.ptr<i32>, %G: i32) {
  %zero = arith.constant dense<0.0> : tensor<128x128xf32>
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c64 = arith.constant 64 : i32
  %c128 = arith.constant 128 : i32
  %c132 = arith.constant 132 : i32
  %tile = tt.get_program_id x : i32
  %r:2 = scf.for %g = %c0 to %G step %c1 iter_args(%t0 = %tile, %last = %c0) -> (i32, i32) : i32 {
    %p = tt.addptr %sizes, %g : !tt.ptr<i32>, i32
    %m = tt.load %p : !tt.ptr<i32>
    %nm = arith.divsi %m, %c128 : i32
    %nn = arith.divsi %m, %c128 : i32
    %nt = arith.muli %nm, %nn : i32
    %w = scf.while (%x = %t0) : (i32) -> i32 {
      %lo = arith.cmpi sge, %x, %last : i32
      %end = arith.addi %last, %nt : i32
      %hi = arith.cmpi slt, %x, %end : i32
      %in = arith.andi %lo, %hi : i1
      scf.condition(%in) %x : i32
    } do {
    ^bb0(%x: i32):
      %t = arith.subi %x, %last : i32
      %pm = arith.divsi %t, %nn : i32
      %pn = arith.remsi %t, %nn : i32
      %am = arith.muli %pm, %c128 : i32
      %ta = tt.descriptor_load %a[%am, %c0] : !tt.tensordesc<tensor<128x64xf16>> -> tensor<128x64xf16>
      %bn = arith.muli %pn, %c128 : i32
      %tb = tt.descriptor_load %b[%bn, %c0] : !tt.tensordesc<tensor<128x64xf16>> -> tensor<128x64xf16>
      %bt = tt.trans %tb {order = array<i32: 1, 0>} : tensor<128x64xf16> -> tensor<64x128xf16>
      %d = tt.dot %ta, %bt, %zero : tensor<128x64xf16> * tensor<64x128xf16> -> tensor<128x128xf32>
      %h = arith.truncf %d : tensor<128x128xf32> to tensor<128x128xf16>
      tt.descriptor_store %c[%am, %bn], %h : !tt.tensordesc<tensor<128x128xf16>>, tensor<128x128xf16>
      %nx = arith.addi %x, %c132 : i32
      scf.yield %nx : i32
    }
    %nl = arith.addi %last, %nt : i32
    scf.yield %w, %nl : i32, i32
  }
  tt.return
}

// -----

// Left as written: a store whose block is not the tile's (two tiles
// overlap: rows scaled by 64 for a 128-row block).
// CHECK-LABEL: tt.func @overlapping_store
// CHECK-NOT: tile_swizzle
// CHECK-NOT: arith.select
tt.func @overlapping_store(%c: !tt.tensordesc<tensor<128x128xf16>>, %n: i32) {
  %c64 = arith.constant 64 : i32
  %c128 = arith.constant 128 : i32
  %c132 = arith.constant 132 : i32
  %v = arith.constant dense<0.0> : tensor<128x128xf16>
  %start = tt.get_program_id x : i32
  %nt = arith.muli %n, %n : i32
  scf.for %tile = %start to %nt step %c132 : i32 {
    %pm = arith.divsi %tile, %n : i32
    %pn = arith.remsi %tile, %n : i32
    %om = arith.muli %pm, %c64 : i32
    %on = arith.muli %pn, %c128 : i32
    tt.descriptor_store %c[%om, %on], %v : !tt.tensordesc<tensor<128x128xf16>>, tensor<128x128xf16>
  }
  tt.return
}

// -----

// Left as written: the tile index has another use (its value would no
// longer match the tile's row and column).
// CHECK-LABEL: tt.func @index_used
// CHECK-NOT: tile_swizzle
tt.func @index_used(%c: !tt.tensordesc<tensor<128x128xf16>>, %n: i32, %out: !tt.ptr<i32>) {
  %c128 = arith.constant 128 : i32
  %c132 = arith.constant 132 : i32
  %v = arith.constant dense<0.0> : tensor<128x128xf16>
  %start = tt.get_program_id x : i32
  %nt = arith.muli %n, %n : i32
  scf.for %tile = %start to %nt step %c132 : i32 {
    %pm = arith.divsi %tile, %n : i32
    %pn = arith.remsi %tile, %n : i32
    %om = arith.muli %pm, %c128 : i32
    %on = arith.muli %pn, %c128 : i32
    %x = arith.addi %tile, %c128 : i32
    %y = arith.muli %x, %c128 : i32
    tt.descriptor_store %c[%om, %y], %v : !tt.tensordesc<tensor<128x128xf16>>, tensor<128x128xf16>
  }
  tt.return
}

// -----

// Left as written: a store through a pointer (not one block per tile).
// CHECK-LABEL: tt.func @pointer_store
// CHECK-NOT: tile_swizzle
tt.func @pointer_store(%c: !tt.tensordesc<tensor<128x128xf16>>, %n: i32, %out: !tt.ptr<i32>) {
  %c128 = arith.constant 128 : i32
  %c132 = arith.constant 132 : i32
  %v = arith.constant dense<0.0> : tensor<128x128xf16>
  %start = tt.get_program_id x : i32
  %nt = arith.muli %n, %n : i32
  scf.for %tile = %start to %nt step %c132 : i32 {
    %pm = arith.divsi %tile, %n : i32
    %pn = arith.remsi %tile, %n : i32
    %om = arith.muli %pm, %c128 : i32
    %on = arith.muli %pn, %c128 : i32
    tt.store %out, %pm : !tt.ptr<i32>
    tt.descriptor_store %c[%om, %on], %v : !tt.tensordesc<tensor<128x128xf16>>, tensor<128x128xf16>
  }
  tt.return
}

// -----

// Left as written: the walk does not start at program_id(x) (the grid
// cannot be shown to cover it).
// CHECK-LABEL: tt.func @offset_start
// CHECK-NOT: tile_swizzle
tt.func @offset_start(%c: !tt.tensordesc<tensor<128x128xf16>>, %n: i32) {
  %c1 = arith.constant 1 : i32
  %c128 = arith.constant 128 : i32
  %c132 = arith.constant 132 : i32
  %v = arith.constant dense<0.0> : tensor<128x128xf16>
  %pid = tt.get_program_id x : i32
  %start = arith.addi %pid, %c1 : i32
  %nt = arith.muli %n, %n : i32
  scf.for %tile = %start to %nt step %c132 : i32 {
    %pm = arith.divsi %tile, %n : i32
    %pn = arith.remsi %tile, %n : i32
    %om = arith.muli %pm, %c128 : i32
    %on = arith.muli %pn, %c128 : i32
    tt.descriptor_store %c[%om, %on], %v : !tt.tensordesc<tensor<128x128xf16>>, tensor<128x128xf16>
  }
  tt.return
}
