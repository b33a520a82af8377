"""skvan.minimize: deterministic Gauss-Hermite expectations, the precision floor,
exploration with every oracle on the paper's Figure 1, defaults that converge,
restarts."""

import warnings

import numpy as np
import pytest
from scipy.optimize import minimize as scipy_minimize
from scipy.optimize import rosen, rosen_der, rosen_hess
from sklearn.exceptions import ConvergenceWarning

from skvan import minimize
from skvan._functions import sinc, sinc_grad, sinc_hess
from skvan.expectations import GaussHermiteGrid, MonteCarlo, tensor_rule
from skvan.objectives import FunctionObjective
from skvan.van import VANSolver, make_family

ORACLES = {"zero": {}, "first": dict(jac=sinc_grad), "second": dict(jac=sinc_grad, hess=sinc_hess)}


def test_tensor_rule_integrates_gaussian_moments():
    Z, W = tensor_rule(2, 6)
    assert Z.shape == (36, 2) and np.isclose(W.sum(), 1.0)
    np.testing.assert_allclose(W @ Z, 0.0, atol=1e-14)
    np.testing.assert_allclose((Z.T * W) @ Z, np.eye(2), atol=1e-13)
    assert np.isclose(W @ (Z[:, 0] ** 4 * Z[:, 1] ** 2), 3.0)  # E[z1^4 z2^2], degree 6 < 12


@pytest.mark.parametrize("covariance", ["full", "diag"])
@pytest.mark.parametrize("order", [0, 1, 2])
def test_grid_matches_closed_form_gaussian_expectations(order, covariance):
    """f = exp(a^T theta): E[f] = exp(a^T mu + a^T Sigma a / 2), E[grad] = a E[f],
    E[hess] = a a^T E[f]. The grid (20 nodes, q of sd 0.3) is exact to 1e-10."""
    a = np.array([0.7, -1.3])
    fun = lambda x: float(np.exp(a @ x))  # noqa: E731
    oracles = [dict(), dict(jac=lambda x: a * fun(x)),
               dict(jac=lambda x: a * fun(x), hess=lambda x: np.outer(a, a) * fun(x))][order]
    mean = np.array([0.2, 0.1])
    S = np.array([[0.09, 0.02], [0.02, 0.04]])
    precision = np.linalg.inv(S) if covariance == "full" else 1.0 / np.diag(S)
    family = make_family(covariance, mean, precision)
    Sigma = family.sigma if covariance == "full" else np.diag(family.sigma)
    expected = np.exp(a @ mean + 0.5 * a @ Sigma @ a)
    e = GaussHermiteGrid(20)(FunctionObjective(fun, 2, **oracles), family)
    np.testing.assert_allclose(e.value, expected, rtol=1e-10)
    np.testing.assert_allclose(e.gradient, a * expected, rtol=1e-10)
    H = np.outer(a, a) * expected
    np.testing.assert_allclose(e.curvature, H if covariance == "full" else np.diag(H), rtol=1e-9)


def test_grid_agrees_with_monte_carlo_on_sinc():
    """Wide q (sd 1.5) on the paper's sinc: the grid and 200,000 draws agree within
    4 standard errors of the Monte Carlo estimate."""
    family = make_family("full", np.array([-3.2]), np.array([[1 / 1.5**2]]))
    objective = FunctionObjective(sinc, 1, jac=sinc_grad, hess=sinc_hess)
    grid = GaussHermiteGrid(20)(objective, family)
    rng = np.random.RandomState(0)
    values, grads, hess = [], [], []
    for _ in range(20):
        e = MonteCarlo(10_000)(objective, family, random_state=rng)
        values.append(e.value)
        grads.append(e.gradient[0])
        hess.append(e.curvature[0, 0])
    for est, ref in ((values, grid.value), (grads, grid.gradient[0]), (hess, grid.curvature[0, 0])):
        assert abs(np.mean(est) - ref) < 4 * np.std(est) / np.sqrt(len(est)) + 1e-12


