"""Training, evaluation, save/load, encoder cache and diagnostics of the NVDP engine.

Most tests use tiny synthetic token states; one test trains on real all-MiniLM-L6-v2 states of a
600-sentence subset of the UCI sentiment sentences (encoding cached under .cache/nvdp).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from engine.nvdp.clipping import ClipConfig
from engine.nvdp.diagnostics import RunDiagnostics, posthoc_clip, run_diagnostics
from engine.nvdp.encoder import TokenStates, encode_sentences, load_sentiment_sentences, split_indices
from engine.nvdp.layer import NVIBConfig
from engine.nvdp.training import TrainingCancelled, evaluate, load_trained, save_trained, train_nvdp

TINY = NVIBConfig(d=16, n_heads=2, ffn_dim=32)


@pytest.fixture(autouse=True, scope="module")
def _one_thread():
    """Tiny models run fastest single-threaded (and the CI box has 2 shared cores); restored afterwards."""
    old = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(old)


def _synthetic(n=240, L=6, d=16, seed=0):
    """Labels carried by the sign of a direction in the token states (linearly separable on average)."""
    g = torch.Generator().manual_seed(seed)
    y = torch.randint(0, 2, (n,), generator=g)
    h = torch.randn(n, L, d, generator=g)
    h[:, :, :4] += (2 * y[:, None, None].float() - 1) * 1.0
    lengths = torch.randint(2, L + 1, (n,), generator=g)
    mask = torch.arange(L)[None, :] < lengths[:, None]
    return TokenStates(h, mask), y.numpy()


@pytest.fixture(scope="module")
def tiny_run():
    states, y = _synthetic()
    tr, va, te = np.arange(160), np.arange(160, 200), np.arange(200, 240)
    trained = train_nvdp(states.subset(tr), y[tr], val_states=states.subset(va), val_labels=y[va], kl_weight=1e-2,
                         clip=ClipConfig(enabled=True, C_mu=2.0), seed=0, epochs=5, lr=1e-2, batch_size=32, config=TINY)
    return trained, states.subset(te), y[te]


def test_training_learns_synthetic_signal(tiny_run):
    trained, st, y = tiny_run
    ev = evaluate(trained, st, y, seed=0)
    assert ev.accuracy >= 0.85, ev.accuracy
    assert 1 <= trained.best_epoch <= 5 and len(trained.history) >= trained.best_epoch
    assert trained.history[0]["kl_scale"] > trained.history[-1]["kl_scale"] >= 0.0  # linear decay 1 -> 0
    assert ev.probs.shape == (40, 2) and np.allclose(ev.probs.sum(1), 1, atol=1e-5)
    assert ev.nan_count == 0 and ev.inf_count == 0
    # eval posteriors: full padded length + prior, clipped ones obey the rules
    assert ev.raw.mu.shape == (40, 7, 16) and ev.post.mu.shape == (40, 7, 16)
    assert float(torch.linalg.vector_norm(ev.post.mu, dim=-1).max()) <= 2.0 + 1e-5
    assert torch.equal(ev.raw.mask[:, 1:], st.mask)


def test_evaluate_is_seeded(tiny_run):
    trained, st, y = tiny_run
    a, b, c = (evaluate(trained, st, y, seed=s) for s in (3, 3, 4))
    assert np.array_equal(a.probs, b.probs)
    assert not np.array_equal(a.probs, c.probs), "different seeds draw different posterior samples"
    state = torch.random.get_rng_state()
    evaluate(trained, st, y, seed=5)
    assert torch.equal(state, torch.random.get_rng_state()), "evaluate must not touch the global generator"


def test_same_seed_same_model_different_seed_differs():
    states, y = _synthetic(n=80)
    kw = dict(kl_weight=0.1, epochs=1, config=TINY, batch_size=16)
    m1 = train_nvdp(states, y, seed=1, **kw)
    m2 = train_nvdp(states, y, seed=1, **kw)
    m3 = train_nvdp(states, y, seed=2, **kw)
    w = lambda m: m.model.nvib.mu_proj.weight.detach()  # noqa: E731
    assert torch.equal(w(m1), w(m2))
    assert not torch.equal(w(m1), w(m3))


def test_save_load_round_trip(tiny_run, tmp_path):
    trained, st, y = tiny_run
    save_trained(trained, tmp_path / "m")
    loaded = load_trained(tmp_path / "m")
    assert loaded.clip == trained.clip and loaded.kl_weight == trained.kl_weight
    assert loaded.best_epoch == trained.best_epoch
    a = evaluate(trained, st, y, seed=11)
    b = evaluate(loaded, st, y, seed=11)
    assert np.array_equal(a.probs, b.probs)
    assert torch.equal(a.post.mu, b.post.mu)
    with pytest.raises(FileNotFoundError, match="model.pt"):
        load_trained(tmp_path / "missing")


def test_progress_callback_and_cancel():
    states, y = _synthetic(n=64)
    seen = []
    train_nvdp(states, y, kl_weight=0.0, epochs=2, config=TINY, progress=lambda f, m: seen.append((f, m)))
    fr = [f for f, _ in seen]
    assert fr == sorted(fr) and fr[-1] == 1.0 and all(0 <= f <= 1 for f in fr)
    with pytest.raises(TrainingCancelled):
        train_nvdp(states, y, kl_weight=0.0, epochs=3, config=TINY, progress=lambda f, m: False)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"kl_weight": -1.0}, "kl_weight"),
        ({"kl_weight": float("nan")}, "kl_weight"),
        ({"epochs": 0}, "epochs"),
        ({"lr": 0.0}, "lr"),
        ({"batch_size": 0}, "batch_size"),
    ],
)
def test_train_rejects_bad_settings(kwargs, match):
    states, y = _synthetic(n=20)
    base = {"kl_weight": 0.1, "config": TINY}
    base.update(kwargs)
    with pytest.raises(ValueError, match=match):
        train_nvdp(states, y, **base)


def test_train_rejects_bad_inputs():
    states, y = _synthetic(n=20)
    with pytest.raises(ValueError, match="labels"):
        train_nvdp(states, y[:-1], config=TINY)
    with pytest.raises(TypeError, match="TokenStates"):
        train_nvdp(states.states, y, config=TINY)
    with pytest.raises(ValueError, match="config.d"):
        train_nvdp(states, y, config=NVIBConfig(d=8, n_heads=2))
    with pytest.raises(TypeError, match="ClipConfig"):
        train_nvdp(states, y, config=TINY, clip={"C_mu": 1.0})


def test_posthoc_clipping_and_diagnostics(tiny_run):
    trained, st, y = tiny_run
    ev = evaluate(trained, st, y, clip=ClipConfig(enabled=False), seed=0)
    cfg = ClipConfig(enabled=True, C_mu=0.5, alpha_max=0.8)
    clipped, stats = posthoc_clip(ev.raw, cfg)
    assert float(torch.linalg.vector_norm(clipped.mu, dim=-1).max()) <= 0.5 + 1e-5
    assert stats.frac_mu > 0
    diag = run_diagnostics(ev.raw, cfg, accuracy=ev.accuracy, n_rd=20)
    assert isinstance(diag, RunDiagnostics)
    assert diag.rd_exact_n_pairs == 190 and diag.n_rd_inputs == 20
    assert diag.clip_stats["frac_mu"] == pytest.approx(stats.frac_mu)
    assert diag.bdp_epsilon >= 10.46 or np.isinf(diag.bdp_epsilon)
    before, after = diag.distributions["before"], diag.distributions["after"]
    assert before["mu_norm"].max() > 0.5 >= after["mu_norm"].max() - 1e-5
    assert len(before["alpha"]) == int(ev.raw.mask[:, 1:].sum())
    d = diag.to_dict()
    assert "distribution_quantiles" in d and "rd_paper_max" in d
    assert "accuracy" in diag.summary()
    # tighter clipping never loosens the exact bound over the same pairs
    from engine.nvdp.protocol import EvalProtocol

    # the default guarantee form is strict about padding: sentences of different lengths are told apart
    strict = run_diagnostics(ev.raw, ClipConfig.finite(C_mu=2.0), n_rd=20)
    assert strict.rd_exact_n_inf > 0 and not np.isfinite(strict.rd_exact_max)
    # the bound of a length-hiding mechanism (padding "prior") is finite under ClipConfig.finite
    hiding = EvalProtocol(padding="prior")
    loose = run_diagnostics(ev.raw, ClipConfig.finite(C_mu=2.0), n_rd=20, protocol=hiding)
    tight = run_diagnostics(ev.raw, ClipConfig.finite(C_mu=0.2), n_rd=20, protocol=hiding)
    assert np.isfinite(loose.rd_exact_max) and tight.rd_exact_max < loose.rd_exact_max
    with pytest.raises(ValueError, match="clip differs"):
        run_diagnostics(ev, cfg)
    with pytest.raises(TypeError, match="EvalResult or Posteriors"):
        run_diagnostics(np.zeros(3))


# ----------------------------------------------------------------------------- encoder and real data


def test_encoder_rejects_bad_input():
    with pytest.raises(ValueError, match="empty"):
        encode_sentences([])
    with pytest.raises(TypeError, match="str"):
        encode_sentences("just one string")
    with pytest.raises(TypeError, match=r"sentences\[1\]"):
        encode_sentences(["ok", 3])
    with pytest.raises(ValueError, match="max_length"):
        encode_sentences(["ok"], max_length=1)


def test_split_indices_stratified_and_seeded():
    y = np.repeat([0, 1], 1500)
    tr, va, te = split_indices(y, seed=0)
    assert (len(tr), len(va), len(te)) == (2000, 500, 500)
    assert len(np.intersect1d(tr, va)) == 0 and len(np.intersect1d(tr, te)) == 0
    assert y[te].mean() == pytest.approx(0.5, abs=0.01)
    tr2, _, _ = split_indices(y, seed=0)
    tr3, _, _ = split_indices(y, seed=1)
    assert np.array_equal(tr, tr2) and not np.array_equal(tr, tr3)
    with pytest.raises(ValueError, match="sizes"):
        split_indices(y, sizes=(10, 10, 10))


@pytest.fixture(scope="module")
def real_subset():
    sentences, labels = load_sentiment_sentences()
    assert len(sentences) == 3000 and set(np.unique(labels)) == {0, 1}
    rng = np.random.default_rng(0)
    idx = np.sort(rng.choice(3000, size=600, replace=False))
    sub = [sentences[i] for i in idx]
    return sub, labels[idx]


def test_encoder_cache_and_offline(real_subset, monkeypatch, tmp_path):
    import engine.nvdp.encoder as enc

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("NVDP_CACHE_DIR", str(tmp_path))
    sents = real_subset[0][:8]
    a = enc.encode_sentences(sents, max_length=24)
    files = list(tmp_path.glob("*.pt"))
    assert len(files) == 1 and files[0].stem == a.key
    assert a.states.shape == (8, 24, 384) and a.mask.dtype == torch.bool
    assert bool(a.mask[:, 0].all()) and bool((~a.mask).any())
    b = enc.encode_sentences(sents, max_length=24)
    assert torch.equal(a.states, b.states) and b.key == a.key
    c = enc.encode_sentences(sents, max_length=32)
    assert c.key != a.key and len(list(tmp_path.glob("*.pt"))) == 2
    # frozen encoder: the same sentence gives the same states in any batch
    d = enc.encode_sentences(sents[:1], max_length=24, use_cache=False)
    assert torch.allclose(d.states[0], a.states[0], atol=2e-2)


def test_real_sentences_short_training_beats_chance(real_subset):
    sentences, labels = real_subset
    states = encode_sentences(sentences)  # cached under .cache/nvdp after the first run
    tr, va, te = split_indices(labels, seed=0, sizes=(400, 100, 100))
    trained = train_nvdp(states.subset(tr), labels[tr], val_states=states.subset(va), val_labels=labels[va],
                         kl_weight=1e-2, clip=ClipConfig(enabled=True), seed=0, epochs=3)
    ev = evaluate(trained, states.subset(te), labels[te], seed=0)
    # Measured 0.87 on this split (100 test sentences); chance is 0.5.
    assert ev.accuracy >= 0.7, ev.accuracy
    assert ev.nan_count == 0


def test_non_finite_gradient_steps_are_skipped_and_counted(monkeypatch):
    import engine.nvdp.training as T

    real = T.kl_dirichlet
    calls = {"n": 0}

    def poisoned(post, *a, **k):
        calls["n"] += 1
        out = real(post, *a, **k)
        if calls["n"] == 1:  # value 0, gradient NaN (d sqrt(x)/dx at 0 times 0)
            out = out + torch.sqrt(post.alpha.sum(-1) * 0.0)
        return out

    monkeypatch.setattr(T, "kl_dirichlet", poisoned)
    states, y = _synthetic(n=64)
    trained = train_nvdp(states, y, kl_weight=1.0, epochs=1, config=TINY, batch_size=16)
    assert trained.nan_losses == 1
    assert all(bool(torch.isfinite(p).all()) for p in trained.model.parameters())
