"""Exact zeros for L1-penalised least squares: the support read off ``q``, then
the exact Lasso values on it, checked against the optimality (KKT) conditions.

For ``f(theta) = 1/2 theta^T G theta - b^T theta + sum_j lambda_j |theta_j|`` a vector
``w`` with support ``S`` and signs ``z_S`` is the minimiser iff::

    G_SS w_S = b_S - lambda_S z_S,   sign(w_S) = z_S,
    |(G w - b)_j| <= lambda_j  for j outside S.

Why ``q`` knows the support: at the fixed point of VO under ``q = N(m, s^2)`` the
expected subgradient ``lambda_j (2 Phi(m_j / s_j) - 1)`` balances the smooth
gradient, so the probability that ``q`` gives ``theta_j`` the other sign,
``Phi(-|m_j| / s_j) = (1 - |(G m - b)_j| / lambda_j) / 2``, is half the KKT slack.
It stays bounded away from 0 for a coefficient whose optimum is 0 and vanishes
(``|m_j| / s_j -> inf`` as ``q`` concentrates) for the others.
"""

import math
from collections import namedtuple

import numpy as np
from scipy import linalg
from scipy.linalg import lapack
from scipy.special import ndtri

from .._blas import _one_blas_thread
from .._reductions import all_finite, all_of, any_of, max_of
from ..objectives import L1Penalty, QuadraticObjective, RidgedQuadratic

try:  # LARS's deletion of a row and column from a Cholesky factor (Givens rotations)
    from sklearn.utils.arrayfuncs import cholesky_delete as _cholesky_delete
except ImportError:  # pragma: no cover - without it, such supports are factored afresh
    _cholesky_delete = None

#: A coefficient is zero when ``q`` gives its other sign at least this probability
#: (float64 resolution: below it, ``1 - p`` is 1 and the sign is certain).
SIGN_EPS = float(np.finfo(np.float64).eps)
_SIGN_Z = float(-ndtri(SIGN_EPS))


def support_from_q(mean, variance, strength, eps=SIGN_EPS, slack=0.0):
    """Return the boolean support: unpenalised entries, and penalised entries to
    which ``q``, with its mean moved ``slack`` towards 0, gives the other sign
    with probability below ``eps``; that is, zero iff ``|m_j| - slack <= z s_j``
    with ``Phi(-z) = eps``.

    Parameters
    ----------
    mean, variance : ndarray of shape (n_params,)
        Marginal means and variances of ``q``.
    strength : ndarray of shape (n_params,)
        L1 strengths ``lambda_j`` (0 for unpenalised entries).
    eps : float
        Probability threshold.
    slack : float
        How far the mean may still be from its limit (the solver's estimate).
    """
    z = _SIGN_Z if eps == SIGN_EPS else -ndtri(eps)
    return (strength == 0) | (np.abs(mean) - slack > z * np.sqrt(variance))


def _solve_on_support(objective, b, strength, support, signs):
    """``(w, idx, factored)``: the values solving ``G_SS w_S = b_S - lambda_S z_S``
    on the support (by Cholesky, or the minimum-norm least-squares values where
    ``G_SS`` is singular: those need not solve the equations, :class:`_KKTCheck`
    checks), the support's indices, and whether a factorisation solved them (the
    equations then hold to round-off)."""
    w = np.zeros(b.shape[0], dtype=b.dtype)  # (not zeros_like: a check is many small calls)
    if not any_of(support):
        return w, support.nonzero()[0], True
    system = _support_system(objective, support)
    idx = system.idx
    rhs = b.take(idx) - strength.take(idx) * signs.take(idx)
    if system.factor is None and hasattr(system, "solve"):  # through the rows (_gram_rows)
        z = system.solve(rhs)
        if z is not None:
            w[idx] = z
            return w, idx, True
        system = _new_system(objective, idx)
    diag = system.diag
    rhs /= diag
    z = None if system.factor is None else _cho_solve(system.factor, rhs)
    factored = z is not None
    if z is None:
        # Singular or ill-conditioned (collinear or duplicated columns): the
        # minimum-norm least-squares values, which solve the equations only if
        # they are consistent.
        A = system.A
        if A is None:  # a factor whose solve was not finite (a non-finite rhs)
            A = objective.gram_block(idx) / diag[:, None] / diag[None, :]
        try:
            z = linalg.lstsq(A, rhs, check_finite=False)[0]
        except linalg.LinAlgError:
            # gelsd's SVD can fail to converge on an exactly singular block of
            # near-duplicate columns; QR with column pivoting does not.
            z = linalg.lstsq(A, rhs, check_finite=False, lapack_driver="gelsy")[0]
    w[idx] = z / diag
    return w, idx, factored


