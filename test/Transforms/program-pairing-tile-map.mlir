// RUN: tawa-opt %s -split-input-file -verify-diagnostics -tawa-program-pairing=axis=y | FileCheck %s
// RUN: tawa-opt %s -split-input-file -verify-diagnostics -tawa-program-pairing=axis=y -tawa-persistent-programs | FileCheck %s --check-prefix=LOOP
// RUN: tawa-opt %s -split-input-file -tawa-program-pairing=axis=auto | FileCheck %s --check-prefix=AUTO

// A 1-D grid in Triton's grouped order (the tutorial GEMM after the
// pointer-tile rewrite: the row is used as group * G * BM + in * BM). Pairs
// along the column B reads: pair q is tiles (s, 2c) and (s, 2c + 1) of the
// R x ceil(C / 2) rectangle of pairs, in groups of the kernel's 8 rows,
// where the launch is R * C programs of one axis; else the kernel's own
// map, the second store off.
// CHECK-LABEL: tt.func @grouped
// CHECK-SAME: tawa.paired_programs = 1 : i32
// CHECK: %[[PID:[0-9]+]] = tt.get_program_id x
// CHECK: %[[R:[0-9]+]] = arith.divsi {{.*}}, %c128_i32
// CHECK: %[[C:[0-9]+]] = arith.divsi {{.*}}, %c128_i32
// CHECK: %[[GROUP:[0-9]+]] = arith.divsi %[[PID]], %[[WIDTH:[0-9]+]]
// CHECK: %[[FIRST:[0-9]+]] = arith.muli %[[GROUP]], %c8_i32
// CHECK: %[[HEIGHT:[0-9]+]] = arith.minsi
// CHECK: %[[REM:[0-9]+]] = arith.remsi %[[PID]], %[[WIDTH]]
// CHECK: %[[IN:[0-9]+]] = arith.remsi %[[REM]], %[[HEIGHT]]
// CHECK: %[[COL:[0-9]+]] = arith.divsi %[[REM]], %[[HEIGHT]]
// CHECK: %[[Q:[0-9]+]] = tt.get_program_id x
// CHECK: %[[NX:[0-9]+]] = tt.get_num_programs x
// CHECK: %[[HALF:[0-9]+]] = arith.divsi {{.*}}, %c2_i32
// CHECK: %[[RC:[0-9]+]] = arith.muli %[[R]], %[[C]]
// CHECK: %[[LAUNCH:[0-9]+]] = arith.cmpi eq, %[[NX]], %[[RC]]
// CHECK: %[[OK:[0-9]+]] = arith.andi %[[LAUNCH]],
// CHECK: %[[PAIRS:[0-9]+]] = arith.muli %[[R]], %[[HALF]]
// CHECK: arith.select %[[OK]], %[[PAIRS]], %[[NX]] {tawa.program_count}
// CHECK: %[[NGROUP:[0-9]+]] = arith.divsi %[[Q]],
// CHECK: %[[NREM:[0-9]+]] = arith.remsi %[[Q]],
// CHECK: %[[NIN:[0-9]+]] = arith.remsi %[[NREM]],
// CHECK: %[[NC:[0-9]+]] = arith.divsi %[[NREM]],
// CHECK: %[[N0:[0-9]+]] = arith.muli %[[NC]], %c2_i32
// CHECK: %[[G:[0-9]+]] = arith.select %[[OK]], %[[NGROUP]], %[[GROUP]]
// CHECK: arith.select %[[OK]], {{.*}}, %[[FIRST]]
// CHECK: %[[I:[0-9]+]] = arith.select %[[OK]], %[[NIN]], %[[IN]]
// CHECK: %[[X0:[0-9]+]] = arith.select %[[OK]], %[[N0]], %[[COL]]
// CHECK: %[[X1:[0-9]+]] = arith.addi %[[X0]], %c1_i32
// CHECK: %[[INSIDE:[0-9]+]] = arith.cmpi slt, %[[X1]], %[[C]]
// CHECK: %[[SECOND:[0-9]+]] = arith.andi %[[OK]], %[[INSIDE]]
// CHECK: scf.for {{.*}} -> (tensor<128x128xf32>, tensor<128x128xf32>)
// CHECK:   arith.muli %[[G]], %c1024_i32
// CHECK:   arith.muli %[[I]], %c128_i32
// CHECK:   tt.descriptor_load %arg0
// CHECK:   tt.descriptor_load %arg1
// CHECK:   tt.descriptor_load %arg1
// CHECK-NOT: tt.descriptor_load
// CHECK:   tt.dot
// CHECK:   tt.dot
// CHECK: tt.descriptor_store %arg2
// CHECK: scf.if %[[SECOND]] {
// CHECK:   arith.muli %[[X1]], %c128_i32
// CHECK:   tt.descriptor_store %arg2
// CHECK: }

