"""Separable penalties ``g(theta) = sum_j g_j(theta_j)`` and their Gaussian expectations."""

import numpy as np


class L2Penalty:
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

    def __init__(self, strength):
        self.strength = np.asarray(strength, dtype=np.float64)

    def value(self, theta):
        """Return ``g(theta)``."""
        return 0.5 * float(np.dot(self.strength, theta**2))

    def gradient(self, theta):
        """Return ``grad g(theta)``."""
        return self.strength * theta

    def hessian_diag(self, theta):
        """Return the diagonal of ``hess g(theta)`` (the Hessian is diagonal)."""
        return self.strength.copy()

    def expectation(self, mean, var):
        """Return ``E[g], E[grad g], E[diag hess g]`` for ``theta_j ~ N(mean_j, var_j)``."""
        value = 0.5 * float(np.dot(self.strength, mean**2 + var))
        return value, self.strength * mean, self.strength.copy()
