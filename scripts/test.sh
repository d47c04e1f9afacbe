#!/usr/bin/env bash
# Builds tawa and runs every test that needs no GPU:
#   lit + FileCheck (dialects, passes, samples, tawac, the CPU interpreter over
#   every kernel and configuration), GoogleTest units, the nvcc sm_90a compile
#   checks of the device library tests and reference kernels, and a
#   time-bounded libFuzzer run (BUILD_DIR-fuzz: clang, ASan) seeded with every
#   sample (TAWA_FUZZ_SECONDS, default 90; 0 skips it), and the Python tests
#   (python/tests, pytest in BUILD_DIR/venv with Triton from the registry).
# Usage: scripts/test.sh [BUILD_DIR]    (default: build)
# GPU tests are run by scripts/gpu-suite.sh on a machine with an H100.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
cd "$root"

scripts/install-deps.sh

cuda_tests=OFF
if command -v nvcc >/dev/null 2>&1; then cuda_tests=ON; fi
cmake -G Ninja -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release \
  -DTAWA_ENABLE_COMPILER=ON -DTAWA_ENABLE_RUNTIME=ON -DTAWA_ENABLE_UNITTESTS=ON \
  -DTAWA_ENABLE_CUDA_TESTS=$cuda_tests >"$build.configure.log" 2>&1 ||
  { cat "$build.configure.log"; exit 1; }
[ "$cuda_tests" = ON ] || echo "test.sh: nvcc not found: skipping the sm_90a compile checks"

# Two jobs: the project's machines have 2 cores and MLIR compiles are heavy.
ninja -C "$build" -j "${TAWA_JOBS:-2}"

status=0
echo "== lit (FileCheck) =="
lit_out=$(/usr/lib/llvm-22/bin/lit -sv "$build/test" 2>&1) || status=1
echo "$lit_out" | grep -E '^(FAIL|XPASS|UNRESOLVED|TIMEOUT):|Failed Tests|^ *(Passed|Failed|Unsupported|Skipped)' || true
lit_pass=$(echo "$lit_out" | sed -n 's/^ *Passed *: *\([0-9]*\).*/\1/p'); lit_pass=${lit_pass:-0}
lit_fail=$(echo "$lit_out" | sed -n 's/^ *Failed *: *\([0-9]*\).*/\1/p'); lit_fail=${lit_fail:-0}

echo "== ctest (GoogleTest units, nvcc compile checks; GPU tests excluded) =="
ctest_out=$(cd "$build" && ctest -LE gpu --output-on-failure 2>&1) || status=1
echo "$ctest_out" | grep -E 'tests passed|tests failed|\*\*\*Failed|Not Run|Timeout' || true
ct_total=$(echo "$ctest_out" | sed -n 's/.*tests passed, [0-9]* tests failed out of \([0-9]*\).*/\1/p'); ct_total=${ct_total:-0}
ct_fail=$(echo "$ctest_out" | sed -n 's/.*tests passed, \([0-9]*\) tests failed out of.*/\1/p'); ct_fail=${ct_fail:-0}
if echo "$ctest_out" | grep -q 'No tests were found'; then ct_total=0; ct_fail=0; fi

# The Python front end (python/tests): tawa.jit from a Triton kernel to a
# CUBIN through libtawa_compiler.so, errors at the user's line, the caches,
# option aliases, fallback, the launch's argument mapping. No GPU, no PyTorch.
echo "== pytest (python/tests) =="
py_pass=0; py_fail=0
python=$(scripts/python-venv.sh "$build/venv")
py_out=$(TAWA_COMPILER_LIB="$build/lib/libtawa_compiler.so" "$python" -m pytest -q -p no:cacheprovider \
  "$root/python/tests" 2>&1) && py_rc=0 || py_rc=$?
# pytest -q ends with its summary, e.g. "2 failed, 17 passed in 21.5s".
py_summary=$(echo "$py_out" | tail -1)
echo "$py_out" | grep -E '^(FAILED|ERROR) ' || true
echo "$py_summary"
# (grep finds nothing where nothing failed: under pipefail that must not end
# the script.)
py_pass=$(echo "$py_summary" | { grep -oE '[0-9]+ passed' || true; } | awk '{print $1}'); py_pass=${py_pass:-0}
py_fail=$(echo "$py_summary" | { grep -oE '[0-9]+ (failed|errors?)' || true; } | awk '{s += $1} END {print s + 0}')
# Any non-zero exit counts, 5 ("no tests collected") included.
if [ "$py_rc" -ne 0 ]; then
  status=1
  [ "$py_fail" -gt 0 ] || { py_fail=1; echo "FAIL: pytest exited with status $py_rc"; echo "$py_out" | tail -20; }
