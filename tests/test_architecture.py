"""The layering rules of docs/dev/architecture.md, checked by static analysis of the source.

Nothing here imports the modules it checks: every rule reads the files with :mod:`ast` (or as text),
so a violation is found even when importing the module would fail or be slow. Each failure message
names the offending file and line.

Rules:
(a) no module under ``engine/`` imports Streamlit (at any depth, including inside functions);
(b) no ``engine`` module imports ``ui``, ``app_pages`` or ``launcher``;
(c) no import cycle among ``engine`` modules at module level (imports inside functions and under
    ``if TYPE_CHECKING:`` are excluded: they do not run while the module is being imported);
(c') no import cycle among ``engine`` modules counting imports inside functions too (only
    ``if TYPE_CHECKING:`` blocks are excluded): two modules that need each other at call time share
    something that belongs in a lower module (a registry, a helper), see docs/dev/architecture.md;
(d) no ``.py`` file under ``engine/``, ``ui/`` or ``app_pages/`` has more than 800 lines;
(e) no tracked file refers to the project's material folder outside the repository (the specs are
    in ``docs/``), except the few files that explain where copied material came from;
(g) no import cycle among the dashboard's modules (``ui``, ``app_pages``, ``launcher``), counting imports
    inside functions: a leaf two page modules share moves down (a catalogue, a cache table, a file type);
(h) no module outside ``engine/`` (the dashboard, the launcher, the scripts) imports a private engine
    module (``engine.x._y``) or a private name of one (``from engine.x import _y``): the engine gives it a
    public name;
(i) the Streamlit-free rooms ``ui/*/compute/`` never import Streamlit, at any depth, nor a ``ui`` module
    that does.
(f) no ``.py`` file under ``engine/``, ``ui/``, ``app_pages/``, ``launcher/``, ``scripts/``, ``bench/`` (or ``app.py``)
    cites an issue number ("issue 12", "issues 3", "issue #4"): the code says what it does and why, and
    the history lives in git.
"""

from __future__ import annotations

import ast
import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MAX_LINES = 800

# Built by concatenation so that this file does not match its own rule (e).
_SHARED = "shared"
FORBIDDEN_REFERENCES = (_SHARED + "/docs", "../" + _SHARED, "/work/" + _SHARED)
#: Files that may name the material folder because they explain the provenance of copied material.
PROVENANCE_ALLOW_LIST = frozenset({"docs/README.md"})


# ---------------------------------------------------------------------------------------------
# Reading the import statements
# ---------------------------------------------------------------------------------------------
def _module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _py_files(*tops: str) -> list[Path]:
    return sorted(p for top in tops for p in (ROOT / top).rglob("*.py") if "__pycache__" not in p.parts)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(path: Path, *, module_level_only: bool, skip_type_checking: bool | None = None):
    """Yield (line, imported module name, names) for each import statement of one file.

    ``module_level_only``: skip function bodies (they run on call, not on import); class bodies and
    ``if``/``try``/``with`` blocks at module level run on import and are kept. ``skip_type_checking``
    (default: ``module_level_only``): skip ``if TYPE_CHECKING:`` blocks (they never run). Relative
    imports are resolved against the file's package; without ``module_level_only``,
    ``importlib.import_module("x")`` / ``__import__("x")`` with a literal name count as imports.
    """
    if skip_type_checking is None:
        skip_type_checking = module_level_only
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    module = _module_name(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]

    def visit(node):
        for child in ast.iter_child_nodes(node):
            if module_level_only and isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                continue
            if skip_type_checking and isinstance(child, ast.If) and _is_type_checking(child.test):
                yield from (x for stmt in child.orelse for x in visit_stmt(stmt))
                continue
            yield from visit_stmt(child)

    def visit_stmt(child):
        if isinstance(child, ast.Import):
            for alias in child.names:
                yield child.lineno, alias.name, ()
        elif isinstance(child, ast.ImportFrom):
            if child.level:
                base = package.split(".") if package else []
                base = base[: len(base) - (child.level - 1)] if child.level > 1 else base
                target = ".".join(base + ([child.module] if child.module else []))
            else:
                target = child.module or ""
            yield child.lineno, target, tuple(a.name for a in child.names)
        elif isinstance(child, ast.Call) and not module_level_only:
            # importlib.import_module("x") / __import__("x") with a literal name
            func = child.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            if name in ("import_module", "__import__") and child.args and isinstance(child.args[0], ast.Constant) \
                    and isinstance(child.args[0].value, str):
                yield child.lineno, child.args[0].value, ()
        yield from visit(child)

    yield from visit(tree)


