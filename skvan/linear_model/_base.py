"""What every VAN linear model shares: parameters, their validation, the calls
into the shared solver, and the Gaussian over ``[coef, intercept]``.

No maths here beyond bookkeeping: objectives live in :mod:`skvan.objectives`,
expectations in :mod:`skvan.expectations`, the loop and its parts in
:mod:`skvan.van`.
"""

import functools
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from .._compat import Interval, StrOptions
from .._data import as_design, column_statistics, issparse
from ..expectations import GaussianPriorTerm, StreamRowMemory, make_expectation
from ..objectives._linear import check_entry_size
from ..van import (
    AveragingSchedule,
    FitSettings,
    FullStep,
    GeometricSchedule,
    IncrementalSchedule,
    MeanContraction,
    VANSolver,
    auto_covariance,
    make_family,
    make_gram_family,
    warn_unconverged,
)
from ..van._gram import _check_budget

#: Covariance representations kept as ``P = diag(lam) + X^T diag(d) X``.
GRAM = ("dual", "operator")

#: How every estimator validates ``X``: float64 or float32, dense or sparse
#: (CSR or CSC; other sparse formats are converted to CSR).
CHECK_X = dict(dtype=[np.float64, np.float32], accept_sparse=["csr", "csc"])

#: beta_growth="auto" for VO on the full data: mean steps of 99% of a Newton step
#: (linear convergence at rate ~0.01, after the Newton-like first phase);
#: ``python benchmarks/bench_growth.py`` compares other growths.
AUTO_GROWTH_FULL_BATCH = 100.0


def check_single_target(estimator, y):
    """A clear error for a two-dimensional ``y`` with more than one column."""
    try:
        shape = np.asarray(y).shape
    except (TypeError, ValueError):
        return  # validate_data will say what is wrong with it
    if len(shape) == 2 and shape[1] > 1:
        name = type(estimator).__name__
        raise ValueError(
            f"{name} fits one target; y has {shape[1]} columns. Fit one model per "
            f"column with sklearn.multioutput.MultiOutputRegressor({name}())."
        )


@functools.lru_cache(maxsize=None)
def _param_names(cls):
    """scikit-learn's ``_get_param_names`` of ``cls``, computed once per class."""
    return tuple(BaseEstimator._get_param_names.__func__(cls))


