"""Expectation estimators: quadrature vs closed form vs Monte Carlo."""

import numpy as np
import pytest

from skvan.expectations import (
    ClosedForm,
    GaussHermiteQuadrature,
    MonteCarlo,
    gaussian_average,
    log_expected_sigmoid,
    make_expectation,
)
from skvan.objectives import (
    L2Penalty,
    LinearModelObjective,
    LogisticLoss,
    NoPenalty,
    Objective,
    SquaredLoss,
)
from skvan.van import DiagonalGaussian, FullGaussian, make_family


def _problem(loss, rng, n=300, p=4):
    X = np.c_[rng.randn(n, p - 1), np.ones(n)]
    theta = rng.randn(p)
    if isinstance(loss, LogisticLoss):
        y = np.where(rng.rand(n) < 1 / (1 + np.exp(-X @ theta)), 1.0, -1.0)
    else:
        y = X @ theta + rng.randn(n)
    pen = L2Penalty(np.r_[np.full(p - 1, 0.5), 0.0])
    return LinearModelObjective(X, y, loss, rng.uniform(0.5, 1.5, n), pen)


def _family(kind, rng, p=4, scale=0.3):
    mean = rng.randn(p)
    if kind == "full":
        A = rng.randn(p, p)
        return FullGaussian(mean, np.linalg.inv(scale**2 * (A @ A.T / p + 0.5 * np.eye(p))))
    return DiagonalGaussian(mean, 1.0 / (scale**2 * rng.uniform(0.5, 1.5, p)))


@pytest.mark.parametrize("kind", ["full", "diag"])
@pytest.mark.parametrize("curvature", ["exact", "gauss_newton"])
def test_quadrature_agrees_with_monte_carlo(kind, curvature, rng):
    """Tolerance: 2% of each quantity's scale, with 40,000 draws (MC error ~0.5%)."""
    obj = _problem(LogisticLoss(), rng)
    fam = _family(kind, rng)
    quad = GaussHermiteQuadrature()(obj, fam, curvature)
    mc = MonteCarlo(40_000)(obj, fam, curvature, np.random.RandomState(1))
    assert abs(quad.value - mc.value) < 0.02 * abs(quad.value)
    np.testing.assert_allclose(mc.gradient, quad.gradient, atol=0.02 * np.abs(quad.gradient).max())
    np.testing.assert_allclose(mc.curvature, quad.curvature, atol=0.02 * np.abs(quad.curvature).max())


