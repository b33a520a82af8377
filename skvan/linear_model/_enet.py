"""The elastic net by VAN: the Lasso's engine (:class:`~skvan.van.LassoSolver`)
with an :class:`~skvan.objectives.ElasticNetPenalty`, its ridge folded into the
least squares."""

from numbers import Real

from .._compat import Interval
from ._lasso import VANLassoRegressor


class VANElasticNet(VANLassoRegressor):
    """Elastic net fitted by the Variational Adaptive-Newton method.

    Minimises the objective of :class:`sklearn.linear_model.ElasticNet`
    (intercept not penalised), multiplied by the total sample weight ``n``::

        f(w, b) = 1/2 sum_i s_i (y_i - x_i^T w - b)^2
                  + n alpha l1_ratio ||w||_1 + n alpha (1 - l1_ratio) ||w||^2 / 2

    over a Gaussian ``q(w, b)``, with :class:`VANLassoRegressor`'s solver, exact
    zeros and KKT certificate: the ridge part is the least squares of ``p`` extra
    rows ``sqrt(n alpha (1 - l1_ratio)) e_j`` with target 0 (the classic
    augmentation, Zou and Hastie 2005), so the problem is a Lasso in ``[X; r I]``
    and every exact expectation of the L1 part is the Lasso's. Under
    ``objective="vi"`` the ridge acts as a Gaussian prior, scaled like the
    likelihood by ``1 / noise_variance_`` (the Bayesian elastic net).

    Parameters
    ----------
    alpha : float, default=1.0
        Penalty strength, ``>= 0``.
    l1_ratio : float, default=0.5
        The L1 share of the penalty, in ``[0, 1]`` (1: the Lasso).
    positive : bool, default=False
        Constrain the coefficients to be ``>= 0``, as in
        :class:`VANLassoRegressor` (an exact penalty; VO, exact expectations).
    fit_intercept : bool, default=True
        Whether to fit an (unpenalised) intercept.
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
        As in :class:`VANLassoRegressor`.
    tol : float, default=1e-4
        As in :class:`VANLassoRegressor`.
    warm_start : bool, default=False
        As in :class:`VANLassoRegressor`.
    random_state : int, RandomState instance or None, default=None
        As in :class:`VANLassoRegressor`.
    verbose : int, default=0
        As in :class:`VANLassoRegressor`.

    Attributes
    ----------
    coef_, intercept_, sigma_, precision_, covariance_, noise_variance_, n_iter_,
    n_corrections_, n_features_in_, feature_names_in_
        As in :class:`VANLassoRegressor`; ``precision_`` and ``covariance_`` are
        those of the augmented problem (its precision includes the ridge).

    See Also
    --------
    VANLassoRegressor : ``l1_ratio=1``.
    skvan.objectives.ElasticNetPenalty : The penalty, its L1 and L2 parts.
    sklearn.linear_model.ElasticNet : The same objective by coordinate descent.

    Notes
    -----
    The ``p`` ridge rows make the problem taller than wide, so the working sets
    of a wide Lasso are not used and ``X^T X`` (``p x p``) is formed. There is no
    ``partial_fit`` and no ``batch_size``: a minibatch would sample the ridge
    rows as if they were data. ``positive=True`` is supported (not with
    ``objective="vi"``).

    References
    ----------
    H. Zou and T. Hastie, "Regularization and variable selection via the elastic
    net", JRSS B 67, 2005. M. E. Khan, W. Lin, V. Tangkaratt, Z. Liu and D.
    Nielsen, "Variational Adaptive-Newton Method for Explorative Learning",
    AISTATS 2018.

    Examples
    --------
    >>> from sklearn.datasets import load_diabetes
    >>> from skvan.linear_model import VANElasticNet
    >>> X, y = load_diabetes(return_X_y=True)
    >>> reg = VANElasticNet(alpha=1.0, l1_ratio=0.9).fit(X, y)
    >>> int((reg.coef_ != 0).sum())
    6
    """

    _parameter_constraints: dict = {
        **{k: v for k, v in VANLassoRegressor._parameter_constraints.items()
           if k not in ("batch_size", "stream_size")},
        "l1_ratio": [Interval(Real, 0, 1, closed="both")],
    }

    # VANLassoRegressor's parameters that the elastic net fixes (Notes).
    batch_size = None
    stream_size = None

    def __init__(
        self,
        alpha=1.0,
        *,
        l1_ratio=0.5,
        positive=False,
        fit_intercept=True,
        beta=1.0,
        beta_growth="auto",
        covariance="auto",
        hessian="exact",
        expectation="exact",
        n_mc_samples=10,
        objective="vo",
        max_iter=1000,
        tol=1e-4,
        warm_start=False,
        random_state=None,
        verbose=0,
    ):
        self.alpha = alpha
        self.l1_ratio = l1_ratio
        self.positive = positive
        self.fit_intercept = fit_intercept
        self.beta = beta
        self.beta_growth = beta_growth
        self.covariance = covariance
        self.hessian = hessian
        self.expectation = expectation
        self.n_mc_samples = n_mc_samples
        self.objective = objective
        self.max_iter = max_iter
        self.tol = tol
        self.warm_start = warm_start
        self.random_state = random_state
        self.verbose = verbose

    @property
    def partial_fit(self):
        """Not available (Notes)."""
        raise AttributeError("VANElasticNet has no partial_fit: a stream cannot carry the "
                             "ridge rows. Use VANLassoRegressor.partial_fit or fit.")