#: Supports whose systems an objective keeps (:func:`_support_system`): a Lasso
#: path checks one support at alpha after alpha between its kinks, and the
#: certificate one or two supports per iteration...
SUPPORT_CACHE_SIZE = 4
#: ...each if its matrices take at most this many bytes (wide data: a support
#: can have as many coefficients as there are rows).
SUPPORT_CACHE_BYTES = 1 << 24


#: Supports of fewer coefficients than this are factored anew: up to some 30
#: coefficients a new factor and its norm estimate cost about what an update's
#: Python work does, so a small Lasso fit's KKT corrections (diabetes' ten
#: features) never gain from an update.
UPDATE_FROM = 24

#: What :func:`_support_system` keeps of a support (its docstring).
_SupportSystem = namedtuple("_SupportSystem", "idx diag factor A colsum inv_norm")


def _support_system(objective, support):
    """The system of ``support``: its indices ``idx``, the equilibration ``diag = sqrt(diag G_SS)``
    (1 where that is 0), the lower Cholesky ``factor`` of ``A = D^-1 G_SS D^-1``
    (None where :func:`_solve_positive` would give up, and then ``A`` itself,
    else None), upper bounds ``colsum`` of the column sums of ``|A|`` (its 1-norm
    is their maximum; exact but after a deletion) and ``inv_norm``, an estimate
    or upper bound of ``||A^-1||_1``. Equilibrated, so that columns on wildly
    different scales do not cost accuracy.

    None of it depends on the penalty: the last :data:`SUPPORT_CACHE_SIZE`
    supports are kept on the objective and its re-penalised copies
    (:meth:`~skvan.objectives.Objective.support_systems`). A support a few
    coefficients off a kept one (a path's event, a KKT correction) updates that
    one's factor (:func:`_updated_system`) instead of a new factorisation's
    ``O(|S|^3)``; its indices are then in the order the coefficients entered,
    not sorted (every use scatters through them).

    An objective whose ``G`` is a ridge plus the Gram matrix of fewer rows than
    the support's ridged coefficients (``objective.ridged_rows``, an elastic net
    on wide data) solves through those rows instead
    (:class:`~skvan.sparse._gram_rows.RidgeSystem`, with a ``solve`` method and no
    ``factor``)."""
    cache = objective.support_systems()
    key = support.tobytes()
    system = cache.get(key)
    if system is None:
        rows = getattr(objective, "ridged_rows", None)
        system = None if rows is None else rows.system(support)
        if system is None and np.count_nonzero(support) >= UPDATE_FROM:
            system = _updated_system(objective, support, cache.values())
        if system is None:
            system = _new_system(objective, support.nonzero()[0])
        if 8 * system.idx.size ** 2 <= SUPPORT_CACHE_BYTES:  # the factor (or A)
            if len(cache) >= SUPPORT_CACHE_SIZE:
                cache.pop(next(iter(cache)))
            cache[key] = system
    return system


def _new_system(objective, idx):
    """:func:`_support_system` of the indices ``idx``, from scratch."""
    G_SS = objective.gram_block(idx)
    if isinstance(objective, QuadraticObjective):
        # The equilibration of every column at once, kept: the same numbers as the
        # block's (G's diagonal itself; the rows' objective forms its blocks).
        shared = objective.smooth_cache()
        if "kkt_diag" not in shared:
            shared["kkt_diag"] = _equilibration(objective.gram_diagonal())
        diag = shared["kkt_diag"].take(idx)
    else:
        diag = _equilibration(G_SS.diagonal())
    A = G_SS / diag[:, None] / diag[None, :]
    colsum = np.abs(A).sum(axis=0)
    factor, inv_norm = _factor(A, max_of(colsum))
    return _SupportSystem(idx, diag, factor, A if factor is None else None, colsum, inv_norm)