def _where(path: Path, line: int) -> str:
    return f"{path.relative_to(ROOT)}:{line}"


def _top(name: str) -> str:
    return name.split(".")[0]


# ---------------------------------------------------------------------------------------------
# (a), (b): what engine may import
# ---------------------------------------------------------------------------------------------
def test_no_engine_module_imports_streamlit():
    offenders = [
        f"{_where(p, line)} imports {name!r}"
        for p in _py_files("engine")
        for line, name, _ in _imports(p, module_level_only=False)
        if _top(name) == "streamlit"
    ]
    assert not offenders, "engine/ must not import Streamlit (it belongs in ui/ and app_pages/):\n" + "\n".join(offenders)


def test_no_page_folder_named_pages():
    # a folder named pages/ next to app.py puts Streamlit in its legacy multipage mode (file-name navigation,
    # a first deep link run without the app.py frame); the pages live in app_pages/, registered by st.navigation
    assert not (ROOT / "pages").exists(), "rename pages/ (Streamlit's legacy mode): the pages live in app_pages/"
    assert "st.navigation" in (ROOT / "app.py").read_text()


def test_no_engine_module_imports_ui_or_pages():
    offenders = [
        f"{_where(p, line)} imports {name!r}"
        for p in _py_files("engine")
        for line, name, _ in _imports(p, module_level_only=False)
        if _top(name) in ("ui", "app_pages", "launcher", "app")
    ]
    assert not offenders, "engine/ must not import the dashboard (ui, app_pages, launcher, app):\n" + "\n".join(offenders)


# ---------------------------------------------------------------------------------------------
# (c): no import cycles at module level
# ---------------------------------------------------------------------------------------------
def _engine_graph(*, function_level: bool = False, tops=("engine",)):
    """{module: {imported engine module: (file, line)}} over module-level imports only, or with
    ``function_level`` over every import, those inside functions included (``TYPE_CHECKING`` excluded).

    ``from engine.x import y`` is an edge to ``engine.x.y`` when that is a module, else to ``engine.x``. Implicit imports of parent packages are not edges: Python puts a package in sys.modules
    before running its submodules, so a package ``__init__`` re-exporting its submodules is no cycle.
    """
    files = {_module_name(p): p for p in _py_files(*tops)}
    graph: dict[str, dict[str, tuple[Path, int]]] = {m: {} for m in files}
    for mod, path in files.items():
        for line, name, names in _imports(path, module_level_only=not function_level, skip_type_checking=True):
            subs = [f"{name}.{n}" for n in names if f"{name}.{n}" in files]
            # `from pkg import submodule` needs only the submodule; any other name needs pkg itself
            targets = subs if names and len(subs) == len(names) else [name] + subs
            for t in targets:
                if t in files and t != mod:
                    graph[mod].setdefault(t, (path, line))
    return graph


