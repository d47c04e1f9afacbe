#!/usr/bin/env bash
# Makes the Python environment the Python tests run in (idempotent, quiet):
# a venv at $1 (default build/venv) with Triton 3.6 from the package registry
# (its front end makes TTIR without a GPU) and pytest. Neither PyTorch nor a
# GPU is needed. Prints the venv's python.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
venv=${1:-$root/build/venv}
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv" >&2
fi
if ! "$venv/bin/python" -c 'import triton, pytest; assert triton.__version__.startswith("3.6.")' 2>/dev/null; then
  echo "python-venv: installing triton 3.6 and pytest into $venv" >&2
  "$venv/bin/python" -m pip install -q --disable-pip-version-check 'triton==3.6.*' pytest >&2
fi
echo "$venv/bin/python"
