// Input of unusual-kernels.test: a kernel unlike the samples.
tt.func public @k(%a: !tt.tensordesc<tensor<64x64xf16>>, %b: !tt.tensordesc<tensor<64x64xf16>>, %o: !tt.tensordesc<tensor<64x64xf32>>) {
  %c0 = arith.constant 0 : i32
  %z = arith.constant dense<0.0> : tensor<64x64xf32>
  %t = tt.descriptor_load %a[%c0, %c0] : !tt.tensordesc<tensor<64x64xf16>> -> tensor<64x64xf16>
  %u = tt.descriptor_load %b[%c0, %c0] : !tt.tensordesc<tensor<64x64xf16>> -> tensor<64x64xf16>
  %d = tt.dot %t, %u, %z : tensor<64x64xf16> * tensor<64x64xf16> -> tensor<64x64xf32>
  tt.descriptor_store %o[%c0, %c0], %d : !tt.tensordesc<tensor<64x64xf32>>, tensor<64x64xf32>
  tt.return
}
