// RUN: split-file %s %t
// RUN: not tawa-opt %t/unsupported.ttir -tawa-check-supported 2>&1 \
// RUN:   | FileCheck %s --check-prefix=ERR --implicit-check-not=triton/language --implicit-check-not=error:
// RUN: tawa-opt %t/supported.ttir -mlir-print-debuginfo -o %t/parsed.mlir
// RUN: tawa-opt %t/supported.ttir -tawa-check-supported -mlir-print-debuginfo -o %t/checked.mlir
// RUN: diff %t/parsed.mlir %t/checked.mlir
// RUN: FileCheck %s --check-prefix=OK --input-file=%t/checked.mlir
// RUN: not tawa-opt %t/unstored.ttir -tawa-check-supported 2>&1 \
// RUN:   | FileCheck %s --check-prefix=DEAD --implicit-check-not=error:
//
// -tawa-check-supported reports every construct outside the subset tawa
// compiles at the user's line in kernel.py (the first frame of a Triton
// location that is not inside triton/language), names the value it defines,
// and ends with the count; a kernel inside the subset passes through unchanged.
// The diagnostics point into kernel.py, so -verify-diagnostics cannot see them.

// ERR: kernel.py:14:16: error: tawa cannot compile the result of 'arith.extf' (defining 'wide') yet: tensors of f64 are not supported
// ERR: kernel.py:16:17: error: tawa cannot compile operation 'tt.gather' (defining 'picked') yet: tawa has no definition of this operation
// ERR: kernel.py:18:8: error: tawa cannot compile operation 'tt.atomic_rmw' yet: atomic operations are not supported
// ERR: kernel.py:20:14: error: tawa cannot compile operation 'tt.scan' (defining 'csum') yet: scans are not supported
// ERR: kernel.py:23:23: error: tawa cannot compile operation 'tt.dot' (defining 'bacc') yet: batched tt.dot (rank-3 operands) is not supported
// ERR: kernel.py:25:15: error: tawa cannot compile operation 'tt.reduce' (defining 'prod') yet: tt.reduce is supported with a single add, max or min combiner only
// ERR: kernel.py:10:0: error: 6 constructs outside the subset tawa compiles (see the errors above)

