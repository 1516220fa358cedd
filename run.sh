#!/usr/bin/env bash
# Start the dashboard on the bundled data (creates .venv and installs requirements on first use).
set -euo pipefail
cd "$(dirname "$0")"
scripts/bootstrap.sh requirements.txt
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
# The bundled views' numbers (first views, tabs, every epsilon and lam position) into .cache/views, once per machine
# and engine version (a few minutes the first time; nothing when stored: scripts/precompute_views.py --if-missing).
# EXPLORER_VIEW_STORE=off skips it; a failure only means the views are computed when first asked for.
if [ "${EXPLORER_VIEW_STORE:-}" != "off" ]; then
  .venv/bin/python scripts/precompute_views.py --if-missing || echo "[run] precompute_views failed: views computed on demand"
fi
# launcher/serve.py imports the libraries and loads the compiled kernels first (EXPLORER_PRELOAD=none skips it),
# then runs `streamlit run app.py` with these arguments.
exec .venv/bin/python -m launcher.serve app.py "$@"
