"""The shared VAN solver and the Gaussian families."""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from skvan.expectations import ClosedForm, GaussHermiteQuadrature, MonteCarlo
from skvan.objectives import (
    L2Penalty,
    LinearModelObjective,
    LogisticLoss,
    Objective,
    SquaredLoss,
)
from skvan.van import (
    BETA_MAX,
    VI,
    VO,
    DiagonalGaussian,
    FullGaussian,
    FullStep,
    GeometricSchedule,
    MeanContraction,
    Minibatches,
    VANSolver,
    warn_unconverged,
)


def _linear_gaussian(rng, n=200, p=5, noise=0.5, prior=2.0):
    X = rng.randn(n, p)
    y = X @ rng.randn(p) + noise * rng.randn(n)
    # negative log joint: ||y - X theta||^2 / (2 noise^2) + prior/2 ||theta||^2
    obj = LinearModelObjective(X, y, SquaredLoss(), np.full(n, 1 / noise**2), L2Penalty(np.full(p, prior)))
    P = X.T @ X / noise**2 + prior * np.eye(p)
    mean = np.linalg.solve(P, X.T @ y / noise**2)
    return obj, mean, P


def test_one_step_from_flat_start_is_a_newton_step(rng):
    """Quadratic f, beta = 1, precision ~ 0: mu_1 = mu_0 - H^-1 grad f(mu_0)."""
    obj, _, H = _linear_gaussian(rng)
    mu0 = rng.randn(obj.n_params)
    fam = FullGaussian(mu0, 1e-10 * np.eye(obj.n_params))
    VANSolver(obj, ClosedForm(), fam, schedule=GeometricSchedule(1.0), max_iter=1, step=FullStep()).solve()
    newton = mu0 - np.linalg.solve(H, obj.gradient(mu0))
    np.testing.assert_allclose(fam.mean, newton, rtol=1e-8)


@pytest.mark.parametrize("expectation", [ClosedForm(), GaussHermiteQuadrature()], ids=["closed", "quadrature"])
def test_vi_recovers_the_linear_gaussian_posterior(expectation, rng):
    """With f the negative log joint of a Bayesian linear-Gaussian model, VI with
    beta=1 reaches the exact posterior; tolerance 1e-6 relative."""
    obj, mean, P = _linear_gaussian(rng)
    fam = FullGaussian(np.zeros(obj.n_params), np.eye(obj.n_params))
    res = VANSolver(obj, expectation, fam, objective="vi", max_iter=50,
                    stop=MeanContraction(1e-10)).solve()
    assert res.converged
    np.testing.assert_allclose(fam.mean, mean, rtol=1e-6)
    np.testing.assert_allclose(fam.sigma, np.linalg.inv(P), rtol=1e-6)


def test_vo_converges_to_the_minimiser_and_sigma_shrinks(rng):
    obj, mean, _ = _linear_gaussian(rng)
    fam = FullGaussian(np.zeros(obj.n_params), np.eye(obj.n_params))
    res = VANSolver(obj, ClosedForm(), fam, schedule=GeometricSchedule(1.0, 10.0),
                    stop=MeanContraction(1e-10)).solve()
    assert res.converged and res.n_iter < 30
    np.testing.assert_allclose(fam.mean, mean, rtol=1e-8)
    assert np.abs(fam.sigma).max() < 1e-6


def test_constant_beta_is_sublinear_and_geometric_is_linear(rng):
    """DESIGN.md fact 1: with constant beta the error decays ~1/t; with a geometric
    schedule it decays geometrically."""
    X = rng.randn(500, 3)
    y = np.where(X @ np.array([1.0, -2.0, 0.5]) + rng.randn(500) > 0, 1.0, -1.0)
    obj = LinearModelObjective(X, y, LogisticLoss(), penalty=L2Penalty(np.ones(3)))
    ref = FullGaussian(np.zeros(3), np.eye(3))
    VANSolver(obj, GaussHermiteQuadrature(), ref, schedule=GeometricSchedule(1.0, 10.0),
              stop=MeanContraction(1e-12)).solve()
    errors = {}
    for growth in (1.0, 10.0):
        fam = FullGaussian(np.zeros(3), np.eye(3))
        VANSolver(obj, GaussHermiteQuadrature(), fam, schedule=GeometricSchedule(1.0, growth),
                  max_iter=20, stop=MeanContraction(0)).solve()
        errors[growth] = np.abs(fam.mean - ref.mean).max()
    assert errors[10.0] < 1e-10
    assert errors[1.0] > 1e-4  # still far after 20 steps


