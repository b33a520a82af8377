"""Numerical stress: hard but valid problems give finite fitted attributes and
predictions, a symmetric positive definite precision, and probabilities that
sum to one; problems without a finite optimum warn and stay finite."""

import warnings

import numpy as np
import pytest
from scipy.sparse.linalg import LinearOperator
from sklearn.exceptions import ConvergenceWarning

from skvan import ActiveVANClassifier, VANLassoRegressor, VANLogisticRegression


def _normal(n, p, seed=0):
    return np.random.default_rng(seed).standard_normal((n, p))


def _labels(X, seed=0):
    noise = 0.5 * np.random.default_rng(seed).standard_normal(len(X))
    return (X[:, 0] + noise > 0).astype(int)


def _targets(X, seed=0):
    noise = 0.1 * np.random.default_rng(seed).standard_normal(len(X))
    return X[:, : min(3, X.shape[1])].sum(axis=1) + noise


def _problems():
    """name -> (X, classification labels, regression targets)."""
    X = _normal(200, 5)
    yield "separable classes", X, (X[:, 0] > 0).astype(int), 3.0 * X[:, 0]
    X = _normal(200, 5) * np.logspace(-8, 8, 5)
    yield "feature scales 1e-8 to 1e8", X, _labels(X), _targets(_normal(200, 5))
    X = _normal(200, 5)
    X = np.c_[X, X[:, 0], 2.0 * X[:, 1] + X[:, 2]]
    yield "duplicated and collinear columns", X, _labels(X), _targets(X)
    X = np.c_[_normal(200, 5), np.ones(200), np.zeros(200)]
    yield "constant columns", X, _labels(X), _targets(X)
    X = np.c_[_normal(200, 5), 1e-300 * _normal(200, 1, seed=1)]
    yield "a column near 1e-300", X, _labels(X), _targets(X)
    X = _normal(20, 100)
    yield "n_features > n_samples", X, _labels(X), _targets(X)
    X = _normal(1000, 5)
    y = np.zeros(1000, dtype=int)
    y[np.argmax(X[:, 0])] = 1
    yield "one positive in 1000", X, y, _targets(X)
    X = _normal(200, 5).astype(np.float32)
    yield "float32", X, _labels(X), _targets(X).astype(np.float32)
    X = _normal(2, 3)
    yield "two samples", X, np.array([0, 1]), np.array([1.0, -1.0])
    X = _normal(200, 5) * 1e150
    yield "features near 1e150", X, _labels(X), _targets(_normal(200, 5))
    X = _normal(200, 5)
    yield "targets near 1e12", X, _labels(X), 1e12 * _targets(X)
    yield "constant target", X, _labels(X), np.full(200, 5.0)


PROBLEMS = {name: (X, yc, yr) for name, X, yc, yr in _problems()}

ESTIMATORS = {
    "logistic": lambda: VANLogisticRegression(),
    "logistic-diag": lambda: VANLogisticRegression(covariance="diag"),
    "logistic-vi": lambda: VANLogisticRegression(objective="vi"),
    "logistic-mc": lambda: VANLogisticRegression(expectation="mc", random_state=0),
    "logistic-C=1e10": lambda: VANLogisticRegression(C=1e10),
    "logistic-C=1e-10": lambda: VANLogisticRegression(C=1e-10),
    "logistic-max_iter=1": lambda: VANLogisticRegression(max_iter=1),
    "logistic-svan": lambda: VANLogisticRegression(batch_size=16, random_state=0),
    "logistic-dual": lambda: VANLogisticRegression(covariance="dual"),
    "logistic-dual-vi": lambda: VANLogisticRegression(covariance="dual", objective="vi"),
    "logistic-operator": lambda: VANLogisticRegression(covariance="operator"),
    "active": lambda: ActiveVANClassifier(random_state=0),
    "lasso": lambda: VANLassoRegressor(),
    "lasso-diag": lambda: VANLassoRegressor(covariance="diag"),
    "lasso-vi": lambda: VANLassoRegressor(objective="vi"),
    "lasso-alpha=1e10": lambda: VANLassoRegressor(alpha=1e10),
    "lasso-alpha=1e-10": lambda: VANLassoRegressor(alpha=1e-10),  # wide data: the dual form
    "lasso-full-alpha=1e-10": lambda: VANLassoRegressor(alpha=1e-10, covariance="full"),
    "lasso-max_iter=1": lambda: VANLassoRegressor(max_iter=1),
    "lasso-svan": lambda: VANLassoRegressor(batch_size=16, random_state=0),
    "lasso-dual": lambda: VANLassoRegressor(covariance="dual"),
    "lasso-dual-vi": lambda: VANLassoRegressor(covariance="dual", objective="vi"),
}


