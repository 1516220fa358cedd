"""The certified Renyi bound: the supremum of the per-pair bound over *any* two clipped inputs.

The per-pair bound of NVDP.md section 4 (the Dirichlet term plus the Gaussian terms of every
component and dimension) depends on the inputs only through their clipped parameters. With the
clipping rules (||mu|| <= C_mu, sigma in [floor, cap] per dimension, alpha in [alpha_min,
alpha_max]) and a fixed number K of released components (the length-hiding mechanism,
:attr:`engine.nvdp.layer.NVIBConfig.n_components`: component 0 is the prior, the other K - 1 are
tokens or prior-padding), the supremum over all pairs of inputs is a function of C_mu, the sigma and
alpha bounds, K, the Renyi order lambda and the dimension d alone. This module computes it.

Gaussian part (closed form). Per dimension, with u = s_a^2, v = s_b^2 and s^2 = lambda v -
(lambda - 1) u, the term is lambda (m_a - m_b)^2 / (2 s^2) + g(u, v). Over the ball the mean
difference is at most 2 C_mu in L2 norm and the supremum puts all of it on one dimension, so per
component

    sup = H* + (d - 1) G*,   H* = max_box [2 lambda C_mu^2 / s^2 + g],   G* = max_box g.

Both functions are convex in u for fixed v (d^2/du^2 > 0), so u sits at an end of [floor^2, cap^2];
in v the stationary points solve lambda v^2 - ((2 lambda - 1) u + 2A) v + (lambda - 1) u^2 = 0 (A =
2 lambda C_mu^2, or 0 for G*), so the maximum is the largest value over the ends and these roots.
The prior component is the same in every input, its terms are 0. If s^2 <= 0 somewhere on the box
(no cap, or cap >= 1 at the floor of this order, or an order above the clipping's), the bound is
infinite.

Dirichlet part (bounded error). With phi(a, b) = lnG(lambda a - (lambda-1) b) - lambda lnG(a) +
(lambda-1) lnG(b) and psi(A, B) = -lnG(lambda A - (lambda-1) B) + lambda lnG(A) - (lambda-1) lnG(B),
(lambda - 1) D = phi(alpha_0, alpha_0) + sum_i phi(a_i, b_i) + psi(sum a, sum b). A lower value is
attained at the best corner configuration (each of the K - 1 pairs (a_i, b_i) at one of the four
corners of [alpha_min, alpha_max]^2; all counts enumerated); an upper value comes from Lagrangian
weak duality, for any (t, s)

    (lambda-1) D <= phi_0 + (K-1) max_box [phi - t a - s b] + max_rect [psi + t (A - alpha_0) + s (B - alpha_0)],

whose two-dimensional maxima are taken on a grid plus a Lipschitz allowance from the monotone
digamma (so the upper value is a true upper bound up to floating point), minimised over (t, s).
The certified figure reported is the upper value; the gap to the attained value is the error. It
is infinite when alpha_min <= ((lambda - 1) / lambda) alpha_max (a Gamma term of some pair is).

(epsilon, delta): the standard RDP conversion epsilon = D_lambda + ln(1/delta) / (lambda - 1)
(Mironov 2017, Proposition 3), minimised over the orders at which the bound is finite. No
Streamlit here.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, replace

import numpy as np
from scipy.special import digamma, gammaln

from engine.nvdp.clipping import ClipConfig

__all__ = ["CertifiedBound", "certified_bound", "gaussian_sup", "dirichlet_sup", "rdp_to_dp",
           "certified_epsilon", "what_it_takes", "certified_what_if"]


@dataclass(frozen=True)
class CertifiedBound:
    """The supremum of the per-pair Renyi bound over any two clipped inputs (see :func:`certified_bound`).

    Attributes
    ----------
    total : float
        Certified upper value in nats: ``gaussian + dirichlet_upper`` (+inf when a term is unbounded).
    gaussian : float
        Sum of the Gaussian terms' supremum over the K - 1 free components (closed form).
    gaussian_mean_dim : float
        H*, the one dimension that carries the whole mean difference 2 C_mu.
    gaussian_var_dim : float
        G*, the supremum of the variance part of one dimension.
    dirichlet_upper, dirichlet_attained : float
        Upper value (duality bound) and the value attained at the best corner configuration.
    total_attained : float
        ``gaussian + dirichlet_attained``: a pair of clipped parameter sets has this bound.
    renyi_order, C_mu, sigma_floor, sigma_cap, alpha_min, alpha_max : float
    n_components, d : int
    reason : str
        Why the bound is infinite ("" when finite).
    """

    total: float
    gaussian: float
    gaussian_mean_dim: float
    gaussian_var_dim: float
    dirichlet_upper: float
    dirichlet_attained: float
    total_attained: float
    renyi_order: float
    C_mu: float
    sigma_floor: float
    sigma_cap: float
    alpha_min: float
    alpha_max: float
    n_components: int
    d: int
    reason: str = ""

    @property
    def error(self) -> float:
        """Upper minus attained value (nats): how far the certified figure can be above the true supremum."""
        return self.total - self.total_attained if math.isfinite(self.total) else math.nan

    def to_dict(self) -> dict:
        out = {k: getattr(self, k) for k in self.__dataclass_fields__}
        out["error"] = self.error
        return out


def _g(u, v, lam):
    s2 = lam * v - (lam - 1.0) * u
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(s2 > 0, (0.5 * np.log(s2) - 0.5 * (1 - lam) * np.log(u) - 0.5 * lam * np.log(v)) / (1 - lam),
                        np.inf), s2


def _h_max(A: float, floor: float, cap: float, lam: float) -> float:
    """max over [floor, cap]^2 of A / s^2 + g (u at its ends; v at its ends and the stationary roots)."""
    lo, hi = floor * floor, cap * cap
    best = -math.inf
    for u in (lo, hi):
        cands = [lo, hi]
        b = (2 * lam - 1) * u + 2 * A
        disc = b * b - 4 * lam * (lam - 1) * u * u
        if disc >= 0:
            cands += [(b - math.sqrt(disc)) / (2 * lam), (b + math.sqrt(disc)) / (2 * lam)]
        for v in cands:
            if not (lo <= v <= hi):
                continue
            g, s2 = _g(np.float64(u), np.float64(v), lam)
            if not s2 > 0:
                return math.inf
            best = max(best, float(A / s2 + g))
    return best


def gaussian_sup(C_mu: float, floor: float, cap: float, renyi_order: float, d: int) -> tuple[float, float, float]:
    """Supremum of the Gaussian terms of one component over ||mu|| <= C_mu, sigma in [floor, cap]^d.

    Returns
    -------
    per_component, H, G : float
        ``H + (d - 1) G``, the mean-carrying dimension H* and the variance-only dimension G* (nats);
        +inf when lambda cap^2 ... s^2 <= 0 somewhere on the box.

    Examples
    --------
    >>> round(gaussian_sup(1.0, 0.5, 0.5, 1.1, 3)[0], 6)  # equal sigmas: only the mean, 2 lambda C^2 / s^2
    8.8
    """
    lam = float(renyi_order)
    if not math.isfinite(cap):
        return math.inf, math.inf, math.inf
    if lam * floor * floor - (lam - 1.0) * cap * cap <= 0:
        return math.inf, math.inf, math.inf
    H = _h_max(2.0 * lam * C_mu * C_mu, floor, cap, lam)
    G = _h_max(0.0, floor, cap, lam)
    return H + (d - 1) * G, H, G


def _phi(a, b, lam):
    return gammaln(lam * a - (lam - 1) * b) - lam * gammaln(a) + (lam - 1) * gammaln(b)


def _psi(A, B, lam):
    return -gammaln(lam * A - (lam - 1) * B) + lam * gammaln(A) - (lam - 1) * gammaln(B)


def _grid_max(f, lo_a, hi_a, lo_b, hi_b, lip_a, lip_b, n=161):
    """max of f on [lo_a, hi_a] x [lo_b, hi_b] from an n x n grid plus the allowance lip_a h_a / 2 + lip_b h_b / 2
    (every point is within half a step of a grid node in each coordinate)."""
    a = np.linspace(lo_a, hi_a, n)
    b = np.linspace(lo_b, hi_b, n)
    va = f(a[:, None], b[None, :])
    ha = (hi_a - lo_a) / (n - 1)
    hb = (hi_b - lo_b) / (n - 1)
    return float(np.max(va)) + lip_a * ha / 2 + lip_b * hb / 2


def _dig_range(lo, hi):
    """max |digamma| over [lo, hi] (digamma is increasing)."""
    return max(abs(float(digamma(lo))), abs(float(digamma(hi))))


@functools.lru_cache(maxsize=256)
def dirichlet_sup(alpha_min: float, alpha_max: float, alpha_0: float, n_free: int, renyi_order: float,
                  *, grid: int = 161) -> tuple[float, float]:
    """Supremum of the Dirichlet term over ``n_free`` pairs of pseudo-counts in [alpha_min, alpha_max]^2.

    Component 0 (the prior's, ``alpha_0`` after clipping) is the same in both inputs.

    Returns
    -------
    upper, attained : float
        A true upper value (weak duality with Lipschitz-bounded grid maxima) and the value attained at
        the best corner configuration; +inf, +inf when alpha_min <= ((lambda - 1)/lambda) alpha_max.
    """
    from scipy.optimize import minimize

    lam, beta = float(renyi_order), float(renyi_order) - 1.0
    lo, hi = float(alpha_min), float(alpha_max)
    if not lam * lo - beta * hi > 0:
        return math.inf, math.inf
    phi0 = float(_phi(alpha_0, alpha_0, lam))
    # attained: the best count of each corner type (aa, ab, ba, bb) among the n_free pairs
    corners = [(lo, lo), (lo, hi), (hi, lo), (hi, hi)]
    pc = np.array([_phi(a, b, lam) for a, b in corners])
    best = -math.inf
    if n_free == 0:
        best = float(_psi(alpha_0, alpha_0, lam))
    else:
        n = n_free
        c1, c2, c3 = np.meshgrid(np.arange(n + 1), np.arange(n + 1), np.arange(n + 1), indexing="ij")
        ok = c1 + c2 + c3 <= n
        counts = np.stack([c1[ok], c2[ok], c3[ok], n - (c1 + c2 + c3)[ok]], axis=1).astype(float)
        A = alpha_0 + counts @ np.array([c[0] for c in corners])
        B = alpha_0 + counts @ np.array([c[1] for c in corners])
        best = float(np.max(counts @ pc + _psi(A, B, lam)))
    attained = (phi0 + best) / beta
    # upper: min over (t, s) of the dual function (every (t, s) gives a valid upper value)
    A_lo, A_hi = alpha_0 + n_free * lo, alpha_0 + n_free * hi
    x_lo, x_hi = lam * lo - beta * hi, lam * hi - beta * lo  # range of lambda a - (lambda-1) b on the box
    X_lo, X_hi = lam * A_lo - beta * A_hi, lam * A_hi - beta * A_lo
    d_x, d_a = _dig_range(x_lo, x_hi), _dig_range(lo, hi)
    d_X, d_A = _dig_range(X_lo, X_hi), _dig_range(A_lo, A_hi)

    def dual(ts):
        t, s = float(ts[0]), float(ts[1])
        # |d/da (phi - t a)| <= lam d_x + lam d_a + |t|; |d/db| <= beta d_x + beta d_a + |s|
        p = _grid_max(lambda a, b: _phi(a, b, lam) - t * a - s * b, lo, hi, lo, hi,
                      lam * (d_x + d_a) + abs(t), beta * (d_x + d_a) + abs(s), grid) if n_free else 0.0
        q = _grid_max(lambda A, B: _psi(A, B, lam) + t * (A - alpha_0) + s * (B - alpha_0), A_lo, A_hi, A_lo, A_hi,
                      lam * (d_X + d_A) + abs(t), beta * (d_X + d_A) + abs(s), grid)
        return phi0 + n_free * p + q

    x0 = np.zeros(2)
    res = minimize(dual, x0, method="Nelder-Mead", options={"xatol": 1e-3, "fatol": 1e-3, "maxiter": 150})
    upper = min(float(res.fun), dual(x0)) / beta
    return max(upper, attained), attained


def certified_bound(clip: ClipConfig, *, n_components: int = 49, d: int = 384,
                    renyi_order: float | None = None) -> CertifiedBound:
    """Supremum over any two clipped inputs of the per-pair exact Renyi bound (nats).

    Parameters
    ----------
    clip : ClipConfig
        Must be enabled (without clipping nothing is bounded: +inf with the reason).
    n_components : int, default 49
        K, the released components including the prior's (the length-hiding mechanism pads to it;
        the default is the padded latent length max_length + 1 = 49). Without length hiding the
        bound is infinite across lengths whatever this says.
    d : int, default 384
    renyi_order : float, optional
        lambda of the divergence (default: the clipping's order, which sets the sigma floor).

    Returns
    -------
    CertifiedBound

    Raises
    ------
    TypeError, ValueError
        ``clip`` not a ClipConfig; K < 1, d < 1 or an order <= 1 (named).
    """
    if not isinstance(clip, ClipConfig):
        raise TypeError(f"clip must be a ClipConfig; got {type(clip).__name__}")
    for name, v in (("n_components", n_components), ("d", d)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
            raise ValueError(f"{name} must be an int >= 1; got {v!r}")
    lam = clip.renyi_order if renyi_order is None else float(renyi_order)
    if not (math.isfinite(lam) and lam > 1):
        raise ValueError(f"renyi_order must be a finite number > 1; got {renyi_order!r}")
    floor, cap = clip.sigma_min, (math.inf if clip.sigma_max is None else clip.sigma_max)
    base = dict(renyi_order=lam, C_mu=clip.C_mu, sigma_floor=floor, sigma_cap=cap, alpha_min=clip.alpha_min,
                alpha_max=clip.alpha_max, n_components=int(n_components), d=int(d))
    inf = math.inf
    if not clip.enabled:
        return CertifiedBound(inf, inf, inf, inf, inf, inf, inf, **base, reason="no clipping: nothing bounds the parameters")
    n_free = int(n_components) - 1
    per, H, G = gaussian_sup(clip.C_mu, floor, cap, lam, int(d))
    alpha_0 = min(max(1.0, clip.alpha_min), clip.alpha_max)
    du, da = dirichlet_sup(clip.alpha_min, clip.alpha_max, alpha_0, n_free, lam)
    reasons = []
    if not math.isfinite(per) and n_free:
        reasons.append(f"a Gaussian term is unbounded: lambda floor^2 - (lambda-1) cap^2 <= 0 "
                       f"(floor {floor:.4g}, cap {cap:.4g}, order {lam:g}; a cap below "
                       f"{math.sqrt(lam / (lam - 1)) * floor:.4g} is needed)")
    if not math.isfinite(du):
        reasons.append(f"a Gamma term is unbounded: alpha_min {clip.alpha_min:g} <= ((lambda-1)/lambda) alpha_max "
                       f"= {(lam - 1) / lam * clip.alpha_max:.4g}")
    gauss = n_free * per if n_free else 0.0
    return CertifiedBound(gauss + du, gauss, H, G, du, da, gauss + da, **base, reason="; ".join(reasons))


def rdp_to_dp(rd: float, renyi_order: float, delta: float) -> float:
    """epsilon = D_lambda + ln(1/delta) / (lambda - 1) (Mironov 2017, Prop. 3).

    >>> round(rdp_to_dp(0.0, 1.1, 1e-5), 4)
    115.1293
    """
    if not 0 < delta < 1:
        raise ValueError(f"delta must lie in (0, 1); got {delta!r}")
    return float(rd) + math.log(1.0 / delta) / (float(renyi_order) - 1.0)


def certified_epsilon(clip: ClipConfig, *, delta: float = 1e-5, n_components: int = 49, d: int = 384,
                      orders=None) -> dict:
    """The (epsilon, delta) of the certified bound, minimised over Renyi orders up to the clipping's.

    Orders above the clipping's order leave the Gaussian term unbounded (the floor is set for the
    clipping's order), so the search runs over ``orders`` (default 16 orders in (1, lambda_clip]).

    Returns
    -------
    dict
        ``epsilon`` (inf if no order gives a finite bound), ``order`` (the minimiser), ``rd`` (the
        certified bound there), ``delta``, ``at_clip_order`` (epsilon at the clipping's own order).
    """
    lam_c = clip.renyi_order
    orders = np.unique(np.concatenate([1.0 + (lam_c - 1.0) * np.linspace(0.0625, 1.0, 16), [lam_c]])) \
        if orders is None else np.asarray(orders, dtype=float)
    best = (math.inf, float(lam_c), math.inf)
    at_clip = math.inf
    for lam in orders:
        b = certified_bound(clip, n_components=n_components, d=d, renyi_order=float(lam))
        eps = rdp_to_dp(b.total, lam, delta) if math.isfinite(b.total) else math.inf
        if lam == lam_c:
            at_clip = eps
        if eps < best[0]:
            best = (eps, float(lam), b.total)
    return {"epsilon": best[0], "order": best[1], "rd": best[2], "delta": delta, "at_clip_order": at_clip}


def what_it_takes(clip: ClipConfig, target_epsilon: float = 8.0, *, delta: float = 1e-5, n_components: int = 49,
                  d: int = 384) -> dict:
    """How far each clipping parameter must move for the certified epsilon to reach a target.

    The conversion term ln(1/delta)/(lambda - 1) alone needs the order above ``order_min`` = 1 +
    ln(1/delta)/target. The figures below are for the order ``order`` = max(the clipping's order,
    1 + 2 ln(1/delta)/target), which leaves half the target, r, for the bound itself, and give each
    parameter's limit **with the other two at their most favourable values** (so they are necessary,
    not sufficient: all three must hold at once):

    - ``C_mu``: sigma fixed (cap = floor) and alpha fixed (alpha_min = alpha_max): the bound is
      (K - 1) 2 lambda C_mu^2 / floor^2, so C_mu <= floor sqrt(r / (2 lambda (K - 1)));
    - ``sigma_cap``: C_mu -> 0 and alpha fixed: the largest cap with (K - 1) d G* <= r;
    - ``alpha_ratio``: C_mu -> 0 and sigma fixed: the smallest alpha_min / alpha_max with the
      Dirichlet supremum <= r (at the current alpha_max).

    Returns
    -------
    dict
        ``target_epsilon``, ``delta``, ``epsilon_now`` (:func:`certified_epsilon`), ``order_min``,
        ``order``, ``budget_nats`` (r), ``C_mu``, ``sigma_cap``, ``alpha_ratio`` (None if no value
        reaches the target), the current values ``now`` and the current terms in nats ``terms``
        (mean, variance, Dirichlet).
    """
    target = float(target_epsilon)
    if not (math.isfinite(target) and target > 0):
        raise ValueError(f"target_epsilon must be a finite number > 0; got {target_epsilon!r}")
    now = certified_epsilon(clip, delta=delta, n_components=n_components, d=d)
    b = certified_bound(clip, n_components=n_components, d=d)
    k = n_components - 1
    fin = math.isfinite(b.gaussian)
    terms = {"mean": k * (b.gaussian_mean_dim - b.gaussian_var_dim) if fin else math.inf,
             "variance": k * d * b.gaussian_var_dim if fin else math.inf, "dirichlet": b.dirichlet_upper}
    lam = max(clip.renyi_order, 1.0 + 2.0 * math.log(1.0 / delta) / target)
    r = target - math.log(1.0 / delta) / (lam - 1.0)
    floor = math.sqrt((lam - 1.0) / lam)
    c_mu = floor * math.sqrt(r / (2.0 * lam * k)) if k else math.inf

    def bisect(ok, lo, hi, want_large=True):
        """the extreme value in [lo, hi] where ok holds (ok monotone); None if it holds nowhere."""
        if not ok(lo if want_large else hi):
            return None
        for _ in range(60):
            mid = 0.5 * (lo + hi)
            if ok(mid) == want_large:
                lo = mid
            else:
                hi = mid
        return lo if want_large else hi

    cap_hi = min(1.0, math.sqrt(lam / (lam - 1.0)) * floor) * (1 - 1e-12)
    cap = bisect(lambda c: k * d * gaussian_sup(0.0, floor, c, lam, d)[2] <= r, floor, cap_hi)
    amax = clip.alpha_max
    alpha_0 = min(1.0, amax)
    lo_ratio = (lam - 1.0) / lam * (1 + 1e-9)
    ratio = bisect(lambda q: dirichlet_sup(q * amax, amax, max(alpha_0, q * amax), k, lam)[0] <= r,
                   lo_ratio, 1.0, want_large=False)
    return {"target_epsilon": target, "delta": delta, "epsilon_now": now["epsilon"],
            "order_min": 1.0 + math.log(1.0 / delta) / target, "order": lam, "budget_nats": r,
            "C_mu": c_mu, "sigma_cap": cap, "sigma_floor": floor, "alpha_ratio": ratio,
            "now": {"C_mu": clip.C_mu, "sigma_cap": clip.sigma_max, "alpha_ratio": clip.alpha_min / clip.alpha_max,
                    "order": clip.renyi_order}, "terms": terms}


def certified_what_if(clip: ClipConfig, *, n_components: int = 49, d: int = 384) -> str:
    """The certified bound as a what-if sentence: it holds for a length-hiding mechanism, which the page's
    models are not, and covers the released latent (z, pi), not the classifier's output.

    Gives the bound of ``clip`` and that of the capped rules (alpha_min 0.1, std cap 0.99, the rest of
    ``clip``), each finite or with the reason it is not.
    """
    import dataclasses

    def one(c):
        b = certified_bound(c, n_components=n_components, d=d)
        return f"{b.total:.3g} nats" if math.isfinite(b.total) else "no finite number"

    here = one(clip)
    s = (f"What-if, not this page's guarantee: if lengths were hidden (every input released with {n_components} "
         f"prior-padded components), these caps would bound the divergence between any two inputs by {here}")
    if clip.enabled and (clip.alpha_min < 0.1 or clip.sigma_max is None or clip.sigma_max > 0.99):
        try:
            capped = dataclasses.replace(clip, alpha_min=max(clip.alpha_min, 0.1), sigma_max=0.99)
            s += f"; if alpha_min were {capped.alpha_min:g} and the blur capped at 0.99, by {one(capped)}"
        except (ValueError, TypeError):
            pass
    return s + (". The page's models give padding weight 0, so they reveal lengths and their exact bound across "
                "lengths is infinite. The bound covers the released latent (z, pi) only, not the classifier's output "
                "(the downstream attention also reads the clean token states).")
