"""The PMT page's advice (no Streamlit): advisories, the planner behind the noise banner, the page's wording of
engine messages, the warnings beside a result. A leaf below :mod:`ui.pmt.compute.core` (which re-exports it)."""

from __future__ import annotations

import math

import numpy as np

from typing import TYPE_CHECKING

from ui.pmt.compute.catalogue import DEFAULT_PUBLIC_SHARE

if TYPE_CHECKING:  # annotations only (core imports this module)
    from ui.pmt.compute.core import PreparedData

def advisories(data: PreparedData, diag: dict, delta: float | None = None) -> list[str]:
    """Plain-language warnings about the current view (shown above the figures).

    With ``delta``: the engine's :class:`engine.privacy.DeltaTooLargeWarning` when delta > 1/n for the
    private training rows (:func:`engine.privacy.check_delta`, the check the estimators and the sweep make).
    """
    out = []
    if delta is not None:
        import warnings

        from engine import privacy as P

        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            P.check_delta(float(delta), int(len(data.y_train)))
        out += [str(w.message) for w in rec if issubclass(w.category, P.DeltaTooLargeWarning)]
    if data.n_pub <= data.d + 1:
        out.append(f"n_pub = {data.n_pub} public rows for {data.d} features (+ intercept): the public second moment is "
                   "singular, so the engine adds a tiny ridge (tau I) before whitening. Use n_pub >= d + 2.")
    if data.public_is_split and data.n_pub > DEFAULT_PUBLIC_SHARE * data.n_total:
        out.append(f"n_pub = {data.n_pub} makes {100 * data.n_pub / data.n_total:.0f}% of the {data.n_total} rows public "
                   f"(more than {100 * DEFAULT_PUBLIC_SHARE:.0f}%): in a real release these rows would be published "
                   f"as they are. The default is min(200, {100 * DEFAULT_PUBLIC_SHARE:.0f}% of the rows).")
    banner = noise_banner(data, diag)
    if banner:
        out.insert(0, banner)
    if diag.get("eig_fixes") and diag.get("task", "regression") == "regression":
        out.append("In the diagnostic fit the noisy matrix PMT released had directions no larger than its noise; PMT "
                   "raised their eigenvalues to the noise level, which shrinks them towards zero (counted in the "
                   "sweep's eig_fix column; the paper's solver only floors a matrix that is not positive definite).")
    if not data.standardize:
        out.append("Features are not standardised here: every method still centres y by its public mean, and the "
                   "private-only baselines standardise the features with public statistics before they clip (no "
                   "privacy cost), so the results match the standardised view up to noise. PMT's whitening itself "
                   "does not need standardised features.")
    return out


def plan_for(data: PreparedData, diag: dict):
    """The planner (:mod:`engine.pmt.planner`) for this view: public rows, epsilon, delta, lam, eta, the user's n.

    Public information only (no privacy cost). The PMT curve is the response form the run used
    (:func:`plan_response`: the diagnostic fit's ``response``, "joint" by default), so the planner's crossover
    describes the estimator whose numbers the page shows. None for a task other than ridge, noise off, or too few
    public rows (``n_pub <= d + 1``).
    """
    if diag.get("task", "regression") != "regression" or not math.isfinite(float(diag.get("epsilon", math.inf))):
        return None
    if diag.get("public_mode", "labelled") != "labelled":  # its public-only curve needs public labels
        return None
    Xq, yq = np.asarray(data.X_pub, dtype=float), np.asarray(data.y_pub, dtype=float)
    if Xq.shape[0] <= Xq.shape[1] + 2:
        return None
    memo = diag.get("_plan")  # a rerun asks twice (the banner, the verdict): the plan of this diag's view, once
    if memo is not None and memo[0] == data.key:
        return memo[1]
    from ui.common import figure_cache as FC

    # bundled data: one plan per view for every session (the cross-session cache); an upload's: this run's only
    p = FC.value(_plan, Xq, yq, epsilon=float(diag["epsilon"]), delta=float(diag["delta"]), lam=float(diag["lam"]),
                 eta=float(diag.get("eta", 0.05) or 0.05), n_user=int(data.n_priv), response=plan_response(diag),
                 shared=bool(diag.get("shared_cache", False)))  # the view's (ui.pmt.compute.view.Diagnostics.of)
    diag["_plan"] = (data.key, p)  # diag belongs to one view (data, epsilon, delta, lam, eta): stored with it
    return p


def plan_response(diag: dict) -> str:
    """The PMT response form of the view: the diagnostic fit's resolved ``response`` ("joint" or "clip"), else the
    spec's setting ("auto": PMTRidge's own rule, "joint" with public labels).

    >>> plan_response({"response": "clip"}), plan_response({}), plan_response({"response": None})
    ('clip', 'auto', 'auto')
    """
    got = diag.get("response")
    return str(got) if got in ("auto", "clip", "joint") else "auto"