def _assert_spd(P):
    if isinstance(P, (list, LinearOperator)):  # Gram forms
        for Q in np.atleast_1d(P):
            _assert_gram_spd(Q)
        return
    P = np.asarray(P)
    stack = P.reshape((-1,) + P.shape[-2:]) if P.ndim >= 2 and P.shape[-1] == P.shape[-2] else None
    if stack is None:  # diagonal precisions
        assert np.all(P > 0)
        return
    for Q in stack:
        np.testing.assert_array_equal(Q, Q.T)
        # Cholesky, not eigenvalues: a badly scaled SPD matrix D P D (features on
        # scales 1e-8..1e8) has eigenvalues spanning 1e32 that eigvalsh cannot
        # resolve, but its Cholesky factor is D chol(P).
        np.linalg.cholesky(Q)


def _assert_gram_spd(P):
    """``P = diag(lam) + X^T diag(d) X`` is SPD: ``lam, d >= 0`` and finite, and
    either ``P`` formed has a Cholesky factor or its parts show it, ``lam > 0``
    outside the free coordinates with the free block ``X_F^T diag(d) X_F`` SPD.
    (VO's data term grows with its iterations: at ``alpha=1e-10`` it can exceed
    ``lam`` by more than ``1 / eps``, a matrix SPD in exact arithmetic that no
    dense factorisation resolves.)"""
    lam, d, free = P.lam, P.d, P.free
    assert np.all(np.isfinite(lam)) and np.all(np.isfinite(d))
    assert np.all(lam >= 0) and np.all(d >= 0)
    try:
        np.linalg.cholesky(P.toarray())
        return
    except np.linalg.LinAlgError:
        assert np.all(lam[~free] > 0)
    if np.any(free):
        XF = P.X[:, free]
        XF = XF.toarray() if hasattr(XF, "toarray") else np.asarray(XF)
        np.linalg.cholesky(XF.T @ (d[:, None] * XF) + np.diag(lam[free]))


def _assert_finite_fit(est, X):
    for name, value in vars(est).items():
        if name.endswith("_") and not name.startswith("_"):
            value = np.asarray(value)
            if value.dtype.kind in "fc":
                assert np.all(np.isfinite(value)), f"{name} is not finite"
                assert value.dtype == np.float64, f"{name} is {value.dtype}"
    _assert_spd(est.precision_)
    if isinstance(est, VANLassoRegressor):
        mean, std = est.predict(X, return_std=True)
        assert np.all(np.isfinite(mean)) and np.all(np.isfinite(std)) and np.all(std >= 0)
    else:
        proba = est.predict_proba(X)
        assert np.all(np.isfinite(proba)) and np.all(proba >= 0)
        np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-12)
        assert np.all(np.isfinite(est.decision_function(X)))
        assert set(est.predict(X)) <= set(est.classes_)


@pytest.mark.parametrize("problem", list(PROBLEMS))
@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_hard_problems_give_finite_models(name, problem):
    est = ESTIMATORS[name]()
    X, y_class, y_reg = PROBLEMS[problem]
    y = y_reg if isinstance(est, VANLassoRegressor) else y_class
    with warnings.catch_warnings():
        # Non-convergence within max_iter may be announced; that is not a failure here.
        warnings.simplefilter("ignore", ConvergenceWarning)
        est.fit(X, y)
    _assert_finite_fit(est, X)


