"""What a VAN step optimises (VO or VI) and how large it is (the schedule).

Both updates have the form ``P <- keep P + beta C`` and
``mu <- mu - mean P^-1 E_q[grad f]`` (Khan et al. 2018, eqs. Van_prec_1 /
Van_mean_1 and Section 5, where ``mean = beta``); a :class:`Rates` holds
``(beta, keep, mean)``. The variational objective says how ``keep`` follows from
``beta`` and which value a safeguard may compare; the schedule says how the rates
evolve with the iteration: :class:`GeometricSchedule` (the paper's, full batch),
:class:`RelativeGeometricSchedule` (its first step relative to the first
curvature) or :class:`AveragingSchedule` (minibatches and streams).
"""

from collections import namedtuple

import numpy as np
from scipy import linalg

#: Largest beta_t reached by a geometric schedule under VO.
BETA_MAX = 1e100

Rates = namedtuple("Rates", ["beta", "keep", "mean"])
Rates.__doc__ = """Step sizes of one VAN step: ``P <- keep P + beta C``,
``mu <- mu - mean P^-1 g`` (``mean = beta`` in the paper's updates)."""


class VO:
    """Variational optimisation: minimise ``E_q[f]``; the precision is a running sum
    (``keep = 1``) and ``q`` concentrates on a minimiser of ``f``."""

    name = "vo"

    def rates(self, log_beta, growth):
        """``Rates`` for ``beta_t = exp(log_beta)``. Once ``beta_t`` would pass
        :data:`BETA_MAX` (``q`` is then a point mass for any practical purpose) it
        stays there and the sum is discounted, ``P <- P / growth + beta C``, so that
        each mean step stays ``(growth - 1) / growth`` of a Newton step."""
        if growth > 1.0 and log_beta > np.log(BETA_MAX):
            return Rates(BETA_MAX, 1.0 / growth, BETA_MAX)
        beta = float(np.exp(log_beta))
        return Rates(beta, 1.0, beta)

    def with_beta(self, rates, beta):
        """The same step with another ``beta`` (``keep`` unchanged), the mean's rate
        scaled with it: the whole step is shortened."""
        mean = beta if rates.mean == rates.beta else rates.mean * (beta / rates.beta)
        return Rates(beta, rates.keep, mean)

    def value(self, expected_f, family):
        """The variational objective, ``E_q[f]``, from ``E_q[f]``."""
        return expected_f


class VI:
    """Variational inference: minimise ``E_q[f] - H(q)`` (``f`` a negative log joint);
    the precision is a damped average (``keep = 1 - beta``, ``beta <= 1``) and ``q``
    converges to a Gaussian approximation of the posterior."""

    name = "vi"

    def rates(self, log_beta, growth):
        """``Rates`` for ``beta_t = exp(log_beta)``, capped at 1."""
        beta = float(np.exp(min(log_beta, 0.0)))
        return Rates(beta, 1.0 - beta, beta)

    def with_beta(self, rates, beta):
        """The same step with another ``beta`` (``keep = 1 - beta``)."""
        return Rates(beta, 1.0 - beta, beta)

    def value(self, expected_f, family):
        """The variational objective up to a constant, ``E_q[f] + 1/2 log det P``."""
        return expected_f + 0.5 * family.logdet_precision()


OBJECTIVES = {"vo": VO, "vi": VI}


def variational_objective(name):
    """``VO()`` or ``VI()`` by name."""
    try:
        return OBJECTIVES[name]()
    except KeyError:
        raise ValueError(f"objective must be 'vo' or 'vi', got {name!r}.") from None


