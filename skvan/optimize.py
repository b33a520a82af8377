"""``skvan.minimize``: VAN for any function, with or without derivatives."""

import inspect
from numbers import Integral, Real

import numpy as np
from scipy.optimize import Bounds, OptimizeResult
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state

from ._compat import Interval, StrOptions, validate_parameter_constraints, validate_params
from ._warnings import warn_user
from .expectations import CumulativeScale, GaussHermiteGrid, MonteCarlo, RankOnePath
from .expectations._monte_carlo import cma_rates
from .objectives import FunctionObjective
from .objectives._function import _shaped
from .objectives._bounds import BoxTransform
from .van import (
    MESSAGES,
    AllOf,
    ArmijoMeanStep,
    AveragingSchedule,
    BetaBacktrack,
    FullStep,
    GeometricSchedule,
    LongStepCheck,
    MeanContraction,
    ObjectiveDecrease,
    PassChange,
    RelativeGeometricSchedule,
    TrustRegion,
    VANSolver,
    make_family,
)

#: Trust region of the mean step, in standard deviations of q per sqrt(dimension):
#: a draw from q lies about sqrt(n) such units from its mean, so a step may go
#: up to twice as far as the samples looked.
TRUST_RADIUS = 2.0

#: With derivatives from Monte Carlo draws, a mean step longer than this many
#: standard deviations of the current q per sqrt(dimension) is taken only where
#: f at the new mean is at most the draws' average (:class:`~skvan.van.LongStepCheck`;
#: :class:`VANOptimizer`, which evaluates nothing itself, does without): the
#: trust region's 2, in the current q's metric. ``python
#: benchmarks/bench_minimize.py --starts 40 --functions rosenbrock-2 rosenbrock-10
#: beale-2 camel-2 styblinski-tang-5 ackley-10 griewank-10 --methods "VAN first
#: order" "VAN second order" --checked-radius R`` for R = 2, 3, 5, inf: griewank-10
#: 38, 30, 12, 8% (first order) and 22, 20, 10, 5% (second), ackley-10 first order
#: 100, 100, 98, 90%, the other rows level, Rosenbrock's evaluations within 2%.
CHECKED_RADIUS = 2.0

#: ``beta_growth=None``: each step is ``(g - 1) / g = 1/6`` of a Newton step once
#: the sum of steps dominates the start, and ``q`` narrows by ``1/g`` per
#: iteration: linear convergence with ``q`` wide for the first dozen iterations.
#: A middle choice, measured with the derivative oracles on 6 functions x 10
#: starts (``benchmarks/bench_minimize.py --beta-growth``, RESULTS.md): 1.1 took
#: 1.5-2x the evaluations (and reached rosenbrock-10's global minimum more often
#: from first order, 9 against 6 of 10), 1.5 about half of them with one start
#: fewer on camel-2 (first order) and on rosenbrock-10 (second order).
DEFAULT_GROWTH = 1.2

#: ``beta_growth=None`` from values on the 1-D grid (the zero-order default in
#: 1-D). The step safeguard there (:class:`~skvan.van.BetaBacktrack` on the exact
#: decrease of ``E_q[f]``, with memory) starts each step from the growth times the
#: last accepted ``beta`` and halves it after a refusal; above a growth of 2 the
#: trust region of :data:`TRUST_RADIUS` in ``q``'s metric refuses the overshooting
#: trials before the grid is evaluated at them (:func:`_estimator`), so that a
#: fast growth costs no wasted grids. The slower schedule exists for valleys that
#: ``q`` must not narrow faster than the mean follows them, and 1-D has none; from
#: values the grid's span explores (its outermost node 7.8 standard deviations
#: out). ``python benchmarks/bench_minimize.py --starts 100 --functions sinc-1
#: rastrigin-1 ackley-1 griewank-1 styblinski-1 sphere-1 --methods "VAN zero
#: order" --beta-growth G`` (RESULTS.md, "A faster growth on the 1-D grid"): G = 8
#: crosses sinc's slope in 158 evaluations to target against 263 at G = 2, with
#: the same or more successes on the other five; G = 16 loses ackley-1 and
#: griewank-1 starts; without the trust region (``--trust-radius inf``) G = 8
#: spends its gain on refused grids. With derivatives (first and second order)
#: second order lost ackley-1 at 2 against 1.2 (23% -> 3%), and in 2-D
#: (``--expectation quadrature``) zero order lost 2 of 30 starts of
#: rosenbrock-2 at 2: both keep :data:`DEFAULT_GROWTH`.
GRID_GROWTH_1D = 8.0

#: Gauss-Hermite nodes per dimension of ``expectation="quadrature"``, by dimension
#: (``expectation="auto"`` uses the grid in 1-D only: in 2-D its 36 points per
#: iteration cost 6 to 9 times Monte Carlo's evaluations to the target, with the
#: same or a lower success; ``benchmarks/bench_minimize.py --expectation
#: quadrature``, RESULTS.md). The outermost of 21 nodes lies 7.8 standard
#: deviations out: on the sinc problem 11 (5.2) were too few while ``q`` was wide.
#: An odd count puts a node on the mean, which the mean step then evaluates:
#: 21 nodes in place of 20 halved the evaluations to the target on sinc, the 1-D
#: sphere and rastrigin, with the same successes from values (``python
#: benchmarks/bench_minimize.py --starts 100 --functions sinc-1 sphere-1
#: rastrigin-1 styblinski-1 ackley-1 griewank-1 --grid-nodes 20``, RESULTS.md).
GRID_NODES = {1: 21, 2: 6}

#: scipy's integer ``status`` for each solver status, and its message.
_STATUS = {
    "converged": (0, "The mean converged: its estimated distance to the fixed point is below tol."),
    "stalled": (0, "No step decreased the objective beyond round-off: the mean is stationary "
                   "to working precision."),
    "max_iter": (1, "Maximum number of iterations reached."),
    "diverged": (2, "Stopped: the expected gradient or curvature was not finite."),
    "stopped": (3, "Stopped by the callback."),
    "flat": (4, MESSAGES["flat"] + " f may be constant over a wide region, or its values "
                "too coarse for the ranks to tell the draws apart."),
    "stuck": (5, MESSAGES["stuck"]),
}


#: minimize's message (status 5) for a quadrature run whose every step was refused
#: from the first iteration on (:func:`_run`).
_UNRESOLVED = (
    "No step decreased the grid's estimate of E_q[f] from the start: its gradient "
    "disagrees with its values, as where f varies on scales finer than the "
    "Gauss-Hermite nodes resolve (about sigma0 / 2 apart near the mean). Try a "
    "smaller sigma0, or expectation='mc'."
)


#: Constraints of minimize's keyword-only parameters, which ``options`` may also set.
_OPTION_CONSTRAINTS = {
    "sigma0": [Interval(Real, 0, None, closed="neither")],
    "beta": [Interval(Real, 0, None, closed="neither")],
    "beta_growth": [Interval(Real, 1, None, closed="left"), None],
    "covariance": [StrOptions({"full", "diag"})],
    "hessian": [StrOptions({"exact", "gauss_newton"})],
    "expectation": [StrOptions({"auto", "quadrature", "mc"})],
    "n_mc_samples": [Interval(Integral, 2, None, closed="left"), None],
    "fitness_shaping": ["boolean", StrOptions({"auto"})],
    "max_iter": [Interval(Integral, 1, None, closed="left")],
    "restarts": [Interval(Integral, 0, None, closed="left")],
    "vectorized": ["boolean"],
    "n_jobs": [Integral, None],
    "random_state": ["random_state"],
    "verbose": ["verbose"],
}


