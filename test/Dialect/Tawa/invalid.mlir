// RUN: tawa-opt %s -split-input-file -verify-diagnostics
// Malformed tawa IR: aref types, aref payloads, warp_specialize budgets.

//===----------------------------------------------------------------------===//
// !tawa.aref
//===----------------------------------------------------------------------===//

tt.func @aref_depth_zero() {
  // expected-error @+1 {{aref depth must be at least 1, got 0}}
  %a = tawa.aref.create : !tawa.aref<[tensor<128x64xf16>], 0>
  tt.return
}

// -----

tt.func @aref_depth_negative() {
  // expected-error @+1 {{aref depth must be at least 1, got -2}}
  %a = tawa.aref.create : !tawa.aref<[tensor<128x64xf16>], -2>
  tt.return
}

// -----

tt.func @aref_empty_payload() {
  // expected-error @+1 {{aref payload must hold at least one type}}
  %a = tawa.aref.create : !tawa.aref<[], 2>
  tt.return
}

// -----

tt.func @aref_scalar_payload() {
  // expected-error @+1 {{aref payload types must be statically shaped tensors (tiles), got 'f32'}}
  %a = tawa.aref.create : !tawa.aref<[f32], 2>
  tt.return
}

// -----

tt.func @aref_payload_syntax() {
  // expected-error @+1 {{expected non-function type}}
  %a = tawa.aref.create : !tawa.aref<[tensor<128x64xf16>, ], 2>
  tt.return
}

// -----

tt.func @aref_dynamic_tile() {
  // expected-error @+1 {{aref payload types must be statically shaped tensors (tiles), got 'tensor<?x64xf16>'}}
  %a = tawa.aref.create : !tawa.aref<[tensor<128x64xf16>, tensor<?x64xf16>], 2>
  tt.return
}

// -----

// expected-error @+1 {{aref payload types must be statically shaped tensors (tiles), got '!tt.ptr<f16>'}}
tt.func @aref_pointer_payload_argument(%a: !tawa.aref<[!tt.ptr<f16>], 2>) {
  tt.return
}

// -----

//===----------------------------------------------------------------------===//
// aref.put / aref.get
//===----------------------------------------------------------------------===//

tt.func @put_too_few(%r: !tawa.aref<[tensor<128x64xf16>, tensor<256x64xf16>], 2>, %k: i32, %a: tensor<128x64xf16>) {
  // expected-error @+1 {{'tawa.aref.put' op puts 1 values, but the aref carries 2}}
  tawa.aref.put %r[%k], %a : !tawa.aref<[tensor<128x64xf16>, tensor<256x64xf16>], 2>, tensor<128x64xf16>
  tt.return
}

// -----

tt.func @put_too_many(%r: !tawa.aref<[tensor<128x64xf16>], 2>, %k: i32, %a: tensor<128x64xf16>) {
  // expected-error @+1 {{'tawa.aref.put' op puts 2 values, but the aref carries 1}}
  tawa.aref.put %r[%k], %a, %a : !tawa.aref<[tensor<128x64xf16>], 2>, tensor<128x64xf16>, tensor<128x64xf16>
  tt.return
}

// -----

tt.func @put_wrong_type(%r: !tawa.aref<[tensor<128x64xf16>, tensor<256x64xf16>], 2>, %k: i32, %a: tensor<128x64xf16>) {
  // expected-error @+1 {{'tawa.aref.put' op value #1 has type 'tensor<128x64xf16>', but slot element #1 is 'tensor<256x64xf16>'}}
  tawa.aref.put %r[%k], %a, %a : !tawa.aref<[tensor<128x64xf16>, tensor<256x64xf16>], 2>, tensor<128x64xf16>, tensor<128x64xf16>
  tt.return
}

// -----

tt.func @get_too_few(%r: !tawa.aref<[tensor<128x64xf16>, tensor<256x64xf16>], 2>, %k: i32) {
  // expected-error @+1 {{'tawa.aref.get' op gets 1 values, but the aref carries 2}}
  %a = tawa.aref.get %r[%k] : !tawa.aref<[tensor<128x64xf16>, tensor<256x64xf16>], 2> -> tensor<128x64xf16>
  tt.return
}

// -----

tt.func @get_wrong_type(%r: !tawa.aref<[tensor<128x64xf16>], 3>, %k: i32) {
  // expected-error @+1 {{'tawa.aref.get' op value #0 has type 'tensor<128x64xbf16>', but slot element #0 is 'tensor<128x64xf16>'}}
  %a = tawa.aref.get %r[%k] : !tawa.aref<[tensor<128x64xf16>], 3> -> tensor<128x64xbf16>
  tt.return
}

