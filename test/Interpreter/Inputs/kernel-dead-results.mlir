// Input of unusual-kernels.test: a kernel unlike the samples.
tt.func public @k(%a: !tt.tensordesc<tensor<64x64xf16>>, %b: !tt.tensordesc<tensor<64x64xf16>>, %o: !tt.tensordesc<tensor<64x64xf32>>, %K: i32) {
  %c0 = arith.constant 0 : i32
  %c64 = arith.constant 64 : i32
  %z = arith.constant dense<0.0> : tensor<64x64xf32>
  %r:2 = scf.for %k = %c0 to %K step %c64 iter_args(%x = %z, %row = %c0) -> (tensor<64x64xf32>, i32) : i32 {
    %t = tt.descriptor_load %a[%row, %k] : !tt.tensordesc<tensor<64x64xf16>> -> tensor<64x64xf16>
    %u = tt.descriptor_load %b[%c0, %k] : !tt.tensordesc<tensor<64x64xf16>> -> tensor<64x64xf16>
    %d = tt.dot %t, %u, %x : tensor<64x64xf16> * tensor<64x64xf16> -> tensor<64x64xf32>
    %s = "tt.reduce"(%d) <{axis = 1 : i32}> ({
    ^bb0(%p: f32, %q: f32):
      %mx = arith.maxnumf %p, %q : f32
      tt.reduce.return %mx : f32
    }) : (tensor<64x64xf32>) -> tensor<64xf32>
    %s2 = "tt.reduce"(%s) <{axis = 0 : i32}> ({
    ^bb0(%p: f32, %q: f32):
      %mx = arith.maxnumf %p, %q : f32
      tt.reduce.return %mx : f32
    }) : (tensor<64xf32>) -> f32
    %i = arith.fptosi %s2 : f32 to i32
    %c3 = arith.constant 3 : i32
    %n = arith.andi %i, %c3 : i32
    scf.yield %d, %n : tensor<64x64xf32>, i32
  }
  tt.return
}
