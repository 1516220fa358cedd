"""Every "try this" hint of the NVDP page, performed on a tiny cached model.

The hints live in :data:`engine.nvdp.hints.HINTS`; the page renders them with ``hint(name)``. Each
test below does what a hint says (through the engine the page calls, or through the page itself
with AppTest) and asserts the promised change. A hint without a test here fails
``test_every_hint_has_a_test``.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np
import pytest
import torch

from engine.nvdp import explore as X
from engine.nvdp.clipping import ClipConfig, finite_alpha_min, sigma_floor
from engine.nvdp.hints import HINTS, hint
from engine.nvdp.protocol import DEFAULT_PROTOCOL

from conftest import new_app  # the harness: tests/conftest.py


ROOT = Path(__file__).resolve().parents[2]
ENV = {"NVDP_PAGE_N_SENTENCES": "60", "NVDP_PAGE_EPOCHS": "1"}
TESTED = {"c_mu", "order_floor", "alpha_min", "retrain"}


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    old = {k: os.environ.get(k) for k in (*ENV, "NVDP_CACHE_DIR")}
    os.environ.update(ENV, NVDP_CACHE_DIR=str(tmp_path_factory.mktemp("nvdp_hints_cache")))
    torch.set_num_threads(min(2, torch.get_num_threads()))
    try:
        settings = X.ExploreSettings.from_env()
        data, models = X.load_or_train(settings)
        states, y = data.split("test")
        yield settings, data, models, X.LiveEvaluator(models["clipped"], states, y)
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def test_every_hint_has_a_test_and_the_page_shows_only_these_hints():
    assert set(HINTS) == TESTED
    # the page and the sections it draws from ui/ (its tabs hold the explanations)
    page = "\n".join(p.read_text() for p in [ROOT / "app_pages" / "nvdp.py", *sorted((ROOT / "ui" / "nvdp").rglob("*.py"))])
    assert set(re.findall(r'hint\("(\w+)"\)', page)) == set(HINTS)
    # no hand-written "Try" outside the checked hints
    assert "Try:" not in page and "what to try" not in page.replace('"What this shows, and what to try"', "")
    with pytest.raises(KeyError, match="known: c_mu"):
        hint("nope")


def test_hint_c_mu_left_shrinks_more_centres_left_end_99_right_end_1(tiny):
    settings, _, _, live = tiny
    lo, hi = X.mu_norm_range(live.raw)
    base = settings.train_clip
    grid = np.linspace(hi, lo, 6)
    fracs = []
    for c in grid:
        _, stats = live.raw.clip(ClipConfig(**{**base.to_dict(), "C_mu": float(c)}))
        fracs.append(stats.frac_mu)
    assert all(b >= a for a, b in zip(fracs, fracs[1:])), fracs  # moving left never shrinks fewer
    assert fracs[-1] >= 0.99 and fracs[0] <= 0.01, fracs
    assert fracs[-1] > fracs[0]


def test_hint_order_floor_rises_and_raises_more_blurs(tiny):
    settings, _, _, live = tiny
    base = settings.train_clip.to_dict()
    orders = (1.01, 1.1, 1.5, 2.0, 3.0)
    floors = [sigma_floor(o) for o in orders]
    assert all(b > a for a, b in zip(floors, floors[1:]))
    fr = [live.raw.clip(ClipConfig(**{**base, "renyi_order": o}))[1].frac_sigma for o in orders]
    assert all(b >= a for a, b in zip(fr, fr[1:])), fr
    assert fr[-1] > fr[0]


def _length_mismatch_pairs(live, n):
    lengths = live.raw.mask[:n].sum(1).numpy()
    i, j = np.triu_indices(n, 1)
    return int((lengths[i] != lengths[j]).sum())


def test_hint_alpha_min_above_threshold_leaves_only_length_pairs_infinite(tiny):
    settings, _, _, live = tiny
    lam, a_max = 1.1, 1.0
    thr = finite_alpha_min(a_max, lam, margin=0.0)
    n = min(DEFAULT_PROTOCOL.n_eval, live.n)
    mismatched = _length_mismatch_pairs(live, n)
    assert mismatched > 0  # the tiny test split has sentences of different lengths
    above = live.evaluate(ClipConfig(enabled=True, C_mu=5.0, alpha_min=thr + 0.01, alpha_max=a_max, renyi_order=lam,
                                     sigma_max=0.99))
    assert above.rd_exact.n_inf == mismatched
    # exactly the different-length pairs are the infinite ones
    lengths = live.raw.mask[:n].sum(1).numpy()
    pi = above.rd_exact.pair_index
    assert np.array_equal(np.isinf(above.rd_exact.values), lengths[pi[:, 0]] != lengths[pi[:, 1]])
    # without the guarantee settings the count can only be larger, never smaller
    loose = live.evaluate(ClipConfig(enabled=True, C_mu=5.0, alpha_min=0.0, alpha_max=a_max, renyi_order=lam))
    assert loose.rd_exact.n_inf >= mismatched


def test_hint_retrain_trains_a_clipped_model_with_the_sliders_and_caches_it(tiny):
    settings, data, _, _ = tiny
    at = new_app("nvdp", timeout=300).run()
    at.slider(key="nvdp_C_mu").set_value(3.0).run()
    at.slider(key="nvdp_alpha_max").set_value(0.9).run()
    at.button(key="nvdp_retrain").click().run()
    assert not at.exception, [e.message for e in at.exception]
    tc = at.session_state["nvdp_train_clip"]
    assert tc["C_mu"] == 3.0 and tc["alpha_max"] == 0.9
    a_min = X.DEFAULT_TRAIN_CLIP.alpha_min  # the page's alpha_min slider starts at the default training clipping's
    assert tc["alpha_min"] == a_min
    assert any(f"Clipped model trained with C_mu = 3, alpha in [{a_min:g}, 0.9]" in c.value for c in at.caption)
    new = X.ExploreSettings.from_env(train_clip=ClipConfig.from_dict(tc))
    assert X.cached_models_exist(new)
    _, models = X.load_or_train(new)  # from the disk cache: no training
    assert models["clipped"].clip.C_mu == 3.0 and models["clipped"].clip.alpha_max == 0.9
    # and the page shows the c_mu hint's promise through its own metric
    lo = at.slider(key="nvdp_C_mu").min
    at.slider(key="nvdp_C_mu").set_value(lo).run()
    val = {m.label: m.value for m in at.metric}["Tokens clipped"]
    assert int(val.rstrip("%")) >= 99
