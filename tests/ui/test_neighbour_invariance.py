"""Neighbour-invariance harness: what two neighbouring data sets see, besides the noisy releases, is identical.

For every private estimator (every option that changes a code path, every kind of public information), the
command line (the three public modes, the options) and the page's compute layer, D and replace-one
neighbours D' (a random row replaced by a fresh one; a label of 1e12; a feature of 1e12; a duplicated row;
the zero row; a one-class label set and its neighbour with one label flipped) are run with the same noise
seed. Everything that is not a noisy release must be bit-identical: errors and exit status, warnings, noise
scales, sensitivities, bounds, radii, centres, dropped columns, chosen options (``whiten``, the solver), the
ledger and the number of releases (:func:`engine.audit.parameters.public_fingerprint`: every report field
the product does not itself label "dp" or "non-private diagnostic"; for sweep frames, every column
:func:`engine.pmt._registry.sweep_column_privacy` labels "public").

Options that take a bound from the private rows by design (``"private"`` bounds, the oracle baseline) may
differ, but only with a ``PrivacyLeakWarning`` and labels that say so.

Self-tests plant leaks the harness must catch: a response bound from the private labels, the one-class
one-class error that was (the private training labels required to hold both classes), a whitening chosen
from the private rows.
"""

from __future__ import annotations

import json
import warnings
from unittest import mock

import numpy as np
import pandas as pd
import pytest

from engine.audit.parameters import EXTREME_VALUE, compare_fingerprints, run_and_fingerprint
from engine.cli import main as cli_main


# ------------------------------------------------------------------------------------------------
# data and neighbours
# ------------------------------------------------------------------------------------------------
def _data(family, n=120, p=3, seed=0):
    rng = np.random.default_rng([seed, 39])
    X = rng.normal(size=(n, p))
    Xq = rng.normal(size=(80, p))
    beta = np.linspace(1.0, -1.0, p)
    if family == "regression":
        return X, X @ beta + 0.3 * rng.normal(size=n), Xq, Xq @ beta + 0.3 * rng.normal(size=80)
    if family == "logistic":
        f = lambda Z: (rng.random(len(Z)) < 1 / (1 + np.exp(-Z @ beta))).astype(int)  # noqa: E731
        return X, f(X), Xq, f(Xq)
    f = lambda Z: rng.poisson(np.exp(0.3 * Z @ beta)).astype(float)  # noqa: E731
    return X, f(X), Xq, f(Xq)


def _neighbours(X, y, family, seed=0):
    """Replace-one neighbours of (X, y): a random row replaced by a fresh one, and the extreme rows."""
    rng = np.random.default_rng([seed, 7])
    n, p = X.shape
    out = {}
    i = int(rng.integers(n))
    Xr, yr = X.copy(), y.copy()
    Xr[i] = rng.normal(size=p) * 3
    yr[i] = (1 - y[i]) if family == "logistic" else y[i] + rng.normal() * 5 + (3 if family == "poisson" else 0)
    if family == "poisson":
        yr[i] = abs(round(float(yr[i])))
    out["random row"] = (Xr, yr)
    Xl, yl = X.copy(), y.copy().astype(float if family != "logistic" else int)
    yl[0] = (1 - y[0]) if family == "logistic" else EXTREME_VALUE
    out["label 1e12"] = (Xl, yl)
    Xf = X.copy()
    Xf[0, 0] = EXTREME_VALUE
    out["feature 1e12"] = (Xf, y.copy())
    Xd, yd = X.copy(), y.copy()
    Xd[0], yd[0] = X[1], y[1]
    out["duplicated row"] = (Xd, yd)
    Xz, yz = X.copy(), y.copy()
    Xz[0], yz[0] = 0.0, 0
    out["zero row"] = (Xz, yz)
    return out


def _public(kind, Xq, yq):
    """The public information of a kind: labelled rows, unlabelled rows (PublicInfo), moments, a PublicMoment."""
    from engine.pmt import public_moment
    from engine.pmt.public_info import PublicInfo

    if kind == "labelled":
        return Xq, yq
    if kind == "unlabelled":
        return PublicInfo.from_rows(Xq), None
    if kind == "moments":
        info = PublicInfo.from_rows(Xq)
        return PublicInfo.from_moments(columns=info.columns, n_pub=info.n_pub, mean=info.mean,
                                       covariance=info.covariance), None
    return public_moment(Xq, fit_intercept=True), None


