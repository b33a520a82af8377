"""Closed-form Gaussian expectations, for losses that have them."""

from ._base import LinearPredictorExpectation


class ClosedForm(LinearPredictorExpectation):
    """Exact expectations from the loss's own ``gaussian_expectation``.

    Available for :class:`~skvan.objectives.SquaredLoss`; other losses raise a
    TypeError that points to quadrature or Monte Carlo.
    """

    def check_objective(self, objective):
        super().check_objective(objective)
        if not hasattr(objective.loss, "gaussian_expectation"):
            raise TypeError(
                f"{type(objective.loss).__name__} has no closed-form Gaussian expectation; "
                "use expectation='quadrature' or expectation='mc'."
            )

    def _raw(self, objective, m, v, need):
        e0, e1, e2, e1sq = objective.loss.gaussian_expectation(objective.y, m, v)
        return e0, e1, (e1sq if need == "gauss_newton" else e2)
