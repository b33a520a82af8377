"""Separable penalties ``g(theta) = sum_j g_j(theta_j)`` and their Gaussian expectations.

Being separable, their expectations under any Gaussian (full or diagonal
covariance) depend only on the marginal means and variances, and their
curvature is diagonal: :meth:`add_curvature` adds it to a full curvature matrix
or to the diagonal a diagonal family keeps.
"""

import numpy as np
from scipy.special import ndtr

_INV_SQRT_2PI = 1.0 / np.sqrt(2.0 * np.pi)


def add_diagonal(C, d):
    """``C + diag(d)`` for a full ``C`` (in place), ``C + d`` for a diagonal one, or
    ``C.add_diagonal(d)`` for a curvature kept as parts."""
    if hasattr(C, "add_diagonal"):
        return C.add_diagonal(d)
    if np.ndim(C) == 1:
        return C + d
    if C.flags.c_contiguous:
        C.reshape(-1)[:: C.shape[0] + 1] += d  # the diagonal, as a strided view
    else:
        C[np.diag_indices_from(C)] += d
    return C


class NoPenalty:
    """``g(theta) = 0``: what an unpenalised objective (a data term alone) carries."""

    curvature_bound = 0.0

    def value(self, theta):
        """Return 0."""
        return 0.0

    def gradient(self, theta):
        """Return 0 (broadcasts)."""
        return 0.0

    def hessian_diag(self, theta):
        """Return 0 (broadcasts)."""
        return 0.0

    def expectation(self, mean, var, hessian="exact"):
        """Return ``(0, 0, 0)``."""
        return 0.0, 0.0, 0.0

    def expectation_under(self, family, mean, hessian="exact"):
        """Return ``(0, 0, 0)``."""
        return 0.0, 0.0, 0.0

    def add_curvature(self, C, curvature):
        """Return ``C`` unchanged."""
        return C

    def multiplied(self, factor):
        """Return ``self``."""
        return self

    def reparametrised(self, column_scale):
        """Return ``self``."""
        return self

    def restricted(self, columns):
        """Return ``self``."""
        return self


class _SeparablePenalty:
    """Holds the per-parameter strengths ``lambda_j >= 0``."""

    def __init__(self, strength):
        self.strength = np.asarray(strength, dtype=np.float64)

    def multiplied(self, factor):
        """The same penalty with strengths multiplied by ``factor``."""
        return type(self)(factor * self.strength)

    def reparametrised(self, column_scale):
        """The penalty of ``theta' = column_scale * theta``: ``g(theta' / column_scale)``."""
        return type(self)(self.strength / column_scale**self.degree)

    def restricted(self, columns):
        """The penalty on ``theta[columns]``."""
        return type(self)(self.strength[columns])

    def expectation_under(self, family, mean, hessian="exact"):
        """:meth:`expectation` under ``family``'s covariance, centred at ``mean``."""
        return self.expectation(mean, family.marginal_variance(), hessian)

    @staticmethod
    def add_curvature(C, curvature):
        """Return the curvature matrix ``C`` (full, or its diagonal) plus the
        penalty's diagonal ``curvature``."""
        return add_diagonal(C, curvature)


