"""Bad input battery: every public estimator and ``skvan.minimize`` reject bad
input with a scikit-learn-style exception whose message names the problem, and
never modify the user's arrays."""

import re

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError

from skvan import (
    ActiveVANClassifier,
    VANLassoRegressor,
    VANLogisticRegression,
    minimize,
)

CLASSIFIERS = [
    lambda: VANLogisticRegression(),
    lambda: VANLogisticRegression(covariance="diag", max_iter=20),
    lambda: ActiveVANClassifier(random_state=0),
]
REGRESSORS = [lambda: VANLassoRegressor(), lambda: VANLassoRegressor(batch_size=8, random_state=0)]
ESTIMATORS = CLASSIFIERS + REGRESSORS
IDS = ["logistic", "logistic-diag", "active", "lasso", "lasso-svan"]


def _data(estimator, n=40, p=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    if isinstance(estimator, VANLassoRegressor):
        y = X @ np.arange(1.0, p + 1) + 0.1 * rng.standard_normal(n)
    else:
        y = (X[:, 0] + 0.5 * rng.standard_normal(n) > 0).astype(int)
    return X, y


def _with(X, index, value):
    X = np.array(X, dtype=np.float64)
    X[index] = value
    return X


# -- non-finite and badly shaped data ---------------------------------------------
BAD_DATA = {
    "nan in X": (lambda X, y, w: (_with(X, (0, 0), np.nan), y, None), "NaN"),
    "inf in X": (lambda X, y, w: (_with(X, (1, 1), np.inf), y, None), "infinity"),
    "-inf in X": (lambda X, y, w: (_with(X, (1, 1), -np.inf), y, None), "infinity"),
    "nan in y": (lambda X, y, w: (X, _with(y, 0, np.nan), None), "NaN"),
    "inf in y": (lambda X, y, w: (X, _with(y, 0, np.inf), None), "infinity|Unknown label"),
    "nan in sample_weight": (lambda X, y, w: (X, y, _with(w, 0, np.nan)), "NaN"),
    "inf in sample_weight": (lambda X, y, w: (X, y, _with(w, 0, np.inf)), "infinity"),
    "negative sample_weight": (lambda X, y, w: (X, y, _with(w, 0, -1.0)), "[Nn]egative"),
    "1-D X": (lambda X, y, w: (X[:, 0], y, None), "Expected 2D array"),
    "3-D X": (lambda X, y, w: (X[:, :, None], y, None), "3|dim"),
    "2-D y with two columns": (lambda X, y, w: (X, np.c_[y, y], None), "1d|shape|column"),
    "X and y lengths differ": (lambda X, y, w: (X, y[:-1], None), "inconsistent numbers of samples"),
    "sample_weight length differs": (lambda X, y, w: (X, y, w[:-1]), "sample_weight"),
    "sample_weight 2-D": (lambda X, y, w: (X, y, np.c_[w, w]), "sample_weight|1D|dim"),
    "empty X": (lambda X, y, w: (X[:0], y[:0], None), "0 sample"),
    "no features": (lambda X, y, w: (X[:, :0], y, None), "0 feature"),
    "string features": (lambda X, y, w: (X.astype(str).astype(object) + "a", y, None),
                        "convert|could not|string"),
    "object features with None": (lambda X, y, w: (_obj_with_none(X), y, None), "NaN|float|None"),
    "complex X": (lambda X, y, w: (X + 1j, y, None), "[Cc]omplex"),
    "all sample weights zero": (lambda X, y, w: (X, y, np.zeros_like(w)), "sum|zero|positive"),
    # Finite, but their squares overflow float64 (the solvers sum them): at 1e300
    # fits once raised from inside numpy or returned NaN coefficients.
    "entries of 1e300": (lambda X, y, w: (X * 1e300, y, None), "Rescale the features"),
    "one entry of 1e250": (lambda X, y, w: (_with(X, (2, 1), 1e250), y, None), "overflow"),
}


def _obj_with_none(X):
    X = X.astype(object)
    X[0, 0] = None
    return X


@pytest.mark.parametrize("case", list(BAD_DATA), ids=list(BAD_DATA))
@pytest.mark.parametrize("make", ESTIMATORS, ids=IDS)
def test_bad_data_is_rejected_with_a_named_problem(make, case):
    est = make()
    X, y = _data(est)
    w = np.ones(len(y))
    transform, pattern = BAD_DATA[case]
    Xb, yb, wb = transform(X, y, w)
    with pytest.raises((ValueError, TypeError), match=pattern):
        est.fit(Xb, yb, sample_weight=wb)


@pytest.mark.parametrize("make", ESTIMATORS, ids=IDS)
def test_predicting_on_rows_that_overflow_is_rejected(make):
    """A model fitted on unit-scale data, asked about rows of 1e300: the predictors'
    spread under q overflows. A named ValueError, not a traceback from numpy or
    NaN probabilities; 1e150 still predicts."""
    est = make()
    X, y = _data(est)
    est.fit(X, y)
    predict = est.predict_proba if hasattr(est, "predict_proba") else (
        lambda Z: est.predict(Z, return_std=True))
    assert np.all(np.isfinite(predict(X * 1e150)))
    with pytest.raises(ValueError, match="overflow float64"):
        predict(X * 1e300)


@pytest.mark.parametrize("make", CLASSIFIERS, ids=IDS[:3])
def test_a_single_class_is_rejected(make):
    est = make()
    X, _ = _data(est)
    with pytest.raises(ValueError, match="class"):
        est.fit(X, np.zeros(len(X), dtype=int))


@pytest.mark.parametrize("make", CLASSIFIERS, ids=IDS[:3])
def test_continuous_labels_are_rejected(make):
    est = make()
    X, _ = _data(est)
    with pytest.raises(ValueError, match="continuous|Unknown label type"):
        est.fit(X, np.linspace(0, 1, len(X)))


@pytest.mark.parametrize("make", CLASSIFIERS, ids=IDS[:3])
@pytest.mark.parametrize(
    "labels",
    [np.array(["no", "yes"]), np.array([-1.0, 2.0]), np.array([False, True]), np.array(["a", "b", "c"]),
     np.array([3, 7, 11])],
    ids=["strings", "floats", "booleans", "three-strings", "ints"],
)
def test_labels_round_trip_in_classes_(make, labels):
    est = make()
    X, y = _data(est, n=60)
    if len(labels) == 3:
        y = np.digitize(X[:, 0], [-0.4, 0.4])
    y_labels = labels[y]
    est.fit(X, y_labels)
    np.testing.assert_array_equal(est.classes_, np.unique(labels))
    pred = est.predict(X)
    assert pred.dtype == y_labels.dtype
    assert set(pred) <= set(labels)
    assert np.mean(pred == y_labels) > 0.7


# -- parameters ----------------------------------------------------------------------
COMMON_BAD_PARAMS = [
    ("beta", 0.0), ("beta", -1.0), ("beta", "1"), ("beta_growth", 0.5), ("beta_growth", "fast"),
    ("covariance", "dense"), ("hessian", "bfgs"), ("expectation", "magic"), ("n_mc_samples", 0),
    ("n_mc_samples", 2.5), ("objective", "map"), ("batch_size", 0), ("batch_size", 1.5),
    ("max_iter", 0), ("max_iter", 10.0), ("tol", -1e-3), ("tol", "small"), ("fit_intercept", "yes"),
    ("warm_start", 2), ("random_state", "seed"), ("verbose", -1),
]
SPECIFIC_BAD_PARAMS = {
    "logistic": [("C", 0.0), ("C", -1.0), ("C", "1"), ("C", None)],
    "lasso": [("alpha", -0.1), ("alpha", "1"), ("alpha", None)],
    "active": [("query_strategy", "nope"), ("max_labels", 0), ("batch_size", None),
               ("uncertainty_threshold", "high"), ("C", 0.0)],
}


def _param_cases():
    for name, make in [("logistic", VANLogisticRegression), ("lasso", VANLassoRegressor),
                       ("active", lambda **kw: ActiveVANClassifier(random_state=0, **kw))]:
        params = make().get_params()
        for param, value in COMMON_BAD_PARAMS + SPECIFIC_BAD_PARAMS[name]:
            if param in params:
                yield pytest.param(make, param, value, id=f"{name}-{param}={value!r}")


@pytest.mark.parametrize("make, param, value", list(_param_cases()))
def test_bad_parameters_name_the_parameter(make, param, value):
    est = make()
    est.set_params(**{param: value})
    X, y = _data(est)
    with pytest.raises((ValueError, TypeError), match=re.escape(param)):
        est.fit(X, y)


@pytest.mark.parametrize("make", [VANLogisticRegression, VANLassoRegressor], ids=["logistic", "lasso"])
def test_vi_beta_above_one_is_rejected(make):
    est = make(objective="vi", beta=1.5)
    X, y = _data(est)
    with pytest.raises(ValueError, match="beta"):
        est.fit(X, y)


# -- partial_fit ---------------------------------------------------------------------
def test_partial_fit_rejects_new_classes_and_changed_features():
    X, y = _data(VANLogisticRegression())
    clf = VANLogisticRegression()
    with pytest.raises(ValueError, match="classes must be passed"):
        clf.partial_fit(X, y)
    clf.partial_fit(X, y, classes=[0, 1])
    with pytest.raises(ValueError, match=r"labels \[2\]"):
        clf.partial_fit(X, np.full(len(y), 2))
    with pytest.raises(ValueError, match="classes"):
        clf.partial_fit(X, y, classes=[0, 1, 2])
    with pytest.raises(ValueError, match="features"):
        clf.partial_fit(X[:, :2], y)


@pytest.mark.parametrize("make", [VANLassoRegressor, lambda: ActiveVANClassifier(random_state=0)],
                         ids=["lasso", "active-teach"])
def test_streaming_rejects_a_changed_number_of_features(make):
    est = make()
    X, y = _data(est)
    if isinstance(est, ActiveVANClassifier):
        est.fit(X, y)
        with pytest.raises(ValueError, match="features"):
            est.teach(X[:3, :2], y[:3])
        with pytest.raises(ValueError, match=r"labels \[5\]"):
            est.teach(X[:3], np.full(3, 5))
    else:
        est.partial_fit(X, y)
        with pytest.raises(ValueError, match="features"):
            est.partial_fit(X[:, :2], y)


# -- before fit ------------------------------------------------------------------------
@pytest.mark.parametrize(
    "make, methods",
    [
        (VANLogisticRegression, ["predict", "predict_proba", "predict_log_proba",
                                 "decision_function", "sample_proba"]),
        (VANLassoRegressor, ["predict"]),
        (lambda: ActiveVANClassifier(random_state=0), ["predict", "predict_proba", "query"]),
    ],
    ids=["logistic", "lasso", "active"],
)
def test_methods_before_fit_raise_not_fitted(make, methods):
    est = make()
    X, _ = _data(est)
    for method in methods:
        with pytest.raises(NotFittedError):
            getattr(est, method)(X)


@pytest.mark.parametrize("make", ESTIMATORS, ids=IDS)
def test_predict_with_the_wrong_number_of_features(make):
    est = make()
    X, y = _data(est)
    est.fit(X, y)
    with pytest.raises(ValueError, match="features"):
        est.predict(X[:, :2])
    with pytest.raises(ValueError, match="NaN"):
        est.predict(_with(X, (0, 0), np.nan))


# -- the user's arrays are never modified -----------------------------------------------
@pytest.mark.parametrize("make", ESTIMATORS, ids=IDS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_read_only_inputs_work_and_are_not_modified(make, dtype, fit_intercept):
    est = make().set_params(fit_intercept=fit_intercept)
    X, y = _data(est)
    X = np.asfortranarray(X.astype(dtype) * 3.0)  # not standardised: fit rescales it
    w = np.linspace(0.5, 2.0, len(y))
    copies = [X.copy(), y.copy(), w.copy()]
    for a in (X, y, w):
        a.setflags(write=False)
    est.fit(X, y, sample_weight=w)
    writeable = X.copy()
    est.fit(writeable, y, sample_weight=w)  # a writeable one is not modified either
    np.testing.assert_array_equal(writeable, copies[0])
    est.predict(X)
    if hasattr(est, "predict_proba"):
        est.predict_proba(X)
    if isinstance(est, VANLassoRegressor):
        est.predict(X, return_std=True)
        est.partial_fit(X, y, sample_weight=w)
    for a, c in zip((X, y, w), copies):
        np.testing.assert_array_equal(a, c)


# -- minimize ----------------------------------------------------------------------------
def _sphere(x):
    return float(np.sum(x**2))


MINIMIZE_BAD = {
    "x0 with NaN": (dict(x0=[0.0, np.nan]), ValueError, "x0"),
    "x0 with inf": (dict(x0=[np.inf, 0.0]), ValueError, "x0"),
    "x0 2-D": (dict(x0=np.zeros((2, 2))), ValueError, "x0"),
    "x0 empty": (dict(x0=np.zeros(0)), ValueError, "x0"),
    "x0 strings": (dict(x0=["a", "b"]), ValueError, "x0"),
    "x0 complex": (dict(x0=np.array([1j, 0])), (ValueError, TypeError), "x0|[Cc]omplex"),
    "fun not callable": (dict(fun=3.0), TypeError, "fun"),
    "jac not callable": (dict(jac="yes"), TypeError, "jac"),
    "hess without jac": (dict(hess=lambda x: np.eye(2)), ValueError, "jac"),
    "sigma0 zero": (dict(sigma0=0.0), ValueError, "sigma0"),
    "sigma0 nan": (dict(sigma0=np.nan), ValueError, "sigma0"),
    "beta negative": (dict(beta=-1.0), ValueError, "beta"),
    "beta_growth below 1": (dict(beta_growth=0.9), ValueError, "beta_growth"),
    "covariance": (dict(covariance="dense"), ValueError, "covariance"),
    "hessian": (dict(hessian="bfgs"), ValueError, "hessian"),
    "gauss_newton without gradients": (dict(hessian="gauss_newton"), ValueError, "jac"),
    "n_mc_samples 1": (dict(n_mc_samples=1), ValueError, "n_mc_samples"),
    "n_mc_samples float": (dict(n_mc_samples=4.5), ValueError, "n_mc_samples"),
    "max_iter 0": (dict(max_iter=0), ValueError, "max_iter"),
    "tol negative": (dict(tol=-1.0), ValueError, "tol"),
    "tol nan": (dict(tol=np.nan), ValueError, "tol"),
    "fun returns a vector": (dict(fun=lambda x: x), ValueError, "fun.*scalar"),
    "fun returns nan with jac": (dict(fun=lambda x: np.nan, jac=lambda x: x), ValueError,
                                 "fun.*non-finite"),
    "fun returns a string": (dict(fun=lambda x: "a"), (ValueError, TypeError), "fun"),
    "jac wrong shape": (dict(jac=lambda x: np.zeros(3)), ValueError, "jac.*shape"),
    "hess wrong shape": (dict(jac=lambda x: 2 * x, hess=lambda x: np.eye(3)), ValueError,
                         "hess.*shape"),
    "jac=True without a pair": (dict(jac=True), (ValueError, TypeError), "jac=True|pair"),
    "vectorized fun wrong length": (dict(fun=lambda X: np.zeros(1), vectorized=True), ValueError,
                                    "fun.*shape"),
}


@pytest.mark.parametrize("case", list(MINIMIZE_BAD), ids=list(MINIMIZE_BAD))
def test_minimize_rejects_bad_input(case):
    kwargs, error, pattern = MINIMIZE_BAD[case]
    args = dict(fun=_sphere, x0=np.zeros(2), max_iter=3, random_state=0)
    args.update(kwargs)
    fun, x0 = args.pop("fun"), args.pop("x0")
    with pytest.raises(error, match=pattern):
        minimize(fun, x0, **args)


def test_minimize_does_not_modify_x0():
    x0 = np.array([1.0, -2.0])
    x0.setflags(write=False)
    res = minimize(_sphere, x0, max_iter=5, random_state=0)
    np.testing.assert_array_equal(x0, [1.0, -2.0])
    assert res.x is not x0
