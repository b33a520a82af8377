"""First-order tests of a result, and finite-difference gradients.

A run's mean can stop moving where ``x`` is not a minimiser: ``q`` may narrow
before its mean arrives. ``success`` therefore also needs ``x`` to be a
first-order (KKT) point of the box problem: the projected gradient
``x - clip(x - grad f(x))`` (the gradient itself without bounds), in the max
norm (``optimality``, as scipy's ``trust-constr`` reports it), at most

- ``gtol``, where the user sets it (scipy's absolute meaning), else
- ``RELATIVE * tol * max(|f(x)|, |f(x0) - f(x)|) / max(|x|_inf, sigma0)``: the
  slope left at ``x``, over the scale of ``x``, is a small fraction of what ``f``
  changed on the way there. A gradient that a converged mean leaves at round-off
  of ``tol`` passes with a wide margin; a mean stopped away from the minimiser
  (a slope of the order of the changes made) does not.

With derivatives the gradient at ``x`` is the user's; from values alone it is a
finite difference (central, one-sided at a bound), whose ``2 n`` evaluations are
counted in ``nfev``. The same differences give ``jac="2-point"``, ``"3-point"`` and
``"cs"`` (scipy's finite-difference gradients).
"""

import numpy as np

#: The default first-order tolerance as a multiple of ``tol`` (``python
#: benchmarks/bench_minimize.py --bounds`` prints the ratios reached).
RELATIVE = 1e3

_EPS = np.finfo(np.float64).eps


def steps(x, method, lower, upper):
    """The differencing step along each coordinate and its direction, ``(h,
    sign)``: ``sign`` 0 for a central difference ("3-point" where both sides fit
    in the box), +1 forward, -1 backward; every point lies in ``[lower, upper]``
    (a one-sided "3-point" difference reaches ``2 h`` from ``x``)."""
    three = method == "3-point"
    h = (_EPS ** (1.0 / 3.0) if three else np.sqrt(_EPS)) * np.maximum(np.abs(x), 1.0)
    room_up, room_down = upper - x, x - lower
    central = three & (room_up >= h) & (room_down >= h)
    if three:  # one-sided only where one side is short: the roomier one
        forward = room_up >= room_down
    else:  # forward where it fits (scipy's choice), else backward, else the roomier
        forward = (room_up >= h) | ((room_down < h) & (room_up >= room_down))
    sign = np.where(central, 0.0, np.where(forward, 1.0, -1.0))
    room = np.where(forward, room_up, room_down) / (2.0 if three else 1.0)
    return np.where(central, h, np.minimum(h, room)), sign


def difference_points(x, method, lower, upper):
    """The points a finite-difference gradient of ``f`` at ``x`` needs beside ``x``
    (one per coordinate, then a second one for central and one-sided "3-point"
    differences), and how to combine their values."""
    h, sign = steps(x, method, lower, upper)
    E = np.eye(x.shape[0]) * h
    first = x + E * np.where(sign == 0, 1.0, sign)[:, None]
    twice = method == "3-point"
    second = np.where((sign == 0)[:, None], x - E, x + 2.0 * E * sign[:, None])
    return (np.vstack([first, second]) if twice else first), (h, sign, twice)


def combine(f0, values, parts):
    """The gradient from ``f0 = f(x)`` and the values at :func:`difference_points`."""
    h, sign, twice = parts
    n = h.shape[0]
    first = values[:n]
    if not twice:
        return sign * (first - f0) / h
    second = values[n:]
    one_sided = sign * (-3.0 * f0 + 4.0 * first - second) / (2.0 * h)
    return np.where(sign == 0, (first - second) / (2.0 * h), one_sided)


def fd_gradient(values, x, f0, method="3-point", lower=-np.inf, upper=np.inf):
    """The gradient of ``f`` at ``x`` from ``values(points) -> (k,)`` (``f0 = f(x)``)."""
    points, parts = difference_points(x, method, lower, upper)
    return combine(f0, values(points), parts)


def complex_step(fun, x):
    """``jac="cs"``: ``Im f(x + i h e_j) / h`` with ``h = 1e-20`` (exact to round-off
    for an analytic ``f`` that accepts complex arrays)."""
    h = 1e-20
    g = np.empty(x.shape[0])
    for j in range(x.shape[0]):
        z = x.astype(np.complex128)
        z[j] += 1j * h
        g[j] = np.imag(fun(z)) / h
    return g


def finite_difference_jac(fun, method, lower, upper, vectorized):
    """A ``jac`` callable for scipy's ``"2-point"``/``"3-point"``/``"cs"`` (of one
    point, or of the rows of a batch with ``vectorized``), its evaluations of
    ``fun`` counted in its ``calls`` attribute."""

    def jac(x):
        X = np.atleast_2d(np.asarray(x, dtype=np.float64))
        if method == "cs":
            jac.calls += X.size
            G = np.array([complex_step(fun, row) for row in X])
            return G if np.ndim(x) == 2 else G[0]
        plans = [difference_points(row, method, lower, upper) for row in X]
        points = np.vstack([np.vstack([row[None], pts]) for row, (pts, _) in zip(X, plans)])
        jac.calls += len(points)
        values = (np.asarray(fun(points), dtype=np.float64) if vectorized
                  else np.array([float(fun(p)) for p in points]))
        G, start = np.empty_like(X), 0
        for i, (pts, parts) in enumerate(plans):
            v = values[start:start + len(pts) + 1]
            G[i], start = combine(v[0], v[1:], parts), start + len(pts) + 1
        return G if np.ndim(x) == 2 else G[0]

    jac.calls = 0
    return jac


def optimality(x, gradient, lower=-np.inf, upper=np.inf):
    """``|x - clip(x - gradient, lower, upper)|_inf``: 0 exactly at a first-order
    point of the box problem."""
    return float(np.max(np.abs(x - np.clip(x - gradient, lower, upper)))) if x.size else 0.0


def tolerance(gtol, tol, f_x, f_start, x, scale):
    """The first-order tolerance (the module's docstring): ``gtol``, or relative to
    what ``f`` changed between ``f_start`` and ``f_x`` over the scale of ``x``."""
    if gtol is not None:
        return float(gtol)
    change = max(abs(f_x), abs(f_start - f_x)) if np.isfinite(f_start) else abs(f_x)
    size = max(float(np.max(np.abs(x))) if x.size else 0.0, scale)
    return RELATIVE * (1e-6 if tol is None else tol) * change / size
