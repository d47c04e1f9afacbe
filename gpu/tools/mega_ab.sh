#!/usr/bin/env bash
# A/B of the decode mega-kernel in one device call: this tree (B) against a
# baseline tree (A, default build/ab-base), both libraries built here, then
# bench/mega_decode_bench.py run for A, B, A, B, ... (AB_ROUNDS rounds) and
# the 8B profile per batch in AB_PROFILE (e.g. "1 16") for each. Each
# variant runs with its own tree's Python and bench scripts (its library's C
# API may differ from the other's).
# Make the baseline on the machine with the checkout and carry it:
#   rm -rf build/ab-base && mkdir -p build/ab-base &&
#     git archive HEAD python lib include bench gpu | tar -x -C build/ab-base
#   (device call, carry ["build/ab-base"]): bash gpu/tools/mega_ab.sh
# Environment: AB_BASE, AB_MODELS (0.6b,8b), AB_BATCHES (1,16), AB_CONTEXTS
# (512), AB_ROUNDS (2), AB_PROFILE (none), AB_TASKS (none: case numbers of
# gpu/tools/mega_task_latency.cu, e.g. "11 12 16 17" for the linear tiles,
# built from each tree and run A then B before the step benchmark),
# AB_ALL_VARIANTS (0: each tree's steps run the libraries tawa.mega.compile
# builds, one per model's attention shape, built here first; 1: the one
# library with every kernel variant, as before the thirtieth session).
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
base=${AB_BASE:-$root/build/ab-base}
export TAWA_CACHE_DIR=${TAWA_CACHE_DIR:-/tmp/tawa-cache}
[ -d "$base/python/tawa" ] || { echo "mega_ab.sh: no baseline tree at $base"; exit 2; }
all_variants=${AB_ALL_VARIANTS:-0}
# Prints the library the steps run with (all variants), or builds the
# models' specialized libraries into the cache, where compile() finds them,
# and prints "specialized".
build() { (cd "$1" && PYTHONPATH="$1/python:$1/bench" AB_MODELS="${AB_MODELS:-0.6b,8b}" \
  ALL="$all_variants" python3 -c "
import os, tawa.mega as m
if os.environ['ALL'] == '1':
    print(m.build_library())
else:
    from mega_decode_bench import MODELS
    from tawa.mega.reference import ModelShape
    shapes = [ModelShape.from_config(MODELS[n]) for n in os.environ['AB_MODELS'].split(',')]
    print(m.build_libraries([m.model_specialization_flags(s) for s in shapes]))
    print('specialized')"); }
build "$base" >/tmp/mega-ab-A.txt 2>&1 & pa=$!
build "$root" >/tmp/mega-ab-B.txt 2>&1 & pb=$!
# The task-latency tool of each tree (its own device headers), alongside.
tool() { nvcc -gencode=arch=compute_90a,code=sm_90a -std=c++17 -O3 -I"$1/include" \
  "$1/gpu/tools/mega_task_latency.cu" -o "$2"; }
if [ -n "${AB_TASKS:-}" ]; then
  [ -f "$base/gpu/tools/mega_task_latency.cu" ] ||
    { echo "mega_ab.sh: AB_TASKS needs the baseline's gpu/ (git archive HEAD ... gpu)"; exit 2; }
  tool "$base" /tmp/mega-ab-taskA >/tmp/mega-ab-tA.txt 2>&1 & ta=$!
  tool "$root" /tmp/mega-ab-taskB >/tmp/mega-ab-tB.txt 2>&1 & tb=$!
fi
wait $pa && wait $pb || { cat /tmp/mega-ab-A.txt /tmp/mega-ab-B.txt; exit 1; }
libA=$(tail -1 /tmp/mega-ab-A.txt) libB=$(tail -1 /tmp/mega-ab-B.txt)
echo "A: $base ($libA)"
echo "B: $root ($libB)"
status=0
if [ -n "${AB_TASKS:-}" ]; then
  wait $ta && wait $tb || { cat /tmp/mega-ab-tA.txt /tmp/mega-ab-tB.txt; exit 1; }
  for c in $AB_TASKS; do
    for v in A B; do
      echo "== $v, task case $c"
      timeout 60 "/tmp/mega-ab-task$v" "$c" 2>&1 | tail -n 6 || status=1
    done
  done
fi
tree() { [ "$1" = A ] && echo "$base" || echo "$root"; }
lib() { [ "$1" = A ] && echo "$libA" || echo "$libB"; }
# TAWA_MEGA_LIB for variant $1's runs: its library, or unset (specialized).
libenv() { [ "$(lib "$1")" = specialized ] && echo "TAWA_MEGA_LIB=" ||
  echo "TAWA_MEGA_LIB=$(lib "$1")"; }
for round in $(seq 1 "${AB_ROUNDS:-2}"); do
  for v in A B; do
    t=$(tree $v)
    echo "== $v, round $round"
    env $(libenv $v) PYTHONPATH="$t/python" timeout 300 python3 -u \
      "$t/bench/mega_decode_bench.py" --models "${AB_MODELS:-0.6b,8b}" \
      --batches "${AB_BATCHES:-1,16}" --contexts "${AB_CONTEXTS:-512}" \
      --steps 20 | grep -E " b[0-9]+ " || status=1
  done
done
for b in ${AB_PROFILE:-}; do
  for v in A B; do
    t=$(tree $v)
    echo "== $v, profile 8b batch $b"
    env $(libenv $v) PYTHONPATH="$t/python" timeout 120 python3 -u \
      "$t/bench/mega_decode_profile.py" --model 8b --batch "$b" \
      --context 512 | tail -n 12 || status=1
  done
done
exit $status
