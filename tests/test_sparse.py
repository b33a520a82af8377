"""Sparse input: the same results as on the dense copy, for every estimator and
strategy, without densifying the data."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_diabetes

from skvan import ActiveVANClassifier, VANLassoRegressor, VANLogisticRegression
from skvan.active import STRATEGIES

FORMATS = ["csr", "csc"]


def _sparsify(X, rng, density=0.3):
    """``X`` with most entries set to 0 (a sparse design), dense and sparse."""
    mask = rng.rand(*X.shape) < density
    dense = np.where(mask, X, 0.0)
    return dense


@pytest.fixture(scope="module")
def classification():
    rng = np.random.RandomState(0)
    X = _sparsify(rng.randn(300, 12), rng)
    y = (X @ rng.randn(12) + 0.5 * rng.randn(300) > 0).astype(int)
    return X, y


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("params", [
    dict(),
    dict(covariance="diag", max_iter=2000, tol=1e-7),
    dict(objective="vi"),
    dict(hessian="gauss_newton"),
    dict(fit_intercept=False),
])
def test_logistic_sparse_equals_dense(fmt, params, classification):
    X, y = classification
    dense = VANLogisticRegression(**params).fit(X, y)
    sparse = VANLogisticRegression(**params).fit(sp.csr_matrix(X).asformat(fmt), y)
    np.testing.assert_allclose(sparse.coef_, dense.coef_, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(sparse.intercept_, dense.intercept_, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(sparse.sigma_, dense.sigma_, rtol=1e-8, atol=1e-14)
    Xs = sp.csr_matrix(X[:20]).asformat(fmt)
    np.testing.assert_allclose(sparse.predict_proba(Xs), dense.predict_proba(X[:20]), rtol=1e-9)
    np.testing.assert_allclose(sparse.sample_proba(Xs, 5, random_state=0),
                               dense.sample_proba(X[:20], 5, random_state=0), rtol=1e-9)


def test_logistic_partial_fit_on_sparse_batches(classification):
    X, y = classification
    dense, sparse = VANLogisticRegression(), VANLogisticRegression()
    for rows in np.array_split(np.arange(len(y)), 4):
        dense.partial_fit(X[rows], y[rows], classes=[0, 1])
        sparse.partial_fit(sp.csr_matrix(X[rows]), y[rows], classes=[0, 1])
    np.testing.assert_allclose(sparse.coef_, dense.coef_, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("params", [
    dict(alpha=0.5),
    dict(alpha=0.5, expectation="quadrature"),
    dict(alpha=0.5, covariance="diag"),
    dict(alpha=0.5, objective="vi"),
])
def test_lasso_sparse_equals_dense(fmt, params):
    rng = np.random.RandomState(1)
    X, y = load_diabetes(return_X_y=True)
    X = _sparsify(X / X.std(axis=0), rng, density=0.5)
    dense = VANLassoRegressor(**params).fit(X, y)
    sparse = VANLassoRegressor(**params).fit(sp.csr_matrix(X).asformat(fmt), y)
    np.testing.assert_allclose(sparse.coef_, dense.coef_, rtol=1e-8, atol=1e-10)
    np.testing.assert_array_equal(sparse.coef_ == 0, dense.coef_ == 0)
    Xs = sp.csr_matrix(X[:10])
    for a, b in zip(sparse.predict(Xs, return_std=True), dense.predict(X[:10], return_std=True)):
        np.testing.assert_allclose(a, b, rtol=1e-8)


@pytest.mark.parametrize("strategy", sorted(STRATEGIES))
def test_active_learning_on_a_sparse_pool(strategy, classification):
    X, y = classification
    dense = ActiveVANClassifier(query_strategy=strategy, batch_size=5, max_iter=6,
                                random_state=0).fit(X, y)
    sparse = ActiveVANClassifier(query_strategy=strategy, batch_size=5, max_iter=6,
                                 random_state=0).fit(sp.csr_matrix(X), y)
    np.testing.assert_array_equal(sparse.queried_indices_, dense.queried_indices_)
    np.testing.assert_allclose(sparse.coef_, dense.coef_, rtol=1e-9, atol=1e-12)
    idx_s, scores_s = STRATEGIES[strategy](sparse, sp.csr_matrix(X), n_instances=4, random_state=1)
    idx_d, scores_d = STRATEGIES[strategy](dense, X, n_instances=4, random_state=1)
    np.testing.assert_array_equal(idx_s, idx_d)
    np.testing.assert_allclose(scores_s, scores_d, rtol=1e-7)


def test_diversity_on_a_sparse_pool(classification):
    from skvan.active import select

    X, _ = classification
    scores = np.linspace(0, 1, len(X))
    np.testing.assert_array_equal(select(scores, 5, 0, sp.csr_matrix(X), diversity=1.0),
                                  select(scores, 5, 0, X, diversity=1.0))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_column_statistics_dense_sparse_and_by_formula(dtype):
    """One blocked pass gives ``max |x_j|`` and ``sum_i w_i x_ij^2`` as the formulas
    do, on dense (float32 too) and CSR data, across several row blocks; entries
    beyond 1e154 overflow the squares to inf (the scaling then normalises)."""
    from skvan._data import column_statistics

    rng = np.random.default_rng(0)
    X = (rng.standard_normal((300_000, 3)) * [1.0, 1e-3, 1e3]).astype(dtype)
    X[rng.random(X.shape) < 0.5] = 0.0
    X[:, 2] = -np.abs(X[:, 2])  # the largest magnitude on the negative side
    w = rng.random(X.shape[0])
    top, squares = column_statistics(X, w)
    X64 = X.astype(np.float64)
    np.testing.assert_array_equal(top, np.abs(X64).max(axis=0))
    np.testing.assert_allclose(squares, (w[:, None] * X64**2).sum(axis=0), rtol=1e-12)
    top_s, squares_s = column_statistics(sp.csr_matrix(X64), w)
    np.testing.assert_array_equal(top_s, top)
    np.testing.assert_allclose(squares_s, squares, rtol=1e-12)
    assert column_statistics(X)[1] is None
    assert column_statistics(np.zeros((0, 2)), np.zeros(0))[0].tolist() == [0.0, 0.0]
    if dtype is np.float64:
        huge = np.array([[1e200, 1.0], [2.0, -3.0]])
        top, squares = column_statistics(huge, np.ones(2))
        assert top.tolist() == [1e200, 3.0] and np.isinf(squares[0]) and squares[1] == 10.0


@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_augmented_gram_is_the_designs_by_formula(dtype, fit_intercept):
    """``[X, 1, y]^T W [X, 1, y]`` in one pass over several row blocks, as the
    formula gives it (float32 rows in float64)."""
    from skvan._data import augmented_gram

    rng = np.random.default_rng(1)
    X = rng.standard_normal((70_000, 5)).astype(dtype)
    y, w = rng.standard_normal(X.shape[0]), rng.random(X.shape[0])
    A = np.column_stack([X.astype(np.float64)] + [np.ones(len(y))] * fit_intercept + [y])
    M = augmented_gram(X, y, w, fit_intercept)
    assert M.shape == (A.shape[1],) * 2 and M.dtype == np.float64
    np.testing.assert_allclose(M, A.T @ (w[:, None] * A), rtol=1e-10, atol=1e-10 * M.max())
    assert augmented_gram(X[:0], y[:0], w[:0], fit_intercept).tolist() == np.zeros(M.shape).tolist()


def test_column_statistics_read_off_a_gram_matrix():
    """``gram_column_statistics``: the squares are ``diag(G)`` and the bound
    ``sqrt(G_jj / min w)`` holds the largest entry; None where the bound cannot
    stand in for it (a zero weight, entries beyond 1e+-100, an overflowed Gram)."""
    from skvan._data import column_statistics, gram
    from skvan.objectives._linear import gram_column_statistics

    rng = np.random.default_rng(2)
    X = rng.standard_normal((500, 4)) * [1.0, 1e-30, 1e30, 0.0]
    w = rng.random(500) + 0.5
    top, squares = gram_column_statistics(gram(X, w), w)
    exact_top, exact_squares = column_statistics(X, w)
    np.testing.assert_allclose(squares, exact_squares, rtol=1e-12)
    assert np.all(top >= exact_top) and top[3] == 0.0
    assert np.all(top[:3] <= np.sqrt(exact_squares[:3] / w.min()) * (1 + 1e-12))
    for Z, v in ((X, np.r_[0.0, w[1:]]), (X * [1, 1e-80, 1, 1], w), (X * [1, 1, 1e80, 1], w),
                 (X * 1e160, w)):
        with np.errstate(over="ignore", invalid="ignore"):
            assert gram_column_statistics(gram(Z, v), v) == (None, None)


@pytest.mark.parametrize("kind", ["dense", "float32", "csr"])
def test_one_pass_gradient_and_gram_are_the_separate_products(kind):
    """``gram_and_tdot``: ``X^T diag(d) X`` and ``X^T u`` from one pass over several
    row blocks, as the formulas give them on the float64 dense copy (``d`` of
    both signs, and all non-negative: the symmetric rank-k blocks)."""
    from skvan._data import gram, gram_and_tdot

    rng = np.random.default_rng(2)
    dense = _sparsify(rng.standard_normal((40_000, 9)), np.random.RandomState(2), 0.5)
    X = {"dense": dense, "float32": dense.astype(np.float32), "csr": sp.csr_matrix(dense)}[kind]
    dense = X.toarray() if sp.issparse(X) else X.astype(np.float64)
    u = rng.standard_normal(X.shape[0])
    for d in (rng.random(X.shape[0]), rng.standard_normal(X.shape[0])):
        H, g = gram_and_tdot(X, d, u)
        expected = dense.T @ (d[:, None] * dense)
        np.testing.assert_allclose(H, expected, rtol=1e-10, atol=1e-10 * np.abs(expected).max())
        np.testing.assert_allclose(g, dense.T @ u, rtol=1e-10, atol=1e-10 * np.abs(g).max())
        assert gram_and_tdot(X, d)[1] is None
        assert np.array_equal(gram(X, d), H)  # gram is its first half


@pytest.mark.parametrize("kind", ["dense", "float32", "csr"])
def test_predictor_moments_are_the_predictors_and_their_variances(kind):
    """``FullGaussian.predictor_moments``: ``X mean`` and ``x_i^T Sigma x_i`` from one
    product per row block, as the separate passes give them (a full precision,
    and a diagonal one, whose variances are a weighted sum of squares); fewer
    rows than parameters by a triangular solve, without forming ``L^-1``."""
    from skvan._data import dot
    from skvan.van import FullGaussian

    rng = np.random.default_rng(3)
    X = _sparsify(rng.standard_normal((40_000, 7)), np.random.RandomState(3), 0.5)
    X = {"dense": X, "float32": X.astype(np.float32), "csr": sp.csr_matrix(X)}[kind]
    A = rng.standard_normal((7, 7))
    mean = rng.standard_normal(7)
    dense = X.toarray() if sp.issparse(X) else X.astype(np.float64)
    for P in (A @ A.T + np.eye(7), np.diag(rng.random(7) + 0.5)):
        family = FullGaussian(mean, P)
        m, v = family.predictor_moments(X, mean)
        np.testing.assert_allclose(m, dot(X, mean), rtol=1e-12, atol=1e-12)
        expected = np.einsum("ij,jk,ik->i", dense, np.linalg.inv(P), dense)
        np.testing.assert_allclose(v, expected, rtol=1e-10)
        assert family.predictor_moments(X)[0] is None
        few = FullGaussian(mean, P)
        m, v = few.predictor_moments(X[:5], mean)
        assert few._diagonal is not None or not few.inverse_at_hand
        np.testing.assert_allclose(m, dot(X[:5], mean), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(v, expected[:5], rtol=1e-10)
