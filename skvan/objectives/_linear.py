"""Objectives of linear models: a data term through ``a = X theta``, plus a penalty."""

import numpy as np
import scipy.sparse as sp

from .._data import (
    column_statistics,
    dot,
    gram,
    gram_and_tdot,
    row_squared_norms,
    scale_columns,
    squared,
    tdot,
    unit_variance_scale,
    weighted_column_squares,
)
from .._reductions import all_finite, all_of, any_of, max_of, min_of
from ._base import Objective
from ._losses import SquaredLoss
from ._penalties import NoPenalty, add_diagonal

#: Bounds of the column scales, ``2^+-160`` (about ``1e+-48``): the precision,
#: which under VO grows up to 1e100 times the curvature, must stay finite in the
#: original coordinates.
_MAX_LOG2_SCALE = 160
#: Columns are rescaled only when their scales differ by more than ``2^10`` (or
#: all are that far from 1): VAN's Newton-like steps do not need it on moderately
#: scaled data; it matters when the curvature's diagonal spans many decades.
_MAX_LOG2_SPREAD = 10


def jacobi_column_scale(X, sample_weight, ridge):
    """Per-column scales: the square root of the weighted mean of ``x_j^2`` plus
    ``ridge_j`` per unit of weight, rounded to a power of two; all ones when the
    columns are within ``2^10`` of each other and of 1, or the weights sum to
    zero (:meth:`LinearModelObjective.column_scale`)."""
    top, squares = column_statistics(X, sample_weight)
    return jacobi_scale_from(
        float(np.sum(sample_weight)), top,
        lambda norm: squares if norm is None else weighted_column_squares(X, sample_weight, norm),
        ridge, X.shape[0])


#: Columns whose entries lie within ``1e+-100`` have squares :func:`_jacobi_scale`
#: sums without normalising them; column statistics read off a Gram matrix
#: (:func:`gram_column_statistics`) stand in for a pass over the rows only there.
_SAFE_ENTRY = 1e100
_MAX_FLOAT = float(np.finfo(np.float64).max)


def gram_column_statistics(G, sample_weight):
    """:func:`column_statistics` of a design read off its weighted Gram matrix ``G
    = X^T W X``: ``(top, squares)`` with ``squares = diag(G)`` and, for ``top``, the
    upper bound ``sqrt(G_jj / min_i w_i)`` of ``max_i |x_ij|`` (0 for a column of
    zeros), which :func:`jacobi_scale_from` can take for the maximum: it decides
    only whether the squares need normalising and whether they could overflow,
    and where this returns them neither can happen. ``(None, None)`` where the
    bound cannot stand in: some weight is 0 (rows ``G`` does not see), or a
    column's entries may lie outside ``[1e-100, 1e100]`` (from ``G_jj /
    sum_i w_i <= max_i x_ij^2 <= G_jj / min_i w_i``), or ``G`` is not finite."""
    w = np.asarray(sample_weight)
    low = float(min_of(w)) if w.size else 0.0
    squares = G.diagonal().copy()
    top = np.sqrt(squares / low) if low > 0 else None
    # (the comparisons are False for NaN: an overflowed G fails them)
    if top is None or not all_of(top < _SAFE_ENTRY):
        return None, None
    lower = np.sqrt(squares / float(w.sum()))
    if not all_of((lower > 1.0 / _SAFE_ENTRY) | (squares == 0)):
        return None, None
    return top, squares


def jacobi_scale_from(total, top, squares, ridge, n_samples):
    """:func:`jacobi_column_scale` from column statistics: the total weight, each
    column's largest ``|x_ij|`` and ``squares(norm)``, the weighted sums of
    ``(x_ij / norm_j)^2`` (``norm`` None: 1), which data kept in chunks sums
    chunk by chunk, and the number of rows (for :func:`check_entry_size` on the
    rescaled columns)."""
    scale = _jacobi_scale(total, top, squares, ridge)
    check_entry_size(top, n_samples, scale)
    return scale


