"""Shared test set-up and the one harness of the app tests.

Set-up: offline model hub, repo root on sys.path, the prefetch worker idle between tests.

Harness (plain functions, ``from conftest import new_app`` in a module-level helper, and fixtures wrapping them):

- ``new_app(page=None, *, timeout=APP_TIMEOUT, query=None, **settings)`` / fixture ``app_at``: an AppTest of
  ``app.py`` (the frame) with the given session settings and query parameters, switched to
  ``app_pages/<page>.py`` (the Home page when ``page`` is None), not yet run;
- ``regression_csv(n=400, seed=0, header=...)`` / fixture ``upload_csv``: the bytes of a small regression CSV to
  upload (three features on very different scales, an unused column, the target last); ``linear_csv(n, seed,
  coef, header)``: two standard-normal features and a linear target;
- fixture ``captured_downloads`` (alias ``downloads``): ``{file name: bytes or text}`` of every
  ``st.download_button`` of the test, deferred ones included (AppTest hides the payloads);
- ``served_app(log_name, extra_env=None, start_s=None)``: a context manager running the app as ``run.sh`` does on a
  free localhost port, yielding its URL, for Chromium (``CHROMIUM``, ``CHROMIUM_ARGS``, ``needs_chromium``;
  server logs and screenshots go to ``ARTIFACTS``).

Layout: ``tests/engine`` (the library), ``tests/ui`` (the dashboard's modules without a running app),
``tests/app`` (AppTest flows of the pages), ``tests/browser`` (a served app in Chromium),
``tests/test_architecture.py`` (the layering of the whole tree), ``tests/data`` (input files).
"""

import contextlib
import os
import sys
from pathlib import Path

import pytest as _pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def tiny_nvdp(seed: int, n: int, length: int = 9, d: int = 16):
    """A tiny untrained NVDP classifier (d = 16, 2 heads, FFN 24; torch seed 0) and ``n`` random
    token-state sentences of 2..``length`` tokens with binary labels from generator ``seed``:
    (model, states, labels). For tests of the live evaluator that need a model, not a trained one."""
    import torch

    from engine.nvdp.encoder import TokenStates
    from engine.nvdp.layer import NVDPClassifier, NVIBConfig

    torch.manual_seed(0)
    model = NVDPClassifier(NVIBConfig(d=d, n_heads=2, ffn_dim=24)).eval()
    g = torch.Generator().manual_seed(seed)
    lengths = torch.randint(2, length + 1, (n,), generator=g)
    mask = torch.arange(length)[None, :] < lengths[:, None]
    states = TokenStates(torch.randn(n, length, d, generator=g) * 3.0, mask)
    y = torch.randint(0, 2, (n,), generator=g)
    return model, states, y


@_pytest.fixture(autouse=True)
def _prefetch_done_before_the_next_test():
    """The PMT page's background worker (ui.pmt.prefetch) finishes a test's requests before the next test
    starts, so that no test sees another's computations (e.g. one that counts engine calls)."""
    yield
    mod = sys.modules.get("ui.pmt.prefetch")
    if mod is not None:
        mod.wait_idle(120)


ROOT_APP = ROOT / "app.py"
#: Seconds an AppTest run may take (a cold sweep on a busy 2-core machine).
APP_TIMEOUT = 180


