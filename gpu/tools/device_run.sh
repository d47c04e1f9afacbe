#!/bin/bash
# One device call: build the GPU part alone, run every primitive test, the
# sanitizers on a small GEMM, GEMM correctness and timing, and the resource
# report. Logs go to $OUT when set. Usage (repo root): gpu/tools/device_run.sh
set -u
# Step logs go to $LOGS and are gathered into one file under $OUT at the end
# (the device tool returns only a few files).
OUT=${OUT:-/tmp/tawa-out}
LOGS=$(mktemp -d)
mkdir -p "$OUT"
B=build-gpu
status=0
step() { # name, timeout, command...
  local name=$1 t=$2
  shift 2
  echo "=== $name"
  timeout "$t" "$@" 2>&1 | tee "$LOGS/$name.log"
  local rc=${PIPESTATUS[0]}
  [ "$rc" -eq 0 ] || { echo "=== $name exited $rc"; status=1; }
}
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu --format=csv
# gpu/ configured on its own: independent of the rest of the tree's options
# and dependencies.
# A warm machine keeps ignored build directories between calls: drop one
# that was configured from another source directory.
if [ -f $B/CMakeCache.txt ] && ! grep -q "^CMAKE_HOME_DIRECTORY:INTERNAL=$PWD/gpu\$" $B/CMakeCache.txt; then
  rm -rf $B
fi
cmake -G Ninja -S gpu -B $B >"$LOGS/configure.log" 2>&1 || { cat "$LOGS/configure.log"; exit 1; }
ninja -C $B >"$LOGS/build.log" 2>&1 || { tail -50 "$LOGS/build.log"; exit 1; }
G=$B
# Tuning variants of the reference GEMM (D stages, P MMA lag), built in the
# background while the primitive tests run.
for v in "3 1" "4 0" "4 2"; do
  set -- $v
  nvcc -gencode=arch=compute_90a,code=sm_90a -std=c++17 -O3 -Iinclude \
    -DTAWA_REF_STAGES=$1 -DTAWA_REF_MMA_LAG=$2 -o $G/ref_gemm_D$1_P$2 \
    gpu/reference/ref_gemm_test.cu gpu/reference/ref_gemm.cu \
    -L/usr/local/cuda/lib64/stubs -lcuda -lcublas \
    >"$LOGS/variant_D$1_P$2.build.log" 2>&1 &
done
step mbarrier 120 $G/test_mbarrier
step tma 60 $G/test_tma
step bulk_copy 60 $G/test_bulk_copy
step wgmma 60 $G/test_wgmma
step fragment 60 $G/test_fragment
step sync 60 $G/test_sync
step racecheck 300 compute-sanitizer --tool racecheck --error-exitcode 1 $G/ref_gemm_test --small
step synccheck 300 compute-sanitizer --tool synccheck --error-exitcode 1 $G/ref_gemm_test --small
step memcheck 300 compute-sanitizer --tool memcheck --error-exitcode 1 $G/ref_gemm_test --small
step gemm 300 $G/ref_gemm_test
step resources 30 cuobjdump -res-usage $G/ref_gemm.cubin
cuobjdump -sass $G/ref_gemm.cubin | grep -oE "(FENCE|MEMBAR|HGMMA|UTMA|STSM|USETMAXREG|SYNCS)[A-Z0-9_.]*" | sort | uniq -c
wait
step default_repeat 200 $G/ref_gemm_test --bench-only
for v in D3_P1 D4_P0 D4_P2; do
  [ -x $G/ref_gemm_$v ] && step variant_$v 200 $G/ref_gemm_$v --bench-only
done
(cd $B && ctest -LE gpu --output-on-failure) 2>&1 | tail -8
echo "=== summary"
for f in "$LOGS"/*.log; do echo "##### $f"; cat "$f"; done >"$OUT/all.log"
grep -h "^FAIL\|exited" "$LOGS"/*.log
grep -h "^PASS" "$LOGS"/*.log | wc -l | sed 's/^/PASS lines: /'
grep -h -A8 "tawa TF/s" "$LOGS"/gemm.log "$LOGS"/default_repeat.log "$LOGS"/variant_*.log | grep -v PASS
exit $status
