// RUN: tawa-opt %s -tawa-drop-assumptions | FileCheck %s
// tl.assume(cond) is llvm.intr.assume in Triton 3.6's TTIR: a hint with no
// effect of its own. The pass erases it and the comparison only it read;
// a comparison something else reads stays.
// And tawac takes such a kernel (r01 of the issue-20 sweep: the tutorial's
// pointer GEMM with tl.assume on its strides) through the whole pipeline.
// RUN: tawac %S/Inputs/assume-pointer-gemm.ttir --emit=cuda -o %t.cu
// RUN: FileCheck %s --input-file=%t.cu --check-prefix=CUDA
// CUDA: tmaLoad2D

// CHECK-LABEL: tt.func @hints
// CHECK-NOT: llvm.intr.assume
// CHECK-NOT: arith.cmpi sgt
// CHECK: %[[KEPT:.*]] = arith.cmpi slt
// CHECK-NOT: llvm.intr.assume
// CHECK: tt.return %[[KEPT]]
tt.func @hints(%stride: i32, %pid: i32) -> i1 {
  %c0 = arith.constant 0 : i32
  %pos = arith.cmpi sgt, %stride, %c0 : i32
  llvm.intr.assume %pos : i1
  %lt = arith.cmpi slt, %pid, %c0 : i32
  llvm.intr.assume %lt : i1
  tt.return %lt : i1
}