def test_precision_stays_spd_with_indefinite_curvature(rng):
    """An exact expected Hessian of a non-convex f may be indefinite; the family
    projects it so the precision remains positive definite."""

    class Saddle(Objective):
        n_params = 2

        def value(self, t):
            return float(t[0] ** 2 - t[1] ** 2 + 0.25 * t[1] ** 4)

        def gradient(self, t):
            return np.array([2 * t[0], -2 * t[1] + t[1] ** 3])

        def hessian(self, t):
            return np.diag([2.0, -2.0 + 3 * t[1] ** 2])

    for fam in (FullGaussian(np.zeros(2), 1e-3 * np.eye(2)), DiagonalGaussian(np.zeros(2), 1e-3 * np.ones(2))):
        solver = VANSolver(Saddle(), MonteCarlo(20), fam, schedule=GeometricSchedule(0.5), max_iter=60,
                           random_state=0)
        solver.setup()
        while not solver.done:
            batch = solver.ask()
            solver.tell(solver.expectation(batch, fam, random_state=solver.rng))
            P = np.diag(fam.precision) if fam.diagonal else fam.precision
            assert np.linalg.eigvalsh(P).min() > 0
        assert abs(fam.mean[1]) > 1.0 and abs(fam.mean[0]) < 0.5  # left the saddle


def test_full_update_projects_only_when_needed():
    fam = FullGaussian(np.zeros(2), np.eye(2))
    fam.update_precision(np.diag([1.0, -0.5]), beta=1.0)  # I + C is still SPD: kept as is
    np.testing.assert_allclose(fam.precision, np.diag([2.0, 0.5]))
    fam.update_precision(np.diag([1.0, -5.0]), beta=1.0)  # would be indefinite: projected
    np.testing.assert_allclose(fam.precision, np.diag([3.0, 0.5]))


def test_family_sampling_has_the_right_covariance(rng):
    A = rng.randn(3, 3)
    P = A @ A.T + np.eye(3)
    for fam in (FullGaussian(np.ones(3), P), DiagonalGaussian(np.ones(3), np.diag(P))):
        draws = fam.sample(200_000, np.random.RandomState(0))
        cov = np.cov(draws.T)
        expected = fam.sigma if not fam.diagonal else np.diag(fam.sigma)
        np.testing.assert_allclose(cov, expected, atol=0.01)
        np.testing.assert_allclose(draws.mean(0), 1.0, atol=0.01)
        X = rng.randn(5, 3)
        np.testing.assert_allclose(fam.predictor_variance(X), np.var(draws @ X.T, axis=0), rtol=0.02)


def test_convergence_warning_names_the_fix(rng):
    obj, _, _ = _linear_gaussian(rng)
    fam = FullGaussian(np.zeros(obj.n_params), np.eye(obj.n_params))
    res = VANSolver(obj, ClosedForm(), fam, max_iter=1).solve()
    assert not res.converged and res.n_iter == 1 and res.status == "max_iter"
    with pytest.warns(ConvergenceWarning, match=r"max_iter=1 iterations.*Increase max_iter") as record:
        warn_unconverged(res, 1e-5, "Increase max_iter.")
    assert record[0].filename == __file__  # points at the caller's line


def test_schedule_caps():
    vo = GeometricSchedule(1.0, 10.0)
    assert vo.rates(3, VO()) == pytest.approx((1000.0, 1.0, 1000.0))
    assert vo.rates(500, VO()) == (BETA_MAX, 0.1, BETA_MAX)  # capped, running sum discounted
    vi = GeometricSchedule(0.1, 10.0)
    assert vi.rates(0, VI()) == pytest.approx((0.1, 0.9, 0.1))
    assert vi.rates(5, VI()) == (1.0, 0.0, 1.0)
    const = GeometricSchedule(0.3, 1.0)
    assert const.rates(10_000, VO()) == pytest.approx((0.3, 1.0, 0.3))


def test_minibatch_svan_averages_towards_the_optimum(rng):
    """sVAN with constant beta: the error keeps decreasing with more passes."""
    obj, mean, _ = _linear_gaussian(rng, n=2000)
    errors = []
    for max_iter in (20, 400):
        fam = FullGaussian(np.zeros(obj.n_params), np.eye(obj.n_params))
        res = VANSolver(obj, ClosedForm(), fam, batches=Minibatches(50), max_iter=max_iter,
                        random_state=0).solve()
        errors.append(np.abs(fam.mean - mean).max())
        assert res.n_data_passes == pytest.approx(max_iter * 50 / 2000)
    assert errors[1] < 0.5 * errors[0]


def test_seeded_monte_carlo_runs_are_identical(rng):
    obj, _, _ = _linear_gaussian(rng)
    means = []
    for _ in range(2):
        fam = FullGaussian(np.zeros(obj.n_params), np.eye(obj.n_params))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            VANSolver(obj, MonteCarlo(3), fam, max_iter=5, random_state=42, batches=Minibatches(30)).solve()
        means.append(fam.mean)
    np.testing.assert_array_equal(means[0], means[1])


def test_non_finite_expectations_stop_with_a_warning():
    class Exploding(Objective):
        n_params = 1

        def value(self, t):
            return float(np.exp(t[0] ** 2))

        def gradient(self, t):
            return np.array([np.inf])

        def hessian(self, t):
            return np.eye(1)

    fam = FullGaussian(np.zeros(1), np.eye(1))
    res = VANSolver(Exploding(), MonteCarlo(2), fam, random_state=0).solve()
    assert res.status == "diverged" and np.all(np.isfinite(fam.mean))
    with pytest.warns(ConvergenceWarning, match="not finite"):
        warn_unconverged(res)
