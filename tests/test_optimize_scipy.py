"""skvan.minimize with scipy's calling convention: positional jac/hess, args,
hessp, bounds, callbacks, options, counts and the convergence warning."""

import warnings

import numpy as np
import pytest
from scipy.optimize import Bounds, rosen, rosen_der, rosen_hess, rosen_hess_prod
from sklearn.exceptions import ConvergenceWarning

from skvan import minimize
from skvan.objectives._bounds import BoxTransform

A = np.array([[3.0, 1.0], [1.0, 2.0]])


def shifted(x, b):
    return float(0.5 * x @ A @ x - b @ x)


def shifted_grad(x, b):
    return A @ x - b


def shifted_hess(x, b):
    return A


B = np.array([1.0, -2.0])
FAST = dict(beta_growth=1.2, random_state=0)


def test_jac_and_hess_are_positional_in_scipys_order():
    keyword = minimize(shifted, np.zeros(2), args=(B,), jac=shifted_grad, hess=shifted_hess, **FAST)
    positional = minimize(shifted, np.zeros(2), (B,), None, shifted_grad, shifted_hess, **FAST)
    np.testing.assert_array_equal(positional.x, keyword.x)
    np.testing.assert_allclose(keyword.x, np.linalg.solve(A, B), atol=1e-5)


def test_args_reach_every_callable_and_a_single_value_is_wrapped():
    calls = {"fun": 0, "jac": 0, "hessp": 0}

    def fun(x, b):
        calls["fun"] += 1
        return shifted(x, b)

    def jac(x, b):
        calls["jac"] += 1
        return shifted_grad(x, b)

    def hessp(x, p, b):
        calls["hessp"] += 1
        return A @ p

    res = minimize(fun, np.zeros(2), B, jac=jac, hessp=hessp, **FAST)
    assert all(calls.values()) and res.success
    np.testing.assert_allclose(res.x, np.linalg.solve(A, B), atol=1e-5)
    ref = minimize(lambda x: shifted(x, B), np.zeros(2), jac=lambda x: shifted_grad(x, B),
                   hess=lambda x: A, **FAST)
    np.testing.assert_allclose(res.x, ref.x, rtol=1e-12)
    assert calls["hessp"] == 2 * res.nhev  # n products per Hessian


def test_jac_true_with_args():
    res = minimize(lambda x, b: (shifted(x, b), shifted_grad(x, b)), np.zeros(2), args=(B,), jac=True,
                   **FAST)
    ref = minimize(shifted, np.zeros(2), args=(B,), jac=shifted_grad, **FAST)
    np.testing.assert_allclose(res.x, ref.x, rtol=1e-12)
    assert res.nfev == res.njev


def test_counts_mean_what_scipys_mean():
    zero = minimize(rosen, np.zeros(3), max_iter=5, random_state=0)
    second = minimize(rosen, np.zeros(3), jac=rosen_der, hess=rosen_hess, max_iter=5, random_state=0)
    assert zero.njev == 0 and zero.nhev == 0 and zero.nit == 5
    # every sampled point gets value, gradient and Hessian; the final mean value and
    # gradient (the first-order test); x0 its value
    assert second.nfev == second.njev + 1 == second.nhev + 2


@pytest.mark.parametrize("call, error, match", [
    (dict(args=rosen_der), TypeError, "Pass the gradient as jac"),
    (dict(method="BFGS"), ValueError, "scipy.optimize.minimize"),
    (dict(constraints=[{"type": "eq", "fun": np.sum}]), ValueError, "not general constraints"),
    (dict(options={"xtol": 1e-5}), ValueError, "Unknown option 'xtol'"),
    (dict(options={"gtol": -1.0}), ValueError, "'gtol' parameter"),
    (dict(jac="4-point"), ValueError, "'jac' parameter"),
    (dict(options={"maxiter": 0}), ValueError, "'max_iter' parameter"),
    (dict(bounds=[(0, 1)]), ValueError, "one \\(min, max\\) pair per coordinate"),
    (dict(bounds=[(1, 0), (0, 1)]), ValueError, "min < max"),
    (dict(bounds=[(1, 2), (1, 2)]), ValueError, "x0 must lie within the bounds"),
    (dict(hessp=rosen_hess_prod), ValueError, "hess requires jac"),
])
def test_scipy_style_misuse_gets_a_clear_error(call, error, match):
    with pytest.raises(error, match=match):
        minimize(rosen, np.zeros(2), **call)


