"""Variance-reduced minibatch expectations: every row's last integrals, remembered."""

import functools
import warnings

import numpy as np

from .._data import issparse
from ._base import ExpectationEstimator, Expectations


class RowMemory(ExpectationEstimator):
    """Expectations of a finite sum from minibatches, with the whole data's gradient
    and curvature: each row keeps its last per-sample integrals, and a minibatch
    refreshes its own rows' (incremental Newton, Rodomanov and Kropotov 2016, with
    VAN's expectations in place of values at a point).

    Row ``i`` was last integrated under ``q_s`` (predictor mean ``m_i``), giving
    ``E[l'_i]`` and ``E[c_i]`` (:meth:`LinearPredictorExpectation._raw` of the
    estimator ``inner``). Under the current ``q`` (mean ``mu``) the data term's
    expected gradient is taken from each row's first-order model at ``mu``::

        E[grad f] ~ sum_i w_i (E[l'_i] + E[c_i] (x_i^T mu - m_i)) x_i
                  = X^T (w r) + H mu,   r_i = E[l'_i] - E[c_i] m_i,
        E[C]      ~ H = X^T diag(w E[c]) X

    (``d E[l'(a)] / d m = E[l''(a)]`` for ``a ~ N(m, v)``), plus the penalty's
    expectations under the current ``q``. ``X^T (w r)`` and ``H`` are kept as sums
    and corrected by the minibatch's rows only (``O(b p^2)`` for ``b`` rows), so
    a step costs about a minibatch's integrals and one factorisation, and a pass
    over the data about one full-batch iteration. Unlike a minibatch's scaled
    estimate, this one's error vanishes as the iterates settle: at a fixed point
    every row's integrals are those under the current ``q``, so VO's limit is the
    minimiser of ``f`` and VI's fixed point the full-data posterior, reached at
    a linear rate under :class:`~skvan.van.IncrementalSchedule`.

    Until every row has been integrated once, the estimate is the minibatch's
    own (scaled to the data, as without memory), and :attr:`complete` is False:
    :class:`~skvan.van.IncrementalSchedule` averages those steps, and takes the
    full-batch schedule's from the first complete estimate. The memory is the
    rows' integrals (``l``'s value, ``r`` and ``E[c]``: 3 floats per row; for
    ``K`` classes ``1 + K + K^2``) plus the sums, ``H`` in the family's form.
    The models' ``H mu`` needs the whole curvature: a diagonal family is refused
    (its aggregated gradients alone, with diagonally scaled Newton steps, did
    not converge). The value (reported; no step reads it) is each row's last
    value plus the penalty's; a ridge's term ``sum_j lambda_j Sigma_jj``, which
    needs the covariance's diagonal (an ``O(p^3)`` inverse), is refreshed once
    per data pass (:meth:`_penalty`). :class:`StreamRowMemory` does the same
    for a stream whose rows come without their index.

    Parameters
    ----------
    inner : LinearPredictorExpectation
        Integrates a minibatch's rows (closed form, quadrature or cubature).

    Attributes
    ----------
    n_seen_ : int
        Rows integrated at least once in the current run.

    References
    ----------
    A. Rodomanov and D. Kropotov, "A Superlinearly-Convergent Proximal Newton-Type
    Method for the Optimization of Finite Sums", ICML 2016. N. Le Roux, M. Schmidt
    and F. Bach, "A Stochastic Gradient Method with an Exponential Convergence
    Rate for Finite Training Sets" (SAG), NeurIPS 2012.

    Examples
    --------
    On least squares each row's model is exact, so once every row has been seen
    the expectations are the full data's and VO's steps reach the solution (to
    the solver's default tolerance, 1e-5):

    >>> import numpy as np
    >>> from skvan.expectations import ClosedForm, RowMemory
    >>> from skvan.objectives import LinearModelObjective, SquaredLoss
    >>> from skvan.van import (DampedNewtonStep, IncrementalSchedule, Minibatches,
    ...                        VANSolver, make_family)
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((40, 3)); y = X @ np.array([1.0, -2.0, 0.5])
    >>> f = LinearModelObjective(X, y, SquaredLoss())
    >>> solver = VANSolver(f, RowMemory(ClosedForm()), make_family("full", np.zeros(3), np.eye(3)),
    ...                    schedule=IncrementalSchedule(1.0, 100.0, steps_per_pass=4),
    ...                    step=DampedNewtonStep(), batches=Minibatches(10), max_iter=40,
    ...                    random_state=0)
    >>> np.round(solver.solve().family.mean, 4)
    array([ 1. , -2. ,  0.5])
    """

    deterministic = True

    def __init__(self, inner):
        self.inner = inner

    def check_objective(self, objective):
        self.inner.check_objective(objective)

    def reset(self, solver):
        """Forget every row: a new run on ``solver.f``."""
        if solver.family.diagonal:
            raise TypeError("RowMemory needs a family whose curvature is the whole matrix "
                            "(covariance='full'), got a diagonal one.")
        self.inner.reset(solver)
        self._f = solver.f
        self.n_slots = self._slot_count(solver.f)
        self._forget()

    def _slot_count(self, f):
        """The rows remembered: those of the run's objective."""
        return f.n_samples

    def _forget(self):
        """Empty every slot."""
        self._weights = self._f.weights  # each slot's weight at the whole data's
        self._seen = np.zeros(self.n_slots, dtype=bool)
        self.n_seen_ = 0
        self._rows = None  # each row's (value, r, E[c]), allocated from the first batch's
        self._sum_r = self._sum_h = None
        self._spread_term, self._since_refresh = None, 0  # (the penalty's, :meth:`_penalty`)

    @property
    def complete(self):
        """Whether every row has been integrated (the estimates are the whole data's)."""
        return self.n_seen_ == self.n_slots

    def __call__(self, objective, family, hessian="exact", random_state=None):
        mean = family.mean
        raw = self.inner._raw_at(objective, family, mean, hessian)
        slots, first, counts = self._slots(objective)
        if first is not None:  # a row repeated within the batch: counted once
            objective = objective.subsample(first)
            raw = tuple(e[first] for e in raw)
        was_complete = self.complete
        fresh = self._remember(objective, family, slots, raw, counts)
        self._since_refresh += objective.n_samples
        if was_complete or self.complete:
            whole = self._whole(objective)
            value = float(np.dot(self._weights, self._rows[0]))
            # (a copy: adding the penalty may write into the matrix it is given)
            gradient, curvature = self._sum_r + self._sum_h @ mean, self._sum_h.copy()
        else:
            # Rows not seen yet have no integrals: the minibatch's own estimate,
            # which for rows all seen for the first time is what they added to
            # the sums (their models at the mean, at the data's weight).
            whole = objective
            value = float(np.dot(objective.weights, raw[0]))
            if fresh is None:
                gradient, curvature = family.data_derivatives(objective, raw[1], raw[2])
            else:
                unscaled, (dr, dh) = self._unscaled(objective), fresh
                gradient, curvature = (dr + dh @ mean) / unscaled, dh / unscaled
        p0, p1, p2 = self._penalty(whole, family, hessian)
        g0, g1 = whole.gauge_expectation(family, mean)
        curvature = whole.penalty.add_curvature(whole.add_gauge(curvature), p2)
        return Expectations(value + p0 + g0, gradient + p1 + g1, curvature)

    def _penalty(self, whole, family, hessian):
        """The penalty's expectations under ``q``. A quadratic one's (a ridge)
        gradient and curvature do not depend on ``Sigma``, and its value only
        through ``sum_j lambda_j Sigma_jj``: that term is refreshed once per data
        pass, like the rows' values the one under the ``q`` of its last refresh,
        which spares the covariance's diagonal (an ``O(p^3)`` inverse) at every
        step; no step reads the value."""
        penalty = whole.penalty
        if not getattr(penalty, "quadratic", False):
            return penalty.expectation_under(family, family.mean, hessian)
        p0, p1, p2 = penalty.expectation(family.mean, 0.0, hessian)
        if self._spread_term is None or self._since_refresh >= self.n_slots:
            self._spread_term = penalty.expectation_under(family, family.mean, hessian)[0] - p0
            self._since_refresh = 0
        return p0 + self._spread_term, p1, p2

    def _slots(self, objective):
        """``(slots, first, counts)``: each kept row's slot in the memory (its index in
        the data), the batch's rows to keep (None: all; a batch across two passes may
        repeat a row, kept once) and the copies of the data each row stands for
        (None: one)."""
        rows = np.arange(self._f.n_samples) if objective.rows is None else objective.rows
        unique, first = np.unique(rows, return_index=True)
        if unique.size < rows.size:
            return unique, first, None
        return rows, None, None

    def _whole(self, objective):
        """The objective whose penalty and gauge the estimates add: the whole data's."""
        return self._f

    def _unscaled(self, objective):
        """The factor from the minibatch's weights to the whole data's."""
        return self._f.multiplier / objective.multiplier

    def _remember(self, objective, family, rows, raw, counts=None):
        """Replace the integrals of ``rows`` (the minibatch ``objective``'s) by
        ``raw`` and correct the sums by the difference, at the full data's
        weight (the minibatch's multiplier undone; ``counts``: the copies of the
        data each row stands for, None for one). Returns the correction
        ``(X^T (w r), X^T diag(w E[c]) X)`` where every row is new and stands
        for one copy (then it is the batch's own, at the data's weight), else
        None."""
        e0, e1, e2 = raw
        # r_i = E[l'_i] - E[c_i] m_i (K-vectors where E[c_i] is K x K)
        m = objective.predictors(family.mean)
        r = e1 - (e2 * m if e2.ndim == 1 else np.einsum("ikl,il->ik", e2, m))
        if self._rows is None:
            n = self.n_slots
            self._rows = tuple(np.zeros((n,) + np.shape(e)[1:]) for e in (e0, r, e2))
        value, old_r, old_h = self._rows
        unscaled = self._unscaled(objective)
        new_r, new_h, single = r, e2, True
        if counts is not None:  # each row stands for counts[i] copies (weights w_i counts[i])
            old_count = self._counts[rows]
            single = not np.any(old_count) and np.all(counts == 1.0)
            new_r, new_h = (_times(counts, r), _times(counts, e2))
            old_r_rows, old_h_rows = _times(old_count, old_r[rows]), _times(old_count, old_h[rows])
            self._counts[rows] = counts
        else:
            old_r_rows, old_h_rows = old_r[rows], old_h[rows]
        dr, dh = family.data_derivatives(objective, unscaled * (new_r - old_r_rows),
                                         unscaled * (new_h - old_h_rows))
        self._sum_r = dr if self._sum_r is None else self._sum_r + dr
        self._sum_h = dh if self._sum_h is None else self._sum_h + dh
        if counts is not None:
            self._weights[rows] = unscaled * objective.weights * counts
        value[rows], old_r[rows], old_h[rows] = e0, r, e2
        new = ~self._seen[rows]
        self._seen[rows[new]] = True
        n_new = int(np.count_nonzero(new))
        self.n_seen_ += n_new
        return (dr, dh) if n_new == rows.size and single else None


