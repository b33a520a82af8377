"""Gaussian families ``q = N(mean, precision^-1)``: full and diagonal covariance.

A family owns the mean and the precision, answers the questions the expectation
estimators ask (samples, marginal variances, variances of linear predictors) and
applies the VAN precision update while keeping the precision symmetric positive
definite.

How the precision stays positive definite
-----------------------------------------
The VO update ``P + beta C`` and the VI update ``(1 - beta) P + beta C`` keep ``P``
positive definite whenever the curvature ``C`` is positive semi-definite and, for
VI, has no null direction. The Gauss-Newton curvature (``hessian="gauss_newton"``)
always is PSD. An exact expected Hessian of a non-convex function may not be: if
the updated ``P`` is not positive definite, the family redoes the update with the
projection of ``C`` onto the PSD cone (negative eigenvalues set to zero; for the
diagonal family, negative entries are always set to zero). Finally, eigenvalues
of ``P`` below ``1e-12`` times its largest one are raised to that floor, so ``P``
is always invertible.
"""

import copy

import numpy as np
from scipy import linalg
from scipy.linalg import lapack

from .._blas import lapack_one_thread
from .._blocks import row_blocks
from .._data import dot, issparse, row_weighted_squares, unit_variance_scale
from .._reductions import all_finite, max_of, min_of

_EIG_FLOOR = 1e-12


def _psd_part(C):
    """Projection of the symmetric matrix ``C`` onto the PSD cone."""
    w, V = np.linalg.eigh(C)
    return (V * np.clip(w, 0.0, None)) @ V.T


def _floor_spectrum(P):
    """Raise eigenvalues of ``P`` below ``_EIG_FLOOR * max`` to that floor."""
    w, V = np.linalg.eigh(P)
    top = max(w.max(), np.finfo(np.float64).tiny)
    w = np.maximum(w, _EIG_FLOOR * top)
    return (V * w) @ V.T


class _Gaussian:
    """What both families share: a mean, a precision set through ``set_precision``
    (which bumps ``version``, the key of cached predictor variances)."""

    def __init__(self, mean, precision, floor=None):
        self.mean = np.array(mean, dtype=np.float64)
        self.floor = None if floor is None else np.array(floor, dtype=np.float64)
        self.set_precision(np.array(precision, dtype=np.float64))

    def scaled_precision(self, factor):
        """The same mean with the precision ``factor * P`` (``factor > 0``), a new
        family without a floor."""
        return type(self)(self.mean, factor * self.precision)

    @property
    def n_params(self):
        return self.mean.shape[0]

    def data_derivatives(self, objective, raw_gradient, raw_curvature):
        """The data term's gradient ``X^T (w raw_gradient)`` and its curvature in
        the family's form (:meth:`data_curvature`)."""
        return (objective.data_gradient(raw_gradient),
                self.data_curvature(objective, raw_curvature))

    def shipped(self, needs=()):
        """What to send where row chunks live (:class:`~skvan.expectations.MapReduce`):
        this family (its parameters are vectors)."""
        return self

    def reparametrised(self, column_scale):
        """The same distribution over ``theta' = column_scale * theta``: mean
        ``s * mu``, precision ``P / (s s^T)`` (a diagonal one ``P / s^2``), as a new
        family without a floor (an objective's
        :meth:`~skvan.objectives.LinearModelObjective.reparametrised` coordinates)."""
        s = np.asarray(column_scale, dtype=np.float64)
        P = self.precision
        scale = np.outer(s, s) if P.ndim == 2 else s**2
        return type(self)(s * self.mean, P / scale)

    def group_variances(self, groups):
        """``Var(sum_k theta[groups[k, j]])`` for each column ``j`` of an index
        array ``groups`` ``(k, m)``: the sum of the ``k x k`` block of the
        covariance over each group (a multinomial model's gauge term)."""
        S = self.sigma
        return S[groups[:, None, :], groups[None, :, :]].sum(axis=(0, 1))