class GeometricSchedule:
    """``beta_t = beta * growth**t``.

    ``growth=1`` is the paper's constant ``beta``: the precision grows linearly
    and each mean step is about ``1/t`` of a Newton step, which averages minibatch
    noise and keeps ``q`` wide for exploration, but converges only sublinearly.
    With ``growth = g > 1`` the precision is a geometric sum,
    ``P_t ~ beta_t g/(g-1) C``, so every mean step is a fixed fraction ``(g-1)/g``
    of a Newton step: linear convergence at rate ``~1/g``, while ``q`` shrinks by
    ``1/g`` per iteration (less exploration).

    Parameters
    ----------
    beta : float, default=1.0
        ``beta_0 > 0`` (at most 1 under VI).
    growth : float, default=1.0
        ``>= 1``.
    """

    def __init__(self, beta=1.0, growth=1.0):
        self.beta = float(beta)
        self.growth = float(growth)

    def observe(self, solver):
        """Called in each iteration with its expectations set, before its step."""

    def rates(self, t, objective):
        """:class:`Rates` of iteration ``t`` under the variational ``objective``."""
        return objective.rates(np.log(self._beta0()) + t * np.log(self.growth), self.growth)

    def _beta0(self):
        """``beta_0``."""
        return self.beta


class RelativeGeometricSchedule(GeometricSchedule):
    """A :class:`GeometricSchedule` whose ``beta_0`` is relative to the first curvature:

    ``beta_t = beta_0 growth**t``,  ``beta_0 = beta min(1, 1 / lambda_max(P_0^-1 C_0))``,

    ``P_0`` the starting precision and ``C_0`` the first expected curvature (its
    largest generalised eigenvalue; ``beta_0 = beta`` where that is at most 1). The
    first VO update ``P_0 + beta_0 C_0`` then adds at most ``beta P_0`` in any
    direction, and the precision grows by about ``growth`` per iteration from
    there until the running sum of curvatures dominates it. With the plain
    schedule's ``beta_0 = 1``, a first curvature that dwarfs the starting
    precision (a steep ``f``, or a sampled estimate's noise under a wide ``q``)
    collapses ``q`` in one step (``P_1 ~ C_0``), and the running sum keeps it.
    Scaling ``f`` by a constant no longer changes the run while the first
    curvature stays above ``P_0``; where it is at most ``P_0`` nothing changes.

    Parameters
    ----------
    beta : float, default=1.0
        ``> 0``: the largest first update, as a multiple of ``P_0``.
    growth : float, default=1.0
        ``>= 1``.

    Attributes
    ----------
    beta0_ : float
        ``beta_0``, set by :meth:`observe` in the first iteration.
    """

    def observe(self, solver):
        """In the first iteration, set ``beta0_`` from the starting precision and
        the first expected curvature."""
        if solver.iteration > 0:
            return
        family, C = solver.family, solver.expect.curvature
        if family.diagonal:
            ratio = float(np.max(C / family.precision))
        else:
            n = family.n_params
            ratio = float(linalg.eigh(0.5 * (C + C.T), family.precision, eigvals_only=True,
                                      subset_by_index=[n - 1, n - 1], check_finite=False)[0])
        self.beta0_ = self.beta / ratio if ratio > 1.0 else self.beta

    def _beta0(self):
        return getattr(self, "beta0_", self.beta)


