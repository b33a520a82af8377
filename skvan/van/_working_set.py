"""Working sets: an L1-penalised problem solved on a growing set of columns.

With more features than samples the Lasso's solution has at most ``n`` nonzero
coefficients, and coordinate-descent solvers (celer, skglm, glmnet's strong
rules) owe their speed to working on few columns at a time. The same holds for
VAN: its iterations cost ``p^3`` (primal) or ``n^2 p`` (dual) when they run on
all ``p`` columns, but only ``|W|^3`` on a working set ``W``. The solution on
``W`` is the solution of the full problem exactly when no coordinate outside
``W`` violates the optimality (KKT) conditions, a check that costs one pass
over the data (``X^T r``); coordinates that do violate them join ``W``, the
worst first, and VAN resumes from the previous mean.
"""

import numpy as np


def solve_on_working_sets(excess, solve_on, start, n_params, grow=2.0, max_rounds=50,
                          finish=None, rescue=None):
    """Solve on ``start``, then on ever larger sets, until no coordinate outside
    the set violates optimality (or ``finish`` solves the whole problem from the
    first set's solution).

    Parameters
    ----------
    excess : callable
        ``excess(w) -> ndarray (n_params,)``: by how much each coordinate violates
        the optimality conditions at ``w`` (positive: a violation).
    solve_on : callable
        ``solve_on(columns, mean) -> (coef, info)``: the solution on ``columns``
        (sorted indices), starting from ``mean`` (the previous solution there);
        with ``rescue``, once at most, ``coef`` None: the set's solution is out
        of its cheap reach, and ``rescue`` is tried first.
    start : ndarray of int
        The first working set.
    n_params : int
    grow : float, default=2.0
        A set grows by at most ``(grow - 1)`` times its size per round.
    max_rounds : int, default=50
    finish : callable or None, default=None
        ``finish(w) -> (coef, info, ok)``: the whole problem's solution from the
        first set's (``w``, over all parameters), and whether it is one; where it
        is, the rounds end there.
    rescue : callable or None, default=None
        ``rescue(w) -> (coef, info, ok)``, as ``finish``, from the last solution
        ``w`` where ``solve_on`` returned None; where it fails, ``solve_on`` is
        called again on the same set.

    Returns
    -------
    w : ndarray of shape (n_params,)
        The solution (zero outside the final set).
    columns : ndarray of int
        The final working set.
    infos : list
        ``solve_on``'s infos, one per round, and ``finish``'s and ``rescue``'s.
    certified : bool
        Whether no coordinate outside the final set violates optimality.
    """
    columns = np.unique(np.asarray(start, dtype=int))
    w = np.zeros(n_params)
    infos = []
    for _ in range(max_rounds):
        coef, info = solve_on(columns, w[columns])
        infos.append(info)
        end = rescue if coef is None else finish if len(infos) == 1 else None
        if coef is not None:
            w = np.zeros(n_params)
            w[columns] = coef
        if end is not None:
            whole, info, ok = end(w)
            infos.append(info)
            if ok:
                return whole, np.union1d(columns, np.flatnonzero(whole)), infos, True
        if coef is None:
            continue
        e = np.asarray(excess(w), dtype=np.float64)
        e[columns] = -np.inf
        violators = np.flatnonzero(e > 0)
        if violators.size == 0:
            return w, columns, infos, True
        n_new = max(int(np.ceil((grow - 1.0) * columns.size)), 1)
        worst = violators[np.argsort(-e[violators], kind="stable")[:n_new]]
        columns = np.union1d(columns, worst)
    return w, columns, infos, False
