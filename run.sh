#!/usr/bin/env bash
# Start the dashboard on the bundled data (creates .venv and installs requirements on first use).
set -euo pipefail
cd "$(dirname "$0")"
scripts/bootstrap.sh requirements.txt
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
# launcher/serve.py imports the libraries and loads the compiled kernels first (EXPLORER_PRELOAD=none skips it),
# then runs `streamlit run app.py` with these arguments.
exec .venv/bin/python -m launcher.serve app.py "$@"
