"""Passes over a design matrix that work the same on dense arrays and on
``scipy.sparse`` matrices (CSR for row access), never densifying a sparse one.

Dense passes run over row blocks (:func:`~skvan._blocks.row_blocks`); sparse
ones are single sparse products, whose temporaries are as sparse as the data.

A dense float32 design stays float32: numpy's ``X @ v`` with a float64 ``v``
would first copy all of ``X`` to float64 (twice its memory), so its products
(:func:`dot`, :func:`tdot`) cast one row block at a time and compute in float64.
The results are those of the float64 copy of the data, up to the order of the
block sums. Sparse matrices are converted to float64 (scipy's products would
copy them too).
"""

import functools

import numpy as np
import scipy.sparse as sp
from sklearn.utils.extmath import row_norms

from ._blocks import BLOCK_ELEMENTS, row_blocks

issparse = sp.issparse


def as_design(X, fit_intercept):
    """``X`` with a column of ones appended when ``fit_intercept``: a dense array
    (float32 kept, anything else as float64), or a float64 CSR matrix if ``X`` is
    sparse."""
    if sp.issparse(X):
        X = sp.csr_matrix(X, dtype=np.float64)
        if fit_intercept:
            X = sp.hstack([X, np.ones((X.shape[0], 1))], format="csr")
        return X
    dtype = np.float32 if getattr(X, "dtype", None) == np.float32 else np.float64
    X = np.asarray(X, dtype=dtype)
    if fit_intercept:
        return np.hstack([X, np.ones((X.shape[0], 1), dtype=dtype)])
    return X


def _narrow(X):
    """Whether ``X`` is a dense array of a float type narrower than float64."""
    return isinstance(X, np.ndarray) and X.dtype != np.float64


def dot(X, V):
    """``X @ V`` in float64; a float32 ``X`` is cast one row block at a time."""
    if not _narrow(X):
        return X @ V
    V = np.asarray(V, dtype=np.float64)
    out = np.empty((X.shape[0],) + V.shape[1:])
    for rows in row_blocks(*X.shape):
        out[rows] = X[rows].astype(np.float64) @ V
    return out


def tdot(X, W):
    """``X^T @ W`` in float64; a float32 ``X`` is cast one row block at a time."""
    if not _narrow(X):
        return X.T @ W
    W = np.asarray(W, dtype=np.float64)
    out = np.zeros((X.shape[1],) + W.shape[1:])
    for rows in row_blocks(*X.shape):
        out += X[rows].astype(np.float64).T @ W[rows]
    return out


def squared(X):
    """Elementwise ``X**2`` (sparse stays sparse)."""
    return X.multiply(X).tocsr() if sp.issparse(X) else X**2


def row_squared_norms(X):
    """``||x_i||^2`` for each row (in float64)."""
    if _narrow(X):
        out = np.empty(X.shape[0])
        for rows in row_blocks(*X.shape):
            out[rows] = row_norms(X[rows].astype(np.float64), squared=True)
        return out
    return row_norms(X, squared=True)


def row_weighted_squares(X, w):
    """``sum_j w_j x_ij^2`` for each row (in float64), one row block at a time:
    the variances ``x_i^T diag(w) x_i`` of the linear predictors under a diagonal
    covariance ``w``, without an ``n x p`` temporary."""
    if sp.issparse(X):
        return np.asarray(squared(X) @ w).ravel()
    out = np.empty(X.shape[0])
    for rows in row_blocks(*X.shape):
        block = X[rows].astype(np.float64, copy=False)
        out[rows] = np.einsum("ij,ij,j->i", block, block, w)
    return out


def unit_variance_scale(X, w):
    """``sum_i w_i ||x_i||^2 / sum_i w_i``, the precision ``lam`` of ``N(0, I / lam)``
    under which the linear predictors ``x_i^T theta`` have unit variance on
    (weighted) average; 1 when that is not a positive finite number."""
    total = float(np.sum(w))
    value = float(w @ row_squared_norms(X)) / total if total > 0 else np.nan
    return value if np.isfinite(value) and value > 0 else 1.0


def column_statistics(X, w=None):
    """``(max_i |x_ij|, sum_i w_i x_ij^2)`` for each column (0 for an empty
    column; the squares None without ``w``), in one pass over the rows.

    The squares overflow to inf where entries exceed about 1e154
    (:func:`~skvan.objectives._linear.jacobi_scale_from` then sums them again
    normalised). A dense pass takes ``|x|`` of each row block: one pass, where
    numpy's ``max`` and ``min`` over ``axis=0`` of a C-ordered array and a
    separate pass for the squares read the rows three times (``python
    benchmarks/bench_passes.py --columns``).
    """
    if sp.issparse(X):
        top = np.asarray(abs(X).max(axis=0).todense()).ravel().astype(np.float64)
        return top, None if w is None else weighted_column_squares(X, w)
    top = np.zeros(X.shape[1])
    squares = None if w is None else np.zeros(X.shape[1])
    with np.errstate(over="ignore"):
        for rows in row_blocks(*X.shape):
            block = np.abs(X[rows]).astype(np.float64, copy=False)
            np.maximum(top, block.max(axis=0), out=top)
            if w is not None:
                squares += np.einsum("i,ij,ij->j", w[rows], block, block)
    return top, squares


