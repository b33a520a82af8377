"""Step policies: how much of the scheduled VAN step an iteration takes.

A policy is chosen once, before the loop, and called once per iteration as
``policy.take(solver) -> fraction``. It applies the step through the solver's
primitives (:meth:`~skvan.van.VANSolver.update_precision`,
:meth:`~skvan.van.VANSolver.newton_step`,
:meth:`~skvan.van.VANSolver.update_mean`, :meth:`~skvan.van.VANSolver.reject`)
and returns the fraction of the scheduled ``beta_t`` it kept (0: ``q`` stayed put,
which never counts as convergence).

- :class:`FullStep`: the scheduled step, unchecked (minibatches, streams).
- :class:`ArmijoMeanStep`: the precision update as scheduled, the mean step
  shortened until the VO objective decreases enough (full-batch VO).
- :class:`BetaBacktrack`: the whole step (precision and mean) redone with
  ``beta_t`` halved until a criterion accepts it, optionally remembering the
  accepted ``beta_t`` for the next step, and optionally cutting the mean step
  at zero where ``q`` has decided an L1-penalised coordinate's sign
  (:class:`~skvan.van.KeepSigns`). The criteria:
  :class:`ObjectiveDecrease` (VI; VO on non-smooth ``f``) and :class:`TrustRegion`
  (Monte Carlo, where no value can be checked).

Why whole steps: shortening only the mean step lets ``q`` narrow around a mean
that has not arrived. On a non-smooth ``f`` (the L1 penalty, whose expected
curvature grows like ``1/s`` near 0) that freezes coordinates; on Monte Carlo
estimates it freezes the mean while ``q`` keeps shrinking. Halving ``beta_t`` for
the precision too keeps ``q`` as wide as its mean needs.
"""

import numpy as np

from ..sparse import support_from_q

#: Sufficient-decrease constant of the Armijo test.
ARMIJO = 1e-4
#: Smallest fraction of a step tried before giving up (30 trials).
MIN_FACTOR = 2.0**-29
#: The VI safeguard gives up sooner (11 trials): a VI step that needs more is
#: better retried from the next expectations.
MIN_FACTOR_VI = 2.0**-10


def _slack(value, solver):
    """Round-off allowance when comparing objective values near ``value``.

    Relative to ``value`` and to the size of the terms that cancel in it
    (``solver.value_scale``; for least squares ``c - b^T theta + theta^T G theta / 2``
    the constant ``c``). Relative to ``value`` alone, a Lasso with ``alpha=1e-10``
    compared values of 1e-9 made of terms of size 1: every step looked like an
    increase on some inputs and not on others."""
    return 16 * np.finfo(np.float64).eps * max(abs(value), solver.value_scale)


class FullStep:
    """Take the scheduled step as it is (``fraction = 1``)."""

    def reset(self, solver):
        """Nothing to remember between iterations."""

    def take(self, solver):
        """Update the precision, then move the mean by the full Newton-like step."""
        solver.update_precision(solver.rates)
        solver.update_mean(solver.newton_step(solver.rates.mean))
        return 1.0


class ArmijoMeanStep(FullStep):
    """Precision as scheduled; the mean step ``d`` shortened to ``fraction d`` (VO).

    The full step is taken if the VO objective does not increase,
    ``L_{t+1}(mu + d) <= L_t(mu) + c E[grad f]^T d`` (``L_t`` the expected objective
    under the covariance of iteration ``t``, known from the expectations pass, so
    this costs one evaluation); otherwise ``fraction`` is the largest of ``1/2, 1/4,
    ...`` with ``L_{t+1}(mu + f d) <= L_{t+1}(mu) + c f E[grad f]^T d``. Near
    the optimum of a smooth convex problem the first trial passes.
    """

    def take(self, solver):
        solver.update_precision(solver.rates)
        direction = solver.newton_step(solver.rates.mean)
        fraction = self._search(solver, direction)
        solver.update_mean(fraction * direction)
        return fraction

    @staticmethod
    def _search(solver, direction):
        mean, before = solver.family.mean, solver.expect.value
        slope = min(float(np.dot(solver.expect.gradient, direction)), 0.0)
        # First trial against the value before the step: it keeps the VO
        # objective decreasing along the iterates, and it prepares the next
        # iteration's expectations at the new mean.
        full = solver.expected_value(mean + direction, prepare=True)
        if np.isfinite(full) and full <= before + ARMIJO * slope + _slack(before, solver):
            return 1.0
        ref = solver.expected_value(mean)
        fraction = 1.0
        while fraction >= MIN_FACTOR:
            trial = full if fraction == 1.0 else solver.expected_value(mean + fraction * direction)
            if np.isfinite(trial) and trial <= ref + ARMIJO * fraction * slope + _slack(ref, solver):
                return fraction
            fraction *= 0.5
        return 0.0


