"""What every VAN linear model shares: parameters, their validation, one call
into the shared solver, and the Gaussian over ``[coef, intercept]``.

No maths here beyond bookkeeping: objectives live in :mod:`skvan.objectives`,
expectations in :mod:`skvan.expectations`, the loop in :mod:`skvan.van`.
"""

from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator

from .._blocks import row_blocks
from .._compat import Interval, StrOptions
from ..expectations import make_expectation
from ..van import VANSolver, make_family

#: beta_growth="auto" for VO on the full data: mean steps of 99% of a Newton step
#: (linear convergence at rate ~0.01, after the Newton-like first phase). Measured
#: with `python benchmarks/bench_growth.py` on breast_cancer (scaled and raw), digits,
#: wine, a separable and a 20,000 x 100 synthetic set, C in {0.1, 1, 100}: against 10,
#: it takes 1-3 fewer iterations everywhere and ends 10-1000x closer to the optimum;
#: 1000 saves at most one more iteration while q collapses 1000x per step.
AUTO_GROWTH_FULL_BATCH = 100.0

_MAX_LOG2_SCALE = 160
#: fit rescales the columns only when their scales differ by more than 2^10
#: (or all are that far from 1): VAN's Newton-like steps do not need it on
#: moderately scaled data, where the start (unit predictor variance) is already
#: matched; it matters when the curvature's diagonal spans many decades (1e-8 to
#: 1e8 features broke the precision's float64 resolution).
_MAX_LOG2_SPREAD = 10


