// RUN: tawa-opt %examples_ttir/attn_fwd_fp16_causal.ttir -tawa-masked-loop-split | FileCheck %s
// RUN: tawa-opt %shared_ttir/attn_fp16_causal.ttir -tawa-masked-loop-split | FileCheck %s --check-prefix=SHARED
// A loop without a mask is left alone.
// RUN: tawa-opt %shared_ttir/attn_fp16.ttir -tawa-masked-loop-split | FileCheck %s --check-prefix=NOMASK
// The user's own split (off-band loop unmasked, band loop masked): the band
// loop's mask is all true on none of its iterations (split = its lower
// bound), so its prefix loop runs zero times.
// RUN: tawa-opt %examples_ttir/attn_fwd_fp16_causal_split.ttir -tawa-masked-loop-split | FileCheck %s --check-prefix=USER

// Causal attention, one loop over key blocks [0, (pid + 1) * 128) step 128,
// masked where row pid * 128 + r >= column start + c. Every element is kept
// while start + 127 <= pid * 128: the prefix runs to
// split = max(0, min(ub, 128 * max(0, floor((pid * 128 - 127) / 128) + 1))).
// CHECK: %[[PID:.*]] = tt.get_program_id x : i32
// CHECK: %[[ROW0:.*]] = arith.muli %[[PID]], %c128_i32 : i32
// CHECK: %[[UB:.*]] = arith.muli %{{.*}}, %c128_i32 : i32
// CHECK: %[[T:.*]] = arith.addi %[[ROW0]], %c-127_i32 : i32
// CHECK: %[[D:.*]] = arith.subi %[[T]], %c0_i32 : i32
// CHECK: %[[K:.*]] = arith.floordivsi %[[D]], %c128_i32 : i32
// CHECK: %[[K1:.*]] = arith.addi %[[K]], %c1
// CHECK: %[[K2:.*]] = arith.maxsi %[[K1]], %c0
// CHECK: %[[OFF:.*]] = arith.muli %[[K2]], %c128_i32 : i32
// CHECK: %[[S0:.*]] = arith.addi %c0_i32, %[[OFF]] : i32
// CHECK: %[[S1:.*]] = arith.minsi %[[S0]], %[[UB]] : i32
// CHECK: %[[SPLIT:.*]] = arith.maxsi %c0_i32, %[[S1]] : i32
// The prefix: no select on the mask.
// CHECK: %[[PRE:.*]]:3 = scf.for %{{.*}} = %c0_i32 to %[[SPLIT]] step %c128_i32
// CHECK-NOT: arith.select
// CHECK: scf.yield
// The band: the original body from split on, carrying the prefix's state.
// CHECK: scf.for %{{.*}} = %[[SPLIT]] to %[[UB]] step %c128_i32 iter_args(%{{.*}} = %[[PRE]]#0, %{{.*}} = %[[PRE]]#1, %{{.*}} = %[[PRE]]#2)
// CHECK: arith.cmpi sge
// CHECK: arith.select
// CHECK: scf.yield

// The shared sample writes the same mask with tl.where inside `if CAUSAL`.
// SHARED: %[[SPLIT:.*]] = arith.maxsi %c0_i32, %{{.*}} : i32
// SHARED: scf.for %{{.*}} = %c0_i32 to %[[SPLIT]]
// SHARED-NOT: arith.select
// SHARED: scf.yield
// SHARED: scf.for %{{.*}} = %[[SPLIT]] to
// SHARED: arith.select

// NOMASK-NOT: arith.floordivsi
// NOMASK: scf.for
// NOMASK-NOT: scf.for

// USER: scf.for
// USER-NOT: arith.select
// USER: %[[S1:.*]] = arith.minsi
// USER-NEXT: %[[SPLIT:.*]] = arith.maxsi %[[LB:.*]], %[[S1]] : i32
// USER: scf.for %{{.*}} = %[[LB]] to %[[SPLIT]]
// USER-NOT: arith.select
// USER: scf.for %{{.*}} = %[[SPLIT]] to
// USER: arith.select