def test_the_floor_keeps_q_within_its_start():
    P0 = np.diag([1.0, 4.0])
    full = make_family("full", np.zeros(2), P0, floor=P0)
    full.update_precision(np.array([[-3.0, 0.5], [0.5, 1.0]]), 1.0)
    assert np.linalg.eigvalsh(full.precision - P0).min() >= -1e-12
    # A direction of positive curvature still gains precision.
    assert full.precision[1, 1] > 4.0
    diag = make_family("diag", np.zeros(2), np.diag(P0), floor=np.diag(P0))
    diag.update_precision(np.array([-3.0, 1.0]), 1.0)
    np.testing.assert_allclose(diag.precision, [1.0, 5.0])


@pytest.mark.parametrize("oracle", list(ORACLES))
def test_every_oracle_escapes_the_local_minimum_of_sinc(oracle):
    """Paper Figure 1 (sigma0=1.5) from 13 starts across the local minima at -3.48
    and -1.46 and every seed: the default (Gauss-Hermite in 1-D, q no wider than
    its start) reaches the global minimum at 1 from all of them, with each
    oracle (the target: >= 95%). The runs do not depend on the seed."""
    starts = np.linspace(-5.0, -2.0, 13)
    hits = [abs(minimize(sinc, [x0], sigma0=1.5, random_state=seed, **ORACLES[oracle]).x[0] - 1)
            < 1e-4 for x0 in starts for seed in (0, 1)]
    assert np.mean(hits) >= 0.95
    a = minimize(sinc, [-3.2], sigma0=1.5, random_state=0, **ORACLES[oracle])
    b = minimize(sinc, [-3.2], sigma0=1.5, random_state=1, **ORACLES[oracle])
    assert a.success and np.array_equal(a.x, b.x) and a.nfev == b.nfev


def test_values_on_the_1d_grid_let_the_safeguard_set_the_pace():
    """From values in 1-D the default growth is GRID_GROWTH_1D (8): each step starts
    at 8 times the last accepted beta and is halved until it passes, first the trust
    region (free), then the decrease of E_q[f] (a grid of evaluations). It crosses
    sinc's slope in fewer evaluations than at 2 or at the derivative oracles' 1.2,
    to the same minimum; without the trust region the overshooting trials each cost
    a grid and the gain is gone."""
    from skvan.optimize._settings import GRID_GROWTH_1D

    assert GRID_GROWTH_1D == 8.0
    runs = {g: minimize(sinc, [-3.2], sigma0=1.5, beta_growth=g) for g in (1.2, 2.0, 8.0)}
    default = minimize(sinc, [-3.2], sigma0=1.5)
    assert np.array_equal(runs[8.0].x, default.x) and runs[8.0].nfev == default.nfev
    for run in runs.values():
        assert run.success and abs(run.x[0] - 1.0) < 1e-4
    assert default.nfev < runs[2.0].nfev < runs[1.2].nfev
    unguarded = minimize(sinc, [-3.2], sigma0=1.5, options={"trust_radius": np.inf})
    assert abs(unguarded.x[0] - 1.0) < 1e-4 and unguarded.nfev > default.nfev + 21


def test_a_grid_too_coarse_for_f_says_so():
    """Gavana's 1-D problem 06, -(x + sin x) exp(-x^2), has one well and one bump of
    width 1 between flat tails. From 5 with sigma0 = 5 the grid's nodes near the
    mean are about 2.5 apart: its estimate of E_q[f] is aliased, no step decreases
    it, and the run says so (status 5, not success) instead of calling the start
    stationary; with sigma0 = 1, as the message advises, it finds the minimum."""

    def f(x):
        return float(-(x[0] + np.sin(x[0])) * np.exp(-x[0] ** 2))

    coarse = minimize(f, [5.0], sigma0=5.0)
    assert not coarse.success and coarse.status == 5 and "finer" in coarse.message
    assert coarse.x[0] == 5.0
    fine = minimize(f, [5.0], sigma0=1.0)
    assert fine.success and abs(fine.x[0] - 0.6795788) < 1e-4