def new_app(page: str | None = None, *, timeout: float = APP_TIMEOUT, query: dict | None = None, **settings):
    """An AppTest of ``app.py`` (the frame), not yet run: ``settings`` go into its session state, ``query`` into its
    query parameters (the page's link), and it is switched to ``app_pages/<page>.py`` unless ``page`` is None (Home).

    ``new_app("pmt", seeds=3).run()`` is the PMT page on three seeds; a key that is no Python name goes in as
    ``**{"key": value}``."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT_APP), default_timeout=timeout)
    for key, value in settings.items():
        at.session_state[key] = value
    for key, value in (query or {}).items():
        at.query_params[key] = value
    if page is not None:
        at.switch_page(f"app_pages/{page}.py")
    return at


@_pytest.fixture
def app_at():
    """A factory: ``app_at("pmt", seeds=3)`` is ``new_app("pmt", seeds=3)``, an AppTest inside the app.py frame at
    ``app_pages/pmt.py``."""
    return new_app


def regression_csv(n: int = 400, seed: int = 0, header: str = "temp,speed,load,other_target,output") -> bytes:
    """CSV bytes: ``n`` rows of ``temp, speed, load`` (scales 1, 10, 100), an unused column and the target ``output``
    (a linear function of the features plus noise), from generator ``seed``."""
    import numpy as np

    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3)) * [1.0, 10.0, 100.0]
    y = X @ [2.0, -0.3, 0.01] + 5 + rng.normal(size=n)
    lines = [header]
    for row, t in zip(X, y):
        lines.append(f"{row[0]:.5f},{row[1]:.5f},{row[2]:.5f},{rng.normal():.4f},{t:.5f}")
    return ("\n".join(lines) + "\n").encode()


def linear_csv(n: int = 300, seed: int = 0, coef=(1.0, -2.0), header: str = "a,b,y") -> bytes:
    """CSV bytes: ``n`` rows of two standard-normal features and the target ``X @ coef`` plus standard noise, from
    generator ``seed`` (five decimals)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    y = X @ list(coef) + rng.normal(size=n)
    return (header + "\n" + "".join(f"{a:.5f},{b:.5f},{t:.5f}\n" for (a, b), t in zip(X, y))).encode()


@_pytest.fixture
def upload_csv():
    """A factory of CSV bytes: ``upload_csv(n=300, seed=1)`` is ``regression_csv(n=300, seed=1)``."""
    return regression_csv


@_pytest.fixture
def captured_downloads(monkeypatch):
    """Record what st.download_button hands to Streamlit's media storage (AppTest hides the bytes): deferred
    downloads (``data=callable``) are generated when the button is drawn, as a click would."""
    from streamlit.runtime.media_file_manager import MediaFileManager
    from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage

    seen = {}
    orig = MemoryMediaFileStorage.load_and_get_id

    def spy(self, path_or_data, mimetype, kind, filename=None):
        seen[filename] = path_or_data
        return orig(self, path_or_data, mimetype, kind, filename)

    orig_deferred = MediaFileManager.add_deferred

    def spy_deferred(self, data_callable, mimetype, coordinates, file_name=None, **kw):
        seen[file_name] = data_callable()
        return orig_deferred(self, data_callable, mimetype, coordinates, file_name=file_name, **kw)

    monkeypatch.setattr(MemoryMediaFileStorage, "load_and_get_id", spy)
    monkeypatch.setattr(MediaFileManager, "add_deferred", spy_deferred)
    return seen


@_pytest.fixture
def downloads(captured_downloads):
    """The same as ``captured_downloads``."""
    return captured_downloads


# --- a served app for Chromium -------------------------------------------------------------------------------------

#: Where the browser tests write server logs and screenshots.
ARTIFACTS = ROOT / "artifacts"
#: Debian's Chromium, driven by Playwright through ``executable_path``.
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run", "--disable-quic"]
#: Skip a test when Chromium is not installed.
needs_chromium = _pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian's chromium is not installed at "
                                     "/usr/bin/chromium (apt-get install chromium; .ci/run does this)")


@contextlib.contextmanager
def served_app(log_name: str, extra_env: dict | None = None, start_s: float | None = None):
    """Run the server as ``run.sh`` does (``python -m launcher.serve app.py``: the preload, then ``streamlit run``) on a
    free localhost port until the block ends; yields its URL. It may take ``start_s`` seconds to answer its health
    check (default: ``$EXPLORER_TEST_START_S`` or 90; more on a loaded machine); its output goes to
    ``ARTIFACTS/log_name``."""
    import subprocess

    from launcher.health import free_port, stop, wait_healthy

    port = free_port()
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", **(extra_env or {}))
    cmd = [sys.executable, "-m", "launcher.serve", "app.py", "--server.port", str(port), "--server.headless", "true",
           "--server.address", "127.0.0.1", "--server.fileWatcherType", "none", "--browser.gatherUsageStats", "false"]
    if start_s is None:
        start_s = float(os.environ.get("EXPLORER_TEST_START_S", "90"))
    ARTIFACTS.mkdir(exist_ok=True)
    log = open(ARTIFACTS / log_name, "w")
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, proc, start_s, poll_s=0.5, log=log.name)
        yield url
    finally:
        stop(proc, 10)
        log.close()