class ObjectiveDecrease:
    """Accept a step when the variational objective (``E_q[f]`` under VO,
    ``E_q[f] + 1/2 log det P`` under VI) at the new ``q`` is at most its value at
    the old one, up to round-off."""

    def prepare(self, solver):
        """Record the objective at the old ``q`` (from the expectations pass)."""
        self.reference = solver.objective_.value(solver.expect.value, solver.family)

    def __call__(self, solver, step):
        """Whether the trial ``q`` (the family's precision, mean plus ``step``) passes."""
        value = solver.expected_value(solver.family.mean + step, prepare=True)
        value = solver.objective_.value(value, solver.family)
        return bool(np.isfinite(value) and value <= self.reference + _slack(self.reference, solver))


def _squared_length(step, P):
    """``d^T P d`` for a precision ``P``, ``(n, n)`` or its diagonal ``(n,)``."""
    return float(step @ (P * step if P.ndim == 1 else P @ step))


class TrustRegion:
    """Accept a step ``d`` when ``sqrt(d^T M d) <= radius``.

    ``M`` is by default the precision ``P_t`` of the ``q`` whose samples gave the
    estimates: from function values alone they describe ``f`` only where ``q``
    looked (zero-order VAN diverged on Rosenbrock in 4 steps without). With
    derivatives at the samples the step rests on a local model of ``f`` itself,
    and a fixed ``metric`` (``skvan.minimize`` passes the first precision) caps it
    at the initial search scale: a radius that shrank with ``q`` would let the
    geometric schedule outrun the mean in curved valleys (Rosenbrock).

    Parameters
    ----------
    radius : float
    metric : ndarray or None, default=None
        A fixed precision (``(n, n)``, or ``(n,)`` for a diagonal one) measuring the
        steps, or None for each iteration's ``P_t``.
    """

    def __init__(self, radius, metric=None):
        self.radius = float(radius)
        self.metric = metric

    def prepare(self, solver):
        """Record the precision before the update (unless the metric is fixed)."""
        self.precision = solver.family.precision if self.metric is None else self.metric

    def __call__(self, solver, step):
        return bool(_squared_length(step, self.precision) <= self.radius**2)


class LongStepCheck:
    """Accept a step ``d`` within ``radius`` standard deviations of the current ``q``
    per square root of the dimension, ``d^T P_t d <= radius^2 n``, as it is; a
    longer one only if ``f`` at the new mean is at most this iteration's estimate
    of ``E_q[f]`` (one evaluation of ``f``).

    Draws of ``q`` lie about ``sqrt(n)`` such units from its mean: a longer step
    extrapolates the local model that derivatives at the draws gave. In a curved
    valley such steps are what progress takes (Rosenbrock's narrow cross-section
    sets ``q``'s metric while the mean travels along it) and they land lower than
    the draws did on average; where the model's curvature is sampling noise (an
    indefinite estimate that shrank ``P`` in one direction) they land anywhere,
    and a noise-driven walk replaces the descent (Griewank-10 once ``q`` has
    narrowed to a few units; ``python benchmarks/bench_minimize.py``). Pair it with a
    :class:`TrustRegion` through :class:`AllOf`.

    Parameters
    ----------
    radius : float
        Length, in standard deviations of ``q`` per ``sqrt(n)``, up to which steps
        pass unchecked.
    """

    def __init__(self, radius):
        self.radius = float(radius)

    def prepare(self, solver):
        """Record the precision before the update."""
        self.precision = solver.family.precision

    def __call__(self, solver, step):
        if _squared_length(step, self.precision) <= self.radius**2 * step.size:
            return True
        value = solver.f.value(solver.family.mean + step)
        return bool(np.isfinite(value) and value <= solver.expect.value)


