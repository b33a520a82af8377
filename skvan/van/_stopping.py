"""When the VAN loop stops: a convergence test called once per iteration.

A test is ``test(solver) -> bool`` with a ``reset()`` and a ``distance``
attribute (the estimated distance of the mean to its fixed point, ``inf`` when
unknown). Certificates of optimality for special objectives (for instance
:class:`~skvan.van.LassoCertificate`) wrap :class:`MeanContraction`.
"""

from collections import deque

import numpy as np

from .._blas import _one_blas_thread
from .._reductions import max_of
from ..sparse._kkt import _correct, _KKTCheck, kkt_finish, support_from_q

#: Steps over which the contraction rate is measured.
WINDOW = 3


#: Mean changes up to this many ulps of ``|mu|_inf`` are round-off (:class:`MeanContraction`).
ROUNDOFF_ULPS = 64

#: Ratios of successive steps :class:`MeanContraction` needs before it estimates
#: a distance: one can be a coincidence.
MIN_RATIOS = 2

#: :class:`MeanContraction` reads a window of step ratios below 1 as a Newton-like
#: run's speeding-up contraction when each ratio is at most this fraction of the
#: one before (the ratios themselves shrink geometrically: superlinear
#: convergence), as they do at the end of VO fits with a full covariance (no such
#: fit of ``python benchmarks/snapshot.py`` changed its iteration count with this
#: bound; its diagonal and VI fits, which converge linearly, did); a linearly
#: converging run's ratios near 1 can fall over a window by chance, but not that
#: fast.
SUPERLINEAR = 0.5


def _ranked(solver):
    """Whether the iteration's estimates come from the ranks of sampled values
    (fitness shaping), whose ties give mean steps of exactly 0."""
    return bool(getattr(solver.expectation, "fitness_shaping", False))


