"""VANElasticNet and VANElasticNetCV against scikit-learn's ElasticNet and ElasticNetCV."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_diabetes
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import ElasticNet, ElasticNetCV, LinearRegression
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
    assert np.max(np.abs(van.coef_ - ref.coef_)) <= 1e-8 * scale  # reached: 4.4e-10
    np.testing.assert_array_equal(van.coef_ != 0, np.abs(ref.coef_) > 1e-10 * scale)
    # reached: 5.0e-9 relative
    assert van.intercept_ == pytest.approx(ref.intercept_, rel=5e-7, abs=1e-6 * np.abs(y).max())


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
    assert np.all(tight.sigma_ < loose.sigma_)  # the marginal variances


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
    assert van.alpha_ == pytest.approx(ref.alpha_, rel=1e-12) and van.l1_ratio_ == ref.l1_ratio_
    assert van.mse_path_.shape == ref.mse_path_.shape
    np.testing.assert_allclose(van.mse_path_, ref.mse_path_, rtol=1e-7)  # reached: 2.0e-9
    # reached: 1.9e-10
    np.testing.assert_allclose(van.coef_, ref.coef_, rtol=0, atol=1e-8 * np.abs(ref.coef_).max())


def test_cv_with_l1_ratio_zero_needs_alphas():
    X, y = PROBLEMS["diabetes"]
    with pytest.raises(ValueError, match="l1_ratio > 0"):
        VANElasticNetCV(l1_ratio=0.0, alphas=5, cv=3).fit(X, y)
    reg = VANElasticNetCV(l1_ratio=0.0, alphas=[1.0, 0.1, 0.01], cv=3).fit(X, y)
    assert reg.alpha_ in (1.0, 0.1, 0.01) and np.all(reg.coef_ != 0)


POSITIVE = {
    "diabetes": load_diabetes(return_X_y=True),
    "generated, half the true coefficients negative": (lambda rng: (
        lambda X, w: (X, X @ w + 0.3 * rng.standard_normal(200)))(
        rng.standard_normal((200, 30)), rng.standard_normal(30) * (rng.random(30) < 0.5)))(
        np.random.default_rng(0)),
}


@pytest.mark.parametrize("name", list(POSITIVE))
@pytest.mark.parametrize("alpha", [0.01, 1.0])
@pytest.mark.parametrize("Est, Ref, params", [
    (VANLassoRegressor, "Lasso", {}), (VANElasticNet, "ElasticNet", {"l1_ratio": 0.5})])
def test_positive_matches_scikit_learn(name, alpha, Est, Ref, params):
    from sklearn import linear_model

    X, y = POSITIVE[name]
    ref = getattr(linear_model, Ref)(alpha=alpha, positive=True, tol=1e-12, max_iter=1_000_000,
                                     **params).fit(X, y)
    van = Est(alpha=alpha, positive=True, **params).fit(X, y)
    scale = np.max(np.abs(ref.coef_))
    assert np.all(van.coef_ >= 0)
    assert np.max(np.abs(van.coef_ - ref.coef_)) <= 1e-10 * scale  # reached: 3.5e-13
    np.testing.assert_array_equal(van.coef_ > 0, ref.coef_ > 1e-10 * scale)


def test_positive_path_and_cv_match_scikit_learn():
    from sklearn.linear_model import LassoCV, lasso_path

    from skvan import VANLassoCV, van_lasso_path

    X, y = POSITIVE["generated, half the true coefficients negative"]
    Xc, yc = X - X.mean(axis=0), y - y.mean()
    alphas, coefs, _ = van_lasso_path(Xc, yc, n_alphas=8, positive=True)
    ref = lasso_path(Xc, yc, alphas=alphas, positive=True, tol=1e-12, max_iter=1_000_000)[1]
    np.testing.assert_allclose(coefs, ref, rtol=0, atol=1e-10 * np.abs(ref).max())  # 1.7e-13
    np.testing.assert_array_equal(coefs > 0, ref > 1e-10 * np.abs(ref).max())
    cv = KFold(4, shuffle=True, random_state=0)
    van = VANLassoCV(alphas=8, cv=cv, positive=True).fit(X, y)
    assert van.alpha_ == pytest.approx(LassoCV(alphas=8, cv=cv, positive=True, tol=1e-12,
                                               max_iter=1_000_000).fit(X, y).alpha_, rel=1e-12)


def test_nonnegative_form_equals_the_constrained_objective_where_it_is_defined():
    from skvan.objectives import L1Penalty, QuadraticObjective
    from skvan.sparse import nonnegative

    rng = np.random.default_rng(1)
    X, y = rng.standard_normal((40, 5)), rng.standard_normal(40)
    lam = np.r_[np.full(4, 3.0), 0.0]  # the last coordinate free, like an intercept
    quad = QuadraticObjective.from_data(X, y, penalty=L1Penalty(lam))
    form = nonnegative(quad)
    for _ in range(20):
        theta = np.abs(rng.standard_normal(5))
        theta[-1] = rng.standard_normal()
        assert form.value(theta) == pytest.approx(quad.value(theta), rel=1e-12)
    theta = np.r_[-1.0, np.ones(4)]  # a negative coefficient costs M_j > lambda_j
    assert form.value(theta) > quad.value(theta)


@pytest.mark.parametrize("params, match", [
    ({"objective": "vi"}, "objective='vi'"),
    ({"expectation": "mc"}, "expectation="),
    ({"covariance": "dual"}, "covariance='dual'"),
])
def test_positive_refuses_what_it_cannot_do(params, match):
    X, y = PROBLEMS["diabetes"]
    with pytest.raises(ValueError, match=match):
        VANLassoRegressor(positive=True, **params).fit(X, y)
    assert not hasattr(VANLassoRegressor(positive=True), "partial_fit")


def test_positive_on_wide_data_by_working_sets():
    from sklearn.linear_model import Lasso

    X, y = PROBLEMS["correlated p > n"]
    van = VANLassoRegressor(alpha=0.05, positive=True).fit(X, y)
    ref = Lasso(alpha=0.05, positive=True, tol=1e-12, max_iter=1_000_000).fit(X, y)
    scale = np.abs(ref.coef_).max()
    assert np.all(van.coef_ >= 0) and van.covariance_ in ("dual", "operator", "full", "diag")
    assert np.max(np.abs(van.coef_ - ref.coef_)) <= 1e-9 * scale  # reached: 2.0e-11
    np.testing.assert_array_equal(van.coef_ > 0, ref.coef_ > 1e-10 * scale)


@pytest.mark.parametrize("name", list(PROBLEMS))
@pytest.mark.parametrize("l1_ratio", [0.3, 0.8])
def test_enet_path_matches_scikit_learn_at_every_alpha(name, l1_ratio):
    from sklearn.linear_model import enet_path

    from skvan import van_enet_path

    X, y = PROBLEMS[name]
    X, y = X - X.mean(axis=0), y - y.mean()
    alphas, coefs, gaps = van_enet_path(X, y, l1_ratio=l1_ratio, n_alphas=12)
    ref_alphas, ref, _ = enet_path(X, y, l1_ratio=l1_ratio, n_alphas=12, tol=1e-12, max_iter=1_000_000)
    np.testing.assert_allclose(alphas, ref_alphas, rtol=1e-12)
    for k in range(len(alphas)):
        scale = max(np.max(np.abs(ref[:, k])), 1e-12)
        assert np.max(np.abs(coefs[:, k] - ref[:, k])) <= 1e-8 * scale, k  # reached: 2.9e-10
        np.testing.assert_array_equal(coefs[:, k] != 0, np.abs(ref[:, k]) > 1e-10 * scale)
    assert np.all(gaps <= 1e-6 * np.mean(y**2))


def test_cv_dual_gap_is_the_elastic_nets():
    """The refitted model's gap counts the ridge as part of the objective: at the
    optimum it is round-off, not the ridge's share of the Lasso gap."""
    X, y = PROBLEMS["diabetes"]
    reg = VANElasticNetCV(l1_ratio=0.3, alphas=[0.1], cv=3).fit(X, y)
    assert 0 <= reg.dual_gap_ <= 1e-8 * np.mean((y - y.mean()) ** 2)


