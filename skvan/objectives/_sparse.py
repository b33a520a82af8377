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
    """``(w, idx)``: the values solving ``G_SS w_S = b_S - lambda_S z_S`` on the
    support (by Cholesky, or the minimum-norm least-squares values where ``G_SS``
    is singular: those need not solve the equations, :class:`_KKTCheck` checks)
    and the support's indices."""
    w = np.zeros(b.shape[0], dtype=b.dtype)  # (not zeros_like: a check is many small calls)
    if not any_of(support):
        return w, support.nonzero()[0]
    system = _support_system(objective, support)
    idx, diag = system.idx, system.diag
    rhs = b.take(idx) - strength.take(idx) * signs.take(idx)
    rhs /= diag
    z = None if system.factor is None else _cho_solve(system.factor, rhs)
    if z is None:
        # Singular or ill-conditioned (collinear or duplicated columns): the
        # minimum-norm least-squares values, which solve the equations only if
        # they are consistent.
        A = system.A
        if A is None:  # a factor whose solve was not finite (a non-finite rhs)
            A = objective.gram_block(idx) / diag[:, None] / diag[None, :]
        z = linalg.lstsq(A, rhs, check_finite=False)[0]
    w[idx] = z / diag
    return w, idx


#: Supports whose systems an objective keeps (:func:`_support_system`): a Lasso
#: path checks one support at alpha after alpha between its kinks, and the
#: certificate one or two supports per iteration...
SUPPORT_CACHE_SIZE = 4
#: ...each if its matrices take at most this many bytes (wide data: a support
#: can have as many coefficients as there are rows).
SUPPORT_CACHE_BYTES = 1 << 24


#: What :func:`_support_system` keeps of a support (its docstring).
_SupportSystem = namedtuple("_SupportSystem", "idx diag factor A colsum inv_norm")


def _support_system(objective, support):
    """The system of ``support``: its indices ``idx``, the equilibration ``diag = sqrt(diag G_SS)``
    (1 where that is 0), the lower Cholesky ``factor`` of ``A = D^-1 G_SS D^-1``
    (None where :func:`_solve_positive` would give up, and then ``A`` itself,
    else None), the column sums ``colsum`` of ``|A|`` (its 1-norm is their
    maximum) and ``inv_norm``, an estimate or upper bound of ``||A^-1||_1``.
    Equilibrated, so that columns on wildly different scales do not cost
    accuracy.

    None of it depends on the penalty: the last :data:`SUPPORT_CACHE_SIZE`
    supports are kept on the objective and its re-penalised copies
    (:meth:`~skvan.objectives.Objective.support_systems`). A support one
    coefficient larger than a kept one (a KKT correction that enters a
    coefficient) borders that one's factor with a row, ``O(|S|^2)`` instead of
    a new factorisation's ``O(|S|^3)``; its indices are then in the order the
    coefficients entered, not sorted (every use scatters through them)."""
    cache = objective.support_systems()
    key = support.tobytes()
    system = cache.get(key)
    if system is None:
        system = _bordered_system(objective, support, cache.values())
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
    if getattr(objective, "G", None) is not None:
        # The equilibration of every column at once, kept: the same numbers as the
        # block's (G's diagonal itself; the rows' objective forms its blocks).
        shared = objective.smooth_cache()
        if "kkt_diag" not in shared:
            shared["kkt_diag"] = _equilibration(objective.G.diagonal())
        diag = shared["kkt_diag"].take(idx)
    else:
        diag = _equilibration(G_SS.diagonal())
    A = G_SS / diag[:, None] / diag[None, :]
    colsum = np.abs(A).sum(axis=0)
    factor, inv_norm = _factor(A, max_of(colsum))
    return _SupportSystem(idx, diag, factor, A if factor is None else None, colsum, inv_norm)


def _equilibration(gram_diagonal):
    """``sqrt(G_jj)``, 1 where that is 0 or not finite."""
    diag = np.sqrt(np.maximum(gram_diagonal, 0.0))  # (np.clip: 4x the time at |S| = 10)
    diag[~(np.isfinite(diag) & (diag > 0))] = 1.0
    return diag