# ------------------------------------------------------------------------------------------------
# the estimator cases: (family, public kind, factory, declared private)
# ------------------------------------------------------------------------------------------------
def _cases():
    from engine.pmt import (AdaSSPRidge, DPGDLogistic, DPGDRidge, DPNewtonLogistic, DPRidge, DPRidgeOracle,
                            PMTLogistic, PMTPoisson, PMTPooledRidge, PMTRidge)

    E = dict(epsilon=1.0, delta=1e-5, random_state=5)
    c = {
        "PMTRidge": ("regression", "labelled", lambda: PMTRidge(**E), False),
        "PMTRidge solver=paper": ("regression", "labelled", lambda: PMTRidge(**E, solver="paper"), False),
        "PMTRidge public_moment=tyler": ("regression", "labelled", lambda: PMTRidge(**E, public_moment="tyler"), False),
        "PMTRidge response=joint": ("regression", "labelled", lambda: PMTRidge(**E, response="joint"), False),
        # the joint form (the default with public labels) with every option that changes its code path
        "PMTRidge joint solver=paper": ("regression", "labelled", lambda: PMTRidge(**E, solver="paper"), False),
        "PMTRidge joint public_moment=tyler center=None": (
            "regression", "labelled", lambda: PMTRidge(**E, public_moment="tyler", center=None), False),
        "PMTRidge joint sampler=opendp lam=0": ("regression", "labelled",
                                                lambda: PMTRidge(**E, sampler="opendp", lam=0.0), False),
        "PMTRidge response=clip": ("regression", "labelled", lambda: PMTRidge(**E, response="clip"), False),
        "PMTRidge sampler=opendp": ("regression", "labelled", lambda: PMTRidge(**E, sampler="opendp"), False),
        "PMTRidge center=None": ("regression", "labelled", lambda: PMTRidge(**E, center=None), False),
        "PMTRidge lam=0": ("regression", "labelled", lambda: PMTRidge(**E, lam=0.0), False),
        "PMTRidge unlabelled + response_bound": ("regression", "unlabelled",
                                                 lambda: PMTRidge(**E, response_bound=5.0), False),
        "PMTRidge moments + response_bound": ("regression", "moments", lambda: PMTRidge(**E, response_bound=5.0),
                                              False),
        "PMTRidge response_bound=private": ("regression", "labelled",
                                            lambda: PMTRidge(**E, response_bound="private"), True),
        "DPRidge": ("regression", "labelled", lambda: DPRidge(**E), False),
        "DPRidge clip_radius=3": ("regression", "labelled", lambda: DPRidge(**E, clip_radius=3.0), False),
        "DPRidge clip_radius=private": ("regression", "labelled", lambda: DPRidge(**E, clip_radius="private"), True),
        "DPRidgeOracle": ("regression", "labelled", lambda: DPRidgeOracle(**E, n_trials=3), True),
        "AdaSSPRidge": ("regression", "labelled", lambda: AdaSSPRidge(**E), False),
        "AdaSSPRidge eps=50 lam=0": ("regression", "labelled",  # lambda_min~ above the clamp: lam_ada differs
                                     lambda: AdaSSPRidge(**{**E, "epsilon": 50.0}, lam=0.0), False),
        "AdaSSPRidge clip_radius=3 response_bound=4 center=None": (
            "regression", "labelled", lambda: AdaSSPRidge(**E, clip_radius=3.0, response_bound=4.0, center=None),
            False),
        "AdaSSPRidge sampler=opendp": ("regression", "labelled", lambda: AdaSSPRidge(**E, sampler="opendp"), False),
        "AdaSSPRidge response_bound=private": ("regression", "labelled",
                                               lambda: AdaSSPRidge(**E, response_bound="private"), True),
        "AdaSSPRidge clip_radius=private": ("regression", "labelled", lambda: AdaSSPRidge(**E, clip_radius="private"),
                                            True),
        "DPGDRidge": ("regression", "labelled", lambda: DPGDRidge(**E, n_steps=10), False),
        "DPGDRidge clip_norm=private": ("regression", "labelled", lambda: DPGDRidge(**E, n_steps=10,
                                                                                     clip_norm="private"), True),
        "PMTPooledRidge": ("regression", "labelled", lambda: PMTPooledRidge(**E), False),
        "PMTLogistic": ("logistic", "labelled", lambda: PMTLogistic(**E), False),
        "PMTLogistic whiten=full": ("logistic", "labelled", lambda: PMTLogistic(**E, whiten="full"), False),
        "PMTLogistic whiten=standardize": ("logistic", "labelled", lambda: PMTLogistic(**E, whiten="standardize"),
                                           False),
        "PMTLogistic eig_floor=0.05 sampler=opendp": ("logistic", "labelled",
                                                      lambda: PMTLogistic(**E, eig_floor=0.05, sampler="opendp"), False),
        "PMTLogistic PublicMoment": ("logistic", "moment", lambda: PMTLogistic(**E), False),
        "DPNewtonLogistic": ("logistic", "labelled", lambda: DPNewtonLogistic(**E), False),
        "DPNewtonLogistic clip_radius=2": ("logistic", "labelled", lambda: DPNewtonLogistic(**E, clip_radius=2.0),
                                           False),
        "DPGDLogistic": ("logistic", "labelled", lambda: DPGDLogistic(**E, n_steps=10), False),
        "PMTPoisson": ("poisson", "labelled", lambda: PMTPoisson(**E, y_max=20.0), False),
        "PMTPoisson theta_radius=0.5": ("poisson", "labelled", lambda: PMTPoisson(**E, y_max=20.0, theta_radius=0.5),
                                        False),
    }
    return c


