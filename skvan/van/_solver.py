"""THE VAN solver loop, shared by every estimator and by :func:`skvan.minimize`.

    setup -> repeat {expectations -> precision update -> mean update -> convergence}
          -> finalize

Updates (Khan et al. 2018, eqs. Van_prec_1 / Van_mean_1 and Section 5)::

    vo:  P <- P + beta_t E_q[C(theta)]                  (running sum)
    vi:  P <- (1 - beta_t) P + beta_t E_q[C(theta)]     (damped average)
         mu <- mu - alpha_t beta_t P^-1 E_q[grad f(theta)]

``C`` is the Hessian (``curvature="exact"``) or the Gauss-Newton curvature (VAG).
``alpha_t = 1`` unless a safeguard (below) shortens the step; the VI safeguard
and the Monte Carlo trust region shorten it by using ``alpha_t beta_t`` in place
of ``beta_t`` in both updates.

Step-size schedule
------------------
``beta_t = beta * beta_growth**t``. ``beta_growth=1`` is the paper's constant
``beta``: the precision grows linearly and each mean step is about ``1/t`` of a
Newton step, which suits stochastic minibatches (it averages their noise) and
keeps ``q`` wide for exploration, but converges only sublinearly. With
``beta_growth = g > 1`` (geometric schedule) the precision is a geometric sum,
``P_t ~ beta_t g/(g-1) C``, so every mean step is a fixed fraction ``(g-1)/g`` of a
Newton step: linear convergence at rate ``~1/g`` (faster as ``g`` grows) while
``q`` shrinks by ``1/g`` per iteration (less exploration). Under ``vi``, ``beta_t``
is capped at 1. Under ``vo``, once ``beta_t`` reaches ``1e100`` (``q`` is then a
point mass for every practical purpose) it stops growing and the running sum is
discounted, ``P <- P / g + beta_t C``, so the steps stay ``(g-1)/g`` of a Newton
step instead of decaying.

Safeguards
----------
With deterministic expectations on the full data each step is checked on the
objective being minimised (a Newton-like step on a flat, nearly separable or
non-convex problem may overshoot; near the optimum of a smooth convex problem
the first trial always passes):

- ``vo``: the full step is taken if the VO objective does not increase,
  ``L_{t+1}(mu + d) <= L_t(mu) + 1e-4 E[grad f]^T d`` (``L_t`` the expected
  objective under the covariance of iteration ``t``, known from the last pass);
  otherwise the mean step is shortened, ``alpha_t`` the largest of ``1, 1/2, ...``
  with ``L_{t+1}(mu + alpha d) <= L_{t+1}(mu) + 1e-4 alpha E[grad f]^T d``.
- ``vi``: the whole step (precision and mean) is redone with ``beta_t`` halved
  until the VI objective ``E_q[f] + 1/2 log det P`` (``E_q[f] - H(q)`` up to a
  constant) does not increase; ``alpha_t`` records the factor on ``beta_t``.
- ``vo`` with ``vo_safeguard="step"``: the whole step is redone with ``beta_t``
  halved until ``L_{t+1}(mu_{t+1}) <= L_t(mu_t)``, down to ``beta_t = 2^-30 beta``;
  the next step then starts from at most twice the accepted ``beta_t``.
  Shortening only the mean step lets ``q`` collapse around a mean that has not
  arrived; on non-smooth ``f`` (the L1 penalty, whose expected curvature grows
  like ``1/s`` near 0) that freezes coordinates. Halving ``beta_t`` for the
  precision too keeps ``q`` as wide as the mean needs. It is not the default
  because on smooth problems it can keep ``q`` wide for many iterations (VAN-D
  logistic regression was 25-40x slower with it, measured before the step had
  the memory of its accepted ``beta_t``).

If no factor ``>= 2^-30`` (``vo``) or ``>= 2^-10`` (``vi``) passes, ``q`` stays
put and the iteration does not count towards convergence.

With Monte Carlo expectations there is no reliable objective value to check.
``max_step`` then is a trust region in the metric of the ``q`` that drew the
samples: the whole step is redone with ``beta_t`` halved until
``sqrt(d^T P_t d) <= max_step``. The estimates describe ``f`` only where ``q``
looked, and a noisy, nearly flat curvature estimate would otherwise send the
mean far beyond (zero-order VAN diverged on Rosenbrock in 4 steps without).
Halving ``beta_t`` for the precision too (not only shortening the mean step)
keeps ``q`` from narrowing while its mean cannot follow: with the mean step
alone clipped, first-order VAN froze on Rosenbrock with ``alpha`` at 1e-8.

Convergence
-----------
With ``d_t`` the largest absolute change of the mean at step ``t`` and ``r`` the
largest contraction ``d_s / d_{s-1}`` over the last 3 steps, the solver stops when
``r < 1`` and the estimated distance left to the fixed point (the rest of a
geometric series), ``d_t r / (1 - r)``, is at most ``tol * max(|mu|_inf, 1e-12)``.
Unlike a bare step-size test this does not stop a slowly contracting iteration
early; a zig-zagging one (the diagonal family on correlated features) can still
fool it, so use a smaller ``tol`` there.
"""

