"""The PMT page's runs without public labels: unlabelled public rows or published moments (no Streamlit here).

The labelled-rows view (the page's default) runs :func:`engine.pmt.sweep.run_sweep`. The two other kinds of
public information (:data:`engine.pmt.public_info.PUBLIC_MODES`) run the engine's mode path
:func:`engine.pmt.sweep_modes.run_modes`, exactly as ``python -m engine pmt --public-mode`` does
(:mod:`engine.cli.pmt_modes`): the public/private/test split of :func:`engine.pmt.sweep.sweep_split` on the
raw rows (the same rows as the labelled view), the public information simulated from the public rows
(labels dropped, or only their published moments kept: :func:`engine.pmt.sweep_modes.simulate_public_info`),
or an uploaded moments file; features standardised by the public information's own mean and standard
deviation when the page's switch is on. The result has the columns of the labelled sweep that the page's
figures, headline and exports read (``method, epsilon, lam, n_pub, seed`` and the metric columns).

Response centre and scale (ridge) are public statements: the user's stated values, or, on a bundled
simulation, the public rows' label mean and RMS (what a data provider would publish;
:func:`engine.pmt.sweep_modes.public_response_statement`), said so on the page. An uploaded moments file
carries no labels, so it needs a stated scale. Never the private rows.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd

#: Page method names -> the mode path's method keys (:data:`engine.pmt.sweep_modes.MODE_METHODS`).
PAGE_KEYS = {"PMT": "pmt", "DP-RR": "dp-rr", "DP-GD": "dp-gd", "DP-Newton": "dp-newton", "Non-private": "non-private",
             "Public-only": "public-only", "PMT-pooled": "pmt-pooled"}
#: Page tasks the mode path runs (page task -> engine task).
MODE_TASKS = {"regression": "ridge", "classification": "logistic"}


def offered_methods(task: str, mode: str, page_methods) -> list[str]:
    """The page's methods offered in ``mode`` (order kept); labelled: all of ``page_methods``.

    Examples
    --------
    >>> offered_methods("regression", "moments", ["PMT", "DP-RR", "DP-RR (oracle C, non-private tuning)", "Public-only"])
    ['PMT', 'DP-RR']
    """
    if mode == "labelled":
        return list(page_methods)
    from engine.pmt.sweep_modes import MODE_METHODS

    keys = MODE_METHODS[MODE_TASKS[task]][mode]
    return [m for m in page_methods if PAGE_KEYS.get(m) in keys]


def not_offered_line(mode: str) -> str | None:
    """The one line saying why public-only and PMT-pooled are missing (None in mode "labelled")."""
    if mode == "labelled":
        return None
    from engine.pmt.sweep_modes import NOT_OFFERED_REASON

    what = "unlabelled public rows" if mode == "unlabelled" else "published moments"
    return NOT_OFFERED_REASON.format(what=what) + "."


def read_moments(name: str, data: bytes, columns=None):
    """Parse and validate an uploaded moments file in memory (:meth:`PublicInfo.from_bytes`; never written to disk).

    ``columns``: the data set's feature names, when known: the file must name exactly these (any order).

    Raises
    ------
    ValueError
        The engine's message (not symmetric, not positive semi-definite, missing fields, columns that do not match
        the data, ...), naming the file, at most a few hundred characters.
    """
    from engine.datasets.guard import bounded
    from engine.pmt.public_info import PublicInfo

    info = PublicInfo.from_bytes(data, str(name))
    if columns is not None:
        try:
            info.align(list(columns))
        except ValueError as exc:
            raise ValueError(bounded(f"the moments file does not fit the data set: {exc}")) from None
    return info


def read_public_features(name: str, data: bytes, columns):
    """Parse and validate an uploaded features-only public CSV (mode "unlabelled"): the private file's feature
    ``columns`` (any order, matched by name; a target column or other extra columns are ignored), numeric and
    finite, more rows than columns plus the intercept. Read with the validating upload loader, as the CLI's
    ``--public-features`` does.

    Returns
    -------
    engine.pmt.public_info.PublicInfo
        Mode "unlabelled", columns in the private file's order.

    Raises
    ------
    ValueError
        In the page's terms, naming the file and the problem (missing columns, non-numeric or missing values,
        too few rows).
    """
    from engine.pmt.mode_inputs import read_public_features as read
    from ui.common.upload_file import Named

    cols = [str(c) for c in columns]
    try:
        info = read(Named(name, data), cols, source=str(name))
    except ValueError as exc:
        raise ValueError(f"The public features file {name!r} was not accepted: {exc} It needs the data set's feature "
                         f"columns {cols} (no target column needed).") from None
    if info.n_pub <= len(cols) + 1:
        raise ValueError(f"The public features file {name!r} has {info.n_pub} rows; PMT needs more public rows than "
                         f"d = {len(cols) + 1} (the {len(cols)} columns plus the intercept).")
    return info


def moments_spec(info, columns) -> dict:
    """The moments file as a JSON-serialisable dict, columns in the private file's order (``ValueError`` on a mismatch)."""
    return info.align(list(columns)).to_dict()