CASES = list(_cases())


def _run(make, X, y, pub, patches=()):
    Xq, yq = pub
    return run_and_fingerprint(make, X, y, Xq, yq, patches=patches)


def _differences(name, neighbour_filter=None, patches_for=None):
    """{neighbour: differences} of one case (patches_for(y) -> patches, for the self-tests)."""
    family, kind, make, _ = _cases()[name]
    X, y, Xq, yq = _data(family)
    pub = _public(kind, Xq, yq)
    pf = patches_for or (lambda y_: ())
    base = _run(make, X, y, pub, pf(y))
    out = {}
    for nb, (X1, y1) in _neighbours(X, y, family).items():
        if neighbour_filter and nb not in neighbour_filter:
            continue
        out[nb] = compare_fingerprints(base, _run(make, X1, y1, pub, pf(y1)))
    return out, base


@pytest.mark.parametrize("name", CASES)
def test_estimator_neighbours_see_the_same_parameters_warnings_and_errors(name):
    from engine.privacy import PrivacyLeakWarning
    from engine.privacy.labels import PUBLIC

    _, _, _, declared_private = _cases()[name]
    diffs, base = _differences(name)
    assert base["error"] is None, base["error"]
    if not declared_private:
        assert all(not d for d in diffs.values()), {k: v for k, v in diffs.items() if v}
        return
    # a bound taken from the private rows by design: said so (a warning), and not labelled public
    assert any(d for d in diffs.values()), "a declared private option that never differs: drop it from the list"
    est = base["estimator"]
    priv = est.report_.privacy
    if "DPRidgeOracle" not in name:
        assert any(w[0] == PrivacyLeakWarning.__name__ for w in base["warnings"]), base["warnings"]
    for d in diffs.values():
        for field in d:
            if field.startswith(("error", "warnings")):
                continue
            key = field.split(".")[0] if not field.startswith("extra.") else field
            assert priv.get(key) != PUBLIC, (field, priv.get(key))
    assert "dp" not in set(priv.values())  # the guarantee no longer holds: nothing is labelled a DP release


@pytest.mark.parametrize("name", ["PMTLogistic", "DPNewtonLogistic", "DPGDLogistic"])
def test_one_class_private_labels_and_their_neighbour_see_the_same(name):
    family, kind, make, _ = _cases()[name]
    X, _, Xq, yq = _data(family)
    y0 = np.zeros(len(X), dtype=int)
    y1 = y0.copy()
    y1[3] = 1
    a, b = _run(make, X, y0, (Xq, yq)), _run(make, X, y1, (Xq, yq))
    assert a["error"] is None and compare_fingerprints(a, b) == []