def _bordered_system(objective, support, kept):
    """:func:`_support_system` of ``support`` by bordering a kept system whose
    support lacks exactly one of its coefficients, or None if none does (or
    that one had no factor).

    With ``l = L^-1 a`` for the new column ``a`` and ``x = L^-T l = A^-1 a``, the
    new factor's last row is ``(l, sqrt(pivot))``, ``pivot = a_jj - l^T l``, and
    the bordered inverse ``[[A^-1 + x x^T / pivot, -x / pivot], [-x^T / pivot,
    1 / pivot]]`` has 1-norm at most ``||A^-1||_1 + (||x||_1 + 1)^2 / pivot``:
    where that bound already keeps the reciprocal condition number above
    float64's epsilon, pocon's estimate (about a third of a bordering's time) is
    not needed."""
    size = int(np.count_nonzero(support))
    for parent in kept:
        if parent.idx.size != size - 1 or parent.factor is None or not all_of(support[parent.idx]):
            continue
        k = parent.idx.size
        outside = support.copy()
        outside[parent.idx] = False
        j = int(outside.argmax())
        idx, diag = np.empty(k + 1, dtype=parent.idx.dtype), np.empty(k + 1)
        idx[:k], idx[k] = parent.idx, j
        g = objective.gram_column(idx, j)
        if not all_finite(g):
            return None
        diag[:k], diag[k] = parent.diag, np.sqrt(g[-1]) if g[-1] > 0 else 1.0
        a = g / (diag * diag[k])
        l, info = lapack.dtrtrs(parent.factor, a[:k], lower=1)
        pivot = a[k] - float(l @ l)
        abs_a = np.abs(a)
        colsum = np.empty(k + 1)
        colsum[:k], colsum[k] = parent.colsum + abs_a[:k], abs_a.sum()
        if not (info == 0 and pivot > 0):
            return _new_system(objective, idx)  # singular: A itself, for least squares
        L = np.zeros((k + 1, k + 1), order="F")
        L[:k, :k] = parent.factor
        L[k, :k], L[k, k] = l, np.sqrt(pivot)
        x = lapack.dtrtrs(parent.factor, l, lower=1, trans=1)[0]
        norm, inv_norm = max_of(colsum), parent.inv_norm + (np.abs(x).sum() + 1.0) ** 2 / pivot
        if not norm * inv_norm * _EPS <= 1.0:
            inv_norm = _inverse_norm(L, norm)
            if inv_norm is None:
                return _new_system(objective, idx)
        return _SupportSystem(idx, diag, L, None, colsum, inv_norm)
    return None


def _solve_positive(A, rhs):
    """``A^-1 rhs`` by Cholesky, or None where ``scipy.linalg.solve(A, rhs,
    assume_a="pos")`` would fail or warn: ``A`` not positive definite, or its
    reciprocal condition number below float64's epsilon, or a non-finite result.
    LAPACK directly (potrf, pocon, potrs): the certificate solves once or twice
    per iteration, and at p = 14 this takes 8.8 us against 15.8 for scipy's
    solve under a warning filter (``python benchmarks/bench_passes.py``)."""
    factor = _cholesky(A)
    return None if factor is None else _cho_solve(factor, rhs)