class MeanContraction:
    """Stop when the mean is estimated to be within ``tol`` of its fixed point.

    With ``d_t`` the largest absolute change of the mean at step ``t`` and ``r`` the
    largest contraction ``d_s / d_{s-1}`` over the last :data:`WINDOW` steps, the
    distance left is the rest of a geometric series, ``d_t r / (1 - r)`` (when
    ``r < 1``), and the test passes when it is at most
    ``tol * max(|mu|_inf, min_scale)``. Unlike a bare step-size test this does not stop
    a slowly contracting iteration early; a zig-zagging one (the diagonal family
    on correlated features) can still fool it, so use a smaller ``tol`` there.
    Where the step policy extrapolates (:class:`~skvan.van.AndersonStep`), ``d_t``
    is the change the plain map would make from the iteration's start, the
    solver's ``residual``, not the extrapolated step.
    When the steps come from exact full-batch expectations and their ratios,
    all below 1, fall over the whole window each to at most :data:`SUPERLINEAR`
    ``= 1/2`` of the one before (the contraction is speeding up, as in a
    Newton-like run's last steps), ``r`` is the latest ratio instead (at least
    the family's ``step_rtol``, the relative residual of an inexact Newton
    step's solve, where it has one): the largest would
    overestimate the distance by a factor of up to 100 there, and cost a whole
    iteration. A falling window alone is not enough: a diagonal family's
    zig-zag can read as speeding up and stop a fit far from the optimum
    (``tests/test_solver_parts.py::test_a_zigzag_is_not_a_newton_finish``).
    A step the safeguard rejected (``fraction = 0``) says nothing about convergence,
    nor does a fitness-shaped estimate's step of exactly 0, which is not recorded:
    fitness-shaped draws whose values all tied (a plateau), or whose antithetic
    pairs tied in rank (both ends of a pair worse than the rest), move the mean by
    nothing because their ranks cancel, not because it has arrived; read as
    round-off, such a step stopped :func:`skvan.minimize` on a plateau after one
    iteration (``tests/test_optimize_explore.py::test_a_plateau_is_not_convergence``).
    A
    step of at most :data:`ROUNDOFF_ULPS` ulps of ``|mu|_inf`` is round-off, whose
    ratios say nothing either: the distance is then the step itself.

    It needs :data:`MIN_RATIOS` ``= 2`` ratios (three steps) before it
    estimates a distance. Under VO the point the mean heads for moves as ``q``
    narrows, and one small step after a large one can be a coincidence: a
    strongly regularised logistic fit (40 rows, ``C=0.01``) stepped 0.208, then
    1.8e-3, then 5.1e-3, and stopped after the second step, its intercept a third
    of the largest coefficient from the optimum, when one ratio sufficed
    (``tests/test_solver_parts.py::test_one_small_step_is_not_convergence``).

    Parameters
    ----------
    tol : float, default=1e-5
        Relative tolerance, ``>= 0``.
    min_scale : float, default=1e-12
        The scale ``tol`` is relative to when ``|mu|_inf`` is smaller: a mean
        converging to 0 could otherwise never pass (``skvan.minimize`` uses
        ``sigma0``, the scale of its search).
    narrow : bool, default=False
        Also require ``q``'s largest standard deviation to be at most
        ``sqrt(tol)`` times the scale. Under VO the mean heads for the minimiser
        of ``E_q[f]``, the Gaussian smoothing of ``f``, which lies ``O(sigma^2)``
        from a minimiser of ``f``; a mean that takes whole Newton steps
        (:class:`~skvan.van.GeometricSchedule`'s ``newton_mean``) reaches it while
        ``q`` is still wide, and where it does not move as ``q`` narrows (a point
        about which ``f`` is symmetric) its steps vanish there.
    """

    def __init__(self, tol=1e-5, min_scale=1e-12, narrow=False):
        self.tol = tol
        self.min_scale = min_scale
        self.narrow = narrow

    def reset(self):
        """Forget the steps of a previous run."""
        self._steps = deque(maxlen=WINDOW + 1)
        self.distance = np.inf
        self._accepted = (0.0, 1.0)

    def settled(self):
        """Whether the last accepted step moved the mean by at most ``tol`` times
        its scale: a run whose later steps all fail the safeguard has then
        stopped where the mean settled, not on its way there (the solver's
        "stalled" against "stuck")."""
        d, scale = self._accepted
        return bool(d <= self.tol * scale)

    def __call__(self, solver):
        """Whether the mean has converged after this iteration (sets ``distance``)."""
        step, mu = solver.mean_change, solver.family.mean
        residual = getattr(solver, "residual", None)
        if residual is not None:
            # An extrapolated iteration's steps do not contract geometrically; the
            # scheduled map's step from the iteration's start does, and bounds the
            # distance of that point, one iteration behind. (Its ratios falling
            # fast is the extrapolation's doing, not a Newton-like finish of the
            # map: the largest ratio is kept.)
            step = residual
        d = float(np.max(np.abs(step))) if step.size else 0.0
        if d == 0.0 and step.size and not solver.exact_steps and _ranked(solver):
            self.distance = np.inf
            return False
        mean = float(max_of(np.abs(mu))) if step.size else 0.0
        scale = max(mean, self.min_scale)
        self._steps.append(d)
        self.distance = np.inf
        if solver.fraction == 0.0:
            return False
        self._accepted = (d, scale)
        if d <= ROUNDOFF_ULPS * np.finfo(np.float64).eps * max(mean, 1e-12):
            # A change of a few ulps of the mean is round-off: the steps no longer
            # contract (their ratios are noise), and the mean is as close as it gets.
            self.distance = d
            return bool(d <= self.tol * scale) and self._narrow(solver, scale)
        steps = list(self._steps)
        if len(steps) < MIN_RATIOS + 1 or min(steps[:-1]) <= 0:
            return False
        ratios = [b / a for a, b in zip(steps[:-1], steps[1:])]
        r = max(ratios)
        if (len(ratios) == WINDOW and solver.exact_steps and r < 1.0 and residual is None
                and all(b <= SUPERLINEAR * a for a, b in zip(ratios[:-1], ratios[1:]))):
            # Contraction speeding up over the whole window (a Newton-like run's
            # last steps): the latest ratio is the rate from here on, and the
            # largest would overestimate the distance left by its ratio to it.
            # An inexact Newton step (conjugate gradients to a relative residual,
            # the family's step_rtol) leaves up to that fraction of itself: the
            # rate is no better.
            r = max(ratios[-1], getattr(solver.family, "step_rtol", 0.0))
        if r < 1.0:
            self.distance = d * r / (1.0 - r)
        return bool(self.distance <= self.tol * scale) and self._narrow(solver, scale)

    def _narrow(self, solver, scale):
        """Whether ``q`` is narrow enough (``narrow``) for its mean to have converged."""
        if not self.narrow:
            return True
        width = float(np.sqrt(np.max(solver.family.marginal_variance())))
        return width <= np.sqrt(self.tol) * scale


