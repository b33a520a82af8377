"""The paper's Figure 1 test function, shared by tests and benchmarks (private).

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
