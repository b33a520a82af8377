"""How ``E_q[f]``, ``E_q[grad f]`` and an expected curvature are obtained."""

from abc import ABC, abstractmethod
from collections import namedtuple

import numpy as np
from scipy.linalg import lapack

from ..objectives import LinearModelObjective
from ..objectives._linear import check_predictors

#: Predictor variances below this are treated as zero: a Gaussian expectation
#: of ``l(m + sqrt(v) z)`` then differs from ``l(m)`` by about ``v / 2`` times the
#: third derivative, below 1e-13 of the derivatives of a loss bending on a unit
#: scale (the logistic and softmax ones do).
NEGLIGIBLE = 1e-12

#: Under VO, once every row's predictor variance from the last pass over the
#: rows is at most this (sd 0.01, a hundredth of the scale on which the logistic
#: and softmax losses bend), later iterations carry those variances instead of
#: another ``O(n p^2)`` pass (:meth:`LinearPredictorExpectation._carried`; an
#: estimator's ``carry_variance``, this by default).
CARRY_VARIANCE = 1e-4

#: What an estimator returns. ``curvature`` is ``(n_params, n_params)`` for a full
#: family and ``(n_params,)`` (the diagonal) for a diagonal one. ``flat`` (default
#: False) marks estimates that carry no information about where ``f`` decreases:
#: fitness-shaped draws whose values all tied (their utilities are all 0). The
#: mean then does not move, and :class:`~skvan.van.MeanContraction` does not read
#: that as convergence. ``noise`` (default 0: exact) is the sampling variance
#: of the gradient estimate in whitened coordinates, ``tr Var(A^T g_hat)`` with
#: ``A A^T = Sigma``, as measured over a Monte Carlo estimator's antithetic pairs
#: (inf where a single pair cannot measure it; fitness-shaped estimates leave it
#: at 0, unmeasured).
Expectations = namedtuple("Expectations", ["value", "gradient", "curvature", "flat", "noise"],
                          defaults=(False, 0.0))


def undefined(family):
    """:class:`Expectations` of NaN: what an estimator returns when none of its
    evaluations gave a finite value (the solver then stops as "diverged")."""
    n = family.n_params
    return Expectations(np.nan, np.full(n, np.nan),
                        np.full(n if family.diagonal else (n, n), np.nan))


def assemble_linear(objective, family, per_sample, hessian="exact"):
    """:class:`Expectations` of a :class:`LinearModelObjective` from its per-sample
    integrals ``(E[l], E[l'], E[curvature])`` under ``family``: the data term through
    ``X`` (``X^T (w E[l'])``, and ``X^T diag(w E[curvature]) X`` in the form the family
    keeps: a matrix, its diagonal, or its parts) plus the separable penalty's
    closed-form expectations."""
    e0, e1, e2 = per_sample
    p0, p1, p2 = objective.penalty.expectation_under(family, family.mean, hessian)
    g0, g1 = objective.gauge_expectation(family, family.mean)
    value = float(np.dot(objective.weights, e0)) + p0 + g0
    data_gradient, data_curvature = family.data_derivatives(objective, e1, e2)
    gradient = data_gradient + p1 + g1
    C = objective.add_gauge(data_curvature)
    return Expectations(value, gradient, objective.penalty.add_curvature(C, p2))


def runs_vo(solver):
    """Whether ``solver`` minimises the VO objective ``E_q[f]`` (whose limit, the
    minimiser of ``f``, does not depend on how the expectations are taken)."""
    return getattr(solver.objective_, "name", None) == "vo"


def precision_grows(solver):
    """Whether ``solver`` runs VO on full batches, where the precision is a running
    sum: only then may one pass's predictor variances stand for later ones
    (:meth:`LinearPredictorExpectation._carried`)."""
    return runs_vo(solver) and not solver.batches_.stochastic


def last_pass(objective, family, spread, top):
    """What :func:`carry_ratio` needs of a pass over the rows that gave ``spread``
    (its largest variance ``top``) under ``family``, or None where the family's
    precision is not a matrix (a diagonal or Gram form)."""
    P = getattr(family, "precision", None)
    if not (isinstance(P, np.ndarray) and P.ndim == 2):
        return None
    # (the precision array itself: a family replaces it, never writes into it)
    return (objective, family, P, spread, float(np.sum(family.marginal_variance())), top)


