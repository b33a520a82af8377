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
    #: The expectation's gradient and curvature do not depend on ``Sigma``.
    quadratic = True

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

    #: The expectation's gradient and curvature do not depend on ``Sigma`` (its
    #: value does, through ``sum_j lambda_j Sigma_jj``).
    quadratic = True

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


class ElasticNetPenalty:
    """The elastic net's penalty ``g(theta) = sum_j (lambda_j |theta_j| + rho_j theta_j^2 / 2)``:
    an :class:`L1Penalty` and an :class:`L2Penalty` on the same parameters.

    Its two parts are kept apart because they are minimised differently: the L1
    part by the Lasso's exact zeros and KKT certificate
    (:class:`~skvan.van.LassoSolver`), the L2 part, smooth, as the ridge of the
    least squares (``X^T W X + diag(rho)``, or ``sqrt(rho_j) e_j`` rows).

    Parameters
    ----------
    l1_strength, l2_strength : ndarray of shape (n_params,)
        Non-negative ``lambda_j`` and ``rho_j``; both zero leave a parameter (an
        intercept) unpenalised.

    Attributes
    ----------
    l1 : L1Penalty
        ``sum_j lambda_j |theta_j|``.
    l2 : L2Penalty
        ``sum_j rho_j theta_j^2 / 2``.

    See Also
    --------
    L1Penalty, L2Penalty : The parts.
    skvan.linear_model.VANElasticNet : The estimator minimising least squares plus it.

    Notes
    -----
    Every expectation is the sum of its parts' (exact under any Gaussian). A
    linear model's elastic net at ``alpha`` and ``l1_ratio`` on rows of total
    weight ``n`` (:meth:`from_alpha`) has ``lambda_j = n alpha l1_ratio`` and
    ``rho_j = n alpha (1 - l1_ratio)``: scikit-learn's ``ElasticNet`` objective
    multiplied by ``n``.

    Examples
    --------
    >>> import numpy as np
    >>> from skvan.objectives import ElasticNetPenalty
    >>> g = ElasticNetPenalty.from_alpha(0.1, 0.5, n_params=3, total_weight=10.0, n_free=1)
    >>> g.l1.strength, g.l2.strength
    (array([0.5, 0.5, 0. ]), array([0.5, 0.5, 0. ]))
    >>> g.value(np.array([1.0, -2.0, 5.0]))
    2.75
    """

    def __init__(self, l1_strength, l2_strength):
        self.l1 = L1Penalty(l1_strength)
        self.l2 = L2Penalty(l2_strength)

    @classmethod
    def from_alpha(cls, alpha, l1_ratio, n_params, total_weight, n_free=0):
        """``n alpha (l1_ratio ||w||_1 + (1 - l1_ratio) ||w||^2 / 2)`` over ``n_params``
        parameters whose last ``n_free`` (an intercept) are unpenalised."""
        l1, l2 = np.zeros(n_params), np.zeros(n_params)
        features = slice(0, n_params - n_free)
        l1[features] = alpha * l1_ratio * total_weight
        l2[features] = alpha * (1.0 - l1_ratio) * total_weight
        return cls(l1, l2)

    @property
    def strength(self):
        """The L1 strengths ``lambda_j``, as an :class:`L1Penalty`'s."""
        return self.l1.strength

    @property
    def curvature_bound(self):
        """The largest curvature of ``g_j`` away from 0: ``rho_j``."""
        return self.l2.strength

    def _apply(self, method, *args):
        """The penalty whose parts are ``part.method(*args)``."""
        l1, l2 = (getattr(part, method)(*args) for part in (self.l1, self.l2))
        return ElasticNetPenalty(l1.strength, l2.strength)

    def multiplied(self, factor):
        """The same penalty with both strengths multiplied by ``factor``."""
        return self._apply("multiplied", factor)

    def reparametrised(self, column_scale):
        """The penalty of ``theta' = column_scale * theta``."""
        return self._apply("reparametrised", column_scale)

    def restricted(self, columns):
        """The penalty on ``theta[columns]``."""
        return self._apply("restricted", columns)

    def value(self, theta):
        """Return ``g(theta)``."""
        return self.l1.value(theta) + self.l2.value(theta)

    def gradient(self, theta):
        """Return the subgradient ``lambda sign(theta) + rho theta``."""
        return self.l1.gradient(theta) + self.l2.gradient(theta)

    def hessian_diag(self, theta):
        """Return ``rho`` (the L1 part's curvature is 0 away from 0)."""
        return self.l2.hessian_diag(theta)

    def expectation(self, mean, var, hessian="exact"):
        """``E[g], E[grad g]`` and a curvature: the sums of the parts'."""
        return _summed(self.l1.expectation(mean, var, hessian),
                       self.l2.expectation(mean, var, hessian))

    def expectation_under(self, family, mean, hessian="exact"):
        """:meth:`expectation` under ``family``'s covariance, centred at ``mean``."""
        return _summed(self.l1.expectation_under(family, mean, hessian),
                       self.l2.expectation_under(family, mean, hessian))

    @staticmethod
    def add_curvature(C, curvature):
        """Return ``C`` plus the penalty's diagonal ``curvature``."""
        return add_diagonal(C, curvature)


def _summed(first, second):
    """``(value, gradient, curvature)`` of two penalties' expectations, added."""
    return tuple(a + b for a, b in zip(first, second))