SMOOTH = {
    "rosenbrock-2": (rosen, rosen_der, rosen_hess, np.array([-1.2, 1.0]), 0.0),
    "rosenbrock-5": (rosen, rosen_der, rosen_hess, np.array([-1.2, 1.0, -1.2, 1.0, -1.2]), None),
    "ellipsoid-4": (lambda x: float(np.sum(10.0 ** np.arange(4) * x**2)),
                    lambda x: 2 * 10.0 ** np.arange(4) * x,
                    lambda x: np.diag(2 * 10.0 ** np.arange(4)), np.ones(4), 0.0),
}


@pytest.mark.parametrize("order", [0, 1, 2])
@pytest.mark.parametrize("name", list(SMOOTH))
def test_defaults_converge_on_smooth_functions(name, order):
    """Each oracle with its defaults ends with success (no ConvergenceWarning) at a
    minimum: f below 1e-8 of the global one, or (5-D Rosenbrock, which has a local
    minimum near (-1, 1, 1, 1, 1)) a gradient below 1e-3."""
    f, g, h, x0, fmin = SMOOTH[name]
    oracles = [{}, dict(jac=g), dict(jac=g, hess=h)][order]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = minimize(f, x0, random_state=0, **oracles)
    assert res.success, res.message
    if fmin is not None:
        assert res.fun - fmin < 1e-8
    else:
        assert np.linalg.norm(g(res.x)) < 1e-3


def test_the_first_update_at_most_doubles_the_precision():
    """With Monte Carlo expectations (RelativeGeometricSchedule) beta_0 = 1 /
    lambda_max(P_0^-1 C_0) where the first curvature exceeds the starting
    precision, so P_1 <= 2 P_0; beta_0 = beta on a flat start. Under quadrature
    (exact expectations) beta_0 = beta. A constant Hessian: C_0 is exact."""
    A = np.diag([1.0, 1e4])
    for scale, expectation, beta0 in [(1.0, "mc", 1e-4), (1e-5, "mc", 1.0),
                                      (1.0, "quadrature", 1.0)]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            res = minimize(lambda x: 0.5 * scale * float(x @ A @ x), np.array([3.0, 1.0]),
                           jac=lambda x: scale * A @ x, hess=lambda x: scale * A, sigma0=1.0,
                           max_iter=1, expectation=expectation, random_state=0)
        np.testing.assert_allclose(res.precision, np.eye(2) + beta0 * scale * A, rtol=1e-12)


@pytest.mark.parametrize("order", [1, 2])
def test_scaling_f_does_not_change_the_run(order):
    """With the first step relative to the first curvature, c f and f give the same
    iterates (the same draws: the seed), where beta_0 = 1 made c f's q collapse
    in one step."""
    x0 = np.array([-1.2, 1.0, 0.5, 2.0])
    runs = []
    for c in (1.0, 1e6):
        oracles = [dict(jac=lambda x: c * rosen_der(x)),
                   dict(jac=lambda x: c * rosen_der(x), hess=lambda x: c * rosen_hess(x))]
        runs.append(minimize(lambda x: c * rosen(x), x0, random_state=0, **oracles[order - 1]))
    assert runs[0].nit == runs[1].nit and runs[0].success
    np.testing.assert_allclose(runs[1].x, runs[0].x, rtol=1e-10)
    np.testing.assert_allclose(runs[1].covariance, runs[0].covariance, rtol=1e-6, atol=1e-25)


def _rosen_and_gradient(x):
    """scipy's ``rosen`` and ``rosen_der`` in one call (``jac=True``) from the
    shared differences: the 10-D runs below make 6,000 calls each."""
    t = x[1:] - x[:-1] ** 2
    grad = np.zeros_like(x)
    grad[:-1] = -400.0 * x[:-1] * t - 2.0 * (1.0 - x[:-1])
    grad[1:] += 200.0 * t
    return float(np.sum(100.0 * t**2 + (1.0 - x[:-1]) ** 2)), grad