def _times(counts, a):
    """``a`` with row ``i`` multiplied by ``counts[i]`` (rows of any shape)."""
    return a * counts.reshape((-1,) + (1,) * (a.ndim - 1))


class StreamRowMemory(RowMemory):
    """:class:`RowMemory` for a stream that passes repeatedly over ``N`` rows
    (``partial_fit(stream_size=N)``), where a batch's rows come without their index.

    A row is known by its content: a 128-bit hash of the bits of its design row,
    target and weight (:func:`row_keys`; exact, so it does not depend on how a
    batch is laid out or on the BLAS). The first ``N`` rows of the stream (its
    first pass) take a slot each, and a row repeated within them (a duplicate in
    the data) one slot standing for its copies; from then on the estimates are
    the whole data's, and each batch refreshes its rows' slots. Each call is one
    step of the stream, the memory persisting across solver runs
    (:meth:`reset` forgets nothing once the first run has set it up).

    A row not among the first pass's, once the memory is complete, means the
    stream is not ``N`` rows passed over repeatedly (the premise of the sums):
    the memory is emptied and refilled from that row on, with a
    :class:`UserWarning` the first time (the estimates are then the minibatches'
    own until it is complete again).

    Parameters
    ----------
    inner : LinearPredictorExpectation
        Integrates a batch's rows.
    stream_size : int
        ``N``, the rows of one pass, ``>= 1``.

    Attributes
    ----------
    n_seen_ : int
        Slots filled since the memory was last emptied.
    complete_at_ : int or None
        The call (counted from 0) whose estimate first covered the whole pass,
        None while it has not.
    """

    def __init__(self, inner, stream_size):
        super().__init__(inner)
        self.stream_size = int(stream_size)
        self.complete_at_ = None

    def reset(self, solver):
        """Set up on the first run only: later runs continue the stream."""
        if getattr(self, "_keys", None) is not None:
            return
        self._calls = 0
        self._warned = False
        super().reset(solver)

    def _slot_count(self, f):
        """The rows of one pass."""
        return self.stream_size

    def _forget(self):
        super()._forget()
        self._keys = {}
        self._counts = np.zeros(self.n_slots)
        self._weights = np.zeros(self.n_slots)
        self._observed = 0  # rows (with their copies) of the first pass taken in
        self.complete_at_ = None

    @property
    def complete(self):
        """Whether the first pass's rows have all been taken in."""
        return self._observed >= self.n_slots

    def __call__(self, objective, family, hessian="exact", random_state=None):
        estimate = super().__call__(objective, family, hessian, random_state)
        if self.complete_at_ is None and self.complete:
            self.complete_at_ = self._calls
        self._calls += 1
        return estimate

    def _slots(self, objective):
        keys = row_keys(objective)
        unique, first, copies = np.unique(keys, axis=0, return_index=True, return_counts=True)
        unique = list(map(tuple, unique.tolist()))
        found = [self._keys.get(key) for key in unique]
        if self.complete and None in found:
            if not self._warned:
                warnings.warn(
                    f"partial_fit(stream_size={self.n_slots}) remembers the rows of the "
                    "stream's first pass, and this batch has a row that was not among "
                    "them: the memory starts again from it. Pass the same rows each pass, "
                    "or use stream_size=None for a stream of new rows.", UserWarning,
                    stacklevel=2)
                self._warned = True
            self._forget()
            found = [None] * len(found)
        for i, key in enumerate(unique):
            if found[i] is None:
                found[i] = self._keys[key] = len(self._keys)
        slots = np.array(found, dtype=np.intp)
        counts = self._counts[slots]
        if not self.complete:  # the first pass: each copy adds to its row's count
            counts = counts + copies
            self._observed += int(copies.sum())
        if len(unique) == keys.shape[0]:  # every row once: the batch as it is
            in_order, in_order_counts = np.empty_like(slots), np.empty_like(counts)
            in_order[first], in_order_counts[first] = slots, counts
            return in_order, None, in_order_counts
        return slots, first, counts

    def _whole(self, objective):
        """The batch's objective: scaled to the pass, its penalty is the whole one."""
        return objective

    def _unscaled(self, objective):
        """The batch's multiplier is the pass's times ``N / n_batch`` (``n_batch``
        its distinct rows)."""
        return objective.n_samples / self.n_slots


