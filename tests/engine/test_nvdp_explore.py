"""engine.nvdp.explore: the NVDP explorer's cached model pair, post-hoc evaluation and sentence inspector.

A tiny model pair (60 sentences, 1 epoch) is trained once per module into a temporary
NVDP_CACHE_DIR; everything else reuses it.
"""

from __future__ import annotations

import argparse
import os
import shlex

import numpy as np
import pytest
import torch

from engine.nvdp import explore as X
from engine.nvdp.clipping import ClipConfig
from engine.nvdp.divergence import pairwise_rd_bound
from engine.nvdp.training import TrainingCancelled, evaluate

TINY = dict(n_sentences=60, epochs=1)


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    old = os.environ.get("NVDP_CACHE_DIR")
    path = tmp_path_factory.mktemp("nvdp_cache")
    os.environ["NVDP_CACHE_DIR"] = str(path)
    torch.set_num_threads(min(2, torch.get_num_threads()))
    try:
        yield path
    finally:
        if old is None:
            os.environ.pop("NVDP_CACHE_DIR", None)
        else:
            os.environ["NVDP_CACHE_DIR"] = old


@pytest.fixture(scope="module")
def pair(cache):
    settings = X.ExploreSettings(**TINY)
    assert not X.cached_models_exist(settings)
    seen = []
    data, models = X.load_or_train(settings, progress=lambda f, m: seen.append((f, m)))
    return settings, data, models, seen


def test_training_reports_progress_and_caches_both_models(pair):
    settings, data, models, seen = pair
    fr = [f for f, _ in seen]
    assert all(0.0 <= f <= 1.0 for f in fr) and fr == sorted(fr) and fr[-1] == pytest.approx(1.0)
    assert any("unclipped" in m for _, m in seen) and any("training the clipped" in m for _, m in seen)
    assert X.cached_models_exist(settings)
    assert models["unclipped"].clip.enabled is False
    assert models["clipped"].clip == settings.train_clip
    # the split: 2/3, 1/6, 1/6 of the 60 sentences, disjoint
    assert (len(data.train_idx), len(data.val_idx), len(data.test_idx)) == (40, 10, 10)
    assert not set(data.train_idx) & set(data.test_idx)
    # a second call loads the very same weights from disk
    _, again = X.load_or_train(settings)
    for which in ("clipped", "unclipped"):
        a, b = models[which].model.state_dict(), again[which].model.state_dict()
        assert all(torch.equal(a[k], b[k]) for k in a)


def test_unclipped_model_is_shared_across_training_clippings(pair):
    settings, data, *_ = pair
    other = X.ExploreSettings(**TINY, train_clip=ClipConfig(enabled=True, C_mu=2.0, alpha_min=0.2, alpha_max=2.0))
    assert X.models_dir(other, data.states.key, "unclipped") == X.models_dir(settings, data.states.key, "unclipped")
    assert X.models_dir(other, data.states.key, "clipped") != X.models_dir(settings, data.states.key, "clipped")
    assert not X.cached_models_exist(other)


def test_cancel_raises_and_leaves_no_model(pair):
    settings, data, *_ = pair
    other = X.ExploreSettings(**TINY, seed=7)
    with pytest.raises(TrainingCancelled):
        X.load_or_train(other, data=data, progress=lambda f, m: False if "training" in m else True)
    assert not (X.models_dir(other, data.states.key, "unclipped") / "model.pt").exists()


def test_posthoc_matches_the_engine_diagnostics_and_respects_the_caps(pair):
    from engine.nvdp.diagnostics import run_diagnostics

    settings, data, models, _ = pair
    states, y = data.split("test")
    clip = ClipConfig(enabled=True, C_mu=1.5, alpha_min=0.2, alpha_max=0.8, renyi_order=1.1, sigma_max=1.0)
    res = X.posthoc_evaluate(models["unclipped"], states, y, clip, seed=3)
    after = res.distributions["after"]
    assert after["mu_norm"].max() <= 1.5 + 1e-5
    assert after["alpha"].min() >= 0.2 - 1e-7 and after["alpha"].max() <= 0.8 + 1e-7
    assert after["sigma"].min() >= clip.sigma_min - 1e-6 and after["sigma"].max() <= 1.0 + 1e-6
    assert res.rd_exact.n_pairs == 10 * 9 // 2
    # accuracy is that of evaluate() with the same clipping and seed
    assert res.accuracy == evaluate(models["unclipped"], states, y, clip=clip, seed=3).accuracy
    # with every test sentence in both sets, the figures equal run_diagnostics' (CLI report) ones
    ev = evaluate(models["unclipped"], states, y, clip=clip, seed=3)
    diag = run_diagnostics(ev)
    assert res.rd_exact.max == pytest.approx(diag.rd_exact_max, rel=1e-6)
    assert res.rd_exact.mean == pytest.approx(diag.rd_exact_mean, rel=1e-6)
    assert res.rd_paper.max == pytest.approx(diag.rd_paper_max, rel=1e-6)
    assert res.bdp.epsilon == pytest.approx(diag.bdp_epsilon, rel=1e-6)
    assert res.bdp_paper.epsilon == pytest.approx(diag.bdp_epsilon_paper, rel=1e-6)
    assert res.clip_stats.frac_mu == pytest.approx(diag.clip_stats["frac_mu"])