// The persistent loop walks the count (rebuilt before it from the grid
// arguments), not the launch's programs.
// LOOP-LABEL: tt.func @grouped
// LOOP: %[[COUNT:[0-9]+]] = arith.select {{.*}} {tawa.program_count}
// LOOP: %[[TOTAL0:[0-9]+]] = arith.muli %[[COUNT]], %arg7
// LOOP: %[[TOTAL:[0-9]+]] = arith.muli %[[TOTAL0]], %arg8
// LOOP: scf.for %{{.*}} = %{{.*}} to %[[TOTAL]] step

// AUTO-LABEL: tt.func @grouped
// AUTO-SAME: tawa.paired_programs = 1 : i32
tt.func @grouped(%a: !tt.tensordesc<tensor<128x64xf16>>, %b: !tt.tensordesc<tensor<64x128xf16>>, %c: !tt.tensordesc<tensor<128x128xf16>>, %M: i32, %N: i32, %K: i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c8 = arith.constant 8 : i32
  %c63 = arith.constant 63 : i32
  %c64 = arith.constant 64 : i32
  %c127 = arith.constant 127 : i32
  %c128 = arith.constant 128 : i32
  %c1024 = arith.constant 1024 : i32
  %zero = arith.constant dense<0.0> : tensor<128x128xf32>
  %pid = tt.get_program_id x : i32
  %m1 = arith.addi %M, %c127 : i32
  %rows = arith.divsi %m1, %c128 : i32
  %n1 = arith.addi %N, %c127 : i32
  %cols = arith.divsi %n1, %c128 : i32
  %width = arith.muli %cols, %c8 : i32
  %group = arith.divsi %pid, %width : i32
  %first = arith.muli %group, %c8 : i32
  %left = arith.subi %rows, %first : i32
  %height = arith.minsi %left, %c8 : i32
  %rem = arith.remsi %pid, %width : i32
  %in = arith.remsi %rem, %height : i32
  %col = arith.divsi %rem, %height : i32
  %k1 = arith.addi %K, %c63 : i32
  %kt = arith.divsi %k1, %c64 : i32
  %acc = scf.for %k = %c0 to %kt step %c1 iter_args(%x = %zero) -> (tensor<128x128xf32>) : i32 {
    %ag = arith.muli %group, %c1024 : i32
    %ai = arith.muli %in, %c128 : i32
    %ar = arith.addi %ag, %ai : i32
    %kk = arith.muli %k, %c64 : i32
    %ta = tt.descriptor_load %a[%ar, %kk] : !tt.tensordesc<tensor<128x64xf16>> -> tensor<128x64xf16>
    %bn = arith.muli %col, %c128 : i32
    %tb = tt.descriptor_load %b[%kk, %bn] : !tt.tensordesc<tensor<64x128xf16>> -> tensor<64x128xf16>
    %d = tt.dot %ta, %tb, %x : tensor<128x64xf16> * tensor<64x128xf16> -> tensor<128x128xf32>
    scf.yield %d : tensor<128x128xf32>
  }
  %h = arith.truncf %acc : tensor<128x128xf32> to tensor<128x128xf16>
  %cg = arith.muli %group, %c1024 : i32
  %ci = arith.muli %in, %c128 : i32
  %cr = arith.addi %cg, %ci : i32
  %cn = arith.muli %col, %c128 : i32
  tt.descriptor_store %c[%cr, %cn], %h : !tt.tensordesc<tensor<128x128xf16>>, tensor<128x128xf16>
  tt.return
}

// -----

