#!/usr/bin/env bash
# Run the whole test suite (creates .venv and installs requirements + test requirements first).
# Extra arguments go to pytest, e.g. ./test.sh -k privacy; --durations=25 lists the 25 slowest tests at the end.
set -euo pipefail
cd "$(dirname "$0")"
scripts/bootstrap.sh requirements-dev.txt
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 PYTHONHASHSEED=0
exec .venv/bin/python -m pytest --durations=25 "$@"