def _equilibration(gram_diagonal):
    """``sqrt(G_jj)``, 1 where that is 0 or not finite."""
    diag = np.sqrt(np.maximum(gram_diagonal, 0.0))  # (np.clip: slower on small supports)
    diag[~(np.isfinite(diag) & (diag > 0))] = 1.0
    return diag


def _updated_system(objective, support, kept):
    """:func:`_support_system` of ``support`` from the kept system nearest to it,
    or None where none is near (or the update cannot be made).

    The nearest is the one with the fewest coefficients to drop and add, near
    where at most half of its coefficients leave and at most half of the
    support's are new. Its factor first loses the rows and columns of the
    coefficients ``support`` lacks (Givens rotations, ``O(|S|^2)`` each), then is
    bordered by a block of the new ones: with ``A12`` their columns against the
    ``r`` kept ones and ``A22`` their own block, ``L21^T = L11^-1 A12`` and ``L22``
    the Cholesky factor of ``S = A22 - L21 L21^T``, ``O(r^2 m + m^3)`` for ``m``
    new rows instead of ``O((r + m)^3)``.

    A pivot of ``L22`` within the round-off of its own computation (``a_jj`` and
    ``|l_j|^2`` summed over ``r + m`` terms) is a column in the others' span: the
    support is singular, and :func:`_new_system` gives ``A`` for least squares.
    The inverse's 1-norm is bounded without pocon where the bound already keeps
    the reciprocal condition number above float64's epsilon: one new coefficient
    adds ``(||x||_1 + 1) max(||x||_1, 1) / pivot`` to it (``x = A11^-1 a``; the
    bordered inverse is ``A11^-1`` plus ``[x; -1] [x; -1]^T / pivot``), a deletion
    multiplies it by the size ``r`` left (the inverse of a principal block of a
    positive definite matrix is below that block of the inverse, whose entries
    are at most its diagonal's, each at most its 1-norm); after a block of new
    coefficients pocon estimates it."""
    size = int(np.count_nonzero(support))
    best = None
    for parent in reversed(kept):
        if parent.factor is None:
            continue
        inside = support[parent.idx]
        r = int(np.count_nonzero(inside))
        changes = size + parent.idx.size - 2 * r
        if (r and 2 * (size - r) <= max(size, 2) and 2 * (parent.idx.size - r) <= parent.idx.size
                and (best is None or changes < best[0])):
            best = (changes, parent, inside, r)
            if changes <= 1:
                break
    if best is None:
        return None
    _, parent, inside, r = best
    L, idx, diag, colsum, inv_norm = (parent.factor, parent.idx, parent.diag, parent.colsum,
                                      parent.inv_norm)
    if r < idx.size:
        if _cholesky_delete is None:
            return None
        L = np.array(L, order="C")
        for n, position in zip(range(idx.size, r, -1), np.flatnonzero(~inside)[::-1]):
            _cholesky_delete(L[:n, :n], int(position))
        L = np.asfortranarray(L[:r, :r])
        idx, diag, colsum, inv_norm = idx[inside], diag[inside], colsum[inside], r * inv_norm
    if size > r:
        bordered = _border(objective, support, L, idx, diag, colsum, inv_norm)
        if bordered is None or bordered[0] is None:
            return None if bordered is None else _new_system(objective, bordered[1])
        L, idx, diag, colsum, inv_norm = bordered
    norm = max_of(colsum)
    if inv_norm is None or not norm * inv_norm * _EPS <= 1.0:
        inv_norm = _inverse_norm(L, norm)
        if inv_norm is None:
            return _new_system(objective, idx)
    return _SupportSystem(idx, diag, L, None, colsum, inv_norm)


