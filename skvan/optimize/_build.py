"""The solver of one run of ``minimize`` or ``VANOptimizer``, built from its
:class:`~skvan.optimize._settings.Settings`.

The pieces and why (the Notes of :func:`skvan.minimize` say it for users):

- Quadrature is deterministic: whole steps (precision and mean) are halved until
  ``E_q[f]`` does not increase, each starting from the schedule's growth (at
  least 2) times the last accepted ``beta``; above a doubling, trials beyond the
  trust region are refused before the grid is evaluated there. With the
  Gauss-Newton curvature only the mean step is checked: it narrows ``q`` even
  where ``f`` is concave on average, which raises ``E_q[f]`` at first order.
- Monte Carlo with derivatives mixes the draws' derivatives with the
  score-function estimates from their values (``MonteCarlo(mixed=True)``); the
  steps stay within a trust region in the first precision's metric (a local model
  of ``f`` backs the step, but its sampling noise is not to be followed far) and,
  where the solver may evaluate ``f``, steps longer than ``checked_radius``
  standard deviations of the current ``q`` must land where ``f`` is at most the
  draws' average (:class:`~skvan.van.LongStepCheck`).
- Monte Carlo from values: the trust region in each iteration's ``q``'s metric
  (the values describe ``f`` only where ``q`` looked).
- Fitness shaping: the evolution strategies' population and rates
  (:func:`~skvan.expectations.evolution_strategy`).
- The first update of sampled curvature at most doubles the precision
  (:class:`~skvan.van.RelativeGeometricSchedule`): one estimate under the widest
  ``q`` must not collapse it.
- A stochastic ask/tell run (noisy told values) is sVAN: the averaging schedule,
  unchecked steps, and the mean's change over a data pass as the stopping test.
"""

import numpy as np

from ..expectations import GaussHermiteGrid, MonteCarlo, evolution_strategy, population_size
from ..van import (
    AllOf,
    ArmijoMeanStep,
    AveragingSchedule,
    BetaBacktrack,
    ContinuationSchedule,
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


def build_solver(objective, x0, settings, *, callback=None, rng=None, restart=0,
                 evaluates=True, stochastic=False, bounded=False):
    """The :class:`~skvan.van.VANSolver` of one run on ``objective`` from ``x0``:
    the ``restart``-th (its population, or under quadrature its ``sigma0``, doubled
    that many times). ``evaluates=False``: the solver may not call ``f`` beyond
    the draws (:class:`~skvan.optimize.VANOptimizer`); ``bounded``: ``objective``
    is ``f`` through the bounds' map."""
    s = settings
    quadrature = s.expectation == "quadrature"
    sigma0 = s.sigma0 * (2.0**restart if quadrature else 1.0)
    precision = 1.0 / np.full(s.n, sigma0) ** 2
    if s.covariance == "full":
        precision = np.diag(precision)
    # Under quadrature q never becomes wider than at the start (the floor).
    # Sampled curvature is not held to it: the projection would clip only its
    # negative noise and bias q towards shrinking.
    family = make_family(s.covariance, x0, precision, floor=precision if quadrature else None)
    expectation, beta, step = estimator(s, precision, 2**restart, evaluates)
    if stochastic:
        schedule, step = AveragingSchedule(s.beta), FullStep()
        stop = PassChange(1e-5 if s.tol is None else s.tol)
    else:
        relative = s.expectation == "mc" and not s.fitness_shaping
        # Continuation where q narrows geometrically and the smoothing has one
        # minimiser to follow. Under the paper's constant beta the accumulated
        # weight grows without bound where the expected curvature vanishes (f
        # concave on average over q), and "whole Newton steps" become ever longer
        # gradient steps; the bounds' periodic map repeats f's box in mirrored
        # images, between which whole Newton steps would jump.
        continuation = relative and not bounded and s.beta_growth > 1.0
        if continuation:
            schedule = ContinuationSchedule(beta, s.beta_growth, s.step_noise)
        else:
            schedule = (RelativeGeometricSchedule if relative else GeometricSchedule)(
                beta, s.beta_growth)
        stop = MeanContraction(1e-6 if s.tol is None else s.tol, min_scale=s.sigma0,
                               narrow=continuation)
    return VANSolver(
        objective, expectation, family, objective="vo", schedule=schedule, hessian=s.hessian,
        step=step, stop=stop, max_iter=s.max_iter, max_passes=s.max_iter if stochastic else None,
        random_state=rng, verbose=s.verbose, callback=callback,
    )


def estimator(settings, precision, population=1, evaluates=True):
    """The expectation estimator, the ``beta`` to run it with and the step policy
    (the module's docstring)."""
    s = settings
    beta, radius = s.beta, s.trust_radius * np.sqrt(s.n)
    if s.expectation == "quadrature":
        grid = GaussHermiteGrid(s.nodes)
        if s.hessian != "exact":
            return grid, beta, ArmijoMeanStep()
        growth = max(2.0, s.beta_growth)
        accept = ObjectiveDecrease()
        if growth > 2.0:
            accept = AllOf(TrustRegion(radius), accept)
        return grid, beta, BetaBacktrack(accept, memory=True, growth=growth)
    if s.fitness_shaping:
        draws = (population_size(s.n) if s.n_mc_samples is None else s.n_mc_samples) * population
        expectation, rate = evolution_strategy(s.n, beta, s.covariance, draws, s.shape_update,
                                               s.rank_one_fraction)
        return expectation, rate, BetaBacktrack(TrustRegion(radius))
    draws = (2 * (s.n + 1) if s.n_mc_samples is None else s.n_mc_samples) * population
    if s.order == 0:
        return MonteCarlo(draws), beta, BetaBacktrack(TrustRegion(radius))
    accept = TrustRegion(radius, precision)
    if evaluates:
        accept = AllOf(accept, LongStepCheck(s.checked_radius))
    return MonteCarlo(draws, mixed=True), beta, BetaBacktrack(accept)