def weighted_column_squares(X, w, norm=None):
    """``sum_i w_i (x_ij / norm_j)^2`` for each column (``norm`` None: 1)."""
    if sp.issparse(X):
        Xn = X if norm is None else X @ sp.diags(1.0 / norm)
        return np.asarray(squared(Xn).T @ w).ravel()
    out = np.zeros(X.shape[1])
    for rows in row_blocks(*X.shape):
        block = X[rows].astype(np.float64, copy=False)
        block = block if norm is None else block / norm
        out += np.einsum("i,ij,ij->j", w[rows], block, block)
    return out


def gram(X, d):
    """``X^T diag(d) X`` as a dense ``(p, p)`` array.

    Dense: accumulated over row blocks; with ``d >= 0`` each block is the
    symmetric rank-k product ``X_d^T X_d``, ``X_d = sqrt(d) X``. The first
    block's product is the accumulator: a zeroed ``p x p`` array to add it to
    costs more than the product on designs of a few rows (``python
    benchmarks/bench_passes.py --gram``).
    """
    return gram_and_tdot(X, d)[0]


def gram_and_tdot(X, d, u=None):
    """``(X^T diag(d) X, X^T u)`` (the second None without ``u``): :func:`gram`, and
    with ``u`` the product :func:`tdot` forms, in the same pass over the row
    blocks of a dense ``X`` (each block read once while it is in cache: a
    linear model's gradient and curvature from one pass instead of two)."""
    p = X.shape[1]
    if sp.issparse(X):
        return (np.asarray((X.T @ (sp.diags(d) @ X)).todense()),
                None if u is None else tdot(X, u))
    H = None
    g = None if u is None else np.zeros(p)
    psd = bool((d >= 0).all())
    root = np.sqrt(d) if psd else None
    for rows in row_blocks(X.shape[0], p):
        block = X[rows].astype(np.float64, copy=False)
        if psd:
            Xd = block * root[rows, None]
            part = Xd.T @ Xd
        else:
            # Weights of both signs (a correction of remembered rows): the
            # difference of two symmetric rank-k products, which BLAS forms
            # (syrk) in half a general product's arithmetic.
            dr = d[rows]
            Xp, Xn = (block[mask] * np.sqrt(np.abs(dr[mask]))[:, None]
                      for mask in (dr > 0, dr < 0))
            part = Xp.T @ Xp
            part -= Xn.T @ Xn
        if g is not None:
            g += block.T @ u[rows]
        if H is None:
            H = part
        else:
            H += part
    return (np.zeros((p, p)) if H is None else H), g


@functools.lru_cache(maxsize=64)
def upper_pairs(n):
    """``np.triu_indices(n)``, cached and read-only: a multinomial model's class
    pairs, which every pass over its rows reads (forming them costs more than a
    small model's products)."""
    pairs = np.triu_indices(n)
    for index in pairs:
        index.flags.writeable = False
    return pairs