def _rosen_hessian(x):
    """scipy's ``rosen_hess`` as a tridiagonal matrix built directly."""
    d = np.zeros_like(x)
    d[:-1] = 1200.0 * x[:-1] ** 2 - 400.0 * x[1:] + 2.0
    d[1:] += 200.0
    return np.diag(d) + np.diag(-400.0 * x[:-1], 1) + np.diag(-400.0 * x[:-1], -1)


def test_the_fast_rosenbrock_is_scipys():
    for x in np.random.RandomState(0).uniform(-3, 3, size=(3, 10)):
        value, grad = _rosen_and_gradient(x)
        np.testing.assert_allclose(value, rosen(x), rtol=1e-14)
        np.testing.assert_allclose(grad, rosen_der(x), rtol=1e-14)
        np.testing.assert_allclose(_rosen_hessian(x), rosen_hess(x), rtol=1e-14, atol=1e-11)


@pytest.mark.slow
def test_derivative_oracles_find_rosenbrocks_global_minimum_in_10d():
    """10-D Rosenbrock has a local minimum near (-1, 1, ..., 1). From 20 random
    starts in [-3, 3]^10 (sigma0 a quarter of the box) both derivative oracles
    reach the global one from at least 80% of them and at least as many as BFGS
    (measured: 20 of 20 for both, BFGS 16; over 40 starts 40 and 40, BFGS 31).
    Which starts succeed is chaotic (the last bits of a run decide some of
    them): the count, over enough starts, is what holds."""
    starts = np.random.RandomState(1).uniform(-3, 3, size=(40, 10))[:20]
    bfgs = sum(scipy_minimize(rosen, x0, jac=rosen_der, method="BFGS").fun < 1e-5
               for x0 in starts)
    for oracles in (dict(jac=True), dict(jac=True, hess=_rosen_hessian)):
        hits = sum(minimize(_rosen_and_gradient, x0, sigma0=1.5, random_state=seed,
                            **oracles).fun < 1e-5
                   for seed, x0 in enumerate(starts))
        assert hits >= max(bfgs, 16), (oracles.keys(), hits, bfgs)


def test_restarts_count_every_run_and_keep_the_best():
    def f(x):  # two basins; the start sits in the worse one
        return float(np.sum((x**2 - 1.0) ** 2) + 0.3 * np.sum(x))

    x0 = np.array([0.9, 0.9, 0.9])
    one = minimize(f, x0, sigma0=0.1, random_state=0)
    res = minimize(f, x0, sigma0=0.1, restarts=2, random_state=0)
    assert len(res.runs) == 3
    assert res.nfev == sum(r["nfev"] for r in res.runs) + 1  # and f(x0), once
    assert res.fun == min(r["fun"] for r in res.runs) <= one.fun
    # The populations double: the later runs evaluate more points per iteration.
    assert res.runs[0]["x"].shape == (3,)
    with pytest.raises(ValueError, match="restarts"):
        minimize(f, x0, restarts=-1)


def test_quadrature_refuses_what_it_cannot_do():
    with pytest.raises(ValueError, match="up to 2 dimensions"):
        minimize(rosen, np.zeros(3), jac=rosen_der, expectation="quadrature")
    with pytest.raises(ValueError, match="expectation='mc'"):
        minimize(sinc, [0.0], expectation="quadrature", n_mc_samples=10)
    with pytest.raises(ValueError, match="beta_growth"):
        minimize(rosen, np.zeros(3), fitness_shaping=True, beta_growth=1.5)


def test_cumulative_scale_is_neutral_under_random_selection():
    """Utilities assigned at random: the path has the length of a standard normal
    vector on average, and the scale does a random walk without drift (mean log
    change per step within 0.1 of its spread)."""
    from skvan.expectations import CumulativeScale, rank_utilities

    n, rng = 6, np.random.RandomState(0)
    csa = CumulativeScale(n, beta=1.0)
    changes = []
    for _ in range(4000):
        Z = rng.standard_normal((5, n))
        Zs = np.vstack([Z, -Z])
        u = rank_utilities(rng.standard_normal(10))
        changes.append(-0.5 * np.log1p(csa.update(Zs, u)))  # the log-scale change delta
    changes = np.array(changes[200:])
    assert abs(changes.mean()) < 0.1 * changes.std()


