"""Deterministic expectations of a user's function: a tensor Gauss-Hermite grid."""

import itertools

import numpy as np

from ..objectives import FunctionObjective
from ._base import ExpectationEstimator, Expectations, undefined
from ._quadrature import hermite_rule


def tensor_rule(n_dims, n_nodes):
    """Nodes ``(n_nodes**n_dims, n_dims)`` and weights of the product Gauss-Hermite
    rule for a standard normal in ``n_dims`` dimensions: exact for polynomials of
    degree ``< 2 n_nodes`` in each coordinate."""
    z, w = hermite_rule(n_nodes)
    Z = np.array(list(itertools.product(z, repeat=n_dims)), dtype=np.float64).reshape(-1, n_dims)
    W = np.prod(np.array(list(itertools.product(w, repeat=n_dims))).reshape(-1, n_dims), axis=1)
    return Z, W


class GaussHermiteGrid(ExpectationEstimator):
    """``E_q[f]``, ``E_q[grad f]`` and ``E_q[hess f]`` of a :class:`FunctionObjective`
    on the product Gauss-Hermite grid ``theta_k = mu + A z_k`` (``A A^T = Sigma``).

    Deterministic, so the solver may compare values (a line search on the VO
    objective) and a run does not depend on a seed. The same identities as
    :class:`MonteCarlo` give each oracle's estimates, with the grid's weights
    ``w_k`` in place of ``1/S``:

    - order 2: ``sum_k w_k hess f(theta_k)``;
    - order 1: ``Sigma^-1 sum_k w_k (theta_k - mu) grad f(theta_k)^T`` (Bonnet/Price),
      symmetrised;
    - order 0: ``E[grad f] = L sum_k w_k z_k f_k`` and
      ``E[hess f] = L sum_k w_k (z_k z_k^T - I) f_k L^T`` (``P = L L^T``), with the
      grid's mean value subtracted from ``f_k`` (it integrates to 0; this only
      removes round-off).

    The grid has ``n_nodes**n_params`` points, so it serves low dimensions
    (``skvan.minimize`` uses it for ``n = 1`` by default, ``n = 2`` on request).
    The outermost of 21 nodes (minimize's 1-D default) lies 7.8 standard deviations out.

    Parameters
    ----------
    n_nodes : int, default=20
        Nodes per dimension, ``>= 2``.
    """

    deterministic = True

    def __init__(self, n_nodes=20):
        self.n_nodes = n_nodes
        self._prepared = None

    def check_objective(self, objective):
        if not isinstance(objective, FunctionObjective):
            raise TypeError(
                f"GaussHermiteGrid integrates a FunctionObjective, got {type(objective).__name__}."
            )

    def _points(self, family, mean):
        Z, W = tensor_rule(family.n_params, self.n_nodes)
        return Z, W, mean + family.scale_noise(Z)

    def _expectations(self, objective, family, mean, hessian):
        Z, W, points = self._points(family, mean)
        diag = family.diagonal
        if objective.order == 0:
            v = objective.values(points)
            finite = np.isfinite(v)
            if not finite.all():
                # Where f is not finite the grid sees the worst of its finite values,
                # as Monte Carlo's draws do (MonteCarlo.combine).
                if not finite.any():
                    return undefined(family)
                v = np.where(finite, v, v[finite].max())
            value = float(W @ v)
            c = W * (v - value)
            gradient = family.unwhiten(Z.T @ c)
            if diag:
                C = family.unwhiten(family.unwhiten(((Z**2 - 1.0) * c[:, None]).sum(0)))
            else:
                M = (Z.T * c) @ Z  # sum_k c_k z_k z_k^T; the -I part has weight sum(c) = 0
                C = family.unwhiten(family.unwhiten(M).T)
            return Expectations(value, gradient, 0.5 * (C + C.T) if not diag else C)
        v, G = objective.values_gradients(points)
        gradient = W @ G
        if hessian == "gauss_newton":
            C = W @ G**2 if diag else (G.T * W) @ G
        elif objective.order == 2:
            H = objective.hessians(points)
            C = np.einsum("k,kii->i", W, H) if diag else np.einsum("k,kij->ij", W, H)
        else:
            M = (Z.T * W) @ G  # sum_k w_k z_k g_k^T
            if diag:
                C = family.unwhiten(np.diag(M))
            else:
                C = family.unwhiten(M)
                C = 0.5 * (C + C.T)
        return Expectations(float(W @ v), gradient, C)

    def __call__(self, objective, family, hessian="exact", random_state=None):
        prepared = self._prepared
        self._prepared = None
        if prepared is not None:
            obj, version, mean, need, result = prepared
            if (obj is objective and version == family.version and need == hessian
                    and np.array_equal(mean, family.mean)):
                return result
        return self._expectations(objective, family, family.mean, hessian)

    def value(self, objective, family, mean, hessian=None):
        if hessian is None:
            Z, W, points = self._points(family, mean)
            return float(W @ objective.values(points))  # NaN where some value is: refused
        result = self._expectations(objective, family, mean, hessian)
        self._prepared = (objective, family.version, np.array(mean, copy=True), hessian, result)
        return result.value