class AllOf:
    """Accept a step when every criterion accepts it, asked in order (a later one,
    which may evaluate ``f``, sees only steps the earlier ones passed).

    Parameters
    ----------
    *criteria : objects with ``prepare(solver)`` and ``__call__(solver, step)``
    """

    def __init__(self, *criteria):
        self.criteria = criteria

    def prepare(self, solver):
        for criterion in self.criteria:
            criterion.prepare(solver)

    def __call__(self, solver, step):
        return all(criterion(solver, step) for criterion in self.criteria)


class BetaBacktrack:
    """Redo the whole step with ``beta_t`` halved until ``accept`` passes.

    Parameters
    ----------
    accept : ObjectiveDecrease or TrustRegion
        The criterion.
    min_factor : float, default=MIN_FACTOR
        Smallest ``beta`` tried, as a fraction of the scheduled ``beta_t`` or, with
        ``memory``, of the first iteration's; below it ``q`` stays put.
    memory : bool, default=False
        Start each step from at most ``growth`` times the last accepted ``beta``
        (never below the smallest one tried). Without it a growing schedule would
        halve its way down from the ever larger scheduled ``beta_t`` at every
        iteration.
    restrict : object or None, default=None
        ``restrict.prepare(solver)`` at the start of each step, then
        ``restrict(step)`` on every trial mean step before ``accept`` sees it
        (:class:`~skvan.van.KeepSigns`: the Lasso's orthant-wise steps).
    growth : float, default=2.0
        With ``memory``, how far above the last accepted ``beta`` the next step
        may start, ``> 1``; the Lasso passes its schedule's growth (at least 2),
        so that accepted steps follow the schedule.
    """

    def __init__(self, accept, min_factor=MIN_FACTOR, memory=False, restrict=None, growth=2.0):
        self.accept = accept
        self.min_factor = float(min_factor)
        self.memory = memory
        self.restrict = restrict
        self.growth = float(growth)

    def reset(self, solver):
        """Forget the accepted ``beta`` of a previous run."""
        self._cap = None
        self._floor = None

    def take(self, solver):
        rates = solver.rates
        if not (np.isfinite(rates.beta) and rates.beta > 0):
            solver.reject()  # nothing to halve (a schedule's beta_t under/overflowed)
            return 0.0
        if not self.memory or self._floor is None:
            # At least the smallest normal float: 0 would make the halving endless.
            self._floor = max(self.min_factor * rates.beta, np.finfo(np.float64).tiny)
        if self.memory and self._cap is not None and rates.beta > self._cap:
            rates = solver.objective_.with_beta(rates, self._cap)
        self.accept.prepare(solver)
        if self.restrict is not None:
            self.restrict.prepare(solver)
        factor = 1.0
        while factor * rates.beta >= self._floor:
            trial = rates if factor == 1.0 else solver.objective_.with_beta(rates, factor * rates.beta)
            solver.update_precision(trial)
            step = solver.newton_step(trial.mean)
            if self.restrict is not None:
                step = self.restrict(step)
            if self.accept(solver, step):
                solver.update_mean(step)
                self._cap = self.growth * trial.beta
                return trial.beta / solver.rates.beta
            factor *= 0.5
        solver.reject()
        self._cap = 2.0 * self._floor
        return 0.0


#: Earlier iterates whose residuals :class:`AndersonStep` combines in VI's default
#: step (:func:`default_step`; 0: none, the fallback alone).
ANDERSON_MEMORY = 5
#: Largest state (mean and precision parameters) :class:`AndersonStep` extrapolates:
#: with ``memory + 1`` iterates and residuals, their stacked copies and
#: differences, it holds about 40 vectors of that size (80 MB at this cap); a full
#: precision beyond about 720 parameters (``"auto"`` keeps ``"full"`` up to 512)
#: takes the fallback's steps.
ANDERSON_MAX_STATE = 2**18