class VANLinearModel(BaseEstimator):
    """Base class: shared parameters and the call into :class:`~skvan.van.VANSolver`.

    Subclasses set ``self`` attributes from :meth:`_solve`'s families, and may
    set ``_auto_growth``, the ``beta_growth="auto"`` of full-batch VO.
    """

    _auto_growth = AUTO_GROWTH_FULL_BATCH

    _parameter_constraints = {
        "beta": [Interval(Real, 0, None, closed="neither")],
        "beta_growth": [Interval(Real, 1, None, closed="left"), StrOptions({"auto"})],
        "covariance": [StrOptions({"full", "diag"})],
        "hessian": [StrOptions({"exact", "gauss_newton"})],
        "expectation": [StrOptions({"exact", "quadrature", "mc"})],
        "n_mc_samples": [Interval(Integral, 1, None, closed="left")],
        "objective": [StrOptions({"vo", "vi"})],
        "batch_size": [Interval(Integral, 1, None, closed="left"), None],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "fit_intercept": ["boolean"],
        "warm_start": ["boolean"],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def _check_solver_params(self):
        if self.objective == "vi" and self.beta > 1:
            raise ValueError(
                f"With objective='vi' beta is a damping weight and must be in (0, 1]; "
                f"got beta={self.beta!r}."
            )

    def _design(self, X):
        """``X`` with a column of ones appended when ``fit_intercept``, as float64."""
        X = np.asarray(X, dtype=np.float64)
        if self.fit_intercept:
            return np.hstack([X, np.ones((X.shape[0], 1))])
        return X

    def _scaled_design(self, X, sample_weight, curvature=0.0):
        """``(X_design / scale, scale)``, ``scale_j`` the square root of the
        weighted mean of ``x_j^2`` plus ``curvature / sum(weights)`` (the penalty's
        own curvature on each coefficient; not on the intercept), rounded to a
        power of two; all ones when the columns are within ``2^10`` of each other
        and of 1. Zero columns keep scale 1.

        ``fit`` works in the coordinates ``theta' = scale * theta``, an exact
        reparametrisation (penalties are rescaled with it, :meth:`_unpack` maps
        back) that equalises the diagonal of the curvature to within a factor 2,
        as Jacobi preconditioning does (powers of two keep it exact). On features
        spanning 1e-8 to 1e8 it keeps the precision's eigenvalues within
        float64's reach (they would otherwise span 1e32).
        """
        Xd = self._design(X)
        top = np.maximum(Xd.max(axis=0, initial=0.0), -Xd.min(axis=0, initial=0.0))
        top[top == 0] = 1.0
        total = float(np.sum(sample_weight))
        if total > 0:
            ridge = np.full(Xd.shape[1], curvature / total)
            if self.fit_intercept:
                ridge[-1] = 0.0
            # Squares of entries beyond 1e+-100 would over/underflow: normalise those.
            safe = bool(np.all((top < 1e100) & (top > 1e-100)))
            norm = np.ones_like(top) if safe else top
            mean_square = np.zeros(Xd.shape[1])
            for rows in row_blocks(*Xd.shape):
                block = Xd[rows] if safe else Xd[rows] / norm
                mean_square += np.einsum("i,ij,ij->j", sample_weight[rows], block, block)
            mean_square /= total
            top = norm
            scale = np.hypot(top * np.sqrt(mean_square), np.sqrt(ridge))  # no over/underflow
        else:
            scale = np.ones(Xd.shape[1])
        scale[~(np.isfinite(scale) & (scale > 0))] = 1.0
        # Powers of two, so that scaling and unscaling are exact; within 2^+-160
        # (about 1e+-48), so that the precision, which under VO grows up to
        # 1e100 times the curvature, stays finite in the original coordinates.
        log2 = np.clip(np.round(np.log2(scale)), -_MAX_LOG2_SCALE, _MAX_LOG2_SCALE)
        if np.ptp(log2) <= _MAX_LOG2_SPREAD and abs(np.mean(log2)) <= _MAX_LOG2_SPREAD:
            return Xd, np.ones_like(scale)  # well scaled: VAN's steps need no help
        scale = np.exp2(log2)
        if np.shares_memory(Xd, X):  # no intercept column: Xd may be the user's array
            return Xd / scale, scale
        Xd /= scale
        return Xd, scale

    def _initial_family(self, X_design, sample_weight, mean=None, precision=None):
        """The starting ``q = N(mean, precision^-1)``.

        By default ``N(0, s^2 I)`` with ``s^2 = sum_i w_i / sum_i w_i ||x_i||^2``: each
        linear predictor then has unit variance on (weighted) average, whatever the
        scale of the features (a unit-width start where the loss lives).
        """
        n_params = X_design.shape[1]
        if mean is None:
            mean = np.zeros(n_params)
        if precision is None:
            total = float(np.sum(sample_weight))
            scale = float(sample_weight @ np.einsum("ij,ij->i", X_design, X_design))
            scale = scale / total if total > 0 else np.nan
            scale = scale if np.isfinite(scale) and scale > 0 else 1.0
            precision = np.full(n_params, scale)
            if self.covariance == "full":
                precision = np.diag(precision)
        return make_family(self.covariance, mean, precision)

    def _beta_growth(self, n_samples, objective):
        """"auto": geometric growth for VO on the full data, constant otherwise
        (minibatches need the running average; under VI beta is a damping weight)."""
        if self.beta_growth != "auto":
            return float(self.beta_growth)
        stochastic = (self.batch_size is not None and n_samples is not None
                      and self.batch_size < n_samples)
        return 1.0 if stochastic or objective == "vi" else self._auto_growth

    def _solve(self, objective, family, random_state, **overrides):
        """Run the shared solver on ``objective`` from ``family``; return its result."""
        kind = overrides.pop("objective_kind", self.objective)
        options = dict(
            beta=self.beta,
            beta_growth=self._beta_growth(getattr(objective, "n_samples", None), kind),
            objective_kind=kind,
            curvature=self.hessian,
            max_iter=self.max_iter,
            tol=self.tol,
            batch_size=self.batch_size,
            random_state=random_state,
            verbose=self.verbose,
        )
        options.update(overrides)
        expectation = make_expectation(self.expectation, self.n_mc_samples)
        return VANSolver(objective, expectation, family, **options).solve()

    def _families(self):
        """The fitted Gaussians over ``[coef, intercept]``, one per row of ``coef_``."""
        coef = np.atleast_2d(self.coef_)
        intercept = np.atleast_1d(self.intercept_)
        families = []
        for k in range(coef.shape[0]):
            mean = np.r_[coef[k], intercept[k]] if self.fit_intercept else coef[k]
            families.append(make_family(self.covariance, mean, self._precision_rows()[k]))
        return families

    def _precision_rows(self):
        P = self.precision_
        expected_ndim = 2 if self.covariance == "full" else 1
        return P[None] if P.ndim == expected_ndim else P

    def _unpack(self, families, scale=None):
        """Set ``coef_``, ``intercept_``, ``precision_``, ``sigma_`` from the families.

        With ``scale`` the families are over ``theta' = scale * theta`` (see
        :meth:`_scaled_design`) and are mapped back: ``mean / scale``,
        ``precision * scale scale^T``, ``covariance / (scale scale^T)``.
        Always 2-D ``coef_`` (one row per family); subclasses reshape as they need.
        """
        n_features = self.n_features_in_
        s = np.ones(families[0].n_params) if scale is None else scale
        outer = np.outer(s, s) if self.covariance == "full" else s**2
        means = np.array([f.mean / s for f in families])
        self.coef_ = means[:, :n_features].copy()
        self.intercept_ = means[:, n_features].copy() if self.fit_intercept else np.zeros(len(families))
        self.precision_ = np.array([f.precision * outer for f in families])
        if self.covariance == "full":
            self.sigma_ = np.array([(f.covariance / outer)[:n_features, :n_features] for f in families])
        else:
            self.sigma_ = np.array([(f.covariance / outer)[:n_features] for f in families])
