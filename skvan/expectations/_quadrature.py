"""Deterministic quadrature over the 1-D linear predictor.

Every rule here is a set of nodes ``z_k`` and positive weights ``w_k`` summing to
one with ``E[h(a)] ~ sum_k w_k h(m + sqrt(v) z_k)`` for ``a ~ N(m, v)``.

Which rule (``n_nodes="auto"``)
-------------------------------
The logistic loss bends on a unit scale around ``a = 0``; how many nodes an
expectation needs depends on the predictor's standard deviation ``sd`` relative
to that scale. Measured against a reference (tests/test_expectations.py), the
absolute error of ``E[l], E[l'], E[l'']`` stays below ``1e-12`` with:

- Gauss-Hermite with 2, 4, 8, 16 or 32 nodes for ``sd`` up to 1e-3, 3e-2, 0.2,
  0.5 and 0.8 (:data:`AUTO_NODES`). As VAN converges under ``objective="vo"``
  the predictors' spread shrinks and so does the cost. Rows whose ``sd`` is at
  most 1e-3 take a loss's second-order expansion (the logistic loss's
  ``narrow_expectations``) in place of the 2 nodes: one evaluation per row.
  Under VO, whose limit (the minimiser of ``f``) does not depend on the
  expectations, only its path, the expansion serves every row whose ``sd`` is at
  most 0.3 (:attr:`GaussHermiteQuadrature.carry_variance`, from where later
  passes carry the variances instead of computing them).
- Beyond, where Gauss-Hermite converges only slowly (32 nodes: 6e-5 at ``sd=3``,
  2e-2 at ``sd=10``), the trapezoid rule in ``z`` on ``[-8.5, 8.5]`` with spacing
  ``min(0.5, 0.5 / sd)``, exponentially accurate for analytic integrands; at most
  :data:`MAX_GRID` nodes, which keeps 1e-12 up to ``sd ~ 60`` (beyond, only wide
  initial ``q``'s on unscaled data, the error grows).

Rows are grouped by their own ``sd`` (the buckets above, then powers of two for
the trapezoid rule) so that one wide row does not set the cost of all; each group
is processed in blocks of at most 16,384 node evaluations (128 KB temporaries,
which stay in the cache; ``python benchmarks/bench_passes.py``). Rows few enough to
fit one such block on the widest row's rule all take that rule (the buckets
cost more than the extra nodes there).

At a zero mean (every cold fit's first pass) the logistic loss's expectations
are functions of ``sd`` alone, read from a table of piecewise polynomials
(:class:`_CentredTable`) as accurate as the rules above.
"""

import functools
import math

import numpy as np

from .._blocks import index_blocks
from .._reductions import any_of
from ._base import LinearPredictorExpectation

#: ``(largest sd, Gauss-Hermite nodes)`` used by ``n_nodes="auto"``.
AUTO_NODES = ((1e-3, 2), (3e-2, 4), (0.2, 8), (0.5, 16), (0.8, 32))
#: Predictor variances up to this (``sd <= 1e-3``, the first bucket of
#: :data:`AUTO_NODES`) take a loss's ``narrow_expectations`` where it has them
#: (the second-order expansion: as accurate as 2 Gauss-Hermite nodes there).
NARROW_VARIANCE = AUTO_NODES[0][0] ** 2
#: Largest number of nodes of the trapezoid rule.
MAX_GRID = 2049
_HALF_WIDTH = 8.5
_CHUNK = 1 << 14
#: Rows per block of the cold-start table's evaluation (its temporaries stay in cache).
_TABLE_CHUNK = 1 << 14


@functools.lru_cache(maxsize=None)
def hermite_rule(n_nodes):
    """Gauss-Hermite nodes ``z_k`` and weights ``w_k`` for a standard normal
    (read-only, cached). Exact for polynomials of degree ``< 2 n_nodes``."""
    t, w = np.polynomial.hermite.hermgauss(n_nodes)
    z, w = np.sqrt(2.0) * t, w / np.sqrt(np.pi)
    z.flags.writeable = False
    w.flags.writeable = False
    return z, w


@functools.lru_cache(maxsize=64)
def _trapezoid_rule(half_n):
    dz = _HALF_WIDTH / half_n
    z = np.arange(-half_n, half_n + 1) * dz
    w = np.exp(-0.5 * z**2)
    w /= w.sum()
    z.flags.writeable = False
    w.flags.writeable = False
    return z, w


