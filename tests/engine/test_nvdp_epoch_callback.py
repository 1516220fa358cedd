"""train_nvdp's per-epoch callback and learning-rate schedules (tiny synthetic states)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from engine.nvdp.clipping import ClipConfig
from engine.nvdp.encoder import TokenStates
from engine.nvdp.layer import NVIBConfig
from engine.nvdp.training import LR_SCHEDULES, lr_factor, train_nvdp

TINY = NVIBConfig(d=16, n_heads=2, ffn_dim=32)


@pytest.fixture(autouse=True, scope="module")
def _one_thread():
    old = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(old)


def _data(n=160, L=5, d=16, seed=0):
    g = torch.Generator().manual_seed(seed)
    y = torch.randint(0, 2, (n,), generator=g)
    h = torch.randn(n, L, d, generator=g)
    h[:, :, :4] += (2 * y[:, None, None].float() - 1)
    lengths = torch.randint(2, L + 1, (n,), generator=g)
    return TokenStates(h, torch.arange(L)[None, :] < lengths[:, None]), y.numpy()


def _train(**kw):
    st, y = _data()
    tr, va = np.arange(120), np.arange(120, 160)
    base = dict(val_states=st.subset(va), val_labels=y[va], kl_weight=1e-2, clip=ClipConfig(enabled=False), seed=0,
                epochs=4, patience=4, lr=1e-2, batch_size=32, config=TINY)
    base.update(kw)
    return train_nvdp(st.subset(tr), y[tr], **base)


def _weights(model):
    return {k: v.detach().clone() for k, v in model.state_dict().items()}


def test_on_epoch_end_sees_each_epochs_weights_and_changes_nothing():
    seen = []
    with_cb = _train(on_epoch_end=lambda e, m, rec: seen.append((e, rec["val_accuracy"], _weights(m))))
    without = _train()
    assert [e for e, _, _ in seen] == [1, 2, 3, 4]
    assert [a for _, a, _ in seen] == [h["val_accuracy"] for h in with_cb.history]
    # the callback does not change the training: same history, same restored weights
    assert with_cb.history == without.history
    a, b = _weights(with_cb.model), _weights(without.model)
    assert all(torch.equal(a[k], b[k]) for k in a)
    # the restored model is the snapshot of its best epoch, and later epochs differ from it
    best = seen[with_cb.best_epoch - 1][2]
    assert all(torch.equal(best[k], a[k]) for k in a)
    assert any(not torch.equal(seen[0][2][k], seen[-1][2][k]) for k in a)


def test_lr_schedules():
    assert LR_SCHEDULES == ("constant", "linear_warmup_decay")
    f = [lr_factor(s, 200, "linear_warmup_decay", 0.1) for s in range(201)]
    assert f[0] == 0.0 and f[20] == 1.0 and f[200] == 0.0 and max(f) == 1.0
    assert all(x <= y for x, y in zip(f[:20], f[1:21])) and all(x >= y for x, y in zip(f[20:], f[21:]))
    assert lr_factor(7, 10) == 1.0
    with pytest.raises(ValueError, match="lr_schedule"):
        lr_factor(0, 10, "cosine")


def test_warmup_decay_schedule_is_applied_and_recorded():
    lrs = []
    t = _train(lr_schedule="linear_warmup_decay", warmup_fraction=0.25,
               on_epoch_end=lambda e, m, rec: lrs.append(rec["lr"]))
    const = _train()
    # 4 epochs of 4 batches = 16 steps, warm-up 4: epoch 1 ends on step 3 (rate 3/4), epoch 4 on step 15 (1/12)
    assert lrs == [t.history[i]["lr"] for i in range(4)]
    assert lrs[-1] == pytest.approx(1e-2 * 1 / 12) and lrs[0] == pytest.approx(0.75e-2)
    assert t.params["lr_schedule"] == "linear_warmup_decay" and t.params["warmup_fraction"] == 0.25
    assert "lr_schedule" not in const.params and "lr" not in const.history[0]  # the shipped records unchanged
    assert t.history != const.history


@pytest.mark.parametrize("kw, match", [({"lr_schedule": "cosine"}, "lr_schedule"), ({"warmup_fraction": 1.0}, "warmup_fraction"),
                                       ({"warmup_fraction": -0.1}, "warmup_fraction"), ({"on_epoch_end": 3}, "callable")])
def test_bad_schedule_settings_rejected(kw, match):
    with pytest.raises((ValueError, TypeError), match=match):
        _train(**kw)
