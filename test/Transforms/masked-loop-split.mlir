// RUN: tawa-opt %examples_ttir/attn_fwd_fp16_causal.ttir -tawa-masked-loop-split | FileCheck %s --check-prefixes=CHECK,GUARD
// RUN: tawa-opt %examples_ttir/attn_fwd_fp16_causal.ttir -tawa-masked-loop-split=mode=split | FileCheck %s --check-prefixes=CHECK,SPLIT
// RUN: tawa-opt %shared_ttir/attn_fp16_causal.ttir -tawa-masked-loop-split | FileCheck %s --check-prefix=SHARED-GUARD
// RUN: tawa-opt %shared_ttir/attn_fp16_causal.ttir -tawa-masked-loop-split=mode=split | FileCheck %s --check-prefix=SHARED
// A loop without a mask is left alone.
// RUN: tawa-opt %shared_ttir/attn_fp16.ttir -tawa-masked-loop-split | FileCheck %s --check-prefix=NOMASK
// The user's own split (off-band loop unmasked, band loop masked): the band
// loop's mask is all true on none of its iterations (split = its lower
// bound), so its prefix loop runs zero times, or its guard is always taken.
// RUN: tawa-opt %examples_ttir/attn_fwd_fp16_causal_split.ttir -tawa-masked-loop-split=mode=split | FileCheck %s --check-prefix=USER
// RUN: tawa-opt %examples_ttir/attn_fwd_fp16_causal_split.ttir -tawa-masked-loop-split | FileCheck %s --check-prefix=USER-GUARD
// A mode other than guard or split is refused.
// RUN: not tawa-opt %examples_ttir/attn_fwd_fp16_causal.ttir -tawa-masked-loop-split=mode=both 2>&1 | FileCheck %s --check-prefix=BADMODE

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
// CHECK: %[[SP:.*]] = arith.maxsi %c0_i32, %[[S1]] : i32
// mode=guard: one loop; S is masked only from split on. The column vector
// (splat of the induction variable + range), the comparison and the select
// move into the branch; S itself (the scaled product) stays before it.
// GUARD: scf.for %[[IV:.*]] = %c0_i32 to %[[UB]] step %c128_i32
// GUARD: tt.dot
// GUARD-NOT: arith.select
// GUARD: %[[ON:.*]] = arith.cmpi sge, %[[IV]], %[[SP]] : i32
// GUARD-NEXT: %[[P:.*]] = scf.if %[[ON]] -> (tensor<128x128xf32>) {
// GUARD: tt.splat %[[IV]]
// GUARD: %[[M:.*]] = arith.cmpi sge, %{{.*}}, %{{.*}} : tensor<128x128xi32>
// GUARD-NEXT: %[[SEL:.*]] = arith.select %[[M]], %[[S:[0-9a-z_]+]], %{{.*}}
// GUARD-NEXT: scf.yield %[[SEL]]
// GUARD-NEXT: } else {
// GUARD-NEXT: scf.yield %[[S]]
// GUARD-NEXT: }
// GUARD-NEXT: "tt.reduce"(%[[P]])
// GUARD-NOT: arith.select
// GUARD-NOT: scf.for
// mode=split: the prefix, no select on the mask.
// SPLIT: %[[PRE:.*]]:3 = scf.for %{{.*}} = %c0_i32 to %[[SP]] step %c128_i32
// SPLIT-NOT: arith.select
// SPLIT: scf.yield
// The band: the original body from split on, carrying the prefix's state.
// SPLIT: scf.for %{{.*}} = %[[SP]] to %[[UB]] step %c128_i32 iter_args(%{{.*}} = %[[PRE]]#0, %{{.*}} = %[[PRE]]#1, %{{.*}} = %[[PRE]]#2)
// SPLIT: arith.cmpi sge
// SPLIT: arith.select
// SPLIT: scf.yield

// The shared sample writes the same mask with tl.where inside `if CAUSAL`.
// SHARED: %[[SP:.*]] = arith.maxsi %c0_i32, %{{.*}} : i32
// SHARED: scf.for %{{.*}} = %c0_i32 to %[[SP]]
// SHARED-NOT: arith.select
// SHARED: scf.yield
// SHARED: scf.for %{{.*}} = %[[SP]] to
// SHARED: arith.select

// SHARED-GUARD: %[[SP:.*]] = arith.maxsi %c0_i32, %{{.*}} : i32
// SHARED-GUARD: scf.for %[[IV:.*]] = %c0_i32 to
// SHARED-GUARD: arith.cmpi sge, %[[IV]], %[[SP]] : i32
// SHARED-GUARD-NEXT: scf.if
// SHARED-GUARD: arith.select
// SHARED-GUARD-NOT: scf.for

// NOMASK-NOT: arith.floordivsi
// NOMASK: scf.for
// NOMASK-NOT: scf.for

// USER: scf.for
// USER-NOT: arith.select
// USER: %[[S1:.*]] = arith.minsi
// USER-NEXT: %[[SP:.*]] = arith.maxsi %[[LB:.*]], %[[S1]] : i32
// USER: scf.for %{{.*}} = %[[LB]] to %[[SP]]
// USER-NOT: arith.select
// USER: scf.for %{{.*}} = %[[SP]] to
// USER: arith.select

// USER-GUARD: scf.for
// USER-GUARD-NOT: arith.select
// USER-GUARD: %[[S1:.*]] = arith.minsi
// USER-GUARD-NEXT: %[[SP:.*]] = arith.maxsi %[[LB:.*]], %[[S1]] : i32
// USER-GUARD: scf.for %[[IV:.*]] = %[[LB]] to
// USER-GUARD: arith.cmpi sge, %[[IV]], %[[SP]] : i32
// USER-GUARD-NEXT: scf.if
// USER-GUARD: arith.select

// BADMODE: mode must be 'guard' or 'split'
