"""``skvan.minimize``: VAN for any function, with or without derivatives."""

import inspect
from numbers import Real

import numpy as np
from scipy.optimize import OptimizeResult
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state

from .._compat import Interval, StrOptions, validate_params
from .._warnings import warn_user
from ..van import MESSAGES
from . import _first_order
from ._build import build_solver
from ._oracle import FINITE_DIFFERENCES, Oracle
from ._settings import KEYWORD_CONSTRAINTS, check_x0, make_box, merge_options, resolve

#: scipy's integer ``status`` for each solver status, and its message.
STATUS = {
    "converged": (0, "The mean converged: its estimated distance to the fixed point is below "
                     "tol, and x passed the first-order test."),
    "stalled": (0, "No step decreased the objective beyond round-off: the mean is stationary "
                   "to working precision, and x passed the first-order test."),
    "max_iter": (1, "Maximum number of iterations reached."),
    "diverged": (2, "Stopped: the expected gradient or curvature was not finite."),
    "stopped": (3, "Stopped by the callback."),
    "flat": (4, MESSAGES["flat"] + " f may be constant over a wide region, or its values "
                "too coarse for the ranks to tell the draws apart."),
    "stuck": (5, MESSAGES["stuck"]),
}

#: Status 1 when ``maxfev`` ended the run.
MAXFEV = (1, "Maximum number of function evaluations reached (maxfev).")

#: Status 5 for a quadrature run whose every step was refused from the first
#: iteration on.
UNRESOLVED = (
    5, "No step decreased the grid's estimate of E_q[f] from the start: its gradient "
       "disagrees with its values, as where f varies on scales finer than the "
       "Gauss-Hermite nodes resolve (about sigma0 / 2 apart near the mean). Try a "
       "smaller sigma0, or expectation='mc'."
)

#: Status 7: ``f`` was not finite at any point of an iteration, or at ``x``.
NONFINITE = (
    7, "Stopped: f was not finite (NaN or inf) at any point of an iteration, or at the "
       "final mean. Give bounds that exclude where f is undefined, or a smaller sigma0."
)


