"""How an estimator's parameters become a run of the solver: one frozen record.

An estimator validates its parameters and builds :class:`FitSettings`; the
solver's parts (schedule, convergence test, batches, starting ``q``) are then
built from the record alone, by the estimators and by the Lasso's engine
(:mod:`skvan.van._lasso`) alike.
"""

from dataclasses import dataclass, replace

import numpy as np

from ..expectations import make_expectation
from ._batches import Minibatches
from ._gram import family_from_parts
from ._schedule import AveragingSchedule, GeometricSchedule
from ._solver import VANSolver, warn_unconverged
from ._stopping import MeanContraction, PassChange


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

    def exact_full_batch(self, n_samples):
        """Whether iterations can run on ``X^T X`` alone (closed forms, every row)."""
        return self.expectation == "exact" and not self.stochastic(n_samples)

    def schedule(self, n_samples, objective):
        """The schedule of the rates. ``beta_growth="auto"``: geometric growth for VO
        on the full data (``auto_growth``; constant with Monte Carlo where
        ``constant_for_mc``), constant ``beta`` for VI on the full data (a damping
        weight), and sVAN's :class:`~skvan.van.AveragingSchedule` with minibatches.
        A number is the paper's geometric schedule ``beta * growth**t`` everywhere
        (``1`` with minibatches: the paper's sVAN)."""
        growth = self.beta_growth
        if growth == "auto":
            if self.stochastic(n_samples):
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
                                 np.zeros(0 if X is None else X.shape[0]), X, free_coordinates(f))

    def solve(self, f, family, random_state, objective=None, step=None, stop=None,
              schedule=None, advice=None):
        """Fit ``family`` to ``f`` with the shared solver (these settings' schedule,
        batches and convergence test unless given); ``max_iter`` counts iterations
        on the full batch and data passes with minibatches (scikit-learn's SGD
        convention). Warns if the run ended at ``max_iter`` or diverged, with
        ``advice(schedule)`` (None: :meth:`advice`). The result's ``n_iter`` is in
        the same unit as ``max_iter``."""
        objective = self.objective if objective is None else objective
        n_samples = getattr(f, "n_samples", None)
        if schedule is None:
            schedule = self.schedule(n_samples, objective)
        per_pass = self.steps_per_pass(n_samples)
        solver = VANSolver(
            f, make_expectation(self.expectation, self.n_mc_samples, f), family,
            objective=objective, schedule=schedule, hessian=self.hessian, step=step,
            stop=self.stop(n_samples) if stop is None else stop,
            batches=Minibatches(self.batch_size) if self.stochastic(n_samples) else None,
            max_iter=self.max_iter * per_pass, random_state=random_state, verbose=self.verbose,
        )
        result = solver.solve()
        result = result._replace(n_iter=-(-result.n_iter // per_pass))
        warn_unconverged(result, self.tol, (advice or self.advice)(schedule))
        return result

    def advice(self, schedule):
        """What to change when a fit ends at ``max_iter``, for these settings."""
        tips = ["Increase max_iter"]
        if self.covariance == "diag":
            tips.append("use covariance='full' (the diagonal family zig-zags on "
                        "correlated features)")
        if isinstance(schedule, AveragingSchedule):
            tips.append("use larger minibatches, or the full batch (batch_size=None), "
                        "which converges linearly")
        elif schedule.growth == 1.0 and (self.objective == "vo" or schedule.beta < 1):
            tips.append("use a growing schedule (beta_growth > 1)")
        if self.expectation == "mc":
            tips.append("use deterministic expectations or a larger n_mc_samples (Monte "
                        "Carlo steps stay at the noise level)")
        return "; or ".join(tips) + "."


def free_coordinates(f):
    """The unpenalised coordinates of ``f`` (the intercept)."""
    free = getattr(f.penalty, "strength", 0.0) == 0
    # (np.broadcast_to costs a few us even where there is nothing to broadcast)
    return free if np.shape(free) == (f.n_params,) else np.broadcast_to(free, (f.n_params,))
