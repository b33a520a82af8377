"""The multinomial model (issue 13): derivatives, the K-dimensional expectations
against Monte Carlo, scikit-learn's optimum, class weights, VI and streaming."""

import warnings

import numpy as np
import pytest
from scipy.optimize import approx_fprime, check_grad
from sklearn.datasets import load_digits, load_iris, load_wine
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import StandardScaler

from skvan import ActiveVANClassifier, VANLogisticRegression
from skvan.active import bald_sampling, entropy_sampling
from skvan.expectations import MonteCarlo, SoftmaxCubature, expected_log_softmax
from skvan.objectives import L2Penalty, MultinomialObjective, SoftmaxLoss
from skvan.van import DiagonalGaussian, FullGaussian


def _objective(rng, n=40, p=4, K=3, penalty=True):
    X = np.c_[rng.randn(n, p - 1), np.ones(n)]
    Y = np.eye(K)[rng.randint(K, size=n)]
    strength = np.tile(np.r_[np.full(p - 1, 0.7), 0.0], K) if penalty else None
    return MultinomialObjective(X, Y, rng.uniform(0.5, 2.0, n),
                                L2Penalty(strength) if penalty else None, multiplier=1.3)


def test_softmax_loss_derivatives_match_finite_differences(rng):
    loss = SoftmaxLoss()
    Y = np.eye(4)[[1]]
    a = rng.randn(1, 4)
    _, g, H = loss.loss_derivatives(Y, a)
    g_fd = approx_fprime(a[0], lambda t: loss.loss(Y, t[None])[0], 1e-7)
    np.testing.assert_allclose(g[0], g_fd, atol=1e-6)
    H_fd = np.array([approx_fprime(a[0], lambda t, k=k: loss.loss_derivatives(Y, t[None])[1][0, k], 1e-7)
                     for k in range(4)])
    np.testing.assert_allclose(H[0], H_fd, atol=1e-6)


@pytest.mark.parametrize("penalty", [True, False])
def test_objective_gradient_and_hessian_match_finite_differences(penalty, rng):
    """Including the gauge term that fixes the intercepts' common shift."""
    f = _objective(rng, penalty=penalty)
    for _ in range(3):
        theta = rng.randn(f.n_params)
        assert check_grad(f.value, f.gradient, theta) < 1e-5 * max(1, np.linalg.norm(f.gradient(theta)))
        H_fd = np.array([approx_fprime(theta, lambda t, j=j: f.gradient(t)[j], 1e-7)
                         for j in range(f.n_params)])
        np.testing.assert_allclose(f.hessian(theta), H_fd, rtol=1e-5, atol=1e-5)


