// RUN: tawa-opt %examples_ttir/attn_fwd_fp16.ttir -tawa-print-loop-graph -o /dev/null | FileCheck %s --check-prefix=ATTN
// RUN: tawa-opt %examples_ttir/gemm_fp16.ttir -tawa-print-loop-graph -o /dev/null | FileCheck %s --check-prefix=GEMM
// RUN: tawa-opt %examples_ttir/gemm_fp8.ttir -tawa-print-loop-graph -o /dev/null | FileCheck %s --check-prefix=FP8
// RUN: tawa-opt %s -tawa-print-loop-graph | FileCheck %s --check-prefix=NONE

// Attention: K and V loads stream; QK^T (128x128x128: 2M multiply-adds at
// 2048 per clock = 1024 cycles); the softmax block with its exponentials on
// the MUFU pipe (128x128 exp2 at 16 per clock = 1024 cycles) after its ALU
// part; PV; the running max and the rescaled accumulator are carried.
// ATTN: # main loop of @attention_fwd_kernel (kernels.py:{{[0-9]+}}:{{[0-9]+}}), clock cycles on one H100 SM
// ATTN-NEXT: machine h100
// ATTN-NEXT: op load0 1 TMA stream smem=32 {{.*}}# tt.descriptor_load at kernels.py:{{[0-9]+}}
// ATTN-NEXT: op mma0 1024 TC regs=64 {{.*}}# tt.dot at kernels.py
// ATTN-NEXT: op core0 {{[0-9]+}} ALU:0-{{[0-9]+}} EXP:{{[0-9]+}}-{{[0-9]+}} regs=128
// ATTN-NEXT: op load1 1 TMA stream smem=32
// ATTN-NEXT: op mma1 1024 TC regs=64
// ATTN-DAG: edge load0 mma0 1 0
// ATTN-DAG: edge mma0 core0 1024 0
// ATTN-DAG: edge core0 core0 {{[0-9]+}} 1
// ATTN-DAG: edge core0 mma1 {{[0-9]+}} 0
// ATTN-DAG: edge load1 mma1 1 0
// ATTN-DAG: edge mma1 core0 1024 1

// In the GEMM the transpose of B is a view (no node); the accumulator is carried.
// Its 128x256 fp32 accumulator is shared by the two cooperative consumer
// groups tawa gives it (as -tawa-optimal-schedule counts it): 128 registers
// per thread of each group, not 256.
// GEMM: op load0 1 TMA stream smem=16
// GEMM-NEXT: op load1 1 TMA stream smem=32
// GEMM-NEXT: op mma0 1024 TC regs=128
// GEMM-DAG: edge load0 mma0 1 0
// GEMM-DAG: edge load1 mma0 1 0
// GEMM-DAG: edge mma0 mma0 1024 1
// GEMM-NOT: core

// fp8 products run at twice the rate: 128x256x128 at 4096 per clock.
// FP8: op mma0 1024 TC regs=128

// A kernel without a product in a loop prints no graph.
// NONE-NOT: machine
tt.func @no_loop(%p: !tt.ptr<f32>) {
  %v = arith.constant 1.0 : f32
  tt.store %p, %v : !tt.ptr<f32>
  tt.return
}