def _border(objective, support, L, idx, diag, colsum, inv_norm):
    """:func:`_updated_system`'s bordering of the factor ``L`` of the coefficients
    ``idx`` (equilibration ``diag``, bounds ``colsum`` and ``inv_norm``) by
    ``support``'s others: ``(L, idx, diag, colsum, inv_norm)``, or ``(None,
    idx)`` where the support is singular, or None where a solve fails."""
    r = idx.size
    new = support.copy()
    new[idx] = False
    idx = np.concatenate((idx, new.nonzero()[0]))
    g = objective.gram_columns(idx, idx[r:])
    if not all_finite(g):
        return None
    size = idx.size
    if size == r + 1:  # one coefficient enters (a path's event): the same with scalars
        return _border_one(L, idx, diag, colsum, inv_norm, g[:, 0])
    roots = np.sqrt(g[r:].diagonal())  # (G_jj: a sum of squares, at least 0)
    roots[roots == 0] = 1.0
    own = np.concatenate((diag, roots))
    a = g / own[:, None]
    a /= roots
    # A column at a time: triangular solves with several right-hand sides (trsm)
    # and triangular inverses start the BLAS's threads, whose wake-up costs more
    # than these small systems.
    l = np.empty((r, size - r), order="F")
    for c in range(size - r):
        l[:, c], info = lapack.dtrtrs(L, a[:r, c], lower=1)
        if info != 0:
            return None
    L22, info = lapack.dpotrf(a[r:] - l.T @ l, lower=1, clean=1)
    # A pivot within the round-off of its own computation is a column in the
    # others' span: singular, A itself for least squares.
    if info != 0 or not all_of(np.square(L22.diagonal())
                               > 4.0 * size * _EPS * (a[r:].diagonal() + np.square(l).sum(axis=0))):
        return None, idx
    bordered, sums = _assembled(L, l, L22, colsum, a)
    return bordered, idx, own, sums, None  # (pocon's estimate, in _updated_system)


def _assembled(L, l, L22, colsum, a):
    """The bordered factor ``[[L, 0], [l^T, L22]]`` and its column-sum bounds
    (``colsum`` plus the new columns' ``|a|`` on the kept rows, then the new
    columns' own sums), for the new columns ``a`` of ``A`` (``l`` and ``a``:
    one column per new coefficient)."""
    r, size = L.shape[0], a.shape[0]
    bordered = np.zeros((size, size), order="F")
    bordered[:r, :r] = L
    bordered[r:, :r], bordered[r:, r:] = l.T, L22
    abs_a = np.abs(a)
    return bordered, np.concatenate((colsum + abs_a[:r].sum(axis=1), abs_a.sum(axis=0)))


def _border_one(L, idx, diag, colsum, inv_norm, g):
    """:func:`_border` by one coefficient, the last of ``idx``, whose column of
    ``G`` against ``idx`` is ``g``: ``l = L^-1 a``, the pivot ``a_jj - l^T l``,
    and the bound's ``(||x||_1 + 1) max(||x||_1, 1) / pivot``."""
    r = L.shape[0]
    root = math.sqrt(g[r]) or 1.0  # (G_jj: a sum of squares, at least 0)
    own = np.concatenate((diag, (root,)))
    a = g / (own * root)
    l, info = lapack.dtrtrs(L, a[:r], lower=1)
    if info != 0:
        return None
    squares = float(l @ l)
    pivot = a[r] - squares
    if not pivot > 4.0 * (r + 1) * _EPS * (a[r] + squares):
        return None, idx  # singular, as in _border
    bordered, sums = _assembled(L, l[:, None], math.sqrt(pivot), colsum, a[:, None])
    x = np.abs(lapack.dtrtrs(L, l, lower=1, trans=1)[0]).sum()
    return bordered, idx, own, sums, inv_norm + (x + 1.0) * max(x, 1.0) / pivot


def _solve_positive(A, rhs):
    """``A^-1 rhs`` by Cholesky, or None where ``scipy.linalg.solve(A, rhs,
    assume_a="pos")`` would fail or warn (``A`` not positive definite, its
    reciprocal condition number below float64's epsilon, a non-finite result)
    and where that rcond is below ``n`` epsilons (:func:`_inverse_norm`).
    LAPACK directly (potrf, pocon, potrs): the certificate solves once or twice
    per iteration, and scipy's solve under a warning filter costs several times
    as much on small systems (``python benchmarks/bench_passes.py``)."""
    factor = _cholesky(A)
    return None if factor is None else _cho_solve(factor, rhs)


def _cholesky(A):
    """The lower Cholesky factor of ``A`` (potrf), or None where :func:`_solve_positive`
    gives up: not positive definite, or reciprocal condition number (pocon)
    below ``n`` epsilons."""
    return _factor(A, max_of(np.abs(A).sum(axis=0)))[0]


