#!/usr/bin/env bash
# One-call GPU suite for a bare H100/H200 machine (CUDA, CMake, ninja, python3
# with torch + triton; no MLIR, no GTest, no network). From the repo root:
#   gpu/compiled/make_kernels.py    # first, where tawac builds (not on the GPU machine)
#   scripts/gpu-suite.sh            # everything, ~5-8 minutes
#   SUITE_QUICK=1 scripts/gpu-suite.sh   # K list 256,1024,4096,16384 only
#   SUITE_ONLY=attention scripts/gpu-suite.sh   # build + the attention steps only
#   SUITE_ONLY=python scripts/gpu-suite.sh      # the tawa.jit steps only (no build)
#   SUITE_ONLY=mega scripts/gpu-suite.sh        # the mega-kernel: runtime tests, decode tests, benchmark (own nvcc build)
#   SUITE_ONLY=kernels scripts/gpu-suite.sh     # build + the compiled GEMM-family kernels only:
#                                               # correctness, sanitizers, GEMM and pointer benches
# Builds the runtime and gpu/ (no compiler, no unit tests), runs every CTest
# labelled gpu, compute-sanitizer (racecheck, synccheck, memcheck) on small
# cases, the Python correctness checks and the GEMM benchmark against cuBLAS.
# The python steps install the wheel built where MLIR is (`pip wheel . -w
# build-wheel/dist`, carried along; SUITE_WHEEL names another) with
# `pip install --no-deps` and run tawa.jit from that installed package:
# gpu/python/jit_suite.py (every sample and example against triton.jit and
# float32, compile times, launch overhead, parity with the compiled CUBINs)
# and gpu/python/test_jit_gpu.py.
# Logs and the results JSON go to $OUT when set. The summary table comes last;
# the exit status is non-zero if any step failed.
set -u -o pipefail
cd "$(dirname "$0")/.."
export PATH=$PATH:/usr/local/cuda/bin
ROOT=$PWD
B=${SUITE_BUILD_DIR:-$ROOT/build-gpu-suite}
OUT=${OUT:-}
LOG=$(mktemp /tmp/gpu-suite.XXXXXX.log)
declare -a ROWS=()
FAILED=0
T0=$(date +%s)
# Whole-suite budget (seconds): steps are cut to fit so the summary always
# prints inside one device call; a step that no longer fits is skipped (FAIL).
DEADLINE=$((T0 + ${SUITE_BUDGET:-570}))

note() { echo "$*" | tee -a "$LOG"; }
# step NAME TIMEOUT CMD...: runs CMD with a time limit, logs it, records a row.
step() {
  local name=$1 limit=$2
  shift 2
  local left=$((DEADLINE - $(date +%s) - 25))
  if [ $left -lt 10 ]; then
    note "=== $name: skipped, suite budget spent"
    ROWS+=("$(printf '%-34s %-14s %-22s %4ss' "$name" "SKIP(budget)" - 0)")
    FAILED=1
    return
  fi
  [ $limit -gt $left ] && limit=$left
  note "=== $name: $*"
  local t=$(date +%s)
  timeout --kill-after=10 "$limit" "$@" >>"$LOG.step" 2>&1
  local rc=$?
  cat "$LOG.step" >>"$LOG"
  tail -n 25 "$LOG.step"
  local counts
  counts=$(grep -Eo '[0-9]+ passed, [0-9]+ failed' "$LOG.step" | tail -1)
  # ctest's own closing line: "95% tests passed, 2 tests failed out of 39".
  local ct
  ct=$(grep -Eo 'tests passed, [0-9]+ tests? failed out of [0-9]+' "$LOG.step" | tail -1)
  if [ -n "$ct" ]; then
    local nf nt
    nf=$(echo "$ct" | sed -E 's/.*passed, ([0-9]+) tests? failed.*/\1/')
    nt=$(echo "$ct" | sed -E 's/.*out of ([0-9]+)/\1/')
    counts="$((nt - nf)) passed, $nf failed"
  fi
  # CMake 4 drops the failure count when there is none: "100% tests passed out of 6".
  ct=$(grep -Eo '100% tests passed out of [0-9]+' "$LOG.step" | tail -1)
  [ -n "$ct" ] && counts="${ct##* } passed, 0 failed"
  rm -f "$LOG.step"
  local verdict=PASS
  if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then verdict="TIMEOUT(${limit}s)"; fi
  if [ $rc -ne 0 ] && [ "$verdict" = PASS ]; then verdict="FAIL(rc=$rc)"; fi
  [ $rc -eq 0 ] || FAILED=1
  ROWS+=("$(printf '%-34s %-14s %-22s %4ss' "$name" "$verdict" "${counts:--}" $(($(date +%s) - t)))")
}