def test_posthoc_bounds_trimming_does_not_change_values(pair):
    settings, data, models, _ = pair
    states, _ = data.split("test")
    raw = X.raw_posteriors(models["unclipped"], states)
    post, _ = raw.clip(settings.train_clip)
    ex, pa, _, _ = X.posthoc_bounds(post, 1.1, n_rd=6, n_bdp=10)
    full = pairwise_rd_bound(post.mu[:6], post.sigma[:6], post.alpha[:6], post.mask[:6], renyi_order=1.1)
    np.testing.assert_allclose(ex.values, full.values, rtol=1e-5)
    assert ex.n_pairs == 15
    full_p = pairwise_rd_bound(post.mu, post.sigma, post.alpha, post.mask, renyi_order=1.1, form="paper")
    np.testing.assert_allclose(pa.values, full_p.values, rtol=1e-5)


def test_posthoc_rejects_bad_arguments(pair):
    _, data, models, _ = pair
    states, y = data.split("test")
    with pytest.raises(TypeError, match="clip must be a ClipConfig"):
        X.posthoc_evaluate(models["clipped"], states, y, {"C_mu": 1.0})
    from engine.nvdp.protocol import EvalProtocol

    with pytest.raises(ValueError, match="n_eval must be an int >= 2"):
        X.posthoc_evaluate(models["clipped"], states, y, ClipConfig(), protocol=EvalProtocol(n_eval=1))
    with pytest.raises(TypeError, match="protocol must be an EvalProtocol"):
        X.posthoc_evaluate(models["clipped"], states, y, ClipConfig(), protocol={"n_eval": 4})


def test_inspect_pair_identical_sentences_have_zero_bound_and_tables_follow_the_caps(pair):
    _, _, models, _ = pair
    clip = ClipConfig(enabled=True, C_mu=2.0, alpha_min=0.1, alpha_max=0.9, sigma_max=1.0)
    same = X.inspect_pair(models["clipped"], "Great phone.", "  Great phone. ", clip)
    assert same.rd_exact == pytest.approx(0.0, abs=1e-6) and same.rd_paper == pytest.approx(0.0, abs=1e-6)
    ins = X.inspect_pair(models["clipped"], "Great phone, I love it.", "Awful.", clip)
    a, b = ins.components
    assert list(a["token"][:2]) == ["(prior)", "[CLS]"] and a["token"].iloc[-1] == "[SEP]"
    assert len(a) > len(b)
    assert (a["mu_norm"] <= 2.0 + 1e-5).all()
    assert a["weight"].sum() == pytest.approx(1.0)
    assert ((a["alpha"].iloc[1:] >= 0.1 - 1e-7) & (a["alpha"].iloc[1:] <= 0.9 + 1e-7)).all()
    shrunk = a["mu_norm_before"] > 2.0
    assert (a.loc[shrunk, "clipped"].str.contains("mean")).all()
    assert ins.rd_exact == pytest.approx(max(ins.rd_forward, ins.rd_backward))
    assert ins.rd_exact > 0 and ins.rd_exact_unclipped > 0
    # the bound is symmetric in which sentence is A
    swapped = X.inspect_pair(models["clipped"], "Awful.", "Great phone, I love it.", clip)
    assert swapped.rd_exact == pytest.approx(ins.rd_exact, rel=1e-5)


@pytest.mark.parametrize("a, b, name", [("", "x", "sentence_a"), ("ok", "   ", "sentence_b")])
def test_inspect_pair_rejects_empty_sentences(pair, a, b, name):
    with pytest.raises(ValueError, match=f"{name} is empty"):
        X.inspect_pair(pair[2]["clipped"], a, b, ClipConfig())