@validate_params(
    {
        "fun": [callable],
        "x0": ["array-like"],
        "args": "no_validation",
        "method": [str, None],
        "jac": [callable, "boolean", None],
        "hess": [callable, None],
        "hessp": [callable, None],
        "bounds": "no_validation",
        "constraints": "no_validation",
        "tol": [Interval(Real, 0, None, closed="left"), None],
        "callback": [callable, None],
        "options": [dict, None],
        **_OPTION_CONSTRAINTS,
    },
    prefer_skip_nested_validation=True,
)
def minimize(
    fun,
    x0,
    args=(),
    method=None,
    jac=None,
    hess=None,
    hessp=None,
    bounds=None,
    constraints=(),
    tol=None,
    callback=None,
    options=None,
    *,
    sigma0=1.0,
    beta=1.0,
    beta_growth=None,
    covariance="full",
    hessian="exact",
    expectation="auto",
    n_mc_samples=None,
    fitness_shaping="auto",
    max_iter=500,
    restarts=0,
    vectorized=False,
    n_jobs=None,
    random_state=None,
    verbose=0,
):
    """Minimise ``f`` by the Variational Adaptive-Newton method.

    VAN minimises ``E_q[f(theta)]`` over ``q = N(mu, Sigma)`` by mirror descent::

        P_{t+1}  = P_t + beta_t E_q[hess f]
        mu_{t+1} = mu_t - beta_t P_{t+1}^-1 E_q[grad f]

    a Newton-like step on ``f`` averaged over ``q``, which can step over local
    minima while ``q`` is wide. Expectations are Gauss-Hermite quadrature in one
    dimension and Monte Carlo averages over ``n_mc_samples`` draws per iteration
    (antithetic pairs) otherwise (``expectation``), from whatever oracle is given:

    - second order (``jac`` and ``hess``): averaged gradients and Hessians;
    - first order (``jac`` only): ``E[hess f] = Sigma^-1 E[(theta - mu) grad f^T]``
      (Bonnet/Price; for ``covariance="diag"`` the reparameterisation trick);
    - zero order (``fun`` only): ``E[grad f] = Sigma^-1 E[(theta - mu)(f - b)]``
      and ``E[hess f] = Sigma^-1 E[((theta - mu)(theta - mu)^T - Sigma)(f - b)] Sigma^-1``
      (Gaussian score-function identities, the link to natural evolution
      strategies) with the baseline ``b = f(mu)`` and antithetic pairs.

    With derivatives under Monte Carlo each average is mixed with the
    zero-order identity's estimate from the same draws' values (the Hessian with
    the first-order one) at the weight of least measured variance (Notes).

    Parameters
    ----------
    fun : callable
        ``fun(x, *args) -> float`` for ``x`` of shape ``(n,)``. With ``jac=True`` it
        returns ``(value, gradient)``. With ``vectorized=True`` it takes
        ``(n_points, n)`` and returns ``(n_points,)`` (and ``(n_points, n)``
        gradients).
    x0 : array-like of shape (n,)
        Initial mean of ``q``.
    args : tuple, default=()
        Extra arguments passed to ``fun``, ``jac``, ``hess`` and ``hessp``, as in
        scipy (a single non-tuple value is wrapped in a tuple).
    method : {None, "VAN"}, default=None
        Accepted for scipy's calling convention; other names are scipy's methods
        (use :func:`scipy.optimize.minimize`).
    jac : callable, True or None, default=None
        Gradient ``jac(x, *args)``, True if ``fun`` returns it, or None (zero order).
    hess : callable or None, default=None
        Hessian ``hess(x, *args)``; needs ``jac``.
    hessp : callable or None, default=None
        Hessian-vector product ``hessp(x, p, *args)``, used (``n`` products per
        point) when ``hess`` is None; needs ``jac``.
    bounds : sequence of (min, max) pairs, scipy.optimize.Bounds or None, default=None
        Box constraints (None or +-inf: unbounded). Handled by a change of
        variables ``x = T(u)`` per coordinate, CMA-ES's periodic
        linear-quadratic map (``skvan.objectives._bounds``): the identity inside
        the box, quadratic within a margin of 1/20 of the width at each bound,
        mirrored beyond. ``q`` is a Gaussian over ``u``, so every draw is
        evaluated inside the box, derivatives follow by the chain rule, and a
        minimum on a face or in a corner is a smooth minimum over ``u``. ``x`` in
        the result is ``T`` of ``q``'s mean and ``covariance`` its delta-method
        image ``T'(u) Sigma_u T'(u)`` (``precision`` stays over ``u``). ``x0``
        must lie within the bounds (on one is fine), and ``sigma0`` is in
        ``x``'s units.
    constraints : ()
        Only the empty default: VAN handles no general constraints.
    tol : float or None, default=None
        Stop when the mean's estimated distance to its fixed point is below
        ``tol * max(|mu|_inf, sigma0)`` (measured on ``x = T(mu)`` under
        ``bounds``), ``>= 0``; None is 1e-6.
    callback : callable or None, default=None
        Called after each iteration, as in scipy: ``callback(intermediate_result)``
        if its only parameter is named ``intermediate_result`` (an
        OptimizeResult with ``x``, ``fun`` (the estimate of ``E_q[f]``), ``nit``
        and ``covariance``), otherwise ``callback(xk)``. Raising StopIteration
        stops the run (``status`` 3).
    options : dict or None, default=None
        Method options: scipy's ``maxiter`` (``max_iter``) and ``disp``
        (``verbose``), or any of the keyword-only parameters below by name; they
        take precedence over the keywords.
    sigma0 : float, default=1.0
        Initial standard deviation of ``q`` (``Sigma_0 = sigma0^2 I``), ``> 0``: how
        far VAN looks around ``x0`` at first.
    beta : float, default=1.0
        Step size, ``> 0``. With Monte Carlo expectations (not fitness-shaped)
        it is relative to the first expected curvature: ``beta_0 = beta min(1, 1
        / lambda_max(P_0^-1 E[hess f]))``, so the first update adds at most
        ``beta P_0`` to the precision ``P_0 = I / sigma0^2``, and neither a steep
        ``f`` nor one noisy estimate collapses ``q`` in one step
        (:class:`~skvan.van.RelativeGeometricSchedule`). Otherwise ``beta_0 =
        beta``.
    beta_growth : float or None, default=None
        ``beta_t = beta_0 * beta_growth**t``, ``>= 1``. ``g > 1`` makes each mean
        step ``(g-1)/g`` of a Newton step once the running sum dominates the start,
        and shrinks ``q`` by about ``1/g`` per iteration: linear convergence.
        ``g = 1``, the paper's constant step, keeps ``q`` wide longest (convergence
        ~1/t). None is :data:`DEFAULT_GROWTH` (1.2), 1 with ``fitness_shaping``
        (natural evolution strategies' constant rates), and
        :data:`GRID_GROWTH_1D` (8) from values on the 1-D grid, where the step
        safeguard sets the pace (each step from the last accepted ``beta`` times
        the growth, halved until ``E_q[f]`` decreases within a trust region).
    covariance : {"full", "diag"}, default="full"
        Full or diagonal covariance (VAN-D).
    hessian : {"exact", "gauss_newton"}, default="exact"
        Expected Hessian (estimated as above), or ``E[grad f grad f^T]`` (VAG; needs
        ``jac``). The precision stays positive definite either way: an indefinite
        estimate is projected onto the PSD cone when it would break definiteness.
        The Gauss-Newton curvature is never negative, so it narrows ``q`` even
        where ``f`` is concave on average and explores less (on the sinc problem
        it reaches the global minimum from 3 of the 13 starts where the exact
        expected Hessian reaches it from all).
    expectation : {"auto", "quadrature", "mc"}, default="auto"
        How expectations under ``q`` are computed. "quadrature": a product
        Gauss-Hermite grid (21 nodes in 1-D, 6 x 6 in 2-D; deterministic, so
        each step is checked on ``E_q[f]`` and the run does not depend on the
        seed), with ``q`` never wider than at the start (Notes). "mc": Monte
        Carlo. "auto": quadrature for ``n = 1`` unless ``n_mc_samples`` or
        ``fitness_shaping`` asks for draws, Monte Carlo otherwise.
    n_mc_samples : int or None, default=None
        Draws per iteration, ``>= 2`` (rounded down to pairs); None uses
        ``2 (n + 1)``, or with ``fitness_shaping`` the evolution strategies'
        population ``4 + floor(3 log n)`` (rounded up to pairs).
    fitness_shaping : bool or "auto", default="auto"
        Zero order only: use the ranks of the values instead of the values
        (rank-based utilities, as in natural evolution strategies). The step is
        then invariant to any increasing transformation of ``f``, and its rates
        are those of evolution strategies:
        ``beta_t = beta * 3 (3 + log n) / (5 n sqrt(n))`` for the shape and
        scale of the precision (xNES), ``beta`` for the mean, joined by CMA-ES's
        cumulative step-size adaptation and rank-one update
        (``covariance="full"``), or SNES's rate
        ``beta * (3 + log n) / (5 sqrt(n))`` ("diag") (Notes). Much
        more robust on ill-conditioned or multimodal ``f``
        (``benchmarks/bench_minimize.py``).
        "auto" uses it for the zero-order oracle in ``n >= 2`` dimensions unless
        ``beta_growth`` is set; ``False`` keeps the paper's raw estimator.
    max_iter : int, default=500
        Maximum number of iterations per run, ``>= 1``; a ``ConvergenceWarning``
        (at the caller's line) says when the best run ended there.
    restarts : int, default=0
        Runs after the first, ``>= 0``, each from ``x0`` with twice the previous
        run's draws per iteration (IPOP: a larger population searches more
        globally; under quadrature, where draws are fixed, twice its ``sigma0``).
        The result is the run with the lowest ``f(x)``; ``nit``, ``nfev``,
        ``njev`` and ``nhev`` count all runs, and ``runs`` lists each one's
        ``x``, ``fun``, ``status``, ``nit`` and ``nfev``.
    vectorized : bool, default=False
        ``fun`` (and ``jac``) evaluate a batch of points per call.
    n_jobs : int or None, default=None
        Evaluate the points of an iteration in parallel with joblib.
    random_state : int, RandomState instance or None, default=None
        Seeds the draws.
    verbose : int, default=0
        Print one line per iteration.

    Returns
    -------
    result : scipy.optimize.OptimizeResult
        ``x`` (the final mean), ``fun`` (``f(x)``, one extra evaluation), ``nit``,
        ``nfev``/``njev``/``nhev`` (points at which ``fun``/the gradient/the Hessian
        were evaluated, including that last one), ``success``, ``status`` (0
        converged, 1 max_iter, 2 non-finite expectations, 3 callback, 4 flat fitness:
        fitness-shaped values all tied in 10 successive iterations, 5 every step
        refused before the mean settled: under quadrature from the first
        iteration on, where ``f`` varies on scales finer than the grid's nodes
        resolve), ``message``,
        ``covariance`` (an ``(n, n)`` matrix, diagonal for ``covariance="diag"``) and
        ``precision`` (as the family stores it: ``(n, n)``, or ``(n,)`` for "diag") of
        the final ``q``; with ``restarts``, also ``runs``.

    See Also
    --------
    scipy.optimize.minimize : Deterministic local optimisers.

    Notes
    -----
    With ``fitness_shaping=True`` the zero-order estimates use, in place of
    ``f(theta_s)``, minus the rank-based utilities ``u_s`` of natural evolution
    strategies (the best half of the draws weighted by ``log`` of their rank,
    summing to zero). With ``P = L L^T`` and whitened draws ``z_s`` the VAN step
    becomes ``P <- L (I - beta_t G) L^T``, ``G = sum_s u_s (z_s z_s^T - I)``, and
    ``mu <- mu + beta L^-T (I - beta_t G)^-1 sum_s u_s z_s``: the exponential NES
    (xNES) update to first order, with its learning rate for the shape and for
    the trace part of ``G`` (the global scale of ``q``). Two of CMA-ES's rules
    join it, as CMA-ES's own scale moves by both its step-size path and its
    covariance update: cumulative step-size adaptation
    (:class:`~skvan.expectations.CumulativeScale`, normalised for antithetic
    pairs), which widens ``q`` while successive mean steps point the same way
    and narrows it while they cancel; and the rank-one update along the
    evolution path of the mean (:class:`~skvan.expectations.RankOnePath`, at
    half CMA-ES's rate), which stretches ``q`` along a valley the mean follows.
    On the 11 functions in 2 to 20 dimensions of ``benchmarks/bench_minimize.py``
    (100 starts) this needs 0.94 to 1.13 times CMA-ES's evaluations to target,
    with at least its success on every one but griewank-10 (36 against 38%; 37%
    each at 300 starts); the 1-D sinc problem takes Gauss-Hermite quadrature
    instead (1.2 times CMA-ES's evaluations, from every start against 63% of them;
    ``expectation="mc", n_mc_samples=6`` gives 71% against CMA-ES's 63% at 1.15
    times its evaluations, over 300 starts). With CSA
    in place of the trace, 2-D functions needed twice CMA-ES's evaluations.
    The diagonal family adapts each variance at separable NES's scale rate. The
    precision can shrink as well as grow, which the running sum of raw Hessian
    estimates rarely allows. Where every draw's value ties (a plateau) the mean
    stays, ``q`` widens, and ten such iterations in a row end the run (status 4).

    The same solver fits :class:`~skvan.VANLogisticRegression`. Each step is
    safeguarded by halving ``beta_t`` for the whole step (precision and mean):

    - under quadrature, until ``E_q[f]`` does not increase (from values in 1-D
      each step starts at 8 times the last accepted ``beta``, and trials beyond
      the zero-order trust region below are refused before the grid is
      evaluated there);
    - with Monte Carlo, whose values cannot be compared, until the mean step is
      within a trust region ``sqrt(d^T M d) <= 2 sqrt(n)``: ``M`` the precision
      of the ``q`` that was sampled for the zero-order oracle (values describe
      ``f`` only where ``q`` looked), the first precision with derivatives (a
      local model of ``f`` backs the step; a radius shrinking with ``q`` let the
      growing schedule outrun the mean in Rosenbrock's valley). With
      derivatives a step longer than 2 standard deviations of the current ``q``
      per ``sqrt(n)`` must also land where ``f`` is at most the draws' average
      (one evaluation, counted in ``nfev``; :class:`~skvan.van.LongStepCheck`).

    With derivatives the draws' averages of ``grad f`` (and ``hess f``) are
    mixed with the other unbiased estimate the same draws give, the
    score-function one from their values (the gradients' Stein estimate for the
    Hessian), at the weight that minimises their measured variance
    (``MonteCarlo(mixed=True)``): under a ``q`` wide over oscillations of ``f``
    the gradients at the draws are noise the values are not. With both, the
    first- and second-order oracles reach griewank-10's global minimum from 40%
    and 25% of 100 starts (1% and 2% before; BFGS 15%; ``benchmarks/RESULTS.md``).

    Under quadrature the precision is kept above its start, ``P >= P_0``
    (projection of each update onto that set): where ``f`` is concave on average
    over ``q`` the update would lower the precision, and ``q`` could widen
    without bound while its mean drifts. ``sigma0`` is thus also the widest
    ``q`` gets. Monte Carlo curvature is not projected so: the projection would
    clip only its negative noise and shrink ``q`` too early. Instead its first
    update at most doubles the precision (``beta``): with ``beta_0 = 1`` a
    first curvature thousands of times ``P_0`` (10-D Rosenbrock from
    ``sigma0=1.5``) collapsed ``q`` in one step, and the derivative oracles
    reached Rosenbrock's global minimum from 75% and 76% of 100 starts, now 99%
    (``benchmarks/bench_minimize.py``, RESULTS.md), at up to 2.5 times the
    evaluations on an ill-conditioned quadratic.

    On the paper's Figure 1 (``f(x) = -sinc(x - 1)``, start ``-3.2``,
    ``sigma0=1.5``) Newton's method stops in the local minimum at ``-3.48``; with
    each of the three oracles the default reaches the global one at 1, from
    every start in ``[-5, -2]`` (``tests/test_optimize_explore.py``,
    ``examples/plot_sinc.py``). With Monte Carlo expectations (20 draws,
    constant ``beta``) the zero-order oracle does in 99 of 100 seeds, the
    derivative oracles in 56 to 73: sampled Hessians under a wide ``q`` are
    mostly noise.

    References
    ----------
    .. [1] M. E. Khan, W. Lin, V. Tangkaratt, Z. Liu and D. Nielsen, "Variational
       Adaptive-Newton Method for Explorative Learning", AISTATS 2018.
    .. [2] T. Glasmachers, T. Schaul, Y. Sun, D. Wierstra and J. Schmidhuber,
       "Exponential Natural Evolution Strategies", GECCO 2010.
    .. [3] D. Wierstra, T. Schaul, T. Glasmachers, Y. Sun, J. Peters and
       J. Schmidhuber, "Natural Evolution Strategies", JMLR 15, 2014.
    .. [4] T. Schaul, T. Glasmachers and J. Schmidhuber, "High Dimensions and
       Heavy Tails for Natural Evolution Strategies", GECCO 2011 (SNES).
    .. [5] N. Hansen, "The CMA Evolution Strategy: A Tutorial", arXiv:1604.00772,
       2016 (cumulative step-size adaptation and its default rates).

    Examples
    --------
    >>> import numpy as np
    >>> from skvan import minimize
    >>> def f(x):
    ...     return float(np.sum((x - 3.0) ** 2))
    >>> res = minimize(f, np.zeros(2), random_state=0)  # from values alone
    >>> res.success, np.round(res.x, 4)
    (True, array([3., 3.]))
    >>> res = minimize(f, np.zeros(2), jac=lambda x: 2.0 * (x - 3.0), random_state=0)
    >>> res.success, np.round(res.x, 4)
    (True, array([3., 3.]))
    """
    kw = _merge_options(options, dict(
        sigma0=sigma0, beta=beta, beta_growth=beta_growth, covariance=covariance, hessian=hessian,
        expectation=expectation, n_mc_samples=n_mc_samples, fitness_shaping=fitness_shaping,
        max_iter=max_iter, restarts=restarts, vectorized=vectorized, n_jobs=n_jobs,
        random_state=random_state, verbose=verbose))
    _check_scipy_call(method, constraints, args)
    fun, jac, hess = _with_args(fun, jac, hess, hessp, args)
    x0 = _check_x0(x0)
    n = x0.shape[0]
    _resolve_auto(kw, jac, hess, n)
    _check_oracles(jac, hess, kw)
    box = _box(bounds, n)
    if box is not None:
        x0 = box.inverse(_check_within(x0, box))
        fun, jac, hess = box.wrap(fun, jac, hess, kw["vectorized"])
    rng = check_random_state(kw["random_state"])
    callback = None if callback is None else _scipy_callback(callback, box)
    runs = []
    for restart in range(kw["restarts"] + 1):
        runs.append(_run(fun, jac, hess, x0, box, kw, tol, callback, rng, restart))
        if runs[-1].status == 3:  # the callback stopped it
            break
    summary = [{"x": r.x, "fun": r.fun, "status": r.status, "nit": r.nit, "nfev": r.nfev}
               for r in runs]
    best = min(runs, key=lambda r: r.fun)
    last_change = best.pop("last_change")
    if best.status == 1:
        advice = "increase max_iter" + (
            ", or use beta_growth > 1 (a geometric schedule converges linearly)"
            if kw["beta_growth"] == 1 and not kw["fitness_shaping"] else "")
        warn_user(f"skvan.minimize did not converge in max_iter={best.nit} iterations "
                  f"(last mean change {last_change:.3g}); {advice}.",
                  ConvergenceWarning)
    if len(runs) > 1:
        # Honest counts: every evaluation of every run.
        for key in ("nit", "nfev", "njev", "nhev"):
            best[key] = sum(r[key] for r in runs)
        best["runs"] = summary
    return best


