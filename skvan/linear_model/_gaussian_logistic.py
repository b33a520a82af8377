"""What both logistic estimators share: the Gaussian logistic model over
``[coef, intercept]``, binary or multinomial, its streaming steps and its
predictions averaged over ``q``.

Two links, chosen by the number of classes, say what differs:

- :class:`BinaryLink`: one linear predictor, the logistic loss; ``coef_`` has
  one row.
- :class:`SoftmaxLink`: ``K`` predictors, the softmax loss; ``coef_`` has ``K``
  rows and one Gaussian covers them all, as scikit-learn's multinomial
  ``LogisticRegression`` has one objective over all of them.
"""

import numbers

import numpy as np
from scipy.special import expit, softmax
from sklearn.utils import check_random_state
from sklearn.utils.class_weight import compute_class_weight
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted

from .._compat import check_sample_weight, validate_data
from .._dask import is_dask_collection, map_rows
from .._warnings import NOT_PASSED, renamed
from ..expectations import log_expected_sigmoid
from ..expectations._cubature import class_variance_blocks, probit_log_softmax
from ..objectives import (
    ChunkedObjective,
    ChunkSpec,
    L2Penalty,
    LinearModelObjective,
    LogisticLoss,
    MultinomialObjective,
)
from ..objectives._chunked import labels_summary
from ..objectives._linear import check_predictors
from ._base import CHECK_X, GRAM


class BinaryLink:
    """Two classes: ``p(y = classes[1] | x) = sigmoid(x^T w + b)``."""

    n_rows = 1

    def __init__(self, classes):
        self.classes = classes

    def objective(self, Xd, y, sample_weight, penalty=None):
        """The logistic objective with targets in ``{-1, +1}``."""
        return LinearModelObjective(Xd, np.where(y == self.classes[1], 1.0, -1.0), LogisticLoss(),
                                    sample_weight, penalty)

    @staticmethod
    def log_proba(Xd, family):
        """``log E_q[p(y | x)]``, columns in the order of the classes."""
        mean, variance = Xd @ family.mean, family.predictor_variance(Xd)
        check_predictors(mean, variance)
        log_p, log_q = log_expected_sigmoid(mean, variance)
        return np.column_stack([log_q, log_p])

    @staticmethod
    def proba(Xd, thetas):
        """Probabilities ``(n_draws, n_samples, 2)`` under each parameter draw."""
        p = expit(np.asarray(Xd @ thetas.T).T)
        return np.stack([1.0 - p, p], axis=-1)


class SoftmaxLink(BinaryLink):
    """``K > 2`` classes: ``p(y = k | x) = softmax(W x)_k`` with one Gaussian over all
    of ``W`` (class-major, each row ``[coef_k, intercept_k]``)."""

    def __init__(self, classes):
        super().__init__(classes)
        self.n_rows = len(classes)

    def objective(self, Xd, y, sample_weight, penalty=None):
        """The multinomial objective with one-hot targets."""
        Y = (np.asarray(y)[:, None] == self.classes[None, :]).astype(np.float64)
        return MultinomialObjective(Xd, Y, sample_weight, penalty)

    @staticmethod
    def log_proba(Xd, mean, blocks):
        """``log E_q[p(y | x)]`` by the probit approximation, from ``q``'s mean over
        ``[coef, intercept]`` and its :func:`class_variance_blocks`."""
        return probit_log_softmax(Xd, mean, blocks)

    def proba(self, Xd, thetas):
        W = thetas.reshape(len(thetas), self.n_rows, -1)
        return softmax(np.stack([np.asarray(Xd @ w.T) for w in W]), axis=-1)


def make_link(classes):
    """The link for ``classes``: binary for two, softmax beyond."""
    return BinaryLink(classes) if len(classes) == 2 else SoftmaxLink(classes)


