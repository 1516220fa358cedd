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
# Compile the numba kernels once (the fused DP-GD step, cached under .cache/dpgd_kernels, and the NVDP
# Renyi-bound kernel, cached in engine/nvdp/__pycache__; about a minute, once per machine and kernel
# version), so that the first DP-GD sweep and the first NVDP visit do not wait for the compiler.
kstamp=".cache/dpgd_kernels/.warm-$(cat engine/pmt/_gd_kernel.py engine/nvdp/_rd_numba.py engine/nvdp/_rd_numba_kernels.py scripts/warm_dpgd_kernels.py | sha256sum | cut -c1-16)"
if [ ! -f "$kstamp" ]; then
  mkdir -p .cache/dpgd_kernels
  echo "[bootstrap] compiling the numba kernels (once, about a minute)"
  .venv/bin/python scripts/warm_dpgd_kernels.py
  touch "$kstamp"
fi
