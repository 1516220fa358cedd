"""Parameter audit: everything a private fit shows besides its noisy release must not depend on the private rows.

The release audit (:func:`engine.audit.audit`) bounds how far the *noisy* statistic of a neighbouring pair
can move. It cannot see a parameter computed from the private rows (a bound, a radius, a centre, a chosen
option): with a response bound ``B_y = max |y|`` the noise grows with the extreme label, so the pair's
release moves by exactly its (now data-dependent) sensitivity and the release audit passes. Such a
parameter is, however, itself a release without noise: one neighbour sees ``sigma_b = 75.8``, the other
``1.6e13``.

This audit fits the product's estimator on a data set D and on neighbours D' (replace-one: one private row
replaced) with the **same** noise seed, and compares their **public fingerprints**
(:func:`public_fingerprint`): the error (type and message) or, for a fit, every field of ``report_`` except
those the product itself labels as a noisy release (:data:`engine.privacy.labels.DP`) or a non-private
diagnostic (:data:`engine.privacy.labels.DIAGNOSTIC`): the budget and ledger (the number of releases),
noise scales, sensitivities, radius, ``B_y``, the eigenvalue floor, the chosen options in ``extra``
(``whiten``, the solver, dropped columns, ...; an ``extra`` key no table lists is compared too, so a new
key must be labelled before it may differ), plus every warning (category and message). Any difference is a
**violation**: a neighbour can tell D from D' without looking at the noise. The comparison is exact (bit
for bit), so the false-alarm rate is 0.

The neighbours (:data:`NEIGHBOURS`): row 0 of D replaced by

* ``label-1e12``: the same features, label 1e12 (logistic: the other class; Poisson: a count of 1e12);
* ``feature-1e12``: feature 0 set to 1e12;
* ``duplicate``: a copy of row 1 (a duplicated row);
* ``removed``: the all-zero row with label 0 (replace-one's removal: n is public under replace-one, so a
  true removal changes n, which every bound may legitimately use).

Options whose documented behaviour is to take a bound from the private rows (``response_bound="private"``,
``clip_radius="private"``, ``clip_norm="private"``, the oracle baseline) are expected to differ: for them the
audit checks that the product says so (a :class:`engine.privacy.PrivacyLeakWarning` and a report whose
bound is not labelled public), see :func:`parameter_audit`'s ``labelled_private``.
"""

from __future__ import annotations

import math
import time
import warnings
from dataclasses import asdict, dataclass, field

import numpy as np

__all__ = ["NEIGHBOURS", "PARAMETER_SETUPS", "ParameterAuditResult", "parameter_audit", "public_fingerprint",
           "neighbours", "compare_fingerprints"]

#: The replace-one neighbours of the parameter audit (row 0 replaced).
NEIGHBOURS = ("label-1e12", "feature-1e12", "duplicate", "removed")

#: The extreme value of the neighbours (far beyond every public bound; within the accepted input range).
EXTREME_VALUE = 1e12


def neighbours(X, y, family: str):
    """``{name: (X', y')}``: D with row 0 replaced, one per :data:`NEIGHBOURS`."""
    X = np.asarray(X, dtype=float)
    y = np.asarray(y)
    out = {}
    for name in NEIGHBOURS:
        X1, y1 = X.copy(), y.copy().astype(float if family != "logistic" else y.dtype)
        if name == "label-1e12":
            y1[0] = (1 - y1[0]) if family == "logistic" else EXTREME_VALUE
        elif name == "feature-1e12":
            X1[0, 0] = EXTREME_VALUE
        elif name == "duplicate":
            X1[0], y1[0] = X[1], y[1]
        else:
            X1[0], y1[0] = 0.0, 0
        out[name] = (X1, y1)
    return out


def _canon(v):
    """A value in a form that compares exactly (arrays as (shape, bytes); floats by their bits)."""
    if isinstance(v, dict):
        return tuple(sorted((str(k), _canon(x)) for k, x in v.items()))
    if isinstance(v, (list, tuple)):
        return tuple(_canon(x) for x in v)
    if isinstance(v, np.ndarray):
        return ("array", v.shape, str(v.dtype), v.tobytes())
    if isinstance(v, (float, np.floating)):
        f = float(v)
        return ("nan",) if math.isnan(f) else ("float", f.hex())
    if isinstance(v, (np.integer, np.bool_)):
        return v.item()
    return v


