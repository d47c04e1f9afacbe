// RUN: tawa-opt %s -split-input-file -verify-diagnostics -tawa-partition-annotation -tawa-loop-distribution | FileCheck %s
// RUN: tawa-opt %s -split-input-file -verify-diagnostics -tawa-partition-annotation -tawa-loop-distribution="aref-depth=4 consumer-groups=2" | FileCheck %s --check-prefix=OPTS
// RUN: tawa-opt %shared_ttir/gemm_persistent.ttir -tawa-partition-annotation -tawa-loop-distribution -canonicalize | FileCheck %s --check-prefix=PERSISTENT
// RUN: tawa-opt %examples_ttir/attn_fwd_fp16.ttir -tawa-partition-annotation -tawa-loop-distribution -canonicalize | FileCheck %s --check-prefix=ATTN
// RUN: tawa-opt %examples_ttir/attn_fwd_fp16_causal_split.ttir -tawa-partition-annotation -tawa-loop-distribution -canonicalize | FileCheck %s --check-prefix=SPLIT
// RUN: not tawa-opt %s -split-input-file -tawa-loop-distribution 2>&1 | FileCheck %s --check-prefix=NOANNOT
// RUN: tawa-opt %examples_ttir/gemm_fp16_128x128.ttir -tawa-persistent-programs -tawa-partition-annotation -tawa-loop-distribution="pingpong=1" -canonicalize | FileCheck %s --check-prefix=PINGPONG
// RUN: not tawa-opt %examples_ttir/gemm_fp16_128x128.ttir -tawa-partition-annotation -tawa-loop-distribution="pingpong=1" 2>&1 | FileCheck %s --check-prefix=PINGPONG-ONETILE

// Ping-pong: two consumer partitions of one warp group; partition c works on
// the tiles whose count is c mod 2 and, on the others, only advances its ring
// counter by the K loop's trip count (the other partition consumes them).
// PINGPONG: tawa.warp_specialize {tawa.pingpong} partition warps(4) regs(40) {
// PINGPONG: } partition warps(4) regs(232) {
// PINGPONG: scf.for {{.*}} iter_args(%[[K0:.*]] = %c0_i32, %[[T0:.*]] = %c0_i32) -> (i32, i32)
// PINGPONG: %[[PAR:.*]] = arith.remui %[[T0]], %c2_i32
// PINGPONG: %[[G0:.*]] = tawa.pingpong.group : i32
// PINGPONG: %[[MINE:.*]] = arith.cmpi eq, %[[PAR]], %[[G0]]
// PINGPONG: scf.if %[[MINE]] -> (i32) {
// PINGPONG: %[[TURN:.*]] = arith.divui %[[T0]], %c2_i32
// PINGPONG: tawa.pingpong.wait group 0 turn %[[TURN]]
// PINGPONG: scf.for
// PINGPONG: tawa.aref.get %{{.*}}[%{{.*}}]
// PINGPONG: tawa.pingpong.arrive group 0
// PINGPONG: tt.descriptor_store
// PINGPONG: } else {
// PINGPONG: %[[TRIP:.*]] = arith.ceildivsi
// PINGPONG: arith.addi %[[K0]], %[[TRIP]]
// PINGPONG: } partition warps(4) regs(232) {
// PINGPONG: %[[G1:.*]] = tawa.pingpong.group : i32
// PINGPONG: arith.cmpi eq, %{{.*}}, %[[G1]]
// PINGPONG: tawa.pingpong.wait group 1
// PINGPONG: tawa.pingpong.arrive group 1
// PINGPONG-ONETILE: error: ping-pong consumers need a loop over tiles around the K loop (a persistent kernel)
// RUN: not tawa-opt %examples_ttir/attn_fwd_fp16.ttir -tawa-partition-annotation -tawa-loop-distribution="aref-depth=4" 2>&1 | FileCheck %s --check-prefix=SMEM

