// RUN: tawa-opt %examples_ttir/gemm_ptr_fp16.ttir --tawa-pointer-tile-descriptors | FileCheck %s --check-prefix=ROWMAJOR
// RUN: tawa-opt %examples_ttir/gemm_ptr_fp16_a_colmajor.ttir --tawa-pointer-tile-descriptors | FileCheck %s --check-prefix=COLMAJOR
// RUN: tawa-opt %examples_ttir/gemm_blockptr_fp16.ttir --tawa-pointer-tile-descriptors | FileCheck %s --check-prefix=BLOCKPTR
// RUN: tawa-opt %s --split-input-file --verify-diagnostics --tawa-pointer-tile-descriptors | FileCheck %s

// The tutorial-style GEMM (examples/kernels.py, matmul_pointer_kernel): A's
// rows wrap % M (extent M), K is bounded by the loads' masks (the loop
// advances the tiles by BLOCK_K along K: the masks' bound K - k * 64 plus
// the coordinate k * 64 is K for every iteration), C's store mask bounds
// rows by M and columns by N. Descriptors are made once at the entry; the
// pointer tiles and their loop-carried copies are gone.
// ROWMAJOR-LABEL: tt.func public @matmul_pointer_kernel(
// ROWMAJOR-SAME: %[[A:arg0]]: !tt.ptr<f16> {tt.divisibility = 16 : i32}, %[[B:arg1]]: !tt.ptr<f16> {tt.divisibility = 16 : i32}, %[[C:arg2]]: !tt.ptr<f16> {tt.divisibility = 16 : i32}, %[[M:arg3]]: i32, %[[N:arg4]]: i32, %[[K:arg5]]: i32, %[[SAM:arg6]]: i32 {tt.divisibility = 16 : i32}, %[[SBK:arg7]]: i32 {tt.divisibility = 16 : i32}, %[[SCM:arg8]]: i32 {tt.divisibility = 16 : i32})
// ROWMAJOR: %[[SC:.*]] = arith.extsi %[[SCM]] : i32 to i64
// ROWMAJOR: %[[CD:.*]] = tt.make_tensor_descriptor %[[C]], [%[[M]], %[[N]]], [%[[SC]], %{{.*}}] : <f16>, <tensor<128x256xf16>>
// ROWMAJOR: %[[SB:.*]] = arith.extsi %[[SBK]] : i32 to i64
// ROWMAJOR: %[[BD:.*]] = tt.make_tensor_descriptor %[[B]], [%[[K]], %[[N]]], [%[[SB]], %{{.*}}] : <f16>, <tensor<64x256xf16>>
// ROWMAJOR: %[[SA:.*]] = arith.extsi %[[SAM]] : i32 to i64
// ROWMAJOR: %[[AD:.*]] = tt.make_tensor_descriptor %[[A]], [%[[M]], %[[K]]], [%[[SA]], %{{.*}}] : <f16>, <tensor<128x64xf16>>
// ROWMAJOR-NOT: tt.load
// ROWMAJOR: scf.for %[[IV:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (tensor<128x256xf32>)
// ROWMAJOR: %[[AK:.*]] = arith.muli %[[IV]], %c64_i32
// ROWMAJOR: tt.descriptor_load %[[AD]][%{{.*}}, %[[AK]]] : !tt.tensordesc<tensor<128x64xf16>> -> tensor<128x64xf16>
// ROWMAJOR: %[[BK:.*]] = arith.muli %[[IV]], %c64_i32
// ROWMAJOR: tt.descriptor_load %[[BD]][%[[BK]], %{{.*}}] : !tt.tensordesc<tensor<64x256xf16>> -> tensor<64x256xf16>
// ROWMAJOR: tt.dot
// ROWMAJOR: tt.descriptor_store %[[CD]][%{{.*}}, %{{.*}}], %{{.*}} : !tt.tensordesc<tensor<128x256xf16>>, tensor<128x256xf16>
// ROWMAJOR-NOT: tt.store
// ROWMAJOR-NOT: tt.addptr

// A column-major (stride_am = 1): loaded as its transpose [K, M] and
// transposed back, an MN-major A operand.
// COLMAJOR: %[[AD:.*]] = tt.make_tensor_descriptor %arg0, [%arg5, %arg3], [%{{.*}}, %{{.*}}] : <f16>, <tensor<64x128xf16>>
// COLMAJOR: scf.for
// COLMAJOR: %[[T:.*]] = tt.descriptor_load %[[AD]][%{{.*}}, %{{.*}}] : !tt.tensordesc<tensor<64x128xf16>> -> tensor<64x128xf16>
// COLMAJOR: %[[AT:.*]] = tt.trans %[[T]] {order = array<i32: 1, 0>} : tensor<64x128xf16> -> tensor<128x64xf16>
// COLMAJOR: tt.dot %[[AT]]

