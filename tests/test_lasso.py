"""VANLassoRegressor against scikit-learn's Lasso, and its uncertainty."""

import inspect
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_diabetes, make_regression
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import Lasso, LinearRegression
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from skvan import VANLassoRegressor
from skvan.objectives import L1Penalty, QuadraticObjective
from skvan.sparse import kkt_finish, support_from_q
from skvan.van import LassoCertificate

#: The certificate's budget of corrections per reading of q, and its entering fraction.
_DEFAULTS = inspect.signature(LassoCertificate).parameters
CERTIFICATE_CORRECTIONS = _DEFAULTS["corrections"].default
CERTIFICATE_ENTER = _DEFAULTS["enter"].default


@pytest.fixture(scope="module")
def diabetes():
    X, y = load_diabetes(return_X_y=True)
    return StandardScaler().fit_transform(X), y


def _lasso(X, y, alpha, **kw):
    return Lasso(alpha=alpha, tol=1e-12, max_iter=100_000, **kw).fit(X, y)


def _rel_err(coef, ref):
    return np.max(np.abs(coef - ref)) / np.max(np.abs(ref))


@pytest.mark.parametrize("alpha", [0.01, 0.1, 1.0, 5.0, 20.0])
def test_matches_sklearn_lasso_on_diabetes(alpha, diabetes):
    X, y = diabetes
    ref = _lasso(X, y, alpha)
    van = VANLassoRegressor(alpha=alpha).fit(X, y)
    assert _rel_err(van.coef_, ref.coef_) <= 1e-8  # reached: 5.7e-11
    np.testing.assert_array_equal(van.coef_ != 0, ref.coef_ != 0)
    assert van.intercept_ == pytest.approx(ref.intercept_, rel=1e-6)
    # The support came from q: the KKT check accepted it with at most the
    # certificate's sign drops, no coordinate added.
    assert van.n_corrections_ <= CERTIFICATE_CORRECTIONS


@pytest.mark.slow
@pytest.mark.parametrize("alpha", [0.02, 2.0, 10.0])
def test_matches_sklearn_lasso_on_a_large_sparse_problem(alpha):
    """20,000 x 200 with 20 true nonzeros (coefficients up to 100, unit noise)."""
    X, y = make_regression(n_samples=20_000, n_features=200, n_informative=20, noise=1.0,
                           bias=3.0, random_state=0)
    ref = _lasso(X, y, alpha)
    van = VANLassoRegressor(alpha=alpha).fit(X, y)
    # reached: 1.5e-15; the reference's own tol (a duality gap of 1e-12) bounds it
    assert _rel_err(van.coef_, ref.coef_) <= 1e-12
    np.testing.assert_array_equal(van.coef_ != 0, ref.coef_ != 0)
    assert van.n_corrections_ <= CERTIFICATE_CORRECTIONS