class L2Penalty(_SeparablePenalty):
    """Ridge penalty ``g(theta) = 1/2 sum_j lambda_j theta_j^2``.

    Parameters
    ----------
    strength : ndarray of shape (n_params,)
        Non-negative ``lambda_j``; zero leaves a parameter (an intercept) unpenalised.

    Notes
    -----
    Under ``theta_j ~ N(m_j, s_j)`` the expectations are closed form:
    ``E[g] = 1/2 sum_j lambda_j (m_j^2 + s_j)``, ``E[grad g] = lambda * m`` and
    ``E[diag hess g] = lambda``. As a negative log prior it is the Gaussian prior
    ``N(0, 1 / lambda_j)``.
    """

    degree = 2

    @property
    def curvature_bound(self):
        """The largest curvature of ``g_j``: ``lambda_j``."""
        return self.strength

    def value(self, theta):
        """Return ``g(theta)``."""
        return 0.5 * float(np.dot(self.strength, theta**2))

    def gradient(self, theta):
        """Return ``grad g(theta)``."""
        return self.strength * theta

    def hessian_diag(self, theta):
        """Return the diagonal of ``hess g(theta)`` (the Hessian is diagonal)."""
        return self.strength.copy()

    def expectation(self, mean, var, hessian="exact"):
        """Return ``E[g], E[grad g], E[diag hess g]`` for ``theta_j ~ N(mean_j, var_j)``
        (the curvature is the same for ``"exact"`` and ``"gauss_newton"``)."""
        value = 0.5 * float(np.dot(self.strength, mean**2 + var))
        return value, self.strength * mean, self.strength.copy()

    def expectation_under(self, family, mean, hessian="exact"):
        """:meth:`expectation` under ``family``: only ``sum_j lambda_j Sigma_jj`` is needed
        (``family.weighted_trace``), not every marginal variance."""
        value = 0.5 * (float(np.dot(self.strength, mean**2)) + family.weighted_trace(self.strength))
        return value, self.strength * mean, self.strength.copy()


class L1Penalty(_SeparablePenalty):
    """Lasso penalty ``g(theta) = sum_j lambda_j |theta_j|``.

    Parameters
    ----------
    strength : ndarray of shape (n_params,)
        Non-negative ``lambda_j``; zero leaves a parameter (an intercept) unpenalised.

    Notes
    -----
    ``g`` is not differentiable at 0, but its Gaussian expectation is smooth. For
    ``theta_j ~ N(m, s^2)`` and ``r = m / s``::

        E|theta_j|        = s sqrt(2/pi) exp(-r^2 / 2) + m (1 - 2 Phi(-r))
        E[sign(theta_j)]  = 2 Phi(r) - 1            (= d E|theta_j| / dm)
        E[d^2 |theta_j|]  = 2 phi(r) / s            (= 2 d E|theta_j| / d s^2)

    The expected curvature grows like ``1/s`` when ``m`` is within a few ``s`` of 0
    and vanishes exponentially otherwise: under VO, where ``s`` shrinks, it pins
    coefficients whose optimum is 0 and leaves the others free.
    """

    degree = 1
    #: Unbounded near 0, so no finite bound: 0 (it does not inform column scales).
    curvature_bound = 0.0

    def value(self, theta):
        """Return ``g(theta)``."""
        return float(np.dot(self.strength, np.abs(theta)))

    def gradient(self, theta):
        """Return the subgradient ``lambda * sign(theta)`` (0 at 0)."""
        return self.strength * np.sign(theta)

    def hessian_diag(self, theta):
        """Return zeros: the curvature of ``|t|`` is 0 away from 0 (a point mass at 0)."""
        return np.zeros_like(self.strength)

    def expectation(self, mean, var, hessian="exact"):
        """Return ``E[g], E[grad g]`` and a curvature for ``theta_j ~ N(mean_j, var_j)``.

        ``hessian="exact"``: ``E[diag hess g] = 2 lambda phi(r) / s``.
        ``"gauss_newton"``: ``lambda / sqrt(m^2 + s^2)``, the curvature of the tightest
        quadratic upper bound ``E|theta| <= (m^2 + s^2 + c^2) / (2 c)``, ``c = sqrt(m^2 + s^2)``:
        bounded by ``lambda / s`` like the exact one, but decaying like ``lambda / |m|``
        (the iterative-ridge curvature) instead of exponentially, so that a Newton
        step does not overshoot across 0.
        """
        s = np.sqrt(np.maximum(var, np.finfo(np.float64).tiny))
        r = mean / s
        pdf = _INV_SQRT_2PI * np.exp(-0.5 * r**2)
        # E[sign] = 2 Phi(r) - 1 = 1 - 2 Phi(-r): one normal CDF for both terms.
        sign = 1.0 - 2.0 * ndtr(-r)
        abs_mean = 2.0 * s * pdf + mean * sign
        value = float(np.dot(self.strength, abs_mean))
        if hessian == "gauss_newton":
            curv = self.strength / np.sqrt(mean**2 + s**2)
        else:
            curv = self.strength * 2.0 * pdf / s
        return value, self.strength * sign, curv