def _engine(Estimator, X, **params):
    """The engine an ``Estimator(**params)`` fit on ``X`` uses, and ``X``'s design."""
    from skvan.van import Design

    est = Estimator(**params)
    est.n_features_in_ = X.shape[1]
    est._check_solver_params()
    est._resolve_covariance(X)
    return est._engine(), Design(X, est.fit_intercept)


@pytest.mark.parametrize("spread", [0, 6])
def test_path_forms_x_t_x_once_and_builds_the_rows_only_for_van(monkeypatch, spread):
    """Along an elastic-net path the ridge changes with alpha: each alpha's least
    squares is X^T W X (formed once) plus the ridge rows' r I, the same problem
    as the rows [X; r I] give, and the rows themselves are not built where no VAN
    iteration runs. With columns spread over 12 decades (spread=6) the
    columns are rescaled, from the same statistics as the rows'."""
    import skvan.objectives._quadratic as quadratic
    from skvan.linear_model._lasso_path import _path
    from skvan.van import LassoSolver

    X, y = load_diabetes(return_X_y=True)
    X = X * np.logspace(-spread, spread, X.shape[1])
    calls = []
    gram = quadratic.augmented_gram
    monkeypatch.setattr(quadratic, "augmented_gram", lambda *a: calls.append(1) or gram(*a))
    built = []
    rows_objective = LassoSolver.rows_objective
    monkeypatch.setattr(LassoSolver, "rows_objective",
                        lambda self, *a: built.append(1) or rows_objective(self, *a))
    alphas = np.geomspace(10.0, 0.01, 12)
    coefs, intercepts, _, n_iter = _path(VANElasticNet(l1_ratio=0.7), X, y, alphas)
    assert len(calls) == 1 and not built and np.all(n_iter == 0)
    monkeypatch.undo()
    engine, design = _engine(VANElasticNet, X, l1_ratio=0.7)
    w = np.ones(len(y))
    for k, alpha in enumerate(alphas):
        problem = engine.problem(design, y, w, alpha)
        rows = engine._rows_problem(design, y, w, alpha, False)  # the Gram of [X; r I]
        np.testing.assert_array_equal(problem.column_scale, rows.column_scale)
        assert spread == 0 or np.ptp(np.log2(problem.column_scale)) > 10
        np.testing.assert_allclose(problem.least_squares.G, rows.least_squares.G, rtol=1e-12,
                                   atol=1e-12 * np.abs(rows.least_squares.G).max())
        np.testing.assert_allclose(problem.least_squares.b, rows.least_squares.b, rtol=1e-12)
        np.testing.assert_array_equal(problem.least_squares.penalty.strength,
                                      rows.least_squares.penalty.strength)
        ref = ElasticNet(alpha=alpha, l1_ratio=0.7, tol=1e-12, max_iter=100_000).fit(X, y)
        scale = max(np.abs(ref.coef_).max(), 1e-12)
        np.testing.assert_allclose(coefs[k], ref.coef_, rtol=0, atol=1e-6 * scale)


