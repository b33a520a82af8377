"""van_lasso_path and VANLassoCV against scikit-learn's lasso_path and LassoCV."""

import numpy as np
import pytest
from sklearn.datasets import load_diabetes
from sklearn.linear_model import LassoCV, lasso_path
from sklearn.model_selection import KFold

from skvan import VANLassoCV, VANLassoRegressor, van_lasso_path


def _correlated_wide(n=50, p=120, seed=0):
    """p > n, neighbouring features correlated 0.8, 8 nonzero coefficients."""
    rng = np.random.default_rng(seed)
    Z = rng.standard_normal((n, p + 1))
    X = Z[:, :-1] + 0.8 / 0.6 * Z[:, 1:]
    w = np.zeros(p)
    w[rng.choice(p, 8, replace=False)] = rng.choice([-2.0, 2.0], 8)
    return X, X @ w + 0.5 * rng.standard_normal(n)


PROBLEMS = {
    "diabetes": load_diabetes(return_X_y=True),
    "correlated p > n": _correlated_wide(),
}


@pytest.mark.parametrize("name", list(PROBLEMS))
def test_path_matches_lasso_path_at_every_alpha(name):
    X, y = PROBLEMS[name]
    X, y = X - X.mean(axis=0), y - y.mean()
    alphas, coefs, gaps, n_iter = van_lasso_path(X, y, n_alphas=20, return_n_iter=True)
    ref_alphas, ref, _ = lasso_path(X, y, alphas=alphas, tol=1e-12, max_iter=1_000_000)
    for k in range(len(alphas)):
        scale = max(np.max(np.abs(ref[:, k])), 1e-12)
        assert np.max(np.abs(coefs[:, k] - ref[:, k])) <= 1e-8 * scale, k  # reached: 4.2e-10
        np.testing.assert_array_equal(coefs[:, k] != 0, np.abs(ref[:, k]) > 1e-10 * scale)
    assert np.all(gaps <= 1e-6 * np.mean(y**2)) and np.all(n_iter >= 0)
    assert np.all(np.diff(alphas) < 0) and not np.any(coefs[:, 0])  # alpha_max: all zero


@pytest.mark.parametrize("name", list(PROBLEMS))
def test_path_follows_its_kinks_without_van(name):
    """The first alpha is certified at 0 and the next ones followed from it (by
    homotopy while the support is small): no VAN iteration anywhere on the path,
    and every alpha's coefficients are lasso_path's."""
    X, y = PROBLEMS[name]
    X, y = X - X.mean(axis=0), y - y.mean()
    alphas, coefs, gaps, n_iter = van_lasso_path(X, y, n_alphas=50, return_n_iter=True)
    _, ref, _ = lasso_path(X, y, alphas=alphas, tol=1e-12, max_iter=1_000_000)
    np.testing.assert_allclose(coefs, ref, rtol=0, atol=1e-6 * np.abs(ref).max())
    assert np.all(gaps <= 1e-6 * np.mean(y**2))
    changed = np.any(np.sign(coefs[:, 1:]) != np.sign(coefs[:, :-1]), axis=0)
    assert changed.sum() >= 8 and np.all(n_iter == 0)


def _collinear(kind, seed=0):
    """Wide collinear data whose Lasso coefficients are not unique: groups of three
    near-duplicate columns, or a rank-20 factor model with noise (150 x 300 both);
    standardised columns, centred ``y``."""
    rng = np.random.default_rng(seed)
    if kind == "groups":
        F = rng.standard_normal((150, 100))
        X = np.repeat(F, 3, axis=1) + 0.05 * rng.standard_normal((150, 300))
        y = F[:, :30] @ rng.uniform(0.5, 2.0, 30) + rng.standard_normal(150)
    else:
        X = (rng.standard_normal((150, 20)) @ rng.standard_normal((20, 300)) / np.sqrt(20)
             + 0.3 * rng.standard_normal((150, 300)))
        beta = np.zeros(300)
        beta[rng.choice(300, 90, replace=False)] = rng.standard_normal(90)
        y = X @ beta + rng.standard_normal(150)
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    return X, y - y.mean()


def _objective(X, y, coefs, alphas):
    residual = y[:, None] - X @ coefs
    return 0.5 * np.mean(residual**2, axis=0) + alphas * np.abs(coefs).sum(axis=0)


