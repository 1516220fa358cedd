"""Shared test set-up: offline model hub, deterministic hashing, repo root on sys.path."""

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
