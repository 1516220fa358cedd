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