def test_settings_validation_and_env(monkeypatch):
    with pytest.raises(ValueError, match="kl_weight"):
        X.ExploreSettings(kl_weight=-1.0)
    with pytest.raises(ValueError, match="epochs"):
        X.ExploreSettings(epochs=0)
    with pytest.raises(ValueError, match="n_sentences"):
        X.ExploreSettings(n_sentences=5)
    with pytest.raises(ValueError, match="train_clip"):
        X.ExploreSettings(train_clip=ClipConfig(enabled=False))
    monkeypatch.setenv("NVDP_PAGE_EPOCHS", "2")
    monkeypatch.setenv("NVDP_PAGE_N_SENTENCES", "90")
    s = X.ExploreSettings.from_env(seed=4)
    assert (s.epochs, s.n_sentences, s.seed, s.n_train) == (2, 90, 4, 1000)
    monkeypatch.setenv("NVDP_PAGE_EPOCHS", "two")
    with pytest.raises(ValueError, match="NVDP_PAGE_EPOCHS"):
        X.ExploreSettings.from_env()


def test_cli_command_parses_with_the_nvdp_cli():
    cli = pytest.importorskip("engine.cli.nvdp")
    parser = argparse.ArgumentParser()
    cli.register(parser.add_subparsers(dest="command"))
    s = X.ExploreSettings(kl_weight=0.1, seed=3, train_clip=ClipConfig(enabled=True, C_mu=4.2, alpha_min=0.15, alpha_max=1.5,
                                                                          renyi_order=1.2))
    args = parser.parse_args(shlex.split(X.cli_command(s))[3:])
    assert (args.kl_weight, args.seed, args.clip, args.C_mu, args.alpha_min, args.alpha_max, args.renyi_order) == (
        0.1, 3, True, 4.2, 0.15, 1.5, 1.2)
    assert (args.epochs, args.n_train, args.patience) == (s.epochs, s.n_train, s.patience)
    off = parser.parse_args(shlex.split(X.cli_command(s, ClipConfig(enabled=False)))[3:])
    assert off.clip is False and off.C_mu is None


def test_live_evaluator_reproduces_evaluate_exactly(pair):
    _, data, models, _ = pair
    states, y = data.split("test")
    live = X.LiveEvaluator(models["clipped"], states, y)
    for clip in (ClipConfig(enabled=False), ClipConfig(enabled=True, C_mu=1.0, alpha_min=0.3, alpha_max=0.6)):
        for seed in (0, 11):
            ev = evaluate(models["clipped"], states, y, clip=clip, seed=seed)
            acc, nan, inf = live.accuracy(clip, seed)
            assert acc == ev.accuracy and (nan, inf) == (ev.nan_count, ev.inf_count)
            post, stats = live.raw.clip(clip)
            assert torch.equal(post.mu, ev.post.mu) and torch.equal(post.alpha, ev.post.alpha)
            assert stats == ev.clip_stats


def test_page_and_cli_give_the_same_numbers_under_one_protocol(pair, capsys):
    """The page's engine path and ``python -m engine nvdp evaluate`` agree exactly."""
    import json

    from engine.cli import main
    from engine.nvdp.protocol import DEFAULT_PROTOCOL

    settings, data, models, _ = pair
    states, y = data.split("test")
    clip = settings.train_clip
    page = X.LiveEvaluator(models["clipped"], states, y).evaluate(clip, protocol=DEFAULT_PROTOCOL)
    model_dir = X.models_dir(settings, data.states.key, "clipped")
    rc = main(["nvdp", "evaluate", "--model-dir", str(model_dir), "--n-sentences", str(settings.n_sentences),
               "--split-seed", str(settings.split_seed), "--seed", "0", "--json", "--quiet"])
    assert rc == 0
    cli = json.loads(capsys.readouterr().out)
    assert cli["protocol"]["n_eval"] == DEFAULT_PROTOCOL.n_eval and cli["protocol"]["padding"] == "strict"
    assert cli["accuracy"] == page.accuracy
    for key, ours in (("rd_paper_max", page.rd_paper.max), ("rd_paper_mean", page.rd_paper.mean),
                      ("bdp_epsilon_paper", page.bdp_paper.epsilon), ("rd_exact_n_inf", page.rd_exact.n_inf),
                      ("rd_exact_n_pairs", page.rd_exact.n_pairs), ("bdp_paper_q", page.bdp_paper["q"])):
        theirs = cli[key]
        assert theirs == pytest.approx(ours, rel=1e-9, abs=1e-12) or (theirs is None and not np.isfinite(ours)), key
    assert page.rd_paper.n_pairs == 45 and page.bdp_paper["q"] == 1.0  # 10 test sentences: one batch, q = 16/10 -> 1
