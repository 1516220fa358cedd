"""Shared test set-up and the one harness of the app tests.

Set-up: offline model hub, repo root on sys.path, the prefetch worker idle between tests.

Harness (fixtures, for ``tests/app/`` and anyone else):

- ``app_at(page, **settings)``: an AppTest of ``app.py`` (the frame) switched to ``app_pages/<page>.py``
  with the given session settings, not yet run;
- ``upload_csv(n=400, seed=0, header=...)``: the bytes of a small regression CSV to upload (three
  features on very different scales, an unused column, the target last);
- ``captured_downloads`` (alias ``downloads``): ``{file name: bytes or text}`` of every
  ``st.download_button`` of the test, deferred ones included (AppTest hides the payloads).

Layout: ``tests/engine`` (the library), ``tests/ui`` (the dashboard's modules without a running app),
``tests/app`` (AppTest flows of the pages), ``tests/browser`` (a served app in Chromium),
``tests/test_architecture.py`` (the layering of the whole tree), ``tests/data`` (input files).
"""

import os
import sys
from pathlib import Path

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


import sys as _sys

import pytest as _pytest


@_pytest.fixture(autouse=True)
def _prefetch_done_before_the_next_test():
    """The PMT page's background worker (ui.pmt.prefetch) finishes a test's requests before the next test
    starts, so that no test sees another's computations (e.g. one that counts engine calls)."""
    yield
    mod = _sys.modules.get("ui.pmt.prefetch")
    if mod is not None:
        mod.wait_idle(120)


ROOT_APP = ROOT / "app.py"
#: Seconds an AppTest run may take (a cold sweep on a busy 2-core machine).
APP_TIMEOUT = 180


@_pytest.fixture
def app_at():
    """A factory: ``app_at("pmt", seeds=3)`` is an AppTest inside the app.py frame at ``app_pages/pmt.py``."""
    from streamlit.testing.v1 import AppTest

    def make(page: str, *, timeout: float = APP_TIMEOUT, **settings):
        at = AppTest.from_file(str(ROOT_APP), default_timeout=timeout)
        for key, value in settings.items():
            at.session_state[key] = value
        at.switch_page(f"app_pages/{page}.py")
        return at

    return make


@_pytest.fixture
def upload_csv():
    """A factory of CSV bytes: ``n`` rows of ``temp, speed, load`` (scales 1, 10, 100), an unused column and
    the target ``output`` (a linear function of the features plus noise), from generator ``seed``."""
    import numpy as np

    def make(n: int = 400, seed: int = 0, header: str = "temp,speed,load,other_target,output") -> bytes:
        rng = np.random.default_rng(seed)
        X = rng.normal(size=(n, 3)) * [1.0, 10.0, 100.0]
        y = X @ [2.0, -0.3, 0.01] + 5 + rng.normal(size=n)
        lines = [header]
        for row, t in zip(X, y):
            lines.append(f"{row[0]:.5f},{row[1]:.5f},{row[2]:.5f},{rng.normal():.4f},{t:.5f}")
        return ("\n".join(lines) + "\n").encode()

    return make


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
