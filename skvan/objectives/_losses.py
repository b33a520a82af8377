"""Per-sample losses ``l(y, a)`` of a linear predictor ``a = x^T theta``.

Like scikit-learn's ``sklearn._loss`` and skglm's datafits, a loss gives its
derivatives with respect to the linear predictor ``a``. Then for
``f(theta) = sum_i w_i l(y_i, x_i^T theta)``::

    grad f = X^T (w * l'(a)),      hess f = X^T diag(w * l''(a)) X

and every Gaussian expectation is a one-dimensional integral per sample, since
``a_i`` is Gaussian when ``theta`` is. All methods broadcast: ``y`` and ``a`` may
be ``(n,)`` arrays or ``(n, k)`` arrays of ``k`` values per sample.
"""

import numpy as np
from scipy.special import expit


class LogisticLoss:
    """Logistic loss ``l(y, a) = log(1 + exp(-y a))`` for labels ``y`` in {-1, +1}.

    ``l'(a) = -y sigmoid(-y a)``, ``l''(a) = sigmoid(a) sigmoid(-a)``. The loss is
    convex, so its Hessian is positive semi-definite. It has no closed-form
    Gaussian expectation: use quadrature or Monte Carlo.
    """

    name = "logistic"
    #: Largest ``l''``: the sigmoid's ``p (1 - p) <= 1/4``.
    max_curvature = 0.25

    def loss(self, y, a):
        """Return ``l(y, a)``, computed without overflow."""
        return np.logaddexp(0.0, -y * a)

    def derivatives(self, y, a):
        """Return ``(l'(a), l''(a))``."""
        p = expit(-y * a)
        return -y * p, p * (1.0 - p)

    def loss_derivatives(self, y, a):
        """Return ``(l, l', l'')`` from one exponential: with ``z = -y a`` and
        ``e = exp(-|z|)``, ``l = max(z, 0) + log1p(e)`` and ``sigmoid(z)`` is
        ``1 / (1 + e)`` for ``z >= 0``, ``e / (1 + e)`` otherwise."""
        z = -y * a
        e = np.exp(-np.abs(z))
        loss = np.maximum(z, 0.0) + np.log1p(e)
        inv = 1.0 / (1.0 + e)
        p = np.where(z >= 0, inv, e * inv)
        return loss, -y * p, p * (1.0 - p)

    @staticmethod
    def gauss_newton(d1, d2):
        """Per-sample Gauss-Newton curvature from ``(l', l'')``: the outer product of
        the per-example gradient, ``l'^2`` (VAG, eq. Vag_prec of the paper)."""
        return d1**2

    def narrow_expectations(self, y, m, v, need="exact"):
        """``E[l], E[l'], E[c]`` for ``a ~ N(m, v)`` with ``v`` small, from the
        second-order expansion ``E[h(a)] = h(m) + v h''(m) / 2 + O(v^2)``.

        With ``p = sigmoid(-y m)`` and ``q = p (1 - p)``: ``l'' = q``, ``l''' = -y q
        (1 - 2 p)``, ``l'''' = q (1 - 6 q)`` and, for ``c = l'^2 = p^2``, ``c'' = 2 p q
        (2 - 3 p)``; one exponential per row. The remainder, about ``v^2 h''''(m) /
        8``, is below ``1e-13`` for ``v <= 1e-6`` (the fourth derivatives of ``l``,
        ``l'``, ``l''`` and ``l'^2`` are at most 1 in absolute value): as accurate
        as the 2-node Gauss-Hermite rule it stands in for, at half its evaluations.
        Under VO the quadrature takes it up to ``v = 0.1`` (a remainder up to about
        ``1.3e-3``), where only the path to the minimiser depends on it.

        Parameters
        ----------
        y : ndarray of shape (n,)
            Labels in {-1, +1}.
        m, v : ndarray of shape (n,)
            Means and variances of the predictors (``v <= 1e-6``; under VO up to
            0.1).
        need : {"value", "exact", "gauss_newton"}, default="exact"
            As in :meth:`centred_expectations`.
        """
        z = -y * m
        e = np.exp(-np.abs(z))
        inv = 1.0 / (1.0 + e)
        p = np.where(z >= 0, inv, e * inv)
        q = p * (1.0 - p)
        half = 0.5 * v
        e0 = np.maximum(z, 0.0) + np.log1p(e) + half * q
        if need == "value":
            return e0, None, None
        e1 = -y * (p + half * q * (1.0 - 2.0 * p))
        if need == "gauss_newton":
            e2 = p * p + v * p * q * (2.0 - 3.0 * p)
        else:
            e2 = q + half * q * (1.0 - 6.0 * q)
        return e0, e1, e2

    def centred_expectations(self, y, sd, z, w, need="exact"):
        """``E[l], E[l'], E[c]`` for ``a ~ N(0, sd^2)`` by a rule symmetric about 0.

        Where every mean is 0 (the start of a cold fit) ``-y a`` has the law of
        ``a``, so ``E[l'] = -y E[sigmoid(a)] = -y / 2`` exactly, and the rest are
        expectations of even functions: node pairs ``+-b`` (``b = sd z > 0``, weight
        ``w`` each) contribute ``softplus(b) + softplus(-b) = b + 2 log1p(e)``,
        ``2 sigmoid(b) sigmoid(-b) = 2 e / (1 + e)^2`` and, for ``c = l'^2``,
        ``sigmoid(b)^2 + sigmoid(-b)^2 = (1 + e^2) / (1 + e)^2`` with ``e = exp(-b)``;
        a node at 0 counts once. One exponential per pair: a quarter of the work
        of :meth:`loss_derivatives` on the whole rule.

        Parameters
        ----------
        y : ndarray of shape (n,)
            Labels in {-1, +1}.
        sd : ndarray of shape (n,)
            Standard deviations of the predictors.
        z, w : ndarray of shape (k,)
            Nodes and weights of a rule symmetric about 0 (``w`` summing to 1).
        need : {"value", "exact", "gauss_newton"}, default="exact"
            "value" computes ``E[l]`` only (the others are None); ``c`` is ``l''``
            or, with "gauss_newton", ``l'^2``.
        """
        positive = z > 0
        w0 = float(np.sum(w[z == 0]))
        wp = w[positive]
        b = sd[:, None] * z[positive]
        e = np.exp(-b)
        e0 = b @ wp + 2.0 * (np.log1p(e) @ wp) + w0 * np.log(2.0)
        if need == "value":
            return e0, None, None
        inv = 1.0 / (1.0 + e)
        inv *= inv
        if need == "gauss_newton":
            e2 = ((1.0 + e * e) * inv) @ wp + 0.25 * w0
        else:
            e2 = 2.0 * ((e * inv) @ wp) + 0.25 * w0
        return e0, -0.5 * y, e2


