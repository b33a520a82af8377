"""Quadratic objectives: least squares through its sufficient statistics."""

import numpy as np

from .._data import as_design, augmented_gram, gram, issparse, tdot
from .._reductions import all_of
from ._base import Objective
from ._penalties import NoPenalty, add_diagonal


class QuadraticObjective(Objective):
    """``f(theta) = 1/2 theta^T G theta - b^T theta + c + g(theta)``, ``g`` separable.

    Weighted least squares ``1/2 sum_i w_i (y_i - x_i^T theta)^2`` is this with
    ``G = X^T W X``, ``b = X^T W y``, ``c = 1/2 y^T W y`` (:meth:`from_data`): once
    they are formed, nothing costs ``O(n_samples)`` any more.

    Parameters
    ----------
    G : ndarray of shape (n_params, n_params)
        Symmetric positive semi-definite.
    b : ndarray of shape (n_params,)
    c : float
    penalty : object, default=None
        A separable penalty; None is no penalty.
    total_weight : float or None, default=None
        ``sum_i w_i`` of the rows behind ``G`` (:meth:`unit_predictor_precision`);
        None if unknown.

    Attributes
    ----------
    gram_rows : GramRows or None
        Where ``G`` is the Gram matrix of fewer rows than it has columns (wide
        data), those rows (:class:`~skvan.sparse.GramRows`): the gradient at a
        coefficient vector with more nonzeros than half the rows is computed
        through them (``Z^T (Z theta)``, no gather of ``G``'s rows); None
        otherwise. Copies with another penalty share it.
    ridged_rows : RidgedRows or None
        Where the KKT equations of large supports are solved through those rows
        (:class:`RidgedQuadratic`); None here.
    """

    gram_rows = None
    ridged_rows = None

    def __init__(self, G, b, c, penalty=None, total_weight=None):
        self.G = G
        self.b = b
        self.c = float(c)
        self.penalty = NoPenalty() if penalty is None else penalty
        self.n_params = G.shape[0]
        self.total_weight = total_weight

    @classmethod
    def from_data(cls, X, y, sample_weight=None, penalty=None):
        """Weighted least squares ``1/2 sum_i w_i (y_i - x_i^T theta)^2 + g(theta)``."""
        w = np.ones(X.shape[0]) if sample_weight is None else sample_weight
        return cls(gram(X, w), np.asarray(tdot(X, w * y)).ravel(), 0.5 * float(np.dot(w * y, y)),
                   penalty, float(np.sum(w)))

    @classmethod
    def from_design(cls, X, y, sample_weight, fit_intercept, penalty=None):
        """:meth:`from_data` on ``[X, 1]`` (the ones with ``fit_intercept``): for a
        dense ``X`` one pass over its rows (:func:`~skvan._data.augmented_gram`),
        without forming ``[X, 1]``."""
        if issparse(X):
            return cls.from_data(as_design(X, fit_intercept), y, sample_weight, penalty)
        return cls.from_augmented(augmented_gram(X, y, sample_weight, fit_intercept),
                                  float(np.sum(sample_weight)), penalty)

    @classmethod
    def from_augmented(cls, M, total_weight, penalty=None):
        """From ``M = [X, 1, y]^T W [X, 1, y]`` (:func:`~skvan._data.augmented_gram`,
        or its sum over row chunks) and ``sum_i w_i``."""
        return cls(np.ascontiguousarray(M[:-1, :-1]), M[:-1, -1].copy(), 0.5 * M[-1, -1], penalty,
                   total_weight)

    def rescaled(self, column_scale, penalty):
        """The same function in the coordinates ``theta' = column_scale * theta``
        with ``penalty`` (already over ``theta'``): ``G / (s s^T)``, ``b / s`` (exact
        for powers of two, the Jacobi scales)."""
        if all_of(column_scale == 1.0):  # the usual case: no p^2 division
            return QuadraticObjective(self.G, self.b, self.c, penalty, self.total_weight)
        return QuadraticObjective(self.G / np.outer(column_scale, column_scale),
                                  self.b / column_scale, self.c, penalty, self.total_weight)

    def unit_predictor_precision(self):
        """The diagonal precision under which the rows' linear predictors have unit
        variance on average, ``sum_i w_i ||x_i||^2 / sum_i w_i = tr(G) / sum_i w_i``
        (as :meth:`~skvan.objectives.LinearModelObjective.unit_predictor_precision`
        on the rows; 1 where that is not a positive finite number)."""
        if self.total_weight is None:
            raise AttributeError("unit_predictor_precision needs the total weight of the rows.")
        value = float(np.trace(self.G)) / self.total_weight if self.total_weight > 0 else np.nan
        return np.full(self.n_params, value if np.isfinite(value) and value > 0 else 1.0)

    @classmethod
    def from_linear(cls, objective):
        """The same function as a least-squares :class:`LinearModelObjective`,
        through its sufficient statistics (one pass over the rows)."""
        if objective.loss.name != "squared":
            raise TypeError(
                f"only a squared loss has quadratic sufficient statistics, got "
                f"{type(objective.loss).__name__}."
            )
        return cls.from_data(objective.X, objective.y, objective.weights, objective.penalty)

    def multiplied(self, factor):
        """Return ``factor * f`` (for instance ``f / sigma^2``, a negative log joint)."""
        return QuadraticObjective(factor * self.G, factor * self.b, factor * self.c,
                                  self.penalty.multiplied(factor))

    def with_penalty(self, penalty):
        """The same quadratic (``G``, ``b``, ``c`` shared, not copied) with another ``penalty``."""
        other = QuadraticObjective(self.G, self.b, self.c, penalty, self.total_weight)
        other.gram_rows = self.gram_rows
        return self._share_smooth_cache(other)

    def value_scale(self):
        """``|c|``, the size of the terms that cancel in the value near the optimum
        (``b^T theta`` and ``theta^T G theta / 2`` are then of that size too)."""
        return abs(self.c)

    def smooth_value(self, theta):
        """The quadratic part alone."""
        return 0.5 * float(theta @ self.G @ theta) - float(self.b @ theta) + self.c

    def smooth_gradient(self, theta):
        """``G theta - b``; for a sparse ``theta`` (a Lasso's KKT check) through the
        rows of the symmetric ``G`` at its nonzero entries, ``p |S|`` operations
        instead of ``p^2`` (``python benchmarks/bench_passes.py --sparse-gradient``)."""
        nonzero = np.asarray(theta).nonzero()[0]  # (not np.flatnonzero: slower on a few entries)
        if not nonzero.size:
            return -self.b
        if self.gram_rows is not None and 2 * nonzero.size > self.gram_rows.n_rows:
            return self.gram_rows.gradient_part(theta) - self.b
        if 2 * nonzero.size < theta.size:
            return theta[nonzero] @ self.G.take(nonzero, axis=0) - self.b
        return self.G @ theta - self.b

    def smooth_gradients(self, thetas):
        """:meth:`smooth_gradient` at each row of ``thetas`` (a path's points), in one
        product (through :attr:`gram_rows` where known)."""
        if self.gram_rows is not None:
            Z = self.gram_rows.Z
            return (thetas @ Z.T) @ Z - self.b
        return thetas @ self.G - self.b

    def gram_block(self, idx):
        """``G[idx, idx]`` (``take``, faster than fancy indexing on small blocks: the
        certificate takes a block once or twice per iteration)."""
        return self.G.take(idx, axis=0).take(idx, axis=1)

    def gram_columns(self, idx, cols):
        """``G[idx][:, cols]`` (rows ``cols`` of the symmetric ``G``: contiguous)."""
        return self.G.take(cols, axis=0).take(idx, axis=1).T

    def gram_column(self, idx, j):
        """``G[idx, j]``: :meth:`gram_columns` of one column."""
        return self.gram_columns(idx, np.array([j]))[:, 0]

    def gram_diagonal(self):
        """``diag(G)``."""
        return self.G.diagonal()

    def value(self, theta):
        return self.smooth_value(theta) + self.penalty.value(theta)

    def gradient(self, theta):
        return self.G @ theta - self.b + self.penalty.gradient(theta)

    def hessian(self, theta):
        return add_diagonal(self.G.copy(), self.penalty.hessian_diag(theta))

    def gauss_newton(self, theta):
        """The Gauss-Newton matrix of least squares, ``J^T J = G``, is its Hessian
        (plus the penalty's own curvature)."""
        return self.hessian(theta)