def test_the_rank_one_path_is_neutral_under_random_selection():
    """Utilities assigned at random: the whitened path is standard normal, so the
    rank-one term ``c_1 (p p^T - I)`` averages to zero (each entry of ``p p^T - I``
    within 0.15 over 4,000 steps; its sd is about 1)."""
    from skvan.expectations import RankOnePath, rank_utilities
    from skvan.expectations._monte_carlo import cma_rates
    from skvan.van import FullGaussian

    n, rng = 5, np.random.RandomState(0)
    family = FullGaussian(np.zeros(n), 4.0 * np.eye(n))
    path = RankOnePath(n, beta=0.5)
    c_1 = cma_rates(n, 10)[0]
    terms = []
    for _ in range(4000):
        Z = rng.standard_normal((5, n))
        terms.append(path.update(family, np.vstack([Z, -Z]), rank_utilities(rng.standard_normal(10))))
    outer = np.mean(terms[200:], axis=0) / (-c_1 / 0.5)
    assert np.abs(outer).max() < 0.15


def test_the_rank_one_path_stalls_on_a_linear_slope(monkeypatch):
    """With CMA-ES's shape update (``shape_update="cma"``) the scale still grows
    on f(x) = x_0 because the rank-one path stalls while the scale's path is long
    (``h_sigma``); without the stall the rank-one update stretched q along the
    steps and shortened the scale's path (sd below 10 after 40 iterations,
    against above 1e3)."""
    from skvan.expectations import CumulativeScale

    def scale():
        res = minimize(lambda x: float(x[0]), np.zeros(4), max_iter=40, random_state=0,
                       options={"shape_update": "cma"})
        return np.sqrt(np.trace(res.covariance) / 4)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        assert scale() > 1e3
        monkeypatch.setattr(CumulativeScale, "growing_fast", lambda self: False)
        assert scale() < 10.0


def test_cma_shape_update_solves_a_rotated_ellipsoid():
    """The "cma" shape update (rank-mu at ``c_mu``, rank-one at ``c_1``) reaches the
    minimum of a rotated ill-conditioned quadratic, as the default does."""
    Q, _ = np.linalg.qr(np.random.RandomState(1).standard_normal((5, 5)))
    H = (Q * np.logspace(0, 3, 5)) @ Q.T

    def f(x):
        return float(x @ H @ x)

    for update in ("xnes", "cma"):
        res = minimize(f, np.ones(5), sigma0=0.5, random_state=0, max_iter=3000,
                       options={"shape_update": update})
        assert res.success and res.fun < 1e-8, update


def test_fitness_shaping_widens_q_on_a_linear_slope():
    """On f(x) = x_0 every step points the same way: cumulative step-size
    adaptation must grow q (the evolution strategies' linear-function test)."""
    res = minimize(lambda x: float(x[0]), np.zeros(4), max_iter=40, random_state=0)
    assert np.sqrt(np.trace(res.covariance) / 4) > 10.0
    assert res.x[0] < -10.0


def test_gauss_newton_under_quadrature_checks_the_mean_step_only():
    """A Gauss-Newton increase of the precision raises E_q[f] where f is concave
    on average (sinc around -3.2): halving the whole step found no decrease and
    the run stalled at x0. Checking the mean step alone moves it (to a local
    minimum: Gauss-Newton does not explore)."""
    res = minimize(sinc, [-3.2], jac=sinc_grad, hessian="gauss_newton", sigma0=1.5)
    assert res.success and res.nit > 10
    assert abs(res.x[0] + 3.477) < 1e-3


