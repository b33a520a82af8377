"""Wide data (more features than samples), dense and sparse: the same optima as
scikit-learn, through the dual, the operator and, for the Lasso, working sets."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import Lasso, LogisticRegression

from skvan import VANLassoRegressor, VANLogisticRegression
from skvan.objectives import L1Penalty, LinearModelObjective, SquaredLoss
from skvan.sparse import kkt_excess
from skvan.van import solve_on_working_sets


def _correlated(n, p, k=10, rho=0.5, seed=0):
    rng = np.random.default_rng(seed)
    Z = rng.standard_normal((n, p))
    X = Z.copy()
    X[:, 1:] = np.sqrt(1 - rho**2) * Z[:, 1:] + rho * Z[:, :-1]
    w = np.zeros(p)
    idx = rng.choice(p, k, replace=False)
    w[idx] = rng.choice([-1, 1], k) * rng.uniform(0.5, 2, k)
    return X, X @ w + rng.standard_normal(n)


def _sklearn_lasso(X, y, alpha, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return Lasso(alpha=alpha, tol=1e-12, max_iter=200_000, **kw).fit(X, y)


@pytest.mark.parametrize("alpha", [0.05, 0.3])
@pytest.mark.parametrize("sparse", [False, True])
def test_wide_lasso_is_the_lasso_solution(alpha, sparse):
    """Working sets with the KKT certificate: within 1e-9 of Lasso(tol=1e-12),
    the same support."""
    X, y = _correlated(120, 800)
    if sparse:
        X = np.where(np.abs(X) > 1.0, X, 0.0)
    ref = _sklearn_lasso(X, y, alpha)
    van = VANLassoRegressor(alpha=alpha).fit(sp.csr_matrix(X) if sparse else X, y)
    assert van.covariance_ in ("dual", "operator")
    np.testing.assert_array_equal(van.coef_ != 0, ref.coef_ != 0)
    np.testing.assert_allclose(van.coef_, ref.coef_, rtol=0, atol=1e-9 * np.abs(ref.coef_).max())
    assert van.intercept_ == pytest.approx(ref.intercept_, abs=1e-8 * np.abs(y).max())
    mean, std = van.predict(X[:5], return_std=True)
    assert np.all(np.isfinite(std)) and np.all(std >= np.sqrt(van.noise_variance_))
    assert van.sigma_.shape == (800,)


def test_wide_lasso_with_weights_and_no_intercept():
    X, y = _correlated(80, 400, seed=1)
    w = np.random.default_rng(2).uniform(0.5, 2.0, 80)
    ref = _sklearn_lasso(X, y, 0.1, fit_intercept=False)
    van = VANLassoRegressor(alpha=0.1, fit_intercept=False).fit(X, y)
    np.testing.assert_allclose(van.coef_, ref.coef_, rtol=0, atol=1e-9 * np.abs(ref.coef_).max())
    ref_w = _sklearn_lasso(X, y, 0.1)
    ref_w.fit(X, y, sample_weight=w)
    van_w = VANLassoRegressor(alpha=0.1).fit(X, y, sample_weight=w)
    np.testing.assert_allclose(van_w.coef_, ref_w.coef_, rtol=0, atol=1e-8 * np.abs(ref_w.coef_).max())


def _fits(monkeypatch, alpha=0.05, **engine):
    """The wide Lasso on 120 x 800 with the engine's defaults, then with its
    parameters ``engine``; both checked against scikit-learn's solution."""
    X, y = _correlated(120, 800)
    ref = _sklearn_lasso(X, y, alpha)
    default = VANLassoRegressor(alpha=alpha).fit(X, y)
    make = VANLassoRegressor._engine

    def changed_engine(self):
        solver = make(self)
        for name, value in engine.items():
            setattr(solver, name, value)
        return solver

    monkeypatch.setattr(VANLassoRegressor, "_engine", changed_engine)
    changed = VANLassoRegressor(alpha=alpha).fit(X, y)
    for model in (default, changed):
        np.testing.assert_allclose(model.coef_, ref.coef_, rtol=0, atol=1e-9 * np.abs(ref.coef_).max())
    return default, changed


