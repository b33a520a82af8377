"""A linear model objective whose rows live in chunks elsewhere (dask workers).

The data term is a sum over rows, so its value, gradient, curvature and every
Gaussian expectation of them are sums over row chunks: each chunk computes its
own share where it lives, and only ``p``-sized results travel
(:class:`~skvan.expectations.MapReduce`). A :class:`ChunkSpec` says how a chunk
``(X_c, y_c, w_c)`` becomes the objective of its rows; a chunks engine
(:class:`skvan._dask.DaskChunks`) runs functions on the chunks and sums.
"""

import numpy as np

from .._data import as_design, augmented_gram, column_statistics, weighted_column_squares
from ._base import Objective
from ._linear import jacobi_scale_from
from ._quadratic import QuadraticObjective

#: Why a least squares on dask arrays refuses entries beyond ``1e+-100`` (or an
#: elastic net's ridge rows that large): ``X^T W X`` is formed before the columns
#: are rescaled, and such squares leave float64's range.
UNSCALED_DASK = (
    "X (or the elastic net's ridge rows) has entries beyond 1e+-100 in absolute value: "
    "on dask arrays X^T W X is formed before the columns are rescaled, and such squares "
    "leave float64's range. Rescale the features, for example with "
    "dask_ml.preprocessing.StandardScaler, or fit numpy data."
)


class ChunkSpec:
    """How a chunk ``(X_c, y_c, w_c)`` becomes the objective of its rows.

    Parameters
    ----------
    link : BinaryLink or SoftmaxLink
        Builds the data term from the design, the labels and the weights.
    fit_intercept : bool
        Whether the design gets a column of ones.
    class_weight : ndarray of shape (n_classes,) or None, default=None
        Multiplies each row's weight by its class's.
    column_scale : ndarray of shape (n_params,) or None, default=None
        The objective is over ``column_scale * theta``.
    """

    def __init__(self, link, fit_intercept, class_weight=None, column_scale=None):
        self.link = link
        self.fit_intercept = fit_intercept
        self.class_weight = class_weight
        self.column_scale = column_scale

    def weights(self, y, w):
        """The chunk's row weights: ``w`` (None: ones) times the class weights."""
        w = np.ones(len(y)) if w is None else np.asarray(w, dtype=np.float64)
        if self.class_weight is not None:
            w = w * self.class_weight[np.searchsorted(self.link.classes, y)]
        return w

    def objective(self, X, y, w):
        """The data term of the rows ``X`` (float32 or float64; upcast here, one chunk
        at a time), without a penalty."""
        f = self.link.objective(as_design(X, self.fit_intercept), y, self.weights(y, w))
        return f if self.column_scale is None else f.reparametrised(self.column_scale)

    def rescaled(self, column_scale):
        """The same spec over ``column_scale * theta``."""
        return ChunkSpec(self.link, self.fit_intercept, self.class_weight, column_scale)


def _checks(X, w):
    """Whether a chunk's ``X`` is finite and its weights (None: ones) finite and
    non-negative."""
    weights_ok = w is None or bool(np.all(np.isfinite(w)) and np.all(np.asarray(w) >= 0))
    return bool(np.all(np.isfinite(X))), weights_ok


def labels_summary(X, y, w):
    """What validation needs of a chunk: whether ``X`` and ``w`` are finite (``w``
    also non-negative), and its labels with their counts."""
    labels, counts = np.unique(np.asarray(y), return_counts=True)
    return _checks(X, w) + (labels, counts)


def least_squares_summary(X, y, w, fit_intercept):
    """A chunk's share of the least squares on ``[X, 1]`` and what validation
    needs of it: ``(M, top, total, finite X, finite y, weights ok)``, ``M`` the
    chunk's :func:`~skvan._data.augmented_gram` (None where a check fails),
    ``top`` its columns' largest ``|x_ij|`` and ``total`` its weight."""
    X, y = np.asarray(X), np.asarray(y, dtype=np.float64)
    finite_X, weights_ok = _checks(X, w)
    checks = (finite_X, bool(np.all(np.isfinite(y))), weights_ok)
    w = np.ones(len(y)) if w is None else np.asarray(w, dtype=np.float64)
    top = np.zeros(X.shape[1])
    if not all(checks):
        return (None, top, 0.0) + checks
    if X.shape[0]:
        top = np.abs(X).max(axis=0).astype(np.float64)
    with np.errstate(over="ignore", invalid="ignore"):  # the caller checks M
        M = augmented_gram(X, y, w, fit_intercept)
    return (M, top, float(np.sum(w))) + checks