def _factor(A, norm):
    """``(factor, ||A^-1||_1)`` as :func:`_cholesky` decides, for ``A`` of 1-norm
    ``norm``; ``(None, None)`` where it gives up."""
    # (A non-finite entry makes the 1-norm non-finite, and so does a column sum
    # that overflows, where pocon's rcond would be 0.)
    if not math.isfinite(norm):
        return None, None
    c, info = lapack.dpotrf(A, lower=1, clean=0)
    if info != 0:
        return None, None
    inv_norm = _inverse_norm(c, norm)
    return (None, None) if inv_norm is None else (c, inv_norm)


def _inverse_norm(factor, norm):
    """pocon's estimate of ``||A^-1||_1`` from the Cholesky ``factor`` of ``A`` (of
    size ``n`` and 1-norm ``norm``), or None if the reciprocal condition number
    is below ``n`` times float64's epsilon, the round-off of the factorisation
    itself (an exactly singular ``A``, such as one with a duplicated column,
    factors with pivots of that size and an rcond just above epsilon)."""
    rcond, info = lapack.dpocon(factor, norm, uplo="L")
    return 1.0 / (rcond * norm) if info == 0 and rcond >= factor.shape[0] * _EPS else None


def _cho_solve(factor, rhs):
    """``A^-1 rhs`` from :func:`_cholesky`'s factor (potrs), or None if not finite."""
    z, info = lapack.dpotrs(factor, rhs, lower=1)
    return z if info == 0 and all_finite(z) else None


#: LAPACK's relative machine precision (``dlamch("E")``), scipy.linalg.solve's
#: threshold for an ill-conditioned matrix.
_EPS = float(np.finfo(np.float64).eps) / 2


#: The KKT tolerance never exceeds this fraction of ``lambda_j``...
KKT_PENALTY_FRACTION = 1e-3
#: ...unless round-off demands it: ``|(G w - b)_j|`` cannot be computed more
#: accurately than a few hundred ulps of its size at ``w = 0``.
KKT_ROUNDOFF_ULPS = 256


def _kkt_tolerance(objective, rtol):
    """:func:`_kkt_tol` for ``objective``, computed once per objective and ``rtol``."""
    cache = objective.__dict__.setdefault("_kkt_tolerances", {})
    if rtol not in cache:
        cache[rtol] = _kkt_tol(objective, rtol)
    return cache[rtol]


def _kkt_tol(objective, rtol):
    """Per coordinate: ``|(G w - b)_j|`` is at most ``||x_j|| ||y|| = sqrt(G_jj 2c)``
    at ``w = 0``; the tolerance is ``rtol`` times the larger of that and ``lambda_j``,
    but at most ``KKT_PENALTY_FRACTION lambda_j`` (and at least the round-off
    floor ``KKT_ROUNDOFF_ULPS eps ||x_j|| ||y||``).

    Without the cap a tiny ``lambda_j`` (``alpha=1e-10``) would get a tolerance
    larger than itself: any interpolating support with a near-zero gradient
    would pass, and which one VAN found first would depend on the last bits of
    the data."""
    shared = objective.smooth_cache()
    if "kkt_scale" not in shared:
        shared["kkt_scale"] = np.sqrt(np.maximum(objective.gram_diagonal(), 0.0)
                                      * max(2 * objective.c, 0))
    return _tolerance(objective.penalty.strength, shared["kkt_scale"], rtol)


def _tolerance(strength, scale, rtol):
    """:func:`_kkt_tol` for the strengths ``strength`` (any shape ending in
    ``n_params``) and the gradient scales ``scale``."""
    tol = np.minimum(rtol * np.maximum(strength, scale), KKT_PENALTY_FRACTION * strength)
    return np.maximum(tol, KKT_ROUNDOFF_ULPS * np.finfo(np.float64).eps * scale)


