"""The KKT equations of an elastic net on wide data, through its rows.

An elastic net's least squares is ``G = Z^T Z + diag(r)``: the Gram matrix of
``m`` weighted rows ``Z`` plus the ridge. Where a support ``S`` has more
coefficients than there are rows (the elastic net, unlike the Lasso, can keep
all ``p`` columns), its equations ``G_SS w_S = c_S`` are solved through an
``m x m`` matrix instead of ``G_SS``'s ``|S| x |S|`` (Woodbury). With
``r = s d`` on the ridged coordinates and ``Y = Z_S diag(d_S)^(-1/2)``::

    (Y^T Y + s I)^-1 = (I - Y^T (s I + K)^-1 Y) / s,     K = Y Y^T,

one Cholesky of size ``m`` and products with ``Y`` (``O(m |S|)``) against a
Cholesky of size ``|S|``. ``K`` does not depend on ``s``: a path, whose alphas
scale one ridge pattern ``d``, keeps it per support across alphas, and a support
a few coefficients off a kept one updates it by rank-one terms (``O(m^2)``
each). Unridged coordinates on the support (the intercept) enter through their
exact elimination (the rows projected off their columns).
"""

import numpy as np
from scipy.linalg import blas, lapack

from .._reductions import all_finite

#: Supports whose ``K`` a path keeps (a path's next alpha starts from the last
#: support; corrections enter and remove a few coefficients at a time).
KEPT_SUPPORTS = 4
#: A kept ``K`` serves a support that differs from it by at most this fraction
#: of the rows (beyond that, forming ``K`` afresh, ``O(m^2 |S|)``, costs less
#: than the ``O(m^2)`` updates).
UPDATE_FRACTION = 0.25


class GramRows:
    """``G = Z^T Z + s diag(d)`` over a path of ridges ``s d``: the rows ``Z`` and
    the kept ``K`` of recent supports, shared by the path's alphas.

    Parameters
    ----------
    rows : callable
        ``rows() -> Z``, the ``(m, n_params)`` weighted rows in the coordinates of
        ``G`` (formed on first use: most supports are smaller than ``m``).
    pattern : ndarray of shape (n_params,)
        The ridge's pattern ``d``: positive on ridged coordinates, 0 on free ones.
    n_rows : int
        ``m``, the number of rows.
    """

    def __init__(self, rows, pattern, n_rows):
        self._rows, self._Z, self._Yt, self._free = rows, None, None, None
        self.pattern = pattern
        self.ridged = pattern > 0
        self.n_rows = int(n_rows)
        self.kept = {}

    @property
    def Z(self):
        if self._Z is None:
            self._Z = np.asarray(self._rows(), dtype=np.float64)
        return self._Z

    @property
    def Yt(self):
        """``(Z diag(d)^(-1/2))^T`` (0 on free coordinates), one row per
        coefficient: a support's columns of ``Y`` are contiguous rows here."""
        if self._Yt is None:
            root = np.sqrt(self.pattern)
            self._Yt = np.ascontiguousarray(
                (self.Z / np.where(self.ridged, root, 1.0)).T * self.ridged[:, None])
        return self._Yt

    def free_basis(self, free_idx):
        """``(Q, R_F)``, the QR factors of ``Z[:, free_idx]`` (the same free
        coordinates on every support: kept), or None where those columns are
        linearly dependent."""
        key = free_idx.tobytes()
        if self._free is None or self._free[0] != key:
            Q, R_F = np.linalg.qr(self.Z.take(free_idx, axis=1))
            ok = np.all(np.abs(np.diag(R_F)) > 0)
            self._free = (key, (Q, R_F) if ok else None)
        return self._free[1]

    def gradient_part(self, theta):
        """``Z^T Z theta``: ``O(m p)``, less than the support's rows of ``G``
        where the support outnumbers the rows."""
        return (self.Z @ theta) @ self.Z

    def at(self, ridge):
        """These rows with the ridge ``ridge`` (a vector over the parameters):
        :class:`RidgedRows`, or None where ``ridge`` is not ``s d`` for a positive
        ``s`` (to 1e-12 relative)."""
        ridged = self.ridged
        if not np.any(ridged) or np.any(ridge[~ridged] != 0):
            return None
        ratio = ridge[ridged] / self.pattern[ridged]
        scale = float(ratio[0])
        if not (scale > 0 and np.all(np.abs(ratio - scale) <= 1e-12 * scale)):
            return None
        return RidgedRows(self, scale)

    def gram_of(self, support, ridged_idx):
        """``K = Y Y^T`` for ``support`` (boolean) with ridged indices
        ``ridged_idx``: from the kept support nearest to it by rank-one updates,
        or formed afresh; kept."""
        key = support.tobytes()
        K = self.kept.get(key)
        if K is None:
            K = self._updated(support)
            if K is None:
                Yt = self.Yt.take(ridged_idx, axis=0)
                K = Yt.T @ Yt
            if len(self.kept) >= KEPT_SUPPORTS:
                self.kept.pop(next(iter(self.kept)))
            self.kept[key] = K
        return K

    def _updated(self, support):
        """``K`` of ``support`` from a kept support differing from it by at most
        ``UPDATE_FRACTION`` of the rows in ridged coordinates, or None."""
        limit = max(int(UPDATE_FRACTION * self.n_rows), 1)
        best = None
        for key, K in self.kept.items():
            other = np.frombuffer(key, dtype=bool)
            n = int(np.count_nonzero(other != support))  # (both ridged coordinates only)
            if n <= limit and (best is None or n < best[0]):
                best = (n, other, K)
        if best is None:
            return None
        _, other, K = best
        A = self.Yt.take(np.flatnonzero(support & ~other), axis=0)
        R = self.Yt.take(np.flatnonzero(other & ~support), axis=0)
        return K + A.T @ A - R.T @ R


