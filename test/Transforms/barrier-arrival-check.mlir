// -tawa-barrier-arrival-check on lowered IR (tawac --emit=lowered): every
// mbarrier's count equals the arrivals its users make per phase. The IR is
// left as it is; a mismatch is an internal error at the allocation.
//
// Cooperative consumers (8 warps): full 1 (the producer's expect_tx), empty 8.
// RUN: tawac %examples_ttir/gemm_fp16.ttir --emit=lowered -o %t.g.mlir
// RUN: tawa-opt %t.g.mlir -tawa-barrier-arrival-check | FileCheck %s --check-prefix=COOP
// COOP: tawa.mbarrier.alloc arrivals(1)
// COOP-NEXT: tawa.mbarrier.alloc arrivals(8)
//
// Ping-pong: the two 4-warp consumer groups take turns, so a slot's release
// is 4 arrivals, not 8.
// RUN: tawac %examples_ttir/gemm_fp16_128x128.ttir --emit=lowered --pair-programs=off -o %t.pp.mlir
// RUN: tawa-opt %t.pp.mlir -tawa-barrier-arrival-check | FileCheck %s --check-prefix=PP
// PP: tawa.mbarrier.alloc arrivals(4)
// RUN: sed 's/arrivals(4)/arrivals(8)/' %t.pp.mlir > %t.pp8.mlir
// RUN: not tawa-opt %t.pp8.mlir -tawa-barrier-arrival-check 2>&1 | FileCheck %s --check-prefix=PP8
// PP8: error: internal error: this barrier's phase completes after 8 arrivals, but its users make 4 per phase (partition 1: 4, partition 2: 4): the kernel would hang
//
// An fp8 B stored K x N: the staging barrier has the producer's one
// announcing arrival; the ring's full barrier that plus the three
// transposing warps'; the empty barrier the consumers' 4 warps.
// RUN: tawac %examples_ttir/gemm_kn_fp8_bn64.ttir --emit=lowered --pingpong=false -o %t.kn.mlir
// RUN: tawa-opt %t.kn.mlir -tawa-barrier-arrival-check | FileCheck %s --check-prefix=KN
// KN: tawa.mbarrier.alloc arrivals(1)
// KN-NEXT: tawa.mbarrier.alloc arrivals(4)
// KN-NEXT: tawa.mbarrier.alloc arrivals(4)
// RUN: sed '0,/arrivals(4)/s//arrivals(3)/' %t.kn.mlir > %t.kn3.mlir
// RUN: not tawa-opt %t.kn3.mlir -tawa-barrier-arrival-check 2>&1 | FileCheck %s --check-prefix=KN3
// KN3: error: internal error: this barrier's phase completes after 3 arrivals, but its users make 4 per phase (partition 0: 4): the kernel would complete phases early
//
// 2-CTA clusters: releases arrive in both CTAs (8), and the staging
// barrier stays at 1. Doubled (the bug run 137 hit on the GPU as a hang),
// the check stops tawac.
// RUN: tawac %examples_ttir/gemm_kn_fp8_bn64.ttir --emit=lowered --pingpong=false --cluster=2 -o %t.c2.mlir
// RUN: tawa-opt %t.c2.mlir -tawa-barrier-arrival-check | FileCheck %s --check-prefix=C2
// C2: tawa.mbarrier.alloc arrivals(1)
// C2-NEXT: tawa.mbarrier.alloc arrivals(4)
// C2-NEXT: tawa.mbarrier.alloc arrivals(8)
// RUN: sed '0,/arrivals(1)/s//arrivals(2)/' %t.c2.mlir > %t.c2bad.mlir
// RUN: not tawa-opt %t.c2bad.mlir -tawa-barrier-arrival-check 2>&1 | FileCheck %s --check-prefix=C2BAD
// C2BAD: error: internal error: this barrier's phase completes after 2 arrivals, but its users make 1 per phase (partition 0: 1): the kernel would hang
//
// Attention (two rings, the Q tile's barrier).
// RUN: tawac %shared_ttir/attn_fp16.ttir --emit=lowered -o %t.attn.mlir
// RUN: tawa-opt %t.attn.mlir -tawa-barrier-arrival-check -o /dev/null
