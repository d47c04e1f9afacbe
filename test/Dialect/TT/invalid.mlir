// RUN: tawa-opt %s -split-input-file -verify-diagnostics
// Malformed TTIR: every tt verifier rejects it with its own message.

//===----------------------------------------------------------------------===//
// tt.dot
//===----------------------------------------------------------------------===//

tt.func @dot_rank_mismatch(%a: tensor<128x64xf16>, %b: tensor<2x64x128xf16>, %c: tensor<128x128xf32>) {
  // expected-error @+1 {{'tt.dot' op a, b, c and d must have the same rank}}
  %d = tt.dot %a, %b, %c : tensor<128x64xf16> * tensor<2x64x128xf16> -> tensor<128x128xf32>
  tt.return
}

// -----

tt.func @dot_rank_one(%a: tensor<64xf16>, %b: tensor<64xf16>, %c: tensor<64xf32>) {
  // expected-error @+1 {{'tt.dot' op operands must have rank 2 (or 3 with a batch dimension), got rank 1}}
  %d = tt.dot %a, %b, %c : tensor<64xf16> * tensor<64xf16> -> tensor<64xf32>
  tt.return
}

// -----

tt.func @dot_k_mismatch(%a: tensor<128x64xf16>, %b: tensor<32x128xf16>, %c: tensor<128x128xf32>) {
  // expected-error @+1 {{'tt.dot' op reduction dimensions differ: a is [128, 64] and b is [32, 128]}}
  %d = tt.dot %a, %b, %c : tensor<128x64xf16> * tensor<32x128xf16> -> tensor<128x128xf32>
  tt.return
}

// -----

tt.func @dot_wrong_result_shape(%a: tensor<128x64xf16>, %b: tensor<64x256xf16>, %c: tensor<128x128xf32>) {
  // expected-error @+1 {{'tt.dot' op result shape [128, 128] is not [128, 256] for a [128, 64] and b [64, 256]}}
  %d = tt.dot %a, %b, %c : tensor<128x64xf16> * tensor<64x256xf16> -> tensor<128x128xf32>
  tt.return
}

// -----

tt.func @dot_batch_mismatch(%a: tensor<2x64x32xf16>, %b: tensor<4x32x64xf16>, %c: tensor<2x64x64xf32>) {
  // expected-error @+1 {{'tt.dot' op batch dimensions differ}}
  %d = tt.dot %a, %b, %c : tensor<2x64x32xf16> * tensor<4x32x64xf16> -> tensor<2x64x64xf32>
  tt.return
}

// -----

tt.func @dot_element_types_differ(%a: tensor<128x64xf16>, %b: tensor<64x128xbf16>, %c: tensor<128x128xf32>) {
  // expected-error @+1 {{'tt.dot' op element types of a and b differ: 'f16' vs 'bf16'}}
  %d = tt.dot %a, %b, %c : tensor<128x64xf16> * tensor<64x128xbf16> -> tensor<128x128xf32>
  tt.return
}

// -----

tt.func @dot_fp8_with_f16(%a: tensor<128x64xf8E4M3FN>, %b: tensor<64x128xf16>, %c: tensor<128x128xf32>) {
  // expected-error @+1 {{'tt.dot' op element types of a and b differ: 'f8E4M3FN' vs 'f16'}}
  %d = tt.dot %a, %b, %c : tensor<128x64xf8E4M3FN> * tensor<64x128xf16> -> tensor<128x128xf32>
  tt.return
}

// -----

tt.func @dot_int_times_float(%a: tensor<128x64xi8>, %b: tensor<64x128xf16>, %c: tensor<128x128xf32>) {
  // expected-error @+1 {{'tt.dot' op a and b must both be floating-point or both integer, got 'i8' and 'f16'}}
  %d = tt.dot %a, %b, %c : tensor<128x64xi8> * tensor<64x128xf16> -> tensor<128x128xf32>
  tt.return
}

// -----

tt.func @dot_float_int_accumulator(%a: tensor<128x64xf16>, %b: tensor<64x128xf16>, %c: tensor<128x128xi32>) {
  // expected-error @+1 {{'tt.dot' op floating-point operands need a floating-point accumulator, got 'i32'}}
  %d = tt.dot %a, %b, %c : tensor<128x64xf16> * tensor<64x128xf16> -> tensor<128x128xi32>
  tt.return
}

