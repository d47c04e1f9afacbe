#!/usr/bin/env bash
# One device call for a change to some GEMM-family kernels: the runtime
# built, then the chosen kernels' correctness under every configuration
# compiled, SASS of every default, racecheck (each distinct CUBIN, and more
# tiles than SMs), synccheck, and the benchmarks that time their defaults
# against another configuration in the same interleaved rounds.
#
#   FOCUS_KERNELS="examples/gemm_fp16_128x128 ..." FOCUS_CONFIG=NOPAIR \
#     bash gpu/tools/kernels_focus_run.sh OUTDIR
# (FOCUS_CHECK_ALL=1: correctness of every kernel in the manifest, not only
# those named; FOCUS_ROUNDS=R: interleaved rounds of the side-by-side benches,
# default 3; FOCUS_SUSTAINED=S: each of their systems also run back to back
# for S seconds with power and SM clock sampled; FOCUS_TUNE=0 skips the tune
# step.)
#
# Needs build-kernels/ (gpu/compiled/make_kernels.py, carried along). Logs
# and JSON go to OUTDIR; a table of the steps is printed last; the exit
# status is 1 if any step failed. scripts/gpu-suite.sh is the full suite.
set -u -o pipefail
cd "$(dirname "$0")/../.."
OUT=${1:?usage: kernels_focus_run.sh OUTDIR}
mkdir -p "$OUT"
export PATH=$PATH:/usr/local/cuda/bin
B=${FOCUS_BUILD_DIR:-build-gpu-suite}
M=${FOCUS_MANIFEST:-build-kernels/manifest.json}
CONFIG=${FOCUS_CONFIG:-NOPAIR}
: "${FOCUS_KERNELS:?set FOCUS_KERNELS to the kernel ids to check}"
K=()
for k in $FOCUS_KERNELS; do K+=(--kernel "$k"); done
source gpu/tools/steps.sh

nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
step "runtime build" build.log build_runtime "$B"
export TAWA_RUNTIME_LIB=$PWD/$B/lib/Runtime/libtawa_runtime.so TAWA_REQUIRE_GPU=1
export TAWA_CACHE_DIR=$PWD/$B/nvrtc-cache PYTHONUNBUFFERED=1

# FOCUS_CHECK_ALL=1: the correctness step covers every kernel of the manifest.
CK=("${K[@]}")
[ -n "${FOCUS_CHECK_ALL:-}" ] && CK=()
step "correctness (every config)" check.log python3 gpu/compiled/check_compiled.py --manifest "$M" \
  "${CK[@]}" --json "$OUT/check.json"
step "SASS (every default)" sass.log python3 gpu/compiled/check_sass.py --manifest "$M"
step "racecheck (distinct CUBINs)" race.log compute-sanitizer --tool racecheck --error-exitcode 1 \
  python3 gpu/compiled/check_compiled.py --manifest "$M" --small --distinct-binaries "${K[@]}"
step "racecheck (many tiles, default)" race-many.log compute-sanitizer --tool racecheck \
  --error-exitcode 1 python3 gpu/compiled/check_compiled.py --manifest "$M" --small --many-tiles \
  --config default "${K[@]}"
step "synccheck (defaults)" sync.log compute-sanitizer --tool synccheck --error-exitcode 1 \
  python3 gpu/compiled/check_compiled.py --manifest "$M" --small --only-default "${K[@]}"
SIDE=(--rounds "${FOCUS_ROUNDS:-3}" --sustained "${FOCUS_SUSTAINED:-0}")
step "bench pointer GEMMs" pointer.log python3 bench/pointer_gemm_bench.py --manifest "$M" \
  --config "$CONFIG" "${SIDE[@]}" --json "$OUT/pointer-gemm.json"
step "bench persistent GEMMs" persistent.log python3 bench/persistent_gemm_bench.py --manifest "$M" \
  --config "$CONFIG" --config NOPP "${SIDE[@]}" --json "$OUT/persistent-gemm.json"
step "bench epilogue GEMMs" epilogue.log python3 bench/epilogue_gemm_bench.py --manifest "$M" \
  --config "$CONFIG" "${SIDE[@]}" --json "$OUT/epilogue-gemm.json"
[ "${FOCUS_TUNE:-1}" = 0 ] || step "tune: default vs $CONFIG" tune.log python3 bench/tune_gemm.py \
  --manifest "$M" --only "$CONFIG" --rounds 5 --json "$OUT/tune.json"

for log in check race race-many sync; do
  echo "--- $log: $(grep -Ei 'passed|hazard|error summary' "$OUT/$log.log" | tail -2 | tr '\n' ' ')"
done
echo "--- pointer GEMMs"; grep -E '^(PASS|FAIL)' "$OUT/pointer.log" | cut -c1-200
echo "--- persistent GEMMs"; grep -E '^(PASS|FAIL)' "$OUT/persistent.log" | cut -c1-220
echo "--- epilogue GEMMs"; grep -E '^(PASS|FAIL)' "$OUT/epilogue.log" | cut -c1-220
echo "--- sustained"; cat "$OUT"/{pointer,persistent,epilogue}.log | grep '^SUSTAINED' | cut -c11-200
[ "${FOCUS_TUNE:-1}" = 0 ] || { echo "--- tune"; tail -n 30 "$OUT/tune.log"; }
printf '%s\n' "${ROWS[@]}"
exit $FAILED
