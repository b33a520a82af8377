"""skvan.minimize under bounds, and the first-order test that guards ``success``.

Every bounded problem of ``skvan._functions.bounded_problems`` (minimum inside the
box, on a face, on several faces, in a corner, within the bounds' margins; 2 to
20 dimensions) from 10 seeds with each oracle: the result is within 1e-6 of
L-BFGS-B's value (relative to ``max(1, |f*|)``), or reports ``success=False``.
Reached: every run within 9e-10, and ``success`` on all of them
(``python benchmarks/bench_minimize.py --bounds``).
"""

import warnings

import numpy as np
import pytest
from scipy.optimize import minimize as scipy_minimize
from scipy.optimize import rosen, rosen_der

from skvan import minimize
from skvan._functions import bounded_problems
from skvan.optimize import _first_order

PROBLEMS = bounded_problems()
ORACLES = ("values", "gradients", "hessians")


def _oracles(problem, oracle):
    f, grad, hess, bounds, x0 = problem
    return [{}, dict(jac=grad), dict(jac=grad, hess=hess)][ORACLES.index(oracle)]


def _lbfgsb(problem):
    f, grad, hess, bounds, x0 = problem
    return scipy_minimize(f, x0, jac=grad, bounds=bounds, method="L-BFGS-B",
                          options=dict(ftol=1e-16, gtol=1e-13, maxiter=10_000)).fun


def _box(bounds):
    lower = np.array([-np.inf if lo is None else lo for lo, _ in bounds], dtype=float)
    upper = np.array([np.inf if hi is None else hi for _, hi in bounds], dtype=float)
    return lower, upper


def _check_first_order(res, problem, f_start, tol=None, gtol=None):
    """``success`` only where the projected gradient at ``x`` (from the problem's
    exact gradient) is within the documented tolerance: ``optimality`` as
    reported (up to the finite differences' error from values) and the bound."""
    f, grad, hess, bounds, x0 = problem
    lower, upper = _box(bounds)
    kkt = _first_order.optimality(res.x, grad(res.x), lower, upper)
    limit = _first_order.tolerance(gtol, tol, res.fun, f_start, res.x, 1.0)
    assert np.all(res.x >= lower) and np.all(res.x <= upper)
    if res.success:
        assert kkt <= limit * 1.001 + 1e-7, (kkt, limit)
        assert res.optimality <= limit
    return kkt, limit


@pytest.mark.slow
@pytest.mark.parametrize("oracle", ORACLES)
@pytest.mark.parametrize("name", list(PROBLEMS))
def test_bounded_problems_reach_lbfgsbs_value_or_say_they_did_not(name, oracle):
    problem = PROBLEMS[name]
    f, grad, hess, bounds, x0 = problem
    best = _lbfgsb(problem)
    for seed in range(10):
        res = minimize(f, x0, bounds=bounds, random_state=seed, **_oracles(problem, oracle))
        gap = (res.fun - best) / max(1.0, abs(best))
        assert res.success or res.status != 0
        if res.success:
            assert gap <= 1e-6, (seed, gap, res.x)
        _check_first_order(res, problem, f(x0))


def test_the_issue_example_is_right():
    """Bounded Rosenbrock from the issue's start and seed: the minimum (1, ..., 1)
    lies inside the box, and is found (reached: f = 1e-11 or below)."""
    res = minimize(rosen, [1.3, 0.7, 0.8, 1.9, 1.2], bounds=[(0, 2)] * 5, random_state=0)
    assert res.success and res.fun < 1e-8
    np.testing.assert_allclose(res.x, np.ones(5), atol=1e-4)
    res = minimize(rosen, [1.3, 0.7, 0.8, 1.9, 1.2], jac=rosen_der, bounds=[(0, 2)] * 5,
                   random_state=1)
    assert res.success and res.fun < 1e-8


@pytest.mark.parametrize("oracle", ORACLES)
def test_a_minimum_in_a_corner_is_exact(oracle):
    """Both coordinates bound: the map's quadratic pieces make the corner a smooth
    minimum over u, and x reaches it to round-off (reached: 1e-12 and below)."""
    problem = PROBLEMS["quadratic-2 corner"]
    f, grad, hess, bounds, x0 = problem
    res = minimize(f, x0, bounds=bounds, random_state=0, **_oracles(problem, oracle))
    assert res.success
    np.testing.assert_allclose(res.x, [1.0, 1.0], atol=1e-9)
    assert res.optimality <= 1e-9  # the gradient points out of the box at the corner