#: Seeds of the two sets of per-column multipliers :func:`row_keys` hashes with.
_KEY_SEEDS = (0x5EED0, 0x5EED1)


@functools.lru_cache(maxsize=16)
def _multipliers(n_columns):
    """Two rows of odd 64-bit multipliers, one per column (read-only, cached)."""
    A = np.stack([np.random.default_rng(seed).integers(0, 2**64, n_columns, dtype=np.uint64,
                                                      endpoint=False) | np.uint64(1)
                  for seed in _KEY_SEEDS])
    A.flags.writeable = False
    return A


def _mixed(values):
    """The bits of float64 ``values`` as uint64, mixed (``b ^ (b >> 31)``, then
    multiplied by an odd constant): 0.0 stays 0, so absent and explicit zeros of
    a sparse row agree with a dense one."""
    bits = np.ascontiguousarray(values, dtype=np.float64).view(np.uint64)
    return (bits ^ (bits >> np.uint64(31))) * np.uint64(0x9E3779B97F4A7C15)


def row_keys(objective):
    """A ``(n, 2)`` uint64 hash of each row of ``objective``: the bits of its design
    row, target(s) and sample weight, summed with per-column odd multipliers
    modulo ``2^64`` (two independent sums). Exact integer arithmetic: the same
    row gives the same key in any batch and on any machine."""
    X = objective.X
    targets = getattr(objective, "Y", None)
    if targets is None:
        targets = objective.y
    extra = np.column_stack([np.reshape(targets, (X.shape[0], -1)), objective.sample_weight])
    p = X.shape[1]
    A = _multipliers(p + extra.shape[1])
    # (integer products wrap modulo 2^64, as the sums need)
    keys = _mixed(extra) @ A[:, p:].T
    if issparse(X):
        X = X.tocsr()
        mixed = _mixed(X.data)
        for k in range(2):
            prefix = np.concatenate([[np.uint64(0)], np.cumsum(mixed * A[k, X.indices],
                                                               dtype=np.uint64)])
            keys[:, k] += prefix[X.indptr[1:]] - prefix[X.indptr[:-1]]
    else:
        keys += _mixed(X) @ A[:, :p].T
    return keys