@pytest.mark.parametrize("kind", ["groups", "factor"])
def test_path_on_wide_collinear_data_reaches_lasso_paths_objective(kind):
    """Where columns are near-duplicates the coefficients are not unique and only
    the objective can be compared: at every one of 30 alphas down to 1e-2
    alpha_max (supports well past the homotopy's 64, so that the per-alpha
    corrections carry the path) the VAN path's objective is lasso_path's at
    tol=1e-12 to a relative 1e-8, and no VAN iteration was needed."""
    X, y = _collinear(kind)
    alpha_max = np.max(np.abs(X.T @ y)) / len(y)
    alphas = np.geomspace(alpha_max, 1e-2 * alpha_max, 30)
    _, coefs, gaps, n_iter = van_lasso_path(X, y, alphas=alphas, return_n_iter=True)
    _, ref, _ = lasso_path(X, y, alphas=alphas, tol=1e-12, max_iter=1_000_000)
    ours, theirs = _objective(X, y, coefs, alphas), _objective(X, y, ref, alphas)
    assert np.all(ours - theirs <= 1e-8 * theirs)  # reached: below 1e-14
    assert np.count_nonzero(coefs[:, -1]) > 64 and np.all(n_iter == 0)
    assert np.all(gaps <= 1e-8 * np.mean(y**2))


@pytest.mark.slow
def test_cv_on_wide_collinear_data_chooses_lasso_cvs_alpha():
    """VANLassoCV on the near-duplicate groups: the same alpha_ as LassoCV on the
    same folds and grid (the held-out errors differ slightly: different optimal
    coefficients predict new rows differently). LassoCV's mean held-out errors
    at tol=1e-6 are within 5e-5 relative of its own at 1e-12 (a quarter of the
    time), 20 times below the 0.1% between the best alpha's and the next's."""
    X, y = _collinear("groups")
    cv = KFold(5, shuffle=True, random_state=0)
    van = VANLassoCV(alphas=30, eps=1e-2, cv=cv).fit(X, y)
    ref = LassoCV(alphas=30, eps=1e-2, cv=cv, tol=1e-6, max_iter=1_000_000).fit(X, y)
    np.testing.assert_array_equal(van.alphas_, ref.alphas_)
    assert van.alpha_ == ref.alpha_


@pytest.mark.parametrize("positive", [False, True])
def test_kkt_follow_goes_from_one_alphas_solution_to_the_next(positive):
    """Between two alphas of a coarse grid the solution passes several kinks;
    kkt_follow reaches the next alpha's solution (lasso_path's) with at least one
    event per coefficient whose sign changed, and none when the support holds."""
    from skvan.objectives import L1Penalty, QuadraticObjective
    from skvan.sparse import kkt_follow, nonnegative

    X, y = PROBLEMS["correlated p > n"]
    X, y = X - X.mean(axis=0), y - y.mean()
    n, p = X.shape
    alphas, coefs, _ = van_lasso_path(X, y, n_alphas=8, positive=positive)
    _, ref, _ = lasso_path(X, y, alphas=alphas, positive=positive, tol=1e-12, max_iter=1_000_000)
    base = QuadraticObjective.from_data(X, y)
    form = nonnegative if positive else (lambda quadratic: quadratic)
    objectives = [form(base.with_penalty(L1Penalty(np.full(p, n * a)))) for a in alphas]
    events = []
    for k in range(len(alphas) - 1):
        coef, n_events, ok = kkt_follow(objectives[k], objectives[k + 1], coefs[:, k])
        assert ok
        np.testing.assert_allclose(coef, ref[:, k + 1], rtol=0, atol=1e-6 * np.abs(ref).max())
        assert n_events >= np.count_nonzero(np.sign(coef) != np.sign(coefs[:, k]))
        events.append(n_events)
    assert sum(events) >= 20
    same = kkt_follow(objectives[-1], objectives[-1], coefs[:, -1])
    assert same[1:] == (0, True)


