"""How an estimator's parameters become a run of the solver: one frozen record.

An estimator validates its parameters and builds :class:`FitSettings`; the
solver's parts (schedule, convergence test, batches, starting ``q``) are then
built from the record alone, by the estimators and by the Lasso's engine
(:mod:`skvan.van._lasso`) alike.
"""

from dataclasses import dataclass, replace

import numpy as np

from ..expectations import (
    LinearPredictorExpectation,
    PointMass,
    RowMemory,
    make_expectation,
)
from ..expectations._base import NEGLIGIBLE
from ..objectives import L2Penalty
from ..objectives._linear import RowsObjective
from ._batches import Minibatches
from ._gram import family_from_parts
from ._schedule import AveragingSchedule, GeometricSchedule, IncrementalSchedule
from ._solver import VANSolver, warn_unconverged
from ._steps import DampedNewtonStep
from ._stopping import GradientBound, MeanContraction, PassChange


@dataclass(frozen=True)
class FitSettings:
    """The parameters of a fit, as the solver's parts need them.

    ``beta_growth`` is the estimator's (a number or "auto"), ``auto_growth``
    what "auto" means for VO on the full data, and ``constant_for_mc`` whether
    "auto" with Monte Carlo on the full data is the constant schedule (a
    Lasso's: without exact values no safeguard can keep a geometric schedule
    from collapsing ``q`` around coefficients that have not arrived).
    ``covariance`` is the form a fit uses (the estimator's ``covariance_``).
    """

    beta: float
    beta_growth: object
    auto_growth: float
    covariance: str
    hessian: str
    expectation: str
    n_mc_samples: int
    objective: str
    batch_size: object
    max_iter: int
    tol: float
    verbose: int = 0
    constant_for_mc: bool = False

    def with_(self, **changes):
        """A copy with ``changes``."""
        return replace(self, **changes)

    def stochastic(self, n_samples):
        """Whether a fit on ``n_samples`` rows sees minibatches (None: not rows)."""
        return self.batch_size is not None and n_samples is not None and self.batch_size < n_samples

    def steps_per_pass(self, n_samples):
        """Minibatch steps in one data pass (1 on the full batch)."""
        return -(-n_samples // self.batch_size) if self.stochastic(n_samples) else 1

    def remembers_rows(self, n_samples, expectation):
        """Whether minibatch steps keep every row's integrals
        (:class:`~skvan.expectations.RowMemory`, variance-reduced sVAN): with
        ``beta_growth="auto"`` on minibatches, for a full covariance, the exact
        expected Hessian and an estimator that integrates the rows
        deterministically. The rows' first-order models need the derivative of
        ``E[l']``, which is ``E[l'']`` (the Gauss-Newton curvature is another),
        and the whole curvature (a diagonal family keeps its diagonal); a number
        for ``beta_growth`` is the paper's sVAN on the minibatches' own
        estimates."""
        return self.stochastic(n_samples) and self.can_remember_rows(expectation)

    def can_remember_rows(self, expectation):
        """Whether these settings and ``expectation`` allow the rows' memory,
        minibatches aside (:meth:`remembers_rows` asks for them too; a stream's
        batches are :class:`~skvan.expectations.StreamRowMemory`'s)."""
        return (self.beta_growth == "auto" and self.covariance == "full"
                and self.hessian == "exact"
                and isinstance(expectation, LinearPredictorExpectation))

    def exact_full_batch(self, n_samples):
        """Whether iterations can run on ``X^T X`` alone (closed forms, every row)."""
        return self.expectation == "exact" and not self.stochastic(n_samples)

    def schedule(self, n_samples, objective, memory=False):
        """The schedule of the rates. ``beta_growth="auto"``: geometric growth for VO
        on the full data (``auto_growth``; constant with Monte Carlo where
        ``constant_for_mc``), constant ``beta`` for VI on the full data (a damping
        weight), and with minibatches sVAN's :class:`~skvan.van.IncrementalSchedule`
        where the rows' integrals are remembered (``memory``: ``auto_growth`` per
        data pass once every row is) or its :class:`~skvan.van.AveragingSchedule`.
        A number is the paper's geometric schedule ``beta * growth**t`` everywhere
        (``1`` with minibatches: the paper's sVAN)."""
        growth = self.beta_growth
        if growth == "auto":
            if self.stochastic(n_samples):
                if memory:
                    return IncrementalSchedule(self.beta, self.auto_growth,
                                               self.steps_per_pass(n_samples))
                return AveragingSchedule(self.beta)
            if self.constant_for_mc and self.expectation == "mc":
                growth = 1.0
            else:
                growth = 1.0 if objective == "vi" else self.auto_growth
        return GeometricSchedule(self.beta, growth)

    def stop(self, n_samples):
        """The convergence test: the mean's contraction on the full batch, its change
        over a data pass with minibatches."""
        return PassChange(self.tol) if self.stochastic(n_samples) else MeanContraction(self.tol)

    def initial_family(self, f, mean=None):
        """The starting ``q = N(mean, precision^-1)`` for a linear model objective
        ``f``: mean 0 (or ``mean``) and unit predictor variance on average
        (:func:`~skvan.van.unit_predictor_precision`), in the form ``covariance``
        names. Unpenalised coordinates are the Gram forms' free ones."""
        if mean is None:
            mean = np.zeros(f.n_params)
        lam = f.unit_predictor_precision()
        if lam.size != f.n_params:
            lam = np.tile(lam, f.n_params // lam.size)  # every row of [coef, intercept]
        X = getattr(f, "X", None)  # rows in memory (the Gram forms are written through them)
        return family_from_parts(self.covariance, mean, lam,
                                 np.zeros(0 if X is None else X.shape[0]), X, free_coordinates(f),
                                 getattr(f, "n_classes", 1))

    def solve(self, f, family, random_state, objective=None, step=None, stop=None,
              schedule=None, advice=None, expectation=None, finalize_family=True):
        """Fit ``family`` to ``f`` with the shared solver (these settings' schedule,
        batches and convergence test unless given); ``max_iter`` counts iterations
        on the full batch and data passes with minibatches (scikit-learn's SGD
        convention). Warns if the run ended at ``max_iter`` or diverged, with
        ``advice(schedule)`` (None: :meth:`advice`). ``expectation``: an
        estimator instead of the one these settings name; ``finalize_family``:
        the solver's. The result's ``n_iter`` is in the same unit as ``max_iter``."""
        objective = self.objective if objective is None else objective
        n_samples = getattr(f, "n_samples", None)
        per_pass = self.steps_per_pass(n_samples)
        expectation, schedule, step = self.solver_parts(f, objective, expectation, schedule,
                                                        step)
        solver = VANSolver(
            f, expectation, family,
            objective=objective, schedule=schedule, hessian=self.hessian, step=step,
            stop=self.stop(n_samples) if stop is None else stop,
            batches=Minibatches(self.batch_size) if self.stochastic(n_samples) else None,
            max_iter=self.max_iter * per_pass, random_state=random_state, verbose=self.verbose,
            finalize_family=finalize_family,
        )
        result = solver.solve()
        result = result._replace(n_iter=-(-result.n_iter // per_pass))
        warn_unconverged(result, self.tol, (advice or self.advice)(schedule))
        return result

    def solver_parts(self, f, objective, expectation=None, schedule=None, step=None):
        """``(expectation, schedule, step)`` of a run on ``f`` under ``objective``,
        each these settings' unless given: the estimator they name, wrapped in a
        :class:`~skvan.expectations.RowMemory` where minibatches remember the rows
        (:meth:`remembers_rows`), with :class:`~skvan.van.DampedNewtonStep` as its
        step; the schedule :meth:`schedule` picks; None for the step is the
        solver's default."""
        n_samples = getattr(f, "n_samples", None)
        if expectation is None:
            expectation = make_expectation(self.expectation, self.n_mc_samples, f)
            if self.remembers_rows(n_samples, expectation):
                expectation = RowMemory(expectation)
        memory = isinstance(expectation, RowMemory)
        if schedule is None:
            schedule = self.schedule(n_samples, objective, memory)
        if step is None and memory:
            step = DampedNewtonStep()
        return expectation, schedule, step

    def advice(self, schedule):
        """What to change when a fit ends at ``max_iter``, for these settings."""
        tips = ["Increase max_iter"]
        if self.covariance == "diag":
            tips.append("use covariance='full' (the diagonal family zig-zags on "
                        "correlated features)")
        if type(schedule) is AveragingSchedule:  # (not the rows' IncrementalSchedule)
            tips.append("use larger minibatches, or the full batch (batch_size=None), "
                        "which converges linearly")
        elif schedule.growth == 1.0 and (self.objective == "vo" or schedule.beta < 1):
            tips.append("use a growing schedule (beta_growth > 1)")
        if self.expectation == "mc":
            tips.append("use deterministic expectations or a larger n_mc_samples (Monte "
                        "Carlo steps stay at the noise level)")
        return "; or ".join(tips) + "."


def laplace_posterior(f, settings, start, random_state):
    """The Laplace approximation ``N(theta*, H(theta*)^-1)`` of ``exp(-f)``, from ``start``.

    ``theta*``, the minimiser of ``f``, is the VO limit of VAN as ``q`` narrows to
    a point (the paper's Section 3): the run starts from ``start`` narrowed by
    ``kappa``, ``N(mu_0, (kappa P_0)^-1)``, with ``kappa`` the smallest factor
    that makes every row's predictor variance negligible with a margin
    (``max_i ||x_i||^2 tr(Sigma_0) / kappa <= NEGLIGIBLE / 2``), so that the
    expectations are ``f``'s derivatives at the mean
    (:class:`~skvan.expectations.PointMass`), with no quadrature. The
    schedule ``beta_t = kappa g^(t+1)`` (``g`` the settings' ``auto_growth``)
    makes the precision ``kappa (P_0 + g H_0 + g^2 H_1 + ...)``, and every mean
    step at least ``g / (g + 1)`` of a damped Newton step of ``f`` from the
    first: from a start near ``theta*`` (the posterior before a few more rows
    arrived) a few iterations, each one pass over the rows. The run stops by
    :class:`~skvan.van.MeanContraction`, or where a ridge on every coordinate
    makes ``f`` strongly convex, once the gradient bounds the distance left
    (:class:`~skvan.van.GradientBound`: a diagonal family's steps zig-zag on
    correlated features, where the contraction reads as slow). The precision is
    then the Hessian of ``f`` at the mean (its diagonal for a diagonal family).

    Parameters
    ----------
    f : LinearModelObjective
    settings : FitSettings
        The run's tolerance, iterations, curvature (``hessian``) and verbosity;
        its objective, batches, schedule and expectations are the ones above.
    start : FullGaussian or DiagonalGaussian
        Where the mean starts; its form (full or diagonal) is the run's and the
        result's.
    random_state : RandomState

    Returns
    -------
    family : FullGaussian or DiagonalGaussian
    result : VANResult
        The run's.

    See Also
    --------
    skvan.ActiveVANClassifier : Refits its labels' Laplace posterior after each ``teach``.

    References
    ----------
    .. [1] M. E. Khan, W. Lin, V. Tangkaratt, Z. Liu and D. Nielsen, "Variational
       Adaptive-Newton Method for Explorative Learning", AISTATS 2018.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import make_classification
    >>> from skvan.objectives import L2Penalty, LinearModelObjective, LogisticLoss
    >>> from skvan.van import FitSettings, laplace_posterior, make_family
    >>> X, y = make_classification(200, 3, n_informative=2, n_redundant=0, random_state=0)
    >>> f = LinearModelObjective(X, 2.0 * y - 1.0, LogisticLoss(), penalty=L2Penalty(np.ones(3)))
    >>> settings = FitSettings(beta=1.0, beta_growth="auto", auto_growth=100.0,
    ...                        covariance="full", hessian="exact", expectation="quadrature",
    ...                        n_mc_samples=10, objective="vo", batch_size=None,
    ...                        max_iter=100, tol=1e-8)
    >>> q, run = laplace_posterior(f, settings, make_family("full", np.zeros(3), np.eye(3)),
    ...                            np.random.RandomState(0))
    >>> bool(np.abs(f.gradient(q.mean)).max() < 1e-8)
    True
    >>> bool(np.allclose(q.precision, f.hessian(q.mean)))
    True
    """
    trace = float(np.sum(start.marginal_variance()))
    # (Twice the factor: the expectations' own test of the bound must not fail
    # on the rounding of the product.)
    kappa = max(2.0 * f.max_row_squared_norm() * trace / NEGLIGIBLE, 1.0)
    family = start.scaled_precision(kappa)
    growth = settings.auto_growth
    point = PointMass()
    result = settings.with_(objective="vo", batch_size=None).solve(
        f, family, random_state, schedule=GeometricSchedule(kappa * growth, growth),
        expectation=point, stop=GradientBound(settings.tol, _ridge_modulus(f)),
        finalize_family=False)
    mean = family.mean
    # (the Hessian there is the one the last step's search computed, where it did)
    _, _, H = point.derivatives(f, mean, family.diagonal)
    return type(start)(mean, H), result


def _ridge_modulus(f):
    """The smallest ridge ``lambda_j`` of a linear model ``f`` (its losses are
    convex, so ``hess f >= min_j lambda_j I``), or 0 where some coordinate has
    none or the penalty is not a ridge."""
    penalty = getattr(f, "penalty", None)
    if not isinstance(penalty, L2Penalty) or not isinstance(f, RowsObjective):
        return 0.0
    strength = np.broadcast_to(penalty.strength, (f.n_params,))
    return float(np.min(strength)) if strength.size else 0.0


def free_coordinates(f):
    """The unpenalised coordinates of ``f`` (the intercept)."""
    free = getattr(f.penalty, "strength", 0.0) == 0
    # (np.broadcast_to costs a few us even where there is nothing to broadcast)
    return free if np.shape(free) == (f.n_params,) else np.broadcast_to(free, (f.n_params,))