class ContinuationSchedule(RelativeGeometricSchedule):
    """Gaussian continuation for sampled expectations under VO: whole Newton steps
    of the mean, and ``q`` narrowing only as fast as the estimates let the mean
    follow.

    A :class:`RelativeGeometricSchedule` whose clock ``tau`` advances by
    ``nu_t = max(rho_t^2, min_pace)`` per iteration (``beta_t = beta_0
    growth**tau``; ``rho_t`` the pace, below), with the rates::

        P  <- P + nu_t beta_t C
        mu <- mu - rho_t S_t P^-1 E_q[grad f],    S_t = S_{t-1} + nu_t beta_t

    ``S_t`` is the weight the precision has accumulated on the curvatures (the
    rates actually taken), so that with ``P = P_0 + S_t C_bar`` a mean step at
    pace 1 is a whole Newton step on ``E_q[f]``, the Gaussian smoothing of ``f``,
    with the averaged curvature ``C_bar`` (damped by ``P_0`` while ``S_t`` is
    small). The mean then keeps to the minimiser of the current smoothing while
    ``q`` narrows: ridges the smoothing removed are crossed before ``q`` is narrow
    enough for them to reappear. The paper's step, ``(g - 1)/g`` of a Newton
    step per iteration while ``q`` narrows by ``1/g``, lets ``q`` narrow around a
    mean that has not followed.

    The pace ``rho_t`` in ``[min_pace, 1]`` is the largest at which the mean step's
    sampling noise is at most ``step_noise`` standard deviations of ``q``,
    ``rho_t S_t sqrt(noise) <= step_noise`` (``noise`` the variance of the
    whitened gradient estimate, :class:`~skvan.expectations.MonteCarlo`'s
    ``Expectations.noise``, averaged over iterations with weight ``memory`` on
    the past: an estimate from a few antithetic pairs varies by its own size;
    one that a single pair cannot measure sets no limit). Where ``q`` is wide over steep or oscillating parts of
    ``f`` the draws' derivatives are mostly noise, which a Newton step would
    amplify by the inverse of the smoothed curvature: the mean's steps shrink to
    ``rho_t`` of a Newton step and average the noise over iterations, and since
    each closes the distance to the smoothing's minimiser by a factor ``1 -
    rho_t``, ``q`` narrows at ``rho_t^2``: one schedule step per ``1 / rho_t``
    e-folds of that distance. Where the smoothing is estimated well (on a
    quadratic, antithetic pairs are exact) the pace is 1.

    Parameters
    ----------
    beta : float, default=1.0
        ``> 0``: the largest first update, as a multiple of ``P_0``.
    growth : float, default=1.0
        ``>= 1``.
    step_noise : float, default=0.5
        ``> 0``.
    min_pace : float, default=0.02
        ``(0, 1]``: the least pace, and the least advance of the clock per
        iteration, so that ``q`` narrows even where the noise never falls.
    memory : float, default=0.8
        ``[0, 1)``.

    Attributes
    ----------
    clock_ : float
        ``tau``.
    weight_ : float
        ``S_{t-1}``.
    pace_ : float
        The last ``rho_t``.

    References
    ----------
    H. Mobahi and J. W. Fisher III, "On the Link Between Gaussian Homotopy
    Continuation and Convex Envelopes", EMMCVPR 2015.

    Examples
    --------
    A quadratic's antithetic estimates are exact: the pace stays 1 and the mean
    reaches the minimum (to the solver's default tolerance, 1e-5).

    >>> import numpy as np
    >>> from skvan.expectations import MonteCarlo
    >>> from skvan.objectives import FunctionObjective
    >>> from skvan.van import ContinuationSchedule, VANSolver, make_family
    >>> f = FunctionObjective(lambda x: float((x - 3.0) @ (x - 3.0)), 2,
    ...                       jac=lambda x: 2.0 * (x - 3.0), hess=lambda x: 2.0 * np.eye(2))
    >>> schedule = ContinuationSchedule(1.0, 1.2)
    >>> result = VANSolver(f, MonteCarlo(6, mixed=True), make_family("full", np.zeros(2), np.eye(2)),
    ...                    schedule=schedule, max_iter=30, random_state=0).solve()
    >>> schedule.pace_, np.round(result.family.mean, 4)
    (1.0, array([3., 3.]))
    """

    def __init__(self, beta=1.0, growth=1.0, step_noise=0.5, min_pace=0.02, memory=0.8):
        super().__init__(beta, growth)
        self.step_noise = step_noise
        self.min_pace = min_pace
        self.memory = memory

    def observe(self, solver):
        """Set ``beta0_`` in the first iteration; add the last step's precision rate
        to ``weight_`` and average the new estimates' noise."""
        super().observe(solver)
        expect = solver.expect
        noise = float(getattr(expect, "noise", 0.0))
        noise = noise if np.isfinite(noise) else 0.0  # a single pair: unknown
        if solver.iteration == 0:
            self.clock_, self.weight_, self.pace_, self._noise = 0.0, 0.0, 1.0, noise
            return
        last = solver.rates
        self.weight_ = last.keep * self.weight_ + solver.fraction * last.beta
        self._noise = self.memory * self._noise + (1.0 - self.memory) * noise

    def rates(self, t, objective):
        """:class:`Rates` of this iteration (the clock's, not ``t``'s) under VO."""
        if objective.name != "vo":
            raise ValueError("ContinuationSchedule is a schedule of variational optimisation.")
        rates = objective.rates(np.log(self._beta0()) + self.clock_ * np.log(self.growth),
                                self.growth)
        newton = rates.keep * self.weight_ + rates.beta
        pace = 1.0
        if self._noise > 0.0:
            pace = min(pace, self.step_noise / (newton * np.sqrt(self._noise)))
        self.pace_ = max(pace, self.min_pace)
        # Steps of pace rho < 1 close the mean's distance to the smoothing's
        # minimiser by a factor (1 - rho) each, so q narrows at rho^2: one
        # schedule step per 1/rho e-folds of that distance.
        narrowing = max(self.pace_**2, self.min_pace)
        self.clock_ += narrowing
        return Rates(narrowing * rates.beta, rates.keep, self.pace_ * newton)


