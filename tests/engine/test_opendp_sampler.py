"""sampler="opendp": OpenDP's Gaussian sampler in every private estimator, with OpenDP's own accounting.

The budget is taken from OpenDP's privacy map (zCDP rho = 1/(2 s^2) per unit of sensitivity, converted to
(epsilon, delta) by OpenDP), so that the epsilon OpenDP certifies for the estimator's actual releases is at
most the user's; the tests read it back from OpenDP, independently of the engine's helper."""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest

from engine import privacy as P
from engine.pmt import (
    DPGDLogistic,
    DPGDRidge,
    DPNewtonLogistic,
    DPRidge,
    PMTLogistic,
    PMTPoisson,
    PMTPooledRidge,
    PMTRidge,
)

dp = pytest.importorskip("opendp.prelude")
dp.enable_features("contrib")


def _openDP_epsilon(scales, delta):
    """The test's own OpenDP chain: one Gaussian measurement per release (unit sensitivity, scale
    sigma / Delta), composed, zCDP -> approx-DP, delta fixed, mapped at distance 1."""
    ms = [dp.m.make_gaussian(dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float), scale=float(s))
          for s in scales]
    meas = ms[0] if len(ms) == 1 else dp.c.make_composition(ms)
    return dp.c.make_fix_delta(dp.c.make_zCDP_to_approxDP(meas), delta).map(1.0)[0]


def test_opendp_map_is_rho_zcdp_not_the_gdp_curve():
    """The figures of the review: the scale calibrated to epsilon 1 (delta 1e-5) by mu-GDP is certified at
    epsilon 1.092 by OpenDP; at mu = 1 OpenDP says 4.728 where mu-GDP says 4.377."""
    mu1 = P.gdp_mu(1.0, 1e-5)
    assert _openDP_epsilon([1 / mu1], 1e-5) == pytest.approx(1.092, abs=1e-3)
    assert _openDP_epsilon([1.0], 1e-5) == pytest.approx(4.728, abs=1e-3)
    assert P.gdp_epsilon(1.0, 1e-5) == pytest.approx(4.377, abs=1e-3)
    rho = dp.m.make_gaussian(dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float), scale=2.0).map(1.0)
    assert rho == pytest.approx(1 / (2 * 2.0**2))


@pytest.mark.parametrize("eps", [0.3, 1.0, 4.0, 10.0])
def test_opendp_mu_is_certified_by_opendp_at_the_users_epsilon(eps):
    from engine.privacy.opendp import opendp_mu

    mu = opendp_mu(eps, 1e-5)
    certified = _openDP_epsilon([1 / mu], 1e-5)
    assert certified <= eps and certified > eps * (1 - 1e-6)  # at most the user's, and not needlessly less
    assert mu < P.gdp_mu(eps, 1e-5)  # OpenDP's conversion is weaker than the exact GDP curve


def _data(kind):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(3000, 2))
    Xq = rng.normal(size=(200, 2))
    if kind == "ridge":
        return X, X @ [1.0, -1.0] + rng.normal(size=3000), Xq, Xq @ [1.0, -1.0] + rng.normal(size=200)
    if kind == "logistic":
        return X, (rng.random(3000) < 1 / (1 + np.exp(-X @ [1.0, -1.0]))).astype(int), Xq, None
    return X, rng.poisson(np.exp(0.3 * X @ [1.0, -1.0])).astype(float), Xq, None


ESTIMATORS = [(PMTRidge, "ridge", {}), (PMTPooledRidge, "ridge", {}), (DPRidge, "ridge", {}),
              (DPGDRidge, "ridge", {"n_steps": 30}), (PMTLogistic, "logistic", {}), (DPNewtonLogistic, "logistic", {}),
              (DPGDLogistic, "logistic", {"n_steps": 30}), (PMTPoisson, "poisson", {"y_max": 20.0})]


@pytest.mark.parametrize("cls, kind, kw", ESTIMATORS, ids=lambda v: getattr(v, "__name__", ""))
@pytest.mark.parametrize("eps", [1.0, 4.0])
def test_every_private_estimator_with_opendp_spends_at_most_the_users_epsilon_by_opendps_map(cls, kind, kw, eps):
    X, y, Xq, yq = _data(kind)
    args = (X, y, Xq, yq) if kind == "ridge" else (X, y, Xq)
    m = cls(epsilon=eps, delta=1e-5, sampler="opendp", **kw).fit(*args)
    scales = [r.sigma / r.sensitivity for r in m.report_.ledger.releases]
    certified = _openDP_epsilon(scales, 1e-5)  # read back from OpenDP, not from the engine
    assert certified <= eps and certified > eps * (1 - 1e-6)
    assert m.report_.extra["opendp_epsilon"] == certified and m.report_.extra["sampler"] == "opendp"
    assert np.all(np.isfinite(m.coef_))
    # the numpy path's budget certifies more than eps by OpenDP's map: the two accountings differ
    g = cls(epsilon=eps, delta=1e-5, random_state=0, **kw).fit(*args)
    assert _openDP_epsilon([r.sigma / r.sensitivity for r in g.report_.ledger.releases], 1e-5) > eps
    assert "opendp_epsilon" not in g.report_.extra


