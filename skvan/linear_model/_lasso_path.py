"""The Lasso along a grid of alphas (``van_lasso_path``) and its cross-validation
(``VANLassoCV``), with ``q`` at one alpha starting the next."""

import contextlib
import time
import warnings
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from joblib import Parallel, delayed
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import check_cv
from sklearn.utils import check_random_state
from sklearn.utils.sparsefuncs import mean_variance_axis

from .._blas import _one_blas_thread
from .._compat import (
    Interval,
    _fit_context,
    check_sample_weight,
    validate_data,
    validate_params,
)
from .._dask import reject_dask
from .._data import dot, tdot
from ..van import Design
from ._base import CHECK_X, GRAM, check_single_target
from ._enet import VANElasticNet
from ._lasso import VANLassoRegressor


def _alpha_grid(X, y, eps, n_alphas, sample_weight=None, l1_ratio=1.0, fit_intercept=False,
                positive=False):
    """scikit-learn's grid (``sklearn.linear_model._coordinate_descent._alpha_grid``,
    the same arithmetic, so that the alphas are equal to the last bit): ``n_alphas``
    values log-spaced from ``alpha_max``, the smallest alpha with every coefficient
    zero, down to ``eps * alpha_max``. ``alpha_max = max_j |c_j| / (n l1_ratio)``
    for the correlations ``c = X^T W y`` (with an intercept, of centred data:
    ``X^T W (y - ybar) - xbar sum(W (y - ybar))``), ``n`` the total weight; with
    ``positive`` only positive correlations count, ``max(0, max_j c_j)``.
    ``sample_weight`` None is unit weights, as in scikit-learn (whose arithmetic
    then differs in the last bits from explicit ones)."""
    if fit_intercept:
        y = y - np.average(y, weights=sample_weight)
        mean = (mean_variance_axis(X, axis=0, weights=sample_weight)[0] if sp.issparse(X)
                else np.average(X, axis=0, weights=sample_weight))
    yw = y if sample_weight is None else y * sample_weight
    correlation = np.asarray(X.T @ yw).ravel()
    if fit_intercept:
        correlation = correlation - mean * np.sum(yw)
    n_samples = X.shape[0] if sample_weight is None else sample_weight.sum()
    if positive:
        alpha_max = max(0.0, float(np.max(correlation))) / (n_samples * l1_ratio)
    else:
        alpha_max = float(np.sqrt(np.max(correlation**2))) / (n_samples * l1_ratio)
    if alpha_max <= np.finfo(np.float64).resolution:
        return np.full(n_alphas, np.finfo(np.float64).resolution)
    return np.geomspace(alpha_max, alpha_max * eps, num=n_alphas)


def _dual_gap(X, y, coef, alpha, ridge=0.0):
    """The duality gap of ``1/(2n) ||y - X w||^2 + alpha ||w||_1 + ridge ||w||^2 / 2``
    at ``coef``, as scikit-learn's coordinate descent reports it (its dual point
    is the residual, rescaled to be feasible)."""
    n = X.shape[0]
    residual = y - np.asarray(dot(X, coef)).ravel()
    correlation = np.asarray(tdot(X, residual)).ravel() / n - ridge * coef
    dual_norm = float(np.max(np.abs(correlation))) if coef.size else 0.0
    scale = alpha / dual_norm if dual_norm > alpha else 1.0
    r2 = float(residual @ residual) / n
    w2 = float(coef @ coef)
    return max(0.5 * r2 * (1.0 + scale**2) + alpha * float(np.sum(np.abs(coef)))
               + 0.5 * ridge * w2 * (1.0 + scale**2) - scale * float(residual @ y) / n, 0.0)


