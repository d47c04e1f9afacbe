#!/bin/bash
# One device call: build the GPU part alone, run every primitive test, the
# sanitizers on a small GEMM, GEMM correctness and timing, and the resource
# report. Logs go to $OUT when set. Usage (repo root): gpu/tools/device_run.sh
set -u
OUT=${OUT:-/tmp/tawa-out}
mkdir -p "$OUT"
B=build-gpu
status=0
step() { # name, timeout, command...
  local name=$1 t=$2
  shift 2
  echo "=== $name"
  timeout "$t" "$@" 2>&1 | tee "$OUT/$name.log"
  local rc=${PIPESTATUS[0]}
  [ "$rc" -eq 0 ] || { echo "=== $name exited $rc"; status=1; }
}
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu --format=csv
cmake -G Ninja -S . -B $B -DTAWA_ENABLE_COMPILER=OFF -DTAWA_ENABLE_UNITTESTS=OFF \
  -DTAWA_ENABLE_RUNTIME=OFF >"$OUT/configure.log" 2>&1 || { cat "$OUT/configure.log"; exit 1; }
ninja -C $B >"$OUT/build.log" 2>&1 || { tail -50 "$OUT/build.log"; exit 1; }
G=$B/gpu
step mbarrier 120 $G/test_mbarrier
step tma 60 $G/test_tma
step wgmma 60 $G/test_wgmma
step fragment 60 $G/test_fragment
step racecheck 300 compute-sanitizer --tool racecheck --error-exitcode 1 $G/ref_gemm_test --small
step synccheck 300 compute-sanitizer --tool synccheck --error-exitcode 1 $G/ref_gemm_test --small
step memcheck 300 compute-sanitizer --tool memcheck --error-exitcode 1 $G/ref_gemm_test --small
step gemm 300 $G/ref_gemm_test
step resources 30 cuobjdump -res-usage $G/ref_gemm.cubin
(cd $B/gpu && ctest -LE gpu --output-on-failure) 2>&1 | tail -8
echo "=== summary"
grep -h "^FAIL\|exited" "$OUT"/*.log
grep -h "^PASS" "$OUT"/*.log | wc -l | sed 's/^/PASS lines: /'
exit $status
