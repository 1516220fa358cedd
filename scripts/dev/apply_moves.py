"""Apply the dashboard-layer moves (``scripts/dev/moves.json``) to a checkout: move files, rewrite references.

Usage (from the repository root)::

    python scripts/dev/apply_moves.py              # move leftovers, rewrite every tracked text file
    python scripts/dev/apply_moves.py a.py b.md    # rewrite only these files (leftovers are still moved)
    python scripts/dev/apply_moves.py --check      # say what would change, change nothing (exit 1 if anything)

Written for the merge of branches that edited the old flat layout while the layout moved. It is idempotent:
a second run changes nothing.

1. **Moves.** Every ``old -> new`` of ``moves.json`` whose old file still exists (e.g. re-created by a merge
   that did not see the rename) is moved (``git mv``; a plain rename for an untracked file). If both exist
   the old one is reported and left for a person (its edits must be carried over by hand). Files the mapping
   does not know but the old layout would hold are moved by rule:

   - ``ui/pmt_<x>.py`` -> ``ui/pmt/<x>.py``, ``ui/nvdp_<x>.py`` -> ``ui/nvdp/<x>.py``, any other
     ``ui/<x>.py`` -> ``ui/common/<x>.py``;
   - ``pages/<x>.py`` -> ``app_pages/<x>.py`` (and a note: ``app.py`` must register the page);
   - ``tests/test_<x>.py`` -> ``tests/<area>/test_<x>.py``, the area read from the file: ``browser`` (it uses
     Playwright / the ``browser`` mark), ``app`` (it uses ``AppTest``), ``ui`` (it imports ``ui``),
     else ``engine``.

2. **Rewrites** (in the files named, or in every tracked text file but ``CHANGELOG.md`` and this script's
   own files and its test): ``from ui import a, b as c`` -> one import per moved module, binding the same local names;
   dotted names ``ui.pmt_compute`` -> ``ui.pmt.compute.core`` (imports, ``sys.modules`` keys, monkeypatch
   strings, docstrings); paths ``ui/pmt_compute.py``, ``pages/pmt.py``, ``tests/test_x.py`` -> their new
   paths; in a test file one folder deeper than ``tests/``, ``Path(__file__)`` walks to the repository root
   and to ``tests/data`` get one more ``parent``. A line holding ``(apply_moves: keep)`` is left as it is.
   The retired ``ensure_frame`` (its import and its call) is removed. In ``ui/``, a name that moved down
   (``moves.json`` ``"names"``: the settings' values, the PMT catalogue, the upload file type, the headline
   rows, the data loader) is imported from its new home, so no circle or Streamlit import comes back.

3. **Import conflicts** (``--resolve-imports``, after a merge): a conflict hunk whose two sides are only
   import statements (one side of the old layout, one of the new) becomes the new side's imports plus the
   old side's, rewritten, that it lacks; every other hunk is left to a person and the file is named.

After merging a branch of the old layout::

    git merge other-branch                                   # conflicts at the new paths (renames followed)
    python scripts/dev/apply_moves.py --resolve-imports $(git diff --name-only --diff-filter=U)
    python scripts/dev/apply_moves.py                        # leftovers moved, every reference rewritten
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MOVES = ROOT / "scripts" / "dev" / "moves.json"
TEXT_SUFFIXES = {".py", ".md", ".sh", ".ini", ".toml", ".txt", ".cfg", ".yml", ".yaml", ".json", ".conf", ".html"}
#: Files that name the old paths on purpose (history, the mapping, this script and its test).
SKIP = {"CHANGELOG.md", "scripts/dev/moves.json", "scripts/dev/apply_moves.py", "tests/ui/test_apply_moves.py"}
#: Old top-level folders that must not survive (a ``pages/`` folder next to app.py is Streamlit's legacy mode).
GONE_DIRS = ("pages",)


def load(path: Path = MOVES) -> tuple[dict[str, str], dict[str, str], set[str], set[str]]:
    """(files old -> new, modules old -> new, the folders whose leftovers move by rule, the files that stay)."""
    data = json.loads(path.read_text())
    NAMES.clear()
    NAMES.update(data.get("names", {}))
    return dict(data["files"]), dict(data["modules"]), set(data.get("rules", ())), set(data.get("stay", ()))


#: {module: {name: the module the name moved down to}} (``moves.json`` ``"names"``), filled by :func:`load`.
NAMES: dict[str, dict[str, str]] = {}
_FROM_LINE = re.compile(r"^(?P<indent>[ \t]*)from (?P<mod>[\w.]+) import (?P<names>[\w ,]+?)(?P<comment>[ \t]*#[^\n]*)?$", re.M)


def rewrite_moved_names(text: str) -> str:
    """``from ui.pmt.upload import Named, x`` -> ``from ui.pmt.upload import x`` + ``from ui.common.upload_file
    import Named``: a name that moved down is imported from its new home (single-line statements)."""

    def sub(m: re.Match) -> str:
        table = NAMES.get(m.group("mod"))
        if not table:
            return m.group(0)
        try:
            names = _split_names(m.group("names"))
        except ValueError:
            return m.group(0)
        if not any(n in table for n, _ in names):
            return m.group(0)
        keep = [n if a is None else f"{n} as {a}" for n, a in names if n not in table]
        moved: dict[str, list[str]] = {}
        for n, a in names:
            if n in table:
                moved.setdefault(table[n], []).append(n if a is None else f"{n} as {a}")
        indent = m.group("indent")
        lines = [f"{indent}from {m.group('mod')} import {', '.join(keep)}"] if keep else []
        lines += [f"{indent}from {mod} import {', '.join(ns)}" for mod, ns in moved.items()]
        lines[0] += m.group("comment") or ""
        return "\n".join(lines)

    return _FROM_LINE.sub(sub, text)


def module_of(path: str) -> str | None:
    return path[:-3].replace("/", ".") if path.endswith(".py") else None


# ------------------------------------------------------------------------------------------------
# 1. moves
# ------------------------------------------------------------------------------------------------
def test_area(text: str) -> str:
    if re.search(r"playwright|pytest\.mark\.browser|chromium", text):
        return "browser"
    if "AppTest" in text:
        return "app"
    if re.search(r"^\s*(from|import) ui\b|[\"']ui[./]", text, re.M):
        return "ui"
    return "engine"


def rule_target(rel: str, root: Path, rules=("ui", "pages", "tests")) -> str | None:
    """Where the layout puts a file of the old layout that ``moves.json`` does not name (None: stays).

    ``rules`` names the folders whose leftovers are moved (``moves.json`` ``"rules"``).
    """
    parts = rel.split("/")
    name = parts[-1]
    if not name.endswith(".py") or len(parts) != 2 or parts[0] not in rules:
        return None
    if parts[0] == "ui" and name != "__init__.py":
        for page in ("pmt", "nvdp"):
            if name.startswith(page + "_"):
                return f"ui/{page}/{name[len(page) + 1:]}"
        return f"ui/common/{name}"
    if parts[0] == "pages":
        return f"app_pages/{name}"
    if parts[0] == "tests" and name.startswith("test_"):
        return f"tests/{test_area((root / rel).read_text(errors='replace'))}/{name}"
    return None


def _tracked(root: Path, rel: str) -> bool:
    r = subprocess.run(["git", "ls-files", "--error-unmatch", rel], cwd=root, capture_output=True)
    return r.returncode == 0


def move(root: Path, old: str, new: str, check: bool, log: list[str]) -> bool:
    src, dst = root / old, root / new
    if not src.exists():
        return False
    if dst.exists():
        log.append(f"CONFLICT both exist: {old} and {new} (carry the edits of {old} over by hand, then delete it)")
        return False
    log.append(f"move {old} -> {new}")
    if check:
        return True
    dst.parent.mkdir(parents=True, exist_ok=True)
    init = dst.parent / "__init__.py"
    if new.startswith("ui/") and not init.exists():
        init.write_text(f'"""{dst.parent.relative_to(root).as_posix()}"""\n')
        subprocess.run(["git", "add", str(init.relative_to(root))], cwd=root, capture_output=True)
    if _tracked(root, old):
        subprocess.run(["git", "mv", old, new], cwd=root, check=True)
    else:
        os.rename(src, dst)
    return True


def do_moves(root: Path, files: dict[str, str], modules: dict[str, str], check: bool, log: list[str],
             rules=("ui", "pages", "tests"), stay=frozenset()):
    """Move the mapped files and the leftovers of the old layout; return the mapping extended by the rules."""
    files, modules = dict(files), dict(modules)
    for old, new in files.items():
        move(root, old, new, check, log)
    candidates = sorted(
        [p.relative_to(root).as_posix() for p in (root / "ui").glob("*.py")]
        + [p.relative_to(root).as_posix() for p in (root / "pages").glob("*.py")]
        + [p.relative_to(root).as_posix() for p in (root / "tests").glob("test_*.py")]
    )
    for rel in candidates:
        if rel in files or rel in stay:  # a conflict reported above, or a file the layout keeps where it is
            continue
        new = rule_target(rel, root, rules)
        if new is None:
            continue
        if move(root, rel, new, check, log):
            files[rel] = new
            if rel.startswith("ui/"):
                modules[module_of(rel)] = module_of(new)
            if rel.startswith("pages/"):
                log.append(f"NOTE register {new} in app.py (st.Page)")
    for d in GONE_DIRS:
        folder = root / d
        if folder.is_dir() and not any(p for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
            log.append(f"remove the emptied folder {d}/")
            if not check:
                shutil.rmtree(folder)
    return files, modules


# ------------------------------------------------------------------------------------------------
# 2. rewrites
# ------------------------------------------------------------------------------------------------
_FROM_UI = re.compile(r"^(?P<indent>[ \t]*)from ui import (?P<names>\([^)]*\)|[^\n#]*?)(?P<comment>[ \t]*#[^\n]*)?$", re.M)


_FROM_UI_IN_STRING = re.compile(r"(?P<q>[\"'])from ui import (?P<names>[\w ,]+?)(?P<end>\\n)")


def _split_names(names: str) -> list[tuple[str, str | None]]:
    names = names.strip()
    if names.startswith("("):
        names = names[1:-1]
    names = re.sub(r"#[^\n]*", "", names)
    out = []
    for item in names.replace("\n", " ").split(","):
        item = item.strip()
        if not item:
            continue
        m = re.fullmatch(r"(\w+)(?:\s+as\s+(\w+))?", item)
        if not m:
            raise ValueError(f"cannot read the import name {item!r}")
        out.append((m.group(1), m.group(2)))
    return out


def rewrite_from_ui(text: str, modules: dict[str, str]) -> str:
    """``from ui import pmt_run as R, verdict`` -> ``from ui.pmt import run as R`` / ``from ui.common import verdict``.

    The local names stay what they were (``from ui import pmt_tabs`` binds ``pmt_tabs`` again), so the
    code below the import is unchanged.
    """

    def sub(m: re.Match) -> str:
        indent, comment = m.group("indent"), m.group("comment") or ""
        try:
            names = _split_names(m.group("names"))
        except ValueError:
            return m.group(0)
        if not any(f"ui.{n}" in modules for n, _ in names):
            return m.group(0)
        lines, keep = [], []
        for name, alias in names:
            new = modules.get(f"ui.{name}")
            if new is None:
                keep.append(name if alias is None else f"{name} as {alias}")
                continue
            package, _, leaf = new.rpartition(".")
            local = alias or name
            lines.append(f"{indent}from {package} import {leaf}" + ("" if local == leaf else f" as {local}"))
        if keep:
            lines.insert(0, f"{indent}from ui import {', '.join(keep)}")
        lines[0] += comment
        return "\n".join(lines)

    text = _FROM_UI.sub(sub, text)

    def sub_in_string(m: re.Match) -> str:  # "from ui import a, b\n" inside a string of code (a subprocess script)
        try:
            names = _split_names(m.group("names"))
        except ValueError:
            return m.group(0)
        if not any(f"ui.{n}" in modules for n, _ in names):
            return m.group(0)
        lines, keep = [], []
        for name, alias in names:
            new = modules.get(f"ui.{name}")
            if new is None:
                keep.append(name if alias is None else f"{name} as {alias}")
                continue
            package, _, leaf = new.rpartition(".")
            local = alias or name
            lines.append(f"from {package} import {leaf}" + ("" if local == leaf else f" as {local}"))
        if keep:
            lines.insert(0, f"from ui import {', '.join(keep)}")
        return m.group("q") + "\\n".join(lines) + m.group("end")

    return _FROM_UI_IN_STRING.sub(sub_in_string, text)


def _dotted(modules: dict[str, str]):
    keys = sorted(modules, key=len, reverse=True)
    pattern = re.compile(r"(?<![\w.])(" + "|".join(re.escape(k) for k in keys) + r")(?![\w])")
    return pattern, modules


def _paths(files: dict[str, str]):
    keys = sorted(files, key=len, reverse=True)
    pattern = re.compile(r"(?<![\w/.\-])(" + "|".join(re.escape(k) for k in keys) + r")(?![\w])")
    return pattern, files


def _joined(files: dict[str, str]):
    """``"ui" / "pmt_controls.py"`` (a pathlib join in a test or script) -> ``"ui" / "pmt" / "controls.py"``."""
    table = {" / ".join(f'"{p}"' for p in old.split("/")): " / ".join(f'"{p}"' for p in new.split("/"))
             for old, new in files.items()}
    keys = sorted(table, key=len, reverse=True)
    return re.compile("|".join(re.escape(k) for k in keys)), table


#: In a test one folder below tests/: walks from the file that assumed it sat directly in tests/.
_DEPTH = [
    (re.compile(r"Path\(__file__\)\.resolve\(\)\.parent\.parent(?!\.parent)"), "Path(__file__).resolve().parents[2]"),
    (re.compile(r"Path\(__file__\)\.resolve\(\)\.parents\[1\]"), "Path(__file__).resolve().parents[2]"),
    (re.compile(r"Path\(__file__\)\.parent\.parent(?!\.parent)"), "Path(__file__).parents[2]"),
    (re.compile(r"Path\(__file__\)(\.resolve\(\))?\.parent / \"data\""), r'Path(__file__)\1.parents[1] / "data"'),
]


#: A line holding this marker keeps its old names (e.g. a bench that also starts checkouts older than the move).
KEEP = "(apply_moves: keep)"


def rewrite_text(text: str, rel: str, files: dict[str, str], modules: dict[str, str]) -> str:
    """``text`` (the file ``rel``) with every reference to a moved module or file rewritten."""
    if KEEP in text:
        lines = text.splitlines(keepends=True)
        return "".join(line if KEEP in line else _rewrite(line, rel, files, modules) for line in lines)
    return _rewrite(text, rel, files, modules)


#: Names the move retired: ``ensure_frame`` (no legacy ``pages/`` mode to undo once the folder is app_pages/).
_RETIRED = [
    (re.compile(r"^[ \t]*from ui\.common\.state import ensure_frame[ \t]*(#[^\n]*)?\n", re.M), ""),
    (re.compile(r"^([ \t]*from ui\.common\.state import [^\n]*?)\bensure_frame, ", re.M), r"\1"),
    (re.compile(r"^([ \t]*from ui\.common\.state import [^\n]*?), ensure_frame\b", re.M), r"\1"),
    (re.compile(r"^[ \t]*ensure_frame\(\)[^\n]*\n(?:[ \t]*\n)?", re.M), ""),
]


def _rewrite(text: str, rel: str, files: dict[str, str], modules: dict[str, str]) -> str:
    if rel.endswith(".py"):
        text = rewrite_from_ui(text, modules)
    if modules:
        pattern, table = _dotted(modules)
        text = pattern.sub(lambda m: table[m.group(1)], text)
    if files:
        pattern, table = _paths(files)
        text = pattern.sub(lambda m: table[m.group(1)], text)
        pattern, table = _joined(files)
        text = pattern.sub(lambda m: table[m.group(0)], text)
    if rel.endswith(".py") and rel.startswith("ui/") and NAMES:  # where cycles and Streamlit-free rooms matter
        text = rewrite_moved_names(text)
    if rel.endswith(".py") and "ensure_frame" in text:
        for pat, repl in _RETIRED:
            text = pat.sub(repl, text)
    parts = rel.split("/")
    if rel.endswith(".py") and len(parts) == 3 and parts[0] == "tests" and parts[1] != "data":
        for pat, repl in _DEPTH:
            text = pat.sub(repl, text)
    return text


# ------------------------------------------------------------------------------------------------
# 3. merge conflicts between import blocks (--resolve-imports)
# ------------------------------------------------------------------------------------------------
_CONFLICT = re.compile(r"^<<<<<<< [^\n]*\n(?P<a>.*?)(?:^\|\|\|\|\|\|\| [^\n]*\n(?P<base>.*?))?^=======\n"
                       r"(?P<b>.*?)^>>>>>>> [^\n]*\n", re.M | re.S)


def _imports_only(block: str) -> bool:
    import ast
    import textwrap

    try:
        tree = ast.parse(textwrap.dedent(block))
    except SyntaxError:
        return False
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            continue
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) \
                and getattr(node.value.func, "id", None) == "ensure_frame":
            continue
        return False
    return True


def resolve_import_conflicts(text: str, rel: str, files: dict[str, str], modules: dict[str, str]) -> tuple[str, int]:
    """Resolve the conflict hunks whose two sides hold only import statements: one side of the old layout
    (rewritten here), one of the new; the result keeps the new side's imports and adds the old side's
    rewritten imports it lacks. Other hunks are left for a person. Returns (text, hunks resolved)."""
    done = 0

    def sub(m: re.Match) -> str:
        nonlocal done
        a, b = m.group("a"), m.group("b")
        if not (_imports_only(a) and _imports_only(b)):
            return m.group(0)
        ra, rb = rewrite_text(a, rel, files, modules), rewrite_text(b, rel, files, modules)
        new, old = (a, rb) if ra == a else (b, ra)
        lines = new.splitlines()
        have = {line.strip() for line in lines}
        extra = [line for line in old.splitlines() if line.strip() and line.strip() not in have]
        while lines and not lines[-1].strip():
            lines.pop()
        tail = "\n" * (len(new) - len(new.rstrip("\n")) - 1) if new.strip() else ""
        done += 1
        return "\n".join(lines + extra) + "\n" + tail

    return _CONFLICT.sub(sub, text), done


def tracked_text_files(root: Path) -> list[str]:
    out = subprocess.run(["git", "ls-files"], cwd=root, capture_output=True, text=True, check=True).stdout.split()
    extra = [".ci/run"]
    return [f for f in out if (Path(f).suffix in TEXT_SUFFIXES or f in extra) and f not in SKIP
            and (root / f).is_file()]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("paths", nargs="*", help="files to rewrite (default: every tracked text file)")
    ap.add_argument("--check", action="store_true", help="report only; exit 1 if anything would change")
    ap.add_argument("--root", default=str(ROOT), help="the repository root (default: this checkout)")
    ap.add_argument("--moves", default=str(MOVES), help="the mapping (default: scripts/dev/moves.json)")
    ap.add_argument("--resolve-imports", action="store_true",
                    help="in files with merge conflicts, resolve the hunks whose both sides are only imports")
    args = ap.parse_args(argv)
    root = Path(args.root).resolve()
    files, modules, rules, stay = load(Path(args.moves))
    log: list[str] = []
    files, modules = do_moves(root, files, modules, args.check, log, rules, stay)
    targets = args.paths or tracked_text_files(root)
    inverse = {old: new for old, new in files.items()}
    for rel in targets:
        rel = Path(rel).resolve().relative_to(root).as_posix() if Path(rel).is_absolute() else rel
        rel = inverse.get(rel, rel) if not (root / rel).exists() else rel  # a named file that just moved
        path = root / rel
        if not path.is_file() or rel in SKIP:  # history and the mapping keep the old names
            continue
        try:
            text = path.read_text()
        except UnicodeDecodeError:
            continue
        if args.resolve_imports and "<<<<<<< " in text:
            text, n = resolve_import_conflicts(text, rel, files, modules)
            if n:
                log.append(f"resolved {n} import conflict(s) in {rel}")
                if not args.check:
                    path.write_text(text)
            if "<<<<<<< " in text:
                log.append(f"UNRESOLVED conflicts left in {rel}")
        new = rewrite_text(text, rel, files, modules)
        if new != text:
            log.append(f"rewrite {rel}")
            if not args.check:
                path.write_text(new)
    for line in log:
        print(line)
    if not log:
        print("nothing to do")
    return 1 if (args.check and log) else 0


if __name__ == "__main__":
    sys.exit(main())
