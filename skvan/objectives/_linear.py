"""Objectives of linear models: a data term through ``a = X theta``, plus a penalty."""

import numpy as np

from .._blocks import row_blocks
from ._base import Objective


class LinearModelObjective(Objective):
    """``f(theta) = scale * sum_i w_i l(y_i, x_i^T theta) + g(theta)``.

    The data term is a sum of per-sample losses of the linear predictor; the
    penalty ``g`` is separable. An intercept is a column of ones in ``X``.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_params)
        Design matrix (with a column of ones for an intercept).
    y : ndarray of shape (n_samples,)
        Targets in the loss's convention.
    loss : object
        A loss from :mod:`skvan.objectives._losses`.
    sample_weight : ndarray of shape (n_samples,), default=None
        Non-negative weights ``w_i``; None means ones.
    penalty : object, default=None
        A separable penalty (for example :class:`L2Penalty`) or None.
    scale : float, default=1.0
        Multiplies the data term. A minibatch of ``b`` rows out of ``n`` uses
        ``n / b`` so that its gradient estimates the full-data gradient.
    """

    def __init__(self, X, y, loss, sample_weight=None, penalty=None, scale=1.0):
        self.X = X
        self.y = y
        self.loss = loss
        n_samples = X.shape[0]
        if sample_weight is None:
            sample_weight = np.ones(n_samples)
        self.sample_weight = sample_weight
        self.penalty = penalty
        self.scale = float(scale)
        self.n_params = X.shape[1]
        self._X_squared = None

    @property
    def n_samples(self):
        """Number of rows in the data term."""
        return self.X.shape[0]

    @property
    def weights(self):
        """Effective per-sample weights ``scale * w_i``."""
        return self.scale * self.sample_weight

    def subsample(self, indices):
        """Return the objective on the rows ``indices``, scaled to the full data.

        The data term is multiplied by ``n_samples / len(indices)`` (on top of the
        current scale) so its gradient is an unbiased estimate of the full one;
        the penalty is unchanged.
        """
        return LinearModelObjective(
            self.X[indices],
            self.y[indices],
            self.loss,
            self.sample_weight[indices],
            self.penalty,
            self.scale * self.n_samples / len(indices),
        )

    def scaled(self, factor):
        """Return ``factor * f`` (for instance ``f / sigma^2``, a negative log joint)."""
        penalty = None if self.penalty is None else self.penalty.scaled(factor)
        return LinearModelObjective(
            self.X, self.y, self.loss, self.sample_weight, penalty, self.scale * factor
        )

    # -- from per-sample derivatives to derivatives in theta --------------------
    def data_gradient(self, raw_gradient):
        """Return ``X^T (scale * w * raw_gradient)``."""
        return self.X.T @ (self.weights * raw_gradient)

    def data_curvature(self, raw_curvature, diagonal=False):
        """Return ``X^T diag(scale * w * raw_curvature) X``, or only its diagonal.

        Accumulated over row blocks; with ``d >= 0`` each block is the symmetric
        rank-k product ``X_d^T X_d``, ``X_d = sqrt(d) X``.
        """
        d = self.weights * raw_curvature
        X = self.X
        if diagonal:
            if self._X_squared is None:
                self._X_squared = X**2
            return self._X_squared.T @ d
        H = np.zeros((self.n_params, self.n_params))
        psd = bool(np.all(d >= 0))
        root = np.sqrt(d) if psd else None
        for rows in row_blocks(X.shape[0], X.shape[1]):
            if psd:
                Xd = X[rows] * root[rows, None]
                H += Xd.T @ Xd
            else:
                H += X[rows].T @ (X[rows] * d[rows, None])
        return H

    # -- pointwise interface ------------------------------------------------------
    def value(self, theta):
        a = self.X @ theta
        out = float(np.dot(self.weights, self.loss.loss(self.y, a)))
        if self.penalty is not None:
            out += self.penalty.value(theta)
        return out

    def gradient(self, theta):
        d1, _ = self.loss.derivatives(self.y, self.X @ theta)
        g = self.data_gradient(d1)
        if self.penalty is not None:
            g = g + self.penalty.gradient(theta)
        return g

    def hessian(self, theta):
        _, d2 = self.loss.derivatives(self.y, self.X @ theta)
        H = self.data_curvature(d2)
        if self.penalty is not None:
            H[np.diag_indices_from(H)] += self.penalty.hessian_diag(theta)
        return H

    def gauss_newton(self, theta):
        """Sum of per-example gradient outer products plus the penalty curvature.

        ``X^T diag(scale * w * l'(a)^2) X + hess g``: the VAG curvature of the data
        term (eq. Vag_prec of the paper), positive semi-definite by construction.
        """
        d1, _ = self.loss.derivatives(self.y, self.X @ theta)
        H = self.data_curvature(d1**2)
        if self.penalty is not None:
            H[np.diag_indices_from(H)] += self.penalty.hessian_diag(theta)
        return H
