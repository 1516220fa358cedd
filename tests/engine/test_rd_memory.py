"""The RD bound without full-size working copies: padding read in place, input
checks by reductions, sum of ln v in blocks, no scipy.stats on the RD path."""

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from engine.nvdp import _rd_numba, rd_kernel
from engine.nvdp.divergence import pairwise_rd_bound
from test_nvdp_divergence import make_posteriors  # tests/ is on sys.path (rootdir conftest)

ROOT = Path(__file__).resolve().parents[2]
HAS_NUMBA = _rd_numba.get_kernel() is not None


def _paths():
    """The kernels that are available here: the fused numba kernel and the torch op chain."""
    return ["fused", "chain"] if HAS_NUMBA else ["chain"]


def _run(monkeypatch, path, *args, **kw):
    with monkeypatch.context() as m:
        if path == "chain":
            m.setattr(rd_kernel._rd_numba, "get_kernel", lambda: None)
        return pairwise_rd_bound(*args, **kw)


def _prior_filled(mu, sigma, mask):
    """Padding positions replaced by the input's prior component (what the kernel must read)."""
    m3 = mask[..., None]
    return torch.where(m3, mu, mu[:, :1]), torch.where(m3, sigma, sigma[:, :1])


@pytest.mark.parametrize("path", _paths())
@pytest.mark.parametrize("garbage", ["nan", "inf", "zero", "huge"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("form, padding", [("exact", "prior"), ("exact", "strict"), ("paper", "prior")])
def test_padding_is_never_read(monkeypatch, path, garbage, dtype, form, padding):
    # The kernel reads padding positions as the prior component in place (no padded copy): any
    # value stored there, even NaN, inf or 0, gives the very values of the prior-filled input.
    mu, sigma, alpha, mask = make_posteriors(B=8, K=5, D=24, seed=3, lengths=[1, 4, 2, 4, 3, 1, 4, 2])
    mu, sigma, alpha = mu.to(dtype), sigma.to(dtype), alpha.to(dtype)
    mu_f, sg_f = _prior_filled(mu, sigma, mask)
    val = {"nan": math.nan, "inf": math.inf, "zero": 0.0, "huge": 1e30}[garbage]
    pad = ~mask[..., None].expand_as(mu)
    mu_g = torch.where(pad, torch.full_like(mu, val), mu)
    sg_g = torch.where(pad, torch.full_like(sigma, -val if garbage == "huge" else val), sigma)
    kw = dict(form=form, padding=padding, dtype=dtype)
    want = _run(monkeypatch, path, mu_f, sg_f, alpha, mask, **kw)
    got = _run(monkeypatch, path, mu_g, sg_g, alpha, mask, **kw)
    assert got.n_nan == 0 and np.isfinite(want.values).sum() >= 5
    np.testing.assert_array_equal(got.values, want.values)


@pytest.mark.parametrize("path", _paths())
@pytest.mark.parametrize("where, value", [("mu", math.inf), ("mu", -math.inf), ("mu", math.nan), ("sigma", 0.0),
                                          ("sigma", -0.5), ("sigma", math.nan), ("sigma", math.inf)])
def test_a_failure_on_a_real_component_flags_only_that_input(monkeypatch, path, where, value):
    # The fast check (min and max of mu and sigma) must catch every kind of failure, and the
    # other inputs' pairs keep their values.
    mu, sigma, alpha, mask = make_posteriors(B=5, K=4, D=12, seed=5, lengths=[3, 2, 3, 3, 1])
    clean = _run(monkeypatch, path, mu, sigma, alpha, mask, dtype=torch.float64)
    (mu if where == "mu" else sigma)[2, 2, 7] = value
    with pytest.warns(RuntimeWarning, match="non-finite or non-positive"):
        res = _run(monkeypatch, path, mu, sigma, alpha, mask, dtype=torch.float64)
    involved = (res.pair_index == 2).any(1)
    assert np.isnan(res.values[involved]).all() and res.n_nan == 4
    np.testing.assert_array_equal(res.values[~involved], clean.values[~involved])


@pytest.mark.skipif(not HAS_NUMBA, reason="numba is not available")
def test_the_fused_path_forms_no_working_arrays(monkeypatch):
    # lambda v, (1 - lambda) v, 1 / v and the padded mu are derived inside the kernel per task and
    # position; the (B, K, D) arrays of the torch op chain must not be built on the fused path.
    mu, sigma, alpha, mask = make_posteriors(B=6, K=4, D=16, seed=1)
    calls = []
    real = rd_kernel._working_side

    def spy(*a, **k):
        calls.append(1)
        return real(*a, **k)

    monkeypatch.setattr(rd_kernel, "_working_side", spy)
    for padding in ("prior", "strict"):
        pairwise_rd_bound(mu, sigma, alpha, mask, padding=padding)
    assert calls == []
    monkeypatch.setattr(rd_kernel._rd_numba, "get_kernel", lambda: None)
    pairwise_rd_bound(mu, sigma, alpha, mask)
    assert calls == [1]  # the spy does see the torch op chain build them


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_sum_log_var_in_blocks_is_the_full_size_sum(dtype):
    mu, sigma, alpha, mask = make_posteriors(B=9, K=5, D=33, seed=2)
    sigma = sigma.to(dtype)
    _, sg_f = _prior_filled(mu, sigma, mask)
    full = torch.log(sg_f.square()).sum(-1, dtype=torch.float64)  # the previous full-size computation
    for block in (1, 5 * 33, 7 * 5 * 33, 1 << 30):
        got = rd_kernel._sum_log_var(sigma, mask, chunk_elements=block)
        assert got.dtype == torch.float64
        assert torch.equal(got, full), block


def test_the_rd_path_imports_no_scipy_stats():
    # scipy.stats costs ~47 MiB of RSS; the bound needs none of it (the accountants import it
    # where they use it). A fresh process: computing the bound must not load it.
    code = (
        "import json, sys, torch\n"
        "from engine.nvdp.divergence import pairwise_rd_bound\n"
        "g = torch.Generator().manual_seed(0)\n"
        "mu = torch.randn(6, 3, 8, generator=g); sg = torch.rand(6, 3, 8, generator=g) + 0.5\n"
        "mask = torch.ones(6, 3, dtype=torch.bool)\n"
        "r1 = pairwise_rd_bound(mu, sg, torch.ones(6, 3), mask)\n"
        "r2 = pairwise_rd_bound(mu, sg, torch.ones(6, 3), mask, form='paper', batch_size=3)\n"
        "print(json.dumps([r1.n_pairs, r2.n_pairs, 'scipy.stats' in sys.modules]))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300,
                         check=True)
    assert json.loads(out.stdout.strip().splitlines()[-1]) == [15, 6, False]
