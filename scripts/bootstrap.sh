#!/usr/bin/env bash
# Create .venv (if missing) and install the requirements. Used by run.sh and test.sh.
# Usage: scripts/bootstrap.sh [requirements file]   (default requirements.txt)
set -euo pipefail
cd "$(dirname "$0")/.."
req="${1:-requirements.txt}"
PY="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  echo "[bootstrap] creating .venv with $($PY --version)"
  "$PY" -m venv .venv
fi
stamp=".venv/.installed-$(basename "$req")-$(cat requirements*.txt | sha256sum | cut -c1-16)"
if [ ! -f "$stamp" ]; then
  echo "[bootstrap] installing $req (first run takes a few minutes)"
  .venv/bin/python -m pip install --quiet --upgrade pip >/dev/null 2>&1 || true
  .venv/bin/python -m pip install --quiet -r "$req"
  touch "$stamp"
fi
# Compile the fused DP-GD kernels once (numba caches them under .cache/dpgd_kernels; ~40 s, once per
# machine and kernel version), so that the first DP-GD sweep on the page does not wait for the compiler.
kstamp=".cache/dpgd_kernels/.warm-$(cat engine/pmt/_gd_kernel.py | sha256sum | cut -c1-16)"
if [ ! -f "$kstamp" ]; then
  echo "[bootstrap] compiling the DP-GD kernels (once, about 40 s)"
  .venv/bin/python scripts/warm_dpgd_kernels.py
  touch "$kstamp"
fi