class PassChange:
    """Stop a stochastic run when the mean moved less than ``tol`` over a data pass.

    Minibatch steps fluctuate at the noise level, so no single step says how far
    the mean is from its limit; the change over a whole pass does (under
    :class:`~skvan.van.AveragingSchedule` it shrinks like ``1 / passes``). The
    test runs at the end of each pass and passes when the largest absolute change
    of the mean since the previous pass end is at most
    ``tol * max(|mu|_inf, 1e-12)``; ``distance`` is that change.

    Parameters
    ----------
    tol : float, default=1e-5
        Relative tolerance, ``>= 0``.
    """

    def __init__(self, tol=1e-5):
        self.tol = tol

    def reset(self):
        """Forget a previous run."""
        self._mean = None
        self._passes = 0
        self.distance = np.inf

    def __call__(self, solver):
        """Whether the mean has settled; tested when a data pass ends."""
        passes = int(np.floor(solver.n_data_passes + 1e-9))
        if passes == self._passes and self._mean is not None:
            return False
        self._passes = passes
        mean = solver.family.mean.copy()
        previous, self._mean = self._mean, mean
        if previous is None:
            return False
        self.distance = float(np.max(np.abs(mean - previous))) if mean.size else 0.0
        scale = max(float(np.max(np.abs(mean))) if mean.size else 0.0, 1e-12)
        return bool(self.distance <= self.tol * scale)

class GradientBound:
    """Stop when the mean is provably within ``tol`` of the minimiser of a
    strongly convex ``f``, or when ``fallback`` passes.

    For ``f`` ``m``-strongly convex (``hess f >= m I``: a convex loss plus a ridge
    of at least ``m`` on every coordinate) the minimiser ``theta*`` satisfies
    ``||mu - theta*||_inf <= ||mu - theta*||_2 <= ||grad f(mu)||_2 / m``: the test
    passes when that bound is at most ``tol * max(|mu|_inf, min_scale)``, ``f``'s
    gradient at the mean (one pass) taken only where ``fallback`` has not passed
    and the last step was within that tolerance itself (zig-zagging steps near
    the minimiser are; a Newton-like run's are about when its contraction
    passes anyway).
    A run whose steps shrink but zig-zag (a diagonal family's Newton steps on
    correlated features), where the fallback's contraction estimate stays near
    1, then stops once its gradient says so, instead of at ``max_iter``. For a
    run whose expectations are ``f``'s derivatives at the mean
    (:func:`~skvan.van.laplace_posterior`'s).

    Parameters
    ----------
    tol : float
        Relative tolerance, ``>= 0``.
    modulus : float
        ``m``, ``>= 0``; 0 leaves the fallback alone.
    fallback : MeanContraction or None, default=None
        The test otherwise (None: ``MeanContraction(tol)``).
    min_scale : float, default=1e-12
        The scale ``tol`` is relative to when ``|mu|_inf`` is smaller.
    """

    def __init__(self, tol, modulus, fallback=None, min_scale=1e-12):
        self.tol = tol
        self.modulus = modulus
        self.fallback = fallback
        self.min_scale = min_scale

    def reset(self):
        """Forget a previous run."""
        if self.fallback is None:
            self.fallback = MeanContraction(self.tol, self.min_scale)
        self.fallback.reset()
        self.distance = np.inf

    def settled(self):
        """The fallback's :meth:`MeanContraction.settled`."""
        return self.fallback.settled()

    def __call__(self, solver):
        """Whether the mean has converged after this iteration (sets ``distance``)."""
        converged = self.fallback(solver)
        self.distance = self.fallback.distance
        if converged or not self.modulus > 0 or solver.fraction == 0.0:
            return converged
        mean = solver.family.mean
        scale = max(float(max_of(np.abs(mean))) if mean.size else 0.0, self.min_scale)
        step = solver.mean_change
        if step.size and float(max_of(np.abs(step))) > self.tol * scale:
            return False  # (the contraction decides; no gradient pass for the bound)
        bound = float(np.linalg.norm(solver.f.gradient(mean))) / self.modulus
        self.distance = min(self.distance, bound)
        return bool(bound <= self.tol * scale)