def _path(estimator, X, y, alphas, sample_weight=None, return_std=False):
    """``estimator`` (a VANLassoRegressor, modified in place) solved at each alpha
    of ``alphas`` in turn by its engine (:meth:`~skvan.van.LassoSolver.path`: the
    problem built once, each alpha from the previous one's solution). Returns
    coefficients ``(n_alphas, n_features)``, intercepts, standard deviations (or
    None) and VAN iterations. Under VO without ``return_std`` only the
    coefficients are read (the lean path), and the estimator's fitted
    attributes are left unset; otherwise each alpha sets them, as a fit does."""
    sample_weight = check_sample_weight(sample_weight, X)
    estimator.n_features_in_ = X.shape[1]  # X is validated by the caller
    estimator.alpha = float(alphas[0])
    estimator._check_solver_params()
    estimator._resolve_covariance(X)
    engine = estimator._engine()
    engine.check(X.shape[0])
    rng = check_random_state(estimator.random_state)
    lean = not return_std and estimator.objective == "vo"
    steps = engine.path(Design(X, estimator.fit_intercept), y, sample_weight, alphas, rng,
                        on_rows=estimator.covariance_ in GRAM, lean=lean)
    coefs, intercepts, stds, n_iter = [], [], [], []
    # A lean path is KKT work from alpha to alpha: one BLAS thread for all of it.
    n_params = X.shape[1] + int(estimator.fit_intercept)
    with _one_blas_thread(n_params) if lean else contextlib.nullcontext():
        for problem, fit in steps:
            if lean:
                coef, intercept = (c[0] for c in estimator._coefficients(fit.coef,
                                                                          problem.column_scale))
                n_iter.append(fit.n_iter)
            else:
                estimator.alpha = problem.alpha
                estimator._finish(engine, problem, fit, rng)
                coef, intercept = estimator.coef_, estimator.intercept_
                n_iter.append(int(estimator.n_iter_))
                if return_std:
                    sigma = estimator.sigma_
                    stds.append(np.sqrt(np.maximum(sigma if sigma.ndim == 1 else np.diag(sigma), 0)))
            coefs.append(coef.copy())
            intercepts.append(float(intercept))
    return (np.array(coefs), np.array(intercepts), np.array(stds) if return_std else None,
            np.array(n_iter))


@validate_params(
    {
        "X": ["array-like", "sparse matrix"],
        "y": ["array-like"],
        "eps": [Interval(Real, 0, None, closed="neither")],
        "n_alphas": [Interval(Integral, 1, None, closed="left")],
        "alphas": ["array-like", None],
        "return_n_iter": ["boolean"],
        "return_std": ["boolean"],
    },
    prefer_skip_nested_validation=True,
)
def van_lasso_path(X, y, *, eps=1e-3, n_alphas=100, alphas=None, return_n_iter=False,
                   return_std=False, **params):
    """The Lasso solved by VAN along a grid of alphas (scikit-learn's ``lasso_path``).

    For each ``alpha`` (largest first) it minimises, as ``lasso_path`` does,
    without an intercept (centre ``X`` and ``y`` first)::

        1 / (2 n) ||y - X w||^2 + alpha ||w||_1

    with :class:`VANLassoRegressor`'s exact zeros and KKT certificate. The
    problem is built once for the whole path (``X^T X``, or its columns as the
    supports need them on wide data); each alpha starts from the previous
    alpha's solution (Notes).

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        Training data.
    y : array-like of shape (n_samples,)
        Targets.
    eps : float, default=1e-3
        ``alpha_min / alpha_max`` of the grid, ``> 0``.
    n_alphas : int, default=100
        Number of alphas on the grid, ``>= 1``.
    alphas : array-like or None, default=None
        The alphas (used in decreasing order); None: the grid from ``eps`` and
        ``n_alphas``, log-spaced down from ``max_j |x_j^T y| / n``, where every
        coefficient is zero.
    return_n_iter : bool, default=False
        Also return the VAN iterations per alpha.
    return_std : bool, default=False
        Also return the marginal standard deviations of ``q`` per alpha; with
        ``objective="vi"`` the posterior's, bands around the path.
    **params
        Parameters of :class:`VANLassoRegressor` (``objective``, ``covariance``,
        ``max_iter``, ``tol``, ...); not ``alpha`` or ``fit_intercept``.

    Returns
    -------
    alphas : ndarray of shape (n_alphas,)
        The alphas, decreasing.
    coefs : ndarray of shape (n_features, n_alphas)
        The coefficients at each alpha.
    dual_gaps : ndarray of shape (n_alphas,)
        Duality gaps of the objective above at each solution.
    n_iters : ndarray of shape (n_alphas,)
        If ``return_n_iter``.
    stds : ndarray of shape (n_features, n_alphas)
        If ``return_std``.

    See Also
    --------
    sklearn.linear_model.lasso_path : The same path by coordinate descent.
    VANLassoCV : The alpha chosen by cross-validation along this path.

    Notes
    -----
    The path is :class:`~skvan.van.LassoSolver`'s, warm-started from alpha to
    alpha on the problem built once. Under VO without ``return_std`` only the
    coefficients are read: the first alpha starts from 0 (the solution from
    ``alpha_max`` up, which the KKT check certifies), and while the support has at
    most 64 coefficients one homotopy (LARS's Lasso path,
    :func:`~skvan.sparse.kkt_path`) gives every alpha between two kinks with no
    check of its own. Beyond that, each alpha starts from the previous one's
    solution and corrects its support (the violators of the KKT conditions
    enter several at once, a coefficient whose sign flips leaves; each
    correction one solve on the support); where the corrections fail, the
    homotopy from the previous alpha (:func:`~skvan.sparse.kkt_follow`); where
    that fails too, VAN from the previous mean with the precision restarted from
    its initial scale. A solution that passes the check is exact (``n_iters``
    0 where no VAN iteration was needed). With ``objective="vi"`` each alpha's
    posterior is fitted from its solution; under VO the marginal standard
    deviations (``return_std``) are those of the carried ``q``.

    References
    ----------
    M. E. Khan, W. Lin, V. Tangkaratt, Z. Liu and D. Nielsen, "Variational
    Adaptive-Newton Method for Explorative Learning", AISTATS 2018.

    Examples
    --------
    >>> from sklearn.datasets import load_diabetes
    >>> from skvan.linear_model import van_lasso_path
    >>> X, y = load_diabetes(return_X_y=True)
    >>> X, y = X - X.mean(axis=0), y - y.mean()
    >>> alphas, coefs, gaps = van_lasso_path(X, y, n_alphas=5)
    >>> coefs.shape, [int((c != 0).sum()) for c in coefs.T]
    ((10, 5), [0, 4, 7, 9, 10])
    """
    return _van_path("van_lasso_path", VANLassoRegressor, X, y, eps, n_alphas, alphas,
                     return_n_iter, return_std, params)