def test_path_with_an_intercept_near_as_many_coefficients_as_rows():
    """Folds of 80 rows, 300 correlated columns, an intercept: supports reach 79.
    There the KKT corrections alone (the carry before kkt_follow) could cycle
    through supports until their budget ended and VAN ran; the homotopy follows
    every alpha with no VAN iteration, to scikit-learn's Lasso at each."""
    from sklearn.linear_model import Lasso

    from skvan.linear_model._lasso_path import _path

    rng = np.random.default_rng(7)
    n, p = 100, 300
    mix = rng.standard_normal((p, p)) * np.sqrt(0.3 / p)
    X = rng.standard_normal((n, p)) + rng.standard_normal((n, p)) @ mix
    w = np.zeros(p)
    w[rng.choice(p, 10, replace=False)] = rng.choice([-1, 1], 10) * rng.uniform(0.5, 2.0, 10)
    y = X @ w + 3.0 + rng.standard_normal(n)
    alphas = VANLassoCV(alphas=60).fit(X, y).alphas_
    for train, _ in KFold(5, shuffle=True, random_state=0).split(X):
        coefs, intercepts, _, n_iter = _path(VANLassoRegressor(), X[train], y[train], alphas)
        assert np.all(n_iter == 0)
        assert np.count_nonzero(coefs[-1]) >= 70
        for k in (10, 30, 59):
            ref = Lasso(alpha=alphas[k], tol=1e-12, max_iter=1_000_000).fit(X[train], y[train])
            scale = np.abs(ref.coef_).max()
            np.testing.assert_allclose(coefs[k], ref.coef_, rtol=0, atol=1e-5 * scale)
            np.testing.assert_allclose(intercepts[k], ref.intercept_, rtol=0, atol=1e-5 * scale)


def test_path_keeps_q_between_kinks(monkeypatch):
    """Without corrections or homotopy (VAN at every kink, the fallback when they
    fail): where the support and signs do not change from one alpha to the next,
    the KKT check certifies the previous support at the new alpha with no VAN
    iteration; where they change, VAN runs. Every alpha's coefficients are
    lasso_path's."""
    _with_engine(monkeypatch, path_corrections=0, path_support=0, path_event_rate=0)
    X, y = PROBLEMS["diabetes"]
    X, y = X - X.mean(axis=0), y - y.mean()
    alphas, coefs, _, n_iter = van_lasso_path(X, y, n_alphas=50, return_n_iter=True)
    _, ref, _ = lasso_path(X, y, alphas=alphas, tol=1e-12, max_iter=1_000_000)
    np.testing.assert_allclose(coefs, ref, rtol=0, atol=1e-6 * np.abs(ref).max())
    signs = np.sign(coefs)
    unchanged = np.all(signs[:, 1:] == signs[:, :-1], axis=0)
    kept = n_iter[1:] == 0
    assert not np.any(kept & ~unchanged)
    assert kept.sum() >= 30 and kept.sum() >= unchanged.sum() - 2


def _with_engine(monkeypatch, **params):
    """Make every VANLassoRegressor's engine take ``params``."""
    make = VANLassoRegressor._engine

    def engine(self):
        solver = make(self)
        for name, value in params.items():
            setattr(solver, name, value)
        return solver

    monkeypatch.setattr(VANLassoRegressor, "_engine", engine)


def test_path_default_grid_is_scikit_learns():
    X, y = PROBLEMS["diabetes"]
    X, y = X - X.mean(axis=0), y - y.mean()
    np.testing.assert_allclose(van_lasso_path(X, y, n_alphas=7)[0], lasso_path(X, y, n_alphas=7)[0])


def test_path_with_posterior_bands():
    X, y = PROBLEMS["diabetes"]
    X, y = X - X.mean(axis=0), y - y.mean()
    alphas, coefs, _, stds = van_lasso_path(X, y, n_alphas=5, return_std=True, objective="vi")
    assert stds.shape == coefs.shape and np.all(stds > 0)
    # each alpha's posterior is the one VANLassoRegressor fits there
    ref = VANLassoRegressor(alpha=alphas[2], fit_intercept=False, objective="vi").fit(X, y)
    np.testing.assert_allclose(coefs[:, 2], ref.coef_, rtol=1e-6, atol=1e-8 * np.abs(ref.coef_).max())
    np.testing.assert_allclose(stds[:, 2], np.sqrt(ref.sigma_), rtol=1e-4)