def test_a_problems_rows_are_built_at_its_own_alpha():
    """A path's problem builds its rows on first use, after the path has moved on
    to other alphas: they are still that problem's (the same least squares as
    its X^T W X form)."""
    X, y = load_diabetes(return_X_y=True)
    engine, design = _engine(VANElasticNet, X, alpha=0.5, l1_ratio=0.3)
    w = np.ones(len(y))
    problem = engine.problem(design, y, w, 0.5)
    later = engine.at_alpha(problem, 0.01, design, y, w)
    for p, alpha in ((problem, 0.5), (later, 0.01)):
        rows = p.linear  # built now
        np.testing.assert_allclose(rows.penalty.strength, p.least_squares.penalty.strength)
        np.testing.assert_array_equal(p.column_scale, 1.0)  # diabetes: not rescaled
        np.testing.assert_allclose(np.abs(rows.X[len(y):]).max(), np.sqrt(alpha * 0.7 * len(y)),
                                   rtol=1e-12)


@pytest.mark.parametrize("Estimator", [VANLassoRegressor, VANElasticNet])
def test_one_pass_problem_is_the_rows_problem(Estimator):
    """The least squares a fit solves is formed with its column statistics in one
    pass over the rows, without the design [X, 1]: the same Gram matrix,
    ``X^T W y``, scales and strengths as the rows' objective gives, with weights
    and with columns rescaled; with zero weights (rows the Gram matrix does not
    see) the rows' problem itself."""
    X, y = load_diabetes(return_X_y=True)
    X = X * np.logspace(-6, 6, X.shape[1])
    w = np.random.default_rng(0).random(len(y)) + 0.1
    for weights in (w, np.r_[0.0, w[1:]]):
        engine, design = _engine(Estimator, X, alpha=0.01)
        problem = engine.problem(design, y, weights, 0.01)
        rows = engine._rows_problem(design, y, weights, 0.01, False)
        np.testing.assert_array_equal(problem.column_scale, rows.column_scale)
        assert np.ptp(np.log2(problem.column_scale)) > 10
        G = rows.least_squares.G
        np.testing.assert_allclose(problem.least_squares.G, G, rtol=1e-12,
                                   atol=1e-12 * np.abs(G).max())
        np.testing.assert_allclose(problem.least_squares.b, rows.least_squares.b, rtol=1e-12)
        np.testing.assert_array_equal(problem.least_squares.penalty.strength,
                                      rows.least_squares.penalty.strength)
        np.testing.assert_allclose(problem.least_squares.unit_predictor_precision(),
                                   rows.linear.unit_predictor_precision(), rtol=1e-12)


