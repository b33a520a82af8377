"""Full Gaussians for linear models that never form a ``p x p`` matrix.

For a linear model every VAN precision has the form

    P = diag(lam) + X^T diag(d) X

with ``lam`` over the parameters (the initial precision, the prior, the L1
curvature) and ``d`` over the rows (the accumulated expected ``l''``): the
initial precision is diagonal and each update adds ``beta (X^T diag(w E[l'']) X
+ diag(penalty curvature))``. :class:`GramPrecision` keeps ``(lam, d, X)``;
two families solve with it:

- :class:`DualGaussian`, exact, through ``n x n`` systems (Woodbury): with
  ``s = sqrt(d)``, ``K = X diag(1/lam) X^T`` and ``B = I + diag(s) K diag(s) = L L^T``,
  ``P^-1 g = g/lam - diag(1/lam) X^T s B^-1 s X (g/lam)``,
  ``x_i^T P^-1 x_i = (1 - (B^-1)_ii) / d_i`` (or ``K_ii - ||L^-1 s K e_i||^2`` where
  ``d_i K_ii`` is small), ``log det P = sum log lam + log det B``. Cost ``O(n^2 p +
  n^3)`` per update and ``n^2`` memory; the same iterates as the primal
  :class:`~skvan.van.FullGaussian`, to rounding.
- :class:`OperatorGaussian`, for when neither ``p^2`` nor ``n^2`` fits: ``P`` as
  the operator ``v -> lam v + X^T (d (X v))`` (sparse products), mean steps by
  preconditioned conjugate gradients, and predictor variances from the diagonal
  of ``P``, ``x_i^T P^-1 x_i ~ sum_j x_ij^2 / P_jj``. Under VO those vanish as ``q``
  concentrates, so the optimum is VAN's; the iterates differ while ``q`` is wide.

Coordinates whose ``lam`` may vanish (unpenalised ones, such as the intercept,
under VI's damped average) are ``free``: the dual eliminates them through their
Schur complement (``k x k`` for ``k`` free coordinates) instead of dividing by
their ``lam``. So are those whose ``lam`` is below :data:`FREE_RATIO` times
their data curvature ``(X^2)^T d`` (the Lasso's nonzero coefficients, whose
expected L1 curvature vanishes): dividing by such a ``lam`` and subtracting the
data's share back would leave their variances at the mercy of cancellation.
"""

import functools

import numpy as np
from scipy import linalg
from scipy.linalg import lapack
from scipy.sparse.linalg import LinearOperator, cg

from .._blas import lapack_one_thread
from .._blocks import row_blocks
from .._data import dot, gram, issparse, scale_columns, squared, tdot
from .._reductions import all_finite, any_of
from ._family import _floor_spectrum, _Gaussian, make_family

#: Largest dense matrix (bytes) a family forms without being asked by name:
#: ``sigma`` of a wide model and the dual's ``n x n`` systems stay below it.
MEMORY_BUDGET = 1 << 30
#: ``d_i K_ii`` below which the dual takes a row's variance from ``K`` (where
#: ``1 - (B^-1)_ii`` would cancel).
_SMALL_LEVERAGE = 1e-2
#: A coordinate whose ``lam`` is below this times its data curvature is
#: eliminated exactly (free) by the dual (module docstring).
FREE_RATIO = 1e-6
#: Relative residual of :class:`OperatorGaussian`'s conjugate-gradient solves:
#: at most ``STEP_RTOL`` for mean steps (an inexact Newton step, the forcing term of
#: liblinear's trust-region Newton: the fixed point is unchanged, and on the
#: wide benchmarks 1e-1 took a third of the matrix products of 1e-6 for the same
#: optimum), ``CG_RTOL`` for everything else (draws, ``sigma``).
STEP_RTOL = 1e-1
#: The least forcing term of a mean step (:meth:`OperatorGaussian.solve_step`):
#: each step then gains at least two digits on the last, the rate the
#: convergence test reads (never better than the forcing term), and conjugate
#: gradients spend no iterations on digits the next step would discard.
STEP_RTOL_MIN = 1e-2
CG_RTOL = 1e-8
_EIG_FLOOR = 1e-12


class RowCurvature:
    """A curvature ``X^T diag(d) X + diag(diagonal)`` kept as its parts; with ``K``
    linear predictors per row (a multinomial model), ``sum_i D_i (x) x_i x_i^T +
    diag(diagonal) + sum_j gauge_j u_j u_j^T`` (:class:`ClassGramPrecision`).

    Parameters
    ----------
    d : ndarray of shape (n_rows,) or (n_rows, K, K)
        Per-row weights, or per-row ``K x K`` blocks ``D_i``.
    diagonal : float or ndarray of shape (n_params,), default=0.0
    rows : ndarray of int or None, default=None
        The rows of the family's design that ``d`` refers to (None: all).
    gauge : float or ndarray of shape (n_features,), default=0.0
        With blocks: the weight of ``u_j u_j^T``, ``u_j`` the unit vector adding the
        same amount to every class's coefficient of feature ``j``
        (:class:`~skvan.objectives.MultinomialObjective`'s gauge term).
    """

    def __init__(self, d, diagonal=0.0, rows=None, gauge=0.0):
        self.d = d
        self.diagonal = diagonal
        self.rows = rows
        self.gauge = gauge

    def add_diagonal(self, extra):
        """The curvature plus ``diag(extra)``."""
        return RowCurvature(self.d, self.diagonal + extra, self.rows, self.gauge)

    def add_gauge(self, kappa):
        """The curvature plus ``sum_j kappa_j u_j u_j^T``."""
        return RowCurvature(self.d, self.diagonal, self.rows, self.gauge + kappa)

    def all_finite(self):
        """Whether every part is finite."""
        return all_finite(self.d) and all_finite(self.diagonal) and all_finite(self.gauge)