def test_method_van_and_options_are_accepted():
    res = minimize(shifted, np.zeros(2), (B,), "VAN", shifted_grad,
                   options={"maxiter": 3, "disp": False, "beta_growth": 1.2, "random_state": 0})
    assert res.nit == 3


def test_the_legacy_callback_gets_xk():
    seen = []
    minimize(shifted, np.zeros(2), (B,), jac=shifted_grad, callback=lambda xk: seen.append(xk),
             max_iter=3, random_state=0)
    assert len(seen) == 3 and all(isinstance(x, np.ndarray) and x.shape == (2,) for x in seen)


def test_the_convergence_warning_points_at_the_caller():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = minimize(rosen, np.zeros(2), max_iter=3, random_state=0)
    (warning,) = [w for w in caught if issubclass(w.category, ConvergenceWarning)]
    assert warning.filename == __file__ and "max_iter=3" in str(warning.message)
    assert res.status == 1 and not res.success


def test_bounds_keep_every_evaluation_inside_the_box():
    lower, upper = np.array([0.5, -1.0]), np.array([2.0, -0.25])  # the optimum (0.8, -1.4) is outside
    points = []

    def fun(x):
        points.append(x.copy())
        return shifted(x, B)

    for bounds in ([(0.5, 2.0), (-1.0, -0.25)], Bounds(lower, upper)):
        points.clear()
        res = minimize(fun, np.array([1.0, -0.5]), jac=lambda x: shifted_grad(x, B), bounds=bounds,
                       beta_growth=1.2, max_iter=2000, random_state=0)
        points = np.array(points)
        assert np.all(points >= lower) and np.all(points <= upper)
        # the box's minimiser: x2 at its lower bound -1, x1 = (1 - x2) / 3 = 2/3 (inside)
        np.testing.assert_allclose(res.x, [2.0 / 3.0, -1.0], atol=1e-3)
        assert np.all(np.isfinite(res.covariance))
        points = []


@pytest.mark.parametrize("bounds", [None, [(0.0, 2.0)] * 4], ids=["free", "box"])
@pytest.mark.parametrize("oracle", ["values", "gradients", "hessians", "vectorized"])
def test_a_function_that_writes_into_its_argument_moves_nothing(oracle, bounds):
    """Each call gets its own copy of the point, as scipy's optimizers give: the
    callables below write into their argument after reading it, and the run is
    the same as with callables that do not."""
    def writes(func, shift):
        def wrapped(x):
            out = func(x)
            x += shift
            return out
        return wrapped

    def batch(X):
        return np.array([rosen(x) for x in X])

    if oracle == "vectorized":
        clean = {"fun": batch, "vectorized": True}
        dirty = {"fun": writes(batch, 1.0), "vectorized": True}
    else:
        n = ["values", "gradients", "hessians"].index(oracle)
        parts = [rosen, rosen_der, rosen_hess][:n + 1]
        clean = dict(zip(("fun", "jac", "hess"), parts))
        dirty = dict(zip(("fun", "jac", "hess"), (writes(g, 0.5 * k + 1.0)
                                                  for k, g in enumerate(parts))))
    runs = [minimize(x0=np.full(4, 0.5), bounds=bounds, random_state=0, **kw)
            for kw in (clean, dirty)]
    np.testing.assert_array_equal(runs[1].x, runs[0].x)
    assert runs[1].nit == runs[0].nit


@pytest.mark.parametrize("oracle", ["gradients", "hessians"])
def test_the_box_maps_each_point_once(oracle, monkeypatch):
    """Values, gradients and Hessians at one draw share its map and derivatives
    (:meth:`BoxTransform.at_point`): one fold per evaluated point."""
    folds = []
    fold = BoxTransform._fold
    monkeypatch.setattr(BoxTransform, "_fold", lambda self, u: folds.append(1) or fold(self, u))
    oracles = {"jac": rosen_der, "hess": rosen_hess if oracle == "hessians" else None}
    res = minimize(rosen, np.full(5, 0.5), bounds=[(0.0, 2.0)] * 5, random_state=0, **oracles)
    assert res.success and res.nfev > 100
    assert len(folds) <= res.nfev + 2


def test_one_sided_bounds_and_hessians():
    res = minimize(shifted, np.array([2.0, 0.0]), (B,), jac=shifted_grad, hess=shifted_hess,
                   bounds=[(1.0, None), (None, np.inf)], beta_growth=1.5, max_iter=2000, random_state=0)
    # with x1 >= 1 (the free optimum has 0.8) the minimiser is (1, (-2 - 1) / 2)
    np.testing.assert_allclose(res.x, [1.0, -1.5], atol=1e-3)