@pytest.mark.parametrize("Estimator", [VANLassoRegressor, VANElasticNet])
def test_entries_near_1e160_overflow_no_gram(Estimator):
    """Entries whose squares overflow: the rows are rescaled before their Gram
    matrix is formed (the elastic net formed it unscaled and returned zeros with a
    warning). With a vanishing penalty the fit is least squares."""
    X, y = load_diabetes(return_X_y=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        warnings.simplefilter("ignore", RuntimeWarning)  # precision_ ~ 1e320 in these units
        est = Estimator(alpha=1e-10).fit(X * 1e160, y)
    ref = LinearRegression().fit(X, y)
    np.testing.assert_allclose(est.coef_ * 1e160, ref.coef_, rtol=1e-8)
    np.testing.assert_allclose(est.intercept_, ref.intercept_, rtol=1e-10)


@pytest.mark.parametrize("free", [False, True])
@pytest.mark.parametrize("scale", [1e2, 1e-3, 1e-8])
def test_ridge_systems_through_the_rows_solve_the_support_equations(free, scale):
    """The Woodbury solve through m rows (supports larger than m) is backward
    stable like G_SS's Cholesky, with an intercept eliminated exactly, from a kept
    K updated by rank-one terms as from a K formed afresh; the Gram objective's
    gradient through the rows equals G's."""
    from skvan.objectives import QuadraticObjective, RidgedQuadratic
    from skvan.sparse import GramRows

    rng = np.random.default_rng(3)
    m, p = 40, 150
    Z = rng.standard_normal((m, p)) * rng.uniform(0.1, 10.0, p)
    Z[:, -1] = 1.0
    pattern = rng.uniform(0.5, 2.0, p)
    pattern[-1] = 0.0 if free else 1.0
    rows = GramRows(lambda: Z, pattern, m)
    G = Z.T @ Z + np.diag(scale * pattern)
    supports = [rng.random(p) < 0.6]
    supports.append(supports[0].copy())
    supports[1][np.flatnonzero(~supports[0])[:3]] = True  # three enter...
    supports[1][np.flatnonzero(supports[0])[:2]] = False  # ...and two leave
    for support in supports:
        support[-1] = True
        system = rows.at(scale * pattern).system(support)
        assert system is not None and system.factor is None
        idx = system.idx
        G_SS = G[np.ix_(idx, idx)]
        c = rng.standard_normal(idx.size)
        w = system.solve(c)
        backward = np.linalg.norm(G_SS @ w - c) / (np.linalg.norm(G_SS, 2) * np.linalg.norm(w))
        assert backward <= 1e-14  # reached: 2e-16
    K_kept = rows.kept[(supports[1] & rows.ridged).tobytes()][0]
    Yt = rows.parts[0][np.flatnonzero(supports[1] & rows.ridged)]  # the projected rows
    np.testing.assert_allclose(K_kept, Yt.T @ Yt, rtol=0, atol=1e-12 * np.abs(K_kept).max())
    # Supports no larger than the rows: G_SS's own Cholesky.
    small = np.zeros(p, dtype=bool)
    small[:m] = True
    assert rows.at(scale * pattern).system(small) is None
    assert rows.at(scale * pattern * (1.0 + rng.random(p))) is None  # not one pattern
    ridgeless = QuadraticObjective(Z.T @ Z, rng.standard_normal(p), 1.0)
    ridgeless.gram_rows = rows
    ridged = RidgedQuadratic(ridgeless, scale * pattern)
    assert ridged.ridged_rows.scale == scale
    theta = np.where(supports[0], rng.standard_normal(p), 0.0)
    np.testing.assert_allclose(ridged.smooth_gradient(theta), G @ theta - ridgeless.b,
                               rtol=0, atol=1e-12 * np.abs(G @ theta).max())
    thetas = np.where(rng.random((3, p)) < 0.5, rng.standard_normal((3, p)), 0.0)
    for quadratic in (ridgeless, ridged):  # the batched gradients of a path's points
        expected = np.array([quadratic.smooth_gradient(theta) for theta in thetas])
        np.testing.assert_allclose(quadratic.smooth_gradients(thetas), expected, rtol=0,
                                   atol=1e-12 * np.abs(expected).max())
    np.testing.assert_allclose(ridged.G, G, rtol=1e-14, atol=1e-14 * np.abs(G).max())
    np.testing.assert_allclose(ridged.gram_block(idx), G[np.ix_(idx, idx)], rtol=1e-14,
                               atol=1e-14 * np.abs(G).max())


@pytest.mark.parametrize("free", [False, True])
def test_restricted_rows_share_the_kept_systems(free):
    """A working set's view of the rows (``GramRows.restricted``) solves its
    supports as rows of those columns alone do, and keeps their ``K`` on the
    parent, keyed by the parent's coordinates: a larger set's support a few
    coefficients off updates it instead of forming it afresh."""
    from skvan.sparse import GramRows

    rng = np.random.default_rng(4)
    m, p = 30, 120
    Z = rng.standard_normal((m, p))
    Z[:, -1] = 1.0
    pattern = rng.uniform(0.5, 2.0, p)
    pattern[-1] = 0.0 if free else 1.0
    parent = GramRows(lambda: Z, pattern, m)
    small = np.r_[np.arange(80), p - 1]
    large = np.r_[np.arange(100), p - 1]
    for columns in (small, large):
        view = parent.restricted(columns)
        alone = GramRows(lambda c=columns: Z[:, c], pattern[columns], m)
        support = np.ones(columns.size, dtype=bool)
        support[:5] = False
        c = rng.standard_normal(columns.size - 5)
        w_view = view.at(0.3 * pattern[columns]).system(support).solve(c)
        w_alone = alone.at(0.3 * pattern[columns]).system(support).solve(c)
        np.testing.assert_allclose(w_view, w_alone, rtol=0, atol=1e-12 * np.abs(w_alone).max())
        whole = np.zeros(p, dtype=bool)
        whole[columns[support]] = True
        assert (whole & parent.ridged).tobytes() in parent.kept  # kept on the parent
    assert len(parent.kept) == 2
    if free:  # a set without the intercept: its projection would not be the parent's
        with pytest.raises(ValueError, match="free"):
            parent.restricted(np.arange(10))


def test_rows_quadratic_reads_g_through_its_rows():
    """``RowsQuadratic`` (a wide working set's least squares): gradients, blocks,
    columns, the diagonal and ``G`` itself from the rows equal those of ``G``
    formed (``QuadraticObjective.from_data``), and ``G`` is formed only when
    asked for."""
    from skvan.objectives import L1Penalty, QuadraticObjective
    from skvan.objectives._quadratic import RowsQuadratic
    from skvan.sparse import GramRows

    rng = np.random.default_rng(5)
    m, p = 20, 70
    X, y, w = rng.standard_normal((m, p)), rng.standard_normal(m), rng.uniform(0.5, 2.0, m)
    formed = QuadraticObjective.from_data(X, y, w)
    rows = GramRows.weighted(X, w, np.ones(p))
    through = RowsQuadratic(rows, formed.b, formed.c, L1Penalty(np.ones(p)), formed.total_weight)
    scale = np.abs(formed.G).max()
    theta = np.where(rng.random(p) < 0.2, rng.standard_normal(p), 0.0)
    idx, cols = np.array([3, 10, 41]), np.array([10, 60])
    np.testing.assert_allclose(through.smooth_gradient(theta), formed.smooth_gradient(theta),
                               rtol=0, atol=1e-13 * scale)
    np.testing.assert_allclose(through.smooth_gradient(np.zeros(p)), -formed.b, rtol=0, atol=0)
    np.testing.assert_allclose(through.gram_block(idx), formed.gram_block(idx), rtol=0,
                               atol=1e-13 * scale)
    np.testing.assert_allclose(through.gram_columns(idx, cols), formed.gram_columns(idx, cols),
                               rtol=0, atol=1e-13 * scale)
    np.testing.assert_allclose(through.gram_diagonal(), formed.gram_diagonal(), rtol=1e-13)
    assert through._G is None  # none of that formed G
    copy = through.with_penalty(L1Penalty(np.full(p, 2.0)))
    np.testing.assert_allclose(copy.G, formed.G, rtol=0, atol=1e-13 * scale)
    assert copy.smooth_cache() is through.smooth_cache()


def test_positive_elastic_net_on_wide_data_with_supports_beyond_the_rows():
    """positive=True on more features than rows, with supports larger than the rows
    (where gradients and KKT systems go through the rows): ElasticNet's fit and
    enet_path's coefficients, the ridge counted in the non-negative form too."""
    from sklearn.linear_model import enet_path

    from skvan import van_enet_path

    warnings.simplefilter("error", ConvergenceWarning)  # every fit certified
    rng = np.random.default_rng(4)
    X = rng.standard_normal((30, 90))
    y = X @ np.abs(rng.standard_normal(90)) + 0.1 * rng.standard_normal(30)
    van = VANElasticNet(alpha=0.01, l1_ratio=0.1, positive=True).fit(X, y)
    ref = ElasticNet(alpha=0.01, l1_ratio=0.1, positive=True, tol=1e-12,
                     max_iter=1_000_000).fit(X, y)
    assert np.count_nonzero(ref.coef_) > 30
    scale = np.abs(ref.coef_).max()
    assert np.max(np.abs(van.coef_ - ref.coef_)) <= 1e-8 * scale  # reached: 9e-11
    Xc, yc = X - X.mean(axis=0), y - y.mean()
    alphas, coefs, _ = van_enet_path(Xc, yc, l1_ratio=0.1, n_alphas=10, positive=True)
    ref = enet_path(Xc, yc, l1_ratio=0.1, alphas=alphas, positive=True, tol=1e-12,
                    max_iter=1_000_000)[1]
    np.testing.assert_allclose(coefs, ref, rtol=0, atol=1e-8 * np.abs(ref).max())  # 1.9e-11