fi

# The fuzz target in a build of its own: libFuzzer coverage and AddressSanitizer
# need clang and instrument every object, so it cannot share build/. A fixed
# seed makes a run repeatable; a finding leaves its input in BUILD_DIR-fuzz/artifacts.
fuzz_seconds=${TAWA_FUZZ_SECONDS:-90}
fuzz_pass=0; fuzz_fail=0
if [ "$fuzz_seconds" -gt 0 ]; then
  echo "== fuzzing (libFuzzer + ASan, ${fuzz_seconds} s) =="
  fuzz_build="$build-fuzz"
  cmake -G Ninja -S "$root" -B "$fuzz_build" -DCMAKE_C_COMPILER=clang-14 \
    -DCMAKE_CXX_COMPILER=clang++-14 -DCMAKE_BUILD_TYPE= "-DCMAKE_CXX_FLAGS=-O1 -g" \
    -DTAWA_ENABLE_FUZZER=ON -DTAWA_ENABLE_COMPILER=ON -DTAWA_ENABLE_RUNTIME=ON \
    -DTAWA_ENABLE_UNITTESTS=OFF -DTAWA_ENABLE_CUDA_TESTS=OFF -DTAWA_ENABLE_SCHEDULER=OFF \
    -DTAWA_ENABLE_PROTOCOL=OFF >"$fuzz_build.configure.log" 2>&1 ||
    { cat "$fuzz_build.configure.log"; exit 1; }
  ninja -C "$fuzz_build" -j "${TAWA_JOBS:-2}" tawa-fuzz
  corpus=$(mktemp -d)
  cp "$root"/../shared/ttir/*.ttir "$root"/examples/ttir/*.ttir "$corpus"/ 2>/dev/null || true
  for f in "$root"/test/Dialect/*/*.mlir "$root"/test/Transforms/*.mlir \
           "$root"/test/Interpreter/Inputs/*.mlir "$root"/test/Fuzz/Inputs/*.mlir; do
    [ -f "$f" ] && cp "$f" "$corpus/$(basename "$(dirname "$f")")-$(basename "$f")"
  done
  rm -rf "$fuzz_build/artifacts" && mkdir -p "$fuzz_build/artifacts"
  if "$fuzz_build/bin/tawa-fuzz" "$corpus" -dict="$root/tools/tawa-fuzz/tawa.dict" \
       -max_total_time="$fuzz_seconds" -seed=1 -timeout=30 -rss_limit_mb=4096 \
       -artifact_prefix="$fuzz_build/artifacts/" -print_final_stats=1 \
       >"$fuzz_build/fuzz.log" 2>&1; then
    fuzz_pass=1
    grep -E '^stat::(number_of_executed_units|average_exec_per_sec)' "$fuzz_build/fuzz.log" || true
  else
    fuzz_fail=1; status=1
    echo "FAIL: tawa-fuzz (input saved in $fuzz_build/artifacts/):"
    grep -E -A30 'ERROR: |tawa-fuzz: |deadly signal' "$fuzz_build/fuzz.log" | head -60
    # The artifact directory does not outlive a CI machine: print each input
    # (gzip, base64) so that it can be replayed from the log with
    #   base64 -d | gunzip > crash.mlir; build/bin/tawa-fuzz-replay crash.mlir
    for f in "$fuzz_build"/artifacts/crash-* "$fuzz_build"/artifacts/leak-* \
             "$fuzz_build"/artifacts/oom-* "$fuzz_build"/artifacts/timeout-*; do
      [ -f "$f" ] || continue
      echo "== $(basename "$f") ($(wc -c <"$f") bytes), gzip | base64:"
      gzip -9c "$f" | base64 -w 120
      echo "== end of $(basename "$f")"
    done
  fi
  rm -rf "$corpus"
fi

passed=$((lit_pass + ct_total - ct_fail + py_pass + fuzz_pass))
failed=$((lit_fail + ct_fail + py_fail + fuzz_fail))
if [ "$status" -ne 0 ] && [ "$failed" -eq 0 ]; then failed=1; fi
echo "tests: $passed passed, $failed failed"
exit "$status"
