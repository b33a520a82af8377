"""``skvan.minimize``: VAN for any function, with or without derivatives."""

from numbers import Integral, Real

import numpy as np
from scipy.optimize import OptimizeResult

from ._compat import Interval, StrOptions, validate_params
from .expectations import MonteCarlo
from .objectives import FunctionObjective
from .van import BetaBacktrack, GeometricSchedule, MeanContraction, TrustRegion, VANSolver, make_family

#: Trust region of the mean step, in standard deviations of q per sqrt(dimension):
#: a draw from q lies about sqrt(n) such units from its mean, so a step may go
#: up to twice as far as the samples looked.
TRUST_RADIUS = 2.0

#: scipy's integer ``status`` for each solver status, and its message.
_STATUS = {
    "converged": (0, "The mean converged: its estimated distance to the fixed point is below tol."),
    "stalled": (0, "No step decreased the objective beyond round-off: the mean is stationary "
                   "to working precision."),
    "max_iter": (1, "Maximum number of iterations reached."),
    "diverged": (2, "Stopped: the expected gradient or curvature was not finite."),
    "stopped": (3, "Stopped by the callback."),
}


@validate_params(
    {
        "fun": [callable],
        "x0": ["array-like"],
        "jac": [callable, "boolean", None],
        "hess": [callable, None],
        "sigma0": [Interval(Real, 0, None, closed="neither")],
        "beta": [Interval(Real, 0, None, closed="neither")],
        "beta_growth": [Interval(Real, 1, None, closed="left")],
        "covariance": [StrOptions({"full", "diag"})],
        "hessian": [StrOptions({"exact", "gauss_newton"})],
        "n_mc_samples": [Interval(Integral, 2, None, closed="left"), None],
        "fitness_shaping": ["boolean"],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "vectorized": ["boolean"],
        "n_jobs": [Integral, None],
        "random_state": ["random_state"],
        "callback": [callable, None],
        "verbose": ["verbose"],
    },
    prefer_skip_nested_validation=True,
)
def minimize(
    fun,
    x0,
    *,
    jac=None,
    hess=None,
    sigma0=1.0,
    beta=1.0,
    beta_growth=1.0,
    covariance="full",
    hessian="exact",
    n_mc_samples=None,
    fitness_shaping=False,
    max_iter=500,
    tol=1e-6,
    vectorized=False,
    n_jobs=None,
    random_state=None,
    callback=None,
    verbose=0,
):
    """Minimise ``f`` by the Variational Adaptive-Newton method.

    VAN minimises ``E_q[f(theta)]`` over ``q = N(mu, Sigma)`` by mirror descent::

        P_{t+1}  = P_t + beta_t E_q[hess f]
        mu_{t+1} = mu_t - beta_t P_{t+1}^-1 E_q[grad f]

    a Newton-like step on ``f`` averaged over ``q``, which can step over local
    minima while ``q`` is wide. Expectations are Monte Carlo averages over
    ``n_mc_samples`` draws per iteration (antithetic pairs), from whatever oracle
    is given:

    - second order (``jac`` and ``hess``): averaged gradients and Hessians;
    - first order (``jac`` only): ``E[hess f] = Sigma^-1 E[(theta - mu) grad f^T]``
      (Bonnet/Price; for ``covariance="diag"`` the reparameterisation trick);
    - zero order (``fun`` only): ``E[grad f] = Sigma^-1 E[(theta - mu)(f - b)]``
      and ``E[hess f] = Sigma^-1 E[((theta - mu)(theta - mu)^T - Sigma)(f - b)] Sigma^-1``
      (Gaussian score-function identities, the link to natural evolution
      strategies) with the baseline ``b = f(mu)`` and antithetic pairs.

    Parameters
    ----------
    fun : callable
        ``fun(x) -> float`` for ``x`` of shape ``(n,)``. With ``jac=True`` it returns
        ``(value, gradient)``. With ``vectorized=True`` it takes ``(n_points, n)``
        and returns ``(n_points,)`` (and ``(n_points, n)`` gradients).
    x0 : array-like of shape (n,)
        Initial mean of ``q``.
    jac : callable, True or None, default=None
        Gradient of ``fun``, True if ``fun`` returns it, or None (zero order).
    hess : callable or None, default=None
        Hessian of ``fun``; needs ``jac``.
    sigma0 : float, default=1.0
        Initial standard deviation of ``q`` (``Sigma_0 = sigma0^2 I``), ``> 0``: how
        far VAN looks around ``x0`` at first.
    beta : float, default=1.0
        Step size ``beta_0 > 0``.
    beta_growth : float, default=1.0
        ``beta_t = beta * beta_growth**t``, ``>= 1``. The default, a constant step,
        keeps ``q`` wide longest (exploration; convergence ~1/t). ``g > 1`` makes
        each mean step ``(g-1)/g`` of a Newton step and shrinks ``q`` by ``1/g`` per
        iteration: faster, less exploration.
    covariance : {"full", "diag"}, default="full"
        Full or diagonal covariance (VAN-D).
    hessian : {"exact", "gauss_newton"}, default="exact"
        Expected Hessian (estimated as above), or ``E[grad f grad f^T]`` (VAG; needs
        ``jac``). The precision stays positive definite either way: an indefinite
        estimate is projected onto the PSD cone when it would break definiteness.
    n_mc_samples : int or None, default=None
        Draws per iteration, ``>= 2`` (rounded down to pairs); None uses
        ``2 (n + 1)``, or with ``fitness_shaping`` the evolution strategies'
        population ``4 + floor(3 log n)`` (rounded up to pairs).
    fitness_shaping : bool, default=False
        Zero order only: use the ranks of the values instead of the values
        (rank-based utilities, as in natural evolution strategies). The step is
        then invariant to any increasing transformation of ``f``, and its rates
        are those of natural evolution strategies:
        ``beta_t = beta * 3 (3 + log n) / (5 n sqrt(n))`` for the shape of the
        precision (xNES), ``beta * (3 + log n) / (5 sqrt(n))`` for its global
        scale (SNES), ``beta`` for the mean (Notes). Much more robust on
        ill-conditioned or multimodal ``f`` (``benchmarks/bench_minimize.py``).
    max_iter : int, default=500
        Maximum number of iterations.
    tol : float, default=1e-6
        Stop when the mean's estimated distance to its fixed point is below
        ``tol * max(|mu|_inf, 1e-12)``.
    vectorized : bool, default=False
        ``fun`` (and ``jac``) evaluate a batch of points per call.
    n_jobs : int or None, default=None
        Evaluate the points of an iteration in parallel with joblib.
    random_state : int, RandomState instance or None, default=None
        Seeds the draws.
    callback : callable or None, default=None
        ``callback(intermediate_result)`` after each iteration, with an
        OptimizeResult holding ``x``, ``fun`` (the estimate of ``E_q[f]``), ``nit``
        and ``covariance``; raising StopIteration stops the run.
    verbose : int, default=0
        Print one line per iteration.

    Returns
    -------
    result : scipy.optimize.OptimizeResult
        ``x`` (the final mean), ``fun`` (``f(x)``, one extra evaluation), ``nit``,
        ``nfev``/``njev``/``nhev`` (points at which ``fun``/the gradient/the Hessian
        were evaluated, including that last one), ``success``, ``status`` (0
        converged, 1 max_iter, 2 non-finite expectations, 3 callback), ``message``,
        ``covariance`` (an ``(n, n)`` matrix, diagonal for ``covariance="diag"``) and
        ``precision`` (as the family stores it: ``(n, n)``, or ``(n,)`` for "diag") of
        the final ``q``.

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
    (xNES) update to first order, with its learning rate for the shape, and
    separable NES's faster one for the trace part of ``G`` (the global scale:
    one parameter, where xNES's rate is set for ``n(n+1)/2``). The precision can
    then shrink as well as grow (``q`` widens along directions where the
    better draws lie far out), which the running sum of raw Hessian estimates
    rarely allows.

    The same solver fits :class:`~skvan.VANLogisticRegression`; here the objective
    is the user's function and expectations are Monte Carlo, so no line search is
    used; instead each step is a trust region in ``q``'s own metric: ``beta_t`` is
    halved for the whole step until ``sqrt(d^T P d) <= 2 sqrt(n)``. On the
    paper's Figure 1 (``f(x) = -sinc(x - 1)``, start ``-3.2``, ``sigma0=1.5``),
    Newton's method stops in the local minimum at ``-3.48``; zero-order VAN with
    20 draws per iteration reaches the global one at 1 in 99 of 100 seeds
    (``tests/test_optimize.py``, ``examples/plot_sinc.py``).

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

    Examples
    --------
    >>> import numpy as np
    >>> from skvan import minimize
    >>> res = minimize(lambda x: float(np.sum((x - 3.0) ** 2)), np.zeros(2),
    ...                beta_growth=1.5, random_state=0)
    >>> res.success, np.round(res.x, 4)
    (True, array([3., 3.]))
    """
    x0 = _check_x0(x0)
    n = x0.shape[0]
    if jac is False:
        jac = None
    if fitness_shaping and (jac is not None or hess is not None):
        raise ValueError(
            "fitness_shaping replaces function values by their ranks and applies to the "
            "zero-order oracle only; drop jac and hess, or set fitness_shaping=False."
        )
    if hessian == "gauss_newton" and jac is None:
        raise ValueError(
            "hessian='gauss_newton' needs gradients (E[g g^T]); pass jac, or use "
            "hessian='exact' (estimated from function values)."
        )
    objective = FunctionObjective(fun, n, jac=jac, hess=hess, vectorized=vectorized, n_jobs=n_jobs)
    precision = np.full(n, 1.0 / sigma0**2)
    family = make_family(covariance, x0, np.diag(precision) if covariance == "full" else precision)

    def _callback(solver):
        callback(OptimizeResult(x=solver.family.mean.copy(), fun=solver.expect.value,
                                nit=solver.n_iter, covariance=_cov(solver.family)))

    expectation, beta = _monte_carlo(n, n_mc_samples, fitness_shaping, beta)
    solver = VANSolver(
        objective, expectation, family, objective="vo",
        schedule=GeometricSchedule(beta, beta_growth), hessian=hessian,
        step=BetaBacktrack(TrustRegion(TRUST_RADIUS * np.sqrt(n))),
        stop=MeanContraction(tol), max_iter=int(max_iter), random_state=random_state,
        verbose=verbose, callback=_callback if callback is not None else None,
    )
    result = solver.solve()
    status, message = _STATUS[result.status]
    x = family.mean.copy()
    return OptimizeResult(
        x=x, fun=float(objective.values(x[None])[0]), nit=result.n_iter,
        nfev=objective.nfev, njev=objective.njev, nhev=objective.nhev,
        success=status == 0, status=status, message=message,
        covariance=_cov(family), precision=family.precision.copy(),
    )


def _monte_carlo(n, n_mc_samples, fitness_shaping, beta):
    """The Monte Carlo estimator and the ``beta`` to run it with. Fitness shaping
    takes natural evolution strategies' population and rates: xNES's for the
    shape of the precision (``n(n+1)/2`` parameters), SNES's for its global
    scale, and ``eta_mu = beta`` for the mean (``mean_rate = eta_mu / beta_t``)."""
    if not fitness_shaping:
        return MonteCarlo(2 * (n + 1) if n_mc_samples is None else n_mc_samples), beta
    if n_mc_samples is None:
        n_mc_samples = 2 * ((5 + int(3 * np.log(n))) // 2)
    eta_shape = 3.0 * (3.0 + np.log(n)) / (5.0 * n * np.sqrt(n))
    eta_scale = (3.0 + np.log(n)) / (5.0 * np.sqrt(n))
    expectation = MonteCarlo(n_mc_samples, fitness_shaping=True, mean_rate=1.0 / eta_shape,
                             scale_rate=eta_scale / eta_shape)
    return expectation, beta * eta_shape


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


def _cov(family):
    cov = family.sigma
    return np.diag(cov) if family.diagonal else cov.copy()
