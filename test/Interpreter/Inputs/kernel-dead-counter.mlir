// Input of unusual-kernels.test: a kernel unlike the samples.
// The K loop carries a counter nothing reads (its result is unused): no
// partition's slice reaches it, and it stays with the consumer.
tt.func public @k(%a: !tt.tensordesc<tensor<64x64xf16>>, %b: !tt.tensordesc<tensor<64x64xf16>>, %o: !tt.tensordesc<tensor<64x64xf32>>, %K: i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c64 = arith.constant 64 : i32
  %z = arith.constant dense<0.0> : tensor<64x64xf32>
  %r:2 = scf.for %k = %c0 to %K step %c64 iter_args(%x = %z, %n = %c0) -> (tensor<64x64xf32>, i32) : i32 {
    %t = tt.descriptor_load %a[%c0, %k] : !tt.tensordesc<tensor<64x64xf16>> -> tensor<64x64xf16>
    %u = tt.descriptor_load %b[%k, %c0] : !tt.tensordesc<tensor<64x64xf16>> -> tensor<64x64xf16>
    %d = tt.dot %t, %u, %x : tensor<64x64xf16> * tensor<64x64xf16> -> tensor<64x64xf32>
    %n1 = arith.addi %n, %c1 : i32
    scf.yield %d, %n1 : tensor<64x64xf32>, i32
  }
  tt.descriptor_store %o[%c0, %c0], %r#0 : !tt.tensordesc<tensor<64x64xf32>>, tensor<64x64xf32>
  tt.return
}
