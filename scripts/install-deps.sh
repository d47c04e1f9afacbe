#!/usr/bin/env bash
# Installs what tawa needs on a Debian 12 machine of the project's kind (idempotent, quiet).
# Usage: scripts/install-deps.sh            compiler + tests (MLIR 22, LLVM tools, GoogleTest, ninja)
set -euo pipefail
# clang-14 and its runtime (libclang-rt-14-dev: libFuzzer, ASan) build the fuzz target.
pkgs=(libmlir-22-dev mlir-22-tools llvm-22-dev llvm-22-tools libzstd-dev
      cmake ninja-build libgtest-dev python3 python3-venv libz3-dev coinor-libcbc-dev pkg-config
      clang-14 libclang-rt-14-dev)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "install-deps: installing ${missing[*]}"
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi
