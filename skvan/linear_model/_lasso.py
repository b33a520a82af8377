"""VANLassoRegressor: the Lasso fitted by VAN, with exact zeros and a Gaussian q."""

from numbers import Real

import numpy as np
from sklearn.base import RegressorMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

from .._compat import Interval, _fit_context, check_sample_weight, validate_data
from .._dask import is_dask_collection, map_rows
from .._data import dot, weighted_column_squares
from .._warnings import warn_user
from ..objectives import (
    KeepSigns,
    L1Penalty,
    LassoCertificate,
    LinearModelObjective,
    QuadraticObjective,
    SquaredLoss,
    kkt_excess,
    kkt_finish,
    kkt_follow,
    kkt_path,
    nonnegative,
)
from ..objectives._linear import check_predictors, gram_column_statistics, jacobi_scale_from
from ..van import (
    MEMORY_BUDGET,
    BetaBacktrack,
    GeometricSchedule,
    ObjectiveDecrease,
    family_from_parts,
    solve_on_working_sets,
    unit_predictor_precision,
)
from ._base import CHECK_X, GRAM, VANLinearModel

#: beta_growth="auto" for full-batch VO: slower than the classifier's 100, since
#: the expected L1 curvature grows like 1/s near 0 and a fast schedule collapses
#: q around coefficients that have not arrived (the whole-step safeguard lets
#: beta_t grow by at most this factor over its last accepted value). Chosen by
#: `python benchmarks/bench_lasso.py --growth` (15 problems), `--speed`, `--path`
#: and `bench_wide.py --problems lasso` (benchmarks/RESULTS.md): 4 needs a third
#: fewer iterations than 2 on each; 8 fewer still on the small problems but 1.6x
#: more on the wide 200 x 2,000 one.
AUTO_GROWTH_LASSO = 4.0

#: Columns of the first working set of a wide fit (the most correlated with the
#: residual); each round then at most doubles it with the worst KKT violators.
WORKING_SET_START = 32
#: A working set after the first is finished by KKT corrections that enter, each
#: time, every coordinate violating the conditions by at least this fraction of
#: the worst violation (:func:`~skvan.objectives.kkt_finish`'s ``enter``): its new
#: columns are mostly in the support. One at a time (0), the two problems of
#: ``python benchmarks/bench_wide.py --problems lasso`` took 140 and 141 KKT
#: corrections per fit, 37 and 24 with 0.5 (``--enter``, RESULTS.md); a
#: coordinate entered wrongly leaves at the next check when its sign flips, and
#: where batches wander (supports near the number of rows) ``kkt_finish`` falls
#: back to one at a time.
WORKING_SET_ENTER = 0.5


def _check_single_target(estimator, y):
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


def _warn_uncertified(n_corrections):
    warn_user(
        f"The support read off q failed the Lasso optimality (KKT) check "
        f"({n_corrections} corrections made); coef_ is the VAN mean with the zeros "
        "of q. Increase max_iter.",
        ConvergenceWarning,
    )


#: Why a fit on dask arrays refuses entries beyond ``1e+-100`` (or an elastic net's
#: ridge rows that large): it forms ``X^T W X`` before rescaling the columns.
_UNSCALED_DASK = (
    "X (or the elastic net's ridge rows) has entries beyond 1e+-100 in absolute value: "
    "on dask arrays X^T W X is formed before the columns are rescaled, and such squares "
    "leave float64's range. Rescale the features, for example with "
    "dask_ml.preprocessing.StandardScaler, or fit numpy data."
)


class _Problem:
    """What a fit solves (:meth:`VANLassoRegressor._problem`), built once: a path
    re-weights its penalty (:meth:`with_penalty`).

    ``least_squares`` is the least squares the certificate checks, through
    ``X^T W X`` (or the rows' objective itself for the Gram forms), over
    ``column_scale * theta``; ``design`` is the rows' objective over ``[coef,
    intercept]`` (``n_samples`` rows, of total weight ``total_weight``) and
    ``linear`` the same over ``column_scale * theta``. Where ``build`` is given,
    ``design`` and ``linear`` are built by it on first use: an elastic-net path's
    rows carry the ridge, which changes with
    alpha, while its least squares comes from ``X^T W X`` formed once
    (``gram``)."""

    def __init__(self, column_scale, least_squares, n_samples, total_weight, design=None,
                 linear=None, build=None, gram=None):
        self.column_scale = column_scale
        self.least_squares = least_squares
        self.n_samples = n_samples
        self.total_weight = total_weight
        self._design, self._linear, self._build = design, linear, build
        self.gram = gram

    def _built(self):
        if self._design is None:
            self._design, self._linear = self._build()
        return self._design, self._linear

    @property
    def design(self):
        return self._built()[0]

    @property
    def linear(self):
        return self._built()[1]

    def with_penalty(self, penalty):
        """The problem with ``penalty`` (over ``column_scale * theta``) instead (the
        Lasso's path; an elastic-net path builds each alpha's problem anew); rows
        not built yet are built on first use."""
        least_squares = self.least_squares.with_penalty(penalty)
        if self._design is not None:
            return _Problem(self.column_scale, least_squares, self.n_samples, self.total_weight,
                            self._design, self._linear.with_penalty(penalty), gram=self.gram)

        def build():
            design, linear = self._built()
            return design, linear.with_penalty(penalty)

        return _Problem(self.column_scale, least_squares, self.n_samples, self.total_weight,
                        build=build, gram=self.gram)


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
        Constrain the coefficients to be ``>= 0``, as in scikit-learn: solved as
        an exact-penalty Lasso (:func:`~skvan.objectives.nonnegative`), with the
        same exact zeros and certificate. Needs ``objective="vo"``,
        ``expectation="exact"`` on the full data and ``covariance`` "full",
        "diag" or "auto" (which then picks one of them); no ``partial_fit``.
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
        How ``q``'s covariance is kept (the fitted ``covariance_`` says which):
        "full", a ``p x p`` precision (the paper's VAN; ``n p^2`` operations per
        iteration); "dual", the same full Gaussian through ``n x n`` systems
        (``n^2 p``, for ``p > n``, same iterates); "operator", the full precision
        as an operator with conjugate-gradient steps and predictor variances from
        its diagonal (for data where neither ``p^2`` nor ``n^2`` fits; VO only);
        "diag", a diagonal covariance (VAN-D, slower to converge on correlated
        features). "auto" picks the cheapest of "full" and "dual" within the
        memory budget, else "operator" (VO) or "diag" (VI); see the user guide.
    hessian : {"exact", "gauss_newton"}, default="exact"
        Curvature in the precision update: expected Hessians, or each term's
        Gauss-Newton curvature. The two differ only in the L1 term (the squared
        loss's Gauss-Newton matrix ``X^T X`` is its Hessian): its expected Hessian
        ``2 lambda phi(m/s) / s``, or ``lambda / sqrt(m^2 + s^2)``, the curvature
        of the tightest quadratic bound on ``E|theta|`` (the iterative-ridge
        curvature, smoothed by ``s``).
    expectation : {"exact", "quadrature", "mc"}, default="exact"
        "exact": closed form; on the full data an iteration then costs
        ``O(n_params^3)`` whatever ``n_samples`` (through ``X^T X`` and ``X^T y``).
        "quadrature": the same integrals by Gauss-Hermite quadrature over each
        linear predictor (``O(n_samples n_params^2)`` per iteration). "mc":
        ``n_mc_samples`` draws from ``q`` for the data term.
    n_mc_samples : int, default=10
        Draws per iteration when ``expectation="mc"``, ``>= 1``.
    objective : {"vo", "vi"}, default="vo"
        Variational optimisation (``coef_`` is the Lasso solution, ``sigma_``
        shrinks towards zero) or variational inference (``coef_`` and ``sigma_``
        are the mean and covariance of the approximate posterior; ``coef_`` is
        not sparse).
    batch_size : int or None, default=None
        Rows per stochastic step (sVAN), ``>= 1``; None uses all rows. With
        ``beta_growth="auto"`` the steps follow sVAN's averaging schedule (the
        curvature averaged with weights growing linearly in time, mean steps of
        ``2/(t+2)`` Newton steps; see the user guide's "Large data"), which keeps
        improving for as many passes as it runs.
    stream_size : int or None, default=None
        How :meth:`partial_fit` counts its batches, ``>= 1``. None: every row
        passed is a new observation (sequential Bayesian updates; one pass over
        a data set ends near the full-batch fit). An integer ``N``: the batches
        are drawn from a data set of ``N`` rows, passed over repeatedly; each
        batch's data term is scaled by ``N / n_batch`` and the steps follow
        sVAN's schedule, so that the passes converge to :meth:`fit` on the ``N``
        rows.
    max_iter : int, default=1000
        Maximum number of VAN iterations, ``>= 1``; with ``batch_size``, of data
        passes (scikit-learn's SGD convention); with ``partial_fit`` of new rows,
        of each batch's update.
    tol : float, default=1e-4
        Stop when the estimated distance of the mean to its fixed point is below
        ``tol`` times its largest entry, ``>= 0``; with ``batch_size``, when the
        mean moved less than that over a data pass; with ``partial_fit`` of new
        rows, each batch's update is solved to it.
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
        Covariance of ``coef_`` under ``q`` when ``covariance="full"``; the
        marginal variances otherwise ("auto" included, whatever form it chose;
        :meth:`get_covariance` forms the matrix). Under ``objective="vo"`` it
        shrinks towards zero as VAN converges.
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
    and so does the squared loss. Each iteration then is::

        P_{t+1} = P_t + beta_t E_q[hess f],     mu_{t+1} = mu_t - beta_t P_{t+1}^-1 E_q[grad f]

    The L1 curvature grows like ``1/s`` near 0: if ``q`` narrows before a
    coefficient's mean has arrived, that coefficient freezes (a plain loop stalls
    at 1e-2 relative error). Two choices make VO converge:

    - The safeguard redoes the whole step (precision and mean) with ``beta_t``
      halved until ``E_q[f]`` does not increase, so ``q`` narrows only as fast as
      its mean can follow, and the next step starts from at most the
      schedule's growth times the accepted ``beta_t``. Shortening only the mean
      step, as the classifier does, let ``q`` collapse around oscillating
      coefficients. A coefficient whose sign ``q`` has decided stops at 0
      rather than cross it, and one whose sign it has not moves by at most
      three standard deviations of ``q`` per step
      (:class:`~skvan.objectives.KeepSigns`).
    - A slower geometric schedule than the classifier's, ``beta_growth=4``:
      each mean step is three quarters of a Newton step on the smoothed
      objective.

    Exact zeros come from ``q`` itself. At the VO fixed point the probability
    that ``q`` gives a coefficient the sign opposite to its mean is
    ``Phi(-|m_j| / s_j) = (1 - |(grad of the squared loss)_j| / lambda) / 2``: half
    the KKT slack, bounded away from 0 for a coefficient whose optimum is 0,
    vanishing for the others as ``q`` concentrates. A coefficient is zero when
    that probability, with its mean moved towards 0 by the solver's estimate
    of the distance still to go, is at least the float64 epsilon
    (``|m_j| - d <= 8.1 s_j``); if that support fails the check below, the one
    read without the margin (``d = 0``) is checked too. The support and its signs then give the exact
    Lasso values, from the KKT equations
    ``(X^T X)_SS w_S = (X^T y)_S - lambda sign(w_S)``, and the KKT conditions are
    checked (signs on the support, ``|(X^T (X w - y))_j| <= lambda`` off it).
    If the check fails, coefficients whose value there has the other sign than
    ``q`` gives them leave the support, and the violators within half the
    worst violation enter, and the values are solved again (at most ten
    times): while ``q``
    concentrates, a coefficient whose optimum is 0 can sit many standard
    deviations from 0 for an iteration or two, and one whose optimum is not 0
    can still be read as 0. These corrections count in ``n_corrections_``.

    VAN stops as soon as that check passes: the certificate is exact, so
    ``coef_`` is then the Lasso solution to rounding. If the mean converges
    (``tol``) but the check still fails, VAN runs up to 50 more iterations for
    ``q`` to concentrate; after that the support is corrected one coordinate
    at a time (counted in ``n_corrections_``). A fit that reaches ``max_iter``
    unconverged is only checked, not corrected: ``coef_`` is then the VAN mean
    with the zeros of ``q``, with a ConvergenceWarning. This finish needs
    ``X^T X`` (one pass over the data when it was not formed already);
    :meth:`partial_fit` skips it.

    Results are float64 whatever the input dtype.

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

    # -- objectives -----------------------------------------------------------------
    def _l1_share(self):
        """The L1 term's share of alpha: all (the elastic net's: ``l1_ratio``)."""
        return 1.0

    def _extra_rows(self, n_features):
        """Rows besides the data's: none (the elastic net's ridge rows)."""
        return 0

    def _ridge(self, total_weight, alpha=None):
        """The ridge's weight on ``||w||^2 / 2`` (none)."""
        return 0.0

    def _strength(self, n_params, total_weight, alpha=None):
        """The L1 strengths over the parameters.

        ``lambda = alpha * l1_share * total_weight`` over ``[coef, intercept]`` (0
        on the intercept; ``alpha`` None: ``self.alpha``)."""
        alpha = self.alpha if alpha is None else alpha
        strength = np.full(n_params, alpha * self._l1_share() * total_weight)
        if self.fit_intercept:
            strength[-1] = 0.0
        return strength

    def _objective(self, X, y, sample_weight, alpha=None):
        """The least-squares objective with ``lambda ||w||_1`` (:meth:`_strength`)."""
        Xd = self._design(X)
        strength = self._strength(Xd.shape[1], float(np.sum(sample_weight)), alpha)
        return LinearModelObjective(Xd, y, SquaredLoss(), sample_weight, L1Penalty(strength))

    def _full_batch_exact(self, n_samples):
        """Whether iterations can run on ``X^T X`` alone (``O(n_params^3)`` each)."""
        return self.expectation == "exact" and not self._stochastic(n_samples)

    @staticmethod
    def _noise_variance(quadratic, theta, total, not_residual=0.0):
        """Weighted residual variance at ``theta`` with a degrees-of-freedom factor,
        ``total`` the rows' total weight (``not_residual``: the part of ``2
        quadratic.smooth_value`` that is not a residual sum of squares, such as an
        elastic net's ridge rows)."""
        rss = max(2.0 * quadratic.smooth_value(theta) - not_residual, 0.0)
        dof = int(np.count_nonzero(theta))
        if total > dof:
            return rss / (total - dof)
        return rss / total if total > 0 else 0.0

    def _schedule(self, n_samples, objective):
        # With Monte Carlo there are no deterministic values to safeguard a step
        # on, and a geometric schedule then lets q collapse around frozen
        # coefficients (benchmarks/RESULTS.md): the constant schedule.
        if self.beta_growth == "auto" and self.expectation == "mc" and not self._stochastic(n_samples):
            return GeometricSchedule(self.beta, 1.0)
        return super()._schedule(n_samples, objective)

    # -- fitting --------------------------------------------------------------------
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Fit the Gaussian ``q`` by VAN.

        Parameters
        ----------
        X : {array-like, sparse matrix, dask array} of shape (n_samples, n_features)
            Training data. A dask array stays in its chunks, where the active dask
            scheduler keeps them: one pass over them forms ``[X, 1]^T W [X, 1]``
            and ``X^T W y``, and VAN iterates on those (:meth:`_fit_chunked`).
        y : array-like or dask array of shape (n_samples,)
            Target values.
        sample_weight : array-like or dask array of shape (n_samples,), default=None
            Non-negative weights; a weight of ``k`` counts a sample ``k`` times.

        Returns
        -------
        self : object
            Fitted estimator.
        """
        if is_dask_collection(X):
            return self._fit_chunked(X, y, sample_weight)
        self._check_solver_params()
        _check_single_target(self, y)
        X, y = validate_data(self, X, y, **CHECK_X, y_numeric=True)
        self._warn_alpha_zero()
        y = np.asarray(y, dtype=np.float64)
        sample_weight = check_sample_weight(sample_weight, X)
        rng = check_random_state(self.random_state)
        start = self._warm_mean(X.shape[1])
        self._resolve_covariance(X)
        self._fit_problem(self._problem(X, y, sample_weight), start, rng)
        return self

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

    def _fit_chunked(self, X, y, sample_weight):
        """Fit on dask arrays, in one pass over the chunks.

        The least squares on ``[X, 1]``, the columns' statistics and the checks of
        ``X``, ``y`` and the weights come from one map-reduce pass over the chunks,
        where they live (``least_squares_summary``); VAN and the certificate then
        work on the ``p x p`` statistics. ``X`` is never gathered."""
        from .._dask import DaskChunks
        from ..objectives._chunked import least_squares_summary

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
        self._warn_alpha_zero()
        chunks = DaskChunks(X, y, sample_weight)
        parts = chunks.map(least_squares_summary, self.fit_intercept)
        for k, what in ((3, "Input X contains NaN or infinity."),
                        (4, "Input y contains NaN or infinity."),
                        (5, "sample_weight must be finite and non-negative.")):
            if not all(part[k] for part in parts):
                raise ValueError(what)
        n_features = X.shape[1]
        n_params = n_features + int(self.fit_intercept)
        if n_params > chunks.n_samples:
            raise ValueError(
                f"{name}.fit on dask arrays needs at least as many rows as parameters "
                f"({chunks.n_samples} rows, {n_params} parameters): wider data are solved "
                "on working sets of the rows' columns. Fit numpy data."
            )
        with np.errstate(over="ignore", invalid="ignore"):  # checked below
            M = np.sum([part[0] for part in parts], axis=0)
        if not np.isfinite(M).all():
            raise ValueError(_UNSCALED_DASK)
        raw = QuadraticObjective.from_augmented(M, float(sum(part[2] for part in parts)))
        top = np.max([part[1] for part in parts], axis=0)
        if self.fit_intercept:
            top = np.append(top, 1.0)
        self._resolve_covariance(X)
        if self.covariance_ in GRAM:
            raise ValueError(
                f"covariance='auto' chose {self.covariance_!r} for these data, which works "
                "through the rows; on dask arrays use covariance='full' or 'diag'."
            )
        problem = self._gram_problem(X, y, None, (raw, top, np.diag(raw.G).copy()))
        self._fit_problem(problem, self._warm_mean(n_features),
                          check_random_state(self.random_state))
        return self

    def _problem(self, X, y, sample_weight, gram=None):
        """What a fit solves, built once (a path re-weights its penalty): a
        :class:`_Problem`.

        The Gram forms work through the rows. The others work through ``X^T W
        X``: formed with ``X^T W y`` and the columns' statistics in one pass over
        the rows (:meth:`_statistics`, or ``gram``, a path's), the rows' objective
        built only where VAN needs it (:meth:`_gram_problem`). Where the Gram
        matrix cannot stand in for the columns' statistics (extreme entries,
        zero weights), the rows are rescaled first and their Gram matrix formed
        in those coordinates."""
        if self.covariance_ not in GRAM:
            gram = self._statistics(X, y, sample_weight) if gram is None else gram
            if gram is not None:
                return self._gram_problem(X, y, sample_weight, gram)
        return self._rows_problem(X, y, sample_weight)

    def _rows_problem(self, X, y, sample_weight):
        """The problem from the rows' objective.

        Rescaled by the Jacobi scale of its columns, then (but for the Gram forms)
        its Gram matrix formed in those coordinates (:meth:`_problem`)."""
        design = self._objective(X, y, sample_weight)
        column_scale = design.column_scale()
        linear = design.reparametrised(column_scale)
        least_squares = linear if self.covariance_ in GRAM else QuadraticObjective.from_linear(linear)
        total = float(np.sum(sample_weight))
        return _Problem(column_scale, least_squares, design.X.shape[0], total, design, linear)

    def _statistics(self, X, y, sample_weight):
        """The least squares on [X, 1] and its columns' statistics.

        ``(raw, top, squares)``: the least squares (no penalty, no rescaling;
        :meth:`~skvan.objectives.QuadraticObjective.from_design`) and the columns'
        statistics read off its Gram matrix (``gram_column_statistics``); None
        where they cannot be."""
        with np.errstate(over="ignore", invalid="ignore"):  # extreme entries: None
            raw = QuadraticObjective.from_design(X, y, sample_weight, self.fit_intercept)
        top, squares = gram_column_statistics(raw.G, sample_weight)
        return None if top is None else (raw, top, squares)

    def _gram_problem(self, X, y, sample_weight, gram):
        """The problem from one pass's statistics.

        :meth:`_problem` from ``gram`` (:meth:`_statistics`) at ``self.alpha``: its
        least squares plus the elastic net's ridge rows' ``r^2 I`` (:meth:`_ridge`),
        rescaled by the Jacobi scale of
        :meth:`~skvan.objectives.LinearModelObjective.column_scale` computed from
        the columns' statistics; the rows' objective is built on first use."""
        raw, top, squares = gram
        n_features, alpha, rows_weight = X.shape[1], self.alpha, raw.total_weight
        ridge, extra = self._ridge(rows_weight), self._extra_rows(X.shape[1])

        def build():  # at this problem's alpha, whatever the estimator's is by then
            if is_dask_collection(X):  # (_fit_chunked refuses what needs the rows)
                raise RuntimeError("the rows of a dask fit are not built on the client")
            full = self._objective(X, y, sample_weight, alpha)
            return full, full.reparametrised(column_scale)

        def rows_squares(norm):  # entries beyond 1e+-100 (or a huge ridge): the rows'
            if is_dask_collection(X):
                raise ValueError(_UNSCALED_DASK)
            full = self._objective(X, y, sample_weight, alpha)
            return weighted_column_squares(full.X, full.sample_weight, norm)

        G = raw.G
        if extra:
            # [X; r I] with weights [w, 1]: the ridge rows add r^2 to each feature's
            # weighted squares and sqrt(r) to its largest entry.
            top, squares, G = top.copy(), squares.copy(), G.copy()
            top[:n_features] = np.maximum(top[:n_features], np.sqrt(ridge))
            squares[:n_features] += ridge
            G[np.arange(n_features), np.arange(n_features)] += ridge
        total = rows_weight + extra
        column_scale = jacobi_scale_from(
            total, top, lambda norm: squares if norm is None else rows_squares(norm), 0.0,
            X.shape[0] + extra)
        strength = self._strength(raw.n_params, rows_weight)
        penalty = L1Penalty(strength).reparametrised(column_scale)
        least_squares = QuadraticObjective(G, raw.b, raw.c, total_weight=total).rescaled(
            column_scale, penalty)
        return _Problem(column_scale, least_squares, X.shape[0] + extra, rows_weight, build=build,
                        gram=gram)

    def _resolve_covariance(self, X, stream=False, n_rows=1):
        """As for every linear model; with ``positive``, "auto" keeps to the forms
        written through ``X^T X`` (full within the memory budget, else diagonal)."""
        super()._resolve_covariance(X, stream=stream, n_rows=n_rows)
        if self.positive and self.covariance == "auto" and self.covariance_ in GRAM:
            n_params = X.shape[1] + int(self.fit_intercept)
            self.covariance_ = "full" if 8.0 * n_params**2 <= MEMORY_BUDGET else "diag"

    def _constrained(self, least_squares, n_samples):
        """``least_squares``, or with ``positive`` its non-negative form
        (:func:`~skvan.objectives.nonnegative`), after checking that the settings
        allow it (the form lives in ``X^T X``)."""
        if not self.positive:
            return least_squares
        reasons = [
            (self.objective == "vi", "objective='vi' (a constrained posterior is not Gaussian)"),
            (not self._full_batch_exact(n_samples), "expectation='mc'/'quadrature' or batch_size"),
            (self.covariance_ in GRAM, f"covariance={self.covariance_!r}"),
        ]
        for failed, what in reasons:
            if failed:
                raise ValueError(
                    f"positive=True is solved through X^T X and does not support {what}. "
                    "Use objective='vo', expectation='exact' on the full data, and "
                    "covariance='full' or 'diag'."
                )
        return nonnegative(least_squares)

    def _ridge_rss(self, theta, column_scale, total_weight):
        """The part of the least-squares value that is a ridge, not residuals (none)."""
        return 0.0

    def _at_alpha(self, problem, alpha, X, y, sample_weight):
        """``problem`` (built at ``self.alpha``) at another ``alpha``: the L1
        strengths re-weighted, the Gram matrix kept. Sets ``self.alpha``."""
        penalty = L1Penalty(problem.least_squares.penalty.strength * (alpha / self.alpha))
        self.alpha = alpha
        return problem.with_penalty(penalty)

    #: KKT corrections (or homotopy events) made to a converged ``q``'s support (a
    #: path's previous alpha, a working set's previous round) before VAN runs again
    #: (None: as many as a converged fit's finish, ``n_params``).
    _carry_corrections = None

    def _fit_problem(self, problem, start, rng, carry=None):
        """VAN on ``problem`` (:meth:`_problem`) from ``start`` (a mean over
        ``[coef, intercept]`` or None, or a path's ``carry``: :meth:`_solve_problem`),
        then :meth:`_finish_problem`: sets the fitted attributes and returns the VO
        ``q`` (in the problem's coordinates)."""
        fitted = self._solve_problem(problem, start, rng, carry)
        self._finish_problem(problem, fitted, rng)
        return fitted

    def _solved(self, problem):
        """``(solved, f)``: the least squares the certificate checks (with
        ``positive``, its non-negative form) and the function VAN minimises
        (that, or the rows' objective where expectations or batches need rows)."""
        solved = self._constrained(problem.least_squares, problem.n_samples)
        return solved, solved if self._full_batch_exact(problem.n_samples) else problem.linear

    def _follow_path(self, problem, coef, alphas, X, y, sample_weight):
        """The solutions at ``alphas`` (decreasing, below ``self.alpha``) from
        ``coef``, ``problem``'s certified solution, by one homotopy
        (:func:`~skvan.objectives.kkt_path`): ``(coefs, problem)``, the solutions
        of the alphas reached, in order, and the problem at the last of them
        (``problem`` if none); ``self.alpha`` is that alpha.

        The Lasso's objective is affine in alpha (its L1 strengths are ``alpha``
        times fixed weights; with ``positive`` its linear term does not change):
        the objective at each alpha is the homotopy's at ``t = (alpha0 - alpha)
        / (alpha0 - alpha1)``, and only the kinks between cost a KKT check."""
        alpha0, none = self.alpha, (np.empty((0, coef.size)), problem)
        alphas = np.asarray(alphas, dtype=np.float64)
        if (not alphas.size or not self._full_batch_exact(problem.n_samples)
                or np.any(np.diff(alphas) > 0) or not alphas[-1] < alpha0):
            return none
        end = self._at_alpha(problem, float(alphas[-1]), X, y, sample_weight)
        before, after = self._solved(problem)[0], self._solved(end)[0]
        reached = 0
        if before.support_systems() is after.support_systems():
            at = np.clip((alpha0 - alphas) / (alpha0 - alphas[-1]), 0.0, 1.0)
            budget = self._carry_corrections  # per alpha
            coefs, reached, _ = kkt_path(before, after, coef, at,
                                         max_events=None if budget is None else budget * at.size)
        if reached == alphas.size:
            return coefs, end
        self.alpha = alpha0
        if not reached:
            return none
        return coefs[:reached], self._at_alpha(problem, float(alphas[reached - 1]), X, y, sample_weight)

    def _solve_problem(self, problem, start, rng, carry=None):
        """The VO ``q`` of ``problem``, its mean the certified solution; sets
        ``n_iter_`` and ``n_corrections_``.

        ``carry``, a path's converged ``q`` from the previous alpha and that
        alpha's problem (None: a ``q`` whose mean is a start, not a solution), is
        finished here with no iteration: between two kinks of the path its
        support and signs pass the KKT check unchanged; at a kink the solution is
        followed from the previous alpha by homotopy (:func:`kkt_follow`, where
        the two share the Gram matrix), or else corrected as a converged fit is
        (:func:`kkt_finish`: a coefficient enters at the worst violation, or
        leaves when its sign flips). When the check certifies the result it is
        the exact solution at this alpha and ``q`` is kept with the new mean;
        otherwise VAN runs from ``start``."""
        n_samples = problem.n_samples
        solved, f = self._solved(problem)
        start = None if start is None else start * problem.column_scale
        coef, ok = None, False
        if carry is not None and self._full_batch_exact(n_samples):
            carried, previous = carry
            coef, n_corrections = carried.mean, 0
            before = None if previous is None else self._solved(previous)[0]
            if before is not None and before.support_systems() is solved.support_systems():
                coef, n_corrections, ok = kkt_follow(before, solved, coef,
                                                     max_events=self._carry_corrections)
            if not ok:
                coef, more, ok = kkt_finish(solved, coef, np.zeros_like(coef),
                                            max_corrections=self._carry_corrections)
                n_corrections += more
        if ok:
            family, self.n_iter_, self.n_corrections_ = carried, 0, n_corrections
        elif self._full_batch_exact(n_samples) and solved.n_params > n_samples:
            coef, family, self.n_iter_, self.n_corrections_ = self._solve_wide(problem.linear, start,
                                                                               rng)
        else:
            family = self._initial_family(problem.least_squares, start)
            coef, result, self.n_corrections_, _ = self._solve_support(f, solved, family, rng)
            self.n_iter_ = result.n_iter
        family.mean = coef
        return family

    def _finish_problem(self, problem, fitted, rng):
        """From the VO ``q`` ``fitted``: the noise variance, the stream's start, with
        ``objective="vi"`` the posterior, and the fitted attributes."""
        column_scale, least_squares = problem.column_scale, problem.least_squares
        coef, family, total = fitted.mean, fitted, problem.total_weight
        self.noise_variance_ = self._noise_variance(least_squares, coef, total,
                                                    self._ridge_rss(coef, column_scale, total))
        self._start_stream(self.noise_variance_ * total, total)
        if self.objective == "vi":
            family = self._initial_family(problem.least_squares, coef)
            floor = self._noise_floor(least_squares, total)
            log_joint = self._solved(problem)[1].multiplied(1.0 / max(self.noise_variance_, floor))
            self.n_iter_ = self._solve(log_joint, family, rng).n_iter
            self.n_corrections_ = 0
        self._set_attributes(family, column_scale,
                             problem.design.X if self.covariance_ in GRAM else None)

    def _solve_support(self, f, quadratic, family, rng, schedule=None, warn=True):
        """VO from ``family`` until the support read off ``q`` passes the KKT check
        (:class:`~skvan.objectives.LassoCertificate`), then the certified values;
        returns ``(coef, result, n_corrections, ok)`` and warns (if ``warn``) when the
        check failed. With deterministic expectations on
        the full data each step is the whole-step backtrack with memory (its
        docstring says why)."""
        n_samples = getattr(f, "n_samples", None)
        certificate = LassoCertificate(quadratic, self._stop(n_samples))
        checkable = self.expectation != "mc" and not self._stochastic(n_samples)
        # The exact expected L1 curvature models the penalty on one side of 0 only
        # (KeepSigns); the Gauss-Newton one, lambda / sqrt(m^2 + s^2), is that of a
        # quadratic upper bound of E|theta|, whose steps descend across 0; cut
        # there, coefficients that had to change sign froze at 0 (28 iterations
        # at 89edfb8 against 11: tests/test_lasso.py::test_gauss_newton_steps_cross_zero).
        keep = KeepSigns(quadratic.penalty.strength) if self.hessian == "exact" else None
        if schedule is None:
            schedule = self._schedule(n_samples, "vo")
        # Accepted steps may follow the schedule (at least doubling: a constant
        # beta must be able to recover from a halving).
        step = BetaBacktrack(ObjectiveDecrease(), memory=True, restrict=keep,
                             growth=max(2.0, getattr(schedule, "growth", 2.0))) if checkable else None
        result = self._solve(f, family, rng, objective="vo", step=step, stop=certificate,
                             schedule=schedule)
        coef, n_corrections, ok = certificate.finish(family, result.converged)
        # An unconverged run has already warned (one warning per fit).
        if not ok and warn and result.converged:
            _warn_uncertified(n_corrections)
        return coef, result, n_corrections, ok

    def _solve_wide(self, linear, start, rng):
        """VO on working sets of columns (:func:`~skvan.van.solve_on_working_sets`):
        with more parameters than rows. The first set is solved by VAN on its own
        ``X_W^T W X_W`` with the certificate; each larger one by the certificate's
        corrections from the previous solution (VAN again only where they fail);
        the rest is certified by the KKT check on all columns. Returns ``(coef,
        family, n_iter, n_corrections)``; the
        family is ``q`` over all columns in the form ``covariance_``, with the
        data's curvature accumulated by the last run and the L1 curvature of its
        set (coordinates never in a set keep their starting ``lam``)."""
        strength = linear.penalty.strength
        free = strength == 0
        w = np.zeros(linear.n_params) if start is None else start
        grad = linear.smooth_gradient(w)  # with positive, only g_j < 0 can make w_j > 0
        ratio = (-grad if self.positive else np.abs(grad)) / np.where(free, np.inf, strength)
        first = np.union1d(np.argsort(-ratio, kind="stable")[:WORKING_SET_START],
                           np.flatnonzero(free | (w != 0)))
        runs, finished = [], []

        def solve_on(columns, mean):
            quad = QuadraticObjective.from_linear(linear.restricted(columns))
            solved = nonnegative(quad) if self.positive else quad
            if runs:
                # q has converged on the previous set: its support, with the new
                # columns at 0, is finished here as a converged fit is (corrections
                # enter the violators within WORKING_SET_ENTER of the worst at once);
                # VAN runs again only if that fails.
                coef, n_corrections, ok = kkt_finish(solved, mean, np.zeros_like(mean),
                                                     max_corrections=self._carry_corrections,
                                                     enter=WORKING_SET_ENTER)
                if ok:
                    finished.append(ok)
                    return coef, (0, n_corrections)
            lam = unit_predictor_precision(linear.X[:, columns], linear.sample_weight, "diag")
            family = family_from_parts("full", mean, lam, np.zeros(0), np.zeros((0, lam.size)))
            # A new q each round (so P_W = diag(lam) + c G_W), from the last round's
            # mean and step size: the support is mostly known, q need not explore.
            beta = self.beta
            schedule = GeometricSchedule(beta, self._schedule(None, "vo").growth)
            # Only the last set's certificate matters: no warning per set.
            coef, result, n_corrections, ok = self._solve_support(solved, solved, family, rng,
                                                                  schedule, warn=False)
            runs.append((columns, lam, quad, family, result))
            finished.append(ok)
            return coef, (result.n_iter, n_corrections)

        coef, columns, infos, certified = solve_on_working_sets(
            lambda w: kkt_excess(linear, w, nonnegative=self.positive), solve_on, first,
            linear.n_params)
        # q's precision comes from the last set VAN ran on.
        columns, lam_w, quad, inner, result = runs[-1]
        n_corrections = sum(i[1] for i in infos)
        if not (finished[-1] and certified) and result.converged:
            _warn_uncertified(n_corrections)
        # P_W = diag(lam_W) + c G_W with c the sum of the accepted betas (VO: keep = 1).
        c = float(sum(h["beta"] for h in result.history))
        lam = unit_predictor_precision(linear.X, linear.sample_weight, "diag")
        lam[columns] = np.maximum(np.diag(inner.precision) - c * np.diag(quad.G), lam_w)
        family = family_from_parts(self.covariance_, coef, lam, c * linear.weights, linear.X, free)
        return coef, family, sum(i[0] for i in infos), n_corrections

    @staticmethod
    def _noise_floor(quadratic, total_weight):
        """The smallest noise variance VI divides by: float64 resolution of the
        targets' mean square (a perfect fit must not give ``f / 0``)."""
        return np.finfo(np.float64).eps * max(2.0 * quadratic.c / max(total_weight, 1e-300), 1e-300)

    def get_covariance(self):
        """The covariance matrix of ``coef_`` under ``q``, whatever ``covariance`` is.

        ``sigma_`` holds it only for ``covariance="full"`` (the marginal variances
        otherwise); this forms it from the fitted precision.

        Returns
        -------
        covariance : ndarray of shape (n_features, n_features)
            The covariance of ``coef_``.

        Raises
        ------
        MemoryError
            Where the matrix would exceed skvan's memory budget (1 GiB).
        """
        return super().get_covariance()[0]

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

        With ``stream_size=None`` (sequential Bayes: every row is new) each call
        updates ``q = N(m_0, P_0^-1)`` by ``f_B``, the objective of the batch
        alone (its squared loss plus its share ``alpha * sum_B s_i`` of the L1
        term): VI on ``f_B`` with ``q`` as its prior, solved to ``tol`` in at most
        ``max_iter`` iterations of damping ``beta``, whose first iteration is
        ``P <- P_0 + beta E_q[hess f_B]``, ``mu <- m_0 - beta P^-1 E_q[grad f_B]``
        (all that is made with ``expectation="mc"`` or ``hessian="gauss_newton"``).
        With ``stream_size=N`` (batches from ``N`` rows passed over repeatedly)
        ``f_B`` is scaled by ``N / n_batch`` and the step is VO on sVAN's averaging
        schedule, so that the passes converge to the Lasso fit on the ``N`` rows. The first call starts from
        ``N(0, s^2 I)``, ``s^2`` giving the batch's linear predictors unit variance
        on average. ``coef_`` is the mean of ``q`` (no exact zeros: the finish of
        :meth:`fit` needs all the data); ``noise_variance_`` is the weighted mean
        of the squared residuals of each batch before its step.

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
        X, y = validate_data(
            self, X, y, **CHECK_X, y_numeric=True, reset=first
        )
        y = np.asarray(y, dtype=np.float64)
        sample_weight = check_sample_weight(sample_weight, X)
        f = self._objective(X, y, sample_weight)
        if first:
            self._resolve_covariance(X, stream=True)
            family = self._initial_family(f)
            self._start_stream(0.0, 0.0)
            self.n_iter_, self.n_corrections_ = 0, 0
        else:
            self._check_streamable()
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
        self._stream_rss, self._stream_weight = rss, weight

    # -- prediction -------------------------------------------------------------------
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