class AveragingSchedule:
    """sVAN's schedule: the curvature averaged with weights growing linearly in
    time, mean steps ``2 / (t + 2)`` of a Newton step on that average.

    Iteration ``t = 1, 2, ...`` (its minibatch's curvature ``C_t``, scaled to the
    whole data) sets, with ``rho_t = 2 / (t + 2)``::

        H_t = (1 - rho_t) H_{t-1} + rho_t C_t          (H_0 the initial precision)
        P_t = c_t H_t,   mu_t = mu_{t-1} - rho_t H_t^-1 E_q[grad f_t]

    ``H_t`` weighs ``C_s`` in proportion to ``s + 1`` (and ``H_0`` as one of weight 1):
    early curvatures, taken far from
    the optimum (on logistic regression they are several times the final one),
    are forgotten at the rate the iterates move, and ``H_t`` averages ever more
    minibatches, so its noise vanishes. The mean step of ``2/t`` Newton steps
    forgets the starting point as ``1/t^2`` and averages the gradient noise with
    a variance ``4/3`` of the best possible one (``1/t`` steps with the exact
    Hessian, which forget as ``1/t`` only, and more slowly still when the Hessian
    is overestimated: the running sum of the paper's constant ``beta`` froze the
    mean at 46% relative error after 100 steps).

    Under VO, ``q`` concentrates as the iterates do, ``c_t = 1 + beta t`` (the
    paper's constant-``beta`` VO has ``P_t ~ beta t H``): ``beta`` is the
    exploration dial, a smaller ``beta`` keeping ``q`` wide for longer. Under VI
    ``P_t = H_t`` is the posterior precision (``c_t = 1``) and ``beta <= 1`` caps
    ``rho_t``. As :class:`Rates`: ``keep = (1 - rho_t) c_t / c_{t-1}``,
    ``beta = rho_t c_t``, ``mean = rho_t c_t``.

    Parameters
    ----------
    beta : float, default=1.0
        ``> 0`` (at most 1 under VI).
    start : int, default=0
        Iterations already run (a stream resumed by ``partial_fit``).

    References
    ----------
    Hoffman, Blei, Wang and Paisley, "Stochastic variational inference", JMLR 2013
    (decaying damping of natural-gradient VI). Lacoste-Julien, Schmidt and Bach,
    "A simpler approach to obtaining an O(1/t) convergence rate for the projected
    stochastic subgradient method", 2012 (``2/(t+2)`` steps with linearly weighted
    averages). Shen et al., "Variational learning is effective for large deep
    networks" (IVON), ICML 2024 (an averaged Hessian scaled by the data size).
    """

    growth = 1.0

    def __init__(self, beta=1.0, start=0):
        self.beta = float(beta)
        self.start = int(start)

    def observe(self, solver):
        """Called in each iteration with its expectations set, before its step."""

    def concentration(self, t, objective):
        """``c_t``: how much sharper than the averaged curvature ``q`` is after ``t``
        iterations."""
        return 1.0 + self.beta * t if objective.name == "vo" else 1.0

    def rates(self, t, objective):
        """:class:`Rates` of iteration ``t`` (counted from 0) under ``objective``."""
        t = t + self.start + 1
        rho = 2.0 / (t + 2.0)
        if objective.name == "vi":
            rho = min(rho, self.beta)
        c, c_before = self.concentration(t, objective), self.concentration(t - 1, objective)
        return Rates(rho * c, (1.0 - rho) * c / c_before, rho * c)


