// RUN: tawa-opt %examples_ttir/attn_fwd_fp16_d64.ttir -tawa-row-block-widening | FileCheck %s
// RUN: tawa-opt %shared_ttir/attn_bf16_bn64.ttir -tawa-row-block-widening | FileCheck %s --check-prefix=BN64
// Not widened: D = 128 with 128-key blocks (S and O are 256 accumulator
// columns: three groups' registers do not hold them), causal kernels (the
// program id also bounds the key loop and builds the mask), and the
// rejected shapes below.
// RUN: tawa-opt %shared_ttir/attn_fp16.ttir -tawa-row-block-widening | FileCheck %s --check-prefix=NONE
// RUN: tawa-opt %shared_ttir/attn_fp16_causal.ttir -tawa-row-block-widening | FileCheck %s --check-prefix=NONE
// RUN: tawa-opt %examples_ttir/gemm_fp16.ttir -tawa-row-block-widening | FileCheck %s --check-prefix=NONE
// RUN: tawa-opt %s -split-input-file -tawa-row-block-widening | FileCheck %s --check-prefix=REJECT
// NONE-NOT: tawa.widened_rows
// NONE-NOT: clip_rows

// Head dimension 64: program x takes rows [192 x, 192 x + 192) of its head.
// The row-indexed descriptors (Q and O) become 192-row blocks and keep the
// source's block on record; K and V do not change; the count of programs
// along x, ceil(128 nx / 192), is marked for the persistent loop; every
// tensor that carries the rows (scores, row statistics, the output and the
// constants that start them) is 192 rows; the store writes through
// tawa.clip_rows below the head's end, row base + 128 nx.
// CHECK-LABEL: tt.func public @attention_fwd_kernel
// CHECK-SAME: %[[Q:arg0]]: !tt.tensordesc<tensor<192x64xf16>> {tawa.source_block = array<i64: 128, 64>}
// CHECK-SAME: !tt.tensordesc<tensor<128x64xf16>>
// CHECK-SAME: %[[O:arg15]]: !tt.tensordesc<tensor<192x64xf16>> {tawa.source_block = array<i64: 128, 64>}
// CHECK-SAME: tawa.widened_rows = array<i64: 128, 192>
// CHECK-DAG: arith.constant dense<0.000000e+00> : tensor<192x64xf32>
// CHECK-DAG: arith.constant dense<0xFF800000> : tensor<192xf32>
// CHECK: %[[NX:.*]] = tt.get_num_programs x
// CHECK: %[[END:.*]] = arith.muli %[[NX]], %{{.*}} : i32
// CHECK: %[[UP:.*]] = arith.addi %[[END]], %{{.*}} : i32
// CHECK: arith.divsi %[[UP]], %{{.*}} {tawa.program_count} : i32
// CHECK: %[[PID:.*]] = tt.get_program_id x
// CHECK: %[[BASE:.*]] = arith.muli %{{.*}}, %arg21 : i32
// CHECK: %[[C192:.*]] = arith.constant 192 : i32
// CHECK: %[[OFF:.*]] = arith.muli %[[PID]], %[[C192]] : i32
// CHECK: %[[ROW:.*]] = arith.addi %[[BASE]], %[[OFF]] : i32
// CHECK: tt.descriptor_load %[[Q]][%[[ROW]], %{{.*}}] : !tt.tensordesc<tensor<192x64xf16>> -> tensor<192x64xf16>
// CHECK: scf.for {{.*}} -> (tensor<192xf32>, tensor<192xf32>, tensor<192x64xf32>)
// CHECK: tt.descriptor_load %arg5{{.*}} -> tensor<128x64xf16>
// CHECK: tt.dot {{.*}} : tensor<192x64xf16> * tensor<64x128xf16> -> tensor<192x128xf32>
// CHECK: (tensor<192x128xf32>) -> tensor<192xf32>
// CHECK: tt.dot {{.*}} : tensor<192x128xf16> * tensor<128x64xf16> -> tensor<192x64xf32>
// CHECK: %[[LIMIT:.*]] = arith.addi %[[BASE]], %[[END]] : i32
// CHECK: %[[CLIP:.*]] = tawa.clip_rows %[[O]] below %[[LIMIT]] : !tt.tensordesc<tensor<192x64xf16>>
// CHECK: tt.descriptor_store %[[CLIP]][%[[ROW]], %{{.*}}], %{{.*}} : !tt.tensordesc<tensor<192x64xf16>>, tensor<192x64xf16>

// D = 128 with 64-key blocks: S (64) and O (128) are 192 columns.
// BN64: tawa.widened_rows
// BN64: tt.dot {{.*}} -> tensor<192x64xf32>
// BN64: tt.dot {{.*}} -> tensor<192x128xf32>
// BN64: tawa.clip_rows

// -----