// -----

tt.func @get_nothing(%r: !tawa.aref<[tensor<128x64xf16>], 3>, %k: i32) {
  // expected-error @+1 {{'tawa.aref.get' op gets 0 values, but the aref carries 1}}
  "tawa.aref.get"(%r, %k) : (!tawa.aref<[tensor<128x64xf16>], 3>, i32) -> ()
  tt.return
}

// -----

//===----------------------------------------------------------------------===//
// tawa.warp_specialize
//===----------------------------------------------------------------------===//

tt.func @warps_not_multiple_of_four() {
  // expected-error @+1 {{'tawa.warp_specialize' op partition 1 has 6 warps; a partition must be a whole number of 4-warp groups}}
  tawa.warp_specialize
    partition warps(4) regs(40) {
    }
    partition warps(6) regs(232) {
    }
  tt.return
}

// -----

tt.func @zero_warps() {
  // expected-error @+1 {{'tawa.warp_specialize' op partition 0 has 0 warps; a partition must be a whole number of 4-warp groups}}
  tawa.warp_specialize
    partition warps(0) regs(40) {
    }
  tt.return
}

// -----

tt.func @regs_too_few() {
  // expected-error @+1 {{'tawa.warp_specialize' op partition 0 asks for 16 registers per thread; setmaxnreg takes a multiple of 8 in [24, 256]}}
  tawa.warp_specialize
    partition warps(4) regs(16) {
    }
  tt.return
}

// -----

tt.func @regs_too_many() {
  // expected-error @+1 {{'tawa.warp_specialize' op partition 1 asks for 264 registers per thread; setmaxnreg takes a multiple of 8 in [24, 256]}}
  tawa.warp_specialize
    partition warps(4) regs(24) {
    }
    partition warps(4) regs(264) {
    }
  tt.return
}

// -----

tt.func @regs_not_multiple_of_eight() {
  // expected-error @+1 {{'tawa.warp_specialize' op partition 1 asks for 236 registers per thread; setmaxnreg takes a multiple of 8 in [24, 256]}}
  tawa.warp_specialize
    partition warps(4) regs(40) {
    }
    partition warps(8) regs(236) {
    }
  tt.return
}

// -----

// 4*32*40 + 8*32*240 = 5120 + 61440 = 66560 > 65536.
tt.func @register_file_overflow() {
  // expected-error @+1 {{'tawa.warp_specialize' op partitions need 66560 registers, more than the 65536 of one SM}}
  tawa.warp_specialize
    partition warps(4) regs(40) {
    }
    partition warps(8) regs(240) {
    }
  tt.return
}

// -----

// Three 4-warp groups at 232 registers: one warp group too many.
tt.func @register_file_overflow_cooperative() {
  // expected-error @+1 {{'tawa.warp_specialize' op partitions need 94208 registers, more than the 65536 of one SM}}
  tawa.warp_specialize
    partition warps(4) regs(40) {
    }
    partition warps(4) regs(232) {
    }
    partition warps(4) regs(232) {
    }
    partition warps(4) regs(232) {
    }
  tt.return
}

// -----

tt.func @no_partitions() {
  // expected-error @+1 {{'tawa.warp_specialize' op needs at least one partition}}
  tawa.warp_specialize
  tt.return
}

// -----

tt.func @fewer_counts_than_partitions() {
  // expected-error @+1 {{'tawa.warp_specialize' op has 2 partitions but 1 warp counts and 2 register budgets}}
  "tawa.warp_specialize"() <{warps = array<i32: 4>, regs = array<i32: 40, 232>}> ({
    %x = arith.constant 0 : i32
  }, {
    %y = arith.constant 1 : i32
  }) : () -> ()
  tt.return
}

// -----

tt.func @more_budgets_than_partitions() {
  // expected-error @+1 {{'tawa.warp_specialize' op has 1 partitions but 1 warp counts and 2 register budgets}}
  "tawa.warp_specialize"() <{warps = array<i32: 4>, regs = array<i32: 40, 232>}> ({
    %x = arith.constant 0 : i32
  }) : () -> ()
  tt.return
}

// -----

tt.func @partition_syntax() {
  tawa.warp_specialize
    // expected-error @+1 {{custom op 'tawa.warp_specialize' expected 'regs'}}
    partition warps(4) {
    }
  tt.return
}

// -----

