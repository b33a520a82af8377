"""Box constraints as a change of variables ``x = T(u)``, coordinate by coordinate.

VAN's ``q`` is a Gaussian over the unconstrained ``u``; every point it draws maps
into the box, so ``f`` is only ever evaluated inside it. ``T`` is the periodic
linear-quadratic map of CMA-ES's boundary handling (Hansen, pycma's
``BoxConstraintsLinQuadTransformation``): with a margin ``a`` at a bound ``l``,

- the identity on the interior, ``l + a <= u <= h - a`` (as far as that reaches);
- ``x = l + (u - (l - a))^2 / (4 a)`` on ``[l - a, l + a]``: the bound is the
  image of ``u = l - a``, where ``T' = 0`` and ``T'' = 1 / (2a)``; ``T`` and ``T'``
  are continuous where the pieces meet;
- beyond ``l - a`` the mirror image (a one-sided bound), or a period of
  ``2 (h - l + a_l + a_h)`` between two bounds.

Why this map: ``f o T`` is ``f`` itself in the interior, smooth everywhere, and
has no region where it is flat. A minimum on a face becomes a smooth minimum of
``f o T`` at the face's image (curvature ``|df/dx| / (2a)``), which VAN reaches at
its usual rate, and the mean read through ``T`` approaches the face
quadratically. A sigmoid or softplus map instead flattens ``f`` towards every
bound: ``q`` there sees no slope and collapses onto a face that holds no
minimum. The margin is pycma's, ``a = min((h - l) / 20, (1 + |l|) / 20)``
(``(1 + |l|) / 20`` for a one-sided bound); ``python
benchmarks/bench_minimize.py --bounds`` measures the bounded problems.

Derivatives follow by the chain rule (``T`` is elementwise)::

    grad_u = T'(u) grad_x,    hess_u = diag(T') hess_x diag(T') + diag(T'' grad_x)
"""

import numpy as np

#: The margin at a bound as a fraction of the box's width (and of ``1 + |bound|``).
MARGIN = 1.0 / 20.0
#: Points whose map and derivatives :meth:`BoxTransform.wrap`'s callables keep:
#: the solver asks for values, gradients and Hessians at the same draws of an
#: iteration (a few dozen), and each of them would fold and map each point again.
KEPT_POINTS = 512