def public_fingerprint(estimator) -> dict:
    """What a fitted estimator shows that is not labelled a noisy release or a non-private diagnostic.

    Every :class:`engine.pmt.FitReport` field and ``extra`` key except those :attr:`FitReport.privacy`
    labels ``"dp"`` or ``"non-private diagnostic"`` from the product's tables (an ``extra`` key that no
    table lists is kept: it must be labelled before it may differ), the ledger's records, the number of
    releases and the estimator's public learned attributes (``eig_floor_``, ``whiten_``...)."""
    from dataclasses import fields as dc_fields

    from engine.pmt._base import EXTRA_PRIVACY, FIT_REPORT_PRIVACY
    from engine.privacy.labels import PUBLIC

    rep = estimator.report_
    out = {}
    for f in dc_fields(rep):
        if f.name in ("ledger", "extra"):
            continue
        if FIT_REPORT_PRIVACY.get(f.name, PUBLIC) == PUBLIC:
            out[f.name] = _canon(getattr(rep, f.name))
    out["releases"] = _canon(rep.releases)
    out["n_releases"] = len(rep.ledger.releases)
    for k, v in rep.extra.items():
        if EXTRA_PRIVACY.get(k, PUBLIC) == PUBLIC:
            out[f"extra.{k}"] = _canon(v)
    for attr in ("eig_floor_", "whiten_", "dropped_columns_"):
        if hasattr(estimator, attr):
            out[attr] = _canon(getattr(estimator, attr))
    return out


def run_and_fingerprint(make, X, y, X_pub, y_pub=None, *, patches=()) -> dict:
    """Fit ``make()`` on (X, y) and return ``{"error": ..., "warnings": [...], "fingerprint": {...}}``."""
    from engine.audit.hooks import _patches

    est = make()
    with warnings.catch_warnings(record=True) as caught, _patches(*patches):
        warnings.simplefilter("always")
        try:
            if y_pub is None:
                est.fit(X, y, X_pub)
            else:
                est.fit(X, y, X_pub, y_pub)
        except Exception as e:  # noqa: BLE001 - the error is part of what a neighbour sees
            return {"error": (type(e).__name__, str(e)), "warnings": _warn_list(caught), "fingerprint": None,
                    "estimator": est}
    return {"error": None, "warnings": _warn_list(caught), "fingerprint": public_fingerprint(est), "estimator": est}


def _warn_list(caught):
    return sorted((w.category.__name__, str(w.message)) for w in caught)


def compare_fingerprints(a: dict, b: dict) -> list[str]:
    """The names of what differs between two :func:`run_and_fingerprint` results (empty: identical)."""
    diff = []
    if a["error"] != b["error"]:
        diff.append(f"error: {a['error']} vs {b['error']}")
    if a["warnings"] != b["warnings"]:
        diff.append(f"warnings: {a['warnings']} vs {b['warnings']}")
    fa, fb = a["fingerprint"] or {}, b["fingerprint"] or {}
    for k in sorted(set(fa) | set(fb)):
        if fa.get(k, "<absent>") != fb.get(k, "<absent>"):
            diff.append(k)
    return diff


# --------------------------------------------------------------------------------------------
# the setups: one per mechanism (the product's defaults, as the page and the CLI run them)
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Setup:
    family: str
    make: object  # (epsilon, delta, seed) -> estimator
    labelled_y_pub: bool = False


def _setups():
    from engine.pmt import (AdaSSPRidge, DPGDLogistic, DPGDRidge, DPNewtonLogistic, DPRidge, PMTLogistic,
                            PMTPoisson, PMTPooledRidge, PMTRidge)

    return {
        # the two forms of PMTRidge: the clip form (B_y from the public labels) and the default with public
        # labels, the joint form (``response="auto"`` resolves to it; no B_y)
        "dp-pmtrr": _Setup("regression", lambda e, d, s: PMTRidge(epsilon=e, delta=d, response="clip", random_state=s),
                           True),
        "dp-pmtrr-joint": _Setup("regression", lambda e, d, s: PMTRidge(epsilon=e, delta=d, random_state=s), True),
        "adassp": _Setup("regression", lambda e, d, s: AdaSSPRidge(epsilon=e, delta=d, random_state=s), True),
        "dp-rr": _Setup("regression", lambda e, d, s: DPRidge(epsilon=e, delta=d, random_state=s), True),
        "pmt-pooled": _Setup("regression", lambda e, d, s: PMTPooledRidge(epsilon=e, delta=d, random_state=s), True),
        "dp-gd-ridge": _Setup("regression", lambda e, d, s: DPGDRidge(epsilon=e, delta=d, n_steps=20, random_state=s),
                              True),
        "dp-pmtlr": _Setup("logistic", lambda e, d, s: PMTLogistic(epsilon=e, delta=d, random_state=s)),
        "dp-newton": _Setup("logistic", lambda e, d, s: DPNewtonLogistic(epsilon=e, delta=d, random_state=s)),
        "dp-gd-logistic": _Setup("logistic", lambda e, d, s: DPGDLogistic(epsilon=e, delta=d, n_steps=20,
                                                                          random_state=s)),
        "dp-pmt-poisson": _Setup("poisson", lambda e, d, s: PMTPoisson(epsilon=e, delta=d, y_max=20.0,
                                                                       random_state=s)),
    }