class LassoCertificate:
    """Convergence test for L1-penalised least squares: the support read off ``q``
    passes the KKT check.

    Called by the solver after each iteration, like the mean test it wraps: it
    passes as soon as the support and signs of ``q``
    (:func:`~skvan.sparse.support_from_q`, with the mean moved towards 0 by
    ``mean_test``'s distance estimate) give values that satisfy the Lasso's
    optimality conditions, or ``wait`` iterations after the mean itself
    converged. A reading that fails is corrected as
    :func:`~skvan.sparse.kkt_finish` corrects it, at most ``corrections`` times:
    coefficients whose solved value has the other sign than ``q`` gives them
    leave, and the violators within ``enter`` of the worst violation enter.
    While ``q`` concentrates geometrically, a coefficient whose optimum is 0 can
    sit many standard deviations from 0 for an iteration or two (the orthant
    rule of :class:`KeepSigns` stops it at 0, its next step moves it out again),
    and one whose optimum is not 0 can still be read as 0: the corrections
    certify such readings without waiting for ``q`` to settle. The answer is
    unchanged (the check certifies it); ``q`` is less concentrated where a fit
    stops sooner. Each correction costs one solve on a support, ``O(|S|^3)`` at
    most, where another VAN iteration costs ``O(p^3)`` and its own checks
    (``python benchmarks/bench_lasso.py --checks`` varies the settings).

    Parameters
    ----------
    quadratic : QuadraticObjective or LinearModelObjective
        The least-squares objective with its :class:`~skvan.objectives.L1Penalty`
        (see :func:`~skvan.sparse.kkt_finish`).
    mean_test : object
        The solver's convergence test on the mean (``MeanContraction``).
    wait : int, default=50
        Iterations allowed after the mean converged for ``q`` to concentrate
        enough to decide the support: the slowest growth the Lasso's safeguard
        lets accepted steps take, 2, shrinks the sd 1.41 times per iteration, so
        ``|m| / s`` grows 1e4-fold in 27 of them; then :meth:`finish` corrects
        the support.
    corrections : int, default=10
        Corrections made to a reading of ``q`` before it is given up.
    enter : float, default=0.5
        A correction that enters coefficients enters every violator within this
        fraction of the worst violation (a reading of ``q`` lacks several
        coefficients at once).
    kept : int, default=16
        KKT checks kept per run (a check can repeat an earlier one's support and
        signs).
    readings : tuple of {"as_is", "margin"}, default=("as_is", "margin")
        The order of the two readings of ``q`` (:meth:`__call__`): its mean as it
        is, then moved towards 0 by the distance left. Both orders certify at the
        same iterations; this one makes fewer KKT checks.
    """

    def __init__(self, quadratic, mean_test, wait=50, corrections=10, enter=0.5, kept=16,
                 readings=("as_is", "margin")):
        self.quadratic = quadratic
        self.mean_test = mean_test
        self.wait = wait
        self.corrections = corrections
        self.enter = enter
        self.kept = kept
        self.readings = readings

    def reset(self):
        """Start a run."""
        self.mean_test.reset()
        self._failed = set()
        self._check = _KKTCheck(self.quadratic, equations_when_flipped=False)
        self._waited = 0
        self.slack = None
        self._certified = None
        self._results = {}

    @property
    def distance(self):
        """The mean test's estimate of the distance left."""
        return self.mean_test.distance

    def settled(self):
        """The mean test's ``settled``."""
        return self.mean_test.settled()

    def __call__(self, solver):
        """Whether the support of ``solver.family`` is certified (or the wait is over).

        Two readings of ``q`` are checked: as it is, then with the mean moved
        towards 0 by the distance it may still travel (conservative). Either
        passing the KKT check is a certificate, so neither can change the
        solution, and the iterations at which a fit is certified do not depend on
        their order. Reading ``q`` as it is ends fits sooner whose mean is still
        settling when ``q`` already has the support
        (``tests/test_lasso.py::test_the_certificate_also_reads_q_without_its_distance_margin``);
        first, it passes with fewer corrections (``readings``).
        """
        mean_converged = self.mean_test(solver)
        with _one_blas_thread(solver.family.n_params):
            certified = self._read(solver.family)
        if certified:
            return True
        if mean_converged:
            self._waited += 1
        return self._waited > self.wait

    def _read(self, family):
        """Whether one of the two readings of ``q`` (:meth:`__call__`) passes."""
        var = family.marginal_variance()
        signs = np.sign(family.mean)
        slacks = {"as_is": 0.0, "margin": self.distance}
        for slack in dict.fromkeys(slacks[reading] for reading in self.readings):
            if slack == np.inf:
                # No distance yet (the mean test's first iterations): the margin
                # moves every mean to 0, a support that says nothing about q.
                continue
            support = support_from_q(family.mean, var, self._check.strength, slack=slack)
            # A support and signs that failed the check fail it again (the check
            # depends on nothing else).
            key = (support.tobytes(), signs[support].tobytes())
            if key in self._failed:
                continue
            certified = self._certify(support, signs)
            if certified is not None:
                self.slack = slack
                # What finish returns for this q (its mean, the values and the
                # corrections made): kkt_finish would reach the same values.
                self._certified = (family.mean.copy(), *certified)
                return True
            self._failed.add(key)
        return False

    def _certify(self, support, signs):
        """``(values, n_corrections)`` if ``support`` with ``signs``, corrected as
        :func:`~skvan.sparse.kkt_finish` corrects it (at most ``corrections``
        times: the coefficients whose solved value has the other sign leave,
        and the violators within ``enter`` of the worst enter), passes the KKT
        check, else None. A support whose equations have no solution is not
        corrected here."""
        support, signs = support.copy(), signs.copy()
        for n_corrections in range(self.corrections + 1):
            w, grad, flipped, excess, unsolved, ok = self._checked(support, signs)
            if ok:
                return w, n_corrections
            if self._check.unsolvable(flipped, unsolved):
                return None
            _correct(self._check, support, signs, grad, flipped, excess, self.enter)
        return None

    def _checked(self, support, signs):
        """The KKT check of ``support`` with ``signs``, kept for the run's last
        ``kept`` pairs: a later reading of ``q`` often lands on a support an
        earlier one's corrections went through, and the check depends on
        nothing else."""
        key = (support.tobytes(), signs[support].tobytes())
        result = self._results.get(key)
        if result is None:
            result = self._check(support, signs)
            if self.kept:
                if len(self._results) >= self.kept:
                    self._results.pop(next(iter(self._results)))
                self._results[key] = result
        return result

    def finish(self, family, converged):
        """``kkt_finish`` on the final ``q``: a converged run gets its support checked
        and, if need be, corrected; an unconverged one is only checked (the
        corrections polish VAN's answer, they do not replace it). A run the check
        ended reads the support as that check did, and its values are those the
        check certified (the same corrections of the same reading)."""
        if self._certified is not None and np.array_equal(self._certified[0], family.mean):
            return self._certified[1], self._certified[2], True
        if self.slack is not None:
            slack = self.slack
        else:
            slack = self.distance if converged else 0.0
        return kkt_finish(
            self.quadratic, family.mean, family.marginal_variance(), slack=slack,
            max_corrections=None if converged else 0, enter=self.enter,
        )
