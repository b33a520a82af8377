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
  the predictors' spread shrinks and so does the cost.
- Beyond, where Gauss-Hermite converges only slowly (32 nodes: 6e-5 at ``sd=3``,
  2e-2 at ``sd=10``), the trapezoid rule in ``z`` on ``[-8.5, 8.5]`` with spacing
  ``min(0.5, 0.5 / sd)``, exponentially accurate for analytic integrands; at most
  :data:`MAX_GRID` nodes, which keeps 1e-12 up to ``sd ~ 60`` (beyond, only wide
  initial ``q``'s on unscaled data, the error grows).

Rows are grouped by their own ``sd`` (the buckets above, then powers of two for
the trapezoid rule) so that one wide row does not set the cost of all; each group
is processed in blocks of at most 16,384 node evaluations (128 KB temporaries):
the loss derivatives take 0.27 ms per 65,536 nodes in such blocks against 0.46 ms
in blocks of 65,536 (``python benchmarks/bench_passes.py``).
"""

import functools
import math

import numpy as np
from scipy.special import logsumexp

from ._base import LinearPredictorExpectation

#: ``(largest sd, Gauss-Hermite nodes)`` used by ``n_nodes="auto"``.
AUTO_NODES = ((1e-3, 2), (3e-2, 4), (0.2, 8), (0.5, 16), (0.8, 32))
#: Largest number of nodes of the trapezoid rule.
MAX_GRID = 2049
_HALF_WIDTH = 8.5
_CHUNK = 1 << 14


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
        log_p[s] = logsumexp(log_w - np.logaddexp(0.0, -a), axis=1)
        log_q[s] = logsumexp(log_w - np.logaddexp(0.0, a), axis=1)
    return log_p, log_q


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
            # Every predictor centred at 0 (a cold start): half the nodes suffice.
            for s, z, w in _groups(v, self.n_nodes):
                e0[s], d1, d2 = loss.centred_expectations(objective.y[s], sd[s], z, w, need)
                if need != "value":
                    e1[s], e2[s] = d1, d2
            return e0, e1, e2
        for s, z, w in _groups(v, self.n_nodes):
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