def test_path_rejects_what_it_sets():
    X, y = PROBLEMS["diabetes"]
    with pytest.raises(TypeError, match="sets alpha itself"):
        van_lasso_path(X, y, alpha=0.1)
    with pytest.raises(ValueError, match="finite and positive"):
        van_lasso_path(X, y, alphas=[0.1, -1.0])
    with pytest.raises(ValueError, match="'max_iter' parameter"):
        van_lasso_path(X, y, max_iter=0)


@pytest.mark.parametrize("name", list(PROBLEMS))
def test_cv_chooses_lassocvs_alpha_on_the_same_folds_and_grid(name):
    X, y = PROBLEMS[name]
    cv = KFold(4, shuffle=True, random_state=0)
    van = VANLassoCV(alphas=15, cv=cv).fit(X, y)
    ref = LassoCV(alphas=15, cv=cv, tol=1e-12, max_iter=1_000_000).fit(X, y)
    np.testing.assert_allclose(van.alphas_, ref.alphas_, rtol=1e-12)
    assert van.alpha_ == pytest.approx(ref.alpha_, rel=1e-12)
    np.testing.assert_allclose(van.mse_path_, ref.mse_path_, rtol=1e-7)  # reached: 1.8e-9
    # reached: 1.7e-11 and 2.4e-10
    np.testing.assert_allclose(van.coef_, ref.coef_, rtol=0, atol=1e-9 * np.abs(ref.coef_).max())
    assert van.intercept_ == pytest.approx(ref.intercept_, rel=1e-8, abs=1e-6)
    assert van.dual_gap_ >= 0 and not hasattr(van, "partial_fit")


def test_cv_folds_run_in_parallel_with_the_same_result():
    """The folds in joblib's workers give the same path as in this process, to
    round-off (the workers' BLAS may run on another number of threads)."""
    X, y = PROBLEMS["diabetes"]
    one = VANLassoCV(alphas=8, cv=3).fit(X, y)
    two = VANLassoCV(alphas=8, cv=3, n_jobs=2).fit(X, y)
    np.testing.assert_allclose(one.mse_path_, two.mse_path_, rtol=1e-10)
    assert one.alpha_ == pytest.approx(two.alpha_, rel=1e-12)


@pytest.mark.parametrize("Estimator", [VANLassoRegressor, VANLassoCV])
def test_two_targets_get_an_error_that_says_what_to_use(Estimator):
    X, y = PROBLEMS["diabetes"]
    with pytest.raises(ValueError, match="MultiOutputRegressor"):
        Estimator().fit(X, np.c_[y, y])


def test_penalty_copies_share_the_kkt_checks_smooth_part(rng):
    # A path checks one with_penalty copy per alpha: the right-hand side, scales
    # and support systems are computed once, and each copy's check is its own.
    from skvan.objectives import L1Penalty, QuadraticObjective
    from skvan.sparse import kkt_finish

    X, y = rng.standard_normal((40, 6)), rng.standard_normal(40)
    base = QuadraticObjective.from_data(X, y, penalty=L1Penalty(np.full(6, 1.0)))
    copies = [base.with_penalty(L1Penalty(np.full(6, lam))) for lam in (20.0, 5.0, 0.5)]
    zeros = np.zeros(6)
    for objective in copies:
        coef, _, ok = kkt_finish(objective, zeros, zeros)
        fresh = QuadraticObjective(objective.G, objective.b, objective.c, objective.penalty)
        assert ok
        np.testing.assert_array_equal(coef, kkt_finish(fresh, zeros, zeros)[0])
    assert all(c.smooth_cache() is base.smooth_cache() for c in copies)
    np.testing.assert_array_equal(base.smooth_cache()["kkt_rhs"], base.b)