def test_a_plateau_is_not_convergence():
    """Fitness-shaped draws whose values all tie give a mean step of exactly 0. That
    read as round-off, so minimize stopped "converged" (success) after one
    iteration at x0 on a plateau. Now q widens on each flat iteration (as CMA-ES
    does), the mean test skips them, and a run that finds no difference in
    ``FLAT_ITERATIONS`` ends with status 4 and success False. From a plateau
    around a bowl some seeds reach its minimum (4 of these 10)."""
    from skvan.van._solver import FLAT_ITERATIONS

    def f(x):  # a bowl of radius sqrt(2) around (2, 2) in a plateau at 2
        return min(float(np.sum((x - 2.0) ** 2)), 2.0)

    found = 0
    for seed in range(10):
        res = minimize(f, np.zeros(2), sigma0=0.1, random_state=seed)
        assert res.nit >= FLAT_ITERATIONS
        assert res.status in (0, 4)
        assert res.success == (res.status == 0)
        if res.status == 4:
            assert "flat fitness" in res.message
        found += res.fun < 1e-8
    assert found >= 2
    # A constant: every iteration ties; q widens, the mean stays.
    res = minimize(lambda x: 1.0, np.ones(3), random_state=0)
    assert (res.status, res.nit, res.success) == (4, FLAT_ITERATIONS, False)
    assert np.array_equal(res.x, np.ones(3))
    assert np.all(np.diag(res.covariance) > 100.0)


def test_ties_give_exactly_zero_utilities():
    """All values tied: utilities exactly 0 (not their mean's round-off, which
    moved the mean by 1e-34), and the estimate is marked flat."""
    from skvan.expectations import rank_utilities
    from skvan.van import FullGaussian

    assert not np.any(rank_utilities(np.full(6, 3.0)))
    u = rank_utilities(np.array([1.0, 2.0, 2.0, 3.0]))
    assert u[1] == u[2] and abs(u.sum()) < 1e-15
    mc = MonteCarlo(6, fitness_shaping=True)
    family = FullGaussian(np.zeros(2), np.eye(2))
    Z = np.random.RandomState(0).standard_normal((3, 2))
    assert mc.combine(family, Z, 0, np.full(6, 1.0)).flat
    assert not mc.combine(family, Z, 0, np.arange(6.0)).flat


def _evaluations_to(f, x0, seed, target=1e-5, options=None):
    """Calls of ``f`` by the zero-order default until a value within ``target``."""
    calls, hit = [0], [None]

    def counted(x):
        calls[0] += 1
        value = f(x)
        if hit[0] is None and value <= target:
            hit[0] = calls[0]
        return value

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        minimize(counted, x0, sigma0=1.5, random_state=seed, max_iter=2000, options=options)
    return np.inf if hit[0] is None else hit[0]


@pytest.mark.parametrize("name, f, most", [
    ("sphere", lambda x: float(x @ x), 200),
    ("ellipsoid", lambda x: float(x[0] ** 2 + 1e4 * x[1] ** 2), 400),
])
def test_zero_order_keeps_the_trace_of_its_shape_update(name, f, most):
    """The fitness-shaped update keeps the trace of the rank-mu curvature (xNES's
    scale update) and adds CSA's shift, as CMA-ES's scale moves by both; with
    CSA alone 2-D problems needed about twice CMA-ES's evaluations (median over
    10 seeds to 1e-5 from (2, -1.5): sphere 248 -> 159, ellipsoid 503 -> 311;
    the commands are in benchmarks/RESULTS.md)."""
    counts = [_evaluations_to(f, np.array([2.0, -1.5]), seed) for seed in range(10)]
    assert np.median(counts) <= most, counts


def test_the_rank_one_path_learns_a_valley():
    """The default zero-order shape update adds CMA-ES's rank-one update at half its
    ``c_1`` (``rank_one_fraction``) to xNES's rank-mu one: down 8-D Rosenbrock's
    valley from 0 the median over 6 seeds of evaluations to 1e-5 is 3197 with it,
    4443 without (and one seed of the six missed the target)."""
    def median_evaluations(**options):
        return np.median([_evaluations_to(rosen, np.zeros(8), seed, options=options)
                          for seed in range(6)])

    with_path = median_evaluations()
    assert with_path <= 3800
    assert median_evaluations(rank_one_fraction=0.0) > 1.2 * with_path