def test_opendp_noise_is_not_reproduced_by_a_seed_and_the_numpy_seed_path_is_unchanged():
    X, y, Xq, yq = _data("ridge")
    a = PMTRidge(epsilon=1.0, sampler="opendp", random_state=3).fit(X, y, Xq, yq)
    b = PMTRidge(epsilon=1.0, sampler="opendp", random_state=3).fit(X, y, Xq, yq)
    assert not np.array_equal(a.coef_, b.coef_)  # OpenDP's own CSPRNG
    c = PMTRidge(epsilon=1.0, random_state=3).fit(X, y, Xq, yq)
    d = PMTRidge(epsilon=1.0, random_state=3, sampler="numpy").fit(X, y, Xq, yq)
    np.testing.assert_array_equal(c.coef_, d.coef_)  # the sampler is not part of the seed's identity


def test_opendp_generator_draws_gaussians_of_the_asked_scale():
    from engine.privacy.opendp import OpenDPGenerator

    z = OpenDPGenerator().normal(0.0, 2.0, size=(4000,))
    assert z.shape == (4000,) and abs(z.std() - 2.0) < 0.1 and abs(z.mean()) < 0.15
    assert OpenDPGenerator().normal(0.0, 0.0, size=(2, 3)).tolist() == [[0.0] * 3] * 2


def test_bad_sampler_and_missing_opendp_are_clear_errors_before_noise(monkeypatch):
    X, y, Xq, yq = _data("ridge")
    with pytest.raises(ValueError, match="sampler must be one of 'numpy', 'opendp'"):
        PMTRidge(sampler="secure").fit(X, y, Xq, yq)
    monkeypatch.setitem(sys.modules, "opendp", None)  # as if the package were not installed
    monkeypatch.setitem(sys.modules, "opendp.prelude", None)
    m = PMTRidge(sampler="opendp")
    with pytest.raises(ImportError, match="sampler='opendp' needs the package opendp"):
        m.fit(X, y, Xq, yq)
    assert not hasattr(m, "coef_")


def test_cli_pmt_sampler_opendp(tmp_path, capsys):
    from engine.cli import main

    X, y, Xq, yq = _data("ridge")
    import pandas as pd

    pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "t": y}).to_csv(tmp_path / "private.csv", index=False)
    pd.DataFrame({"a": Xq[:, 0], "b": Xq[:, 1], "t": yq}).to_csv(tmp_path / "public.csv", index=False)
    rc = main(["pmt", "--data", str(tmp_path / "private.csv"), "--target", "t", "--public", str(tmp_path / "public.csv"),
               "--epsilon", "2", "--seeds", "2", "--methods", "pmt", "dp-rr", "--sampler", "opendp", "--json"])
    assert rc == 0
    out = json.loads(capsys.readouterr().out)
    assert out["settings"]["sampler"] == "opendp"
    assert 2 * (1 - 1e-6) < out["settings"]["opendp_epsilon_pmt"] <= 2.0
    assert 2 * (1 - 1e-6) < out["settings"]["opendp_epsilon_dp-rr"] <= 2.0
    rc = main(["pmt", "--dataset", "synthetic", "--sampler", "opendp", "--seeds", "1"])
    err = capsys.readouterr().err
    assert rc == 2 and "--sampler opendp releases through the estimators" in err


def test_adding_the_sampler_parameter_kept_every_int_seeds_noise_stream():
    """The sampler is left out of a release's identity (engine.pmt._base._spawn_key), so an int seed draws
    exactly what it drew before the parameter existed (values read from the commit before it). PMTRidge's
    stream is pinned as of its public-centring parameter ``center`` (a new release definition, so a new
    identity), with the sampler parameter present and excluded."""
    from engine.pmt._base import release_rng

    # pinned for the clip form (the default before response="auto": a new default, a new identity)
    assert release_rng(PMTRidge(epsilon=1.5, lam=0.01, random_state=3, response="clip")).normal(size=2).tolist() == [
        -0.06160188322696815, -0.6666743273979501]
    assert release_rng(PMTRidge(epsilon=1.5, lam=0.01, random_state=3, sampler="numpy",
                                response="clip")).normal(size=1).tolist() == [
        -0.06160188322696815]
    assert release_rng(DPGDLogistic(random_state=7)).normal(size=1).tolist() == [-0.9143122083461969]