def _van_path(caller, Estimator, X, y, eps, n_alphas, alphas, return_n_iter, return_std, params):
    """:func:`van_lasso_path` and :func:`van_enet_path` for ``Estimator``."""
    for name in ("alpha", "fit_intercept"):
        if name in params:
            raise TypeError(f"{caller} sets {name} itself; do not pass it.")
    estimator = Estimator(fit_intercept=False, **params)
    estimator._validate_params()  # what fit would check, since the path does not call fit
    X, y = validate_data(estimator, X, y, **CHECK_X, y_numeric=True)
    y = np.asarray(y, dtype=np.float64)
    l1_ratio = getattr(estimator, "l1_ratio", 1.0)
    if alphas is None:
        if l1_ratio <= 0:
            raise ValueError("The automatic alpha grid needs l1_ratio > 0; pass the alphas.")
        alphas = _alpha_grid(X, y, eps, n_alphas, l1_ratio=l1_ratio,
                             positive=getattr(estimator, "positive", False))
    alphas = np.sort(np.asarray(alphas, dtype=np.float64).ravel())[::-1]
    if alphas.size == 0 or np.any(~np.isfinite(alphas)) or np.any(alphas <= 0):
        raise ValueError("alphas must be finite and positive.")
    coefs, _, stds, n_iter = _path(estimator, X, y, alphas, return_std=return_std)
    gaps = np.array([_dual_gap(X, y, c, a * l1_ratio, a * (1.0 - l1_ratio))
                     for c, a in zip(coefs, alphas)])
    out = [alphas, coefs.T, gaps]
    if return_n_iter:
        out.append(n_iter)
    if return_std:
        out.append(stds.T)
    return tuple(out)


