"""Base class of the functions VAN minimises."""

from abc import ABC, abstractmethod

import numpy as np


class Objective(ABC):
    """A function ``f(theta)`` of a parameter vector, and its derivatives.

    An objective knows nothing about the Gaussian ``q``: expectation estimators
    (:mod:`skvan.expectations`) turn it into ``E_q[f]``, ``E_q[grad f]`` and an
    expected curvature.

    Subclasses implement :meth:`value`, :meth:`gradient` and :meth:`hessian` at a
    single point. Estimators for special structure (for example linear models,
    see :class:`LinearModelObjective`) may use more efficient routes.
    """

    #: Number of parameters, the length of ``theta``.
    n_params = None

    @abstractmethod
    def value(self, theta):
        """Return ``f(theta)`` as a float."""

    @abstractmethod
    def gradient(self, theta):
        """Return ``grad f(theta)``, shape ``(n_params,)``."""

    @abstractmethod
    def hessian(self, theta):
        """Return ``hess f(theta)``, shape ``(n_params, n_params)``."""

    def hessian_diagonal(self, theta):
        """Return the diagonal of ``hess f(theta)``, shape ``(n_params,)`` (here from
        the whole matrix; a linear model's without forming it)."""
        return np.diag(self.hessian(theta)).copy()

    def value_and_derivatives(self, theta, diagonal=False):
        """Return ``(f(theta), grad f(theta), hess f(theta))`` (the Hessian's diagonal
        with ``diagonal``): here the three methods in turn; an objective over rows
        of data computes them from one pass (a Newton step needs all three at each
        iterate)."""
        curvature = self.hessian_diagonal(theta) if diagonal else self.hessian(theta)
        return float(self.value(theta)), self.gradient(theta), curvature

    def smooth_cache(self):
        """A dict of what is computed from this objective's smooth part alone,
        shared with its copies under another penalty (``with_penalty``), whose
        smooth part is the same: the systems of supports of ``X^T W X``
        (:meth:`support_systems`), the KKT check's right-hand side and scales
        (:mod:`skvan.sparse`), a rows objective's kept Gram columns. A Lasso path
        checks one copy per alpha."""
        return self.__dict__.setdefault("_smooth_cache", {})

    def support_systems(self):
        """A dict of the systems of supports of this objective's ``X^T W X``
        (:func:`skvan.sparse._kkt._support_system`), in :meth:`smooth_cache`."""
        return self.smooth_cache().setdefault("support_systems", {})

    def _share_smooth_cache(self, other):
        """``other`` (this objective under another penalty), sharing
        :meth:`smooth_cache`."""
        other._smooth_cache = self.smooth_cache()
        return other

    def value_scale(self):
        """The size of the terms that cancel in :meth:`value` (comparisons of values
        allow round-off relative to it); 0: none beyond the value itself."""
        return 0.0

    def gauge_expectation(self, family, mean):
        """``E_q[g], E_q[grad g]`` of a gauge term ``g`` that fixes directions in which
        ``f`` is exactly flat by construction (none here: ``(0, 0)``)."""
        return 0.0, 0.0

    def add_gauge(self, C):
        """The curvature ``C`` plus the gauge term's (none here)."""
        return C

    def gauss_newton(self, theta):
        """Return a positive semi-definite curvature at ``theta``.

        The default is the outer product of the gradient, ``g g^T`` (the VAG
        curvature of the paper, eq. Vag_prec). Objectives that are sums over data
        override it with the sum of per-example outer products.
        """
        g = self.gradient(theta)
        return np.outer(g, g)