def _info_from_spec(d: dict):
    """A public file's information from the spec: a moments file's moments, or a features-only file's rows."""
    from engine.pmt.public_info import PublicInfo

    if d.get("rows") is not None:  # a features-only public file: its rows, as --public-features reads them
        return PublicInfo.from_rows(np.asarray(d["rows"], dtype=float), columns=d["columns"],
                                    source=str(d.get("name", "uploaded public features")))
    return PublicInfo.from_moments(columns=d["columns"], n_pub=d["n_pub"], mean=d["mean"],
                                   second_moment=d["second_moment"], source=str(d.get("name", "uploaded moments")))


def file_info(spec: dict):
    """The public file's information of a mode view (a moments file or a features-only file), else None.

    A file means no public split of the private data (:func:`engine.pmt.mode_inputs.private_split`).
    """
    mode = spec.get("public_mode", "labelled")
    if mode == "moments" and spec.get("moments") is not None:
        return _info_from_spec(spec["moments"])
    if mode == "unlabelled" and spec.get("public_features") is not None:
        return _info_from_spec(spec["public_features"])
    return None


def split_info(data, spec: dict, n_pub: int | None = None):
    """``(X_train, y_train, X_test, y_test, info, centre, scale, statement)`` for a mode run, raw (unstandardised) rows.

    :func:`engine.pmt.mode_inputs.mode_inputs`, as the CLI and the exported snippet call it: with a public file
    every row of the data set is private (no public split); else ``n_pub`` rows are the simulated public sample.
    ``statement`` says where the ridge response centre and scale came from (None for logistic).

    Raises
    ------
    ValueError
        A public file and no stated response scale (ridge).
    """
    from engine.pmt.mode_inputs import mode_inputs

    from ui.pmt.compute.catalogue import TEST_SIZE

    task = MODE_TASKS[spec["task"]]
    try:
        return mode_inputs(data.X, data.y, mode=spec["public_mode"], task=task,
                           n_pub=int(spec["n_pub"] if n_pub is None else n_pub), split_seed=int(spec["split_seed"]),
                           test_size=TEST_SIZE, info=file_info(spec), public_data=data.public_raw,
                           response_center=spec.get("response_center"),
                           response_scale=spec.get("response_scale"))
    except ValueError as exc:
        if "carries no labels" in str(exc):
            raise ValueError(str(exc).replace("a public fact)", "a public fact) under 'Public information'")) from None
        raise


