#!/usr/bin/env bash
# Start the dashboard on the bundled data (creates .venv and installs requirements on first use).
set -euo pipefail
cd "$(dirname "$0")"
scripts/bootstrap.sh requirements.txt
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
exec .venv/bin/python -m streamlit run app.py "$@"