@validate_params(
    {
        "X": ["array-like", "sparse matrix"],
        "y": ["array-like"],
        "l1_ratio": [Interval(Real, 0, 1, closed="both")],
        "eps": [Interval(Real, 0, None, closed="neither")],
        "n_alphas": [Interval(Integral, 1, None, closed="left")],
        "alphas": ["array-like", None],
        "return_n_iter": ["boolean"],
        "return_std": ["boolean"],
    },
    prefer_skip_nested_validation=True,
)
def van_enet_path(X, y, *, l1_ratio=0.5, eps=1e-3, n_alphas=100, alphas=None, return_n_iter=False,
                  return_std=False, **params):
    """The elastic net solved by VAN along a grid of alphas (scikit-learn's ``enet_path``).

    For each ``alpha`` (largest first), without an intercept (centre ``X`` and
    ``y`` first)::

        1 / (2 n) ||y - X w||^2 + alpha l1_ratio ||w||_1 + alpha (1 - l1_ratio) ||w||^2 / 2

    by :class:`VANElasticNet`, each alpha starting from the previous one's ``q``
    as in :func:`van_lasso_path`.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        Training data.
    y : array-like of shape (n_samples,)
        Targets.
    l1_ratio : float, default=0.5
        The L1 share, in ``[0, 1]`` (0 needs ``alphas``).
    eps : float, default=1e-3
        ``alpha_min / alpha_max`` of the grid, ``> 0``.
    n_alphas : int, default=100
        Number of alphas on the grid, ``>= 1``.
    alphas : array-like or None, default=None
        The alphas (used in decreasing order); None: scikit-learn's grid, down
        from ``max_j |x_j^T y| / (n l1_ratio)``.
    return_n_iter : bool, default=False
        Also return the VAN iterations per alpha.
    return_std : bool, default=False
        Also return the marginal standard deviations of ``q`` per alpha.
    **params
        Parameters of :class:`VANElasticNet`; not ``alpha`` or ``fit_intercept``.

    Returns
    -------
    alphas : ndarray of shape (n_alphas,)
        The alphas, decreasing.
    coefs : ndarray of shape (n_features, n_alphas)
        The coefficients at each alpha.
    dual_gaps : ndarray of shape (n_alphas,)
        Duality gaps of the objective above at each solution.
    n_iters : ndarray of shape (n_alphas,)
        If ``return_n_iter``.
    stds : ndarray of shape (n_features, n_alphas)
        If ``return_std``.

    See Also
    --------
    sklearn.linear_model.enet_path : The same path by coordinate descent.
    van_lasso_path : ``l1_ratio=1``, with ``X^T X`` formed once.

    Notes
    -----
    The ridge rows of :class:`VANElasticNet` change with alpha, so ``X^T X`` is
    formed again at each alpha.

    References
    ----------
    H. Zou and T. Hastie, "Regularization and variable selection via the elastic
    net", JRSS B 67, 2005.

    Examples
    --------
    >>> from sklearn.datasets import load_diabetes
    >>> from skvan.linear_model import van_enet_path
    >>> X, y = load_diabetes(return_X_y=True)
    >>> X, y = X - X.mean(axis=0), y - y.mean()
    >>> alphas, coefs, gaps = van_enet_path(X, y, l1_ratio=0.8, n_alphas=4)
    >>> coefs.shape
    (10, 4)
    """
    return _van_path("van_enet_path", VANElasticNet, X, y, eps, n_alphas, alphas, return_n_iter,
                     return_std, dict(params, l1_ratio=l1_ratio))


def _fold_mse(estimator, X, y, sample_weight, train, test, alphas):
    """Held-out weighted mean squared error along the path fitted on ``train``
    (with the intercept as :class:`VANLassoRegressor` fits it); returns ``(mse,
    n_iter, seconds)``, the errors and VAN iterations per alpha and the path's time."""
    start = time.perf_counter()
    w = sample_weight
    coefs, intercepts, _, n_iter = _path(clone(estimator), X[train], y[train], alphas, w[train])
    predictions = np.asarray(X[test] @ coefs.T) + intercepts
    errors = (predictions - y[test][:, None]) ** 2
    return np.average(errors, axis=0, weights=w[test]), n_iter, time.perf_counter() - start


def _report(name, l1_ratio, alphas, folds, verbose):
    """``verbose``'s lines for one grid: per fold, and (``verbose >= 2``) per alpha."""
    share = "" if l1_ratio is None else f" l1_ratio={l1_ratio:g}"
    for k, (mse, n_iter, seconds) in enumerate(folds):
        best = int(np.argmin(mse))
        print(f"[{name}]{share} fold {k + 1}/{len(folds)}: {len(alphas)} alphas in "
              f"{seconds:.2f} s, {int(np.sum(n_iter))} VAN iterations; best alpha="
              f"{alphas[best]:.4g} (mse {mse[best]:.4g})")
        if verbose >= 2:
            for alpha, error, iterations in zip(alphas, mse, n_iter):
                print(f"    alpha={alpha:.4g}  mse={error:.6g}  n_iter={int(iterations)}")


