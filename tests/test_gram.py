"""The Gram forms of the full Gaussian: the dual (Woodbury) family computes what
the primal one does, to rounding; the operator family reaches the same VO optimum."""

import numpy as np
import pytest
import scipy.sparse as sp

from skvan import VANLassoRegressor, VANLogisticRegression
from skvan.expectations import ClosedForm, GaussHermiteQuadrature
from skvan.objectives import (
    L1Penalty,
    L2Penalty,
    LinearModelObjective,
    LogisticLoss,
    MultinomialObjective,
    SquaredLoss,
)
from skvan.van import (
    ClassGramPrecision,
    DualGaussian,
    FullGaussian,
    GeometricSchedule,
    GramPrecision,
    MeanContraction,
    OperatorGaussian,
    RowCurvature,
    VANSolver,
    auto_covariance,
)


def _precision(rng, n=15, p=40, free=(39,), sparse=False, zero_rows=2):
    X = rng.randn(n, p)
    X[:, p - 1] = 1.0  # an intercept column
    lam = rng.uniform(0.5, 2.0, p)
    lam[list(free)] = 0.0
    d = rng.uniform(0.1, 3.0, n)
    d[:zero_rows] = 0.0
    mask = np.zeros(p, bool)
    mask[list(free)] = True
    X = sp.csr_matrix(X) if sparse else X
    return GramPrecision(lam, d, X, mask)


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("free", [(), (39,), (0, 39)])
def test_dual_family_equals_the_dense_precision(free, sparse, rng):
    P = _precision(rng, free=free, sparse=sparse)
    dense = P.toarray()
    mean = rng.randn(P.shape[0])
    dual, full = DualGaussian(mean, P), FullGaussian(mean, dense)
    g = rng.randn(P.shape[0])
    np.testing.assert_allclose(P @ g, dense @ g, rtol=1e-12)
    np.testing.assert_allclose(dual.solve(g), full.solve(g), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(dual.logdet_precision(), full.logdet_precision(), rtol=1e-11)
    np.testing.assert_allclose(dual.marginal_variance(), full.marginal_variance(), rtol=1e-9)
    np.testing.assert_allclose(dual.predictor_variance(P.X), full.predictor_variance(P.X), rtol=1e-8)
    Z = rng.randn(7, P.shape[0])
    Z = sp.csr_matrix(Z) if sparse else Z
    np.testing.assert_allclose(dual.predictor_variance(Z), full.predictor_variance(Z), rtol=1e-8)
    np.testing.assert_allclose(dual.sigma, full.sigma, rtol=1e-8, atol=1e-12)
    draws = dual.sample(100_000, np.random.RandomState(0))
    np.testing.assert_allclose(np.cov(draws[:, :5].T), full.sigma[:5, :5], atol=0.02 * np.abs(full.sigma).max())


def _logistic_objective(rng, n, p, sparse=False):
    X = rng.randn(n, p)
    if sparse:
        X[rng.rand(n, p) < 0.7] = 0.0
    X = np.c_[X, np.ones(n)]
    y = np.where(X[:, :-1] @ rng.randn(p) / np.sqrt(p) + 0.3 * rng.randn(n) > 0, 1.0, -1.0)
    X = sp.csr_matrix(X) if sparse else X
    return LinearModelObjective(X, y, LogisticLoss(), rng.uniform(0.5, 2.0, n),
                                L2Penalty(np.r_[np.full(p, 0.5), 0.0]))


def _trajectory(f, family, objective, hessian, max_iter=6):
    means = []
    VANSolver(f, GaussHermiteQuadrature(), family, objective=objective, hessian=hessian,
              schedule=GeometricSchedule(0.5 if objective == "vi" else 1.0,
                                         1.0 if objective == "vi" else 10.0),
              stop=MeanContraction(0.0), max_iter=max_iter,
              callback=lambda s: means.append(s.family.mean.copy())).solve()
    return np.array(means)


@pytest.fixture
def no_carrying(monkeypatch):
    """Under VO a full precision's passes carry the rows' predictor variances
    (their bound checked through ``P - P_s``), a Gram form's pass every
    iteration: the paths differ within the fit's tolerance, the limit does not.
    Comparisons of the two forms' arithmetic compare them without carrying."""
    import skvan.expectations._base as base

    monkeypatch.setattr(base, "carry_ratio", lambda *args, **kwargs: None)


@pytest.mark.parametrize("objective", ["vo", "vi"])
@pytest.mark.parametrize("hessian", ["exact", "gauss_newton"])
@pytest.mark.parametrize("shape", [(30, 80, False), (30, 80, True), (120, 20, False)],
                         ids=["wide", "wide-sparse", "tall"])
def test_dual_iterates_equal_the_primal_ones(objective, hessian, shape, rng, no_carrying):
    n, p, sparse = shape
    f = _logistic_objective(rng, n, p, sparse)
    lam = np.full(p + 1, 2.0)
    free = np.r_[np.zeros(p, bool), True]
    primal = _trajectory(f, FullGaussian(np.zeros(p + 1), np.diag(lam)), objective, hessian)
    dual = _trajectory(f, DualGaussian(np.zeros(p + 1), GramPrecision(lam, np.zeros(n), f.X, free)),
                       objective, hessian)
    scale = np.abs(primal).max()
    np.testing.assert_allclose(dual, primal, rtol=0, atol=1e-9 * scale)


def test_dual_lasso_iterates_equal_the_primal_ones(rng):
    n, p = 25, 60
    X = np.c_[rng.randn(n, p), np.ones(n)]
    y = X[:, :5] @ np.array([2.0, -1.0, 0.5, 0.0, 3.0]) + 0.1 * rng.randn(n)
    f = LinearModelObjective(X, y, SquaredLoss(), penalty=L1Penalty(np.r_[np.full(p, 5.0), 0.0]))
    lam = np.full(p + 1, 1.0)
    free = np.r_[np.zeros(p, bool), True]
    runs = []
    for family in (FullGaussian(np.zeros(p + 1), np.diag(lam)),
                   DualGaussian(np.zeros(p + 1), GramPrecision(lam, np.zeros(n), X, free))):
        means = []
        VANSolver(f, ClosedForm(), family, schedule=GeometricSchedule(1.0, 2.0), max_iter=15,
                  stop=MeanContraction(0.0), callback=lambda s: means.append(s.family.mean.copy())).solve()
        runs.append(np.array(means))
    np.testing.assert_allclose(runs[1], runs[0], rtol=0, atol=1e-8 * np.abs(runs[0]).max())


@pytest.fixture
def plain_vi(monkeypatch):
    """VI's Anderson acceleration extrapolates each form's own parameters (the
    full matrix's triangle, the dual form's row weights), so the two forms'
    accelerated runs differ within their tolerance: comparisons of the two forms
    compare their plain iterations."""
    import functools

    import skvan.van._solver as solver

    monkeypatch.setattr(solver, "default_step", functools.partial(solver.default_step, memory=0))


@pytest.mark.parametrize("objective", ["vo", "vi"])
def test_dual_estimators_equal_the_full_ones(objective, rng, plain_vi, no_carrying):
    f = _logistic_objective(rng, 40, 600)
    X, y = f.X[:, :-1], (f.y > 0).astype(int)
    full = VANLogisticRegression(covariance="full", objective=objective).fit(X, y)
    dual = VANLogisticRegression(covariance="dual", objective=objective).fit(X, y)
    assert dual.covariance_ == "dual" and full.covariance_ == "full"
    # other arithmetic, the same iterates to round-off: a stop at most one apart
    assert np.all(np.abs(np.asarray(dual.n_iter_) - np.asarray(full.n_iter_)) <= 1)
    np.testing.assert_allclose(dual.coef_, full.coef_, rtol=1e-7, atol=1e-10 * np.abs(full.coef_).max())
    np.testing.assert_allclose(dual.sigma_[0], np.diag(full.sigma_[0]), rtol=1e-6)
    np.testing.assert_allclose(dual.get_covariance(), full.sigma_, rtol=1e-6,
                               atol=1e-9 * np.abs(full.sigma_).max())
    np.testing.assert_allclose(dual.predict_proba(X), full.predict_proba(X), rtol=1e-9)
    np.testing.assert_allclose(dual.precision_.toarray(), full.precision_[0], rtol=1e-8,
                               atol=1e-10 * np.abs(full.precision_[0]).max())


@pytest.mark.parametrize("objective", ["vo", "vi"])
def test_dual_lasso_equals_the_full_one(objective, rng, plain_vi):
    n, p = 30, 100
    X = rng.randn(n, p)
    y = X[:, :4] @ np.array([3.0, -2.0, 1.0, 2.0]) + 0.5 * rng.randn(n)
    full = VANLassoRegressor(alpha=0.2, covariance="full", objective=objective).fit(X, y)
    dual = VANLassoRegressor(alpha=0.2, covariance="dual", objective=objective).fit(X, y)
    np.testing.assert_allclose(dual.coef_, full.coef_, rtol=1e-7, atol=1e-10)
    np.testing.assert_array_equal(dual.coef_ == 0, full.coef_ == 0)
    for a, b in zip(dual.predict(X, return_std=True), full.predict(X, return_std=True)):
        np.testing.assert_allclose(a, b, rtol=1e-6)


def test_operator_reaches_the_vo_optimum(rng):
    f = _logistic_objective(rng, 60, 150, sparse=True)
    X, y = f.X[:, :-1], (f.y > 0).astype(int)
    full = VANLogisticRegression(covariance="full", tol=1e-8).fit(X, y)
    op = VANLogisticRegression(covariance="operator", tol=1e-8).fit(X, y)
    np.testing.assert_allclose(op.coef_, full.coef_, rtol=0, atol=1e-6 * np.abs(full.coef_).max())
    assert op.sigma_.shape == (1, 150)


def test_operator_family_solves_by_conjugate_gradients(rng):
    P = _precision(rng, free=(), zero_rows=0)
    op = OperatorGaussian(np.zeros(P.shape[0]), P)
    g = rng.randn(P.shape[0])
    np.testing.assert_allclose(P @ op.solve(g), g, rtol=0, atol=1e-5 * np.abs(g).max())
    np.testing.assert_allclose(op.marginal_variance(), 1.0 / np.diag(P.toarray()), rtol=1e-12)


def test_auto_covariance_follows_the_shape():
    assert auto_covariance(10_000, 50) == "full"
    assert auto_covariance(20, 300) == "dual"  # wide: the n x n form is the cheaper
    assert auto_covariance(20, 300, "vi") == "dual"
    assert auto_covariance(20, 300, sampled=True) == "full"  # draws independent of n
    assert auto_covariance(20, 30, n_rows=10) == "full"  # multinomial: no dual form
    assert auto_covariance(10_000, 500) == "full"  # no operator up to SMALL_P
    assert auto_covariance(100, 2_000, "vi") == "dual"
    assert auto_covariance(2_000, 5_000, "vo") == "operator"  # cheaper than n^3 per step
    assert auto_covariance(2_000, 5_000, "vi") == "dual"  # VI needs log det P
    assert auto_covariance(20_000, 1_000) == "operator"
    assert auto_covariance(20_000, 1_000, "vi") == "full"
    assert auto_covariance(50_000, 60_000) == "operator"
    assert auto_covariance(50_000, 60_000, "vi") == "diag"
    assert auto_covariance(20_000, 50_000, nnz=1_400_000) == "operator"
    assert auto_covariance(None, 100, stream=True) == "full"
    assert auto_covariance(None, 50_000, stream=True) == "diag"


@pytest.mark.parametrize("objective, form", [("vo", "operator"), ("vi", "dual")])
def test_wide_fit_never_forms_the_p_by_p_covariance(objective, form):
    """A 300 x 30,000 sparse problem: the full covariance would be 7 GiB; auto
    picks a Gram form and nothing of size p x p is allocated."""
    import tracemalloc

    n, p = 300, 30_000
    X = sp.random(n, p, density=0.002, random_state=0, format="csr")
    score = np.asarray(X.sum(axis=1)).ravel()
    y = (score > np.median(score)).astype(int)
    tracemalloc.start()
    clf = VANLogisticRegression(C=10.0, objective=objective).fit(X, y)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert clf.covariance_ == form
    assert peak < 200 * 2**20  # well below one 30,000 x 30,000 matrix (7.2 GB)
    assert clf.sigma_.shape == (1, p) and np.all(clf.sigma_ > 0)
    assert clf.predict_proba(X[:5]).shape == (5, 2)
    with pytest.raises(MemoryError, match="budget"):
        clf.precision_.toarray()


def test_dual_precision_vector_round_trips_and_refuses_what_it_cannot_factorise(rng):
    """``(lam, d)`` is the dual form's vector for VI's extrapolation
    (skvan.van.AndersonStep): set back, it gives the same precision; a negative
    ``lam`` or a non-finite entry is refused and leaves ``q`` as it was."""
    from skvan.van import DualGaussian, GramPrecision

    X = rng.randn(8, 20)
    q = DualGaussian(np.zeros(20), GramPrecision(np.full(20, 2.0), rng.uniform(0.1, 1, 8), X))
    v = q.precision_vector()
    assert v.shape == (28,)
    before = q.precision.toarray()
    assert q.try_set_precision_vector(v)
    np.testing.assert_allclose(q.precision.toarray(), before)
    version = q.version
    for bad in (np.r_[-np.ones(20), v[20:]], np.r_[v[:20], np.full(8, np.nan)]):
        assert not q.try_set_precision_vector(bad)
        assert q.version == version
        np.testing.assert_allclose(q.precision.toarray(), before)


def _class_precision(rng, n=25, p=6, K=3, sparse=False):
    """A :class:`ClassGramPrecision` with random PSD row blocks (two rows zero),
    penalty diagonal and gauge weights, and its design."""
    X = rng.randn(n, p)
    X[:, -1] = 1.0
    A = rng.randn(n, K, K)
    d = A @ np.swapaxes(A, 1, 2)
    d[:2] = 0.0
    X = sp.csr_matrix(X * (rng.rand(n, p) < 0.7)) if sparse else X
    return ClassGramPrecision(rng.uniform(0.5, 2.0, K * p), d, X, rng.uniform(0.0, 3.0, p))


@pytest.mark.parametrize("sparse", [False, True])
def test_class_gram_precision_is_the_multinomial_precision(sparse, rng):
    """Products, diagonal, updates, coordinates and draws of the operator equal
    those of its dense matrix, and that matrix is the one the multinomial
    objective assembles (blocks ``X^T diag(w H_kl) X`` plus the gauge)."""
    P = _class_precision(rng, sparse=sparse)
    dense = P.toarray()
    n, K, p = P.d.shape[0], P.n_classes, P.X.shape[1]
    v = rng.randn(K * p)
    np.testing.assert_allclose(P @ v, dense @ v, rtol=1e-12, atol=1e-12 * np.abs(dense).max())
    np.testing.assert_allclose(P.diagonal(), np.diag(dense), rtol=1e-12)

    Y = np.eye(K)[rng.randint(K, size=n)]
    w = rng.uniform(0.5, 2.0, n)
    f = MultinomialObjective(P.X, Y, sample_weight=w)
    H = rng.randn(n, K, K)
    H = H @ np.swapaxes(H, 1, 2)
    family = OperatorGaussian(np.zeros(K * p), P)
    curvature = f.add_gauge(family.data_curvature(f, H))
    updated = P.updated(curvature, 0.5, 0.75)
    assembled = f.add_gauge(f.data_curvature(H))
    np.testing.assert_allclose(updated.toarray(), 0.75 * dense + 0.5 * assembled,
                               rtol=1e-12, atol=1e-12 * np.abs(dense).max())
    rows = np.array([3, 3, 7])  # a minibatch's rows, one repeated
    part = P.updated(RowCurvature(H[:3], rows=rows), 1.0, 1.0).toarray()
    reference = np.zeros_like(P.d)
    np.add.at(reference, rows, H[:3])
    expected = dense + ClassGramPrecision(np.zeros(K * p), reference, P.X).toarray()
    np.testing.assert_allclose(part, expected, rtol=1e-12, atol=1e-12 * np.abs(dense).max())

    s = np.tile(rng.uniform(0.5, 2.0, p), K)  # P over theta' = s theta, mapped to theta
    Xs = P.X.multiply(1.0 / s[:p]).tocsr() if sparse else P.X / s[:p]
    scaled = ClassGramPrecision(P.lam, P.d, Xs, P.gauge).in_coordinates(s, P.X)
    np.testing.assert_allclose(scaled.toarray(), ClassGramPrecision(P.lam, P.d, Xs, P.gauge)
                               .toarray() * np.outer(s, s), rtol=1e-12)

    draws = P.root_draws(200_000, np.random.RandomState(0))
    np.testing.assert_allclose(np.cov(draws.T), dense, rtol=0, atol=0.02 * np.abs(dense).max())


def test_operator_family_of_class_blocks_solves_and_samples(rng):
    P = _class_precision(rng)
    op = OperatorGaussian(np.zeros(P.shape[0]), P)
    sigma = np.linalg.inv(P.toarray())
    g = rng.randn(P.shape[0])
    np.testing.assert_allclose(P @ op.solve(g), g, rtol=0, atol=1e-6 * np.abs(g).max())
    np.testing.assert_allclose(op.marginal_variance(), 1.0 / P.diagonal(), rtol=1e-12)
    groups = np.arange(6)[None, :] + 6 * np.arange(3)[:, None]
    np.testing.assert_allclose(op.group_variances(groups),
                               (1.0 / P.diagonal())[groups].sum(axis=0), rtol=1e-12)
    # Mean steps: Eisenstat and Walker's forcing terms, 0.9 (|g_t| / |g_t-1|)^2 in
    # [0.01, 0.1], solved to that relative residual.
    for scale, forcing in ((1.0, 0.1), (0.5, 0.1), (0.1, 0.036), (0.001, 0.01)):
        step = op.solve_step(scale * g)
        assert op.step_rtol == pytest.approx(forcing)
        residual = np.linalg.norm(P @ step - scale * g) / np.linalg.norm(scale * g)
        assert residual <= forcing
    # Draws are P^-1 r for r ~ N(0, P) (root_draws, checked above): covariance P^-1.
    draws = op.sample(5, np.random.RandomState(1))
    r = P.root_draws(5, np.random.RandomState(1))
    np.testing.assert_allclose(draws, r @ sigma, rtol=0, atol=1e-6 * np.abs(r @ sigma).max())


def test_multinomial_operator_reaches_the_vo_optimum():
    """Three classes of wine with covariance="operator": the optimum of the full
    family, ``sigma_`` the marginal variances, predictions and draws."""
    from sklearn.datasets import load_wine
    from sklearn.preprocessing import StandardScaler

    X, y = load_wine(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    full = VANLogisticRegression(covariance="full", tol=1e-8).fit(X, y)
    op = VANLogisticRegression(covariance="operator", tol=1e-8).fit(X, y)
    assert isinstance(op.precision_, ClassGramPrecision) and op.sigma_.shape == (3, 13)
    np.testing.assert_allclose(op.coef_, full.coef_, rtol=0, atol=1e-9 * np.abs(full.coef_).max())
    np.testing.assert_allclose(op.predict_proba(X), full.predict_proba(X), rtol=0, atol=1e-9)
    assert op.sample_proba(X[:4], n_samples=3, random_state=0).shape == (3, 4, 3)
    assert op.get_covariance().shape == (3, 13, 3, 13)


def test_auto_covariance_of_a_multinomial_model():
    """Several predictors per row: "full" up to 512 parameters; beyond, under VO,
    the cheaper of "full" and the operator (the factorised form on tall data with
    few coefficients per class, the operator on digits' ten classes and wider);
    under VI or in a stream "full" up to 4,096 parameters and "diag" beyond."""
    assert auto_covariance(50_000, 510, n_rows=10) == "full"
    assert auto_covariance(5_000, 186, n_rows=6) == "full"
    assert auto_covariance(20_000, 105, n_rows=5) == "full"
    assert auto_covariance(1_797, 650, n_rows=10) == "operator"
    assert auto_covariance(20_000, 606, n_rows=6) == "operator"
    assert auto_covariance(2_000, 5_010, n_rows=10) == "operator"
    assert auto_covariance(1_797, 650, "vi", n_rows=10) == "full"
    assert auto_covariance(2_000, 5_010, "vi", n_rows=10) == "diag"
    assert auto_covariance(None, 650, stream=True, n_rows=10) == "full"
    assert auto_covariance(None, 5_010, stream=True, n_rows=10) == "diag"


def test_wide_multinomial_fit_reaches_logistic_regression():
    """Ten classes of 420 features (4,210 parameters): "auto" takes the operator,
    whose Newton-like steps reach scikit-learn's optimum where the diagonal
    family's steps stopped short of it at max_iter."""
    from sklearn.datasets import make_classification
    from sklearn.linear_model import LogisticRegression

    X, y = make_classification(600, 420, n_informative=40, n_redundant=0, n_classes=10,
                               n_clusters_per_class=1, random_state=0)
    van = VANLogisticRegression(tol=1e-8).fit(X, y)
    ref = LogisticRegression(tol=1e-10, max_iter=10_000).fit(X, y)
    assert van.covariance_ == "operator"
    np.testing.assert_allclose(van.coef_, ref.coef_, rtol=0, atol=1e-5 * np.abs(ref.coef_).max())


def test_sparse_multinomial_fit_takes_the_operator():
    """Five classes over 3,000 sparse columns (15,005 parameters): the operator
    reaches scikit-learn's optimum, and no feature-pair table (``p (p + 1) / 2``
    indices, for the dense designs where its product pays) is formed."""
    from sklearn.linear_model import LogisticRegression

    from skvan._data import FeaturePairs

    rng = np.random.RandomState(0)
    X = sp.random(400, 3_000, density=0.01, random_state=1, format="csr")
    W = rng.randn(5, 3_000) * (rng.rand(5, 3_000) < 0.05) * 3
    y = np.argmax(X @ W.T + rng.gumbel(size=(400, 5)), axis=1)
    van = VANLogisticRegression(C=10.0, tol=1e-8).fit(X, y)
    ref = LogisticRegression(C=10.0, tol=1e-10, max_iter=100_000).fit(X, y)
    assert van.covariance_ == "operator"
    np.testing.assert_allclose(van.coef_, ref.coef_, rtol=0, atol=1e-5 * np.abs(ref.coef_).max())
    assert "_indices" not in FeaturePairs(10**6).__dict__
