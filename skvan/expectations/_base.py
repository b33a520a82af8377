"""How ``E_q[f]``, ``E_q[grad f]`` and an expected curvature are obtained."""

from abc import ABC, abstractmethod
from collections import namedtuple

import numpy as np

from ..objectives import LinearModelObjective

#: What an estimator returns. ``curvature`` is ``(n_params, n_params)`` for a full
#: family and ``(n_params,)`` (the diagonal) for a diagonal one.
Expectations = namedtuple("Expectations", ["value", "gradient", "curvature"])


class ExpectationEstimator(ABC):
    """Estimates expectations of an objective under a Gaussian family.

    ``curvature="exact"`` asks for ``E_q[hess f]``; ``"gauss_newton"`` for the
    positive semi-definite ``E_q[sum_i g_i g_i^T]`` (VAG), ``g_i`` the per-example
    gradients of the data term (plus the penalty's own curvature).
    """

    #: True when repeated calls give the same numbers (no sampling): the solver
    #: may then run a line search on :meth:`value`.
    deterministic = False

    def check_objective(self, objective):
        """Raise a TypeError naming what is missing if ``objective`` is not supported."""

    @abstractmethod
    def __call__(self, objective, family, curvature="exact", random_state=None):
        """Return :class:`Expectations` of ``objective`` under ``family``."""

    def value(self, objective, family, mean, curvature=None):
        """Return ``E_q[f]`` for ``q`` with ``family``'s covariance centred at ``mean``.

        Only deterministic estimators provide it. With ``curvature`` ("exact" or
        "gauss_newton") an estimator may also prepare the derivatives, so that a
        following call with the family moved to ``mean`` costs no second pass.
        """
        raise NotImplementedError(f"{type(self).__name__} does not provide deterministic values.")


class LinearPredictorExpectation(ExpectationEstimator):
    """Base of estimators that integrate over the 1-D linear predictors.

    For ``theta ~ N(mu, Sigma)`` each ``a_i = x_i^T theta ~ N(x_i^T mu, x_i^T Sigma x_i)``,
    so ``E[grad f] = X^T (w E[l'(a)])``, ``E[hess f] = X^T diag(w E[l''(a)]) X``
    and the Gauss-Newton curvature is ``X^T diag(w E[l'(a)^2]) X``. Subclasses only
    provide the per-sample integrals (:meth:`_raw`). The separable penalty's
    expectations are closed form.
    """

    deterministic = True

    def __init__(self):
        self._cache = (None, None, None, None)
        self._raw_cache = (None, None, None, None, None)

    def check_objective(self, objective):
        if not isinstance(objective, LinearModelObjective):
            raise TypeError(
                f"{type(self).__name__} integrates over linear predictors and needs a "
                f"LinearModelObjective, got {type(objective).__name__}; use "
                "expectation='mc' for other objectives."
            )

    def _raw(self, objective, m, v, need):
        """Return ``(E[l], E[l'], E[l''] or E[l'^2])`` per sample; ``need`` is
        "value", "exact" or "gauss_newton"."""
        raise NotImplementedError

    def _variance(self, objective, family):
        obj, fam, version, v = self._cache
        if obj is objective and fam is family and version == family.version:
            return v
        v = family.predictor_variance(objective.X)
        self._cache = (objective, family, family.version, v)
        return v

    def _penalty(self, objective, family, mean, curvature="exact"):
        if objective.penalty is None:
            n = objective.n_params
            return 0.0, np.zeros(n), np.zeros(n)
        return objective.penalty.expectation(mean, family.marginal_variance(), curvature)

    def _raw_at(self, objective, family, mean, need):
        """Per-sample integrals at ``mean``, reusing those a ``value(..., curvature)``
        call prepared for the same objective, covariance and mean."""
        obj, version, cached_mean, cached_need, raw = self._raw_cache
        if (obj is objective and version == family.version and cached_need == need
                and np.array_equal(cached_mean, mean)):
            return raw
        raw = self._raw(objective, objective.X @ mean, self._variance(objective, family), need)
        if need != "value":
            self._raw_cache = (objective, family.version, mean.copy(), need, raw)
        return raw

    def __call__(self, objective, family, curvature="exact", random_state=None):
        e0, e1, e2 = self._raw_at(objective, family, family.mean, curvature)
        p0, p1, p2 = self._penalty(objective, family, family.mean, curvature)
        value = float(np.dot(objective.weights, e0)) + p0
        gradient = objective.data_gradient(e1) + p1
        C = objective.data_curvature(e2, diagonal=family.diagonal)
        if family.diagonal:
            C = C + p2
        else:
            C[np.diag_indices_from(C)] += p2
        return Expectations(value, gradient, C)

    def value(self, objective, family, mean, curvature=None):
        e0 = self._raw_at(objective, family, mean, curvature or "value")[0]
        return float(np.dot(objective.weights, e0)) + self._penalty(objective, family, mean)[0]
