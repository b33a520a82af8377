"""VANLogisticRegression: L2-penalised logistic regression fitted by VAN."""

from numbers import Real

import numpy as np
from sklearn.base import ClassifierMixin
from sklearn.utils import check_random_state

from .._compat import Interval, StrOptions, _fit_context, validate_data
from .._dask import is_dask_collection
from ._base import CHECK_X, VANLinearModel
from ._gaussian_logistic import GaussianLogisticModel


class VANLogisticRegression(GaussianLogisticModel, ClassifierMixin, VANLinearModel):
    """Logistic regression fitted by the Variational Adaptive-Newton method.

    Minimises the same objective as :class:`sklearn.linear_model.LogisticRegression`
    with an L2 penalty (intercepts not penalised). For two classes, written as in
    Khan et al. (2018)::

        f(w, b) = sum_i s_i log(1 + exp(-y_i (x_i^T w + b))) + ||w||^2 / (2 C)

    with ``y_i`` in {-1, +1} and sample weights ``s_i``; for ``K > 2`` classes the
    multinomial (softmax) model over all classes at once, as scikit-learn's::

        f(W, b) = sum_i s_i (logsumexp(W x_i + b) - (W x_i + b)_{y_i}) + ||W||_F^2 / (2 C)

    (for one-vs-rest, wrap the estimator in
    :class:`~sklearn.multiclass.OneVsRestClassifier`). VAN minimises it over a
    Gaussian ``q = N(mu, Sigma)`` of all the coefficients and intercepts:
    ``E_q[f]`` (``objective="vo"``, whose optimum concentrates ``q`` on the
    minimiser of ``f``, the same ``coef_`` as scikit-learn's) or ``E_q[f] - H(q)``
    (``objective="vi"``: ``f`` is the negative log joint of the Bayesian model with
    prior ``w ~ N(0, C I)``, and ``q`` converges to a Gaussian approximation of the
    posterior).

    Parameters
    ----------
    C : float, default=1.0
        Inverse regularisation strength, ``> 0``, as in scikit-learn (prior
        variance of each coefficient under ``objective="vi"``). ``np.inf`` means
        no penalty: on separable classes the optimum is then at infinity, and
        VAN warns and returns its last (finite) iterate.
    class_weight : dict, "balanced" or None, default=None
        Weights of the classes, multiplying ``sample_weight`` as in scikit-learn:
        ``{label: weight}``, or "balanced" (``n_samples / (n_classes *
        bincount(y))``). "balanced" is refused by :meth:`partial_fit`, which does
        not see all the data.
    fit_intercept : bool, default=True
        Whether to fit an (unpenalised) intercept.
    beta : float, default=1.0
        Initial VAN step size ``beta_0 > 0`` (in ``(0, 1]`` for ``objective="vi"``).
        Small ``beta`` keeps ``q`` wide for longer (more exploration, slower).
    beta_growth : float or "auto", default="auto"
        ``beta_t = beta * beta_growth**t``, ``>= 1``. ``1`` is the paper's constant
        step (sublinear convergence, averages minibatch noise); ``g > 1`` makes each
        mean step ``(g-1)/g`` of a Newton step (linear convergence). "auto" is 100
        for ``objective="vo"`` on the full data, and 1 with minibatches or under
        ``objective="vi"`` (where ``beta`` is a damping weight).
    covariance : {"auto", "full", "dual", "operator", "diag"}, default="auto"
        How ``q``'s covariance is kept (the fitted ``covariance_`` says which):
        "full", a ``p x p`` precision (the paper's VAN; ``n p^2`` operations per
        iteration); "dual", the same full Gaussian through ``n x n`` systems
        (``n^2 p``, for ``p > n``, same iterates); "operator", the full precision
        as an operator with conjugate-gradient steps and predictor variances from
        its diagonal (for data where neither ``p^2`` nor ``n^2`` fits; VO only);
        "diag", a diagonal covariance (VAN-D, slower to converge on correlated
        features). "auto" picks the cheapest of "full" and "dual" within the
        memory budget ("full" under ``expectation="mc"`` up to 512 parameters),
        else "operator" (VO, beyond 512 parameters) or "diag" (VI); see the user
        guide.
        With more than two classes (a linear predictor per class) "dual" does not
        apply: under VO "auto" keeps "full" up to 512 parameters and beyond picks
        the cheaper of "full" and "operator" (a
        :class:`~skvan.van.ClassGramPrecision`); under VI "full" up to 4,096
        parameters and "diag" beyond, whose steps may not reach the optimum
        within ``max_iter`` on correlated features (a ConvergenceWarning says so).
    hessian : {"exact", "gauss_newton"}, default="exact"
        Curvature in the precision update: expected Hessian, or the Gauss-Newton
        curvature, here the sum of per-example gradient outer products (VAG).
        Under ``objective="vi"`` on the full data the Gauss-Newton fixed point is
        not the VI optimum, and the step safeguard, which checks the VI
        objective, can stop the run short of it (it then warns).
    expectation : {"quadrature", "mc", "exact"}, default="quadrature"
        "quadrature": deterministic quadrature of each linear predictor (2 to 32
        Gauss-Hermite nodes, or a trapezoid rule for wide predictors, chosen per
        row to keep the error below 1e-12; for ``K > 2`` classes a cubature rule
        over the ``K`` predictors of a row, of degree 5 up to four classes and 3
        beyond, :mod:`skvan.expectations._cubature`); "mc": ``n_mc_samples`` draws
        from ``q`` per iteration; "exact": closed form, which the logistic loss
        does not have (raises).
    n_mc_samples : int, default=10
        Draws per iteration when ``expectation="mc"``, ``>= 1``.
    objective : {"vo", "vi"}, default="vo"
        Variational optimisation (precision is a running sum; ``sigma_`` shrinks to
        zero) or variational inference (damped average; ``sigma_`` is a posterior
        covariance).
    batch_size : int or None, default=None
        Rows per stochastic step (sVAN), ``>= 1``; None uses all rows. With
        ``beta_growth="auto"``, a full covariance, ``hessian="exact"`` and deterministic
        expectations, each row keeps its last expected loss derivatives (3 floats per
        row; ``1 + K + K^2`` for ``K`` classes) and the steps use the whole data's
        gradient and curvature from the rows' first-order models
        (:class:`~skvan.expectations.RowMemory`): the passes converge linearly to the
        full-batch optimum or posterior. Otherwise the minibatches' own estimates follow
        sVAN's averaging schedule, which converges as ``1/t`` (the user guide's "Large
        data").
    stream_size : int or None, default=None
        How :meth:`partial_fit` counts its batches, ``>= 1``. None: every row
        passed is a new observation (sequential Bayesian updates; one pass over
        a data set ends near the full-batch fit). An integer ``N``: the batches
        are drawn from a data set of ``N`` rows, passed over repeatedly (each
        pass every row once, in any order and batches); each batch's data term
        is scaled by ``N / n_batch`` and the steps are sVAN's, so that the
        passes converge to :meth:`fit` on the ``N`` rows: linearly where
        ``fit(batch_size=...)`` remembers the rows (the same settings), each row
        known by its content (a hash of its features, label and weight) and its
        last integrals kept, ``1 + K + K^2`` floats per row for ``K`` classes
        (3 for two).
    max_iter : int, default=100
        Maximum number of VAN iterations, ``>= 1``; with ``batch_size``, of data
        passes (scikit-learn's SGD convention); with ``partial_fit`` of new rows,
        of each batch's update.
    tol : float, default=1e-4
        Stop when the estimated distance of the mean to its fixed point is below
        ``tol`` times its largest entry, ``>= 0``; with ``batch_size``, when the
        mean moved less than that over a data pass; with ``partial_fit`` of new
        rows, each batch's update is solved to it.
    warm_start : bool, default=False
        Start ``fit`` from the previous ``coef_`` and ``intercept_`` (the precision
        restarts from its initial value, since a VO precision is that of a
        collapsed ``q``).
    random_state : int, RandomState instance or None, default=None
        Seeds Monte Carlo draws and minibatch order.
    verbose : int, default=0
        Print one line per iteration when positive.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels.
    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
        Mean of ``q`` over the coefficients: one row for two classes, one per
        class for more.
    intercept_ : ndarray of shape (1,) or (n_classes,)
        Mean of ``q`` over the intercepts (zeros if ``fit_intercept=False``). For
        more than two classes they sum to zero (the softmax is unchanged by a
        common constant; scikit-learn's convention).
    sigma_ : ndarray
        Covariance of ``coef_`` under ``q``, its shape set by the ``covariance``
        parameter alone: with ``covariance="full"`` the matrix, ``(1, n_features,
        n_features)`` for two classes and ``(n_classes, n_features, n_classes,
        n_features)`` for more (``sigma_[k, j, l, m]`` is the covariance of
        ``coef_[k, j]`` and ``coef_[l, m]``); otherwise ("auto" included,
        whatever form it chose) the marginal variances, ``coef_``'s shape
        (:meth:`get_covariance` forms the matrix). Under ``objective="vo"`` it
        shrinks towards zero as VAN converges; use ``objective="vi"`` for a
        posterior covariance.
    precision_ : ndarray or GramPrecision
        Precision of ``q`` over ``[coef, intercept]`` (``n_params = n_features + 1``
        with an intercept): ``(1, n_params, n_params)``, ``(n_classes, n_params,
        n_classes, n_params)`` or, diagonal, ``(rows, n_params)``, like ``sigma_``;
        for "dual" and "operator" a :class:`~skvan.van.GramPrecision`,
        ``diag(lam) + X^T diag(d) X`` as a ``scipy.sparse.linalg.LinearOperator``
        that keeps the training design (a multinomial model's "operator": a
        :class:`~skvan.van.ClassGramPrecision`, a ``K x K`` block per row).
    covariance_ : str
        The covariance form used: "full", "dual", "operator" or "diag" (for the
        multinomial model, "full", "operator" or "diag").
    n_iter_ : ndarray of shape (1,)
        VAN iterations run (data passes with ``batch_size``; streaming steps
        after :meth:`partial_fit`).
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during fit, when ``X`` has string column names.

    See Also
    --------
    sklearn.linear_model.LogisticRegression : The point estimate of the same objective.
    sklearn.linear_model.BayesianRidge : Bayesian linear regression with ``sigma_``.

    Notes
    -----
    Each iteration computes, under ``q_t = N(mu_t, P_t^-1)``, the expected gradient
    ``g_t = E[grad f]`` and curvature ``C_t = E[hess f]`` (each linear predictor is
    1-D Gaussian, so these are 1-D integrals per sample), then::

        vo: P_{t+1} = P_t + beta_t C_t          vi: P_{t+1} = (1 - beta_t) P_t + beta_t C_t
            mu_{t+1} = mu_t - alpha_t beta_t P_{t+1}^-1 g_t

    with a line search factor ``alpha_t`` (1 near the optimum). One iteration costs
    about two Newton steps. Names from the paper: VAN is ``covariance="full"``,
    VAN-D ``"diag"``, VAG ``hessian="gauss_newton"``, sVAN ``batch_size``, and
    sVAN-Exact ``batch_size`` with ``expectation="quadrature"``.

    With ``covariance="diag"`` the mean steps are diagonally scaled Newton steps:
    on correlated features they zig-zag and converge linearly at a rate set by the
    conditioning of the diagonally scaled Hessian (hundreds to thousands of
    iterations on breast_cancer), and the zig-zag can make the stopping rule stop
    early. Use ``tol=1e-6`` or smaller and a larger ``max_iter`` there.

    ``predict_proba`` averages the likelihood over ``q``:
    ``p(y=1|x) = E_q[sigmoid(x^T w + b)]``, and ``decision_function`` is its
    log-odds, so both rank samples the same way. Results are float64 whatever the
    input dtype.

    References
    ----------
    .. [1] M. E. Khan, W. Lin, V. Tangkaratt, Z. Liu and D. Nielsen, "Variational
       Adaptive-Newton Method for Explorative Learning", AISTATS 2018.

    Examples
    --------
    >>> from sklearn.datasets import load_breast_cancer
    >>> from sklearn.preprocessing import StandardScaler
    >>> from skvan import VANLogisticRegression
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> X = StandardScaler().fit_transform(X)
    >>> clf = VANLogisticRegression(C=1.0).fit(X, y)
    >>> clf.coef_.shape, clf.sigma_.shape, clf.get_covariance().shape
    ((1, 30), (1, 30), (1, 30, 30))
    >>> round(clf.score(X, y), 3)
    0.988
    """

    _parameter_constraints = {
        **VANLinearModel._parameter_constraints,
        "C": [Interval(Real, 0, None, closed="right")],
        "class_weight": [dict, StrOptions({"balanced"}), None],
    }

    def __init__(
        self,
        C=1.0,
        *,
        class_weight=None,
        fit_intercept=True,
        beta=1.0,
        beta_growth="auto",
        covariance="auto",
        hessian="exact",
        expectation="quadrature",
        n_mc_samples=10,
        objective="vo",
        batch_size=None,
        stream_size=None,
        max_iter=100,
        tol=1e-4,
        warm_start=False,
        random_state=None,
        verbose=0,
    ):
        self.C = C
        self.class_weight = class_weight
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

    # -- fitting ------------------------------------------------------------------
    def _objective(self, X, y, sample_weight):
        """The objective over ``theta' = s * theta`` (the column scales ``s`` of
        :meth:`~skvan.objectives.LinearModelObjective.column_scale`); returns ``(f,
        s, design)`` with the unscaled design. The penalty is ``||W||^2 / (2C)``,
        not on the intercepts."""
        Xd = self._design(X)
        f = self._link().objective(Xd, y, sample_weight, self._penalty())
        column_scale = f.column_scale()
        return f.reparametrised(column_scale), column_scale, Xd

    def _advice(self, schedule):
        if np.isinf(self.C):
            return ("With C=inf (no penalty) the optimum is at infinity if the classes are "
                    "separable; coef_ is the last iterate. Use a finite C.")
        if self.objective == "vi" and len(self.classes_) > 2:
            return ("Multinomial VI moves slowly where the prior is weak (the posterior is "
                    "wide along directions that separate classes): a smaller C (a stronger "
                    "prior) or a looser tol ends sooner, objective='vo' fits the MAP in a few "
                    "iterations; or increase max_iter.")
        return super()._advice(schedule)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Fit the Gaussian ``q`` by VAN.

        Parameters
        ----------
        X : {array-like, sparse matrix, dask array} of shape (n_samples, n_features)
            Training data. A dask array stays in its chunks, where the active dask
            scheduler keeps them: each iteration is a map-reduce pass over them
            (the user guide's "Large data").
        y : array-like or dask array of shape (n_samples,)
            Class labels.
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
        X, y = validate_data(self, X, y, **CHECK_X)
        previous = None
        if self.warm_start and hasattr(self, "coef_") and np.array_equal(
            getattr(self, "classes_", None), np.unique(y)
        ):
            previous = self._mean()
        self.classes_ = self._validate_targets(y)
        sample_weight = self._sample_weight(X, y, sample_weight)
        rng = check_random_state(self.random_state)
        self._resolve_covariance(X, n_rows=self._link().n_rows)
        f, column_scale, design = self._objective(X, y, sample_weight)
        family = self._initial_family(f, None if previous is None else previous * column_scale)
        self.n_iter_ = np.array([self._solve(f, family, rng).n_iter], dtype=np.int32)
        self._unpack(family, column_scale, design)
        self._stream_rng = None  # a later partial_fit starts its own stream of draws
        self._row_memory = None
        return self

    def partial_fit(self, X, y, classes=None, sample_weight=None):
        """One streaming VAN update on a batch, keeping the precision.

        The first call starts from the prior ``N(0, C I)`` over ``[coef, intercept]``
        (the intercept too gets a proper prior here: under a nearly flat one the
        first expected curvature would be nearly zero and the first step huge).
        What a call does depends on ``stream_size``:

        - None (every row is new): sequential Bayes, whatever ``objective`` is.
          The batch's update of ``q = N(m_0, P_0^-1)`` by the likelihood of its
          rows, ``exp(-f_B)``, within the Gaussian family: VI on ``f_B`` with
          ``q`` as its prior (streaming variational Bayes), solved to ``tol`` in
          at most ``max_iter`` iterations of damping ``beta``; at its fixed point
          ``P = P_0 + E_q[hess f_B]`` and ``E_q[grad f_B] + P_0 (mu - m_0) = 0``.
          Its first iteration is the one-step update ``P <- P_0 + beta
          E_q[hess f_B]``, ``mu <- m_0 - beta P^-1 E_q[grad f_B]``, all that is
          made with ``expectation="mc"``, ``hessian="gauss_newton"`` or more
          than two classes (whose cubature's curvature does not differentiate
          its value everywhere, so the safeguard can stall short of the fixed
          point). After one pass over the data ``q`` approximates the full-data
          VI posterior.
        - ``N`` (the batches come from ``N`` rows, passed over repeatedly): one
          sVAN step under ``objective`` on the batch's data term scaled by
          ``N / n_batch`` plus the penalty (the ``n_iter_``-th step of it),
          from where :meth:`fit` starts (mean 0, unit predictor variance);
          passes reach the fit on the ``N`` rows, where the running sum would
          count each row once per pass. With the settings under which
          ``fit(batch_size=...)`` remembers the rows, so does the stream
          (:class:`~skvan.expectations.StreamRowMemory`): the first pass's
          rows are remembered by content, and from the second pass on the
          steps use the whole data's gradient and curvature (linear
          convergence, as ``fit(batch_size=...)``); a row outside the first
          pass starts the memory again, with a warning. Otherwise the steps
          follow sVAN's averaging schedule (``O(1/t)``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            A batch of training data.
        y : array-like of shape (n_samples,)
            Its labels.
        classes : array-like of shape (n_classes,), default=None
            Every label of the stream; required on the first call.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights.

        Returns
        -------
        self : object
            Updated estimator.
        """
        return self._stream(X, y, classes, sample_weight)
