"""The Lasso's minimiser followed by homotopy (LARS's Lasso path) between two
penalties on one ``X^T W X``: piecewise linear in the penalty, each kink one
KKT check of the support reached."""

import numpy as np

from .._blas import _one_blas_thread
from .._reductions import any_of
from ._kkt import _EPS, KKT_ROUNDOFF_ULPS, _KKTCheck, _tolerance


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
    >>> from skvan.objectives import L1Penalty, QuadraticObjective
    >>> from skvan.sparse import kkt_follow
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


def kkt_descend(objective, rtol=1e-9, max_events=None, scaled=None):
    """The Lasso's minimiser of ``objective`` by homotopy from the top of its path
    (LARS's Lasso from ``alpha_max``): :func:`kkt_follow` from ``scaled(k)``, the
    problem with its L1 strengths multiplied by ``k``, at the smallest ``k >= 1``
    at which only the free (unpenalised) coordinates are nonzero.

    The homotopy makes about one event per coefficient that enters or leaves
    between ``alpha_max`` and ``objective``'s penalty, whatever the conditioning;
    :func:`kkt_finish`'s corrections, which guess the next support from the
    gradient alone, can cycle where the support nears the number of rows.

    Parameters
    ----------
    objective : QuadraticObjective or LinearModelObjective
        L1-penalised least squares with positive strengths on some coordinates.
    rtol : float
        As in :func:`kkt_finish`.
    max_events : int or None
        At most this many events (None: ``4 n_params``).
    scaled : callable or None
        ``scaled(k)``: ``objective`` at ``k`` times its L1 strengths, sharing its
        ``X^T W X``, with strengths and linear term affine in ``k`` (None: the
        same least squares under the penalty multiplied by ``k``; a
        :func:`nonnegative` objective's is the non-negative form of its least
        squares at ``k`` times the penalty).

    Returns
    -------
    coef, n_events, ok
        As :func:`kkt_follow`'s.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import load_diabetes
    >>> from sklearn.linear_model import Lasso
    >>> from skvan.objectives import L1Penalty, QuadraticObjective
    >>> from skvan.sparse import kkt_descend
    >>> X, y = load_diabetes(return_X_y=True)
    >>> X, y = X - X.mean(axis=0), y - y.mean()
    >>> lasso = QuadraticObjective.from_data(X, y, penalty=L1Penalty(np.full(10, 442 * 0.05)))
    >>> coef, n_events, ok = kkt_descend(lasso)
    >>> ref = Lasso(alpha=0.05, fit_intercept=False, tol=1e-12).fit(X, y).coef_
    >>> ok, bool(np.allclose(coef, ref, rtol=0, atol=1e-8 * np.abs(ref).max()))
    (True, True)
    """
    if scaled is None:
        def scaled(k):
            return objective.with_penalty(objective.penalty.multiplied(k))
    with _one_blas_thread(objective.n_params):
        check = _KKTCheck(objective, rtol)
        free = check.free
        w, _, grad, _ = check.solve(free.copy(), np.zeros(objective.n_params))
        k = _top_factor(objective, scaled(2.0), w, grad, ~free)
        if max_events is None:
            max_events = 4 * objective.n_params
        return _homotopy(check, scaled(k) if k > 1.0 else objective, w, max_events)[:3]


def _top_factor(objective, doubled, w, grad, penalised):
    """The smallest ``k >= 1`` at which ``w`` (zero where ``penalised``) satisfies
    the zero coordinates' conditions ``|g_j(k)| <= lambda_j(k)``, both affine in
    ``k`` (read off ``objective`` at ``k = 1`` and ``doubled`` at 2)."""
    strength = objective.penalty.strength[penalised]
    g = grad[penalised]
    ds = doubled.penalty.strength[penalised] - strength
    dg = doubled.smooth_gradient(w)[penalised] - g
    k = 1.0
    # lambda_j(k) -+ g_j(k) = u + (k - 1) v >= 0 for both signs.
    for u, v in ((strength - g, ds - dg), (strength + g, ds + dg)):
        short = (u < 0) & (v > 0)
        if any_of(short):
            k = max(k, 1.0 + float(np.max(-u[short] / v[short])))
    return k


