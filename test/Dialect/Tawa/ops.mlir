// RUN: tawa-opt %s | FileCheck %s
// RUN: tawa-opt %s | tawa-opt | FileCheck %s
// RUN: tawa-opt %s -mlir-print-op-generic | tawa-opt | FileCheck %s
// RUN: tawa-opt %s > %t.1.mlir && tawa-opt %t.1.mlir > %t.2.mlir && diff %t.1.mlir %t.2.mlir
// The tawa dialect round-trips: aref types, aref.create/put/get/consumed and
// tawa.warp_specialize with its partitions (custom and generic form).

// A producer/consumer GEMM in the shape of Fig. 2c of the Tawa paper (D = 2):
// warp group 0 issues the TMA loads of A and B and puts them into one aref
// slot (both tiles share one full/empty barrier pair); warp groups 1-2 get the
// slot, run the dot, release the slot and store the tile.

// CHECK-LABEL: tt.func public @gemm_ws(
// CHECK-SAME: %{{.*}}: !tt.tensordesc<tensor<128x64xf16>>, %{{.*}}: !tt.tensordesc<tensor<256x64xf16>>, %{{.*}}: !tt.tensordesc<tensor<128x256xf16>>
tt.func public @gemm_ws(%a_desc: !tt.tensordesc<tensor<128x64xf16>>,
                        %b_desc: !tt.tensordesc<tensor<256x64xf16>>,
                        %c_desc: !tt.tensordesc<tensor<128x256xf16>>,
                        %K: i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c64 = arith.constant 64 : i32
  %c128 = arith.constant 128 : i32
  %c256 = arith.constant 256 : i32
  %pid_m = tt.get_program_id x : i32
  %pid_n = tt.get_program_id y : i32
  %off_m = arith.muli %pid_m, %c128 : i32
  %off_n = arith.muli %pid_n, %c256 : i32
  %k_tiles = arith.divsi %K, %c64 : i32
  // CHECK: %[[AREF:.*]] = tawa.aref.create : !tawa.aref<[tensor<128x64xf16>, tensor<256x64xf16>], 2>
  %aref = tawa.aref.create : !tawa.aref<[tensor<128x64xf16>, tensor<256x64xf16>], 2>
  // CHECK: tawa.warp_specialize
  // CHECK-SAME: partition warps(4) regs(40) {
  // CHECK-NEXT: scf.for %[[KP:.*]] = %{{.*}} to %{{.*}} step %{{.*}} : i32 {
  // CHECK: %[[A:.*]] = tt.descriptor_load %{{.*}}[%{{.*}}, %{{.*}}] : !tt.tensordesc<tensor<128x64xf16>> -> tensor<128x64xf16>
  // CHECK: %[[B:.*]] = tt.descriptor_load %{{.*}}[%{{.*}}, %{{.*}}] : !tt.tensordesc<tensor<256x64xf16>> -> tensor<256x64xf16>
  // CHECK: tawa.aref.put %[[AREF]][%[[KP]]], %[[A]], %[[B]] : !tawa.aref<[tensor<128x64xf16>, tensor<256x64xf16>], 2>, tensor<128x64xf16>, tensor<256x64xf16>
  // CHECK-NEXT: }
  // CHECK-NEXT: } partition warps(8) regs(232) {
  // CHECK: %[[ACC:.*]] = scf.for %[[KC:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACCI:.*]] = %{{.*}}) -> (tensor<128x256xf32>) : i32 {
  // CHECK: %[[T:.*]]:2 = tawa.aref.get %[[AREF]][%[[KC]]] : !tawa.aref<[tensor<128x64xf16>, tensor<256x64xf16>], 2> -> tensor<128x64xf16>, tensor<256x64xf16>
  // CHECK: %[[BT:.*]] = tt.trans %[[T]]#1 {order = array<i32: 1, 0>} : tensor<256x64xf16> -> tensor<64x256xf16>
  // CHECK: %[[D:.*]] = tt.dot %[[T]]#0, %[[BT]], %[[ACCI]], inputPrecision = tf32 : tensor<128x64xf16> * tensor<64x256xf16> -> tensor<128x256xf32>
  // CHECK: tawa.aref.consumed %[[AREF]][%[[KC]]] : !tawa.aref<[tensor<128x64xf16>, tensor<256x64xf16>], 2>
  // CHECK: scf.yield %[[D]] : tensor<128x256xf32>
  // CHECK: }
  // CHECK: %[[C:.*]] = arith.truncf %[[ACC]] : tensor<128x256xf32> to tensor<128x256xf16>
  // CHECK: tt.descriptor_store %{{.*}}[%{{.*}}, %{{.*}}], %[[C]] : !tt.tensordesc<tensor<128x256xf16>>, tensor<128x256xf16>
  // CHECK-NEXT: }
  // CHECK-NEXT: tt.return
  tawa.warp_specialize partition warps(4) regs(40) {
      scf.for %k = %c0 to %k_tiles step %c1 : i32 {
        %off_k = arith.muli %k, %c64 : i32
        %a = tt.descriptor_load %a_desc[%off_m, %off_k] : !tt.tensordesc<tensor<128x64xf16>> -> tensor<128x64xf16>
        %b = tt.descriptor_load %b_desc[%off_n, %off_k] : !tt.tensordesc<tensor<256x64xf16>> -> tensor<256x64xf16>
        tawa.aref.put %aref[%k], %a, %b : !tawa.aref<[tensor<128x64xf16>, tensor<256x64xf16>], 2>, tensor<128x64xf16>, tensor<256x64xf16>
      }
    } partition warps(8) regs(232) {
      %zero = arith.constant dense<0.000000e+00> : tensor<128x256xf32>
      %acc = scf.for %k = %c0 to %k_tiles step %c1 iter_args(%acc_k = %zero) -> (tensor<128x256xf32>) : i32 {
        %tiles:2 = tawa.aref.get %aref[%k] : !tawa.aref<[tensor<128x64xf16>, tensor<256x64xf16>], 2> -> tensor<128x64xf16>, tensor<256x64xf16>
        %bt = tt.trans %tiles#1 {order = array<i32: 1, 0>} : tensor<256x64xf16> -> tensor<64x256xf16>
        %d = tt.dot %tiles#0, %bt, %acc_k, inputPrecision = tf32 : tensor<128x64xf16> * tensor<64x256xf16> -> tensor<128x256xf32>
        tawa.aref.consumed %aref[%k] : !tawa.aref<[tensor<128x64xf16>, tensor<256x64xf16>], 2>
        scf.yield %d : tensor<128x256xf32>
      }
      %c = arith.truncf %acc : tensor<128x256xf32> to tensor<128x256xf16>
      tt.descriptor_store %c_desc[%off_m, %off_n], %c : !tt.tensordesc<tensor<128x256xf16>>, tensor<128x256xf16>
    }
  tt.return
}