note "gpu-suite: $(date -u +%FT%TZ) on $(hostname)"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu \
  --format=csv 2>&1 | tee -a "$LOG"
note "nvcc: $(nvcc --version 2>/dev/null | tail -1); cmake: $(cmake --version | head -1)"
note "python: $(python3 -c 'import sys, torch, triton; print(sys.version.split()[0], "torch", torch.__version__, "triton", triton.__version__)' 2>&1)"

export TAWA_REQUIRE_GPU=1
export TAWA_CACHE_DIR=$B/nvrtc-cache
export TAWA_RUNTIME_LIB=$B/lib/Runtime/libtawa_runtime.so
export PYTHONUNBUFFERED=1

# SUITE_ONLY=NAME runs one group of steps (gemm, kernels, attention, python, mega);
# unset, all. `kernels` is the compiled-kernel part of `gemm` without the
# runtime's own tests and the long tuning and family benchmarks.
want() { [ -z "${SUITE_ONLY:-}" ] || [ "$SUITE_ONLY" = "$1" ]; }

# The python group needs no build: the installed wheel brings its own runtime.
if want gemm || want kernels || want attention; then
step configure 120 cmake -G Ninja -S "$ROOT" -B "$B" -DCMAKE_BUILD_TYPE=Release \
  -DTAWA_ENABLE_COMPILER=OFF -DTAWA_ENABLE_UNITTESTS=OFF \
  -DTAWA_ENABLE_RUNTIME=ON -DTAWA_ENABLE_CUDA_TESTS=ON -DTAWA_ENABLE_SCHEDULER=OFF \
  -DTAWA_ENABLE_PROTOCOL=OFF \
  -DTAWA_COMPILED_TASKS_DIR="${SUITE_KERNELS:-$ROOT/build-kernels}/tasks"
step build 240 ninja -C "$B"
fi

KS=256,512,1024,2048,4096,8192,16384
[ -n "${SUITE_QUICK:-}" ] && KS=256,1024,4096,16384
RESULTS=$B/bench-results
rm -rf "$RESULTS" "$B"/family-*.json
rm -f "$B"/attention-*.json "$B"/attention-table.txt "$B"/jit-suite.json "$B"/jit-table.txt \
  "$B"/pointer-gemm.json "$B"/epilogue-gemm.json
mkdir -p "$B"
if want gemm; then
# With enable_testing() at the top level one ctest run sees every test;
# older trees enabled testing only inside lib/Runtime and gpu/.
has_gpu_tests() { ctest --test-dir "$1" -N -L gpu 2>/dev/null | grep -q 'Total Tests: [1-9]'; }
if has_gpu_tests "$B"; then
  step "ctest -L gpu" 240 ctest --test-dir "$B" -L gpu --output-on-failure --timeout 120
else
  for dir in "$B/lib/Runtime" "$B/gpu"; do
    has_gpu_tests "$dir" &&
      step "ctest -L gpu (${dir#$B/})" 180 ctest --test-dir "$dir" -L gpu --output-on-failure --timeout 120
  done
fi