class AndersonStep:
    """Anderson acceleration of VI's fixed-point iteration, safeguarded by a
    fallback policy.

    Under VI with a constant ``beta`` the scheduled step is a fixed-point map
    ``x -> G(x)`` of ``x = (mu, P)``: ``P <- (1 - beta) P + beta E_q[C]``, then the
    mean's Newton-like step. At ``beta = 1`` its fixed point is the VI optimum, but
    the map need not contract fast: with the exact expected Hessian under a weak
    prior it converges slowly (breast_cancer) or oscillates with period 2 (an
    eigenvalue near -1; digits), where every other step raises the VI objective
    and :class:`BetaBacktrack` halves it, and a fit takes tens of iterations where
    Newton's method takes a few (``python benchmarks/bench_vi.py``). Anderson's method (type II; Walker and Ni 2011) takes instead the
    point that best cancels the last :data:`ANDERSON_MEMORY` ``+ 1`` residuals
    ``r_k = G(x_k) - x_k`` to first order,
    ``x_t + r_t - (dX + dR) gamma`` with ``gamma = argmin ||r_t - dR gamma||``
    (``dX``, ``dR`` the differences of successive iterates and residuals): a
    secant method on the residual, which turns such an oscillation into
    convergence. The candidate is taken if its precision is positive definite
    and the fallback's criterion (:class:`ObjectiveDecrease`: the VI objective
    does not increase) accepts it; otherwise the fallback takes the step as it
    would have. A fixed point is unchanged: there every residual is 0.

    The plain step is taken as long as the map contracts (each step accepted and
    shorter than the one before), and then the runs are those of the fallback to
    the last bit; the first longer or refused step engages the extrapolation for
    the rest of the run. From then on the solver's ``residual`` is the plain
    map's mean step from the iteration's start, which
    :class:`~skvan.van.MeanContraction` measures instead of the extrapolated
    steps (their lengths need not shrink geometrically, and a short one followed
    by a long one ended runs far from the optimum).

    ``x`` holds the mean and the family's ``precision_vector()``: the
    precision's upper triangle, a diagonal family's diagonal, or the dual form's
    ``(lam, d)`` of ``P = diag(lam) + X^T diag(d) X`` (wide data: ``n + 2 p``
    numbers instead of ``p^2 / 2``); a candidate's precision is set by
    ``try_set_precision_vector``, which refuses one that is not positive
    definite. Families without those methods, or whose state exceeds
    :data:`ANDERSON_MAX_STATE` entries, take the fallback's steps. The
    residuals are kept while the scheduled rates stay the same.

    Parameters
    ----------
    fallback : BetaBacktrack
        The policy that takes the step when the candidate is refused; its
        ``accept`` judges the candidate.
    memory : int, default=ANDERSON_MEMORY
        Earlier residuals combined, ``>= 1``.

    References
    ----------
    D. G. Anderson, "Iterative procedures for nonlinear integral equations",
    J. ACM 12(4), 1965. H. F. Walker and P. Ni, "Anderson acceleration for
    fixed-point iterations", SIAM J. Numer. Anal. 49(4), 2011.
    """

    def __init__(self, fallback, memory=ANDERSON_MEMORY):
        if int(memory) < 1:
            raise ValueError(f"memory must be at least 1, got {memory}.")
        self.fallback = fallback
        self.memory = int(memory)

    def reset(self, solver):
        """Forget the residuals of a previous run."""
        self.fallback.reset(solver)
        self._history = []
        self._rates = None
        self._engaged = False
        self._length = np.inf  # of the last plain mean step

    def take(self, solver):
        family = solver.family
        if not hasattr(family, "try_set_precision_vector"):
            return self.fallback.take(solver)
        rates = solver.rates
        if rates != self._rates:
            self._history, self._rates = [], rates
        mean, p = family.mean.copy(), family.n_params
        x = np.concatenate([mean, family.precision_vector()])
        if x.size > ANDERSON_MAX_STATE:
            return self.fallback.take(solver)
        accept = self.fallback.accept
        accept.prepare(solver)  # the objective at the iteration's q
        solver.update_precision(rates)
        step = plain = solver.newton_step(rates.mean)
        r = np.concatenate([mean + step, family.precision_vector()]) - x
        self._history = self._history[-self.memory:] + [(x, r)]
        if not self._engaged:
            # The scheduled step, as the fallback's first trial would take it,
            # while the map contracts: each step decreases the objective and is
            # shorter than the one before (in a few iterations where the prior is
            # strong or the rows many). A longer step, or a refused one, and the
            # extrapolation takes over for the rest of the run.
            length = float(np.max(np.abs(step))) if step.size else 0.0
            if length <= self._length and accept(solver, step):
                self._length = length
                solver.update_mean(step)
                return 1.0
            self._engaged = True
        solver.residual = plain  # what the convergence test measures from now on
        if len(self._history) > 1:
            X, R = (np.array(part) for part in zip(*self._history))
            dX, dR = np.diff(X, axis=0).T, np.diff(R, axis=0).T
            gamma = np.linalg.lstsq(dR, r, rcond=None)[0]
            candidate = x + r - (dX + dR) @ gamma
            if np.all(np.isfinite(candidate)):
                trial_mean = candidate[:p]
                # The candidate's move is the secant model's distance to the fixed
                # point: the test measures the longer of it and the plain step.
                if np.max(np.abs(trial_mean - mean)) > np.max(np.abs(plain)):
                    solver.residual = trial_mean - mean
                if family.try_set_precision_vector(candidate[p:]):
                    step = trial_mean - mean
                    if accept(solver, step):
                        solver.update_mean(step)
                        return 1.0
        solver.reject()  # q as it was: the fallback starts from it
        fraction = self.fallback.take(solver)
        solver.residual = plain
        return fraction