def _build_solver(objective, x0, box, kw, tol, callback, rng, restart=0, evaluates=True):
    """The :class:`VANSolver` of one run of :func:`minimize` (and of
    :class:`VANOptimizer`, which passes ``evaluates=False``: the solver may not call
    ``f`` outside the draws) on ``objective`` from ``x0``."""
    n = x0.shape[0]
    sigma0 = kw["sigma0"] * (2.0**restart if kw["expectation"] == "quadrature" else 1.0)
    # sigma0 is in x's units: the bounds' map is the identity inside the box.
    precision = np.full(n, sigma0**-2.0)
    if kw["covariance"] == "full":
        precision = np.diag(precision)
    # Under quadrature q never becomes wider than at the start (Notes). Sampled
    # curvature is not held to it: the projection would clip only its negative
    # noise and bias q towards shrinking.
    family = make_family(kw["covariance"], x0, precision,
                         floor=precision if kw["expectation"] == "quadrature" else None)
    expectation, beta, step = _estimator(n, objective.order, kw, precision, 2**restart,
                                         evaluates)
    # Sampled curvature starts where the first update at most doubles the precision
    # (one estimate under the widest q must not collapse it). Natural evolution
    # strategies' rates are relative already (ranks); under quadrature the first
    # step is an exact Newton step on E_q[f], which on the 1-D suite explored better.
    relative = kw["expectation"] == "mc" and not kw["fitness_shaping"]
    schedule = RelativeGeometricSchedule if relative else GeometricSchedule
    return VANSolver(
        objective, expectation, family, objective="vo",
        schedule=schedule(beta, kw["beta_growth"]), hessian=kw["hessian"],
        step=step, stop=MeanContraction(1e-6 if tol is None else tol, min_scale=kw["sigma0"]),
        max_iter=int(kw["max_iter"]), random_state=rng, verbose=kw["verbose"],
        callback=callback,
    )