# The runtime and the reference kernel under the sanitizers first: they take
# seconds, and the long steps below are the ones the budget may cut.
CHECK=$B/bin/tawa-runtime-gpu-check
[ -x "$CHECK" ] || CHECK=$B/lib/Runtime/tawa-runtime-gpu-check
REF=$B/gpu/ref_gemm_test
for tool in racecheck synccheck memcheck; do
  step "sanitizer $tool: runtime check" 90 compute-sanitizer --tool $tool --error-exitcode 1 \
    "$CHECK" --small --no-error-cases --gemm "$B/gpu/ref_gemm.json"
  if [ -x "$REF" ]; then
    step "sanitizer $tool: ref_gemm_test" 90 compute-sanitizer --tool $tool --error-exitcode 1 "$REF" --small
  fi
done

# Small shapes first with the runtime's trace on: if the binding crashes, the
# log shows the last driver call it reached.
step "python gemm_ref --small (traced)" 120 env TAWA_RUNTIME_TRACE=1 python3 bench/gemm_ref.py \
  --metadata "$B/gpu/ref_gemm.json" --small
step "python gemm_ref (check + bench)" 240 python3 bench/gemm_ref.py \
  --metadata "$B/gpu/ref_gemm.json" --ks $KS --results-dir "$RESULTS"
fi

if want gemm || want kernels; then
# Kernels compiled by tawac (here there is no MLIR: gpu/compiled/make_kernels.py
# wrote them on the development machine into build-kernels/, carried along).
KERNELS=${SUITE_KERNELS:-$ROOT/build-kernels}
MANIFEST=$KERNELS/manifest.json
if [ -f "$MANIFEST" ]; then
  note "compiled kernels: $(python3 -c "import json; m = json.load(open('$MANIFEST')); print(len(m['kernels']), 'from', m['tawac'], 'at', m['commit'])")"
  step "compiled: correctness (every config)" 300 python3 gpu/compiled/check_compiled.py \
    --manifest "$MANIFEST" --json "$B/compiled-check.json"
  step "compiled: SASS (HGMMA/QGMMA)" 60 python3 gpu/compiled/check_sass.py --manifest "$MANIFEST"
  # GEMMs written with tensors of pointers (the tutorial style), M = N = K = 8192.
  step "bench pointer GEMMs (tawa/Triton/cuBLAS)" 150 python3 bench/pointer_gemm_bench.py \
    --manifest "$MANIFEST" --json "$B/pointer-gemm.json"
  # Epilogues that read more than the accumulator: a per-row scale + SiLU,
  # D = alpha A B^T + beta C (C by descriptor), 8192^3.
  step "bench epilogue GEMMs (tawa/Triton/cuBLAS)" 150 python3 bench/epilogue_gemm_bench.py \
    --manifest "$MANIFEST" --json "$B/epilogue-gemm.json"
  # Every compiled kernel under every configuration (ring depths, lags,
  # groups, ping-pong, persistence, optimal schedule), small instances.
  # (a CUBIN identical to one already checked, e.g. G2 where two groups are
  # the default, runs once).
  step "sanitizer racecheck: every compiled kernel" 330 compute-sanitizer --tool racecheck \
    --error-exitcode 1 python3 gpu/compiled/check_compiled.py --manifest "$MANIFEST" --small \
    --distinct-binaries
  # More tiles than SMs: a persistent CTA's second tile, where the deferred
  # epilogue stores the first tile's boxes during its K loop.
  # (the kernels that defer it, ping-pong's 128 x 128 tiles, and the
  # paired batched and bias samples with their fused products).
  step "sanitizer racecheck: many tiles (default, EO4)" 120 compute-sanitizer --tool racecheck \
    --error-exitcode 1 python3 gpu/compiled/check_compiled.py --manifest "$MANIFEST" --small \
    --many-tiles --config default --config EO4 --kernel examples/gemm_fp16 \
    --kernel examples/gemm_fp8 --kernel examples/gemm_fp16_128x128 --kernel shared/gemm_persistent \
    --kernel shared/gemm_batched --kernel shared/gemm_bias_relu
  step "sanitizer synccheck: compiled kernels (defaults)" 200 compute-sanitizer --tool synccheck \
    --error-exitcode 1 python3 gpu/compiled/check_compiled.py --manifest "$MANIFEST" --small --only-default
  GEMM_KS=$KS
  # (SUITE_ONLY=kernels: the K sweep and the family kernels, no ablation or D x P sweep.)
  GEMM_EXTRA=(--ablation --dp-sweep)
  [ "${SUITE_ONLY:-}" = kernels ] && GEMM_EXTRA=()
  step "bench gemm (tawa/cuBLAS/Triton)" 400 python3 bench/gemm_bench.py --manifest "$MANIFEST" \
    --ks "$GEMM_KS" --results-dir "$RESULTS" "${GEMM_EXTRA[@]}" --family \
    --plot "$RESULTS/gemm-ksweep.png"
  if want gemm; then
  # The optimal schedule and each MMA depth alone against the defaults,
  # interleaved rounds, cuBLAS alongside (2-CTA clusters, measured slower in
  # runs 8-10, with --only C2).
  step "tune: OPT / MMA depths vs defaults" 240 python3 bench/tune_gemm.py --manifest "$MANIFEST" \
    --rounds 5 --exclude C2 --exclude D4P2 --json "$B/tune.json"
  # The grouped sample's configurations in interleaved rounds: the default
  # (tile walk in groups of 8 rows, ping-pong), one consumer group instead
  # of ping-pong, the kernel's own tile order; and
  # Triton on the same source and, for reference, on the source rewritten
  # to the same tile order.
  step "family: grouped configs vs Triton" 150 python3 bench/family_variants.py \
    --manifest "$MANIFEST" --workload grouped --config default --config NOPP --config NOSW \
    --triton-tile-order --seconds 2 --json "$B/family-grouped.json"
  # The batched sample: the default (programs paired along y, their
  # products fused) against no pairing (ping-pong) and pairing along x.
  step "family: batched configs vs Triton" 120 python3 bench/family_variants.py \
    --manifest "$MANIFEST" --workload batched --config default --config NOPAIR --config PAIR \
    --seconds 2 --json "$B/family-batched.json"
  # Batched, grouped and the fp16 GEMM back to back: power, SM clock, throttle reasons.
  step "sustained batched/grouped (power)" 90 python3 bench/sustained_family.py \
    --manifest "$MANIFEST" --seconds 2
  fi