def default_step(objective, deterministic, stochastic, hessian="exact", memory=ANDERSON_MEMORY):
    """The policy the solver uses unless told otherwise: with deterministic
    expectations on the full data, :class:`ArmijoMeanStep` under VO and a
    :class:`BetaBacktrack` on :class:`ObjectiveDecrease` under VI, accelerated by
    :class:`AndersonStep` with the exact expected Hessian; otherwise the plain
    :class:`FullStep` (noisy values cannot be compared).

    Only the exact Hessian's fixed point is the VI optimum, where the
    objective-decrease safeguard and the extrapolation agree; the Gauss-Newton
    one is not a stationary point of the VI objective. ``memory``: the residuals
    :class:`AndersonStep` combines (0: the fallback alone)."""
    if not deterministic or stochastic:
        return FullStep()
    if objective.name == "vi":
        fallback = BetaBacktrack(ObjectiveDecrease(), min_factor=MIN_FACTOR_VI)
        if hessian == "exact" and memory:
            return AndersonStep(fallback, memory)
        return fallback
    return ArmijoMeanStep()


class KeepSigns:
    """Cut a mean step at zero in the coordinates of an L1 penalty whose sign ``q``
    has decided (the orthant-wise rule of OWL-QN, Andrew and Gao 2007), and to
    ``radius`` standard deviations of ``q`` in those whose sign it has not.

    Under ``q = N(m, s^2)`` the expected penalty ``lambda_j E|theta_j|`` is linear
    in ``m_j`` to float64 precision while ``q`` gives the other sign a probability
    below ``SIGN_EPS`` (``|m_j| > z s_j``, :func:`~skvan.sparse.support_from_q`):
    the quadratic model behind the Newton-like step holds on that orthant only.
    A step that leaves it crosses the penalty's kink, smoothed over ``s_j``,
    which shrinks as ``q`` concentrates; the objective then rises and
    :class:`BetaBacktrack` would halve ``beta_t`` until the step stopped short
    of the kink. Those coordinates stop at 0 instead, where ``q`` decides their
    sign again at the next iteration. A fixed point is unchanged: there every
    step is 0. The Lasso applies it under the exact expected curvature only: the
    Gauss-Newton one is that of a quadratic upper bound of ``E|theta_j|``, whose
    steps descend across 0.

    The coordinates whose sign ``q`` has not decided move by at most ``radius``
    standard deviations of ``q`` per step: their expected penalty's curvature,
    ``2 lambda phi(m / s) / s``, is a bump of width ``s`` around 0 (1% of its
    peak at ``3 s``), and a step much longer leaves the region the quadratic
    model describes (``python benchmarks/bench_lasso.py --undecided-radius R``).

    Parameters
    ----------
    strength : ndarray of shape (n_params,)
        The L1 strengths ``lambda_j >= 0``; coordinates with 0 are never cut.
    radius : float, default=3.0
        Longest move of an undecided coordinate, in standard deviations of ``q``.

    See Also
    --------
    BetaBacktrack : The step policy that applies it (``restrict``).
    skvan.sparse.support_from_q : The reading of the signs.

    References
    ----------
    G. Andrew and J. Gao, "Scalable training of L1-regularized log-linear
    models", ICML 2007.

    Examples
    --------
    >>> import numpy as np
    >>> from types import SimpleNamespace
    >>> from skvan.van import DiagonalGaussian, KeepSigns
    >>> keep = KeepSigns(np.array([1.0, 1.0, 1.0]))
    >>> q = DiagonalGaussian(np.array([1.0, -1.0, 0.0]), np.full(3, 1e6))  # sd 1e-3
    >>> keep.prepare(SimpleNamespace(family=q))
    >>> keep(np.array([-3.0, 0.5, 0.01]))
    array([-1.   ,  0.5  ,  0.003])
    """

    def __init__(self, strength, radius=3.0):
        self.strength = np.asarray(strength)
        self.radius = radius

    def prepare(self, solver):
        """Record the mean and which signs ``q`` has decided, at the step's start."""
        family = solver.family
        self._mean = family.mean.copy()
        variance = family.marginal_variance()
        penalised = self.strength > 0
        self._decided = penalised & support_from_q(self._mean, variance, self.strength)
        self._radius = np.where(penalised & ~self._decided,
                                self.radius * np.sqrt(variance), np.inf)

    def __call__(self, step):
        """``step`` with the decided coordinates it would move across 0 stopped at 0,
        and the undecided ones' moves cut to ``radius`` sds."""
        step = np.clip(step, -self._radius, self._radius)
        cross = self._decided & (self._mean * (self._mean + step) < 0)
        step[cross] = -self._mean[cross]
        return step


