"""An adapter that lets scikit-activeml's strategies use skvan's classifiers.

scikit-activeml's BALD strategies draw committee predictions from a
``sample_proba`` method, but accept only its own ``SkactivemlClassifier`` base
class. scikit-activeml is an optional dependency, imported only when the
adapter is built.
"""

import functools

import numpy as np
from sklearn.base import clone
from sklearn.utils.validation import check_is_fitted


@functools.lru_cache(maxsize=None)
def _adapter_class():
    try:
        from skactiveml.base import SkactivemlClassifier
        from skactiveml.utils import MISSING_LABEL, is_labeled
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(
            "to_skactiveml needs scikit-activeml: pip install scikit-activeml"
        ) from exc

    class SkactivemlVAN(SkactivemlClassifier):
        """A skvan classifier as a ``skactiveml.base.SkactivemlClassifier``.

        Fits the wrapped estimator on the labelled rows only (``y != missing_label``);
        while some of ``classes`` have no label yet, it starts from the prior and
        makes one streaming update (``partial_fit``) instead.
        """

        def __init__(self, estimator=None, classes=None, missing_label=MISSING_LABEL,
                     cost_matrix=None, random_state=None):
            super().__init__(classes=classes, missing_label=missing_label,
                             cost_matrix=cost_matrix, random_state=random_state)
            self.estimator = estimator

        def fit(self, X, y, sample_weight=None):
            X = np.asarray(X)
            y = np.asarray(y)
            labelled = is_labeled(y, missing_label=self.missing_label)
            if not np.any(labelled):
                raise ValueError("to_skactiveml: fitting needs at least one labelled sample.")
            y_known = y[labelled]
            self.classes_ = (np.unique(np.asarray(self.classes)) if self.classes is not None
                             else np.unique(y_known))
            w = None if sample_weight is None else np.asarray(sample_weight)[labelled]
            self.estimator_ = clone(self.estimator)
            if np.array_equal(np.unique(y_known), self.classes_):
                self.estimator_.fit(X[labelled], y_known, sample_weight=w)
            else:
                self.estimator_.partial_fit(X[labelled], y_known, classes=self.classes_, sample_weight=w)
            return self

        def predict_proba(self, X):
            check_is_fitted(self)
            return self.estimator_.predict_proba(X)

        def predict(self, X):
            return self.classes_[np.argmax(self.predict_proba(X), axis=1)]

        def sample_proba(self, X, n_draws=10, random_state=None):
            check_is_fitted(self)
            return self.estimator_.sample_proba(X, n_draws=n_draws, random_state=random_state)

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
    >>> import pytest
    >>> pool = pytest.importorskip("skactiveml.pool")  # skips without scikit-activeml
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