class IncrementalSchedule(AveragingSchedule):
    """sVAN's schedule with row memory (:class:`~skvan.expectations.RowMemory`):
    :class:`AveragingSchedule` while the minibatches' estimates are noisy, the
    full-batch schedule, per data pass, once they are the whole data's.

    Until every row has been integrated once, each estimate is a minibatch's
    (scaled to the data), and its noise is averaged as :class:`AveragingSchedule`
    does. From the iteration ``T`` whose expectations first cover every row
    (``complete`` on the solver's estimator), the estimate's error is the
    staleness of the rows' integrals, which vanishes as the iterates settle.
    Under VO, with ``c`` the concentration reached (``P ~ c H``) and ``k`` steps
    per data pass, ``g = growth**(1/k)``::

        beta_t = c (g - 1) g**(t - T),   P <- P + beta_t C,
        mu <- mu - beta_t P^-1 E[grad f]

    so that ``P`` grows by ``growth`` over a data pass, as full-batch VO's does in
    an iteration, and each step is ``(g - 1) / g`` of a Newton step on the rows'
    models: over a pass the distance to the minimiser contracts about as much
    as one full-batch iteration's, while no single step trusts models whose
    rows were last integrated up to a pass ago. (Whole Newton steps per
    minibatch converge faster where the models hold, and oscillate without
    converging on nearly separable multinomial data, whose rows' models fail
    as a confident prediction flips.) Under VI the damping is the constant
    ``beta`` (``P <- (1 - beta) P + beta C``), as on the full batch.

    Parameters
    ----------
    beta : float, default=1.0
        ``> 0`` (at most 1 under VI).
    growth : float, default=100.0
        ``> 1``: VO's growth of ``P`` over a data pass once the estimates are complete.
    steps_per_pass : int, default=1
        Minibatch steps in a data pass, ``>= 1``.
    start : int, default=0
        Iterations already run (a stream resumed by ``partial_fit``); ``t`` and
        ``T`` count from the stream's first step.
    complete_at : int or None, default=None
        ``T``, where an earlier run of the stream reached it.

    Attributes
    ----------
    complete_at_ : int or None
        ``T``, once reached.
    """

    def __init__(self, beta=1.0, growth=100.0, steps_per_pass=1, start=0, complete_at=None):
        super().__init__(beta, start)
        self.growth = float(growth)
        self.steps_per_pass = int(steps_per_pass)
        self.complete_at = complete_at

    def observe(self, solver):
        """Note the first iteration whose expectations cover every row."""
        if solver.iteration == 0:
            self.complete_at_ = self.complete_at
        if self.complete_at_ is None and getattr(solver.expectation, "complete", True):
            self.complete_at_ = self.start + solver.iteration

    def rates(self, t, objective):
        """:class:`Rates` of iteration ``t``: the averaging ones before ``T``."""
        T = self.complete_at_
        if T is None:
            return super().rates(t, objective)
        if objective.name == "vi":
            return objective.rates(np.log(self.beta), 1.0)
        g = self.growth ** (1.0 / self.steps_per_pass)
        c = self.concentration(T, objective)  # P ~ c H after T averaging steps
        return objective.rates(np.log(c * (g - 1.0)) + (t + self.start - T) * np.log(g), g)