def carry_ratio(last, objective, family, limit=CARRY_VARIANCE):
    """The factor ``tr(Sigma) / tr(Sigma_s)`` (at most 1) that carries the variances
    of the pass ``last`` (:func:`last_pass`) to ``family``, or None where they
    may not be carried (:meth:`LinearPredictorExpectation._carried`): the pass's
    largest variance above ``limit``, another objective or family, a precision
    that did not grow."""
    if last is None:
        return None
    obj, fam, P_s, _, trace_s, top = last
    if obj is not objective or fam is not family or top > limit or not trace_s > 0:
        return None
    P = family.precision
    if np.array_equal(P, P_s):
        return 1.0  # the same precision (a rejected step restored it)
    if lapack.dpotrf(P - P_s, lower=1, clean=0)[1] != 0:
        return None
    return min(float(np.sum(family.marginal_variance())) / trace_s, 1.0)


class ExpectationEstimator(ABC):
    """Estimates expectations of an objective under a Gaussian family.

    ``hessian="exact"`` asks for ``E_q[hess f]``; ``"gauss_newton"`` for the
    positive semi-definite Gauss-Newton curvature of each term (the objective's
    ``gauss_newton``: per-example gradient outer products, VAG, or ``J^T J`` for
    least squares; the penalty's own PSD curvature).
    """

    #: True when repeated calls give the same numbers (no sampling): the solver
    #: may then safeguard steps on :meth:`value`.
    deterministic = False

    #: True when the curvature is the derivative of the gradient of :meth:`value`
    #: (Price's theorem holds for the estimate, to the rule's accuracy, in every
    #: direction): VI's fixed point
    #: is then a stationary point of the objective its step safeguard checks.
    differentiates_value = True

    def check_objective(self, objective):
        """Raise a TypeError naming what is missing if ``objective`` is not supported."""

    @abstractmethod
    def __call__(self, objective, family, hessian="exact", random_state=None):
        """Return :class:`Expectations` of ``objective`` under ``family``."""

    def reset(self, solver):
        """Start a run of ``solver`` (after its pluggable parts are resolved)."""

    def value(self, objective, family, mean, hessian=None):
        """Return ``E_q[f]`` for ``q`` with ``family``'s covariance centred at ``mean``.

        Only deterministic estimators provide it. With ``hessian`` ("exact" or
        "gauss_newton") an estimator may also prepare the derivatives, so that a
        following call with the family moved to ``mean`` costs no second pass.
        """
        raise NotImplementedError(f"{type(self).__name__} does not provide deterministic values.")