def test_no_penalty_on_separable_classes_warns_and_stays_finite():
    X = _normal(100, 3)
    y = (X[:, 0] > 0).astype(int)
    for kw in ({}, {"covariance": "diag"}, {"objective": "vi"}):
        with pytest.warns(ConvergenceWarning, match="C=inf"):
            est = VANLogisticRegression(C=np.inf, **kw).fit(X, y)
        _assert_finite_fit(est, X)
    with pytest.raises(ValueError, match="finite C"):
        VANLogisticRegression(C=np.inf).partial_fit(X, y, classes=[0, 1])


def test_no_penalty_matches_sklearn_when_the_optimum_is_finite():
    from sklearn.linear_model import LogisticRegression

    X = _normal(300, 3)
    y = _labels(X)
    van = VANLogisticRegression(C=np.inf).fit(X, y)
    ref = LogisticRegression(C=np.inf, tol=1e-10).fit(X, y)
    # The default tol's contract: within 1e-4 of the largest coefficient.
    np.testing.assert_allclose(van.coef_, ref.coef_, rtol=0, atol=1e-4 * np.abs(ref.coef_).max())


@pytest.mark.parametrize("objective", ["vo", "vi"])
def test_a_negligible_column_changes_nothing(objective):
    """A column of 1e-300s is numerically zero: the fit equals the fit with zeros
    there (it once got a column scale of 2^-160, which multiplied its expected L1
    penalty by 2^160 and, under VI, froze every other coefficient)."""
    X, _, y = PROBLEMS["a column near 1e-300"]
    zero = X.copy()
    zero[:, -1] = 0.0
    tiny = VANLassoRegressor(objective=objective).fit(X, y)
    ref = VANLassoRegressor(objective=objective).fit(zero, y)
    np.testing.assert_allclose(tiny.coef_, ref.coef_, rtol=1e-8, atol=1e-12)


def test_least_squares_without_a_unique_solution_stays_finite():
    """alpha=0 with more features than samples: infinitely many minimisers."""
    X = _normal(20, 50)
    y = _targets(X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = VANLassoRegressor(alpha=0.0).fit(X, y)
    _assert_finite_fit(est, X)
    np.testing.assert_allclose(est.predict(X), y, atol=1e-6 * np.abs(y).max())


def test_single_sample_regression_is_finite():
    X = _normal(1, 3)
    est = VANLassoRegressor(alpha=0.1).fit(X, [2.0])
    _assert_finite_fit(est, X)
    assert est.predict(X)[0] == pytest.approx(2.0)


def _logistic_objective(X, y, est):
    z = X @ est.coef_[0] + est.intercept_[0]
    return float(np.sum(np.logaddexp(0.0, -(2 * y - 1) * z)) + 0.5 * est.coef_[0] @ est.coef_[0])


def _lasso_objective(X, y, est):
    r = y - X @ est.coef_ - est.intercept_
    return float(0.5 / len(y) * r @ r + np.abs(est.coef_).sum())


@pytest.mark.parametrize("problem", list(PROBLEMS))
def test_hard_problems_are_solved_or_announced(problem):
    """No wrong silent result: on every stress problem VAN's objective is at most
    scikit-learn's (newton-cholesky, Lasso at tol=1e-12), or VAN warned."""
    from sklearn.linear_model import Lasso, LogisticRegression

    X, y_class, y_reg = PROBLEMS[problem]
    X64, y_reg = np.asarray(X, dtype=np.float64), np.asarray(y_reg, dtype=np.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        references = [
            (VANLogisticRegression(), y_class, _logistic_objective,
             LogisticRegression(solver="newton-cholesky", tol=1e-12, max_iter=1000)),
            (VANLassoRegressor(), y_reg, _lasso_objective, Lasso(tol=1e-12, max_iter=100_000)),
        ]
    for van, y, objective, ref in references:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            van.fit(X, y)
            ref.fit(X64, y)
        warned = any(issubclass(w.category, ConvergenceWarning) and "VAN" in str(w.message)
                     or "support read off q" in str(w.message) for w in caught)
        f_van, f_ref = objective(X64, y, van), objective(X64, y, ref)
        # Rounding allowance relative to the objective's own size (at zero coefficients).
        size = max(abs(f_ref), len(y) * np.log(2.0), 0.5 * float(np.mean(y**2)))
        assert warned or f_van <= f_ref + 1e-9 * size, (type(van).__name__, f_van, f_ref)