class _Cache:
    """What one design shares across updates: ``X^2``, and ``G = X diag(ref) X^T``
    (``ref = 1/lam`` when it was formed): when the new ``1/lam`` is a multiple
    ``c`` of ``ref`` (a VO logistic fit: prior and start both isotropic),
    ``K = c G`` costs ``n^2`` instead of ``n^2 p``."""

    def __init__(self):
        self.ref = None
        self.G = None
        self.X_squared = None

    def squared(self, X):
        if self.X_squared is None:
            self.X_squared = squared(X)
        return self.X_squared


class GramPrecision(LinearOperator):
    """``P = diag(lam) + X^T diag(d) X`` as a ``scipy.sparse.linalg.LinearOperator``.

    Parameters
    ----------
    lam : ndarray of shape (n_params,)
        Non-negative; positive outside ``free``.
    d : ndarray of shape (n_rows,)
        Non-negative row weights.
    X : ndarray or CSR matrix of shape (n_rows, n_params)
    free : ndarray of bool of shape (n_params,) or None
        Coordinates eliminated exactly by the dual (their ``lam`` may be 0).
    """

    def __init__(self, lam, d, X, free=None, cache=None):
        p = X.shape[1]
        super().__init__(np.float64, (p, p))
        self.lam = np.asarray(lam, dtype=np.float64)
        self.d = np.clip(np.asarray(d, dtype=np.float64), 0.0, None)
        self.X = X
        self.free = np.zeros(p, dtype=bool) if free is None else np.asarray(free, dtype=bool)
        self._cache = _Cache() if cache is None else cache
        self._factors = None

    def __getstate__(self):
        state = self.__dict__.copy()
        state["_factors"] = None  # recomputed on demand
        state["_cache"] = _Cache()
        return state

    def _matvec(self, v):
        v = np.ravel(v)
        return self.lam * v + np.asarray(tdot(self.X, self.d * dot(self.X, v))).ravel()

    def _adjoint(self):
        return self

    def data_diagonal(self):
        """``diag(X^T diag(d) X) = (X^2)^T d``."""
        return np.asarray(tdot(self._cache.squared(self.X), self.d)).ravel()

    def diagonal(self):
        """``diag(P) = lam + (X^2)^T d``."""
        return self.lam + self.data_diagonal()

    def _updated_parts(self, curvature, beta, keep):
        """``(lam, d)`` of ``keep P + beta C``, ``C`` a :class:`RowCurvature` on the same
        design (its rows scattered into ``d``: per-row weights or blocks)."""
        d = keep * self.d
        if curvature.rows is None:
            d = d + beta * curvature.d
        else:
            np.add.at(d, curvature.rows, beta * curvature.d)
        return keep * self.lam + beta * curvature.diagonal, d

    def updated(self, curvature, beta, keep):
        """``keep P + beta C`` for a :class:`RowCurvature` ``C`` on the same design."""
        lam, d = self._updated_parts(curvature, beta, keep)
        return GramPrecision(lam, d, self.X, self.free, self._cache)

    def in_coordinates(self, column_scale, X):
        """The precision over ``theta = theta' / column_scale`` (``self`` over
        ``theta'``), with ``X`` the design in those coordinates."""
        return GramPrecision(self.lam * column_scale**2, self.d, X, self.free)

    def root_draws(self, n_draws, random_state):
        """Draws of ``N(0, P)``, shape ``(n_draws, n_params)``: ``lam^1/2 z_1 + X^T
        d^1/2 z_2``."""
        z1 = random_state.standard_normal((n_draws, self.shape[0]))
        z2 = random_state.standard_normal((n_draws, self.X.shape[0]))
        return z1 * np.sqrt(self.lam) + np.asarray(tdot(self.X, np.sqrt(self.d)[:, None] * z2.T)).T

    def toarray(self):
        """``P`` as a dense array (a MemoryError beyond :data:`MEMORY_BUDGET`)."""
        _check_budget(self.shape[0] ** 2, "the precision")
        P = gram(self.X, self.d)
        P = 0.5 * (P + P.T)
        P[np.diag_indices_from(P)] += self.lam
        return P


