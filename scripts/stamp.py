"""The stamp of a generated results table: the commit and the date that made it.

Every generator of a committed table under ``docs/`` passes its text through :func:`with_stamp` before writing
it. The stamp is one line right under the title::

    Stamp: generated at commit `0123456789ab`, 2026-12-06.

followed, when the working tree differed from that commit in the code or data a generator reads (``engine/``,
``scripts/``, ``assets/``, ``requirements.txt``: the table was made by code that is not in the commit), by `` The working tree had uncommitted changes (...).``. A table stamped without
rerunning its generator names the last commit that changed its rows and says so (:func:`file_stamp`).

:func:`strip_stamp` removes the line again, so that a test can compare a rerun with the committed table, and
:func:`parse_stamp` reads it back. Standard library only; no git, no stamp: ``commit `unknown```.
"""

from __future__ import annotations

import datetime as _dt
import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: The stamp line: commit (7 to 40 hex digits, or ``unknown``), ISO date, then an optional note.
STAMP_RE = re.compile(r"^Stamp: generated at commit `(?P<commit>[0-9a-f]{7,40}|unknown)`, "
                      r"(?P<date>\d{4}-\d{2}-\d{2})\.(?P<note>.*)$", re.M)
#: The paths whose uncommitted changes can change a generated table (the stamp names them).
WHAT_GENERATES = ("engine", "scripts", "assets", "requirements.txt")
#: What a stamp added afterwards (the generator not rerun) says.
AFTERWARDS = (" Stamped afterwards, without rerunning the generator: the last commit that changed this table's "
              "rows.")


def _git(*args: str, root: Path = ROOT) -> str | None:
    try:
        out = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.rstrip("\n") if out.returncode == 0 else None


def stamp_line(root: Path = ROOT, today: _dt.date | None = None) -> str:
    """The stamp for a table generated now: HEAD's commit (12 digits), today's date (UTC), and a note naming
    the changed paths among :data:`WHAT_GENERATES` when the working tree is not the commit's."""
    commit = (_git("rev-parse", "--short=12", "HEAD", root=root) or "unknown").strip()
    date = (today or _dt.datetime.now(_dt.timezone.utc).date()).isoformat()
    changed = _git("status", "--porcelain", "--untracked-files=no", "--", *WHAT_GENERATES, root=root)
    note = ""
    if changed:
        paths = sorted({line[3:].split(" -> ")[-1] for line in changed.splitlines()})
        shown = ", ".join(paths[:5]) + (f" and {len(paths) - 5} more" if len(paths) > 5 else "")
        note = f" The working tree had uncommitted changes ({shown})."
    return f"Stamp: generated at commit `{commit}`, {date}.{note}"


def rows_commit(path: Path, root: Path = ROOT) -> tuple[str, str]:
    """(commit, date) of the last commit, following renames, that changed a table row (a line starting with
    ``|``) of ``path``: when its numbers were last written, not when a path in its prose was last edited."""
    rel = str(Path(path).resolve().relative_to(root))
    log = _git("log", "--follow", "--abbrev=12", "--format=@@C %h %cs", "-p", "--", rel, root=root) or ""
    current = None
    for line in log.splitlines():
        if line.startswith("@@C "):
            current = tuple(line[4:].split())
        elif current and line[:2] in ("+|", "-|"):
            return current
    raise ValueError(f"{rel}: no commit changed its table rows")


def file_stamp(path: Path, root: Path = ROOT, at: str | None = None) -> str:
    """The stamp of a table not rerun: the last commit that changed its rows (:func:`rows_commit`), or the
    commit ``at`` (for a table split off another file) and that commit's date."""
    if at:
        commit, date = (_git("log", "-1", "--abbrev=12", "--format=%h %cs", at, root=root) or "").split()
    else:
        commit, date = rows_commit(path, root)
    return f"Stamp: generated at commit `{commit}`, {date}.{AFTERWARDS}"


def parse_stamp(text: str) -> dict | None:
    """``{"commit", "date", "note"}`` of the text's stamp line, or None without one."""
    m = STAMP_RE.search(text)
    return None if m is None else {"commit": m["commit"], "date": m["date"], "note": m["note"].strip()}


def strip_stamp(text: str) -> str:
    """The text without its stamp line (and the blank line after it)."""
    return re.sub(STAMP_RE.pattern + r"\n\n?", "", text, count=1, flags=re.M)


def with_stamp(text: str, line: str | None = None) -> str:
    """``text`` with ``line`` (default: :func:`stamp_line` now) under its first ``# `` title, replacing any
    earlier stamp; a text without a title gets it on top."""
    line = line or stamp_line()
    body = strip_stamp(text)
    lines = body.split("\n")
    at = next((i for i, ln in enumerate(lines) if ln.startswith("# ")), None)
    if at is None:
        return f"{line}\n\n{body}"
    rest = lines[at + 1:]
    while rest and rest[0] == "":
        rest = rest[1:]
    return "\n".join(lines[:at + 1] + ["", line, ""] + rest)


def main(argv=None) -> int:
    """``python scripts/stamp.py [--at COMMIT] FILE...``: stamp committed tables without rerunning their generators
    (each with the last commit that changed its rows, :func:`file_stamp`); a file already stamped is left as it is."""
    import argparse

    ap = argparse.ArgumentParser(description=main.__doc__.splitlines()[0])
    ap.add_argument("files", nargs="+", type=Path)
    ap.add_argument("--at", default=None, help="the commit that wrote the rows (a table split off another file)")
    args = ap.parse_args(argv)
    for path in args.files:
        text = path.read_text()
        if parse_stamp(text) is not None:
            print(f"{path}: already stamped")
            continue
        line = file_stamp(path, at=args.at)
        path.write_text(with_stamp(text, line))
        print(f"{path}: {line}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