def test_kkt_follow_stops_at_its_event_budget_and_on_a_singular_support():
    """With no events allowed, a kink is not crossed: kkt_follow says so and
    returns values for kkt_finish to start from; with two equal columns in the
    support with opposite signs the equations have no solution, and it hands
    over at once (the path then corrects the support or runs VAN)."""
    from skvan.objectives import L1Penalty, QuadraticObjective
    from skvan.sparse import kkt_finish, kkt_follow

    X, y = PROBLEMS["correlated p > n"]
    X, y = X - X.mean(axis=0), y - y.mean()
    n, p = X.shape
    alphas, coefs, _ = van_lasso_path(X, y, n_alphas=8)
    base = QuadraticObjective.from_data(X, y)
    before, after = (base.with_penalty(L1Penalty(np.full(p, n * a))) for a in alphas[3:5])
    coef, n_events, ok = kkt_follow(before, after, coefs[:, 3], max_events=0)
    assert not ok and n_events == 0 and coef.shape == (p,)
    finished, _, ok = kkt_finish(after, coef, np.zeros(p))
    assert ok
    np.testing.assert_allclose(finished, coefs[:, 4], rtol=0, atol=1e-8 * np.abs(coefs).max())

    twice = np.column_stack([X, X[:, :1]])  # column 0 twice
    quad = QuadraticObjective.from_data(twice, y)
    start = np.zeros(p + 1)
    start[[0, p]] = 1.0, -1.0  # both copies in the support, with opposite signs
    lam = np.full(p + 1, n * alphas[2])
    coef, n_events, ok = kkt_follow(quad.with_penalty(L1Penalty(2 * lam)),
                                    quad.with_penalty(L1Penalty(lam)), start)
    assert not ok and n_events == 0


@pytest.mark.parametrize("positive", [False, True])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("sparse", [False, True])
def test_cv_grids_are_scikit_learns(positive, weighted, sparse):
    """The automatic grids equal LassoCV's and ElasticNetCV's to round-off, also
    with positive=True where the largest correlation is negative (there the
    constrained alpha_max is that of the largest positive one, not of the
    largest in size), with sample weights, and on sparse X."""
    import scipy.sparse as sp
    from sklearn.linear_model import ElasticNetCV

    from skvan import VANElasticNetCV

    X, y = load_diabetes(return_X_y=True)
    y = -y  # the largest |x_j^T y| comes from a negative correlation
    X = sp.csr_matrix(X) if sparse else X
    w = np.random.default_rng(0).uniform(0.5, 2.0, len(y)) if weighted else None
    ours = VANLassoCV(positive=positive, alphas=8, cv=3).fit(X, y, sample_weight=w)
    ref = LassoCV(positive=positive, alphas=8, cv=3).fit(X, y, sample_weight=w)
    np.testing.assert_allclose(ours.alphas_, ref.alphas_, rtol=1e-12)
    ours = VANElasticNetCV(l1_ratio=[0.3, 0.8], positive=positive, alphas=8, cv=3)
    ref = ElasticNetCV(l1_ratio=[0.3, 0.8], positive=positive, alphas=8, cv=3)
    np.testing.assert_allclose(ours.fit(X, y, sample_weight=w).alphas_,
                               ref.fit(X, y, sample_weight=w).alphas_, rtol=1e-12)
    if positive:
        centred = np.asarray(X.T @ (y - y.mean() if w is None else y - np.average(y, weights=w)))
        assert centred.max() < np.abs(centred).max()  # the case that mattered


def _objectives_at(X, y, alphas, positive=False):
    """The Lasso's objectives (``1/2 ||y - X w||^2 + n alpha ||w||_1``) at ``alphas``."""
    from skvan.objectives import L1Penalty, QuadraticObjective
    from skvan.sparse import nonnegative

    n, p = X.shape
    base = QuadraticObjective.from_data(X, y)
    objectives = [base.with_penalty(L1Penalty(np.full(p, n * a))) for a in alphas]
    return [nonnegative(o) for o in objectives] if positive else objectives


