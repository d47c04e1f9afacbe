# Sourced by the one-call device scripts (kernels_focus_run.sh,
# attention_ab_run.sh): their steps and the runtime they need.
#
#   step NAME LOG COMMAND...   runs COMMAND with its output in $OUT/LOG and
#                              adds a row (PASS or FAIL(rc), the last "N passed,
#                              M failed" of the log, seconds) to ROWS; a failure
#                              sets FAILED=1
#   build_runtime DIR          the runtime alone (no MLIR on the GPU machine),
#                              then TAWA_RUNTIME_LIB and TAWA_CACHE_DIR for it
ROWS=()
FAILED=0
step() {
  local name=$1 log=$2
  shift 2
  local t=$(date +%s)
  "$@" >"$OUT/$log" 2>&1
  local rc=$?
  local counts
  counts=$(grep -Eo '[0-9]+ passed, [0-9]+ failed' "$OUT/$log" | tail -1)
  [ $rc -eq 0 ] || FAILED=1
  ROWS+=("$(printf '%-30s %-8s %-22s %4ss' "$name" "$([ $rc -eq 0 ] && echo PASS || echo "FAIL($rc)")" \
    "${counts:--}" $(($(date +%s) - t)))")
}

build_runtime() {
  cmake -G Ninja -S . -B "$1" -DCMAKE_BUILD_TYPE=Release -DTAWA_ENABLE_COMPILER=OFF \
    -DTAWA_ENABLE_UNITTESTS=OFF -DTAWA_ENABLE_RUNTIME=ON -DTAWA_ENABLE_CUDA_TESTS=OFF \
    -DTAWA_ENABLE_SCHEDULER=OFF -DTAWA_ENABLE_PROTOCOL=OFF && ninja -C "$1" tawa_runtime_shared
}
