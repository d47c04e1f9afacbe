// Input of unusual-kernels.test: a kernel unlike the samples.
tt.func public @k(%a: !tt.tensordesc<tensor<64x64xf16>>, %b: !tt.tensordesc<tensor<64x64xf16>>, %o: !tt.tensordesc<tensor<64x64xf32>>, %K: i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c3 = arith.constant 3 : i32
  %c64 = arith.constant 64 : i32
  %z = arith.constant dense<0.0> : tensor<64x64xf32>
  %r = scf.for %j = %c0 to %c3 step %c1 iter_args(%y = %z) -> (tensor<64x64xf32>) : i32 {
    %row = arith.muli %j, %c64 : i32
    %q = scf.for %k = %c0 to %K step %c64 iter_args(%x = %y) -> (tensor<64x64xf32>) : i32 {
      %t = tt.descriptor_load %a[%row, %k] : !tt.tensordesc<tensor<64x64xf16>> -> tensor<64x64xf16>
      %u = tt.descriptor_load %b[%row, %k] : !tt.tensordesc<tensor<64x64xf16>> -> tensor<64x64xf16>
      %d = tt.dot %t, %u, %x : tensor<64x64xf16> * tensor<64x64xf16> -> tensor<64x64xf32>
      scf.yield %d : tensor<64x64xf32>
    }
    scf.yield %q : tensor<64x64xf32>
  }
  tt.descriptor_store %o[%c0, %c0], %r : !tt.tensordesc<tensor<64x64xf32>>, tensor<64x64xf32>
  tt.return
}
