"""What every VAN linear model shares: parameters, their validation, the calls
into the shared solver, and the Gaussian over ``[coef, intercept]``.

No maths here beyond bookkeeping: objectives live in :mod:`skvan.objectives`,
expectations in :mod:`skvan.expectations`, the loop and its parts in
:mod:`skvan.van`.
"""

from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator

from .._compat import Interval, StrOptions
from .._data import as_design, issparse
from ..expectations import make_expectation
from ..van import (
    FullStep,
    GeometricSchedule,
    MeanContraction,
    Minibatches,
    VANSolver,
    auto_covariance,
    family_from_parts,
    make_family,
    make_gram_family,
    unit_predictor_precision,
    warn_unconverged,
)

#: Covariance representations kept as ``P = diag(lam) + X^T diag(d) X``.
GRAM = ("dual", "operator")

#: How every estimator validates ``X``: float64 or float32, dense or sparse
#: (CSR or CSC; other sparse formats are converted to CSR).
CHECK_X = dict(dtype=[np.float64, np.float32], accept_sparse=["csr", "csc"])

#: beta_growth="auto" for VO on the full data: mean steps of 99% of a Newton step
#: (linear convergence at rate ~0.01, after the Newton-like first phase);
#: `python benchmarks/bench_growth.py` (benchmarks/RESULTS.md) compares 10 to 1000.
AUTO_GROWTH_FULL_BATCH = 100.0