// SMEM: kernels.py:{{[0-9]+}}:0: error: aref rings of 4 slots need 294912 bytes of shared memory, more than the 232448 of a Hopper CTA; lower --aref-depth
// An epilogue operand (C of D = alpha A B^T + beta C), loaded after the K
// loop: one slot for cooperative groups (the producer reaches the next
// tile's copy only after that tile's K loads); two for ping-pong groups,
// which wait only on their own tiles' slots by ring parity, so that each
// has its own (one shared slot let the group a tile ahead pass its wait
// before the other's fill: a crash on the GPU, K = 64). The cooperative
// groups' 128 x 256 tile (64 KiB) would leave A and B three slots; read in
// four column boxes of 16 KiB (tawa.column_boxes) it leaves them four, with
// one epilogue staging box per group. An explicit depth of 3, which the
// whole tile fits beside, keeps it whole; one of 4, which it does not,
// boxes it; one of 5 fits neither way.
// RUN: tawa-opt %examples_ttir/gemm_axpby_bf16.ttir -tawa-persistent-programs -tawa-partition-annotation -tawa-loop-distribution | FileCheck %s --check-prefix=EPI-COOP
// RUN: tawa-opt %examples_ttir/gemm_axpby_bf16.ttir -tawa-persistent-programs -tawa-partition-annotation -tawa-loop-distribution="aref-depth=3" | FileCheck %s --check-prefix=EPI-COOP3
// RUN: tawa-opt %examples_ttir/gemm_axpby_bf16.ttir -tawa-persistent-programs -tawa-partition-annotation -tawa-loop-distribution="aref-depth=4" | FileCheck %s --check-prefix=EPI-COOP
// RUN: not tawa-opt %examples_ttir/gemm_axpby_bf16.ttir -tawa-persistent-programs -tawa-partition-annotation -tawa-loop-distribution="aref-depth=5" 2>&1 | FileCheck %s --check-prefix=EPI-COOP5
// EPI-COOP3: tawa.aref.create : !tawa.aref<[tensor<128x64xbf16>, tensor<256x64xbf16>], 3>
// EPI-COOP3: tawa.aref.create : !tawa.aref<[tensor<128x256xbf16>], 1>
// EPI-COOP5: error: aref rings of 5 slots need 262144 bytes of shared memory
// RUN: tawa-opt %examples_ttir/gemm_axpby_bf16_128x128.ttir -tawa-persistent-programs -tawa-partition-annotation -tawa-loop-distribution | FileCheck %s --check-prefix=EPI-PP
// RUN: tawa-opt %examples_ttir/gemm_axpby_bf16_128x128.ttir -tawa-persistent-programs -tawa-partition-annotation -tawa-loop-distribution="aref-depth=1" | FileCheck %s --check-prefix=EPI-PP1
// EPI-COOP: tawa.aref.create : !tawa.aref<[tensor<128x64xbf16>, tensor<256x64xbf16>], 4>
// EPI-COOP: tawa.aref.create {tawa.column_boxes = 4 : i64} : !tawa.aref<[tensor<128x256xbf16>], 1>
// EPI-PP: tawa.aref.create : !tawa.aref<[tensor<128x64xbf16>, tensor<128x64xbf16>], 4>
// EPI-PP: tawa.aref.create : !tawa.aref<[tensor<128x128xbf16>], 2>
// EPI-PP-NOT: column_boxes
// EPI-PP: tawa.pingpong.group
// EPI-PP1: tawa.aref.create : !tawa.aref<[tensor<128x64xbf16>, tensor<128x64xbf16>], 1>
// EPI-PP1: tawa.aref.create : !tawa.aref<[tensor<128x128xbf16>], 2>
// RUN: tawa-opt %shared_ttir/gemm_grouped.ttir -tawa-partition-annotation -tawa-loop-distribution -canonicalize | FileCheck %s --check-prefix=GROUPED
// RUN: tawa-opt %shared_ttir/gemm_grouped.ttir -tawa-partition-annotation -tawa-loop-distribution="pingpong=0" -canonicalize | FileCheck %s --check-prefix=GROUPED1

// NOANNOT: error: 'arith.constant' op has no tawa.partition annotation: run -tawa-partition-annotation before -tawa-loop-distribution

// The two loads feeding one dot share a tuple aref; iteration k of the ring is
// a counter each partition carries through its own clone of the loop.