def mode_sweep(data, spec: dict) -> pd.DataFrame:
    """One page sweep (``spec["sweep"]`` in epsilon / lam / n_pub) in mode ``spec["public_mode"]``.

    Returns
    -------
    pandas.DataFrame
        :func:`engine.pmt.sweep_modes.run_modes`' rows (one per method, epsilon, lam, n_pub, seed) with
        ``sweep`` added: ``l2_error, rmse, r2`` (ridge) or ``auc, accuracy, log_loss, l2_error,
        reference_converged`` (logistic), ``noise_dominance`` of the noisy Newton.
    """
    from threadpoolctl import threadpool_limits

    from engine.pmt.public_info import UnspannedWarning
    from engine.pmt.sweep_modes import run_modes

    kind, vals = spec["sweep"], spec["values"]
    if kind == "n_pub" and (data.public_raw is not None or spec.get("moments") is not None
                            or spec.get("public_features") is not None):
        raise ValueError("n_pub cannot be swept with a separate public file or a moments file (its n_pub is fixed)")
    n_pubs = [int(v) for v in vals] if kind == "n_pub" else [int(spec["n_pub"])]
    lams = [float(v) for v in vals] if kind == "lam" else [float(spec["lam"])]
    epsilons = [float(v) for v in vals] if kind == "epsilon" else [float(spec["epsilon"])]
    methods = [PAGE_KEYS[m] for m in offered_methods(spec["task"], spec["public_mode"], spec["methods"])]
    if not methods:
        raise ValueError("none of the selected methods is offered without public labels: select PMT, a private-only "
                         "baseline or the non-private fit")
    frames = []
    with threadpool_limits(limits=1, user_api="blas"), warnings.catch_warnings():
        warnings.simplefilter("ignore", UnspannedWarning)
        for n_pub in n_pubs:
            Xtr, ytr, Xte, yte, info, c, s, _ = split_info(data, spec, n_pub)
            for lam in lams:
                ridge = spec["task"] == "regression"
                frames.append(run_modes(Xtr, ytr, Xte, yte, info, task=MODE_TASKS[spec["task"]], methods=methods,
                                        epsilons=epsilons, seeds=int(spec["seeds"]), lam=lam, delta=float(spec["delta"]),
                                        eta=float(spec["eta"]), standardize=bool(data.standardize),
                                        response_center=c if ridge else None, response_scale=s if ridge else None,
                                        clip_radius=float(spec.get("clip_radius") or 0) or None))
    frame = pd.concat(frames, ignore_index=True)
    frame["sweep"] = kind
    return frame


def mode_diagnostics(data, spec: dict) -> dict:
    """The headline's and Truncation tab's quantities in a mode without labels (the PMT transform only).

    The transform (:func:`engine.pmt.pmt_transform`) with the mode's public moment on the private training
    rows (standardised by the public information when asked); mu from the budget. The one noisy fit per
    method (ledger, noisy kappa) is not made here: ``ledgers`` is None and ``kappa_noisy`` NaN.
    """
    from engine import privacy as P
    from engine.pmt import add_intercept, pmt_transform
    from engine.pmt.sweep_modes import standardize_public

    Xtr, _, _, _, info, _, _, statement = split_info(data, spec)
    m0, s0 = standardize_public(info)  # DP-RR clips the rows standardised with public statistics
    base_norms = np.linalg.norm(add_intercept((Xtr - m0) / s0), axis=1)
    if data.standardize:
        m, s = standardize_public(info)
        Xtr = (Xtr - m) / s
        from engine.pmt.sweep_modes import standardized_info

        info = standardized_info(info, m, s)
    tr = pmt_transform(Xtr, moment=info.public_moment(), eta=float(spec["eta"]))
    mu = P.gdp_mu(float(spec["epsilon"]), float(spec["delta"]))
    from engine.pmt import pmt_radius

    # the mode path (run_modes) runs DP-RR at the page's radius, or the public formula sqrt(d (1 + ln(2n/eta)))
    clip = float(spec.get("clip_radius") or 0) or pmt_radius(tr.d, tr.n, float(spec["eta"]))
    return {"task": spec["task"], "eta": spec["eta"], "epsilon": spec["epsilon"], "delta": spec["delta"],
            "lam": spec["lam"], "neighbouring": "replace-one", "raw_norms": base_norms,
            "ledgers": None, "eig_fixes": 0, "B_y": math.nan, "frac_y_clipped": math.nan, "kappa_noisy": math.nan,
            "mu": mu, "clip_radius": clip, "public_mode": spec["public_mode"], "response_statement": statement,
            "n_pub_info": int(info.n_pub), "kappa_raw": tr.kappa_raw, "kappa_pmt": tr.kappa_pmt, "radius": tr.radius,
            "frac_truncated": tr.frac_truncated,
            "kappas": {"raw": tr.kappa_raw, "public": tr.kappa_pub, "pmt": tr.kappa_pmt, "noisy": math.nan},
            "spectra": {"raw": tr.eigenvalues_raw, "public": tr.eigenvalues_public, "pmt": tr.eigenvalues_pmt},
            "pmt_norms": tr.norms_before}