class ClassGramPrecision(GramPrecision):
    """``P = diag(lam) + sum_i D_i (x) x_i x_i^T + sum_j g_j u_j u_j^T`` for a model
    with ``K`` linear predictors per row (a multinomial one), as a
    ``LinearOperator`` over ``theta = W.ravel()`` (class-major, ``K p``).

    Every VAN precision of such a model has this form: the start and the
    penalty are diagonal, and each update adds ``beta`` times the data's
    curvature ``sum_i w_i E[H_i] (x) x_i x_i^T`` (``H_i`` the ``K x K`` Hessian of
    row ``i``'s loss in its predictors) and the gauge term's ``kappa_j u_j
    u_j^T`` (``u_j`` adds the same amount to every class's coefficient of feature
    ``j``). A product costs ``O(n K p + n K^2)``: two passes over ``X`` and a
    ``K x K`` block per row; the ``K p x K p`` matrix is never formed.

    Parameters
    ----------
    lam : ndarray of shape (n_params,)
        Positive.
    d : ndarray of shape (n_rows, K, K)
        Symmetric positive semi-definite row blocks ``D_i``.
    X : ndarray or CSR matrix of shape (n_rows, p)
    gauge : float or ndarray of shape (p,), default=0.0
        Non-negative ``g_j``.

    See Also
    --------
    GramPrecision : The same for one linear predictor per row.
    OperatorGaussian : The family that solves with it.

    Examples
    --------
    A unit ridge plus the data's curvature of a multinomial objective at
    ``theta`` (its rows' ``K x K`` Hessians in the predictors), as an operator:

    >>> import numpy as np
    >>> from skvan.objectives import MultinomialObjective
    >>> from skvan.van import ClassGramPrecision
    >>> rng = np.random.RandomState(0)
    >>> X, y = rng.randn(30, 4), rng.randint(3, size=30)
    >>> f = MultinomialObjective(X, np.eye(3)[y])
    >>> _, _, H = f.loss.loss_derivatives(f.Y, f.predictors(rng.randn(12)))
    >>> P = ClassGramPrecision(np.ones(12), H, X)
    >>> v = rng.randn(12)
    >>> bool(np.allclose(P @ v, v + f.data_curvature(H) @ v))
    True
    """

    def __init__(self, lam, d, X, gauge=0.0, cache=None):
        K, p = d.shape[1], X.shape[1]
        LinearOperator.__init__(self, np.float64, (K * p, K * p))
        self.lam = np.asarray(lam, dtype=np.float64)
        self.d = np.asarray(d, dtype=np.float64)
        self.X = X
        self.gauge = np.broadcast_to(np.asarray(gauge, dtype=np.float64), (p,))
        self.n_classes = K
        self.free = np.zeros(K * p, dtype=bool)
        self._cache = _Cache() if cache is None else cache
        self._factors = None

    def _matvec(self, v):
        K = self.n_classes
        V = np.ravel(v).reshape(K, -1)
        A = np.asarray(dot(self.X, V.T))  # the rows' predictors, (n, K)
        B = np.einsum("ikl,il->ik", self.d, A)
        out = np.asarray(tdot(self.X, B)).T + self.gauge * V.sum(axis=0) / K
        return self.lam * np.ravel(v) + out.ravel()

    def data_diagonal(self):
        """``diag(sum_i D_i (x) x_i x_i^T + sum_j g_j u_j u_j^T)``."""
        D = np.einsum("ikk->ik", self.d)
        out = np.asarray(tdot(self._cache.squared(self.X), D)).T + self.gauge / self.n_classes
        return out.ravel()

    def updated(self, curvature, beta, keep):
        """``keep P + beta C`` for a :class:`RowCurvature` ``C`` of row blocks on the
        same design."""
        lam, d = self._updated_parts(curvature, beta, keep)
        gauge = keep * self.gauge + beta * curvature.gauge
        return ClassGramPrecision(lam, d, self.X, gauge, self._cache)

    def in_coordinates(self, column_scale, X):
        """The precision over ``theta = theta' / column_scale`` (``self`` over
        ``theta'``; ``column_scale`` tiled over the classes), with ``X`` the design
        in those coordinates."""
        s = column_scale[: self.X.shape[1]]
        return ClassGramPrecision(self.lam * column_scale**2, self.d, X, self.gauge * s**2)

    def root_draws(self, n_draws, random_state):
        """Draws of ``N(0, P)``, shape ``(n_draws, n_params)``: ``lam^1/2 z`` plus
        ``sum_i (R_i z_i) (x) x_i`` (``R_i R_i^T = D_i``, symmetric roots of the
        blocks) plus ``sum_j g_j^1/2 z_j u_j``."""
        K, (n, p) = self.n_classes, self.X.shape
        evals, U = np.linalg.eigh(self.d)
        R = (U * np.sqrt(np.clip(evals, 0.0, None))[:, None, :]) @ np.swapaxes(U, 1, 2)
        z = random_state.standard_normal((n_draws, self.shape[0]))
        out = z * np.sqrt(self.lam)
        Z = np.einsum("ikl,sil->isk", R, random_state.standard_normal((n_draws, n, K)))
        rows = np.asarray(tdot(self.X, Z.reshape(n, n_draws * K))).reshape(p, n_draws, K)
        out += rows.transpose(1, 2, 0).reshape(n_draws, K * p)
        gauge = np.sqrt(self.gauge / K) * random_state.standard_normal((n_draws, p))
        out += np.tile(gauge, (1, K))
        return out

    def toarray(self):
        """``P`` as a dense array (a MemoryError beyond :data:`MEMORY_BUDGET`)."""
        _check_budget(self.shape[0] ** 2, "the precision")
        K, p = self.n_classes, self.X.shape[1]
        P = np.empty(self.shape)
        for k in range(K):
            for m in range(k, K):
                block = gram(self.X, self.d[:, k, m])
                P[k * p:(k + 1) * p, m * p:(m + 1) * p] = block
                P[m * p:(m + 1) * p, k * p:(k + 1) * p] = block.T
        idx = np.arange(p)[None, :] + p * np.arange(K)[:, None]
        P[idx[:, None, :], idx[None, :, :]] += self.gauge / K
        P = 0.5 * (P + P.T)
        P[np.diag_indices_from(P)] += self.lam
        return P