// -----

tt.func @dot_int_float_accumulator(%a: tensor<128x64xi8>, %b: tensor<64x128xi8>, %c: tensor<128x128xf32>) {
  // expected-error @+1 {{'tt.dot' op integer operands need an i32 accumulator, got 'f32'}}
  %d = tt.dot %a, %b, %c : tensor<128x64xi8> * tensor<64x128xi8> -> tensor<128x128xf32>
  tt.return
}

// -----

// The custom form has no room for a type of c other than d's; the generic form does.
tt.func @dot_c_differs_from_d(%a: tensor<128x64xf16>, %b: tensor<64x128xf16>, %c: tensor<128x128xf16>) {
  // expected-error @+1 {{'tt.dot' op failed to verify that all of {c, d} have same type}}
  %d = "tt.dot"(%a, %b, %c) : (tensor<128x64xf16>, tensor<64x128xf16>, tensor<128x128xf16>) -> tensor<128x128xf32>
  tt.return
}

// -----

//===----------------------------------------------------------------------===//
// TMA descriptors
//===----------------------------------------------------------------------===//

tt.func @descriptor_load_too_few_indices(%d: !tt.tensordesc<tensor<128x64xf16>>, %i: i32) {
  // expected-error @+1 {{'tt.descriptor_load' op a rank-2 descriptor needs 2 coordinates, got 1}}
  %t = tt.descriptor_load %d[%i] : !tt.tensordesc<tensor<128x64xf16>> -> tensor<128x64xf16>
  tt.return
}

// -----

tt.func @descriptor_load_too_many_indices(%d: !tt.tensordesc<tensor<128x64xf16>>, %i: i32) {
  // expected-error @+1 {{'tt.descriptor_load' op a rank-2 descriptor needs 2 coordinates, got 3}}
  %t = tt.descriptor_load %d[%i, %i, %i] : !tt.tensordesc<tensor<128x64xf16>> -> tensor<128x64xf16>
  tt.return
}

// -----

tt.func @descriptor_load_shape_mismatch(%d: !tt.tensordesc<tensor<128x64xf16>>, %i: i32) {
  // expected-error @+1 {{'tt.descriptor_load' op result shape [64, 128] does not match the descriptor block shape [128, 64]}}
  %t = tt.descriptor_load %d[%i, %i] : !tt.tensordesc<tensor<128x64xf16>> -> tensor<64x128xf16>
  tt.return
}

// -----

// Only leading unit dimensions of the block may be dropped, not a size-128 one.
tt.func @descriptor_load_drops_non_unit_dim(%d: !tt.tensordesc<tensor<128x64xf16>>, %i: i32) {
  // expected-error @+1 {{'tt.descriptor_load' op result shape [64] does not match the descriptor block shape [128, 64]}}
  %t = tt.descriptor_load %d[%i, %i] : !tt.tensordesc<tensor<128x64xf16>> -> tensor<64xf16>
  tt.return
}

// -----

tt.func @descriptor_load_element_mismatch(%d: !tt.tensordesc<tensor<128x64xf16>>, %i: i32) {
  // expected-error @+1 {{'tt.descriptor_load' op result element type 'bf16' does not match the descriptor's 'f16'}}
  %t = tt.descriptor_load %d[%i, %i] : !tt.tensordesc<tensor<128x64xf16>> -> tensor<128x64xbf16>
  tt.return
}

// -----

tt.func @descriptor_store_wrong_indices(%d: !tt.tensordesc<tensor<128x256xf16>>, %v: tensor<128x256xf16>, %i: i32) {
  // expected-error @+1 {{'tt.descriptor_store' op a rank-2 descriptor needs 2 coordinates, got 1}}
  tt.descriptor_store %d[%i], %v : !tt.tensordesc<tensor<128x256xf16>>, tensor<128x256xf16>
  tt.return
}

// -----

tt.func @descriptor_store_shape_mismatch(%d: !tt.tensordesc<tensor<128x256xf16>>, %v: tensor<128x128xf16>, %i: i32) {
  // expected-error @+1 {{'tt.descriptor_store' op stored value shape [128, 128] does not match the descriptor block shape [128, 256]}}
  tt.descriptor_store %d[%i, %i], %v : !tt.tensordesc<tensor<128x256xf16>>, tensor<128x128xf16>
  tt.return
}