def _homotopy(check, before, coef, max_events=None, piece=None, go_on=None):
    """:func:`kkt_follow`'s homotopy from ``before``'s minimiser ``coef`` to
    ``check``'s objective. Calls ``piece(t0, t1, w0, dw)`` for each linear piece
    of the path followed, ``w(t) = w0 + (t - t0) dw`` on ``[t0, t1]``, and returns
    ``(coef, n_events, ok, t)``, ``t`` where it stopped (1 when ``ok``): after
    ``max_events`` events, or once ``go_on(support size, events so far)`` is
    false (None: never).

    Each event solves the equations of the new support at ``t = 1``
    (:meth:`_KKTCheck.solve`); the check judges them (:meth:`_KKTCheck.judge`)
    only where the events end (none before ``t = 1``, or a limit), and at every
    event where no factorisation solved them (least-squares values, whose
    equations may have no solution): on a factored support the equations hold to
    round-off, and the next event, or none, says the rest."""
    support = (coef != 0) | check.free
    signs = np.sign(coef)
    solved, idx, grad, _ = check.solve(support, signs)
    unsolved, ok = check.judge(solved, idx, signs, grad)[2:]
    if ok:
        if piece is not None:
            piece(0.0, 1.0, coef, solved - coef)
        return solved, 0, True, 1.0
    if max_events is None:
        max_events = len(coef)
    p = len(coef)
    strength = before.penalty.strength
    dstrength = check.strength - strength
    # Three rows, linear in t between events: lambda_j - c_j and lambda_j + c_j
    # (the slacks of |c_j| <= lambda_j, c the smooth gradient) and w_j. The
    # event is the first of them to reach 0.
    state = np.empty((3, p))
    c = before.smooth_gradient(coef)
    state[0], state[1], state[2] = strength - c, strength + c, coef
    work = _EventWork(support, ~check.free)
    t, closed, n_events, judged = 0.0, None, 0, True
    # On a fixed support the check's solution at t = 1 and the values at t lie
    # on one line: each segment's slopes come from the check's solve.
    while (n_events < max_events and not any_of(unsolved > 0) and 1.0 - t > _EPS
           and (go_on is None or go_on(np.count_nonzero(support), n_events))):
        k, h = work.next_event(state, grad - (strength + t * dstrength - state[0]),
                               (1.0 - t) * dstrength, solved, closed, 1.0 - t)
        if not h <= 1.0 - t:
            break  # no event before t = 1
        if piece is not None:
            piece(t, t + h, state[2], work.slope[2])
        state += h * work.slope
        t += h
        n_events += 1
        closed = work.cross(k % p, state, support, signs)
        solved, idx, grad, factored = check.solve(support, signs)
        judged = not factored
        if judged:
            unsolved, ok = check.judge(solved, idx, signs, grad)[2:]
            if ok:
                break
    if not judged:
        unsolved, ok = check.judge(solved, idx, signs, grad)[2:]
    if ok:
        if piece is not None:
            piece(t, 1.0, state[2], (solved - state[2]) / (1.0 - t))
        return solved, n_events, True, 1.0
    return np.where(support, solved, 0.0), n_events, False, t


class _EventWork:
    """:func:`_homotopy`'s workspaces for finding its next event, and the masks
    of the coordinates whose slacks (off the support) and whose values (on it,
    penalised) can reach 0, updated one coordinate per event."""

    def __init__(self, support, penalised):
        p = support.shape[0]
        self.slope = np.empty((3, p))
        self.times = np.empty((3, p))
        self.event = np.empty((3, p), dtype=bool)
        self.penalised = penalised
        self.off, self.on = ~support, support & penalised

    def cross(self, j, state, support, signs):
        """Coordinate ``j`` reached its bound: it leaves ``support`` (its value in
        ``state`` set to 0) or enters it with the sign that lowers ``f``, in
        place; returns the bound it is at (:meth:`next_event`'s ``closed``)."""
        if support[j]:
            # It leaves at c_j = -lambda_j z_j: that slack is 0, and may not close
            # again at once; the other, 2 lambda_j away, may (a sign change).
            closed = (0 if signs[j] < 0 else 1, j)
            support[j], state[2, j], signs[j] = False, 0.0, 0.0
        else:
            closed = (2, j)  # it enters at 0 and moves away from it
            support[j], signs[j] = True, -np.sign(state[1, j] - state[0, j])
        self.off[j] = not support[j]
        self.on[j] = support[j] and self.penalised[j]
        return closed

    def next_event(self, state, e, moved, solved, closed, rest):
        """The homotopy's next event from ``t`` (``rest = 1 - t`` to go): ``(k, h)``,
        the row-major index into ``state`` of the first row to reach 0 and the step
        ``h`` in ``t`` to it (inf: none). ``e`` is the smooth gradient's change to
        ``t = 1``, ``moved`` the strengths'; :attr:`slope` holds the slopes on
        return."""
        slope, times, event = self.slope, self.times, self.event
        np.subtract(moved, e, out=slope[0])
        np.add(moved, e, out=slope[1])
        np.subtract(solved, state[2], out=slope[2])
        slope /= rest
        # Each row reaches 0 after -value / slope: a slack of an inactive
        # coordinate where it falls (from round-off below 0: at once), an active
        # penalised coefficient where it moves towards 0.
        np.less(slope[:2], 0, out=event[:2])
        event[:2] &= self.off
        np.multiply(state[2], slope[2], out=times[2])
        np.less(times[2], 0, out=event[2])
        event[2] &= self.on
        if closed is not None:
            event[closed] = False  # the bound the last event's coefficient is at
        times.fill(-np.inf)
        np.divide(state, slope, out=times, where=event)
        k = int(np.argmax(times))
        return k, max(-float(times.flat[k]), 0.0)