def _check_budget(n_entries, what):
    if 8 * n_entries > MEMORY_BUDGET:
        raise MemoryError(
            f"{what} would take {8 * n_entries / 2**30:.1f} GiB, more than skvan's budget of "
            f"{MEMORY_BUDGET / 2**30:.1f} GiB (skvan.van._gram.MEMORY_BUDGET); use the "
            "marginal variances (sigma_) and predict_proba, which never form it."
        )


class _GramFamily:
    """What both families share: the mean, the precision, updates, sampling."""

    diagonal = False

    def __init__(self, mean, precision):
        self.mean = np.array(mean, dtype=np.float64)
        self.set_precision(precision)

    @property
    def n_params(self):
        return self.mean.shape[0]

    def set_precision(self, precision):
        """Replace the :class:`GramPrecision` (bumps ``version``)."""
        self.precision = precision
        self.version = getattr(self, "version", -1) + 1
        self._marginal = None

    def solve_step(self, g):
        """``P^-1 g`` for a mean step."""
        return self.solve(g)

    def data_curvature(self, objective, raw):
        """The data term's curvature ``X^T diag(w raw) X`` (with ``K x K`` blocks per row,
        ``sum_i w_i raw_i (x) x_i x_i^T``) as a :class:`RowCurvature`."""
        w = objective.weights.reshape((-1,) + (1,) * (np.ndim(raw) - 1))
        return RowCurvature(w * raw, rows=getattr(objective, "rows", None))

    # The gradient and this family's curvature form, as the dense families' default.
    data_derivatives = _Gaussian.data_derivatives
    group_variances = _Gaussian.group_variances

    def update_precision(self, curvature, beta, keep=1.0):
        """``P <- keep P + beta C`` for a :class:`RowCurvature` ``C``."""
        self.set_precision(self.precision.updated(curvature, beta, keep))

    def precision_vector(self):
        """The precision's parameters as one vector, ``(lam, d)``
        (:class:`~skvan.van.AndersonStep` extrapolates it)."""
        return np.concatenate([self.precision.lam, self.precision.d])

    def try_set_precision_vector(self, v):
        """Set ``P = diag(lam) + X^T diag(d) X`` from ``v = (lam, d)``
        (:meth:`precision_vector`) and return True if ``v`` is finite with
        ``lam >= 0`` (``d`` is clipped at 0, as :class:`GramPrecision` keeps it)
        and the family factorises it; else leave ``q`` as it is and return False."""
        P, p = self.precision, self.n_params
        lam, d = v[:p], v[p:]
        if not (np.all(np.isfinite(v)) and np.all(lam >= 0)):
            return False
        self.set_precision(GramPrecision(lam, d, P.X, P.free, P._cache))
        setup = getattr(self, "_setup", None)
        if setup is not None:
            try:
                setup(strict=True)
            except np.linalg.LinAlgError:  # scipy.linalg raises it too
                self.set_precision(P)
                return False
        return True

    def perturbations(self, n_draws, random_state):
        """``P^-1 r`` for draws ``r`` of ``N(0, P)`` (the precision's ``root_draws``):
        draws of ``theta - mean``, shape ``(n_draws, n_params)`` (their covariance
        is ``P^-1 P P^-1 = P^-1``)."""
        return self.solve(self.precision.root_draws(n_draws, random_state).T).T

    def sample(self, n_draws, random_state):
        """Draw ``n_draws`` parameter vectors, shape ``(n_draws, n_params)``."""
        return self.mean[None, :] + self.perturbations(n_draws, random_state)

    @property
    def sigma(self):
        """The covariance ``P^-1`` as a dense array (a MemoryError beyond the
        budget; :meth:`marginal_variance` never forms it)."""
        _check_budget(self.n_params**2, "the covariance")
        return self.solve(np.eye(self.n_params))

    def finalize(self):
        """Compute what the fitted attributes read, under the solver's threads."""
        self.marginal_variance()


def _lapack_on_rows(method):
    """Run a :class:`DualGaussian` method with scipy's LAPACK on one thread where
    its ``n x n`` systems are of the sizes :func:`skvan._blas.lapack_one_thread`
    covers (numpy's products over the columns keep their threads)."""
    @functools.wraps(method)
    def wrapped(self, *args, **kwargs):
        with lapack_one_thread(self.precision.X.shape[0]):
            return method(self, *args, **kwargs)
    return wrapped


