"""Closed-form Gaussian expectations, for objectives and losses that have them."""

import numpy as np

from ..objectives import QuadraticObjective
from ._base import Expectations, LinearPredictorExpectation


class ClosedForm(LinearPredictorExpectation):
    """Exact expectations without sampling or quadrature.

    - :class:`~skvan.objectives.QuadraticObjective`:
      ``E[1/2 theta^T G theta - b^T theta] = 1/2 (mu^T G mu + tr(G Sigma)) - b^T mu``,
      gradient ``G mu - b``, curvature ``G`` (its Hessian and its Gauss-Newton
      matrix); each iteration costs ``O(n_params^3)`` whatever the number of
      samples behind ``G``.
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
        return objective.loss.gaussian_expectation(objective.y, m, v, need)

    @staticmethod
    def _trace_term(objective, family):
        """``tr(G Sigma)``."""
        if family.diagonal:
            return float(np.dot(np.diag(objective.G), family.sigma))
        return float(np.einsum("ij,ij->", objective.G, family.sigma))

    def __call__(self, objective, family, hessian="exact", random_state=None):
        if not isinstance(objective, QuadraticObjective):
            return super().__call__(objective, family, hessian, random_state)
        mean, penalty = family.mean, objective.penalty
        # The trace first: a full family's marginal variances are then the diagonal
        # of the covariance it computed, not another inverse of its factor.
        trace = self._trace_term(objective, family)
        p0, p1, p2 = penalty.expectation_under(family, mean, hessian)
        value = objective.smooth_value(mean) + 0.5 * trace + p0
        gradient = objective.G @ mean - objective.b + p1
        C = np.diag(objective.G) if family.diagonal else objective.G.copy()
        return Expectations(value, gradient, penalty.add_curvature(C, p2))

    def value(self, objective, family, mean, hessian=None):
        if not isinstance(objective, QuadraticObjective):
            return super().value(objective, family, mean, hessian)
        trace = self._trace_term(objective, family)  # first, as in __call__
        penalty = objective.penalty.expectation_under(family, mean)[0]
        return objective.smooth_value(mean) + 0.5 * trace + penalty