class VANLinearModel(BaseEstimator):
    """Base class: shared parameters and the calls into :class:`~skvan.van.VANSolver`.

    Subclasses build the objective, call :meth:`_solve` (a fit) or
    :meth:`_stream_step` (one streaming step) and set their attributes with
    :meth:`_unpack`; they may set ``_auto_growth``, the ``beta_growth="auto"`` of
    full-batch VO.
    """

    _auto_growth = AUTO_GROWTH_FULL_BATCH

    _parameter_constraints = {
        "beta": [Interval(Real, 0, None, closed="neither")],
        "beta_growth": [Interval(Real, 1, None, closed="left"), StrOptions({"auto"})],
        "covariance": [StrOptions({"auto", "full", "diag", "dual", "operator"})],
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

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    def _check_solver_params(self):
        """Checks across parameters (estimators without ``objective`` stream VO)."""
        if getattr(self, "objective", "vo") == "vi" and self.beta > 1:
            raise ValueError(
                f"With objective='vi' beta is a damping weight and must be in (0, 1]; "
                f"got beta={self.beta!r}."
            )

    def _design(self, X):
        """``X`` with a column of ones appended when ``fit_intercept``, as float64
        (CSR if sparse)."""
        return as_design(X, self.fit_intercept)

    def _resolve_covariance(self, X, stream=False):
        """Set ``covariance_``: ``covariance``, or what "auto" picks for ``X``
        (:func:`~skvan.van.auto_covariance`); the Gram forms need all the rows at once."""
        objective = getattr(self, "objective", "vo")
        n_samples, n_params = X.shape[0], X.shape[1] + int(self.fit_intercept)
        if self.covariance == "auto":
            nnz = X.nnz + n_samples * int(self.fit_intercept) if issparse(X) else None
            self.covariance_ = auto_covariance(None if stream else n_samples, n_params,
                                               objective, stream, nnz)
        elif stream and self.covariance in GRAM:
            raise ValueError(
                f"covariance={self.covariance!r} writes the precision through the training "
                "rows, which a stream does not keep; use covariance='full', 'diag' or 'auto' "
                "with partial_fit."
            )
        elif self.covariance == "operator" and objective == "vi":
            raise ValueError(
                "covariance='operator' supports objective='vo' only (VI needs log det P); "
                "use covariance='dual', 'full', 'diag' or 'auto'."
            )
        else:
            self.covariance_ = self.covariance
        return self.covariance_

    def _check_streamable(self):
        """A Gram form (``covariance_`` "dual" or "operator") is written through the
        training rows and cannot take new ones."""
        if self.covariance_ in GRAM:
            raise ValueError(
                f"This estimator was fitted with covariance_={self.covariance_!r}, whose "
                "precision is written through the training rows; partial_fit cannot add "
                "others. Fit the stream from the start with partial_fit, or refit."
            )

    def _initial_family(self, f, mean=None):
        """The starting ``q = N(mean, precision^-1)`` for a linear model objective
        ``f``: mean 0 (or ``mean``) and unit predictor variance on average
        (:func:`~skvan.van.unit_predictor_precision`), in the form ``covariance_``
        names. Unpenalised coordinates are the Gram forms' free ones."""
        if mean is None:
            mean = np.zeros(f.n_params)
        lam = unit_predictor_precision(f.X, f.sample_weight, "diag")
        return family_from_parts(self.covariance_, mean, lam, np.zeros(f.X.shape[0]), f.X,
                                 self._free(f))

    @staticmethod
    def _free(f):
        """The unpenalised coordinates of ``f`` (the intercept)."""
        return np.broadcast_to(getattr(f.penalty, "strength", 0.0) == 0, (f.n_params,))

    def _prior_family(self, n_params, variance):
        """``N(0, variance I)``: where a stream starts."""
        precision = np.full(n_params, 1.0 / variance)
        return make_family(self.covariance_, np.zeros(n_params),
                           np.diag(precision) if self.covariance_ == "full" else precision)

    def _stochastic(self, n_samples):
        """Whether a fit on ``n_samples`` rows sees minibatches (None: not rows)."""
        return self.batch_size is not None and n_samples is not None and self.batch_size < n_samples

    def _schedule(self, n_samples, objective):
        """``beta_t = beta * g^t``; ``beta_growth="auto"`` is geometric growth for VO
        on the full data and constant otherwise (minibatches need the running
        average; under VI ``beta`` is a damping weight)."""
        growth = self.beta_growth
        if growth == "auto":
            constant = self._stochastic(n_samples) or objective == "vi"
            growth = 1.0 if constant else self._auto_growth
        return GeometricSchedule(self.beta, growth)

    def _solve(self, f, family, random_state, objective=None, step=None, stop=None,
               schedule=None):
        """Fit ``family`` to ``f`` with the shared solver (the estimator's schedule,
        batches and tolerance unless given); warn if the full-batch run did not
        converge."""
        objective = self.objective if objective is None else objective
        if schedule is None:
            schedule = self._schedule(getattr(f, "n_samples", None), objective)
        solver = VANSolver(
            f, make_expectation(self.expectation, self.n_mc_samples), family,
            objective=objective,
            schedule=schedule,
            hessian=self.hessian,
            step=step,
            stop=MeanContraction(self.tol) if stop is None else stop,
            batches=None if self.batch_size is None else Minibatches(self.batch_size),
            max_iter=self.max_iter,
            random_state=random_state,
            verbose=self.verbose,
        )
        result = solver.solve()
        if not result.stochastic:
            warn_unconverged(result, self.tol, self._advice(schedule))
        return result

    def _advice(self, schedule):
        """What to change when a fit ends at ``max_iter``, for the current settings."""
        tips = ["Increase max_iter"]
        if self.covariance_ == "diag":
            tips.append("use covariance='full' (the diagonal family zig-zags on "
                        "correlated features)")
        if schedule.growth == 1.0 and (getattr(self, "objective", "vo") == "vo" or schedule.beta < 1):
            tips.append("use a growing schedule (beta_growth > 1)")
        if self.expectation == "mc":
            tips.append("use deterministic expectations or a larger n_mc_samples (Monte "
                        "Carlo steps stay at the noise level)")
        return "; or ".join(tips) + "."

    def _stream_step(self, f, family, random_state):
        """One streaming VAN step on ``f`` (a batch's objective), in place on
        ``family``: ``P <- P + beta E[C]``, ``mu <- mu - beta P^-1 E[grad f]``."""
        VANSolver(
            f, make_expectation(self.expectation, self.n_mc_samples), family,
            objective="vo", schedule=GeometricSchedule(self.beta), hessian=self.hessian,
            step=FullStep(), max_iter=1, random_state=random_state,
        ).solve()

    def _means(self):
        """The fitted means over ``[coef, intercept]``, one row per model."""
        coef = np.atleast_2d(self.coef_)
        if not self.fit_intercept:
            return coef
        return np.column_stack([coef, np.atleast_1d(self.intercept_)])

    def _families(self):
        """The fitted Gaussians over ``[coef, intercept]``, one per row of ``coef_``."""
        kind = self.covariance_
        precisions = self._precision_rows()
        if kind in GRAM:
            return [make_gram_family(kind, m, P) for m, P in zip(self._means(), precisions)]
        return [make_family(kind, m, P) for m, P in zip(self._means(), precisions)]

    def _precision_rows(self):
        P = self.precision_
        if self.covariance_ in GRAM:
            return P if isinstance(P, list) else [P]
        expected_ndim = 2 if self.covariance_ == "full" else 1
        return P[None] if P.ndim == expected_ndim else P

    def _unpack(self, families, column_scale=None, design=None):
        """Set ``coef_``, ``intercept_``, ``precision_``, ``sigma_`` from the families.

        With ``column_scale`` the families are over ``theta' = column_scale * theta``
        (:meth:`~skvan.objectives.LinearModelObjective.reparametrised`) and are
        mapped back: ``mean / s``, ``precision * s s^T``, ``covariance / (s s^T)``;
        the Gram forms' precision is mapped to ``design`` (the unscaled design).
        Always 2-D ``coef_`` (one row per family); subclasses reshape as they need.
        ``sigma_`` is the covariance matrix for ``covariance_="full"`` and the
        marginal variances otherwise.
        """
        n_features = self.n_features_in_
        s = np.ones(families[0].n_params) if column_scale is None else column_scale
        kind = self.covariance_
        means = np.array([f.mean / s for f in families])
        self.coef_ = means[:, :n_features].copy()
        self.intercept_ = means[:, n_features].copy() if self.fit_intercept else np.zeros(len(families))
        if kind in GRAM:
            same = np.all(s == 1.0)
            self.precision_ = [f.precision if same else f.precision.in_coordinates(s, design)
                               for f in families]
            self.sigma_ = np.array([(f.marginal_variance() / s**2)[:n_features] for f in families])
            return
        outer = np.outer(s, s) if kind == "full" else s**2
        self.precision_ = np.array([f.precision * outer for f in families])
        if kind == "full":
            self.sigma_ = np.array([(f.sigma / outer)[:n_features, :n_features] for f in families])
        else:
            self.sigma_ = np.array([(f.sigma / outer)[:n_features] for f in families])
