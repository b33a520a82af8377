"""Test functions shared by tests and benchmarks (private): the paper's Figure 1
problem, Griewank's function, bounded problems and the exploration landscapes.

``f(x) = -sinc(x - 1)`` with the normalised sinc: global minimum at 1, local
minima at -1.46 and -3.48 (the one Newton's method from -3.2 stops in). It is
the reading of the paper's "sinc" that has the minima its caption states.
``examples/plot_sinc.py`` writes it out for its readers.
"""

import numpy as np


def sinc(x):
    """``f(x) = -sinc(x_0 - 1)`` for ``x`` of shape ``(1,)``."""
    return float(-np.sinc(x[0] - 1.0))


def sinc_grad(x):
    """Its gradient, shape ``(1,)`` (its Taylor series within 1e-4 of the minimum,
    where the closed form cancels)."""
    u = np.pi * (x[0] - 1.0)
    if abs(u) < 1e-4:
        return np.array([np.pi * u / 3.0])
    return np.array([-np.pi * (u * np.cos(u) - np.sin(u)) / u**2])


def sinc_hess(x):
    """Its Hessian, shape ``(1, 1)`` (its Taylor series near the minimum)."""
    u = np.pi * (x[0] - 1.0)
    if abs(u) < 1e-3:
        return np.array([[np.pi**2 * (1.0 / 3.0 - u**2 / 10.0)]])
    return np.array([[-np.pi**2 * (-(u**2) * np.sin(u) - 2 * u * np.cos(u) + 2 * np.sin(u)) / u**3]])


def griewank(x):
    """Griewank's function, ``1 + x^T x / 4000 - prod_i cos(x_i / sqrt(i))``: a bowl
    whose cosine product shows only near its global minimum, 0 at the origin."""
    i = np.sqrt(np.arange(1, len(x) + 1))
    return float(1.0 + np.sum(x**2) / 4000.0 - np.prod(np.cos(x / i)))


def griewank_grad(x):
    """Its gradient, shape ``(n,)``: each cosine's derivative times the product of
    the other cosines, from the products before and after it (no division by a
    cosine that may be 0)."""
    i = np.sqrt(np.arange(1, len(x) + 1))
    c = np.cos(x / i)
    before = np.cumprod(np.r_[1.0, c[:-1]])
    after = np.cumprod(np.r_[1.0, c[:0:-1]])[::-1]
    return x / 2000.0 + before * after * np.sin(x / i) / i


def _quadratic(A, c):
    """``f(x) = (x - c)^T A (x - c) / 2`` with its gradient and Hessian."""
    return (lambda x: float(0.5 * (x - c) @ A @ (x - c)), lambda x: A @ (x - c), lambda x: A)


def _beale():
    def f(x):
        a, b, c = (k - x[0] + x[0] * x[1] ** p for k, p in ((1.5, 1), (2.25, 2), (2.625, 3)))
        return float(a * a + b * b + c * c)

    def grad(x):
        terms = [(k - x[0] + x[0] * x[1] ** p, p) for k, p in ((1.5, 1), (2.25, 2), (2.625, 3))]
        return np.array([sum(2 * t * (x[1] ** p - 1) for t, p in terms),
                         sum(2 * t * p * x[0] * x[1] ** (p - 1) for t, p in terms)])

    def hess(x):
        h = 1e-6
        H = np.array([(grad(x + h * e) - grad(x - h * e)) / (2 * h) for e in np.eye(2)])
        return 0.5 * (H + H.T)
    return f, grad, hess


def _smooth_faces(n=20):
    """A smooth convex function of ``n`` coordinates whose box minimum has many
    coordinates on a bound: soft absolute values around centres in ``[-3, 3]``, a
    chain coupling and a quartic term."""
    c = np.linspace(-3.0, 3.0, n)
    chain = np.diff(np.eye(n), axis=0)

    def f(x):
        return float(np.sum(np.logaddexp(0, x - c) + np.logaddexp(0, c - x))
                     + 0.1 * np.sum(np.diff(x) ** 2) + 0.05 * np.sum(x**4))

    def grad(x):
        s = 1.0 / (1.0 + np.exp(c - x))
        return 2.0 * s - 1.0 + 0.2 * chain.T @ (chain @ x) + 0.2 * x**3

    def hess(x):
        s = 1.0 / (1.0 + np.exp(c - x))
        return np.diag(2.0 * s * (1.0 - s) + 0.6 * x**2) + 0.2 * chain.T @ chain
    return f, grad, hess