def _run(fun, jac, hess, x0, box, kw, tol, callback, rng, restart):
    """One VAN run from ``x0`` (the ``restart``-th: its population, or under
    quadrature its ``sigma0``, doubled that many times); an OptimizeResult with
    this run's counts."""
    objective = FunctionObjective(fun, x0.shape[0], jac=jac, hess=hess,
                                  vectorized=kw["vectorized"], n_jobs=kw["n_jobs"])
    solver = _build_solver(objective, x0, box, kw, tol, callback, rng, restart)
    family = solver.family
    result = solver.solve()
    status, message = _STATUS[result.status]
    if result.status == "stalled" and not any(h["alpha"] > 0 for h in result.history):
        # Only quadrature stalls here (its steps are deterministic). Where the
        # grid's gradient is that of its own estimate, a small enough beta
        # decreases E_q[f] (at a stationary point the step leaves it unchanged,
        # or lowers it by narrowing q, and passes); refused at every beta from
        # the start, the two disagree.
        status, message = _STATUS["stuck"][0], _UNRESOLVED
    x = family.mean.copy() if box is None else box.forward(family.mean)
    return OptimizeResult(
        x=x, fun=float(objective.values(family.mean[None])[0]), nit=result.n_iter,
        nfev=objective.nfev, njev=objective.njev, nhev=objective.nhev,
        success=status == 0, status=status, message=message,
        covariance=_cov(family, box), precision=family.precision.copy(),
        last_change=result.history[-1]["step"] if result.history else np.nan,
    )


