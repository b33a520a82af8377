"""THE VAN solver loop, shared by every estimator and by :func:`skvan.minimize`.

    setup -> repeat {expectations -> step (precision, then mean) -> convergence}
          -> finalize

Updates (Khan et al. 2018, eqs. Van_prec_1 / Van_mean_1 and Section 5)::

    vo:  P <- P + beta_t E_q[C(theta)]                  (running sum)
    vi:  P <- (1 - beta_t) P + beta_t E_q[C(theta)]     (damped average)
         mu <- mu - beta_t P^-1 E_q[grad f(theta)]

``C`` is the Hessian (``hessian="exact"``) or the Gauss-Newton curvature (VAG).
What varies between uses is pluggable, and chosen once before the loop:

- the variational objective (``objective``, :mod:`skvan.van._schedule`): how the
  precision averages and which value a safeguard compares;
- the schedule of the rates (``schedule``: :class:`GeometricSchedule`, or
  :class:`AveragingSchedule` for minibatches);
- the step policy (``step``, :mod:`skvan.van._steps`): how much of the scheduled
  step is taken;
- the convergence test (``stop``, :mod:`skvan.van._stopping`);
- the data each iteration sees (``batches``, :mod:`skvan.van._batches`).
"""

from collections import namedtuple

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state

from .._blas import lapack_one_thread
from .._reductions import all_finite
from .._warnings import warn_user
from ._batches import FullBatch
from ._schedule import AveragingSchedule, GeometricSchedule, variational_objective
from ._steps import default_step
from ._stopping import MeanContraction

#: Consecutive rejected steps (deterministic, full batch) after which a run stops
#: as "stalled": the schedule's next rates get two more chances.
STALL_REJECTIONS = 3

#: Consecutive flat iterations (every fitness-shaped draw's value tied:
#: ``Expectations.flat``) after which a run stops as "flat". Each widens ``q`` by
#: ``exp(0.2 + c / d)`` in sd (:class:`~skvan.expectations.CumulativeScale`, as CMA-ES
#: does on flat fitness), 1.6 to 1.7 times from 2 to 20 dimensions, so ten leave it
#: about 120 to 190 times wider than where the values first tied: ``f`` is constant
#: there as far as a search can tell (CMA-ES stops after two, ``tolflatfitness``).
FLAT_ITERATIONS = 10

#: ``VANResult.status`` values and what they mean.
MESSAGES = {
    "converged": "The convergence test passed.",
    "stalled": "Stopped: no step decreased the objective beyond round-off, so the mean is "
               "stationary to working precision.",
    "stuck": "Stopped: no step decreased the objective beyond round-off while the mean was "
             "still moving by more than tol; it is not a fixed point to tol.",
    "max_iter": "Maximum number of iterations reached.",
    "diverged": "Stopped: the expected gradient or curvature was not finite.",
    "stopped": "Stopped by the callback.",
    "flat": f"Stopped: every value of the last {FLAT_ITERATIONS} iterations tied (flat "
            "fitness), while q widened each time.",
}

VANResult = namedtuple(
    "VANResult",
    ["family", "n_iter", "status", "value", "n_data_passes", "history", "distance", "stochastic"],
)
VANResult.__doc__ = """What :meth:`VANSolver.solve` returns.

family : the final Gaussian (``family.mean``, ``family.precision``).
n_iter : number of iterations run.
status : "converged", "stalled", "stuck", "max_iter", "diverged", "stopped" or "flat"
    (see :data:`MESSAGES`); ``converged`` is true for the first two.
value : last expected objective ``E_q[f]`` (on the last minibatch when stochastic).
n_data_passes : data passes used, counting a minibatch as its fraction of the data.
history : list of per-iteration dicts (``value``; ``change``, the mean's largest
    change; ``beta``, the rate taken; ``fraction``, the share of ``beta_t`` kept).
distance : estimated distance (max norm) of the mean to its fixed point; inf if
    unknown.
stochastic : whether iterations saw minibatches.
"""
VANResult.converged = property(lambda self: self.status in ("converged", "stalled"))
VANResult.message = property(lambda self: MESSAGES[self.status])