def _jacobi_scale(total, top, squares, ridge):
    if total <= 0:
        return np.ones(top.shape[0])
    top = top.copy()
    top[top == 0] = 1.0
    # Squares of entries beyond 1e+-100 would over/underflow: normalise those.
    safe = all_of((top < _SAFE_ENTRY) & (top > 1.0 / _SAFE_ENTRY))
    scale = np.sqrt(squares(None if safe else top) / total)
    # (1 * s is s and hypot(s, 0) is |s|, exactly: most fits skip both.)
    if not safe:
        scale *= top
    if any_of(ridge):  # (a scalar, or one per column)
        scale = np.hypot(scale, np.sqrt(ridge / total))
    # Columns too small to rescale (below 2^-_MAX_LOG2_SCALE, e.g. subnormal
    # entries) are numerically zero: rescaling them to the clip would multiply
    # their penalty by 2^160 and the start's expected penalty with it.
    scale[~(np.isfinite(scale) & (scale >= 2.0**-_MAX_LOG2_SCALE))] = 1.0
    # (ndarray methods: np.clip, np.ptp and np.mean cost several times their
    # arithmetic on a few columns, and small fits make this once per fit.)
    log2 = np.round(np.log2(scale)).clip(-_MAX_LOG2_SCALE, _MAX_LOG2_SCALE)
    low, high = min_of(log2), max_of(log2)
    if high - low <= _MAX_LOG2_SPREAD and abs(log2.mean()) <= _MAX_LOG2_SPREAD:
        return np.ones_like(log2)
    return np.exp2(log2)


def check_entry_size(top, n_samples, scale=1.0):
    """Raise a ValueError if the columns' largest ``|x_ij|`` (``top``, in ``n_samples``
    rows), divided by the ``scale`` the fit works in, are so large that a sum of
    all the squares, ``n_samples * n_columns`` of them, could overflow float64
    (``|x| / scale > sqrt(max_float / (n_samples n_columns))``): the passes form
    such sums (Gram matrices, predictor variances, squared norms)."""
    top = np.asarray(top, dtype=np.float64)
    if not top.size:
        return
    limit = np.sqrt(_MAX_FLOAT / max(n_samples * top.size, 1))
    if float(max_of(top / scale)) > limit:
        raise ValueError(
            f"X has entries up to {float(np.max(top)):.3g} in absolute value: sums of "
            "their squares, which skvan's float64 arithmetic forms, would overflow "
            f"(the limit here is about {limit * float(np.max(scale)):.2g}). Rescale the "
            "features, for example with sklearn.preprocessing.StandardScaler."
        )


def check_predictors(*arrays):
    """Raise a ValueError if linear predictors ``x^T theta`` or their spread under
    ``q`` (``arrays``) are not finite: the rows of ``X`` are too large for the
    model (predictions on data far beyond the training data's scale)."""
    if not all(all_finite(a) for a in arrays):
        raise ValueError(
            "The linear predictors x^T theta, or their spread under q, overflow float64: "
            "X has entries too large for this model. Rescale the features as the "
            "training data were, for example with sklearn.preprocessing.StandardScaler."
        )


#: :meth:`LinearModelObjective.smooth_gradient` of least squares goes through the
#: Gram matrix's columns where at most this share of ``theta`` is nonzero.
SPARSE_GRADIENT = 0.25