@pytest.mark.parametrize("kind", ["full", "diag"])
@pytest.mark.parametrize("curvature", ["exact", "gauss_newton"])
def test_closed_form_equals_quadrature_for_squared_loss(kind, curvature, rng):
    obj = _problem(SquaredLoss(), rng)
    fam = _family(kind, rng)
    cf = ClosedForm()(obj, fam, curvature)
    quad = GaussHermiteQuadrature()(obj, fam, curvature)
    assert np.isclose(cf.value, quad.value, rtol=1e-12)
    np.testing.assert_allclose(cf.gradient, quad.gradient, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(cf.curvature, quad.curvature, rtol=1e-10, atol=1e-10)


def test_closed_form_squared_loss_matches_formula(rng):
    """E[1/2 ||y - X theta||^2] = 1/2 ||y - X mu||^2 + 1/2 tr(X Sigma X^T)."""
    obj = _problem(SquaredLoss(), rng)
    obj.penalty = NoPenalty()
    fam = _family("full", rng)
    obj.sample_weight = np.ones(obj.n_samples)
    X, y, mu, S = obj.X, obj.y, fam.mean, fam.sigma
    cf = ClosedForm()(obj, fam)
    assert np.isclose(cf.value, 0.5 * np.sum((y - X @ mu) ** 2) + 0.5 * np.trace(X @ S @ X.T))
    np.testing.assert_allclose(cf.gradient, X.T @ (X @ mu - y))
    np.testing.assert_allclose(cf.curvature, X.T @ X)


def test_closed_form_refuses_logistic_loss_with_a_clear_message(rng):
    obj = _problem(LogisticLoss(), rng)
    with pytest.raises(TypeError, match="no closed-form Gaussian expectation; use expectation='quadrature'"):
        ClosedForm().check_objective(obj)


def test_quadrature_refuses_non_linear_objectives():
    class Quadratic(Objective):
        n_params = 2

        def value(self, t):
            return float(t @ t)

        def gradient(self, t):
            return 2 * t

        def hessian(self, t):
            return 2 * np.eye(2)

    with pytest.raises(TypeError, match="use expectation='mc'"):
        GaussHermiteQuadrature().check_objective(Quadratic())


def test_monte_carlo_generic_path_equals_vectorised_linear_path(rng):
    """The per-draw loop over value/gradient/hessian and the X Theta^T shortcut
    average the same draws; without a penalty they must agree to rounding."""
    obj = _problem(LogisticLoss(), rng)
    obj.penalty = NoPenalty()
    fam = _family("full", rng)

    class Wrapped(Objective):
        n_params = obj.n_params
        value, gradient, hessian = obj.value, obj.gradient, obj.hessian

    fast = MonteCarlo(7)(obj, fam, "exact", np.random.RandomState(3))
    slow = MonteCarlo(7)(Wrapped(), fam, "exact", np.random.RandomState(3))
    assert np.isclose(fast.value, slow.value, rtol=1e-12)
    np.testing.assert_allclose(fast.gradient, slow.gradient, rtol=1e-10)
    np.testing.assert_allclose(fast.curvature, slow.curvature, rtol=1e-10)


def _logistic_funcs():
    loss = LogisticLoss()
    return (lambda a: loss.loss(1.0, a), lambda a: loss.derivatives(1.0, a)[0],
            lambda a: loss.derivatives(1.0, a)[1])


def _reference(func, m, v):
    """A much finer trapezoid rule: spacing min(0.02, 0.1 / sd) sd-units over +-12 sd."""
    dz = min(0.02, 0.1 / np.sqrt(v.max()))
    z = np.arange(-int(12 / dz), int(12 / dz) + 1) * dz
    w = np.exp(-0.5 * z**2)
    w /= w.sum()
    return func(m[:, None] + np.sqrt(v)[:, None] * z) @ w


@pytest.mark.parametrize("sd", [1e-4, 1e-3, 0.01, 0.03, 0.1, 0.2, 0.5, 0.8, 1.0, 3.0, 10.0, 50.0])
def test_auto_rule_keeps_logistic_error_below_1e12(sd):
    """The accuracy claimed in skvan/expectations/_quadrature.py."""
    m = np.linspace(-20, 20, 161)
    v = np.full_like(m, sd**2)
    for func in _logistic_funcs():
        assert np.abs(gaussian_average(func, m, v) - _reference(func, m, v)).max() < 1e-12


@pytest.mark.parametrize("sd, tol", [(0.8, 1e-12), (3.0, 1e-4), (10.0, 3e-2)])
def test_fixed_32_hermite_nodes_lose_accuracy_for_wide_predictors(sd, tol):
    """Why "auto" switches to the trapezoid rule: 32 Gauss-Hermite nodes."""
    m = np.linspace(-20, 20, 161)
    v = np.full_like(m, sd**2)
    errors = [np.abs(gaussian_average(f, m, v, 32) - _reference(f, m, v)).max() for f in _logistic_funcs()]
    assert max(errors) < tol
    if sd > 1:
        assert max(errors) > 1e-8


def test_auto_rule_node_counts():
    from skvan.expectations import AUTO_NODES, MAX_GRID, gaussian_rule

    for bound, k in AUTO_NODES:
        assert gaussian_rule(bound)[0].size == k
    assert gaussian_rule(3.0)[0].size == 103
    assert gaussian_rule(1e6)[0].size == MAX_GRID
    for sd in (0.0, 0.1, 3.0, 1e6):
        z, w = gaussian_rule(sd)
        assert np.isclose(w.sum(), 1.0) and np.all(w > 0)
        assert np.isclose(w @ z**2, 1.0)  # unit variance


def test_each_wide_row_gets_the_smallest_trapezoid_rule_that_covers_it():
    """Rows with sd in (0.8 * 2^(k-1), 0.8 * 2^k] share the rule for 0.8 * 2^k (a
    row just above 0.8 used to get the rule for 3.2: twice the nodes it needs),
    and keep the 1e-12 accuracy at the top of their bucket."""
    from skvan.expectations import gaussian_rule
    from skvan.expectations._quadrature import _groups

    sd = np.array([0.81, 1.6, 1.61, 3.2, 3.3, 6.4, 12.0])
    expected = [1.6, 1.6, 3.2, 3.2, 6.4, 6.4, 12.8]
    many = np.repeat(sd, 1000)  # enough rows for the buckets to pay (test below)
    for rows, z, _ in _groups(many**2, "auto"):
        for i in np.atleast_1d(np.arange(many.size)[rows]):
            assert z.size == gaussian_rule(expected[i // 1000])[0].size
    m = np.repeat(np.linspace(-20, 20, 41), sd.size)
    v = np.tile(sd**2, 41)
    for func in _logistic_funcs():
        assert np.abs(gaussian_average(func, m, v) - _reference(func, m, v)).max() < 1e-12


def test_few_rows_share_the_widest_rows_rule():
    """Where all rows fit one chunk on the widest row's rule, they take it (one
    pass instead of one per bucket), as accurate for the narrower rows."""
    from skvan.expectations import gaussian_rule
    from skvan.expectations._quadrature import _CHUNK, _groups

    sd = np.array([0.01, 0.3, 0.81, 3.3])
    groups = list(_groups(sd**2, "auto"))
    assert len(groups) == 1 and groups[0][1].size == gaussian_rule(6.4)[0].size
    wide = np.repeat(sd, _CHUNK // gaussian_rule(6.4)[0].size + 1)
    assert len({z.size for _, z, _ in _groups(wide**2, "auto")}) == 4
    m, v = np.linspace(-20, 20, 64), np.tile(sd**2, 16)  # 64 x 219 nodes: one chunk
    assert len(list(_groups(v, "auto"))) == 1
    for func in _logistic_funcs():
        assert np.abs(gaussian_average(func, m, v) - _reference(func, m, v)).max() < 1e-12


def test_the_scalar_bucket_is_the_array_bucket():
    """``_groups`` decides "one rule for all rows" from the smallest and largest
    variance with a scalar twin of the per-row bucketing: they must agree,
    bucket bounds included."""
    from skvan.expectations._quadrature import AUTO_NODES, _bucket, _scalar_bucket

    rng = np.random.RandomState(0)
    bounds = np.array([b for b, _ in AUTO_NODES] + [0.8 * 2.0**k for k in range(1, 8)])
    v = np.concatenate([np.exp(rng.uniform(-40, 12, 20000)), bounds**2,
                        np.nextafter(bounds**2, np.inf), [0.0]])
    expected = _bucket(np.sqrt(v))
    assert [_scalar_bucket(float(x)) for x in v] == expected.tolist()
    assert _scalar_bucket(np.nan) is None and _scalar_bucket(np.inf) is None


@pytest.mark.parametrize("need", ["value", "exact", "gauss_newton"])
def test_centred_logistic_expectations_match_the_whole_rule(need):
    """At a zero mean (a cold start) the quadrature uses node pairs and E[l'] =
    -y/2; the result is the whole rule's to round-off, for every bucket."""
    from skvan.expectations._quadrature import _groups

    loss = LogisticLoss()
    rng = np.random.RandomState(0)
    sd = np.exp(rng.uniform(-9, 3.5, 2000))
    y = np.sign(rng.randn(2000))
    for rows, z, w in _groups(sd**2, "auto"):
        d0, d1, d2 = loss.loss_derivatives(y[rows, None], sd[rows, None] * z)
        c = loss.gauss_newton(d1, d2) if need == "gauss_newton" else d2
        centred = loss.centred_expectations(y[rows], sd[rows], z, w, need)
        np.testing.assert_allclose(centred[0], d0 @ w, rtol=1e-13, atol=1e-15)
        if need != "value":
            np.testing.assert_allclose(centred[1], d1 @ w, rtol=1e-13, atol=1e-15)
            np.testing.assert_allclose(centred[2], c @ w, rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("need", ["value", "exact", "gauss_newton"])
def test_centred_table_matches_a_finer_rule(need):
    """The cold-start table against the trapezoid rule with spacing 0.1 / max(sd, 1)
    at random sds over its range and at its edges: within 1e-13 relative."""
    from skvan.expectations._quadrature import _TABLE_RANGE, _trapezoid_rule, centred_table

    loss = LogisticLoss()
    rng = np.random.RandomState(0)
    lo, hi = _TABLE_RANGE
    sd = np.r_[np.exp2(rng.uniform(lo, hi, 300)), 2.0**lo, np.nextafter(2.0**hi, 0)]
    y = np.sign(rng.randn(sd.size))
    table = centred_table(loss, need)
    assert table.covers(sd).all()
    got = table(y, sd)
    for i in range(sd.size):
        z, w = _trapezoid_rule.__wrapped__(int(np.ceil(8.5 * max(sd[i], 1.0) / 0.1)))
        ref = loss.centred_expectations(y[i:i + 1], sd[i:i + 1], z, w, need)
        for a, b in zip(got, ref):
            if b is not None:
                np.testing.assert_allclose(a[i], b[0], rtol=1e-13, atol=0)


@pytest.mark.parametrize("need", ["exact", "gauss_newton"])
def test_cold_quadrature_equals_the_whole_rule_inside_and_outside_the_table(need):
    """A cold pass mixes the table (sd in [2^-10, 2^7)) and the per-row rules (0,
    1e-5, 200): every row matches the whole rule on its own within the rules'
    absolute error, 1e-12 (the table is closer to the truth: the test above)."""
    from skvan.expectations._quadrature import _groups

    rng = np.random.RandomState(1)
    sd = np.r_[0.0, 1e-5, 200.0, np.exp(rng.uniform(-8, 4.5, 500))]
    y = np.sign(rng.randn(sd.size))
    f = LinearModelObjective(np.zeros((sd.size, 1)), y, LogisticLoss())
    cold = GaussHermiteQuadrature()._raw(f, np.zeros(sd.size), sd**2, need)
    loss = f.loss
    for rows, z, w in _groups(sd**2, "auto"):
        d0, d1, d2 = loss.loss_derivatives(y[rows, None], sd[rows, None] * z)
        c = loss.gauss_newton(d1, d2) if need == "gauss_newton" else d2
        for got, ref in zip(cold, (d0 @ w, d1 @ w, c @ w)):
            np.testing.assert_allclose(got[rows], ref, rtol=0, atol=1e-12)


def test_quadrature_takes_the_centred_path_only_at_a_zero_mean(rng, monkeypatch):
    """A cold start uses the centred table; any nonzero predictor mean the whole rule."""
    import skvan.expectations._quadrature as quadrature

    X = rng.randn(50, 3)
    f = LinearModelObjective(X, np.sign(rng.randn(50)), LogisticLoss())
    calls = []
    original = quadrature.centred_table
    monkeypatch.setattr(quadrature, "centred_table",
                        lambda *a, **k: calls.append(1) or original(*a, **k))
    quad = GaussHermiteQuadrature()
    cold = quad(f, FullGaussian(np.zeros(3), np.eye(3)))
    assert calls
    calls.clear()
    warm = quad(f, FullGaussian(np.full(3, 1e-300), np.eye(3)))
    assert not calls
    np.testing.assert_allclose(cold.gradient, warm.gradient, rtol=1e-12)
    np.testing.assert_allclose(cold.curvature, warm.curvature, rtol=1e-12)


def test_wide_rows_are_chunked_without_changing_results(rng, monkeypatch):
    import skvan.expectations._quadrature as quad

    m, v = rng.randn(1000), rng.uniform(0, 25, 1000) * (rng.rand(1000) < 0.5)
    whole = quad.log_expected_sigmoid(m, v)
    monkeypatch.setattr(quad, "_CHUNK", 1000)
    chunked = quad.log_expected_sigmoid(m, v)
    np.testing.assert_allclose(whole[0], chunked[0], rtol=1e-14)
    # grouped rows give the same values as each row alone
    for i in (0, 1, 2, 500):
        alone = quad.log_expected_sigmoid(m[i : i + 1], v[i : i + 1])
        assert np.isclose(alone[0][0], whole[0][i], rtol=1e-14)


def test_log_expected_sigmoid_matches_monte_carlo_and_never_underflows(rng):
    m = np.array([-2.0, 0.0, 0.5, 3.0, 900.0, -900.0])
    v = np.array([0.5, 1.0, 0.2, 0.01, 0.0, 4.0])
    log_p, log_q = log_expected_sigmoid(m, v)
    assert np.all(np.isfinite(log_p)) and np.all(np.isfinite(log_q))
    np.testing.assert_allclose(np.exp(log_p) + np.exp(log_q), 1.0, rtol=1e-12)
    a = m[:4] + np.sqrt(v[:4]) * rng.randn(400_000, 1)
    np.testing.assert_allclose(np.exp(log_p[:4]), (1 / (1 + np.exp(-a))).mean(0), atol=3e-3)
    assert np.isclose(log_q[4], -900.0)


def test_value_along_a_direction_is_the_expected_objective(rng):
    obj = _problem(SquaredLoss(), rng)
    fam = _family("full", rng)
    est = GaussHermiteQuadrature()
    shifted = FullGaussian(fam.mean + 0.1, fam.precision)
    assert np.isclose(est.value(obj, fam, fam.mean + 0.1), ClosedForm()(obj, shifted).value)


def test_make_expectation_names():
    assert isinstance(make_expectation("exact"), ClosedForm)
    assert isinstance(make_expectation("quadrature"), GaussHermiteQuadrature)
    assert make_expectation("mc", 5).n_mc_samples == 5
    with pytest.raises(ValueError, match="expectation must be"):
        make_expectation("laplace")



def test_auto_quadrature_equals_many_fixed_nodes(rng):
    obj = _problem(LogisticLoss(), rng)
    for scale in (1e-4, 0.01, 0.1, 0.4):  # wider ones: 120 Hermite nodes are not exact
        fam = _family("full", rng, scale=scale)
        auto = GaussHermiteQuadrature()(obj, fam)
        fixed = GaussHermiteQuadrature(120)(obj, fam)
        assert np.isclose(auto.value, fixed.value, rtol=1e-11)
        np.testing.assert_allclose(auto.gradient, fixed.gradient, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("kind", ["full", "diag"])
def test_closed_form_quadratic_objective_equals_the_linear_path(kind, rng):
    """The O(p^3) sufficient-statistics path and the O(n p^2) per-sample path of the
    same penalised least squares give the same expectations."""
    from skvan.objectives import L1Penalty, QuadraticObjective

    X, y = rng.randn(200, 4), rng.randn(200)
    pen = L1Penalty(np.array([3.0, 0.0, 1.0, 2.0]))
    fam = _family(kind, rng)
    for curvature in ("exact", "gauss_newton"):
        a = ClosedForm()(QuadraticObjective.from_data(X, y, penalty=pen), fam, curvature)
        b = ClosedForm()(LinearModelObjective(X, y, SquaredLoss(), penalty=pen), fam, "exact")
        assert np.isclose(a.value, b.value, rtol=1e-12)
        np.testing.assert_allclose(a.gradient, b.gradient, rtol=1e-10, atol=1e-10)
        if curvature == "exact":
            np.testing.assert_allclose(a.curvature, b.curvature, rtol=1e-10, atol=1e-10)
        est = ClosedForm()
        assert np.isclose(est.value(QuadraticObjective.from_data(X, y, penalty=pen), fam, fam.mean), a.value)


@pytest.mark.parametrize("need", ["value", "exact", "gauss_newton"])
def test_narrow_expectations_keep_logistic_error_below_1e12(need):
    """The second-order expansion for ``sd <= 1e-3`` (``narrow_expectations``),
    against the fine reference, both labels, through the quadrature's "auto"
    rule where every row is that narrow (VAN's later passes)."""
    from skvan.expectations._quadrature import NARROW_VARIANCE

    loss = LogisticLoss()
    m = np.linspace(-40, 40, 321)
    for label in (-1.0, 1.0):
        y = np.full_like(m, label)
        funcs = [lambda a: loss.loss(label, a), lambda a: loss.derivatives(label, a)[0],
                 lambda a: loss.derivatives(label, a)[1] if need == "exact"
                 else loss.derivatives(label, a)[0] ** 2]
        for sd in (0.0, 1e-6, 1e-4, 1e-3):
            v = np.full_like(m, sd**2)
            got = loss.narrow_expectations(y, m, v, need)
            for k, func in enumerate(funcs[:1] if need == "value" else funcs):
                assert np.abs(got[k] - _reference(func, m, np.maximum(v, 1e-300))).max() < 1e-12
    assert NARROW_VARIANCE == 1e-6
    obj = LinearModelObjective(np.column_stack([m, np.ones_like(m)]), np.sign(m + 0.5),
                               LogisticLoss())
    family = FullGaussian(np.array([0.3, -0.2]), np.diag([1e10, 1e10]))
    assert family.predictor_variance(obj.X).max() <= NARROW_VARIANCE  # every row narrow
    auto = GaussHermiteQuadrature()(obj, family)
    fixed = GaussHermiteQuadrature(n_nodes=8)(obj, family)
    assert abs(auto.value - fixed.value) < 1e-12 * len(m)
    np.testing.assert_allclose(auto.gradient, fixed.gradient, rtol=0, atol=1e-12 * len(m))
    np.testing.assert_allclose(auto.curvature, fixed.curvature, rtol=0, atol=1e-12 * len(m))


@pytest.mark.parametrize("vo", [True, False])
def test_quadrature_takes_the_expansion_row_by_row_under_vo(vo):
    """Under VO rows whose predictor variance is at most ``carry_variance`` (0.1)
    take the second-order expansion and the others the nodes, each row what its
    method gives it alone (so a pass made chunk by chunk takes the same); under VI
    only rows within ``NARROW_VARIANCE`` do, the rest keep the 1e-12 rules.
    Between the two bounds the expansion differs from the rules by about
    ``v^2 / 8``: more than round-off, less than the carrying's ``5e-3``."""
    from skvan.expectations._quadrature import NARROW_VARIANCE

    loss = LogisticLoss()
    m = np.linspace(-6, 6, 40)
    y = np.where(np.arange(40) % 3 == 0, 1.0, -1.0)
    v = np.where(np.arange(40) % 2 == 0, 0.05, 0.5)  # narrow rows under VO only, wide
    f = LinearModelObjective(np.ones((40, 1)), y, loss)
    estimator = GaussHermiteQuadrature()
    estimator._vo = vo
    assert NARROW_VARIANCE < 0.05 <= estimator.carry_variance < 0.5
    for need in ("value", "exact", "gauss_newton"):
        got = estimator._raw(f, m, v, need)
        taylor = loss.narrow_expectations(y[::2], m[::2], v[::2], need)
        rules = [GaussHermiteQuadrature()._raw(LinearModelObjective(np.ones((20, 1)), y[rows],
                                                                    loss), m[rows], v[rows], need)
                 for rows in (slice(0, None, 2), slice(1, None, 2))]
        for k in range(1 if need == "value" else 3):
            np.testing.assert_allclose(got[k][1::2], rules[1][k], rtol=1e-13, atol=1e-15)
            narrow = taylor[k] if vo else rules[0][k]
            np.testing.assert_allclose(got[k][::2], narrow, rtol=1e-13, atol=1e-15)
            gap = np.abs(taylor[k] - rules[0][k]).max()
            assert 1e-10 < gap < 0.05**2 / 8


def _carry_problem():
    from sklearn.datasets import make_classification

    return make_classification(4000, 30, n_informative=10, random_state=0)


def _spy_on_carrying(monkeypatch, check=None):
    """Wrap ``LinearPredictorExpectation._carried``: ``check(estimator, objective,
    family, carried)`` on each carried spread; returns the list of whether each
    call carried."""
    from skvan.expectations._base import LinearPredictorExpectation

    calls, original = [], LinearPredictorExpectation._carried

    def carried(self, objective, family):
        v = original(self, objective, family)
        if v is not None and check is not None:
            check(self, objective, family, v)
        calls.append(v is not None)
        return v

    monkeypatch.setattr(LinearPredictorExpectation, "_carried", carried)
    return calls


def _assert_carrying_keeps_the_fit(X, y, monkeypatch):
    """The carried fit against the one that passes every iteration: a stop at
    most one iteration apart, both within ``tol`` (relative) of the MAP (a fit at
    ``tol=1e-10``), as the fits promise. The paths differ, the limit does not: on
    the problems below the carried fits are 1.3e-6 to 2.2e-5 from the MAP, those
    that pass every iteration 2.9e-6 to 1.2e-5."""
    import skvan.expectations._base as base
    from skvan import VANLogisticRegression
    from skvan.expectations import GaussHermiteQuadrature, SoftmaxCubature

    carried = VANLogisticRegression().fit(X, y)
    for estimator in (base.LinearPredictorExpectation, GaussHermiteQuadrature, SoftmaxCubature):
        monkeypatch.setattr(estimator, "carry_variance", -1.0)
    passed = VANLogisticRegression().fit(X, y)
    exact = VANLogisticRegression(tol=1e-10, max_iter=200).fit(X, y)
    assert abs(int(carried.n_iter_[0]) - int(passed.n_iter_[0])) <= 1
    scale = np.abs(exact.coef_).max()
    for fit in (carried, passed):
        for name in ("coef_", "intercept_"):
            assert np.abs(getattr(fit, name) - getattr(exact, name)).max() <= fit.tol * scale


def test_carried_variances_bound_and_follow_the_passes_they_skip(monkeypatch):
    """Under VO each carried variance lies within the pass's ``v_s`` of the
    variance a pass would compute (``[0, v_s]`` both), and the fit carries at
    least once on a problem of 4,000 rows."""
    from skvan import VANLogisticRegression

    def check(estimator, objective, family, v):
        v_s = estimator._last_pass[3]
        exact = family.predictor_variance(objective.X)
        assert np.all(exact <= v_s * (1 + 1e-9) + 1e-300)
        assert np.all((v >= 0) & (v <= v_s))
        assert np.all(np.abs(v - exact) <= v_s * (1 + 1e-9))

    calls = _spy_on_carrying(monkeypatch, check)
    VANLogisticRegression().fit(*_carry_problem())
    assert any(calls)


@pytest.mark.parametrize("data", ["generated", "breast_cancer"])
def test_carrying_variances_keeps_the_fit_within_its_tolerance_of_the_map(data, monkeypatch):
    """The approximation changes the VO path, not its limit."""
    from sklearn.datasets import load_breast_cancer
    from sklearn.preprocessing import StandardScaler

    if data == "generated":
        X, y = _carry_problem()
    else:
        X, y = load_breast_cancer(return_X_y=True)
        X = StandardScaler().fit_transform(X)
    _assert_carrying_keeps_the_fit(X, y, monkeypatch)


def test_variances_are_not_carried_under_vi(monkeypatch):
    from skvan import VANLogisticRegression

    calls = _spy_on_carrying(monkeypatch)
    X, y = _carry_problem()
    VANLogisticRegression(objective="vi").fit(X, y)
    assert calls and not any(calls)
    calls.clear()
    VANLogisticRegression().fit(X, y)
    assert any(calls)


def test_a_multinomial_fit_carries_covariances_below_those_of_the_last_pass(monkeypatch):
    """The rows' ``K x K`` predictor covariances: under VO each lies below the
    last pass's in the Loewner order, and the fit that carries them is within
    its tolerance of the MAP, as the fit that passes every iteration is."""
    from sklearn.datasets import make_classification

    from skvan import VANLogisticRegression
    from skvan.expectations._cubature import predictor_covariances

    def check(estimator, objective, family, V):
        V_s = estimator._last_pass[3]
        exact = predictor_covariances(objective.X, objective.n_classes, family)
        gap = np.linalg.eigvalsh(V_s - exact).min(axis=1)
        assert np.all(gap >= -1e-9 * np.einsum("ikk->i", V_s))
        assert np.all(np.linalg.eigvalsh(V_s - V).min(axis=1) >= -1e-15)

    X, y = make_classification(3000, 12, n_informative=6, n_classes=3, random_state=0)
    calls = _spy_on_carrying(monkeypatch, check)
    VANLogisticRegression().fit(X, y)
    assert any(calls)
    monkeypatch.undo()
    _assert_carrying_keeps_the_fit(X, y, monkeypatch)


@pytest.mark.parametrize("kind", ["full", "diag"])
def test_gaussian_prior_term_closed_form_against_monte_carlo(kind):
    """GaussianPriorTerm adds E_q[r], E_q[grad r] and P_0 for r the prior's
    quadratic: against Monte Carlo under q and finite differences of its value in
    the mean, and it leaves the inner estimator's curvature as it was."""
    from skvan.expectations import ClosedForm, GaussianPriorTerm
    from skvan.objectives import QuadraticObjective

    rng = np.random.RandomState(0)
    p = 4
    A = rng.standard_normal((p, p))
    P0 = A @ A.T + np.eye(p) if kind == "full" else rng.uniform(0.5, 2.0, p)
    m0 = rng.standard_normal(p)
    B = rng.standard_normal((p, p))
    precision = B @ B.T + p * np.eye(p) if kind == "full" else rng.uniform(1.0, 3.0, p)
    family = make_family(kind, rng.standard_normal(p), precision)
    G = np.eye(p)
    f = QuadraticObjective(G, np.zeros(p), 0.0)
    inner = ClosedForm()
    bare = inner(f, family)
    kept = bare.curvature.copy()
    e = GaussianPriorTerm(inner, m0, P0)(f, family)
    np.testing.assert_array_equal(bare.curvature, kept)

    def r(theta):  # (n, p) -> (n,)
        d = theta - m0
        return 0.5 * np.einsum("ni,ni->n", d, d * P0 if kind == "diag" else d @ P0)

    theta = family.sample(400_000, rng)
    values = r(theta)
    prior_value = e.value - bare.value
    err = np.std(values) / np.sqrt(len(values))
    assert abs(prior_value - values.mean()) < 5 * err
    grad_mc = ((theta - m0) * P0 if kind == "diag" else (theta - m0) @ P0).mean(0)
    np.testing.assert_allclose(e.gradient - bare.gradient, grad_mc, atol=0.02)
    extra = e.curvature - bare.curvature
    np.testing.assert_allclose(extra, P0, rtol=1e-12, atol=1e-12)
    # The value at another mean (same covariance) and its finite differences.
    estimator = GaussianPriorTerm(inner, m0, P0)
    h = 1e-6
    fd = np.array([(estimator.value(f, family, family.mean + h * u)
                    - estimator.value(f, family, family.mean - h * u)) / (2 * h)
                   for u in np.eye(p)])
    np.testing.assert_allclose(fd, e.gradient, rtol=1e-6, atol=1e-8)
    assert estimator.value(f, family, family.mean) == pytest.approx(e.value, rel=1e-12)


@pytest.mark.parametrize("form", ["full", "diag"])
def test_point_mass_is_the_narrow_limit_of_quadrature(form, rng):
    """PointMass gives f's value, gradient and Hessian at the mean (its diagonal
    for a diagonal family), which quadrature reaches as q narrows to a point:
    at predictor variances of about 1e-12 they agree to the O(v) term and round-off."""
    from skvan.expectations import PointMass, SoftmaxCubature
    from skvan.objectives import MultinomialObjective

    X = np.c_[rng.randn(200, 3), np.ones(200)]
    Y = np.eye(3)[rng.randint(0, 3, 200)]
    problems = [(_problem(LogisticLoss(), rng), GaussHermiteQuadrature()),
                (MultinomialObjective(X, Y, penalty=L2Penalty(np.ones(12))), SoftmaxCubature())]
    for f, quadrature in problems:
        mean = 0.3 * rng.randn(f.n_params)
        scale = 1e12 * f.max_row_squared_norm() * f.n_params
        q = make_family(form, mean, scale * (np.eye(f.n_params) if form == "full"
                                             else np.ones(f.n_params)))
        point, narrow = PointMass()(f, q), quadrature(f, q)
        H = f.hessian(mean)
        # (value, gradient and Hessian come from one pass, in another order of sums)
        np.testing.assert_allclose(point.value, f.value(mean), rtol=1e-13)
        g = f.gradient(mean)
        np.testing.assert_allclose(point.gradient, g, rtol=1e-13, atol=1e-15 * np.abs(g).max())
        np.testing.assert_allclose(point.curvature, H if form == "full" else np.diag(H),
                                   rtol=1e-13, atol=1e-15 * np.abs(H).max())
        assert PointMass().value(f, q, mean) == f.value(mean)
        np.testing.assert_allclose(narrow.value, point.value, rtol=1e-12)
        np.testing.assert_allclose(narrow.gradient, point.gradient, rtol=0,
                                   atol=1e-12 * np.abs(point.gradient).max())
        np.testing.assert_allclose(narrow.curvature, point.curvature, rtol=0,
                                   atol=1e-12 * np.abs(point.curvature).max())