def mode_fits(data, spec: dict) -> dict:
    """One noisy fit (noise seed 0) of each selected private method in the mode, for the ledger and the noisy kappa.

    Built as :func:`engine.pmt.sweep_modes.run_modes` builds them (PMT through
    :func:`engine.pmt.public_fit.fit_public` with the mode's public information; the baselines with its
    moment), on the rows of :func:`split_info`.

    Returns
    -------
    dict
        ``ledgers`` (page method -> :class:`engine.privacy.PrivacyLedger`), ``kappa_noisy``, ``eig_fixes`` and
        ``noise_dominance`` (PMT's noisy Newton, logistic; NaN otherwise), as :func:`ui.pmt.compute.core.with_fits` merges.
    """
    from threadpoolctl import threadpool_limits

    from engine.pmt.public_fit import fit_public
    from engine.pmt.public_info import UnspannedWarning
    from engine.pmt.sweep_modes import logistic_methods as _logistic_methods
    from engine.pmt.sweep_modes import ridge_methods as _ridge_methods
    from engine.pmt.sweep_modes import standardize_public
    from engine.pmt.sweep_modes import standardized_info as _standardized_info
    from engine.pmt.sweep_modes import with_labels as _with_labels

    Xtr, ytr, _, _, info, c, s, _ = split_info(data, spec)
    if data.standardize:
        m, sd = standardize_public(info)
        Xtr, info = (Xtr - m) / sd, _standardized_info(info, m, sd)
    ridge = spec["task"] == "regression"
    base = {"delta": float(spec["delta"]), "eta": float(spec["eta"])}
    keys = [PAGE_KEYS[m] for m in offered_methods(spec["task"], spec["public_mode"], spec["methods"])
            if m not in ("Non-private",)]
    lam = float(spec["lam"])
    if ridge:
        y = ytr - c
        B_y = float(s) * math.sqrt(1.0 + math.log(2.0 * len(y) / base["eta"]))
        makers = _ridge_methods(keys, base, B_y, lam, 100)
    else:
        y = ytr
        makers = _logistic_methods(keys, base, lam, 100, 5)
    names = {v: k for k, v in PAGE_KEYS.items()}
    out = {"ledgers": {}, "kappa_noisy": math.nan, "eig_fixes": 0, "noise_dominance": math.nan}
    with threadpool_limits(limits=1, user_api="blas"), warnings.catch_warnings():
        warnings.simplefilter("ignore", UnspannedWarning)
        warnings.simplefilter("ignore", UserWarning)
        for key, make in makers.items():
            est = make()
            est.set_params(epsilon=float(spec["epsilon"]), random_state=np.random.default_rng(0))
            if key == "pmt":
                fit_public(est, Xtr, y, _with_labels(info, None), response_center=0.0 if ridge else None)
            else:
                est.fit(Xtr, y, info.X_pub if info.X_pub is not None else info.public_moment(), None)
            rep = est.report_
            out["ledgers"][names[key]] = rep.ledger
            if key == "pmt":
                out["kappa_noisy"] = float(getattr(rep, "kappa_noisy", math.nan))
                out["eig_fixes"] = int(getattr(rep, "eig_fixes", 0) or 0)
                out["noise_dominance"] = float((getattr(rep, "extra", {}) or {}).get("noise_dominance", math.nan))
    return out


def cli_reason(spec: dict) -> str | None:
    """None when ``python -m engine pmt`` reproduces this mode view (:func:`cli_flags`), else why not.

    Every mode view has its command: a simulation (``--public-mode``, on a bundled set, an upload, or an
    upload's separate public file given with ``--public``) or a public file (``--public-moments`` /
    ``--public-features``, on either kind of data: no public split)."""
    return None


def cli_flags(spec: dict, argv: list[str]) -> list[str]:
    """The labelled view's ``pmt`` arguments turned into this mode's: ``--public-mode MODE`` (the CLI draws the
    same split and, without stated values, the same public statement of y) or the public file
    (``--public-moments`` / ``--public-features``, its path behind the placeholder folder the user replaces),
    the stated response centre and scale (``--clip-radius`` kept: the mode path honours it)."""
    from ui.pmt.compute.catalogue import UPLOAD_DIR_PLACEHOLDER

    out = list(argv)
    if spec.get("public_features") is not None:
        out += ["--public-features", UPLOAD_DIR_PLACEHOLDER + str(spec["public_features"]["name"])]
    elif spec.get("moments") is not None:
        out += ["--public-moments", UPLOAD_DIR_PLACEHOLDER + str(spec["moments"]["name"])]
    else:
        out += ["--public-mode", spec["public_mode"]]
    for flag, key in (("--response-center", "response_center"), ("--response-scale", "response_scale")):
        if spec.get(key) is not None:
            out += [flag, repr(float(spec[key]))]
    return out