def _plan(Xq: np.ndarray, yq: np.ndarray, **settings):
    from engine.pmt.planner import plan, plan_inputs_from_public

    return plan(plan_inputs_from_public(Xq, yq), **settings)


#: Engine messages that name an argument of the Python API -> the same problem in the page's terms (which
#: control to change). Matched by a fragment of the engine's message.
PAGE_TERMS = {
    "y_pub is all zero": (
        "The public rows' target values are all zero, so the response bound B_y, which is computed from the "
        "public rows, would be 0 and no release could be calibrated. Change the public sample: more public rows "
        "(n_pub), another seed of the public/private split (Advanced), or a public file whose target is not all "
        "zero; or choose another target column in the upload."),
    "public labels are required here": (
        "The public sample has no target values, which the response bound needs: choose a public file that "
        "has the target column, or the random split."),
}


def in_page_terms(message: str) -> str:
    """An engine error in the page's words (:data:`PAGE_TERMS`); other messages unchanged.

    Examples
    --------
    >>> in_page_terms("y_pub is all zero, so ... pass response_bound=<float>").startswith("The public rows' target")
    True
    >>> in_page_terms("n_pub must be at least 1")
    'n_pub must be at least 1'
    """
    for fragment, text in PAGE_TERMS.items():
        if fragment in str(message):
            return text
    return str(message)


def noise_banner(data: PreparedData, diag: dict, verdict=None) -> str | None:
    """The "noise-dominated" banner (ridge), from public quantities and the budget only, or None.

    Whether PMT's release is noise-dominated (:func:`_noise_dominance`, for the response form the run used: the
    clip form's ``X^T X`` or the joint form's ``(x, y)`` moment) and how many private rows PMT would need to beat
    the public rows alone (the planner's ``crossover_n``, :func:`plan_for`, same response form), which moves with
    n_pub, epsilon and lam. Shown when the release is noise-dominated or the planner's crossover lies above the
    private rows.

    ``verdict`` (:class:`engine.figures.verdict.Verdict` of the same view): the banner's last sentence then says
    what the evaluation measured instead of the prediction, so the two never disagree: "the public-only fit is
    the better estimate" only when the verdict's winner is the public-only fit; when the verdict has PMT winning
    (or a tie), the banner says so and calls the prediction conservative. Without a verdict (before the
    evaluation is summarised) the sentence is the planner's prediction, worded as one, and the whole banner is
    public (it depends on public quantities and the budget only); with a verdict its last clause is the verdict's
    comparison and says so (the verdict is a non-private diagnostic).
    """
    got = _noise_dominance(data, diag)
    if got is None:
        return None
    nd, m, form = got
    cross = n_needed(data, diag)
    if not nd.dominated and cross is not None and cross <= data.n_priv:
        return None
    released = "released X^T X" if form == "clip" else "released joint (x, y) moment"
    what = ("The private part is noise-dominated at this epsilon" if nd.dominated
            else "At this epsilon the private statistics are less precise than the public sample")
    head = (f"{what}: the noise on PMT's {released} (spectral size about {nd.noise_scale:.3g}) is "
            f"{nd.noise_scale / nd.signal:.2g}x its signal (n = {data.n_priv} private rows).")
    if not nd.dominated and cross is None and crossover_note(data, diag):  # not noise-dominated, the crossover unknown
        head = (f"The noise on PMT's {released} is only {nd.noise_scale / nd.signal:.2g}x its signal here (n = "
                f"{data.n_priv} private rows); what decides is the bias of the bounds PMT applies to the rows.")
    if form == "joint" and nd.dominated:
        head += (" PMT's noise-aware solve raises the directions the noise swamps to the noise level, which pulls its "
                 "fit towards the public rows' own fit.")
    where = f"at this epsilon, n_pub = {m} and lam = {float(diag['lam']):g}"
    if cross is not None and cross <= data.n_priv:
        plan_s = (f"The planner predicts PMT beats the {m} public rows alone from about {cross:,} private rows "
                  f"{where}, so these {data.n_priv:,} should suffice.")
    else:
        note = crossover_note(data, diag)
        need = (f"PMT would need about {cross:,} private rows" if cross is not None
                else "PMT would need more than 1e8 private rows")
        plan_s = (f"The planner predicts {need} {where} to beat the {m} public rows alone" if note is None else
                  f"The planner cannot say how many private rows PMT would need {where} to beat the {m} public "
                  f"rows alone: {note.removeprefix('unknown: ')}")
        winner = None if verdict is None else getattr(verdict, "winner", None)
        if verdict is None:
            plan_s += (". " if note else "; below that it predicts the public-only fit (no privacy cost) is at least as "
                       "good.")
        elif winner == "Public-only":
            plan_s += ("; until then the public-only fit (no privacy cost) is the better estimate, as the verdict "
                       "above measures here." if not note else "; here the public-only fit (no privacy cost) is the "
                       "better estimate, as the verdict above measures.")
        elif winner == "PMT":
            plan_s += ("; on this evaluation PMT already beats them (the verdict above), so the prediction is "
                       "conservative here." if not note else "; on this evaluation PMT beats them (the verdict above).")
        elif winner is None:
            plan_s += ("; on this evaluation the verdict above finds PMT and the best other method about equal "
                       "(a gap within the seeds' noise).")
        else:
            plan_s += f"; on this evaluation {winner} is best (the verdict above)."
        plan_s = plan_s.rstrip()
    tail = ("Computed from public quantities only (see the Planner tab)." if verdict is None else
            "The planner's numbers are computed from public quantities only (see the Planner tab); the comparison "
            "with the held-out rows is the verdict's, a non-private diagnostic.")
    return f"{head} {plan_s} {tail}"


