"""Float32 designs stay float32 in the data passes (issue 12, item 4): the same
model as from the float64 copy of the data, without that copy's memory."""

import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_breast_cancer, load_diabetes, load_digits
from sklearn.preprocessing import StandardScaler

from skvan import VANLassoRegressor, VANLogisticRegression
from skvan._data import dot, tdot


def _cancer():
    X, y = load_breast_cancer(return_X_y=True)
    return StandardScaler().fit_transform(X).astype(np.float32), y


def _digits():
    X, y = load_digits(return_X_y=True)
    return (X / 16.0).astype(np.float32), y


def _diabetes():
    X, y = load_diabetes(return_X_y=True)
    return X.astype(np.float32), y


CASES = {
    "logistic, full": (VANLogisticRegression(), _cancer, 1e-8),
    # The diagonal family's squared entries are formed in float32 (6e-8 relative).
    "logistic, diag": (VANLogisticRegression(covariance="diag"), _cancer, 1e-5),
    "multinomial": (VANLogisticRegression(max_iter=200), _digits, 1e-7),
    "logistic, wide (dual)": (VANLogisticRegression(covariance="dual"),
                              lambda: (_digits()[0][:40], _digits()[1][:40] % 2), 1e-7),
    "lasso": (VANLassoRegressor(alpha=0.1), _diabetes, 1e-8),
}


@pytest.mark.parametrize("case", list(CASES))
def test_float32_fits_the_float64_copy(case):
    est, data, rtol = CASES[case]
    X, y = data()
    assert X.dtype == np.float32
    a = est.fit(X, y)
    coef32, intercept32 = a.coef_.copy(), np.copy(a.intercept_)
    b = est.fit(X.astype(np.float64), y)
    assert a.coef_.dtype == np.float64
    np.testing.assert_allclose(coef32, b.coef_, rtol=rtol, atol=rtol * np.abs(b.coef_).max())
    np.testing.assert_allclose(intercept32, b.intercept_, rtol=rtol, atol=rtol)


def test_sparse_float32_is_accepted():
    X, y = _cancer()
    a = VANLogisticRegression().fit(sp.csr_matrix(X), y)
    b = VANLogisticRegression().fit(X.astype(np.float64), y)
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-8, atol=1e-10)


def test_blocked_products_match_numpy():
    rng = np.random.RandomState(0)
    X = rng.standard_normal((3000, 700)).astype(np.float32)  # several row blocks
    v, W = rng.standard_normal(700), rng.standard_normal((3000, 3))
    X64 = X.astype(np.float64)
    np.testing.assert_allclose(dot(X, v), X64 @ v, rtol=1e-12, atol=1e-10)
    np.testing.assert_allclose(tdot(X, W), X64.T @ W, rtol=1e-12, atol=1e-10)
    assert dot(X, v).dtype == tdot(X, W).dtype == np.float64


@pytest.mark.parametrize("est", [VANLogisticRegression(), VANLassoRegressor(alpha=0.01)],
                         ids=["logistic", "lasso"])
def test_a_float32_fit_never_copies_the_data_to_float64(est):
    """200,000 x 80 in float32: the design (with its intercept column) is a 65 MB
    copy, and a float64 copy of it would add 130 MB. The fit's peak stays below
    the design plus 200 bytes per row (the solver's per-row vectors: predictors,
    variances, derivatives; measured 100-150) plus 16 MB of row blocks. Before,
    every product made the float64 copy."""
    rng = np.random.RandomState(0)
    n, p = 200_000, 80
    X = rng.standard_normal((n, p)).astype(np.float32)
    y = X[:, 0] + X[:, 1] + 0.5 * rng.standard_normal(n)
    y = (y > 0).astype(int) if isinstance(est, VANLogisticRegression) else y
    design = n * (p + 1) * 4
    tracemalloc.start()
    try:
        est.fit(X, y)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < design + 200 * n + 16e6, (peak - design) / 1e6