// -----

tt.func @descriptor_store_element_mismatch(%d: !tt.tensordesc<tensor<128x256xf16>>, %v: tensor<128x256xf32>, %i: i32) {
  // expected-error @+1 {{'tt.descriptor_store' op stored value element type 'f32' does not match the descriptor's 'f16'}}
  tt.descriptor_store %d[%i, %i], %v : !tt.tensordesc<tensor<128x256xf16>>, tensor<128x256xf32>
  tt.return
}

// -----

tt.func @make_descriptor_too_few_sizes(%p: !tt.ptr<f16>, %m: i32, %s: i64) {
  // expected-error @+1 {{'tt.make_tensor_descriptor' op a rank-2 descriptor needs 2 sizes and 2 strides, got 1 and 2}}
  %d = tt.make_tensor_descriptor %p, [%m], [%s, %s] : <f16>, <tensor<128x64xf16>>
  tt.return
}

// -----

tt.func @make_descriptor_too_many_strides(%p: !tt.ptr<f16>, %m: i32, %s: i64) {
  // expected-error @+1 {{'tt.make_tensor_descriptor' op a rank-2 descriptor needs 2 sizes and 2 strides, got 2 and 3}}
  %d = tt.make_tensor_descriptor %p, [%m, %m], [%s, %s, %s] : <f16>, <tensor<128x64xf16>>
  tt.return
}

// -----

tt.func @make_descriptor_pointee_mismatch(%p: !tt.ptr<bf16>, %m: i32, %s: i64) {
  // expected-error @+1 {{'tt.make_tensor_descriptor' op base pointer to 'bf16' does not match the block element type 'f16'}}
  %d = tt.make_tensor_descriptor %p, [%m, %m], [%s, %s] : <bf16>, <tensor<128x64xf16>>
  tt.return
}

// -----

// expected-error @+1 {{tensor descriptor block dimensions must be static and positive}}
tt.func @descriptor_dynamic_block(%d: !tt.tensordesc<tensor<?x64xf16>>) {
  tt.return
}

// -----

// expected-error @+1 {{tensor descriptor block dimensions must be static and positive}}
tt.func @descriptor_zero_block(%d: !tt.tensordesc<tensor<0x64xf16>>) {
  tt.return
}

// -----

// expected-error @+1 {{tensor descriptor block must have rank 1 to 5, got 6}}
tt.func @descriptor_rank_six(%d: !tt.tensordesc<tensor<1x1x1x1x8x64xf16>>) {
  tt.return
}

// -----

//===----------------------------------------------------------------------===//
// Shape manipulation
//===----------------------------------------------------------------------===//

tt.func @expand_dims_bad_axis(%x: tensor<128xf32>) {
  // expected-error @+1 {{'tt.expand_dims' op axis 2 is out of range for rank 1}}
  %y = tt.expand_dims %x {axis = 2 : i32} : tensor<128xf32> -> tensor<128x1xf32>
  tt.return
}

// -----

tt.func @expand_dims_negative_axis(%x: tensor<128xf32>) {
  // expected-error @+1 {{'tt.expand_dims' op axis -1 is out of range for rank 1}}
  %y = tt.expand_dims %x {axis = -1 : i32} : tensor<128xf32> -> tensor<128x1xf32>
  tt.return
}

// -----

tt.func @expand_dims_very_negative_axis(%x: tensor<128xf32>) {
  // expected-error @+1 {{'tt.expand_dims' op axis -2147483648 is out of range for rank 1}}
  %y = tt.expand_dims %x {axis = -2147483648 : i32} : tensor<128xf32> -> tensor<128x1xf32>
  tt.return
}

// -----

tt.func @expand_dims_wrong_result(%x: tensor<128xf32>) {
  // expected-error @+1 {{'tt.expand_dims' op result type 'tensor<1x128xf32>' does not match operand 'tensor<128xf32>' with a unit dimension inserted at axis 1}}
  %y = tt.expand_dims %x {axis = 1 : i32} : tensor<128xf32> -> tensor<1x128xf32>
  tt.return
}

