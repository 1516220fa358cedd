"""Every sentence the product shows about clipping is true of the shipped models.

The facts are the shipped per-seed figures (assets/nvdp/seeds.json) and the training-drift trace
(assets/nvdp/drift_trace.json). The sentences are read from where the page, Home, the README and
docs/specs/NVDP.md take them; :func:`engine.nvdp.claims.check_text` must find nothing false in them, and must
find the planted false sentences false.
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import pytest

from engine.nvdp import claims as C
from engine.nvdp import drift as D
from engine.nvdp.bundled import seed_summary
from engine.nvdp.headline import seed_headline

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def facts():
    return C.shipped_facts()


def page_texts() -> dict:
    """Where the page, Home and the drift tab take their sentences about clipping from."""
    from ui.nvdp.parts import INTRO

    texts = {"NVDP introduction": INTRO, "Home card": C.home_clipping_sentence(),
             "seed summary": seed_headline(seed_summary()), "drifted checkpoint": D.release_sentence(D.drifted_figures())}
    try:
        trace = D.load_trace()
    except FileNotFoundError:
        return texts
    return {**texts, "drift lead": D.drift_lead(trace), "drift note": D.drift_note(trace)}


def test_the_pages_sentences_are_true_of_the_shipped_models(facts):
    texts = page_texts()
    for where, text in texts.items():
        assert text, where
        assert C.check_text(text, facts) == [], where
    intro = texts["NVDP introduction"]
    live = facts["live"]
    # the introduction states the shipped figures and the restored epochs, computed
    assert f"worst case {live['clipped']['rd_max_all_pairs']:.3g} vs {live['unclipped']['rd_max_all_pairs']:.3g}" in intro
    assert f"epoch-{live['unclipped']['best_epoch']} checkpoint" in intro
    assert f"the clipped one epoch {live['clipped']['best_epoch']}" in intro


def test_readme_and_docs_make_no_false_claim_about_clipping(facts):
    for name in ("README.md", "docs/specs/NVDP.md"):
        text = (ROOT / name).read_text()
        about = [s for s in C.sentences(text) if re.search(r"clipp|make_nvdp_models|certified", s, re.I)]
        problems = [p for s in about for p in C.check_sentence(s, facts)]
        assert problems == [], (name, problems)


def test_no_page_source_says_the_retired_claims():
    """The literal phrasings the issue found false are gone from the page's sources."""
    files = [ROOT / "app_pages" / "home.py", ROOT / "app_pages" / "nvdp.py", *sorted((ROOT / "ui").glob("nvdp_*.py")),
             ROOT / "engine" / "figures" / "verdict.py", ROOT / "engine" / "nvdp" / "headline.py"]
    for f in files:
        text = re.sub(r"\s+", " ", f.read_text())
        for phrase in ("tightens the privacy bound", "which tightens the RD", "reproduces them bit for bit",
                       "any two inputs, length hidden", "does not hold in every seed"):
            assert phrase not in text, (f.name, phrase)


PLANTED = [
    "Clipping tightens the privacy bound.",
    "On the shipped models, clipping lowers the worst case.",
    "Worst case 0.794 vs 0.648 (lower with clipping in 3 of 3).",
    "On the shipped models the worst case is {u} vs {c}.",
    "The shipped unclipped model is its run's epoch-{wrong_u} checkpoint.",
    "scripts/make_nvdp_models.py reproduces the models bit for bit.",
    "The certified bound is a guarantee for inputs with length hidden.",
]


@pytest.mark.parametrize("i", range(len(PLANTED)))
def test_planted_false_sentences_fail(facts, i):
    live = facts["live"]
    s = PLANTED[i].format(u=f"{live['unclipped']['rd_max_all_pairs']:.3g}", c=f"{live['clipped']['rd_max_all_pairs']:.3g}",
                          wrong_u=live["unclipped"]["best_epoch"] + 1)
    assert C.check_text(s, facts), s


def test_sentences_follow_the_numbers_not_a_script(facts):
    """Swap the arms: the computed sentences say the opposite direction and still check out."""
    swapped = copy.deepcopy(facts)
    for r in swapped["per_seed"]:
        r["clipped"], r["unclipped"] = r["unclipped"], r["clipped"]
    swapped["live"] = next(r for r in swapped["per_seed"] if r["seed"] == facts["live"]["seed"])
    swapped["lower"] = {m: sum(float(r["clipped"][m]) < float(r["unclipped"][m]) for r in swapped["per_seed"])
                        for m in swapped["lower"]}
    a, b = C.clipping_sentence(facts), C.clipping_sentence(swapped)
    assert a != b
    assert C.check_text(b, swapped) == [] and C.check_text(a, swapped) != []
    raises = float(facts["live"]["clipped"]["rd_max_all_pairs"]) > float(facts["live"]["unclipped"]["rd_max_all_pairs"])
    assert ("training with clipping raises the worst case" in a) == raises
    assert ("training with clipping lowers the worst case" in b) == raises


def test_drifted_checkpoint_live_release_clipping():
    """The shipped drifted checkpoint evaluated live (what the Training drift tab shows): clipping at release
    with the training clipping lowers the worst case about 2x and keeps the accuracy within 1 point, as
    recorded in its figures.json (within 5 % on another CPU)."""
    import warnings

    from engine.nvdp.bundled import load_bundled, load_model
    from engine.nvdp.clipping import ClipConfig
    from engine.nvdp.explore_settings import DEFAULT_TRAIN_CLIP, ExploreSettings
    from engine.nvdp.posthoc import LiveEvaluator
    from engine.nvdp.protocol import DEFAULT_PROTOCOL

    data, _ = load_bundled(ExploreSettings())
    states, y = data.split("test")
    ev = LiveEvaluator(load_model(D.drifted_dir()), states, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        r0 = ev.evaluate(ClipConfig(enabled=False), protocol=DEFAULT_PROTOCOL)
        r1 = ev.evaluate(DEFAULT_TRAIN_CLIP, protocol=DEFAULT_PROTOCOL)
    fig = D.drifted_figures()
    assert r0.rd_paper.max_unfiltered == pytest.approx(fig["unclipped"]["rd_max_all_pairs"], rel=0.05)
    assert r1.rd_paper.max_unfiltered == pytest.approx(fig["clipped_at_release"]["rd_max_all_pairs"], rel=0.05)
    assert r0.accuracy == pytest.approx(fig["unclipped"]["accuracy"], abs=0.01)
    assert r1.accuracy == pytest.approx(fig["clipped_at_release"]["accuracy"], abs=0.01)
    # the insurance: a much lower worst case, no accuracy lost
    assert r0.rd_paper.max_unfiltered / r1.rd_paper.max_unfiltered > 1.8
    assert r1.accuracy >= r0.accuracy - 0.01
    assert "times lower" in D.release_sentence(fig)
