"""Empirical differential-privacy audit: a statistical lower bound on the epsilon a mechanism spends.

A proof says a mechanism is (epsilon, delta)-DP; an audit looks for evidence that it is *not*. For
two neighbouring data sets D and D' and any test that guesses "was it D or D'?" from the released
output, (epsilon, delta)-DP forces the test's error rates to satisfy (Kairouz, Oh & Viswanath 2015)::

    FPR + exp(epsilon) FNR >= 1 - delta   and   FNR + exp(epsilon) FPR >= 1 - delta

so observed error rates give a lower bound on epsilon. With one-sided Clopper-Pearson upper bounds
``FPR_ub``, ``FNR_ub`` on the true rates (each at confidence ``1 - alpha/2``, so both hold jointly
with probability at least ``confidence = 1 - alpha``; Bonferroni)::

    epsilon_lb = max( ln((1 - delta - FNR_ub) / FPR_ub), ln((1 - delta - FPR_ub) / FNR_ub), 0 )

is, with probability >= ``confidence``, below the true epsilon of the mechanism on this pair (Jagielski,
Ullman & Oprea, "Auditing Differentially Private Machine Learning", NeurIPS 2020; Nasr, Song,
Thakurta, Papernot & Carlini, "Adversary Instantiation: Lower Bounds for Differentially Private
Machine Learning", IEEE S&P 2021). A correct mechanism's ``epsilon_lb`` therefore stays below its
claimed epsilon (except with probability <= 1 - confidence); a bound above the claim is evidence of a
bug.

The harness (:func:`audit`)
---------------------------
1. **Neighbouring data sets.** ``D = base + {r}`` and ``D' = base + {r'}`` (replace-one, the relation
   the mechanisms claim by default): the replaced rows are extreme points far outside every clip radius,
   placed where they move the released statistic the most (see the per-mechanism functions).
2. **Many runs on both.** The real estimators of :mod:`engine.pmt` are
   fitted on D and D'. Fast path: everything a fit computes before its noise is deterministic, so each
   fit is run *once* while its noise source (``ssp_noise`` / ``dp_gd_noise`` / the Newton noise) is
   made to return a stack of ``trials`` independent draws, each produced by the estimator's own noise
   function called ``trials`` times; the released statistic then comes out as a stack of ``trials``
   independent releases of exactly the mechanism. Transform, truncation, clipping, sensitivity and noise
   scale are the product's code, so a bug in any of them is caught. The hooks are applied with
   :func:`unittest.mock.patch.object` for the duration of one fit (not thread-safe: audit in one thread).
   What is observed: for sufficient-statistics perturbation (DP-PMTRR, DP-RR) the released noisy
   ``(A, b)`` (captured at the solver: white box); for the noisy Newton mechanisms one step's noisy
   gradient and Hessian, read inside the product's own ``noisy_newton`` at its observation point
   (:mod:`engine.privacy.observe`, white box: nothing re-computed); for PMT ridge's joint form (its default
   with public labels) the noisy ``S~`` and for AdaSSP its noisy ``lambda_min(A)``, ``A`` and ``b``, read at
   their observation points where the product adds the noise (the fit is stopped there; white box); for DP-GD (ridge, logistic) the final
   coefficients only (black box; the pairs are built so that they still show all of the pair's
   distinguishability).
3. **Distinguishing test.** Half of the runs (train) fix a linear score: the difference of the mean
   outputs divided by the per-coordinate variance (the likelihood-ratio test for Gaussians with
   independent coordinates, estimated), and the threshold: the one that maximises the expected bound
   under a Gaussian fit of the train-half scores. The other half (test) gives the counted false
   positives and false negatives.
4. **Bound.** Clopper-Pearson as above; also ``mu_hat``, the standardised separation of the test
   scores (a point estimate of the pair's mu-GDP), and the **ideal** bound: what a perfect test of an
   exactly tight mu-GDP mechanism (N(0,1) vs N(mu,1), mu the claimed total) would give with the same
   number of test runs and the same confidence. It shows how much of the gap to the claim is due to the
   finite number of trials.

Broken copies (teeth): ``broken="noise-0.2"`` multiplies every noise draw by 0.2 (a mis-scaled
Gaussian); ``broken="skip-clipping"`` replaces row truncation / gradient clipping by the identity while
the sensitivity is still computed from the stated radius (the "clip, then release the unclipped data"
bug, smartnoise-sdk #622); ``broken="partial-noise"`` adds no noise to some entries (the diagonal of the
symmetric noise of A or of the Newton Hessian, and coordinate 0 of the gradients: the diffprivlib #105
bug class). These live here, never in the product's estimators.

Data-dependent parameters (a bound, radius, centre or option computed from the private rows) are the
parameter audit's (:mod:`engine.audit.parameters`): neighbours with an extreme row must see bit-identical
everything but the noisy release. Broken copies planted in the product's code: ``newton-noise-F`` (a changed
line in a copy of ``noisy_newton``), ``joint-noise-F`` and ``adassp-noise-F`` (the same in ``_release_joint``
and ``adassp_solve``) and ``private-response-bound`` (B_y from the private labels).

Layout: :mod:`engine.audit.stats` (the statistics: steps 3 and 4), :mod:`engine.audit.hooks` (the
fast path and the broken copies on the real estimators: step 2), :mod:`engine.audit.mechanisms` (the
neighbouring pairs per mechanism and :data:`MECHANISMS`: step 1), :mod:`engine.audit.harness`
(:func:`audit`).

Examples
--------
>>> round(clopper_pearson_upper(0, 100, 0.05), 4)
0.0295
>>> eps_lb, fpr_ub, fnr_ub = epsilon_lower_bound(fp=10, n_neg=1000, fn=500, n_pos=1000, delta=1e-5)
>>> round(eps_lb, 3)
3.242
"""

from __future__ import annotations

from engine.audit.harness import DEFAULT_ALPHA, DEFAULT_AUDIT_EPSILON, AuditResult, audit
from engine.audit.hooks import (  # noqa: F401  (private helpers: re-exported for the tests)
    BROKEN,
    BROKEN_NOISE_FACTOR,
    _adassp_releases,
    _dpgd_logistic_releases,
    _dpgd_releases,
    _joint_releases,
    _newton_capture,
    _newton_step_releases,
    _ssp_releases,
    parse_broken,
)
from engine.audit.mechanisms import (  # noqa: F401
    DPGD_AUDIT_STEPS,
    MECHANISMS,
    Release,
    logistic_gradient_worst_pair,
    newton_pairs,
    sample_releases,
    ssp_pairs,
)
from engine.audit.pairs import EXTREME, standard_public_rows  # noqa: F401
from engine.audit.stats import (
    clopper_pearson_upper,
    distinguishing_test,
    epsilon_lower_bound,
    ideal_epsilon_lower_bound,
    separation_interval,
    separation_power,
)

__all__ = [
    "MECHANISMS",
    "BROKEN",
    "DEFAULT_ALPHA",
    "DEFAULT_AUDIT_EPSILON",
    "AuditResult",
    "Release",
    "clopper_pearson_upper",
    "epsilon_lower_bound",
    "ideal_epsilon_lower_bound",
    "distinguishing_test",
    "separation_interval",
    "separation_power",
    "sample_releases",
    "logistic_gradient_worst_pair",
    "audit",
]
