"""Issue 39 (privacy round 4): labels that survive every mode, and what each figure really is.

Item 6: a bound taken from the private rows (``"private"`` options) makes every figure derived from it a
non-private diagnostic (it was labelled "public", and the coefficients "dp"); with ``sampler="opendp"`` the
ledger's total shows the epsilon OpenDP certifies. Items 3 and 4 (the verdict, presenter mode) and the unit of
privacy are below.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from engine.privacy.labels import DIAGNOSTIC, DP, PUBLIC

from conftest import new_app  # the harness: tests/conftest.py


def _reg(n=200, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = X @ np.array([1.0, -1.0, 0.5]) + 0.3 * rng.normal(size=n)
    return X, y, X[:60] * 1.01, y[:60]


@pytest.mark.parametrize("cls, option", [("PMTRidge", "response_bound"), ("DPRidge", "clip_radius"),
                                         ("DPRidge", "response_bound"), ("DPGDRidge", "clip_norm")])
def test_a_private_bound_is_not_labelled_public_and_nothing_is_labelled_dp(cls, option):
    import engine.pmt as M
    from engine.privacy import PrivacyLeakWarning

    X, y, Xq, yq = _reg()
    kw = {"n_steps": 5} if cls == "DPGDRidge" else {}
    with pytest.warns(PrivacyLeakWarning):
        est = getattr(M, cls)(epsilon=1.0, random_state=0, **{option: "private"}, **kw).fit(X, y, Xq, yq)
    lab = est.report_.privacy
    assert est.report_.extra["private_bounds"] == [option]
    bound = "B_y" if option == "response_bound" else "radius"
    assert lab[bound] == DIAGNOSTIC and lab["noise_scales"] == DIAGNOSTIC and lab["sensitivities"] == DIAGNOSTIC
    assert lab["releases"] == DIAGNOSTIC
    assert DP not in lab.values()
    assert lab["epsilon"] == PUBLIC and lab["extra.private_bounds"] == PUBLIC  # the settings stay public
    # the same estimator with a user bound: the labels are the usual ones (a user number is public)
    ok = getattr(M, cls)(epsilon=1.0, random_state=0, **{option: 2.0}, **kw).fit(X, y, Xq, yq)
    assert ok.report_.privacy[bound] == PUBLIC and "private_bounds" not in ok.report_.extra
    assert ok.report_.privacy["kappa_noisy"] in (DP, DIAGNOSTIC)


def test_the_oracle_radius_tuned_on_private_errors_is_a_diagnostic():
    from engine.pmt import DPRidgeOracle

    X, y, Xq, yq = _reg()
    lab = DPRidgeOracle(epsilon=1.0, n_trials=3, random_state=0).fit(X, y, Xq, yq).report_.privacy
    assert lab["radius"] == DIAGNOSTIC and lab["noise_scales"] == DIAGNOSTIC and DP not in lab.values()


def test_opendp_ledger_total_shows_what_opendp_certifies():
    """The issue's figures: at epsilon 1 the mu-GDP curve reads 0.915 for the releases OpenDP certifies at 1.0."""
    from engine.pmt import PMTRidge

    X, y, Xq, yq = _reg()
    est = PMTRidge(epsilon=1.0, sampler="opendp", random_state=0).fit(X, y, Xq, yq)
    rep = est.report_
    total = rep.releases[-1]
    assert total["epsilon"] == rep.extra["opendp_epsilon"] and "certified by OpenDP" in total["name"]
    assert total["epsilon"] <= 1.0 + 1e-9 and total["epsilon"] > rep.ledger.total_epsilon  # OpenDP's map is looser
    assert abs(total["epsilon"] - 1.0) < 0.02
    plain = PMTRidge(epsilon=1.0, random_state=0).fit(X, y, Xq, yq).report_.releases[-1]
    assert plain["name"] == "total (composed)" and plain["epsilon"] <= 1.0


# ------------------------------------------------------------------------------------------------
# items 3 and 4: the verdict is a non-private diagnostic everywhere; presenter mode keeps every label
# ------------------------------------------------------------------------------------------------
def test_verdict_is_a_non_private_diagnostic_and_says_so():
    import pandas as pd

    from engine.figures.verdict import VERDICT_NOTE, pmt_verdict

    h = pd.DataFrame({"method": ["PMT", "DP-RR", "Public-only"], "median": [3.0, 9.0, 1.0]})
    v = pmt_verdict(h, metric_label="RMSE", lower_better=True, epsilon=1.0, n_priv=100, n_pub=20)
    assert v.privacy == DIAGNOSTIC and v.labelled_text.startswith("[non-private diagnostic] The 20 public rows")
    assert "held-out private rows" in VERDICT_NOTE


def test_report_labels_the_verdict_and_states_the_unit_of_privacy():
    from engine.figures.report import html_report
    from engine.figures.verdict import VERDICT_NOTE

    out = html_report(title="t", verdict=("PMT wins.", "good"), compress=False)
    assert "id='verdict-label'" in out and ">non-private diagnostic</span> PMT wins." in out
    assert VERDICT_NOTE.split(":")[0] in out


def test_unit_of_privacy_line_is_computed_from_mu():
    from engine import privacy as P
    from engine.privacy.labels import unit_of_privacy

    mu = P.gdp_mu(1.0, 1e-5)
    line = unit_of_privacy(mu)
    assert f"k x {mu:.3g}" in line and "one row = one person" in line and "replace-one" in line
    assert "add/remove" in unit_of_privacy(neighbouring="add-remove")
    with pytest.raises(ValueError):
        unit_of_privacy(neighbouring="swap")


def test_cli_prints_the_unit_of_privacy(capsys, tmp_path):
    import json as _json

    from engine.cli import main as cli_main

    rc = cli_main(["pmt", "--dataset", "wine-red", "--epsilon", "1", "--seeds", "2", "--methods", "pmt", "public-only"])
    out = capsys.readouterr().out
    assert rc == 0 and out.splitlines()[1].startswith("Unit of privacy: one row = one person")
    rc = cli_main(["pmt", "--dataset", "wine-red", "--epsilon", "1", "2", "--seeds", "2", "--methods", "pmt", "--json"])
    payload = _json.loads(capsys.readouterr().out)
    assert payload["settings"]["unit_of_privacy"].startswith("Unit of privacy")
    assert payload["settings"]["privacy"]["unit_of_privacy"] == PUBLIC
    assert "k times the budget's mu" in payload["settings"]["unit_of_privacy"]  # two epsilons: no single mu


@pytest.mark.parametrize("presenter", [False, True])
def test_page_keeps_every_privacy_label_in_both_modes(presenter):
    """Presenter mode used to hide the "n is public" caption and the "non-private diagnostic" badge while the
    verdict and the error numbers stayed; now both modes show the unit of privacy, the neighbouring relation,
    the verdict's label and the badge."""
    at = new_app("pmt", timeout=240, query={"seeds": "2"}, presenter=presenter).run()
    assert not at.exception, at.exception
    captions = " ".join(c.value for c in at.caption)
    markdown = " ".join(m.value for m in at.markdown)
    assert "Unit of privacy: one row = one person" in captions
    assert "n is public" in captions
    assert "non-private diagnostic" in captions  # the badge under the numbers
    assert ":gray-badge[non-private diagnostic] this sentence compares errors on held-out private rows" in captions
    assert markdown  # the verdict sentence itself