// The grouped order as the user wrote it (row = first + in); B stored
// [N, K] and transposed.
// CHECK-LABEL: tt.func @grouped_row
// CHECK-SAME: tawa.paired_programs = 1 : i32
// CHECK: %[[ROW:[0-9]+]] = arith.addi %{{[0-9]+}}, %{{[0-9]+}}
// CHECK: %[[COL:[0-9]+]] = arith.divsi
// CHECK: %[[OK:[0-9]+]] = arith.andi
// CHECK: %[[NROW:[0-9]+]] = arith.addi
// CHECK: %[[X0:[0-9]+]] = arith.select %[[OK]], %{{[0-9]+}}, %[[COL]]
// CHECK: %[[ROW2:[0-9]+]] = arith.select %[[OK]], %[[NROW]], %[[ROW]]
// CHECK: scf.for
// CHECK:   arith.muli %[[ROW2]], %c128_i32
// CHECK:   tt.descriptor_load %arg0
// CHECK:   arith.muli %[[X0]], %c128_i32
// CHECK:   tt.descriptor_load %arg1
// CHECK:   tt.descriptor_load %arg1
tt.func @grouped_row(%a: !tt.tensordesc<tensor<128x64xf16>>, %b: !tt.tensordesc<tensor<128x64xf16>>, %c: !tt.tensordesc<tensor<128x128xf16>>, %M: i32, %N: i32, %K: i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c4 = arith.constant 4 : i32
  %c64 = arith.constant 64 : i32
  %c128 = arith.constant 128 : i32
  %zero = arith.constant dense<0.0> : tensor<128x128xf32>
  %pid = tt.get_program_id x : i32
  %rows = arith.divsi %M, %c128 : i32
  %cols = arith.divsi %N, %c128 : i32
  %width = arith.muli %c4, %cols : i32
  %group = arith.divsi %pid, %width : i32
  %first = arith.muli %c4, %group : i32
  %left = arith.subi %rows, %first : i32
  %height = arith.minsi %c4, %left : i32
  %rem = arith.remsi %pid, %width : i32
  %in = arith.remsi %rem, %height : i32
  %row = arith.addi %first, %in : i32
  %col = arith.divsi %rem, %height : i32
  %kt = arith.divsi %K, %c64 : i32
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
  tt.return
}

// -----

// Row-major (row = pid / C, col = pid % C): paired along the remainder, the
// rows counted as the launch's programs / C.
// CHECK-LABEL: tt.func @row_major
// CHECK-SAME: tawa.paired_programs = 1 : i32
// CHECK: %[[ROW:[0-9]+]] = arith.divsi %[[PID:[0-9]+]], %[[C:[0-9]+]]
// CHECK: %[[COL:[0-9]+]] = arith.remsi %[[PID]], %[[C]]
// CHECK: %[[NX:[0-9]+]] = tt.get_num_programs x
// CHECK: %[[SAFE:[0-9]+]] = arith.maxsi %[[C]], %c1_i32
// CHECK: %[[R:[0-9]+]] = arith.divsi %[[NX]], %[[SAFE]]
// CHECK: arith.muli %[[R]], %[[C]]
// CHECK: %[[X0:[0-9]+]] = arith.select %{{.*}}, %{{.*}}, %[[COL]]
// CHECK: arith.addi %[[X0]], %c1_i32
// AUTO-LABEL: tt.func @row_major
// AUTO-SAME: tawa.paired_programs = 1 : i32
tt.func @row_major(%a: !tt.tensordesc<tensor<128x64xf16>>, %b: !tt.tensordesc<tensor<64x128xf16>>, %c: !tt.tensordesc<tensor<128x128xf16>>, %M: i32, %N: i32, %K: i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c64 = arith.constant 64 : i32
  %c128 = arith.constant 128 : i32
  %zero = arith.constant dense<0.0> : tensor<128x128xf32>
  %pid = tt.get_program_id x : i32
  %cols = arith.divsi %N, %c128 : i32
  %row = arith.divsi %pid, %cols : i32
  %col = arith.remsi %pid, %cols : i32
  %kt = arith.divsi %K, %c64 : i32
  %acc = scf.for %k = %c0 to %kt step %c1 iter_args(%x = %zero) -> (tensor<128x128xf32>) : i32 {
    %am = arith.muli %row, %c128 : i32
    %kk = arith.muli %k, %c64 : i32
    %ta = tt.descriptor_load %a[%am, %kk] : !tt.tensordesc<tensor<128x64xf16>> -> tensor<128x64xf16>
    %bn = arith.muli %col, %c128 : i32
    %tb = tt.descriptor_load %b[%kk, %bn] : !tt.tensordesc<tensor<64x128xf16>> -> tensor<64x128xf16>
    %d = tt.dot %ta, %tb, %x : tensor<128x64xf16> * tensor<64x128xf16> -> tensor<128x128xf32>
    scf.yield %d : tensor<128x128xf32>
  }
  %h = arith.truncf %acc : tensor<128x128xf32> to tensor<128x128xf16>
  %cm = arith.muli %row, %c128 : i32
  %cn = arith.muli %col, %c128 : i32
  tt.descriptor_store %c[%cm, %cn], %h : !tt.tensordesc<tensor<128x128xf16>>, tensor<128x128xf16>
  tt.return
}