def _strongly_connected(graph):
    """Tarjan's algorithm; returns the components with more than one module."""
    index, low, on_stack, stack, out = {}, {}, set(), [], []
    counter = [0]

    def strong(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            strong(v)
    return out


def test_strongly_connected_finds_a_planted_cycle_and_nothing_else():
    # the checker itself must be able to fail
    g = {"a": {"b": 0}, "b": {"c": 0}, "c": {"a": 0}, "d": {"a": 0}, "e": {}}
    assert _strongly_connected(g) == [["a", "b", "c"]]


def test_checkers_find_planted_violations(tmp_path, monkeypatch):
    # a small fake tree: the rules must report these, with file and line
    pkg = tmp_path / "engine" / "sub"
    pkg.mkdir(parents=True)
    (tmp_path / "engine" / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("from engine.sub import a\n")
    (pkg / "a.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "from . import b\n"
        "if TYPE_CHECKING:\n    from engine.sub import c\n"
        "def f():\n    import streamlit as st\n    from ui import state\n"
    )
    (pkg / "b.py").write_text("import engine.sub.a\n")
    (pkg / "c.py").write_text("from .a import f\n")  # a -> c only under TYPE_CHECKING: no cycle
    monkeypatch.setitem(globals(), "ROOT", tmp_path)
    found = {(n, line) for line, n, _ in _imports(pkg / "a.py", module_level_only=False)}
    assert ("streamlit", 6) in found and ("ui", 7) in found
    module_level = {n for _, n, _ in _imports(pkg / "a.py", module_level_only=True)}
    assert module_level == {"typing", "engine.sub"}  # function bodies and TYPE_CHECKING skipped
    graph = _engine_graph()
    assert graph["engine.sub.a"] == {"engine.sub.b": (pkg / "a.py", 2)}
    assert _strongly_connected(graph) == [["engine.sub.a", "engine.sub.b"]]


def test_no_import_cycles_among_engine_modules():
    graph = _engine_graph()
    cycles = _strongly_connected(graph)
    lines = []
    for comp in cycles:
        lines.append("cycle among " + ", ".join(comp) + ":")
        members = set(comp)
        for mod in comp:
            for dep, (path, line) in sorted(graph[mod].items()):
                if dep in members:
                    lines.append(f"  {_where(path, line)}: {mod} imports {dep}")
    assert not cycles, "module-level import cycles in engine/ (break them, e.g. with a shared lower module):\n" + \
        "\n".join(lines)


#: Function-level cycles tolerated, as unordered pairs of modules: none (the self-test plants one to check
#: that an allowance hides exactly its pair). Break a new cycle with a shared lower module instead.
FUNCTION_LEVEL_CYCLE_ALLOWANCE: frozenset = frozenset()


def _function_level_cycles():
    """The cycles of the graph with function-level imports, less the edges between allowed pairs."""
    graph = _engine_graph(function_level=True)
    for pair in FUNCTION_LEVEL_CYCLE_ALLOWANCE:
        a, b = sorted(pair)
        graph.get(a, {}).pop(b, None)
        graph.get(b, {}).pop(a, None)
    return graph, _strongly_connected(graph)


def test_function_level_cycle_checker_finds_a_planted_cycle(tmp_path, monkeypatch):
    # two modules that import each other only inside functions: invisible to rule (c), caught by (c');
    # a TYPE_CHECKING import back is no edge, and an allowed pair is not reported
    pkg = tmp_path / "engine" / "sub"
    pkg.mkdir(parents=True)
    (tmp_path / "engine" / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("def f():\n    from engine.sub.b import g\n    return g()\n")
    (pkg / "b.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from engine.sub import c\n"
        "def g():\n    import importlib\n    return importlib.import_module('engine.sub.a')\n"
    )
    (pkg / "c.py").write_text("def h():\n    from engine.sub import b\n")  # b -> c only under TYPE_CHECKING
    monkeypatch.setitem(globals(), "ROOT", tmp_path)
    assert _strongly_connected(_engine_graph()) == []  # module level: no cycle
    graph = _engine_graph(function_level=True)
    assert graph["engine.sub.a"] == {"engine.sub.b": (pkg / "a.py", 2)}
    assert graph["engine.sub.b"] == {"engine.sub.a": (pkg / "b.py", 6)}
    assert graph["engine.sub.c"] == {"engine.sub.b": (pkg / "c.py", 2)}
    monkeypatch.setitem(globals(), "FUNCTION_LEVEL_CYCLE_ALLOWANCE", frozenset())
    assert _function_level_cycles()[1] == [["engine.sub.a", "engine.sub.b"]]
    allowed = frozenset({frozenset({"engine.sub.a", "engine.sub.b"})})
    monkeypatch.setitem(globals(), "FUNCTION_LEVEL_CYCLE_ALLOWANCE", allowed)
    assert _function_level_cycles()[1] == []


def test_no_import_cycles_among_engine_modules_with_function_level_imports():
    graph, cycles = _function_level_cycles()
    lines = []
    for comp in cycles:
        lines.append("cycle among " + ", ".join(comp) + ":")
        members = set(comp)
        for mod in comp:
            for dep, (path, line) in sorted(graph[mod].items()):
                if dep in members:
                    lines.append(f"  {_where(path, line)}: {mod} imports {dep}")
    assert not cycles, ("import cycles in engine/ through imports inside functions (move what the modules share "
                        "into a lower module, e.g. a registry):\n" + "\n".join(lines))


# ---------------------------------------------------------------------------------------------
# (d): file size
# ---------------------------------------------------------------------------------------------
def test_no_source_file_over_800_lines():
    long = []
    for p in _py_files("engine", "ui", "app_pages", "launcher"):
        n = len(p.read_text(encoding="utf-8").splitlines())
        if n > MAX_LINES:
            long.append(f"{p.relative_to(ROOT)}: {n} lines")
    assert not long, f"files over {MAX_LINES} lines (split them by idea):\n" + "\n".join(long)


# ---------------------------------------------------------------------------------------------
# (e): no references to material outside the repository
# ---------------------------------------------------------------------------------------------
def _tracked_files() -> list[str]:
    try:
        out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True, timeout=60)
        return [f for f in out.stdout.decode().split("\0") if f]
    except (OSError, subprocess.SubprocessError):  # no git (e.g. an unpacked archive): walk the tree
        skip = {".git", ".venv", "__pycache__", ".cache", "node_modules"}
        return [str(p.relative_to(ROOT)) for p in ROOT.rglob("*") if p.is_file() and not skip & set(p.parts)]


def test_no_tracked_file_refers_to_the_material_outside_the_repository():
    offenders = []
    for rel in _tracked_files():
        if rel in PROVENANCE_ALLOW_LIST:
            continue
        path = ROOT / rel
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, FileNotFoundError, IsADirectoryError):
            continue  # binary data (e.g. .csv.gz) or a file deleted but not yet committed
        for lineno, line in enumerate(text.splitlines(), start=1):
            hits = [ref for ref in FORBIDDEN_REFERENCES if ref in line]
            if hits:
                offenders.append(f"{rel}:{lineno}: {hits[0]!r}: {line.strip()[:100]}")
    assert not offenders, (
        "these files refer to material outside the repository; cite the copies in docs/ instead "
        "(docs/specs/PMT.md, docs/specs/NVDP.md, docs/specs/CONVENTIONS.md, docs/specs/DASHBOARD.md):\n" + "\n".join(offenders)
    )


# ---------------------------------------------------------------------------------------------
# (f): no issue numbers in the code
# ---------------------------------------------------------------------------------------------
ISSUE_NUMBER = re.compile(r"\bissues? ?#?\d+", re.IGNORECASE)
ISSUE_NUMBER_TOPS = ("engine", "ui", "app_pages", "launcher", "scripts", "bench")
#: Files allowed to cite issue numbers: none (the self-test checks that an allowance works and goes stale).
ISSUE_NUMBER_ALLOWANCE: frozenset = frozenset()


def _issue_number_mentions():
    """``(offenders, stale)``: ``path:line: text`` for each mention outside the allowance, and the allowed
    files that no longer have one (read as text, so comments and docstrings count)."""
    files = _py_files(*ISSUE_NUMBER_TOPS) + [p for p in (ROOT / "app.py",) if p.is_file()]
    offenders, mentioned = [], set()
    for p in files:
        rel = p.relative_to(ROOT).as_posix()
        for lineno, line in enumerate(p.read_text(encoding="utf-8").splitlines(), start=1):
            if ISSUE_NUMBER.search(line):
                mentioned.add(rel)
                if rel not in ISSUE_NUMBER_ALLOWANCE:
                    offenders.append(f"{rel}:{lineno}: {line.strip()[:100]}")
    return offenders, sorted(ISSUE_NUMBER_ALLOWANCE - mentioned)


def test_issue_number_checker_finds_a_planted_mention(tmp_path, monkeypatch):
    (tmp_path / "engine").mkdir()
    (tmp_path / "scripts").mkdir()
    (tmp_path / "engine" / "clean.py").write_text('"""Tissue 3 of the model; issues are tracked elsewhere."""\n')
    (tmp_path / "engine" / "cited.py").write_text("x = 1\n# fast path (Issue #16)\n")
    (tmp_path / "scripts" / "allowed.py").write_text('"""See issue 12, item 3."""\n')
    (tmp_path / "app.py").write_text("# issues 4 and 5\n")
    monkeypatch.setitem(globals(), "ROOT", tmp_path)
    monkeypatch.setitem(globals(), "ISSUE_NUMBER_ALLOWANCE", frozenset({"scripts/allowed.py", "ui/gone.py"}))
    offenders, stale = _issue_number_mentions()
    assert offenders == ["engine/cited.py:2: # fast path (Issue #16)", "app.py:1: # issues 4 and 5"]
    assert stale == ["ui/gone.py"]


def test_no_issue_numbers_in_code():
    offenders, stale = _issue_number_mentions()
    assert not offenders, ("issue numbers in code (say what the code does and why; git log has the history):\n"
                           + "\n".join(offenders))
    assert not stale, f"no longer cite an issue number: remove them from ISSUE_NUMBER_ALLOWANCE: {stale}"


# ---------------------------------------------------------------------------------------------
# (g), (h), (i): the dashboard
# ---------------------------------------------------------------------------------------------
DASHBOARD_TOPS = ("ui", "app_pages", "launcher")
#: Trees outside engine/ that must use the engine's public names only (bench/ measures internals on purpose).
PUBLIC_ONLY_TOPS = ("ui", "app_pages", "launcher", "scripts")


def _cycle_report(graph, cycles) -> str:
    lines = []
    for comp in cycles:
        lines.append("cycle among " + ", ".join(comp) + ":")
        members = set(comp)
        for mod in comp:
            for dep, (path, line) in sorted(graph[mod].items()):
                if dep in members:
                    lines.append(f"  {_where(path, line)}: {mod} imports {dep}")
    return "\n".join(lines)


def _dashboard_cycles():
    graph = _engine_graph(function_level=True, tops=DASHBOARD_TOPS)
    return graph, _strongly_connected(graph)


def test_no_import_cycles_in_the_dashboard_with_function_level_imports():
    graph, cycles = _dashboard_cycles()
    assert not cycles, ("import cycles in ui/ (imports inside functions count: move what the modules share into "
                        "a lower module, e.g. ui/pmt/compute/):\n" + _cycle_report(graph, cycles))


def _private_engine_imports(*tops: str) -> list[str]:
    """``path:line: imports ...`` for each import of a private engine module or name outside engine/."""
    files = _py_files(*tops) + [p for p in (ROOT / "app.py",) if p.is_file()]
    offenders = []
    for p in files:
        for line, name, names in _imports(p, module_level_only=False, skip_type_checking=False):
            if _top(name) != "engine":
                continue
            private = [part for part in name.split(".") if part.startswith("_") and not part.startswith("__")]
            private += [n for n in names if n.startswith("_") and not n.startswith("__")]
            if private:
                offenders.append(f"{_where(p, line)}: imports {name} {', '.join(names)}".rstrip()
                                 + f" (private: {', '.join(private)})")
    return offenders


def test_dashboard_checkers_find_a_planted_circle_and_a_private_import(tmp_path, monkeypatch):
    # a circle hidden in function bodies across two page packages, and private engine imports of both kinds
    for d in ("ui/common", "ui/pmt/compute", "engine/pmt"):
        (tmp_path / d).mkdir(parents=True, exist_ok=True)
    for init in ("ui", "ui/common", "ui/pmt", "ui/pmt/compute", "engine", "engine/pmt"):
        (tmp_path / init / "__init__.py").write_text("")
    (tmp_path / "ui/common/choice.py").write_text("def adopt():\n    from ui.pmt.compute import core as C\n")
    (tmp_path / "ui/pmt/compute/core.py").write_text(
        "import numpy as np\n"
        "def prepare():\n    from ui.pmt import upload\n"
        "def fit():\n    from engine.pmt._x import y\n    from engine.pmt.sweep import _helper\n"
    )
    (tmp_path / "ui/pmt/upload.py").write_text("from ui.common.choice import adopt\nfrom engine.pmt import sweep\n")
    (tmp_path / "ui/pmt/tabs.py").write_text("from ui.pmt.compute import core\n")  # into the circle, not on it
    monkeypatch.setitem(globals(), "ROOT", tmp_path)
    graph, cycles = _dashboard_cycles()
    assert cycles == [["ui.common.choice", "ui.pmt.compute.core", "ui.pmt.upload"]]
    assert graph["ui.common.choice"] == {"ui.pmt.compute.core": (tmp_path / "ui/common/choice.py", 2)}
    assert "ui/common/choice.py:2: ui.common.choice imports ui.pmt.compute.core" in _cycle_report(graph, cycles)
    offenders = _private_engine_imports("ui")
    assert offenders == [
        "ui/pmt/compute/core.py:5: imports engine.pmt._x y (private: _x)",
        "ui/pmt/compute/core.py:6: imports engine.pmt.sweep _helper (private: _helper)",
    ]


def test_no_private_engine_imports_outside_engine():
    offenders = _private_engine_imports(*PUBLIC_ONLY_TOPS)
    assert not offenders, ("private engine modules or names imported outside engine/ (give the engine a public "
                           "name for it):\n" + "\n".join(offenders))


def _streamlit_reach():
    """{ui module: the first import of Streamlit it reaches (directly or through ui modules), as a chain}."""
    graph = _engine_graph(function_level=True, tops=("ui",))
    files = {_module_name(p): p for p in _py_files("ui")}
    direct = {}
    for mod, path in files.items():
        for line, name, _ in _imports(path, module_level_only=False, skip_type_checking=True):
            if _top(name) == "streamlit":
                direct[mod] = f"{_where(path, line)}"
                break
    reach: dict[str, str] = {}

    def find(mod, seen):
        if mod in direct:
            return [mod]
        for dep in sorted(graph.get(mod, {})):
            if dep not in seen:
                seen.add(dep)
                chain = find(dep, seen)
                if chain:
                    return [mod, *chain]
        return None

    for mod in files:
        chain = find(mod, {mod})
        if chain:
            reach[mod] = " -> ".join(chain) + f" ({direct[chain[-1]]})"
    return reach


def test_compute_rooms_are_streamlit_free():
    reach = _streamlit_reach()
    offenders = [f"{m}: {chain}" for m, chain in sorted(reach.items()) if ".compute" in m]
    assert not offenders, "ui/*/compute/ must not reach Streamlit (move the Streamlit part up):\n" + "\n".join(offenders)
