// RUN: tawa-opt %s -split-input-file -verify-diagnostics -tawa-aref-lowering | FileCheck %s
// RUN: tawac %examples_ttir/gemm_fp16.ttir --emit=ws-ir -o %t.mlir
// RUN: tawa-opt %t.mlir -tawa-aref-lowering | FileCheck %s --check-prefix=GEMM
// Ping-pong partitions release disjoint slots: 4 arrivals (one group's warps).
// RUN: tawac %examples_ttir/gemm_fp16_128x128.ttir --emit=ws-ir --pingpong | tawa-opt -tawa-aref-lowering | FileCheck %s --check-prefix=PINGPONG
// RUN: tawac %shared_ttir/attn_fp8.ttir --emit=ws-ir | tawa-opt -tawa-aref-lowering | FileCheck %s --check-prefix=FP8
// PINGPONG: tawa.mbarrier.alloc arrivals(4) : !tawa.mbarriers<4>

// Ring position k: slot k mod D, phase (k / D) & 1; the producer waits on
// empty with parity phase ^ 1, the consumer on full with parity phase.
// CHECK-LABEL: tt.func @dynamic
// CHECK-DAG: %[[BA:.*]] = tawa.smem.alloc : memref<3x64x32xf16, 3>
// CHECK-DAG: %[[BB:.*]] = tawa.smem.alloc : memref<3x32x64xf16, 3>
// CHECK-DAG: %[[FULL:.*]] = tawa.mbarrier.alloc arrivals(1) : !tawa.mbarriers<3>
// CHECK-DAG: %[[EMPTY:.*]] = tawa.mbarrier.alloc arrivals(8) : !tawa.mbarriers<3>
// CHECK: tawa.warp_specialize partition warps(4) regs(40) {
// CHECK:   %[[S:.*]] = arith.remui %[[K:.*]], %c3
// CHECK:   %[[LAP:.*]] = arith.divui %[[K]], %c3
// CHECK:   %[[PH:.*]] = arith.andi %[[LAP]], %c1
// CHECK:   %[[PAR:.*]] = arith.xori %[[PH]], %c1
// CHECK:   tawa.mbarrier.wait %[[EMPTY]][%[[S]]], parity %[[PAR]]
// CHECK:   tawa.mbarrier.arrive_expect_tx %[[FULL]][%[[S]]], bytes 8192
// CHECK:   tawa.tma.load %{{.*}}[%{{.*}}, %{{.*}}] into %[[BA]][%[[S]]] arrive %[[FULL]]
// CHECK:   tawa.tma.load %{{.*}}[%{{.*}}, %{{.*}}] into %[[BB]][%[[S]]] arrive %[[FULL]]
// CHECK-NOT: tt.descriptor_load
// CHECK: } partition warps(8) regs(232) {
// CHECK:   %[[CS:.*]] = arith.remui %[[CK:.*]], %c3
// CHECK:   %[[CLAP:.*]] = arith.divui %[[CK]], %c3
// CHECK:   %[[CPH:.*]] = arith.andi %[[CLAP]], %c1
// CHECK:   tawa.mbarrier.wait %[[FULL]][%[[CS]]], parity %[[CPH]]
// CHECK:   %[[TA:.*]] = tawa.smem.slot %[[BA]][%[[CS]]] : memref<3x64x32xf16, 3> -> tensor<64x32xf16>
// CHECK:   %[[TB:.*]] = tawa.smem.slot %[[BB]][%[[CS]]] : memref<3x32x64xf16, 3> -> tensor<32x64xf16>
// CHECK:   tt.dot %[[TA]], %[[TB]]
// CHECK:   %[[RS:.*]] = arith.remui %[[CK]], %c3
// CHECK:   tawa.mbarrier.arrive %[[EMPTY]][%[[RS]]] per_warp
// CHECK-NOT: tawa.aref
tt.func @dynamic(%a: !tt.tensordesc<tensor<64x32xf16>>, %b: !tt.tensordesc<tensor<32x64xf16>>, %k: i32) {
  %ring = tawa.aref.create : !tawa.aref<[tensor<64x32xf16>, tensor<32x64xf16>], 3>
  tawa.warp_specialize partition warps(4) regs(40) {
    %c0 = arith.constant 0 : i32
    %ta = tt.descriptor_load %a[%c0, %k] : !tt.tensordesc<tensor<64x32xf16>> -> tensor<64x32xf16>
    %tb = tt.descriptor_load %b[%k, %c0] : !tt.tensordesc<tensor<32x64xf16>> -> tensor<32x64xf16>
    tawa.aref.put %ring[%k], %ta, %tb : !tawa.aref<[tensor<64x32xf16>, tensor<32x64xf16>], 3>, tensor<64x32xf16>, tensor<32x64xf16>
  } partition warps(8) regs(232) {
    %t:2 = tawa.aref.get %ring[%k] : !tawa.aref<[tensor<64x32xf16>, tensor<32x64xf16>], 3> -> tensor<64x32xf16>, tensor<32x64xf16>
    %zero = arith.constant dense<0.0> : tensor<64x64xf32>
    %d = tt.dot %t#0, %t#1, %zero : tensor<64x32xf16> * tensor<32x64xf16> -> tensor<64x64xf32>
    tawa.aref.consumed %ring[%k] : !tawa.aref<[tensor<64x32xf16>, tensor<32x64xf16>], 3>
  }
  tt.return
}