@pytest.mark.parametrize("lower, upper", [(0.5, 2.0), (0.5, np.inf), (-np.inf, 2.0), (-np.inf, np.inf)])
def test_box_transform_derivatives_by_finite_differences(lower, upper):
    """T, T' and T'' agree by central differences on every piece (interior,
    quadratic margin, mirror image, next period), away from the pieces' joints;
    T maps into the box, and inverse is T's inverse on the branch [start, end]."""
    box = BoxTransform(np.array([lower] * 7), np.array([upper] * 7))
    u = np.array([-4.3, -1.3, 0.2, 0.47, 1.1, 1.99, 2.1, 5.7])[:7]
    h = 1e-6
    x = box.forward(u)
    assert np.all(x >= lower) and np.all(x <= upper)
    d1, d2 = box.derivatives(u)
    fd1 = (box.forward(u + h) - box.forward(u - h)) / (2 * h)
    fd2 = (box.derivatives(u + h)[0] - box.derivatives(u - h)[0]) / (2 * h)
    np.testing.assert_allclose(d1, fd1, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(d2, fd2, rtol=1e-6, atol=1e-8)
    grid = np.linspace(max(lower, -5.0), min(upper, 5.0), 7)
    np.testing.assert_allclose(box.forward(box.inverse(grid)), grid, rtol=1e-12, atol=1e-12)
    branch = box.inverse(grid)
    np.testing.assert_allclose(box.inverse(box.forward(branch)), branch, rtol=1e-12, atol=1e-12)
    fun, jac, hess = box.wrap(rosen, rosen_der, rosen_hess, vectorized=False)
    g = jac(u)
    fd_g = np.array([(fun(u + h * e) - fun(u - h * e)) / (2 * h) for e in np.eye(7)])
    np.testing.assert_allclose(g, fd_g, rtol=1e-5, atol=1e-5)
    fd_H = np.array([(jac(u + h * e) - jac(u - h * e)) / (2 * h) for e in np.eye(7)])
    np.testing.assert_allclose(hess(u), fd_H, rtol=1e-5, atol=1e-4)


def test_the_box_map_is_the_identity_inside_and_pycmas_at_the_bounds():
    """The identity on the interior; at a bound ``l`` (margin ``a = min(h - l, 1 +
    |l|) / 20``: 0.05 at 0, 0.1 at 2) the quadratic piece l + (u - l + a)^2 / (4 a)
    with T' = 0 at u = l - a."""
    box = BoxTransform(np.array([0.0]), np.array([2.0]))
    a = 0.05
    np.testing.assert_array_equal(box.forward(np.array([0.06, 1.0, 1.89])), [0.06, 1.0, 1.89])
    u = np.array([-a, -0.02, a])
    np.testing.assert_allclose(box.forward(u), (u + a) ** 2 / (4 * a), rtol=1e-14, atol=1e-17)
    assert box.derivatives(np.array([-a]))[0][0] == 0.0


@pytest.mark.parametrize("jac", ["2-point", "3-point", "cs"])
def test_scipys_finite_difference_gradients(jac):
    """jac as scipy names its difference schemes: a first-order run whose
    gradients are differences of fun, their evaluations counted in nfev."""
    calls = [0]

    def fun(x):
        calls[0] += 1
        return 0.5 * x @ A @ x - B @ x  # complex-safe for "cs"

    res = minimize(fun, np.zeros(2), jac=jac, random_state=0)
    assert res.success and res.nfev == calls[0] and res.njev > 0
    np.testing.assert_allclose(res.x, np.linalg.solve(A, B), atol=1e-6)


def test_a_scalar_x0_is_a_one_dimensional_problem():
    res = minimize(lambda x: float((x[0] - 2.0) ** 2), 0.5)
    assert res.success and res.x.shape == (1,)
    np.testing.assert_allclose(res.x, [2.0], atol=1e-6)


def test_maxfev_ends_the_run_within_its_budget():
    res = minimize(rosen, np.zeros(4), jac=rosen_der, options={"maxfev": 200}, random_state=0)
    assert res.status == 1 and not res.success and "maxfev" in res.message
    # stopped after the iteration that crossed the budget (10 points each), plus
    # the evaluations at x0 and at x
    assert 200 <= res.nfev <= 200 + 10 + 2
    ref = minimize(rosen, np.zeros(4), jac=rosen_der, random_state=0)
    assert ref.nfev > 300  # the budget, not convergence, ended the run above