class BoxTransform:
    """``x = T(u)``: the real line onto each coordinate's interval.

    Parameters
    ----------
    lower, upper : ndarray of shape (n,)
        Bounds (``-inf``/``inf`` for none), ``lower < upper``.
    """

    def __init__(self, lower, upper):
        self.lower = np.asarray(lower, dtype=np.float64)
        self.upper = np.asarray(upper, dtype=np.float64)
        lo, hi = np.isfinite(self.lower), np.isfinite(self.upper)
        width = np.where(lo & hi, self.upper - self.lower, np.inf)
        self.margin_low = np.where(lo, np.minimum(width, 1.0 + np.abs(self.lower)) * MARGIN, 0.0)
        self.margin_high = np.where(hi, np.minimum(width, 1.0 + np.abs(self.upper)) * MARGIN, 0.0)
        # The images of the bounds (where T' = 0), and the period between two.
        self.start = np.where(lo, self.lower - self.margin_low, -np.inf)
        self.end = np.where(hi, self.upper + self.margin_high, np.inf)
        self.period = np.where(lo & hi, 2.0 * (self.end - self.start), np.inf)

    def _fold(self, u):
        """``(y, sign)``: ``u`` folded into ``[start, end]`` (by the period between
        two bounds, by reflection at a single one) and ``dy/du`` (+-1)."""
        u = np.asarray(u, dtype=np.float64)
        start, end, period = self.start, self.end, self.period
        two = np.isfinite(period)
        # Between two bounds: the position within one period from start.
        r = np.mod(u - np.where(two, start, 0.0), np.where(two, period, 1.0))
        half = np.where(two, end - start, 0.0)
        back = two & (r > half)
        y = np.where(two, np.where(back, 2.0 * half - r, r) + np.where(two, start, 0.0), u)
        sign = np.where(back, -1.0, 1.0)
        # One bound: reflection at its image.
        low = np.isfinite(start) & ~two & (u < start)
        high = np.isfinite(end) & ~two & (u > end)
        y = np.where(low, 2.0 * start - u, np.where(high, 2.0 * end - u, y))
        sign = np.where(low | high, -1.0, sign)
        return y, sign

    def _pieces(self, y):
        """``T`` and its first two derivatives on the folded ``y``."""
        near_low = y < self.lower + self.margin_low
        near_high = y > self.upper - self.margin_high
        with np.errstate(divide="ignore", invalid="ignore"):
            a, b = 2.0 * self.margin_low, 2.0 * self.margin_high
            dl, dh = y - self.start, self.end - y
            x = np.where(near_low, self.lower + dl * dl / (2.0 * a),
                         np.where(near_high, self.upper - dh * dh / (2.0 * b), y))
            d1 = np.where(near_low, dl / a, np.where(near_high, dh / b, 1.0))
            d2 = np.where(near_low, 1.0 / a, np.where(near_high, -1.0 / b, 0.0))
        return x, d1, d2

    def evaluate(self, u):
        """``(T(u), T'(u), T''(u))``, elementwise (rows of ``u`` are points), from
        one fold."""
        y, sign = self._fold(u)
        x, d1, d2 = self._pieces(y)
        # Rounding must not put a point past a bound.
        return np.clip(x, self.lower, self.upper), sign * d1, d2

    def forward(self, u):
        """``x = T(u)`` (rows of ``u`` are points)."""
        return self.evaluate(u)[0]

    def derivatives(self, u):
        """``T'(u)`` and ``T''(u)``, elementwise."""
        return self.evaluate(u)[1:]

    def inverse(self, x):
        """The ``u`` in ``[start, end]`` with ``T(u) = x``, for ``x`` in the box."""
        x = np.asarray(x, dtype=np.float64)
        with np.errstate(invalid="ignore"):
            low = self.start + np.sqrt(np.maximum(4.0 * self.margin_low * (x - self.lower), 0.0))
            high = self.end - np.sqrt(np.maximum(4.0 * self.margin_high * (self.upper - x), 0.0))
        return np.where(x < self.lower + self.margin_low, low,
                        np.where(x > self.upper - self.margin_high, high, x))

    def initial(self, x):
        """The ``u`` a run starts from at ``x`` (in the box): :meth:`inverse`, but a
        point on a bound starts a sixteenth of its margin inside, where ``T' =
        1/4``. At the bound's own image ``T' = 0`` and ``f o T`` is even about it,
        so no estimate of ``E_q[grad f]`` there says which way the box lies."""
        low = (x <= self.lower) & (self.margin_low > 0)
        high = (x >= self.upper) & (self.margin_high > 0)
        x = np.where(low, self.lower + self.margin_low / 16.0,
                     np.where(high, self.upper - self.margin_high / 16.0, x))
        return self.inverse(x)

    def at_point(self, u, kept):
        """:meth:`evaluate` at one point ``u`` (1-D), kept in the dict ``kept`` (its
        oldest entries dropped beyond :data:`KEPT_POINTS`)."""
        key = u.tobytes()
        found = kept.get(key)
        if found is None:
            found = self.evaluate(u)
            if len(kept) >= KEPT_POINTS:
                kept.pop(next(iter(kept)))
            kept[key] = found
        return found

    def wrap(self, fun, jac, hess, vectorized):
        """``(fun, jac, hess)`` over ``u`` from the user's over ``x`` (``jac`` a callable,
        True or None). The Hessian over ``u`` needs the gradient over ``x`` at the
        same point: it is kept from the gradient call there (the solver asks for
        gradients before Hessians), so ``fun`` and ``jac`` run once per point; a
        point's map and derivatives are computed once too (:meth:`at_point`)."""
        grads, kept = {}, {}

        def mapped(u):  # (a copy: the user's function may write into its argument)
            return self.forward(u) if vectorized else self.at_point(u, kept)[0].copy()

        def chain(u, grad):
            grad = np.asarray(grad, dtype=np.float64)
            if hess is not None:
                for row, g in zip(np.atleast_2d(u), np.atleast_2d(grad)):
                    grads[row.tobytes()] = g
            return grad * (self.derivatives(u)[0] if vectorized else self.at_point(u, kept)[1])

        if jac is True:
            def fun_u(u):
                value, grad = fun(mapped(u))
                return value, chain(u, grad)
            jac_u = True
        else:
            def fun_u(u):
                return fun(mapped(u))
            jac_u = None if jac is None else (lambda u: chain(u, jac(mapped(u))))
        if hess is None:
            return fun_u, jac_u, None
        if vectorized:
            raise ValueError("bounds with hess and vectorized=True are not supported; pass "
                             "vectorized=False.")

        def hess_u(u):
            x, d1, d2 = self.at_point(u, kept)
            x = x.copy()
            grad = grads.pop(u.tobytes(), None)
            if grad is None:
                grad = np.asarray(fun(x)[1] if jac is True else jac(x), dtype=np.float64)
            H = np.asarray(hess(x), dtype=np.float64)
            return d1[:, None] * H * d1[None, :] + np.diag(d2 * grad)
        return fun_u, jac_u, hess_u