def test_success_is_never_reported_away_from_a_first_order_point():
    """Runs stopped early on purpose (a loose tol, a narrow q, a fast schedule) on
    bounded and unbounded problems: every ``success`` is backed by the projected
    gradient at x, and a loose stop that left a slope is refused (status 6)."""
    refused = 0
    cases = [(PROBLEMS["rosenbrock-5 inside"], dict(tol=0.3)),
             (PROBLEMS["rosenbrock-2 face"], dict(tol=0.1, sigma0=0.05)),
             (PROBLEMS["beale-2 face"], dict(tol=0.05, beta_growth=3.0)),
             ((rosen, rosen_der, None, [(None, None)] * 3, np.array([-1.2, 1.0, -1.2])),
              dict(tol=0.2))]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for problem, kw in cases:
            f, grad, hess, bounds, x0 = problem
            for oracle in ORACLES[: 2 if hess is None else 3]:
                for gtol in (None, 1e-3):
                    res = minimize(f, x0, bounds=bounds, random_state=0, options={"gtol": gtol},
                                   **kw, **_oracles(problem, oracle))
                    kkt, limit = _check_first_order(res, problem, f(x0), kw["tol"], gtol)
                    if res.status == 6:
                        refused += 1
                        assert not res.success and kkt > 0.9 * limit
                        assert "first-order" in res.message and "gtol" in res.message
    assert refused >= 3


def test_gtol_is_scipys_absolute_tolerance():
    """``options={"gtol": g}``: success needs the projected gradient's max norm at
    x below g (scipy's meaning); an unreachable g is refused with status 6."""
    f, grad, hess, bounds, x0 = PROBLEMS["beale-2 face"]
    loose = minimize(f, x0, jac=grad, bounds=bounds, random_state=0, options={"gtol": 1e-2})
    assert loose.success and loose.optimality <= 1e-2
    tight = minimize(f, x0, jac=grad, bounds=bounds, random_state=0, options={"gtol": 1e-300})
    assert tight.status == 6 and not tight.success
    np.testing.assert_array_equal(tight.x, loose.x)  # the same run, judged otherwise


def test_every_evaluation_stays_in_the_box_and_on_it_is_a_fine_start():
    lower, upper = np.array([0.0, -1.0]), np.array([1.0, 1.0])
    seen = []

    def f(x):
        seen.append(np.array(x, copy=True))
        return float((x[0] - 3.0) ** 2 + (x[1] + 0.5) ** 2)

    res = minimize(f, np.array([0.0, 1.0]), bounds=list(zip(lower, upper)), random_state=0)
    seen = np.array(seen)
    assert np.all(seen >= lower) and np.all(seen <= upper)
    assert res.success
    np.testing.assert_allclose(res.x, [1.0, -0.5], atol=1e-6)


def test_finite_difference_gradients_stay_in_the_box():
    """scipy's jac="2-point"/"3-point" (and "cs"): differences one-sided at the
    bounds, every point inside, the minimum on a face found."""
    seen = []

    def f(x):
        seen.append(np.real(x).copy())
        return np.sum((x - np.array([2.0, 0.3])) ** 2 * np.array([1.0, 4.0]))

    for jac in ("2-point", "3-point", "cs"):
        seen.clear()
        res = minimize(f, [0.5, 0.5], jac=jac, bounds=[(0, 1), (0, 1)], random_state=0)
        assert res.success, jac
        np.testing.assert_allclose(res.x, [1.0, 0.3], atol=1e-6)
        points = np.real(np.array(seen))
        assert np.all(points >= 0.0) and np.all(points <= 1.0)
        assert res.nfev >= len(seen)  # the differences' evaluations are counted


def test_finite_differences_match_the_gradient():
    g = _first_order.fd_gradient(lambda P: np.array([rosen(p) for p in P]),
                                 np.array([0.3, 0.9, 1.2]), rosen([0.3, 0.9, 1.2]))
    np.testing.assert_allclose(g, rosen_der(np.array([0.3, 0.9, 1.2])), rtol=1e-7)
    # at a lower bound: a forward difference (first order in h, about 1e-8 * f'')
    g = _first_order.fd_gradient(lambda P: np.array([rosen(p) for p in P]),
                                 np.array([0.0, 0.9, 1.2]), rosen([0.0, 0.9, 1.2]), "3-point",
                                 np.zeros(3), np.full(3, 2.0))
    np.testing.assert_allclose(g, rosen_der(np.array([0.0, 0.9, 1.2])), rtol=1e-4)
