"""Finite-difference checks of every objective's gradient and Hessian."""

import numpy as np
import pytest
from scipy.optimize import approx_fprime, check_grad

from skvan.objectives import L2Penalty, LinearModelObjective, LogisticLoss, SquaredLoss


def _objective(loss, rng, n=40, p=5, penalty=True, weights=True):
    X = rng.randn(n, p)
    X[:, -1] = 1.0
    if isinstance(loss, LogisticLoss):
        y = np.where(rng.rand(n) < 0.5, -1.0, 1.0)
    else:
        y = rng.randn(n)
    w = rng.uniform(0.5, 2.0, n) if weights else None
    pen = L2Penalty(np.r_[np.full(p - 1, 0.7), 0.0]) if penalty else None
    return LinearModelObjective(X, y, loss, w, pen, multiplier=1.3)


@pytest.mark.parametrize("loss", [LogisticLoss(), SquaredLoss()], ids=["logistic", "squared"])
@pytest.mark.parametrize("penalty", [True, False])
def test_gradient_matches_finite_differences(loss, penalty, rng):
    obj = _objective(loss, rng, penalty=penalty)
    for _ in range(3):
        theta = rng.randn(obj.n_params)
        err = check_grad(obj.value, obj.gradient, theta)
        assert err < 1e-5 * max(1.0, np.linalg.norm(obj.gradient(theta)))