def bounded_problems():
    """Box-constrained problems in 2 to 20 dimensions, ``name -> (f, grad, hess,
    bounds, x0)``, with their minimum inside the box, on a face, on several faces
    and in a corner (``tests/test_optimize_bounds.py``,
    ``benchmarks/bench_minimize.py --bounds``)."""
    from scipy.optimize import rosen, rosen_der, rosen_hess

    rng = np.random.RandomState(0)
    Q = np.linalg.qr(rng.standard_normal((10, 10)))[0]
    A = rng.standard_normal((30, 8))
    b = A @ np.array([1.0, -0.5, 0.0, 2.0, -1.0, 0.3, 0.0, -0.2]) + 0.1 * rng.standard_normal(30)
    W = np.array([[2.0, 0.3, 0.0], [0.3, 1.0, 0.2], [0.0, 0.2, 3.0]])
    near = np.array([0.01, 0.5, 0.995])  # inside [0, 1], within the bounds' margins
    return {
        "rosenbrock-5 inside": (rosen, rosen_der, rosen_hess, [(0, 2)] * 5,
                                np.array([1.3, 0.7, 0.8, 1.9, 1.2])),
        "rosenbrock-2 face": (rosen, rosen_der, rosen_hess, [(-1.5, 0.5), (-1, 2)],
                              np.array([-1.2, 1.0])),
        "quadratic-10 faces": (*_quadratic((Q * np.logspace(0, 3, 10)) @ Q.T,
                                           np.linspace(-2, 2, 10)), [(-1, 1)] * 10, np.full(10, 0.3)),
        "quadratic-2 corner": (*_quadratic(np.array([[2.0, 0.5], [0.5, 1.0]]), np.array([3.0, 3.0])),
                               [(0, 1), (0, 1)], np.array([0.2, 0.6])),
        "smooth-20 faces": (*_smooth_faces(), [(-1, 1.5)] * 20, np.zeros(20)),
        "beale-2 face": (*_beale(), [(0, 2), (-1, 1)], np.array([1.0, 0.0])),
        "least-squares-8 nonnegative": (*_quadratic(A.T @ A, np.linalg.lstsq(A, b, rcond=None)[0]),
                                        [(0, None)] * 8, np.ones(8)),
        "quartic-3 near bounds": (
            lambda x: float(0.5 * (x - near) @ W @ (x - near) + 0.1 * np.sum((x - near) ** 4)),
            lambda x: W @ (x - near) + 0.4 * (x - near) ** 3,
            lambda x: W + np.diag(1.2 * (x - near) ** 2), [(0, 1)] * 3, np.full(3, 0.5)),
    }


def _rotation(n, seed):
    """A random orthogonal ``n x n`` matrix (the QR of a seeded Gaussian one)."""
    q, r = np.linalg.qr(np.random.RandomState(seed).standard_normal((n, n)))
    return q * np.sign(np.diag(r))


class Landscape:
    """A rotated separable function with one global basin and a start in another:
    ``f(x) = sum_i phi(y_i)``, ``y = R x`` (``R`` a seeded random rotation, so that
    neither the coordinates nor a diagonal covariance line up with the basins).

    ``phi`` and its two derivatives are vectorised scalar functions; ``start`` is
    ``R^T`` of ``y_start`` in every coordinate (a non-global basin), and
    ``solved(x)`` whether every ``y_i`` lies in the global basin, ``low < y_i <
    high``. Exploration problems of ``benchmarks/bench_minimize.py --explore`` and
    ``tests/test_optimize_explore.py``.
    """

    def __init__(self, n, phi, dphi, d2phi, y_start, low, high, seed=0):
        self.n, self.phi, self.dphi, self.d2phi = n, phi, dphi, d2phi
        self.R = _rotation(n, seed)
        self.start = self.R.T @ np.full(n, float(y_start))
        self.low, self.high = low, high

    def f(self, x):
        return float(np.sum(self.phi(self.R @ x)))

    def grad(self, x):
        return self.R.T @ self.dphi(self.R @ x)

    def hess(self, x):
        return (self.R.T * self.d2phi(self.R @ x)) @ self.R

    def solved(self, x):
        y = self.R @ x
        return bool(np.all((y > self.low) & (y < self.high)))


def tilted_wells(n, depth=1.5, tilt=0.5, seed=0):
    """``phi(y) = depth (y^2 - 1)^2 + tilt y``: a shallow well at ``y = 0.96``
    (the start; 2^n - 1 local minima in all), the global one at ``y = -1.04``,
    and a ridge 1.0 above the shallow well between them in each coordinate.
    Under ``q`` of standard deviation ``s`` the smoothing ``depth (y^4 + (6 s^2 -
    2) y^2) + tilt y + const`` has one well for ``s^2 >= 1/3``."""
    roots = np.sort(np.roots([4 * depth, 0.0, -4 * depth, tilt]).real)
    return Landscape(n, lambda y: depth * (y**2 - 1) ** 2 + tilt * y,
                     lambda y: 4 * depth * y * (y**2 - 1) + tilt,
                     lambda y: 4 * depth * (3 * y**2 - 1), roots[-1], -np.inf, roots[1], seed)


def ripple(n, amplitude=1.0, width=2.0, offset=3.0, seed=0):
    """``phi(y) = y^2 / (2 width^2) + amplitude (1 - cos(2 pi y))``: a wide bowl under
    ripples of period 1, the start in the ripple ``offset`` periods out, the
    global basin ``|y| < 1/2``. The ripples' local minima lie about ``2 amplitude``
    below their ridges; under ``q`` of standard deviation ``s`` they are damped
    by ``exp(-2 pi^2 s^2)`` (``1e-4`` at ``s = 0.7``)."""
    w = 2 * np.pi
    return Landscape(n, lambda y: 0.5 * y**2 / width**2 + amplitude * (1 - np.cos(w * y)),
                     lambda y: y / width**2 + amplitude * w * np.sin(w * y),
                     lambda y: 1 / width**2 + amplitude * w**2 * np.cos(w * y),
                     offset, -0.5, 0.5, seed)


def rastrigin_type(n, amplitude=10.0, offset=1.0, seed=0):
    """Rastrigin's ``phi(y) = y^2 + amplitude (1 - cos(2 pi y))`` (``amplitude =
    10``), the start in the basin ``offset`` from the global one, ``|y| < 1/2``."""
    w = 2 * np.pi
    return Landscape(n, lambda y: y**2 + amplitude * (1 - np.cos(w * y)),
                     lambda y: 2 * y + amplitude * w * np.sin(w * y),
                     lambda y: 2 + amplitude * w**2 * np.cos(w * y), offset, -0.5, 0.5, seed)