#: The names scipy's ``options`` use for two of minimize's parameters.
_SCIPY_OPTIONS = {"maxiter": "max_iter", "disp": "verbose"}


def _merge_options(options, kw):
    """``kw`` updated from scipy-style ``options`` (scipy's names or ours)."""
    for key, value in (options or {}).items():
        name = _SCIPY_OPTIONS.get(key, key)
        if name not in kw:
            raise ValueError(
                f"Unknown option {key!r}; skvan.minimize takes {sorted(_SCIPY_OPTIONS)} (scipy's "
                f"names) and its own keyword parameters {sorted(kw)}."
            )
        kw[name] = int(bool(value)) if name == "verbose" and isinstance(value, bool) else value
    if options:  # the keyword values were validated; these were not
        _check_options(**kw)
    return kw


def _check_options(**kw):
    """Check values that arrived through ``options`` against :func:`minimize`'s own
    constraints (``validate_params`` skips checks nested inside ``minimize``)."""
    validate_parameter_constraints(_OPTION_CONSTRAINTS, kw, caller_name="minimize")


def _check_scipy_call(method, constraints, args):
    if method is not None and method.lower() != "van":
        raise ValueError(
            f"skvan.minimize implements VAN only; method={method!r} is one of scipy's: "
            "use scipy.optimize.minimize for it."
        )
    if constraints is not None and len(constraints) > 0:
        raise ValueError("skvan.minimize handles bounds only, not general constraints.")
    if callable(args):
        raise TypeError(
            "args must hold extra arguments for fun (scipy's convention), got a callable. "
            "Pass the gradient as jac=..., e.g. minimize(fun, x0, jac=grad)."
        )


def _with_args(fun, jac, hess, hessp, args):
    """The callables with ``args`` bound, and ``hess`` from ``hessp`` if need be."""
    args = args if isinstance(args, tuple) else (args,)
    if jac is False:
        jac = None
    if hess is None and hessp is not None:
        def hess(x, *a):
            H = np.column_stack([np.asarray(hessp(x, e, *a), dtype=np.float64)
                                 for e in np.eye(len(x))])
            return 0.5 * (H + H.T)
    if not args:
        return fun, jac, hess
    bind = (lambda g: None if g is None else (lambda x: g(x, *args)))
    return bind(fun), (jac if jac is True else bind(jac)), bind(hess)


def _check_oracles(jac, hess, kw):
    if kw["fitness_shaping"] and (jac is not None or hess is not None):
        raise ValueError(
            "fitness_shaping replaces function values by their ranks and applies to the "
            "zero-order oracle only; drop jac and hess, or set fitness_shaping=False."
        )
    if kw["hessian"] == "gauss_newton" and jac is None:
        raise ValueError(
            "hessian='gauss_newton' needs gradients (E[g g^T]); pass jac, or use "
            "hessian='exact' (estimated from function values)."
        )


def _box(bounds, n):
    """A :class:`BoxTransform` from scipy-style ``bounds``, or None if unbounded."""
    if bounds is None:
        return None
    if isinstance(bounds, Bounds):
        lower, upper = (np.broadcast_to(np.asarray(b, dtype=np.float64), (n,)).copy()
                        for b in (bounds.lb, bounds.ub))
    else:
        pairs = list(bounds)
        if len(pairs) != n or any(len(p) != 2 for p in pairs):
            raise ValueError(f"bounds must hold one (min, max) pair per coordinate ({n}).")
        lower = np.array([-np.inf if p[0] is None else p[0] for p in pairs], dtype=np.float64)
        upper = np.array([np.inf if p[1] is None else p[1] for p in pairs], dtype=np.float64)
    if np.any(np.isnan(lower) | np.isnan(upper)) or np.any(lower >= upper):
        raise ValueError("bounds must have min < max for every coordinate.")
    if np.all(np.isinf(lower)) and np.all(np.isinf(upper)):
        return None
    return BoxTransform(lower, upper)


def _check_within(x0, box):
    if np.any(x0 < box.lower) or np.any(x0 > box.upper):
        raise ValueError("x0 must lie within the bounds.")
    return x0


def _scipy_callback(callback, box):
    """The solver's ``callback(solver)`` calling the user's as scipy does."""
    params = list(inspect.signature(callback).parameters)
    new_style = params == ["intermediate_result"]

    def call(solver):
        mean = solver.family.mean
        x = mean.copy() if box is None else box.forward(mean)
        if new_style:
            callback(OptimizeResult(x=x, fun=solver.expect.value, nit=solver.n_iter,
                                    covariance=_cov(solver.family, box)))
        else:
            callback(x)
    return call