def test_later_working_sets_are_finished_by_kkt_corrections(monkeypatch):
    """VAN runs on the first working set only; on the larger ones its converged
    ``q`` is finished by the certificate's corrections, as a converged fit is:
    the Lasso solution, with corrections made."""
    from skvan.van import LassoSolver

    runs = []
    solve_support = LassoSolver.solve_support
    monkeypatch.setattr(LassoSolver, "solve_support",
                        lambda self, *a, **k: runs.append(1) or solve_support(self, *a, **k))
    X, y = _correlated(120, 800)
    ref = _sklearn_lasso(X, y, 0.05)
    van = VANLassoRegressor(alpha=0.05).fit(X, y)
    np.testing.assert_allclose(van.coef_, ref.coef_, rtol=0, atol=1e-9 * np.abs(ref.coef_).max())
    assert len(runs) == 1 and van.n_corrections_ > 0


def test_a_first_set_left_uncertified_is_no_warning_when_the_whole_is_certified(monkeypatch):
    """The first working set's run may end without its certificate (its KKT
    corrections ran out): where the corrections on the whole problem then
    certify the solution, the fit is the Lasso's and warns of nothing."""
    from sklearn.exceptions import ConvergenceWarning

    from skvan.van import LassoSolver

    solve_support = LassoSolver.solve_support

    def uncertified(self, *args, **kwargs):
        coef, result, n_corrections, _ = solve_support(self, *args, **kwargs)
        return coef, result, n_corrections, False

    monkeypatch.setattr(LassoSolver, "solve_support", uncertified)
    X, y = _correlated(40, 200)  # small enough for X^T X: the whole is corrected
    ref = _sklearn_lasso(X, y, 0.05)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        van = VANLassoRegressor(alpha=0.05).fit(X, y)
    np.testing.assert_allclose(van.coef_, ref.coef_, rtol=0, atol=1e-9 * np.abs(ref.coef_).max())


@pytest.mark.parametrize("alpha, positive", [(0.1, False), (0.03, False), (0.1, True)])
def test_a_support_near_the_number_of_rows_is_reached_by_homotopy(alpha, positive):
    """Forty informative features in 100 x 400: the Lasso keeps about as many
    coefficients as there are rows, where the working sets' KKT corrections
    cycle (entering and dropping near-ties). Past their budget, the homotopy
    from alpha_max reaches the solution: certified, scikit-learn's to 1e-8, in a
    few corrections per row (they cycled through 1,000 and more)."""
    from sklearn.datasets import make_regression

    X, y = make_regression(100, 400, n_informative=40, noise=1.0, random_state=0)
    ref = _sklearn_lasso(X, y, alpha, positive=positive)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        van = VANLassoRegressor(alpha=alpha, positive=positive).fit(X, y)
    assert np.count_nonzero(ref.coef_) > 90
    np.testing.assert_allclose(van.coef_, ref.coef_, rtol=0, atol=1e-8 * np.abs(ref.coef_).max())
    assert van.n_corrections_ < 5 * X.shape[0]