// -----

// A constant ring position is folded with ArefProtocol.h: k = 5 in a ring of
// 3 is slot 2 on lap 1 (phase 1): the producer waits for parity 0, the
// consumer for parity 1.
// CHECK-LABEL: tt.func @constant
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : i32
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : i32
// CHECK: tawa.mbarrier.wait %{{.*}}[%[[C2]]], parity %[[C0]]
// CHECK: } partition warps(4) regs(232) {
// CHECK-DAG: %[[D2:.*]] = arith.constant 2 : i32
// CHECK-DAG: %[[D1:.*]] = arith.constant 1 : i32
// CHECK: tawa.mbarrier.wait %{{.*}}[%[[D2]]], parity %[[D1]]
tt.func @constant(%a: !tt.tensordesc<tensor<64x32xf16>>) {
  %ring = tawa.aref.create : !tawa.aref<[tensor<64x32xf16>], 3>
  tawa.warp_specialize partition warps(4) regs(40) {
    %c0 = arith.constant 0 : i32
    %c5 = arith.constant 5 : i32
    %ta = tt.descriptor_load %a[%c0, %c0] : !tt.tensordesc<tensor<64x32xf16>> -> tensor<64x32xf16>
    tawa.aref.put %ring[%c5], %ta : !tawa.aref<[tensor<64x32xf16>], 3>, tensor<64x32xf16>
  } partition warps(4) regs(232) {
    %c5 = arith.constant 5 : i32
    %t = tawa.aref.get %ring[%c5] : !tawa.aref<[tensor<64x32xf16>], 3> -> tensor<64x32xf16>
    tawa.aref.consumed %ring[%c5] : !tawa.aref<[tensor<64x32xf16>], 3>
  }
  tt.return
}

// -----

tt.func @not_tma(%x: tensor<64x32xf16>, %k: i32) {
  %ring = tawa.aref.create : !tawa.aref<[tensor<64x32xf16>], 2>
  tawa.warp_specialize partition warps(4) regs(40) {
    // expected-error @below {{only tiles loaded by TMA for this aref alone can be put into it (the producer writes slots with TMA)}}
    tawa.aref.put %ring[%k], %x : !tawa.aref<[tensor<64x32xf16>], 2>, tensor<64x32xf16>
  }
  tt.return
}

// The GEMM after --emit=ws-ir: 4 slots of 48 KiB, empty released by the 8
// warps of the two consumer groups (chosen by default for a 128x256 tile).
// GEMM-DAG: tawa.smem.alloc : memref<4x128x64xf16, 3>
// GEMM-DAG: tawa.smem.alloc : memref<4x256x64xf16, 3>
// GEMM-DAG: tawa.mbarrier.alloc arrivals(1) : !tawa.mbarriers<4>
// GEMM-DAG: tawa.mbarrier.alloc arrivals(8) : !tawa.mbarriers<4>
// GEMM: tawa.mbarrier.arrive_expect_tx {{.*}}bytes 49152
// GEMM-COUNT-2: tawa.tma.load
// GEMM: tawa.smem.slot
// GEMM: tawa.dot_async
// GEMM: tawa.mbarrier.arrive {{.*}}per_warp

// fp8 V, the B operand of P V in [K, N] form: its ring holds the transpose.
// TMA fills a staging ring of the loaded shape (staged-full barrier: one
// arrival plus bytes); producer warps 1-3 wait for it, transpose into the
// ring slot and arrive on its full barrier per warp (3 arrivals, no bytes);
// the consumer reads the slot as the tile's transpose.
// K's ring first (loaded [N, K], read through tt.trans: K-major as stored).
// FP8: tawa.mbarrier.alloc arrivals(8) : !tawa.mbarriers<3>
// FP8-NEXT: %[[VRING:.*]] = tawa.smem.alloc : memref<3x128x128xf8E4M3FN, 3>
// FP8-NEXT: %[[STAGING:.*]] = tawa.smem.alloc : memref<3x128x128xf8E4M3FN, 3>
// FP8-NEXT: %[[STAGED:.*]] = tawa.mbarrier.alloc arrivals(1) : !tawa.mbarriers<3>
// FP8-NEXT: %[[FULL:.*]] = tawa.mbarrier.alloc arrivals(3) : !tawa.mbarriers<3>
// FP8-NEXT: %[[EMPTY:.*]] = tawa.mbarrier.alloc arrivals(8) : !tawa.mbarriers<3>
// FP8: tawa.mbarrier.wait %[[EMPTY]][%[[S:.*]]], parity
// FP8-NEXT: tawa.mbarrier.arrive_expect_tx %[[STAGED]][%[[S]]], bytes 16384
// FP8-NEXT: tawa.tma.load %{{.*}} into %[[STAGING]][%[[S]]] arrive %[[STAGED]]
// FP8: tawa.mbarrier.wait %[[STAGED]][%[[S]]], parity %{{.*}} {tawa.transposer}
// FP8-NEXT: tawa.smem.transpose %[[STAGING]][%[[S]]] into %[[VRING]] {tawa.transposer}
// FP8-NEXT: tawa.mbarrier.arrive %[[FULL]][%[[S]]] per_warp {tawa.transposer}
// FP8: tawa.mbarrier.wait %[[FULL]]
// FP8: tawa.smem.slot %[[VRING]][%{{.*}}] transposed : memref<3x128x128xf8E4M3FN, 3> -> tensor<128x128xf8E4M3FN>

