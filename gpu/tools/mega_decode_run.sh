#!/usr/bin/env bash
# One device call for the decode mega-kernel (docs/MEGAKERNEL.md, "GPU
# test"): builds tawa.mega's library (nvcc + g++, no MLIR), checks the
# PyTorch reference against transformers, the mega-kernel against the
# reference, runs compute-sanitizer (memcheck, racecheck, synccheck) on the
# kernel of two tiny configs and of the Qwen3-0.6B shape with 2 layers
# (memcheck, racecheck; gpu/mega/test_mega_decode_sanitize.cu),
# then the latency benchmark (JSON, table and plot: bench/plot_mega_decode.py)
# and the per-task profiles of 8B at batch 1 and 16 and 0.6B at batch 1.
# The benchmark and the test run the kernel built for each model's attention
# (tawa.mega.specialization_flags), built here at once.
# Usage: gpu/tools/mega_decode_run.sh [OUT_DIR]
# Environment: MEGA_ONLY=test|bench, MEGA_BENCH_ARGS (bench options),
# MEGA_SANITIZE_* (gpu/tools/mega_sanitize.sh), MEGA_KEEP_LOGS=1 (the trace
# CSVs and sanitizer.log left as they are, not packed into mega-logs.tar.gz).
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-${OUT:-/tmp/mega-out}}
mkdir -p "$out"
export PYTHONPATH="$root/python${PYTHONPATH:+:$PYTHONPATH}"
export TAWA_CACHE_DIR=${TAWA_CACHE_DIR:-/tmp/tawa-cache}
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader || true
status=0
start=$(date +%s)
# The libraries, built at once: the one with every kernel variant and the
# benchmark's, each with only its model's attention
# (tawa.mega.model_specialization_flags of bench/mega_decode_bench.py's
# models). The GPU test builds its cases' own.
python3 -c "
import sys, time, tawa.mega as m
sys.path.insert(0, '$root/bench')
from mega_decode_bench import MODELS
t = time.time()
sets = [()] + sorted({tuple(m.model_specialization_flags(m.ModelShape.from_config(c)))
                      for c in MODELS.values()})
for flags, path in zip(sets, m.build_libraries(sets)):
    print('library', ' '.join(flags) or '(every variant)', path)
print(f'{time.time() - t:.1f} s')" 2>&1 || { echo "BUILD FAILED"; exit 1; }
if [ "${MEGA_ONLY:-}" != bench ]; then
  echo "== device primitives: mma.sync m16n8k16, bulk copy, polled activations, the row-squares epilogue (gpu/tests/test_mma.cu, test_bulk_copy.cu, test_mega_poll.cu, test_mega_row_squares.cu)"
  for t in test_mma test_bulk_copy test_mega_poll test_mega_row_squares; do
    nvcc -gencode=arch=compute_90a,code=sm_90a -std=c++17 -O3 -I"$root/include" \
      -o "$out/$t" "$root/gpu/tests/$t.cu" -lcuda && "$out/$t" || status=1
    rm -f "$out/$t"
  done
  echo "== reference vs transformers"
  timeout 300 python3 "$root/gpu/mega/test_reference.py" || status=1
  echo "== mega-kernel vs reference"
  timeout 400 python3 "$root/gpu/mega/test_mega_decode.py" ${MEGA_TEST_ARGS:-} || status=1
  # Plans of two row tiles (the runtime plans one up to batch 64; this
  # build plans tiles of 8 rows): the embedding's and the linears' row
  # tiles, and the dependencies pruned per row tile.
  echo "== mega-kernel vs reference, linear tiles of 8 rows (-DTAWA_MEGA_ROW_TILE=8)"
  TAWA_MEGA_NVCC_FLAGS="-DTAWA_MEGA_ROW_TILE=8" timeout 200 python3 \
    "$root/gpu/mega/test_mega_decode.py" --cases qwen3-8b-l2-b16,qwen3-0.6b-l2-b12 || status=1
  # compute-sanitizer on the kernel alone (a C++ driver, no PyTorch).
  bash "$root/gpu/tools/mega_sanitize.sh" "$(mktemp -d)" "$out" || status=1
fi
if [ "${MEGA_ONLY:-}" != test ]; then
  echo "== decode latency"
  timeout 500 python3 "$root/bench/mega_decode_bench.py" --json "$out/mega-decode-bench.json" \
    ${MEGA_BENCH_ARGS:-} || status=1
  # The table and the plot (times over the bandwidth floor) from the JSON.
  python3 "$root/bench/plot_mega_decode.py" "$out/mega-decode-bench.json" \
    --png "$out/mega-decode.png" || status=1
  # Where the time goes: per-operator table and per-SM timeline (picture).
  for case in 8b:1 8b:16 0.6b:1; do
    m=${case%%:*} b=${case##*:}
    echo "== profile $m batch $b context 512"
    timeout 200 python3 "$root/bench/mega_decode_profile.py" --model "$m" --batch "$b" \
      --context 512 --png "$out/mega-timeline-$m-b$b.png" --csv "$out/mega-trace-$m-b$b.csv" || status=1
  done
fi
# A device call brings back at most 8 files: the traces and the sanitizer's
# reports travel as one archive (tar -xzf mega-logs.tar.gz), unless
# MEGA_KEEP_LOGS=1.
logs=()
for f in "$out"/mega-trace-*.csv "$out/sanitizer.log"; do [ -f "$f" ] && logs+=("$(basename "$f")"); done
if [ "${MEGA_KEEP_LOGS:-0}" != 1 ] && [ ${#logs[@]} -gt 0 ]; then
  tar -czf "$out/mega-logs.tar.gz" -C "$out" "${logs[@]}" &&
    (cd "$out" && rm -f "${logs[@]}") || status=1
fi
echo "mega decode run: status $status, $(( $(date +%s) - start )) s"
exit $status