def test_the_gradient_noise_is_the_variance_of_the_estimate():
    """MonteCarlo's Expectations.noise, measured from one call's antithetic pairs,
    is on average the variance (summed over whitened coordinates) of the gradient
    estimate over repeated calls: f a bowl under ripples, each oracle. The mixed
    estimates' weight comes from the same pairs, which biases their measured
    variance low by about one over the pairs (32 here); with the sampling error
    over 2,000 calls, asserted within 10%."""
    from skvan._functions import ripple

    L = ripple(3)
    # Off the ripples' symmetry points (there the antithetic derivatives are exact).
    family = make_family("full", L.start + 0.3, np.eye(3) / 0.6**2)
    A = np.linalg.cholesky(family.sigma)
    for oracles in ({}, dict(jac=L.grad), dict(jac=L.grad, hess=L.hess)):
        objective = FunctionObjective(L.f, 3, **oracles)
        rng = np.random.RandomState(0)
        runs = [MonteCarlo(64, mixed=bool(oracles))(objective, family, random_state=rng)
                for _ in range(2000)]
        whitened = np.array([A.T @ e.gradient for e in runs])
        measured = np.mean([e.noise for e in runs])
        assert abs(measured / whitened.var(axis=0).sum() - 1) < 0.1


def test_continuation_paces_q_on_exact_estimates_and_waits_on_noise():
    """A quadratic's antithetic Hessians and gradients are exact: the pace stays 1,
    every mean step is a whole Newton step on the smoothing (damped by P_0 while
    the accumulated weight is small) and the precision is the schedule's
    geometric sum, P_t = P_0 + beta_0 (g^t - 1) / (g - 1) A. On the ripple under q of sd 1 the draws' derivatives
    are mostly noise and the pace falls below 1/2."""
    from skvan._functions import ripple
    from skvan.van import ContinuationSchedule

    A = np.array([[3.0, 1.0], [1.0, 2.0]])
    res = minimize(lambda x: 0.5 * float(x @ A @ x) - x[0], np.zeros(2),
                   jac=lambda x: A @ x - np.array([1.0, 0.0]), hess=lambda x: A,
                   random_state=0)
    assert res.success
    np.testing.assert_allclose(res.x, np.linalg.solve(A, [1.0, 0.0]), atol=1e-12)
    beta0 = 1.0 / np.linalg.eigvalsh(A).max()
    np.testing.assert_allclose(res.precision, np.eye(2) + beta0 * (1.2**res.nit - 1) / 0.2 * A,
                               rtol=1e-10)
    L = ripple(2)
    paces = []

    class Recording(ContinuationSchedule):
        def rates(self, t, objective):
            rates = super().rates(t, objective)
            paces.append(self.pace_)
            return rates

    family = make_family("full", L.start, np.eye(2))
    solver = VANSolver(FunctionObjective(L.f, 2, jac=L.grad, hess=L.hess),
                       MonteCarlo(6, mixed=True), family, schedule=Recording(1.0, 1.2),
                       max_iter=40, random_state=0)
    solver.solve()
    assert paces[0] == 1.0 and np.mean(paces[10:]) < 0.6


@pytest.mark.slow
@pytest.mark.parametrize("n", [2, 5])
def test_derivative_oracles_cross_the_ridge_of_tilted_wells(n):
    """A rotated tilted double well in every coordinate (skvan._functions.
    tilted_wells), each start in the shallow basin of every coordinate, the
    global basin across a ridge 1.0 higher, sigma0 = 1, defaults otherwise: the
    continuation takes the mean across before q narrows (with the paper's steps:
    0 of 20 in 2-D). Measured, of 40 seeds: 40 and 33 in 2-D, 40 and 40 in 5-D
    (gradients, Hessians); the counts, not which seeds, are what holds."""
    from skvan._functions import tilted_wells

    L = tilted_wells(n)
    for oracles in (dict(jac=L.grad), dict(jac=L.grad, hess=L.hess)):
        hits = sum(L.solved(minimize(
            L.f, L.start + 0.05 * np.random.RandomState(100 + seed).standard_normal(n),
            sigma0=1.0, random_state=seed, **oracles).x) for seed in range(40))
        assert hits >= 28, (n, list(oracles), hits)
