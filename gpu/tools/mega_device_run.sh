#!/usr/bin/env bash
# One device call for the mega-kernel runtime (docs/MEGAKERNEL.md, "GPU
# test"): builds the runtime's primitive tests and the runtime test with nvcc
# (the planner's sources with g++, in parallel: the GPU machine has no
# CMake build of the tree), runs them and prints their PASS/FAIL lines and
# measurements. Then the tasks tawa's code generator wrote (tawac --mega-task,
# by gpu/compiled/make_kernels.py into build-kernels/tasks, or
# MEGA_COMPILED_TASKS): test_mega_compiled_tasks, and it under
# compute-sanitizer racecheck and memcheck (--quick).
# Usage: gpu/tools/mega_device_run.sh [OUT_DIR]
# OUT_DIR receives the ptxas log and the 8B batch-1 trace as CSV.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-/tmp/mega-out}
mkdir -p "$out"
bin=$(mktemp -d)
nvcc_flags=(-gencode=arch=compute_90a,code=sm_90a -std=c++17 -O3 -I"$root/include")
link=(-L/usr/local/cuda/lib64 -L/usr/local/cuda/lib64/stubs -lcuda)
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader || true

pids=()
for src in "$root"/lib/Mega/*.cpp; do
  g++ -std=c++17 -O2 -I"$root/include" -c "$src" -o "$bin/$(basename "$src" .cpp).o" & pids+=($!)
done
for t in test_mega_events test_mega_ring test_mega_watchdog; do
  nvcc "${nvcc_flags[@]}" -o "$bin/$t" "$root/gpu/tests/$t.cu" "${link[@]}" & pids+=($!)
done
build=0
for p in "${pids[@]}"; do wait "$p" || build=1; done
nvcc "${nvcc_flags[@]}" -Xptxas -v -DTAWA_MEGA_INPUTS="\"$root/test/Mega/Inputs\"" \
  -o "$bin/test_mega_runtime" "$root/gpu/mega/test_mega_runtime.cu" "$bin"/*.o "${link[@]}" \
  2>"$out/ptxas.log" || { build=1; cat "$out/ptxas.log"; }
# A baseline runtime (an include tree of an earlier commit in
# $root/baseline-include) is timed in the same call for comparison.
if [ -d "$root/baseline-include" ]; then
  nvcc -I"$root/baseline-include" "${nvcc_flags[@]}" \
    -o "$bin/test_mega_runtime_baseline" "$root/gpu/mega/test_mega_runtime.cu" \
    "$bin"/*.o "${link[@]}" || build=1
fi
tasks=${MEGA_COMPILED_TASKS:-$root/build-kernels/tasks}
missing=$(grep -v '^#' "$root/gpu/mega/compiled_tasks.txt" | awk 'NF { print $1 }' |
  while read -r t; do [ -f "$tasks/$t.cu" ] || echo "$t"; done)
if [ -z "$missing" ]; then
  nvcc "${nvcc_flags[@]}" -DTAWA_MEGA_WARPS=8 -I"$tasks" -Xptxas -v \
    -o "$bin/test_mega_compiled_tasks" "$root/gpu/mega/test_mega_compiled_tasks.cu" \
    "$bin"/*.o "${link[@]}" -lcublas 2>"$out/ptxas-compiled-tasks.log" ||
    { build=1; cat "$out/ptxas-compiled-tasks.log"; }
else
  echo "FAIL: $tasks lacks" $missing "(run gpu/compiled/make_kernels.py where tawac builds)"
  build=1
fi
[ "$build" = 0 ] || { echo "BUILD FAILED"; exit 1; }
grep -E "registers|spill" "$out/ptxas.log" | sort | uniq -c | head

status=0
for t in test_mega_events test_mega_ring test_mega_watchdog; do
  echo "== $t"
  timeout 60 "$bin/$t" || { echo "EXIT $? $t"; status=1; }
done
echo "== test_mega_runtime"
timeout 240 "$bin/test_mega_runtime" --trace-csv "$out/trace-qwen3-8b-b1-s4096.csv" ||
  { echo "EXIT $? test_mega_runtime"; status=1; }
echo "== test_mega_compiled_tasks"
grep -E "Potential Performance Loss" "$out/ptxas-compiled-tasks.log" && status=1
timeout 180 "$bin/test_mega_compiled_tasks" --bench ||
  { echo "EXIT $? test_mega_compiled_tasks"; status=1; }
for tool in racecheck memcheck; do
  echo "== compute-sanitizer $tool test_mega_compiled_tasks --quick"
  timeout 300 compute-sanitizer --tool $tool --error-exitcode 1 \
    "$bin/test_mega_compiled_tasks" --quick ||
    { echo "EXIT $? sanitizer $tool"; status=1; }
done
if [ -x "$bin/test_mega_runtime_baseline" ]; then
  echo "== baseline runtime (overhead only)"
  timeout 120 "$bin/test_mega_runtime_baseline" --only-overhead || status=1
fi
echo "mega device run: status $status"
exit $status