// CHECK-LABEL: tt.func @gemm
// The default depth is the most slots, up to 4, that fit next to a 32 KiB
// epilogue buffer: 4 slots of 32 KiB here.
// CHECK: %[[AREF:.*]] = tawa.aref.create : !tawa.aref<[tensor<128x64xf16>, tensor<128x64xf16>], 4>
// CHECK: tawa.warp_specialize partition warps(4) regs(40) {
// CHECK:   %[[PZERO:.*]] = arith.constant 0 : i32
// CHECK:   scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[PK:.*]] = %[[PZERO]]) -> (i32)
// CHECK:     %[[A:.*]] = tt.descriptor_load
// CHECK:     %[[B:.*]] = tt.descriptor_load
// CHECK:     tawa.aref.put %[[AREF]][%[[PK]]], %[[A]], %[[B]]
// CHECK:     %[[PNEXT:.*]] = arith.addi %[[PK]], %{{.*}} : i32
// CHECK:     scf.yield %[[PNEXT]] : i32
// CHECK-NOT: tt.dot
// CHECK: } partition warps(4) regs(232) {
// CHECK:   %[[CZERO:.*]] = arith.constant 0 : i32
// CHECK-NOT: tt.descriptor_load
// CHECK:   %[[R:.*]]:2 = scf.for %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}}, %[[CK:.*]] = %[[CZERO]]) -> (tensor<128x128xf32>, i32)
// CHECK:     %[[T:.*]]:2 = tawa.aref.get %[[AREF]][%[[CK]]]
// CHECK:     %[[BT:.*]] = tt.trans %[[T]]#1
// CHECK:     %[[D:.*]] = tt.dot %[[T]]#0, %[[BT]], %[[ACC]]
// CHECK:     tawa.aref.consumed %[[AREF]][%[[CK]]]
// CHECK:     %[[CNEXT:.*]] = arith.addi %[[CK]], %{{.*}} : i32
// CHECK:     scf.yield %[[D]], %[[CNEXT]]
// CHECK:   arith.truncf %[[R]]#0
// CHECK:   tt.descriptor_store
// CHECK: }
// CHECK-NEXT: tt.return

// OPTS-LABEL: tt.func @gemm
// OPTS: tawa.aref.create : !tawa.aref<[tensor<128x64xf16>, tensor<128x64xf16>], 4>
// OPTS: tawa.warp_specialize partition warps(4) regs(40) {
// OPTS: } partition warps(8) regs(232) {
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

tt.func @conditional_load(%a: !tt.tensordesc<tensor<64x64xf16>>, %c: !tt.tensordesc<tensor<64x64xf16>>, %n: i32, %flag: i1) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %acc = scf.for %k = %c0 to %n step %c1 iter_args(%acc_in = %zero) -> (tensor<64x64xf32>) : i32 {
    %r = scf.if %flag -> (tensor<64x64xf32>) {
      // expected-error @below {{a TMA load inside 'scf.if' is not supported yet (only inside scf.for and scf.while loops)}}
      %t = tt.descriptor_load %a[%c0, %k] : !tt.tensordesc<tensor<64x64xf16>> -> tensor<64x64xf16>
      %d = tt.dot %t, %t, %acc_in : tensor<64x64xf16> * tensor<64x64xf16> -> tensor<64x64xf32>
      scf.yield %d : tensor<64x64xf32>
    } else {
      scf.yield %acc_in : tensor<64x64xf32>
    }
    scf.yield %r : tensor<64x64xf32>
  }
  %out = arith.truncf %acc : tensor<64x64xf32> to tensor<64x64xf16>
  tt.descriptor_store %c[%c0, %c0], %out : !tt.tensordesc<tensor<64x64xf16>>, tensor<64x64xf16>
  tt.return
}

// The user's persistent loop: the ring counter runs on across tiles, so the
// producer can prefetch the next tile's first slots during the epilogue.
// PERSISTENT: tawa.warp_specialize partition warps(4) regs(40) {
// PERSISTENT:   scf.for {{.*}} iter_args(%[[OUTER:.*]] = %c0_i32) -> (i32)
// PERSISTENT:     %[[INNER:.*]] = scf.for {{.*}} iter_args(%[[K:.*]] = %[[OUTER]]) -> (i32)
// PERSISTENT:       tawa.aref.put %{{.*}}[%[[K]]]
// PERSISTENT:     scf.yield %[[INNER]] : i32
// PERSISTENT: } partition warps(8) regs(232) {
// PERSISTENT:   scf.for {{.*}} iter_args(%[[COUTER:.*]] = %c0_i32) -> (i32)
// PERSISTENT:     %[[CINNER:.*]]:2 = scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}, %[[CK:.*]] = %[[COUTER]]) -> (tensor<128x256xf32>, i32)
// PERSISTENT:       tawa.aref.get %{{.*}}[%[[CK]]]
// PERSISTENT:       tawa.aref.consumed %{{.*}}[%[[CK]]]
// PERSISTENT:     tt.descriptor_store
// PERSISTENT:     scf.yield %[[CINNER]]#1 : i32