class SquaredLoss:
    """Half squared error ``l(y, a) = (y - a)^2 / 2``.

    ``l'(a) = a - y``, ``l''(a) = 1``. Its Gaussian expectations are closed form:
    for ``a ~ N(m, v)``, ``E[l] = ((y - m)^2 + v) / 2``, ``E[l'] = m - y`` and
    ``E[l''] = 1``. Being half a squared residual, its Gauss-Newton curvature is
    the classical ``J^T J``, here ``1``: its Hessian.
    """

    name = "squared"
    max_curvature = 1.0
    #: ``l''`` does not depend on the predictor: a Newton step's model is exact.
    constant_curvature = True

    def loss(self, y, a):
        """Return ``(y - a)^2 / 2``."""
        return 0.5 * (y - a) ** 2

    def derivatives(self, y, a):
        """Return ``(a - y, 1)``."""
        r = a - y
        return r, np.ones_like(r)

    def loss_derivatives(self, y, a):
        """Return ``(l, l', l'')``."""
        r = a - y
        return 0.5 * r**2, r, np.ones_like(r)

    @staticmethod
    def gauss_newton(d1, d2):
        """Per-sample Gauss-Newton curvature from ``(l', l'')``: ``J^T J = 1 = l''``."""
        return d2

    def gaussian_expectation(self, y, m, v, hessian="exact"):
        """Return ``E[l], E[l'], E[l'']`` for ``a ~ N(m, v)`` in closed form (the
        Gauss-Newton curvature is ``l''`` too, whatever ``hessian``)."""
        r = m - y
        return 0.5 * (r**2 + v), r, np.ones_like(r)
