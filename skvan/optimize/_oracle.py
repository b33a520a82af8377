"""The user's function and derivatives, as scipy passes them, made into objectives.

An :class:`Oracle` binds ``args``, builds ``hess`` from ``hessp`` and ``jac`` from
scipy's finite-difference names, and gives two views of ``f``: the one the solver
searches (over ``u`` with bounds, through their change of variables) and the
user's own (over ``x``), where the final point is evaluated and tested.
"""

import numpy as np

from ..objectives import FunctionObjective
from ._first_order import finite_difference_jac

#: scipy's names of finite-difference gradients.
FINITE_DIFFERENCES = ("2-point", "3-point", "cs")


class Oracle:
    """``fun``, ``jac``, ``hess`` (and ``hessp``) with ``args`` bound.

    Parameters
    ----------
    fun, jac, hess, hessp, args
        As :func:`skvan.minimize` takes them (``jac`` may be True or one of
        :data:`FINITE_DIFFERENCES`).
    box : BoxTransform or None
        The bounds' change of variables.
    vectorized : bool
    n_jobs : int or None
    """

    def __init__(self, fun, jac, hess, hessp, args, box, vectorized, n_jobs):
        args = args if isinstance(args, tuple) else (args,)
        bind = (lambda g: g if g is None or not args else (lambda *a: g(*a, *args)))
        self.fun = bind(fun)
        self.fd_jac = None
        if isinstance(jac, str):
            lower, upper = (-np.inf, np.inf) if box is None else (box.lower, box.upper)
            self.fd_jac = finite_difference_jac(self.fun, jac, lower, upper, vectorized)
            jac = self.fd_jac
        else:
            jac = None if jac is False else (jac if jac is True else bind(jac))
        self.jac = jac
        hess, hessp = bind(hess), bind(hessp)
        if hess is None and hessp is not None:
            def hess(x):
                H = np.column_stack([np.asarray(hessp(x, e), dtype=np.float64)
                                     for e in np.eye(len(x))])
                return 0.5 * (H + H.T)
        self.hess = hess
        self.box = box
        self.vectorized = vectorized
        self.n_jobs = n_jobs
        self.order = 0 if jac is None else (2 if hess is not None else 1)

    def searched(self, n):
        """The objective the solver searches: over ``u`` through the bounds' map
        (whose points it names in messages as the user's ``x``), else ``f``."""
        if self.box is None:
            fun, jac, hess = self.fun, self.jac, self.hess
        else:
            fun, jac, hess = self.box.wrap(self.fun, self.jac, self.hess, self.vectorized)
        objective = FunctionObjective(fun, n, jac=jac, hess=hess, vectorized=self.vectorized,
                                      n_jobs=self.n_jobs)
        if self.box is not None:
            objective.to_user = self.box.forward
        return objective

    def user(self, n):
        """``f`` (and ``jac``) over the user's ``x``: where a result is evaluated."""
        return FunctionObjective(self.fun, n, jac=self.jac, vectorized=self.vectorized)

    def finite_difference_calls(self):
        """Evaluations of ``fun`` made by a finite-difference ``jac`` so far."""
        return 0 if self.fd_jac is None else self.fd_jac.calls