def _resolve_auto(kw, jac, hess, n):
    """Replace the ``"auto"``/None defaults in ``kw`` by what they mean for the
    oracles given in ``n`` dimensions (the Notes of :func:`minimize`)."""
    order = 0 if jac is None and hess is None else (2 if hess is not None else 1)
    if kw["fitness_shaping"] == "auto":
        # Natural evolution strategies' rates are constant: a schedule the user
        # chose asks for the raw estimator.
        kw["fitness_shaping"] = (order == 0 and n >= 2 and kw["expectation"] != "quadrature"
                                 and kw["beta_growth"] is None)
    elif kw["fitness_shaping"] and kw["beta_growth"] not in (None, 1):
        raise ValueError(
            "fitness_shaping runs at natural evolution strategies' constant rates; "
            f"beta_growth={kw['beta_growth']} would make them grow. Leave beta_growth=None."
        )
    if kw["expectation"] == "auto":
        sampled = kw["fitness_shaping"] or kw["n_mc_samples"] is not None
        kw["expectation"] = "quadrature" if not sampled and n == 1 else "mc"
    if kw["expectation"] == "quadrature":
        if kw["fitness_shaping"] or kw["n_mc_samples"] is not None:
            raise ValueError(
                "fitness_shaping and n_mc_samples apply to sampled expectations; "
                "expectation='quadrature' integrates on a fixed grid. Use expectation='mc'."
            )
        if n not in GRID_NODES:
            raise ValueError(
                f"expectation='quadrature' integrates on a tensor grid, in up to "
                f"{max(GRID_NODES)} dimensions; x0 has {n}. Use expectation='mc'."
            )
    if kw["beta_growth"] is None:
        if kw["fitness_shaping"]:
            kw["beta_growth"] = 1.0
        elif order == 0 and kw["expectation"] == "quadrature" and n == 1:
            kw["beta_growth"] = GRID_GROWTH_1D
        else:
            kw["beta_growth"] = DEFAULT_GROWTH


#: The shape update of fitness-shaped zero-order runs with a full covariance:
#: "xnes", the rank-mu update at xNES's rate plus the rank-one update along the
#: mean's evolution path (:class:`~skvan.expectations.RankOnePath`) at
#: :data:`RANK_ONE_FRACTION` of CMA-ES's ``c_1``; or "cma", CMA-ES's rates for both
#: (``c_mu``, ``c_1``). Before either kept the trace of its update (2026-11-27),
#: "cma" needed 20-25% fewer evaluations than the rank-mu update alone on beale,
#: himmelblau, camel and rosenbrock-10 of ``benchmarks/bench_minimize.py``, 20% more
#: on ellipsoid-10, and did worse in policy search (``bench_rl.py``; both with
#: ``--shape-update cma``, benchmarks/RESULTS.md).
SHAPE_UPDATE = "xnes"

#: The rank-one rate of the "xnes" shape update, a fraction of CMA-ES's ``c_1``.
#: The rank-mu part runs at xNES's rate, several times CMA-ES's ``c_mu`` beyond
#: 3-D (0.10 against 0.02 in 10-D), so the shape already adapts faster than
#: CMA-ES's. ``python benchmarks/bench_minimize.py --starts 100 --methods "VAN zero
#: order" --rank-one-fraction F`` for F = 0, 0.25, 0.5, 1 (evaluations to target as
#: a ratio to CMA-ES's): ellipsoid-10 1.18, 1.10, 1.06, 1.03; rosenbrock-10 1.26,
#: 1.04, 0.98, 0.92; successes on beale 92, 92, 92, 85% and griewank-10 39, 38,
#: 36, 32% (CMA-ES 85 and 38%; at 300 starts griewank 35, 37 and 34% for 0.25, 0.5
#: and 1, CMA-ES 37%). 1/2 is within 1.1x on the valleys and keeps the successes.
RANK_ONE_FRACTION = 0.5


