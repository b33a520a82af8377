"""A Gaussian prior's term added to another estimator's expectations."""

import numpy as np

from ._base import ExpectationEstimator


class GaussianPriorTerm(ExpectationEstimator):
    """Expectations of ``f + r`` with the prior term ``r`` in closed form:
    ``r(theta) = 1/2 (theta - m_0)^T P_0 (theta - m_0)``, the negative log density
    of ``N(m_0, P_0^-1)`` up to a constant; those of ``f`` come from ``inner``.

    Under ``q = N(mu, Sigma)``::

        E_q[r] = 1/2 (mu - m_0)^T P_0 (mu - m_0) + 1/2 tr(P_0 Sigma),
        E_q[grad r] = P_0 (mu - m_0),    E_q[hess r] = P_0.

    VI on ``f + r`` is the Bayes update of the prior ``N(m_0, P_0^-1)`` by the
    likelihood ``exp(-f)``, within the Gaussian family: at its fixed point
    ``P = P_0 + E_q[hess f]`` and ``E_q[grad f] + P_0 (mu - m_0) = 0``. A stream
    (``partial_fit``) makes each batch's update that way, its prior the running
    ``q``: streaming variational Bayes (Broderick et al., 2013). The first VI
    iteration from ``q = N(m_0, P_0^-1)`` with rate ``beta <= 1`` is the one-step
    update ``P <- P_0 + beta E_q[hess f]``, ``mu <- m_0 - beta P^-1 E_q[grad f]``
    (where the step safeguard accepts it).

    Parameters
    ----------
    inner : ExpectationEstimator
        Estimates the expectations of ``f``.
    mean : ndarray of shape (n_params,)
        The prior's mean ``m_0``.
    precision : ndarray of shape (n_params, n_params) or (n_params,)
        The prior's precision ``P_0`` (a vector: its diagonal), symmetric positive
        semi-definite. Neither array is copied; the caller must not change them.

    Attributes
    ----------
    deterministic : bool
        ``inner``'s: the prior's term adds no noise.
    differentiates_value : bool
        ``inner``'s: the prior's term is exact.

    See Also
    --------
    MapReduce : Another estimator that wraps an inner one.

    References
    ----------
    T. Broderick, N. Boyd, A. Wibisono, A. C. Wilson and M. I. Jordan, "Streaming
    variational Bayes", NeurIPS 2013.

    Examples
    --------
    >>> import numpy as np
    >>> from skvan.expectations import ClosedForm, GaussianPriorTerm
    >>> from skvan.objectives import QuadraticObjective
    >>> from skvan.van import make_family
    >>> f = QuadraticObjective(np.eye(2), np.zeros(2), 0.0)
    >>> prior = GaussianPriorTerm(ClosedForm(), np.ones(2), 2.0 * np.eye(2))
    >>> e = prior(f, make_family("full", np.zeros(2), np.eye(2)))
    >>> e.gradient, np.diag(e.curvature)
    (array([-2., -2.]), array([3., 3.]))
    """

    def __init__(self, inner, mean, precision):
        self.inner = inner
        self.mean = mean
        self.precision = precision
        self.deterministic = inner.deterministic
        self.differentiates_value = inner.differentiates_value

    def check_objective(self, objective):
        """``inner``'s check."""
        self.inner.check_objective(objective)

    def reset(self, solver):
        """Start a run of ``inner``."""
        self.inner.reset(solver)

    def _term(self, family, mean):
        """``(E[r], E[grad r])`` for ``q`` with ``family``'s covariance centred at ``mean``."""
        d = mean - self.mean
        P = self.precision
        if P.ndim == 1:
            grad = P * d
            spread = float(np.dot(P, family.marginal_variance()))
        else:
            grad = P @ d
            spread = float(np.sum(P * family.sigma))  # tr(P_0 Sigma), both symmetric
        return 0.5 * (float(np.dot(d, grad)) + spread), grad

    def _curvature(self, C):
        """``C + P_0`` as a new array (``inner`` may keep ``C``)."""
        P = self.precision
        if P.ndim == 1 and np.ndim(C) == 2:
            C = C.copy()
            C[np.diag_indices_from(C)] += P
            return C
        return C + P

    def __call__(self, objective, family, hessian="exact", random_state=None):
        """``inner``'s expectations of ``objective`` plus the prior's term."""
        expect = self.inner(objective, family, hessian, random_state)
        value, grad = self._term(family, family.mean)
        return expect._replace(value=expect.value + value, gradient=expect.gradient + grad,
                               curvature=self._curvature(expect.curvature))

    def value(self, objective, family, mean, hessian=None):
        """``E_q[f + r]`` for ``q`` with ``family``'s covariance centred at ``mean``."""
        return self.inner.value(objective, family, mean, hessian) + self._term(family, mean)[0]
