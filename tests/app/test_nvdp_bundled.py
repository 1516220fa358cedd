"""The shipped default models (assets/nvdp): checksums, settings, loading, tamper detection, time estimate."""

from __future__ import annotations

import json
import math
import shutil

import pytest
import torch

from engine.nvdp import bundled as B
from engine.nvdp.explorer_models import ExploreData, ExploreSettings

from conftest import new_app  # the harness: tests/conftest.py


def test_bundle_checksums_and_settings_are_the_page_defaults():
    B.verify_bundle()
    assert B.bundled_settings().to_dict() == ExploreSettings().to_dict()
    assert B.bundled_matches(ExploreSettings())
    assert not B.bundled_matches(ExploreSettings(seed=1))
    assert not B.bundled_matches(ExploreSettings(epochs=1))
    meta = json.loads((B.ASSET_DIR / "settings.json").read_text())
    assert meta["data"]["n_train"] == 1000 and meta["data"]["n_val"] == 500 and meta["data"]["n_test"] == 500
    size = sum(p.stat().st_size for p in B.ASSET_DIR.rglob("*") if p.is_file())
    # two 1.28 M-parameter float32 heads (4.9 MiB each), the evaluation sentences' float16 encoder states
    # (5.9 MiB) and small JSON files
    # + the drifted checkpoint (assets/nvdp/drifted, one more 4.9 MiB head: the limit raised knowingly from 17 MiB)
    assert size < 23 * 2**20
    seeds = B.seed_summary()
    assert seeds["seeds"] == [0, 1, 2] and seeds["live_seed"] == 0 and len(seeds["per_seed"]) == 3
    assert seeds["clipping"]["clipped"] == ExploreSettings().train_clip.to_dict()


def test_bundled_models_load_with_their_training_clipping():
    un = B.load_model(B.ASSET_DIR / "unclipped")
    cl = B.load_model(B.ASSET_DIR / "clipped")
    assert not un.clip.enabled and cl.clip.enabled
    assert cl.clip.to_dict() == ExploreSettings().train_clip.to_dict()
    assert sum(p.numel() for p in cl.model.parameters()) == 1_284_227
    assert not torch.equal(un.model.classifier.weight, cl.model.classifier.weight)


def test_save_model_is_byte_identical_and_tampering_is_detected(tmp_path):
    copy = tmp_path / "nvdp"
    shutil.copytree(B.ASSET_DIR, copy)
    m = B.load_model(copy / "clipped")
    B.save_model(m, tmp_path / "again")
    assert (tmp_path / "again" / "model.safetensors").read_bytes() == (copy / "clipped" / "model.safetensors").read_bytes()
    raw = bytearray((copy / "clipped" / "model.safetensors").read_bytes())
    raw[-1] ^= 1
    (copy / "clipped" / "model.safetensors").write_bytes(bytes(raw))
    with pytest.raises(ValueError, match="clipped/model.safetensors does not match SHA256SUMS"):
        B.verify_bundle(copy)
    with pytest.raises(ValueError, match="does not match SHA256SUMS"):
        B.load_bundled(ExploreSettings(), directory=copy)


def test_eval_only_data_refuses_the_training_split():
    import numpy as np

    from engine.nvdp.encoder import TokenStates

    st = TokenStates(torch.zeros(2, 3, 4), torch.ones(2, 3, dtype=torch.bool))
    d = ExploreData(["a", "b", "c", "d"], np.array([0, 1, 0, 1]), st, np.array([0]), np.array([1]), np.array([2, 3]),
                    encoded_idx=np.array([2, 3]))
    s, y = d.split("test")
    assert s.n == 2 and y.tolist() == [0, 1]
    with pytest.raises(ValueError, match="the train sentences are not encoded here"):
        d.split("train")


def test_time_estimate_scales_with_the_measured_rates(tmp_path):
    (tmp_path / "timing.json").write_text(json.dumps({"seconds_per_batch": 0.5, "seconds_per_sentence_encoded": 0.1}))
    s = ExploreSettings()
    e = B.estimate_seconds(s, directory=tmp_path)
    assert e["encode"] == pytest.approx(300.0)  # 3,000 sentences x 0.1 s
    # 1,000 training sentences / 32 = 32 batches per epoch, plus the validation pass over 500 sentences in
    # batches of 256 (2, a third of a training batch each); 10 epochs x 2 models at most, 4 at least (patience 3)
    assert e["train"] == pytest.approx((32 + 2 / 3) * 10 * 2 * 0.5)
    assert e["train_min"] == pytest.approx((32 + 2 / 3) * 4 * 2 * 0.5)
    assert B.estimate_seconds(s, n_encode=0, n_models=1, directory=tmp_path)["encode"] == 0.0
    # an upload of 200 texts trains on 134 of them (not on the 1,000 of the bundled sentences' settings)
    up = B.estimate_seconds(s, n_texts=200, directory=tmp_path)
    assert up["n_train"] == 134 and up["n_val"] == 33 and up["encode"] == pytest.approx(20.0)
    assert up["train"] == pytest.approx((5 + 1 / 3) * 10 * 2 * 0.5)
    assert B.fmt_seconds_range(up["total_min"], up["total"]) == "about 41-73 s"


def test_page_uses_a_matching_bundle_and_retrains_here_on_request(tmp_path, monkeypatch):
    """A bundle of tiny models for the page's (tiny) settings: the page loads it (only the test sentences are
    encoded), says so, and "Retrain here" trains and caches a local pair instead."""
    from pathlib import Path


    from engine.nvdp import explore as X
    from engine.nvdp.explorer_models import select_sentences, train_model
    from engine.nvdp.encoder import encode_sentences

    monkeypatch.setenv("NVDP_PAGE_N_SENTENCES", "60")
    monkeypatch.setenv("NVDP_PAGE_EPOCHS", "1")
    monkeypatch.setenv("NVDP_CACHE_DIR", str(tmp_path / "cache"))
    settings = ExploreSettings.from_env()
    sentences, labels, tr, va, te = select_sentences(settings)
    states = encode_sentences([sentences[i] for i in list(tr) + list(va)], use_cache=False)
    n = len(tr)
    import numpy as np

    bundle = tmp_path / "bundle"
    for which in ("unclipped", "clipped"):
        m = train_model(settings, which, states.subset(np.arange(n)), labels[tr],
                        states.subset(np.arange(n, n + len(va))), labels[va])
        B.save_model(m, bundle / which)
    (bundle / "settings.json").write_text(json.dumps({"settings": settings.to_dict()}))
    B.write_sums(bundle)
    monkeypatch.setenv("NVDP_ASSET_DIR", str(bundle))
    assert X.cached_models_exist(settings) and not X.cached_models_exist(settings, use_bundled=False)

    import streamlit as st

    st.cache_data.clear()  # the page's process-wide caches may hold these tiny settings' data from another test
    st.cache_resource.clear()
    at = new_app("nvdp", timeout=300).run()
    assert not at.exception, [e.message for e in at.exception]
    caps = " ".join(c.value for c in at.caption)
    assert "Shipped models" in caps and "Models ready (shipped)" in caps
    assert at.metric
    # only the test sentences were encoded (one cache file of len(te) sentences)
    files = list((tmp_path / "cache").glob("*.pt"))
    assert len(files) == 1 and torch.load(files[0], weights_only=True)["n"] == len(te)
    at.button(key="nvdp_train_here").click().run()
    assert not at.exception, [e.message for e in at.exception]
    assert "Models ready (cached on disk)" in " ".join(c.value for c in at.caption)
    assert X.cached_models_exist(settings, use_bundled=False)
    assert at.button(key="nvdp_use_bundle") is not None