# ------------------------------------------------------------------------------------------------
# self-tests: planted leaks the harness must catch
# ------------------------------------------------------------------------------------------------
def test_harness_catches_a_response_bound_from_the_private_labels():
    from engine.audit.hooks import private_response_bound_patches

    # the clip form (the default with public labels, the joint form, has no B_y: it stopped seeing this plant)
    diffs, _ = _differences("PMTRidge response=clip", {"label 1e12", "random row"},
                            patches_for=lambda y: private_response_bound_patches("private-response-bound", y))
    assert {"B_y", "noise_scales", "sensitivities"} <= set(diffs["label 1e12"])


def test_harness_catches_a_joint_form_centred_by_the_private_labels():
    """Planted in PMTRidge's default (the joint form): y centred by the private mean instead of the public one."""
    from engine.pmt import _ridge_joint

    family, kind, make, _ = _cases()["PMTRidge"]
    X, y, Xq, yq = _data(family)
    seen = []
    for ys in (y, _neighbours(X, y, family)["label 1e12"][1]):
        with mock.patch.object(_ridge_joint._JointRidgeMixin, "_joint_center", lambda self, yq_, ys=ys: float(np.mean(ys))):
            seen.append(_run(make, X, ys, (Xq, yq)))
    assert seen[0]["fingerprint"]["extra.response"] == _canon_str("joint")
    assert "extra.response_center" in compare_fingerprints(*seen)


def _canon_str(v):
    from engine.audit.parameters import _canon

    return _canon(v)


def test_harness_catches_an_adassp_label_on_a_private_figure():
    """AdaSSP's adaptive ridge differs between neighbours (it comes from the released lambda_min~): unlabelled, the
    harness flags it; the product labels it a DP release (engine.pmt._base)."""
    from engine.pmt import _base

    with mock.patch.dict(_base.EXTRA_PRIVACY):
        del _base.EXTRA_PRIVACY["lam_ada"]
        diffs, _ = _differences("AdaSSPRidge eps=50 lam=0", {"random row"})
    assert diffs["random row"] == ["extra.lam_ada"]


def test_harness_catches_a_whitening_chosen_from_the_private_rows():
    from engine.pmt import logistic as L

    real = L.choose_whitening

    def leaky(*args, **kw):  # the other coordinates when a private row is long (the planted leak)
        got = real(*args, **kw)
        other = "full" if got[0] == "standardize" else "standardize"
        return (other, *got[1:]) if leaky.private_max > 10 else got

    family, kind, make, _ = _cases()["PMTLogistic"]
    X, y, Xq, yq = _data(family)
    seen = []
    for Xs in (X, _neighbours(X, y, family)["feature 1e12"][0]):
        leaky.private_max = float(np.abs(Xs).max())
        with mock.patch.object(L, "choose_whitening", leaky):
            # without public labels: with them, whiten="auto" simulates both on the public rows and the rule's
            # choice is not the one used (engine.pmt.whiten_choice)
            seen.append(_run(make, Xs, y, (Xq, None)))
    assert "extra.whiten" in compare_fingerprints(*seen)


@pytest.mark.parametrize("path", ["labelled", "unlabelled"])
def test_harness_catches_the_one_class_error_of_issue_39_item_2(tmp_path, path):
    """Planted: the bug that was. The non-private reference refuses private training labels of one class (without
    public labels: engine.pmt.sweep_modes; with them: the sweep context requires both classes)."""
    from engine.pmt import LogisticReference
    from engine.pmt import sweep_logistic as SL
    from engine.pmt import sweep_modes as SM

    real = SL.check_binary_labels
    n_test = len(_test_rows(150))

    def strict(y, n=None, *, classes=(0, 1), name="y", require_both=True):  # the training labels only
        return real(y, n, classes=classes, name=name, require_both=require_both or n != n_test)

    paths = _cli_files(tmp_path, "logistic")
    flag = ["--public-features", str(paths["features"])] if path == "unlabelled" else ["--public", str(paths["public"])]
    plant = (mock.patch.object(SM, "_AnyLabelsReference", lambda *, lam: LogisticReference(lam=lam))
             if path == "unlabelled" else mock.patch.object(SL, "check_binary_labels", strict))
    with plant:
        runs = [_cli(paths, tmp_path, ["--task", "logistic", *flag], y_override=v)
                for v in ("zeros", "zeros-one-flipped")]
    assert runs[0]["rc"] == 2 and runs[1]["rc"] == 0 and "both classes" in runs[0]["stderr"]
    assert _cli_differences(*runs)[0] == "exit status 2 vs 0"