// Block pointers, as Triton's front end leaves them: i64 offsets (sign
// extensions looked through), the K offsets carried by the loop as i64
// scalars advanced by BLOCK_K (dropped with the pointer tiles), masks
// 0 <= index < bound (the lower bound is TMA's too).
// BLOCKPTR: %[[CD:.*]] = tt.make_tensor_descriptor %arg2, [%arg3, %arg4], [%{{.*}}, %{{.*}}] : <f16>, <tensor<128x256xf16>>
// BLOCKPTR: %[[BD:.*]] = tt.make_tensor_descriptor %arg1, [%arg5, %arg4], [%{{.*}}, %{{.*}}] : <f16>, <tensor<64x256xf16>>
// BLOCKPTR: %[[AD:.*]] = tt.make_tensor_descriptor %arg0, [%arg3, %arg5], [%{{.*}}, %{{.*}}] : <f16>, <tensor<128x64xf16>>
// BLOCKPTR: scf.for %[[IV:.*]] = %{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (tensor<128x256xf32>)
// BLOCKPTR: tt.descriptor_load %[[AD]]
// BLOCKPTR: tt.descriptor_load %[[BD]]
// BLOCKPTR: tt.descriptor_store %[[CD]]
// BLOCKPTR-NOT: tt.load
// BLOCKPTR-NOT: tt.store

// A 1-D pointer store (attention's row statistics) is left as it is.
// CHECK-LABEL: tt.func @row_statistics
// CHECK: tt.store %{{.*}}, %{{.*}} : tensor<128x!tt.ptr<f32>>
tt.func @row_statistics(%p: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %v: tensor<128xf32>) {
  %r = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
  %s = tt.splat %p : !tt.ptr<f32> -> tensor<128x!tt.ptr<f32>>
  %a = tt.addptr %s, %r : tensor<128x!tt.ptr<f32>>, tensor<128xi32>
  tt.store %a, %v : tensor<128x!tt.ptr<f32>>
  tt.return
}

// -----