class FullGaussian(_Gaussian):
    """Gaussian with a full covariance matrix (the paper's VAN).

    Parameters
    ----------
    mean : ndarray of shape (n_params,)
    precision : ndarray of shape (n_params, n_params)
        Symmetric positive definite.
    floor : ndarray of shape (n_params, n_params) or None, default=None
        A lower bound ``P_0`` the precision keeps through every update
        (:meth:`update_precision`).
    """

    diagonal = False
    #: ``tr(Sigma)`` costs ``p^3 / 3`` (the inverse factor), no pass over the rows.
    cheap_trace = True

    def set_precision(self, P, chol=None):
        """Replace the precision (symmetrised, floored if not positive definite)."""
        self._set_symmetric(0.5 * (P + P.T), chol)

    def scaled_precision(self, factor):
        """:meth:`_Gaussian.scaled_precision`, its Cholesky factor ``sqrt(factor) L``
        (no factorisation)."""
        return self._rescaled(self.mean, factor * self.precision,
                              np.sqrt(factor) * self._chol[0], 1.0 / factor)

    def reparametrised(self, column_scale):
        """:meth:`_Gaussian.reparametrised`, its Cholesky factor ``diag(s)^-1 L``
        (no factorisation)."""
        s = np.asarray(column_scale, dtype=np.float64)
        return self._rescaled(s * self.mean, self.precision / np.outer(s, s),
                              self._chol[0] / s[:, None], s**2)

    def _rescaled(self, mean, P, L, variance_scale):
        """A new family ``N(mean, P^-1)`` whose ``P`` is this one's precision under a
        positive diagonal scaling, ``L`` the same scaling of this one's factor, and
        ``variance_scale`` that of the marginal variances (kept where this family
        has them). Factored anew only where ``L`` fails :func:`_cholesky`'s test of
        numerical definiteness (which a diagonal scaling can change). ``P`` is
        exactly symmetric, as this one's is (``s_i s_j`` and ``s_j s_i`` are the
        same product)."""
        family = type(self).__new__(type(self))
        family.mean = np.array(mean, dtype=np.float64)
        family.floor = None
        definite = _definite(L, P)
        family._set_symmetric(P, (L, True) if definite else None)
        if definite and (self._marginal is not None or self._cov is not None):
            family._marginal = self.marginal_variance() * variance_scale
        return family

    def try_set_precision(self, P):
        """Replace the precision by ``P`` (symmetrised) if it is numerically positive
        definite (as :meth:`update_precision` judges it) and return True; else
        leave ``q`` as it is and return False."""
        return self._try_set_symmetric(0.5 * (P + P.T))

    def precision_vector(self):
        """The precision's free parameters as one vector: its upper triangle
        (:class:`~skvan.van.AndersonStep` extrapolates it)."""
        return self.precision[self._upper_triangle()]

    def try_set_precision_vector(self, v):
        """:meth:`try_set_precision` of the symmetric matrix whose upper triangle
        is ``v`` (:meth:`precision_vector`)."""
        upper = self._upper_triangle()
        P = np.zeros_like(self.precision)
        P[upper] = v
        P.T[upper] = v
        return self._try_set_symmetric(P)

    def _try_set_symmetric(self, P):
        """:meth:`try_set_precision` for a ``P`` that is exactly symmetric."""
        chol = _cholesky(P)
        if chol is None:
            return False
        self._set_symmetric(P, chol)
        return True

    def _upper_triangle(self):
        if getattr(self, "_upper", None) is None:
            self._upper = np.triu_indices(self.n_params)
        return self._upper

    def _set_symmetric(self, P, chol=None):
        """:meth:`set_precision` for a ``P`` that is exactly symmetric."""
        if chol is None:
            chol = _cholesky(P)
        if chol is None:
            P = _floor_spectrum(P)
            P = 0.5 * (P + P.T)
            with lapack_one_thread(self.n_params):
                c, _ = linalg.cho_factor(P, lower=True, check_finite=False)
            chol = (np.tril(c), True)
        self.precision = P
        self._chol = chol
        self._cov = None
        self._chol_inv = None
        self._chol_inv_t = None
        self._marginal = None
        # A diagonal precision (the usual start) gives predictor variances in one
        # O(n p) product instead of the O(n p^2) pass.
        # (an off-diagonal entry read first settles it for a full one, without the count)
        off = P.shape[0] > 1 and (P[0, 1] != 0 or P[-1, 0] != 0)
        diag = None if off else P.diagonal().copy()
        self._diagonal = None if off or np.count_nonzero(P) > np.count_nonzero(diag) else diag
        self.version = getattr(self, "version", -1) + 1

    @property
    def sigma(self):
        """The covariance ``precision^-1``, shape ``(n_params, n_params)``."""
        if self._cov is None:
            # The inverse from the Cholesky factor (LAPACK potri): a third of the
            # flops of solving against the identity.
            # The factor's upper triangle is zero and potri leaves it so: the
            # lower triangle plus its transpose, with the doubled diagonal halved
            # (exactly), is the symmetric inverse.
            with lapack_one_thread(self.n_params, inverse=True):
                inv, info = lapack.dpotri(self._chol[0], lower=1)
                if info != 0:
                    inv = np.tril(linalg.cho_solve(self._chol, np.eye(self.n_params),
                                                   check_finite=False))
            cov = inv + inv.T
            cov.reshape(-1)[:: self.n_params + 1] *= 0.5
            self._cov = cov
        return self._cov

    def logdet_precision(self):
        """``log det P``."""
        return 2.0 * float(np.sum(np.log(np.diag(self._chol[0]))))

    def data_curvature(self, objective, raw):
        """The data term's curvature ``X^T diag(w raw) X``, ``(n_params, n_params)``."""
        return objective.data_curvature(raw)

    def data_derivatives(self, objective, raw_gradient, raw_curvature):
        """:meth:`_Gaussian.data_derivatives`, in one pass over the rows where the
        objective has one (a linear model's ``data_derivatives``)."""
        if hasattr(objective, "data_derivatives"):
            return objective.data_derivatives(raw_gradient, raw_curvature)
        return super().data_derivatives(objective, raw_gradient, raw_curvature)

    def finalize(self):
        """Compute the covariance the fitted attributes read (cached)."""
        _ = self.sigma

    def shipped(self, needs=()):
        """What to send where row chunks live (:class:`~skvan.expectations.MapReduce`):
        a copy holding the ``p x p`` matrices ``needs`` names, computed here once,
        and no others. "moments": ``L^-T``, for the rows' predictor variances
        (:meth:`predictor_moments`); "sigma": the covariance; "precision". A pass
        whose variances are carried needs none (the predictors need the mean
        alone); the precision, its factor and ``L^-1`` would otherwise travel
        with every pass (10 MB at 650 parameters), and each chunk would factor
        what it needs again. The marginal variances (a vector) always go."""
        self.marginal_variance()
        if "moments" in needs and self._diagonal is None:
            self._inverse_factor_t()
        if "sigma" in needs:
            _ = self.sigma
        view = copy.copy(self)
        view._chol = view._chol_inv = view._upper = None
        if "moments" not in needs:
            view._chol_inv_t = None
        if "sigma" not in needs:
            view._cov = None
        if "precision" not in needs:
            view.precision = None
        return view

    def _inverse_factor(self):
        """``L^-1`` (``P = L L^T``), computed once per precision (LAPACK trtri, which
        leaves the factor's zero upper triangle as it is)."""
        if self._chol_inv is None:
            with lapack_one_thread(self.n_params):
                inv, info = lapack.dtrtri(self._chol[0], lower=1)
                if info != 0:
                    inv = np.tril(linalg.solve_triangular(self._chol[0], np.eye(self.n_params),
                                                          lower=True, check_finite=False))
            self._chol_inv = inv
        return self._chol_inv

    @property
    def inverse_at_hand(self):
        """Whether ``L^-1`` or the covariance is already computed for this precision
        (then the marginal variances cost ``O(p^2)``)."""
        return self._chol_inv is not None or self._cov is not None

    def marginal_variance(self):
        """Diagonal of the covariance: the squared column norms of ``L^-1``
        (computed once per precision; a copy is returned)."""
        if self._marginal is None:
            if self._cov is not None:
                self._marginal = self._cov.diagonal().copy()
            else:
                Linv = self._inverse_factor()
                self._marginal = np.einsum("ij,ij->j", Linv, Linv)
        return self._marginal.copy()

    def weighted_trace(self, w):
        """``sum_j w_j Sigma_jj``."""
        return float(np.dot(w, self.marginal_variance()))

    def group_variances(self, groups):
        """:meth:`_Gaussian.group_variances`; without the covariance at hand, the
        squared norms of the groups' summed columns of ``L^-1`` (``P = L L^T``), which
        :meth:`marginal_variance` computes too, instead of forming ``P^-1``."""
        if self._cov is not None:
            return super().group_variances(groups)
        B = self._inverse_factor()[:, groups].sum(axis=1)
        return np.einsum("ij,ij->j", B, B)

    def predictor_variance(self, X):
        """``x_i^T Sigma x_i = ||L^-1 x_i||^2`` for each row of ``X`` (``P = L L^T``),
        by a product with ``L^-T`` in row blocks (``sum_j x_ij^2 / P_jj`` when the
        precision is diagonal).

        A general matrix product, though ``L^-T`` is triangular: OpenBLAS's
        ``dgemm`` does the ``p^2`` multiply-adds per row in at most the time its
        ``dtrmm`` takes for half as many (``python benchmarks/bench_passes.py``).
        """
        return self.predictor_moments(X)[1]

    def predictor_moments(self, X, mean=None):
        """``(X mean, x_i^T Sigma x_i)``: the rows' predictors at ``mean`` (None
        without it) and their variances (:meth:`predictor_variance`), in one pass
        over the row blocks: the product with ``L^-T`` has ``mean`` as one more
        column, so each block is read once while it is in cache."""
        if self._diagonal is not None:
            return (None if mean is None else dot(X, mean),
                    row_weighted_squares(X, 1.0 / self._diagonal))
        if not self.inverse_at_hand and X.shape[0] < self.n_params:
            # Fewer rows than parameters (a minibatch): ||L^-1 x_i||^2 by a
            # triangular solve, O(n p^2), instead of forming L^-1, O(p^3 / 3).
            block = X.toarray() if issparse(X) else np.asarray(X, dtype=np.float64)
            Z = linalg.solve_triangular(self._chol[0], block.T, lower=True, check_finite=False)
            return (None if mean is None else block @ mean), np.einsum("ij,ij->j", Z, Z)
        upper = self._inverse_factor_t()
        p = upper.shape[1]
        if mean is not None:
            upper = np.concatenate([upper, np.reshape(mean, (-1, 1))], axis=1)
        m = None if mean is None else np.empty(X.shape[0])
        v = np.empty(X.shape[0])
        for rows in row_blocks(X.shape[0], X.shape[1]):
            block = X[rows]
            if not issparse(block):
                block = block.astype(np.float64, copy=False)
            Z = block @ upper
            if m is not None:
                m[rows] = Z[:, p]
                Z = Z[:, :p]
            v[rows] = np.einsum("ij,ij->i", Z, Z)
        return m, v

    def _inverse_factor_t(self):
        """``L^-T`` as a C-contiguous array (cached with ``L^-1``)."""
        if self._chol_inv_t is None:
            self._chol_inv_t = np.ascontiguousarray(self._inverse_factor().T)
        return self._chol_inv_t

    def solve(self, g):
        """Return ``precision^-1 g``."""
        with lapack_one_thread(self.n_params):
            x, info = lapack.dpotrs(self._chol[0], g, lower=1)
            return x if info == 0 else linalg.cho_solve(self._chol, g, check_finite=False)

    solve_step = solve

    def scale_noise(self, Z):
        """Rows ``A z`` with ``A = L^-T`` (``precision = L L^T``): standard normal rows
        ``z`` become draws of ``theta - mean``, since ``A A^T = precision^-1``."""
        with lapack_one_thread(self.n_params):
            return linalg.solve_triangular(self._chol[0], Z.T, lower=True, trans="T",
                                           check_finite=False).T

    def unwhiten(self, M):
        """``L M``: maps whitened quantities back (``A^-T = L``); ``M`` is a vector or
        a matrix whose rows are whitened coordinates."""
        return np.tril(self._chol[0]) @ M

    def whiten(self, x):
        """``L^T x``: a step ``x`` of ``theta`` in whitened coordinates (the inverse of
        :meth:`scale_noise`)."""
        return np.tril(self._chol[0]).T @ x

    def whiten_gradients(self, G):
        """Rows ``A^T g = L^-1 g``: gradients ``g`` of ``f`` over ``theta`` (rows of
        ``G``) as gradients over the whitened draws ``z`` (``theta = mean + A z``;
        the inverse of :meth:`unwhiten`)."""
        with lapack_one_thread(self.n_params):
            return linalg.solve_triangular(self._chol[0], G.T, lower=True,
                                           check_finite=False).T

    def sample(self, n_samples, random_state):
        """Draw ``n_samples`` parameter vectors, shape ``(n_samples, n_params)``:
        ``theta = mean + L^-T eps``, ``eps`` standard normal."""
        eps = random_state.standard_normal((self.n_params, n_samples))
        return self.mean[None, :] + self.scale_noise(eps.T)

    def update_precision(self, curvature, beta, keep=1.0):
        """Set ``P <- keep * P + beta * C`` for an ``(n_params, n_params)`` curvature ``C``.

        ``keep=1`` is the VO update (eq. Van_prec_1), ``keep=1-beta`` the VI update
        (Section 5 of the paper). ``C`` is projected onto the PSD cone if the result
        would not be positive definite. With a ``floor`` ``P_0`` the result is
        projected (in the Frobenius norm) onto ``{P >= P_0}`` instead:
        ``P_0 + [P - P_0]_+``, so ``q`` never becomes wider than ``N(mean, P_0^-1)``.
        """
        C = curvature + curvature.T
        C *= 0.5
        P = beta * C  # (in place: a step's arithmetic on p x p arrays, few temporaries)
        P += keep * self.precision
        if self.floor is not None:
            if _cholesky(P - self.floor) is None:
                P = self.floor + _psd_part(P - self.floor)
            self.set_precision(P)
            return
        chol = _cholesky(P)
        if chol is None:
            self.set_precision(keep * self.precision + beta * _psd_part(C))
        else:
            # keep * P + beta * C of two exactly symmetric matrices is exactly
            # symmetric (entries ij and ji are the same operations on the same numbers).
            self._set_symmetric(P, chol)


