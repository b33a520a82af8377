"""An adapter that lets scikit-activeml's strategies use skvan's classifiers.

scikit-activeml's BALD strategies draw committee predictions from a
``sample_proba`` method, but accept only its own ``SkactivemlClassifier`` base
class. scikit-activeml is an optional dependency, imported only when the
adapter is built.
"""

import functools

import numpy as np
from sklearn.base import clone
from sklearn.utils.validation import check_array, check_is_fitted

from .._warnings import NOT_PASSED, renamed


@functools.lru_cache(maxsize=None)
def _adapter_class():
    try:
        from skactiveml.base import SkactivemlClassifier
        from skactiveml.utils import MISSING_LABEL, check_n_features, is_labeled
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(
            "to_skactiveml needs scikit-activeml: pip install scikit-activeml"
        ) from exc

    class SkactivemlVAN(SkactivemlClassifier):
        """A skvan classifier as a ``skactiveml.base.SkactivemlClassifier``.

        ``fit`` validates as scikit-activeml's classifiers do (its label encoder:
        ``classes``, ``missing_label``, ``cost_matrix``) and fits the wrapped
        estimator on the labelled rows, their labels encoded as ``0 .. K - 1``;
        while some of ``classes`` have no label yet it starts from the prior and
        makes one streaming update (``partial_fit``) instead, and with no label at
        all it predicts the uniform distribution. ``predict`` and ``score`` are
        scikit-activeml's (the cost matrix's decision, labels decoded).
        """

        def __init__(self, estimator=None, classes=None, missing_label=MISSING_LABEL,
                     cost_matrix=None, random_state=None):
            super().__init__(classes=classes, missing_label=missing_label,
                             cost_matrix=cost_matrix, random_state=random_state)
            self.estimator = estimator

        def fit(self, X, y, sample_weight=None):
            X, y, sample_weight = self._validate_data(X, y, sample_weight)
            labelled = is_labeled(y, missing_label=-1)
            self.estimator_ = None
            if np.any(labelled):
                codes = np.asarray(y[labelled], dtype=int)
                w = None if sample_weight is None else sample_weight[labelled]
                self.estimator_ = clone(self.estimator)
                if np.unique(codes).size == len(self.classes_):
                    self.estimator_.fit(X[labelled], codes, sample_weight=w)
                else:
                    self.estimator_.partial_fit(X[labelled], codes,
                                                classes=np.arange(len(self.classes_)),
                                                sample_weight=w)
            return self

        def _checked(self, X):
            check_is_fitted(self)
            X = check_array(X)
            check_n_features(self, X, reset=False)
            return X

        def predict_proba(self, X):
            X = self._checked(X)
            if self.estimator_ is None:
                return np.full((len(X), len(self.classes_)), 1.0 / len(self.classes_))
            return self.estimator_.predict_proba(X)

        def sample_proba(self, X, n_samples=10, random_state=None, *, n_draws=NOT_PASSED):
            n_samples = renamed("n_draws", "n_samples", n_draws, n_samples)
            X = self._checked(X)
            if self.estimator_ is None:
                return np.full((n_samples, len(X), len(self.classes_)), 1.0 / len(self.classes_))
            return self.estimator_.sample_proba(X, n_samples=n_samples, random_state=random_state)

    SkactivemlVAN.__module__ = __name__
    SkactivemlVAN.__qualname__ = "SkactivemlVAN"
    return SkactivemlVAN


def to_skactiveml(estimator, classes=None, **kwargs):
    """Wrap a skvan classifier for scikit-activeml (BatchBALD, GreedyBALD, ...).

    Parameters
    ----------
    estimator : VANLogisticRegression or ActiveVANClassifier
        The classifier to wrap (cloned at each fit).
    classes : array-like of shape (n_classes,), default=None
        Every label; needed when the first labelled samples do not cover them all.
    **kwargs : dict
        ``missing_label``, ``cost_matrix``, ``random_state`` of
        ``skactiveml.base.SkactivemlClassifier``.

    Returns
    -------
    adapter : skactiveml.base.SkactivemlClassifier
        Pass it as ``ensemble`` with ``sample_predictions_method_name="sample_proba"``.

    Examples
    --------
    scikit-activeml marks unlabelled samples with ``missing_label`` (NaN); its
    BatchBALD scores a batch jointly from draws of ``q``:

    >>> import numpy as np
    >>> from skactiveml import pool
    >>> from sklearn.datasets import load_breast_cancer
    >>> from sklearn.preprocessing import StandardScaler
    >>> from skvan import VANLogisticRegression
    >>> from skvan.active import to_skactiveml
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> X = StandardScaler().fit_transform(X)
    >>> y_partial = np.full(len(y), np.nan)
    >>> y_partial[:20] = y[:20]  # 20 labels so far
    >>> clf = to_skactiveml(VANLogisticRegression(objective="vi", C=0.1), classes=[0, 1],
    ...                     random_state=0).fit(X, y_partial)
    >>> qs = pool.BatchBALD(sample_predictions_method_name="sample_proba", random_state=0)
    >>> idx = qs.query(X, y_partial, ensemble=clf, batch_size=3)
    >>> len(idx), bool(np.all(np.isnan(y_partial[idx])))
    (3, True)
    """
    return _adapter_class()(estimator=estimator, classes=classes, **kwargs)


def __getattr__(name):
    # lets pickle find the adapter class, which exists only once scikit-activeml is imported
    if name == "SkactivemlVAN":
        return _adapter_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
