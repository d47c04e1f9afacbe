#!/usr/bin/env bash
# A/B of compile-time variants of the decode mega-kernel in one device call:
# for each set of flags (TAWA_MEGA_NVCC_FLAGS, one argument per variant;
# "" is the build with every kernel variant, not the one tawa.mega.compile
# builds by default, which has specialization_flags; they reach nvcc, i.e.
# the kernel, not the host
# planner) builds the library (all variants at once), then times decode
# steps (bench/mega_decode_bench.py with MEGA_BENCH_ARGS) for every variant
# in turn, MEGA_ROUNDS times (default 1), and prints the profile table of
# each variant for every MODEL:BATCH in MEGA_PROFILE_CASES (default "8b:1";
# empty: none; MEGA_PROFILE_BATCHES="B ..." still means "8b:B ..."), with
# its trace CSV in MEGA_TRACE_DIR/mega-trace-vJ-MODEL-bB.csv when that is
# set (bench/mega_chain.py reads them). With MEGA_VARIANT_SANITIZE="CONFIG:BATCH
# ..." (e.g. "qwen3-0.6b-l2:1"), each variant's kernel is also built into
# gpu/tools/mega_sanitize.sh's driver and checked by MEGA_SANITIZE_TOOLS
# (default racecheck here) on those cases before the timings, reports in
# MEGA_SANITIZE_OUT/sanitizer.log (default /tmp/mega-variant-sanitize). Usage:
#   MEGA_ROUNDS=2 gpu/tools/mega_variants.sh "" "-DTAWA_MEGA_WARPS=8" ...
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
export PYTHONPATH="$root/python${PYTHONPATH:+:$PYTHONPATH}"
export TAWA_CACHE_DIR=${TAWA_CACHE_DIR:-/tmp/tawa-cache}
bench_args=${MEGA_BENCH_ARGS:---models 0.6b,8b --batches 1 --contexts 512}
[ $# -gt 0 ] || { echo "usage: $0 FLAGS [FLAGS ...]  (\"\" is the default build)"; exit 2; }
variants=("$@")
libs=() pids=()
for j in "${!variants[@]}"; do
  TAWA_MEGA_NVCC_FLAGS="${variants[$j]}" python3 -c \
    "import tawa.mega as m; print(m.build_library())" >"/tmp/mega-variant-$j.txt" 2>&1 &
  pids+=($!)
done
sanitize=${MEGA_VARIANT_SANITIZE:-}
spids=()
sbin=$(mktemp -d)
if [ -n "$sanitize" ]; then
  for j in "${!variants[@]}"; do
    MEGA_SANITIZE_NVCC_FLAGS="${variants[$j]}" MEGA_SANITIZE_TOOLS=none bash \
      "$root/gpu/tools/mega_sanitize.sh" "$sbin/v$j" /tmp \
      >"/tmp/mega-variant-sanitize-$j.txt" 2>&1 &
    spids+=($!)
  done
fi
for j in "${!variants[@]}"; do
  wait "${pids[$j]}"
  lib=$(tail -1 "/tmp/mega-variant-$j.txt")
  [ -f "$lib" ] || { echo "building variant '${variants[$j]}' failed:"; cat "/tmp/mega-variant-$j.txt"; exit 1; }
  libs+=("$lib")
done
status=0
for j in "${!spids[@]}"; do
  wait "${spids[$j]}" || { echo "building variant '${variants[$j]}' for the sanitizer failed:";
    cat "/tmp/mega-variant-sanitize-$j.txt"; exit 1; }
done
for j in "${!spids[@]}"; do
  MEGA_SANITIZE_LABEL="variant ${variants[$j]:-default}" MEGA_SANITIZE_CASES="$sanitize" \
    MEGA_SANITIZE_TOOLS="${MEGA_SANITIZE_TOOLS:-racecheck}" bash "$root/gpu/tools/mega_sanitize.sh" \
    "$sbin/v$j" "${MEGA_SANITIZE_OUT:-/tmp/mega-variant-sanitize}" || status=1
done
for round in $(seq 1 "${MEGA_ROUNDS:-1}"); do
  for j in "${!variants[@]}"; do
    echo "== variant: ${variants[$j]:-default}, round $round"
    TAWA_MEGA_LIB=${libs[$j]} timeout 300 python3 "$root/bench/mega_decode_bench.py" \
      $bench_args || status=1
  done
done
cases=${MEGA_PROFILE_CASES-}
if [ -z "${MEGA_PROFILE_CASES+set}" ]; then
  cases=""
  for b in ${MEGA_PROFILE_BATCHES-1}; do cases="$cases 8b:$b"; done
fi
[ -n "${MEGA_TRACE_DIR:-}" ] && mkdir -p "$MEGA_TRACE_DIR"
for case in $cases; do
  m=${case%%:*} b=${case##*:}
  for j in "${!variants[@]}"; do
    echo "== variant: ${variants[$j]:-default}, profile $m batch $b"
    csv=()
    [ -n "${MEGA_TRACE_DIR:-}" ] && csv=(--csv "$MEGA_TRACE_DIR/mega-trace-v$j-$m-b$b.csv")
    TAWA_MEGA_LIB=${libs[$j]} timeout 120 python3 "$root/bench/mega_decode_profile.py" \
      --model "$m" --batch "$b" --context 512 "${csv[@]}" || status=1
  done
done
exit $status