def _cholesky(A):
    """The lower Cholesky factor of ``A`` (potrf), or None where :func:`_solve_positive`
    gives up: not positive definite, or reciprocal condition number (pocon)
    below float64's epsilon."""
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
    """pocon's estimate of ``||A^-1||_1`` from the Cholesky ``factor`` of ``A`` of
    1-norm ``norm``, or None if the reciprocal condition number is below
    float64's epsilon."""
    rcond, info = lapack.dpocon(factor, norm, uplo="L")
    return 1.0 / (rcond * norm) if info == 0 and rcond >= _EPS else None


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
    from ._penalties import L1Penalty
    from ._quadratic import QuadraticObjective

    lam = quadratic.penalty.strength
    bound = 2.0 * np.sqrt(np.clip(np.diag(quadratic.G), 0, None) * max(2.0 * quadratic.c, 0.0))
    M = np.where(lam > 0, lam + bound, 0.0)
    a = 0.5 * (lam - M)
    constrained = QuadraticObjective(quadratic.G, quadratic.b - a, quadratic.c,
                                     L1Penalty(0.5 * (lam + M)))
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
        limit = max(1, max_corrections // 4) if enter > 0 else max_corrections
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
    both changes (``python benchmarks/bench_lasso.py --checks``: 78 KKT checks
    against 82 when a drop waited for the next check, 105 against 115 at 3
    corrections)."""
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


def kkt_follow(before, after, coef, rtol=1e-9, max_events=None):
    """The Lasso's minimiser of ``after`` followed from ``coef``, ``before``'s, by
    homotopy (LARS's Lasso path between two penalties on one Gram matrix).

    ``before`` and ``after`` share ``X^T W X`` and differ in the linear term ``b``
    and the L1 strengths ``lambda``. Along ``b(t) = b0 + t (b1 - b0)``,
    ``lambda(t) = lambda0 + t (lambda1 - lambda0)`` the minimiser is piecewise
    linear in ``t``: on a support ``S`` with signs ``z_S`` it moves by ``dw_S / dt =
    G_SS^-1 ((b1 - b0)_S - (lambda1 - lambda0)_S z_S)`` and the smooth gradient
    ``c = G w - b(t)`` by ``G dw/dt - (b1 - b0)``, until the first event: a
    coefficient reaches 0 (it leaves) or an inactive ``|c_j|`` reaches
    ``lambda_j(t)`` (``j`` enters with the sign of ``-c_j``). Each event costs one
    bordered solve and one product with ``G``; a path through ``k`` kinks makes
    ``k`` events, where :func:`kkt_finish`'s corrections guess the next support
    from ``after``'s gradient alone (near as many coefficients as rows they can
    cycle, entering and dropping the same coefficients, until their budget ends).

    The result is checked as :func:`kkt_finish` checks a support: first ``coef``'s
    own support at ``after`` (between two kinks it passes and no event is
    followed), and at ``t = 1`` the support reached.

    Parameters
    ----------
    before, after : QuadraticObjective or LinearModelObjective
        L1-penalised least squares with the same ``X^T W X``
        (:meth:`~skvan.objectives.Objective.support_systems` shared).
    coef : ndarray of shape (n_params,)
        ``before``'s minimiser (its KKT conditions hold).
    rtol : float
        As in :func:`kkt_finish`.
    max_events : int or None
        At most this many events (None: ``n_params``).

    Returns
    -------
    coef : ndarray of shape (n_params,)
        The solution on the support reached (where the check failed, the
        homotopy's values: a start for :func:`kkt_finish`).
    n_events : int
        Events followed (0 when ``coef``'s support is ``after``'s).
    ok : bool
        Whether ``coef`` satisfies ``after``'s KKT conditions.

    References
    ----------
    M. R. Osborne, B. Presnell and B. A. Turlach, "A new approach to variable
    selection in least squares problems", IMA Journal of Numerical Analysis, 2000.
    B. Efron, T. Hastie, I. Johnstone and R. Tibshirani, "Least angle
    regression", Annals of Statistics, 2004.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import load_diabetes
    >>> from skvan.objectives import L1Penalty, QuadraticObjective, kkt_follow
    >>> X, y = load_diabetes(return_X_y=True)
    >>> X, y = X - X.mean(axis=0), y - y.mean()
    >>> lasso = QuadraticObjective.from_data(X, y)
    >>> float(np.max(np.abs(X.T @ y))) < 1000.0  # at 1000 every coefficient is 0
    True
    >>> before = lasso.with_penalty(L1Penalty(np.full(10, 1000.0)))
    >>> after = lasso.with_penalty(L1Penalty(np.full(10, 200.0)))
    >>> coef, n_events, ok = kkt_follow(before, after, np.zeros(10))
    >>> ok, n_events, int(np.count_nonzero(coef))  # four coefficients entered
    (True, 4, 4)
    """
    with _one_blas_thread(len(coef)):
        coef, n_events, ok, _ = _homotopy(_KKTCheck(after, rtol), before, coef, max_events)
        return coef, n_events, ok


def _homotopy(check, before, coef, max_events=None, piece=None):
    """:func:`kkt_follow`'s homotopy from ``before``'s minimiser ``coef`` to
    ``check``'s objective. Calls ``piece(t0, t1, w0, dw)`` for each linear piece
    of the path followed, ``w(t) = w0 + (t - t0) dw`` on ``[t0, t1]``, and returns
    ``(coef, n_events, ok, t)``, ``t`` where it stopped (1 when ``ok``)."""
    support = (coef != 0) | check.free
    signs = np.sign(coef)
    solved, grad, _, _, unsolved, ok = check(support, signs)
    if ok:
        if piece is not None:
            piece(0.0, 1.0, coef, solved - coef)
        return solved, 0, True, 1.0
    if max_events is None:
        max_events = len(coef)
    p = len(coef)
    lam = before.penalty.strength
    dlam = check.strength - lam
    # Three rows, linear in t between events: lambda_j - c_j and lambda_j + c_j
    # (the slacks of |c_j| <= lambda_j, c the smooth gradient) and w_j. The
    # event is the first of them to reach 0.
    state = np.empty((3, p))
    c = before.smooth_gradient(coef)
    state[0], state[1], state[2] = lam - c, lam + c, coef
    slope = np.empty((3, p))
    times = np.empty((3, p))
    event = np.empty((3, p), dtype=bool)
    penalised = ~check.free
    t, closed, n_events = 0.0, None, 0
    # On a fixed support the check's solution at t = 1 and the values at t lie
    # on one line: each segment's slopes come from the check that failed.
    while n_events < max_events and not any_of(unsolved > 0) and 1.0 - t > _EPS:
        rest = 1.0 - t
        e = grad - (lam + t * dlam - state[0])  # the gradient's change to t = 1
        moved = rest * dlam
        np.subtract(moved, e, out=slope[0])
        np.add(moved, e, out=slope[1])
        np.subtract(solved, state[2], out=slope[2])
        slope /= rest
        # Each row reaches 0 after -value / slope: a slack of an inactive
        # coordinate where it falls (from round-off below 0: at once), an active
        # penalised coefficient where it moves towards 0.
        with np.errstate(divide="ignore", invalid="ignore"):
            np.divide(state, slope, out=times)
        np.negative(times, out=times)
        np.less(slope[:2], 0, out=event[:2])
        event[:2] &= ~support
        np.greater(times[2], 0, out=event[2])
        event[2] &= support
        event[2] &= penalised
        if closed is not None:
            event[closed] = False  # the bound the last event's coefficient is at
        times[~event] = np.inf
        k = int(np.argmin(times))
        h = max(float(times.flat[k]), 0.0)
        if not h <= 1.0 - t:
            break  # no event before t = 1: the check failed on its tolerances
        if piece is not None:
            piece(t, t + h, state[2], slope[2])
        state += h * slope
        t += h
        n_events += 1
        j = k % p
        w, c_j = state[2], 0.5 * (state[1, j] - state[0, j])
        if support[j]:
            # It leaves at c_j = -lambda_j z_j: that slack is 0, and may not close
            # again at once; the other, 2 lambda_j away, may (a sign change).
            closed = (0 if signs[j] < 0 else 1, j)
            support[j], w[j], signs[j] = False, 0.0, 0.0
        else:
            closed = (2, j)  # it enters at 0 and moves away from it
            support[j], signs[j] = True, -np.sign(c_j)
        solved, grad, _, _, unsolved, ok = check(support, signs)
        if ok:
            if piece is not None:
                piece(t, 1.0, state[2], (solved - state[2]) / (1.0 - t))
            return solved, n_events, True, 1.0
    return np.where(support, solved, 0.0), n_events, False, t


def kkt_path(start, end, coef, at, rtol=1e-9, max_events=None):
    """The Lasso's minimisers at the points ``at`` of :func:`kkt_follow`'s
    homotopy from ``start`` (whose minimiser is ``coef``) to ``end``: one
    homotopy for a whole path, its values at the grid read off its linear pieces.

    ``start`` and ``end`` share ``X^T W X``; the objective at ``t`` in ``[0, 1]``
    has the linear term and L1 strengths ``b(t) = b0 + t (b1 - b0)``,
    ``lambda(t) = lambda0 + t (lambda1 - lambda0)`` (a Lasso path's alphas
    between two of its own: ``t = (alpha0 - alpha) / (alpha0 - alpha1)``). Only
    the kinks cost a KKT check, not each point: on a fixed support the minimiser
    is linear in ``t`` and, where the optimality conditions hold at both ends of
    a piece, they hold between. The points are then checked together: the
    smooth gradient at each against the inequalities ``|c_j| <= lambda_j(t)``
    off its support (the events' part) and the equations on it (with the
    rounding allowance of :func:`kkt_finish`'s check bounded through
    ``|G_ij| <= sqrt(G_ii G_jj)``); a point reached is one that passes, with
    every point before it.

    Parameters
    ----------
    start, end : QuadraticObjective or LinearModelObjective
        L1-penalised least squares with the same ``X^T W X``
        (:meth:`~skvan.objectives.Objective.support_systems` shared).
    coef : ndarray of shape (n_params,)
        ``start``'s minimiser (its KKT conditions hold).
    at : array-like of shape (n_points,)
        Increasing points in ``[0, 1]``.
    rtol : float
        As in :func:`kkt_finish`.
    max_events : int or None
        At most this many events (None: ``n_points * n_params``).

    Returns
    -------
    coefs : ndarray of shape (n_points, n_params)
        The minimisers at ``at`` (at 1 the check's own solution); NaN beyond
        the points reached.
    n_reached : int
        How many points, from the first, were reached and passed the check.
    n_events : int
        Events followed.

    See Also
    --------
    kkt_follow : The homotopy to one objective.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import load_diabetes
    >>> from sklearn.linear_model import lasso_path
    >>> from skvan.objectives import L1Penalty, QuadraticObjective, kkt_path
    >>> X, y = load_diabetes(return_X_y=True)
    >>> X, y = X - X.mean(axis=0), y - y.mean()
    >>> lasso = QuadraticObjective.from_data(X, y)
    >>> alphas = np.geomspace(2.2, 0.002, 20)  # above alpha_max = 2.148: all 0
    >>> start = lasso.with_penalty(L1Penalty(np.full(10, 442 * alphas[0])))
    >>> end = lasso.with_penalty(L1Penalty(np.full(10, 442 * alphas[-1])))
    >>> at = (alphas[0] - alphas) / (alphas[0] - alphas[-1])
    >>> coefs, n_reached, n_events = kkt_path(start, end, np.zeros(10), at)
    >>> n_reached
    20
    >>> ref = lasso_path(X, y, alphas=alphas, tol=1e-12, max_iter=100_000)[1].T
    >>> bool(np.allclose(coefs, ref, rtol=0, atol=1e-6 * np.abs(ref).max()))
    True
    """
    at = np.asarray(at, dtype=np.float64)
    if at.ndim != 1 or np.any(np.diff(at) < 0) or at.size and not (0 <= at[0] and at[-1] <= 1):
        raise ValueError("at must be increasing points in [0, 1].")
    p = len(coef)
    coefs = np.full((at.size, p), np.nan)
    filled = 0

    def piece(t0, t1, w0, dw):
        nonlocal filled
        while filled < at.size and at[filled] <= t1:
            coefs[filled] = w0 + (max(at[filled], t0) - t0) * dw
            filled += 1

    with _one_blas_thread(p):
        check = _KKTCheck(end, rtol)
        if max_events is None:
            max_events = max(at.size, 1) * p
        w, n_events, ok, _ = _homotopy(check, start, coef, max_events, piece)
        if ok and filled and at[filled - 1] == 1.0:
            coefs[filled - 1] = w
        return coefs, _points_passing(check, start, coefs[:filled], at[:filled]), n_events


def _points_passing(check, start, coefs, at):
    """How many of the homotopy's points ``coefs`` at ``at`` (:func:`kkt_path`),
    from the first, satisfy the KKT conditions of the objective at their ``t``."""
    if not at.size:
        return 0
    objective = check.objective
    b0 = -start.smooth_gradient(np.zeros_like(check.b))
    lam = start.penalty.strength + at[:, None] * (check.strength - start.penalty.strength)
    grad = np.array([start.smooth_gradient(w) for w in coefs])
    grad -= at[:, None] * (check.b - b0)
    tol = _tolerance(lam, objective.smooth_cache()["kkt_scale"], check.rtol)  # the check's scales
    active = (coefs != 0) | check.free
    # Off the support: |c_j| <= lambda_j.
    off = np.where(active, -np.inf, np.abs(grad) - lam - tol)
    # On it: c_j + lambda_j sign(w_j) = 0 to the tolerance plus the rounding of
    # a solve, |G_SS| |w_S| bounded by sqrt(G_jj) sum_i sqrt(G_ii) |w_i|.
    root = np.sqrt(np.clip(objective.gram_diagonal(), 0, None))
    size = active.sum(axis=1, keepdims=True)
    allowance = KKT_ROUNDOFF_ULPS * size * _EPS * (
        root[None, :] * (np.abs(coefs) @ root)[:, None] + np.abs(check.b) + lam)
    miss = np.abs(grad + lam * np.sign(coefs)) - tol - allowance
    on = np.where(active, miss, -np.inf)
    failed = np.flatnonzero(np.any(off > 0, axis=1) | np.any(on > 0, axis=1))
    return int(failed[0]) if failed.size else at.size


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
            shared["kkt_rhs"] = -objective.smooth_gradient(np.zeros(self.strength.shape))
        self.b = shared["kkt_rhs"]
        self.free = self.strength == 0
        self.rtol = rtol
        self.atol = _kkt_tolerance(objective, rtol)

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
        when no sign did; the homotopy reads them at every event."""
        # (take and the array methods: a path makes one check per kink, and
        # these few dozen small calls are most of one.)
        w, idx = _solve_on_support(self.objective, self.b, self.strength, support, signs)
        grad = self.objective.smooth_gradient(w)
        excess = np.abs(grad)
        excess -= self.strength
        excess[idx] = -np.inf
        ok = not any_of(excess > self.atol)
        flipped = np.zeros(support.shape[0], dtype=bool)
        if idx.size:
            lam, z, w_s = self.strength.take(idx), signs.take(idx), w.take(idx)
            flips = w_s * z <= 0
            flips &= lam != 0
            if not self.equations_when_flipped and any_of(flips):
                flipped[idx] = flips
                return w, grad, flipped, excess, None, False
        unsolved = np.empty(w.shape[0])
        unsolved.fill(-np.inf)
        if idx.size:
            miss = grad.take(idx)
            miss += lam * z
            np.abs(miss, out=miss)
            miss -= self.atol.take(idx)
            if any_of(miss > 0):
                abs_G = np.abs(self.objective.gram_block(idx))
                miss -= (KKT_ROUNDOFF_ULPS * idx.size * _EPS
                         * (abs_G @ np.abs(w_s) + np.abs(self.b[idx]) + lam))
                ok = ok and not any_of(miss > 0)
            flipped[idx] = flips
            unsolved[idx] = miss
            ok = ok and not any_of(flips)
        return w, grad, flipped, excess, unsolved, ok

    def unsolvable(self, flipped, unsolved):
        """Whether a failed check's support has equations with no solution: no
        sign flipped (``unsolved`` is None where one did) and a penalised
        coefficient misses its equation (:meth:`__call__`)."""
        return not any_of(flipped) and any_of(unsolved[~self.free] > 0)


#: Longest move, in standard deviations of ``q``, of an L1-penalised coordinate
#: whose sign ``q`` has not decided (:class:`KeepSigns`).
UNDECIDED_RADIUS = 3.0


class KeepSigns:
    """Cut a mean step at zero in the coordinates of an L1 penalty whose sign ``q``
    has decided (the orthant-wise rule of OWL-QN, Andrew and Gao 2007), and to
    three standard deviations of ``q`` in those whose sign it has not.

    Under ``q = N(m, s^2)`` the expected penalty ``lambda_j E|theta_j|`` is linear
    in ``m_j`` to float64 precision while ``q`` gives the other sign a probability
    below ``SIGN_EPS`` (``|m_j| > z s_j``, :func:`support_from_q`): the quadratic
    model behind the Newton-like step holds on that orthant only. A step that
    leaves it crosses the penalty's kink, smoothed over ``s_j``, which shrinks
    as ``q`` concentrates; the objective then rises, and
    :class:`~skvan.van.BetaBacktrack` halved ``beta_t`` until the step stopped
    short of the kink. Those coordinates now stop at 0, where ``q`` decides their
    sign again at the next iteration. A fixed point is unchanged: there every
    step is 0. On the Lasso this took the iterations of ``python
    benchmarks/bench_lasso.py --growth`` (15 problems, growth 2) from 352 to
    275, and diabetes at 0.1 ``alpha_max`` from 68 to 13 (``--speed``). The
    Lasso applies it under the exact expected curvature only: the Gauss-Newton
    one is that of a quadratic upper bound of ``E|theta_j|``, whose steps
    descend across 0.

    The coordinates whose sign ``q`` has not decided move by at most
    :data:`UNDECIDED_RADIUS` ``= 3`` standard deviations of ``q`` per step:
    their expected penalty's curvature, ``2 lambda phi(m / s) / s``, is a bump
    of width ``s`` around 0 (1% of its peak at ``3 s``), and a step much longer
    than that leaves the region the quadratic model describes; the whole-step
    safeguard then halved ``beta_t`` again and again. Measured with no radius
    (the commit before 3092b4b) and with this constant set to 1, 2 and 3:
    ``python benchmarks/bench_lasso.py --growth`` 278, 392 (too tight:
    coordinates that must leave 0 crawl), 264 and 261 iterations at growth 2;
    at 3092b4b (the Lasso's growth then 2), ``bench_lasso.py --speed --quick``
    96 (no radius) and 79 iterations over its 14 fits (diabetes 12 -> 10 and
    11 -> 10), ``bench_wide.py --problems lasso`` 152 -> 117 and 150 -> 128.

    Parameters
    ----------
    strength : ndarray of shape (n_params,)
        The L1 strengths ``lambda_j >= 0``; coordinates with 0 are never cut.

    See Also
    --------
    skvan.van.BetaBacktrack : The step policy that applies it (``restrict``).
    support_from_q : The reading of the signs.

    References
    ----------
    G. Andrew and J. Gao, "Scalable training of L1-regularized log-linear
    models", ICML 2007.

    Examples
    --------
    >>> import numpy as np
    >>> from types import SimpleNamespace
    >>> from skvan.objectives import KeepSigns
    >>> from skvan.van import DiagonalGaussian
    >>> keep = KeepSigns(np.array([1.0, 1.0, 1.0]))
    >>> q = DiagonalGaussian(np.array([1.0, -1.0, 0.0]), np.full(3, 1e6))  # sd 1e-3
    >>> keep.prepare(SimpleNamespace(family=q))
    >>> keep(np.array([-3.0, 0.5, 0.01]))
    array([-1.   ,  0.5  ,  0.003])
    """

    def __init__(self, strength):
        self.strength = np.asarray(strength)

    def prepare(self, solver):
        """Record the mean and which signs ``q`` has decided (:func:`support_from_q`),
        at the step's start."""
        family = solver.family
        self._mean = family.mean.copy()
        variance = family.marginal_variance()
        penalised = self.strength > 0
        self._decided = penalised & support_from_q(self._mean, variance, self.strength)
        self._radius = np.where(penalised & ~self._decided,
                                UNDECIDED_RADIUS * np.sqrt(variance), np.inf)

    def __call__(self, step):
        """``step`` with the decided coordinates it would move across 0 stopped at 0,
        and the undecided ones' moves cut to :data:`UNDECIDED_RADIUS` sds."""
        step = np.clip(step, -self._radius, self._radius)
        cross = self._decided & (self._mean * (self._mean + step) < 0)
        step[cross] = -self._mean[cross]
        return step


#: Iterations VAN goes on, once its mean has converged, for ``q`` to concentrate
#: enough to decide the support: at growth 2 (the slowest the Lasso's safeguard
#: lets accepted steps grow) the sd shrinks 1.41x per iteration, so ``|m| / s``
#: grows 1e4-fold in 27 of them; if the support still fails the KKT check,
#: :meth:`LassoCertificate.finish` corrects it.
SUPPORT_WAIT = 50


#: Corrections the certificate makes to a reading of ``q``'s support before it
#: gives up on it (:meth:`LassoCertificate._certify`): :func:`kkt_finish`'s first
#: ones, a coefficient whose solved value contradicts the sign ``q`` gives it
#: leaves, and the violators within :data:`CERTIFICATE_ENTER` of the worst
#: enter (:func:`_correct`). Each costs one solve on a support, at most ``O(|S|^3)``, where another
#: VAN iteration costs ``O(p^3)`` and its own checks. ``python
#: benchmarks/bench_lasso.py --checks`` (25 fits), budgets 3, 6, 10, 20: 39, 29,
#: 25, 25 iterations for 105, 93, 78, 78 checks (``--corrections 20`` for the
#: last); ``--growth`` (15 problems) at growth 2: 20 iterations with 6, 15 with
#: 10 (``--corrections 6``). Before the corrections entered several coefficients
#: at once, 3 (53 iterations on ``--checks``).
CERTIFICATE_CORRECTIONS = 10
#: A correction that enters coefficients enters every violator within this
#: fraction of the worst violation (:func:`kkt_finish`'s ``enter``), as a wide
#: Lasso's working sets do: a reading of ``q`` lacks several coefficients at
#: once. ``python benchmarks/bench_lasso.py --checks`` at 6 corrections: 97 KKT
#: checks and 29 iterations, against 166 and 37 one at a time (at 7b4d5a1);
#: ``--growth`` at growth 2: 20 iterations against 52.
CERTIFICATE_ENTER = 0.5

#: KKT checks :class:`LassoCertificate` keeps per run (:meth:`LassoCertificate._checked`):
#: a check can repeat an earlier one's support and signs. ``python
#: benchmarks/bench_lasso.py --checks --corrections 3`` (one coefficient entered
#: at a time, at 7b4d5a1): 143 checks instead of 171; with several entered at
#: once, 82 either way over those 25 fits, fewer on correlated designs
#: (``tests/test_lasso.py::test_the_certificates_kept_checks_change_nothing_but_their_count``).
CHECKS_KEPT = 16


class LassoCertificate:
    """Convergence test for L1-penalised least squares: the support read off ``q``
    passes the KKT check.

    Called by the solver after each iteration, like the mean test it wraps: it
    passes as soon as the support and signs of ``q`` (:func:`support_from_q`, with
    the mean moved towards 0 by ``mean_test``'s distance estimate) give values
    that satisfy the Lasso's optimality conditions, or ``wait`` iterations after
    the mean itself converged. A reading that fails is corrected as
    :func:`kkt_finish` corrects it, at most :data:`CERTIFICATE_CORRECTIONS` times:
    coefficients whose solved value has the other sign than ``q`` gives them
    leave, and the violators within :data:`CERTIFICATE_ENTER` of the worst
    enter (:func:`_correct`). While ``q`` concentrates
    geometrically, a coefficient whose optimum is 0 can sit many standard
    deviations from 0 for an iteration or two (the orthant rule of
    :class:`KeepSigns` stops it at 0, its next step moves it out again), and one
    whose optimum is not 0 can still be read as 0; those readings failed until
    ``q`` settled. The answer is unchanged (the check certifies it), ``q`` is
    less concentrated where the fit stops sooner. ``python
    benchmarks/bench_lasso.py --growth``, over its 15 problems at growth 4: at
    1d6e789, 183 iterations with no correction and 146 with sign drops alone;
    at 77d961f (drops alone, the solver's later changes in) 84, and with drops
    and entries 51; ``--speed``: diabetes at 0.01 ``alpha_max`` 1 iteration
    instead of 7. With several violators entered at once and up to 10
    corrections (8ba12dd): 15 iterations at growth 4 and every ``--speed`` fit
    in one.

    Parameters
    ----------
    quadratic : QuadraticObjective or LinearModelObjective
        The least-squares objective with its :class:`L1Penalty` (see
        :func:`kkt_finish`).
    mean_test : object
        The solver's convergence test on the mean (``MeanContraction``).
    wait : int, default=SUPPORT_WAIT
        Iterations allowed after the mean converged.
    """

    #: The order of the two readings of ``q`` (:meth:`__call__`): its mean as it
    #: is, then moved towards 0 by the distance left. Both orders certify at the
    #: same iterations; this one makes fewer KKT checks (``python
    #: benchmarks/bench_lasso.py --checks``: 178 against 231 over 25 fits).
    reading_order = ("as_is", "margin")

    def __init__(self, quadratic, mean_test, wait=SUPPORT_WAIT):
        self.quadratic = quadratic
        self.mean_test = mean_test
        self.wait = wait

    def reset(self):
        """Start a run."""
        self.mean_test.reset()
        self._failed = set()
        self._check = _KKTCheck(self.quadratic, equations_when_flipped=False)
        self._waited = 0
        self.slack = None
        self._certified = None
        self._results = {}

    @property
    def distance(self):
        """The mean test's estimate of the distance left."""
        return self.mean_test.distance

    def settled(self):
        """The mean test's ``settled``."""
        return self.mean_test.settled()

    def __call__(self, solver):
        """Whether the support of ``solver.family`` is certified (or the wait is over).

        Two readings of ``q`` are checked: as it is, then with the mean moved
        towards 0 by the distance it may still travel (conservative). Either
        passing the KKT check is a certificate, so neither can change the
        solution, and the iterations at which a fit is certified do not depend on
        their order. Reading ``q`` as it is ends fits sooner whose mean is still
        settling when ``q`` already has the support (a correlated 2,000 x 30
        Lasso: 18 -> 4 iterations,
        ``tests/test_lasso.py::test_the_certificate_also_reads_q_without_its_distance_margin``);
        first, it passes with fewer corrections (:attr:`reading_order`).
        """
        mean_converged = self.mean_test(solver)
        with _one_blas_thread(solver.family.n_params):
            certified = self._read(solver.family)
        if certified:
            return True
        if mean_converged:
            self._waited += 1
        return self._waited > self.wait

    def _read(self, family):
        """Whether one of the two readings of ``q`` (:meth:`__call__`) passes."""
        var = family.marginal_variance()
        signs = np.sign(family.mean)
        slacks = {"as_is": 0.0, "margin": self.distance}
        for slack in dict.fromkeys(slacks[reading] for reading in self.reading_order):
            if slack == np.inf:
                # No distance yet (the mean test's first iterations): the margin
                # moves every mean to 0, a support that says nothing about q.
                continue
            support = support_from_q(family.mean, var, self._check.strength, slack=slack)
            # A support and signs that failed the check fail it again (the check
            # depends on nothing else).
            key = (support.tobytes(), signs[support].tobytes())
            if key in self._failed:
                continue
            certified = self._certify(support, signs)
            if certified is not None:
                self.slack = slack
                # What finish returns for this q (its mean, the values and the
                # corrections made): kkt_finish would reach the same values.
                self._certified = (family.mean.copy(), *certified)
                return True
            self._failed.add(key)
        return False

    def _certify(self, support, signs):
        """``(values, n_corrections)`` if ``support`` with ``signs``, corrected as
        :func:`kkt_finish` corrects it (at most :data:`CERTIFICATE_CORRECTIONS`
        times: the coefficients whose solved value has the other sign leave,
        and the violators within :data:`CERTIFICATE_ENTER` of the worst enter),
        passes the KKT check, else None. A support whose equations have no
        solution is not corrected here."""
        support, signs = support.copy(), signs.copy()
        for n_corrections in range(CERTIFICATE_CORRECTIONS + 1):
            w, grad, flipped, excess, unsolved, ok = self._checked(support, signs)
            if ok:
                return w, n_corrections
            if self._check.unsolvable(flipped, unsolved):
                return None
            _correct(self._check, support, signs, grad, flipped, excess, CERTIFICATE_ENTER)
        return None

    def _checked(self, support, signs):
        """The KKT check of ``support`` with ``signs``, kept for the run's last
        :data:`CHECKS_KEPT` pairs: a later reading of ``q`` often lands on a
        support an earlier one's corrections went through, and the check depends
        on nothing else."""
        key = (support.tobytes(), signs[support].tobytes())
        result = self._results.get(key)
        if result is None:
            if len(self._results) >= CHECKS_KEPT:
                self._results.pop(next(iter(self._results)))
            result = self._results[key] = self._check(support, signs)
        return result

    def finish(self, family, converged):
        """``kkt_finish`` on the final ``q``: a converged run gets its support checked
        and, if need be, corrected; an unconverged one is only checked (the
        corrections polish VAN's answer, they do not replace it). A run the check
        ended reads the support as that check did, and its values are those the
        check certified (the same corrections of the same reading)."""
        if self._certified is not None and np.array_equal(self._certified[0], family.mean):
            return self._certified[1], self._certified[2], True
        if self.slack is not None:
            slack = self.slack
        else:
            slack = self.distance if converged else 0.0
        return kkt_finish(
            self.quadratic, family.mean, family.marginal_variance(), slack=slack,
            max_corrections=None if converged else 0, enter=CERTIFICATE_ENTER,
        )
