"""Follow an uploaded CSV to the PMT headline and count what a reader would have to walk through.

    python scripts/dev/trace_walk.py [--root CHECKOUT] [--top 15]

In AppTest (the app.py frame, the PMT page) a CSV is uploaded, its features chosen, and then the traced
run: the click on "Use this data", which adopts the upload, prepares the split, runs the staged sweep
and draws the headline. ``sys.setprofile`` (and ``threading.setprofile`` for the script thread) records
every call and return of the project's own code (files under the checkout, not ``.venv``), and prints:

- **files**: the project files with at least one function called;
- **functions**: the distinct functions called (comprehensions and generator expressions not counted);
- **returns to a file already left**: returns from a project function to a caller in another project
  file (each is a step back up a chain of files the reader has to keep in mind);
- **distinct returns**: the same returns, each (function returned from, file returned to) counted once: what a
  reader walks, since a loop over seeds or steps repeats a return without adding code to read;
- the same three counts for the dashboard's files alone (``ui/``, the pages, ``app.py``; a return counted
  there goes from one dashboard file to another);
- **re-entries per file**: calls into a file from another project file, the most entered first.

``--root`` runs another checkout (e.g. ``git archive`` of an older commit with ``.venv`` linked in): the
page folder is ``app_pages/`` or, before it was renamed, ``pages/``. The numbers depend on the code, not
on the machine (no timing).
"""

from __future__ import annotations

import argparse
import collections
import os
import sys
import threading
from pathlib import Path


def _csv(n: int = 420, seed: int = 3) -> bytes:
    import numpy as np

    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3)) * [1.0, 10.0, 100.0]
    y = X @ [2.0, -0.3, 0.01] + 5 + rng.normal(size=n)
    lines = ["temp,speed,load,unused,output"]
    for row, t in zip(X, y):
        lines.append(f"{row[0]:.5f},{row[1]:.5f},{row[2]:.5f},{rng.normal():.4f},{t:.5f}")
    return ("\n".join(lines) + "\n").encode()


def _dashboard(rel: str) -> bool:
    return rel.startswith(("ui/", "app_pages/", "pages/")) or rel == "app.py"


class Walk:
    """The profile hook: counts calls and returns of the project's files."""

    def __init__(self, root: Path):
        self.root = str(root) + os.sep
        self.venv = str(root / ".venv") + os.sep
        self.functions: set = set()
        self.files: collections.Counter = collections.Counter()  # calls per file
        self.entries: collections.Counter = collections.Counter()  # calls into a file from another project file
        self.cross_returns = 0
        self.dashboard_returns = 0  # returns between two files of the dashboard (ui/, app_pages/, pages/, app.py)
        self.return_edges: set = set()  # distinct (function returned from, file returned to): each read once
        self.lock = threading.Lock()
        self._own: dict = {}

    def own(self, filename: str) -> str | None:
        hit = self._own.get(filename)
        if hit is None:
            mine = filename.startswith(self.root) and not filename.startswith(self.venv)
            hit = self._own[filename] = filename[len(self.root):] if mine else ""
        return hit or None

    def __call__(self, frame, event, arg):
        if event not in ("call", "return"):
            return
        code = frame.f_code
        rel = self.own(code.co_filename)
        if rel is None or (code.co_name.startswith("<") and code.co_name != "<module>"):
            return
        back = frame.f_back
        caller = self.own(back.f_code.co_filename) if back is not None else None
        with self.lock:
            if event == "call":
                self.functions.add((rel, code.co_firstlineno, code.co_name))
                self.files[rel] += 1
                if caller is not None and caller != rel:
                    self.entries[rel] += 1
            elif caller is not None and caller != rel:
                self.cross_returns += 1
                self.return_edges.add((rel, code.co_firstlineno, code.co_name, caller))
                if _dashboard(rel) and _dashboard(caller):
                    self.dashboard_returns += 1


def walk(root: Path) -> Walk:
    from streamlit.testing.v1 import AppTest

    folder = "app_pages" if (root / "app_pages").is_dir() else "pages"
    at = AppTest.from_file(str(root / "app.py"), default_timeout=600)
    at.session_state["seeds"] = 4
    at.switch_page(f"{folder}/pmt.py")
    at.run()
    at.file_uploader(key="pmt_upload_file").set_value(("my plant.csv", _csv(), "text/csv")).run()
    at.multiselect(key="pmt_upload_features").set_value(["temp", "speed", "load"]).run()
    use = next(b for b in at.button if b.label == "Use this data")
    hook = Walk(root)
    threading.setprofile(hook)
    sys.setprofile(hook)
    try:
        use.click().run()
    finally:
        sys.setprofile(None)
        threading.setprofile(None)
    if at.exception or at.error:
        raise SystemExit(f"the walk failed: {[e.value for e in at.exception]} {[e.value for e in at.error]}")
    if not any("PMT" in (m.label or "") for m in at.metric):
        raise SystemExit("the walk did not reach the PMT headline (no PMT metric drawn)")
    return hook


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", default=None, help="the checkout to trace (default: this one)")
    ap.add_argument("--top", type=int, default=15, help="how many files to list by re-entries")
    args = ap.parse_args(argv)
    root = Path(args.root).resolve() if args.root else Path(__file__).resolve().parents[2]
    os.chdir(root)
    sys.path.insert(0, str(root))
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    hook = walk(root)
    print(f"checkout: {root}")
    print("walk: an uploaded CSV (420 rows, 3 features) -> 'Use this data' -> the PMT headline")
    print(f"files: {len(hook.files)}")
    print(f"functions: {len(hook.functions)}")
    print(f"returns to a file already left: {hook.cross_returns}")
    print(f"distinct returns (function returned from, file returned to; a loop's repeats not counted): "
          f"{len(hook.return_edges)}")
    dash = [f for f in hook.files if _dashboard(f)]
    dash_edges = sum(1 for e in hook.return_edges if _dashboard(e[0]) and _dashboard(e[3]))
    print(f"dashboard only (ui/, the pages, app.py): files: {len(dash)}, "
          f"functions: {sum(1 for f in hook.functions if _dashboard(f[0]))}, "
          f"returns to a file already left: {hook.dashboard_returns}, distinct returns: {dash_edges}")
    print("re-entries per file (calls from another project file):")
    for rel, n in hook.entries.most_common(args.top):
        print(f"  {n:5d}  {rel}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