def _cholesky(P):
    """``(L, True)``, ``L`` the lower Cholesky factor of ``P`` with zeros above the
    diagonal (as ``cho_factor`` returns it, cleaned), or None if ``P`` is not
    numerically positive definite (or not finite)."""
    if not all_finite(P):
        return None
    # LAPACK directly: cho_factor's checks cost more than a small factor itself
    # (benchmarks/bench_passes.py), made once or twice per iteration.
    with lapack_one_thread(P.shape[0]):
        c, info = lapack.dpotrf(P, lower=1, clean=1)
    if info != 0 or not _definite(c, P):
        return None
    return (c, True)


def _definite(L, P):
    """Whether the lower factor ``L`` of ``P`` shows ``P`` numerically positive
    definite: its smallest pivot squared at least :data:`_EIG_FLOOR` of ``P``'s
    largest diagonal entry."""
    low = min_of(L.diagonal())
    return bool(low > 0 and low**2 >= _EIG_FLOOR * max_of(np.abs(P.diagonal())))


class DiagonalGaussian(_Gaussian):
    """Mean-field Gaussian with a diagonal covariance (the paper's VAN-D).

    Parameters
    ----------
    mean : ndarray of shape (n_params,)
    precision : ndarray of shape (n_params,)
        Positive precisions ``s_d = 1 / sigma_d^2``.
    floor : ndarray of shape (n_params,) or None, default=None
        Lower bounds the precisions keep through every update.
    """

    diagonal = True
    cheap_trace = True

    def try_set_precision(self, s):
        """Replace the precisions by ``s`` if they are finite and above the floor of
        :meth:`set_precision` (``1e-12`` times the largest), and return True; else
        leave ``q`` as it is and return False."""
        s = np.asarray(s, dtype=np.float64)
        if not (np.all(np.isfinite(s)) and s.min() > _EIG_FLOOR * s.max()):
            return False
        self.set_precision(s)
        return True

    def precision_vector(self):
        """The precisions (a copy): :class:`~skvan.van.AndersonStep`'s form."""
        return self.precision.copy()

    try_set_precision_vector = try_set_precision

    def set_precision(self, s):
        """Replace the precisions (floored at ``1e-12`` times the largest)."""
        top = max(float(np.max(s)), np.finfo(np.float64).tiny)
        self.precision = np.maximum(s, _EIG_FLOOR * top)
        self.version = getattr(self, "version", -1) + 1

    @property
    def sigma(self):
        """The variances ``1 / s``, shape ``(n_params,)``."""
        return 1.0 / self.precision

    def logdet_precision(self):
        """``log det P``."""
        return float(np.sum(np.log(self.precision)))

    def data_curvature(self, objective, raw):
        """The diagonal of the data term's curvature."""
        return objective.data_curvature(raw, diagonal=True)

    def finalize(self):
        """Nothing to compute."""

    def marginal_variance(self):
        """The variances ``1 / s``."""
        return 1.0 / self.precision

    def weighted_trace(self, w):
        """``sum_j w_j / s_j``."""
        return float(np.dot(w, 1.0 / self.precision))

    def group_variances(self, groups):
        """:meth:`_Gaussian.group_variances`: sums of the variances."""
        return self.marginal_variance()[groups].sum(axis=0)

    def predictor_variance(self, X):
        """``sum_d x_id^2 / s_d`` for each row of ``X``."""
        return row_weighted_squares(X, 1.0 / self.precision)

    def solve(self, g):
        """Return ``g / s``."""
        return g / self.precision

    solve_step = solve

    def scale_noise(self, Z):
        """Rows ``z / sqrt(s)``: standard normal rows become draws of ``theta - mean``."""
        return Z / np.sqrt(self.precision)[None, :]

    def unwhiten(self, M):
        """``diag(sqrt(s)) M``."""
        root = np.sqrt(self.precision)
        return root * M if M.ndim == 1 else root[:, None] * M

    def whiten(self, x):
        """``sqrt(s) x``: a step of ``theta`` in whitened coordinates."""
        return np.sqrt(self.precision) * x

    def whiten_gradients(self, G):
        """Rows ``g / sqrt(s)``: gradients over ``theta`` as gradients over the
        whitened draws (the inverse of :meth:`unwhiten`)."""
        return G / np.sqrt(self.precision)[None, :]

    def sample(self, n_samples, random_state):
        eps = random_state.standard_normal((n_samples, self.n_params))
        return self.mean[None, :] + self.scale_noise(eps)

    def update_precision(self, curvature, beta, keep=1.0):
        """Set ``s <- keep * s + beta * c``, negative entries of ``c`` clipped to 0
        (and the result raised to ``floor`` if one is set)."""
        s = keep * self.precision + beta * np.clip(curvature, 0.0, None)
        self.set_precision(s if self.floor is None else np.maximum(s, self.floor))


def make_family(covariance, mean, precision, floor=None):
    """Build a family by name: ``"full"`` or ``"diag"``. With ``floor`` (a
    precision of the same shape) every update keeps ``precision >= floor``."""
    if covariance == "full":
        return FullGaussian(mean, precision, floor)
    if covariance == "diag":
        return DiagonalGaussian(mean, precision, floor)
    raise ValueError(f"covariance must be 'full' or 'diag', got {covariance!r}.")


def unit_predictor_precision(X, sample_weight, covariance="full"):
    """The isotropic starting precision ``I / s^2`` with ``s^2 = sum_i w_i / sum_i w_i
    ||x_i||^2``: each linear predictor ``x_i^T theta`` then has unit variance on
    (weighted) average, a start where the loss bends whatever the scale of the
    features. ``(n, n)`` for a full family, ``(n,)`` for a diagonal one."""
    precision = np.full(X.shape[1], unit_variance_scale(X, sample_weight))
    return np.diag(precision) if covariance == "full" else precision