@pytest.mark.parametrize("loss", [LogisticLoss(), SquaredLoss()], ids=["logistic", "squared"])
def test_hessian_matches_finite_differences(loss, rng):
    obj = _objective(loss, rng)
    theta = rng.randn(obj.n_params)
    H = obj.hessian(theta)
    H_fd = np.array([approx_fprime(theta, lambda t, j=j: obj.gradient(t)[j], 1e-7) for j in range(obj.n_params)])
    np.testing.assert_allclose(H, H_fd, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(H, H.T)


@pytest.mark.parametrize("loss", [LogisticLoss(), SquaredLoss()], ids=["logistic", "squared"])
def test_loss_derivatives_match_finite_differences(loss, rng):
    y = np.where(rng.rand(50) < 0.5, -1.0, 1.0) if isinstance(loss, LogisticLoss) else rng.randn(50)
    a = 3 * rng.randn(50)
    h = 1e-6
    d1, d2 = loss.derivatives(y, a)
    np.testing.assert_allclose(d1, (loss.loss(y, a + h) - loss.loss(y, a - h)) / (2 * h), atol=1e-7)
    d1p, _ = loss.derivatives(y, a + h)
    d1m, _ = loss.derivatives(y, a - h)
    np.testing.assert_allclose(d2, (d1p - d1m) / (2 * h), atol=1e-7)


def test_logistic_loss_is_stable_for_huge_margins():
    loss = LogisticLoss()
    a = np.array([-1e4, 1e4])
    y = np.array([1.0, 1.0])
    assert np.all(np.isfinite(loss.loss(y, a)))
    d1, d2 = loss.derivatives(y, a)
    assert np.all(np.isfinite(d1)) and np.all(np.isfinite(d2))
    np.testing.assert_allclose(loss.loss(y, a), [1e4, 0.0], atol=1e-12)


def test_gauss_newton_is_sum_of_per_example_outer_products(rng):
    obj = _objective(LogisticLoss(), rng, penalty=False)
    theta = rng.randn(obj.n_params)
    G = np.zeros((obj.n_params, obj.n_params))
    for i in range(obj.n_samples):
        d1, _ = obj.loss.derivatives(obj.y[i], obj.X[i] @ theta)
        g = d1 * obj.X[i]
        G += obj.weights[i] * np.outer(g, g)
    np.testing.assert_allclose(obj.gauss_newton(theta), G, rtol=1e-10)
    assert np.linalg.eigvalsh(obj.gauss_newton(theta)).min() > -1e-10


def test_subsample_scales_data_term_to_full_data(rng):
    obj = _objective(SquaredLoss(), rng, n=40)
    theta = rng.randn(obj.n_params)
    halves = [obj.subsample(np.arange(0, 20)), obj.subsample(np.arange(20, 40))]
    # the average of the two half-batch gradients is the full gradient
    g = 0.5 * (halves[0].gradient(theta) + halves[1].gradient(theta))
    np.testing.assert_allclose(g, obj.gradient(theta), rtol=1e-12)


def test_l2_penalty_expectation_matches_monte_carlo(rng):
    pen = L2Penalty(np.array([0.5, 2.0, 0.0]))
    mean, var = np.array([1.0, -0.5, 3.0]), np.array([0.3, 0.1, 2.0])
    draws = mean + np.sqrt(var) * rng.randn(200_000, 3)
    value, grad, curv = pen.expectation(mean, var)
    mc = np.mean([pen.value(t) for t in draws[:20000]])
    assert abs(value - mc) < 0.02 * value
    np.testing.assert_allclose(grad, pen.strength * draws.mean(0), atol=0.01)
    np.testing.assert_allclose(curv, pen.strength)


def test_l1_penalty_expectation_matches_monte_carlo(rng):
    from skvan.objectives import L1Penalty

    pen = L1Penalty(np.array([1.0, 2.0, 0.5, 0.0]))
    mean, var = np.array([0.3, -1.0, 0.0, 2.0]), np.array([0.5, 0.1, 2.0, 1.0])
    draws = mean + np.sqrt(var) * rng.randn(400_000, 4)
    value, grad, curv = pen.expectation(mean, var)
    assert abs(value - (np.abs(draws) @ pen.strength).mean()) < 5e-3
    np.testing.assert_allclose(grad, pen.strength * np.sign(draws).mean(0), atol=5e-3)
    # Price's theorem: E[d^2 |t|] = 2 d E|t| / d var
    h = 1e-6
    for j in range(3):
        dv = np.zeros(4)
        dv[j] = h
        up = pen.expectation(mean, var + dv)[0]
        down = pen.expectation(mean, var - dv)[0]
        assert np.isclose(curv[j], 2 * (up - down) / (2 * h), rtol=1e-5)
        dm = np.zeros(4)
        dm[j] = h
        assert np.isclose(grad[j], (pen.expectation(mean + dm, var)[0] - pen.expectation(mean - dm, var)[0]) / (2 * h), rtol=1e-5)


def test_elastic_net_penalty_is_its_two_parts(rng):
    """ElasticNetPenalty: scikit-learn's elastic net strengths, its value, gradient,
    curvature and expectations the sums of its L1 and L2 parts', the expected
    gradient and curvature the derivatives of the expected value (Price's
    theorem, central differences), and every transform applied to both parts."""
    from skvan.objectives import ElasticNetPenalty, L1Penalty

    pen = ElasticNetPenalty.from_alpha(0.3, 0.25, n_params=4, total_weight=8.0, n_free=1)
    np.testing.assert_allclose(pen.l1.strength, [0.6, 0.6, 0.6, 0.0], rtol=1e-15)  # n alpha l1_ratio
    np.testing.assert_allclose(pen.l2.strength, [1.8, 1.8, 1.8, 0.0], rtol=1e-15)
    l1, l2 = L1Penalty(pen.l1.strength), L2Penalty(pen.l2.strength)
    theta, mean = np.array([0.5, -2.0, 0.0, 7.0]), np.array([0.3, -1.0, 0.0, 2.0])
    var = np.array([0.5, 0.1, 2.0, 1.0])
    assert np.isclose(pen.value(theta), 0.6 * 2.5 + 0.9 * 4.25, rtol=1e-15)
    np.testing.assert_allclose(pen.gradient(theta), l1.gradient(theta) + l2.gradient(theta))
    np.testing.assert_allclose(pen.hessian_diag(theta), pen.l2.strength)
    value, grad, curv = pen.expectation(mean, var)
    parts = [part.expectation(mean, var) for part in (l1, l2)]
    assert np.isclose(value, parts[0][0] + parts[1][0], rtol=1e-15)
    np.testing.assert_allclose(grad, parts[0][1] + parts[1][1], rtol=1e-15)
    np.testing.assert_allclose(curv, parts[0][2] + parts[1][2], rtol=1e-15)
    h = 1e-6
    for j in range(3):
        step = np.eye(4)[j] * h
        dm = (pen.expectation(mean + step, var)[0] - pen.expectation(mean - step, var)[0]) / (2 * h)
        dv = (pen.expectation(mean, var + step)[0] - pen.expectation(mean, var - step)[0]) / (2 * h)
        assert np.isclose(grad[j], dm, rtol=1e-6) and np.isclose(curv[j], 2 * dv, rtol=1e-6)
    scale = np.array([2.0, 0.5, 4.0, 1.0])
    moved = pen.reparametrised(scale)
    assert np.isclose(moved.value(scale * theta), pen.value(theta), rtol=1e-14)
    assert np.isclose(pen.multiplied(3.0).value(theta), 3.0 * pen.value(theta), rtol=1e-14)
    np.testing.assert_allclose(pen.restricted([0, 3]).l2.strength, [1.8, 0.0], rtol=1e-15)


def test_l1_majorizer_curvature_bounds_the_expectation(rng):
    """The gauss_newton curvature is that of a quadratic upper bound of E|theta|
    touching it at the current mean: E|t| at mean + d stays below the bound."""
    from skvan.objectives import L1Penalty

    pen = L1Penalty(np.ones(1))
    for m, v in [(0.0, 1.0), (2.0, 0.01), (-0.3, 0.5)]:
        c = np.sqrt(m**2 + v)
        curv = pen.expectation(np.array([m]), np.array([v]), "gauss_newton")[2][0]
        assert np.isclose(curv, 1 / c)
        for d in np.linspace(-3, 3, 13):
            bound = ((m + d) ** 2 + v + c**2) / (2 * c)
            assert pen.expectation(np.array([m + d]), np.array([v]))[0] <= bound + 1e-12


def test_quadratic_objective_equals_least_squares(rng):
    from skvan.objectives import L1Penalty, QuadraticObjective

    X, y, w = rng.randn(50, 4), rng.randn(50), rng.uniform(0.5, 2, 50)
    pen = L1Penalty(np.array([1.0, 0.0, 2.0, 0.5]))
    quad = QuadraticObjective.from_data(X, y, w, pen)
    lin = LinearModelObjective(X, y, SquaredLoss(), w, pen)
    for _ in range(3):
        theta = rng.randn(4)
        assert np.isclose(quad.value(theta), lin.value(theta))
        np.testing.assert_allclose(quad.gradient(theta), lin.gradient(theta))
        np.testing.assert_allclose(quad.hessian(theta), lin.hessian(theta))
    half = quad.multiplied(0.5)
    assert np.isclose(half.value(theta), 0.5 * quad.value(theta))


def test_hessian_diagonal_is_the_hessians_diagonal():
    """hessian_diagonal, formed without the matrix for linear models (binary and
    multinomial, penalty and gauge included), is the Hessian's diagonal."""
    from skvan.objectives import FunctionObjective, MultinomialObjective

    rng = np.random.RandomState(0)
    X = np.c_[rng.randn(50, 4), np.ones(50)]
    y = np.where(rng.rand(50) < 0.5, -1.0, 1.0)
    Y = np.eye(3)[rng.randint(0, 3, 50)]
    objectives = [
        LinearModelObjective(X, y, LogisticLoss(), penalty=L2Penalty(np.r_[np.ones(4), 0.0])),
        MultinomialObjective(X, Y, penalty=L2Penalty(np.full(15, 0.5))),
        FunctionObjective(lambda t: float(np.sum(t**4)), 5, jac=lambda t: 4 * t**3,
                          hess=lambda t: np.diag(12 * t**2)),
    ]
    for f in objectives:
        theta = rng.randn(f.n_params)
        H = f.hessian(theta)
        np.testing.assert_allclose(f.hessian_diagonal(theta), np.diag(H), rtol=1e-13,
                                   atol=1e-15 * np.abs(H).max())


@pytest.mark.parametrize("diagonal", [False, True], ids=["hessian", "diagonal"])
def test_value_and_derivatives_are_the_three_methods(diagonal):
    """value_and_derivatives, one pass over the rows for the linear models (binary,
    squared, multinomial, on a design longer than one row block), is value,
    gradient and hessian (or its diagonal) up to the order of the sums."""
    from skvan.objectives import FunctionObjective, MultinomialObjective

    rng = np.random.RandomState(0)
    n = 5000
    X = np.c_[rng.randn(n, 4), np.ones(n)]
    y = np.where(rng.rand(n) < 0.5, -1.0, 1.0)
    Y = np.eye(3)[rng.randint(0, 3, n)]
    ridge = L2Penalty(np.r_[np.ones(4), 0.0])
    objectives = [
        LinearModelObjective(X, y, LogisticLoss(), rng.uniform(0.5, 2.0, n), penalty=ridge),
        LinearModelObjective(X, rng.randn(n), SquaredLoss(), penalty=ridge),
        MultinomialObjective(X, Y, penalty=L2Penalty(np.full(15, 0.5))),
        FunctionObjective(lambda t: float(np.sum(t**4)), 5, jac=lambda t: 4 * t**3,
                          hess=lambda t: np.diag(12 * t**2)),
    ]
    for f in objectives:
        theta = rng.randn(f.n_params)
        value, gradient, curvature = f.value_and_derivatives(theta, diagonal)
        H = f.hessian(theta)
        g = f.gradient(theta)
        assert isinstance(value, float)
        np.testing.assert_allclose(value, f.value(theta), rtol=1e-13)
        np.testing.assert_allclose(gradient, g, rtol=1e-13, atol=1e-14 * np.abs(g).max())
        np.testing.assert_allclose(curvature, np.diag(H) if diagonal else H, rtol=1e-13,
                                   atol=1e-14 * np.abs(H).max())