// Cooperative consumers: two consumer warp groups, each with its own ring of
// B tiles, and a one-slot aref for a single tile; discardable attributes on
// the op survive next to the partitions.

// CHECK-LABEL: tt.func @cooperative(
// CHECK-SAME: %{{.*}}: !tawa.aref<[tensor<64x64xbf16>], 1>
// CHECK-SAME: %{{.*}}: !tawa.aref<[tensor<128x64xf8E4M3FN>, tensor<128x64xf8E4M3FN>, tensor<128xf32>], 4>
// CHECK: tawa.warp_specialize {tawa.note = "cooperative"} partition warps(4) regs(24) {
// CHECK: tawa.aref.put %{{.*}}[%{{.*}}], %{{.*}} : !tawa.aref<[tensor<64x64xbf16>], 1>, tensor<64x64xbf16>
// CHECK-NEXT: } partition warps(4) regs(240) {
// CHECK-NEXT: tawa.aref.get %{{.*}}[%{{.*}}] : !tawa.aref<[tensor<64x64xbf16>], 1> -> tensor<64x64xbf16>
// CHECK-NEXT: tawa.aref.consumed %{{.*}}[%{{.*}}] : !tawa.aref<[tensor<64x64xbf16>], 1>
// CHECK-NEXT: } partition warps(4) regs(240) {
// CHECK-NEXT: }
// CHECK-NEXT: tt.return
tt.func @cooperative(%ring: !tawa.aref<[tensor<64x64xbf16>], 1>,
                     %fp8: !tawa.aref<[tensor<128x64xf8E4M3FN>, tensor<128x64xf8E4M3FN>, tensor<128xf32>], 4>,
                     %tile: tensor<64x64xbf16>, %k: i32) {
  tawa.warp_specialize {tawa.note = "cooperative"}
    partition warps(4) regs(24) {
      tawa.aref.put %ring[%k], %tile : !tawa.aref<[tensor<64x64xbf16>], 1>, tensor<64x64xbf16>
    }
    partition warps(4) regs(240) {
      %t = tawa.aref.get %ring[%k] : !tawa.aref<[tensor<64x64xbf16>], 1> -> tensor<64x64xbf16>
      tawa.aref.consumed %ring[%k] : !tawa.aref<[tensor<64x64xbf16>], 1>
    }
    partition warps(4) regs(240) {
    }
  tt.return
}