def crossover_note(data: PreparedData, diag: dict) -> str | None:
    """Why the plan's crossover is unknown (:attr:`engine.pmt.planner.Plan.crossover_note`), or None."""
    p = plan_for(data, diag)
    return None if p is None else p.crossover_note


def page_warnings(view, verdict) -> list[str]:
    """The view's warnings (:class:`ui.pmt.compute.view.PMTView` ``warnings``) with the noise banner worded against
    ``verdict`` (the verdict the page leads with, computed from the same evaluation): see :func:`noise_banner`. The
    list keeps its length and order (the heading counts it before the verdict is drawn)."""
    warnings_ = list(view.warnings)
    prep, diag = view.prep, view.diag.values
    if verdict is None:
        return warnings_
    old = noise_banner(prep, diag)
    if old is None or old not in warnings_:
        return warnings_
    new = noise_banner(prep, diag, verdict)
    return [new if w == old else w for w in warnings_]


def n_needed(data: PreparedData, diag: dict) -> int | None:
    """Private rows PMT would need at this budget to beat the public rows alone (ridge), or None.

    The planner's ``crossover_n`` (:func:`plan_for`: public quantities and the budget only, the run's response
    form), so it moves with n_pub, epsilon and lam; None for other tasks, without public labels, or when no
    crossover lies below 1e8 rows.
    """
    p = plan_for(data, diag)
    return None if p is None or p.crossover_n is None else int(p.crossover_n)


def _noise_dominance(data: PreparedData, diag: dict):
    """(noise dominance, public rows, response form) for ridge, or None.

    The response form is the plan's (:func:`plan_for`; "clip" when there is no plan). Clip form:
    :func:`engine.pmt.public.noise_dominance` on the released ``X~^T X~``. Joint form: the one release of the
    whitened ``(x, y)`` moment, truncated at ``R_J = sqrt((d+1)(1 + ln(2n/eta)))`` with the whole budget
    (noise sd ``sqrt(2) R_J^2 / mu``); its spectral size ``2 sqrt(d+1) sd`` (the semicircle edge, as for the clip
    form) against the signal ``n``, dominated from half of it.
    """
    if diag.get("task", "regression") != "regression" or not (float(diag.get("mu", 0) or 0) > 0):
        return None
    if diag.get("public_mode", "labelled") != "labelled":  # "beat the public rows alone" needs public labels
        return None
    if not math.isfinite(float(diag["mu"])):
        return None
    from engine.pmt import public_moment
    from engine.pmt.public import NoiseDominance, noise_dominance

    mom = public_moment(data.X_pub, fit_intercept=True)
    Z = mom.prepare(data.X_pub) @ mom.Sigma_pub_inv_sqrt
    yq = np.asarray(data.y_pub, dtype=float)
    m, d = Z.shape
    if m <= d + 1:
        return None
    p = plan_for(data, diag)
    form = "clip" if p is None else p.response
    mu, eta, n = float(diag["mu"]), float(diag.get("eta", 0.05) or 0.05), int(data.n_priv)
    if form == "joint":
        RJ2 = (d + 1) * (1.0 + math.log(2.0 * n / eta))
        noise = 2.0 * math.sqrt(d + 1) * math.sqrt(2.0) * RJ2 / mu
        nd = NoiseDominance(noise_scale=noise, signal=float(n), dominated=bool(noise >= n / 2.0),
                            n_needed=int(p.crossover_n) if p.crossover_n is not None else 0)
        return nd, m, form
    yc = yq - yq.mean()  # PMT centres y by the public mean
    th = np.linalg.lstsq(Z, yc, rcond=None)[0]
    r = yc - Z @ th
    nd = noise_dominance(n=n, d=d, mu=mu, eta=eta,
                         n_pub=m, resid_sd=float(np.sqrt(r @ r / (m - d))), theta_norm=float(np.linalg.norm(th)),
                         y_rms=float(np.sqrt(np.mean(yc**2))),
                         neighbouring=str(diag.get("neighbouring", "replace-one") or "replace-one"))
    return nd, m, form
