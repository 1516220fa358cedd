"""The PMT page's noise banner and the verdict agree: same response form, never "public-only is better" while the
verdict (from the same evaluation) has PMT winning (issue 37 follow-up)."""

from __future__ import annotations

import math

import pytest

from engine.figures import pmt as plots
from engine.figures.verdict import Verdict, contradictions
from ui.common.verdict import pmt_verdict
from ui.pmt.compute import core as C
from ui.pmt.compute import view as V


def _view(data="ccpp", **state):
    """The page's view with its default settings (``state`` overrides): spec, prep, diagnostics, the chosen
    epsilon's sweep, its headline rows, the verdict and the warnings as the page shows them."""
    from engine.datasets import load_dataset

    spec = C.spec_from_state({"data": data, **state}, task="regression")
    prep = C.prepare(load_dataset(data), standardize=bool(spec["standardize"]), n_pub=int(spec["n_pub"]),
                     split_seed=int(spec["split_seed"]))
    point = C.sweep(prep, C.sweep_spec(spec, "epsilon", [spec["epsilon"]]))
    choice = V.Choice(spec)
    diag = V.Diagnostics.of(C.diagnostics(prep, spec), choice)
    res = V.PMTView(choice=choice, data=V.DataInUse(ds=None, public_ds=None, prep=prep, data_key="test",
                                                    npub_grid=None),
                    results=V.Results(eps=point, eps_point=point), diag=diag,
                    warnings=tuple(C.advisories(prep, diag.values, spec["delta"])))
    head = plots.headline_table(point, metric="rmse", epsilon=spec["epsilon"])
    v = pmt_verdict(res, "rmse", head)
    return res, v, C.page_warnings(res, v)


def test_default_ccpp_view_verdict_and_advisories_agree_and_a_planted_claim_fails():
    res, v, warns = _view()
    assert res.spec["epsilon"] == 1.0 and res.diag.values["response"] == "joint"
    assert v.winner == "PMT", v.text  # the default (joint) PMT beats the 200 public rows on CCPP at epsilon 1
    plan = C.plan_for(res.prep, res.diag.values)
    assert plan.response == "joint"  # the planner reasons about the form that ran
    shown = [v.text, *warns, plan.conclusion()]
    assert contradictions(v, shown) == [], shown
    planted = "The planner predicts PMT would need about 33,113 private rows; until then the public-only fit (no " \
              "privacy cost) is the better estimate."
    assert contradictions(v, [*shown, planted]) == [planted]


@pytest.mark.parametrize("winner", ["PMT", None, "Public-only"])
def test_the_banner_is_worded_against_the_verdict(winner):
    """CCPP at epsilon 0.5: the joint release is noise-dominated and the planner's crossover (about 10,000 rows)
    lies above the 7,494 private rows, so the banner shows; its last clause follows the verdict's winner."""
    res, _, _ = _view(epsilon=0.5)
    prep, diag = res.prep, res.diag.values
    v = Verdict("...", "good" if winner == "PMT" else "neutral", winner=winner)
    text = C.noise_banner(prep, diag, v)
    assert text is not None and "joint (x, y) moment" in text and "X^T X" not in text
    plan = C.plan_for(prep, diag)
    assert plan.response == "joint" and plan.crossover_n > prep.n_priv
    assert f"about {plan.crossover_n:,} private rows" in text
    if winner == "Public-only":
        assert "is the better estimate" in text and contradictions(v, [text]) == []
    else:
        assert contradictions(v, [text]) == [], text
        assert ("already beats them" in text) == (winner == "PMT")
    # the page's list keeps its length and swaps only the banner
    worded = C.page_warnings(res, v)
    assert len(worded) == len(res.warnings) and text in worded


def test_the_banner_follows_a_clip_run():
    """With response = "clip" the banner and the planner reason about the clip form's X^T X."""
    res, v, warns = _view(epsilon=0.5, response="clip")
    assert res.diag.values["response"] == "clip"
    plan = C.plan_for(res.prep, res.diag.values)
    assert plan.response == "clip"
    text = C.noise_banner(res.prep, res.diag.values, v)
    assert text is None or "released X^T X" in text
    assert contradictions(v, [v.text, *warns]) == []
    from ui.pmt.compute.advice import _noise_dominance

    nd, _, form = _noise_dominance(res.prep, res.diag.values)
    assert form == "clip" and math.isfinite(nd.noise_scale)
    from ui.pmt.planner import plan_and_answer

    tab, _ = plan_and_answer(res.prep, res.diag.values)  # the Planner tab plans the same form as the banner
    assert tab.response == "clip" and tab.crossover_n == plan.crossover_n


def test_the_readme_quotes_what_the_product_prints():
    """README's example sentences (How to read the first screen) are the product's on those views."""
    from pathlib import Path

    readme = " ".join((Path(__file__).resolve().parents[2] / "README.md").read_text().split())
    _, v, _ = _view()
    assert v.text.split(", because")[0] in readme, v.text
    res, v05, warns = _view(epsilon=0.5)
    assert v05.text.split(":")[0] in readme, v05.text
    banner = next(w for w in warns if "noise-dominated" in w)
    quoted = banner[banner.index("The planner predicts"):banner.index(" alone") + len(" alone")]
    assert quoted in readme, quoted
