#!/usr/bin/env bash
# Nsight Compute on the H100: the compiled attention kernels (fp16, B=4 H=32
# L=4096, non-causal and causal) next to cuDNN's, with the tensor pipe's
# activity, the MUFU (XU) and FMA pipes, issue activity and the main stall
# reasons. Needs build-kernels/ (gpu/compiled/make_kernels.py) and $OUT.
#   OUT=/tmp/prof bash scripts/profile-attention.sh
cd "$(dirname "$0")/.."
set -u; export PATH=$PATH:/usr/local/cuda/bin
cmake -G Ninja -S . -B /tmp/b -DCMAKE_BUILD_TYPE=Release -DTAWA_ENABLE_COMPILER=OFF -DTAWA_ENABLE_UNITTESTS=OFF -DTAWA_ENABLE_CUDA_TESTS=OFF -DTAWA_ENABLE_SCHEDULER=OFF -DTAWA_ENABLE_PROTOCOL=OFF -DTAWA_ENABLE_MEGA=OFF >/dev/null && ninja -C /tmp/b tawa_runtime_shared >/dev/null || exit 1
export TAWA_RUNTIME_LIB=/tmp/b/lib/Runtime/libtawa_runtime.so TAWA_CACHE_DIR=/tmp/b/cache
M="--metrics sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_membar_per_issue_active.ratio,smsp__issue_active.avg.pct_of_peak_sustained_active,gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second"
# PROFILE_KERNELS: kernel ids (fp8 ones run without cuDNN: SDPA takes no fp8).
for k in ${PROFILE_KERNELS:-shared/attn_fp16/default shared/attn_fp16_causal/default}; do
  skip=6; count=2
  case $k in *fp8*) skip=6; count=1 ;; esac  # 6 input kernels (randn, convert), then tawa
  echo "=== $k (tawa$([ $count = 2 ] && echo ', then cuDNN'))"
  name=$(echo "$k" | tr '/' '-')
  timeout 200 ncu --clock-control none --launch-skip $skip --launch-count $count $M python3 bench/profile_attention.py --manifest build-kernels/attention.json --kernel $k --shape 4,32,4096 > $OUT/ncu-$name.txt 2>&1
  grep -E '^\s+[a-zA-Z_]+.*\(|sm__|smsp__|gpu__time|==PROF==' $OUT/ncu-$name.txt | grep -v "^==PROF== Profiling" | head -40
done
