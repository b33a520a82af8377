"""Reductions of small arrays without ``ufunc.reduce``'s fixed cost.

``a.any()``, ``a.all()``, ``a.max()`` and ``a.min()`` go through numpy's
Python-level ``_methods`` and ``ufunc.reduce``, whose fixed cost is several
times that of these, which count with ``np.count_nonzero`` and index with
``argmax``/``argmin`` (``python benchmarks/bench_passes.py --reductions``). A
small Lasso fit makes dozens of such reductions, in its KKT checks, set-up and
iteration. The results are the same: a count of nonzeros is what ``any`` and
``all`` test, and ``argmax`` returns the first maximum (the first NaN, where
``max`` returns NaN). Only a zero's sign can differ (``max`` of ``-0.0`` and
``0.0`` may be either), which no caller's comparison sees. On large arrays
these cost about what numpy's reductions do.

:func:`last_max` and :func:`last_sum` reduce over a short last axis (the ``K``
classes of a multinomial model's rows): ``ufunc.reduce`` along an axis of a few
entries runs an inner loop per row, several times slower than ``K`` elementwise
operations over all the rows (``python benchmarks/bench_passes.py --reductions``).
"""

import numpy as np


def any_of(a):
    """``a.any()``: whether some entry is nonzero (NaN counts)."""
    return np.count_nonzero(a) > 0


def all_of(a):
    """``a.all()``: whether every entry of the array ``a`` is nonzero (True for
    an empty ``a``)."""
    return np.count_nonzero(a) == a.size


def all_finite(a):
    """``np.isfinite(a).all()``."""
    finite = np.isfinite(a)
    return np.count_nonzero(finite) == finite.size


def max_of(a):
    """``a.max()`` over every entry (NaN if some entry is NaN; a ValueError for
    an empty ``a``)."""
    return a.flat[a.argmax()] if a.ndim != 1 else a[a.argmax()]


def min_of(a):
    """``a.min()`` over every entry (NaN if some entry is NaN; a ValueError for
    an empty ``a``)."""
    return a.flat[a.argmin()] if a.ndim != 1 else a[a.argmin()]


def last_max(A):
    """``A.max(axis=-1)`` for a short last axis: ``K - 1`` elementwise maxima over
    every leading index (NaN propagates, as in ``max``)."""
    out = A[..., 0].copy()
    for k in range(1, A.shape[-1]):
        np.maximum(out, A[..., k], out=out)
    return out


def last_sum(A):
    """``A.sum(axis=-1)`` for a short last axis (``einsum``'s summation, which does
    not run a reduction loop per row; the order of the additions may differ)."""
    return np.einsum("...k->...", A)
