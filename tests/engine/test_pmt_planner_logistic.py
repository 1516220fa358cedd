"""The logistic planner's floor (Takeuchi's correction, capped by the base-rate entropy) and its repeated
cross-fitting."""

import math

import numpy as np

from engine.pmt.planner_logistic import CV_REPEATS, plan_logistic


def _bank_public():
    from engine.datasets import load_dataset
    from engine.pmt.sweep import sweep_split

    X, y = load_dataset("bank").to_numpy()
    Xq, yq, *_ = sweep_split(X, y, n_pub=200, split_seed=0)
    mu, sd = Xq.mean(0), Xq.std(0)
    sd[sd == 0] = 1.0
    return (Xq - mu) / sd, np.asarray(yq, dtype=float)


def test_floor_is_not_above_the_intercept_only_loss_where_m_is_a_few_times_d():
    """bank (d = 42, 200 public rows): a linear model with the intercept alone reaches the base-rate entropy, so
    the non-private limit cannot sit above it (the two-size 1/k intercept put it at 0.58 against 0.35)."""
    Xq, yq = _bank_public()
    p = yq.mean()
    entropy = -(p * math.log(p) + (1 - p) * math.log(1 - p))
    pl = plan_logistic(Xq, yq, epsilon=1.0, n_grid=[1000, 10**6])
    assert pl.curves["Non-private"][-1] <= entropy + 1e-12
    assert pl.curves["Non-private"][-1] < pl.curves["Public-only"][0]


def test_floor_is_the_true_coefficients_loss_on_the_public_rows():
    """Known logistic model, 2,000 public rows: the fitted coefficients' in-sample loss sits below the true
    coefficients' loss on the same rows by tr(H^-1 J) / 2m on average; the planner's limit (the non-private curve at
    n = 1e8) adds that back, so it lands on the true coefficients' loss on those rows (the row sampling noise,
    about 0.01 here, cancels) to within 0.003, and below the intercept-only loss."""
    rng = np.random.default_rng(3)
    theta = np.array([1.0, -0.7, 0.4])
    X = rng.standard_normal((2000, 3))
    u = X @ theta - 1.0
    y = (rng.random(2000) < 1 / (1 + np.exp(-u))).astype(float)
    true_loss = float(np.mean(np.logaddexp(0, u) - y * u))
    pl = plan_logistic(X, y, epsilon=1.0, n_grid=[10**4, 10**8])
    assert abs(pl.curves["Non-private"][-1] - true_loss) < 0.003


def test_public_only_is_the_mean_over_fold_splits():
    """Public-only's level is the mean of the cross-fitted losses over CV_REPEATS splits, not one split's: it
    lies within the spread of the single-split values and differs from the seed-0 split's."""
    from engine.pmt._base import penalty_mask
    from engine.pmt._bounds import add_intercept
    from engine.pmt.planner_logistic import _split_folds
    from engine.pmt.public import public_only_theta

    Xq, yq = _bank_public()
    Xa = add_intercept(Xq)
    Pm = penalty_mask(Xa.shape[1], fit_intercept=True, penalize_intercept=False)
    one = []
    for seed in range(CV_REPEATS):
        fold = _split_folds(yq, 5, seed)
        U = np.empty(len(yq))
        for k in range(5):
            th, _ = public_only_theta(Xa[fold != k], yq[fold != k], 1e-3, Pm, family="logistic")
            U[fold == k] = Xa[fold == k] @ th
        one.append(float(np.mean(np.logaddexp(0, U) - yq * U)))
    assert CV_REPEATS >= 10 and np.std(one) > 0.01  # one split's loss is noisy here
    pl = plan_logistic(Xq, yq, epsilon=1.0, n_grid=[1000, 10**5])
    pub = pl.curves["Public-only"][0]
    assert min(one) - 0.2 < pub < max(one)  # carried from 160 to 200 rows: below the mean of the 160-row losses
    assert pub < np.mean(one)