else
  note "=== compiled kernels: no $MANIFEST (run gpu/compiled/make_kernels.py where tawac builds)"
  ROWS+=("$(printf '%-34s %-14s %-22s %4ss' "compiled kernels" "FAIL(missing)" - 0)")
  FAILED=1
fi

fi

# Attention kernels compiled by tawac (make_kernels.py: attention.json):
# correctness against PyTorch in float32, the sanitizers on small cases, and
# the benchmark against cuDNN, FlashAttention-2 and Triton on the same source.
ATTN=${SUITE_KERNELS:-$ROOT/build-kernels}/attention.json
if ! want attention; then
  :
elif [ -f "$ATTN" ]; then
  # The device primitives attention adds (the full suite runs them in ctest).
  if [ "${SUITE_ONLY:-}" = attention ]; then
    step "device: test_transpose" 60 "$B/gpu/test_transpose"
    step "device: test_fragment" 60 "$B/gpu/test_fragment"
  fi
  step "attention: correctness" 200 python3 gpu/compiled/attention.py --manifest "$ATTN" --check
  step "sanitizer racecheck: attention" 240 compute-sanitizer --tool racecheck --error-exitcode 1 \
    python3 gpu/compiled/attention.py --manifest "$ATTN" --check --small
  step "sanitizer synccheck: attention" 120 compute-sanitizer --tool synccheck --error-exitcode 1 \
    python3 gpu/compiled/attention.py --manifest "$ATTN" --check --small --only default
  step "bench attention (tawa/cuDNN/FA2/Triton)" 300 python3 gpu/compiled/attention.py \
    --manifest "$ATTN" --bench --json "$B/attention-bench.json" --table "$B/attention-table.txt" \
    --plot "$B/attention.png"
else
  note "=== attention kernels: no $ATTN (run gpu/compiled/make_kernels.py where tawac builds)"
  ROWS+=("$(printf '%-34s %-14s %-22s %4ss' "attention kernels" "FAIL(missing)" - 0)")
  FAILED=1