class VANLinearModel(BaseEstimator):
    """Base class: shared parameters and the calls into :class:`~skvan.van.VANSolver`.

    Subclasses build the objective, call :meth:`_solve` (a fit) or
    :meth:`_stream_step` (one streaming step) and set their attributes with
    :meth:`_unpack`; they may set ``_auto_growth``, the ``beta_growth="auto"`` of
    full-batch VO, ``_constant_for_mc`` and ``_solves_batches``.
    """

    _auto_growth = AUTO_GROWTH_FULL_BATCH

    #: Whether ``beta_growth="auto"`` with Monte Carlo on the full data is the
    #: constant schedule (:class:`~skvan.van.FitSettings`).
    _constant_for_mc = False

    #: Whether a stream of new rows (``stream_size=None``) solves each batch's Bayes
    #: update to ``tol`` (:meth:`_stream_step`), or makes its first step only.
    _solves_batches = True

    _parameter_constraints = {
        "beta": [Interval(Real, 0, None, closed="neither")],
        "beta_growth": [Interval(Real, 1, None, closed="left"), StrOptions({"auto"})],
        "covariance": [StrOptions({"auto", "full", "diag", "dual", "operator"})],
        "hessian": [StrOptions({"exact", "gauss_newton"})],
        "expectation": [StrOptions({"exact", "quadrature", "mc"})],
        "n_mc_samples": [Interval(Integral, 1, None, closed="left")],
        "objective": [StrOptions({"vo", "vi"})],
        "batch_size": [Interval(Integral, 1, None, closed="left"), None],
        "stream_size": [Interval(Integral, 1, None, closed="left"), None],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "fit_intercept": ["boolean"],
        "warm_start": ["boolean"],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    @classmethod
    def _get_param_names(cls):
        """The parameters' names, as scikit-learn's, read off ``__init__``'s signature
        once per class: scikit-learn inspects it at each call, and every fit's
        parameter validation calls ``get_params`` (part 13 of ``python
        benchmarks/bench_passes.py`` times a fit with and without this). A
        private scikit-learn method, overridden, not imported: were scikit-learn to
        stop calling it, this would go unused, not wrong."""
        return list(_param_names(cls))

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

    def _resolve_covariance(self, X, stream=False, n_rows=1, extra_rows=0):
        """Set ``covariance_``: ``covariance``, or what "auto" picks for ``X``
        (:func:`~skvan.van.auto_covariance`, with ``extra_rows`` rows beyond ``X``'s
        in the solver's design); the Gram forms need all the rows at once and one
        linear predictor per row (``n_rows == 1``)."""
        objective = getattr(self, "objective", "vo")
        n_samples = X.shape[0] + extra_rows
        n_params = n_rows * (X.shape[1] + int(self.fit_intercept))
        if n_rows > 1 and self.covariance == "dual":
            raise ValueError(
                f"covariance='dual' keeps one linear predictor per row; the multinomial "
                f"model has {n_rows}. Use covariance='full', 'operator', 'diag' or 'auto'."
            )
        if self.covariance == "auto":
            nnz = X.nnz + n_samples * int(self.fit_intercept) if issparse(X) else None
            self.covariance_ = auto_covariance(None if stream else n_samples, n_params,
                                               objective, stream, nnz, n_rows,
                                               sampled=self.expectation == "mc")
        elif stream and self.covariance in GRAM:
            raise ValueError(
                f"covariance={self.covariance!r} writes the precision through the training "
                "rows, which a stream does not keep; use covariance='full', 'diag' or 'auto' "
                "with partial_fit."
            )
        elif self.covariance == "operator" and objective == "vi":
            raise ValueError(
                "covariance='operator' supports objective='vo' only (VI needs log det P); "
                "use covariance='full', 'diag', 'auto' or, with one linear predictor per "
                "row, 'dual'."
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

    def _settings(self):
        """The fit's :class:`~skvan.van.FitSettings`: the parameters, with
        ``covariance_`` for the form and :attr:`_auto_growth` for what
        ``beta_growth="auto"`` means under full-batch VO."""
        return FitSettings(
            beta=self.beta, beta_growth=self.beta_growth, auto_growth=self._auto_growth,
            covariance=self.covariance_, hessian=self.hessian, expectation=self.expectation,
            n_mc_samples=self.n_mc_samples, objective=getattr(self, "objective", "vo"),
            batch_size=getattr(self, "batch_size", None), max_iter=self.max_iter, tol=self.tol,
            verbose=self.verbose, constant_for_mc=self._constant_for_mc,
        )

    def _initial_family(self, f, mean=None):
        """The starting ``q`` for ``f`` (:meth:`~skvan.van.FitSettings.initial_family`)."""
        return self._settings().initial_family(f, mean)

    def _prior_family(self, n_params, variance):
        """``N(0, variance I)``: where a stream starts."""
        precision = np.full(n_params, 1.0 / variance)
        return make_family(self.covariance_, np.zeros(n_params),
                           np.diag(precision) if self.covariance_ == "full" else precision)

    def _solve(self, f, family, random_state, **options):
        """Fit ``family`` to ``f`` with the shared solver
        (:meth:`~skvan.van.FitSettings.solve`), warning with :meth:`_advice`."""
        return self._settings().solve(f, family, random_state, advice=self._advice, **options)

    def _advice(self, schedule):
        """What to change when a fit ends at ``max_iter``
        (:meth:`~skvan.van.FitSettings.advice`)."""
        return self._settings().advice(schedule)

    def _stream_step(self, f, family, random_state, n_steps, objective="vo"):
        """One streaming update on ``f``, a batch's data term with its share of the
        penalty, in place on ``family`` (``n_steps`` updates already made).

        ``stream_size=None``: every row is a new observation and the update is
        sequential Bayes. With deterministic expectations whose curvature
        differentiates their value (not the multinomial model's cubature) and the
        exact expected Hessian it is the batch's Bayes update within the Gaussian
        family, VI on ``f`` with the running ``q`` as its prior
        (:class:`~skvan.expectations.GaussianPriorTerm`), solved to ``tol`` in at
        most ``max_iter`` iterations; its first iteration is (for ``beta <= 1``,
        where the safeguard accepts it) the one-step update ``P <- P + beta
        E[C]``, ``mu <- mu - beta P^-1 E[grad f]``, which is all
        that is made otherwise (sampled expectations have no fixed point to
        solve for, and the Gauss-Newton curvature's or the cubature's is not a
        stationary point of the objective VI's safeguard checks) and where
        :attr:`_solves_batches` is False (sVAN-Active's step).
        ``stream_size=N``: the batch stands for a data set of ``N`` rows
        (``f`` multiplied by ``N / n_batch``) and the step is sVAN's under
        ``objective``, so that passes over the ``N`` rows converge to the
        full-batch fit: variance-reduced where a fit with minibatches would be
        (:meth:`~skvan.van.FitSettings.can_remember_rows`), the rows' integrals
        remembered by their content across calls
        (:class:`~skvan.expectations.StreamRowMemory`, kept in ``_row_memory``
        until the stream restarts or a fit) on
        :class:`~skvan.van.IncrementalSchedule` with
        :class:`~skvan.van.DampedNewtonStep`; otherwise
        :class:`~skvan.van.AveragingSchedule`'s full steps.
        """
        # A stream cannot rescale its columns (they come a batch at a time).
        check_entry_size(column_statistics(f.X)[0], f.X.shape[0])
        size = getattr(self, "stream_size", None)
        expectation = make_expectation(self.expectation, self.n_mc_samples, f)
        if (size is None and self._solves_batches and expectation.deterministic
                and expectation.differentiates_value and self.hessian == "exact"):
            prior = GaussianPriorTerm(expectation, family.mean.copy(), family.precision.copy())
            result = VANSolver(
                f, prior, family, objective="vi", schedule=GeometricSchedule(self.beta),
                hessian=self.hessian, stop=MeanContraction(self.tol), max_iter=self.max_iter,
                random_state=random_state, verbose=self._step_verbose(),
            ).solve()
            warn_unconverged(result, self.tol, "Increase max_iter.")
            return
        step = FullStep()
        if size is None:
            schedule, objective = GeometricSchedule(self.beta), "vo"
        else:
            per_pass = max(1, round(size / f.n_samples))
            f = f.multiplied(size / f.n_samples)
            settings = self._settings()
            memory = getattr(self, "_row_memory", None)
            if memory is not None and memory.stream_size != size:
                memory = None  # stream_size changed: another stream
            if memory is None and settings.can_remember_rows(expectation):
                memory = self._row_memory = StreamRowMemory(expectation, size)
            if memory is not None:
                # (the step fit's memory takes: FitSettings.solver_parts)
                expectation, schedule, step = settings.solver_parts(
                    f, objective, memory,
                    IncrementalSchedule(self.beta, settings.auto_growth, per_pass,
                                        start=n_steps, complete_at=memory.complete_at_))
            else:
                schedule = AveragingSchedule(self.beta, start=n_steps)
        VANSolver(
            f, expectation, family,
            objective=objective, schedule=schedule, hessian=self.hessian,
            step=step, max_iter=1, random_state=random_state,
            verbose=self._step_verbose(),
        ).solve()

    def _step_verbose(self):
        """The solver's ``verbose`` in a streaming step: the estimator's."""
        return self.verbose

    def _mean(self):
        """The fitted mean over ``[coef, intercept]`` (row by row of ``coef_``), flat."""
        coef = np.atleast_2d(self.coef_)
        if self.fit_intercept:
            coef = np.column_stack([coef, np.atleast_1d(self.intercept_)])
        return coef.ravel()

    def _family(self):
        """The fitted Gaussian over ``[coef, intercept]`` (all rows of ``coef_``)."""
        mean = self._mean()
        if self.covariance_ in GRAM:
            return make_gram_family(self.covariance_, mean, self.precision_)
        shape = (mean.size,) if self.covariance_ == "diag" else (mean.size, mean.size)
        return make_family(self.covariance_, mean, np.reshape(self.precision_, shape))

    def _coefficients(self, mean, column_scale):
        """``(coef, intercept)`` of shapes ``(R, p)`` and ``(R,)`` from a mean over
        ``column_scale * [coef, intercept]`` (rows one after the other; the
        intercepts of several rows centred, :meth:`_unpack`)."""
        p = self.n_features_in_
        W = (mean / column_scale).reshape(-1, p + int(self.fit_intercept))
        if W.shape[0] > 1 and self.fit_intercept:
            W[:, -1] -= W[:, -1].mean()
        return W[:, :p].copy(), W[:, p].copy() if self.fit_intercept else np.zeros(W.shape[0])

    def _unpack(self, family, column_scale=None, design=None):
        """Set ``coef_``, ``intercept_``, ``precision_``, ``sigma_`` from the family.

        The family's parameters are the rows of ``[coef, intercept]`` one after the
        other (``R`` rows: one, or one per class of a multinomial model, whose
        intercepts are then centred, scikit-learn's convention for the softmax's
        free constant). With ``column_scale`` the family is over ``theta' =
        column_scale * theta`` (:meth:`~skvan.objectives.LinearModelObjective.reparametrised`)
        and is mapped back: ``mean / s``, ``precision * s s^T``, ``covariance / (s s^T)``;
        a Gram form's precision is mapped to ``design`` (the unscaled design).
        Shapes, with ``p`` features and ``p'`` parameters per row: ``coef_`` ``(R,
        p)``; ``sigma_`` by the user's ``covariance`` (never by what "auto" chose,
        so that it has one shape at every data size): the covariance matrix for
        "full", ``(R, p, p)`` if ``R == 1`` else ``(R, p, R, p)``, else the
        marginal variances, ``(R, p)``; ``precision_`` as the family keeps it
        (over ``p'``). Subclasses squeeze as they need.
        """
        p = self.n_features_in_
        s = np.ones(family.n_params) if column_scale is None else column_scale
        kind = self.covariance_
        self.coef_, self.intercept_ = self._coefficients(family.mean, s)
        R, width = self.coef_.shape[0], p + int(self.fit_intercept)
        if kind in GRAM:
            self.precision_ = family.precision if np.all(s == 1.0) else \
                family.precision.in_coordinates(s, design)
        elif kind == "diag":
            self.precision_ = (family.precision * s**2).reshape(R, -1)
        else:
            P = (family.precision * np.outer(s, s)).reshape(R, -1, R, width)
            self.precision_ = P[:, :, 0] if R == 1 else P
        if self.covariance == "full":
            self.sigma_ = self._coef_blocks(family.sigma / np.outer(s, s))
        else:
            self.sigma_ = (family.marginal_variance() / s**2).reshape(R, -1)[:, :p]

    def _coef_blocks(self, S):
        """The coefficients' blocks of a covariance ``S`` over the rows of ``[coef,
        intercept]``: ``(R, p, p)`` for one row (``R = 1``), ``(R, p, R, p)``."""
        p = self.n_features_in_
        R = np.atleast_2d(self.coef_).shape[0]
        S = S.reshape(R, -1, R, p + int(self.fit_intercept))[:, :p, :, :p]
        return S[:, :, 0] if R == 1 else S

    def get_covariance(self):
        """The covariance matrix of ``coef_`` under ``q``, whatever ``covariance`` is.

        ``sigma_`` holds it only for ``covariance="full"`` (the marginal variances
        otherwise, so that its shape does not depend on the data's size); this
        forms it from the fitted precision: the inverse of the full matrix, the
        dual form's ``Lambda^-1 - Lambda^-1 X^T M^-1 X Lambda^-1`` or the diagonal.

        Returns
        -------
        covariance : ndarray
            ``(n_features, n_features)`` where ``coef_`` is one-dimensional (a
            regressor's), ``(1, n_features, n_features)`` for one row of a
            two-dimensional ``coef_``, ``(n_classes, n_features, n_classes,
            n_features)`` for a multinomial model.

        Raises
        ------
        MemoryError
            Where the matrix would exceed skvan's memory budget
            (``skvan.van._gram.MEMORY_BUDGET``, 1 GiB); ``sigma_`` then holds the
            marginal variances, and predictions never need the matrix.
        """
        check_is_fitted(self)
        family = self._family()
        _check_budget(family.n_params**2, "the covariance")
        blocks = self._coef_blocks(np.diag(family.sigma) if family.diagonal else family.sigma)
        return blocks[0] if np.ndim(self.coef_) == 1 else blocks
