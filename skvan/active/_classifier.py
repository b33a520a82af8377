"""ActiveVANClassifier: VAN logistic regression that picks its own training points."""

from numbers import Integral, Real

import numpy as np
from scipy import sparse
from sklearn.base import ClassifierMixin
from sklearn.utils import _safe_indexing, check_random_state
from sklearn.utils.validation import check_is_fitted

from .._compat import Interval, StrOptions, _fit_context, validate_data
from .._dask import reject_dask
from .._data import issparse
from ..linear_model._base import AUTO_GROWTH_FULL_BATCH, CHECK_X, VANLinearModel
from ..linear_model._gaussian_logistic import GaussianLogisticModel
from ..objectives import L2Penalty
from ..van import FitSettings, laplace_posterior
from ._strategies import STRATEGIES

#: The refit's convergence test and iterations (:class:`~skvan.VANLogisticRegression`'s
#: defaults): the model a user would fit on the labels, whatever ``max_iter``
#: bounds the rounds of :meth:`ActiveVANClassifier.fit`.
REFIT_TOL = 1e-4
REFIT_MAX_ITER = 100


class ActiveVANClassifier(GaussianLogisticModel, ClassifierMixin, VANLinearModel):
    """Logistic regression trained by sVAN-Active: VAN that chooses its minibatches.

    Same model and objective as :class:`~skvan.VANLogisticRegression`
    (``f(w, b) = sum_i log(1 + exp(-y_i (x_i^T w + b))) + ||w||^2 / (2 C)``), but
    trained as in Section 6.3 of Khan et al. (2018): each iteration scores the
    not-yet-used points with the current ``q`` (by default the margin between
    the two likeliest classes of ``E_q[p(y|x, theta)]``, the batch chosen jointly
    under ``q``) and takes one streaming VAN step on the ``batch_size`` most
    informative. For labelling on demand, :meth:`query` proposes points,
    :meth:`teach` learns their labels, and :meth:`should_stop` applies the
    stopping rule. By default (``refit=True``) the classifier keeps the labels
    it learnt from and ends :meth:`fit`, and every :meth:`teach`, with the
    Laplace posterior of all of them, the model a user would fit on those labels
    (see Notes); ``refit=False`` keeps the paper's pure stream.

    Parameters
    ----------
    C : float, default=1.0
        Inverse regularisation strength, ``> 0``: the prior is ``N(0, C I)`` on
        ``[coef, intercept]``.
    class_weight : dict, "balanced" or None, default=None
        Class weights multiplying ``sample_weight``, as in scikit-learn ("balanced"
        from the labels of the pool given to :meth:`fit`; :meth:`teach` takes a
        dict only).
    query_strategy : {"margin", "entropy", "bald", "random"} or callable, default="margin"
        How pool points are scored: a name from :mod:`skvan.active`, or a callable
        ``strategy(estimator, X_pool, n_instances, random_state) -> (indices, scores)``.
        "margin" and "entropy" choose a batch jointly under ``q``
        (:func:`~skvan.active.margin_sampling`'s ``batch="auto"``). The default
        is chosen by measurement: with ``refit=True``, its accuracy was at least
        that of as many random labels with a ``LogisticRegression`` refit at every
        budget from 50 to 400 labels on seven data sets (``python
        benchmarks/bench_active.py --curves``).
    batch_size : int, default=10
        Points queried (and learnt from) per iteration, ``>= 1``; the paper's M.
    max_labels : int or None, default=None
        Label budget, ``>= 1``: :meth:`fit` learns from at most this many pool
        points, :meth:`query` proposes at most what is left of it (counting the
        labels given to :meth:`teach`), and :meth:`should_stop` is true once it
        is spent. None: no budget.
    uncertainty_threshold : float or None, default=None
        :meth:`should_stop` is true once no pool point scores above it.
    refit : bool, default=True
        Whether :meth:`fit` ends, and each :meth:`teach` ends, with a refit on every
        label learnt from so far (the Laplace posterior, see Notes): the model a
        user would fit on those labels, whatever order they came in, at the cost
        of a fit per update; the labels are then kept, and the queries come from
        that model. False: the streaming steps alone (one per batch, the
        paper's sVAN-Active), cheaper per label, whose ``q`` depends on the order
        the labels came in and whose queries were worse than random labels at
        some budgets (``python benchmarks/bench_active.py --curves`` compares
        the two).
    fit_intercept : bool, default=True
        Whether to fit an intercept.
    beta : float, default=1.0
        VAN step size of each streaming step, ``> 0``.
    covariance : {"auto", "full", "diag"}, default="auto"
        Full or diagonal covariance; "auto" keeps a full one up to 4,096
        parameters (each streaming step factorises it) and a diagonal one beyond.
    hessian : {"exact", "gauss_newton"}, default="exact"
        Curvature in the precision update.
    expectation : {"quadrature", "mc"}, default="quadrature"
        How expectations under ``q`` are computed.
    n_mc_samples : int, default=10
        Draws per step when ``expectation="mc"``.
    max_iter : int, default=100
        Maximum number of sVAN-Active iterations (rounds) in :meth:`fit`. Not
        the refit's: that one converges as a
        :class:`~skvan.VANLogisticRegression` fit does, in up to 100 iterations.
    random_state : int, RandomState instance or None, default=None
        Breaks ties between equally informative points and seeds draws.
    verbose : int, default=0
        Print one line per round of :meth:`fit` and per :meth:`teach` (``>= 1``),
        and the solver's line per step of each update (``>= 2``).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels.
    coef_, intercept_, sigma_, precision_ : ndarray
        As in :class:`~skvan.VANLogisticRegression`; the running-sum precision
        approximates the posterior precision given the labels used so far.
    covariance_ : str
        "full" or "diag".
    n_iter_ : ndarray of shape (1,)
        Updates made (fit iterations plus :meth:`teach` calls).
    n_refit_iter_ : int
        VAN iterations of the last refit (0 without one).
    queried_indices_ : ndarray of shape (n_queried,)
        Rows of the training ``X`` used by :meth:`fit`, in the order they were used.
    query_iteration_ : ndarray of shape (n_queried,)
        The fit iteration at which each of them was used.
    n_labels_ : int
        Labels learnt from so far (fit and :meth:`teach`).
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during fit, when ``X`` has string column names.

    See Also
    --------
    VANLogisticRegression : The same model fitted on all the data.
    skvan.active.margin_sampling : The default query strategy.

    Notes
    -----
    A streaming step on a batch ``B`` applies, with constant ``beta``,
    ``P <- P + beta E_q[hess f_B]`` and ``mu <- mu - beta P^-1 E_q[grad f_B]``, ``f_B``
    the data term of the batch alone (the prior entered once, through the initial
    precision). After all points have been used once, ``q`` approximates the
    full-data posterior, but a stream of one step per batch does not reach it:
    each step linearises the loss at the mean of its time, so the result
    depends on the order of the batches and lags the labels.

    The refit (``refit=True``) fits the MAP of the labels held, ``f`` summed over
    all of them, by full-batch VAN (VO from the current ``q`` narrowed to a
    point, :func:`~skvan.van.laplace_posterior`: Newton-like steps on ``f`` from
    the current mean, each one pass over the labels, to ``tol=1e-4`` as
    :class:`~skvan.VANLogisticRegression`), and sets the precision to the
    Hessian of ``f`` there, the prior's ``I / C`` included (the Laplace
    approximation of the posterior; its diagonal for ``covariance="diag"``).
    The prior is the stream's, ``N(0, C I)`` over ``[coef, intercept]``: unlike
    :class:`~skvan.VANLogisticRegression`, the intercepts are penalised too, so
    that a class with no label yet has a MAP. Its cost: a few Newton
    iterations, each a pass over the labels (with a diagonal covariance, the
    diagonal Newton steps take many more on correlated features).

    References
    ----------
    .. [1] M. E. Khan, W. Lin, V. Tangkaratt, Z. Liu and D. Nielsen, "Variational
       Adaptive-Newton Method for Explorative Learning", AISTATS 2018.

    Examples
    --------
    >>> from sklearn.datasets import load_breast_cancer
    >>> from sklearn.preprocessing import StandardScaler
    >>> from skvan import ActiveVANClassifier
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> X = StandardScaler().fit_transform(X)
    >>> clf = ActiveVANClassifier(batch_size=10, max_iter=10, random_state=0).fit(X, y)
    >>> clf.n_labels_
    100
    >>> idx, scores = clf.query(X, n_instances=3)
    >>> clf = clf.teach(X[idx], y[idx])
    >>> clf.n_labels_
    103
    """

    #: sVAN-Active makes one step per batch (Section 6.3 of the paper); the
    #: estimator has no ``tol`` to solve a batch's update to.
    _solves_batches = False

    _parameter_constraints = {
        **{k: v for k, v in VANLinearModel._parameter_constraints.items()
           if k not in ("objective", "beta_growth", "warm_start", "tol")},
        "C": [Interval(Real, 0, None, closed="neither")],  # the stream's prior N(0, C I)
        "covariance": [StrOptions({"auto", "full", "diag"})],  # a stream keeps no rows
        "class_weight": [dict, StrOptions({"balanced"}), None],
        "expectation": [StrOptions({"quadrature", "mc"})],
        "query_strategy": [StrOptions(set(STRATEGIES)), callable],
        "batch_size": [Interval(Integral, 1, None, closed="left")],
        "max_labels": [Interval(Integral, 1, None, closed="left"), None],
        "uncertainty_threshold": [Interval(Real, None, None, closed="neither"), None],
        "refit": ["boolean"],
    }

    def __init__(
        self,
        C=1.0,
        *,
        class_weight=None,
        query_strategy="margin",
        batch_size=10,
        max_labels=None,
        uncertainty_threshold=None,
        refit=True,
        fit_intercept=True,
        beta=1.0,
        covariance="auto",
        hessian="exact",
        expectation="quadrature",
        n_mc_samples=10,
        max_iter=100,
        random_state=None,
        verbose=0,
    ):
        self.C = C
        self.class_weight = class_weight
        self.query_strategy = query_strategy
        self.batch_size = batch_size
        self.max_labels = max_labels
        self.uncertainty_threshold = uncertainty_threshold
        self.refit = refit
        self.fit_intercept = fit_intercept
        self.beta = beta
        self.covariance = covariance
        self.hessian = hessian
        self.expectation = expectation
        self.n_mc_samples = n_mc_samples
        self.max_iter = max_iter
        self.random_state = random_state
        self.verbose = verbose

    def _strategy(self):
        if callable(self.query_strategy):
            return self.query_strategy
        return STRATEGIES[self.query_strategy]

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Train by sVAN-Active on a labelled pool.

        Starting from the prior, each iteration scores the points not used yet with
        the current ``q``, takes the ``batch_size`` most informative and makes one
        streaming VAN step on them, until the pool is used up or ``max_iter``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The pool.
        y : array-like of shape (n_samples,)
            Its labels (read only for the points used).
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights.

        Returns
        -------
        self : object
            Fitted estimator.
        """
        reject_dask(self, X)
        # The strategy scores rows of a DataFrame pool as DataFrames (their column
        # names match feature_names_in_); anything else as the validated array.
        frame = X if hasattr(X, "iloc") else None
        X, y = validate_data(self, X, y, **CHECK_X)
        self.classes_ = self._validate_targets(y)
        sample_weight = self._sample_weight(X, y, sample_weight)
        self._resolve_covariance(X, stream=True, n_rows=self._link().n_rows)
        self._start_stream()
        # One stream of random numbers for the strategy's ties and the steps' draws.
        self._stream_rng = check_random_state(self.random_state)
        strategy = self._strategy()
        pool = np.arange(X.shape[0])
        used, when = [], []
        budget = np.inf if self.max_labels is None else self.max_labels
        for iteration in range(self.max_iter):
            n = int(min(self.batch_size, pool.size, budget - sum(r.size for r in used)))
            if n <= 0:
                break
            candidates = X[pool] if frame is None else _safe_indexing(frame, pool)
            picked, scores = strategy(self, candidates, n_instances=n,
                                      random_state=self._stream_rng)
            rows = pool[picked]
            self._hold(X[rows], y[rows], sample_weight[rows])
            super()._learn(X[rows], y[rows], sample_weight[rows])
            used.append(rows)
            when.append(np.full(rows.size, iteration))
            pool = np.delete(pool, picked)
            self._report(f"round {iteration + 1}: {rows.size} labels queried (best score "
                         f"{np.max(scores) if len(scores) else np.nan:.3g}), "
                         f"{sum(r.size for r in used)} so far, {pool.size} left in the pool")
        if self.refit and used:
            self._refit_held()
        self.queried_indices_ = np.concatenate(used) if used else np.zeros(0, dtype=int)
        self.query_iteration_ = np.concatenate(when) if when else np.zeros(0, dtype=int)
        self.n_labels_ = int(self.queried_indices_.size)
        return self

    def query(self, X_pool, n_instances=None):
        """Propose the most informative points of a pool under the current ``q``.

        Parameters
        ----------
        X_pool : array-like of shape (n_pool, n_features)
            Unlabelled candidates, passed to the strategy (and so to
            :meth:`predict_proba`) as they are: a DataFrame keeps its column names.
        n_instances : int or None, default=None
            How many; None uses ``batch_size``. At most what is left of
            ``max_labels``.

        Returns
        -------
        indices : ndarray of shape (n_instances,)
            Rows of ``X_pool`` to label, most informative first.
        scores : ndarray of shape (n_instances,)
            Their scores under ``query_strategy``.
        """
        check_is_fitted(self)
        n = self.batch_size if n_instances is None else n_instances
        if self.max_labels is not None:
            left = self.max_labels - self.n_labels_
            if left <= 0:
                raise ValueError(
                    f"The label budget is spent (n_labels_={self.n_labels_}, max_labels="
                    f"{self.max_labels}): should_stop() is true."
                )
            n = min(n, left)
        if getattr(self, "_stream_rng", None) is None:
            self._stream_rng = check_random_state(self.random_state)
        return self._strategy()(self, X_pool, n_instances=n, random_state=self._stream_rng)

    def teach(self, X, y, sample_weight=None, classes=None):
        """Update ``q`` with newly labelled points (a refit, or one streaming step).

        With ``refit=True``: the Laplace posterior of every label learnt from so
        far; otherwise one streaming VAN step on the new points.

        Parameters
        ----------
        X : array-like of shape (n_new, n_features)
            The labelled points.
        y : array-like of shape (n_new,)
            Their labels.
        sample_weight : array-like of shape (n_new,), default=None
            Non-negative weights.
        classes : array-like of shape (n_classes,), default=None
            Every label; required if the estimator is not fitted yet.

        Returns
        -------
        self : object
            Updated estimator.
        """
        before = getattr(self, "n_labels_", 0)
        self._stream(X, y, classes=classes, sample_weight=sample_weight, caller="teach")
        self.n_labels_ = before + int(np.asarray(y).shape[0])
        self._report(f"taught {self.n_labels_ - before} labels, {self.n_labels_} so far")
        return self

    def _start_stream(self):
        """The prior as the fitted ``q``, and no labels held."""
        super()._start_stream()
        self._held = None
        self._laplace = None
        self.n_refit_iter_ = 0

    def _hold(self, X, y, sample_weight):
        """Keep validated labelled rows (and their weights) for the refit."""
        if not self.refit:
            return
        held = getattr(self, "_held", None)
        rows = (X, y, sample_weight)
        if held is not None:
            stack = _vstack_sparse if issparse(X) or issparse(held[0]) else np.vstack
            rows = (stack([held[0], X]), np.concatenate([held[1], y]),
                    np.concatenate([held[2], sample_weight]))
        self._held = rows

    def _learn(self, X, y, sample_weight):
        """:meth:`teach`'s update on validated rows: hold them and refit on every
        label held, or (``refit=False``) one streaming step."""
        if not self.refit:
            return super()._learn(X, y, sample_weight)
        if getattr(self, "_stream_rng", None) is None:
            self._stream_rng = check_random_state(self.random_state)
        self._hold(X, y, sample_weight)
        self._refit_held()
        self.n_iter_ = self.n_iter_ + 1
        return self

    def _refit_held(self):
        """Replace ``q`` by the Laplace posterior of the labels held
        (:func:`~skvan.van.laplace_posterior`: their MAP by VO VAN from the current
        ``q``, the Hessian of ``f`` there as the precision), in the columns' scaled
        coordinates, as :class:`~skvan.VANLogisticRegression` fits. The prior is
        the stream's, ``N(0, C I)`` over ``[coef, intercept]``: the intercepts too
        are penalised, so that a class with no label yet has a MAP (an
        unpenalised intercept would run to minus infinity)."""
        X, y, w = self._held
        Xd = self._design(X)
        f = self._link().objective(Xd, y, w, L2Penalty(np.full(self._n_params(), 1.0 / self.C)))
        s = f.column_scale()
        f = f.reparametrised(s)
        settings = FitSettings(
            beta=1.0, beta_growth="auto", auto_growth=AUTO_GROWTH_FULL_BATCH,
            covariance=self.covariance_, hessian="exact", expectation=self.expectation,
            n_mc_samples=self.n_mc_samples, objective="vo", batch_size=None,
            max_iter=REFIT_MAX_ITER, tol=REFIT_TOL, verbose=self._step_verbose())
        laplace, result = laplace_posterior(f, settings, self._fitted_q(s), self._stream_rng)
        self._unpack(laplace, s, Xd)
        self._laplace = (laplace, s, self.precision_)
        self.n_refit_iter_ = int(result.n_iter)
        self._report(f"refit on {y.shape[0]} labels: {result.n_iter} VAN iterations")

    def _fitted_q(self, column_scale):
        """The fitted ``q`` over ``column_scale * [coef, intercept]``: the last
        refit's Laplace family rescaled (its factor and variances carried, no
        factorisation) while ``precision_`` is the one that refit set, else
        built from the fitted attributes."""
        kept = getattr(self, "_laplace", None)
        if kept is not None and kept[2] is self.precision_:
            return kept[0].reparametrised(column_scale / kept[1])
        return self._family().reparametrised(column_scale)

    def _step_verbose(self):
        """The solver's lines inside each update from ``verbose=2`` on."""
        return max(int(self.verbose) - 1, 0)

    def _report(self, line):
        """Print ``line`` when ``verbose`` is set."""
        if self.verbose:
            print(f"[ActiveVANClassifier] {line}")

    def should_stop(self, X_pool=None):
        """The stopping rule: budget spent, or nothing in the pool left to learn.

        Parameters
        ----------
        X_pool : array-like of shape (n_pool, n_features), default=None
            The remaining pool, for ``uncertainty_threshold``.

        Returns
        -------
        stop : bool
            True when ``n_labels_ >= max_labels``, or when ``uncertainty_threshold``
            is set and no point of ``X_pool`` scores above it (or the pool is empty).
        """
        check_is_fitted(self)
        if self.max_labels is not None and self.n_labels_ >= self.max_labels:
            return True
        if self.uncertainty_threshold is not None and X_pool is not None:
            if len(X_pool) == 0:
                return True
            _, scores = self.query(X_pool, n_instances=1)
            return bool(scores[0] <= self.uncertainty_threshold)
        return False


def _vstack_sparse(blocks):
    """Rows of sparse matrices, one under the other (CSR)."""
    return sparse.vstack(blocks, format="csr")
