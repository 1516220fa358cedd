"""engine.figures.nvdp: the NVDP explorer's figure builders (pure Plotly)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

from engine.figures import nvdp as P


def _vlines(fig):
    return sorted(float(s.x0) for s in fig.layout.shapes if s.x0 == s.x1 and s.xref not in (None, "paper"))


def test_rd_distribution_shares_counts_and_rules():
    rng = np.random.default_rng(0)
    clipped = np.concatenate([rng.lognormal(-2, 0.5, 97), [np.inf, np.inf, np.nan]])
    unclipped = rng.lognormal(0, 0.5, 50)
    fig = P.rd_distribution_figure({"clipped": clipped, "unclipped": unclipped}, form="exact", bins=20)
    assert isinstance(fig, go.Figure) and len(fig.data) == 2
    c, u = fig.data
    assert c.line.color == "#0072B2" and u.line.color == "#D55E00"
    # the step curve holds each bin's share twice; the drawn shares add up to the finite fraction
    assert np.sum(c.y[::2]) == pytest.approx(97 / 100)
    assert np.sum(u.y[::2]) == pytest.approx(1.0)
    assert "2 infinite" in c.name and "1 zero or NaN" in c.name and "max infinite" in c.name
    assert "max" in u.name and "infinite" not in u.name
    # one rule per series at its largest finite value
    assert _vlines(fig) == pytest.approx(sorted([np.nanmax(clipped[np.isfinite(clipped)]), unclipped.max()]))
    assert fig.layout.xaxis.type == "log"
    assert "nats" in fig.layout.xaxis.title.text


def test_rd_distribution_paper_units_and_errors():
    fig = P.rd_distribution_figure({"clipped": [0.02, 0.05]}, form="paper")
    assert "per position" in fig.layout.xaxis.title.text and "dimension-averaged" in fig.layout.title.text
    with pytest.raises(ValueError, match="series is empty"):
        P.rd_distribution_figure({})
    with pytest.raises(ValueError, match="form"):
        P.rd_distribution_figure({"a": [1.0]}, form="approx")
    with pytest.raises(ValueError, match="bins"):
        P.rd_distribution_figure({"a": [1.0]}, bins=1)
    # all-infinite input still draws (empty curve), and says so
    fig = P.rd_distribution_figure({"clipped": [np.inf, np.inf]})
    assert "2 infinite" in fig.data[0].name and np.sum(fig.data[0].y) == 0


def test_accuracy_figure_bars_history_and_validation():
    fig = P.accuracy_figure({"clipped": 0.81, "unclipped": 0.77}, {"clipped": [0.7, 0.8, 0.79], "unclipped": [0.6, 0.75]},
                            n_test=500)
    bars = fig.data[0]
    assert list(bars.x) == ["clipped", "unclipped"] and list(bars.text) == ["81.0%", "77.0%"]
    assert list(fig.data[1].x) == [1, 2, 3] and list(fig.data[2].y) == [0.6, 0.75]
    assert "500 sentences" in fig.layout.annotations[0].text
    assert any(s.y0 == 0.5 == s.y1 for s in fig.layout.shapes)  # chance rule
    with pytest.raises(ValueError, match=r"accuracy\['clipped'\] must lie in \[0, 1\]"):
        P.accuracy_figure({"clipped": 81.0})
    assert len(P.accuracy_figure({"clipped": 0.5}, chance=None).layout.shapes) == 0


def test_posterior_histograms_thresholds_and_fractions():
    rng = np.random.default_rng(1)
    before = {"mu_norm": rng.uniform(1, 10, 500), "sigma": rng.uniform(0.1, 1.4, 2000), "alpha": rng.uniform(0, 3, 500)}
    after = {"mu_norm": np.minimum(before["mu_norm"], 5.0), "sigma": np.clip(before["sigma"], 0.3015, 1.0),
             "alpha": np.clip(before["alpha"], 0.1, 1.0)}
    fr = {"frac_mu": 0.553, "frac_sigma": 0.15, "frac_sigma_high": 0.31, "frac_alpha_low": 0.03, "frac_alpha_high": 0.66}
    fig = P.posterior_histograms_figure(before, after, C_mu=5.0, sigma_min=0.3015, sigma_max=1.0, alpha_min=0.1,
                                        alpha_max=1.0, fractions=fr)
    assert len(fig.data) == 6
    assert _vlines(fig) == pytest.approx([0.1, 0.3015, 1.0, 1.0, 5.0])
    titles = [a.text for a in fig.layout.annotations]
    assert "55.3% of tokens shrunk" in titles[0]
    assert "15.0% raised" in titles[1] and "31.0% lowered" in titles[1]
    assert "66.0% lowered" in titles[2] and "3.0% raised" in titles[2]
    # before and after share the bins, so the overlay compares like with like; each series sums to 100 %
    assert list(fig.data[0].x) == list(fig.data[1].x)
    assert np.sum(fig.data[0].y) == pytest.approx(100.0) and np.sum(fig.data[5].y) == pytest.approx(100.0)
    # the share beyond C_mu before clipping equals the fraction of values above 5 (bin edges are aligned to the data)
    x0, y0 = np.asarray(fig.data[0].x), np.asarray(fig.data[0].y)
    assert np.sum(y0[x0 > 5.0 + fig.data[0].width]) <= 100 * np.mean(before["mu_norm"] > 5.0) + 1e-9
    # no thresholds -> no rules; the after series is optional
    bare = P.posterior_histograms_figure(before)
    assert len(bare.data) == 3 and _vlines(bare) == []
    with pytest.raises(ValueError, match="'alpha'"):
        P.posterior_histograms_figure({"mu_norm": [1.0], "sigma": [1.0]})


def test_inspector_figure_and_errors():
    t = pd.DataFrame({"token": ["(prior)", "[CLS]", "good", "[SEP]"], "alpha_before": [1.0, 0.5, 2.0, 0.7],
                      "alpha": [1.0, 0.5, 1.0, 0.7], "mu_norm_before": [0.0, 3.0, 8.0, 4.0],
                      "mu_norm": [0.0, 3.0, 5.0, 4.0], "clipped": ["", "", "mean, alpha high", ""]})
    fig = P.inspector_figure([t, t.iloc[:3]], C_mu=5.0, alpha_max=1.0)
    assert len(fig.data) == 8
    assert list(fig.data[0].x) == ["0:(prior)", "1:[CLS]", "2:good", "3:[SEP]"]
    assert list(fig.data[3].y) == [0.0, 3.0, 5.0, 4.0]  # sentence A, ||mu|| after
    assert len(fig.data[4].x) == 3
    assert sorted(float(s.y0) for s in fig.layout.shapes) == [1.0, 1.0, 5.0, 5.0]
    with pytest.raises(ValueError, match="two DataFrames"):
        P.inspector_figure([t])
    with pytest.raises(ValueError, match="two DataFrames"):
        P.inspector_figure([t, t.drop(columns="clipped")])


@pytest.mark.parametrize("x, out", [(np.inf, "infinite"), (np.nan, "n/a"), (0.5, "0.5"), (10.4663, "10.5"), (-np.inf, "-infinite")])
def test_fmt_bound(x, out):
    assert P.fmt_bound(x) == out


def _cmp(form, a, b):
    from types import SimpleNamespace as NS

    from engine.nvdp.headline import paired_comparison

    idx = np.stack([np.zeros(len(a), int), np.arange(1, len(a) + 1)], 1)
    return paired_comparison(NS(values=np.asarray(a, float), pair_index=idx, form=form),
                             NS(values=np.asarray(b, float), pair_index=idx, form=form))


def test_paired_figure_scatter_and_diff_count_the_same_pairs():
    paper = _cmp("paper", [0.1, 0.3, 0.2, np.inf], [0.2, 0.1, 0.4, 0.5])
    exact = _cmp("exact", [1.0, np.inf, 3.0], [2.0, np.inf, 1.0])
    fig = P.paired_figure([paper, exact], kind="scatter")
    pts = [t for t in fig.data if t.mode == "markers"]
    assert len(pts) == 2
    # only pairs finite on both sides are drawn, x = unclipped, y = clipped
    assert list(pts[0].x) == [0.2, 0.1, 0.4] and list(pts[0].y) == [0.1, 0.3, 0.2]
    assert list(pts[1].x) == [2.0, 1.0] and list(pts[1].y) == [1.0, 3.0]
    titles = [a.text for a in fig.layout.annotations]
    # counts of pairs where clipping lowers / raises the RD, and the infinite ones (clipped vs unclipped)
    assert "4 pairs, with clipping<br>lower on 2, higher on 2<br>infinite: 1 vs 0" in titles[0]
    assert "3 pairs, with clipping<br>lower on 1, higher on 1<br>infinite: 1 vs 1" in titles[1]
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.type == "log"
    diag = [t for t in fig.data if t.mode == "lines"]
    assert list(diag[0].x) == [0.1, 0.4] == list(diag[0].y)
    d = P.paired_figure([paper], kind="diff", label="clipped at release")
    assert np.allclose(d.data[0].x, [-0.1, 0.2, -0.2])
    assert "median -0.1" in d.layout.xaxis.title.text and "clipped at release" in d.layout.xaxis.title.text
    with pytest.raises(ValueError, match="kind must be"):
        P.paired_figure([paper], kind="violin")
    with pytest.raises(ValueError, match="empty"):
        P.paired_figure([])
