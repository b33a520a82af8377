"""``skvan.VANOptimizer``: the solver of ``minimize`` as an ask/tell loop the user owns."""

from collections import deque
from numbers import Real

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from scipy.optimize import OptimizeResult

from .._warnings import warn_user
from ..objectives import FunctionObjective
from ..objectives._function import _shaped
from . import _first_order
from ._build import build_solver
from ._minimize import MAXFEV, NONFINITE, STATUS
from ._settings import check_x0, merge_options, resolve


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

    With the same arguments and seed this takes the steps of :func:`minimize`
    (``expectation="mc"``) bit for bit. The user may evaluate on a minibatch, a
    simulator or a network in any framework; the values then are noisy
    estimates of ``f``, as are Monte Carlo expectations anyway.

    Parameters
    ----------
    x0 : array-like of shape (n,) or float
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
        Ranks instead of values (``order=0`` only); "auto": for ``n >= 2``, and
        never for a ``stochastic`` run (its averaging schedule needs the values).
    tol : float or None, default=None
        Convergence tolerance on the mean, ``>= 0``; None is 1e-6 (1e-5 on a
        data pass's change when ``stochastic``).
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
    options : dict or None, default=None
        :func:`minimize`'s options where they apply: ``gtol`` (the first-order
        test's tolerance), ``maxfev`` (a budget of told points), ``trust_radius``,
        ``shape_update`` and ``rank_one_fraction``.

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
    status : int
        scipy's status of :func:`minimize` (-1 while running, 0 converged, ...).
    message : str
        What ``status`` means.
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
    evaluation at the new mean; :class:`~skvan.van.LongStepCheck`).

    ``success`` needs, beside the mean's convergence, the first-order test of
    :func:`minimize` on what was told: the last iteration's estimate of the
    gradient under ``q`` (from the told gradients, or from the told values by the
    score-function identity; averaged over the last data pass when
    ``stochastic``), against ``f``'s change from the first iteration's average.
    Told values that are not finite count as the worst of their batch
    (``order=0``; a warning counts them when the run ends); told derivatives
    that are not finite are a ValueError naming the point.

    The state (``q``, the random generator, the schedule, the convergence test)
    is plain Python and numpy: an optimiser pickles between ``tell`` and ``ask``
    and resumes identically.

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
    >>> opt.status, opt.message[:18], np.round(opt.mean, 4)
    (0, 'The mean converged', array([3., 3.]))
    """

    def __init__(self, x0, *, order=0, sigma0=1.0, beta=1.0, beta_growth=None, covariance="full",
                 hessian="exact", n_mc_samples=None, fitness_shaping="auto", tol=None,
                 max_iter=500, stochastic=False, random_state=None, options=None):
        if order not in (0, 1, 2):
            raise ValueError(f"order must be 0, 1 or 2, got {order!r}.")
        if tol is not None and not (isinstance(tol, Real) and tol >= 0):
            raise ValueError(f"tol must be a number >= 0 or None, got {tol!r}.")
        merged = merge_options(options, dict(
            sigma0=sigma0, beta=beta, beta_growth=beta_growth, covariance=covariance,
            hessian=hessian, expectation="mc", n_mc_samples=n_mc_samples,
            fitness_shaping=fitness_shaping, max_iter=max_iter, restarts=0, vectorized=False,
            n_jobs=None, random_state=random_state, verbose=0), caller="VANOptimizer")
        if stochastic and merged["fitness_shaping"] is True:
            raise ValueError("stochastic runs average curvature estimates; fitness_shaping "
                             "ranks them. Set fitness_shaping=False or use order >= 1.")
        x0 = check_x0(x0)
        self.order = order
        self.stochastic = bool(stochastic)
        self._settings = resolve(merged, order, x0.shape[0], tol, stochastic=self.stochastic)
        objective = FunctionObjective(_told, x0.shape[0], jac=_told if order >= 1 else None,
                                      hess=_told if order == 2 else None)
        self._solver = build_solver(objective, x0, self._settings,
                                    rng=check_random_state(random_state), evaluates=False,
                                    stochastic=self.stochastic)
        self._solver.setup()
        self._pending = None
        self._gradients = deque()  # (fraction, gradient estimate) over the last data pass
        self._values = None  # (first, last) estimates of E_q[f]
        self.n_nonfinite = 0
        self.nfev = self.njev = self.nhev = 0
        self.status, self.message = -1, "Running."

    @property
    def stop(self):
        return self.status != -1

    @property
    def n_iter(self):
        return self._solver.n_iter

    @property
    def mean(self):
        return self._solver.family.mean.copy()

    @property
    def covariance(self):
        family = self._solver.family
        return np.diag(family.sigma) if family.diagonal else family.sigma.copy()

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
                f"The run has ended (status {self.status}: {self.message}); read mean or "
                "result().")
        if self._pending is not None:
            raise RuntimeError(
                "ask() again before tell(): tell the values at the last points first.")
        solver = self._solver
        solver.ask()
        Z, points = solver.expectation.points(solver.family, solver.rng, self.order)
        self._pending = (Z, points)
        return points.copy()

    def tell(self, values, gradients=None, hessians=None, fraction=None):
        """Make the VAN step from ``f`` at the last :meth:`ask`'s points.

        Parameters
        ----------
        values : array-like of shape (n_points,)
            ``f`` at the points (NaN or inf allowed with ``order=0``).
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
        solver = self._solver
        values, gradients, hessians = self._checked(points, values, gradients, hessians)
        fraction = 1.0 if fraction is None else float(fraction)
        if not 0.0 < fraction <= 1.0:
            raise ValueError(f"fraction must be in (0, 1], got {fraction}.")
        self._pending = None
        expect = solver.expectation.combine(
            solver.family, Z, self.order, values, gradients, hessians, solver.hessian)
        self._record(Z, values, expect, fraction)
        if solver.tell(expect, fraction):
            self._finish()
        elif self._settings.maxfev is not None and self.nfev >= self._settings.maxfev:
            self.status, self.message = MAXFEV
        return self

    def _checked(self, points, values, gradients, hessians):
        """The told arrays as float64 of the asked shapes, counted; values that
        are not finite are counted (``order=0``) or refused, as are derivatives."""
        k, n = points.shape
        exact_hessians = self.order == 2 and self._solver.hessian != "gauss_newton"
        values = _told_array("values", values, (k,), points, allow=self.order == 0)
        self.n_nonfinite += int(k - np.count_nonzero(np.isfinite(values)))
        if self.order >= 1:
            gradients = _told_array("gradients", gradients, (k, n), points)
        if exact_hessians:
            diagonals = self._solver.family.diagonal and np.ndim(hessians) == 2
            hessians = _told_array("hessians", hessians, (k, n) if diagonals else (k, n, n),
                                   points)
        self.nfev += k
        self.njev += k if self.order >= 1 else 0
        self.nhev += k if exact_hessians else 0
        return values, (gradients if self.order >= 1 else None), (
            hessians if exact_hessians else None)

    def _record(self, Z, values, expect, fraction):
        """Keep what the first-order test reads: the first and latest ``E_q[f]``,
        and the gradient estimates of the last data pass (of the last iteration
        when not stochastic)."""
        gradient = expect.gradient
        if self.order == 0 and self._solver.expectation.fitness_shaping:
            half = Z.shape[0]  # ranks carry no slope: the score-function estimate
            gradient = self._solver.expectation.score_gradient(
                self._solver.family, Z, values[:half], values[half:])
        first = expect.value if self._values is None else self._values[0]
        self._values = (first, expect.value)
        self._gradients.append((fraction, gradient))
        span = 1.0 - 1e-9 if self.stochastic else 0.0  # a pass, or the last iteration alone
        while (len(self._gradients) > 1
               and sum(f for f, _ in self._gradients) - self._gradients[0][0] >= span):
            self._gradients.popleft()

    def _finish(self):
        """``status`` and ``message`` of the ended run, the first-order test on a
        converged one, and the warnings."""
        solver = self._solver
        self.status, self.message = STATUS[solver.status]
        if solver.status == "diverged" and self.n_nonfinite:
            self.status, self.message = NONFINITE
        if self.status == 0:
            weights = np.array([f for f, _ in self._gradients])
            gradient = np.array([g for _, g in self._gradients]).T @ weights / weights.sum()
            kkt = _first_order.optimality(self.mean, gradient)
            limit = _first_order.tolerance(self._settings.gtol, self._settings.tol,
                                           self._values[1], self._values[0], self.mean,
                                           self._settings.sigma0)
            if not np.isfinite(kkt) or kkt > limit:
                self.status, self.message = 6, (
                    f"The mean converged, but the estimated gradient there is {kkt:.3g}, "
                    f"above the first-order tolerance {limit:.3g} (gtol): q narrowed "
                    "before its mean arrived, or the told values are too noisy. Increase "
                    "sigma0, n_mc_samples or max_iter, or pass a larger gtol in options.")
        if self.n_nonfinite:
            warn_user(f"VANOptimizer was told NaN or inf at {self.n_nonfinite} of "
                      f"{self.nfev} points; each counted as the worst value of its "
                      "batch.", RuntimeWarning)
        if solver.status == "max_iter":
            unit = "data passes" if self.stochastic else "iterations"
            warn_user(f"VANOptimizer did not converge in max_iter={self._settings.max_iter} "
                      f"{unit}; create it with a larger max_iter.", ConvergenceWarning)

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
        solver = self._solver
        return OptimizeResult(
            x=self.mean, fun=float(solver.expect.value) if hasattr(solver, "expect") else np.nan,
            nit=self.n_iter, nfev=self.nfev, njev=self.njev, nhev=self.nhev,
            success=self.status == 0, status=self.status, message=self.message,
            covariance=self.covariance, precision=self.precision,
        )


def _told_array(name, value, shape, points, allow=False):
    """What ``tell`` received as a float64 array of ``shape``, or a ValueError; its
    entries must be finite unless ``allow`` (a values-only oracle's values)."""
    if value is None:
        raise ValueError(f"tell() needs {name} of shape {shape} for this optimiser's order.")
    a = _shaped(name, value, shape, role="be")  # one per asked point
    if not allow:
        finite = np.isfinite(a.reshape(shape[0], -1)).all(axis=1)
        if not finite.all():
            i = int(np.argmin(finite))
            raise ValueError(
                f"{name} contain NaN or inf at point {i}, x = "
                f"{np.array2string(points[i], precision=6, threshold=20)}: with derivatives "
                "every point needs finite values.")
    return a