def _schur_factor(S, strict=False):
    """``cho_factor`` of the free coordinates' Schur complement ``S``; where ``S`` is
    not numerically positive definite (more free coordinates than rows of data
    leave it singular: a Lasso with ``alpha`` near 0 on wide data), its spectrum
    floored as a full family's precision is, or unless ``strict`` numpy's
    ``LinAlgError``."""
    try:
        return linalg.cho_factor(S, lower=True)
    except np.linalg.LinAlgError:  # (what scipy.linalg raises)
        if strict:
            raise
        S = _floor_spectrum(0.5 * (S + S.T))
        return linalg.cho_factor(0.5 * (S + S.T), lower=True)


class DualGaussian(_GramFamily):
    """Full Gaussian ``N(mean, P^-1)``, ``P`` a :class:`GramPrecision`, solved exactly
    through ``n x n`` systems (module docstring).

    Parameters
    ----------
    mean : ndarray of shape (n_params,)
    precision : GramPrecision
    """

    @_lapack_on_rows
    def _setup(self, strict=False):
        """Factorise once per precision: ``K``, ``L``, and the Schur complement of
        the free coordinates, floored where it is singular (:func:`_schur_factor`)
        unless ``strict``: a step's trial precision must fail then, and is
        rejected (:meth:`try_set_precision_vector`)."""
        P = self.precision
        if P._factors is not None:
            return P._factors
        _check_budget(P.X.shape[0] ** 2, "the dual system (n_samples^2)")
        free = P.free | (P.lam < FREE_RATIO * P.data_diagonal())
        lam_a = np.where(free, 0.0, P.lam)
        floor = _EIG_FLOOR * max(float(np.max(lam_a, initial=0.0)), np.finfo(float).tiny)
        lam_a = np.maximum(lam_a, floor)[~free]
        inv = np.zeros(self.n_params)
        inv[~free] = 1.0 / lam_a
        s = np.sqrt(P.d)
        K = _kernel(P.X, inv, P._cache)
        B = K * s[:, None] * s[None, :]
        B[np.diag_indices_from(B)] += 1.0
        L = linalg.cholesky(B, lower=True, check_finite=False)
        f = dict(inv=inv, s=s, K=K, L=L, b=np.flatnonzero(free),
                 logdet=float(np.sum(np.log(lam_a))) + 2.0 * float(np.sum(np.log(np.diag(L)))))
        P._factors = f
        if f["b"].size:
            Xb = _columns(P.X, f["b"])
            Pab = np.asarray(tdot(P.X, P.d[:, None] * Xb))
            Pab[f["b"]] = 0.0
            W = self._solve_a(Pab)
            Pbb = Xb.T @ (P.d[:, None] * Xb) + np.diag(P.lam[f["b"]])
            f.update(Pab=Pab, W=W, Sc=_schur_factor(Pbb - Pab.T @ W, strict))
            f["logdet"] += 2.0 * float(np.sum(np.log(np.diag(f["Sc"][0]))))
        return f

    def _solve_a(self, V):
        """``P_aa^-1 V`` on the penalised coordinates (zero rows on the free ones)."""
        f = self.precision._factors
        U = f["inv"][:, None] * V
        T = f["s"][:, None] * np.asarray(dot(self.precision.X, U))
        T = linalg.cho_solve((f["L"], True), T, check_finite=False)
        return U - f["inv"][:, None] * np.asarray(tdot(self.precision.X, f["s"][:, None] * T))

    @_lapack_on_rows
    def solve(self, g):
        """``P^-1 g`` for a vector or an ``(n_params, r)`` matrix."""
        f = self._setup()
        G = g.reshape(g.shape[0], -1)
        Ga = G.copy()
        Ga[f["b"]] = 0.0
        Y = self._solve_a(Ga)
        if f["b"].size:
            Vb = linalg.cho_solve(f["Sc"], G[f["b"]] - f["Pab"].T @ Y, check_finite=False)
            Y = Y - f["W"] @ Vb
            Y[f["b"]] = Vb
        return Y.reshape(g.shape)

    def logdet_precision(self):
        """``log det P = sum_a log lam + log det B + log det(Schur)``."""
        return self._setup()["logdet"]

    @_lapack_on_rows
    def predictor_variance(self, X):
        """``x_i^T P^-1 x_i`` for each row of ``X``."""
        f = self._setup()
        if X is self.precision.X:
            v = self._training_variance(f)
        else:
            v = np.concatenate([self._new_variance(f, X[rows])
                                for rows in row_blocks(X.shape[0], self.precision.X.shape[0])])
        if f["b"].size:
            R = _columns(X, f["b"]) - np.asarray(dot(X, f["W"]))
            v = v + np.einsum("ij,ij->i", R, linalg.cho_solve(f["Sc"], R.T, check_finite=False).T)
        return v

    def _inverse_factor(self, f):
        """``L^-1`` and ``diag(B^-1)`` (its column norms), computed once per precision."""
        if "Linv" not in f:
            Linv, info = lapack.dtrtri(f["L"], lower=1)
            if info != 0:
                Linv = linalg.solve_triangular(f["L"], np.eye(len(f["s"])), lower=True,
                                               check_finite=False)
            f["Linv"], f["binv"] = Linv, np.einsum("ij,ij->j", Linv, Linv)
        return f["Linv"], f["binv"]

    def _training_variance(self, f):
        """The design's own rows: ``(1 - (B^-1)_ii) / d_i``, or ``K_ii - ||L^-1 s K e_i||^2``
        where ``d_i K_ii`` is small (no cancellation either way)."""
        d, K = self.precision.d, f["K"]
        Kd = np.diag(K).copy()
        Linv, binv = self._inverse_factor(f)
        small = d * Kd < _SMALL_LEVERAGE
        v = np.empty_like(Kd)
        v[~small] = (1.0 - binv[~small]) / d[~small]
        if small.any():
            T = Linv @ (f["s"][:, None] * K[:, small])
            v[small] = Kd[small] - np.einsum("ij,ij->j", T, T)
        return np.maximum(v, 0.0)

    def _new_variance(self, f, Z):
        """Rows ``Z`` not of the design: ``z^T diag(1/lam) z - ||L^-1 s X diag(1/lam) z||^2``."""
        Zi = scale_columns(Z, f["inv"])
        T = f["s"][:, None] * _dense(dot(self.precision.X, Zi.T))
        T = linalg.solve_triangular(f["L"], T, lower=True, check_finite=False)
        prior = np.asarray(Zi.multiply(Z).sum(axis=1)).ravel() if issparse(Z) else np.einsum("ij,ij->i", Zi, Z)
        return np.maximum(prior - np.einsum("ij,ij->j", T, T), 0.0)

    @_lapack_on_rows
    def weighted_trace(self, w):
        """``sum_j w_j Sigma_jj``. When ``w / lam`` is the same on every penalised
        coordinate (``c``), ``X diag(w / lam^2) X^T = c K`` and the sum is
        ``sum w / lam - c (n - tr B^-1) + (free coordinates' part)``: ``O(n^2)`` on top
        of the factorisation instead of the ``O(n^2 p)`` marginal variances."""
        if self._marginal is not None:
            return float(np.dot(w, self._marginal))
        f = self._setup()
        a = f["inv"] > 0
        ratio = np.broadcast_to(w, a.shape)[a] * f["inv"][a]
        if not a.any() or np.ptp(ratio) > 1e-13 * np.max(np.abs(ratio)):
            return float(np.dot(w, self.marginal_variance()))
        _, binv = self._inverse_factor(f)
        w = np.broadcast_to(w, a.shape)
        out = float(np.sum(w[a] * f["inv"][a])) - ratio[0] * (len(binv) - float(np.sum(binv)))
        if f["b"].size:
            Sc_inv = linalg.cho_solve(f["Sc"], np.eye(f["b"].size), check_finite=False)
            out += float(np.einsum("i,ij,jk,ik->", w, f["W"], Sc_inv, f["W"]))
            out += float(np.dot(w[f["b"]], np.diag(Sc_inv)))
        return out

    @_lapack_on_rows
    def marginal_variance(self):
        """Diagonal of ``P^-1`` (``O(n^2 p)``, in column blocks; never ``p x p``)."""
        if self._marginal is not None:
            return self._marginal
        f = self._setup()
        P = self.precision
        out = f["inv"].copy()
        p = self.n_params
        for cols in row_blocks(p, P.X.shape[0]):
            idx = np.arange(p)[cols]
            A = f["s"][:, None] * _dense(_columns(P.X, idx)) * f["inv"][idx]
            A = linalg.solve_triangular(f["L"], A, lower=True, check_finite=False)
            out[idx] -= np.einsum("ij,ij->j", A, A)
        if f["b"].size:
            Sc_inv = linalg.cho_solve(f["Sc"], np.eye(f["b"].size), check_finite=False)
            out += np.einsum("ij,jk,ik->i", f["W"], Sc_inv, f["W"])
            out[f["b"]] = np.diag(Sc_inv)
        self._marginal = np.maximum(out, 0.0)
        return self._marginal