import warnings
from collections import namedtuple
from contextlib import nullcontext

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state

from .._compat import _get_threadpool_controller

#: Largest beta_t reached by a geometric schedule under VO.
BETA_MAX = 1e100
_ARMIJO = 1e-4
_MAX_HALVINGS = 30
_MAX_VI_HALVINGS = 11
_WINDOW = 3

#: Below this many multiply-adds per pass (``n_samples * n_params^2``) the loop
#: runs with one BLAS thread: its small products and ``n_params``-sized
#: factorisations take less time than waking threads (on breast_cancer and digits,
#: one thread is 1x and 5x faster). Larger problems keep the user's settings.
SMALL_WORK = 1e8

VANResult = namedtuple(
    "VANResult",
    ["family", "n_iter", "converged", "value", "n_data_passes", "history", "distance"],
)
VANResult.__doc__ = """What :meth:`VANSolver.solve` returns.

family : the final Gaussian (``family.mean``, ``family.precision``).
n_iter : number of iterations run.
converged : whether the convergence test passed.
value : last expected objective ``E_q[f]`` (on the last minibatch when stochastic).
n_data_passes : data passes used, counting a minibatch as its fraction of the data.
history : list of per-iteration dicts (``value``, ``step``, ``beta``, ``alpha``).
distance : estimated distance (max norm) of the mean to its fixed point; inf if
    the steps were not contracting.
"""