class VANSolver:
    """Variational Adaptive-Newton solver.

    Parameters
    ----------
    f : Objective
        What is minimised (an instance from :mod:`skvan.objectives`).
    expectation : ExpectationEstimator
        How ``E_q[f]``, ``E_q[grad f]`` and the expected curvature are obtained.
    family : FullGaussian or DiagonalGaussian
        The initial ``q``; it is updated in place.
    objective : {"vo", "vi"}, default="vo"
        Variational optimisation (running-sum precision) or variational inference
        (damped average).
    schedule : GeometricSchedule or AveragingSchedule or None, default=None
        The rates of each step; None is the constant ``beta = 1`` on the full batch
        and ``AveragingSchedule()`` (sVAN) with minibatches.
    hessian : {"exact", "gauss_newton"}, default="exact"
        Expected Hessian, or the PSD Gauss-Newton curvature (VAG).
    step : step policy or None, default=None
        From :mod:`skvan.van._steps`; None picks :func:`default_step`.
    stop : convergence test or None, default=None
        None is ``MeanContraction(tol=1e-5)``.
    batches : FullBatch or Minibatches or None, default=None
        None is the full batch.
    max_iter : int, default=100
        Iterations before the run stops (status "max_iter").
    max_passes : float or None, default=None
        Data passes (the told fractions summed) before the run stops, in place
        of ``max_iter`` (an ask/tell driver's stochastic runs); None: ``max_iter``.
    random_state : int, RandomState or None
    verbose : int, default=0
    callback : callable or None, default=None
        Called as ``callback(solver)`` after each iteration; raising StopIteration
        ends the run (status "stopped").
    finalize_family : bool, default=True
        Whether the run ends by computing what fitted attributes read of ``q``
        (its covariance); False for a run whose ``q`` only its mean is taken from
        (:func:`~skvan.van.laplace_posterior`'s).
    """

    def __init__(
        self,
        f,
        expectation,
        family,
        *,
        objective="vo",
        schedule=None,
        hessian="exact",
        step=None,
        stop=None,
        batches=None,
        max_iter=100,
        max_passes=None,
        random_state=None,
        verbose=0,
        callback=None,
        finalize_family=True,
    ):
        self.f = f
        self.expectation = expectation
        self.family = family
        self.objective = objective
        self.schedule = schedule
        self.hessian = hessian
        self.step = step
        self.stop = stop
        self.batches = batches
        self.max_iter = max_iter
        self.max_passes = max_passes
        self.random_state = random_state
        self.verbose = verbose
        self.callback = callback
        self.finalize_family = finalize_family

    # -- the loop -----------------------------------------------------------------
    def solve(self):
        """Run the VAN iterations and return a :data:`VANResult`: :meth:`setup`,
        then :meth:`ask`, the expectations of the asked batch under ``q``, and
        :meth:`tell`, until the run ends."""
        self.setup()
        # Within the loop a full family's LAPACK work, its covariances' inverses
        # too (which thread at every size), keeps scipy's BLAS on one thread
        # (skvan._blas.lapack_one_thread), entered once here; the passes over the
        # rows run on the user's BLAS threads.
        with lapack_one_thread(self.family.n_params, inverse=True):
            while not self.done:
                batch = self.ask()
                self.tell(self.expectation(batch, self.family, hessian=self.hessian,
                                           random_state=self.rng))
        return self.finalize()

    def ask(self):
        """Begin an iteration: return its objective (the next minibatch, or the
        whole ``f``), whose expectations under the current ``q`` :meth:`tell`
        takes. An ask/tell driver that evaluates ``f`` itself
        (:class:`skvan.optimize.VANOptimizer`) draws its points from ``q`` here."""
        if self.done:
            raise RuntimeError(f"The run has ended (status {self.status!r}).")
        self.batch, self.fraction = self.batches_.next()
        return self.batch

    def tell(self, expectations, fraction=None):
        """End the iteration :meth:`ask` began, from ``expectations`` (value,
        gradient and curvature under the current ``q``): the step, the convergence
        and stall tests, the callback, the budget. ``fraction`` is the share of
        a data pass the expectations came from (None: the asked batch's).
        Returns whether the run has ended (``status`` then says why)."""
        self.n_data_passes += self.fraction if fraction is None else fraction
        self.expect = expectations
        if not self.expectations_finite():
            self.status, self.done = "diverged", True
        else:
            self.done = self.advance() or self.spent()
        self.iteration += 1
        if self.done and self.finalize_family:
            # What the fitted attributes read, under the loop's LAPACK threads.
            with lapack_one_thread(self.family.n_params, inverse=True):
                self.family.finalize()
        return self.done

    def spent(self):
        """Whether the budget is used up (``status`` stays "max_iter"):
        ``max_iter`` iterations, or ``max_passes`` data passes (the round-off of
        summed fractions forgiven)."""
        if self.max_passes is not None:
            return self.n_data_passes + 1e-9 >= self.max_passes
        return self.iteration + 1 >= self.max_iter

    def advance(self):
        """The rest of an iteration once ``expect`` is set: the step, the
        convergence and stall tests, the callback. Returns True (with ``status``
        set) when the run ends here."""
        if self.verbose:
            # What the printed line reports: the variational objective at the
            # iteration's q (under VI, E_q[f] - H(q) up to a constant, which the
            # steps decrease; E_q[f] alone may rise as q widens).
            self.printed_value = self.objective_.value(self.expect.value, self.family)
        self.take_step()
        self.flat_iterations = self.flat_iterations + 1 if self.expect.flat else 0
        if self.check_convergence():
            self.status = "converged"
            return True
        if self.stalled():
            settled = getattr(self.stop_, "settled", None)
            self.status = "stalled" if settled is None or settled() else "stuck"
            return True
        if self.flat_iterations >= FLAT_ITERATIONS:
            self.status = "flat"
            return True
        if self.callback is not None:
            try:
                self.callback(self)
            except StopIteration:
                self.status = "stopped"
                return True
        return False

    def setup(self):
        """Check ``f`` against the expectation estimator and resolve the pluggable
        parts; sets ``objective_``, ``schedule_``, ``step_``, ``stop_``, ``batches_``,
        ``rng``, ``status`` and the counters."""
        self.expectation.check_objective(self.f)
        self.rng = check_random_state(self.random_state)
        self.objective_ = variational_objective(self.objective)
        self.batches_ = self.batches if self.batches is not None else FullBatch()
        self.batches_.reset(self.f, self.rng)
        self.schedule_ = self.schedule if self.schedule is not None else (
            AveragingSchedule() if self.batches_.stochastic else GeometricSchedule())
        self.step_ = self.step if self.step is not None else default_step(
            self.objective_, self.expectation.deterministic, self.batches_.stochastic,
            self.hessian)
        self.step_.reset(self)
        self.stop_ = self.stop if self.stop is not None else MeanContraction()
        self.stop_.reset()
        self.expectation.reset(self)
        self.status = "max_iter"
        self.done = False
        self.iteration = 0
        # The size of the terms that cancel in f's value (objective comparisons
        # allow round-off relative to it).
        self.value_scale = float(self.f.value_scale())
        self.rejections = 0
        self.flat_iterations = 0
        self.n_iter = 0
        self.n_data_passes = 0.0
        self.history = []
        self.distance = np.inf

    def expectations_finite(self):
        """Whether ``expect``'s value, gradient and curvature are finite (the loop
        and the ask/tell driver stop as "diverged" where not)."""
        C = self.expect.curvature
        return bool(
            np.isfinite(self.expect.value)
            and all_finite(self.expect.gradient)
            and (C.all_finite() if hasattr(C, "all_finite") else all_finite(C))
        )

    def take_step(self):
        """Set ``rates`` from the schedule and let the step policy update ``q``;
        sets ``fraction`` (the share of ``beta_t`` kept) and ``mean_change``, and
        ``residual``: None, or, from a policy that took another step than the
        scheduled one (:class:`~skvan.van.AndersonStep`), the scheduled step of the
        mean from this iteration's start, which the convergence test then measures."""
        self.schedule_.observe(self)
        self.rates = self.schedule_.rates(self.iteration, self.objective_)
        self.previous_precision = self.family.precision
        self.residual = None
        self.fraction = self.step_.take(self)
        self.rejections = self.rejections + 1 if self.fraction == 0 else 0

    def stalled(self):
        """Whether the last :data:`STALL_REJECTIONS` steps were all rejected on
        deterministic full-batch expectations: ``q`` did not move, so the next
        iteration would repeat them. For a descent direction ``-P^-1 g`` no step
        down to the policy's smallest one decreasing the objective means ``g`` is
        zero to round-off."""
        return self.rejections >= STALL_REJECTIONS and self.exact_steps

    @property
    def exact_steps(self):
        """Whether the steps come from deterministic full-batch expectations (not
        noise: repeating one repeats it exactly)."""
        return bool(self.expectation.deterministic and not self.batches_.stochastic)

    # -- primitives of a step (called by the step policies) ------------------------
    def update_precision(self, rates):
        """Set ``P <- keep P_t + beta C`` from the precision ``P_t`` of this
        iteration's start (so a policy may call it again with other rates)."""
        if self.family.precision is not self.previous_precision:
            self.family.set_precision(self.previous_precision)
        self.family.update_precision(self.expect.curvature, rates.beta, rates.keep)

    def newton_step(self, beta):
        """``-beta P^-1 E[grad f]`` under the family's current precision (solved as
        accurately as the family solves mean steps)."""
        return -beta * self.family.solve_step(self.expect.gradient)

    def update_mean(self, delta):
        """Move the mean by ``delta``; sets ``mean_change`` to the change of the mean
        as stored (``delta`` up to rounding), which the convergence test measures."""
        mean = self.family.mean
        self.family.mean = mean + delta
        self.mean_change = self.family.mean - mean

    def reject(self):
        """Leave ``q`` as it was at the start of the iteration."""
        self.family.set_precision(self.previous_precision)
        self.mean_change = np.zeros_like(self.family.mean)

    def expected_value(self, mean, prepare=False):
        """``E_q[f]`` on this iteration's objective, ``q`` with the family's covariance
        centred at ``mean``. With ``prepare`` the estimator may also compute the
        derivatives there, so that the next expectations pass is free if the mean
        moves to ``mean``."""
        return self.expectation.value(self.batch, self.family, mean,
                                      self.hessian if prepare else None)

    # -- after the step -------------------------------------------------------------
    def check_convergence(self):
        """Record the iteration in ``history`` and apply the convergence test;
        sets ``n_iter`` and ``distance``."""
        self.n_iter = self.iteration + 1
        change = self.mean_change
        d = float(np.max(np.abs(change))) if change.size else 0.0
        beta = self.fraction * self.rates.mean
        self.history.append({"value": self.expect.value, "change": d, "beta": beta,
                             "fraction": self.fraction})
        if self.verbose:
            label = "E[f]" if self.objective_.name == "vo" else "E[f]-H"
            print(f"[VAN] iter {self.n_iter:4d}  {label}={self.printed_value:.8g}  "
                  f"change={d:.3e}  beta={beta:.3g}  fraction={self.fraction:.3g}")
        converged = self.stop_(self)
        self.distance = self.stop_.distance
        return converged

    def finalize(self):
        """Return the :data:`VANResult`."""
        value = self.expect.value if hasattr(self, "expect") else np.nan
        return VANResult(self.family, self.n_iter, self.status, value, self.n_data_passes,
                         self.history, self.distance, self.batches_.stochastic)


