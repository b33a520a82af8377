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
each).

Unridged ("free") coordinates ``F`` (the intercept) are eliminated exactly:
with ``Q R_F`` the QR factors of ``Z_F``, ``w_F = R_F^-1 (R_F^-T c_F - Q^T Z_R
w_R)``, and ``w_R`` solves the same Woodbury system on the rows projected off
``Z_F``, ``(I - Q Q^T) Z_R`` (for an intercept: the centred rows), with the
right-hand side ``c_R - Z_R^T Q R_F^-T c_F``. The projection is made once per
path, and the solve is then backward stable like ``G_SS``'s Cholesky.
"""

import numpy as np
from scipy.linalg import lapack

from .._reductions import all_finite

#: Supports whose ``K`` a path keeps (a path's next alpha starts from the last
#: support; corrections enter and remove a few coefficients at a time).
KEPT_SUPPORTS = 4
#: A kept ``K`` serves a support that differs from it by at most this fraction
#: of the rows (beyond that, forming ``K`` afresh, ``O(m^2 |S|)``, costs less
#: than the ``O(m^2)`` updates).
UPDATE_FRACTION = 0.25


class GramRows:
    """``G = Z^T Z + s diag(d)`` over a path of ridges ``s d`` (``d = 0``: a Lasso's
    ``G = Z^T Z``, whose gradients only are computed through the rows): the
    rows ``Z``, scaled and projected once, and the kept ``K`` of recent
    supports, shared by the path's alphas.

    Parameters
    ----------
    rows : callable
        ``rows() -> Z``, the ``(m, n_params)`` weighted rows in the coordinates of
        ``G`` (formed on first use: most supports are smaller than ``m``).
    pattern : ndarray of shape (n_params,)
        The ridge's pattern ``d``: positive on ridged coordinates, 0 on free ones
        (which every support holds: they are unpenalised).
    n_rows : int
        ``m``, the number of rows.

    See Also
    --------
    skvan.objectives.RidgedQuadratic : The least squares whose ``G_0`` these
        rows form.

    Examples
    --------
    >>> import numpy as np
    >>> from skvan.sparse import GramRows
    >>> rng = np.random.default_rng(0)
    >>> Z = rng.standard_normal((3, 8))  # 3 rows, 8 coefficients
    >>> rows = GramRows(lambda: Z, np.ones(8), 3)
    >>> support = np.ones(8, dtype=bool)
    >>> system = rows.at(np.full(8, 0.1)).system(support)  # ridge 0.1: s = 0.1
    >>> c = rng.standard_normal(8)
    >>> w = system.solve(c)
    >>> bool(np.allclose((Z.T @ Z + 0.1 * np.eye(8)) @ w, c))
    True
    """

    def __init__(self, rows, pattern, n_rows):
        self._rows, self._Z, self._parts = rows, None, None
        self.pattern = pattern
        self.ridged = pattern > 0
        self.free = np.flatnonzero(~self.ridged)
        self.n_rows = int(n_rows)
        self.kept = {}

    @property
    def Z(self):
        if self._Z is None:
            self._Z = np.asarray(self._rows(), dtype=np.float64)
        return self._Z

    @classmethod
    def weighted(cls, X, sample_weight, pattern, column_scale=1.0):
        """The rows ``sqrt(w_i) x_i / column_scale`` of ``X`` with positive weight
        (formed on first use), behind ``X^T W X`` over ``column_scale * theta``,
        with the ridge pattern ``pattern``."""
        positive = sample_weight > 0

        def rows():
            return X[positive] * np.sqrt(sample_weight[positive])[:, None] / column_scale

        return cls(rows, pattern, int(np.count_nonzero(positive)))

    @property
    def parts(self):
        """``(Yt, YQ, R_F)``: ``Yt``, the rows of ``((I - Q Q^T) Z
        diag(d)^(-1/2))^T`` (a support's columns of ``Y`` are contiguous rows
        here; 0 on free coordinates); ``YQ = (Z diag(d)^(-1/2))^T Q`` and
        ``R_F`` (None without free coordinates, and ``R_F`` None where their
        columns are linearly dependent)."""
        if self._parts is None:
            Z = self.Z
            root = np.sqrt(np.where(self.ridged, self.pattern, 1.0))
            Yt = np.ascontiguousarray((Z / root).T * self.ridged[:, None])
            YQ = R_F = None
            if self.free.size:
                Q, R_F = np.linalg.qr(Z.take(self.free, axis=1))
                if not np.all(np.abs(np.diag(R_F)) > 0):
                    R_F = None
                YQ = Yt @ Q
                Yt -= YQ @ Q.T
            self._parts = (Yt, YQ, R_F)
        return self._parts

    def gradient_part(self, theta):
        """``Z^T Z theta``: ``O(m p)``, less than the support's rows of ``G``
        where the support outnumbers the rows."""
        Z = self.Z
        return (Z @ theta) @ Z

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

    def restricted(self, columns):
        """These rows on the coordinates ``columns`` (sorted indices holding every
        free one): a view sharing the rows, their projection and the kept ``K``
        of supports (keyed by the parent's coordinates), so that the working sets of one
        fit, each a superset of the last, update ``K`` from the last one's
        supports instead of forming it afresh."""
        return _RestrictedRows(self, np.asarray(columns))

    def gram_of(self, support, ridged_idx):
        """``(K, Y)``: ``Y``'s columns (projected) for the ridged coordinates
        ``support`` (boolean), ``ridged_idx`` their indices, and ``K = Y Y^T``,
        from the kept support nearest to it by rank-one updates or formed
        afresh; kept."""
        key = support.tobytes()
        kept = self.kept.get(key)
        if kept is None:
            Y = self.parts[0].take(ridged_idx, axis=0).T
            K = self._updated(support)
            kept = (Y @ Y.T if K is None else K, Y)
            if len(self.kept) >= KEPT_SUPPORTS:
                self.kept.pop(next(iter(self.kept)))
            self.kept[key] = kept
        return kept

    def _updated(self, support):
        """``K`` of ``support`` from a kept support differing from it by at most
        ``UPDATE_FRACTION`` of the rows, or None: the latest kept first, taken at
        once where it is one coefficient off."""
        limit = max(int(UPDATE_FRACTION * self.n_rows), 1)
        best = None
        for key in reversed(self.kept):
            other = np.frombuffer(key, dtype=bool)
            n = int(np.count_nonzero(other != support))
            if n <= limit and (best is None or n < best[0]):
                best = (n, other, self.kept[key][0])
                if n <= 1:
                    break
        if best is None:
            return None
        _, other, K = best
        Yt = self.parts[0]
        A = Yt.take(np.flatnonzero(support & ~other), axis=0)
        R = Yt.take(np.flatnonzero(other & ~support), axis=0)
        return K + A.T @ A - R.T @ R


class _RestrictedRows(GramRows):
    """:meth:`GramRows.restricted`: the parent's rows on ``columns``; supports over
    these columns are read as the parent's supports."""

    def __init__(self, parent, columns):
        super().__init__(lambda: parent.Z[:, columns], parent.pattern[columns], parent.n_rows)
        self.parent, self.columns = parent, columns
        if not np.array_equal(np.intersect1d(parent.free, columns), parent.free):
            raise ValueError("a restriction holds every free coordinate")

    @property
    def parts(self):
        if self._parts is None:  # the free columns' projection is the parent's
            Yt, YQ, R_F = self.parent.parts
            self._parts = (Yt[self.columns], None if YQ is None else YQ[self.columns], R_F)
        return self._parts

    def gram_of(self, support, ridged_idx):
        whole = np.zeros(self.parent.pattern.shape[0], dtype=bool)
        whole[self.columns[support]] = True
        return self.parent.gram_of(whole, self.columns[ridged_idx])


class RidgedRows:
    """:class:`GramRows` at one ridge ``s d``: builds :class:`RidgeSystem` s."""

    def __init__(self, rows, scale):
        self.rows, self.scale = rows, scale

    def system(self, support):
        """The :class:`RidgeSystem` of ``support`` (boolean), or None where the
        support's ridged coordinates do not outnumber the rows (``G_SS``'s own
        Cholesky costs less), it lacks a free coordinate, or a factorisation
        fails."""
        rows = self.rows
        ridged = support & rows.ridged
        if np.count_nonzero(ridged) <= rows.n_rows or not np.all(support[rows.free]):
            return None
        return RidgeSystem.build(rows, self.scale, support, ridged)


class RidgeSystem:
    """The equations ``(Z_S^T Z_S + s diag(d_S)) w = c`` of one support at one
    scale (the module's docstring), through an ``m x m`` Cholesky factor.
    ``factor`` is None: a Cholesky of ``G_SS`` cannot be bordered from it."""

    factor = None

    def __init__(self, idx, ridged, Y, root, scale, chol, YQ, R_F):
        self.idx, self.ridged = idx, ridged
        self.Y, self.root, self.scale, self.chol = Y, root, scale, chol
        self.YQ, self.R_F = YQ, R_F

    @classmethod
    def build(cls, rows, scale, support, ridged):
        """Factor the system of ``support`` (``ridged``, its ridged coordinates);
        None where a factorisation fails."""
        YQ, R_F = rows.parts[1:]
        if YQ is not None and R_F is None:
            return None
        idx = support.nonzero()[0]
        r_idx = ridged.nonzero()[0]
        K, Y = rows.gram_of(ridged, r_idx)
        M = K.copy()  # (the kept K stays as it is)
        M.reshape(-1)[:: M.shape[0] + 1] += scale
        chol, info = lapack.dpotrf(M, lower=1, clean=1, overwrite_a=1)
        if info != 0:
            return None
        return cls(idx, ridged.take(idx), Y, np.sqrt(rows.pattern.take(r_idx)), scale, chol,
                   None if YQ is None else YQ.take(r_idx, axis=0), R_F)

    def solve(self, c):
        """``G_SS^-1 c``, or None if not finite."""
        r = self.ridged
        c_R = c[r]
        if self.YQ is not None:
            t = lapack.dtrtrs(self.R_F, c[~r], trans=1)[0]  # R_F^-T c_F
            c_R = c_R - self.root * (self.YQ @ t)
        u = c_R / self.root
        inner = lapack.dpotrs(self.chol, self.Y @ u, lower=1)[0]
        v = (u - self.Y.T @ inner) / self.scale
        w = np.empty_like(c)
        w[r] = v / self.root
        if self.YQ is not None:
            w[~r] = lapack.dtrtrs(self.R_F, t - self.YQ.T @ v)[0]
        return w if all_finite(w) else None