// -----

// Column-major (row = pid % R, col = pid / R): paired along the quotient,
// the columns counted as the launch's programs / R.
// CHECK-LABEL: tt.func @column_major
// CHECK-SAME: tawa.paired_programs = 1 : i32
// CHECK: %[[COL:[0-9]+]] = arith.divsi %[[PID:[0-9]+]], %[[R:[0-9]+]]
// CHECK: %[[ROW:[0-9]+]] = arith.remsi %[[PID]], %[[R]]
// CHECK: %[[NX:[0-9]+]] = tt.get_num_programs x
// CHECK: %[[SAFE:[0-9]+]] = arith.maxsi %[[R]], %c1_i32
// CHECK: %[[C:[0-9]+]] = arith.divsi %[[NX]], %[[SAFE]]
// CHECK: arith.muli %[[R]], %[[C]]
// CHECK: arith.select %{{.*}}, %{{.*}}, %[[ROW]]
// CHECK: %[[X0:[0-9]+]] = arith.select %{{.*}}, %{{.*}}, %[[COL]]
tt.func @column_major(%a: !tt.tensordesc<tensor<128x64xf16>>, %b: !tt.tensordesc<tensor<64x128xf16>>, %c: !tt.tensordesc<tensor<128x128xf16>>, %M: i32, %N: i32, %K: i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c64 = arith.constant 64 : i32
  %c128 = arith.constant 128 : i32
  %zero = arith.constant dense<0.0> : tensor<128x128xf32>
  %pid = tt.get_program_id x : i32
  %rows = arith.divsi %M, %c128 : i32
  %col = arith.divsi %pid, %rows : i32
  %row = arith.remsi %pid, %rows : i32
  %kt = arith.divsi %K, %c64 : i32
  %acc = scf.for %k = %c0 to %kt step %c1 iter_args(%x = %zero) -> (tensor<128x128xf32>) : i32 {
    %am = arith.muli %row, %c128 : i32
    %kk = arith.muli %k, %c64 : i32
    %ta = tt.descriptor_load %a[%am, %kk] : !tt.tensordesc<tensor<128x64xf16>> -> tensor<128x64xf16>
    %bn = arith.muli %col, %c128 : i32
    %tb = tt.descriptor_load %b[%kk, %bn] : !tt.tensordesc<tensor<64x128xf16>> -> tensor<64x128xf16>
    %d = tt.dot %ta, %tb, %x : tensor<128x64xf16> * tensor<64x128xf16> -> tensor<128x128xf32>
    scf.yield %d : tensor<128x128xf32>
  }
  %h = arith.truncf %acc : tensor<128x128xf32> to tensor<128x128xf16>
  %cm = arith.muli %row, %c128 : i32
  %cn = arith.muli %col, %c128 : i32
  tt.descriptor_store %c[%cm, %cn], %h : !tt.tensordesc<tensor<128x128xf16>>, tensor<128x128xf16>
  tt.return
}

// -----