// -----

// tawa.column_boxes: the one 128 x 256 tile goes through a ring of one
// 128 x 64 box. The producer puts box j at ring position 4 k + j (each waits
// for its slot, announces 16 KiB and copies columns 64 j ...); the
// consumer's get becomes one tawa.smem.read_boxes, which releases each box
// as it reads it, so the aref.consumed leaves no arrival.
// CHECK-LABEL: tt.func @boxes
// CHECK-DAG: %[[BUF:.*]] = tawa.smem.alloc : memref<1x128x64xbf16, 3>
// CHECK-DAG: %[[FULL:.*]] = tawa.mbarrier.alloc arrivals(1) : !tawa.mbarriers<1>
// CHECK-DAG: %[[EMPTY:.*]] = tawa.mbarrier.alloc arrivals(8) : !tawa.mbarriers<1>
// CHECK: tawa.warp_specialize
// CHECK: %[[FIRST:.*]] = arith.muli %[[K:.*]], %c4
// CHECK: %[[S0:.*]] = arith.remui %[[FIRST]], %c1
// CHECK: tawa.mbarrier.wait %[[EMPTY]][%[[S0]]]
// CHECK-NEXT: tawa.mbarrier.arrive_expect_tx %[[FULL]][%[[S0]]], bytes 16384
// CHECK-NEXT: tawa.tma.load %{{.*}}[%[[ROW:.*]], %[[COL:.*]]] into %[[BUF]][%[[S0]]]
// CHECK: %[[P1:.*]] = arith.addi %[[FIRST]], %c1
// CHECK: %[[S1:.*]] = arith.remui %[[P1]], %c1
// CHECK: tawa.mbarrier.wait %[[EMPTY]][%[[S1]]]
// CHECK-NEXT: tawa.mbarrier.arrive_expect_tx %[[FULL]][%[[S1]]], bytes 16384
// CHECK: %[[COL1:.*]] = arith.addi %[[COL]], %c64
// CHECK-NEXT: tawa.tma.load %{{.*}}[%[[ROW]], %[[COL1]]] into %[[BUF]][%[[S1]]]
// CHECK: arith.addi %[[FIRST]], %c2
// CHECK: arith.addi %[[COL]], %c128
// CHECK: arith.addi %[[FIRST]], %c3
// CHECK: arith.addi %[[COL]], %c192
// CHECK: tawa.tma.load
// CHECK-NOT: tawa.tma.load
// CHECK: } partition warps(8) regs(232) {
// CHECK: %[[C:.*]] = tawa.smem.read_boxes %[[BUF]][%{{.*}}] full %[[FULL]] empty %[[EMPTY]] boxes 4 : memref<1x128x64xbf16, 3>, !tawa.mbarriers<1> -> tensor<128x256xbf16>
// CHECK-NEXT: arith.extf %[[C]]
// CHECK-NOT: tawa.mbarrier.arrive
// CHECK: tt.return
tt.func @boxes(%c: !tt.tensordesc<tensor<128x256xbf16>>, %k: i32, %row: i32, %col: i32) {
  %ring = tawa.aref.create {tawa.column_boxes = 4 : i64} : !tawa.aref<[tensor<128x256xbf16>], 1>
  tawa.warp_specialize partition warps(4) regs(40) {
    %tc = tt.descriptor_load %c[%row, %col] : !tt.tensordesc<tensor<128x256xbf16>> -> tensor<128x256xbf16>
    tawa.aref.put %ring[%k], %tc : !tawa.aref<[tensor<128x256xbf16>], 1>, tensor<128x256xbf16>
  } partition warps(8) regs(232) {
    %t = tawa.aref.get %ring[%k] : !tawa.aref<[tensor<128x256xbf16>], 1> -> tensor<128x256xbf16>
    %f = arith.extf %t : tensor<128x256xbf16> to tensor<128x256xf32>
    tawa.aref.consumed %ring[%k] : !tawa.aref<[tensor<128x256xbf16>], 1>
  }
  tt.return
}

// -----

// Column boxes need one 2-D tile whose columns they divide.
tt.func @boxes_not_dividing() {
  // expected-error @+1 {{column boxes need one 2-D tile whose columns they divide, not stored transposed}}
  %ring = tawa.aref.create {tawa.column_boxes = 3 : i64} : !tawa.aref<[tensor<128x256xbf16>], 1>
  tt.return
}
