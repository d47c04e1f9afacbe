#!/usr/bin/env bash
# The main job: build tawa, show what tawa sees in a sample kernel and compile it
# to an sm_90a CUBIN with its launch metadata; where a GPU is present, also run
# every GPU test (the compiled kernels' correctness included) and time the
# compiled GEMMs against cuBLAS and Triton (scripts/gpu-suite.sh).
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
  name=$(basename "$kernel" .ttir)
  echo "== tawac $kernel --emit=cubin -o build-run/kernels/$name.cubin =="
  mkdir -p build-run/kernels
  build-run/bin/tawac "$kernel" --emit=cubin -o "build-run/kernels/$name.cubin" --print-resources
  echo "wrote build-run/kernels/$name.cubin and build-run/kernels/$name.json:"
  cat "build-run/kernels/$name.json"
  if [ "$have_gpu" = 1 ]; then
    # Every GEMM-family kernel under every configuration, for the GPU suite.
    python3 gpu/compiled/make_kernels.py --tawac build-run/bin/tawac --out build-kernels
  fi
else
  echo "run.sh: MLIR 22 is not installed here and cannot be installed: skipping the compiler"
fi

if [ "$have_gpu" = 1 ]; then
  echo "== GPU: device-library tests, compiled kernels, GEMM vs cuBLAS and Triton =="
  exec scripts/gpu-suite.sh
else
  echo "run.sh: no GPU here: the kernel is not run (on an H100: gpu/compiled/make_kernels.py here, then scripts/gpu-suite.sh there)"
fi