# ------------------------------------------------------------------------------------------------
# the command line: every public mode, the options; exit status, stderr and the public columns of --out
# ------------------------------------------------------------------------------------------------
def _cli_files(tmp_path, family):
    X, y, Xq, yq = _data(family, n=150)
    cols = ["a", "b", "c"]
    paths = {"X": X, "y": y}
    pub = pd.DataFrame(Xq, columns=cols)
    pub["y"] = yq
    paths["public"] = tmp_path / f"public_{family}.csv"
    pub.to_csv(paths["public"], index=False)
    paths["features"] = tmp_path / f"features_{family}.csv"
    pub[cols].to_csv(paths["features"], index=False)
    from engine.pmt.public_info import PublicInfo

    paths["moments"] = tmp_path / f"moments_{family}.json"
    PublicInfo.from_rows(Xq, columns=cols).save(paths["moments"])
    return paths


def _cli(paths, tmp_path, flags, *, neighbour=None, y_override=None, tag="d"):
    X, y = paths["X"].copy(), paths["y"].copy()
    if y_override is not None:  # the file holds both classes (the upload check), the training rows one class
        flags = [*flags, "--metric", "accuracy"]  # the test rows hold one class: AUC is undefined there (refused)
        test = _test_rows(len(y))
        y = np.zeros(len(y), dtype=int)
        y[test] = 1
        if y_override == "zeros-one-flipped":
            y[np.setdiff1d(np.arange(len(y)), test)[0]] = 1
    if neighbour is not None:
        X, y = neighbour(X, y)
    df = pd.DataFrame(X, columns=["a", "b", "c"])
    df["y"] = y
    data = tmp_path / "private.csv"  # the same paths for every run: the messages name them
    df.to_csv(data, index=False)
    out = tmp_path / "out.csv"
    from contextlib import redirect_stderr, redirect_stdout
    from io import StringIO

    so, se = StringIO(), StringIO()
    with redirect_stdout(so), redirect_stderr(se), warnings.catch_warnings():
        warnings.simplefilter("always")
        try:
            newton = ["--newton-steps", "2"] if "--task" in flags else []
            rc = cli_main(["pmt", "--data", str(data), "--target", "y", "--epsilon", "1", "--seeds", "2", "--steps", "5",
                           *newton, "--out", str(out), *flags])
        except SystemExit as e:  # argparse
            rc = e.code
    frame = pd.read_csv(out) if out.exists() and rc == 0 else None
    if out.exists():
        out.unlink()
    return {"rc": rc, "stderr": se.getvalue().replace(str(data), "<data>"), "frame": frame}


def _test_rows(n):
    """The rows the command line holds out for testing with a separate public file (the split's permutation)."""
    from engine.pmt.sweep import sweep_split

    idx = np.arange(n, dtype=float)[:, None]
    *_, Xte, _ = sweep_split(idx, np.zeros(n), n_pub=None, split_seed=0, public_data=(np.zeros((1, 1)), np.zeros(1)))
    return Xte[:, 0].astype(int)


def _public_columns(frame):
    from engine.pmt._registry import sweep_column_privacy
    from engine.privacy.labels import PUBLIC

    keys = frame["method_key"] if "method_key" in frame else pd.Series([None] * len(frame))
    out = {}
    for c in frame.columns:
        rows = [i for i, k in enumerate(keys) if sweep_column_privacy(c, k) == PUBLIC]
        if rows:
            out[c] = frame[c].iloc[rows].astype(str).tolist()
    return out


def _cli_differences(a, b):
    diff = []
    if a["rc"] != b["rc"]:
        diff.append(f"exit status {a['rc']} vs {b['rc']}")
    if a["stderr"] != b["stderr"]:
        diff.append(f"stderr {a['stderr']!r} vs {b['stderr']!r}")
    if (a["frame"] is None) != (b["frame"] is None):
        diff.append("output frame")
    elif a["frame"] is not None:
        pa, pb = _public_columns(a["frame"]), _public_columns(b["frame"])
        diff += [c for c in sorted(set(pa) | set(pb)) if pa.get(c) != pb.get(c)]
    return diff