def kkt_path(start, end, coef, at, rtol=1e-9, max_events=None, max_support=None,
             max_rate=None):
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
    max_support : int or None
        Once the support has more coefficients, stop (None: no limit)...
    max_rate : float or None
        ...or, with ``max_rate``, go on while the next event keeps the events
        within ``max_rate`` per point of ``at`` passed (plus one point's
        allowance), counted from the start: where the support changes many
        times between two points, a fresh start at each point
        (:func:`kkt_finish`'s batched corrections) costs fewer checks than an
        event each.

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
    >>> from skvan.objectives import L1Penalty, QuadraticObjective
    >>> from skvan.sparse import kkt_path
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
        w, n_events, ok, _ = _homotopy(check, start, coef, max_events, piece,
                                       _event_budget(max_support, max_rate, lambda: filled))
        if ok and filled and at[filled - 1] == 1.0:
            coefs[filled - 1] = w
        return coefs, _points_passing(check, start, coefs[:filled], at[:filled]), n_events


def _event_budget(max_support, max_rate, n_passed):
    """:func:`kkt_path`'s ``go_on(support size, events)`` for :func:`_homotopy`
    (None: no limit), ``n_passed()`` the points passed so far."""
    if max_support is None:
        return None

    def go_on(size, n_events):
        return size <= max_support or (
            max_rate is not None and n_events < max_rate * (n_passed() + 1))

    return go_on


def _points_passing(check, start, coefs, at):
    """How many of the homotopy's points ``coefs`` at ``at`` (:func:`kkt_path`),
    from the first, satisfy the KKT conditions of the objective at their ``t``."""
    if not at.size:
        return 0
    objective = check.objective
    b0 = -start.smooth_gradient(np.zeros_like(check.b))
    strength = start.penalty.strength + at[:, None] * (check.strength - start.penalty.strength)
    smooth_gradients = getattr(start, "smooth_gradients", None)
    grad = (smooth_gradients(coefs) if smooth_gradients is not None
            else np.array([start.smooth_gradient(w) for w in coefs]))
    grad -= at[:, None] * (check.b - b0)
    tol = _tolerance(strength, objective.smooth_cache()["kkt_scale"], check.rtol)  # the check's scales
    active = (coefs != 0) | check.free
    # Off the support: |c_j| <= lambda_j.
    off = np.where(active, -np.inf, np.abs(grad) - strength - tol)
    # On it: c_j + lambda_j sign(w_j) = 0 to the tolerance plus the rounding of
    # a solve, |G_SS| |w_S| bounded by sqrt(G_jj) sum_i sqrt(G_ii) |w_i|.
    root = np.sqrt(np.clip(objective.gram_diagonal(), 0, None))
    size = active.sum(axis=1, keepdims=True)
    allowance = KKT_ROUNDOFF_ULPS * size * _EPS * (
        root[None, :] * (np.abs(coefs) @ root)[:, None] + np.abs(check.b) + strength)
    miss = np.abs(grad + strength * np.sign(coefs)) - tol - allowance
    on = np.where(active, miss, -np.inf)
    failed = np.flatnonzero(np.any(off > 0, axis=1) | np.any(on > 0, axis=1))
    return int(failed[0]) if failed.size else at.size