def least_squares_statistics(chunks, fit_intercept, name):
    """The least squares on ``[X, 1]`` and its columns' statistics ``(raw, top,
    squares)`` (as :meth:`~skvan.van.LassoSolver.statistics` reads them off the
    rows) from one pass over the chunks (:class:`skvan._dask.DaskChunks`), with
    the checks of ``X``, ``y`` and the weights; ``name`` (the estimator's) in the
    errors."""
    parts = chunks.map(least_squares_summary, fit_intercept)
    for k, what in ((3, "Input X contains NaN or infinity."),
                    (4, "Input y contains NaN or infinity."),
                    (5, "sample_weight must be finite and non-negative.")):
        if not all(part[k] for part in parts):
            raise ValueError(what)
    n_params = parts[0][1].size + int(fit_intercept)
    if n_params > chunks.n_samples:
        raise ValueError(
            f"{name}.fit on dask arrays needs at least as many rows as parameters "
            f"({chunks.n_samples} rows, {n_params} parameters): wider data are solved "
            "on working sets of the rows' columns. Fit numpy data."
        )
    with np.errstate(over="ignore", invalid="ignore"):  # checked below
        M = np.sum([part[0] for part in parts], axis=0)
    if not np.isfinite(M).all():
        raise ValueError(UNSCALED_DASK)
    raw = QuadraticObjective.from_augmented(M, float(sum(part[2] for part in parts)))
    top = np.max([part[1] for part in parts], axis=0)
    if fit_intercept:
        top = np.append(top, 1.0)
    return raw, top, np.diag(raw.G).copy()


def design_summary(X, y, w, spec):
    """Column statistics of the chunk's design: ``(total weight, max |x_j|,
    sum_i w_i x_ij^2)``."""
    Xd, weights = as_design(X, spec.fit_intercept), spec.weights(y, w)
    return (float(np.sum(weights)),) + column_statistics(Xd, weights)


def _squares(X, y, w, spec, norm):
    return weighted_column_squares(as_design(X, spec.fit_intercept), spec.weights(y, w), norm)


def _value(X, y, w, spec, theta):
    return spec.objective(X, y, w).value(theta)


def _gradient(X, y, w, spec, theta):
    return spec.objective(X, y, w).gradient(theta)


def _hessian(X, y, w, spec, theta):
    return spec.objective(X, y, w).hessian(theta)


class ChunkedObjective(Objective):
    """``f(theta) = sum_c f_c(theta) + g(theta)`` over row chunks ``c`` held by
    ``chunks``, ``f_c`` the data term of chunk ``c`` (:class:`ChunkSpec`) and ``g``
    a separable penalty.

    Parameters
    ----------
    chunks : chunks engine
        Has ``n_samples`` and ``map(fn, *args)``, the list of ``fn(X_c, y_c, w_c,
        *args)`` over the chunks, computed where they live.
    spec : ChunkSpec
    penalty : object
        A separable penalty over all parameters.
    n_params : int
    summary : tuple
        :func:`design_summary` summed over the chunks (of the unscaled design).
    """

    def __init__(self, chunks, spec, penalty, n_params, summary):
        self.chunks = chunks
        self.spec = spec
        self.penalty = penalty
        self.n_params = n_params
        self.summary = summary

    @classmethod
    def build(cls, chunks, spec, penalty, n_params):
        """Sum :func:`design_summary` over the chunks (one pass) and build."""
        parts = chunks.map(design_summary, spec)
        summary = (sum(p[0] for p in parts), np.max([p[1] for p in parts], axis=0),
                   np.sum([p[2] for p in parts], axis=0))
        return cls(chunks, spec, penalty, n_params, summary)

    @property
    def n_samples(self):
        """Number of rows over all chunks."""
        return self.chunks.n_samples

    @property
    def width(self):
        """Columns of the design (features, plus the intercept's)."""
        return self.summary[1].shape[0]

    def _scale(self):
        s = self.spec.column_scale
        return np.ones(self.width) if s is None else s[: self.width]

    def column_scale(self):
        """The per-parameter scales of the in-memory objectives' ``column_scale``
        (Jacobi, rounded to powers of two) from the chunks' column statistics."""
        total, top, colsq = self.summary
        n_rows = self.n_params // self.width
        bound = np.broadcast_to(self.penalty.curvature_bound, (self.n_params,))
        ridge = bound.reshape(n_rows, -1).max(axis=0) / self.prototype().loss.max_curvature

        def squares(norm):
            if norm is None:
                return colsq
            return np.sum(self.chunks.map(_squares, self.spec, norm), axis=0)

        return np.tile(jacobi_scale_from(total, top, squares, ridge, self.n_samples), n_rows)

    def prototype(self):
        """The in-memory objective of an empty chunk: its type and loss are those of
        every chunk's."""
        n_features = self.width - int(self.spec.fit_intercept)
        return self.spec.objective(np.zeros((0, n_features)), np.zeros(0), None)

    def reparametrised(self, column_scale):
        """``f`` over ``theta' = column_scale * theta``."""
        return ChunkedObjective(self.chunks, self.spec.rescaled(column_scale),
                                self.penalty.reparametrised(column_scale), self.n_params,
                                self.summary)

    def unit_predictor_precision(self):
        """The diagonal of :func:`~skvan.van.unit_predictor_precision` over one row of
        parameters, from the column statistics."""
        total, _, colsq = self.summary
        value = float(np.sum(colsq / self._scale() ** 2)) / total if total > 0 else np.nan
        value = value if np.isfinite(value) and value > 0 else 1.0
        return np.full(self.width, value)

    def value(self, theta):
        return float(sum(self.chunks.map(_value, self.spec, theta))) + self.penalty.value(theta)

    def gradient(self, theta):
        return np.sum(self.chunks.map(_gradient, self.spec, theta), axis=0) + self.penalty.gradient(theta)

    def hessian(self, theta):
        H = np.sum(self.chunks.map(_hessian, self.spec, theta), axis=0)
        return self.penalty.add_curvature(H, self.penalty.hessian_diag(theta))
