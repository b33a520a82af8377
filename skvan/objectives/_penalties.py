"""Separable penalties ``g(theta) = sum_j g_j(theta_j)`` and their Gaussian expectations.

Being separable, their expectations under any Gaussian (full or diagonal
covariance) depend only on the marginal means and variances.
"""

import numpy as np
from scipy.special import ndtr

_SQRT_2_OVER_PI = np.sqrt(2.0 / np.pi)
_INV_SQRT_2PI = 1.0 / np.sqrt(2.0 * np.pi)


class _SeparablePenalty:
    """Holds the per-parameter strengths ``lambda_j >= 0``."""

    def __init__(self, strength):
        self.strength = np.asarray(strength, dtype=np.float64)

    def scaled(self, factor):
        """The same penalty with strengths multiplied by ``factor``."""
        return type(self)(factor * self.strength)


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

    def value(self, theta):
        """Return ``g(theta)``."""
        return 0.5 * float(np.dot(self.strength, theta**2))

    def gradient(self, theta):
        """Return ``grad g(theta)``."""
        return self.strength * theta

    def hessian_diag(self, theta):
        """Return the diagonal of ``hess g(theta)`` (the Hessian is diagonal)."""
        return self.strength.copy()

    def expectation(self, mean, var, curvature="exact"):
        """Return ``E[g], E[grad g], E[diag hess g]`` for ``theta_j ~ N(mean_j, var_j)``
        (the curvature is the same for ``"exact"`` and ``"gauss_newton"``)."""
        value = 0.5 * float(np.dot(self.strength, mean**2 + var))
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

    def value(self, theta):
        """Return ``g(theta)``."""
        return float(np.dot(self.strength, np.abs(theta)))

    def gradient(self, theta):
        """Return the subgradient ``lambda * sign(theta)`` (0 at 0)."""
        return self.strength * np.sign(theta)

    def hessian_diag(self, theta):
        """Return zeros: the curvature of ``|t|`` is 0 away from 0 (a point mass at 0)."""
        return np.zeros_like(self.strength)

    def expectation(self, mean, var, curvature="exact"):
        """Return ``E[g], E[grad g]`` and a curvature for ``theta_j ~ N(mean_j, var_j)``.

        ``curvature="exact"``: ``E[diag hess g] = 2 lambda phi(r) / s``.
        ``"gauss_newton"``: ``lambda / sqrt(m^2 + s^2)``, the curvature of the tightest
        quadratic upper bound ``E|theta| <= (m^2 + s^2 + c^2) / (2 c)``, ``c = sqrt(m^2 + s^2)``:
        bounded by ``lambda / s`` like the exact one, but decaying like ``lambda / |m|``
        (the iterative-ridge curvature) instead of exponentially, so that a Newton
        step does not overshoot across 0.
        """
        s = np.sqrt(np.maximum(var, np.finfo(np.float64).tiny))
        r = mean / s
        pdf = _INV_SQRT_2PI * np.exp(-0.5 * r**2)
        abs_mean = s * _SQRT_2_OVER_PI * np.exp(-0.5 * r**2) + mean * (1.0 - 2.0 * ndtr(-r))
        value = float(np.dot(self.strength, abs_mean))
        if curvature == "gauss_newton":
            curv = self.strength / np.sqrt(mean**2 + s**2)
        else:
            curv = self.strength * 2.0 * pdf / s
        return value, self.strength * (2.0 * ndtr(r) - 1.0), curv
