#!/usr/bin/env bash
# The main job: build tawa, compile a sample kernel and show what tawa sees in it;
# where a GPU is present, also build the device library and runtime, run the GPU
# tests and time the reference warp-specialized GEMM against cuBLAS.
# Usage: scripts/run.sh [KERNEL.ttir]   (default: examples/ttir/gemm_fp16.ttir)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
kernel=${1:-examples/ttir/gemm_fp16.ttir}

have_gpu=0
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then have_gpu=1; fi
# The GPU machines have CUDA but no MLIR and no package registry: there the
# compiler is skipped. Anywhere else the dependencies are installed as needed.
build_compiler=1
if [ "$have_gpu" = 0 ]; then
  scripts/install-deps.sh
elif [ ! -d /usr/lib/llvm-22/lib/cmake/mlir ]; then
  build_compiler=0
fi

if [ "$build_compiler" = 1 ]; then
  # Its own build folder: scripts/test.sh configures build/ with every part on.
  cmake -G Ninja -S . -B build-run -DCMAKE_BUILD_TYPE=Release -DTAWA_ENABLE_COMPILER=ON \
    -DTAWA_ENABLE_RUNTIME=ON -DTAWA_ENABLE_UNITTESTS=OFF -DTAWA_ENABLE_CUDA_TESTS=OFF \
    -DTAWA_ENABLE_SCHEDULER=OFF -DTAWA_ENABLE_PROTOCOL=OFF \
    >build-run.configure.log 2>&1 || { cat build-run.configure.log; exit 1; }
  ninja -C build-run -j "${TAWA_JOBS:-2}" tawac
  echo "== tawac $kernel --emit=summary =="
  build-run/bin/tawac "$kernel" --emit=summary
else
  echo "run.sh: MLIR 22 is not installed here and cannot be installed: skipping the compiler"
fi

if [ "$have_gpu" = 1 ]; then
  echo "== GPU: device-library tests and reference GEMM vs cuBLAS =="
  exec scripts/gpu-suite.sh
else
  echo "run.sh: no GPU here: the kernel is not run (scripts/gpu-suite.sh runs it on an H100)"
fi
