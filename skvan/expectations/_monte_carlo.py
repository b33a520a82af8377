"""Monte Carlo expectations from samples of ``q``."""

import numpy as np

from ..objectives import LinearModelObjective
from ._base import Expectations, ExpectationEstimator


class MonteCarlo(ExpectationEstimator):
    """Expectations as averages over ``n_mc_samples`` draws ``theta_s ~ q``.

    For a :class:`~skvan.objectives.LinearModelObjective` the draws are pushed
    through ``X`` at once (``A = X Theta^T``) and only the data term is sampled;
    the separable penalty, whose expectation is closed form, is not (this removes
    its sampling noise at no cost). Any other objective is evaluated at each draw
    through its ``value``/``gradient``/``hessian`` (or ``gauss_newton``) methods.

    Parameters
    ----------
    n_mc_samples : int, default=10
        Number of draws per call.
    """

    deterministic = False

    def __init__(self, n_mc_samples=10):
        self.n_mc_samples = n_mc_samples

    def __call__(self, objective, family, curvature="exact", random_state=None):
        if random_state is None:
            random_state = np.random.default_rng()
        thetas = family.sample(self.n_mc_samples, random_state)
        if isinstance(objective, LinearModelObjective):
            return self._linear(objective, family, thetas, curvature)
        return self._generic(objective, family, thetas, curvature)

    def _linear(self, objective, family, thetas, curvature):
        A = objective.X @ thetas.T
        y = objective.y[:, None]
        d0, d1, d2 = objective.loss.loss_derivatives(y, A)
        e0 = d0.mean(axis=1)
        e2 = (d1**2 if curvature == "gauss_newton" else d2).mean(axis=1)
        value = float(np.dot(objective.weights, e0))
        gradient = objective.data_gradient(d1.mean(axis=1))
        C = objective.data_curvature(e2, diagonal=family.diagonal)
        if objective.penalty is not None:
            p0, p1, p2 = objective.penalty.expectation(family.mean, family.marginal_variance(), curvature)
            value += p0
            gradient = gradient + p1
            if family.diagonal:
                C = C + p2
            else:
                C[np.diag_indices_from(C)] += p2
        return Expectations(value, gradient, C)

    def _generic(self, objective, family, thetas, curvature):
        value, gradient, C = 0.0, 0.0, 0.0
        curv = objective.gauss_newton if curvature == "gauss_newton" else objective.hessian
        for theta in thetas:
            value += objective.value(theta)
            gradient = gradient + objective.gradient(theta)
            H = curv(theta)
            C = C + (np.diag(H) if family.diagonal else H)
        S = len(thetas)
        return Expectations(value / S, gradient / S, C / S)