class FeaturePairs:
    """Sums over the rows of a dense ``X`` through the products of each row's
    feature pairs, ``x_ia x_ib`` for ``a <= b`` (``m = p (p + 1) / 2`` of them).

    Two passes that a multinomial model makes for each of its ``c = K (K + 1) / 2``
    pairs of classes become one matrix product per block of rows against those
    products: the weighted Gram matrices ``sum_i w_ic x_i x_i^T`` (:meth:`grams`)
    and the quadratic forms ``x_i^T S_c x_i`` (:meth:`forms`). Against ``c``
    products ``X^T diag(w_c) X`` they take about half the arithmetic, in one
    product that runs at the BLAS's speed where each feature pair serves
    enough class pairs (:meth:`pays`); ``python benchmarks/bench_passes.py
    --pairs`` times both. With ``keep_bytes`` the products of a design that fit
    in that many bytes are formed once and kept for its later passes.
    """

    #: The one product pays up to about this many feature pairs per sum (per class
    #: pair; ``python benchmarks/bench_passes.py --pairs``: the two break even
    #: near 20 features for 3 classes, 40 for 5 and 80 for 10)...
    PAIRS_PER_COLUMN = 40
    #: ...with at least this many rows in a block of the products (:data:`BLOCK_ELEMENTS`).
    MIN_ROWS = 64

    def __init__(self, n_features, keep_bytes=0):
        self.n_features = n_features
        self.keep_bytes = keep_bytes
        self._kept = None  # (X, [(rows, products), ...]) of the last X, if kept

    # The pairs' indices are formed on first use: p (p + 1) / 2 of each (for a
    # wide design that never pays, gigabytes).
    @functools.cached_property
    def _indices(self):
        return np.triu_indices(self.n_features)

    @property
    def a(self):
        """The first feature of each pair."""
        return self._indices[0]

    @property
    def b(self):
        """The second feature of each pair, ``b >= a``."""
        return self._indices[1]

    @functools.cached_property
    def offset(self):
        """Pairs ``(a, b >= a)`` are stored feature by feature: ``a``'s start at
        ``offset[a]``."""
        return np.r_[0, np.cumsum(np.arange(self.n_features, 0, -1))]

    @classmethod
    def pays(cls, X, n_columns):
        """Whether the pairs' one product is the faster way for ``X`` and
        ``n_columns`` sums: a dense ``X`` with at most :data:`PAIRS_PER_COLUMN`
        feature pairs per sum, a block of whose products holds at least
        :data:`MIN_ROWS` rows."""
        m = X.shape[1] * (X.shape[1] + 1) // 2
        return (not sp.issparse(X) and m <= cls.PAIRS_PER_COLUMN * n_columns
                and BLOCK_ELEMENTS // max(m, 1) >= cls.MIN_ROWS)

    def _blocks(self, X):
        """``(rows, products)`` per row block of ``X``: the pair products, ``(m,
        rows)`` (float64), one broadcast product per feature ``a`` of its row of
        ``X^T`` with those of ``b >= a`` (gathering the two factors of every pair
        instead costs several times as much). Where all of them take at most
        ``keep_bytes``, they are kept for the next pass over the same ``X`` (a
        multinomial fit makes two per iteration)."""
        if self._kept is not None and self._kept[0] is X:
            yield from self._kept[1]
            return
        keep = 8 * self.a.size * X.shape[0] <= self.keep_bytes
        kept = []
        products = None
        for rows in row_blocks(X.shape[0], self.a.size):
            columns = np.ascontiguousarray(X[rows].T, dtype=np.float64)  # (p, rows)
            if keep or products is None or products.shape[1] != columns.shape[1]:
                products = np.empty((self.a.size, columns.shape[1]))
            for a in range(self.n_features):
                np.multiply(columns[a:a + 1], columns[a:],
                            out=products[self.offset[a]:self.offset[a + 1]])
            if keep:
                kept.append((rows, products))
            yield rows, products
        if keep:
            self._kept = (X, kept)

    def grams(self, X, W):
        """``(c, p, p)``: ``sum_i W_ic x_i x_i^T`` for the columns of ``W`` ``(n, c)``."""
        total = np.zeros((self.a.size, W.shape[1]))
        for rows, products in self._blocks(X):
            total += products @ W[rows]
        out = np.empty((W.shape[1], self.n_features, self.n_features))
        out[:, self.a, self.b] = total.T
        out[:, self.b, self.a] = total.T
        return out

    def forms(self, X, S):
        """``(n, c)``: ``x_i^T S_c x_i`` for a stack ``S`` ``(c, p, p)`` of matrices
        (a pair ``a < b`` weighs ``S_ab + S_ba``)."""
        a, b = self.a, self.b
        weights = (S[:, a, b] + S[:, b, a]) * np.where(a == b, 0.5, 1.0)
        out = np.empty((X.shape[0], len(S)))
        for rows, products in self._blocks(X):
            out[rows] = (weights @ products).T
        return out


def augmented_gram(X, y, w, fit_intercept):
    """``A^T diag(w) A`` for ``A = [X, 1, y]`` (the ones only with
    ``fit_intercept``), ``(k, k)`` with ``k = n_features + fit_intercept + 1``: a
    least-squares problem's Gram matrix, ``X^T W y`` and ``y^T W y`` from one
    pass over the rows of a dense ``X`` (``w >= 0``), neither the design with its
    column of ones nor any ``n x p`` temporary formed. Each row block ``sqrt(w)
    [x, 1, y]`` is one symmetric rank-k product, where a Lasso fit would
    otherwise make separate passes for the design, its column statistics, row
    norms, Gram matrix and ``X^T W y`` (``python benchmarks/bench_passes.py
    --augmented``).
    """
    n, p = X.shape
    k = p + int(fit_intercept) + 1
    M = None
    for rows in row_blocks(n, k):
        root = np.sqrt(w[rows])
        B = np.empty((root.size, k))
        np.multiply(X[rows], root[:, None], out=B[:, :p])
        if fit_intercept:
            B[:, p] = root
        np.multiply(root, y[rows], out=B[:, -1])
        part = B.T @ B
        if M is None:
            M = part
        else:
            M += part
    return np.zeros((k, k)) if M is None else M


def scale_columns(X, factor):
    """``X * factor`` column-wise, as a new matrix (sparse stays sparse)."""
    if sp.issparse(X):
        return (X @ sp.diags(factor)).tocsr()
    if np.all(np.frexp(factor)[0] == 0.5):  # powers of two (jacobi_column_scale): exact
        return X * factor.astype(X.dtype, copy=False)
    return X * factor