CLI_CASES = {
    "ridge labelled, every method": ("regression", ["--public", "{public}", "--methods", "pmt", "dp-rr", "dp-gd",
                                                    "public-only", "pmt-pooled", "non-private", "adassp"]),
    "ridge labelled, opendp tyler clip": ("regression", ["--public", "{public}", "--sampler", "opendp",
                                                                     "--public-moment", "tyler", "--clip-radius", "3"]),
    "ridge unlabelled": ("regression", ["--public-features", "{features}", "--response-scale", "2"]),
    "ridge moments": ("regression", ["--public-moments", "{moments}", "--response-bound", "5"]),
    "logistic labelled": ("logistic", ["--task", "logistic", "--public", "{public}"]),
    "logistic unlabelled": ("logistic", ["--task", "logistic", "--public-features", "{features}"]),
}


@pytest.mark.parametrize("name", list(CLI_CASES))
def test_cli_neighbours_see_the_same_exit_status_messages_and_public_columns(name, tmp_path):
    family, flags = CLI_CASES[name]
    paths = _cli_files(tmp_path, family)
    flags = [f.format(**{k: str(v) for k, v in paths.items() if k in ("public", "features", "moments")})
             for f in flags]
    base = _cli(paths, tmp_path, flags, tag="base")
    assert base["rc"] == 0, base["stderr"]
    X, y = paths["X"], paths["y"]
    nbs = _neighbours(X, y, family)
    for nb in ("random row", "label 1e12"):
        X1, y1 = nbs[nb]
        other = _cli(paths, tmp_path, flags, neighbour=lambda *_: (X1, y1), tag=nb.replace(" ", "_"))
        assert _cli_differences(base, other) == [], (nb, _cli_differences(base, other))


@pytest.mark.parametrize("flags", [["--public-features", "{features}"], ["--public", "{public}"]])
def test_cli_one_class_private_labels_run_like_their_neighbour(flags, tmp_path):
    """Issue 39 item 2: without (or with) public labels, all-0 private labels and the same with one label flipped:
    same exit status (0), same messages, same public columns; the reference's failure changes nothing else."""
    paths = _cli_files(tmp_path, "logistic")
    flags = [f.format(public=paths["public"], features=paths["features"]) for f in flags]
    runs = [_cli(paths, tmp_path, ["--task", "logistic", *flags], y_override=v, tag=f"oc{i}")
            for i, v in enumerate(("zeros", "zeros-one-flipped"))]
    assert runs[0]["rc"] == 0, runs[0]["stderr"]
    assert _cli_differences(*runs) == []


# ------------------------------------------------------------------------------------------------
# the page's compute layer (ui.pmt.compute.core / ui.pmt.compute.modes, no Streamlit)
# ------------------------------------------------------------------------------------------------
#: What the page shows from its diagnostics that is public (the rest is labelled a non-private diagnostic).
PAGE_PUBLIC_KEYS = ("task", "eta", "epsilon", "delta", "lam", "neighbouring", "B_y", "mu", "clip_radius", "radius",
                    "public_mode")


def _page_view(data, spec):
    from ui.pmt.compute import core as C

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            diag = C.with_fits(C.diagnostics(data, spec), C.estimator_fits(data, spec))
        except Exception as e:  # noqa: BLE001
            return {"error": (type(e).__name__, str(e))}
    out = {k: repr(diag.get(k)) for k in PAGE_PUBLIC_KEYS}
    out["kappa_pub"] = repr(diag.get("kappas", {}).get("public"))
    out["ledgers"] = {m: repr(l.to_records()) for m, l in (diag.get("ledgers") or {}).items()}
    out["noise_banner"] = C.noise_banner(data, diag)
    out["n_needed"] = C.n_needed(data, diag)
    out["warnings"] = sorted(str(w.message) for w in caught)
    return out


def _page_dataset(X, y, task):
    from engine.datasets._base import Dataset

    cols = [f"x{i}" for i in range(X.shape[1])]
    return Dataset(name="upload:neighbours.csv", X=pd.DataFrame(X, columns=cols),
                   y=pd.Series(y, name="y", dtype=float if task == "regression" else "int64"), task=task,
                   feature_names=tuple(cols), target_name="y", citation="", doi=None, description="")