// The largest budget that fits: 16 warps x 32 threads x 128 registers = 65536.
// CHECK-LABEL: tt.func @full_register_file
// CHECK: tawa.warp_specialize partition warps(8) regs(128) {
// CHECK-NEXT: } partition warps(8) regs(128) {
// CHECK-NEXT: }
tt.func @full_register_file() {
  tawa.warp_specialize
    partition warps(8) regs(128) {
    }
    partition warps(8) regs(128) {
    }
  tt.return
}

// Ping-pong consumers: each names its group with tawa.pingpong.group, so
// both partitions can hold the same program.
// CHECK-LABEL: tt.func @pingpong_group
// CHECK: } partition warps(4) regs(232) {
// CHECK-NEXT: %{{.*}} = tawa.pingpong.group : i32
// CHECK: } partition warps(4) regs(232) {
// CHECK-NEXT: %{{.*}} = tawa.pingpong.group : i32
tt.func @pingpong_group(%turn: i32) {
  tawa.warp_specialize {tawa.pingpong}
    partition warps(4) regs(40) {
    }
    partition warps(4) regs(232) {
      %g = tawa.pingpong.group : i32
      tawa.pingpong.wait group 0 turn %turn
      tawa.pingpong.arrive group 0
    }
    partition warps(4) regs(232) {
      %g = tawa.pingpong.group : i32
      tawa.pingpong.wait group 1 turn %turn
      tawa.pingpong.arrive group 1
    }
  tt.return
}

// A ring that stores its 8-bit tiles transposed: the producer transposes a
// staged slot into it, the consumer views a slot as the tile's transpose.
// CHECK-LABEL: tt.func @stored_transpose
// CHECK: tawa.smem.transpose %{{.*}}[%{{.*}}] into %{{.*}} : memref<2x128x64xf8E4M3FN, 3>, memref<2x64x128xf8E4M3FN, 3>
// CHECK: tawa.smem.slot %{{.*}}[%{{.*}}] transposed : memref<2x64x128xf8E4M3FN, 3> -> tensor<128x64xf8E4M3FN>
tt.func @stored_transpose(%s: i32) {
  %staging = tawa.smem.alloc : memref<2x128x64xf8E4M3FN, 3>
  %ring = tawa.smem.alloc : memref<2x64x128xf8E4M3FN, 3>
  tawa.smem.transpose %staging[%s] into %ring : memref<2x128x64xf8E4M3FN, 3>, memref<2x64x128xf8E4M3FN, 3>
  %t = tawa.smem.slot %ring[%s] transposed : memref<2x64x128xf8E4M3FN, 3> -> tensor<128x64xf8E4M3FN>
  tt.return
}

// A slot's tile read into registers (an epilogue operand).
// CHECK-LABEL: tt.func @smem_load
// CHECK: %[[T:.*]] = tawa.smem.slot %{{.*}}[%{{.*}}] : memref<1x128x256xbf16, 3> -> tensor<128x256xbf16>
// CHECK: tawa.smem.load %[[T]] : tensor<128x256xbf16> -> tensor<128x256xbf16>
tt.func @smem_load(%s: i32) {
  %ring = tawa.smem.alloc : memref<1x128x256xbf16, 3>
  %t = tawa.smem.slot %ring[%s] : memref<1x128x256xbf16, 3> -> tensor<128x256xbf16>
  %r = tawa.smem.load %t : tensor<128x256xbf16> -> tensor<128x256xbf16>
  tt.return
}

// A tile read box by box through a ring of one column box.
// CHECK-LABEL: tt.func @smem_read_boxes
// CHECK: tawa.smem.read_boxes %{{.*}}[%{{.*}}] full %{{.*}} empty %{{.*}} boxes 4 : memref<1x128x64xbf16, 3>, !tawa.mbarriers<1> -> tensor<128x256xbf16>
tt.func @smem_read_boxes(%k: i32) {
  %ring = tawa.smem.alloc : memref<1x128x64xbf16, 3>
  %full = tawa.mbarrier.alloc arrivals(1) : !tawa.mbarriers<1>
  %empty = tawa.mbarrier.alloc arrivals(8) : !tawa.mbarriers<1>
  %c = tawa.smem.read_boxes %ring[%k] full %full empty %empty boxes 4 : memref<1x128x64xbf16, 3>, !tawa.mbarriers<1> -> tensor<128x256xbf16>
  tt.return
}
