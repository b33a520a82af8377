"""VANElasticNet and VANElasticNetCV against scikit-learn's ElasticNet and ElasticNetCV."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_diabetes
from sklearn.linear_model import ElasticNet, ElasticNetCV
from sklearn.model_selection import KFold

from skvan import VANElasticNet, VANElasticNetCV, VANLassoRegressor
from test_lasso_path import _correlated_wide

PROBLEMS = {"diabetes": load_diabetes(return_X_y=True), "correlated p > n": _correlated_wide()}


def _reference(X, y, **params):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # l1_ratio=0 is discouraged for coordinate descent
        return ElasticNet(tol=1e-12, max_iter=1_000_000, **params).fit(X, y)


@pytest.mark.parametrize("name", list(PROBLEMS))
@pytest.mark.parametrize("alpha", [0.01, 1.0])
@pytest.mark.parametrize("l1_ratio", [0.0, 0.2, 0.7, 1.0])
def test_matches_elastic_net(name, alpha, l1_ratio):
    X, y = PROBLEMS[name]
    van = VANElasticNet(alpha=alpha, l1_ratio=l1_ratio).fit(X, y)
    ref = _reference(X, y, alpha=alpha, l1_ratio=l1_ratio)
    scale = np.max(np.abs(ref.coef_))
    assert np.max(np.abs(van.coef_ - ref.coef_)) <= 1e-3 * scale
    np.testing.assert_array_equal(van.coef_ != 0, np.abs(ref.coef_) > 1e-10 * scale)
    assert van.intercept_ == pytest.approx(ref.intercept_, rel=1e-6, abs=1e-6 * np.abs(y).max())


def test_l1_ratio_one_is_the_lasso_and_sparse_input_is_the_dense_fit():
    X, y = PROBLEMS["diabetes"]
    np.testing.assert_allclose(VANElasticNet(alpha=0.1, l1_ratio=1.0).fit(X, y).coef_,
                               VANLassoRegressor(alpha=0.1).fit(X, y).coef_, rtol=1e-10, atol=1e-10)
    dense = VANElasticNet(alpha=0.05).fit(X, y)
    sparse = VANElasticNet(alpha=0.05).fit(sp.csr_matrix(X), y)
    np.testing.assert_allclose(sparse.coef_, dense.coef_, rtol=1e-8, atol=1e-10)


def test_noise_variance_counts_residuals_only():
    X, y = PROBLEMS["diabetes"]
    reg = VANElasticNet(alpha=0.05, l1_ratio=0.3).fit(X, y)
    residual = y - reg.predict(X)
    dof = np.count_nonzero(reg.coef_) + 1
    assert reg.noise_variance_ == pytest.approx(residual @ residual / (len(y) - dof), rel=1e-6)
    mean, std = reg.predict(X[:5], return_std=True)
    assert np.all(std >= np.sqrt(reg.noise_variance_))
    assert not hasattr(reg, "partial_fit")


def test_vi_gives_a_posterior_that_narrows_with_more_ridge():
    X, y = PROBLEMS["diabetes"]
    loose = VANElasticNet(alpha=0.01, l1_ratio=0.5, objective="vi").fit(X, y)
    tight = VANElasticNet(alpha=1.0, l1_ratio=0.5, objective="vi").fit(X, y)
    assert np.all(np.diag(tight.sigma_) < np.diag(loose.sigma_))


@pytest.mark.parametrize("name", list(PROBLEMS))
@pytest.mark.parametrize("l1_ratio", [0.5, [0.2, 0.7, 1.0]])
def test_cv_chooses_elasticnetcvs_alpha_and_l1_ratio(name, l1_ratio):
    X, y = PROBLEMS[name]
    cv = KFold(4, shuffle=True, random_state=0)
    van = VANElasticNetCV(l1_ratio=l1_ratio, alphas=10, cv=cv).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = ElasticNetCV(l1_ratio=l1_ratio, alphas=10, cv=cv, tol=1e-12, max_iter=1_000_000).fit(X, y)
    np.testing.assert_allclose(van.alphas_, ref.alphas_, rtol=1e-12)
    assert van.alpha_ == ref.alpha_ and van.l1_ratio_ == ref.l1_ratio_
    assert van.mse_path_.shape == ref.mse_path_.shape
    np.testing.assert_allclose(van.mse_path_, ref.mse_path_, rtol=1e-5)
    np.testing.assert_allclose(van.coef_, ref.coef_, rtol=1e-3, atol=1e-3 * np.abs(ref.coef_).max())


def test_cv_with_l1_ratio_zero_needs_alphas():
    X, y = PROBLEMS["diabetes"]
    with pytest.raises(ValueError, match="l1_ratio > 0"):
        VANElasticNetCV(l1_ratio=0.0, alphas=5, cv=3).fit(X, y)
    reg = VANElasticNetCV(l1_ratio=0.0, alphas=[1.0, 0.1, 0.01], cv=3).fit(X, y)
    assert reg.alpha_ in (1.0, 0.1, 0.01) and np.all(reg.coef_ != 0)