@pytest.mark.parametrize(
    "kw",
    [
        dict(covariance="diag"),
        dict(hessian="gauss_newton"),
        dict(expectation="quadrature"),
        dict(expectation="mc", random_state=0),
        dict(batch_size=32, random_state=0),
        dict(beta=0.1),
    ],
)
def test_variants_reach_the_lasso_solution(kw, diabetes):
    X, y = diabetes
    ref = _lasso(X, y, 1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        van = VANLassoRegressor(alpha=1.0, **kw).fit(X, y)
    assert _rel_err(van.coef_, ref.coef_) <= 1e-11  # reached: 1.2e-13 (the certificate's support solve)
    np.testing.assert_array_equal(van.coef_ != 0, ref.coef_ != 0)


def test_sample_weight_and_no_intercept_match_sklearn(diabetes):
    X, y = diabetes
    w = np.random.default_rng(0).uniform(0.1, 3.0, len(y))
    ref = _lasso(X, y, 0.5)
    ref.fit(X, y, sample_weight=w)
    van = VANLassoRegressor(alpha=0.5).fit(X, y, sample_weight=w)
    assert _rel_err(van.coef_, ref.coef_) <= 1e-6
    assert van.intercept_ == pytest.approx(ref.intercept_, rel=1e-6)

    ref = _lasso(X, y - y.mean(), 0.5, fit_intercept=False)
    van = VANLassoRegressor(alpha=0.5, fit_intercept=False).fit(X, y - y.mean())
    assert _rel_err(van.coef_, ref.coef_) <= 1e-6
    assert van.intercept_ == 0.0


def test_alpha_zero_warns_and_solves_least_squares(diabetes):
    X, y = diabetes
    with pytest.warns(UserWarning, match="alpha=0"):
        van = VANLassoRegressor(alpha=0.0).fit(X, y)
    ols = LinearRegression().fit(X, y)
    assert _rel_err(van.coef_, ols.coef_) <= 1e-8


def test_large_alpha_gives_all_zeros_and_the_mean(diabetes):
    X, y = diabetes
    van = VANLassoRegressor(alpha=1e3).fit(X, y)
    assert np.all(van.coef_ == 0)
    assert van.intercept_ == pytest.approx(y.mean(), rel=1e-12)


def test_predict_std_has_noise_and_parameter_uncertainty(diabetes):
    X, y = diabetes
    vo = VANLassoRegressor(alpha=1.0).fit(X, y)
    mean, std = vo.predict(X, return_std=True)
    np.testing.assert_allclose(mean, vo.predict(X))
    np.testing.assert_allclose(mean, X @ vo.coef_ + vo.intercept_)
    # Residual variance with the Lasso's degrees of freedom.
    k = np.count_nonzero(vo.coef_) + 1
    assert vo.noise_variance_ == pytest.approx(np.sum((y - mean) ** 2) / (len(y) - k), rel=1e-8)
    # VO: q has concentrated, the spread is the noise's (q's share 4e-6 after the
    # one iteration this fit takes).
    np.testing.assert_allclose(std, np.sqrt(vo.noise_variance_), rtol=1e-5)

    vi = VANLassoRegressor(alpha=1.0, objective="vi").fit(X, y)
    _, std_vi = vi.predict(X, return_std=True)
    assert np.all(std_vi > np.sqrt(vi.noise_variance_))
    assert np.all(np.isfinite(std_vi))


def test_vi_with_a_flat_prior_is_the_least_squares_posterior(diabetes):
    """alpha -> 0: the posterior of the linear-Gaussian model with a flat prior is
    N(OLS, sigma^2 (X~^T X~)^-1), X~ with a column of ones."""
    X, y = diabetes
    with pytest.warns(UserWarning, match="alpha=0"):
        vi = VANLassoRegressor(alpha=0.0, objective="vi").fit(X, y)
    Xd = np.hstack([X, np.ones((len(y), 1))])
    cov = vi.noise_variance_ * np.linalg.inv(Xd.T @ Xd)
    np.testing.assert_allclose(vi.get_covariance(), cov[:-1, :-1], rtol=1e-6)
    np.testing.assert_allclose(vi.sigma_, np.diag(cov)[:-1], rtol=1e-6)
    np.testing.assert_allclose(vi.coef_, LinearRegression().fit(X, y).coef_, rtol=1e-6)


def test_vi_reaches_its_fixed_point(diabetes):
    """At the VI optimum of E_q[f / sigma^2] - H(q): E_q[grad] = 0 and P = E_q[hess]."""
    from skvan.expectations import ClosedForm
    from skvan.van import make_family

    X, y = diabetes
    vi = VANLassoRegressor(alpha=1.0, objective="vi", tol=1e-10, max_iter=500).fit(X, y)
    quad, _ = _problem(1.0, diabetes)
    family = make_family("full", np.r_[vi.coef_, vi.intercept_], vi.precision_)
    e = ClosedForm()(quad.multiplied(1.0 / vi.noise_variance_), family)
    scale = np.abs(e.curvature @ family.mean).max()
    assert np.abs(e.gradient).max() <= 1e-6 * scale
    np.testing.assert_allclose(vi.precision_, e.curvature, rtol=1e-6, atol=1e-9 * scale)


def test_partial_fit_streams_towards_the_lasso_solution(diabetes):
    X, y = diabetes
    ref = _lasso(X, y, 1.0)
    van = VANLassoRegressor(alpha=1.0, random_state=0)
    rng = np.random.default_rng(0)
    errors = []
    for epoch in range(30):
        for idx in np.array_split(rng.permutation(len(y)), 10):
            van.partial_fit(X[idx], y[idx])
        errors.append(_rel_err(van.coef_, ref.coef_))
    assert errors[-1] < 0.05 and errors[-1] < 0.5 * errors[0]
    assert van.n_iter_ == 300
    assert van.noise_variance_ == pytest.approx(ref_noise(X, y, ref), rel=0.2)
    with pytest.raises(ValueError, match="features"):
        van.partial_fit(X[:5, :3], y[:5])


def ref_noise(X, y, ref):
    return np.mean((y - ref.predict(X)) ** 2)


def test_pipeline_and_grid_search_over_alpha_and_beta(diabetes):
    X, y = load_diabetes(return_X_y=True)
    pipe = make_pipeline(StandardScaler(), VANLassoRegressor())
    grid = GridSearchCV(
        pipe, {"vanlassoregressor__alpha": [0.1, 1.0], "vanlassoregressor__beta": [0.5, 1.0]}, cv=3
    ).fit(X, y)
    assert grid.best_score_ > 0.4
    assert set(grid.cv_results_["param_vanlassoregressor__beta"]) == {0.5, 1.0}


def test_seeded_fits_are_identical(diabetes):
    X, y = diabetes
    a = VANLassoRegressor(batch_size=50, random_state=3).fit(X, y)
    b = VANLassoRegressor(batch_size=50, random_state=3).fit(X, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    np.testing.assert_array_equal(a.precision_, b.precision_)


def test_warm_start_starts_from_the_previous_solution(diabetes):
    X, y = diabetes
    van = VANLassoRegressor(alpha=1.0, warm_start=True).fit(X, y)
    first = van.n_iter_
    van.set_params(alpha=1.01).fit(X, y)
    assert _rel_err(van.coef_, _lasso(X, y, 1.01).coef_) <= 1e-3
    assert van.n_iter_ <= first + 5


def test_bad_input_is_rejected_with_a_clear_message(diabetes):
    X, y = diabetes
    with pytest.raises(ValueError, match="alpha"):
        VANLassoRegressor(alpha=-1.0).fit(X, y)
    with pytest.raises(ValueError, match="NaN"):
        VANLassoRegressor().fit(np.where(X > 2, np.nan, X), y)
    with pytest.raises(ValueError, match="beta"):
        VANLassoRegressor(objective="vi", beta=2.0).fit(X, y)
    with pytest.raises(ValueError, match="[Nn]egative"):
        VANLassoRegressor().fit(X, y, sample_weight=-np.ones(len(y)))


# -- the finish: support from q, exact values, KKT check --------------------------
def _problem(alpha, diabetes):
    X, y = diabetes
    Xd = np.hstack([X, np.ones((len(y), 1))])
    strength = np.r_[np.full(X.shape[1], alpha * len(y)), 0.0]
    ref = _lasso(X, y, alpha)
    return QuadraticObjective.from_data(Xd, y, penalty=L1Penalty(strength)), np.r_[ref.coef_, ref.intercept_]


def test_support_from_q_reads_the_sign_probability():
    strength = np.array([1.0, 1.0, 1.0, 0.0])
    mean = np.array([1.0, 1.0, 0.1, 0.0])
    var = np.array([1e-4, 1.0, 1e-6, 1.0])
    # |m|/s = 100 (decided), 1 (undecided), 100 but within the slack, unpenalised.
    np.testing.assert_array_equal(support_from_q(mean, var, strength), [True, False, True, True])
    np.testing.assert_array_equal(
        support_from_q(mean, var, strength, slack=0.1), [True, False, False, True]
    )


def test_kkt_finish_is_exact_from_a_concentrated_q(diabetes):
    quad, theta = _problem(1.0, diabetes)
    # The zeros keep some mass on both sides of 0; the others are certain.
    noisy = theta + 1e-8 * np.where(theta == 0, 1.0, theta)
    var = np.where(theta == 0, 1e-14, 1e-30)
    coef, n_corrections, ok = kkt_finish(quad, noisy, var)
    assert ok and n_corrections == 0
    np.testing.assert_allclose(coef, theta, rtol=1e-9, atol=1e-9)


def test_kkt_finish_corrects_a_wrong_support(diabetes):
    quad, theta = _problem(1.0, diabetes)
    wrong = theta.copy()
    wrong[np.flatnonzero(theta[:-1] == 0)[0]] = 0.5  # a zero claimed nonzero
    wrong[np.flatnonzero(theta[:-1] != 0)[0]] = 0.0  # a nonzero claimed zero
    coef, n_corrections, ok = kkt_finish(quad, wrong, np.full(theta.shape, 1e-30))
    assert ok and n_corrections >= 2
    np.testing.assert_allclose(coef, theta, rtol=1e-9, atol=1e-9)
    _, _, ok = kkt_finish(quad, wrong, np.full(theta.shape, 1e-30), max_corrections=0)
    assert not ok


def test_full_batch_iterations_do_not_touch_the_rows(diabetes, monkeypatch):
    """With exact expectations the solver iterates on X^T X and X^T y only (a
    QuadraticObjective: O(p^3) per iteration, nothing of size n_samples)."""
    import skvan.van._fit as fit

    seen = []
    real = fit.VANSolver

    def spy(f, *args, **kwargs):
        seen.append(type(f))
        return real(f, *args, **kwargs)

    monkeypatch.setattr(fit, "VANSolver", spy)
    X, y = diabetes
    small = VANLassoRegressor(alpha=1.0).fit(X, y)
    large = VANLassoRegressor(alpha=1.0).fit(np.tile(X, (50, 1)), np.tile(y, 50))
    assert seen == [QuadraticObjective, QuadraticObjective]
    np.testing.assert_allclose(small.coef_, large.coef_, rtol=1e-9)


def test_the_certificate_also_reads_q_without_its_distance_margin():
    """On correlated generated data q holds the support long before its mean has
    settled; the reading without the margin certifies it (4 iterations, 18 with
    the margin alone), and the answer is the Lasso's."""
    rng = np.random.default_rng(0)
    mix = rng.standard_normal((30, 30)) * np.sqrt(0.3 / 30)
    X = rng.standard_normal((2000, 30)) + rng.standard_normal((2000, 30)) @ mix
    w = np.zeros(30)
    w[rng.choice(30, 5, replace=False)] = rng.choice([-1, 1], 5) * rng.uniform(0.5, 2.0, 5)
    y = X @ w + 3.0 + rng.standard_normal(2000)
    ref = Lasso(alpha=1.0, tol=1e-12, max_iter=100_000).fit(X, y)
    van = VANLassoRegressor(alpha=1.0).fit(X, y)
    assert van.n_iter_ <= 6 and van.n_corrections_ <= CERTIFICATE_CORRECTIONS
    np.testing.assert_allclose(van.coef_, ref.coef_, rtol=1e-9, atol=1e-10)
    assert np.array_equal(van.coef_ == 0, ref.coef_ == 0)


@pytest.mark.parametrize("fraction", [0.3, 0.1, 0.01])
def test_the_certificate_skips_the_margin_reading_without_a_distance(fraction, diabetes,
                                                                     monkeypatch):
    """Before the mean test has a distance (its first iterations) the reading with
    the margin moves every mean to 0: its support, the unpenalised coefficients
    alone, says nothing about q, and the certificate does not check it. The
    answer is still the Lasso's."""
    from skvan.van import LassoCertificate

    X, y = diabetes
    read = []
    certify = LassoCertificate._certify

    def recording(self, support, signs):
        read.append((self.distance, int(np.count_nonzero(support))))
        return certify(self, support, signs)

    monkeypatch.setattr(LassoCertificate, "_certify", recording)
    alpha = fraction * np.max(np.abs((X - X.mean(0)).T @ (y - y.mean()))) / len(y)
    van = VANLassoRegressor(alpha=alpha).fit(X, y)
    assert read and not any(distance == np.inf and size == 1 for distance, size in read)
    ref = _lasso(X, y, alpha)
    np.testing.assert_allclose(van.coef_, ref.coef_, rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("fraction", [0.3, 0.01, 0.001])
def test_the_certificate_checks_each_support_once(fraction, diabetes, monkeypatch):
    """A support and signs that failed the KKT check fail it again: the certificate
    never checks the same reading of q twice in a run (on diabetes the readings
    come back to earlier ones), and the answer is the Lasso's."""
    from skvan.van import LassoCertificate

    X, y = diabetes
    seen = []
    certify = LassoCertificate._certify

    def recording(self, support, signs):
        seen.append((support.tobytes(), signs[support].tobytes()))
        return certify(self, support, signs)

    monkeypatch.setattr(LassoCertificate, "_certify", recording)
    alpha = fraction * np.max(np.abs((X - X.mean(0)).T @ (y - y.mean()))) / len(y)
    van = VANLassoRegressor(alpha=alpha).fit(X, y)
    assert len(seen) == len(set(seen))
    assert len(seen) <= 2 * van.n_iter_  # at most two readings per iteration
    ref = _lasso(X, y, alpha)
    np.testing.assert_allclose(van.coef_, ref.coef_, rtol=1e-9, atol=1e-10)


def test_the_certificate_drops_coefficients_whose_solved_sign_contradicts_q(monkeypatch):
    """G = [[1, .9], [.9, 1]], b = [1, .8], lambda = .1: the Lasso solution is
    w = (.9, 0). A reading of q with both coefficients positive solves to
    w_1 = -.58 < 0; without w_1 the values pass the KKT check. Without the drop
    the reading fails."""
    from skvan.van import LassoCertificate
    from skvan.van import MeanContraction

    quad = QuadraticObjective(np.array([[1.0, 0.9], [0.9, 1.0]]), np.array([1.0, 0.8]), 1.0,
                              L1Penalty(np.array([0.1, 0.1])))
    both, signs = np.array([True, True]), np.array([1.0, 1.0])
    certificate = LassoCertificate(quad, MeanContraction(1e-4))
    certificate.reset()
    assert certificate._certify(both, signs)
    without = LassoCertificate(quad, MeanContraction(1e-4), corrections=0)
    without.reset()
    assert not without._certify(both, signs)
    w, n_corrections, ok = kkt_finish(quad, np.array([1.0, 1.0]), np.array([1e-30, 1e-30]))
    np.testing.assert_allclose(w, [0.9, 0.0])
    assert ok and n_corrections == 1


@pytest.mark.parametrize("alpha", [0.5, 0.1, 0.01])
def test_a_constant_column_gets_no_coefficient(alpha):
    """A constant column is in the intercept's span: the L1 penalty makes its
    coefficient 0 at the optimum. The support equations with it have no solution
    (its equation asks for lambda_j sign(w_j) = 0); the certificate once accepted
    their least-squares values (coefficient 0.81 at alpha=0.5, the intercept 2.5
    off, after one iteration)."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((200, 10))
    X[:, -1] = 3.0
    w = np.zeros(10)
    w[[1, 4]] = [2.0, -1.5]
    y = X @ w + rng.standard_normal(200) + 5.0
    van = VANLassoRegressor(alpha=alpha).fit(X, y)
    ref = _lasso(X, y, alpha)
    assert van.coef_[-1] == 0.0
    np.testing.assert_allclose(van.coef_, ref.coef_, rtol=1e-9, atol=1e-10)
    assert van.intercept_ == pytest.approx(ref.intercept_, rel=1e-9)


@pytest.mark.parametrize("seed, fraction", [(0, 0.1), (1, 0.001), (3, 0.1)])
def test_more_features_than_rows_reach_the_lasso_optimum(seed, fraction):
    """Five rows, 30 features: a support of more coefficients than the rows
    determine has singular equations, whose least-squares values the certificate
    accepted (objective 5.5% and 1.3% above the optimum for the first two
    cases)."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((5, 30))
    w = np.zeros(30)
    w[:6] = rng.standard_normal(6) * 3
    y = X @ w + rng.standard_normal(5) + 5
    alpha = fraction * np.max(np.abs((X - X.mean(0)).T @ (y - y.mean()))) / 5

    def objective(coef, intercept):
        return 0.5 * np.mean((y - X @ coef - intercept) ** 2) + alpha * np.abs(coef).sum()

    van = VANLassoRegressor(alpha=alpha).fit(X, y)
    ref = _lasso(X, y, alpha)
    assert objective(van.coef_, van.intercept_) <= objective(ref.coef_, ref.intercept_) * (1 + 1e-9)


def test_degenerate_designs_reach_the_lasso_optimum():
    """30 seeded problems of few rows, many features, duplicated, constant and
    badly scaled columns (``benchmarks/fuzz_sparse.py`` runs 300): every fit
    reaches scikit-learn's objective, or warns."""
    rng = np.random.default_rng(7)
    for _ in range(30):
        n, p = int(rng.choice([5, 20, 60])), int(rng.choice([5, 30, 100]))
        X = rng.standard_normal((n, p))
        X[:, 1:] = 0.6 * X[:, 1:] + 0.8 * X[:, :-1]
        if rng.random() < 0.5:
            X *= np.exp(rng.uniform(-4, 4, p))
        X[:, 1] = X[:, 0]
        X[:, -1] = 3.0
        w = np.zeros(p)
        w[rng.choice(p, 3, replace=False)] = rng.standard_normal(3) * 3
        y = X @ w + rng.standard_normal(n) + 5
        alpha = float(rng.choice([0.5, 0.05, 0.005])) * np.max(
            np.abs((X - X.mean(0)).T @ (y - y.mean()))) / n

        def objective(coef, intercept):
            return 0.5 * np.mean((y - X @ coef - intercept) ** 2) + alpha * np.abs(coef).sum()

        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("always")
            van = VANLassoRegressor(alpha=alpha).fit(X, y)
        ref = _lasso(X, y, alpha)
        best = objective(ref.coef_, ref.intercept_)
        warned = any(issubclass(w.category, ConvergenceWarning) for w in record)
        assert warned or objective(van.coef_, van.intercept_) <= best + 1e-7 * abs(best)


def test_the_kkt_check_rejects_support_equations_without_a_solution():
    """G of an intercept column (free) and the same column tripled (penalised):
    G_SS is singular and ``G_SS w = b - lambda z`` has no solution; the
    least-squares values miss the penalised equation by about lambda. kkt_finish
    drops that coefficient and certifies the intercept alone."""
    from skvan.sparse import _kkt as _sparse

    x = np.ones(4)
    X = np.column_stack([x, 3 * x])
    G, b = X.T @ X, X.T @ np.array([1.0, 2.0, 3.0, 4.0])
    quad = QuadraticObjective(G, b, 15.0, L1Penalty(np.array([0.0, 0.5])))
    check = _sparse._KKTCheck(quad)
    w, grad, flipped, excess, unsolved, ok = check(np.array([True, True]), np.array([1.0, 1.0]))
    assert not ok and not flipped.any()
    assert unsolved[1] > 0.1
    coef, n_corrections, ok = kkt_finish(quad, np.array([1.0, 1.0]), np.array([1e-30, 1e-30]))
    assert ok and n_corrections == 1
    np.testing.assert_allclose(coef, [2.5, 0.0])


def test_keep_signs_cuts_decided_coordinates_at_zero():
    """Only a coordinate that is penalised, whose sign q has decided (|m| > z s,
    the support's reading) and that the step would move across 0 stops at 0; a
    penalised coordinate whose sign is undecided moves by at most 3 s; the
    others, and a step within those bounds, are left as they are."""
    from types import SimpleNamespace

    from skvan.van import KeepSigns
    from skvan.van import DiagonalGaussian

    mean = np.array([1.0, -1.0, 1e-9, 1.0, 2.0])
    family = DiagonalGaussian(mean, np.full(5, 1e6))  # sd 1e-3: coordinate 2 is undecided
    keep = KeepSigns(np.array([1.0, 1.0, 1.0, 0.0, 1.0]))
    keep.prepare(SimpleNamespace(family=family))
    step = np.array([-3.0, 0.5, -1.0, -3.0, -1.0])
    np.testing.assert_array_equal(keep(step), [-1.0, 0.5, -3e-3, -3.0, -1.0])
    assert step[0] == -3.0 and step[2] == -1.0  # not modified in place
    inside = np.array([-0.5, 0.5, 2e-3, -3.0, -1.0])
    np.testing.assert_array_equal(keep(inside), inside)


def test_orthant_steps_end_a_correlated_lasso_in_few_iterations():
    """Diabetes at 0.1 alpha_max (correlated features): steps that crossed zero in
    a coordinate whose sign q had decided were rejected until beta_t had halved
    far enough to stop short of the kink (68 iterations at c968938); cut at zero
    (KeepSigns) and with undecided coordinates held to 3 sds, the fit took 9,
    and 3 once the certificate drops coefficients whose solved sign contradicts
    q's; the answer is the Lasso's."""
    X, y = load_diabetes(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    alpha = 0.1 * np.max(np.abs(X.T @ (y - y.mean()))) / len(y)
    ref = Lasso(alpha=alpha, tol=1e-12, max_iter=100_000).fit(X, y)
    van = VANLassoRegressor(alpha=alpha).fit(X, y)
    assert van.n_iter_ <= 20 and van.n_corrections_ <= CERTIFICATE_CORRECTIONS
    np.testing.assert_allclose(van.coef_, ref.coef_, rtol=1e-9, atol=1e-9)
    assert np.array_equal(van.coef_ == 0, ref.coef_ == 0)


def test_gauss_newton_steps_cross_zero(monkeypatch):
    """With hessian="gauss_newton" the L1 curvature is that of a quadratic upper
    bound of E|theta| (its steps descend across 0), and the Lasso does not stop
    them at 0: there, a coefficient that must change sign froze at 0 and crept
    out (diabetes at alpha=1: 28 iterations at 89edfb8, which cut them; 11 without)."""
    from skvan.van import KeepSigns
    from skvan.van import BetaBacktrack

    X, y = load_diabetes(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    ref = Lasso(alpha=1.0, tol=1e-12, max_iter=100_000).fit(X, y)
    restricts = []
    take = BetaBacktrack.take
    monkeypatch.setattr(BetaBacktrack, "take", lambda self, solver: restricts.append(
        self.restrict) or take(self, solver))
    van = VANLassoRegressor(alpha=1.0, hessian="gauss_newton").fit(X, y)
    assert van.n_iter_ <= 16 and not any(isinstance(r, KeepSigns) for r in restricts)
    np.testing.assert_allclose(van.coef_, ref.coef_, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("log_cond", [0, 8, 14, 17, 20])
def test_the_kkt_solve_fails_where_scipy_solve_would(log_cond):
    """The certificate's Cholesky solve returns None where
    scipy.linalg.solve(assume_a="pos") fails or warns of ill-conditioning (the
    caller then takes least squares), and scipy's answer otherwise (away from
    the band of ``n`` epsilons where only the former gives up)."""
    from scipy import linalg

    from skvan.sparse._kkt import _solve_positive

    rng = np.random.default_rng(log_cond)
    Q, _ = np.linalg.qr(rng.standard_normal((6, 6)))
    A = (Q * np.logspace(0, -log_cond, 6)) @ Q.T
    A = 0.5 * (A + A.T)
    rhs = rng.standard_normal(6)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", linalg.LinAlgWarning)
            expected = linalg.solve(A, rhs, assume_a="pos", check_finite=False)
    except (linalg.LinAlgError, linalg.LinAlgWarning):
        expected = None
    got = _solve_positive(A, rhs)
    assert (got is None) == (expected is None)
    if expected is not None:
        scale = np.abs(expected).max()
        np.testing.assert_allclose(got, expected, atol=10.0 ** (log_cond - 13) * scale)


def test_the_kkt_solve_gives_up_on_non_finite_matrices_and_norms():
    """A non-finite entry, or finite entries whose column sums overflow (a 1-norm
    of inf, where pocon's reciprocal condition number is 0), get no factor: the
    1-norm alone decides, without a pass over the entries."""
    from skvan.sparse._kkt import _cholesky

    for bad in (np.nan, np.inf, -np.inf):
        A = np.eye(3)
        A[1, 2] = A[2, 1] = bad
        assert _cholesky(A) is None
    huge = np.array([[1.5e308, 1e308], [1e308, 1.5e308]])
    with np.errstate(over="ignore"):
        assert np.isfinite(huge).all() and not np.isfinite(np.abs(huge).sum(axis=0)).all()
        assert _cholesky(huge) is None
    assert _cholesky(huge / 4) is not None  # the same matrix, its sums finite


@pytest.mark.parametrize("form", ["gram", "rows"])
def test_a_check_without_equations_after_a_flip_decides_as_the_full_one(form):
    """The certificate's and kkt_finish's check skips the equations' misses
    where a sign flipped (the check has failed and the corrections drop the
    flipped coefficients): everything else it returns is the full check's, to
    the bit, and on supports without a flip so are the misses."""
    from skvan.objectives import L1Penalty, LinearModelObjective, QuadraticObjective, SquaredLoss
    from skvan.sparse._kkt import _KKTCheck

    X, y = load_diabetes(return_X_y=True)
    f = LinearModelObjective(X, y, SquaredLoss(), None, L1Penalty(np.full(10, 30.0)))
    f = QuadraticObjective.from_linear(f) if form == "gram" else f
    full, lean = _KKTCheck(f), _KKTCheck(f, equations_when_flipped=False)
    rng = np.random.default_rng(0)
    n_flipped = n_kept = 0
    for _ in range(40):
        support = rng.random(10) < 0.6
        signs = np.where(rng.random(10) < 0.5, -1.0, 1.0)
        expected, got = full(support, signs), lean(support, signs)
        for a, b in zip(expected[:4], got[:4]):
            np.testing.assert_array_equal(a, b)
        assert got[5] == expected[5]
        if expected[2].any():
            assert got[4] is None and not got[5]
            n_flipped += 1
        else:
            np.testing.assert_array_equal(got[4], expected[4])
            n_kept += 1
    assert n_flipped and n_kept


@pytest.mark.parametrize("form", ["gram", "rows", "sparse rows"])
def test_a_support_near_a_kept_one_updates_its_factor(form, monkeypatch):
    """A support a few coefficients off a kept one updates that factor (rows
    deleted by Givens rotations, the new coefficients bordered as a block, in
    the order they entered) and solves as a new factorisation does, with its
    bounds above ||A^-1||_1 and the column sums of |A|; a column that makes the
    support singular (a duplicate) gets no factor, as from scratch, and the
    least-squares values. (On this small problem only with the updates' size
    threshold lowered: below it every support is factored anew.)"""
    from skvan.objectives import L1Penalty, LinearModelObjective, QuadraticObjective, SquaredLoss
    from skvan.sparse import _kkt
    from skvan.sparse._kkt import _new_system, _solve_on_support, _support_system

    monkeypatch.setattr(_kkt, "UPDATE_FROM", 0)

    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 12)) * np.logspace(-3, 3, 12)
    X[:, 11] = X[:, 2]
    y = rng.standard_normal(40)
    penalty = L1Penalty(np.full(12, 0.1))

    def objective():  # a new one each time: nothing kept
        f = LinearModelObjective(sp.csr_matrix(X) if form == "sparse rows" else X, y,
                                 SquaredLoss(), None, penalty)
        return QuadraticObjective.from_linear(f) if form == "gram" else f

    f, fresh = objective(), objective()
    b = -f.smooth_gradient(np.zeros(12))
    signs = np.sign(rng.standard_normal(12))
    _support_system(f, np.isin(np.arange(12), [1, 2, 5, 6, 8]))
    for members, order in [([1, 2, 5, 6, 8, 3], [1, 2, 5, 6, 8, 3]),  # one enters
                           ([1, 2, 5, 6, 8, 3, 0, 9], [1, 2, 5, 6, 8, 3, 0, 9]),  # a batch
                           ([1, 5, 6, 8, 3, 0, 9, 4], [1, 5, 6, 8, 3, 0, 9, 4])]:  # 2 out, 4 in
        support = np.isin(np.arange(12), members)
        system = _support_system(f, support)
        np.testing.assert_array_equal(system.idx, order)
        G = f.gram_block(system.idx)
        A = G / system.diag[:, None] / system.diag[None, :]
        L = np.tril(system.factor)
        np.testing.assert_allclose(L @ L.T, A, rtol=0, atol=1e-13)
        assert system.inv_norm >= np.abs(np.linalg.inv(A)).sum(axis=0).max() / 3
        assert np.all(system.colsum >= np.abs(A).sum(axis=0) * (1 - 1e-14))
        expected = _solve_on_support(fresh, b, penalty.strength, support, signs)[0]
        got = _solve_on_support(f, b, penalty.strength, support, signs)[0]
        np.testing.assert_allclose(got, expected, rtol=1e-10,
                                   atol=1e-12 * np.abs(expected).max())
    singular = support | np.isin(np.arange(12), [2, 11])  # 11 duplicates 2
    system = _support_system(f, singular)
    assert system.factor is None and system.A is not None
    assert _new_system(fresh, np.flatnonzero(singular)).factor is None


@pytest.mark.parametrize("sparse", [False, True])
def test_kept_gram_columns_are_the_gram_matrix_columns(sparse):
    """The rows objective's kept Gram columns, formed as asked (more at once than
    the kept array holds, so that it grows), are ``X^T W X``'s."""
    from skvan.objectives import LinearModelObjective, SquaredLoss

    rng = np.random.default_rng(2)
    X, y, weights = rng.standard_normal((30, 90)), rng.standard_normal(30), rng.uniform(0, 2, 30)
    f = LinearModelObjective(sp.csr_matrix(X) if sparse else X, y, SquaredLoss(), weights)
    f.keep_gram_columns()
    G = X.T @ (weights[:, None] * X)
    idx = np.arange(0, 90, 3)
    for cols in (np.arange(5), np.arange(10, 60), np.array([2, 70, 89])):
        np.testing.assert_allclose(f.gram_columns(idx, cols), G[np.ix_(idx, cols)],
                                   rtol=1e-12, atol=1e-12 * np.abs(G).max())


def test_without_givens_deletions_a_smaller_support_is_factored_afresh(monkeypatch):
    """Without scikit-learn's ``cholesky_delete`` a support lacking some of a kept
    one's coefficients is factored afresh (sorted indices), to the same values."""
    from skvan.objectives import L1Penalty, QuadraticObjective
    from skvan.sparse import _kkt

    rng = np.random.default_rng(1)
    X, y = rng.standard_normal((30, 10)), rng.standard_normal(30)
    f = QuadraticObjective.from_data(X, y, penalty=L1Penalty(np.full(10, 0.1)))
    b, signs = f.b, np.sign(rng.standard_normal(10))
    kept, smaller = np.arange(10) < 8, np.isin(np.arange(10), [0, 2, 3, 4, 5, 6, 7])
    _kkt._support_system(f, kept)
    updated = _kkt._solve_on_support(f, b, f.penalty.strength, smaller, signs)[0]
    monkeypatch.setattr(_kkt, "_cholesky_delete", None)
    g = QuadraticObjective.from_data(X, y, penalty=L1Penalty(np.full(10, 0.1)))
    _kkt._support_system(g, kept)
    np.testing.assert_array_equal(_kkt._support_system(g, smaller).idx, [0, 2, 3, 4, 5, 6, 7])
    fresh = _kkt._solve_on_support(g, b, g.penalty.strength, smaller, signs)[0]
    np.testing.assert_allclose(updated, fresh, rtol=1e-12, atol=1e-14 * np.abs(fresh).max())


@pytest.mark.parametrize("alpha", [0.3, 0.01])
def test_batch_entries_reach_the_single_entry_solution(alpha):
    """``kkt_finish(enter=0.5)`` from nothing, on more columns than rows (at
    alpha 0.01 the support nears the rows, where batches wander and the check
    falls back to one coordinate at a time): certified, and the same solution
    as single entries."""
    from skvan.objectives import L1Penalty, QuadraticObjective
    from skvan.sparse import kkt_finish

    rng = np.random.default_rng(3)
    X = rng.standard_normal((40, 120))
    X[:, 1:] += 0.6 * X[:, :-1]
    y = X[:, :8] @ rng.uniform(1, 2, 8) + rng.standard_normal(40)
    f = QuadraticObjective.from_data(X, y, penalty=L1Penalty(np.full(120, alpha * 40)))
    single, n_single, ok_single = kkt_finish(f, np.zeros(120), np.zeros(120))
    batch, n_batch, ok_batch = kkt_finish(f, np.zeros(120), np.zeros(120), enter=0.5)
    assert ok_single and ok_batch
    np.testing.assert_allclose(batch, single, rtol=0, atol=1e-8 * np.abs(single).max())


def test_finish_returns_what_the_certificate_certified(monkeypatch):
    """A run the certificate ended is finished with the values it certified (no
    KKT check repeated); they are kkt_finish's on the same reading (to round-off:
    a support's factor may be bordered from another kept one than in the run;
    kkt_finish goes on one coordinate at a time after a quarter of its budget,
    so its corrections may differ)."""
    from skvan.van import LassoCertificate
    from skvan.sparse._kkt import _KKTCheck

    checks, finished = [], []
    check, finish = _KKTCheck.__call__, LassoCertificate.finish

    def counted(self, *args):
        checks.append(1)
        return check(self, *args)

    def recorded(self, family, converged):
        before = len(checks)
        result = finish(self, family, converged)
        n_checks = len(checks) - before
        again = kkt_finish(self.quadratic, family.mean, family.marginal_variance(),
                           slack=self.slack, enter=CERTIFICATE_ENTER)
        finished.append((self.slack is not None, n_checks, result, again))
        return result

    monkeypatch.setattr(_KKTCheck, "__call__", counted)
    monkeypatch.setattr(LassoCertificate, "finish", recorded)
    X, y = load_diabetes(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    for alpha in (0.1, 1.0, 3.0, 10.0):
        VANLassoRegressor(alpha=alpha).fit(X, y)
    ended = [f for f in finished if f[0]]
    assert len(ended) >= 3
    for _, n_checks, (coef, _, ok), (ref, _, ref_ok) in ended:
        assert ok and ref_ok and n_checks == 0
        np.testing.assert_allclose(coef, ref, rtol=1e-12, atol=1e-12 * np.abs(ref).max())


def test_the_certificates_kept_checks_change_nothing_but_their_count(monkeypatch):
    """The certificate keeps its run's recent KKT checks (a reading often lands on
    a support an earlier reading's corrections went through): the same fits,
    fewer checks computed."""
    from skvan.van import LassoCertificate
    from skvan.sparse._kkt import _KKTCheck

    def correlated(n, p, k, seed):
        """Features mixed at strength 0.3, ``k`` of ``p`` in the model (as
        benchmarks/bench_lasso.py's ``synthetic``), and 0.001 of alpha_max."""
        rng = np.random.default_rng(seed)
        mix = rng.standard_normal((p, p)) * np.sqrt(0.3 / p)
        X = rng.standard_normal((n, p)) + rng.standard_normal((n, p)) @ mix
        w = np.zeros(p)
        w[rng.choice(p, k, replace=False)] = rng.choice([-1, 1], k) * rng.uniform(0.5, 2.0, k)
        y = X @ w + 3.0 + rng.standard_normal(n)
        return X, y, 1e-3 * np.max(np.abs((X - X.mean(0)).T @ (y - y.mean()))) / n

    # Fits whose readings land on supports an earlier check went through (rarer
    # since corrections enter several coefficients at once; these have some).
    problems = [correlated(300, 60, 10, seed) for seed in range(3)]
    problems += [correlated(2000, 200, 20, seed) for seed in (0, 2)]
    computed, check = [], _KKTCheck.__call__

    def counted(self, *args):
        computed.append(1)
        return check(self, *args)

    def fits():
        computed.clear()
        models = [VANLassoRegressor(alpha=alpha).fit(X, y) for X, y, alpha in problems]
        return models, len(computed)

    monkeypatch.setattr(_KKTCheck, "__call__", counted)
    kept, n_kept = fits()
    monkeypatch.setattr(LassoCertificate, "_checked", lambda self, *a: self._check(*a))
    every, n_every = fits()
    assert n_kept < n_every
    for a, b in zip(kept, every):
        # A check computed again may solve through another factor of the same
        # support (bordered or new): round-off apart.
        np.testing.assert_allclose(a.coef_, b.coef_, rtol=0, atol=1e-12 * np.abs(b.coef_).max())


@pytest.mark.parametrize("name, home", [("kkt_finish", "sparse"), ("nonnegative", "sparse"),
                                        ("KeepSigns", "van"), ("LassoCertificate", "van")])
def test_names_moved_with_the_engine_still_import_from_objectives(name, home):
    """The Lasso's engine took these names to skvan.sparse and skvan.van; the old
    path gives the same object, with a FutureWarning naming the new one."""
    import importlib

    import skvan.objectives

    with pytest.warns(FutureWarning, match=f"skvan.{home}.{name}"):
        moved = getattr(skvan.objectives, name)
    assert moved is getattr(importlib.import_module(f"skvan.{home}"), name)
    with pytest.raises(AttributeError):
        skvan.objectives.not_a_name  # noqa: B018


def test_a_small_support_is_factored_anew():
    """Below UPDATE_FROM coefficients a support near a kept one gets a new factor
    (indices sorted), the same system as from scratch; from it, the kept one's
    update (indices in the order they entered)."""
    from skvan.objectives import QuadraticObjective
    from skvan.sparse import _kkt

    rng = np.random.default_rng(0)
    p = 2 * _kkt.UPDATE_FROM + 4
    X = rng.standard_normal((3 * p, p))
    for size in (_kkt.UPDATE_FROM - 2, _kkt.UPDATE_FROM + 2):
        f = QuadraticObjective(X.T @ X, rng.standard_normal(p), 0.0)
        kept = np.zeros(p, dtype=bool)
        kept[1:size] = True
        _kkt._support_system(f, kept)
        near = kept.copy()
        near[0] = True
        system = _kkt._support_system(f, near)
        fresh = _kkt._new_system(f, np.flatnonzero(near))
        updated = size >= _kkt.UPDATE_FROM
        assert bool(system.idx[-1] == 0) == updated
        order = np.argsort(system.idx)
        L, F = np.tril(system.factor), np.tril(fresh.factor)  # (LAPACK leaves the upper part)
        np.testing.assert_allclose((L @ L.T)[np.ix_(order, order)], F @ F.T, rtol=1e-14,
                                   atol=1e-14)