class GaussianLogisticModel:
    """Mixed into :class:`~skvan.linear_model._base.VANLinearModel` subclasses with a
    ``C`` and a ``class_weight``: target checks, class weights, the stream
    (``partial_fit``) and the predictions averaged over ``q``."""

    def _link(self):
        return make_link(self.classes_)

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

    def _sample_weight(self, X, y, sample_weight, stream=False):
        """``sample_weight`` (validated) times the class weights of ``y``, as
        scikit-learn's estimators multiply them."""
        sample_weight = check_sample_weight(sample_weight, X)
        if self.class_weight is None:
            return sample_weight
        if stream and self.class_weight == "balanced":
            raise ValueError(
                "class_weight='balanced' needs the class counts of all the data, which "
                "partial_fit does not see; pass a dict of weights instead."
            )
        weights = compute_class_weight(self.class_weight, classes=self.classes_, y=y) \
            if self.class_weight == "balanced" else \
            np.array([self.class_weight.get(c, 1.0) for c in self.classes_], dtype=np.float64)
        return sample_weight * weights[np.searchsorted(self.classes_, y)]

    def _fit_chunked(self, X, y, sample_weight):
        """:meth:`fit` on a dask array ``X``: validation and column statistics in two
        passes over the chunks, then every VAN iteration a map-reduce pass
        (:class:`~skvan.expectations.MapReduce`); ``X`` is never gathered."""
        from .._dask import DaskChunks

        self._check_solver_params()
        if self.batch_size is not None:
            raise ValueError(
                "batch_size is not supported with dask arrays: each iteration is a pass over "
                "the chunks. For minibatches use dask_ml.wrappers.Incremental, which drives "
                "partial_fit (with stream_size)."
            )
        if self.expectation == "mc":
            raise ValueError(
                "expectation='mc' is not supported with dask arrays (each chunk would draw its "
                "own samples); use expectation='quadrature'."
            )
        if self.covariance in GRAM:
            raise ValueError(
                f"covariance={self.covariance!r} writes the precision through the rows, which "
                "stay in the dask chunks; use covariance='full', 'diag' or 'auto'."
            )
        validate_data(self, X, y, skip_check_array=True)
        chunks = DaskChunks(X, y, sample_weight)
        previous = self._mean() if self.warm_start and hasattr(self, "coef_") else None
        self.classes_, class_weight = self._chunked_targets(chunks)
        if previous is not None and previous.size != (X.shape[1] + self.fit_intercept) * self._link().n_rows:
            previous = None
        self._resolve_covariance(X, stream=True, n_rows=self._link().n_rows)
        spec = ChunkSpec(self._link(), self.fit_intercept, class_weight)
        f = ChunkedObjective.build(chunks, spec, self._penalty(), self._n_params())
        column_scale = f.column_scale()
        f = f.reparametrised(column_scale)
        family = self._initial_family(f, None if previous is None else previous * column_scale)
        rng = check_random_state(self.random_state)
        self.n_iter_ = np.array([self._solve(f, family, rng).n_iter], dtype=np.int32)
        self._unpack(family, column_scale)
        self._stream_rng = None
        self._row_memory = None
        return self

    def _chunked_targets(self, chunks):
        """Check the chunks' ``X`` and weights and collect their labels; returns the
        classes and the class weights (None, or one per class)."""
        parts = chunks.map(labels_summary)
        if not all(part[0] for part in parts):
            raise ValueError("Input X contains NaN or infinity.")
        if not all(part[1] for part in parts):
            raise ValueError("sample_weight must be finite and non-negative.")
        labels = np.concatenate([part[2] for part in parts])
        counts = np.concatenate([part[3] for part in parts])
        classes = self._validate_targets(labels)
        if self.class_weight is None:
            return classes, None
        if self.class_weight == "balanced":
            totals = np.array([counts[labels == c].sum() for c in classes], dtype=np.float64)
            return classes, chunks.n_samples / (len(classes) * totals)
        return classes, np.array([self.class_weight.get(c, 1.0) for c in classes], dtype=np.float64)

    def _n_params(self):
        """Parameters of ``[coef, intercept]``, all rows."""
        return (self.n_features_in_ + int(self.fit_intercept)) * self._link().n_rows

    def _stream(self, X, y, classes=None, sample_weight=None, caller="partial_fit"):
        """One streaming step on a labelled batch (:meth:`partial_fit`; ``caller``
        names the method the user called, in messages)."""
        first = not hasattr(self, "classes_")
        if first:
            self._validate_params()
            self._check_solver_params()
            if classes is None:
                raise ValueError(
                    f"classes must be passed on the first call to {caller} (every label "
                    "the stream will see), or the estimator fitted first.")
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
            self._resolve_covariance(X, stream=True, n_rows=self._link().n_rows)
            self._start_stream()
        else:
            self._validate_targets(y, self.classes_)
            self._check_streamable()
        return self._learn(X, y, self._sample_weight(X, y, sample_weight, stream=True))

    def _learn(self, X, y, sample_weight):
        """One streaming update on validated rows (``_stream_step``): the data term
        of the batch alone when each row is new (the prior entered once, at the
        start of the stream), or with its share ``n_batch / stream_size`` of the
        penalty when the stream repeats ``stream_size`` rows."""
        if getattr(self, "_stream_rng", None) is None:
            self._stream_rng = check_random_state(self.random_state)
        size = getattr(self, "stream_size", None)
        penalty = None if size is None else self._penalty().multiplied(X.shape[0] / size)
        f = self._link().objective(self._design(X), y, sample_weight, penalty)
        # Passes over N rows solve the fit on them: the first step starts where a
        # fit does (unit predictor variance), not from the prior, which sequential
        # Bayes updates.
        family = (self._initial_family(f) if size is not None and self.n_iter_[0] == 0
                  else self._family())
        self._stream_step(f, family, self._stream_rng, int(self.n_iter_[0]),
                          getattr(self, "objective", "vo"))
        self._unpack(family)
        self.n_iter_ = self.n_iter_ + 1
        return self

    def _penalty(self):
        """``||W||^2 / (2C)`` over ``[coef, intercept]``, not on the intercepts."""
        row = np.full(self.n_features_in_ + int(self.fit_intercept), 1.0 / self.C)
        if self.fit_intercept:
            row[-1] = 0.0
        return L2Penalty(np.tile(row, self._link().n_rows))

    def _start_stream(self):
        """Set the prior ``N(0, C I)`` over ``[coef, intercept]`` as the fitted ``q``."""
        self._unpack(self._prior_family(self._n_params(), self.C))
        self.n_iter_ = np.zeros(1, dtype=np.int32)
        self._stream_rng = None
        self._row_memory = None  # the rows a stream remembers (stream_size)

    # -- prediction ---------------------------------------------------------------
    def _unpack(self, family, column_scale=None, design=None):
        """The fitted attributes (:meth:`VANLinearModel._unpack`) and, with more
        than two classes, each class's covariance block for the predictions
        (``_variance_blocks``: predictions then need no factorisation)."""
        link = self._link()
        # (The blocks first: a full family's covariance, formed for them, then
        # gives the marginal variances too.)
        blocks = (class_variance_blocks(family, link.n_rows, column_scale)
                  if link.n_rows > 1 else None)
        super()._unpack(family, column_scale, design)
        self._variance_blocks = blocks

    def _predictor_blocks(self, X):
        """What :class:`~skvan.active._joint.PoolPosterior` needs of ``q`` for the rows
        of ``X``: their design, ``q``'s mean as one row per linear predictor, and
        each row's block of the covariance over ``[coef, intercept]``; None unless
        the covariance is a full matrix (a diagonal or Gram form has no cheap
        blocks to condition)."""
        check_is_fitted(self)
        if self.covariance_ != "full":
            return None
        X = validate_data(self, X, reset=False, **CHECK_X)
        link = self._link()
        mean = self._mean().reshape(link.n_rows, -1)
        blocks = self._family().sigma[None] if link.n_rows == 1 else self._class_blocks()
        return self._design(X), mean, blocks

    def _class_blocks(self):
        """Each class's block of the covariance over ``[coef, intercept]`` (with
        more than two classes), kept by :meth:`_unpack`."""
        blocks = getattr(self, "_variance_blocks", None)
        if blocks is None:  # an estimator unpickled without the blocks
            blocks = class_variance_blocks(self._family(), self._link().n_rows)
        return blocks

    def _log_proba(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, **CHECK_X)
        link = self._link()
        if link.n_rows == 1:
            return link.log_proba(self._design(X), self._family())
        return link.log_proba(self._design(X), self._mean(), self._class_blocks())

    def decision_function(self, X):
        """Scores from the predictive distribution under ``q``.

        Binary: the log-odds ``log p(y=1|x) - log p(y=0|x)`` (for ``objective="vo"``
        after convergence, ``x^T coef_ + intercept_``). Multiclass: the
        log-probabilities of :meth:`predict_log_proba` (after VO convergence, the
        linear predictors ``X coef_^T + intercept_`` less their per-row log-sum-exp).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
            As above; they rank classes as :meth:`predict_proba` does.
        """
        if is_dask_collection(X):
            width = None if len(self.classes_) == 2 else len(self.classes_)
            return map_rows(self.decision_function, X, width)
        log_proba = self._log_proba(X)
        return log_proba[:, 1] - log_proba[:, 0] if log_proba.shape[1] == 2 else log_proba

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
        if is_dask_collection(X):
            return map_rows(self.predict_log_proba, X, len(self.classes_))
        log_proba = self._log_proba(X)
        if log_proba.shape[1] > 2:
            return log_proba  # normalised already (probit_log_softmax)
        # The binary quadrature's probabilities sum to 1 to rounding; make it exact.
        return log_proba - np.logaddexp(log_proba[:, :1], log_proba[:, 1:])

    def predict_proba(self, X):
        """Class probabilities averaged over ``q``: ``E_q[p(y | x, W, b)]``.

        Two classes: the expectation of the sigmoid over the predictor's Gaussian
        by quadrature (exact to round-off). More: the probit approximation
        ``softmax(m_k / sqrt(1 + pi v_k / 8))`` from each class's predictor mean
        ``m_k`` and variance ``v_k`` under ``q``, one product for the means and
        one per class for the variances: exact as ``q`` narrows (a VO fit), a
        smoothing of the plug-in where ``q`` is wide, whose held-out log-loss
        matches the exact average's (``tests/test_multinomial.py``). For a
        Monte Carlo average, ``sample_proba(X, n_samples).mean(axis=0)``.

        Parameters
        ----------
        X : {array-like, sparse matrix, dask array} of shape (n_samples, n_features)
            Samples. A dask array gives a dask array, computed chunk by chunk
            where the chunks live (as do the other prediction methods).

        Returns
        -------
        proba : ndarray or dask array of shape (n_samples, n_classes)
            Probabilities, columns in the order of ``classes_``; rows sum to 1.
        """
        if is_dask_collection(X):
            return map_rows(self.predict_proba, X, len(self.classes_))
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
        if is_dask_collection(X):
            return map_rows(self.predict, X, dtype=self.classes_.dtype)
        log_proba = self._log_proba(X)
        return self.classes_[np.argmax(log_proba, axis=1)]

    def sample_proba(self, X, n_samples=100, random_state=None, *, n_draws=NOT_PASSED):
        """Class probabilities under parameters drawn from ``q``.

        The signature of scikit-activeml's ``sample_proba`` (which its BALD
        strategies call by keyword) and of scikit-learn's
        ``GaussianProcessRegressor.sample_y``.

        Parameters
        ----------
        X : array-like of shape (n_rows, n_features)
            Samples.
        n_samples : int, default=100
            Number of parameter vectors drawn from ``q``, ``>= 1``.
        random_state : int, RandomState instance or None, default=None
            Seeds the draws.
        n_draws : int
            Deprecated name of ``n_samples`` (a ``FutureWarning``; removed in 0.3).

        Returns
        -------
        proba : ndarray of shape (n_samples, n_rows, n_classes)
            ``proba[s]`` are the class probabilities under the ``s``-th draw; their
            mean over ``s`` estimates :meth:`predict_proba`.
        """
        n_samples = renamed("n_draws", "n_samples", n_draws, n_samples)
        check_is_fitted(self)
        if not isinstance(n_samples, numbers.Integral) or n_samples < 1:
            raise ValueError(f"n_samples must be an integer >= 1, got {n_samples!r}.")
        X = validate_data(self, X, reset=False, **CHECK_X)
        thetas = self._family().sample(int(n_samples), check_random_state(random_state))
        return self._link().proba(self._design(X), thetas)
