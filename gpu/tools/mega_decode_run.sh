#!/usr/bin/env bash
# One device call for the decode mega-kernel (docs/MEGAKERNEL.md, "GPU
# test"): builds tawa.mega's library (nvcc + g++, no MLIR), checks the
# PyTorch reference against transformers, the mega-kernel against the
# reference, runs compute-sanitizer memcheck and racecheck on a small case,
# then the latency benchmark. Usage: gpu/tools/mega_decode_run.sh [OUT_DIR]
# Environment: MEGA_ONLY=test|bench, MEGA_BENCH_ARGS (bench options).
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-${OUT:-/tmp/mega-out}}
mkdir -p "$out"
export PYTHONPATH="$root/python${PYTHONPATH:+:$PYTHONPATH}"
export TAWA_CACHE_DIR=${TAWA_CACHE_DIR:-/tmp/tawa-cache}
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader || true
status=0
start=$(date +%s)
python3 -c "import time, tawa.mega as m; t = time.time(); print('library', m.build_library(), f'{time.time() - t:.1f} s')" \
  2>&1 || { echo "BUILD FAILED"; exit 1; }
if [ "${MEGA_ONLY:-}" != bench ]; then
  echo "== reference vs transformers"
  timeout 300 python3 "$root/gpu/mega/test_reference.py" || status=1
  echo "== mega-kernel vs reference"
  timeout 400 python3 "$root/gpu/mega/test_mega_decode.py" ${MEGA_TEST_ARGS:-} || status=1
  sanitizer=/usr/local/cuda/bin/compute-sanitizer
  for tool in memcheck racecheck; do
    echo "== compute-sanitizer $tool (qwen3-tiny, batch 1, 2 steps)"
    timeout 300 "$sanitizer" --tool "$tool" --kernel-name kns=megaKernel --error-exitcode 9 \
      python3 "$root/gpu/mega/test_mega_decode.py" --quick --cases qwen3-tiny-b1 --watchdog-ms 60000 \
      >"$out/sanitizer-$tool.log" 2>&1 || status=1
    grep -E "PASS|FAIL|SUMMARY" "$out/sanitizer-$tool.log" | tail -4
  done
fi
if [ "${MEGA_ONLY:-}" != test ]; then
  echo "== decode latency"
  timeout 500 python3 "$root/bench/mega_decode_bench.py" --json "$out/mega-decode-bench.json" \
    ${MEGA_BENCH_ARGS:-} || status=1
fi
echo "mega decode run: status $status, $(( $(date +%s) - start )) s"
exit $status