class OperatorGaussian(_GramFamily):
    """Full precision ``P`` (a :class:`GramPrecision`, or a :class:`ClassGramPrecision`
    with ``K`` predictors per row) used as an operator: solves by conjugate
    gradients preconditioned by ``diag(P)``, and the variances of ``diag(P)^-1``
    (module docstring; a multinomial row's predictors then get independent
    variances ``sum_j x_ij^2 / P_kj,kj``). For VO fits too large for the dual
    (or, with several classes, for the ``K p x K p`` matrix).

    Parameters
    ----------
    mean : ndarray of shape (n_params,)
    precision : GramPrecision or ClassGramPrecision
    """

    def set_precision(self, precision):
        super().set_precision(precision)
        self._diag = None

    def _pdiag(self):
        if self._diag is None:
            self._diag = self.precision.diagonal()
        return self._diag

    def solve(self, g, rtol=None):
        """``P^-1 g`` (vector, or ``(n_params, r)`` column by column) by PCG to a
        relative residual ``rtol`` (None: :data:`CG_RTOL`)."""
        if g.ndim == 2:
            return np.column_stack([self.solve(g[:, j], rtol) for j in range(g.shape[1])])
        M = 1.0 / self._pdiag()
        pre = LinearOperator(self.precision.shape, matvec=lambda v: M * np.ravel(v), dtype=np.float64)
        x, _ = cg(self.precision, g, x0=M * g, rtol=CG_RTOL if rtol is None else rtol, atol=0.0,
                  M=pre, maxiter=10 * self.n_params)
        return x

    def solve_step(self, g):
        """``P^-1 g`` for a mean step, an inexact Newton step: to a relative residual
        (the forcing term, kept as :attr:`step_rtol`) of ``0.9 (|g_t| /
        |g_t-1|)^2`` from the last step's gradient, at most :data:`STEP_RTOL` and
        at least :data:`STEP_RTOL_MIN` (Eisenstat and Walker's choice 2, with
        their recommended constants). A fixed forcing term makes the last steps contract
        by about that factor, not as a Newton method's do, and the fit ends about
        ``tol`` from the optimum where the factorised forms end well within it;
        this one tightens as the gradient falls. Such a step leaves up to that
        fraction of itself, which the convergence test
        (:class:`~skvan.van.MeanContraction`) takes as the least rate it can
        read off the steps.

        References
        ----------
        S. C. Eisenstat and H. F. Walker, "Choosing the forcing terms in an inexact
        Newton method", SIAM J. Sci. Comput. 17(1), 1996.
        """
        norm = float(np.linalg.norm(g))
        last = getattr(self, "_step_gradient", None)
        rtol = STEP_RTOL
        if last is not None and last > 0 and np.isfinite(norm):
            rtol = min(max(0.9 * (norm / last) ** 2, STEP_RTOL_MIN), STEP_RTOL)
        self._step_gradient, self.step_rtol = norm, rtol
        return self.solve(g, rtol)

    def predictor_variance(self, X):
        """``sum_j x_ij^2 / P_jj``: the variances of ``diag(P)^-1``."""
        X2 = self.precision._cache.squared(X) if X is self.precision.X else squared(X)
        return np.asarray(X2 @ (1.0 / self._pdiag())).ravel()

    def marginal_variance(self):
        """``1 / P_jj``."""
        return 1.0 / self._pdiag()

    def group_variances(self, groups):
        """``Var(sum_k theta[groups[k, j]])`` under ``diag(P)^-1``: the groups' sums of
        ``1 / P_jj`` (a multinomial model's gauge term)."""
        return self.marginal_variance()[groups].sum(axis=0)

    def weighted_trace(self, w):
        """``sum_j w_j / P_jj``."""
        return float(np.dot(w, 1.0 / self._pdiag()))

    def logdet_precision(self):
        """Not available: VI needs ``log det P``, which this family does not factorise."""
        raise NotImplementedError(
            "covariance='operator' supports objective='vo' only; use covariance='dual', "
            "'full' or 'diag' for objective='vi'."
        )