class VANSolver:
    """Variational Adaptive-Newton solver.

    Parameters
    ----------
    objective : Objective
        What is minimised (``f``).
    expectation : ExpectationEstimator
        How ``E_q[f]``, ``E_q[grad f]`` and the expected curvature are obtained.
    family : FullGaussian or DiagonalGaussian
        The initial ``q``; it is updated in place.
    beta : float, default=1.0
        Initial step size ``beta_0 > 0`` (at most 1 under ``vi``).
    beta_growth : float, default=1.0
        Geometric growth of ``beta_t``, ``>= 1`` (1 is constant).
    objective_kind : {"vo", "vi"}, default="vo"
        Running-sum (VO) or damped-average (VI) precision update.
    curvature : {"exact", "gauss_newton"}, default="exact"
        Expected Hessian, or the PSD Gauss-Newton curvature (VAG).
    max_iter : int, default=100
    tol : float, default=1e-5
    batch_size : int or None, default=None
        Rows per stochastic step (sVAN); None uses all rows.
    line_search : bool or None, default=None
        Safeguard each step (module docstring). None enables it when expectations
        are deterministic and the batch is full.
    random_state : int, RandomState or None
    verbose : int, default=0
    warn : bool, default=True
        Emit a ConvergenceWarning when ``max_iter`` is reached.
    callback : callable or None, default=None
        Called as ``callback(solver)`` after each iteration; raising StopIteration
        ends the run (``stopped`` is then True).
    max_step : float or None, default=None
        Trust region for Monte Carlo runs: the mean moves at most ``max_step`` in
        the metric of the ``q`` its samples came from, ``sqrt(d^T P_t d) <= max_step``
        (module docstring). None: no limit.
    vo_safeguard : {"mean", "step"}, default="mean"
        Under ``vo`` with the line search on: shorten the mean step only, or redo
        the whole step with a smaller ``beta_t`` (module docstring).
    converged_if : callable or None, default=None
        ``converged_if(solver) -> bool``, called after each iteration, decides
        convergence in place of the test on the mean (whose verdict it can read
        as ``solver.converged``, and its distance estimate as ``solver.distance``):
        for instance a certificate of optimality computed from ``q``.
    """

    def __init__(
        self,
        objective,
        expectation,
        family,
        *,
        beta=1.0,
        beta_growth=1.0,
        objective_kind="vo",
        curvature="exact",
        max_iter=100,
        tol=1e-5,
        batch_size=None,
        line_search=None,
        random_state=None,
        verbose=0,
        warn=True,
        callback=None,
        max_step=None,
        vo_safeguard="mean",
        converged_if=None,
    ):
        self.objective = objective
        self.expectation = expectation
        self.family = family
        self.beta = beta
        self.beta_growth = beta_growth
        self.objective_kind = objective_kind
        self.curvature = curvature
        self.max_iter = max_iter
        self.tol = tol
        self.batch_size = batch_size
        self.line_search = line_search
        self.random_state = random_state
        self.verbose = verbose
        self.warn = warn
        self.callback = callback
        self.max_step = max_step
        self.vo_safeguard = vo_safeguard
        self.converged_if = converged_if

    # -- the loop -----------------------------------------------------------------
    def solve(self):
        """Run the VAN iterations and return a :data:`VANResult`."""
        self.setup()
        with self._blas_threads():
            for iteration in range(self.max_iter):
                self.iteration = iteration
                if not self.compute_expectations():
                    break
                self.update_precision()
                self.update_mean()
                if self.check_convergence():
                    break
                if self.callback is not None:
                    try:
                        self.callback(self)
                    except StopIteration:
                        self.stopped = True
                        break
            # The covariance too, under the same BLAS threads as the loop: the
            # result is then bit-identical wherever it runs (e.g. joblib workers).
            _ = self.family.covariance  # computed once and cached by the family
        return self.finalize()

    def _blas_threads(self):
        rows = self.batch_size if self.stochastic else getattr(self.objective, "n_samples", 1)
        if rows * self.family.n_params**2 < SMALL_WORK:
            return _get_threadpool_controller().limit(limits=1, user_api="blas")
        return nullcontext()

    def setup(self):
        """Check the objective, resolve options; sets ``rng``, ``stochastic``, counters."""
        self.expectation.check_objective(self.objective)
        self.rng = check_random_state(self.random_state)
        n = getattr(self.objective, "n_samples", None)
        self.stochastic = self.batch_size is not None and n is not None and self.batch_size < n
        if self.line_search is None:
            self.line_search = self.expectation.deterministic and not self.stochastic
        self.converged = False
        self.diverged = False
        self.stopped = False
        self.n_iter = 0
        self.n_data_passes = 0.0
        self.history = []
        self._last_step = None
        self._beta_cap = None
        self._order = np.empty(0, dtype=int)

    def _next_batch(self):
        """The objective of this iteration: the full one, or the next minibatch
        of a reshuffled pass over the rows (sVAN)."""
        if not self.stochastic:
            self.n_data_passes += 1.0
            return self.objective
        if len(self._order) < self.batch_size:
            self._order = np.concatenate(
                [self._order, self.rng.permutation(self.objective.n_samples)]
            )
        idx, self._order = self._order[: self.batch_size], self._order[self.batch_size :]
        self.n_data_passes += self.batch_size / self.objective.n_samples
        return self.objective.subsample(np.sort(idx))

    def schedule(self, t):
        """Return ``(beta_t, keep_t)``: the step size and the factor on the old
        precision in ``P <- keep_t P + beta_t C``."""
        log_beta = np.log(self.beta) + t * np.log(self.beta_growth)
        if self.objective_kind == "vi":
            beta_t = float(np.exp(min(log_beta, 0.0)))
            return beta_t, 1.0 - beta_t
        if log_beta > np.log(BETA_MAX) and self.beta_growth > 1.0:
            return max(BETA_MAX, self.beta), 1.0 / self.beta_growth
        return float(np.exp(log_beta)), 1.0

    def compute_expectations(self):
        """Set ``batch_objective`` and ``expect`` (value, gradient, curvature) under
        the current ``q``. Returns False (and flags divergence) if they are not finite."""
        self.batch_objective = self._next_batch()
        self.expect = self.expectation(
            self.batch_objective, self.family, curvature=self.curvature, random_state=self.rng
        )
        finite = (
            np.isfinite(self.expect.value)
            and np.all(np.isfinite(self.expect.gradient))
            and np.all(np.isfinite(self.expect.curvature))
        )
        if not finite:
            self.diverged = True
        return finite

    def update_precision(self):
        """Apply the precision update; sets ``beta_t``, ``keep_t`` and changes
        ``family.precision`` (keeping the previous one in ``previous_precision``)."""
        self.beta_t, self.keep_t = self.schedule(self.iteration)
        if self._beta_cap is not None:
            self.beta_t = min(self.beta_t, self._beta_cap)
        self.previous_precision = self.family.precision
        self.family.update_precision(self.expect.curvature, self.beta_t, self.keep_t)

    def update_mean(self):
        """Move the mean along ``-beta_t P^-1 E[grad f]``, safeguarded if active
        (module docstring); sets ``step`` (the change of the mean) and ``alpha``."""
        mean = self.family.mean
        if self.line_search and self.objective_kind == "vi":
            obj, est = self.batch_objective, self.expectation
            previous = type(self.family)(mean, self.previous_precision)
            ref = self.expect.value + 0.5 * previous.logdet_precision()
            slack = 16 * np.finfo(np.float64).eps * abs(ref)

            def vi_objective_does_not_increase(trial):
                value = est.value(obj, self.family, trial, self.curvature)
                value += 0.5 * self.family.logdet_precision()
                return np.isfinite(value) and value <= ref + slack

            return self._backtrack_beta(mean, vi_objective_does_not_increase, _MAX_VI_HALVINGS)
        if self.line_search and self.vo_safeguard == "step":
            obj, est = self.batch_objective, self.expectation
            ref = self.expect.value
            slack = 16 * np.finfo(np.float64).eps * abs(ref)

            def vo_objective_does_not_increase(trial):
                value = est.value(obj, self.family, trial, self.curvature)
                return np.isfinite(value) and value <= ref + slack

            # Enough halvings to undo the schedule's growth, then 30 more.
            halvings = _MAX_HALVINGS + max(0, int(np.ceil(np.log2(self.beta_t / self.beta))))
            self._backtrack_beta(mean, vo_objective_does_not_increase, halvings)
            # The next step starts from at most twice the accepted beta_t: without
            # this memory every iteration would halve its way down from the
            # ever-growing nominal beta_t again.
            self._beta_cap = 2.0 * max(self.alpha, 2.0**-halvings) * self.beta_t
            return None
        if not self.line_search and self.max_step is not None:
            P = self.previous_precision

            def within_trust_region(trial):
                d = trial - mean
                return float(d @ (P * d if P.ndim == 1 else P @ d)) <= self.max_step**2

            return self._backtrack_beta(mean, within_trust_region, _MAX_HALVINGS)
        direction = -self.beta_t * self.family.solve(self.expect.gradient)
        alpha = self._line_search(mean, direction) if self.line_search else 1.0
        self.step = alpha * direction
        self.alpha = alpha
        self.family.mean = mean + self.step

    def _backtrack_beta(self, mean, accept, max_halvings):
        """Redo the whole step (precision and mean) with ``beta_t`` halved until
        ``accept(new_mean)``; ``alpha`` is the factor kept. If none is accepted,
        ``q`` stays put and ``alpha = 0``."""
        fam, C = self.family, self.expect.curvature
        factor = 1.0
        for _ in range(max_halvings):
            beta = factor * self.beta_t
            if factor < 1.0:
                keep = 1.0 - beta if self.objective_kind == "vi" else self.keep_t
                fam.set_precision(self.previous_precision)
                fam.update_precision(C, beta, keep)
            trial = mean - beta * fam.solve(self.expect.gradient)
            if accept(trial):
                self.step, self.alpha = trial - mean, factor
                fam.mean = trial
                return
            factor *= 0.5
        fam.set_precision(self.previous_precision)
        self.step, self.alpha = np.zeros_like(mean), 0.0

    def _line_search(self, mean, direction):
        value = self.expectation.value
        obj, fam = self.batch_objective, self.family
        slope = min(float(np.dot(self.expect.gradient, direction)), 0.0)
        # First trial, against the value before the step (known, no extra pass):
        # this keeps the VO objective decreasing along the iterates.
        full = value(obj, fam, mean + direction, self.curvature)
        slack = 16 * np.finfo(np.float64).eps * abs(self.expect.value)
        if np.isfinite(full) and full <= self.expect.value + _ARMIJO * slope + slack:
            return 1.0
        ref = value(obj, fam, mean)
        slack = 16 * np.finfo(np.float64).eps * abs(ref)
        alpha = 1.0
        for _ in range(_MAX_HALVINGS):
            trial = full if alpha == 1.0 else value(obj, fam, mean + alpha * direction)
            if np.isfinite(trial) and trial <= ref + _ARMIJO * alpha * slope + slack:
                return alpha
            alpha *= 0.5
        return 0.0

    def check_convergence(self):
        """Record the iteration and set ``converged`` (see the module docstring)."""
        self.n_iter = self.iteration + 1
        d = float(np.max(np.abs(self.step))) if self.step.size else 0.0
        scale = max(float(np.max(np.abs(self.family.mean))) if self.step.size else 0.0, 1e-12)
        self._last_step = d
        self.history.append(
            {"value": self.expect.value, "step": d, "beta": self.beta_t, "alpha": self.alpha}
        )
        if self.verbose:
            print(
                f"[VAN] iter {self.n_iter:4d}  E[f]={self.expect.value:.8g}  "
                f"step={d:.3e}  beta={self.beta_t:.3g}  alpha={self.alpha:.3g}"
            )
        steps = [h["step"] for h in self.history[-(_WINDOW + 1) :]]
        self.distance = np.inf
        if self.alpha == 0.0:  # failed safeguard: no information about convergence
            self.converged = False
        elif d == 0.0:
            self.converged, self.distance = True, 0.0
        elif len(steps) > 1 and min(steps[:-1]) > 0:
            r = max(b / a for a, b in zip(steps[:-1], steps[1:]))
            if r < 1.0:
                self.distance = d * r / (1.0 - r)
            self.converged = self.distance <= self.tol * scale
        if self.converged_if is not None:
            self.converged = bool(self.converged_if(self))
        return self.converged

    def finalize(self):
        """Warn if the loop stopped without converging; return the :data:`VANResult`."""
        if self.warn and self.diverged:
            warnings.warn(
                f"VAN stopped at iteration {self.n_iter + 1}: the expected gradient or "
                "curvature is not finite. The result is the last finite iterate; rescale "
                "the features or reduce beta.",
                ConvergenceWarning,
            )
        elif self.warn and not self.converged and not self.stochastic and not self.stopped:
            warnings.warn(
                f"VAN did not converge in max_iter={self.max_iter} iterations (last "
                f"mean change {self._last_step:.3g}, tol={self.tol:g}). Increase max_iter, "
                "use a faster schedule (larger beta_growth), or use covariance='full'.",
                ConvergenceWarning,
            )
        value = self.expect.value if hasattr(self, "expect") else np.nan
        return VANResult(
            self.family, self.n_iter, self.converged, value, self.n_data_passes, self.history,
            getattr(self, "distance", np.inf),
        )
