#!/usr/bin/env bash
# One device call that compares attention CUBINs side by side: the device
# library's fragment/math tests, the runtime built, correctness of every
# entry of an attention manifest against SDPA in float32, the MUFU/FFMA mix of
# each CUBIN's SASS, racecheck on a small shape, and the benchmark (tawa's configurations, cuDNN, FA2,
# Triton on the same source; geomean of each configuration over the default).
#
#   AB_MANIFEST=build-kernels/attention-ab.json bash gpu/tools/attention_ab_run.sh OUTDIR
#
# The bench times every configuration and anchor of a shape once per round,
# the order rotated each round, median over AB_ROUNDS rounds (default 3).
#
# The manifest is gpu/compiled/make_kernels.py's attention.json or a subset
# of it with extra entries (a CUBIN built another way, named by its config),
# as gpu/tools/attention_ab_manifest.py writes it:
#   python3 gpu/tools/attention_ab_manifest.py build-kernels/attention-ab.json \
#     --kernel shared/attn_fp16 --config NOPIN \
#     --variant shared/attn_fp16:NVCC=/tmp/attn.cubin
set -u -o pipefail
cd "$(dirname "$0")/../.."
OUT=${1:?usage: attention_ab_run.sh OUTDIR}
mkdir -p "$OUT"
export PATH=$PATH:/usr/local/cuda/bin
B=build-gpu-suite
M=${AB_MANIFEST:-build-kernels/attention.json}
source gpu/tools/steps.sh
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
step "test_fragment (nvcc)" fragment.log bash -c "nvcc -gencode=arch=compute_90a,code=sm_90a \
  -std=c++17 -O3 -Iinclude -o /tmp/test_fragment gpu/tests/test_fragment.cu \
  -L/usr/local/cuda/lib64/stubs -lcuda && /tmp/test_fragment"
step "runtime build" build.log build_runtime "$B"
export TAWA_RUNTIME_LIB=$PWD/$B/lib/Runtime/libtawa_runtime.so TAWA_REQUIRE_GPU=1
export TAWA_CACHE_DIR=$PWD/$B/nvrtc-cache PYTHONUNBUFFERED=1
step "attention: correctness" check.log python3 gpu/compiled/attention.py --manifest "$M" --check
step "racecheck (small)" race.log compute-sanitizer --tool racecheck --error-exitcode 1 \
  python3 gpu/compiled/attention.py --manifest "$M" --check --small
# Instruction mix of each CUBIN (cuobjdump from the toolkit or Triton's wheel).
CUOBJ=$(command -v cuobjdump || python3 -c "import os, triton; print(os.path.dirname(triton.__file__) + '/backends/nvidia/bin/cuobjdump')")
python3 - "$M" "$CUOBJ" > "$OUT/sass-mix.txt" 2>&1 <<'PY'
import json, os, re, subprocess, sys
m = json.load(open(sys.argv[1])); base = os.path.dirname(sys.argv[1])
print(f"{'kernel/config':44} {'MUFU.EX2':>8} {'FFMA':>6} {'FMNMX':>6} {'GMMA':>6} {'total':>6}")
for e in m["kernels"]:
    if e["error"]:
        continue
    md = json.load(open(os.path.join(base, e["metadata"])))
    cubin = os.path.join(base, os.path.dirname(e["metadata"]), md["cubin"])
    sass = subprocess.run([sys.argv[2], "-sass", cubin], capture_output=True, text=True).stdout
    ins = [l for l in sass.splitlines() if re.match(r"\s+/\*[0-9a-f]{4}\*/", l)]
    c = lambda op: sum(1 for l in ins if re.search(r"\b" + re.escape(op) + r"\b", l))
    gmma = sum(1 for l in ins if re.search(r"\b[HQ]GMMA\.", l))
    print(f"{e['id']:44} {c('MUFU.EX2'):8} {c('FFMA'):6} {c('FMNMX'):6} {gmma:6} {len(ins):6}")
PY
step "attention: bench" bench.log python3 gpu/compiled/attention.py --manifest "$M" --bench \
  --rounds "${AB_ROUNDS:-3}" --json "$OUT/attention-ab.json" --table "$OUT/attention-ab.txt"
echo "--- fragment"; grep -E "^(PASS|FAIL)" "$OUT/fragment.log" | tr '\n' ' '; echo
echo "--- check: $(grep -Eo '[0-9]+ passed, [0-9]+ failed' "$OUT/check.log" | tail -1)"
grep -E "FAIL|error" "$OUT/check.log" | head -5
echo "--- racecheck: $(grep -Ei 'passed|hazard|error summary' "$OUT/race.log" | tail -2 | tr '\n' ' ')"
echo "--- SASS mix"; cat "$OUT/sass-mix.txt"
echo "--- bench"; cat "$OUT/attention-ab.txt" 2>/dev/null || tail -20 "$OUT/bench.log"
printf '%s\n' "${ROWS[@]}"
exit $FAILED
