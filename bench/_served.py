"""``streamlit run`` with a timing hook, for the load benchmarks (never used by the app itself).

Usage: ``BENCH_TIMING_LOG=/tmp/t.jsonl python bench/_served.py app.py --server.port 8600 ...``
(the arguments are those of ``streamlit run``), run from the checkout's root. It starts the server as
``run.sh`` does (:mod:`launcher.serve`: the preload named by ``EXPLORER_PRELOAD``, then ``streamlit run``); without
``BENCH_TIMING_LOG`` nothing is hooked.

The hook wraps two methods of Streamlit's ``AppSession`` (checked on Streamlit 1.67):
``handle_backmsg`` (a browser's message arrives: for a ``rerun_script`` message the time is noted per
session) and ``_enqueue_forward_msg`` (the server queues a message for the browser: when it carries a
headline metric, one line is written per pending rerun request, with the seconds from the request's
arrival to this headline, the metric's label and value). "Server-side" latency therefore runs from the
browser's message reaching the server to the server queueing the new headline: it excludes the network
and the browser's own rendering.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time

#: Metric labels that count as a page's headline (PMT page: the PMT median; NVDP page: the RD bound).
HEADLINES = {"PMT": "pmt", "RD filtered max": "nvdp"}


def install(path: str) -> None:
    from streamlit.runtime.app_session import AppSession

    lock = threading.Lock()
    pending: dict[str, list[float]] = {}
    out = open(path, "a", buffering=1)

    orig_back, orig_fwd = AppSession.handle_backmsg, AppSession._enqueue_forward_msg

    def handle_backmsg(self, msg):
        if msg.WhichOneof("type") == "rerun_script":
            with lock:
                pending.setdefault(self.id, []).append(time.time())
        return orig_back(self, msg)

    def enqueue(self, msg):
        try:
            if msg.WhichOneof("type") == "delta" and msg.delta.WhichOneof("type") == "new_element":
                el = msg.delta.new_element
                if el.WhichOneof("type") == "metric" and el.metric.label in HEADLINES:
                    now = time.time()
                    with lock:
                        waiting = pending.pop(self.id, [])
                    for t in waiting:
                        out.write(json.dumps({"session": self.id, "page": HEADLINES[el.metric.label],
                                              "value": el.metric.body, "recv": t, "sent": now,
                                              "latency": now - t}) + "\n")
        except Exception:  # noqa: BLE001 - a benchmark hook must never break the app
            pass
        return orig_fwd(self, msg)

    AppSession.handle_backmsg = handle_backmsg
    AppSession._enqueue_forward_msg = enqueue


def main() -> None:
    path = os.environ.get("BENCH_TIMING_LOG")
    if path:
        install(path)
    sys.path.insert(0, os.getcwd())  # the checkout (run from its root, as deploy/room.sh does)
    from launcher.serve import main as serve

    sys.exit(serve(sys.argv[1:]))


if __name__ == "__main__":
    main()