@validate_params(
    {
        "fun": [callable],
        "x0": ["array-like", Real],
        "args": "no_validation",
        "method": [str, None],
        "jac": [callable, "boolean", StrOptions(set(FINITE_DIFFERENCES)), None],
        "hess": [callable, None],
        "hessp": [callable, None],
        "bounds": "no_validation",
        "constraints": "no_validation",
        "tol": [Interval(Real, 0, None, closed="left"), None],
        "callback": [callable, None],
        "options": [dict, None],
        **KEYWORD_CONSTRAINTS,
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
    x0 : array-like of shape (n,) or float
        Initial mean of ``q`` (a scalar is a 1-D problem; ``x`` then has shape (1,)).
    args : tuple, default=()
        Extra arguments passed to ``fun``, ``jac``, ``hess`` and ``hessp``, as in
        scipy (a single non-tuple value is wrapped in a tuple).
    method : {None, "VAN"}, default=None
        Accepted for scipy's calling convention; other names are scipy's methods
        (use :func:`scipy.optimize.minimize`).
    jac : callable, True, {"2-point", "3-point", "cs"} or None, default=None
        Gradient ``jac(x, *args)``, True if ``fun`` returns it, scipy's
        finite-difference schemes (forward, central, complex step; within the
        bounds, their evaluations counted in ``nfev``), or None (zero order).
    hess : callable or None, default=None
        Hessian ``hess(x, *args)``; needs ``jac``. With ``jac`` alone VAN
        estimates the expected Hessian from the gradients it already has.
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
        ``tol * max(|mu|_inf, sigma0)``, ``>= 0``; None is 1e-6. It also sets
        the first-order test's default tolerance (``gtol``).
    callback : callable or None, default=None
        Called after each iteration, as in scipy: ``callback(intermediate_result)``
        if its only parameter is named ``intermediate_result`` (an
        OptimizeResult with ``x``, ``fun`` (the estimate of ``E_q[f]``), ``nit``
        and ``covariance``), otherwise ``callback(xk)``. Raising StopIteration
        stops the run (``status`` 3).
    options : dict or None, default=None
        Method options, which take precedence over the keywords: scipy's
        ``maxiter`` (``max_iter``), ``disp`` (``verbose``), ``gtol`` (the
        first-order test's tolerance on the projected gradient's max norm,
        absolute as in scipy; None: relative, Notes) and ``maxfev`` (a budget
        of evaluations of ``fun`` over all runs; status 1 when it ends a run),
        any keyword-only parameter below by name, and the settings of the step
        safeguards and the zero-order estimator: ``trust_radius`` (default 2:
        sampled steps stay within that many standard deviations of ``q`` per
        ``sqrt(n)``), ``checked_radius`` (2: with derivatives, longer steps are
        checked by ``f`` at the new mean), ``grid_nodes`` (Gauss-Hermite nodes
        per dimension; None: 21 in 1-D, 6 in 2-D), ``shape_update`` ("xnes" or
        "cma") and ``rank_one_fraction`` (0.5), and the continuation's
        ``step_noise`` (0.5: the mean step's sampling noise, in standard
        deviations of ``q``, above which the steps shorten and ``q`` waits), see
        Notes.
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
        ``beta_t = beta_0 * beta_growth**t``, ``>= 1``. ``g > 1`` shrinks ``q`` by
        about ``1/g`` per iteration: linear convergence. With Monte Carlo
        expectations and no bounds it is the pace of a continuation (Notes): each
        mean step is a whole Newton step on ``E_q[f]`` while the estimates are
        accurate, and ``q`` waits while they are not. Otherwise each mean step is
        ``(g-1)/g`` of a Newton step once the running sum dominates the start.
        ``g = 1``, the paper's constant step, keeps ``q`` wide longest, with mean
        steps of about ``1/t`` of a Newton step (convergence ~1/t). None is 1.2,
        1 with ``fitness_shaping`` (natural evolution strategies' constant
        rates), and 8 from values on the 1-D grid, where the step safeguard sets
        the pace (each step from the last accepted ``beta`` times the growth,
        halved until ``E_q[f]`` decreases within a trust region).
    covariance : {"full", "diag"}, default="full"
        Full or diagonal covariance (VAN-D).
    hessian : {"exact", "gauss_newton"}, default="exact"
        Expected Hessian (estimated as above), or ``E[grad f grad f^T]`` (VAG; needs
        ``jac``). The precision stays positive definite either way: an indefinite
        estimate is projected onto the PSD cone when it would break definiteness.
        The Gauss-Newton curvature is never negative, so it narrows ``q`` even
        where ``f`` is concave on average and explores less.
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
        are those of evolution strategies (Notes). "auto" uses it for the
        zero-order oracle in ``n >= 2`` dimensions unless ``beta_growth`` is
        set; ``False`` keeps the paper's raw estimator.
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
        ``x`` (the final mean, through the bounds' map), ``fun`` (``f(x)``, one
        extra evaluation, with the gradient there: the user's, or a finite
        difference from values), ``optimality`` (the projected gradient's max
        norm at ``x``, as scipy's ``trust-constr`` reports it), ``nit``,
        ``nfev``/``njev``/``nhev`` (points at which ``fun``/the gradient/the
        Hessian were evaluated, including those at ``x`` and, for the default
        ``gtol``, ``f(x0)``), ``success``, ``status``, ``message``, ``covariance``
        (an ``(n, n)`` matrix, diagonal for ``covariance="diag"``) and
        ``precision`` (as the family stores it: ``(n, n)``, or ``(n,)`` for
        "diag") of the final ``q``; with ``restarts``, also ``runs``. ``status``:
        0 converged (``success``: the mean converged and ``x`` passed the
        first-order test), 1 ``max_iter`` or ``maxfev``, 2 non-finite
        expectations, 3 callback, 4 flat fitness (fitness-shaped values all tied
        in 10 successive iterations), 5 every step refused before the mean
        settled (under quadrature from the first iteration on, where ``f`` varies
        on scales finer than the grid's nodes resolve), 6 the mean converged
        where ``x`` is not a first-order point, 7 ``f`` not finite at any point of
        an iteration or at ``x``.

    Warns
    -----
    ConvergenceWarning
        When the best run ended at ``max_iter``.
    RuntimeWarning
        When ``fun`` returned NaN or inf at some points (values alone), with
        their count.

    See Also
    --------
    scipy.optimize.minimize : Deterministic local optimisers.
    VANOptimizer : The same solver as an ask/tell loop.

    Notes
    -----
    **Success.** The mean's convergence test alone can pass where ``q`` narrowed
    before its mean arrived, so ``success`` also needs ``x`` to be a first-order
    point: the projected gradient ``x - clip(x - grad f(x))`` (the gradient
    without bounds; ``optimality``) at most ``gtol``, or by default at most
    ``1e3 tol max(|f(x)|, |f(x0) - f(x)|) / max(|x|_inf, sigma0)``: the slope
    left at ``x`` is a small fraction of what ``f`` changed on the way. Runs that
    fail it end with status 6 and say what to change.

    **Values that are not finite.** From values alone a NaN or inf is a failed
    evaluation: it counts as the worst value of its iteration's batch (it ranks
    last under fitness shaping; the raw estimator and the grid take the batch's
    largest finite value), so the estimates point away from where ``f`` is
    undefined. A warning counts them, and an iteration without a finite value
    ends the run (status 7). With derivatives such a value is a ValueError
    naming the point.

    **Fitness shaping.** The zero-order estimates use, in place of
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
    ``rank_one_fraction`` of CMA-ES's rate), which stretches ``q`` along a valley
    the mean follows. ``shape_update="cma"`` takes CMA-ES's rates for both. The
    diagonal family adapts each variance at separable NES's scale rate. Where
    every draw's value ties (a plateau) the mean stays, ``q`` widens, and ten
    such iterations in a row end the run (status 4). ``python
    benchmarks/bench_minimize.py`` compares the evaluations and successes with
    CMA-ES's.

    **Step safeguards.** The same solver fits
    :class:`~skvan.VANLogisticRegression`. Each step is safeguarded by halving
    ``beta_t`` for the whole step (precision and mean):

    - under quadrature, until ``E_q[f]`` does not increase (from values in 1-D
      each step starts at 8 times the last accepted ``beta``, and trials beyond
      the trust region below are refused before the grid is evaluated there);
    - with Monte Carlo, whose values cannot be compared, until the mean step is
      within a trust region ``sqrt(d^T M d) <= trust_radius sqrt(n)``: ``M`` the
      precision of the ``q`` that was sampled for the zero-order oracle (values
      describe ``f`` only where ``q`` looked), the first precision with
      derivatives (a local model of ``f`` backs the step; a radius shrinking with
      ``q`` would let the growing schedule outrun the mean in a curved valley).
      With derivatives a step longer than ``checked_radius`` standard deviations
      of the current ``q`` per ``sqrt(n)`` must also land where ``f`` is at most
      the draws' average (one evaluation, counted in ``nfev``;
      :class:`~skvan.van.LongStepCheck`).

    **Mixed estimates.** With derivatives the draws' averages of ``grad f`` (and
    ``hess f``) are mixed with the other unbiased estimate the same draws give,
    the score-function one from their values (the gradients' Stein estimate for
    the Hessian), at the weight that minimises their measured variance
    (``MonteCarlo(mixed=True)``): under a ``q`` wide over oscillations of ``f``
    the gradients at the draws are noise the values are not.

    **How wide q stays.** Under quadrature the precision is kept above its
    start, ``P >= P_0`` (projection of each update onto that set): where ``f`` is
    concave on average over ``q`` the update would lower the precision, and ``q``
    could widen without bound while its mean drifts; ``sigma0`` is thus also the
    widest ``q`` gets. Monte Carlo curvature is not projected so (the projection
    would clip only its negative noise and shrink ``q`` too early); instead its
    first update at most doubles the precision (``beta``), so that one steep
    estimate under the widest ``q`` does not collapse it.

    **Continuation.** With Monte Carlo expectations, no bounds and ``beta_growth
    > 1`` (every oracle but fitness-shaped values) the mean takes whole Newton
    steps on ``E_q[f]``, the Gaussian smoothing of ``f``: ``mu <- mu - S_t P^-1
    E_q[grad f]`` with ``S_t`` the weight the precision has accumulated on the
    curvatures (:class:`~skvan.van.ContinuationSchedule`). It keeps to the
    minimiser of the current smoothing while ``q`` narrows, so that it crosses
    the ridges the smoothing removed before ``q`` is narrow enough for them to
    reappear (the paper's ``(g-1)/g`` of a Newton step lets ``q`` narrow around a
    mean that has not followed). Where the draws' derivatives are mostly noise
    (``q`` wide over steep or oscillating parts of ``f``) a Newton step would
    amplify it: the step shrinks to the share ``rho`` at which its measured noise
    is ``step_noise`` standard deviations of ``q``, and ``q`` narrows at ``rho^2``
    of the schedule's pace (at least 1/50 of it per iteration). The run does not
    stop while ``q`` is wider than ``sqrt(tol)`` times the scale: the smoothing's
    minimiser lies ``O(sigma^2)`` from ``f``'s. ``python
    benchmarks/bench_minimize.py --explore --starts 100`` measures it on tilted
    double wells, ripples and Rastrigin's function in 2, 5 and 10 dimensions,
    started in a non-global basin, against CMA-ES, BFGS and Nelder-Mead
    (``benchmarks/RESULTS.md``). What to expect, from 100 starts each at
    ``sigma0 = 1``:

    - gradients or Hessians, a ridge between basins (tilted double wells): the
      global basin from 82 to 100% of starts in 2, 5 and 10 dimensions, where
      BFGS stays in the start's basin and CMA-ES leaves it from 4 to 42%; at
      2,200 to 15,000 evaluations (4 to 7 times CMA-ES's);
    - gradients or Hessians, ripples of period ``sigma0`` (a bowl under them,
      or Rastrigin's function): 13 to 39%, against CMA-ES's 0 to 21%; the
      sampled derivatives are mostly noise there, the pace falls and most runs
      end at ``max_iter`` (a ConvergenceWarning) with ``q`` still narrowing;
    - values alone (fitness-shaped: evolution strategies' constant rates, no
      continuation): about CMA-ES's success and evaluations, 31 to 60% on the
      wells in 2 and 5 dimensions and 0 to 17% on the ripples.

    Under quadrature (one dimension by default) the paper's steps remain: with
    a deterministic rule whole Newton steps stop at points ``f`` is symmetric
    about, which every smoothing keeps stationary.

    **Exploration.** On the paper's Figure 1 (``f(x) = -sinc(x - 1)``, start
    ``-3.2``, ``sigma0=1.5``) Newton's method stops in the local minimum at
    ``-3.48``; the default reaches the global one at 1 with each of the three
    oracles (``tests/test_optimize_explore.py``, ``examples/plot_sinc.py``).
    With Monte Carlo expectations, sampled Hessians under a wide ``q`` are
    mostly noise, and the zero-order oracle explores best.

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
       2016 (cumulative step-size adaptation, its default rates, and the
       boundary handling by a linear-quadratic map).

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
    >>> res = minimize(f, [0.5, 0.5], jac="3-point", bounds=[(0, 1), (0, 2)], random_state=0)
    >>> np.round(res.x, 4)
    array([1., 2.])
    """
    merged = merge_options(options, dict(
        sigma0=sigma0, beta=beta, beta_growth=beta_growth, covariance=covariance, hessian=hessian,
        expectation=expectation, n_mc_samples=n_mc_samples, fitness_shaping=fitness_shaping,
        max_iter=max_iter, restarts=restarts, vectorized=vectorized, n_jobs=n_jobs,
        random_state=random_state, verbose=verbose))
    check_scipy_call(method, constraints, args, hess, jac)
    x0 = check_x0(x0)
    box = make_box(bounds, x0)
    oracle = Oracle(fun, jac, hess, hessp, args, box, merged["vectorized"], merged["n_jobs"])
    settings = resolve(merged, oracle.order, x0.shape[0], tol)
    rng = check_random_state(merged["random_state"])
    user = oracle.user(x0.shape[0])
    f_start = float(user.values(x0[None])[0]) if settings.gtol is None else np.nan
    runs, spent = [], user.nfev
    for restart in range(settings.restarts + 1):
        runs.append(_run(oracle, x0, settings, callback, rng, restart, f_start, spent))
        spent += runs[-1].nfev
        if runs[-1].status == 3 or runs[-1].pop("budget_spent"):
            break
    return _best(runs, settings, user)


def check_scipy_call(method, constraints, args, hess, jac):
    """scipy's arguments that VAN does not take, refused with what to do instead."""
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
    if hess is not None and jac is None:
        raise ValueError("hess requires jac: pass the gradient too (jac=callable or jac=True).")


def _run(oracle, x0, settings, callback, rng, restart, f_start, spent):
    """One VAN run from ``x0`` (the ``restart``-th), its first-order test and its
    OptimizeResult (this run's counts; ``spent``: evaluations before it)."""
    n, box = x0.shape[0], oracle.box
    objective = oracle.searched(n)
    budget = _Budget(objective, None if settings.maxfev is None else settings.maxfev - spent)
    solver = build_solver(objective, x0 if box is None else box.initial(x0), settings,
                          callback=budget.wrap(_scipy_callback(callback, box)), rng=rng,
                          restart=restart, bounded=box is not None)
    result = solver.solve()
    family = solver.family
    x = family.mean.copy() if box is None else box.forward(family.mean)
    user = oracle.user(n)
    f_x, grad = _final_point(user, x, settings, box)
    lower, upper = (-np.inf, np.inf) if box is None else (box.lower, box.upper)
    kkt = _first_order.optimality(x, grad, lower, upper) if grad is not None else np.nan
    limit = _first_order.tolerance(settings.gtol, settings.tol, f_x, f_start, x, settings.sigma0)
    status, message = _status(result, objective, budget, f_x, kkt, limit)
    return OptimizeResult(
        x=x, fun=f_x, optimality=kkt, nit=result.n_iter,
        nfev=objective.nfev + user.nfev + oracle.finite_difference_calls(),
        njev=objective.njev + user.njev, nhev=objective.nhev,
        success=status == 0, status=status, message=message,
        covariance=_cov(family, box), precision=family.precision.copy(),
        last_change=result.history[-1]["change"] if result.history else np.nan,
        n_nonfinite=objective.n_nonfinite + user.n_nonfinite, budget_spent=budget.spent,
    )


def _final_point(user, x, settings, box):
    """``f(x)`` and the gradient there (the user's, or a finite difference from
    values; None where ``f(x)`` is not finite)."""
    if settings.order >= 1:
        values, grads = user.values_gradients(x[None])
        return float(values[0]), grads[0]
    f_x = float(user.values(x[None])[0])
    if not np.isfinite(f_x):
        return f_x, None
    lower, upper = (-np.inf, np.inf) if box is None else (box.lower, box.upper)
    grad = _first_order.fd_gradient(user.values, x, f_x, "3-point", lower, upper)
    return f_x, grad if np.all(np.isfinite(grad)) else None


def _status(result, objective, budget, f_x, kkt, limit):
    """scipy's ``(status, message)`` of a run."""
    if budget.spent and result.status == "stopped":
        return MAXFEV
    if result.status == "diverged" and objective.n_nonfinite:
        return NONFINITE
    if result.status == "stalled" and not any(h["fraction"] > 0 for h in result.history):
        # Only quadrature stalls here (its steps are deterministic): refused at
        # every beta from the start, the grid's gradient and values disagree.
        return UNRESOLVED
    status, message = STATUS[result.status]
    if status != 0:
        return status, message
    if not np.isfinite(f_x) or not np.isfinite(kkt):
        return NONFINITE
    if kkt > limit:
        return 6, (
            f"The mean converged, but x is not a first-order point: the projected "
            f"gradient's max norm there is {kkt:.3g}, above the tolerance {limit:.3g} "
            "(gtol). q narrowed before its mean arrived: increase sigma0 or max_iter, "
            "lower beta_growth or tol, or start nearer; or pass a larger gtol in "
            "options where f is noisy."
        )
    return status, message


class _Budget:
    """``maxfev``: a solver callback that stops the run once ``objective`` has made
    ``limit`` evaluations (``spent`` then says so)."""

    def __init__(self, objective, limit):
        self.objective, self.limit, self.spent = objective, limit, False

    def wrap(self, callback):
        if self.limit is None:
            return callback

        def call(solver):
            if callback is not None:
                callback(solver)
            if self.objective.nfev >= self.limit:
                self.spent = True
                raise StopIteration
        return call


def _best(runs, settings, user):
    """The run with the lowest ``f(x)``, with every run's counts and the warnings."""
    best = min(runs, key=lambda r: r.fun if np.isfinite(r.fun) else np.inf)
    last_change = best.pop("last_change")
    nonfinite = sum(r.pop("n_nonfinite") for r in runs)
    if best.status == 1 and best.message == STATUS["max_iter"][1]:
        advice = "increase max_iter" + (
            ", or use beta_growth > 1 (a geometric schedule converges linearly)"
            if settings.beta_growth == 1 and not settings.fitness_shaping else "")
        warn_user(f"skvan.minimize did not converge in max_iter={best.nit} iterations "
                  f"(last mean change {last_change:.3g}); {advice}.", ConvergenceWarning)
    if nonfinite:
        warn_user(f"fun returned NaN or inf at {nonfinite} of {sum(r.nfev for r in runs)} "
                  "points; each counted as the worst value of its batch.", RuntimeWarning)
    if len(runs) > 1:
        # Honest counts: every evaluation of every run.
        best["runs"] = [{"x": r.x, "fun": r.fun, "status": r.status, "nit": r.nit,
                         "nfev": r.nfev} for r in runs]
        for key in ("nit", "nfev", "njev", "nhev"):
            best[key] = sum(r[key] for r in runs)
    best.nfev += user.nfev  # f(x0), for the first-order test
    best.njev += user.njev
    return best


def _cov(family, box=None):
    """``q``'s covariance over ``x`` (the delta method through the bounds' ``T``)."""
    cov = np.diag(family.sigma) if family.diagonal else family.sigma.copy()
    if box is None:
        return cov
    d1 = box.derivatives(family.mean)[0]
    return d1[:, None] * cov * d1[None, :]


def _scipy_callback(callback, box):
    """The solver's ``callback(solver)`` calling the user's as scipy does."""
    if callback is None:
        return None
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