// -----

tt.func @expand_dims_element_type(%x: tensor<128xf32>) {
  // expected-error @+1 {{'tt.expand_dims' op result type 'tensor<128x1xf16>' does not match operand 'tensor<128xf32>' with a unit dimension inserted at axis 1}}
  %y = tt.expand_dims %x {axis = 1 : i32} : tensor<128xf32> -> tensor<128x1xf16>
  tt.return
}

// -----

tt.func @broadcast_incompatible(%x: tensor<128x2xf32>) {
  // expected-error @+1 {{'tt.broadcast' op dimension 1 of size 2 cannot be broadcast to 64}}
  %y = tt.broadcast %x : tensor<128x2xf32> -> tensor<128x64xf32>
  tt.return
}

// -----

tt.func @broadcast_rank_change(%x: tensor<128xf32>) {
  // expected-error @+1 {{'tt.broadcast' op operand rank 1 differs from result rank 2}}
  %y = tt.broadcast %x : tensor<128xf32> -> tensor<128x64xf32>
  tt.return
}

// -----

tt.func @broadcast_element_type(%x: tensor<128x1xf32>) {
  // expected-error @+1 {{'tt.broadcast' op element types differ: 'f32' vs 'f16'}}
  %y = tt.broadcast %x : tensor<128x1xf32> -> tensor<128x64xf16>
  tt.return
}

// -----

tt.func @trans_not_a_permutation(%x: tensor<128x64xf16>) {
  // expected-error @+1 {{'tt.trans' op order is not a permutation of [0, 2)}}
  %y = tt.trans %x {order = array<i32: 0, 0>} : tensor<128x64xf16> -> tensor<128x128xf16>
  tt.return
}

// -----

tt.func @trans_order_out_of_range(%x: tensor<128x64xf16>) {
  // expected-error @+1 {{'tt.trans' op order is not a permutation of [0, 2)}}
  %y = tt.trans %x {order = array<i32: 2, 0>} : tensor<128x64xf16> -> tensor<64x128xf16>
  tt.return
}

// -----

tt.func @trans_order_length(%x: tensor<128x64xf16>) {
  // expected-error @+1 {{'tt.trans' op order has 3 entries for rank 2}}
  %y = tt.trans %x {order = array<i32: 1, 0, 2>} : tensor<128x64xf16> -> tensor<64x128xf16>
  tt.return
}

// -----

tt.func @trans_wrong_result(%x: tensor<128x64xf16>) {
  // expected-error @+1 {{'tt.trans' op result type 'tensor<128x64xf16>' is not the operand 'tensor<128x64xf16>' permuted by the order}}
  %y = tt.trans %x {order = array<i32: 1, 0>} : tensor<128x64xf16> -> tensor<128x64xf16>
  tt.return
}

// -----

tt.func @make_range_empty() {
  // expected-error @+1 {{'tt.make_range' op end (0) must be greater than start (0)}}
  %r = tt.make_range {end = 0 : i32, start = 0 : i32} : tensor<1xi32>
  tt.return
}

// -----

tt.func @make_range_reversed() {
  // expected-error @+1 {{'tt.make_range' op end (16) must be greater than start (32)}}
  %r = tt.make_range {end = 16 : i32, start = 32 : i32} : tensor<16xi32>
  tt.return
}

// -----

// start and end are signed i32 values.
tt.func @make_range_negative_end() {
  // expected-error @+1 {{'tt.make_range' op end (-16) must be greater than start (16)}}
  %r = tt.make_range {end = -16 : i32, start = 16 : i32} : tensor<32xi32>
  tt.return
}

// -----

tt.func @make_range_wrong_size() {
  // expected-error @+1 {{'tt.make_range' op result has 64 elements, but [0, 128) has 128}}
  %r = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<64xi32>
  tt.return
}

// -----

tt.func @make_range_rank_two() {
  // expected-error @+1 {{'tt.make_range' op result must be a 1-D tensor}}
  %r = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<1x128xi32>
  tt.return
}

// -----

tt.func @splat_element_mismatch(%x: f32) {
  // expected-error @+1 {{'tt.splat' op result element type 'f16' does not match the operand type 'f32'}}
  %y = tt.splat %x : f32 -> tensor<128xf16>
  tt.return
}