// The program id also offsets the output: a pair's programs would read the
// pair's index there. axis=y says the kernel has no tile map it can pair;
// auto leaves it as written.
// AUTO-LABEL: tt.func @pid_read_elsewhere
// AUTO-NOT: tawa.paired_programs
// AUTO-NOT: tt.get_num_programs
// expected-error @+1 {{cannot pair programs: the kernel does not read program_id(1) and does not compute its tile's row and column from program_id(0)}}
tt.func @pid_read_elsewhere(%a: !tt.tensordesc<tensor<128x64xf16>>, %b: !tt.tensordesc<tensor<64x128xf16>>, %c: !tt.tensordesc<tensor<128x128xf16>>, %M: i32, %N: i32, %K: i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c64 = arith.constant 64 : i32
  %c128 = arith.constant 128 : i32
  %zero = arith.constant dense<0.0> : tensor<128x128xf32>
  %pid = tt.get_program_id x : i32
  %cols = arith.divsi %N, %c128 : i32
  %row = arith.divsi %pid, %cols : i32
  %col = arith.remsi %pid, %cols : i32
  %kt = arith.divsi %K, %c64 : i32
  %acc = scf.for %k = %c0 to %kt step %c1 iter_args(%x = %zero) -> (tensor<128x128xf32>) : i32 {
    %am = arith.muli %row, %c128 : i32
    %kk = arith.muli %k, %c64 : i32
    %ta = tt.descriptor_load %a[%am, %kk] : !tt.tensordesc<tensor<128x64xf16>> -> tensor<128x64xf16>
    %bn = arith.muli %col, %c128 : i32
    %tb = tt.descriptor_load %b[%kk, %bn] : !tt.tensordesc<tensor<64x128xf16>> -> tensor<64x128xf16>
    %d = tt.dot %ta, %tb, %x : tensor<128x64xf16> * tensor<64x128xf16> -> tensor<128x128xf32>
    scf.yield %d : tensor<128x128xf32>
  }
  %h = arith.truncf %acc : tensor<128x128xf32> to tensor<128x128xf16>
  %cm = arith.muli %pid, %c128 : i32
  %cn = arith.muli %col, %c128 : i32
  tt.descriptor_store %c[%cm, %cn], %h : !tt.tensordesc<tensor<128x128xf16>>, tensor<128x128xf16>
  tt.return
}

// -----

// B reads both coordinates (its rows offset by the tile row too): no
// coordinate is B's alone.
// AUTO-LABEL: tt.func @b_reads_both
// AUTO-NOT: tawa.paired_programs
tt.func @b_reads_both(%a: !tt.tensordesc<tensor<128x64xf16>>, %b: !tt.tensordesc<tensor<64x128xf16>>, %c: !tt.tensordesc<tensor<128x128xf16>>, %M: i32, %N: i32, %K: i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c64 = arith.constant 64 : i32
  %c128 = arith.constant 128 : i32
  %zero = arith.constant dense<0.0> : tensor<128x128xf32>
  %pid = tt.get_program_id x : i32
  %cols = arith.divsi %N, %c128 : i32
  %row = arith.divsi %pid, %cols : i32
  %col = arith.remsi %pid, %cols : i32
  %kt = arith.divsi %K, %c64 : i32
  %acc = scf.for %k = %c0 to %kt step %c1 iter_args(%x = %zero) -> (tensor<128x128xf32>) : i32 {
    %am = arith.muli %row, %c128 : i32
    %kk = arith.muli %k, %c64 : i32
    %ta = tt.descriptor_load %a[%am, %kk] : !tt.tensordesc<tensor<128x64xf16>> -> tensor<128x64xf16>
    %bk = arith.addi %kk, %row : i32
    %bn = arith.muli %col, %c128 : i32
    %tb = tt.descriptor_load %b[%bk, %bn] : !tt.tensordesc<tensor<64x128xf16>> -> tensor<64x128xf16>
    // expected-error @+1 {{cannot pair programs: the product's B operand reads no tile coordinate that its A operand does not read}}
    %d = tt.dot %ta, %tb, %x : tensor<128x64xf16> * tensor<64x128xf16> -> tensor<128x128xf32>
    scf.yield %d : tensor<128x128xf32>
  }
  %h = arith.truncf %acc : tensor<128x128xf32> to tensor<128x128xf16>
  %cm = arith.muli %row, %c128 : i32
  %cn = arith.muli %col, %c128 : i32
  tt.descriptor_store %c[%cm, %cn], %h : !tt.tensordesc<tensor<128x128xf16>>, tensor<128x128xf16>
  tt.return
}

// -----

