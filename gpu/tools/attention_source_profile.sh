#!/usr/bin/env bash
# Nsight Compute's per-instruction view of compiled attention kernels: where
# the warps of the fourth launch stall, SASS line by line (warp-state samples
# and executed instructions), as CSV, summarized by bench/ncu_source_summary.py
# (the hottest instructions, and the hottest loop by opcode). One device call:
#   PROFILE_KERNELS="examples/attn_fwd_fp16_d64/default shared/attn_fp16/default" \
#     bash gpu/tools/attention_source_profile.sh OUTDIR
# Needs build-kernels/attention.json (gpu/compiled/make_kernels.py).
# PROFILE_CUDNN=1 profiles cuDNN's kernel for the same shape instead (the
# entry's dtype and D; SDPA with the cuDNN backend), for its instruction mix.
set -u
cd "$(dirname "$0")/../.."
OUT=${1:?usage: attention_source_profile.sh OUTDIR}
mkdir -p "$OUT"
export PATH=$PATH:/usr/local/cuda/bin
B=build-gpu-suite
cmake -G Ninja -S . -B $B -DCMAKE_BUILD_TYPE=Release -DTAWA_ENABLE_COMPILER=OFF \
  -DTAWA_ENABLE_UNITTESTS=OFF -DTAWA_ENABLE_CUDA_TESTS=OFF -DTAWA_ENABLE_SCHEDULER=OFF \
  -DTAWA_ENABLE_PROTOCOL=OFF -DTAWA_ENABLE_MEGA=OFF >/dev/null && ninja -C $B tawa_runtime_shared >/dev/null || exit 1
export TAWA_RUNTIME_LIB=$PWD/$B/lib/Runtime/libtawa_runtime.so TAWA_CACHE_DIR=$PWD/$B/nvrtc-cache
ncu --version | tail -1
for k in ${PROFILE_KERNELS:-examples/attn_fwd_fp16_d64/default shared/attn_fp16/default}; do
  name=$(echo "$k" | tr '/' '-')
  if [ -n "${PROFILE_CUDNN:-}" ]; then
    name=cudnn-$name; filter="regex:cudnn"; cudnn=()
  else
    filter="regex:^(attn|attention)"; cudnn=(--no-cudnn)
  fi
  timeout 240 ncu --clock-control none -k "$filter" --launch-skip 3 --launch-count 1 --import-source no \
    --section SourceCounters --section WarpStateStats --section SpeedOfLight -f -o "$OUT/$name" \
    python3 bench/profile_attention.py --manifest "${PROFILE_MANIFEST:-build-kernels/attention.json}" \
    --kernel "$k" --shape "${PROFILE_SHAPE:-4,32,4096}" "${cudnn[@]}" > "$OUT/$name.log" 2>&1
  echo "=== $k: $(tail -1 "$OUT/$name.log")"
  ncu -i "$OUT/$name.ncu-rep" --page source --csv --print-source sass > "$OUT/$name-sass.csv" 2>&1
  ncu -i "$OUT/$name.ncu-rep" --page details --section WarpStateStats --section SpeedOfLight > "$OUT/$name-details.txt" 2>&1
  python3 bench/ncu_source_summary.py "$OUT/$name-sass.csv" > "$OUT/$name-summary.txt" 2>&1
  grep -E "Duration|Warp Cycles" "$OUT/$name-details.txt" | head -4
  cat "$OUT/$name-summary.txt"
  rm -f "$OUT/$name.ncu-rep"
done
