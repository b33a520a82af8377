"""With expectation="mc", fits converge to the deterministic-expectation fits as
n_mc_samples grows, at the Monte Carlo rate S^-1/2 (benchmarks/bench_mc_rate.py
prints the full table)."""

import warnings

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer, load_diabetes
from sklearn.exceptions import ConvergenceWarning
from sklearn.preprocessing import StandardScaler

from skvan import VANLassoRegressor, VANLogisticRegression


def _error(make, X, y, exact, S, seeds):
    ref = make(expectation=exact).fit(X, y)
    errs = []
    for seed in range(seeds):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            fit = make(expectation="mc", n_mc_samples=S, random_state=seed).fit(X, y)
        errs.append(np.max(np.abs(np.ravel(fit.coef_) - np.ravel(ref.coef_)))
                    / np.max(np.abs(ref.coef_)))
    return float(np.mean(errs))


def test_lasso_vi_converges_at_the_monte_carlo_rate():
    X, y = load_diabetes(return_X_y=True)
    X = StandardScaler().fit_transform(X)

    def make(**kw):
        # Under VI with MC the steps stay at the noise level and never meet the
        # stopping rule; the exact fit converges in ~10 iterations, so 50 suffice.
        return VANLassoRegressor(alpha=1.0, objective="vi", max_iter=50, **kw)

    samples = np.array([8, 32, 128, 512])
    errs = np.array([_error(make, X, y, "exact", S, seeds=6) for S in samples])
    rate = np.polyfit(np.log(samples), np.log(errs), 1)[0]
    assert -0.8 <= rate <= -0.3, (errs, rate)
    assert errs[-1] < 0.02


@pytest.mark.slow
def test_logistic_vi_converges_at_the_monte_carlo_rate():
    X, y = load_breast_cancer(return_X_y=True)
    X = StandardScaler().fit_transform(X)[:, :10]

    def make(**kw):
        return VANLogisticRegression(objective="vi", **kw)

    coarse, fine = (_error(make, X, y, "quadrature", S, seeds=4) for S in (8, 128))
    # 16x the samples: the error should shrink about 4x (at least 2x).
    assert fine < coarse / 2, (coarse, fine)


def test_logistic_vo_reaches_the_exact_optimum_at_any_sample_size():
    """Under VO q collapses, and the sampling noise with it."""
    X, y = load_breast_cancer(return_X_y=True)
    X = StandardScaler().fit_transform(X)[:, :10]
    assert _error(VANLogisticRegression, X, y, "quadrature", 4, seeds=3) < 1e-5