// Attention: Q is loaded once (a 1-slot aref, released after the loop); K and
// V each have their own ring (2 slots of 32 KiB each fit next to Q's 32 KiB); K is released after QK^T (the tt.trans view
// counts as a use), V after PV.
// ATTN-DAG: %[[Q:.*]] = tawa.aref.create : !tawa.aref<[tensor<128x128xf16>], 1>
// ATTN-DAG: %[[K:.*]] = tawa.aref.create : !tawa.aref<[tensor<128x128xf16>], 2>
// ATTN-DAG: %[[V:.*]] = tawa.aref.create : !tawa.aref<[tensor<128x128xf16>], 2>
// ATTN: tawa.warp_specialize
// ATTN:   tawa.aref.put %[[Q]]
// ATTN:   scf.for
// ATTN:     tawa.aref.put %[[K]]
// ATTN:     tawa.aref.put %[[V]]
// ATTN: } partition warps(8) regs(232) {
// ATTN:   %[[QT:.*]] = tawa.aref.get %[[Q]]
// ATTN:   scf.for
// ATTN:     %[[KT:.*]] = tawa.aref.get %[[K]]
// ATTN:     %[[KTT:.*]] = tt.trans %[[KT]]
// ATTN:     tt.dot %[[QT]], %[[KTT]]
// ATTN:     tawa.aref.consumed %[[K]]
// ATTN:     %[[VT:.*]] = tawa.aref.get %[[V]]
// ATTN:     tt.dot %{{.*}}, %[[VT]]
// ATTN:     tawa.aref.consumed %[[V]]
// ATTN:   }
// ATTN:   tawa.aref.consumed %[[Q]]
// ATTN:   tt.descriptor_store

// Grouped GEMM: the producer builds only the A and B descriptors, the
// consumers only C's; the counter crosses the scf.while tile loop. By
// default (128 x 128 tiles, the kernel's own tile loop) two ping-pong
// consumer partitions take alternate tiles; with pingpong=0 one consumer.
// GROUPED: tawa.warp_specialize {tawa.pingpong} partition warps(4) regs(40) {
// GROUPED-COUNT-2: tt.make_tensor_descriptor {{.*}} <tensor<128x64xf16>>
// GROUPED:   scf.while (%{{.*}} = %{{.*}}, %[[WK:.*]] = %{{.*}}) : (i32, i32) -> (i32, i32)
// GROUPED:     scf.condition(%{{.*}}) %{{.*}}, %[[WK]] : i32, i32
// GROUPED:     tawa.aref.put
// GROUPED-COUNT-2: } partition warps(4) regs(232) {
// GROUPED-NOT: partition warps
// GROUPED1: tawa.warp_specialize partition warps(4) regs(40) {
// GROUPED1-COUNT-2: tt.make_tensor_descriptor {{.*}} <tensor<128x64xf16>>
// GROUPED1:   scf.while (%{{.*}} = %{{.*}}, %[[WK:.*]] = %{{.*}}) : (i32, i32) -> (i32, i32)
// GROUPED1:     scf.condition(%{{.*}}) %{{.*}}, %[[WK]] : i32, i32
// GROUPED1:     tawa.aref.put
// GROUPED1: } partition warps(4) regs(232) {
// GROUPED1-NOT: tensor<128x64xf16>>
// GROUPED1:   tt.make_tensor_descriptor {{.*}} <tensor<128x128xf16>>
// GROUPED1:   scf.while
// GROUPED1:     tawa.aref.get
// GROUPED1:     tt.descriptor_store
// GROUPED1-NOT: partition warps

// Loops in sequence that load the same descriptors (causal attention's
// off-band and on-band loops) fill one ring each for K and V, the ring
// position carried from the first loop into the second, in the producer and
// in the consumer: two streamed rings of depth 2, not four of depth 1.
// SPLIT: %[[Q:.*]] = tawa.aref.create : !tawa.aref<[tensor<128x128xf16>], 1>
// SPLIT-NEXT: %[[K:.*]] = tawa.aref.create : !tawa.aref<[tensor<128x128xf16>], 2>
// SPLIT-NEXT: %[[V:.*]] = tawa.aref.create : !tawa.aref<[tensor<128x128xf16>], 2>
// SPLIT-NOT: tawa.aref.create
// SPLIT: %[[P1:.*]]:2 = scf.for {{.*}} iter_args(%{{.*}} = %c0_i32, %{{.*}} = %c0_i32)
// SPLIT: tawa.aref.put %[[K]]
// SPLIT: tawa.aref.put %[[V]]
// SPLIT: scf.for {{.*}} iter_args(%{{.*}} = %[[P1]]#0, %{{.*}} = %[[P1]]#1)
// SPLIT: tawa.aref.put %[[K]]
// SPLIT: tawa.aref.put %[[V]]
// SPLIT: partition warps
// SPLIT: %[[C1:.*]]:5 = scf.for
// SPLIT: tawa.aref.get %[[K]]
// SPLIT: scf.for {{.*}} iter_args({{.*}}, %{{.*}} = %[[C1]]#3, %{{.*}} = %[[C1]]#4)
// SPLIT: tawa.aref.get %[[K]]
// SPLIT: tawa.aref.get %[[V]]