class GramColumns:
    """Columns of ``G = X^T W X`` formed as they are asked for and kept, side by
    side in one array: a Lasso's supports grow a few columns at a time and at
    most ``n`` coefficients are nonzero, so a wide Lasso needs ``G`` only on the
    columns that were ever in a support (``n p`` operations each, once).

    Forming columns reads all the rows, whatever their number: one pass forms
    ``ahead`` columns for little more than the time of one (the product is then a
    matrix product, not a matrix-vector one). Where columns are missing, those
    :meth:`expect` named (the KKT check's next candidates to enter) are formed in
    the same pass, up to ``ahead`` in all.

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n_samples, n_params)
    weights : ndarray of shape (n_samples,)
    ahead : int, default=32
        Columns formed per pass over the rows, where enough are expected.
    """

    def __init__(self, X, weights, ahead=32):
        self.X, self.weights, self.ahead = X, weights, ahead
        self.position = {}
        self.matrix = np.empty((X.shape[1], 0))
        self.expected = ()

    def expect(self, idx):
        """Name the columns likely to be asked for next, most likely first."""
        self.expected = idx

    def _ensure(self, idx):
        """The positions of ``idx`` in :attr:`matrix`, forming the missing columns
        (and expected ones) in one product with the rows."""
        missing = [j for j in dict.fromkeys(int(j) for j in idx) if j not in self.position]
        if missing:
            wanted = set(missing)
            for j in self.expected:
                if len(missing) >= self.ahead:
                    break
                j = int(j)
                if j not in self.position and j not in wanted:
                    missing.append(j)
                    wanted.add(j)
            columns = self.X[:, missing]
            columns = columns.toarray() if hasattr(columns, "toarray") else np.asarray(columns)
            block = np.asarray(tdot(self.X, self.weights[:, None] * columns))
            used = len(self.position)
            if used + len(missing) > self.matrix.shape[1]:
                grown = np.empty((self.matrix.shape[0], max(2 * self.matrix.shape[1],
                                                            used + len(missing), 16)))
                grown[:, :used] = self.matrix[:, :used]
                self.matrix = grown
            self.matrix[:, used:used + len(missing)] = block
            for k, j in enumerate(missing):
                self.position[j] = used + k
        return np.array([self.position[int(j)] for j in idx], dtype=np.intp)

    def columns(self, idx, cols):
        """``G[idx][:, cols]``."""
        positions = self._ensure(cols)  # (first: it may grow the matrix)
        return self.matrix.take(idx, axis=0).take(positions, axis=1)

    def block(self, idx):
        """``G[idx, idx]``."""
        positions = self._ensure(idx)
        return np.ascontiguousarray(self.matrix[np.asarray(idx)][:, positions])

    def times(self, idx, values):
        """``G[:, idx] @ values`` without gathering the columns."""
        positions = self._ensure(idx)
        z = np.zeros(len(self.position))
        z[positions] = values
        return self.matrix[:, :z.size] @ z


class RowsObjective(Objective):
    """Base of objectives whose data term is a weighted sum over the rows of a
    design ``X`` (attributes ``X``, ``sample_weight``, ``multiplier``)."""

    @property
    def n_samples(self):
        """Number of rows in the data term."""
        return self.X.shape[0]

    @property
    def weights(self):
        """Effective per-sample weights ``multiplier * w_i`` (computed once: an
        objective's data never change; ``_replace`` makes a new one)."""
        cached = getattr(self, "_weights", None)
        if cached is None or cached[0] is not self.sample_weight or cached[1] != self.multiplier:
            cached = (self.sample_weight, self.multiplier, self.multiplier * self.sample_weight)
            self._weights = cached
        return cached[2]

    def max_row_squared_norm(self):
        """``max_i ||x_i||^2`` (0 without rows), computed once per objective."""
        if getattr(self, "_max_row_norm", None) is None:
            self._max_row_norm = float(np.max(row_squared_norms(self.X), initial=0.0))
        return self._max_row_norm

    def with_dense_rows(self):
        """The same objective with ``X`` as a dense array (``self`` if it is one):
        for a small minibatch of a sparse design, whose products BLAS makes faster
        than sparse routines with their per-call cost."""
        return self._replace(X=self.X.toarray()) if sp.issparse(self.X) else self

    def unit_predictor_precision(self):
        """The diagonal precision, one entry per column of ``X``, under which the
        linear predictors have unit variance on average (the solver's start)."""
        return np.full(self.X.shape[1], unit_variance_scale(self.X, self.sample_weight))