// SiLU in the epilogue (an exponential and a division on the accumulator):
// ping-pong runs it under the other group's products, so auto leaves the
// kernel unpaired (paired it measured 0.91x on the H100); axis=y pairs it.
// AUTO-LABEL: tt.func @silu_epilogue
// AUTO-NOT: tawa.paired_programs
// CHECK-LABEL: tt.func @silu_epilogue
// CHECK-SAME: tawa.paired_programs = 1 : i32
tt.func @silu_epilogue(%a: !tt.tensordesc<tensor<128x64xf16>>, %b: !tt.tensordesc<tensor<64x128xf16>>, %c: !tt.tensordesc<tensor<128x128xf16>>, %M: i32, %N: i32, %K: i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c64 = arith.constant 64 : i32
  %c128 = arith.constant 128 : i32
  %zero = arith.constant dense<0.0> : tensor<128x128xf32>
  %one = arith.constant dense<1.0> : tensor<128x128xf32>
  %pid = tt.get_program_id x : i32
  %cols = arith.divsi %N, %c128 : i32
  %row = arith.divsi %pid, %cols : i32
  %col = arith.remsi %pid, %cols : i32
  %kt = arith.divsi %K, %c64 : i32
  %acc = scf.for %k = %c0 to %kt step %c1 iter_args(%x = %zero) -> (tensor<128x128xf32>) : i32 {
    %am = arith.muli %row, %c128 : i32
    %kk = arith.muli %k, %c64 : i32
    %ta = tt.descriptor_load %a[%am, %kk] : !tt.tensordesc<tensor<128x64xf16>> -> tensor<128x64xf16>
    %bn = arith.muli %col, %c128 : i32
    %tb = tt.descriptor_load %b[%kk, %bn] : !tt.tensordesc<tensor<64x128xf16>> -> tensor<64x128xf16>
    %d = tt.dot %ta, %tb, %x : tensor<128x64xf16> * tensor<64x128xf16> -> tensor<128x128xf32>
    scf.yield %d : tensor<128x128xf32>
  }
  %neg = arith.subf %zero, %acc : tensor<128x128xf32>
  %e = math.exp %neg : tensor<128x128xf32>
  %den = arith.addf %one, %e : tensor<128x128xf32>
  %silu = arith.divf %acc, %den : tensor<128x128xf32>
  %h = arith.truncf %silu : tensor<128x128xf32> to tensor<128x128xf16>
  %cm = arith.muli %row, %c128 : i32
  %cn = arith.muli %col, %c128 : i32
  tt.descriptor_store %c[%cm, %cn], %h : !tt.tensordesc<tensor<128x128xf16>>, tensor<128x128xf16>
  tt.return
}

// -----

// A kernel that walks its tiles itself (Triton's persistent matmul, here
// row-major): auto turns the walk into programs (-tawa-tile-loop-programs)
// and pairs them; the count of pairs replaces the walk's count of tiles,
// which is the programs the pairs are checked against.
// AUTO-LABEL: tt.func @own_walk
// AUTO-SAME: tawa.paired_programs = 1 : i32
// AUTO: %[[T:[0-9]+]] = arith.addi {{.*}} {tawa.tile_index}
// AUTO: %[[TILES:[0-9]+]] = arith.addi %{{[0-9]+}}, %{{[0-9]+}} : i32
// AUTO: %[[ROW:[0-9]+]] = arith.divsi %[[T]], %[[C:[0-9]+]]
// AUTO: %[[COL:[0-9]+]] = arith.remsi %[[T]], %[[C]]
// AUTO: arith.cmpi eq, %[[TILES]],
// AUTO: arith.select %{{[0-9]+}}, %{{[0-9]+}}, %[[TILES]] {tawa.program_count}
// AUTO-NOT: scf.for {{.*}} step %c132
// AUTO: tt.dot
// AUTO: tt.dot
// (axis=y pairs program ids only.)
// expected-error @+1 {{cannot pair programs: the kernel walks program ids itself}}
tt.func @own_walk(%a: !tt.tensordesc<tensor<128x64xf16>>, %b: !tt.tensordesc<tensor<128x64xf16>>, %c: !tt.tensordesc<tensor<128x128xf16>>, %M: i32, %N: i32, %K: i32) {
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
