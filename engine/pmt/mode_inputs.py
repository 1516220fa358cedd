"""The rows and public information of one run without public labels: one function for the page, the CLI and exports.

:func:`mode_inputs` is what the PMT page (:mod:`ui.pmt.compute.modes`), ``python -m engine pmt`` with a
public-information flag (:mod:`engine.cli.pmt_modes`) and the exported snippet and notebook
(:mod:`ui.pmt.compute.snippet`) call, so that they split the same rows and state the same response bound.

Two cases (:func:`private_split`):

* **a public file** (a published moments file, or a features-only public CSV): the public information is
  the file's, so *no row of the private data is set aside as public*; every row is private, and
  ``test_size`` of them (a permutation seeded by ``[split_seed, 1]``) are held out. ``n_pub`` is the file's.
* **a simulation** on one data set: ``n_pub`` rows are drawn as the public sample
  (:func:`engine.pmt.sweep.sweep_split`) and reduced to the mode's information (labels dropped, or only
  their moments kept: :func:`engine.pmt.sweep_modes.simulate_public_info`).

The ridge response centre and scale are public statements: the stated values, or in a simulation the
public rows' label mean and RMS (what a data provider would publish). A public file carries no labels, so
a ridge on it needs a stated scale (or bound). Never the private rows.
"""

from __future__ import annotations

import numpy as np


def private_split(info) -> bool:
    """True when the public information comes from a file (``info`` given): then no public split of the private data."""
    return info is not None


def file_split(X, y, *, split_seed: int, test_size: float = 0.2):
    """Every row private: ``(X_train, y_train, X_test, y_test)``, ``round(test_size n)`` rows held out.

    The same held-out rows as :func:`engine.pmt.sweep.sweep_split` with a separate public sample (and as
    ``python -m engine pmt --data ... --public-moments ...``).

    Examples
    --------
    >>> X = np.arange(20.0).reshape(10, 2); y = np.arange(10.0)
    >>> [a.shape[0] for a in file_split(X, y, split_seed=0)]
    [8, 8, 2, 2]
    """
    X, y = np.asarray(X, dtype=float), np.asarray(y, dtype=float)
    n_test = int(round(float(test_size) * len(y)))
    perm = np.random.default_rng([int(split_seed), 1]).permutation(len(y))
    te, tr = np.sort(perm[:n_test]), np.sort(perm[n_test:])
    return X[tr], y[tr], X[te], y[te]


def mode_inputs(X, y, *, mode: str, task: str, n_pub: int | None = None, split_seed: int = 0,
                test_size: float = 0.2, info=None, public_data=None, columns=None, response_center=None,
                response_scale=None, response_bound=None):
    """``(X_train, y_train, X_test, y_test, info, centre, scale, statement)`` of one run in ``mode``.

    Parameters
    ----------
    X, y : array-like
        Every row of the data set, raw (unstandardised).
    mode : {"unlabelled", "moments", "labelled"}
        The kind of public information (used for a simulation; a file's ``info`` has its own).
    task : {"ridge", "logistic"}
    n_pub : int, optional
        Public rows drawn in a simulation (ignored with ``info``).
    split_seed : int
    test_size : float
    info : engine.pmt.public_info.PublicInfo, optional
        A public file's information (moments, or features-only rows), aligned to ``columns``; then
        every row is private (:func:`private_split`).
    public_data : tuple (X_pub, y_pub), optional
        A separate labelled public sample, reduced to the mode's information (labels dropped, or its
        moments); every row of ``X`` is private.
    columns : sequence of str, optional
        Feature names (a simulation's public information carries them).
    response_center, response_scale, response_bound : float, optional
        Stated public facts about y (ridge).

    Returns
    -------
    tuple
        ``statement`` says where the ridge centre and scale came from (None for logistic); ``centre`` is
        0.0 when not stated; ``scale`` None only when ``response_bound`` is stated instead.

    Raises
    ------
    ValueError
        A ridge on a public file with no stated scale or bound; a simulation without ``n_pub``.
    """
    from engine.pmt.sweep import sweep_split
    from engine.pmt.sweep_modes import public_response_statement, simulate_public_info

    labels = None
    if private_split(info):
        Xtr, ytr, Xte, yte = file_split(X, y, split_seed=split_seed, test_size=test_size)
    elif public_data is not None:
        Xq, yq = (np.asarray(a, dtype=float) for a in public_data)
        Xtr, ytr, Xte, yte = file_split(X, y, split_seed=split_seed, test_size=test_size)
        info, labels = simulate_public_info(Xq, yq, mode, columns=columns), yq
    else:
        if n_pub is None:
            raise ValueError("a simulated public sample needs n_pub (the number of public rows drawn)")
        Xq, yq, Xtr, ytr, Xte, yte = sweep_split(X, y, n_pub=int(n_pub), split_seed=int(split_seed),
                                                 test_size=float(test_size), standardize=False, center_y=False)
        info, labels = simulate_public_info(Xq, yq, mode, columns=columns), yq
    c, s, statement = response_center, response_scale, None
    if task == "ridge":
        if s is None and response_bound is None:
            if labels is None:
                what = "a features-only public file" if info.mode == "unlabelled" else "a published moments file"
                raise ValueError(f"{what} carries no labels: state the response scale (the RMS of y - centre, a "
                                 "public fact); it is never taken from the private rows")
            c0, s = public_response_statement(labels)
            c = c0 if c is None else c
            statement = (f"y centre {c:.4g} and RMS {s:.4g}: the public rows' labels, as a data provider would "
                         "publish them (simulation)")
        elif s is not None:
            statement = f"y centre {0.0 if c is None else c:.4g} and RMS {s:.4g}: stated by you"
        else:
            statement = f"y centre {0.0 if c is None else c:.4g} and bound B_y {response_bound:.4g}: stated by you"
        c = 0.0 if c is None else float(c)
    return Xtr, ytr, Xte, yte, info, c, s, statement


def read_public_features(path, columns, *, source: str | None = None):
    """A features-only public CSV (the data's feature ``columns``, matched by name; no target needed) as
    :class:`engine.pmt.public_info.PublicInfo` rows (mode "unlabelled"), read with the validating upload
    loader (:func:`engine.datasets.upload.read_csv_upload`). ``path`` may be a path or a named file object.

    Raises
    ------
    ValueError
        From the loader: missing columns, non-numeric or missing values.
    """
    from engine.datasets.upload import read_csv_upload
    from engine.pmt.public_info import PublicInfo

    cols = [str(c) for c in columns]
    ds = read_csv_upload(path, target=cols[-1], features=cols[:-1] or None, task="regression")
    X = ds.X.to_numpy(dtype=float) if len(cols) > 1 else np.empty((len(ds.y), 0))
    # C order, as the page's copy of the rows is: BLAS may sum a Fortran-ordered copy in another order
    X = np.ascontiguousarray(np.column_stack([X, np.asarray(ds.y, dtype=float)]))
    return PublicInfo.from_rows(X, columns=cols, source=str(source if source is not None else path))