def nonnegative(quadratic):
    """The L1-penalised quadratic with its penalised coordinates constrained to
    ``theta_j >= 0``, as an unconstrained Lasso (an exact penalty).

    ``lambda_j theta_j`` on ``theta_j >= 0`` becomes ``lambda_j theta^+ + M_j theta^-``
    on the real line, which equals ``a_j theta_j + b_j |theta_j|`` with
    ``a_j = (lambda_j - M_j) / 2`` and ``b_j = (lambda_j + M_j) / 2``: a linear term,
    added to the quadratic's, and a plain L1 penalty of strength ``b_j``. So the
    Lasso's exact Gaussian expectations, exact zeros and KKT certificate apply
    unchanged (a zero coordinate is optimal iff ``-lambda_j <= g_j <= M_j``). The
    penalty is exact, its minimiser the constrained one, when ``M_j`` exceeds
    ``g_j`` at that minimiser; ``|g_j| <= ||x_j|| ||y - X theta*||
    <= ||x_j|| ||y|| = sqrt(G_jj 2c)`` there, and ``M_j`` is twice that plus
    ``lambda_j``. Unpenalised coordinates (the intercept) stay free.

    Parameters
    ----------
    quadratic : QuadraticObjective
        Least squares with an :class:`L1Penalty`.

    Returns
    -------
    QuadraticObjective
    """
    strength = quadratic.penalty.strength
    bound = 2.0 * np.sqrt(np.clip(quadratic.gram_diagonal(), 0, None)
                          * max(2.0 * quadratic.c, 0.0))
    M = np.where(strength > 0, strength + bound, 0.0)
    a = 0.5 * (strength - M)
    penalty = L1Penalty(0.5 * (strength + M))
    if isinstance(quadratic, RidgedQuadratic):  # the ridge stays apart (its rows' systems)
        base = quadratic.ridgeless
        shifted = QuadraticObjective(base.G, base.b - a, base.c, total_weight=base.total_weight)
        shifted.gram_rows = base.gram_rows
        constrained = RidgedQuadratic(shifted, quadratic.ridge, penalty)
    else:
        constrained = QuadraticObjective(quadratic.G, quadratic.b - a, quadratic.c, penalty)
        constrained.gram_rows = quadratic.gram_rows
    # Same G: the systems of its supports are the quadratic's (and its copies').
    constrained.smooth_cache()["support_systems"] = quadratic.support_systems()
    return constrained


def kkt_excess(objective, w, rtol=1e-9, nonnegative=False):
    """How much each coordinate at zero violates the Lasso's optimality at ``w``:
    ``|(X^T W (X w - y))_j| - lambda_j`` beyond the tolerance of :func:`kkt_finish`
    (positive: a violation; coordinates with ``w_j != 0`` get ``-inf``). With
    ``nonnegative`` (coefficients constrained to ``>= 0``) only ``g_j < -lambda_j``
    violates: ``-g_j - lambda_j``."""
    grad = objective.smooth_gradient(w)
    excess = (-grad if nonnegative else np.abs(grad)) - objective.penalty.strength
    excess -= _kkt_tolerance(objective, rtol)
    excess[w != 0] = -np.inf
    return excess


