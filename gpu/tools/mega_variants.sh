#!/usr/bin/env bash
# A/B of compile-time variants of the decode mega-kernel in one device call:
# for each set of flags (TAWA_MEGA_NVCC_FLAGS, one argument per variant;
# "" is the default build; they reach nvcc, i.e. the kernel, not the host
# planner) builds the library, times decode steps
# (bench/mega_decode_bench.py with MEGA_BENCH_ARGS) and prints the 8B
# batch 1 profile table. Usage:
#   gpu/tools/mega_variants.sh "" "-DTAWA_MEGA_L2_PREFETCH_KB=0" ...
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
export PYTHONPATH="$root/python${PYTHONPATH:+:$PYTHONPATH}"
export TAWA_CACHE_DIR=${TAWA_CACHE_DIR:-/tmp/tawa-cache}
bench_args=${MEGA_BENCH_ARGS:---models 0.6b,8b --batches 1 --contexts 512}
status=0
for flags in "$@"; do
  echo "== variant: ${flags:-default}"
  export TAWA_MEGA_NVCC_FLAGS="$flags"
  timeout 300 python3 "$root/bench/mega_decode_bench.py" $bench_args || status=1
  if [ -n "${MEGA_PROFILE:-1}" ]; then
    timeout 120 python3 "$root/bench/mega_decode_profile.py" --model 8b --batch 1 \
      --context 512 || status=1
  fi
done
exit $status
