"""Quadratic objectives: least squares through its sufficient statistics."""

import numpy as np

from .._data import gram, tdot
from ._base import Objective
from ._penalties import NoPenalty, add_diagonal


class QuadraticObjective(Objective):
    """``f(theta) = 1/2 theta^T G theta - b^T theta + c + g(theta)``, ``g`` separable.

    Weighted least squares ``1/2 sum_i w_i (y_i - x_i^T theta)^2`` is this with
    ``G = X^T W X``, ``b = X^T W y``, ``c = 1/2 y^T W y`` (:meth:`from_data`): once
    they are formed, nothing costs ``O(n_samples)`` any more.

    Parameters
    ----------
    G : ndarray of shape (n_params, n_params)
        Symmetric positive semi-definite.
    b : ndarray of shape (n_params,)
    c : float
    penalty : object, default=None
        A separable penalty; None is no penalty.
    """

    def __init__(self, G, b, c, penalty=None):
        self.G = G
        self.b = b
        self.c = float(c)
        self.penalty = NoPenalty() if penalty is None else penalty
        self.n_params = G.shape[0]

    @classmethod
    def from_data(cls, X, y, sample_weight=None, penalty=None):
        """Weighted least squares ``1/2 sum_i w_i (y_i - x_i^T theta)^2 + g(theta)``."""
        w = np.ones(X.shape[0]) if sample_weight is None else sample_weight
        return cls(gram(X, w), np.asarray(tdot(X, w * y)).ravel(), 0.5 * float(np.dot(w * y, y)),
                   penalty)

    @classmethod
    def from_linear(cls, objective):
        """The same function as a least-squares :class:`LinearModelObjective`,
        through its sufficient statistics (one pass over the rows)."""
        if objective.loss.name != "squared":
            raise TypeError(
                f"only a squared loss has quadratic sufficient statistics, got "
                f"{type(objective.loss).__name__}."
            )
        return cls.from_data(objective.X, objective.y, objective.weights, objective.penalty)

    def multiplied(self, factor):
        """Return ``factor * f`` (for instance ``f / sigma^2``, a negative log joint)."""
        return QuadraticObjective(factor * self.G, factor * self.b, factor * self.c,
                                  self.penalty.multiplied(factor))

    def with_penalty(self, penalty):
        """The same quadratic (``G``, ``b``, ``c`` shared, not copied) with another ``penalty``."""
        return self._share_smooth_cache(QuadraticObjective(self.G, self.b, self.c, penalty))

    def value_scale(self):
        """``|c|``, the size of the terms that cancel in the value near the optimum
        (``b^T theta`` and ``theta^T G theta / 2`` are then of that size too)."""
        return abs(self.c)

    def smooth_value(self, theta):
        """The quadratic part alone."""
        return 0.5 * float(theta @ self.G @ theta) - float(self.b @ theta) + self.c

    def smooth_gradient(self, theta):
        """``G theta - b``; for a sparse ``theta`` (a Lasso's KKT check) through the
        rows of the symmetric ``G`` at its nonzero entries: at p = 1,000 and 40
        nonzeros, 11 us against 48 for the whole product
        (``python benchmarks/bench_passes.py --sparse-gradient``)."""
        nonzero = np.flatnonzero(theta)
        if 2 * nonzero.size < theta.size:
            return theta[nonzero] @ self.G.take(nonzero, axis=0) - self.b
        return self.G @ theta - self.b

    def gram_block(self, idx):
        """``G[idx, idx]`` (``take``: 6x faster than fancy indexing at p = 50, and the
        certificate takes a block once or twice per iteration)."""
        return self.G.take(idx, axis=0).take(idx, axis=1)

    def gram_column(self, idx, j):
        """``G[idx, j]`` (row ``j`` of the symmetric ``G``: contiguous)."""
        return self.G[j].take(idx)

    def gram_diagonal(self):
        """``diag(G)``."""
        return np.diag(self.G)

    def value(self, theta):
        return self.smooth_value(theta) + self.penalty.value(theta)

    def gradient(self, theta):
        return self.G @ theta - self.b + self.penalty.gradient(theta)

    def hessian(self, theta):
        return add_diagonal(self.G.copy(), self.penalty.hessian_diag(theta))

    def gauss_newton(self, theta):
        """The Gauss-Newton matrix of least squares, ``J^T J = G``, is its Hessian
        (plus the penalty's own curvature)."""
        return self.hessian(theta)
