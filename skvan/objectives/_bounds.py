"""Box constraints as a change of variables: ``x = T(u)`` coordinate by coordinate.

VAN's ``q`` is a Gaussian over the unconstrained ``u``; every point it draws maps
into the box, so ``f`` is only ever evaluated inside it. Per coordinate:

- no bound: ``x = u``;
- a lower bound ``l``: ``x = l + softplus(u)`` (``x ~ l + u`` far from it);
- an upper bound ``h``: ``x = h - softplus(-u)``;
- both: ``x = l + (h - l) sigmoid(u)``.

Derivatives follow by the chain rule (``T`` is elementwise)::

    grad_u = T'(u) grad_x,    hess_u = diag(T') hess_x diag(T') + diag(T'' grad_x)
"""

import numpy as np
from scipy.special import expit


def _softplus(u):
    return np.logaddexp(0.0, u)


class BoxTransform:
    """``x = T(u)`` mapping the real line onto each coordinate's interval.

    Parameters
    ----------
    lower, upper : ndarray of shape (n,)
        Bounds (``-inf``/``inf`` for none), ``lower < upper``.
    """

    def __init__(self, lower, upper):
        self.lower = np.asarray(lower, dtype=np.float64)
        self.upper = np.asarray(upper, dtype=np.float64)
        lo, hi = np.isfinite(self.lower), np.isfinite(self.upper)
        self.both, self.low_only, self.high_only = lo & hi, lo & ~hi, ~lo & hi
        self.width = np.where(self.both, self.upper - self.lower, 1.0)

    def forward(self, u):
        """``x = T(u)`` (rows of ``u`` are points)."""
        u = np.asarray(u, dtype=np.float64)
        x = u.copy()
        lo, hi = np.broadcast_to(self.lower, u.shape), np.broadcast_to(self.upper, u.shape)
        for mask, value in ((self.both, lo + self.width * expit(u)),
                            (self.low_only, lo + _softplus(u)),
                            (self.high_only, hi - _softplus(-u))):
            m = np.broadcast_to(mask, u.shape)
            x[m] = value[m]
        # Rounding must not put a point on or past a bound the user excluded.
        return np.clip(x, lo, hi)

    def derivatives(self, u):
        """``T'(u)`` and ``T''(u)``, elementwise."""
        u = np.asarray(u, dtype=np.float64)
        d1, d2 = np.ones_like(u), np.zeros_like(u)
        s, r = expit(u), expit(-u)
        for mask, first, second in ((self.both, self.width * s * r, self.width * s * r * (r - s)),
                                    (self.low_only, s, s * r),
                                    (self.high_only, r, -s * r)):
            m = np.broadcast_to(mask, u.shape)
            d1[m], d2[m] = first[m], second[m]
        return d1, d2

    def inverse(self, x):
        """``u = T^-1(x)`` for ``x`` strictly inside the bounds."""
        x = np.asarray(x, dtype=np.float64)
        u = x.copy()
        p = (x - self.lower) / self.width
        u[self.both] = np.log(p[self.both]) - np.log1p(-p[self.both])
        gap = np.where(self.low_only, x - self.lower, self.upper - x)
        # softplus^-1(g) = g + log(-expm1(-g)), accurate for small and large g
        inv = gap + np.log(-np.expm1(-gap))
        u[self.low_only] = inv[self.low_only]
        u[self.high_only] = -inv[self.high_only]
        return u

    def inside(self, x):
        """``x`` moved strictly inside the bounds (by 1e-8 of the interval, or of
        ``max(|x|, 1)`` for a one-sided bound) where it lies on one."""
        step = 1e-8 * np.where(self.both, self.width, np.maximum(np.abs(x), 1.0))
        return np.clip(x, self.lower + step, self.upper - step)

    def wrap(self, fun, jac, hess, vectorized):
        """``(fun, jac, hess)`` over ``u`` from the user's over ``x`` (``jac`` a callable,
        True or None). The Hessian over ``u`` needs the gradient over ``x`` at the
        same point: it is kept from the gradient call there (the solver asks for
        gradients before Hessians), so ``fun`` and ``jac`` run once per point."""
        grads = {}

        def chain(u, grad):
            grad = np.asarray(grad, dtype=np.float64)
            if hess is not None:
                for row, g in zip(np.atleast_2d(u), np.atleast_2d(grad)):
                    grads[row.tobytes()] = g
            return grad * self.derivatives(u)[0]

        if jac is True:
            def fun_u(u):
                value, grad = fun(self.forward(u))
                return value, chain(u, grad)
            jac_u = True
        else:
            def fun_u(u):
                return fun(self.forward(u))
            jac_u = None if jac is None else (lambda u: chain(u, jac(self.forward(u))))
        if hess is None:
            return fun_u, jac_u, None
        if vectorized:
            raise ValueError("bounds with hess and vectorized=True are not supported; pass "
                             "vectorized=False.")

        def hess_u(u):
            x = self.forward(u)
            d1, d2 = self.derivatives(u)
            grad = grads.pop(u.tobytes(), None)
            if grad is None:
                grad = np.asarray(fun(x)[1] if jac is True else jac(x), dtype=np.float64)
            H = np.asarray(hess(x), dtype=np.float64)
            return d1[:, None] * H * d1[None, :] + np.diag(d2 * grad)
        return fun_u, jac_u, hess_u
