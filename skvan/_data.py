"""Passes over a design matrix that work the same on dense arrays and on
``scipy.sparse`` matrices (CSR for row access), never densifying a sparse one.

Dense passes run over row blocks (:func:`~skvan._blocks.row_blocks`); sparse
ones are single sparse products, whose temporaries are as sparse as the data.
"""

import numpy as np
import scipy.sparse as sp
from sklearn.utils.extmath import row_norms

from ._blocks import row_blocks

issparse = sp.issparse


def as_design(X, fit_intercept):
    """``X`` as float64 with a column of ones appended when ``fit_intercept``:
    a new dense array, or a CSR matrix if ``X`` is sparse."""
    if sp.issparse(X):
        X = sp.csr_matrix(X, dtype=np.float64)
        if fit_intercept:
            X = sp.hstack([X, np.ones((X.shape[0], 1))], format="csr")
        return X
    X = np.asarray(X, dtype=np.float64)
    if fit_intercept:
        return np.hstack([X, np.ones((X.shape[0], 1))])
    return X


def squared(X):
    """Elementwise ``X**2`` (sparse stays sparse)."""
    return X.multiply(X).tocsr() if sp.issparse(X) else X**2


def row_squared_norms(X):
    """``||x_i||^2`` for each row."""
    return row_norms(X, squared=True)


def unit_variance_scale(X, w):
    """``sum_i w_i ||x_i||^2 / sum_i w_i``, the precision ``lam`` of ``N(0, I / lam)``
    under which the linear predictors ``x_i^T theta`` have unit variance on
    (weighted) average; 1 when that is not a positive finite number."""
    total = float(np.sum(w))
    value = float(w @ row_squared_norms(X)) / total if total > 0 else np.nan
    return value if np.isfinite(value) and value > 0 else 1.0


def column_abs_max(X):
    """``max_i |x_ij|`` for each column (0 for an empty or all-zero column)."""
    if sp.issparse(X):
        return np.asarray(abs(X).max(axis=0).todense()).ravel()
    return np.maximum(X.max(axis=0, initial=0.0), -X.min(axis=0, initial=0.0))


def weighted_column_squares(X, w, norm=None):
    """``sum_i w_i (x_ij / norm_j)^2`` for each column (``norm`` None: 1)."""
    if sp.issparse(X):
        Xn = X if norm is None else X @ sp.diags(1.0 / norm)
        return np.asarray(squared(Xn).T @ w).ravel()
    out = np.zeros(X.shape[1])
    for rows in row_blocks(*X.shape):
        block = X[rows] if norm is None else X[rows] / norm
        out += np.einsum("i,ij,ij->j", w[rows], block, block)
    return out


def gram(X, d):
    """``X^T diag(d) X`` as a dense ``(p, p)`` array.

    Dense: accumulated over row blocks; with ``d >= 0`` each block is the
    symmetric rank-k product ``X_d^T X_d``, ``X_d = sqrt(d) X``.
    """
    p = X.shape[1]
    if sp.issparse(X):
        return np.asarray((X.T @ (sp.diags(d) @ X)).todense())
    H = np.zeros((p, p))
    psd = bool(np.all(d >= 0))
    root = np.sqrt(d) if psd else None
    for rows in row_blocks(X.shape[0], p):
        if psd:
            Xd = X[rows] * root[rows, None]
            H += Xd.T @ Xd
        else:
            H += X[rows].T @ (X[rows] * d[rows, None])
    return H


def scale_columns(X, factor):
    """``X * factor`` column-wise, as a new matrix (sparse stays sparse)."""
    if sp.issparse(X):
        return (X @ sp.diags(factor)).tocsr()
    return X * factor