@pytest.mark.parametrize("positive", [False, True])
@pytest.mark.parametrize("name", list(PROBLEMS))
def test_kkt_path_reads_every_alpha_off_one_homotopy(name, positive):
    """One homotopy from alpha_max to the grid's end gives lasso_path's
    coefficients at every alpha between (read off its linear pieces), with one
    solve per kink (plus the start's) rather than one per alpha as well, and the
    KKT conditions judged at its two ends only (every support factors)."""
    import skvan.sparse._kkt as sparse
    from skvan.sparse import kkt_path

    X, y = PROBLEMS[name]
    X, y = X - X.mean(axis=0), y - y.mean()
    alphas = van_lasso_path(X, y, n_alphas=60, positive=positive)[0]
    _, ref, _ = lasso_path(X, y, alphas=alphas, tol=1e-12, max_iter=1_000_000, positive=positive)
    start, end = _objectives_at(X, y, alphas[[0, -1]], positive)
    at = (alphas[0] - alphas) / (alphas[0] - alphas[-1])
    calls = {"solve": 0, "judge": 0}

    def counted(method_name):
        method = getattr(sparse._KKTCheck, method_name)

        def call(*args):
            calls[method_name] += 1
            return method(*args)
        return call

    with pytest.MonkeyPatch.context() as mp:
        for method_name in calls:
            mp.setattr(sparse._KKTCheck, method_name, counted(method_name))
        coefs, n_reached, n_events = kkt_path(start, end, np.zeros(X.shape[1]), at)
    assert n_reached == len(alphas) and calls == {"solve": n_events + 1, "judge": 2}
    np.testing.assert_allclose(coefs.T, ref, rtol=0, atol=1e-6 * np.abs(ref).max())
    np.testing.assert_array_equal(coefs.T != 0, np.abs(ref) > 1e-10 * np.abs(ref).max())
    kinks = np.any(np.sign(coefs[1:]) != np.sign(coefs[:-1]), axis=1).sum()
    assert kinks >= 4 and n_events >= kinks


def test_kkt_path_beyond_its_support_goes_on_at_its_event_rate():
    """Past ``max_support`` the homotopy stops at once without ``max_rate``, goes
    on while its events average at most ``max_rate`` per point passed, and the
    points it reaches are lasso_path's either way."""
    from skvan.sparse import kkt_path

    X, y = PROBLEMS["correlated p > n"]
    X, y = X - X.mean(axis=0), y - y.mean()
    alphas = van_lasso_path(X, y, n_alphas=60)[0]
    _, ref, _ = lasso_path(X, y, alphas=alphas, tol=1e-12, max_iter=1_000_000)
    start, end = _objectives_at(X, y, alphas[[0, -1]])
    at = (alphas[0] - alphas) / (alphas[0] - alphas[-1])
    coef = np.zeros(X.shape[1])
    full, n_all, events = kkt_path(start, end, coef, at)
    assert n_all == len(alphas) and events > 20
    stopped, n_stopped, _ = kkt_path(start, end, coef, at, max_support=10)
    assert 0 < n_stopped < len(alphas)
    assert np.count_nonzero(stopped[n_stopped - 1]) <= 10
    # 80 events over the 60 points: a rate of 1.2 runs out on the way.
    slow, n_slow, _ = kkt_path(start, end, coef, at, max_support=10, max_rate=1.2)
    fast, n_fast, fast_events = kkt_path(start, end, coef, at, max_support=10,
                                         max_rate=events + 1)
    assert n_stopped < n_slow < n_fast == len(alphas) and fast_events == events
    for coefs, n in ((stopped, n_stopped), (slow, n_slow), (fast, n_fast)):
        scale = np.abs(ref[:, :n]).max()  # reached: 4e-10
        np.testing.assert_allclose(coefs[:n].T, ref[:, :n], rtol=0, atol=1e-8 * scale)


def test_path_keeps_to_the_homotopy_while_its_events_are_few(monkeypatch):
    """A path past ``path_support`` follows the homotopy at up to
    ``path_event_rate`` events per alpha, and once it needed a fresh start there
    it keeps to fresh starts; both equal lasso_path at every alpha."""
    import skvan.van._lasso as engine

    X, y = PROBLEMS["correlated p > n"]
    X, y = X - X.mean(axis=0), y - y.mean()
    followed, coefs = {}, {}
    follow = engine.LassoSolver._follow

    def counted(self, *args, **kwargs):
        for step in follow(self, *args, **kwargs):
            followed[self.path_event_rate] = followed.get(self.path_event_rate, 0) + 1
            yield step

    monkeypatch.setattr(engine.LassoSolver, "_follow", counted)
    for rate in (0.0, 1e6):
        _with_engine(monkeypatch, path_support=10, path_event_rate=rate)
        alphas, coefs[rate], _ = van_lasso_path(X, y, n_alphas=60)
    _, ref, _ = lasso_path(X, y, alphas=alphas, tol=1e-12, max_iter=1_000_000)
    assert followed[0.0] < followed[1e6] == len(alphas) - 1
    for rate in coefs:  # reached: 4e-10
        np.testing.assert_allclose(coefs[rate], ref, rtol=0, atol=1e-8 * np.abs(ref).max())