// An unmasked tile: no bound along either dimension (extent 2^31 - 1); a
// constant row stride of 64 elements (128 bytes) needs no divisibility.
// CHECK-LABEL: tt.func @unmasked_constant_stride
// CHECK: %[[MAX:.*]] = arith.constant 2147483647 : i32
// CHECK: %[[D:.*]] = tt.make_tensor_descriptor %arg0, [%[[MAX]], %{{.*}}], [%{{.*}}, %{{.*}}] : <f16>, <tensor<64x64xf16>>
// CHECK: tt.descriptor_load %[[D]][%{{.*}}, %{{.*}}]
tt.func @unmasked_constant_stride(%p: !tt.ptr<f16> {tt.divisibility = 16 : i32}, %acc: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %c64 = arith.constant dense<64> : tensor<64x1xi32>
  %r = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %rows = tt.expand_dims %r {axis = 1 : i32} : tensor<64xi32> -> tensor<64x1xi32>
  %rowoff = arith.muli %rows, %c64 : tensor<64x1xi32>
  %cols = tt.expand_dims %r {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
  %rb = tt.broadcast %rowoff : tensor<64x1xi32> -> tensor<64x64xi32>
  %cb = tt.broadcast %cols : tensor<1x64xi32> -> tensor<64x64xi32>
  %off = arith.addi %rb, %cb : tensor<64x64xi32>
  %s = tt.splat %p : !tt.ptr<f16> -> tensor<64x64x!tt.ptr<f16>>
  %a = tt.addptr %s, %off : tensor<64x64x!tt.ptr<f16>>, tensor<64x64xi32>
  %t = tt.load %a : tensor<64x64x!tt.ptr<f16>>
  %d = tt.dot %t, %t, %acc : tensor<64x64xf16> * tensor<64x64xf16> -> tensor<64x64xf32>
  tt.return %d : tensor<64x64xf32>
}

// -----

// A gather (row indices loaded from memory) feeding a product.
tt.func @gather(%p: !tt.ptr<f16> {tt.divisibility = 16 : i32}, %idx: !tt.ptr<i32>, %acc: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %c64 = arith.constant dense<64> : tensor<64x1xi32>
  %r = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %is = tt.splat %idx : !tt.ptr<i32> -> tensor<64x!tt.ptr<i32>>
  %ip = tt.addptr %is, %r : tensor<64x!tt.ptr<i32>>, tensor<64xi32>
  %rowidx = tt.load %ip : tensor<64x!tt.ptr<i32>>
  %rows = tt.expand_dims %rowidx {axis = 1 : i32} : tensor<64xi32> -> tensor<64x1xi32>
  %rowoff = arith.muli %rows, %c64 : tensor<64x1xi32>
  %cols = tt.expand_dims %r {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
  %rb = tt.broadcast %rowoff : tensor<64x1xi32> -> tensor<64x64xi32>
  %cb = tt.broadcast %cols : tensor<1x64xi32> -> tensor<64x64xi32>
  %off = arith.addi %rb, %cb : tensor<64x64xi32>
  %s = tt.splat %p : !tt.ptr<f16> -> tensor<64x64x!tt.ptr<f16>>
  %a = tt.addptr %s, %off : tensor<64x64x!tt.ptr<f16>>, tensor<64x64xi32>
  // expected-error @+1 {{this tile load cannot become a TMA load: an address depends on 'tt.load', which is not an affine index computation}}
  %t = tt.load %a : tensor<64x64x!tt.ptr<f16>>
  %d = tt.dot %t, %t, %acc : tensor<64x64xf16> * tensor<64x64xf16> -> tensor<64x64xf32>
  tt.return %d : tensor<64x64xf32>
}

// -----

// Masked-off elements that read 1.0: TMA fills with zeros.
tt.func @other_not_zero(%p: !tt.ptr<f16> {tt.divisibility = 16 : i32}, %n: i32, %acc: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %c64 = arith.constant dense<64> : tensor<64x1xi32>
  %one = arith.constant dense<1.0> : tensor<64x64xf16>
  %r = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %rows = tt.expand_dims %r {axis = 1 : i32} : tensor<64xi32> -> tensor<64x1xi32>
  %rowoff = arith.muli %rows, %c64 : tensor<64x1xi32>
  %cols = tt.expand_dims %r {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
  %rb = tt.broadcast %rowoff : tensor<64x1xi32> -> tensor<64x64xi32>
  %cb = tt.broadcast %cols : tensor<1x64xi32> -> tensor<64x64xi32>
  %off = arith.addi %rb, %cb : tensor<64x64xi32>
  %s = tt.splat %p : !tt.ptr<f16> -> tensor<64x64x!tt.ptr<f16>>
  %a = tt.addptr %s, %off : tensor<64x64x!tt.ptr<f16>>, tensor<64x64xi32>
  %nb = tt.splat %n : i32 -> tensor<1x64xi32>
  %m1 = arith.cmpi slt, %cols, %nb : tensor<1x64xi32>
  %m = tt.broadcast %m1 : tensor<1x64xi1> -> tensor<64x64xi1>
  // expected-error @+1 {{this tile load cannot become a TMA load: masked-off elements read a value other than 0 (TMA fills out-of-bounds elements with zeros)}}
  %t = tt.load %a, %m, %one : tensor<64x64x!tt.ptr<f16>>
  %d = tt.dot %t, %t, %acc : tensor<64x64xf16> * tensor<64x64xf16> -> tensor<64x64xf32>
  tt.return %d : tensor<64x64xf32>
}

// -----

// A row stride with no divisibility: TMA needs 16-byte multiples.
tt.func @stride_not_aligned(%p: !tt.ptr<f16> {tt.divisibility = 16 : i32}, %stride: i32, %acc: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %r = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %rows = tt.expand_dims %r {axis = 1 : i32} : tensor<64xi32> -> tensor<64x1xi32>
  %st = tt.splat %stride : i32 -> tensor<64x1xi32>
  %rowoff = arith.muli %rows, %st : tensor<64x1xi32>
  %cols = tt.expand_dims %r {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
  %rb = tt.broadcast %rowoff : tensor<64x1xi32> -> tensor<64x64xi32>
  %cb = tt.broadcast %cols : tensor<1x64xi32> -> tensor<64x64xi32>
  %off = arith.addi %rb, %cb : tensor<64x64xi32>
  %s = tt.splat %p : !tt.ptr<f16> -> tensor<64x64x!tt.ptr<f16>>
  %a = tt.addptr %s, %off : tensor<64x64x!tt.ptr<f16>>, tensor<64x64xi32>
  // expected-error @+1 {{this tile load cannot become a TMA load: the row stride is not known to be a multiple of 16 bytes}}
  %t = tt.load %a : tensor<64x64x!tt.ptr<f16>>
  %d = tt.dot %t, %t, %acc : tensor<64x64xf16> * tensor<64x64xf16> -> tensor<64x64xf32>
  tt.return %d : tensor<64x64xf32>
}