def test_an_elastic_net_near_the_lasso_has_the_same_budget():
    """``l1_ratio=0.99`` on the same data: supports beyond the rows are possible,
    but its corrections cycle as the Lasso's do, and the same budget hands them
    to the homotopy (600 corrections without it, about 300 with)."""
    from sklearn.datasets import make_regression
    from sklearn.linear_model import ElasticNet

    from skvan import VANElasticNet

    X, y = make_regression(100, 400, n_informative=40, noise=1.0, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = ElasticNet(alpha=0.1, l1_ratio=0.99, tol=1e-12, max_iter=200_000).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        van = VANElasticNet(alpha=0.1, l1_ratio=0.99).fit(X, y)
    np.testing.assert_allclose(van.coef_, ref.coef_, rtol=0, atol=1e-8 * np.abs(ref.coef_).max())
    assert van.n_corrections_ < 5 * X.shape[0]


def test_a_set_out_of_reach_is_rescued_once():
    """``solve_on`` returning None hands the whole problem to ``rescue``; where
    that fails, ``solve_on`` solves the same set itself."""
    calls, rescues = [], []

    def excess(w):
        return np.where(w == 0, 1.0, -np.inf)

    def solve_on(columns, mean):
        calls.append(columns.size)
        return (None if len(calls) == 2 else np.ones(columns.size)), (0, 1)

    def rescue(w, ok):
        rescues.append(w.copy())
        return np.full(4, 2.0), (0, 3), ok

    w, _, infos, certified = solve_on_working_sets(excess, solve_on, [0], 4,
                                                   rescue=lambda w: rescue(w, True))
    assert certified and calls == [1, 2] and len(rescues) == 1
    np.testing.assert_array_equal(w, 2.0)
    np.testing.assert_array_equal(rescues[0], [1.0, 0, 0, 0])  # the last solution
    assert infos == [(0, 1), (0, 1), (0, 3)]
    calls.clear()
    w, _, _, certified = solve_on_working_sets(excess, solve_on, [0], 4,
                                               rescue=lambda w: rescue(w, False))
    assert certified and calls == [1, 2, 2, 4]  # the failed rescue: the set again
    np.testing.assert_array_equal(w, 1.0)


def test_working_sets_enter_every_strong_violator_at_once(monkeypatch):
    """The later working sets' corrections enter every violator within half of
    the worst (the engine's ``working_set_enter``): the same solution in fewer
    corrections than one at a time."""
    batch, single = _fits(monkeypatch, working_set_enter=0.0)
    assert batch.n_corrections_ < single.n_corrections_ / 2


def test_working_sets_grow_until_no_violation():
    """The loop adds the worst violators and stops when none is left."""
    calls = []

    def excess(w):
        return np.where(np.arange(10) < 6, 1.0 - w, -1.0)  # coordinates 0..5 want w = 1

    def solve_on(columns, mean):
        calls.append(columns.copy())
        return np.ones(columns.size), None

    w, columns, _, certified = solve_on_working_sets(excess, solve_on, [0], 10)
    assert certified and set(columns) >= set(range(6))
    assert [c.size for c in calls] == sorted(c.size for c in calls)
    np.testing.assert_array_equal(w[:6], 1.0)


def test_kkt_excess_reads_the_lasso_conditions(rng):
    X = rng.randn(30, 6)
    y = X[:, 0] * 3.0 + 0.1 * rng.randn(30)
    f = LinearModelObjective(X, y, SquaredLoss(), penalty=L1Penalty(np.full(6, 5.0)))
    ref = _sklearn_lasso(X, y, 5.0 / 30, fit_intercept=False)
    e = kkt_excess(f, ref.coef_)
    assert np.all(e[ref.coef_ == 0] <= 0) and np.all(np.isneginf(e[ref.coef_ != 0]))
    assert np.any(kkt_excess(f, np.zeros(6)) > 0)  # 0 is not optimal


@pytest.mark.parametrize("objective", ["vo", "vi"])
def test_wide_logistic_matches_sklearn(objective):
    rng = np.random.default_rng(3)
    X = rng.standard_normal((150, 1200))
    y = (X @ rng.standard_normal(1200) / 30 + 0.5 * rng.standard_normal(150) > 0).astype(int)
    van = VANLogisticRegression(C=0.5, objective=objective, tol=1e-8 if objective == "vo" else 1e-4)
    van.fit(X, y)
    assert van.covariance_ == ("operator" if objective == "vo" else "dual")
    if objective == "vo":
        ref = LogisticRegression(C=0.5, tol=1e-12, max_iter=10_000).fit(X, y)
        np.testing.assert_allclose(van.coef_, ref.coef_, rtol=0, atol=1e-6 * np.abs(ref.coef_).max())
    proba = van.predict_proba(X[:10])
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)