class DampedNewtonStep(FullStep):
    """Precision as scheduled; the mean step ``d`` shortened to ``d / (1 + lambda)``,
    ``lambda = sqrt(d^T C d)`` its length in the metric of the expected curvature
    ``C`` (the damped Newton step of self-concordant minimisation: Nesterov,
    "Introductory Lectures on Convex Optimization", 2004, Section 4.1).

    For estimates that no value can check (a step search would need a pass over
    the data): far from a minimiser, where the Newton step is long on the
    curvature's own scale and its quadratic model is not to be trusted, the step
    is cut to about unit length in that metric; near it ``lambda -> 0`` and the
    whole step is taken (Newton's local rate is kept). The test is one product
    with ``C`` (``O(p^2)``, or ``O(p)`` for a diagonal one). Steps on minibatch
    estimates (an estimator whose ``complete`` is False: sVAN's first pass, whose
    steps the averaging schedule keeps short) are taken whole, and so are those
    on a loss of constant curvature (least squares: its Newton model is exact,
    and ``lambda``, which grows with the data term's scale, would only slow it).
    """

    def take(self, solver):
        exact_model = getattr(getattr(solver.f, "loss", None), "constant_curvature", False)
        if exact_model or not getattr(solver.expectation, "complete", True):
            return super().take(solver)
        solver.update_precision(solver.rates)
        direction = solver.newton_step(solver.rates.mean)
        length = _squared_length(direction, np.asarray(solver.expect.curvature))
        fraction = 1.0 / (1.0 + np.sqrt(max(length, 0.0)))
        solver.update_mean(fraction * direction)
        return fraction