def _columns(X, idx):
    """Dense columns ``X[:, idx]``."""
    return _dense(X[:, idx])


def _dense(A):
    return A.toarray() if issparse(A) else np.asarray(A)


def _kernel(X, inv, cache):
    """``K = X diag(inv) X^T``, from the cached ``G`` when ``inv`` is a multiple of
    the one it was formed with."""
    if cache.ref is not None and cache.ref.shape == inv.shape:
        nz = cache.ref > 0
        if np.array_equal(nz, inv > 0) and nz.any():
            ratio = inv[nz] / cache.ref[nz]
            if np.ptp(ratio) <= 1e-13 * ratio[0]:
                return cache.G * ratio[0]
    Xs = scale_columns(X, np.sqrt(inv))
    G = _dense(Xs @ Xs.T)
    cache.ref, cache.G = inv.copy(), G
    return G.copy()


def make_gram_family(kind, mean, precision):
    """``DualGaussian`` (``kind="dual"``) or ``OperatorGaussian`` (``"operator"``)."""
    return (DualGaussian if kind == "dual" else OperatorGaussian)(mean, precision)


#: Largest ``n_params`` for which a stream (``partial_fit``) keeps a full
#: covariance under ``covariance="auto"``: each streaming step factorises it.
STREAM_FULL_MAX = 4096
#: Up to this many parameters ``covariance="auto"`` keeps to the factorised
#: forms, whose ``p^3`` is small (the operator's conjugate-gradient steps pay
#: only beyond), and keeps the primal form for sampled expectations and
#: multinomial models: its draws do not depend on the number of rows (Monte
#: Carlo fits stay invariant to repeating rows).
SMALL_P = 512


#: Cost of one operator iteration per stored entry of ``X``: about 7 conjugate-
#: gradient steps of two products each at :data:`STEP_RTOL`, plus the passes
#: of the expectations, weighed against the BLAS-3 work of the factorised forms
#: (calibrated by ``python benchmarks/bench_wide.py``'s dense 2,000 x 5,000
#: problem).
OPERATOR_COST = 60.0


