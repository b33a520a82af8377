"""VANLogisticRegression: L2-penalised logistic regression fitted by VAN."""

from numbers import Real

import numpy as np
from scipy.special import expit, logsumexp
from sklearn.base import ClassifierMixin
from sklearn.utils import check_random_state
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import _check_sample_weight, check_is_fitted

from .._compat import Interval, _fit_context, validate_data
from ..expectations import log_expected_sigmoid
from ..objectives import L2Penalty, LinearModelObjective, LogisticLoss
from ._base import CHECK_X, VANLinearModel


class _GaussianLogisticModel:
    """What both logistic estimators share: the one-vs-rest Gaussian logistic model
    over ``[coef, intercept]``, its streaming steps and its predictions averaged
    over ``q``. Mixed into estimators that derive from
    :class:`~skvan.linear_model._base.VANLinearModel`."""

    def _validate_targets(self, y, classes=None):
        check_classification_targets(y)
        if classes is None:
            classes = np.unique(y)
            if classes.shape[0] < 2:
                raise ValueError(
                    "This solver needs samples of at least 2 classes in the data, but "
                    f"the data contains only one class: {classes[0]!r}."
                )
        else:
            unseen = np.setdiff1d(np.unique(y), classes)
            if unseen.size:
                raise ValueError(
                    f"y contains labels {unseen.tolist()} that are not in classes_ "
                    f"{classes.tolist()}; pass every label in `classes` on the first "
                    "call to partial_fit."
                )
        return classes

    def _binary_targets(self, y):
        """One ``{-1, +1}`` target vector per row of ``coef_`` (one-vs-rest)."""
        if len(self.classes_) == 2:
            return [np.where(y == self.classes_[1], 1.0, -1.0)]
        return [np.where(y == c, 1.0, -1.0) for c in self.classes_]

    def _stream(self, X, y, classes=None, sample_weight=None):
        """One streaming step on a labelled batch (:meth:`partial_fit`)."""
        first = not hasattr(self, "classes_")
        if first:
            self._validate_params()
            self._check_solver_params()
            if classes is None:
                raise ValueError("classes must be passed on the first call to partial_fit.")
            if np.isinf(self.C):
                raise ValueError(
                    "partial_fit starts from the prior N(0, C I), which C=inf does not "
                    "define; use a finite C."
                )
        elif classes is not None and not np.array_equal(self.classes_, np.unique(classes)):
            raise ValueError(
                f"`classes={np.unique(classes).tolist()}` is not the same as on the first "
                f"call to partial_fit, which was {self.classes_.tolist()}."
            )
        X, y = validate_data(self, X, y, **CHECK_X, reset=first)
        if first:
            self.classes_ = self._validate_targets(y, np.unique(classes))
            if len(self.classes_) < 2:
                raise ValueError("classes must contain at least 2 labels.")
            self._resolve_covariance(X, stream=True)
            self._start_stream()
        else:
            self._validate_targets(y, self.classes_)
            self._check_streamable()
        sample_weight = _check_sample_weight(sample_weight, X, ensure_non_negative=True)
        return self._learn(X, y, sample_weight)

    def _learn(self, X, y, sample_weight):
        """One streaming VAN step per binary model on validated rows: the data term
        of the batch alone (the prior entered once, at the start of the stream)."""
        if getattr(self, "_stream_rng", None) is None:
            self._stream_rng = check_random_state(self.random_state)
        Xd = self._design(X)
        families = self._families()
        for family, y_pm in zip(families, self._binary_targets(y)):
            f = LinearModelObjective(Xd, y_pm, LogisticLoss(), sample_weight)
            self._stream_step(f, family, self._stream_rng)
        self._unpack(families)
        self.n_iter_ = self.n_iter_ + 1
        return self

    def _start_stream(self):
        """Set the prior ``N(0, C I)`` over ``[coef, intercept]`` as the fitted ``q``."""
        n_params = self.n_features_in_ + int(self.fit_intercept)
        n_models = 1 if len(self.classes_) == 2 else len(self.classes_)
        self._unpack([self._prior_family(n_params, self.C) for _ in range(n_models)])
        self.n_iter_ = np.zeros(n_models, dtype=np.int32)
        self._stream_rng = None

    def _log_ovr(self, X):
        """``log p_k`` and ``log(1 - p_k)`` of each binary model, shape (n, n_models)."""
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, **CHECK_X)
        Xd = self._design(X)
        log_p, log_q = [], []
        for family in self._families():
            lp, lq = log_expected_sigmoid(Xd @ family.mean, family.predictor_variance(Xd))
            log_p.append(lp)
            log_q.append(lq)
        return np.array(log_p).T, np.array(log_q).T

    def decision_function(self, X):
        """Predictive log-odds ``log p(y=1|x) - log p(y=0|x)`` under ``q``.

        For ``objective="vo"`` after convergence this is ``x^T coef_ + intercept_``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
            Log-odds of the positive class (binary) or of each one-vs-rest model.
        """
        log_p, log_q = self._log_ovr(X)
        scores = log_p - log_q
        return scores[:, 0] if scores.shape[1] == 1 else scores

    def predict_log_proba(self, X):
        """Log of :meth:`predict_proba`.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        log_proba : ndarray of shape (n_samples, n_classes)
            Log-probabilities, columns in the order of ``classes_``.
        """
        log_p, log_q = self._log_ovr(X)
        if log_p.shape[1] == 1:
            return np.hstack([log_q, log_p])
        return log_p - logsumexp(log_p, axis=1, keepdims=True)

    def predict_proba(self, X):
        """Class probabilities averaged over ``q``: ``E_q[p(y | x, w, b)]``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Probabilities, columns in the order of ``classes_``; rows sum to 1.
        """
        return np.exp(self.predict_log_proba(X))

    def predict(self, X):
        """Most probable class under :meth:`predict_proba`.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        labels : ndarray of shape (n_samples,)
            Predicted labels from ``classes_``.
        """
        log_proba = self.predict_log_proba(X)
        return self.classes_[np.argmax(log_proba, axis=1)]

    def sample_proba(self, X, n_draws=100, random_state=None):
        """Class probabilities under parameters drawn from ``q``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Samples.
        n_draws : int, default=100
            Number of parameter vectors drawn from ``q``.
        random_state : int, RandomState instance or None, default=None
            Seeds the draws.

        Returns
        -------
        proba : ndarray of shape (n_draws, n_samples, n_classes)
            ``proba[s]`` are the class probabilities under the ``s``-th draw; their
            mean over ``s`` estimates :meth:`predict_proba`.
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, **CHECK_X)
        rng = check_random_state(random_state)
        Xd = self._design(X)
        p = np.stack([expit((Xd @ f.sample(n_draws, rng).T).T) for f in self._families()], axis=-1)
        if p.shape[-1] == 1:
            return np.concatenate([1.0 - p, p], axis=-1)
        return p / p.sum(axis=-1, keepdims=True)


class VANLogisticRegression(_GaussianLogisticModel, ClassifierMixin, VANLinearModel):
    """Logistic regression fitted by the Variational Adaptive-Newton method.

    Minimises the same objective as :class:`sklearn.linear_model.LogisticRegression`
    with an L2 penalty (intercept not penalised), written as in Khan et al. (2018)::

        f(w, b) = sum_i s_i log(1 + exp(-y_i (x_i^T w + b))) + ||w||^2 / (2 C)

    with ``y_i`` in {-1, +1} and sample weights ``s_i``, but over a Gaussian
    ``q(w, b) = N(mu, Sigma)``: VAN minimises ``E_q[f]`` (``objective="vo"``, whose
    optimum concentrates ``q`` on the minimiser of ``f``, the same ``coef_`` as
    scikit-learn's) or ``E_q[f] - H(q)`` (``objective="vi"``: ``f`` is the negative
    log joint of the Bayesian model with prior ``w ~ N(0, C I)``, and ``q`` converges
    to a Gaussian approximation of the posterior).

    Multiclass problems are fitted one-vs-rest: one binary model (and one ``q``)
    per class, so ``n_models`` is 1 for two classes and ``n_classes`` otherwise;
    ``predict_proba`` normalises the per-class probabilities.

    Parameters
    ----------
    C : float, default=1.0
        Inverse regularisation strength, ``> 0``, as in scikit-learn (prior
        variance of each coefficient under ``objective="vi"``). ``np.inf`` means
        no penalty: on separable classes the optimum is then at infinity, and
        VAN warns and returns its last (finite) iterate.
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
        memory budget, else "operator" (VO) or "diag" (VI); see the user guide.
    hessian : {"exact", "gauss_newton"}, default="exact"
        Curvature in the precision update: expected Hessian, or the Gauss-Newton
        curvature, here the sum of per-example gradient outer products (VAG).
    expectation : {"quadrature", "mc", "exact"}, default="quadrature"
        "quadrature": deterministic quadrature of each linear predictor (2 to 32
        Gauss-Hermite nodes, or a trapezoid rule for wide predictors, chosen per
        row to keep the error below 1e-12); "mc": ``n_mc_samples`` draws from ``q``
        per iteration; "exact": closed form, which the logistic loss does not
        have (raises).
    n_mc_samples : int, default=10
        Draws per iteration when ``expectation="mc"``, ``>= 1``.
    objective : {"vo", "vi"}, default="vo"
        Variational optimisation (precision is a running sum; ``sigma_`` shrinks to
        zero) or variational inference (damped average; ``sigma_`` is a posterior
        covariance).
    batch_size : int or None, default=None
        Rows per stochastic step (sVAN), ``>= 1``; None uses all rows.
    max_iter : int, default=100
        Maximum number of VAN iterations (steps), ``>= 1``.
    tol : float, default=1e-4
        Stop when the estimated distance of the mean to its fixed point is below
        ``tol`` times its largest entry, ``>= 0``.
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
    coef_ : ndarray of shape (n_models, n_features)
        Mean of ``q`` over the coefficients, one row per binary model.
    intercept_ : ndarray of shape (n_models,)
        Mean of ``q`` over the intercepts (zeros if ``fit_intercept=False``).
    sigma_ : ndarray of shape (n_models, n_features, n_features) or (n_models, n_features)
        Covariance of ``coef_`` under ``q`` when ``covariance_="full"``; the
        marginal variances otherwise (never a ``p x p`` matrix for wide data).
        Under ``objective="vo"`` it shrinks towards zero as VAN converges; use
        ``objective="vi"`` for a posterior covariance.
    precision_ : ndarray or list of GramPrecision
        Precision of ``q`` over ``[coef, intercept]`` (``n_params = n_features + 1``
        with an intercept): ``(n_models, n_params, n_params)`` for "full",
        ``(n_models, n_params)`` for "diag", and for "dual" and "operator" one
        :class:`~skvan.van.GramPrecision` per model, ``diag(lam) + X^T diag(d) X``
        as a ``scipy.sparse.linalg.LinearOperator`` that keeps the training design.
    covariance_ : str
        The covariance form used: "full", "dual", "operator" or "diag".
    n_iter_ : ndarray of shape (n_models,)
        VAN iterations run for each binary model.
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
    >>> clf.coef_.shape, clf.sigma_.shape
    ((1, 30), (1, 30, 30))
    >>> round(clf.score(X, y), 3)
    0.988
    """

    _parameter_constraints = {
        **VANLinearModel._parameter_constraints,
        "C": [Interval(Real, 0, None, closed="right")],
    }

    def __init__(
        self,
        C=1.0,
        *,
        fit_intercept=True,
        beta=1.0,
        beta_growth="auto",
        covariance="auto",
        hessian="exact",
        expectation="quadrature",
        n_mc_samples=10,
        objective="vo",
        batch_size=None,
        max_iter=100,
        tol=1e-4,
        warm_start=False,
        random_state=None,
        verbose=0,
    ):
        self.C = C
        self.fit_intercept = fit_intercept
        self.beta = beta
        self.beta_growth = beta_growth
        self.covariance = covariance
        self.hessian = hessian
        self.expectation = expectation
        self.n_mc_samples = n_mc_samples
        self.objective = objective
        self.batch_size = batch_size
        self.max_iter = max_iter
        self.tol = tol
        self.warm_start = warm_start
        self.random_state = random_state
        self.verbose = verbose

    # -- fitting ------------------------------------------------------------------
    def _objectives(self, X, y, sample_weight):
        """One objective per binary model, all over ``theta' = s * theta`` with the
        column scales ``s`` of :meth:`~skvan.objectives.LinearModelObjective.column_scale`;
        returns ``(objectives, s, design)`` with the unscaled design. The penalty is
        ``||w||^2 / (2C)``, not on the intercept."""
        Xd = self._design(X)
        strength = np.full(Xd.shape[1], 1.0 / self.C)
        if self.fit_intercept:
            strength[-1] = 0.0
        targets = self._binary_targets(y)
        f = LinearModelObjective(Xd, targets[0], LogisticLoss(), sample_weight, L2Penalty(strength))
        column_scale = f.column_scale()
        f = f.reparametrised(column_scale)
        return [f.with_targets(t) for t in targets], column_scale, Xd

    def _advice(self, schedule):
        if np.isinf(self.C):
            return ("With C=inf (no penalty) the optimum is at infinity if the classes are "
                    "separable; coef_ is the last iterate. Use a finite C.")
        return super()._advice(schedule)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Fit the Gaussian ``q`` by VAN.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data.
        y : array-like of shape (n_samples,)
            Class labels.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights; a weight of ``k`` counts a sample ``k`` times.

        Returns
        -------
        self : object
            Fitted estimator.
        """
        self._check_solver_params()
        X, y = validate_data(self, X, y, **CHECK_X)
        previous = None
        if self.warm_start and hasattr(self, "coef_") and np.array_equal(
            getattr(self, "classes_", None), np.unique(y)
        ):
            previous = self._means()
        self.classes_ = self._validate_targets(y)
        sample_weight = _check_sample_weight(sample_weight, X, ensure_non_negative=True)
        rng = check_random_state(self.random_state)
        self._resolve_covariance(X)
        objectives, column_scale, design = self._objectives(X, y, sample_weight)
        families, n_iter = [], []
        for k, f in enumerate(objectives):
            start = None if previous is None else previous[k] * column_scale
            family = self._initial_family(f, start)
            n_iter.append(self._solve(f, family, rng).n_iter)
            families.append(family)
        self._unpack(families, column_scale, design)
        self.n_iter_ = np.array(n_iter, dtype=np.int32)
        self._stream_rng = None  # a later partial_fit starts its own stream of draws
        return self

    def partial_fit(self, X, y, classes=None, sample_weight=None):
        """One streaming VAN step on a batch, keeping the precision.

        The first call starts from the prior ``N(0, C I)`` over ``[coef, intercept]``
        (the intercept too gets a proper prior here: under a nearly flat one the
        first expected curvature would be nearly zero and the first step huge).
        Each call then applies, with constant
        ``beta``, ``P <- P + beta E_q[hess f_B]`` and ``mu <- mu - beta P^-1 E_q[grad f_B]``
        for the data term ``f_B`` of the batch alone: a Newton step on the
        accumulated objective, so after one pass over the data in batches
        ``precision_`` approximates the full-data posterior precision. The update
        is this running sum whatever ``objective`` is.

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