fi

# tawa.jit from the installed wheel (built by `pip wheel . -w build-wheel/dist`
# where MLIR is; carried along): installed with --no-deps into this python,
# then run with no TAWA_*_LIB override, so the package's own compiler,
# runtime and device headers are what is tested.
if want python; then
  KERNELS=${SUITE_KERNELS:-$ROOT/build-kernels}
  WHEEL=${SUITE_WHEEL:-$(ls "$ROOT"/build-wheel/dist/tawa-*-py3-none-linux_x86_64.whl 2>/dev/null | head -1)}
  if [ -n "$WHEEL" ] && [ -f "$KERNELS/manifest.json" ]; then
    note "wheel: $WHEEL"
    step "python: pip install --no-deps wheel" 120 python3 -m pip install --no-deps --no-index \
      --force-reinstall --no-cache-dir --disable-pip-version-check -q "$WHEEL"
    rm -rf "$B/jit-cache" "$B/jit-triton-cache"
    JIT_ENV=(env -u TAWA_RUNTIME_LIB -u TAWA_COMPILER_LIB -u TAWA_INCLUDE_DIR
             TAWA_CACHE_DIR="$B/jit-cache" TRITON_CACHE_DIR="$B/jit-triton-cache")
    step "python: pytest gpu/python (installed)" 150 "${JIT_ENV[@]}" TAWA_TEST_INSTALLED=1 \
      python3 -m pytest -q -p no:cacheprovider gpu/python/test_jit_gpu.py
    # The suite fits what is left (it skips its later parts past --budget);
    # its JSON goes straight to $OUT, so that a cut-off run still returns it.
    jit_budget=$((DEADLINE - $(date +%s) - 45))
    [ $jit_budget -gt 300 ] && jit_budget=300
    step "python: tawa.jit suite (installed)" 330 "${JIT_ENV[@]}" python3 gpu/python/jit_suite.py \
      --kernels "$KERNELS" --json "${OUT:-$B}/jit-suite.json" --table "$B/jit-table.txt" --budget $jit_budget
  else
    note "=== python: no wheel (pip wheel . -w build-wheel/dist) or no $KERNELS/manifest.json"
    ROWS+=("$(printf '%-34s %-14s %-22s %4ss' "python (tawa.jit)" "FAIL(missing)" - 0)")
    FAILED=1
  fi
fi

# The mega-kernel's in-kernel runtime on the Qwen3 task graphs with synthetic
# tasks (docs/MEGAKERNEL.md): its own nvcc build, primitive tests, runtime
# test, watchdog and overhead.
# Then the decode mega-kernel with its task functions: the reference against
# transformers, the kernel against the reference, compute-sanitizer and the
# decode latency benchmark (gpu/tools/mega_decode_run.sh).
if want mega; then
  step "mega-kernel runtime (synthetic tasks)" 300 bash gpu/tools/mega_device_run.sh "$B/mega"
  step "mega-kernel decode (tasks, reference, benchmark)" 560 bash gpu/tools/mega_decode_run.sh "$B/mega"
fi