def test_text_pipeline_with_sparse_tfidf():
    """A TF-IDF pipeline, which needs sparse input: the VO optimum is scikit-learn's."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.pipeline import make_pipeline

    rng = np.random.default_rng(0)
    words = np.array([f"w{i}" for i in range(400)])
    docs, labels = [], []
    for _ in range(300):
        label = rng.integers(2)
        pool = words[:200] if label else words[200:]
        docs.append(" ".join(rng.choice(np.r_[pool, words[::7]], size=12)))
        labels.append(label)
    pipe = make_pipeline(TfidfVectorizer(), VANLogisticRegression(C=5.0, tol=1e-8)).fit(docs, labels)
    ref = make_pipeline(TfidfVectorizer(), LogisticRegression(C=5.0, tol=1e-12, max_iter=10_000))
    ref.fit(docs, labels)
    van, sk = pipe[-1], ref[-1]
    np.testing.assert_allclose(van.coef_, sk.coef_, rtol=0, atol=1e-6 * np.abs(sk.coef_).max())
    assert pipe.score(docs, labels) == ref.score(docs, labels)


def test_kkt_work_runs_on_one_blas_thread_and_restores_the_count():
    import threadpoolctl  # a requirement (setup.cfg)

    from skvan._blas import ONE_THREAD_FROM, _one_blas_thread

    def blas_threads():
        return [lib["num_threads"] for lib in threadpoolctl.threadpool_info()
                if lib["user_api"] == "blas"]

    before = blas_threads()
    with _one_blas_thread(ONE_THREAD_FROM):
        assert set(blas_threads()) == {1}
        with _one_blas_thread(ONE_THREAD_FROM):  # nested: still one, then still one
            assert set(blas_threads()) == {1}
        assert set(blas_threads()) == {1}
    assert blas_threads() == before
    with _one_blas_thread(ONE_THREAD_FROM - 1):  # small systems: left as they are
        assert blas_threads() == before


def test_the_loop_runs_on_the_users_blas_threads(monkeypatch):
    """The passes over the rows keep the user's BLAS thread counts at every size
    (a one-thread limit around small fits made them slower: ``python
    benchmarks/bench_passes.py --blas-threads``), and a fit leaves them as they
    were."""
    import threadpoolctl  # a requirement (setup.cfg)
    from sklearn.datasets import load_breast_cancer

    from skvan._blas import _lapack_libraries
    from skvan.van import VANSolver

    # (scipy's own library runs the loop's LAPACK work on one thread:
    # test_full_family_lapack_runs_on_one_blas_thread_at_moderate_sizes)
    lapack = {lib.filepath for lib in _lapack_libraries()}

    def blas_threads():
        return [lib["num_threads"] for lib in threadpoolctl.threadpool_info()
                if lib["user_api"] == "blas" and lib["filepath"] not in lapack]

    if max(blas_threads(), default=1) == 1:
        pytest.skip("numpy's BLAS runs on one thread already (a limit would not show)")
    X, y = load_breast_cancer(return_X_y=True)  # 569 x 31: 5e5 per pass
    for limit in (None, 1):
        with threadpoolctl.threadpool_limits(limits=limit, user_api="blas"):
            before = blas_threads()
            seen, ask = [], VANSolver.ask
            monkeypatch.setattr(VANSolver, "ask",
                                lambda self: seen.append(blas_threads()) or ask(self))
            VANLogisticRegression().fit(X, y)
            monkeypatch.undo()
            assert seen and all(threads == before for threads in seen)
            assert blas_threads() == before


def _lapack_threads():
    """The thread count of the library scipy's LAPACK runs on (skipping the test
    where it is one already), and a recorder: ``recorder(module)`` stands in for
    ``module`` (scipy's ``lapack`` or ``linalg``), noting that count at each call
    into the list it returns beside."""
    from skvan._blas import _lapack_libraries

    def threads():
        return max(lib.num_threads for lib in _lapack_libraries())

    if threads() == 1:
        pytest.skip("the BLAS runs on one thread already")
    seen = []

    class Recording:
        def __init__(self, module):
            self.module = module

        def __getattr__(self, name):
            call = getattr(self.module, name)

            def recorded(*args, **kwargs):
                seen.append(threads())
                return call(*args, **kwargs)
            return recorded

    return threads, Recording, seen


@pytest.mark.parametrize("p, one, inverse_one",
                         [(10, False, True), (100, True, True), (300, True, True),
                          (2100, False, False)])
def test_full_family_lapack_runs_on_one_blas_thread_at_moderate_sizes(p, one, inverse_one):
    """A full family's LAPACK work (here its Cholesky factor, covariance and a
    solve) runs with scipy's BLAS on one thread for 16 <= p <= 2048 (right after
    a numpy pass, two threads waited for a core: bench_passes.py
    --lapack-threads), and the covariance (potri, which threads at every size)
    from p = 1; elsewhere the threads are the machine's."""
    import skvan.van._family as family
    from skvan.van import FullGaussian

    blas_threads, Recording, seen = _lapack_threads()
    before = blas_threads()
    rng = np.random.default_rng(0)
    A = rng.standard_normal((p + 5, p))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(family, "lapack", Recording(family.lapack))
        q = FullGaussian(np.zeros(p), A.T @ A + np.eye(p))
        q.sigma, q.solve(np.ones(p))
    threads = [1 if one else before, 1 if inverse_one else before, 1 if one else before]
    assert seen == threads  # potrf, potri, potrs
    assert blas_threads() == before


