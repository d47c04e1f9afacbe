#!/usr/bin/env bash
# Nsight Compute's per-instruction view of one decode mega-kernel step, by
# source line. For each MODEL:BATCH in MEGA_SOURCE_CASES (default "0.6b:1";
# context 512): the fifth step's warp-state samples and executed
# instructions, SASS line by line (OUTDIR/mega-M-bB-sass.csv.gz), the line
# table of the same cubin (nvdisasm -gi, OUTDIR/mega-M-bB.sass.gz: the
# library is built with -lineinfo on top of the model's specialization flags
# and $TAWA_MEGA_NVCC_FLAGS), and in OUTDIR/mega-M-bB.log the step's check,
# ncu's details page, bench/ncu_source_summary.py (hottest instructions) and
# bench/ncu_mega_lines.py (by task call site and line, stall reasons, the
# code the step runs). One device call:
#   bash gpu/tools/mega_source_profile.sh OUTDIR
# Clocks are left alone (--clock-control none) so the step runs as it does
# unprofiled; every warp is sampled, the polling idle ones too.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
OUT=${1:?usage: mega_source_profile.sh OUTDIR}
mkdir -p "$OUT"
export PATH=$PATH:/usr/local/cuda/bin PYTHONPATH=$root/python${PYTHONPATH:+:$PYTHONPATH}
export TAWA_CACHE_DIR=${TAWA_CACHE_DIR:-/tmp/tawa-cache}
export TAWA_MEGA_NVCC_FLAGS="-lineinfo ${TAWA_MEGA_NVCC_FLAGS:-}"
ncu --version | tail -1
status=0
for case in ${MEGA_SOURCE_CASES:-0.6b:1}; do
  m=${case%%:*} b=${case##*:}
  name=mega-$m-b$b log=$OUT/mega-$m-b$b.log
  step=(python3 bench/mega_decode_profile.py --model "$m" --batch "$b" --context 512 --no-trace --steps 6)
  # Builds (and caches) the library outside the profiler, and checks the step.
  "${step[@]}" > "$log" 2>&1 || { echo "$case failed:"; tail -20 "$log"; status=1; continue; }
  lib=$(python3 -c "
import sys; sys.path.insert(0, 'bench')
import tawa.mega as tm
from mega_decode_bench import MODELS
print(tm.build_library(flags=tm.model_specialization_flags(tm.ModelShape.from_config(MODELS['$m']))))")
  tmp=$(mktemp -d)
  (cd "$tmp" && cuobjdump -xelf all "$lib" >/dev/null) &&
    nvdisasm -gi -c "$tmp"/*sm_90a*.cubin | gzip > "$OUT/$name.sass.gz" || status=1
  rm -rf "$tmp"
  timeout 300 ncu --clock-control none -k regex:megaKernel --launch-skip 4 --launch-count 1 \
    --section SourceCounters --section WarpStateStats --section SpeedOfLight \
    -f -o "$OUT/$name" "${step[@]}" >> "$log" 2>&1 || status=1
  echo "=== $case: $(grep -v '^==PROF==' "$log" | tail -1)"
  ncu -i "$OUT/$name.ncu-rep" --page source --csv --print-source sass > "$OUT/$name-sass.csv" 2>&1
  ncu -i "$OUT/$name.ncu-rep" --page details --section WarpStateStats --section SpeedOfLight \
    >> "$log" 2>&1
  grep -E "Duration|Warp Cycles|Elapsed Cycles|SM Frequency" "$log" | head -6
  python3 bench/ncu_source_summary.py "$OUT/$name-sass.csv" --top 15 >> "$log" 2>&1 || status=1
  python3 bench/ncu_mega_lines.py "$OUT/$name-sass.csv" "$OUT/$name.sass.gz" --top 25 \
    > "$OUT/lines.txt" 2>&1 || status=1
  cat "$OUT/lines.txt" >> "$log"
  head -30 "$OUT/lines.txt"
  rm -f "$OUT/lines.txt"
  gzip -f "$OUT/$name-sass.csv"
  rm -f "$OUT/$name.ncu-rep"
done
exit $status