// -----

tt.func @splat_pointer_mismatch(%p: !tt.ptr<f16>) {
  // expected-error @+1 {{'tt.splat' op result element type '!tt.ptr<f32>' does not match the operand type '!tt.ptr<f16>'}}
  %y = tt.splat %p : !tt.ptr<f16> -> tensor<128x!tt.ptr<f32>>
  tt.return
}

// -----

//===----------------------------------------------------------------------===//
// tt.reduce
//===----------------------------------------------------------------------===//

tt.func @reduce_axis_out_of_range(%x: tensor<128x64xf32>) {
  // expected-error @+1 {{'tt.reduce' op axis 2 is out of range for rank 2}}
  %r = "tt.reduce"(%x) <{axis = 2 : i32}> ({
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    tt.reduce.return %s : f32
  }) : (tensor<128x64xf32>) -> tensor<128xf32>
  tt.return
}

// -----

tt.func @reduce_negative_axis(%x: tensor<128x64xf32>) {
  // expected-error @+1 {{'tt.reduce' op axis -1 is out of range for rank 2}}
  %r = "tt.reduce"(%x) <{axis = -1 : i32}> ({
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    tt.reduce.return %s : f32
  }) : (tensor<128x64xf32>) -> tensor<128xf32>
  tt.return
}

// -----

tt.func @reduce_wrong_result(%x: tensor<128x64xf32>) {
  // expected-error @+1 {{'tt.reduce' op result type 'tensor<64xf32>' should be 'tensor<128xf32>'}}
  %r = "tt.reduce"(%x) <{axis = 1 : i32}> ({
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    tt.reduce.return %s : f32
  }) : (tensor<128x64xf32>) -> tensor<64xf32>
  tt.return
}

// -----

// A rank-1 reduction yields a scalar, not a tensor.
tt.func @reduce_rank_one_to_tensor(%x: tensor<128xf32>) {
  // expected-error @+1 {{'tt.reduce' op result type 'tensor<1xf32>' should be 'f32'}}
  %r = "tt.reduce"(%x) <{axis = 0 : i32}> ({
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    tt.reduce.return %s : f32
  }) : (tensor<128xf32>) -> tensor<1xf32>
  tt.return
}

// -----

tt.func @reduce_result_count(%x: tensor<128x64xf32>) {
  // expected-error @+1 {{'tt.reduce' op has 1 operands but 2 results}}
  %r:2 = "tt.reduce"(%x) <{axis = 1 : i32}> ({
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    tt.reduce.return %s : f32
  }) : (tensor<128x64xf32>) -> (tensor<128xf32>, tensor<128xf32>)
  tt.return
}

// -----

tt.func @reduce_combiner_arity(%x: tensor<128x64xf32>) {
  // expected-error @+1 {{'tt.reduce' op combiner must take 2 arguments, takes 3}}
  %r = "tt.reduce"(%x) <{axis = 1 : i32}> ({
  ^bb0(%a: f32, %b: f32, %c: f32):
    %s = arith.addf %a, %b : f32
    tt.reduce.return %s : f32
  }) : (tensor<128x64xf32>) -> tensor<128xf32>
  tt.return
}

// -----

tt.func @reduce_combiner_argument_types(%x: tensor<128x64xf32>) {
  // expected-error @+1 {{'tt.reduce' op combiner arguments must have the element types of the operands}}
  %r = "tt.reduce"(%x) <{axis = 1 : i32}> ({
  ^bb0(%a: f16, %b: f16):
    %s = arith.addf %a, %b : f16
    tt.reduce.return %s : f16
  }) : (tensor<128x64xf32>) -> tensor<128xf32>
  tt.return
}

// -----

tt.func @reduce_combiner_return_count(%x: tensor<128x64xf32>) {
  // expected-error @+1 {{'tt.reduce' op combiner must end in tt.reduce.return with 1 values}}
  %r = "tt.reduce"(%x) <{axis = 1 : i32}> ({
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    tt.reduce.return %s, %s : f32, f32
  }) : (tensor<128x64xf32>) -> tensor<128xf32>
  tt.return
}

// -----