class VANLassoCV(VANLassoRegressor):
    """The Lasso by VAN with ``alpha`` chosen by cross-validation (``LassoCV``).

    For each fold, the Lasso path is solved by VAN on the training rows (the
    Gram matrix formed once per fold, each alpha starting from the previous
    one's ``q``; :func:`van_lasso_path`) and scored by the mean squared error on
    the held-out rows. ``alpha_`` minimises the mean over folds of that error,
    and the model is refitted on all rows at ``alpha_``. The objective at each
    alpha is scikit-learn's ``1/(2n) ||y - X w - b||^2 + alpha ||w||_1``.

    Parameters
    ----------
    eps : float, default=1e-3
        ``alpha_min / alpha_max`` of the grid, ``> 0``.
    alphas : int or array-like, default=100
        Number of alphas on the grid (``>= 1``), or the alphas themselves.
    positive : bool, default=False
        Constrain the coefficients to be ``>= 0`` (:class:`VANLassoRegressor`).
    fit_intercept : bool, default=True
        Whether to fit an intercept.
    cv : int, cross-validation generator or iterable, default=None
        As in scikit-learn (None: 5-fold).
    n_jobs : int or None, default=None
        Folds fitted in parallel by joblib.
    beta : float, default=1.0
        As in :class:`VANLassoRegressor`.
    beta_growth : float or "auto", default="auto"
        As in :class:`VANLassoRegressor`.
    covariance : {"auto", "full", "dual", "operator", "diag"}, default="auto"
        As in :class:`VANLassoRegressor`.
    hessian : {"exact", "gauss_newton"}, default="exact"
        As in :class:`VANLassoRegressor`.
    expectation : {"exact", "quadrature", "mc"}, default="exact"
        As in :class:`VANLassoRegressor`.
    n_mc_samples : int, default=10
        As in :class:`VANLassoRegressor`.
    objective : {"vo", "vi"}, default="vo"
        As in :class:`VANLassoRegressor` (with "vi" the refitted model is a
        posterior; the folds score its mean).
    max_iter : int, default=1000
        As in :class:`VANLassoRegressor`, per alpha.
    tol : float, default=1e-4
        As in :class:`VANLassoRegressor`.
    random_state : int, RandomState instance or None, default=None
        As in :class:`VANLassoRegressor`.
    verbose : int, default=0
        0: silent; 1: a line per fold (time, iterations, its best alpha) and the
        choice; 2: also a line per alpha; 3 and more: also the solver's lines
        (``verbose - 2``) in every fit.

    Attributes
    ----------
    alpha_ : float
        The chosen alpha.
    alphas_ : ndarray of shape (n_alphas,)
        The grid, decreasing.
    mse_path_ : ndarray of shape (n_alphas, n_folds)
        Held-out mean squared error per alpha and fold.
    coef_, intercept_, sigma_, precision_, covariance_, noise_variance_, n_iter_,
    n_corrections_, n_features_in_, feature_names_in_
        Those of :class:`VANLassoRegressor` refitted at ``alpha_`` on all rows.
    dual_gap_ : float
        Duality gap of the refitted model (on the centred data).

    See Also
    --------
    van_lasso_path : The path each fold solves.
    sklearn.linear_model.LassoCV : The same selection by coordinate descent.

    Notes
    -----
    The grid is scikit-learn's, from the data as given (centred when
    ``fit_intercept``), so that on the same folds ``alphas_`` and ``alpha_`` are
    ``LassoCV``'s. A fold's non-convergence warnings are silenced; the refit on
    all rows warns for the model kept. There is no ``partial_fit``:
    cross-validation needs all rows.

    References
    ----------
    M. E. Khan, W. Lin, V. Tangkaratt, Z. Liu and D. Nielsen, "Variational
    Adaptive-Newton Method for Explorative Learning", AISTATS 2018.

    Examples
    --------
    >>> from sklearn.datasets import load_diabetes
    >>> from skvan.linear_model import VANLassoCV
    >>> X, y = load_diabetes(return_X_y=True)
    >>> reg = VANLassoCV(alphas=20, cv=3).fit(X, y)
    >>> reg.mse_path_.shape, bool(reg.alphas_[-1] <= reg.alpha_ <= reg.alphas_[0])
    ((20, 3), True)
    """

    _parameter_constraints: dict = {
        **{k: v for k, v in VANLassoRegressor._parameter_constraints.items()
           if k not in ("alpha", "batch_size", "stream_size", "warm_start")},
        "eps": [Interval(Real, 0, None, closed="neither")],
        "alphas": [Interval(Integral, 1, None, closed="left"), "array-like"],
        "cv": ["cv_object"],
        "n_jobs": [Integral, None],
    }

    def __init__(
        self,
        *,
        eps=1e-3,
        alphas=100,
        positive=False,
        fit_intercept=True,
        cv=None,
        n_jobs=None,
        beta=1.0,
        beta_growth="auto",
        covariance="auto",
        hessian="exact",
        expectation="exact",
        n_mc_samples=10,
        objective="vo",
        max_iter=1000,
        tol=1e-4,
        random_state=None,
        verbose=0,
    ):
        self.eps = eps
        self.alphas = alphas
        self.positive = positive
        self.fit_intercept = fit_intercept
        self.cv = cv
        self.n_jobs = n_jobs
        self.beta = beta
        self.beta_growth = beta_growth
        self.covariance = covariance
        self.hessian = hessian
        self.expectation = expectation
        self.n_mc_samples = n_mc_samples
        self.objective = objective
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state
        self.verbose = verbose

    # VANLassoRegressor's parameters that VANLassoCV fixes.
    alpha = 1.0
    batch_size = None
    stream_size = None
    warm_start = False

    #: The parameters the folds' and the refit's estimator share with this one.
    _SHARED = ("positive", "fit_intercept", "beta", "beta_growth", "covariance", "hessian", "expectation",
               "n_mc_samples", "objective", "max_iter", "tol", "random_state", "verbose")

    def _l1_ratios(self):
        """The L1 shares searched: the Lasso's alone."""
        return [1.0]

    def _shared(self):
        """The parameters the folds' and the refit's estimator take from this one
        (the solver prints its lines from ``verbose=3`` on)."""
        shared = {name: getattr(self, name) for name in self._SHARED}
        shared["verbose"] = max(self.verbose - 2, 0)
        return shared

    def _base(self, l1_ratio):
        """The estimator each fold and the refit use."""
        return VANLassoRegressor(**self._shared())

    def _grid(self, X, y, sample_weight, l1_ratio):
        """The alphas: ``alphas`` itself, or scikit-learn's grid of that many down
        from ``max_j |x_j^T W (y - ybar)| / (n l1_ratio)`` (:func:`_alpha_grid`)."""
        if not isinstance(self.alphas, Integral):
            alphas = np.sort(np.asarray(self.alphas, dtype=np.float64).ravel())[::-1]
            if alphas.size == 0 or np.any(~(alphas > 0)) or np.any(~np.isfinite(alphas)):
                raise ValueError("alphas must be finite and positive.")
            return alphas
        if l1_ratio <= 0:
            raise ValueError("The automatic alpha grid needs l1_ratio > 0; pass the alphas.")
        return _alpha_grid(X, y, self.eps, self.alphas, sample_weight, l1_ratio,
                           self.fit_intercept, self.positive)

    def _set_grid_attributes(self, alphas, mse_paths, l1_ratio):
        """``alphas_`` and ``mse_path_`` for the one L1 share searched."""
        self.alphas_, self.mse_path_ = alphas[0], mse_paths[0]

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Choose ``alpha`` by cross-validation, then fit on all rows.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data.
        y : array-like of shape (n_samples,)
            Targets.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights, in the fits and in the held-out errors.

        Returns
        -------
        self : object
            Fitted estimator.
        """
        reject_dask(self, X)
        check_single_target(self, y)
        X, y = validate_data(self, X, y, **CHECK_X, y_numeric=True)
        y = np.asarray(y, dtype=np.float64)
        given = sample_weight  # None: the grid's arithmetic is scikit-learn's unweighted one
        sample_weight = check_sample_weight(sample_weight, X)
        folds = list(check_cv(self.cv).split(X, y))
        ratios = self._l1_ratios()
        grids, paths = [], []
        for l1_ratio in ratios:
            grids.append(self._grid(X, y, None if given is None else sample_weight, l1_ratio))
            base = self._base(l1_ratio)
            with warnings.catch_warnings():
                # a fold's path warns per alpha; the refit below warns for the model kept
                warnings.simplefilter("ignore", ConvergenceWarning)
                results = Parallel(n_jobs=self.n_jobs)(
                    delayed(_fold_mse)(base, X, y, sample_weight, train, test, grids[-1])
                    for train, test in folds)
            if self.verbose:
                searched = l1_ratio if "l1_ratio" in self.get_params() else None
                _report(type(self).__name__, searched, grids[-1], results, self.verbose)
            paths.append(np.array([mse for mse, _, _ in results]).T)
        means = np.array([path.mean(axis=1) for path in paths])
        best_ratio, best_alpha = np.unravel_index(int(np.argmin(means)), means.shape)
        self.alpha_ = float(grids[best_ratio][best_alpha])
        if self.verbose:
            print(f"[{type(self).__name__}] alpha_={self.alpha_:.4g}, refit on all rows")
        self._set_grid_attributes(np.array(grids), np.array(paths), ratios[best_ratio])
        model = self._base(ratios[best_ratio]).set_params(alpha=self.alpha_).fit(X, y, sample_weight)
        params = set(model.get_params())
        for name, value in vars(model).items():  # the refitted model's state is ours
            if name not in params:
                setattr(self, name, value)
        # On the centred problem (the residual sums to zero at the optimal intercept).
        l1_ratio = getattr(self, "l1_ratio_", 1.0)
        self.dual_gap_ = _dual_gap(X, y - self.intercept_, self.coef_, self.alpha_ * l1_ratio,
                                   self.alpha_ * (1.0 - l1_ratio))
        return self

    @property
    def partial_fit(self):
        """Not available: cross-validation needs all rows (stream into
        :class:`VANLassoRegressor` instead)."""
        raise AttributeError("VANLassoCV has no partial_fit; stream into VANLassoRegressor.")


class VANElasticNetCV(VANLassoCV):
    """The elastic net by VAN with ``alpha`` and ``l1_ratio`` chosen by cross-validation.

    scikit-learn's ``ElasticNetCV`` by VAN.

    As :class:`VANLassoCV`, for each ``l1_ratio`` in turn, on
    :class:`VANElasticNet`'s objective
    ``1/(2n) ||y - X w - b||^2 + alpha l1_ratio ||w||_1 + alpha (1 - l1_ratio) ||w||^2 / 2``;
    the pair with the smallest mean held-out error is refitted on all rows.

    Parameters
    ----------
    l1_ratio : float or array-like, default=0.5
        The L1 share(s) searched, in ``[0, 1]`` (with ``l1_ratio=0`` pass the alphas).
    eps : float, default=1e-3
        ``alpha_min / alpha_max`` of each grid, ``> 0``.
    alphas : int or array-like, default=100
        Number of alphas on each grid (``>= 1``), or the alphas themselves.
    positive : bool, default=False
        Constrain the coefficients to be ``>= 0`` (:class:`VANLassoRegressor`).
    fit_intercept : bool, default=True
        Whether to fit an intercept.
    cv : int, cross-validation generator or iterable, default=None
        As in scikit-learn (None: 5-fold).
    n_jobs : int or None, default=None
        Folds fitted in parallel by joblib.
    beta : float, default=1.0
        As in :class:`VANLassoRegressor`.
    beta_growth : float or "auto", default="auto"
        As in :class:`VANLassoRegressor`.
    covariance : {"auto", "full", "dual", "operator", "diag"}, default="auto"
        As in :class:`VANLassoRegressor`.
    hessian : {"exact", "gauss_newton"}, default="exact"
        As in :class:`VANLassoRegressor`.
    expectation : {"exact", "quadrature", "mc"}, default="exact"
        As in :class:`VANLassoRegressor`.
    n_mc_samples : int, default=10
        As in :class:`VANLassoRegressor`.
    objective : {"vo", "vi"}, default="vo"
        As in :class:`VANLassoRegressor`.
    max_iter : int, default=1000
        As in :class:`VANLassoRegressor`, per alpha.
    tol : float, default=1e-4
        As in :class:`VANLassoRegressor`.
    random_state : int, RandomState instance or None, default=None
        As in :class:`VANLassoRegressor`.
    verbose : int, default=0
        0: silent; 1: a line per fold (time, iterations, its best alpha) and the
        choice; 2: also a line per alpha; 3 and more: also the solver's lines
        (``verbose - 2``) in every fit.

    Attributes
    ----------
    alpha_ : float
        The chosen alpha.
    l1_ratio_ : float
        The chosen L1 share.
    alphas_ : ndarray of shape (n_alphas,) or (n_l1_ratio, n_alphas)
        The grids, decreasing (one per ``l1_ratio`` when a list is given).
    mse_path_ : ndarray of shape (n_alphas, n_folds) or (n_l1_ratio, n_alphas, n_folds)
        Held-out mean squared errors.
    coef_, intercept_, sigma_, precision_, covariance_, noise_variance_, n_iter_,
    n_corrections_, n_features_in_, feature_names_in_
        Those of :class:`VANElasticNet` refitted on all rows.
    dual_gap_ : float
        Duality gap of the refitted model (on the centred data).

    See Also
    --------
    VANElasticNet : The model at one ``(alpha, l1_ratio)``.
    sklearn.linear_model.ElasticNetCV : The same selection by coordinate descent.

    Notes
    -----
    Unlike the Lasso path, an elastic-net path forms ``X^T X`` again at each
    alpha: the ridge rows change with alpha (:class:`VANElasticNet`).

    References
    ----------
    H. Zou and T. Hastie, "Regularization and variable selection via the elastic
    net", JRSS B 67, 2005.

    Examples
    --------
    >>> from sklearn.datasets import load_diabetes
    >>> from skvan.linear_model import VANElasticNetCV
    >>> X, y = load_diabetes(return_X_y=True)
    >>> reg = VANElasticNetCV(l1_ratio=[0.5, 0.9], alphas=10, cv=3).fit(X, y)
    >>> reg.mse_path_.shape, reg.l1_ratio_ in (0.5, 0.9)
    ((2, 10, 3), True)
    """

    _parameter_constraints: dict = {
        **VANLassoCV._parameter_constraints,
        "l1_ratio": [Interval(Real, 0, 1, closed="both"), "array-like"],
    }

    def __init__(
        self,
        *,
        l1_ratio=0.5,
        eps=1e-3,
        alphas=100,
        positive=False,
        fit_intercept=True,
        cv=None,
        n_jobs=None,
        beta=1.0,
        beta_growth="auto",
        covariance="auto",
        hessian="exact",
        expectation="exact",
        n_mc_samples=10,
        objective="vo",
        max_iter=1000,
        tol=1e-4,
        random_state=None,
        verbose=0,
    ):
        super().__init__(eps=eps, alphas=alphas, positive=positive, fit_intercept=fit_intercept,
                         cv=cv, n_jobs=n_jobs,
                         beta=beta, beta_growth=beta_growth, covariance=covariance, hessian=hessian,
                         expectation=expectation, n_mc_samples=n_mc_samples, objective=objective,
                         max_iter=max_iter, tol=tol, random_state=random_state, verbose=verbose)
        self.l1_ratio = l1_ratio

    def _l1_ratios(self):
        ratios = np.atleast_1d(np.asarray(self.l1_ratio, dtype=np.float64)).ravel()
        if ratios.size == 0 or np.any((ratios < 0) | (ratios > 1)):
            raise ValueError(f"l1_ratio must be in [0, 1], got {self.l1_ratio!r}.")
        return [float(r) for r in ratios]

    def _base(self, l1_ratio):
        return VANElasticNet(l1_ratio=l1_ratio, **self._shared())

    def _set_grid_attributes(self, alphas, mse_paths, l1_ratio):
        single = np.ndim(self.l1_ratio) == 0
        self.alphas_ = alphas[0] if single else alphas
        self.mse_path_ = mse_paths[0] if single else mse_paths
        self.l1_ratio_ = l1_ratio
