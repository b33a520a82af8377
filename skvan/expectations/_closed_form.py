"""Closed-form Gaussian expectations, for objectives and losses that have them."""

import numpy as np

from ..objectives import QuadraticObjective
from ._base import Expectations, LinearPredictorExpectation


class ClosedForm(LinearPredictorExpectation):
    """Exact expectations without sampling or quadrature.

    - :class:`~skvan.objectives.QuadraticObjective`:
      ``E[1/2 theta^T G theta - b^T theta] = 1/2 (mu^T G mu + tr(G Sigma)) - b^T mu``,
      gradient ``G mu - b``, curvature ``G``; each iteration costs ``O(n_params^3)``
      whatever the number of samples behind ``G``.
    - :class:`~skvan.objectives.LinearModelObjective` whose loss has a
      ``gaussian_expectation`` (the squared loss).

    Separable penalties contribute their own closed forms. Other losses raise a
    TypeError that points to quadrature or Monte Carlo.
    """

    def check_objective(self, objective):
        if isinstance(objective, QuadraticObjective):
            return
        super().check_objective(objective)
        if not hasattr(objective.loss, "gaussian_expectation"):
            raise TypeError(
                f"{type(objective.loss).__name__} has no closed-form Gaussian expectation; "
                "use expectation='quadrature' or expectation='mc'."
            )

    def _raw(self, objective, m, v, need):
        e0, e1, e2, e1sq = objective.loss.gaussian_expectation(objective.y, m, v)
        return e0, e1, (e1sq if need == "gauss_newton" else e2)

    @staticmethod
    def _trace_term(objective, family):
        """``tr(G Sigma)``."""
        if family.diagonal:
            return float(np.dot(np.diag(objective.G), family.covariance))
        return float(np.einsum("ij,ij->", objective.G, family.covariance))

    def __call__(self, objective, family, curvature="exact", random_state=None):
        if not isinstance(objective, QuadraticObjective):
            return super().__call__(objective, family, curvature, random_state)
        mean = family.mean
        p0, p1, p2 = self._penalty(objective, family, mean, curvature)
        value = objective.smooth_value(mean) + 0.5 * self._trace_term(objective, family) + p0
        gradient = objective.G @ mean - objective.b + p1
        if family.diagonal:
            C = np.diag(objective.G) + p2
        else:
            C = objective.G.copy()
            C[np.diag_indices_from(C)] += p2
        return Expectations(value, gradient, C)

    def value(self, objective, family, mean, curvature=None):
        if not isinstance(objective, QuadraticObjective):
            return super().value(objective, family, mean, curvature)
        return (objective.smooth_value(mean) + 0.5 * self._trace_term(objective, family)
                + self._penalty(objective, family, mean)[0])