def test_a_nested_lapack_context_is_a_no_op_in_its_thread_only():
    """Inside a LAPACK one-thread context (the solver's loop) a nested request in
    the same thread gets the no-op context: the outer one already set the count.
    Another thread still gets a real context, so the count stays 1 until both
    have left, and is then restored. (The last to leave is this test's main
    thread: OpenBLAS ignores a count raised from another thread.)"""
    import threading

    from skvan._blas import _NO_CONTEXT, _LapackOneThread, lapack_one_thread

    blas_threads, _, _ = _lapack_threads()
    before = blas_threads()
    assert isinstance(lapack_one_thread(100), _LapackOneThread)
    assert lapack_one_thread(10) is _NO_CONTEXT  # below the sizes that thread
    # ...but an inverse from a factor (potri) threads at every size.
    assert isinstance(lapack_one_thread(10, inverse=True), _LapackOneThread)
    assert lapack_one_thread(5000, inverse=True) is _NO_CONTEXT  # beyond, it pays
    other, entered = [], threading.Event()

    def elsewhere():
        with lapack_one_thread(100) as context:
            other.append(context)
            entered.set()

    with lapack_one_thread(100):
        assert blas_threads() == 1
        assert lapack_one_thread(100) is _NO_CONTEXT
        worker = threading.Thread(target=elsewhere)
        worker.start()
        assert entered.wait(10)
        worker.join(10)
        assert isinstance(other[0], _LapackOneThread)
        assert blas_threads() == 1  # the other thread's exit left this one's limit
    assert blas_threads() == before
    assert isinstance(lapack_one_thread(100), _LapackOneThread)