//--- unsupported.ttir
#loc = loc("kernel.py":10:0)
#loc1 = loc(unknown)
#loc8 = loc("kernel.py":20:14)
#loc14 = loc("kernel.py":25:15)
#loc25 = loc("csum"(#loc8))
#loc29 = loc("prod"(#loc14))
module {
  tt.func public @unsupported(%x_ptr: !tt.ptr<f32> loc("x_ptr"(#loc)), %idx_ptr: !tt.ptr<i32> loc("idx_ptr"(#loc)), %a_desc: !tt.tensordesc<tensor<2x64x32xf16>> loc("a_desc"(#loc)), %b_desc: !tt.tensordesc<tensor<2x32x64xf16>> loc("b_desc"(#loc))) attributes {noinline = false} {
    %c0_i32 = arith.constant 0 : i32 loc(#loc1)
    %acc = arith.constant dense<0.000000e+00> : tensor<2x64x64xf32> loc(#loc30)
    %offs = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32> loc(#loc20)
    %x = tt.splat %x_ptr : !tt.ptr<f32> -> tensor<128x!tt.ptr<f32>> loc(#loc21)
    %x_0 = tt.addptr %x, %offs : tensor<128x!tt.ptr<f32>>, tensor<128xi32> loc(#loc21)
    %x_1 = tt.load %x_0 : tensor<128x!tt.ptr<f32>> loc(#loc21)
    %wide = arith.extf %x_1 : tensor<128xf32> to tensor<128xf64> loc(#loc22)
    %idx = tt.splat %idx_ptr : !tt.ptr<i32> -> tensor<64x!tt.ptr<i32>> loc(#loc23)
    %idx_2 = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32> loc(#loc23)
    %idx_3 = tt.addptr %idx, %idx_2 : tensor<64x!tt.ptr<i32>>, tensor<64xi32> loc(#loc23)
    %idx_4 = tt.load %idx_3 : tensor<64x!tt.ptr<i32>> loc(#loc23)
    %picked = "tt.gather"(%x_1, %idx_4) <{axis = 0 : i32}> : (tensor<128xf32>, tensor<64xi32>) -> tensor<64xf32> loc(#loc24)
    %old = tt.atomic_rmw fadd, acq_rel, gpu, %x_0, %x_1 : (tensor<128x!tt.ptr<f32>>, tensor<128xf32>) -> tensor<128xf32> loc(#loc6)
    %csum = "tt.scan"(%x_1) <{axis = 0 : i32, reverse = false}> ({
    ^bb0(%csum_7: f32 loc(callsite(#loc1 at #loc25)), %csum_8: f32 loc(callsite(#loc1 at #loc25))):
      %csum_9 = arith.addf %csum_7, %csum_8 : f32 loc(#loc31)
      tt.scan.return %csum_9 : f32 loc(#loc32)
    }) : (tensor<128xf32>) -> tensor<128xf32> loc(#loc32)
    %a = tt.descriptor_load %a_desc[%c0_i32, %c0_i32, %c0_i32] : !tt.tensordesc<tensor<2x64x32xf16>> -> tensor<2x64x32xf16> loc(#loc26)
    %b = tt.descriptor_load %b_desc[%c0_i32, %c0_i32, %c0_i32] : !tt.tensordesc<tensor<2x32x64xf16>> -> tensor<2x32x64xf16> loc(#loc27)
    %bacc = tt.dot %a, %b, %acc, inputPrecision = tf32 : tensor<2x64x32xf16> * tensor<2x32x64xf16> -> tensor<2x64x64xf32> loc(#loc28)
    %prod = "tt.reduce"(%x_1) <{axis = 0 : i32}> ({
    ^bb0(%prod_10: f32 loc(callsite(#loc1 at #loc29)), %prod_11: f32 loc(callsite(#loc1 at #loc29))):
      %prod_12 = arith.mulf %prod_10, %prod_11 : f32 loc(#loc33)
      tt.reduce.return %prod_12 : f32 loc(#loc33)
    }) : (tensor<128xf32>) -> f32 loc(#loc29)
    tt.return loc(#loc19)
  } loc(#loc)
} loc(#loc)
#loc2 = loc("kernel.py":12:31)
#loc3 = loc("kernel.py":13:16)
#loc4 = loc("kernel.py":14:16)
#loc5 = loc("kernel.py":15:18)
#loc6 = loc("kernel.py":18:8)
#loc7 = loc("kernel.py":16:17)
#loc9 = loc("triton/language/standard.py":301:40)
#loc10 = loc("triton/language/core.py":2680:55)
#loc11 = loc("kernel.py":21:20)
#loc12 = loc("kernel.py":22:20)
#loc13 = loc("kernel.py":23:23)
#loc15 = loc("kernel.py":26:16)
#loc16 = loc("triton/language/standard.py":44:11)
#loc17 = loc("triton/language/standard.py":43:30)
#loc18 = loc("kernel.py":11:27)
#loc19 = loc("kernel.py":26:4)
#loc20 = loc("offs"(#loc2))
#loc21 = loc("x"(#loc3))
#loc22 = loc("wide"(#loc4))
#loc23 = loc("idx"(#loc5))
#loc24 = loc("picked"(#loc7))
#loc26 = loc("a"(#loc11))
#loc27 = loc("b"(#loc12))
#loc28 = loc("bacc"(#loc13))
#loc30 = loc(callsite(#loc17 at #loc18))
#loc31 = loc(callsite(#loc16 at #loc25))
#loc32 = loc(callsite(callsite(#loc9 at #loc10) at #loc25))
#loc33 = loc(callsite(#loc15 at #loc29))

// OK-LABEL: tt.func public @supported(
// OK-SAME: %arg0: !tt.tensordesc<tensor<128x64xf16>> loc("a_desc"(#loc))
// OK: tt.dot {{.*}} : tensor<128x64xf16> * tensor<64x128xf16> -> tensor<128x128xf32> loc([[DOT:#loc[0-9]+]])
// OK: "tt.reduce"
// OK: arith.maxnumf
// OK: tt.descriptor_store
// OK-DAG: [[DOTF:#loc[0-9]+]] = loc("kernel.py":38:25)
// OK-DAG: [[DOT]] = loc("acc"([[DOTF]]))

//--- supported.ttir
#loc = loc("kernel.py":30:0)
#loc1 = loc(unknown)
#loc11 = loc("kernel.py":39:22)
#loc28 = loc("m"(#loc11))
module {
  tt.func public @supported(%a_desc: !tt.tensordesc<tensor<128x64xf16>> loc("a_desc"(#loc)), %b_desc: !tt.tensordesc<tensor<128x64xf16>> loc("b_desc"(#loc)), %c_desc: !tt.tensordesc<tensor<128x128xf16>> loc("c_desc"(#loc)), %m_ptr: !tt.ptr<f32> loc("m_ptr"(#loc)), %K: i32 {tt.divisibility = 16 : i32} loc("K"(#loc))) attributes {noinline = false} {
    %c64_i32 = arith.constant 64 : i32 loc(#loc1)
    %c1_i32 = arith.constant 1 : i32 loc(#loc1)
    %c0_i32 = arith.constant 0 : i32 loc(#loc1)
    %acc = arith.constant dense<0.000000e+00> : tensor<128x128xf32> loc(#loc20)
    %pid = tt.get_program_id x : i32 loc(#loc21)
    %0 = arith.divsi %K, %c64_i32 : i32 loc(#loc3)
    %acc_0 = scf.for %k = %c0_i32 to %0 step %c1_i32 iter_args(%acc_1 = %acc) -> (tensor<128x128xf32>)  : i32 {
      %off = arith.muli %k, %c64_i32 : i32 loc(#loc22)
      %a = tt.descriptor_load %a_desc[%pid, %off] : !tt.tensordesc<tensor<128x64xf16>> -> tensor<128x64xf16> loc(#loc23)
      %b = tt.descriptor_load %b_desc[%c0_i32, %off] : !tt.tensordesc<tensor<128x64xf16>> -> tensor<128x64xf16> loc(#loc24)
      %bt = tt.trans %b {order = array<i32: 1, 0>} : tensor<128x64xf16> -> tensor<64x128xf16> loc(#loc25)
      %acc_2 = tt.dot %a, %bt, %acc_1, inputPrecision = tf32 : tensor<128x64xf16> * tensor<64x128xf16> -> tensor<128x128xf32> loc(#loc26)
      scf.yield %acc_2 : tensor<128x128xf32> loc(#loc9)
    } loc(#loc27)
    %m = "tt.reduce"(%acc_0) <{axis = 1 : i32}> ({
    ^bb0(%m_3: f32 loc(callsite(#loc1 at #loc28)), %m_4: f32 loc(callsite(#loc1 at #loc28))):
      %m_5 = arith.maxnumf %m_3, %m_4 : f32 loc(#loc30)
      tt.reduce.return %m_5 : f32 loc(#loc29)
    }) : (tensor<128x128xf32>) -> tensor<128xf32> loc(#loc29)
    %mp = tt.splat %m_ptr : !tt.ptr<f32> -> tensor<128x!tt.ptr<f32>> loc(#loc31)
    %offs = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32> loc(#loc31)
    %mp_6 = tt.addptr %mp, %offs : tensor<128x!tt.ptr<f32>>, tensor<128xi32> loc(#loc31)
    tt.store %mp_6, %m : tensor<128x!tt.ptr<f32>> loc(#loc14)
    %c = arith.truncf %acc_0 : tensor<128x128xf32> to tensor<128x128xf16> loc(#loc15)
    tt.descriptor_store %c_desc[%pid, %c0_i32], %c : !tt.tensordesc<tensor<128x128xf16>>, tensor<128x128xf16> loc(#loc16)
    tt.return loc(#loc17)
  } loc(#loc)
} loc(#loc)
#loc2 = loc("kernel.py":32:18)
#loc3 = loc("kernel.py":34:22)
#loc4 = loc("kernel.py":35:22)
#loc5 = loc("kernel.py":36:24)
#loc6 = loc("kernel.py":37:24)
#loc7 = loc("kernel.py":38:33)
#loc8 = loc("kernel.py":38:25)
#loc9 = loc("kernel.py":38:8)
#loc10 = loc("kernel.py":34:19)
#loc12 = loc("triton/language/standard.py":191:40)
#loc13 = loc("kernel.py":40:33)
#loc14 = loc("kernel.py":40:18)
#loc15 = loc("kernel.py":41:40)
#loc16 = loc("kernel.py":41:33)
#loc17 = loc("kernel.py":41:4)
#loc18 = loc("triton/language/standard.py":173:27)
#loc19 = loc("kernel.py":33:28)
#loc20 = loc(callsite(#loc18 at #loc19))
#loc21 = loc("pid"(#loc2))
#loc22 = loc("off"(#loc4))
#loc23 = loc("a"(#loc5))
#loc24 = loc("b"(#loc6))
#loc25 = loc("acc"(#loc7))
#loc26 = loc("acc"(#loc8))
#loc27 = loc("acc"(#loc10))
#loc29 = loc(callsite(#loc12 at #loc28))
#loc30 = loc(callsite(#loc18 at #loc28))
#loc31 = loc("mp"(#loc13))

// A product no store depends on is reported (the partitioning would have no
// consumer for its tiles); one that reaches a store only through the loop
// that carries it, a branch result, or a loop bound is fine.
// DEAD: kernel.py:7:12: error: tawa cannot compile operation 'tt.dot' yet: its result reaches no store (directly, through the loops that carry it, or as a condition of one): there is nothing for the consumer warp groups to compute
// DEAD: unstored.ttir:1:1: error: 1 construct outside the subset tawa compiles (see the errors above)

//--- unstored.ttir
module {
  tt.func public @unstored(%a: !tt.tensordesc<tensor<64x64xf16>>, %o: !tt.tensordesc<tensor<64x64xf16>>, %K: i32) {
    %c0 = arith.constant 0 : i32
    %c64 = arith.constant 64 : i32
    %z = arith.constant dense<0.0> : tensor<64x64xf32>
    %r = scf.for %k = %c0 to %K step %c64 iter_args(%x = %z) -> (tensor<64x64xf32>) : i32 {
      %t = tt.descriptor_load %a[%c0, %k] : !tt.tensordesc<tensor<64x64xf16>> -> tensor<64x64xf16>
      %d = tt.dot %t, %t, %x : tensor<64x64xf16> * tensor<64x64xf16> -> tensor<64x64xf32> loc("kernel.py":7:12)
      scf.yield %d : tensor<64x64xf32>
    }
    %h = arith.truncf %r : tensor<64x64xf32> to tensor<64x64xf16>
    tt.return
  } loc("kernel.py":1:0)
  tt.func public @stored_through_branch(%a: !tt.tensordesc<tensor<64x64xf16>>, %o: !tt.tensordesc<tensor<64x64xf16>>, %K: i32, %c: i1) {
    %c0 = arith.constant 0 : i32
    %c64 = arith.constant 64 : i32
    %z = arith.constant dense<0.0> : tensor<64x64xf32>
    %r = scf.for %k = %c0 to %K step %c64 iter_args(%x = %z) -> (tensor<64x64xf32>) : i32 {
      %t = tt.descriptor_load %a[%c0, %k] : !tt.tensordesc<tensor<64x64xf16>> -> tensor<64x64xf16>
      %d = tt.dot %t, %t, %x : tensor<64x64xf16> * tensor<64x64xf16> -> tensor<64x64xf32>
      scf.yield %d : tensor<64x64xf32>
    }
    %s = scf.if %c -> (tensor<64x64xf32>) {
      scf.yield %r : tensor<64x64xf32>
    } else {
      scf.yield %z : tensor<64x64xf32>
    }
    %h = arith.truncf %s : tensor<64x64xf32> to tensor<64x64xf16>
    tt.descriptor_store %o[%c0, %c0], %h : !tt.tensordesc<tensor<64x64xf16>>, tensor<64x64xf16>
    tt.return
  }
  tt.func public @stored_through_bound(%a: !tt.tensordesc<tensor<64x64xf16>>, %p: !tt.ptr<i32>, %K: i32) {
    %c0 = arith.constant 0 : i32
    %c64 = arith.constant 64 : i32
    %z = arith.constant dense<0.0> : tensor<64x64xf32>
    %r = scf.for %k = %c0 to %K step %c64 iter_args(%x = %z) -> (tensor<64x64xf32>) : i32 {
      %t = tt.descriptor_load %a[%c0, %k] : !tt.tensordesc<tensor<64x64xf16>> -> tensor<64x64xf16>
      %d = tt.dot %t, %t, %x : tensor<64x64xf16> * tensor<64x64xf16> -> tensor<64x64xf32>
      scf.yield %d : tensor<64x64xf32>
    }
    %m = "tt.reduce"(%r) <{axis = 0 : i32}> ({
    ^bb0(%u: f32, %v: f32):
      %w = arith.maxnumf %u, %v : f32
      tt.reduce.return %w : f32
    }) : (tensor<64x64xf32>) -> tensor<64xf32>
    %m2 = "tt.reduce"(%m) <{axis = 0 : i32}> ({
    ^bb0(%u: f32, %v: f32):
      %w = arith.maxnumf %u, %v : f32
      tt.reduce.return %w : f32
    }) : (tensor<64xf32>) -> f32
    %n = arith.fptosi %m2 : f32 to i32
    scf.for %i = %c0 to %n step %c64 : i32 {
      tt.store %p, %i : !tt.ptr<i32>
    }
    tt.return
  }
}
