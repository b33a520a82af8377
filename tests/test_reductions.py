"""The small-array reductions (skvan._reductions) agree with numpy's (a zero's sign aside)."""

import numpy as np
import pytest

from skvan._reductions import (
    all_finite,
    all_of,
    any_of,
    last_max,
    last_sum,
    max_of,
    min_of,
)


def _arrays():
    rng = np.random.default_rng(0)
    x = rng.standard_normal(11)
    with_nan, with_inf = x.copy(), x.copy()
    with_nan[[3, 7]] = np.nan
    with_inf[5] = -np.inf
    signed_zeros = np.array([0.0, -0.0, -1.0])
    ties = np.array([2.0, -3.0, 2.0, -3.0])
    large = rng.standard_normal(100_000)
    return [x, with_nan, with_inf, signed_zeros, ties, large, rng.standard_normal((4, 6)),
            np.array([5.0]), np.zeros(3), (x > 0), np.zeros(4, dtype=bool),
            np.ones(4, dtype=bool), np.arange(-3, 4), np.empty(0), np.empty((0, 3))]


@pytest.mark.parametrize("a", _arrays(), ids=lambda a: f"{a.dtype}{a.shape}")
def test_the_reductions_agree_with_numpys(a):
    assert any_of(a) == bool(a.any())
    assert all_of(a) == bool(a.all())
    assert all_finite(a) == bool(np.isfinite(a).all())
    if not a.size:
        for reduce in (max_of, min_of):
            with pytest.raises(ValueError):
                reduce(a)
        return
    for ours, theirs in ((max_of(a), a.max()), (min_of(a), a.min())):
        assert np.asarray(ours).dtype == np.asarray(theirs).dtype
        if np.isnan(theirs):
            assert np.isnan(ours)
        else:
            assert ours == theirs


def test_any_of_takes_scalars():
    """A ridge may be one number or one per column."""
    assert not any_of(0.0) and any_of(1e-300) and any_of(np.float64(-2.0))
    assert any_of(np.nan)


@pytest.mark.parametrize("shape", [(7, 1), (50, 3), (4, 9, 5), (3, 2, 10)])
def test_last_axis_reductions_agree_with_numpys(shape):
    """A multinomial model's maxima and sums over the classes: the maximum exactly
    (NaN and inf propagated as by ``max``), the sum to round-off (its additions
    may be ordered differently)."""
    rng = np.random.default_rng(1)
    A = 10 * rng.standard_normal(shape)
    A.flat[[0, -1]] = np.nan, np.inf
    top = last_max(A)
    np.testing.assert_array_equal(top, A.max(axis=-1))
    assert top.shape == shape[:-1]
    B = np.nan_to_num(A, posinf=1.0)
    np.testing.assert_allclose(last_sum(B), B.sum(axis=-1), rtol=1e-14, atol=1e-13)
    assert not np.shares_memory(top, A)