class LinearPredictorExpectation(ExpectationEstimator):
    """Base of estimators that integrate over the 1-D linear predictors.

    For ``theta ~ N(mu, Sigma)`` each ``a_i = x_i^T theta ~ N(x_i^T mu, x_i^T Sigma x_i)``,
    so ``E[grad f] = X^T (w E[l'(a)])`` and the curvature is
    ``X^T diag(w E[c(a)]) X`` with ``c = l''`` or the loss's Gauss-Newton
    curvature (:func:`assemble_linear`). Subclasses only provide the per-sample
    integrals (:meth:`_raw`).
    """

    deterministic = True

    #: The largest variance of a pass that later iterations may carry
    #: (:meth:`_carried`).
    carry_variance = CARRY_VARIANCE

    def __init__(self):
        self._cache = (None, None, None, None)
        self._raw_cache = (None, None, None, None, None)
        self._grows = False
        self._vo = False
        self._last_pass = None

    def reset(self, solver, carry=True):
        """Note whether ``solver`` runs VO (whose limit does not depend on how the
        expectations are taken: a subclass may take cheaper ones there), and
        whether on full batches, where the precision is a running sum: only then
        may one pass's variances stand for later ones (:meth:`_carried`; never
        with ``carry=False``: an estimator run chunk by chunk, whose carrying is
        :class:`~skvan.expectations.MapReduce`'s)."""
        self._vo = runs_vo(solver)
        self._grows = carry and precision_grows(solver)
        self._last_pass = None

    def check_objective(self, objective):
        if not isinstance(objective, LinearModelObjective):
            raise TypeError(
                f"{type(self).__name__} integrates over linear predictors and needs a "
                f"LinearModelObjective, got {type(objective).__name__}; use "
                "expectation='mc' for other objectives."
            )

    def _raw(self, objective, m, v, need):
        """Return ``(E[l], E[l'], E[c])`` per sample; ``need`` is "value" (then only
        ``E[l]`` is computed), "exact" or "gauss_newton"."""
        raise NotImplementedError

    def _moments(self, objective, family, mean):
        """The predictors at ``mean`` and their variances under ``family`` (cached
        per precision): carried from the last pass under VO (:meth:`_carried`),
        or zeros when an upper bound says they are negligible
        (:data:`NEGLIGIBLE`), else from one pass over the rows (with the
        predictors where the family computes them together,
        :meth:`~skvan.van.FullGaussian.predictor_moments`)."""
        obj, fam, version, v = self._cache
        if obj is objective and fam is family and version == family.version:
            return objective.predictors(mean), v
        carried = self._carried(objective, family)
        if carried is not None:
            m, v = objective.predictors(mean), carried
        elif self._negligible(objective, family):
            m, v = objective.predictors(mean), self._no_spread(objective)
        else:
            if isinstance(objective, LinearModelObjective) and hasattr(family, "predictor_moments"):
                m, v = family.predictor_moments(objective.X, mean)
            else:
                m, v = objective.predictors(mean), self._predictor_spread(objective, family)
            if self._grows:
                self._last_pass = last_pass(objective, family, v, float(np.max(v, initial=0.0)))
        self._cache = (objective, family, family.version, v)
        return m, v

    def _carried(self, objective, family):
        """The predictor variances under ``family`` from the last pass over the rows
        (at precision ``P_s``, variances ``v_s``), or None where a pass is needed.

        Under VO the precision only grows: where ``P - P_s`` is positive definite
        (one Cholesky, ``O(p^3)``), ``Sigma <= Sigma_s`` and every ``v_i`` lies in
        ``[0, v_s,i]``. Once ``max v_s <= carry_variance`` the rows' variances are
        carried as ``v_s tr(Sigma) / tr(Sigma_s)`` (exact where ``P`` grows as a
        multiple of ``P_s``, as it does once the curvature settles), which is off
        by at most ``v_s`` on each row: since ``d E[h(m + sqrt(v) z)] / dv = E[h''] / 2``,
        each row's expected loss derivative and curvature move by at most half
        the bound of the loss's third and fourth derivatives times ``v_s``
        (``0.048 v_s`` and ``0.0625 v_s`` for the logistic loss). A
        multinomial model's rows have ``K x K`` covariances ``V_i``: then ``0 <= V_i
        <= V_s,i`` in the Loewner order, and the threshold is on the largest
        entry, the largest variance of any class's predictor. The VO limit does
        not depend on them: the carried variances vanish with ``tr(Sigma)`` as
        ``q`` concentrates on the minimiser of ``f``; only the path there can
        change, within the fit's tolerance (``tests/test_expectations.py``). VI is
        left alone: its fixed point integrates over the variances."""
        ratio = carry_ratio(self._last_pass if self._grows else None, objective, family,
                            self.carry_variance)
        return None if ratio is None else self._last_pass[3] * ratio

    @staticmethod
    def _negligible(objective, family):
        """Whether ``x_i^T Sigma x_i <= ||x_i||^2 tr(Sigma)`` is below :data:`NEGLIGIBLE`
        on every row. Under VO ``q`` collapses geometrically, and the pass over the
        rows that computes the variances (``O(n p^2)``) is skipped from then on.
        Only the factorised families bound ``tr(Sigma)`` cheaply. Rows fewer than
        the parameters (a minibatch) get their variances by a triangular solve,
        ``O(n p^2)`` (:meth:`~skvan.van.FullGaussian.predictor_moments`), for
        less than the trace's inverse factor, ``O(p^3 / 3)``: they are not
        checked then, unless that inverse is at hand."""
        if not getattr(family, "cheap_trace", False):
            return False
        if objective.n_samples < family.n_params and not getattr(family, "inverse_at_hand", True):
            return False
        trace = float(np.sum(family.marginal_variance()))
        return bool(objective.max_row_squared_norm() * trace <= NEGLIGIBLE)

    @staticmethod
    def _no_spread(objective):
        return np.zeros(objective.n_samples)

    @staticmethod
    def _predictor_spread(objective, family):
        """``x_i^T Sigma x_i`` for each row."""
        return family.predictor_variance(objective.X)

    def _raw_at(self, objective, family, mean, need):
        """Per-sample integrals at ``mean``, reusing those a ``value(..., hessian)``
        call prepared for the same objective, covariance and mean."""
        obj, version, cached_mean, cached_need, raw = self._raw_cache
        if (obj is objective and version == family.version and cached_need == need
                and np.array_equal(cached_mean, mean)):
            return raw
        predictors, spread = self._moments(objective, family, mean)
        check_predictors(predictors, spread)
        raw = self._raw(objective, predictors, spread, need)
        if need != "value":
            self._raw_cache = (objective, family.version, mean.copy(), need, raw)
        return raw

    def __call__(self, objective, family, hessian="exact", random_state=None):
        raw = self._raw_at(objective, family, family.mean, hessian)
        return assemble_linear(objective, family, raw, hessian)

    def value(self, objective, family, mean, hessian=None):
        e0 = self._raw_at(objective, family, mean, hessian or "value")[0]
        penalty = objective.penalty.expectation_under(family, mean)[0]
        gauge = objective.gauge_expectation(family, mean)[0]
        return float(np.dot(objective.weights, e0)) + penalty + gauge