def _monte_carlo_rows(Y, M, V, n_draws=200_000, seed=1):
    """Per-row ``E[l], E[l'], E[l'']`` by plain Monte Carlo, in chunks of draws."""
    loss, L = SoftmaxLoss(), np.linalg.cholesky(V)
    rng = np.random.default_rng(seed)
    sums = [0.0, 0.0, 0.0]
    for _ in range(n_draws // 20_000):
        A = M[:, None, :] + rng.standard_normal((20_000, M.shape[1])) @ np.swapaxes(L, 1, 2)
        for k, part in enumerate(loss.loss_derivatives(Y[:, None, :], A)):
            sums[k] = sums[k] + part.sum(axis=1)
    return [x / n_draws for x in sums]


@pytest.mark.parametrize("K, sd, tol", [(3, 0.1, 1e-3), (3, 0.5, 5e-3), (6, 0.1, 2e-3),
                                        (6, 0.5, 2e-2)])
def test_cubature_agrees_with_monte_carlo(K, sd, tol, rng):
    """The stated accuracy (skvan.expectations._cubature): per-row E[l], E[l'] and
    the curvature within ``tol`` (absolute; l' and l'' are O(1)) of 200,000 Monte
    Carlo draws (whose own error is about 1e-3 here) for predictors of largest
    standard deviation ``sd``: degree 5 for three classes, degree 3 for six. The
    curvature is the derivative of the rule's own value (consistent_curvature),
    the least accurate of the three."""
    n = 20
    M = 2 * rng.randn(n, K)
    R = rng.randn(n, K, K)
    V = R @ np.swapaxes(R, 1, 2)
    V *= sd**2 / np.linalg.eigvalsh(V)[:, -1][:, None, None]
    Y = np.eye(K)[rng.randint(K, size=n)]
    f = MultinomialObjective(np.ones((n, 1)), Y)
    e0, e1, e2 = SoftmaxCubature()._raw(f, M, V, "exact")
    m0, m1, m2 = _monte_carlo_rows(Y, M, V)
    np.testing.assert_allclose(e0, m0, atol=tol * np.abs(m0).max())
    np.testing.assert_allclose(e1, m1, atol=tol)
    np.testing.assert_allclose(e2, m2, atol=tol)


def _rows(rng, n, K, scale):
    """Means, one-hot targets and predictor covariances of trace about ``scale``."""
    M = 2 * rng.randn(n, K)
    R = rng.randn(n, K, K)
    V = R @ np.swapaxes(R, 1, 2) / K**2 * scale
    return M, np.eye(K)[rng.randint(K, size=n)], V


def _rule(Y, M, V, need):
    """The cubature rule on every row (no expansion), as SoftmaxCubature applies it."""
    from skvan.expectations._cubature import consistent_curvature, points

    A, w, roots = points(M, V)
    e0, e1, C, G = SoftmaxLoss().weighted_derivatives(Y[:, None, :], A, w, need)
    return e0, e1, consistent_curvature(G, C, w, roots) if need == "exact" else C


@pytest.mark.parametrize("K", [3, 10])
@pytest.mark.parametrize("need", ["exact", "gauss_newton"])
def test_second_order_expansion_agrees_with_the_rule_to_second_order(K, need, rng):
    """SoftmaxLoss.expansion (gradient and curvature to O(V^2), the value to
    O(V^3)) against the rule's average over its points: the difference shrinks as
    V^2 (100x per 10x in V), so each of the expansion's terms, the fourth
    cumulant's included, is right; a wrong first-order term would shrink only 10x.
    Against the degree-5 rule (three classes) the values' difference shrinks as
    V^3 (1000x): the value's second-order term is right too."""
    from skvan.expectations._cubature import points

    M, Y, V = _rows(rng, 30, K, 1.0)
    loss = SoftmaxLoss()
    errors = []
    for scale in (1e-3, 1e-4):
        A, w, _ = points(M, V * scale)
        rule = loss.weighted_derivatives(Y[:, None, :], A, w, need)[:3]
        taylor = loss.expansion(Y, M, V * scale, need)
        errors.append([np.abs(a - b).max() for a, b in zip(rule, taylor)])
    ratios = np.array(errors[0]) / np.array(errors[1])
    order = np.array([3 if K <= 4 else 2, 2, 2])
    assert np.all((ratios > 10.0 ** order / 2) & (ratios < 10.0 ** order * 2)), ratios


@pytest.mark.parametrize("K", [3, 10])
def test_expansion_curvature_is_the_derivative_of_its_value(K, rng):
    """The expansion's curvature is ``2 dE[l]/dV`` of its own value (Price's
    theorem, which VI's fixed point needs), by central differences along random
    symmetric directions: the value's second-order term makes it so."""
    M, Y, V = _rows(rng, 30, K, 1e-2)
    D = rng.randn(30, K, K)
    D += np.swapaxes(D, 1, 2)
    loss, h = SoftmaxLoss(), 1e-6
    up, down = (loss.expansion(Y, M, V + s * h * D, "value")[0] for s in (1, -1))
    curvature = loss.expansion(Y, M, V)[2]
    np.testing.assert_allclose((up - down) / (2 * h), 0.5 * np.einsum("iab,iab->i", curvature, D),
                               rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("K, narrow, wide", [(3, 5e-7, 1e-2), (10, 5e-3, 1.0)])
def test_cubature_takes_the_expansion_on_narrow_rows_only(K, narrow, wide, rng, monkeypatch):
    """Rows whose predictors' variances sum to less than ``expansion_trace(K)``
    (1e-6 up to four classes, 1e-2 beyond) take the expansion, the others the rule:
    each row gets what its method gives it alone (to round-off). Up to four classes the
    two agree on the narrow rows within 1e-13 (they differ by O(V^2) there), the
    curvature within 1e-7 (the rule's consistent curvature is off by O(V)), and
    the gradient of a wide row is not the expansion's."""
    from skvan.expectations import _cubature

    ruled = []
    points = _cubature.points
    monkeypatch.setattr(_cubature, "points", lambda M, V: ruled.append(len(M)) or points(M, V))
    n = 40
    M, Y, V = _rows(rng, n, K, 1.0)
    V /= np.einsum("ikk->i", V)[:, None, None]
    V[::2] *= narrow
    V[1::2] *= wide
    assert narrow < _cubature.expansion_trace(K) < wide
    f = MultinomialObjective(np.ones((n, 1)), Y)
    for need in ("exact", "gauss_newton", "value"):
        ruled.clear()
        got = SoftmaxCubature()._raw(f, M, V, need)
        assert sum(ruled) == n // 2
        rule = _rule(Y[1::2], M[1::2], V[1::2], "exact" if need == "value" else need)
        taylor = SoftmaxLoss().expansion(Y[::2], M[::2], V[::2], need)
        for a, b, c in zip(got, rule, taylor):
            if a is not None:
                np.testing.assert_allclose(a[1::2], b, rtol=1e-12, atol=1e-14)
                np.testing.assert_allclose(a[::2], c, rtol=1e-12, atol=1e-14)
        if K <= 4:
            rule = _rule(Y[::2], M[::2], V[::2], "exact" if need == "value" else need)
            tols = (1e-13, 1e-13, 1e-13 if need == "gauss_newton" else 1e-7)
            for a, b, tol in zip(got, rule, tols):
                if a is not None:
                    np.testing.assert_allclose(a[::2], b, rtol=0,
                                               atol=tol * max(1.0, np.abs(b).max()))
    # A point mass: exactly the derivatives at the mean.
    l, G, H = SoftmaxLoss().loss_derivatives(Y, M)
    for got, want in zip(SoftmaxCubature()._raw(f, M, 0 * V, "exact"), (l, G, H)):
        np.testing.assert_array_equal(got, want)
    taylor = SoftmaxLoss().expansion(Y[1::2], M[1::2], V[1::2])[1]
    assert np.abs(taylor - SoftmaxCubature()._raw(f, M, V, "exact")[1][1::2]).max() > 1e-9


@pytest.mark.parametrize("name", ["iris", "wine"])
def test_vo_takes_the_expansion_while_q_is_wide_and_fits_what_the_rule_fits(name, monkeypatch):
    """Under VO rows take the expansion up to a trace of 1 (the rule beyond), VI
    keeps the rule's accuracy thresholds; the VO fit's coefficients agree with a
    fit that takes the rule wherever VI would (the VO limit does not depend on
    it: reached 4e-10 and 2e-9) and so does its covariance (9e-8 and 4e-7), with
    fewer than half the rows given points."""
    from skvan.expectations import _cubature

    assert _cubature.expansion_trace(3, vo=True) == 1.0
    assert _cubature.expansion_trace(3) < 1e-2 and _cubature.expansion_trace(10) < 1.0
    X, y = (load_iris if name == "iris" else load_wine)(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    ruled = []
    points = _cubature.points
    monkeypatch.setattr(_cubature, "points", lambda M, V: ruled.append(len(M)) or points(M, V))
    vo = VANLogisticRegression().fit(X, y)
    wide_rows = sum(ruled)
    accurate = _cubature.expansion_trace
    monkeypatch.setattr(_cubature, "expansion_trace", lambda K, vo=False: accurate(K))
    ruled.clear()
    rule = VANLogisticRegression().fit(X, y)
    assert 0 < wide_rows < sum(ruled) / 2
    scale = np.abs(rule.coef_).max()
    np.testing.assert_allclose(vo.coef_, rule.coef_, rtol=0, atol=1e-7 * scale)
    np.testing.assert_allclose(vo.sigma_, rule.sigma_, rtol=0,
                               atol=5e-5 * np.abs(rule.sigma_).max())


@pytest.mark.parametrize("K", [5, 10])
def test_expansion_is_as_accurate_as_the_degree_3_rule_where_it_replaces_it(K, rng):
    """Beyond four classes rows take the expansion up to a trace of 1e-2: there,
    against a quasi-Monte Carlo reference (2^15 antithetic points), each of the
    expansion's errors is below 1e-5 (about 1e-6 and 1e-7), its curvature more
    accurate than the degree-3 rule's by over ten times (the rule's consistent
    curvature errs by O(V): about 1e-4), and its largest error below the rule's
    largest."""
    from scipy.stats import norm, qmc

    from skvan.expectations._cubature import expansion_trace

    n = 40
    M, Y, V = _rows(rng, n, K, 1.0)
    V *= expansion_trace(K) / np.einsum("ikk->i", V)[:, None, None]
    Z = norm.ppf(qmc.Sobol(K, scramble=True, seed=1).random(1 << 14))
    Z = np.vstack([Z, -Z])
    A = M[:, None, :] + Z @ np.swapaxes(np.linalg.cholesky(V), 1, 2)
    loss = SoftmaxLoss()
    w = np.full(len(Z), 1.0 / len(Z))
    errors = {}
    for need in ("exact", "gauss_newton"):
        reference = loss.weighted_derivatives(Y[:, None, :], A, w, need)[:3]
        for name, got in (("expansion", loss.expansion(Y, M, V, need)),
                          ("rule", _rule(Y, M, V, need))):
            errors[name, need] = [np.abs(a - b).max() for a, b in zip(got, reference)]
    largest = {name: max(max(e) for (of, _), e in errors.items() if of == name)
               for name in ("expansion", "rule")}
    assert largest["expansion"] < 1e-5 and largest["expansion"] < largest["rule"]
    assert errors["expansion", "exact"][2] < errors["rule", "exact"][2] / 10


def test_log_normaliser_matches_scipy(rng):
    """One exponential for both ``logsumexp`` and ``softmax``, stable for large
    predictors."""
    from scipy.special import logsumexp, softmax

    from skvan.objectives._multinomial import log_normaliser

    A = 30.0 * rng.randn(5, 7, 4)
    A[0, 0] = [800.0, -800.0, 0.0, 799.0]
    lse, P = log_normaliser(A)
    np.testing.assert_allclose(lse, logsumexp(A, axis=-1), rtol=1e-15)
    np.testing.assert_allclose(P, softmax(A, axis=-1), rtol=1e-14, atol=1e-300)


@pytest.mark.parametrize("kind", ["softmax", "indefinite", "sparse"])
def test_curvature_blocks_match_the_direct_sum(kind, rng):
    """``sum_i w_i H_i (x) x_i x_i^T`` block by block (dense, with PSD or indefinite
    per-row curvatures, or sparse X) equals the direct sum up to round-off of the
    matrix's size."""
    import scipy.sparse as sp

    n, p, K = 300, 6, 4
    X = rng.randn(n, p)
    A = 2.0 * rng.randn(n, K)
    P = np.exp(A - A.max(axis=1, keepdims=True))
    P /= P.sum(axis=1, keepdims=True)
    H = -P[:, :, None] * P[:, None, :]
    H[:, np.arange(K), np.arange(K)] += P
    if kind == "indefinite":
        H[0] = -np.eye(K)
    if kind == "sparse":
        X[rng.rand(n, p) < 0.7] = 0.0
    w = rng.uniform(0.5, 2.0, n)
    f = MultinomialObjective(sp.csr_matrix(X) if kind == "sparse" else X, np.eye(K)[rng.randint(K, size=n)], w)
    want = np.einsum("i,ikm,ij,il->kjml", f.weights, H, X, X).reshape(K * p, K * p)
    np.testing.assert_allclose(f.data_curvature(H), want, rtol=0, atol=1e-13 * np.abs(want).max())


def test_predictor_covariances_of_a_per_feature_precision(rng):
    """A precision coupling only each feature's K coefficients (every cold start:
    the prior and the gauge) gives the K x K predictor covariances from one
    O(n p K^2) product; they equal the general pass's (forced by a 1e-300
    coupling of two features)."""
    from skvan.expectations._cubature import _feature_blocks, predictor_covariances

    K, p, n = 3, 5, 40
    X = rng.randn(n, p)
    P = np.zeros((K * p, K * p))
    for j in range(p):
        B = rng.randn(K, K)
        idx = j + p * np.arange(K)
        P[np.ix_(idx, idx)] = B @ B.T + np.eye(K)
    coupled = P.copy()
    coupled[0, 1] = coupled[1, 0] = 1e-300
    assert _feature_blocks(P, K, p) is not None and _feature_blocks(coupled, K, p) is None
    V = predictor_covariances(X, K, FullGaussian(np.zeros(K * p), P))
    reference = predictor_covariances(X, K, FullGaussian(np.zeros(K * p), coupled))
    np.testing.assert_allclose(V, reference, rtol=0, atol=1e-12 * np.abs(reference).max())


@pytest.mark.parametrize("kind", ["full", "diag"])
def test_assembled_expectations_agree_with_monte_carlo(kind, rng):
    """In parameter space (predictor sd about 0.2): value, gradient and curvature
    within 1% of Monte Carlo's, gauge and penalty included."""
    f = _objective(rng, n=30, p=4, K=3)
    mean = rng.randn(f.n_params) * 0.5
    P = np.eye(f.n_params) * 100.0
    family = FullGaussian(mean, P) if kind == "full" else DiagonalGaussian(mean, np.diag(P))
    cub = SoftmaxCubature()(f, family)
    mc = MonteCarlo(20_000)(f, family, random_state=np.random.RandomState(0))
    assert abs(cub.value - mc.value) <= 1e-2 * abs(mc.value)
    np.testing.assert_allclose(cub.gradient, mc.gradient, atol=1e-2 * np.abs(mc.gradient).max())
    np.testing.assert_allclose(cub.curvature, mc.curvature, atol=1e-2 * np.abs(mc.curvature).max())


def test_predictive_probabilities_agree_with_monte_carlo(rng):
    """Wide predictors (sd 1 to 2) use the quasi-Monte Carlo rule: within 5e-3."""
    K = 5
    M = rng.randn(30, K)
    R = rng.randn(30, K, K) * 1.5
    V = R @ np.swapaxes(R, 1, 2) / K
    p = np.exp(expected_log_softmax(M, V))
    L = np.linalg.cholesky(V)
    Z = np.random.default_rng(1).standard_normal((100_000, K))
    A = M[:, None, :] + Z @ np.swapaxes(L, 1, 2)
    ref = np.exp(A - np.logaddexp.reduce(A, axis=-1, keepdims=True)).mean(axis=1)
    np.testing.assert_allclose(p, ref, atol=5e-3)


@pytest.mark.slow
@pytest.mark.parametrize("n_labels", [100, 300])
def test_predict_proba_matches_the_exact_average_where_it_counts(n_labels):
    """predict_proba's probit approximation against the quasi-Monte Carlo average
    over each row's predictors (``expected_log_softmax``): under VO (a narrow q)
    the same to 1e-6; under VI from few labels (a wide q, predictor variances
    in the thousands) the held-out log-loss within 10% and the accuracy within
    1% (measured on 100 and 300 digits: log-loss 0.383 and 0.229 against 0.431
    and 0.249, accuracy 0.895 and 0.941 against 0.896 and 0.941). The VI fit
    stops after 10 iterations: its q is as wide as a converged one's (the
    figures at convergence, 47 and 57 iterations: 0.390 and 0.230 against 0.432
    and 0.242), and the approximation, not VI, is what this test is about."""
    from sklearn.metrics import log_loss

    from skvan.expectations._cubature import predictor_covariances

    X, y = _data("digits")
    perm = np.random.RandomState(0).permutation(len(y))
    train, test = perm[:n_labels], perm[1000:]
    for objective in ("vo", "vi"):
        clf = VANLogisticRegression(objective=objective, max_iter=10 if objective == "vi" else 100)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)  # VI's 10 iterations
            clf.fit(X[train], y[train])
        Xd = np.c_[X[test], np.ones(len(test))]
        M = Xd @ clf._mean().reshape(10, -1).T
        exact = np.exp(expected_log_softmax(M, predictor_covariances(Xd, 10, clf._family())))
        proba = clf.predict_proba(X[test])
        if objective == "vo":
            np.testing.assert_allclose(proba, exact, atol=1e-6)
        else:
            assert log_loss(y[test], proba) <= 1.1 * log_loss(y[test], exact)
            assert np.mean(proba.argmax(1) == y[test]) >= np.mean(exact.argmax(1) == y[test]) - 0.01


def _sklearn(X, y, C, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return LogisticRegression(C=C, tol=1e-12, max_iter=100_000, **kw).fit(X, y)


def _data(name):
    X, y = {"iris": load_iris, "wine": load_wine, "digits": load_digits}[name](return_X_y=True)
    return StandardScaler().fit_transform(X), y


@pytest.mark.parametrize("name", ["iris", "wine", pytest.param("digits", marks=pytest.mark.slow)])
@pytest.mark.parametrize("C", [0.1, 1.0, 10.0])
def test_multinomial_matches_sklearn(name, C):
    """coef_ and intercept_ within 1e-4 relative of scikit-learn's multinomial fit
    (intercepts summing to zero, as scikit-learn's)."""
    X, y = _data(name)
    ref = _sklearn(X, y, C)
    van = VANLogisticRegression(C=C).fit(X, y)
    scale = np.abs(ref.coef_).max()
    assert np.abs(van.coef_ - ref.coef_).max() <= 1e-4 * scale
    assert np.abs(van.intercept_ - ref.intercept_).max() <= 1e-4 * scale
    assert abs(van.intercept_.sum()) < 1e-10 * scale


@pytest.mark.parametrize("class_weight", ["balanced", {0: 1.0, 1: 3.0, 2: 0.5}])
@pytest.mark.parametrize("binary", [True, False])
def test_class_weight_matches_sklearn(class_weight, binary):
    X, y = _data("wine")
    if binary:
        keep = y < 2
        X, y = X[keep], y[keep]
        if isinstance(class_weight, dict):
            class_weight = {0: 1.0, 1: 3.0}
    ref = _sklearn(X, y, 1.0, class_weight=class_weight)
    van = VANLogisticRegression(C=1.0, class_weight=class_weight).fit(X, y)
    assert np.abs(van.coef_ - ref.coef_).max() <= 1e-4 * np.abs(ref.coef_).max()
    # class weights multiply sample weights: the same as passing them
    w = np.where(y == 1, 3.0, 1.0) if binary and isinstance(class_weight, dict) else None
    if w is not None:
        van_w = VANLogisticRegression(C=1.0).fit(X, y, sample_weight=w)
        np.testing.assert_allclose(van.coef_, van_w.coef_, rtol=1e-10)


def test_balanced_class_weight_is_refused_by_partial_fit():
    X, y = _data("iris")
    with pytest.raises(ValueError, match="balanced"):
        VANLogisticRegression(class_weight="balanced").partial_fit(X, y, classes=[0, 1, 2])


def test_vi_posterior_draws_and_averaged_predictions():
    X, y = _data("iris")
    vi = VANLogisticRegression(C=1.0, objective="vi").fit(X, y)
    draws = vi.sample_proba(X[:20], 20_000, random_state=0)
    assert draws.shape == (20_000, 20, 3)
    np.testing.assert_allclose(draws.mean(axis=0), vi.predict_proba(X[:20]), atol=1e-2)
    sd = np.sqrt(vi.sigma_)  # the marginal variances (covariance="auto")
    assert np.all(sd > 0) and np.all(sd < np.sqrt(1.0))  # inside the prior N(0, C)


def test_streaming_multinomial_approximates_the_batch_posterior():
    """partial_fit over one pass in 5 batches of new rows: sequential Bayes with
    one VAN step per batch (more than two classes), each batch's update of the q
    the stream had reached. Where each batch's likelihood is close to Gaussian
    (3,000 overlapping rows, 600 per batch) the stream predicts as the batch VI
    posterior does: held-out log-loss within 10% of it (measured 1.6%). Its mean
    is not the posterior's (5.8 posterior sds apart there: one step per batch
    takes each curvature where the stream stood), and on iris' 150 nearly
    separable rows the gap is wide (log-loss 0.25 against 0.13)."""
    from sklearn.datasets import make_classification
    from sklearn.metrics import log_loss

    X, y = make_classification(4000, 5, n_informative=4, n_redundant=0, n_classes=3,
                               n_clusters_per_class=1, class_sep=0.8, random_state=0)
    X, Xtest, y, ytest = X[:3000], X[3000:], y[:3000], y[3000:]
    vi = VANLogisticRegression(C=1.0, objective="vi").fit(X, y)
    stream = VANLogisticRegression(C=1.0)
    for rows in np.array_split(np.random.RandomState(0).permutation(len(y)), 5):
        stream.partial_fit(X[rows], y[rows], classes=[0, 1, 2])
    assert stream.coef_.shape == (3, 5) and stream.n_iter_[0] == 5
    posterior = log_loss(ytest, vi.predict_proba(Xtest))
    assert log_loss(ytest, stream.predict_proba(Xtest)) <= 1.1 * posterior


@pytest.mark.parametrize("strategy", [entropy_sampling, bald_sampling])
def test_active_learning_on_three_classes(strategy):
    X, y = _data("iris")
    clf = ActiveVANClassifier(query_strategy="entropy", batch_size=5, max_iter=6,
                              random_state=0).fit(X, y)
    assert clf.coef_.shape == (3, 4)
    idx, scores = strategy(clf, X, n_instances=4, random_state=0)
    assert len(set(idx)) == 4 and np.all(scores >= 0)
    assert clf.teach(X[idx], y[idx]).n_labels_ == 34


@pytest.mark.parametrize("class_weight", ["balanced", {0: 1.0, 1: 3.0, 2: 0.5}])
def test_active_classifier_class_weight_multiplies_sample_weight(class_weight):
    """ActiveVANClassifier's class weights act as scikit-learn's do: a fit with them
    equals one with the same weights passed as ``sample_weight`` (the queries,
    which read the model, then agree too)."""
    from sklearn.utils.class_weight import compute_sample_weight

    X, y = _data("wine")
    weighted = ActiveVANClassifier(class_weight=class_weight, random_state=0).fit(X, y)
    as_samples = ActiveVANClassifier(random_state=0).fit(
        X, y, sample_weight=compute_sample_weight(class_weight, y))
    np.testing.assert_allclose(weighted.coef_, as_samples.coef_, rtol=1e-10, atol=1e-12)
    unweighted = ActiveVANClassifier(random_state=0).fit(X, y)
    assert np.abs(weighted.coef_ - unweighted.coef_).max() > 1e-3


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_feature_pairs_give_every_class_pairs_products(dtype, monkeypatch):
    """With many classes and few features the curvature's Gram blocks and the
    predictor covariances come from the rows' feature-pair products
    (FeaturePairs): equal, to round-off, to one product per pair of classes,
    for a float32 design too and a covariance whose blocks are not symmetric."""
    from skvan._data import FeaturePairs
    from skvan.expectations._cubature import predictor_covariances

    rng = np.random.default_rng(0)
    n, p, K = 700, 9, 7
    X = rng.standard_normal((n, p)).astype(dtype)
    assert FeaturePairs.pays(X, K * (K + 1) // 2) and not FeaturePairs.pays(X[:, :1].repeat(40, 1), 6)
    f = MultinomialObjective(X, np.eye(K)[rng.integers(0, K, n)], rng.uniform(0.5, 2.0, n))
    P = rng.dirichlet(np.ones(K), n)
    H = -P[:, :, None] * P[:, None, :] + np.einsum("ik,kl->ikl", P, np.eye(K))
    B = rng.standard_normal((K * p, K * p))
    family = FullGaussian(np.zeros(K * p), B @ B.T + K * p * np.eye(K * p))
    Xd = X.astype(np.float64)
    C_ref = np.einsum("i,ikm,ia,ib->kamb", f.weights, H, Xd, Xd).reshape(K * p, K * p)
    V_ref = np.einsum("ia,kamb,ib->ikm", Xd, family.sigma.reshape(K, p, K, p), Xd)
    C, V = f.data_curvature(H), predictor_covariances(X, K, family)
    monkeypatch.setattr(FeaturePairs, "pays", classmethod(lambda cls, X, c: False))
    for got, per_pair, ref in ((C, f.data_curvature(H), C_ref),
                               (V, predictor_covariances(X, K, family), V_ref)):
        scale = np.max(np.abs(ref))
        assert np.max(np.abs(got - ref)) <= 1e-13 * scale  # reached: 1e-15
        assert np.max(np.abs(per_pair - ref)) <= 1e-13 * scale


def test_kept_feature_pairs_serve_later_passes_only_for_their_design():
    """A model keeps its rows' pair products between passes within its budget:
    later passes over the same design equal a fresh computation exactly, another
    design is computed afresh, and products over the budget are not kept."""
    from skvan._data import FeaturePairs

    rng = np.random.default_rng(0)
    X, other = rng.standard_normal((300, 6)), rng.standard_normal((300, 6))
    W, S = rng.standard_normal((300, 3)), rng.standard_normal((3, 6, 6))
    fresh = FeaturePairs(6)
    kept = FeaturePairs(6, keep_bytes=8 * 21 * 300)
    for _ in range(2):
        np.testing.assert_array_equal(kept.grams(X, W), fresh.grams(X, W))
        np.testing.assert_array_equal(kept.forms(X, S), fresh.forms(X, S))
        assert kept._kept is not None and kept._kept[0] is X
    np.testing.assert_array_equal(kept.forms(other, S), fresh.forms(other, S))
    assert kept._kept[0] is other
    small = FeaturePairs(6, keep_bytes=8 * 21 * 300 - 1)
    small.grams(X, W)
    assert small._kept is None
    f = MultinomialObjective(X, np.eye(3)[rng.integers(0, 3, 300)])
    assert f.feature_pairs() is f.feature_pairs()
    assert f.subsample(np.arange(100)).feature_pairs() is not f.feature_pairs()
