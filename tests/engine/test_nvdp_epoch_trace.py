"""scripts/nvdp_epoch_trace.py: replaying early stopping on a full-budget run gives the early-stopped model."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest
import torch

from engine.nvdp.clipping import ClipConfig
from engine.nvdp.encoder import TokenStates
from engine.nvdp.layer import NVIBConfig
from engine.nvdp.training import train_nvdp

ROOT = Path(__file__).resolve().parents[2]
TINY = NVIBConfig(d=16, n_heads=2, ffn_dim=32)


@pytest.fixture(scope="module")
def script():
    spec = importlib.util.spec_from_file_location("nvdp_epoch_trace", ROOT / "scripts" / "nvdp_epoch_trace.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_replay_follows_the_training_rule(script):
    # strict improvement only; stop after `patience` epochs without one
    assert script.replay_early_stopping([0.5, 0.6, 0.6, 0.6, 0.7], 2) == (2, 4)
    assert script.replay_early_stopping([0.5, 0.6, 0.6, 0.7, 0.7], 3) == (4, 5)
    assert script.replay_early_stopping([0.9, 0.8, 0.7], 1) == (1, 2)
    assert script.replay_early_stopping([0.1, 0.2, 0.3], 3) == (3, 3)


def _synthetic(n=200, L=6, d=16, seed=0):
    g = torch.Generator().manual_seed(seed)
    y = torch.randint(0, 2, (n,), generator=g)
    h = torch.randn(n, L, d, generator=g)
    h[:, :, :4] += (2 * y[:, None, None].float() - 1) * 0.3  # a weak signal: validation accuracy plateaus
    lengths = torch.randint(2, L + 1, (n,), generator=g)
    return TokenStates(h, torch.arange(L)[None, :] < lengths[:, None]), y.numpy()


@pytest.mark.parametrize("clip", [ClipConfig(enabled=False), ClipConfig(enabled=True, C_mu=2.0)])
def test_snapshot_at_the_replayed_epoch_is_the_early_stopped_model(script, clip):
    old = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        states, y = _synthetic()
        tr, va = np.arange(140), np.arange(140, 200)
        kw = dict(val_states=states.subset(va), val_labels=y[va], kl_weight=1e-2, clip=clip, seed=3, epochs=8,
                  lr=1e-2, batch_size=32, config=TINY)
        full, snaps = script.train_with_snapshots(states.subset(tr), y[tr], **kw)
        assert len(snaps) == 8 == len(full.history)
        restored, ran = script.replay_early_stopping([h["val_accuracy"] for h in full.history], 2)
        es = train_nvdp(states.subset(tr), y[tr], patience=2, **kw)
        assert (es.best_epoch, len(es.history)) == (restored, ran)
        assert ran < 8  # early stopping did stop this run: the replay is tested, not a full run
        assert [h["val_accuracy"] for h in es.history] == [h["val_accuracy"] for h in full.history[:ran]]
        want = es.model.state_dict()
        got = snaps[restored - 1]
        assert all(torch.equal(want[k], got[k]) for k in want)
        # the snapshots differ from epoch to epoch (a hook that kept one tensor would pass the line above)
        assert not torch.equal(snaps[0]["classifier.weight"], snaps[-1]["classifier.weight"])
    finally:
        torch.set_num_threads(old)