JSON=$(ls "$RESULTS"/*.json 2>/dev/null | grep -v -- '-gemm.json$' | head -1)
GEMM_JSON=$(ls "$RESULTS"/*-gemm.json 2>/dev/null | head -1)
mkdir -p "$ROOT/bench/results"
for f in $JSON $GEMM_JSON; do cp "$f" "$ROOT/bench/results/"; done
if [ -n "$OUT" ]; then
  mkdir -p "$OUT"
  # One log per group, so that several groups run in one call keep theirs.
  cp "$LOG" "$OUT/gpu-suite${SUITE_ONLY:+-$SUITE_ONLY}.log"
  for f in $JSON $GEMM_JSON; do cp "$f" "$OUT/"; done
  [ -f "$RESULTS/gemm-ksweep.png" ] && cp "$RESULTS/gemm-ksweep.png" "$OUT/"
  [ -f "$B/compiled-check.json" ] && cp "$B/compiled-check.json" "$OUT/"
  [ -f "$B/tune.json" ] && cp "$B/tune.json" "$OUT/"
  [ -f "$B/pointer-gemm.json" ] && cp "$B/pointer-gemm.json" "$OUT/"
  [ -f "$B/epilogue-gemm.json" ] && cp "$B/epilogue-gemm.json" "$OUT/"
  for f in "$B"/family-*.json; do [ -f "$f" ] && cp "$f" "$OUT/"; done
  [ -f "$B/attention-bench.json" ] && cp "$B/attention-bench.json" "$OUT/"
  [ -f "$B/attention.png" ] && cp "$B/attention.png" "$OUT/"
  [ -f "$B/jit-suite.json" ] && cp "$B/jit-suite.json" "$OUT/"
fi

{
  echo
  echo "==================== gpu-suite summary ($(($(date +%s) - T0)) s) ===================="
  printf '%-34s %-14s %-22s %5s\n' step verdict tests time
  for r in "${ROWS[@]}"; do echo "$r"; done
  if [ -n "$JSON" ]; then
    python3 - "$JSON" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
if not d["rows"]:
    sys.exit(print("no benchmark rows"))
print(f"\nGEMM fp16 C = A B^T, M = N = {d['rows'][0]['shape'][0]}, {d['device']}, TFLOP/s (median):")
print(f"{'K':>6} {'tawa_ref':>9} {'cuBLAS':>8} {'ratio':>6}")
for r in d["rows"]:
    t = r["tflops"]
    print(f"{r['shape'][2]:>6} {t['tawa_ref']:>9.1f} {t['cublas']:>8.1f} {t['tawa_ref'] / t['cublas']:>6.3f}")
PY
  else
    echo "no benchmark results"
  fi
  if [ -n "$GEMM_JSON" ]; then
    python3 - "$GEMM_JSON" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print(f"\nCompiled GEMM (tawac defaults) C = A B^T, M = N = {d['rows'][0]['shape'][0]}, TFLOP/s (median):")
print(f"{'dtype':>6} {'K':>6} {'tawa':>7} {'cuBLAS':>7} {'Triton':>7} {'/cuBLAS':>8} {'/Triton':>8}")
for r in d["rows"]:
    t = r["tflops"]
    if "cublas" not in t:
        continue
    tri = t["triton"] or float("nan")
    print(f"{r['workload'][5:]:>6} {r['shape'][2]:>6} {t['tawa']:7.1f} {t['cublas']:7.1f} {tri:7.1f} "
          f"{t['tawa'] / t['cublas']:8.3f} {t['tawa'] / tri:8.3f}")
for r in d["rows"]:
    t = r["tflops"]
    if r["workload"] in ("ablation", "dp_sweep"):
        print(f"{r['workload']:>9} {r['step']:52s} {t['tawa']:7.1f}")
    elif "cublas" not in t:
        print(f"{r['workload']:>17} tawa {t['tawa']:7.1f}  Triton {t['triton']:7.1f}  {t['tawa'] / t['triton']:6.3f}x")
PY
  fi
  for f in "$B"/family-grouped.json "$B"/family-batched.json; do
    [ -f "$f" ] || continue
    python3 - "$f" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print(f"\n{d['workload'].capitalize()} GEMM, {d['rounds']} interleaved rounds, TFLOP/s (median) and ratio to Triton on the same source:")
for name, r in d["configs"].items():
    print(f"{name:>14} {r['tflops']:7.1f} {r['vs_triton']:7.3f}")
PY
  done
  [ -f "$B/attention-table.txt" ] && { echo; cat "$B/attention-table.txt"; }
  [ -f "$B/jit-table.txt" ] && { echo; cat "$B/jit-table.txt"; }
  echo "overall: $([ $FAILED -eq 0 ] && echo PASS || echo FAIL)"
} | tee -a "$LOG"
[ -n "$OUT" ] && cp "$LOG" "$OUT/gpu-suite${SUITE_ONLY:+-$SUITE_ONLY}.log"
exit $FAILED