def kkt_finish(objective, mean, variance, eps=SIGN_EPS, slack=0.0, rtol=1e-9,
               max_corrections=None, enter=0.0):
    """Exact minimiser of an L1-penalised :class:`QuadraticObjective` from ``q``.

    The support and signs come from ``q`` (:func:`support_from_q`); the values
    solve the KKT equations on that support. If a sign or a KKT inequality fails,
    one correction is made and the values solved again: every coefficient whose
    sign flipped leaves the support, or else the worst KKT violator enters it
    with the sign that reduces ``f`` (with ``enter``, every violator within that
    fraction of the worst, also beside a drop: :func:`_correct`).

    Parameters
    ----------
    objective : QuadraticObjective or LinearModelObjective
        Least squares with an :class:`L1Penalty`: through ``X^T W X`` (formed), or
        through its rows (a squared-loss :class:`LinearModelObjective`; only the
        support's block of ``X^T W X`` is formed, for wide data).
    mean, variance : ndarray of shape (n_params,)
        Marginal means and variances of ``q``.
    eps, slack : float
        As in :func:`support_from_q`.
    rtol : float
        KKT tolerance of coordinate ``j``, relative to ``max(lambda_j, sqrt(G_jj 2c))``
        (``sqrt(G_jj 2c) = ||x_j|| ||y||`` for least squares: the size of its gradient).
    max_corrections : int or None
        At most this many corrections (None: ``n_params``).
    enter : float, default=0.0
        In ``[0, 1]``: a correction that enters coefficients enters every
        coordinate whose violation is at least ``enter`` times the worst one
        (0: the worst alone), also beside a drop. Such batches can wander where
        the support nears the number of rows; after a quarter of
        ``max_corrections``, or once a support repeats, the corrections start
        again from ``q``'s reading one coordinate at a time, with a whole budget
        of their own.

    Returns
    -------
    coef : ndarray of shape (n_params,)
        The solution on the final support (the input ``mean`` with the zeros of
        :func:`support_from_q` if the check never passed).
    n_corrections : int
        Corrections made (0 when ``q``'s support was right).
    ok : bool
        Whether ``coef`` satisfies the KKT conditions.
    """
    with _one_blas_thread(len(mean)):
        check = _KKTCheck(objective, rtol, equations_when_flipped=False)
        if max_corrections is None:
            max_corrections = len(check.b)
        start = support_from_q(mean, variance, check.strength, eps, slack), np.sign(mean)
        support, signs = start[0].copy(), start[1].copy()
        seen, n_corrections = set(), 0
        limit = min(max_corrections, max(1, max_corrections // 4)) if enter > 0 else max_corrections
        while True:
            w, grad, flipped, excess, unsolved, ok = check(support, signs)
            if ok:
                return w, n_corrections, True
            if enter > 0:
                key = support.tobytes() + signs.tobytes()
                if n_corrections >= limit or key in seen:
                    # Batches can wander (entered, flipped, dropped, entered again)
                    # where the support nears the number of rows: after a quarter of
                    # the budget, or once a support repeats, the corrections start
                    # again from q's reading one coordinate at a time, as without
                    # ``enter``, with a whole budget of their own (where the batches
                    # left off, the single ones could need more than that).
                    enter, limit = 0.0, n_corrections + max_corrections
                    support, signs = start[0].copy(), start[1].copy()
                    continue
                seen.add(key)
            if n_corrections >= limit:
                break
            n_corrections += 1
            if check.unsolvable(flipped, unsolved):
                # The support's equations have no solution (a penalised column in the
                # span of others, the intercept's or more than the rows allow): the
                # penalised coefficient furthest from its equation leaves.
                support[int(np.argmax(np.where(check.free, -np.inf, unsolved)))] = False
            else:
                _correct(check, support, signs, grad, flipped, excess, enter)
        coef = np.where(start[0], mean, 0.0)
        return coef, n_corrections, False


def _correct(check, support, signs, grad, flipped, excess, enter):
    """One KKT correction of ``support`` and ``signs``, in place, from a failed
    :class:`_KKTCheck`: the coefficients whose sign flipped leave, else the
    violators :func:`_entering` picks enter with the signs that reduce ``f``.
    With ``enter > 0`` (batches) the violators also enter beside a drop: a
    reading of ``q`` is often wrong both ways at once, and one solve then tests
    both changes (``python benchmarks/bench_lasso.py --checks`` counts the
    checks)."""
    if any_of(flipped):
        support &= ~flipped
        if not (enter > 0 and any_of(excess > check.atol)):
            return
    j = _entering(excess, enter)
    support[j] = True
    signs[j] = -np.sign(grad[j])


def _entering(excess, enter):
    """The coordinates a KKT correction enters: every one violating the
    conditions by at least ``enter`` times the worst violation ``max(excess)``
    (0, or no positive violation: the worst alone)."""
    j = int(excess.argmax())
    worst = excess[j]
    if enter > 0 and worst > 0:
        return (excess >= enter * worst).nonzero()[0]
    return j




class _KKTCheck:
    """The KKT check of a support and signs for one objective (:func:`kkt_finish`),
    with what does not depend on them (``b``, the strengths, the tolerances)
    computed once: :class:`LassoCertificate` checks one or two supports per
    iteration."""

    def __init__(self, objective, rtol=1e-9, equations_when_flipped=True):
        self.objective = objective
        self.equations_when_flipped = equations_when_flipped
        self.strength = objective.penalty.strength
        shared = objective.smooth_cache()
        if "kkt_rhs" not in shared:
            shared["kkt_rhs"] = (objective.b if isinstance(objective, QuadraticObjective)
                                 else -objective.smooth_gradient(np.zeros(self.strength.shape)))
        self.b = shared["kkt_rhs"]
        self.free = self.strength == 0
        self.rtol = rtol
        self.atol = _kkt_tolerance(objective, rtol)
        self.expect = getattr(objective, "expect_columns", None)

    def __call__(self, support, signs):
        """``(w, grad, flipped, excess, unsolved, ok)``: the values solving the KKT
        equations on ``support`` with ``signs``; the smooth gradient there; the
        support's coefficients whose sign flipped; the violation ``|grad_j| -
        lambda_j`` of the coordinates off the support (``-inf`` on it; a violation
        beyond the tolerance ``atol`` fails the check); by how much each equation
        on the support, ``grad_j + lambda_j z_j = 0``, is missed beyond its
        tolerance (``-inf`` off it; positive where the equations have no solution
        and the least-squares values only approximate one); and whether ``w``
        satisfies all three, the optimality conditions of the Lasso.

        An equation's tolerance is the off-support one plus the rounding of
        solving it, ``KKT_ROUNDOFF_ULPS |S| eps ((|G_SS| |w_S|)_j + |b_j| +
        lambda_j)``: a solvable system passes however ill-conditioned, one with no
        solution misses by about ``lambda_j``. That allowance (a product with the
        support's block of ``|G|``) is computed only where an equation misses
        its off-support tolerance: a well-conditioned solve meets that already,
        and the check then decides as it would with it.

        A check made with ``equations_when_flipped=False`` returns ``unsolved``
        None when a sign flipped: the check has failed then, and the corrections
        (:func:`kkt_finish`, :class:`LassoCertificate`) look at the equations only
        when no sign did."""
        w, idx, grad, _ = self.solve(support, signs)
        return (w, grad) + self.judge(w, idx, signs, grad)

    def solve(self, support, signs):
        """``(w, idx, grad, factored)``: :func:`_solve_on_support`'s values, the
        support's indices and whether a factorisation solved the equations, and
        the smooth gradient at ``w``; the first half of a check, which the
        homotopy makes at each event (it judges only where its events end)."""
        w, idx, factored = _solve_on_support(self.objective, self.b, self.strength, support,
                                             signs)
        return w, idx, self.objective.smooth_gradient(w), factored

    def judge(self, w, idx, signs, grad):
        """``(flipped, excess, unsolved, ok)`` of :meth:`__call__` for :meth:`solve`'s
        values ``w`` on the support ``idx`` with ``signs``."""
        # (take and the array methods: a path makes one check per kink, and
        # these few dozen small calls are most of one.)
        excess = np.abs(grad)
        excess -= self.strength
        excess[idx] = -np.inf
        ok = not any_of(excess > self.atol)
        if self.expect is not None:
            self.expect(excess)  # the rows' Gram columns form the likely entries together
        flipped = np.zeros(w.shape[0], dtype=bool)
        if idx.size:
            strength_s, z, w_s = self.strength.take(idx), signs.take(idx), w.take(idx)
            flips = w_s * z <= 0
            flips &= strength_s != 0
            if not self.equations_when_flipped and any_of(flips):
                flipped[idx] = flips
                return flipped, excess, None, False
        unsolved = np.empty(w.shape[0])
        unsolved.fill(-np.inf)
        if idx.size:
            miss = grad.take(idx)
            miss += strength_s * z
            np.abs(miss, out=miss)
            miss -= self.atol.take(idx)
            if any_of(miss > 0):
                abs_G = np.abs(self.objective.gram_block(idx))
                miss -= (KKT_ROUNDOFF_ULPS * idx.size * _EPS
                         * (abs_G @ np.abs(w_s) + np.abs(self.b[idx]) + strength_s))
                ok = ok and not any_of(miss > 0)
            flipped[idx] = flips
            unsolved[idx] = miss
            ok = ok and not any_of(flips)
        return flipped, excess, unsolved, ok

    def unsolvable(self, flipped, unsolved):
        """Whether a failed check's support has equations with no solution: no
        sign flipped (``unsolved`` is None where one did) and a penalised
        coefficient misses its equation (:meth:`__call__`)."""
        return not any_of(flipped) and any_of(unsolved[~self.free] > 0)