PAGE_CASES = {
    "ridge labelled": ("regression", "regression", "labelled", ["PMT", "DP-RR", "DP-GD", "AdaSSP", "Public-only"]),
    "ridge unlabelled": ("regression", "regression", "unlabelled", ["PMT", "DP-RR", "DP-GD"]),
    "ridge moments": ("regression", "regression", "moments", ["PMT", "DP-RR", "DP-GD"]),
    "logistic labelled": ("logistic", "classification", "labelled", ["PMT", "DP-Newton", "DP-GD"]),
}


@pytest.mark.parametrize("name", list(PAGE_CASES))
def test_page_compute_neighbours_see_the_same_public_figures(name):
    from ui.pmt.compute import core as C

    family, task, mode, methods = PAGE_CASES[name]
    X, y, _, _ = _data(family, n=400)
    spec = {"task": task, "epsilon": 1.0, "delta": 1e-5, "lam": 1e-3, "n_pub": 80, "eta": 0.05, "seeds": 2,
            "clip_radius": 0.0, "methods": methods, "standardize": True, "public_source": "split", "split_seed": 0,
            "data": "upload:neighbours.csv", "public_mode": mode, "response_center": None, "response_scale": None,
            "moments": None, "sweep": "epsilon", "values": [1.0]}
    data = C.prepare(_page_dataset(X, y, task), None, standardize=True, n_pub=80, split_seed=0, task=task)
    base = _page_view(data, spec)
    assert "error" not in base, base
    # a private training row (never a public or a test row): found by its content in the unstandardised split
    raw = C.prepare(_page_dataset(X, y, task), None, standardize=False, n_pub=80, split_seed=0, task=task)
    i = int(np.flatnonzero((X == raw.X_train[0]).all(axis=1))[0])
    for nb in ("random row", "label 1e12"):
        X1, y1 = X.copy(), y.copy()
        if nb == "random row":
            X1[i] = X[i] * 3 + 1
            y1[i] = (1 - y[i]) if family == "logistic" else y[i] + 7
        else:
            y1[i] = (1 - y[i]) if family == "logistic" else EXTREME_VALUE
        d1 = C.prepare(_page_dataset(X1, y1, task), None, standardize=True, n_pub=80, split_seed=0, task=task)
        assert np.array_equal(d1.X_pub, data.X_pub) and not np.array_equal(d1.X_train, data.X_train) or nb != "random row"
        other = _page_view(d1, spec)
        assert other == base, (nb, {k: (base.get(k), other.get(k)) for k in base if base.get(k) != other.get(k)})


def test_harness_catches_a_page_bound_from_the_private_labels():
    from engine.audit.hooks import _patches, private_response_bound_patches
    from ui.pmt.compute import core as C

    X, y, _, _ = _data("regression", n=400)
    spec = {"task": "regression", "epsilon": 1.0, "delta": 1e-5, "lam": 1e-3, "n_pub": 80, "eta": 0.05, "seeds": 2,
            "clip_radius": 0.0, "methods": ["PMT"], "standardize": True, "public_source": "split", "split_seed": 0,
            "data": "upload:neighbours.csv", "public_mode": "labelled", "sweep": "epsilon", "values": [1.0],
            "response": "clip"}  # the clip form has a B_y to plant (the default with public labels: the joint form)
    raw = C.prepare(_page_dataset(X, y, "regression"), None, standardize=False, n_pub=80, split_seed=0,
                    task="regression")
    i = int(np.flatnonzero((X == raw.X_train[0]).all(axis=1))[0])  # a private training row
    views = []
    for yy in (y, np.where(np.arange(len(y)) == i, EXTREME_VALUE, y)):
        data = C.prepare(_page_dataset(X, yy, "regression"), None, standardize=True, n_pub=80, split_seed=0,
                         task="regression")
        with _patches(*private_response_bound_patches("private-response-bound", data.y_train)):
            views.append(_page_view(data, spec))
    assert views[0]["B_y"] != views[1]["B_y"] and views[0]["ledgers"] != views[1]["ledgers"]


def test_harness_runs_in_the_default_test_command():
    """The harness is not marked slow: it is part of ``./test.sh`` (pytest.ini deselects only ``slow``)."""
    import inspect
    import sys

    mod = sys.modules[__name__]
    assert not any(getattr(f, "pytestmark", None) and any(m.name == "slow" for m in f.pytestmark)
                   for _, f in inspect.getmembers(mod, inspect.isfunction))
    assert json.loads(json.dumps({"ok": True}))["ok"]
