// The optimal scheduler's compiler hook: the main loop's graph is solved
// (Twill's Algorithm 1) and written back as attributes.
// RUN: tawa-opt %examples_ttir/gemm_fp16.ttir -tawa-persistent-programs -tawa-partition-annotation -tawa-optimal-schedule | FileCheck %s --check-prefix=GEMM
// RUN: tawac %examples_ttir/gemm_fp16.ttir --emit=ws-ir --schedule=optimal | FileCheck %s --check-prefix=WSIR
// RUN: tawa-opt %examples_ttir/attn_fwd_fp16.ttir -tawa-persistent-programs -tawa-partition-annotation -tawa-optimal-schedule | FileCheck %s --check-prefix=ATTN
// RUN: not tawa-opt %examples_ttir/attn_fwd_fp16.ttir -tawa-partition-annotation -tawa-optimal-schedule="timeout=0.000001" 2>&1 | FileCheck %s --check-prefix=TIMEOUT

// For the GEMM the loads stream on the producer (warp group 0) and the
// product runs on a consumer; the tensor core is busy every II, so each
// product completes one iteration after its issue: one product in flight.
// GEMM: tt.descriptor_load {{.*}}{tawa.partition = array<i32: 0>, tawa.schedule_start = {{[0-9]+}} : i32, tawa.schedule_warp = 0 : i32}
// GEMM: tt.descriptor_load {{.*}}{tawa.partition = array<i32: 0>, tawa.schedule_start = {{[0-9]+}} : i32, tawa.schedule_warp = 0 : i32}
// GEMM: tt.dot {{.*}}tawa.schedule_warp = {{[1-9]}} : i32
// GEMM: tawa.schedule = "optimal", tawa.schedule_consumer_slack = 1024 : i32, tawa.schedule_ii = 2 : i32, tawa.schedule_lag = 1 : i32, tawa.schedule_length = {{[0-9]+}} : i32

// The solved lag is the least P the pipeline may keep; above it the MMA
// pipeline's measured rule decides: for this kernel P = 2 in long loops and
// a P = 1 copy for loops of at most 8 iterations, the pipeline the heuristic
// builds (the steady state is the same; docs/SCHEDULER.md, step 3).
// WSIR: scf.if
// WSIR: tawa.dot_wait {{.*}}{pendings = 1 : i32}
// WSIR: } else {
// WSIR: tawa.dot_wait {{.*}}{pendings = 2 : i32}

// Attention is solved now and realized when attention code generation lands:
// K and V loads on the producer, the two products and the softmax blocks on
// consumer groups.
// ATTN: tt.descriptor_load {{.*}}tawa.schedule_warp = 0 : i32
// ATTN: tt.dot {{.*}}tawa.schedule_warp = {{[1-9]}} : i32
// ATTN: tt.descriptor_load {{.*}}tawa.schedule_warp = 0 : i32
// ATTN: tt.dot {{.*}}tawa.schedule_warp = {{[1-9]}} : i32
// ATTN: tawa.schedule = "optimal", tawa.schedule_consumer_slack = {{[0-9]+}} : i32, tawa.schedule_ii = {{[0-9]+}} : i32, tawa.schedule_lag = {{[0-9]}} : i32

// TIMEOUT: error: the optimal scheduler found no schedule for this loop (timeout
