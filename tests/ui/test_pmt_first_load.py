"""The PMT page's first screen imports no ``scipy.stats`` and a ridge sweep neither ``scipy.stats`` nor
``scipy.special``, with the same numbers as before.

``import scipy.stats`` (the planner's normal CDF, for the noise-dominance banner) cost about 0.5 s and
``import scipy.special`` (the logistic sigmoid, imported by every logistic module at import time) about
0.2 s of a fresh server's first PMT page and of ``python -m engine pmt``. The planner now evaluates
log Phi with :func:`engine.privacy._ndtr.log_ndtr`, and :mod:`engine.pmt._special` imports scipy's
``expit`` on its first call. Import checks run in a fresh interpreter; timings live in ``bench/``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]


def _modules_after(code: str) -> set[str]:
    script = code + "\nimport json, sys\nprint('MODULES ' + json.dumps(sorted(sys.modules)))\n"
    res = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-2000:]
    line = [ln for ln in res.stdout.splitlines() if ln.startswith("MODULES ")][-1]
    return set(json.loads(line[len("MODULES "):]))


def test_the_first_screens_computations_import_no_scipy_stats():
    # what the default view computes: the prepared split, a ridge sweep of every default method, the
    # advisories (the noise banner runs the planner); the page's modules imported as the page does
    names = _modules_after(
        "from ui.pmt.compute import core as C\nfrom ui.pmt import controls as pmt_controls\nfrom ui.pmt import headline as pmt_headline\nfrom ui.pmt import public_mode as pmt_public_mode\nfrom ui.pmt import run as pmt_run\nfrom ui.pmt import tabs as pmt_tabs\nfrom ui.common import verdict\n"
        "from engine.datasets import load_dataset\n"
        "ds = load_dataset('ccpp')\n"
        "prep = C.prepare(ds, None, standardize=True, n_pub=200, split_seed=0, task='regression')\n"
        "spec = C.spec_from_state({}, task='regression')\n"
        "frame = C.sweep(prep, C.sweep_spec({**spec, 'seeds': 2}, 'epsilon', [0.5, 1.0]))\n"
        "assert len(frame) and set(frame['method']) >= {'PMT', 'DP-GD'}, frame\n"
        "diag = C.diagnostics(prep, spec)\n"
        "C.advisories(prep, diag, spec['delta'])\n"
        "assert C.plan_for(prep, diag) is not None\n")
    assert "engine.pmt.planner" in names and "engine.pmt.sweep_logistic" in names  # not vacuous
    assert "scipy.stats" not in names
    # scipy.special is imported by the planner's DP-GD curve (erf and the exponential integral E1 of the
    # clipping factor; about 0.1 s quiet): a well-kept library for special functions is kept there. A ridge
    # sweep alone (the CLI, tests/engine/test_cli_startup.py) still imports neither.


def test_expit_is_scipys_bit_for_bit_and_imports_it_on_first_call():
    from scipy.special import expit as scipy_expit

    from engine.pmt._special import expit

    rng = np.random.default_rng(3)
    for x in (rng.normal(size=(50, 7)) * 30, (rng.normal(size=200) * 10).astype(np.float32), 0.25, -800.0):
        got, want = expit(x), scipy_expit(x)
        assert np.asarray(got).dtype == np.asarray(want).dtype
        np.testing.assert_array_equal(got, want)
    out = np.empty(5)
    assert expit(np.arange(5.0), out=out) is out
    np.testing.assert_array_equal(out, scipy_expit(np.arange(5.0)))


@pytest.mark.parametrize("name, epsilon, lam, n_pub", [("ccpp", 1.0, 1e-3, 200), ("ccpp", 0.1, 1e-4, 60),
                                                       ("wine-red", 0.5, 1e-2, 100), ("wine-white", 5.0, 0.0, 300),
                                                       ("synthetic", 2.0, 1e-3, 40)])
def test_the_plan_is_unchanged_by_the_scipy_free_normal_cdf(monkeypatch, name, epsilon, lam, n_pub):
    # the planner's p_pd only picks a branch (>= 0.5): every curve and crossover equals the scipy.stats version
    import engine.privacy._ndtr as ndtr
    from scipy.stats import norm

    from engine.datasets import load_dataset
    from engine.pmt.planner import plan, plan_inputs_from_public

    X, y = load_dataset(name).to_numpy()
    rows = np.random.default_rng(0).choice(len(y), size=n_pub, replace=False)
    inputs = plan_inputs_from_public(np.asarray(X, float)[rows], np.asarray(y, float)[rows])
    kw = dict(epsilon=epsilon, delta=1e-5, lam=lam, n_user=len(y) - n_pub)
    got = plan(inputs, **kw)
    monkeypatch.setattr(ndtr, "log_ndtr", norm.logcdf)
    want = plan(inputs, **kw)
    assert got.curves.keys() == want.curves.keys() and "DP-RR" in got.curves
    for k in want.curves:
        np.testing.assert_array_equal(got.curves[k], want.curves[k])
    assert (got.crossover_n, got.crossover_private_n) == (want.crossover_n, want.crossover_private_n)
