#!/usr/bin/env bash
# Start the dashboard on the bundled data (creates .venv and installs requirements on first use).
set -euo pipefail
cd "$(dirname "$0")"
scripts/bootstrap.sh requirements.txt
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
# The bundled views' numbers (first views, tabs, every epsilon and lam position) into .cache/views, once per machine
# and engine version, in the background at the lowest priority so that the dashboard starts at once (a few minutes
# of CPU the first time; nothing when stored: scripts/precompute_views.py --if-missing; a view not stored yet is
# computed when first asked for). EXPLORER_VIEW_STORE=off skips it; its log: .cache/views-precompute.log.
if [ "${EXPLORER_VIEW_STORE:-}" != "off" ]; then
  mkdir -p .cache
  nice -n 19 .venv/bin/python scripts/precompute_views.py --if-missing > .cache/views-precompute.log 2>&1 &
fi
# launcher/serve.py imports the libraries and loads the compiled kernels first (EXPLORER_PRELOAD=none skips it),
# then runs `streamlit run app.py` with these arguments.
exec .venv/bin/python -m launcher.serve app.py "$@"
