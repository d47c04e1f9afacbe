// -tawa-cluster-multicast on lowered IR (the input is tawac --emit=lowered).
// RUN: tawac %examples_ttir/gemm_fp16.ttir --emit=lowered -o %t.mlir
// RUN: tawa-opt %t.mlir -tawa-cluster-multicast=required=true | FileCheck %s
// Without `required`, a kernel that cannot use clusters is left as it is.
// RUN: tawac %examples_ttir/gemm_fp16_128x128.ttir --emit=lowered --pingpong -o %t.pp.mlir
// RUN: tawa-opt %t.pp.mlir -tawa-cluster-multicast | FileCheck %s --check-prefix=KEEP
// RUN: not tawa-opt %t.pp.mlir -tawa-cluster-multicast=required=true 2>&1 | FileCheck %s --check-prefix=PINGPONG
// A kernel that walks its tiles itself is not made persistent by tawa.
// RUN: tawac %shared_ttir/gemm_persistent.ttir --emit=lowered -o %t.user.mlir
// RUN: not tawa-opt %t.user.mlir -tawa-cluster-multicast=required=true 2>&1 | FileCheck %s --check-prefix=USERLOOP
// A K loop whose trip count depends on the program (a triangular product):
// the two CTAs' rings would fall out of step.
// RUN: sed 's/scf.for %%off_k = %%c0_i32 to %%K step/scf.for %%off_k = %%c0_i32 to %%off_m step/' %examples_ttir/gemm_fp16.ttir > %t.tri.ttir
// RUN: not tawac %t.tri.ttir --emit=lowered --cluster=2 -o %t.tri.mlir 2>&1 | FileCheck %s --check-prefix=TRIP
// tawac --cluster=2 runs the pass with `required`; --cluster accepts 1 or 2.
// RUN: not tawac %shared_ttir/gemm_grouped.ttir --emit=lowered --cluster=2 -o %t.g.mlir 2>&1 | FileCheck %s --check-prefix=GROUPED
// RUN: not tawac %examples_ttir/gemm_fp16.ttir --emit=lowered --cluster=4 -o %t.x.mlir 2>&1 | FileCheck %s --check-prefix=BADN
// An fp8 B tile stored K x N is staged by TMA and transposed by producer
// warps, which wait on the staging ring's full barrier: that barrier keeps
// its one announcing arrival (doubled, its phase would never complete); only
// the consumers' empty barrier counts both CTAs' releases.
// RUN: tawac %examples_ttir/gemm_kn_fp8_bn64.ttir --emit=lowered --pingpong=false -o %t.kn.mlir
// RUN: tawa-opt %t.kn.mlir -tawa-cluster-multicast=required=true | FileCheck %s --check-prefix=STAGED
// STAGED: %[[STAGE:.*]] = tawa.mbarrier.alloc arrivals(1) : !tawa.mbarriers<4>
// STAGED-NEXT: %[[FULL:.*]] = tawa.mbarrier.alloc arrivals(4) : !tawa.mbarriers<4>
// STAGED-NEXT: %[[EMPTY:.*]] = tawa.mbarrier.alloc arrivals(8) : !tawa.mbarriers<4>
// STAGED: tawa.mbarrier.wait %[[EMPTY]]
// STAGED: tawa.tma.load %arg5[{{.*}}] into %{{.*}} arrive %[[STAGE]] multicast if
// STAGED: tawa.mbarrier.wait %[[STAGE]][{{.*}}], parity %{{.*}} {tawa.transposer}
// STAGED: tawa.mbarrier.arrive %[[FULL]][{{.*}}] per_warp {tawa.transposer}
// STAGED: tawa.mbarrier.arrive %[[EMPTY]][{{.*}}] per_warp cluster
// Releases of the producer's slots are made in both CTAs: twice the
// arrivals on the empty barriers; the full barriers keep one.
// CHECK-DAG: %[[FULL:.*]] = tawa.mbarrier.alloc arrivals(1) : !tawa.mbarriers<4>
// CHECK-DAG: %[[EMPTY:.*]] = tawa.mbarrier.alloc arrivals(16) : !tawa.mbarriers<4>
// CHECK: tawa.warp_specialize {tawa.cluster = 2 : i32} partition warps(4)
// Program indices in pairs: the loop runs to the count rounded up to even,
// the index is clamped to the last program, and the partner is index ^ 1.
// CHECK: %[[TOTAL:.*]] = arith.muli %{{.*}}, %arg20
// CHECK: %[[LAST:.*]] = arith.subi %[[TOTAL]], %[[ONE:.*]] : i32
// CHECK: %[[UP:.*]] = arith.addi %[[TOTAL]], %[[ONE]]
// CHECK: %[[EVEN:.*]] = arith.andi %[[UP]], %c-2_i32
// CHECK: scf.for %[[T:[a-z0-9_]+]] = %{{.*}} to %[[EVEN]] step
// CHECK-NEXT: %[[PID:.*]] = arith.minsi %[[T]], %[[LAST]]
// CHECK-NEXT: arith.cmpi slt, %[[T]], %[[TOTAL]]
// CHECK-NEXT: %[[X:.*]] = arith.xori %[[T]], %[[ONE]]
// CHECK-NEXT: %[[PARTNER:.*]] = arith.minsi %[[X]], %[[LAST]]
// The tile coordinates are computed for both programs, outside the K loop.
// CHECK-DAG: arith.remsi %[[PID]], %arg18
// CHECK-DAG: arith.remsi %[[PARTNER]], %arg18
// CHECK: %[[AM:.*]] = arith.muli %{{.*}}, %c128_i32
// CHECK: %[[AMP:.*]] = arith.muli %{{.*}}, %c128_i32
// CHECK: %[[BN:.*]] = arith.muli %{{.*}}, %c256_i32
// CHECK: %[[BNP:.*]] = arith.muli %{{.*}}, %c256_i32
// CHECK: scf.for %[[K:[a-z0-9_]+]] =
// CHECK: tawa.mbarrier.wait %[[EMPTY]]
// CHECK: %[[SA:.*]] = arith.cmpi eq, %[[AM]], %[[AMP]]
// CHECK: tawa.tma.load %arg0[%[[AM]], %[[K]]] into %{{.*}} arrive %[[FULL]] multicast if %[[SA]]
// CHECK: %[[SB:.*]] = arith.cmpi eq, %[[BN]], %[[BNP]]
// CHECK: tawa.tma.load %arg5[%[[BN]], %[[K]]] into %{{.*}} arrive %[[FULL]] multicast if %[[SB]]
// CHECK: } partition warps(8)
// CHECK: %[[VALID:.*]] = arith.cmpi slt, %{{.*}}, %{{.*}} : i32
// CHECK: tawa.mbarrier.arrive %[[EMPTY]][%{{.*}}] per_warp cluster
// A rerun of the partner's tile (an index past the end) stores nothing.
// CHECK: scf.if %[[VALID]] {
// CHECK-NEXT: tt.descriptor_store

// KEEP-NOT: tawa.cluster
// KEEP-NOT: multicast
// KEEP-NOT: cluster :
// KEEP: tawa.mbarrier.alloc arrivals(4)

// PINGPONG: kernels.py:17:0: error: cannot run this kernel as 2-CTA clusters: ping-pong consumers are not supported with clusters
// USERLOOP: error: cannot run this kernel as 2-CTA clusters: it is not a persistent kernel of one program loop per partition (-tawa-persistent-programs)
// TRIP: kernels.py:40:29: error: cannot run this kernel as 2-CTA clusters: a loop's bounds depend on the program index, so the two CTAs could fall out of step
// GROUPED: error: cannot run this kernel as 2-CTA clusters:
// BADN: tawac: error: --cluster must be 1 or 2 (got 4)