def warn_unconverged(result, tol=None, advice=""):
    """Warn, at the user's line, that a run ended without converging.

    A diverged run says so; so does a stuck one (every step rejected while the mean
    still moved by more than ``tol``); a run that hit ``max_iter`` names the last
    mean change (over the last data pass when stochastic) and ``tol``. A stuck run
    and one at ``max_iter`` end with ``advice``: what to change under the current
    settings. Runs that converged or were stopped by a callback do not warn.
    """
    if result.status == "diverged":
        warn_user(
            f"VAN stopped at iteration {result.n_iter + 1}: the expected gradient or "
            "curvature is not finite. The result is the last finite iterate; rescale "
            "the features or reduce beta.",
            ConvergenceWarning,
        )
    elif result.status == "stuck":
        last = next((h["change"] for h in reversed(result.history) if h["fraction"] > 0),
                    np.nan)
        warn_user(
            f"VAN stopped at iteration {result.n_iter}: no step decreased the objective "
            f"beyond round-off while the mean was still moving (last accepted change "
            f"{last:.3g}" + (f", tol={tol:g}" if tol is not None else "") + "). The "
            "expected objective's values, or its curvature, are not accurate enough there "
            f"for the step safeguard; the result is not a fixed point to tol. {advice}".rstrip(),
            ConvergenceWarning,
        )
    elif result.status == "max_iter":
        if result.stochastic:
            what, change = f"max_iter={result.n_iter} data passes", "over the last pass"
            last = result.distance
        else:
            what, change = f"max_iter={result.n_iter} iterations", "last mean change"
            last = result.history[-1]["change"] if result.history else np.nan
        warn_user(
            f"VAN did not converge in {what} ({change} {last:.3g}"
            + (f", tol={tol:g}" if tol is not None else "") + f"). {advice}".rstrip(),
            ConvergenceWarning,
        )