// A reduction along dimension 0 mixes the rows: not widened (the row max
// beside it alone would be widened).
// REJECT-LABEL: tt.func @column_sum
// REJECT-NOT: 192
tt.func @column_sum(%q: !tt.tensordesc<tensor<128x64xf16>>, %k: !tt.tensordesc<tensor<128x64xf16>>,
                    %o: !tt.tensordesc<tensor<128x64xf16>>, %n: i32) {
  %c0 = arith.constant 0 : i32
  %c128 = arith.constant 128 : i32
  %zero = arith.constant dense<0.000000e+00> : tensor<128x128xf32>
  %acc0 = arith.constant dense<0.000000e+00> : tensor<128x64xf32>
  %pid = tt.get_program_id x : i32
  %row = arith.muli %pid, %c128 : i32
  %qt = tt.descriptor_load %q[%row, %c0] : !tt.tensordesc<tensor<128x64xf16>> -> tensor<128x64xf16>
  %r = scf.for %j = %c0 to %n step %c128 iter_args(%acc = %acc0) -> (tensor<128x64xf32>) : i32 {
    %kt = tt.descriptor_load %k[%j, %c0] : !tt.tensordesc<tensor<128x64xf16>> -> tensor<128x64xf16>
    %ktt = tt.trans %kt {order = array<i32: 1, 0>} : tensor<128x64xf16> -> tensor<64x128xf16>
    %s = tt.dot %qt, %ktt, %zero : tensor<128x64xf16> * tensor<64x128xf16> -> tensor<128x128xf32>
    %rm = "tt.reduce"(%s) <{axis = 1 : i32}> ({
    ^bb0(%a1: f32, %b1: f32):
      %x1 = arith.maxnumf %a1, %b1 : f32
      tt.reduce.return %x1 : f32
    }) : (tensor<128x128xf32>) -> tensor<128xf32>
    %m = "tt.reduce"(%s) <{axis = 0 : i32}> ({
    ^bb0(%a: f32, %b: f32):
      %x = arith.maxnumf %a, %b : f32
      tt.reduce.return %x : f32
    }) : (tensor<128x128xf32>) -> tensor<128xf32>
    %p = arith.truncf %s : tensor<128x128xf32> to tensor<128x128xf16>
    %u = tt.dot %p, %kt, %acc : tensor<128x128xf16> * tensor<128x64xf16> -> tensor<128x64xf32>
    scf.yield %u : tensor<128x64xf32>
  }
  %out = arith.truncf %r : tensor<128x64xf32> to tensor<128x64xf16>
  tt.descriptor_store %o[%row, %c0], %out : !tt.tensordesc<tensor<128x64xf16>>, tensor<128x64xf16>
  tt.return
}

// -----

// The program id also reaches something that is not a row index (a loop
// bound): not widened.
// REJECT-LABEL: tt.func @pid_bounds_loop
// REJECT-NOT: 192
tt.func @pid_bounds_loop(%q: !tt.tensordesc<tensor<128x64xf16>>, %k: !tt.tensordesc<tensor<128x64xf16>>,
                         %o: !tt.tensordesc<tensor<128x64xf16>>) {
  %c0 = arith.constant 0 : i32
  %c128 = arith.constant 128 : i32
  %zero = arith.constant dense<0.000000e+00> : tensor<128x128xf32>
  %acc0 = arith.constant dense<0.000000e+00> : tensor<128x64xf32>
  %pid = tt.get_program_id x : i32
  %row = arith.muli %pid, %c128 : i32
  %qt = tt.descriptor_load %q[%row, %c0] : !tt.tensordesc<tensor<128x64xf16>> -> tensor<128x64xf16>
  %r = scf.for %j = %c0 to %row step %c128 iter_args(%acc = %acc0) -> (tensor<128x64xf32>) : i32 {
    %kt = tt.descriptor_load %k[%j, %c0] : !tt.tensordesc<tensor<128x64xf16>> -> tensor<128x64xf16>
    %ktt = tt.trans %kt {order = array<i32: 1, 0>} : tensor<128x64xf16> -> tensor<64x128xf16>
    %s = tt.dot %qt, %ktt, %zero : tensor<128x64xf16> * tensor<64x128xf16> -> tensor<128x128xf32>
    %rm = "tt.reduce"(%s) <{axis = 1 : i32}> ({
    ^bb0(%a1: f32, %b1: f32):
      %x1 = arith.maxnumf %a1, %b1 : f32
      tt.reduce.return %x1 : f32
    }) : (tensor<128x128xf32>) -> tensor<128xf32>
    %p = arith.truncf %s : tensor<128x128xf32> to tensor<128x128xf16>
    %u = tt.dot %p, %kt, %acc : tensor<128x128xf16> * tensor<128x64xf16> -> tensor<128x64xf32>
    scf.yield %u : tensor<128x64xf32>
  }
  %out = arith.truncf %r : tensor<128x64xf32> to tensor<128x64xf16>
  tt.descriptor_store %o[%row, %c0], %out : !tt.tensordesc<tensor<128x64xf16>>, tensor<128x64xf16>
  tt.return
}