def gaussian_rule(max_sd, n_nodes="auto"):
    """Nodes and weights for ``E[h(m + sd z)]``, ``z ~ N(0, 1)``, given the largest
    ``sd`` of the batch: ``n_nodes`` Gauss-Hermite nodes, or the "auto" choice
    described in the module docstring."""
    if n_nodes != "auto":
        return hermite_rule(int(n_nodes))
    for bound, k in AUTO_NODES:
        if max_sd <= bound:
            return hermite_rule(k)
    dz = min(0.5, 0.5 / max_sd)
    half_n = min(int(np.ceil(_HALF_WIDTH / dz)), MAX_GRID // 2)
    return _trapezoid_rule(half_n)


_BOUNDS = np.array([b for b, _ in AUTO_NODES])
_SCALAR_BOUNDS = tuple(float(b) for b in _BOUNDS)


def _bucket(sd):
    """Bucket of each ``sd``: ``b < len(AUTO_NODES)`` is Gauss-Hermite; beyond,
    ``b = len + k - 1`` is the trapezoid rule for ``sd <= 0.8 * 2^k``, ``k >= 1``
    (the smallest that covers the row)."""
    b = np.searchsorted(_BOUNDS, sd, side="left")
    wide = b == len(_BOUNDS)
    if np.any(wide):
        b[wide] += np.ceil(np.log2(sd[wide] / _BOUNDS[-1])).astype(int) - 1
    return b


def _scalar_bucket(var):
    """:func:`_bucket` of one variance (None if it is not finite or negative)."""
    if not (math.isfinite(var) and var >= 0):
        return None
    sd = math.sqrt(var)
    for b, bound in enumerate(_SCALAR_BOUNDS):
        if sd <= bound:
            return b
    return len(_BOUNDS) - 1 + int(np.ceil(np.log2(sd / _BOUNDS[-1])))


def _bucket_bound(b):
    """The largest ``sd`` bucket ``b`` holds."""
    return _BOUNDS[b] if b < len(_BOUNDS) else _BOUNDS[-1] * 2.0 ** (b - len(_BOUNDS) + 1)


def _groups(v, n_nodes):
    """Yield ``(rows, z, w)``: row indices (a slice or an index array) sharing a
    rule, in chunks of at most ``_CHUNK`` temporaries."""
    n = v.shape[0]
    if n_nodes != "auto":
        buckets = [(slice(0, n), hermite_rule(int(n_nodes)))]
    else:
        lo, hi = (_scalar_bucket(float(v.min())), _scalar_bucket(float(v.max()))) if n else (0, 0)
        if lo is not None and lo == hi:  # one rule for all rows (VAN's later passes)
            b, uniq = None, [lo]
        elif lo is not None and hi is not None and n * gaussian_rule(_bucket_bound(hi))[0].size <= _CHUNK:
            # Few rows: the widest row's rule for all, in one chunk (at least as
            # accurate for the narrower ones): sorting rows into buckets costs
            # more than the extra nodes there.
            b, uniq = None, [hi]
        else:
            b = _bucket(np.sqrt(v))
            uniq = np.flatnonzero(np.bincount(b))  # O(n): np.unique sorts
        buckets = []
        for u in uniq:
            rows = slice(0, n) if len(uniq) == 1 else np.flatnonzero(b == u)
            buckets.append((rows, gaussian_rule(_bucket_bound(u))))
    for rows, (z, w) in buckets:
        step = max(1, _CHUNK // z.size)
        if isinstance(rows, slice):  # all rows share the rule: chunks are views
            for start in range(0, n, step):
                yield slice(start, min(start + step, n)), z, w
        else:
            for start in range(0, rows.size, step):
                yield rows[start : start + step], z, w


class _CentredTable:
    """A loss's expectations at a zero mean as functions of ``t = log2(sd)`` alone.

    Where every predictor mean is 0 (the start of a cold fit) ``E[l]``,
    ``E[l']`` and ``E[c]`` depend on the row only through ``sd`` (and ``E[l']``
    on the label's sign, ``y g(sd)``). The table holds each on
    ``t in [-10, 7)`` (``sd`` from 1e-3 to 128) as polynomials of degree
    :data:`_TABLE_DEGREE` on intervals of :data:`_TABLE_STEP`, interpolating at
    Chebyshev points the loss's ``centred_expectations`` under the trapezoid rule
    with spacing at most ``0.25 / max(sd, 1)`` (exponentially accurate: an error near
    ``exp(-2 pi^2 / 0.25)``, far below round-off). The interpolation error is
    below 1e-13 relative (``tests/test_expectations.py``), inside the 1e-12 of
    the per-row rules; a pass over the rows costs a few products per row instead
    of a few per node pair (``python benchmarks/bench_passes.py --columns``, part
    8). Rows outside the range
    take the per-row rules. Only for losses whose centred expectations depend on
    ``sd`` and ``y`` alone (the logistic loss); built once per loss class and
    curvature (:func:`centred_table`).
    """

    def __init__(self, loss, need):
        lo, hi = _TABLE_RANGE
        n_int = int(round((hi - lo) / _TABLE_STEP))
        k = _TABLE_DEGREE + 1
        x = np.cos(np.pi * (np.arange(k) + 0.5) / k)
        sd = np.exp2(lo + (np.arange(n_int)[:, None] + (x + 1.0) / 2.0) * _TABLE_STEP).ravel()
        columns = [np.empty(sd.size) for _ in range(3)]
        # Spacing 0.25 / 2^j for the points with sd in (2^(j-1), 2^j] (j >= 0).
        octave = np.maximum(np.ceil(np.log2(sd)), 0).astype(int)
        for j in np.unique(octave):
            rows = octave == j
            z, w = _trapezoid_rule.__wrapped__(int(np.ceil(_HALF_WIDTH / 0.25)) << int(j))
            values = loss.centred_expectations(np.ones(rows.sum()), sd[rows], z, w, need)
            present = [value is not None for value in values]  # "value" leaves two out
            for column, value in zip(columns, values):
                if value is not None:
                    column[rows] = value
        # Chebyshev coefficients of each interval, then monomial ones in x (for Horner).
        to_monomial = np.zeros((k, k))
        for j in range(k):
            poly = np.polynomial.chebyshev.cheb2poly(np.eye(k)[j])
            to_monomial[:poly.size, j] = poly
        self.coefficients = []
        for column, kept in zip(columns, present):
            if not kept:
                self.coefficients.append(None)
            elif np.ptp(column) == 0:  # a constant (the logistic E[l'] = -y/2): exact
                self.coefficients.append(float(column[0]))
            else:
                cheb = np.polynomial.chebyshev.chebfit(x, column.reshape(n_int, k).T, _TABLE_DEGREE)
                self.coefficients.append(np.ascontiguousarray(to_monomial @ cheb))
        self.n_intervals = n_int

    @staticmethod
    def covers(sd):
        """Which rows the table holds."""
        lo, hi = _TABLE_RANGE
        return (sd >= 2.0**lo) & (sd < 2.0**hi)

    def __call__(self, y, sd):
        """``(E[l], E[l'], E[c])`` (None where ``need`` leaves them out) for rows the
        table :meth:`covers`."""
        u = (np.log2(sd) - _TABLE_RANGE[0]) / _TABLE_STEP
        index = np.minimum(u.astype(np.intp), self.n_intervals - 1)
        x = 2.0 * (u - index) - 1.0
        out = []
        for c in self.coefficients:
            if c is None or isinstance(c, float):
                out.append(c if c is None else np.full(sd.shape, c))
                continue
            r = c[-1].take(index)
            for row in c[-2::-1]:
                r *= x
                r += row.take(index)
            out.append(r)
        if out[1] is not None:
            out[1] = out[1] * y
        return tuple(out)


#: The cold-start table's range of ``log2(sd)``, interval and degree (:class:`_CentredTable`).
_TABLE_RANGE = (-10.0, 7.0)
_TABLE_STEP = 0.125
_TABLE_DEGREE = 8
_TABLES = {}


def centred_table(loss, need):
    """The :class:`_CentredTable` of ``loss``'s class for ``need`` (built on first
    use; "value" reads the "exact" table's ``E[l]``)."""
    key = (type(loss), "gauss_newton" if need == "gauss_newton" else "exact")
    if key not in _TABLES:
        _TABLES[key] = _CentredTable(loss, key[1])
    return _TABLES[key]


def gaussian_average(func, m, v, n_nodes="auto"):
    """``E[func(a)]`` for ``a ~ N(m, v)`` elementwise, for 1-D ``m`` and ``v``.

    ``func`` maps an ``(n, n_nodes)`` array to the same shape.
    """
    out = np.empty(m.shape[0])
    sd = np.sqrt(v)
    for s, z, w in _groups(v, n_nodes):
        out[s] = func(m[s, None] + sd[s, None] * z) @ w
    return out


def log_expected_sigmoid(m, v, n_nodes="auto"):
    """``log E[sigmoid(a)]`` and ``log E[sigmoid(-a)]`` for ``a ~ N(m, v)``.

    The predictive class probabilities of a Gaussian logistic model, computed in
    log space (``log sigmoid(a) = -log(1 + exp(-a))`` and positive weights) so that
    neither underflows when ``|m|`` is large.
    """
    sd = np.sqrt(v)
    log_p, log_q = np.empty(m.shape[0]), np.empty(m.shape[0])
    for s, z, w in _groups(v, n_nodes):
        log_w = np.log(w)
        a = m[s, None] + sd[s, None] * z
        log_p[s] = _log_sum_exp(log_w - np.logaddexp(0.0, -a))
        log_q[s] = _log_sum_exp(log_w - np.logaddexp(0.0, a))
    return log_p, log_q


def _log_sum_exp(x):
    """``log sum_k exp(x_k)`` over each row of ``x`` (finite entries, or -inf), from
    its largest entry: scipy's ``logsumexp`` checks its input at a cost that wide
    predictors' hundreds of nodes per row multiply."""
    top = np.max(x, axis=1)
    return top + np.log(np.sum(np.exp(x - top[:, None]), axis=1))


class GaussHermiteQuadrature(LinearPredictorExpectation):
    """Expectations by quadrature of each sample's linear predictor.

    ``E[h(a_i)] = sum_k w_k h(m_i + sqrt(v_i) z_k)``: no sampling, deterministic,
    cost ``O(n_samples * n_nodes)`` on top of the ``O(n_samples n_params^2)``
    predictor variances and curvature.

    Parameters
    ----------
    n_nodes : int or "auto", default="auto"
        An int uses that many Gauss-Hermite nodes. "auto" picks 2 to 32
        Gauss-Hermite nodes, or a trapezoid rule for wide predictors, from the
        largest predictor standard deviation (module docstring), keeping the error
        on the logistic loss below 1e-12.
    """

    #: Under VO the variances of a pass are carried once its largest is at most
    #: this (sd 0.3, where a carried variance moves a row's expected loss
    #: derivatives by at most ``5e-3``), and every row within it takes the loss's
    #: second-order expansion (``narrow_expectations``, error about ``v^2 / 8``):
    #: one evaluation per row, whatever the variances, which the carrying
    #: overestimates where the precision grows unevenly.
    carry_variance = 0.1

    def __init__(self, n_nodes="auto"):
        super().__init__()
        self.n_nodes = n_nodes

    def _raw(self, objective, m, v, need):
        sd = np.sqrt(v)
        n = m.shape[0]
        e0 = np.empty(n)
        e1 = e2 = None
        if need != "value":
            e1, e2 = np.empty(n), np.empty(n)
        loss = objective.loss
        if hasattr(loss, "centred_expectations") and not m.any():
            return self._centred(objective, sd, v, need, (e0, e1, e2))
        rows = None  # all of them
        if self.n_nodes == "auto" and hasattr(loss, "narrow_expectations"):
            # Rows within the narrowest bucket (VAN's later passes), or under VO
            # within the carried variances' bound: the second-order expansion, one
            # evaluation per row instead of nodes (row by row, so that a pass made
            # chunk by chunk takes the same).
            narrow = v <= (self.carry_variance if self._vo else NARROW_VARIANCE)
            for s in index_blocks(np.flatnonzero(narrow), 1, _CHUNK):
                e0[s], d1, d2 = loss.narrow_expectations(objective.y[s], m[s], v[s], need)
                if need != "value":
                    e1[s], e2[s] = d1, d2
            if any_of(narrow):
                rows = np.flatnonzero(~narrow)
        for s, z, w in _groups(v if rows is None else v[rows], self.n_nodes):
            s = s if rows is None else rows[s]
            a = m[s, None] + sd[s, None] * z
            y = objective.y[s, None]
            if need == "value":
                e0[s] = loss.loss(y, a) @ w
                continue
            d0, d1, d2 = loss.loss_derivatives(y, a)
            e0[s] = d0 @ w
            e1[s] = d1 @ w
            e2[s] = (loss.gauss_newton(d1, d2) if need == "gauss_newton" else d2) @ w
        return e0, e1, e2

    def _centred(self, objective, sd, v, need, out):
        """:meth:`_raw` where every predictor is centred at 0 (a cold start): the
        expectations are functions of ``sd`` alone, read from the table, or node
        pairs (half the nodes) on the per-row rules; written into ``out``."""
        e0, e1, e2 = out
        loss = objective.loss
        rows = np.arange(sd.shape[0])
        if self.n_nodes == "auto":
            inside = _CentredTable.covers(sd)
            if inside.any():
                table = centred_table(loss, need)
                for block in index_blocks(np.flatnonzero(inside), 1, _TABLE_CHUNK):
                    e0[block], d1, d2 = table(objective.y[block], sd[block])
                    if need != "value":
                        e1[block], e2[block] = d1, d2
            rows = np.flatnonzero(~inside)
        for s, z, w in _groups(v[rows], self.n_nodes):
            r = rows[s]
            e0[r], d1, d2 = loss.centred_expectations(objective.y[r], sd[r], z, w, need)
            if need != "value":
                e1[r], e2[r] = d1, d2
        return e0, e1, e2