class RowsQuadratic(QuadraticObjective):
    """Least squares on fewer weighted rows ``Z`` than coefficients, through the
    rows: ``G = Z^T Z`` is formed only where a method needs all of it.

    A wide elastic net's working sets hold more columns than there are rows, and
    its KKT checks read gradients, blocks and columns of ``G`` and its diagonal,
    each ``O(m)`` per entry from the ``m`` rows; forming ``G`` (``m |W|^2``) for
    each set would cost more than all of them.

    Parameters
    ----------
    rows : GramRows
        The weighted rows (:class:`~skvan.sparse.GramRows`, ``rows.Z``).
    b : ndarray of shape (n_params,)
    c : float
    penalty : object, default=None
    total_weight : float or None, default=None
    """

    def __init__(self, rows, b, c, penalty=None, total_weight=None):
        self.gram_rows = rows
        self.b, self.c = b, float(c)
        self.penalty = NoPenalty() if penalty is None else penalty
        self.n_params = b.shape[0]
        self.total_weight = total_weight
        self._G = self._diagonal = None

    @property
    def G(self):
        if self._G is None:
            Z = self.gram_rows.Z
            self._G = Z.T @ Z
        return self._G

    def with_penalty(self, penalty):
        other = RowsQuadratic(self.gram_rows, self.b, self.c, penalty, self.total_weight)
        other._G, other._diagonal = self._G, self._diagonal
        return self._share_smooth_cache(other)

    def smooth_gradient(self, theta):
        """``Z^T (Z_S theta_S) - b`` over the nonzero entries ``S``: ``O(m p)``."""
        theta = np.asarray(theta)
        nonzero = theta.nonzero()[0]
        Z = self.gram_rows.Z
        return (Z.take(nonzero, axis=1) @ theta.take(nonzero)) @ Z - self.b

    def gram_block(self, idx):
        Z_S = self.gram_rows.Z.take(idx, axis=1)
        return Z_S.T @ Z_S

    def gram_columns(self, idx, cols):
        Z = self.gram_rows.Z
        return Z.take(idx, axis=1).T @ Z.take(cols, axis=1)

    def gram_diagonal(self):
        if self._diagonal is None:
            Z = self.gram_rows.Z
            self._diagonal = np.einsum("ij,ij->j", Z, Z)
        return self._diagonal