#: Mechanism name -> setup (the same names as :data:`engine.audit.MECHANISMS`).
PARAMETER_SETUPS = _setups


def base_data(family: str, n: int, seed: int):
    """D (n private rows) and the public rows (labelled for regression) of the parameter audit."""
    from engine.audit.mechanisms import _logistic_base, _poisson_base, _regression_base

    if family == "regression":
        X, y, X_pub, y_pub = _regression_base(n + 1, 2, 200, seed)
        return X, y, X_pub, y_pub
    if family == "logistic":
        X, y, X_pub = _logistic_base(n + 1, 2, 200, seed)
        return X, y, X_pub, None
    X, y, X_pub = _poisson_base(n + 1, 2, 200, seed)
    return X, y, X_pub, None


@dataclass
class ParameterAuditResult:
    """One parameter audit: per neighbour, what differs from D (``differences``; empty: invariant)."""

    mechanism: str
    broken: str | None
    epsilon: float
    delta: float
    n: int
    neighbours: dict
    violation: bool
    seconds: float
    extra: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return asdict(self)


def parameter_audit(mechanism: str, *, epsilon: float = 4.0, delta: float = 1e-5, seed: int = 0,
                    broken: str | None = None, n: int = 100, make=None) -> ParameterAuditResult:
    """Fit ``mechanism`` (or ``make(epsilon, delta, seed)``) on D and on each neighbour of
    :data:`NEIGHBOURS` with the same seed; a **violation** when any public fingerprint, warning or error
    differs (exact comparison: a correct mechanism is never flagged).

    ``broken="private-response-bound"`` plants a response bound taken from the private labels
    (:func:`engine.audit.hooks.private_response_bound_patches`); the other broken copies change only the
    noise, which this audit does not look at.

    Raises ``ValueError`` for an unknown mechanism or broken copy, n < 10.

    Examples
    --------
    >>> parameter_audit("dp-pmtrr", n=50).violation
    False
    >>> r = parameter_audit("dp-pmtrr", n=50, broken="private-response-bound")
    >>> r.violation, "noise_scales" in r.neighbours["label-1e12"]
    (True, True)
    """
    from engine.audit.hooks import broken_applies, parse_broken, private_response_bound_patches
    from engine.audit.mechanisms import MECHANISMS

    setups = _setups()
    if mechanism not in setups or mechanism not in MECHANISMS:
        raise ValueError(f"mechanism must be one of {', '.join(setups)}, got {mechanism!r}")
    parse_broken(broken)
    if not broken_applies(broken, mechanism):
        raise ValueError(f"broken={broken!r} is not planted in {mechanism!r}")
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 10:
        raise ValueError(f"n must be an integer >= 10, got {n!r}")
    t0 = time.perf_counter()
    setup = setups[mechanism]
    build = make or setup.make
    X, y, X_pub, y_pub = base_data(setup.family, int(n), seed)
    base = run_and_fingerprint(lambda: build(epsilon, delta, int(seed)), X, y, X_pub, y_pub,
                               patches=private_response_bound_patches(broken, y))
    out = {}
    for name, (X1, y1) in neighbours(X, y, setup.family).items():
        other = run_and_fingerprint(lambda: build(epsilon, delta, int(seed)), X1, y1, X_pub, y_pub,
                                    patches=private_response_bound_patches(broken, y1))
        out[name] = compare_fingerprints(base, other)
    return ParameterAuditResult(mechanism=mechanism, broken=broken, epsilon=float(epsilon), delta=float(delta),
                                n=int(n), neighbours=out, violation=any(bool(v) for v in out.values()),
                                seconds=time.perf_counter() - t0,
                                extra={"base_error": base["error"]})