tt.func @reduce_operand_shapes(%x: tensor<128x64xf32>, %y: tensor<128x32xi32>) {
  // expected-error @+1 {{'tt.reduce' op operands must have the same shape}}
  %r:2 = "tt.reduce"(%x, %y) <{axis = 1 : i32}> ({
  ^bb0(%a: f32, %i: i32, %b: f32, %j: i32):
    tt.reduce.return %a, %i : f32, i32
  }) : (tensor<128x64xf32>, tensor<128x32xi32>) -> (tensor<128xf32>, tensor<128xi32>)
  tt.return
}

// -----

//===----------------------------------------------------------------------===//
// Pointers and conversions
//===----------------------------------------------------------------------===//

tt.func @addptr_shape_mismatch(%p: tensor<128x!tt.ptr<f16>>, %o: tensor<64xi32>) {
  // expected-error @+1 {{'tt.addptr' op pointer shape [128] and offset shape [64] differ}}
  %q = tt.addptr %p, %o : tensor<128x!tt.ptr<f16>>, tensor<64xi32>
  tt.return
}

// -----

tt.func @addptr_scalar_pointer_tensor_offset(%p: !tt.ptr<f16>, %o: tensor<64xi32>) {
  // expected-error @+1 {{'tt.addptr' op a scalar pointer needs a scalar offset}}
  %q = tt.addptr %p, %o : !tt.ptr<f16>, tensor<64xi32>
  tt.return
}

// -----

tt.func @addptr_tensor_pointer_scalar_offset(%p: tensor<64x!tt.ptr<f16>>, %o: i32) {
  // expected-error @+1 {{'tt.addptr' op a tensor of pointers needs a tensor of offsets of the same shape}}
  %q = tt.addptr %p, %o : tensor<64x!tt.ptr<f16>>, i32
  tt.return
}

// -----

tt.func @fp_to_fp_narrowing_without_rounding(%x: tensor<128x64xf32>) {
  // expected-error @+1 {{'tt.fp_to_fp' op a narrowing conversion from 'f32' to 'f8E4M3FN' needs a rounding mode}}
  %y = tt.fp_to_fp %x : tensor<128x64xf32> -> tensor<128x64xf8E4M3FN>
  tt.return
}

// -----

tt.func @fp_to_fp_scalar_narrowing(%x: f16) {
  // expected-error @+1 {{'tt.fp_to_fp' op a narrowing conversion from 'f16' to 'f8E5M2' needs a rounding mode}}
  %y = tt.fp_to_fp %x : f16 -> f8E5M2
  tt.return
}

// -----

tt.func @fp_to_fp_shape_mismatch(%x: tensor<128xf8E4M3FN>) {
  // expected-error @+1 {{'tt.fp_to_fp' op operand and result shapes differ}}
  %y = tt.fp_to_fp %x : tensor<128xf8E4M3FN> -> tensor<64xf32>
  tt.return
}

// -----

//===----------------------------------------------------------------------===//
// Functions
//===----------------------------------------------------------------------===//

tt.func @return_arity(%x: i32) -> i32 {
  // expected-error @+1 {{'tt.return' op has 0 operands, but the enclosing function @return_arity returns 1}}
  tt.return
}

// -----

tt.func @return_extra_value(%x: i32) {
  // expected-error @+1 {{'tt.return' op has 1 operands, but the enclosing function @return_extra_value returns 0}}
  tt.return %x : i32
}

// -----

tt.func @return_type(%x: i64) -> i32 {
  // expected-error @+1 {{'tt.return' op operand #0 has type 'i64', but the enclosing function returns 'i32'}}
  tt.return %x : i64
}

// -----

tt.func @call_missing(%x: i32) {
  // expected-error @+1 {{'tt.call' op 'nowhere' does not reference a tt.func}}
  %y = tt.call @nowhere(%x) : (i32) -> i32
  tt.return
}

// -----

tt.func private @helper(%x: i32) -> i32 {
  tt.return %x : i32
}

tt.func @call_wrong_types(%x: i64) {
  // expected-error @+1 {{'tt.call' op operand or result types do not match @helper of type '(i32) -> i32'}}
  %y = tt.call @helper(%x) : (i64) -> i32
  tt.return
}