class LinearModelObjective(RowsObjective):
    """``f(theta) = multiplier * sum_i w_i l(y_i, x_i^T theta) + g(theta)``.

    The data term is a sum of per-sample losses of the linear predictor; the
    penalty ``g`` is separable. An intercept is a column of ones in ``X``.

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n_samples, n_params)
        Design matrix (with a column of ones for an intercept); CSR if sparse.
    y : ndarray of shape (n_samples,)
        Targets in the loss's convention.
    loss : object
        A loss from :mod:`skvan.objectives._losses`.
    sample_weight : ndarray of shape (n_samples,), default=None
        Non-negative weights ``w_i``; None means ones.
    penalty : object, default=None
        A separable penalty (for example :class:`L2Penalty`); None is no penalty.
    multiplier : float, default=1.0
        Multiplies the data term. A minibatch of ``b`` rows out of ``n`` uses
        ``n / b`` so that its gradient estimates the full-data gradient; ``1 /
        sigma^2`` turns a squared loss into a negative log likelihood.
    rows : ndarray of int or None, default=None
        For a minibatch (:meth:`subsample`), its rows in the full data.
    """

    def __init__(self, X, y, loss, sample_weight=None, penalty=None, multiplier=1.0, rows=None):
        self.X = X
        self.y = y
        self.loss = loss
        self.sample_weight = np.ones(X.shape[0]) if sample_weight is None else sample_weight
        self.penalty = NoPenalty() if penalty is None else penalty
        self.multiplier = float(multiplier)
        self.rows = rows
        self.n_params = X.shape[1]
        self._X_squared = None

    def with_penalty(self, penalty):
        """The same data term with another ``penalty``."""
        return self._share_smooth_cache(self._replace(penalty=penalty))

    def _replace(self, **changes):
        args = dict(X=self.X, y=self.y, loss=self.loss, sample_weight=self.sample_weight,
                    penalty=self.penalty, multiplier=self.multiplier, rows=self.rows)
        args.update(changes)
        return LinearModelObjective(**args)

    def with_targets(self, y):
        """The same objective on other targets (one-vs-rest models share ``X``)."""
        return self._replace(y=y)

    def subsample(self, indices):
        """Return the objective on the rows ``indices``, scaled to the full data.

        The data term is multiplied by ``n_samples / len(indices)`` (on top of the
        current multiplier) so its gradient is an unbiased estimate of the full
        one; the penalty is unchanged.
        """
        return self._replace(X=self.X[indices], y=self.y[indices],
                             sample_weight=self.sample_weight[indices],
                             multiplier=self.multiplier * self.n_samples / len(indices),
                             rows=indices if self.rows is None else self.rows[indices])

    def restricted(self, columns):
        """``f`` as a function of ``theta[columns]`` alone, the other coordinates
        held at 0 (a working set)."""
        return self._replace(X=self.X[:, columns], penalty=self.penalty.restricted(columns))

    def multiplied(self, factor):
        """Return ``factor * f`` (for instance ``f / sigma^2``, a negative log joint)."""
        return self._replace(penalty=self.penalty.multiplied(factor),
                             multiplier=self.multiplier * factor)

    def reparametrised(self, column_scale):
        """Return ``f`` in the coordinates ``theta' = column_scale * theta``: the design
        ``X / column_scale`` and the penalty of ``theta'`` (``self`` if all scales are 1)."""
        if np.all(column_scale == 1.0):
            return self
        return self._replace(X=scale_columns(self.X, 1.0 / column_scale),
                             penalty=self.penalty.reparametrised(column_scale))

    def column_scale(self):
        """Per-parameter scales that equalise the diagonal of the curvature.

        ``s_j`` is the square root of the weighted mean of ``x_j^2`` plus the
        penalty's largest curvature relative to the loss's, per unit of weight,
        rounded to a power of two (so that rescaling is exact) and all ones when
        the columns are within ``2^10`` of each other and of 1, or the weights sum
        to zero. In the coordinates ``s * theta`` (:meth:`reparametrised`) the
        diagonal of the curvature is then equal to within a factor of 2, as Jacobi
        preconditioning makes it: on features spanning 1e-8 to 1e8 that keeps the
        precision's eigenvalues within float64's reach (they would span 1e32).
        """
        bound = np.broadcast_to(self.penalty.curvature_bound, (self.n_params,))
        return jacobi_column_scale(self.X, self.sample_weight, bound / self.loss.max_curvature)

    # -- from per-sample derivatives to derivatives in theta --------------------
    def predictors(self, theta):
        """``X theta``."""
        return dot(self.X, theta)

    def data_gradient(self, raw_gradient):
        """Return ``X^T (multiplier * w * raw_gradient)``."""
        return tdot(self.X, self.weights * raw_gradient)

    def data_derivatives(self, raw_gradient, raw_curvature):
        """:meth:`data_gradient` and the full :meth:`data_curvature` in one pass over
        the rows (:func:`skvan._data.gram_and_tdot`)."""
        w = self.weights
        return gram_and_tdot(self.X, w * raw_curvature, w * raw_gradient)[::-1]

    def data_curvature(self, raw_curvature, diagonal=False):
        """Return ``X^T diag(multiplier * w * raw_curvature) X``, or only its diagonal.

        (:func:`skvan._data.gram`: row blocks, or one sparse product.)
        """
        d = self.weights * raw_curvature
        if diagonal:
            if self._X_squared is None:
                self._X_squared = squared(self.X)
            return np.asarray(tdot(self._X_squared, d)).ravel()
        return gram(self.X, d)

    # -- least squares through the rows (squared loss) ---------------------------
    @property
    def c(self):
        """``1/2 sum_i w_i y_i^2`` (the data term at ``theta = 0``)."""
        return 0.5 * float(np.dot(self.weights * self.y, self.y))

    def smooth_value(self, theta):
        """The data term alone."""
        return float(np.dot(self.weights, self.loss.loss(self.y, dot(self.X, theta))))

    def smooth_gradient(self, theta):
        """The gradient of the data term alone. Least squares at a sparse ``theta``
        (at most :data:`SPARSE_GRADIENT` of its entries nonzero: the KKT checks of
        a wide Lasso), where :meth:`keep_gram_columns` asked for the Gram matrix's
        columns, take it from those of its support, ``G_{:, S} theta_S - X^T W
        y``: ``p |S|`` operations, each column formed once (:class:`GramColumns`),
        where a pass over the rows costs ``2 n p``."""
        columns = self._kept_columns()
        if columns is not None and isinstance(self.loss, SquaredLoss):
            support = np.flatnonzero(theta)
            if support.size <= SPARSE_GRADIENT * self.n_params:
                return columns.times(support, theta[support]) - self._correlation()
        return self.data_gradient(self.loss.derivatives(self.y, dot(self.X, theta))[0])

    def _correlation(self):
        """``X^T W y`` (computed once, in :meth:`smooth_cache`)."""
        shared = self.smooth_cache()
        if "correlation" not in shared:
            shared["correlation"] = np.asarray(tdot(self.X, self.weights * self.y)).ravel()
        return shared["correlation"]

    def keep_gram_columns(self):
        """Form ``X^T W X``'s columns as the KKT work asks for them and keep them
        (:class:`GramColumns`), for this objective and its copies under other
        penalties. Forming a column costs a pass over the rows; it pays where the
        same columns serve many checks (a Lasso path's alphas), not a single
        fit's few, which read the rows instead."""
        shared = self.smooth_cache()
        if "gram_columns" not in shared:
            shared["gram_columns"] = GramColumns(self.X, self.weights)
        return shared["gram_columns"]

    def _kept_columns(self):
        """The :class:`GramColumns` :meth:`keep_gram_columns` started, or None."""
        return self.smooth_cache().get("gram_columns")

    def expect_columns(self, violation):
        """Tell the kept Gram columns which coefficients may enter next: the
        largest KKT ``violation`` (``|grad_j| - lambda_j``, ``-inf`` on the support)."""
        columns = self._kept_columns()
        k = 0 if columns is None else min(columns.ahead, violation.size)
        if k:
            top = np.argpartition(violation, violation.size - k)[violation.size - k:]
            columns.expect(top[np.argsort(-violation[top], kind="stable")])

    def gram_block(self, idx):
        """``(X^T W X)[idx, idx]`` (squared loss: the Hessian of the data term)."""
        columns = self._kept_columns()
        return gram(self.X[:, idx], self.weights) if columns is None else columns.block(idx)

    def gram_columns(self, idx, cols):
        """``(X^T W X)[idx][:, cols]``: the columns ``cols`` against the columns ``idx``."""
        columns = self._kept_columns()
        if columns is not None:
            return columns.columns(idx, cols)
        X_cols = self.X[:, cols]
        X_cols = X_cols.toarray() if hasattr(X_cols, "toarray") else np.asarray(X_cols)
        return np.asarray(tdot(self.X[:, idx], self.weights[:, None] * X_cols))

    def gram_column(self, idx, j):
        """``(X^T W X)[idx, j]``: :meth:`gram_columns` of one column."""
        return self.gram_columns(idx, np.array([j]))[:, 0]

    def gram_diagonal(self):
        """``diag(X^T W X)`` (in row blocks: no ``X^2`` temporary)."""
        return weighted_column_squares(self.X, self.weights)

    # -- pointwise interface ------------------------------------------------------
    def value(self, theta):
        a = dot(self.X, theta)
        return float(np.dot(self.weights, self.loss.loss(self.y, a))) + self.penalty.value(theta)

    def gradient(self, theta):
        d1, _ = self.loss.derivatives(self.y, dot(self.X, theta))
        return self.data_gradient(d1) + self.penalty.gradient(theta)

    def hessian(self, theta):
        _, d2 = self.loss.derivatives(self.y, dot(self.X, theta))
        return add_diagonal(self.data_curvature(d2), self.penalty.hessian_diag(theta))

    def hessian_diagonal(self, theta):
        """The diagonal of :meth:`hessian`, one product with the squared rows."""
        _, d2 = self.loss.derivatives(self.y, dot(self.X, theta))
        return self.data_curvature(d2, diagonal=True) + self.penalty.hessian_diag(theta)

    def value_and_derivatives(self, theta, diagonal=False):
        """:meth:`value`, :meth:`gradient` and :meth:`hessian` (or its diagonal) from
        one product ``X theta``, the full Hessian and the gradient in one pass."""
        a = dot(self.X, theta)
        d1, d2 = self.loss.derivatives(self.y, a)
        value = float(np.dot(self.weights, self.loss.loss(self.y, a))) + self.penalty.value(theta)
        penalty = self.penalty.hessian_diag(theta)
        if diagonal:
            return (value, self.data_gradient(d1) + self.penalty.gradient(theta),
                    self.data_curvature(d2, diagonal=True) + penalty)
        gradient, curvature = self.data_derivatives(d1, d2)
        return value, gradient + self.penalty.gradient(theta), add_diagonal(curvature, penalty)

    def gauss_newton(self, theta):
        """The loss's per-sample Gauss-Newton curvature (``loss.gauss_newton``: the
        per-example gradient outer products, or ``J^T J`` for a squared loss) plus
        the penalty's own curvature; positive semi-definite by construction."""
        d1, d2 = self.loss.derivatives(self.y, dot(self.X, theta))
        return add_diagonal(self.data_curvature(self.loss.gauss_newton(d1, d2)),
                            self.penalty.hessian_diag(theta))