def test_kkt_path_points_are_checked():
    """A point the homotopy's pieces got wrong is caught by the check of the
    points (here one moved off the path by 1e-4 of a coefficient, and one with a
    coefficient set to 0): the points reached end before it."""
    from skvan.sparse import kkt_path
    from skvan.sparse._kkt import _KKTCheck
    from skvan.sparse._homotopy import _points_passing

    X, y = PROBLEMS["diabetes"]
    X, y = X - X.mean(axis=0), y - y.mean()
    alphas = van_lasso_path(X, y, n_alphas=30)[0]
    start, end = _objectives_at(X, y, alphas[[0, -1]])
    at = (alphas[0] - alphas) / (alphas[0] - alphas[-1])
    coefs, n_reached, _ = kkt_path(start, end, np.zeros(X.shape[1]), at)
    check = _KKTCheck(end)
    assert n_reached == 30 and _points_passing(check, start, coefs, at) == 30
    moved = coefs.copy()
    moved[20, np.argmax(np.abs(moved[20]))] *= 1 + 1e-4
    assert _points_passing(check, start, moved, at) == 20
    dropped = coefs.copy()
    dropped[25, np.flatnonzero(dropped[25])[0]] = 0.0
    assert _points_passing(check, start, dropped, at) == 25


def test_homotopy_follows_a_sign_change():
    """On diabetes one coefficient leaves the path and comes back with the other
    sign at 0.0023 alpha_max: the homotopy blocks only the bound it left at,
    so it re-enters at the other (at c449388 it was blocked until the next
    event, and kkt_follow from alpha_max to 0.001 alpha_max handed over)."""
    from skvan.sparse import kkt_follow

    X, y = PROBLEMS["diabetes"]
    X, y = X - X.mean(axis=0), y - y.mean()
    alphas = van_lasso_path(X, y, n_alphas=100, eps=1e-3)[0]
    _, ref, _ = lasso_path(X, y, alphas=alphas, tol=1e-12, max_iter=1_000_000)
    flips = np.flatnonzero(np.any((ref[:, 1:] * ref[:, :-1] < 0)
                                  | ((ref[:, 1:] == 0) & (ref[:, :-1] != 0)), axis=1))
    assert flips.size  # a coefficient leaves on the way
    start, end = _objectives_at(X, y, alphas[[0, -1]])
    coef, n_events, ok = kkt_follow(start, end, np.zeros(X.shape[1]), max_events=100)
    assert ok and n_events > X.shape[1]  # more events than coefficients: one left
    np.testing.assert_allclose(coef, ref[:, -1], rtol=0, atol=1e-8 * np.abs(ref).max())


@pytest.mark.parametrize("verbose", [1, 2])
def test_cv_verbose_reports_each_fold_and_alpha(verbose, capsys):
    """verbose=1: a line per fold (its alphas, time, VAN iterations and best alpha)
    and the choice; verbose=2 adds a line per alpha; the solver's own lines only
    from verbose=3."""
    X, y = PROBLEMS["diabetes"]
    VANLassoCV(alphas=6, cv=3, verbose=verbose).fit(X, y)
    lines = capsys.readouterr().out.splitlines()
    folds = [line for line in lines if line.startswith("[VANLassoCV] fold")]
    alphas = [line for line in lines if line.strip().startswith("alpha=")]
    assert len(folds) == 3 and all("6 alphas" in line for line in folds)
    assert len(alphas) == (18 if verbose == 2 else 0)
    assert lines[-1].startswith("[VANLassoCV] alpha_=")
    assert not any(line.startswith("[VAN] iter") for line in lines)


def test_elastic_net_cv_verbose_names_the_l1_ratio(capsys):
    from skvan.linear_model import VANElasticNetCV

    X, y = PROBLEMS["diabetes"]
    VANElasticNetCV(l1_ratio=[0.5, 0.9], alphas=4, cv=2, verbose=1).fit(X, y)
    out = capsys.readouterr().out
    assert out.count("l1_ratio=0.5 fold") == 2 and out.count("l1_ratio=0.9 fold") == 2
