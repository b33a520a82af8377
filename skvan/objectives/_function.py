"""A user's function (and optional derivatives) as an objective, with call counts."""

import numpy as np
from joblib import Parallel, delayed

from ._base import Objective


class FunctionObjective(Objective):
    """Wrap ``fun`` (and ``jac``, ``hess``) with scipy's conventions and count calls.

    Parameters
    ----------
    fun : callable
        ``fun(x) -> float``; with ``jac=True``, ``fun(x) -> (float, ndarray)``. With
        ``vectorized=True`` it receives an ``(n_points, n_params)`` array and returns
        ``(n_points,)`` values (and ``(n_points, n_params)`` gradients if ``jac=True``).
    n_params : int
    jac : callable, True or None
        Gradient ``jac(x) -> (n_params,)``, True if ``fun`` returns it, or None.
    hess : callable or None
        Hessian ``hess(x) -> (n_params, n_params)``; needs ``jac``.
    vectorized : bool, default=False
        Whether ``fun`` (and ``jac``) take a batch of points at once.
    n_jobs : int or None, default=None
        Evaluate the points of a batch in parallel with joblib (ignored when
        ``vectorized``); None is one process.

    Attributes
    ----------
    nfev, njev, nhev : int
        Points at which ``fun``, the gradient and the Hessian were evaluated.
    n_nonfinite : int
        Points at which ``fun`` returned NaN or inf (values-only oracle: the
        estimators rank them last or drop them; with derivatives such a value is
        an error naming the point).
    order : {0, 1, 2}
        The highest derivative available.
    to_user : callable or None
        Maps a point of this objective to the point the user's function saw
        (a change of variables for bounds), for error messages; None: the same.
    """

    def __init__(self, fun, n_params, jac=None, hess=None, vectorized=False, n_jobs=None):
        if hess is not None and jac is None:
            raise ValueError("hess requires jac: pass the gradient too (jac=callable or jac=True).")
        self.fun = fun
        self.jac = jac
        self.hess = hess
        self.n_params = n_params
        self.vectorized = vectorized
        self.n_jobs = n_jobs
        self.order = 2 if hess is not None else (1 if jac is not None else 0)
        self.nfev = self.njev = self.nhev = self.n_nonfinite = 0
        self.to_user = None

    # -- batches ------------------------------------------------------------------
    def _map(self, func, thetas):
        """``func`` at each row of ``thetas``, each given its own copy (as scipy's
        optimizers do): a function that writes into its argument must not move
        the draws the estimates are made from."""
        if self.n_jobs is None or self.n_jobs == 1 or len(thetas) < 2:
            return [func(t.copy()) for t in thetas]
        return Parallel(n_jobs=self.n_jobs)(delayed(func)(t.copy()) for t in thetas)

    def values(self, thetas):
        """``f`` at each row of ``thetas``, shape ``(n_points,)``."""
        thetas = np.atleast_2d(thetas)
        if self.jac is True:
            return self.values_gradients(thetas)[0]
        self.nfev += len(thetas)
        if self.vectorized:
            out = _shaped("fun", self.fun(thetas.copy()), (len(thetas),))
        else:
            out = np.array([_scalar("fun", v) for v in self._map(self.fun, thetas)])
        return self._finite("fun", out, thetas)

    def values_gradients(self, thetas):
        """``f`` and ``grad f`` at each row: shapes ``(n,)`` and ``(n, n_params)``."""
        thetas = np.atleast_2d(thetas)
        if self.jac is None:
            raise ValueError("no gradient: pass jac to use first- or second-order expectations.")
        self.nfev += len(thetas)
        self.njev += len(thetas)
        k, n = len(thetas), self.n_params
        if self.jac is True:
            if self.vectorized:
                values, grads = _pair(self.fun(thetas.copy()))
            else:
                pairs = [_pair(p) for p in self._map(self.fun, thetas)]
                values = [p[0] for p in pairs]
                grads = [p[1] for p in pairs]
        else:
            if self.vectorized:
                values, grads = self.fun(thetas.copy()), self.jac(thetas.copy())
            else:
                values = self._map(self.fun, thetas)
                grads = self._map(self.jac, thetas)
        if self.vectorized:
            values = _shaped("fun", values, (k,))
            grads = _shaped("jac", grads, (k, n))
        else:
            values = np.array([_scalar("fun", v) for v in values])
            grads = np.array([_shaped("jac", g, (n,)) for g in grads]).reshape(k, n)
        return self._finite("fun", values, thetas), self._finite("jac", grads, thetas)

    def hessians(self, thetas):
        """``hess f`` at each row, shape ``(n, n_params, n_params)``."""
        thetas = np.atleast_2d(thetas)
        self.nhev += len(thetas)
        n = self.n_params
        H = np.array([_shaped("hess", h, (n, n)) for h in self._map(self.hess, thetas)])
        return self._finite("hess", H.reshape(len(thetas), n, n), thetas)

    # -- pointwise interface ------------------------------------------------------
    def value(self, theta):
        return float(self.values(theta[None])[0])

    def gradient(self, theta):
        return self.values_gradients(theta[None])[1][0]

    def hessian(self, theta):
        return self.hessians(theta[None])[0]

    def _finite(self, name, a, thetas):
        """``a`` (one entry, row or matrix per point of ``thetas``) checked: the
        values of a values-only oracle may be NaN or inf (counted); anything
        else non-finite is a ValueError that names the first such point."""
        finite = np.isfinite(a.reshape(len(thetas), -1)).all(axis=1)
        if finite.all():
            return a
        if name == "fun" and self.order == 0:
            self.n_nonfinite += len(thetas) - int(np.count_nonzero(finite))
            return a
        bad = thetas[np.argmin(finite)]
        x = bad if self.to_user is None else self.to_user(bad)
        raise ValueError(
            f"{name} returned a non-finite value (NaN or inf) at x = "
            f"{np.array2string(np.asarray(x), precision=6, threshold=20)}. With derivatives "
            "every sampled point needs finite values; from values alone (no jac) such "
            "points count as the worst of their batch. Bound the search with bounds=..., or "
            "start with a smaller sigma0."
        )


def _scalar(name, value):
    """``value`` as a float, or a ValueError saying what ``name`` returned instead."""
    a = np.asarray(value)
    if a.size != 1 or not (np.issubdtype(a.dtype, np.number) or a.dtype == bool) \
            or np.iscomplexobj(a):
        raise ValueError(
            f"{name} must return a real scalar, got {type(value).__name__} "
            f"of shape {a.shape} and dtype {a.dtype}."
        )
    return float(a.reshape(()))


def _shaped(name, value, shape, role="return"):
    """``value`` as a float64 array of ``shape``, or a ValueError naming ``name``
    (which must ``role`` it: "return" for a user's callable, "be" for an argument)."""
    try:
        a = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must {role} real numbers of shape {shape}: {exc}") from None
    if a.shape != shape:
        raise ValueError(f"{name} must {role} an array of shape {shape}, got shape {a.shape}.")
    return a


def _pair(out):
    """``(value, gradient)`` as ``fun`` returns it with ``jac=True``."""
    if not isinstance(out, (tuple, list)) or len(out) != 2:
        raise ValueError(
            f"with jac=True, fun must return a pair (value, gradient); got {type(out).__name__}."
        )
    return out
