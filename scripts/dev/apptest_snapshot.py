"""Snapshot what the app draws in AppTest scenarios, to show that a move of files changed nothing on screen.

    python scripts/dev/apptest_snapshot.py OUT.json [--root CHECKOUT] [--only NAME ...]

Runs each scenario of :data:`SCENARIOS` (a page, its session settings, the tab to open) on the checkout at
``--root`` (default: this one; the page folder is ``app_pages/`` or, in a checkout before the move,
``pages/``) and writes every element it draws, in order: its type, label, value and body, and for a Plotly
chart a digest of its figure. Two snapshots are compared with ``diff``; the NVDP scenario trains a tiny
model pair (``NVDP_PAGE_N_SENTENCES=60``, one epoch) into a temporary cache.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import tempfile
from pathlib import Path

#: name -> (page file stem, session settings, tab to open by label or None)
SCENARIOS = {
    "home": ("home", {}, None),
    "data": ("data", {}, None),
    "learn": ("learn", {}, None),
    "about": ("about", {}, None),
    "pmt_default": ("pmt", {}, None),
    "pmt_lam_tab": ("pmt", {}, "Error vs lam"),
    "pmt_labelled_seeds3": ("pmt", {"seeds": 3, "public_mode": "labelled"}, None),
    "pmt_unlabelled": ("pmt", {"seeds": 3, "public_mode": "unlabelled", "metric": "rmse"}, None),
    "pmt_moments": ("pmt", {"seeds": 3, "public_mode": "moments", "metric": "rmse"}, None),
    "pmt_logistic": ("pmt", {"data": "bank", "task": "classification", "seeds": 3}, None),
    "pmt_export_tab": ("pmt", {}, "Export"),
    "pmt_ledger_tab": ("pmt", {}, "Privacy ledger"),
    "pmt_npub_tab": ("pmt", {"seeds": 3}, "Error vs n_pub"),
    "pmt_conditioning_tab": ("pmt", {}, "Conditioning"),
    "pmt_truncation_tab": ("pmt", {}, "Truncation"),
    "pmt_planner_tab": ("pmt", {}, "Planner"),
    "pmt_logistic_ledger_tab": ("pmt", {"data": "bank", "task": "classification", "seeds": 3}, "Privacy ledger"),
    "pmt_moments_truncation_tab": ("pmt", {"seeds": 3, "public_mode": "moments", "metric": "rmse"}, "Truncation"),
    "nvdp_default": ("nvdp", {}, None),
}


def _text(x, limit=400):
    if x is None:
        return None
    s = str(x)
    return s if len(s) <= limit else s[:limit] + f"...<{len(s)} chars, sha {hashlib.sha1(s.encode()).hexdigest()[:12]}>"


def _walk(node, out):
    children = getattr(node, "children", None)
    kind = getattr(node, "type", type(node).__name__)
    rec = {"type": kind}
    for attr in ("label", "value", "body", "options", "caption"):
        try:
            v = getattr(node, attr)
        except Exception:  # noqa: BLE001 - some elements raise on attributes they do not have
            continue
        if v is not None and not callable(v):
            rec[attr] = _text(v)
    proto = getattr(node, "proto", None)
    if kind == "plotly_chart" and proto is not None:
        spec = getattr(proto, "spec", "") or getattr(proto, "figure", "")
        rec["figure_sha"] = hashlib.sha1(str(spec).encode()).hexdigest()[:16]
    if kind not in ("main", "sidebar", "event", "tab_container") or rec.keys() - {"type"}:
        out.append(rec)
    if isinstance(children, dict):
        for key in sorted(children):
            _walk(children[key], out)


def run(root: Path, names) -> dict:
    from streamlit.testing.v1 import AppTest

    folder = "app_pages" if (root / "app_pages").is_dir() else "pages"
    out = {}
    for name in names:
        stem, state, tab = SCENARIOS[name]
        at = AppTest.from_file(str(root / "app.py"), default_timeout=600)
        for k, v in state.items():
            at.session_state[k] = v
        at.switch_page(f"{folder}/{stem}.py")
        at.run()
        if tab is not None:  # the PMT page's tabs track the open one in session state (key "pmt_tab")
            at.session_state["pmt_tab"] = tab
            at.run()
        elements: list = []
        _walk(at._tree, elements)
        out[name] = {"exception": [_text(e.value) for e in at.exception], "elements": elements}
        print(f"{name}: {len(elements)} elements", file=sys.stderr)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out")
    ap.add_argument("--root", default=None, help="the checkout to run (default: this one)")
    ap.add_argument("--only", nargs="*", default=list(SCENARIOS))
    args = ap.parse_args(argv)
    root = Path(args.root).resolve() if args.root else Path(__file__).resolve().parents[2]
    os.chdir(root)
    sys.path.insert(0, str(root))
    os.environ.setdefault("NVDP_PAGE_N_SENTENCES", "60")
    os.environ.setdefault("NVDP_PAGE_EPOCHS", "1")
    os.environ.setdefault("NVDP_CACHE_DIR", tempfile.mkdtemp(prefix="snapshot_nvdp_"))
    Path(args.out).write_text(json.dumps(run(root, args.only), indent=1, sort_keys=True, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
