"""VANLassoRegressor, the Lasso fitted by VAN with exact zeros and a Gaussian q: it
validates, builds the engine (:class:`~skvan.van.LassoSolver`), unpacks its find."""

from numbers import Real

import numpy as np
from sklearn.base import RegressorMixin
from sklearn.utils import check_random_state
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

from .._compat import Interval, _fit_context, check_sample_weight, validate_data
from .._dask import is_dask_collection, map_rows
from .._data import dot
from .._warnings import warn_user
from ..objectives._linear import check_predictors
from ..van import MEMORY_BUDGET, Design, LassoSolver
from ._base import CHECK_X, GRAM, VANLinearModel, check_single_target

#: beta_growth="auto" for full-batch VO: slower than the classifier's, since the
#: expected L1 curvature grows like 1/s near 0 and a fast schedule collapses q around
#: coefficients that have not arrived (``python benchmarks/bench_lasso.py --growth``).
AUTO_GROWTH_LASSO = 4.0


class VANLassoRegressor(RegressorMixin, VANLinearModel):
    """Lasso fitted by the Variational Adaptive-Newton method.

    Minimises the objective of :class:`sklearn.linear_model.Lasso` (intercept not
    penalised), written as in Khan et al. (2018) after multiplying it by the
    total sample weight ``n = sum_i s_i``::

        f(w, b) = 1/2 sum_i s_i (y_i - x_i^T w - b)^2 + lambda ||w||_1,   lambda = alpha n

    over a Gaussian ``q(w, b) = N(mu, Sigma)``. Under ``objective="vo"`` VAN
    minimises ``E_q[f]``, whose optimum concentrates ``q`` on the Lasso solution;
    ``coef_`` is then that solution, with exact zeros (Notes). Under
    ``objective="vi"`` ``f / sigma^2`` is the negative log joint of the Bayesian
    Lasso (Gaussian noise of variance ``sigma^2``, Laplace prior of rate
    ``lambda / sigma^2``) and ``q`` converges to a Gaussian approximation of its
    posterior.

    Parameters
    ----------
    alpha : float, default=1.0
        Constant that multiplies the L1 term, ``>= 0``, as in scikit-learn.
        ``alpha=0`` is least squares (warns, as scikit-learn does).
    positive : bool, default=False
        Constrain the coefficients to be ``>= 0``, as in scikit-learn (an exact
        penalty, :func:`~skvan.sparse.nonnegative`). Needs ``objective="vo"``,
        ``expectation="exact"`` on the full data, ``covariance`` "full", "diag"
        or "auto"; no ``partial_fit``.
    fit_intercept : bool, default=True
        Whether to fit an (unpenalised) intercept.
    beta : float, default=1.0
        Initial VAN step size ``beta_0 > 0`` (in ``(0, 1]`` for ``objective="vi"``).
    beta_growth : float or "auto", default="auto"
        ``beta_t = beta * beta_growth**t``, ``>= 1``. "auto" is 4 for
        ``objective="vo"`` on the full data (Notes), and 1 with minibatches, with
        ``expectation="mc"`` (without exact values there is no safeguard) or
        under ``objective="vi"``.
    covariance : {"auto", "full", "dual", "operator", "diag"}, default="auto"
        How ``q``'s covariance is kept (``covariance_`` says which): "full", a
        ``p x p`` precision (the paper's VAN); "dual", the same Gaussian through
        ``n x n`` systems (for ``p > n``); "operator", the full precision as an
        operator (VO only, where neither ``p^2`` nor ``n^2`` fits); "diag"
        (VAN-D). "auto" picks the cheapest within the memory budget (user guide).
    hessian : {"exact", "gauss_newton"}, default="exact"
        The L1 term's curvature in the precision update: its expected Hessian
        ``2 lambda phi(m/s) / s``, or ``lambda / sqrt(m^2 + s^2)``, that of the
        tightest quadratic bound on ``E|theta|`` (the squared loss's is ``X^T X``).
    expectation : {"exact", "quadrature", "mc"}, default="exact"
        "exact": closed forms (through ``X^T X``: ``O(n_params^3)`` per iteration
        whatever ``n_samples``); "quadrature": Gauss-Hermite over each linear
        predictor; "mc": ``n_mc_samples`` draws from ``q`` for the data term.
    n_mc_samples : int, default=10
        Draws per iteration when ``expectation="mc"``, ``>= 1``.
    objective : {"vo", "vi"}, default="vo"
        Variational optimisation (``coef_`` is the Lasso solution, ``sigma_``
        shrinks towards zero) or variational inference (``coef_`` and ``sigma_``
        are the mean and covariance of the approximate posterior; ``coef_`` is
        not sparse).
    batch_size : int or None, default=None
        Rows per stochastic step (sVAN), ``>= 1``; None uses all rows. With
        ``beta_growth="auto"``, a full covariance and ``hessian="exact"`` each row
        keeps its last integrals (3 floats, :class:`~skvan.expectations.RowMemory`):
        after one pass the steps see the whole data's least squares; the
        certificate decides the zeros (the user guide's "Large data").
    stream_size : int or None, default=None
        How :meth:`partial_fit` counts its batches, ``>= 1``. None: every row is
        a new observation (sequential Bayes). ``N``: passes over ``N`` rows, which
        converge to :meth:`fit` on them, remembering each row (by its content) as
        ``batch_size`` does (:class:`~skvan.expectations.StreamRowMemory`).
    max_iter : int, default=1000
        Maximum number of VAN iterations, ``>= 1``; with ``batch_size``, of data
        passes (scikit-learn's SGD convention); with ``partial_fit`` of new rows,
        of each batch's update.
    tol : float, default=1e-4
        Stop when the estimated distance of the mean to its fixed point is below
        ``tol`` times its largest entry, ``>= 0`` (with ``batch_size``: the
        mean's change over a data pass).
    warm_start : bool, default=False
        Start ``fit`` from the previous ``coef_`` and ``intercept_``.
    random_state : int, RandomState instance or None, default=None
        Seeds Monte Carlo draws and minibatch order.
    verbose : int, default=0
        Print one line per iteration when positive.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
        Under ``objective="vo"`` the Lasso solution; under ``"vi"`` the posterior
        mean of ``q``.
    intercept_ : float
        Intercept (0.0 if ``fit_intercept=False``).
    sigma_ : ndarray of shape (n_features, n_features) or (n_features,)
        Covariance of ``coef_`` under ``q`` when ``covariance="full"``, else the
        marginal variances (:meth:`get_covariance` forms the matrix). Under
        ``objective="vo"`` it shrinks towards zero.
    precision_ : ndarray of shape (n_params, n_params) or (n_params,), or GramPrecision
        Precision of ``q`` over ``[coef, intercept]``; for "dual" and "operator" a
        :class:`~skvan.van.GramPrecision` (``diag(lam) + X^T diag(d) X`` as a
        ``LinearOperator``).
    covariance_ : str
        The covariance form used: "full", "dual", "operator" or "diag".
    noise_variance_ : float
        Estimated noise variance ``sum_i s_i r_i^2 / (n - k)`` from the residuals
        ``r`` of the Lasso solution, ``k`` the number of its nonzero parameters
        (``/ n`` when ``n <= k``).
    n_iter_ : int
        VAN iterations run (those of the VI run under ``objective="vi"``; data
        passes with ``batch_size``; streaming steps after :meth:`partial_fit`).
    n_corrections_ : int
        Corrections the final KKT check made to the support read off ``q``
        (Notes), coefficients dropped for their sign included; 0 when ``q`` had
        it right. 0 under ``objective="vi"``.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during fit, when ``X`` has string column names.

    See Also
    --------
    sklearn.linear_model.Lasso : The point estimate of the same objective.
    sklearn.linear_model.BayesianRidge : Bayesian linear regression, ``predict(return_std=True)``.
    VANLogisticRegression : The classifier over the same solver.

    Notes
    -----
    For ``theta_j ~ N(m, s^2)`` the L1 term has closed-form expectations,
    ``E[sign theta_j] = 2 Phi(m/s) - 1`` and ``E[d^2 |theta_j|] = 2 phi(m/s) / s``,
    and so does the squared loss (through ``X^T W X``). Each iteration is::

        P_{t+1} = P_t + beta_t E_q[hess f],     mu_{t+1} = mu_t - beta_t P_{t+1}^-1 E_q[grad f]

    each step redone whole with ``beta_t`` halved until ``E_q[f]`` does not
    increase (the L1 curvature grows like ``1/s``: ``q`` must narrow no faster
    than its mean arrives). Exact zeros come from ``q``: at the VO fixed point
    the probability it gives a coefficient's other sign is half its KKT slack.
    The support so read gives the exact values from the KKT equations, and VAN
    stops as soon as they pass the KKT check (:class:`~skvan.van.LassoCertificate`;
    ``n_corrections_`` counts the changes it made): ``coef_`` is then the Lasso
    solution to rounding. A fit that reaches ``max_iter`` is only checked, with a
    ConvergenceWarning. :class:`~skvan.van.LassoSolver` and the user guide
    describe the engine. Results are float64 whatever the input dtype.

    References
    ----------
    .. [1] M. E. Khan, W. Lin, V. Tangkaratt, Z. Liu and D. Nielsen, "Variational
       Adaptive-Newton Method for Explorative Learning", AISTATS 2018.
    .. [2] R. Tibshirani, "Regression Shrinkage and Selection via the Lasso",
       J. R. Statist. Soc. B, 1996.

    Examples
    --------
    >>> from sklearn.datasets import load_diabetes
    >>> from sklearn.preprocessing import StandardScaler
    >>> from skvan import VANLassoRegressor
    >>> X, y = load_diabetes(return_X_y=True)
    >>> X = StandardScaler().fit_transform(X)
    >>> reg = VANLassoRegressor(alpha=1.0).fit(X, y)
    >>> int((reg.coef_ != 0).sum()), reg.sigma_.shape, reg.get_covariance().shape
    (7, (10,), (10, 10))
    >>> mean, std = reg.predict(X[:2], return_std=True)
    >>> std.round(1)
    array([54.2, 54.2])
    """

    _auto_growth = AUTO_GROWTH_LASSO
    # Without exact values no safeguard keeps a geometric schedule from collapsing
    # q around coefficients that have not arrived: "auto" with Monte Carlo is constant.
    _constant_for_mc = True

    #: The L1 share of the penalty: all (:class:`VANElasticNet`'s is a parameter).
    l1_ratio = 1.0

    _parameter_constraints = {
        **VANLinearModel._parameter_constraints,
        "alpha": [Interval(Real, 0, None, closed="left")],
        "positive": ["boolean"],
    }

    def __init__(
        self,
        alpha=1.0,
        *,
        positive=False,
        fit_intercept=True,
        beta=1.0,
        beta_growth="auto",
        covariance="auto",
        hessian="exact",
        expectation="exact",
        n_mc_samples=10,
        objective="vo",
        batch_size=None,
        stream_size=None,
        max_iter=1000,
        tol=1e-4,
        warm_start=False,
        random_state=None,
        verbose=0,
    ):
        self.alpha = alpha
        self.positive = positive
        self.fit_intercept = fit_intercept
        self.beta = beta
        self.beta_growth = beta_growth
        self.covariance = covariance
        self.hessian = hessian
        self.expectation = expectation
        self.n_mc_samples = n_mc_samples
        self.objective = objective
        self.batch_size = batch_size
        self.stream_size = stream_size
        self.max_iter = max_iter
        self.tol = tol
        self.warm_start = warm_start
        self.random_state = random_state
        self.verbose = verbose

    def _engine(self):
        """The Lasso's engine for these parameters (``covariance_`` resolved)."""
        return LassoSolver(self._settings(), fit_intercept=self.fit_intercept,
                           positive=self.positive, l1_ratio=self.l1_ratio)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Fit the Gaussian ``q`` by VAN.

        Parameters
        ----------
        X : {array-like, sparse matrix, dask array} of shape (n_samples, n_features)
            Training data. A dask array stays in its chunks, where the active dask
            scheduler keeps them: one pass over them forms ``[X, 1]^T W [X, 1]``
            and ``X^T W y``, and VAN iterates on those (:meth:`_chunked_statistics`).
        y : array-like or dask array of shape (n_samples,)
            Target values.
        sample_weight : array-like or dask array of shape (n_samples,), default=None
            Non-negative weights; a weight of ``k`` counts a sample ``k`` times.

        Returns
        -------
        self : object
            Fitted estimator.
        """
        chunked = is_dask_collection(X)
        if chunked:
            statistics = self._chunked_statistics(X, y, sample_weight)
        else:
            self._check_solver_params()
            check_single_target(self, y)
            X, y = validate_data(self, X, y, **CHECK_X, y_numeric=True)
            y = np.asarray(y, dtype=np.float64)
            sample_weight = check_sample_weight(sample_weight, X)
        self._warn_alpha_zero()
        start = self._warm_mean(X.shape[1])
        self._resolve_covariance(X)
        if chunked and self.covariance_ in GRAM:
            raise ValueError(
                f"covariance='auto' chose {self.covariance_!r} for these data, which works "
                "through the rows; on dask arrays use covariance='full' or 'diag'."
            )
        engine, rng = self._engine(), check_random_state(self.random_state)
        engine.check(X.shape[0])
        design = Design(X, self.fit_intercept)
        if chunked:
            problem = engine.gram_problem(design, y, None, self.alpha, statistics)
        else:
            problem = engine.problem(design, y, sample_weight, self.alpha,
                                     on_rows=self.covariance_ in GRAM)
        self._finish(engine, problem, engine.solve(problem, rng, start), rng)
        return self

    def _finish(self, engine, problem, fitted, rng):
        """The fitted attributes from the engine's VO fit ``fitted`` of ``problem``
        (:meth:`~skvan.van.LassoSolver.finish`: under VI the posterior), and the
        stream a later :meth:`partial_fit` continues."""
        family, self.noise_variance_, self.n_iter_ = engine.finish(problem, fitted, rng,
                                                                    self.objective)
        self.n_corrections_ = fitted.n_corrections if self.objective == "vo" else 0
        total = problem.total_weight
        self._start_stream(self.noise_variance_ * total, total)
        self._set_attributes(family, problem.column_scale,
                             problem.design.X if self.covariance_ in GRAM else None)

    def _warm_mean(self, n_features):
        """With ``warm_start``, the previous fit's mean over ``[coef, intercept]``
        where it has ``n_features`` coefficients; else None."""
        warm = (self.warm_start and hasattr(self, "coef_")
                and len(np.atleast_1d(self.coef_)) == n_features)
        return self._mean() if warm else None

    def _warn_alpha_zero(self):
        """Warn that alpha=0 is least squares."""
        if self.alpha == 0:
            warn_user("With alpha=0 the L1 term vanishes and this is ordinary least squares; "
                      "LinearRegression solves it directly.", UserWarning)

    def _chunked_statistics(self, X, y, sample_weight):
        """:meth:`fit`'s checks and the least squares' statistics on dask arrays, from
        one pass over the chunks where they live (``least_squares_statistics``)."""
        from .._dask import DaskChunks
        from ..objectives._chunked import least_squares_statistics

        self._check_solver_params()
        name = type(self).__name__
        for failed, what in ((self.batch_size is not None, "batch_size"),
                             (self.expectation != "exact", f"expectation={self.expectation!r}"),
                             (self.covariance in GRAM, f"covariance={self.covariance!r}")):
            if failed:
                raise ValueError(
                    f"{name}.fit on dask arrays works through X^T W X, formed in one pass "
                    f"over the chunks, and does not support {what}, which needs the rows. "
                    "Use expectation='exact' without batch_size and covariance='full', "
                    "'diag' or 'auto', or fit numpy data."
                )
        validate_data(self, X, y, skip_check_array=True)
        return least_squares_statistics(DaskChunks(X, y, sample_weight), self.fit_intercept, name)

    def _resolve_covariance(self, X, stream=False, n_rows=1):
        """As for every linear model, with an elastic net's ridge rows (one per
        feature); with ``positive``, "auto" keeps to the forms through ``X^T X``."""
        super()._resolve_covariance(X, stream, n_rows, X.shape[1] if self.l1_ratio < 1 else 0)
        if self.positive and self.covariance == "auto" and self.covariance_ in GRAM:
            n_params = X.shape[1] + int(self.fit_intercept)
            self.covariance_ = "full" if 8.0 * n_params**2 <= MEMORY_BUDGET else "diag"

    def _set_attributes(self, family, column_scale=None, design=None):
        self._unpack(family, column_scale, design)
        self.coef_ = self.coef_[0]
        self.intercept_ = float(self.intercept_[0])
        self.sigma_ = self.sigma_[0]
        if self.covariance_ not in GRAM:
            self.precision_ = self.precision_[0]

    @available_if(lambda self: not self.positive)
    def partial_fit(self, X, y, sample_weight=None):
        """One streaming VAN update on a batch, keeping the precision (not with
        ``positive``: the constraint is solved through all rows).

        ``f_B`` is the batch's objective (its squared loss and its share ``alpha
        sum_B s_i`` of the L1 term). With ``stream_size=None`` each call is the
        Bayes update of ``q`` by ``f_B``: VI with ``q`` as its prior, solved to
        ``tol`` (one step, ``P <- P + beta E_q[hess f_B]``, with ``expectation="mc"``
        or ``hessian="gauss_newton"``); with ``stream_size=N``, sVAN's step on
        ``f_B`` scaled by ``N / n_batch``, the rows remembered. ``coef_`` is the mean
        of ``q`` (no exact zeros: the finish of :meth:`fit` needs all the data);
        ``noise_variance_`` the weighted mean squared residual of each batch before its step.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            A batch of training data.
        y : array-like of shape (n_samples,)
            Its targets.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights.

        Returns
        -------
        self : object
            Updated estimator.
        """
        first = not hasattr(self, "coef_")
        if first:
            self._validate_params()
            self._check_solver_params()
        X, y = validate_data(self, X, y, **CHECK_X, y_numeric=True, reset=first)
        y = np.asarray(y, dtype=np.float64)
        sample_weight = check_sample_weight(sample_weight, X)
        if first:
            self._resolve_covariance(X, stream=True)
        else:
            self._check_streamable()
        f = self._engine().rows_objective(self._design(X), y, sample_weight, self.alpha)
        if first:
            family = self._initial_family(f)
            self._start_stream(0.0, 0.0)
            self.n_iter_, self.n_corrections_ = 0, 0
        else:
            family = self._family()
        residual = y - dot(f.X, family.mean)
        self._stream_rss += float(np.dot(sample_weight, residual**2))
        self._stream_weight += float(np.sum(sample_weight))
        self._stream_step(f, family, self._partial_rng, self.n_iter_)
        self._set_attributes(family)
        self.noise_variance_ = self._stream_rss / max(self._stream_weight, 1e-300)
        self.n_iter_ += 1
        return self

    def _start_stream(self, rss, weight):
        """State :meth:`partial_fit` carries between calls (reset by :meth:`fit`)."""
        self._partial_rng = check_random_state(self.random_state)
        self._stream_rss, self._stream_weight, self._row_memory = rss, weight, None

    def predict(self, X, return_std=False):
        """Predict with the mean of ``q``, and optionally the predictive spread.

        Parameters
        ----------
        X : {array-like, sparse matrix, dask array} of shape (n_samples, n_features)
            Samples. A dask array gives dask arrays, computed chunk by chunk where
            the chunks live.
        return_std : bool, default=False
            Also return the standard deviation of the prediction: the spread of
            ``x^T w + b`` under ``q`` plus the noise, ``sqrt(x^T Sigma x + noise_variance_)``.

        Returns
        -------
        y_mean : ndarray or dask array of shape (n_samples,)
            ``X @ coef_ + intercept_``.
        y_std : ndarray or dask array of shape (n_samples,)
            Standard deviation of the prediction; only with ``return_std=True``.
        """
        check_is_fitted(self)
        if is_dask_collection(X):
            mean = map_rows(self.predict, X)
            if not return_std:
                return mean
            return mean, map_rows(lambda rows: self.predict(rows, return_std=True)[1], X)
        X = validate_data(self, X, reset=False, **CHECK_X)
        Xd = self._design(X)
        family = self._family()
        y_mean = Xd @ family.mean
        if not return_std:
            return y_mean
        variance = family.predictor_variance(Xd)
        check_predictors(y_mean, variance)
        return y_mean, np.sqrt(variance + self.noise_variance_)
