#!/usr/bin/env bash
# Run the explorer for a larger room: K Streamlit processes behind nginx with sticky sessions.
#
#   deploy/room.sh [K] [PORT]       # K processes (default 2) on PORT+1..PORT+K, nginx on PORT (default 8600)
#
# People open http://<this machine>:PORT. Each process is `python -m launcher.serve app.py` (as run.sh: the
# preload, then `streamlit run app.py`) reading
# .streamlit/config.toml (upload cap, headless); nginx (Debian: apt-get install nginx-light) uses
# deploy/nginx.conf. Ctrl-C (or SIGTERM) stops nginx and every process. Logs and pid files go to
# ROOM_RUN_DIR (default: a new folder under /tmp). ROOM_STREAMLIT replaces the server command
# (bench/bench_load.py uses bench/_served.py, a `streamlit run` with a timing hook).
set -euo pipefail
cd "$(dirname "$0")/.."
K="${1:-2}"
PORT="${2:-8600}"
RUN="${ROOM_RUN_DIR:-$(mktemp -d /tmp/explorer-room.XXXXXX)}"
STREAMLIT="${ROOM_STREAMLIT:-.venv/bin/python -m launcher.serve}"
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
mkdir -p "$RUN"/{client_body,proxy,fastcgi,uwsgi,scgi}
if [ "$(id -u)" = 0 ]; then chmod 755 "$RUN"; chmod 1777 "$RUN"/{client_body,proxy,fastcgi,uwsgi,scgi}; fi  # workers: nobody
command -v nginx >/dev/null || { echo "room.sh: nginx is not installed (apt-get install nginx-light)" >&2; exit 2; }

# the bundled views' numbers into .cache/views once per machine and engine version (as run.sh; nothing when stored)
if [ "${EXPLORER_VIEW_STORE:-}" != "off" ]; then
  .venv/bin/python scripts/precompute_views.py --if-missing || echo "room.sh: precompute_views failed: views computed on demand"
fi

pids=()
cleanup() {
  trap - EXIT INT TERM
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap cleanup EXIT INT TERM

servers=""
for i in $(seq 1 "$K"); do
  p=$((PORT + i))
  BENCH_TIMING_LOG="${BENCH_TIMING_LOG:+$RUN/timing_$p.jsonl}" $STREAMLIT app.py --server.port "$p" \
    --server.address 127.0.0.1 --server.headless true > "$RUN/streamlit_$p.log" 2>&1 &
  pids+=("$!")
  echo "$!" > "$RUN/streamlit_$p.pid"
  servers+="        server 127.0.0.1:$p;"$'\n'
done
conf="$RUN/nginx.conf"
python3 - "$conf" "$PORT" "$RUN" "$servers" <<'PY'
import sys
conf, port, run, servers = sys.argv[1:]
text = open("deploy/nginx.conf").read()
open(conf, "w").write(text.replace("@PORT@", port).replace("@RUN@", run).replace("@SERVERS@", servers.rstrip("\n")))
PY
for i in $(seq 1 "$K"); do
  p=$((PORT + i))
  for _ in $(seq 1 240); do
    curl -fsS "http://127.0.0.1:$p/_stcore/health" >/dev/null 2>&1 && break
    sleep 0.5
  done
done
nginx -p "$RUN" -c "$conf" -g "daemon off; pid $RUN/nginx.pid;" &
pids+=("$!")
echo "$!" > "$RUN/nginx.main.pid"
echo "room.sh: $K Streamlit processes behind nginx on http://0.0.0.0:$PORT (logs in $RUN)"
wait -n  # the first process to end (nginx or a server) ends the room: cleanup stops the others
echo "room.sh: a process ended; stopping the room" >&2
