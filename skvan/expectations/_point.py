"""Expectations under a point mass: the VO limit, where ``q`` has narrowed to its mean."""

import numpy as np

from ._base import ExpectationEstimator, Expectations


class PointMass(ExpectationEstimator):
    """``E_q[f]``, ``E_q[grad f]`` and ``E_q[hess f]`` as ``f``, its gradient and its
    Hessian (or Gauss-Newton matrix) at the mean.

    The limit ``Sigma -> 0`` of every other estimator, and exact wherever ``q``
    is too narrow for ``f`` to vary across it: for a linear model, wherever every
    row's predictor variance is negligible on the scale on which its loss bends
    (the other estimators' own shortcut there, without their test of ``Sigma``
    at every precision). :func:`~skvan.van.laplace_posterior` narrows ``q`` so.
    Any :class:`~skvan.objectives.Objective` qualifies (the three from its
    ``value_and_derivatives``, one pass over the rows for a linear model's); a
    diagonal family takes the Hessian's diagonal (its Gauss-Newton curvature: the
    whole matrix's diagonal). The derivatives at the mean a step search tries
    first are computed with its value and kept for the expectations there.

    Examples
    --------
    >>> import numpy as np
    >>> from skvan.expectations import PointMass
    >>> from skvan.objectives import FunctionObjective
    >>> from skvan.van import make_family
    >>> f = FunctionObjective(lambda x: float(x @ x), 2, jac=lambda x: 2 * x,
    ...                       hess=lambda x: 2 * np.eye(x.size))
    >>> e = PointMass()(f, make_family("full", np.ones(2), np.eye(2)))
    >>> e.value, e.gradient
    (2.0, array([2., 2.]))
    """

    deterministic = True

    def __init__(self):
        self._last = (None, None, None)  # (objective, mean, value) of the last value asked
        # (objective, mean, diagonal, (value, gradient, curvature)) computed with a value
        # a step search asked for (``hessian="exact"``), for the expectations there
        self._prepared = None

    def __call__(self, objective, family, hessian="exact", random_state=None):
        mean = family.mean
        if hessian == "exact":
            value, gradient, curvature = self.derivatives(objective, mean, family.diagonal)
            return Expectations(value, gradient, curvature)
        curvature = objective.gauss_newton(mean)
        if family.diagonal:
            curvature = curvature.diagonal().copy()
        return Expectations(self.value(objective, family, mean), objective.gradient(mean),
                            curvature)

    def value(self, objective, family, mean, hessian=None):
        """``f(mean)``; the value at the mean a step search accepted is not
        computed again for the expectations there. With ``hessian="exact"`` (a
        search's first trial, :meth:`VANSolver.expected_value`) the gradient and
        the Hessian come from the same pass and are kept for the expectations
        at ``mean``."""
        last_objective, last_mean, last_value = self._last
        if last_objective is objective and np.array_equal(last_mean, mean):
            return last_value
        if hessian == "exact":
            diagonal = family.diagonal
            value, gradient, curvature = objective.value_and_derivatives(mean, diagonal)
            self._prepared = (objective, np.array(mean, copy=True), diagonal,
                              (value, gradient, curvature))
        else:
            value = float(objective.value(mean))
        self._last = (objective, np.array(mean, copy=True), value)
        return value

    def derivatives(self, objective, mean, diagonal=False):
        """``(f, grad f, hess f)`` at ``mean`` (the Hessian's diagonal with
        ``diagonal``): those a search's trial kept there (handed out once: the
        solver may update them in place), or one pass of the objective."""
        prepared, self._prepared = self._prepared, None
        if (prepared is not None and prepared[0] is objective and prepared[2] == diagonal
                and np.array_equal(prepared[1], mean)):
            return prepared[3]
        value, gradient, curvature = objective.value_and_derivatives(mean, diagonal)
        self._last = (objective, np.array(mean, copy=True), value)
        return value, gradient, curvature
