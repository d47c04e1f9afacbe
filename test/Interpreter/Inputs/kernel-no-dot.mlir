// Input of unusual-kernels.test: a kernel unlike the samples.
tt.func public @k(%a: !tt.tensordesc<tensor<64x64xf16>>, %o: !tt.tensordesc<tensor<64x64xf16>>, %K: i32) {
  %c0 = arith.constant 0 : i32
  %c64 = arith.constant 64 : i32
  %z = arith.constant dense<0.0> : tensor<64x64xf16>
  %r = scf.for %k = %c0 to %K step %c64 iter_args(%acc = %z) -> (tensor<64x64xf16>) : i32 {
    %t = tt.descriptor_load %a[%c0, %k] : !tt.tensordesc<tensor<64x64xf16>> -> tensor<64x64xf16>
    %s = arith.addf %acc, %t : tensor<64x64xf16>
    scf.yield %s : tensor<64x64xf16>
  }
  tt.descriptor_store %o[%c0, %c0], %r : !tt.tensordesc<tensor<64x64xf16>>, tensor<64x64xf16>
  tt.return
}