class RidgedRows:
    """:class:`GramRows` at one ridge ``s d``: builds :class:`RidgeSystem` s."""

    def __init__(self, rows, scale):
        self.rows, self.scale = rows, scale

    def system(self, support):
        """The :class:`RidgeSystem` of ``support`` (boolean), or None where the
        support's ridged coordinates do not outnumber the rows (``G_SS``'s own
        Cholesky costs less) or a factorisation fails."""
        rows = self.rows
        idx = support.nonzero()[0]
        d = rows.pattern.take(idx)
        ridged = d > 0
        if np.count_nonzero(ridged) <= rows.n_rows:
            return None
        return RidgeSystem.build(rows, self.scale, support, idx, ridged)


class RidgeSystem:
    """The equations ``(Z_S^T Z_S + s diag(d_S)) w = c`` of one support at one
    scale, through an ``m x m`` Cholesky factor. Free coordinates ``F`` (the
    intercept) are eliminated exactly: with ``Q R_F`` the QR factors of
    ``Z_F``, ``w_F = R_F^-1 (R_F^-T c_F - Q^T Z_R w_R)``, and ``w_R`` solves the
    same Woodbury system on the rows projected off ``Z_F``, ``(I - Q Q^T) Z_R``
    (for an intercept: the centred rows), with ``c_R - Z_R^T Q R_F^-T c_F``.
    ``factor`` is None: a Cholesky of ``G_SS`` cannot be bordered from it."""

    factor = None

    def __init__(self, idx, ridged, Y, root, scale, chol, Q, R_F):
        self.idx, self.ridged = idx, ridged
        self.Y, self.root, self.scale, self.chol = Y, root, scale, chol
        self.Q, self.R_F = Q, R_F

    @classmethod
    def build(cls, rows, scale, support, idx, ridged):
        """Factor the system of ``support`` (indices ``idx``, ``ridged`` marking
        the ridged ones); None where a factorisation fails."""
        r_idx = idx[ridged]
        K = rows.gram_of(support & rows.ridged, r_idx)
        Y = rows.Yt.take(r_idx, axis=0).T
        root = np.sqrt(rows.pattern.take(r_idx))
        if np.all(ridged):
            Q = R_F = None
            M = K.copy()  # (the kept K stays as it is)
        else:
            basis = rows.free_basis(idx[~ridged])
            if basis is None:
                return None
            Q, R_F = basis
            # (I - Q Q^T) K (I - Q Q^T) = K - a Q^T - Q a^T, a = K Q - Q (Q^T K Q) / 2
            # (the lower triangle: potrf reads no more).
            KQ = K @ Q
            a = KQ - 0.5 * (Q @ (Q.T @ KQ))
            M = blas.dsyr2k(-1.0, a, Q, beta=1.0, c=K, lower=1, trans=0)
        diagonal = np.arange(M.shape[0])
        M[diagonal, diagonal] += scale  # (M is in Fortran order after syr2k)
        chol, info = lapack.dpotrf(M, lower=1, clean=1, overwrite_a=1)
        if info != 0:
            return None
        return cls(idx, ridged, Y, root, scale, chol, Q, R_F)

    def _project(self, u):
        """``(I - Q Q^T) u`` (``u`` itself without free coordinates)."""
        return u if self.Q is None else u - self.Q @ (self.Q.T @ u)

    def solve(self, c):
        """``G_SS^-1 c``, or None if not finite."""
        r = self.ridged
        w = np.empty_like(c)
        c_R = c[r]
        if self.Q is not None:
            c_F = c[~r]
            t = lapack.dtrtrs(self.R_F, c_F, trans=1)[0]  # R_F^-T c_F
            c_R = c_R - (self.Y.T @ (self.Q @ t)) * self.root
        u = c_R / self.root
        inner = lapack.dpotrs(self.chol, self._project(self.Y @ u), lower=1)[0]
        w_R = (u - self.Y.T @ self._project(inner)) / (self.scale * self.root)
        w[r] = w_R
        if self.Q is not None:
            Z_R_w = self.Y @ (w_R * self.root)
            w[~r] = lapack.dtrtrs(self.R_F, t - self.Q.T @ Z_R_w)[0]
        return w if all_finite(w) else None