#: The same for a multinomial model's operator, per stored entry of ``X`` and per
#: class: its products are two passes over ``X`` per class, and it takes a few
#: more iterations than the factorised form (calibrated by ``python
#: benchmarks/bench_multinomial.py --forms``, which times both forms).
CLASS_OPERATOR_COST = 300.0


def auto_covariance(n_samples, n_params, objective="vo", stream=False, nnz=None, n_rows=1,
                    sampled=False):
    """What ``covariance="auto"`` resolves to.

    - A stream (``n_samples`` unknown): ``"full"`` up to :data:`STREAM_FULL_MAX`
      parameters, ``"diag"`` beyond.
    - A model with ``K = n_rows > 1`` linear predictors per row (multinomial),
      ``p = n_params / K`` coefficients each: ``"full"`` up to :data:`SMALL_P`
      parameters; beyond, under ``objective="vo"``, the cheaper of ``"full"``
      (``K (K + 1) / 2`` Gram blocks and as many predictor covariances, ``K (K +
      1) n p^2`` times the squared density, plus ``(K p)^3 / 3``) and
      ``"operator"`` (:class:`ClassGramPrecision`, :data:`CLASS_OPERATOR_COST`
      times ``K nnz``); under ``"vi"`` ``"full"`` up to :data:`STREAM_FULL_MAX`
      parameters and ``"diag"`` beyond.
    - A fit: the cheapest per iteration among the forms within
      :data:`MEMORY_BUDGET`: ``"full"`` (``p^2`` floats; the Gram ``X^T W X``, ``n
      p^2`` times the squared density of ``X``, plus ``p^3 / 3``), ``"dual"``
      (``n^2`` floats; ``X diag(1/lam) X^T``, ``n^2 p`` times the squared
      density, plus ``2 n^3 / 3``: wide data) and, beyond :data:`SMALL_P`
      parameters and for ``objective="vo"``, ``"operator"`` (:data:`OPERATOR_COST`
      times the ``nnz`` stored entries of ``X``). With ``sampled`` expectations
      (Monte Carlo), ``"full"`` up to :data:`SMALL_P` parameters. Under
      ``objective="vi"`` with neither matrix fitting, ``"diag"`` (VI needs
      ``log det P``, which the operator does not factorise).

    ``n_samples`` counts the rows the solver works through (an elastic net's
    ridge rows too).
    """
    def fits(k):
        return 8.0 * k * k <= MEMORY_BUDGET

    small = n_params <= SMALL_P and fits(n_params)
    if small and (sampled or n_rows > 1):
        return "full"
    if n_rows > 1 and not stream and n_samples is not None and objective == "vo":
        n, K, p = float(n_samples), float(n_rows), float(n_params) / n_rows
        nnz = n * p if nnz is None else float(nnz)
        density = nnz / (n * p) if n * p > 0 else 1.0
        costs = {"operator": CLASS_OPERATOR_COST * K * nnz}
        if fits(n_params):
            costs["full"] = K * (K + 1) * n * p**2 * density**2 + (K * p) ** 3 / 3.0
        return min(costs, key=costs.get)
    if stream or n_samples is None or n_rows > 1:
        return "full" if n_params <= STREAM_FULL_MAX and fits(n_params) else "diag"
    n, p = float(n_samples), float(n_params)
    nnz = n * p if nnz is None else float(nnz)
    density = nnz / (n * p) if n * p > 0 else 1.0
    costs = {}
    if fits(n_params):
        costs["full"] = n * p**2 * density**2 + p**3 / 3.0
    if fits(n_samples):
        costs["dual"] = n**2 * p * density**2 + 2.0 * n**3 / 3.0
    if objective == "vo" and not small:
        costs["operator"] = OPERATOR_COST * nnz
    return min(costs, key=costs.get) if costs else "diag"


def family_from_parts(kind, mean, lam, d, X, free=None, n_classes=1, data_gram=None):
    """The Gaussian ``N(mean, P^-1)``, ``P = diag(lam) + X^T diag(d) X``, in the form
    ``kind`` ("full", "diag", "dual" or "operator"): formed (``p x p``, or its
    diagonal) or kept as a :class:`GramPrecision`. With ``n_classes`` predictors
    per row (a multinomial model, ``d`` zero) "operator" keeps a
    :class:`ClassGramPrecision` and the others ``diag(lam)``. ``data_gram``: a
    callable returning ``X^T diag(d) X`` where it is at hand (a Gram problem's
    matrix), which "full" takes instead of another pass over ``X``."""
    if n_classes > 1:
        if kind == "operator":
            blocks = np.zeros((X.shape[0], n_classes, n_classes))
            return OperatorGaussian(mean, ClassGramPrecision(lam, blocks, X))
        return make_family(kind, mean, lam if kind == "diag" else np.diag(lam))
    if kind in ("dual", "operator"):
        return make_gram_family(kind, mean, GramPrecision(lam, d, X, free))
    data = any_of(d != 0)
    if kind == "diag":
        return make_family(kind, mean, lam + np.asarray(squared(X).T @ d).ravel() if data else lam)
    P = np.diag(lam)
    if data:
        P += gram(X, d) if data_gram is None else data_gram()
    return make_family(kind, mean, P)
