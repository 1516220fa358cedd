"""scripts/dev/apply_moves.py: a branch written against the flat layout, merged after the move, is carried over.

A small git repository holds the new layout plus what a branch of the old layout would bring in: an old
flat file re-created by a merge, a new ``ui/pmt_*.py`` page module, a new flat test, docs naming old paths.
One run moves and rewrites all of it; a second run changes nothing.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "dev" / "apply_moves.py"
sys.path.insert(0, str(SCRIPT.parent))
import apply_moves as A  # noqa: E402


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True).stdout


def _write(repo: Path, rel: str, text: str) -> None:
    path = repo / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_the_mapping_is_complete_and_points_at_files_that_exist():
    files, modules, rules, stay = A.load()
    for old, new in files.items():
        assert (ROOT / new).is_file(), f"{old} -> {new}: the new path does not exist"
        assert not (ROOT / old).exists(), f"{old} still exists beside {new}"
    for old, new in modules.items():
        assert (ROOT / (new.replace(".", "/") + ".py")).is_file(), new
        assert files[old.replace(".", "/") + ".py"] == new.replace(".", "/") + ".py"
    assert not (ROOT / "pages").exists()
    assert sorted(p.name for p in (ROOT / "ui").glob("*.py")) == ["__init__.py"]  # every module in a package
    assert sorted(p.name for p in (ROOT / "tests").glob("test_*.py")) == ["test_architecture.py"]
    assert {"ui", "pages", "tests"} == rules and "tests/test_architecture.py" in stay


def test_rewrite_of_imports_keeps_the_local_names():
    _, modules, _, _ = A.load()
    src = ("from ui import pmt_run as R, verdict\n"
           "    from ui import (nvdp_cache,\n        nvdp_live as L)  # lazy\n"
           "import ui.pmt_compute\nx = sys.modules.get('ui.pmt_prefetch')\n"
           'code = "from ui import pmt_compute as C, pmt_tabs\\nC.prepare()"\n')
    out = A.rewrite_text(src, "ui/pmt/x.py", {}, modules)
    assert out == ("from ui.pmt import run as R\nfrom ui.common import verdict\n"
                   "    from ui.nvdp import cache as nvdp_cache  # lazy\n    from ui.nvdp import live as L\n"
                   "import ui.pmt.compute.core\nx = sys.modules.get('ui.pmt.prefetch')\n"
                   'code = "from ui.pmt.compute import core as C\\nfrom ui.pmt import tabs as pmt_tabs\\nC.prepare()"\n')
    assert A.rewrite_text(out, "ui/pmt/x.py", {}, modules) == out  # idempotent


def test_a_branch_of_the_old_layout_is_carried_over(tmp_path):
    repo = tmp_path / "repo"
    files, modules, _, _ = A.load()
    # the new layout (a few files of it) and the mapping
    _write(repo, "scripts/dev/moves.json", (ROOT / "scripts/dev/moves.json").read_text())
    _write(repo, "ui/__init__.py", "")
    for pkg in ("ui/common", "ui/pmt", "ui/pmt/compute"):
        _write(repo, f"{pkg}/__init__.py", "")
    _write(repo, "ui/pmt/compute/core.py", "TEST_SIZE = 0.2\n")
    _write(repo, "app_pages/pmt.py", "import streamlit as st\n")
    # what the merge of a branch of the old layout brings in
    _write(repo, "ui/pmt_compute.py", "TEST_SIZE = 0.25  # an edit git could not carry over\n")
    _write(repo, "ui/pmt_newpart.py", "from ui import pmt_compute as C, state\n\n\ndef f():\n    return C.TEST_SIZE\n")
    _write(repo, "ui/helpers.py", "X = 1\n")
    _write(repo, "tests/test_new_flow.py",
           "from pathlib import Path\nfrom streamlit.testing.v1 import AppTest\n"
           "ROOT = Path(__file__).resolve().parent.parent\nDATA = Path(__file__).parent / \"data\"\n"
           "def test_x():\n    at = AppTest.from_file(str(ROOT / 'app.py'))\n    at.switch_page('pages/pmt.py')\n")
    _write(repo, "tests/test_engine_only.py", "import numpy as np\n\ndef test_y():\n    assert np.ones(1)[0] == 1\n")
    _write(repo, "docs/new.md", "See `ui/pmt_run.py`, `tests/test_page_pmt.py` and :mod:`ui.data_choice`.\n")
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "merged")
    args = ["--root", str(repo), "--moves", str(repo / "scripts/dev/moves.json")]
    out = subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, check=True).stdout
    assert "CONFLICT both exist: ui/pmt_compute.py and ui/pmt/compute/core.py" in out
    assert (repo / "ui/pmt/newpart.py").read_text().startswith(
        "from ui.pmt.compute import core as C\nfrom ui.common import state\n")
    assert (repo / "ui/common/helpers.py").is_file() and not (repo / "ui/helpers.py").exists()
    flow = (repo / "tests/app/test_new_flow.py").read_text()
    assert "ROOT = Path(__file__).resolve().parents[2]" in flow
    assert 'DATA = Path(__file__).parents[1] / "data"' in flow
    assert "at.switch_page('app_pages/pmt.py')" in flow
    assert (repo / "tests/engine/test_engine_only.py").is_file()
    assert (repo / "docs/new.md").read_text() == (
        "See `ui/pmt/run.py`, `tests/app/test_page_pmt.py` and :mod:`ui.common.data_choice`.\n")
    assert "ui/pmt_newpart.py -> ui/pmt/newpart.py" in _git(repo, "status", "--short")  # a git move
    # a second run: only the conflict left for a person is reported again
    again = subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, check=True).stdout
    assert again.strip() == "CONFLICT both exist: ui/pmt_compute.py and ui/pmt/compute/core.py (carry the edits " \
                            "of ui/pmt_compute.py over by hand, then delete it)"
    json.loads((repo / "scripts/dev/moves.json").read_text())  # untouched


def test_names_that_moved_down_are_imported_from_their_new_home():
    files, modules, _, _ = A.load()
    src = ("from ui.pmt_upload import Named, reset_for_task  # the file type\n"
           "    from ui.state import DEFAULTS, persist\n"
           "from ui.pmt_compute import TEST_SIZE as T\n")
    out = A.rewrite_text(src, "ui/pmt/compute/new.py", files, modules)
    assert out == ("from ui.pmt.upload import reset_for_task  # the file type\nfrom ui.common.upload_file import Named\n"
                   "    from ui.common.state import persist\n    from ui.common.settings import DEFAULTS\n"
                   "from ui.pmt.compute.catalogue import TEST_SIZE as T\n")
    assert A.rewrite_text(src, "tests/ui/test_new.py", files, modules).startswith(
        "from ui.pmt.upload import Named, reset_for_task")  # outside ui/ only the module moves
    assert A.rewrite_text(out, "ui/pmt/compute/new.py", files, modules) == out


def test_import_only_conflicts_are_resolved_and_others_left():
    files, modules, _, _ = A.load()
    text = ("import streamlit as st\n\n"
            "<<<<<<< HEAD:pages/home.py\nfrom ui.verdict import show\nfrom ui.presets import html_links\n"
            "from ui.state import ensure_frame\n\nensure_frame()\n"
            "=======\nfrom ui.common.presets import markdown_links\n>>>>>>> house:app_pages/home.py\n"
            "x = 1\n<<<<<<< HEAD\ny = 2\n=======\ny = 3\n>>>>>>> house\n")
    out, n = A.resolve_import_conflicts(text, "app_pages/home.py", files, modules)
    assert n == 1
    assert out.startswith("import streamlit as st\n\nfrom ui.common.presets import markdown_links\n"
                          "from ui.common.verdict import show\nfrom ui.common.presets import html_links\nx = 1\n")
    assert "<<<<<<< HEAD\ny = 2\n=======\ny = 3\n>>>>>>> house\n" in out  # code, not imports: for a person
