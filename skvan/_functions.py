"""Test functions shared by tests and benchmarks (private): the paper's Figure 1
problem and Griewank's function.

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
    """Its gradient, shape ``(1,)``."""
    u = np.pi * (x[0] - 1.0)
    return np.array([-np.pi * (u * np.cos(u) - np.sin(u)) / u**2])


def sinc_hess(x):
    """Its Hessian, shape ``(1, 1)``."""
    u = np.pi * (x[0] - 1.0)
    return np.array([[-np.pi**2 * (-(u**2) * np.sin(u) - 2 * u * np.cos(u) + 2 * np.sin(u)) / u**3]])


def griewank(x):
    """Griewank's function, ``1 + x^T x / 4000 - prod_i cos(x_i / sqrt(i))``: a bowl
    whose cosine product shows only near its global minimum, 0 at the origin."""
    i = np.sqrt(np.arange(1, len(x) + 1))
    return float(1.0 + np.sum(x**2) / 4000.0 - np.prod(np.cos(x / i)))


def griewank_grad(x):
    """Its gradient, shape ``(n,)``."""
    i = np.sqrt(np.arange(1, len(x) + 1))
    c = np.cos(x / i)
    g = np.empty_like(x)
    for k in range(len(x)):
        g[k] = np.prod(np.delete(c, k)) * np.sin(x[k] / i[k]) / i[k]
    return x / 2000.0 + g