tt.func @transpose_shapes(%s: i32) {
  %a = tawa.smem.alloc : memref<2x128x64xf8E4M3FN, 3>
  %b = tawa.smem.alloc : memref<2x128x64xf8E4M3FN, 3>
  // expected-error @+1 {{'tawa.smem.transpose' op transposes [slots, R, C] into [slots, C, R]}}
  tawa.smem.transpose %a[%s] into %b : memref<2x128x64xf8E4M3FN, 3>, memref<2x128x64xf8E4M3FN, 3>
  tt.return
}

// -----

tt.func @transpose_16bit(%s: i32) {
  %a = tawa.smem.alloc : memref<2x128x64xf16, 3>
  %b = tawa.smem.alloc : memref<2x64x128xf16, 3>
  // expected-error @+1 {{'tawa.smem.transpose' op transposes tiles of one 8-bit element type}}
  tawa.smem.transpose %a[%s] into %b : memref<2x128x64xf16, 3>, memref<2x64x128xf16, 3>
  tt.return
}

// -----

tt.func @transposed_slot_shape(%s: i32) {
  %a = tawa.smem.alloc : memref<2x64x128xf8E4M3FN, 3>
  // expected-error @+1 {{'tawa.smem.slot' op a slot of 'memref<2x64x128xf8E4M3FN, 3>' holds a tile of shape [slots dropped, transposed]}}
  %t = tawa.smem.slot %a[%s] transposed : memref<2x64x128xf8E4M3FN, 3> -> tensor<64x128xf8E4M3FN>
  tt.return
}

// -----

tt.func @smem_load_type(%s: i32) {
  %a = tawa.smem.alloc : memref<1x128x256xbf16, 3>
  %t = tawa.smem.slot %a[%s] : memref<1x128x256xbf16, 3> -> tensor<128x256xbf16>
  // expected-error @+1 {{'tawa.smem.load' op reads a tile into registers unchanged: the result's type must be the tile's, 'tensor<128x256xbf16>', not 'tensor<128x256xf32>'}}
  %r = tawa.smem.load %t : tensor<128x256xbf16> -> tensor<128x256xf32>
  tt.return
}

// -----

//===----------------------------------------------------------------------===//
// tawa.pingpong.group
//===----------------------------------------------------------------------===//

tt.func @pingpong_group_outside_warp_specialize() {
  // expected-error @+1 {{'tawa.pingpong.group' op must be in a consumer partition (1 or 2) of a tawa.warp_specialize with ping-pong consumers}}
  %g = tawa.pingpong.group : i32
  tt.return
}

// -----

tt.func @pingpong_group_in_producer() {
  tawa.warp_specialize {tawa.pingpong}
    partition warps(4) regs(40) {
      // expected-error @+1 {{'tawa.pingpong.group' op must be in a consumer partition (1 or 2)}}
      %g = tawa.pingpong.group : i32
    }
    partition warps(4) regs(232) {
    }
    partition warps(4) regs(232) {
    }
  tt.return
}

// -----

tt.func @pingpong_group_without_pingpong() {
  tawa.warp_specialize
    partition warps(4) regs(40) {
    }
    partition warps(8) regs(232) {
      // expected-error @+1 {{'tawa.pingpong.group' op must be in a consumer partition (1 or 2) of a tawa.warp_specialize with ping-pong consumers}}
      %g = tawa.pingpong.group : i32
    }
  tt.return
}

// -----

tt.func @smem_read_boxes_width(%k: i32) {
  %ring = tawa.smem.alloc : memref<1x128x64xbf16, 3>
  %full = tawa.mbarrier.alloc arrivals(1) : !tawa.mbarriers<1>
  // expected-error @+1 {{'tawa.smem.read_boxes' op a tile of 4 boxes of 'memref<1x128x64xbf16, 3>''s slots is [R, C * boxes] of its element type, not 'tensor<128x128xbf16>'}}
  %c = tawa.smem.read_boxes %ring[%k] full %full empty %full boxes 4 : memref<1x128x64xbf16, 3>, !tawa.mbarriers<1> -> tensor<128x128xbf16>
  tt.return
}

// -----

tt.func @smem_read_boxes_barriers(%k: i32) {
  %ring = tawa.smem.alloc : memref<2x128x64xbf16, 3>
  %full = tawa.mbarrier.alloc arrivals(1) : !tawa.mbarriers<1>
  // expected-error @+1 {{'tawa.smem.read_boxes' op needs one barrier per slot: 2 slots, 1 barriers}}
  %c = tawa.smem.read_boxes %ring[%k] full %full empty %full boxes 4 : memref<2x128x64xbf16, 3>, !tawa.mbarriers<1> -> tensor<128x256xbf16>
  tt.return
}