def test_dual_family_lapack_runs_on_one_blas_thread():
    """The dual form's n x n systems (VI on wide data) follow the same rule as a
    full family's p x p ones: its Cholesky factor and solves run with scipy's
    BLAS on one thread (bench_passes.py --lapack-threads: a VI fit on 300 x
    3000 was several times faster), and the count is restored."""
    import skvan.van._gram as gram_module

    blas_threads, Recording, seen = _lapack_threads()
    before = blas_threads()
    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 2100))  # more parameters than the rule covers
    y = (X[:, 0] + 0.5 * rng.standard_normal(60) > 0).astype(int)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(gram_module, "linalg", Recording(gram_module.linalg))
        model = VANLogisticRegression(objective="vi", covariance="dual", max_iter=5).fit(X, y)
    assert model.covariance_ == "dual"
    assert seen and set(seen) == {1} and blas_threads() == before


@pytest.mark.parametrize("n, p, form", [(300, 20, "full"), (60, 600, "dual")])
def test_sigma_has_one_shape_whatever_auto_picks(n, p, form):
    """covariance="auto" picks its form by the data's size; sigma_ is the marginal
    variances (coef_'s shape) for every form, and get_covariance() the matrix."""
    from skvan import VANLassoRegressor

    rng = np.random.RandomState(0)
    X = rng.standard_normal((n, p))
    y = (X[:, 0] + 0.5 * rng.standard_normal(n) > 0).astype(int)
    clf = VANLogisticRegression(objective="vi", tol=1e-7).fit(X, y)
    assert clf.covariance_ == form
    assert clf.sigma_.shape == clf.coef_.shape == (1, p)
    cov = clf.get_covariance()
    assert cov.shape == (1, p, p)
    np.testing.assert_allclose(np.diagonal(cov[0]), clf.sigma_[0], rtol=1e-8)
    full = VANLogisticRegression(objective="vi", covariance="full", tol=1e-7).fit(X, y)
    assert full.sigma_.shape == (1, p, p)
    # two fits, each to tol=1e-7: they agree to 2.7e-10 of the largest entry (measured)
    np.testing.assert_allclose(full.sigma_, cov, rtol=0, atol=1e-8 * np.abs(cov).max())
    reg = VANLassoRegressor(alpha=0.1, objective="vi").fit(X, y.astype(float))
    assert reg.sigma_.shape == reg.coef_.shape == (p,) and reg.get_covariance().shape == (p, p)


def test_auto_counts_the_rows_the_solver_works_through():
    """On 100 x 300 data the n x n form is the cheaper for the Lasso (its fit the
    full form's) and the logistic model; an elastic net's 300 ridge rows make its design taller than
    wide (the p x p form), and Monte Carlo draws keep the p x p form."""
    from skvan import VANElasticNet

    rng = np.random.RandomState(0)
    X = rng.standard_normal((100, 300))
    y = X[:, :5].sum(axis=1) + rng.standard_normal(100)
    dual = VANLassoRegressor(alpha=0.1).fit(X, y)
    assert dual.covariance_ == "dual"
    full = VANLassoRegressor(alpha=0.1, covariance="full").fit(X, y)
    # The same exact solution and posterior variances (measured: 5e-16, 8e-16).
    np.testing.assert_allclose(dual.coef_, full.coef_, rtol=0, atol=1e-13)
    np.testing.assert_allclose(dual.sigma_, np.diag(full.sigma_), rtol=1e-13)
    assert VANElasticNet(alpha=0.1).fit(X, y).covariance_ == "full"
    labels = (y > 0).astype(int)
    assert VANLogisticRegression().fit(X, labels).covariance_ == "dual"
    mc = VANLogisticRegression(expectation="mc", max_iter=5, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        assert mc.fit(X, labels).covariance_ == "full"


def test_get_covariance_refuses_politely_beyond_the_budget(monkeypatch):
    import skvan.van._gram as gram

    rng = np.random.RandomState(0)
    X = rng.standard_normal((40, 300))
    clf = VANLogisticRegression().fit(X, (X[:, 0] > 0).astype(int))
    monkeypatch.setattr(gram, "MEMORY_BUDGET", 8 * 100)
    with pytest.raises(MemoryError, match="GiB.*sigma_"):
        clf.get_covariance()
