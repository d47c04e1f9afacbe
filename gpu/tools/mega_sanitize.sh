#!/usr/bin/env bash
# compute-sanitizer on the decode mega-kernel alone (under racecheck
# PyTorch's kernels stop the sanitizer, so gpu/mega/test_mega_decode_sanitize.cu
# binds random buffers through the C API, no PyTorch).
# Usage: gpu/tools/mega_sanitize.sh BIN_DIR OUT_DIR
#   BIN_DIR: where the driver is built (with -lineinfo, so reports name
#     source lines), or found already built (test_mega_decode_sanitize);
#     kernel flags MEGA_SANITIZE_NVCC_FLAGS (e.g. a variant's -D switches).
#   OUT_DIR: every report is appended to OUT_DIR/sanitizer.log (a device
#     call brings back a limited number of files); a failing run's first
#     reports are also printed.
# Environment: MEGA_SANITIZE_TOOLS (default "memcheck racecheck synccheck";
# "none": build only), MEGA_SANITIZE_CASES (CONFIG:BATCH ..., default the
# five below), MEGA_SANITIZE_LABEL (a prefix for the log's headers).
# Exits 1 on any error, any racecheck hazard (warnings too) or a failed build.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=${1:?usage: $0 BIN_DIR OUT_DIR}
out=${2:?usage: $0 BIN_DIR OUT_DIR}
mkdir -p "$bin" "$out"
status=0
if [ ! -x "$bin/test_mega_decode_sanitize" ]; then
  pids=()
  for src in "$root"/lib/Mega/*.cpp; do
    g++ -std=c++17 -O2 -I"$root/include" -c "$src" -o "$bin/$(basename "$src" .cpp).o" & pids+=($!)
  done
  nvcc -gencode=arch=compute_90a,code=sm_90a -std=c++17 -O3 -lineinfo -I"$root/include" \
    ${MEGA_SANITIZE_NVCC_FLAGS:-} -c "$root/lib/Mega/Runtime/MegaDecoder.cu" -o "$bin/MegaDecoder.cu.o" & pids+=($!)
  for p in "${pids[@]}"; do wait "$p" || status=1; done
  [ $status -eq 0 ] && nvcc -gencode=arch=compute_90a,code=sm_90a -std=c++17 -O3 -I"$root/include" \
    -o "$bin/test_mega_decode_sanitize" "$root/gpu/mega/test_mega_decode_sanitize.cu" "$bin"/*.o \
    || { echo "mega_sanitize.sh: building the driver failed"; exit 1; }
fi
tools=${MEGA_SANITIZE_TOOLS:-memcheck racecheck synccheck}
[ "$tools" = none ] && exit 0
# derive_config NAME KEY VALUE OUT: test/Mega/Inputs/NAME.json with KEY set
# to the integer VALUE, as $bin/OUT.json.
derive_config() {
  python3 -c "import json,sys; c=json.load(open(sys.argv[1])); c[sys.argv[2]]=int(sys.argv[3]); json.dump(c, open(sys.argv[4],'w'))" \
    "$root/test/Mega/Inputs/$1.json" "$2" "$3" "$bin/$4.json"
}
# The Qwen3-0.6B shape with 2 layers (the issue's sanitizer case).
derive_config qwen3-0.6b num_hidden_layers 2 qwen3-0.6b-l2
cp "$root"/test/Mega/Inputs/{llama-tiny,qwen3-tiny}.json "$bin/"
# qwen3-tiny with an intermediate size of 8192: at batch 16 its down
# projection stages K in two passes (16 input rows of 8192 do not fit
# below the weight ring at once).
derive_config qwen3-tiny intermediate_size 8192 qwen3-tiny-wide
# Plans whose attention has no more tasks than the 128 workers have no JIT
# task: attention's cache copies are issued before its inputs are ready (the
# prefetch path). The tiny models (2 KV heads, 16 chunks of 64) at batch 1-3
# and qwen3-0.6b-l2 (head dim 128: attention on the tensor cores) at batch 1
# are such plans; qwen3-0.6b-l2 at batch 3 (3 rows x 8 KV heads x 6 chunks =
# 144 tasks) is hybrid, attention and merge just in time. qwen3-tiny-wide
# at batch 16: a linear in several K passes.
cases=${MEGA_SANITIZE_CASES:-llama-tiny:2 qwen3-tiny:1 qwen3-tiny:3 qwen3-0.6b-l2:1 qwen3-0.6b-l2:3 qwen3-tiny-wide:16}
sanitizer=/usr/local/cuda/bin/compute-sanitizer
label=${MEGA_SANITIZE_LABEL:+$MEGA_SANITIZE_LABEL: }
for tool in $tools; do
  echo "== ${label}compute-sanitizer $tool ($cases; 3 steps each)"
  for cfg in $cases; do
    # synccheck: the tiny configs only (the 0.6B shape: memcheck, racecheck).
    [ "$tool" = synccheck ] && [ "${cfg%%:*}" = qwen3-0.6b-l2 ] && continue
    log="$bin/sanitizer-$tool-${cfg/:/-b}.log"
    rc=0
    timeout 300 "$sanitizer" --tool "$tool" --error-exitcode 9 "$bin/test_mega_decode_sanitize" \
      "$bin/${cfg%%:*}.json" "${cfg##*:}" 1024 3 >"$log" 2>&1 || rc=$?
    echo "${cfg%%:*} batch ${cfg##*:}: $(grep -E "PASS|FAIL|SUMMARY" "$log" | tail -2 | tr '\n' ' ')"
    { echo "== ${label}$tool ${cfg%%:*} batch ${cfg##*:} (status $rc)"; cat "$log"; } >>"$out/sanitizer.log"
    if [ "$rc" -ne 0 ] || grep -qE "[1-9][0-9]* hazards displayed" "$log"; then
      status=1
      grep -m 40 -E "^========= (Error|Warning|ERROR|WARNING|Race|Invalid|    at |Saved host)" "$log" || true
    fi
  done
done
exit $status