def _estimator(n, order, kw, precision, population=1, evaluates=True):
    """The expectation estimator, the ``beta`` to run it with and the step policy.

    - Quadrature is deterministic: whole steps are halved until ``E_q[f]`` does
      not increase (with ``hessian="gauss_newton"``, only the mean step); each
      step starts from the schedule's growth (at least 2) times the last accepted
      ``beta``, and above 2 within :data:`TRUST_RADIUS` of the current ``q``.
    - Monte Carlo with derivatives: the draws' derivatives mixed with the
      score-function estimates from their values (``MonteCarlo(mixed=True)``); a
      trust region of :data:`TRUST_RADIUS` in the first precision's metric (a
      local model of ``f`` backs the step, but its sampling noise is not to be
      followed far) and, if the solver ``evaluates``, steps beyond
      :data:`CHECKED_RADIUS` of the current ``q`` checked by ``f`` at the new mean
      (:class:`~skvan.van.LongStepCheck`).
    - Monte Carlo from values: the same radius in the metric of each iteration's
      ``q`` (the values describe ``f`` only where ``q`` looked).
    - Fitness shaping takes natural evolution strategies' population and rates:
      xNES's for the precision (``n(n+1)/2`` parameters), ``eta_mu = beta`` for
      the mean (``mean_rate = eta_mu / beta_t``); a full family adds CMA-ES's
      cumulative step-size adaptation to the scale and its rank-one update (at
      :data:`RANK_ONE_FRACTION` of ``c_1``) to the shape, a diagonal one adapts
      each variance at SNES's rate.
    """
    beta, radius = kw["beta"], TRUST_RADIUS * np.sqrt(n)
    if kw["expectation"] == "quadrature":
        # Halving the whole step is a descent method for E_q[f] only when the
        # precision grows by E[hess f]: a Gauss-Newton increase narrows q even
        # where f is concave on average, which raises E_q[f] at first order, so
        # there only the mean step is checked (sinc from -3.2: stuck at x0).
        if kw["hessian"] != "exact":
            return GaussHermiteGrid(GRID_NODES[n]), beta, ArmijoMeanStep()
        # The memory lets beta start each step at the schedule's growth times the
        # last accepted one (at least twice). Beyond that doubling a trial often
        # overshoots far past the grid's nodes, and every refusal by the decrease
        # costs a grid of evaluations: the trust region of Monte Carlo from values
        # (in q's metric; no evaluation) refuses those first.
        growth = max(2.0, kw["beta_growth"])
        accept = ObjectiveDecrease()
        if growth > 2.0:
            accept = AllOf(TrustRegion(radius), accept)
        step = BetaBacktrack(accept, memory=True, growth=growth)
        return GaussHermiteGrid(GRID_NODES[n]), beta, step
    n_mc_samples = kw["n_mc_samples"]
    if not kw["fitness_shaping"]:
        draws = (2 * (n + 1) if n_mc_samples is None else n_mc_samples) * population
        if order == 0:
            return MonteCarlo(draws), beta, BetaBacktrack(TrustRegion(radius))
        accept = TrustRegion(radius, precision)
        if evaluates:
            accept = AllOf(accept, LongStepCheck(CHECKED_RADIUS))
        return MonteCarlo(draws, mixed=True), beta, BetaBacktrack(accept)
    if n_mc_samples is None:
        n_mc_samples = 2 * ((5 + int(3 * np.log(n))) // 2)
    n_mc_samples *= population
    eta_scale = (3.0 + np.log(n)) / (5.0 * np.sqrt(n))
    eta_shape = 3.0 * (3.0 + np.log(n)) / (5.0 * n * np.sqrt(n))
    scale_path = shape_path = None
    if kw["covariance"] == "full":
        fraction = RANK_ONE_FRACTION
        if SHAPE_UPDATE == "cma":
            eta_shape, fraction = cma_rates(n, n_mc_samples)[1], 1.0
        scale_path = CumulativeScale(n, beta * eta_shape)
        if fraction > 0:
            shape_path = RankOnePath(n, beta * eta_shape, scale_path, c1_fraction=fraction)
    expectation = MonteCarlo(n_mc_samples, fitness_shaping=True, mean_rate=1.0 / eta_shape,
                             scale_rate=eta_scale / eta_shape, scale_path=scale_path,
                             shape_path=shape_path)
    return expectation, beta * eta_shape, BetaBacktrack(TrustRegion(radius))


def _check_x0(x0):
    """``x0`` as a finite, non-empty 1-D float64 array (a copy), or a ValueError."""
    x0 = np.atleast_1d(np.asarray(x0))
    if np.iscomplexobj(x0) or not (np.issubdtype(x0.dtype, np.number) or x0.dtype == bool):
        raise ValueError(f"x0 must be an array of real numbers, got dtype {x0.dtype}.")
    x0 = x0.astype(np.float64)
    if x0.ndim != 1 or x0.size == 0 or not np.all(np.isfinite(x0)):
        raise ValueError(
            f"x0 must be a finite, non-empty 1-D array, got shape {x0.shape}"
            + ("" if np.all(np.isfinite(x0)) else " with NaN or inf") + "."
        )
    return x0


def _cov(family, box=None):
    """``q``'s covariance over ``x`` (the delta method through the bounds' ``T``)."""
    cov = np.diag(family.sigma) if family.diagonal else family.sigma.copy()
    if box is None:
        return cov
    d1 = box.derivatives(family.mean)[0]
    return d1[:, None] * cov * d1[None, :]


def _told(*args):
    """Placeholder oracle of :class:`VANOptimizer`: its evaluations come through
    ``tell`` (a module-level function, so that the optimiser pickles)."""
    raise RuntimeError("VANOptimizer evaluates nothing itself: pass the values to tell().")


class VANOptimizer:
    """VAN as an ask/tell optimiser: a loop the user owns evaluates ``f``.

    The same solver as :func:`minimize` (its Monte Carlo path, with the same
    defaults), driven one iteration at a time: :meth:`ask` returns the points at
    which this iteration needs ``f`` (draws of ``q = N(mean, covariance)`` in
    antithetic pairs, preceded by the mean for the raw zero-order estimator),
    :meth:`tell` takes what the user measured there and makes the VAN step::

        opt = VANOptimizer(x0, order=1, random_state=0)
        while not opt.stop:
            X = opt.ask()
            opt.tell([f(x) for x in X], [grad(x) for x in X])

    With the same arguments and seed this reproduces :func:`minimize` bit for
    bit (``expectation="mc"``). The user may evaluate on a minibatch, a
    simulator or a network in any framework; the values then are noisy
    estimates of ``f``, as are Monte Carlo expectations anyway.

    Parameters
    ----------
    x0 : array-like of shape (n,)
        Initial mean of ``q``.
    order : {0, 1, 2}, default=0
        What :meth:`tell` receives: values (0), values and gradients (1), values,
        gradients and Hessians (2; with ``hessian="gauss_newton"`` gradients
        suffice).
    sigma0 : float, default=1.0
        Initial standard deviation of ``q``, ``> 0`` (as in :func:`minimize`).
    beta : float, default=1.0
        Step size, ``> 0``; with Monte Carlo expectations (not fitness-shaped)
        relative to the first curvature as in :func:`minimize`.
    beta_growth : float or None, default=None
        ``beta_t = beta_0 * beta_growth**t``, ``>= 1``; None: 1.2, or 1 with
        fitness shaping.
    covariance : {"full", "diag"}, default="full"
        Full or diagonal covariance (VAN-D; with ``order=1`` and
        ``hessian="gauss_newton"``, sVAG-D).
    hessian : {"exact", "gauss_newton"}, default="exact"
        Expected Hessian, or ``E[g g^T]`` from the told gradients (VAG).
    n_mc_samples : int or None, default=None
        Draws per iteration, ``>= 2`` (pairs); None as in :func:`minimize`.
    fitness_shaping : bool or "auto", default="auto"
        Ranks instead of values (``order=0`` only); "auto": for ``n >= 2``.
    tol : float or None, default=None
        Convergence tolerance on the mean, ``>= 0``; None is 1e-6.
    max_iter : int, default=500
        Iterations (with ``stochastic``: data passes, counted by ``tell``'s
        ``fraction``) before the run stops with a ``ConvergenceWarning``, ``>= 1``.
    stochastic : bool, default=False
        The told values are noisy estimates of ``f`` (minibatches): sVAN, as the
        estimators' ``batch_size`` runs, with
        :class:`~skvan.van.AveragingSchedule` (curvature averaged with linearly
        growing weights, mean steps ``2 / (t + 2)`` of a Newton step on it;
        ``beta`` the exploration dial), unchecked steps, and
        :class:`~skvan.van.PassChange` as the convergence test (the mean's change
        over a data pass).
    random_state : int, RandomState instance or None, default=None
        Seeds the draws.

    Attributes
    ----------
    mean : ndarray of shape (n,)
        The mean of ``q`` (a copy).
    covariance : ndarray of shape (n, n)
        Its covariance (diagonal for ``covariance="diag"``).
    precision : ndarray
        Its precision as the family stores it.
    n_iter : int
        Completed iterations (calls of :meth:`tell`).
    nfev, njev, nhev : int
        Points told, with gradients, with Hessians.
    status : {None, "converged", "stalled", "stuck", "max_iter", "diverged", "flat"}
        None while running.
    stop : bool
        Whether the run has ended (then :meth:`ask` raises).

    See Also
    --------
    minimize : The same solver with the loop inside.

    Notes
    -----
    Only Monte Carlo expectations: the Gauss-Hermite grid of :func:`minimize`
    checks each step on ``E_q[f]`` at trial means, which would need more
    evaluations than one ask per iteration. Steps are safeguarded by the
    trust region of :func:`minimize`'s Monte Carlo path, which needs no
    evaluation, without its check of long steps with derivatives (one
    evaluation at the new mean; :class:`~skvan.van.LongStepCheck`). The state
    (``q``, the random generator, the schedule, the convergence test) is plain
    Python and numpy: an optimiser pickles between ``tell`` and ``ask`` and
    resumes identically.

    References
    ----------
    .. [1] M. E. Khan, W. Lin, V. Tangkaratt, Z. Liu and D. Nielsen, "Variational
       Adaptive-Newton Method for Explorative Learning", AISTATS 2018.

    Examples
    --------
    >>> import numpy as np
    >>> from skvan.optimize import VANOptimizer
    >>> opt = VANOptimizer(np.zeros(2), order=1, random_state=0)
    >>> while not opt.stop:
    ...     X = opt.ask()
    ...     _ = opt.tell(np.sum((X - 3.0) ** 2, axis=1), 2.0 * (X - 3.0))
    >>> opt.status, np.round(opt.mean, 4)
    ('converged', array([3., 3.]))
    """

    def __init__(self, x0, *, order=0, sigma0=1.0, beta=1.0, beta_growth=None, covariance="full",
                 hessian="exact", n_mc_samples=None, fitness_shaping="auto", tol=None,
                 max_iter=500, stochastic=False, random_state=None):
        if order not in (0, 1, 2):
            raise ValueError(f"order must be 0, 1 or 2, got {order!r}.")
        if tol is not None and not (isinstance(tol, Real) and tol >= 0):
            raise ValueError(f"tol must be a number >= 0 or None, got {tol!r}.")
        kw = dict(sigma0=sigma0, beta=beta, beta_growth=beta_growth, covariance=covariance,
                  hessian=hessian, expectation="mc", n_mc_samples=n_mc_samples,
                  fitness_shaping=fitness_shaping, max_iter=max_iter, restarts=0,
                  vectorized=False, n_jobs=None, random_state=random_state, verbose=0)
        validate_parameter_constraints(_OPTION_CONSTRAINTS, kw, caller_name="VANOptimizer")
        x0 = _check_x0(x0)
        jac = _told if order >= 1 else None
        hess = _told if order == 2 else None
        _resolve_auto(kw, jac, hess, x0.shape[0])
        _check_oracles(jac, hess, kw)
        self.order = order
        self._objective = FunctionObjective(_told, x0.shape[0], jac=jac, hess=hess)
        self._solver = _build_solver(self._objective, x0, None, kw, tol, None,
                                     check_random_state(random_state), evaluates=False)
        self.stochastic = bool(stochastic)
        if self.stochastic:
            if kw["fitness_shaping"]:
                raise ValueError("stochastic runs average curvature estimates; fitness_shaping "
                                 "ranks them. Set fitness_shaping=False or use order >= 1.")
            self._solver.schedule = AveragingSchedule(beta)
            self._solver.step = FullStep()
            self._solver.stop = PassChange(1e-5 if tol is None else tol)
        self._solver.setup()
        self._pending = None
        self.status = None
        self.n_iter = 0
        self.nfev = self.njev = self.nhev = 0

    @property
    def stop(self):
        return self.status is not None

    @property
    def mean(self):
        return self._solver.family.mean.copy()

    @property
    def covariance(self):
        return _cov(self._solver.family)

    @property
    def precision(self):
        return self._solver.family.precision.copy()

    def ask(self):
        """Return the points at which this iteration needs ``f``.

        Returns
        -------
        points : ndarray of shape (n_points, n)
            Where to evaluate ``f`` (and its derivatives, by ``order``).
        """
        if self.stop:
            raise RuntimeError(
                f"The run has ended (status {self.status!r}); read mean or result().")
        if self._pending is not None:
            raise RuntimeError(
                "ask() again before tell(): tell the values at the last points first.")
        solver = self._solver
        Z, points = solver.expectation.points(solver.family, solver.rng, self.order)
        self._pending = (Z, points)
        return points.copy()

    def tell(self, values, gradients=None, hessians=None, fraction=None):
        """Make the VAN step from ``f`` at the last :meth:`ask`'s points.

        Parameters
        ----------
        values : array-like of shape (n_points,)
            ``f`` at the points.
        gradients : array-like of shape (n_points, n) or None, default=None
            Its gradients; needed for ``order >= 1``.
        hessians : array-like of shape (n_points, n, n) or None, default=None
            Its Hessians, or the curvature the user computes in their place
            (a Gauss-Newton ``J^T J``; for VAG the sum of per-example gradients'
            outer products); needed for ``order=2`` unless
            ``hessian="gauss_newton"``. For ``covariance="diag"`` their diagonals,
            shape ``(n_points, n)``, suffice.
        fraction : float or None, default=None
            The share of the data the values come from, in ``(0, 1]`` (a
            minibatch of ``m`` of ``N`` rows: ``m / N``); data passes count by
            it. None is 1.

        Returns
        -------
        self : VANOptimizer
            The optimiser, one iteration further.
        """
        if self._pending is None:
            raise RuntimeError("tell() without ask(): ask for the points first.")
        Z, points = self._pending
        k, n = points.shape
        solver = self._solver
        exact_hessians = self.order == 2 and solver.hessian != "gauss_newton"
        values = _told_array("values", values, (k,))
        gradients = _told_array("gradients", gradients, (k, n)) if self.order >= 1 else None
        if exact_hessians:
            diagonals = solver.family.diagonal and np.ndim(hessians) == 2
            hessians = _told_array("hessians", hessians, (k, n) if diagonals else (k, n, n))
        fraction = 1.0 if fraction is None else float(fraction)
        if not 0.0 < fraction <= 1.0:
            raise ValueError(f"fraction must be in (0, 1], got {fraction}.")
        self._pending = None
        self.nfev += k
        self.njev += k if self.order >= 1 else 0
        self.nhev += k if exact_hessians else 0
        solver.iteration = self.n_iter
        solver.batch = solver.f
        solver.n_data_passes += fraction
        solver.expect = solver.expectation.combine(
            solver.family, Z, self.order, values, gradients, hessians, solver.hessian)
        if not solver.expectations_finite():
            self.status = "diverged"
        elif solver.advance():
            self.status = solver.status
        self.n_iter = solver.n_iter if self.status != "diverged" else self.n_iter
        # Iterations, or data passes for a stochastic run (round-off of summed
        # fractions forgiven).
        spent = solver.n_data_passes + 1e-9 if self.stochastic else self.n_iter
        if self.status is None and spent >= solver.max_iter:
            self.status = "max_iter"
            unit = "data passes" if self.stochastic else "iterations"
            warn_user(f"VANOptimizer did not converge in max_iter={solver.max_iter} {unit}; "
                      "create it with a larger max_iter.", ConvergenceWarning)
        if self.stop:
            solver.family.finalize()
        return self

    def result(self):
        """Return the run so far as :func:`minimize` reports it.

        Returns
        -------
        result : scipy.optimize.OptimizeResult
            ``x`` (the mean), ``fun`` (the last estimate of ``E_q[f]``: no extra
            evaluation at the mean), ``nit``, ``nfev``, ``njev``, ``nhev``,
            ``success``, ``status`` (-1 while running), ``message``,
            ``covariance`` and ``precision``.
        """
        status, message = _STATUS.get(self.status, (-1, "Running."))
        solver = self._solver
        return OptimizeResult(
            x=self.mean, fun=float(solver.expect.value) if hasattr(solver, "expect") else np.nan,
            nit=self.n_iter, nfev=self.nfev, njev=self.njev, nhev=self.nhev,
            success=status == 0, status=status, message=message,
            covariance=self.covariance, precision=self.precision,
        )


def _told_array(name, value, shape):
    """What ``tell`` received as a finite float64 array of ``shape``, or a ValueError."""
    if value is None:
        raise ValueError(f"tell() needs {name} of shape {shape} for this optimiser's order.")
    a = _shaped(name, value, shape, role="be")  # one per asked point
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} contain NaN or inf.")
    return a