class RidgedQuadratic(QuadraticObjective):
    """``ridgeless`` plus a ridge: ``G = G_0 + diag(r)``, formed only where asked.

    An elastic net's path adds each alpha's ridge to one least squares; its KKT
    checks read only the support's rows and blocks of ``G``, which are
    ``G_0``'s plus the ridge on the diagonal, so the ``p x p`` matrix itself is
    formed (and kept) on first access of :attr:`G` only. Where the weighted rows
    behind ``G_0`` are known (``ridgeless.gram_rows``, a
    :class:`~skvan.sparse.GramRows`), so is :attr:`ridged_rows`: the KKT
    equations of supports larger than the rows are solved through them.

    Parameters
    ----------
    ridgeless : QuadraticObjective
        ``1/2 theta^T G_0 theta - b^T theta + c``.
    ridge : ndarray of shape (n_params,)
        ``r >= 0``.
    penalty : object, default=None
        None: ``ridgeless``'s.

    See Also
    --------
    skvan.sparse.GramRows : The rows behind ``G_0``, through which large
        supports' equations are solved.

    Examples
    --------
    >>> import numpy as np
    >>> from skvan.objectives import QuadraticObjective, RidgedQuadratic
    >>> X, y = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 7.0]]), np.array([1.0, 0.0, 2.0])
    >>> ridged = RidgedQuadratic(QuadraticObjective.from_data(X, y), np.array([0.5, 0.5]))
    >>> bool(np.allclose(ridged.G, X.T @ X + 0.5 * np.eye(2)))
    True
    >>> theta = np.array([0.1, -0.2])
    >>> bool(np.allclose(ridged.smooth_gradient(theta), ridged.G @ theta - X.T @ y))
    True
    """

    def __init__(self, ridgeless, ridge, penalty=None):
        self.ridgeless = ridgeless
        self.ridge = ridge
        self.b, self.c = ridgeless.b, ridgeless.c
        self.penalty = ridgeless.penalty if penalty is None else penalty
        self.n_params = ridgeless.n_params
        self.total_weight = ridgeless.total_weight
        self.gram_rows = ridgeless.gram_rows
        self.ridged_rows = None if self.gram_rows is None else self.gram_rows.at(ridge)
        self._G = None

    @property
    def G(self):
        if self._G is None:
            self._G = self.ridgeless.G.copy()
            self._G.reshape(-1)[:: self.n_params + 1] += self.ridge
        return self._G

    def with_penalty(self, penalty):
        other = RidgedQuadratic(self.ridgeless, self.ridge, penalty)
        other._G = self._G
        return self._share_smooth_cache(other)

    def smooth_value(self, theta):
        return self.ridgeless.smooth_value(theta) + 0.5 * float(np.dot(self.ridge * theta, theta))

    def smooth_gradient(self, theta):
        return self.ridgeless.smooth_gradient(theta) + self.ridge * theta

    def smooth_gradients(self, thetas):
        return self.ridgeless.smooth_gradients(thetas) + thetas * self.ridge

    def gram_block(self, idx):
        block = self.ridgeless.gram_block(idx)
        block.reshape(-1)[:: idx.size + 1] += self.ridge.take(idx)
        return block

    def gram_columns(self, idx, cols):
        block = self.ridgeless.gram_columns(idx, cols)
        rows, columns = np.nonzero(idx[:, None] == cols[None, :])
        block[rows, columns] += self.ridge.take(cols[columns])
        return block

    def gram_diagonal(self):
        return self.ridgeless.gram_diagonal() + self.ridge
