"""sVAN (minibatches) and streams: the averaging schedule, passes, warnings."""

import warnings

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import log_loss

from skvan import VANLassoRegressor, VANLogisticRegression
from skvan.van import VI, VO, AveragingSchedule, PassChange


def _objective(X, y, C, coef, intercept):
    """Penalised log-loss, summed over rows (what VAN and lbfgs minimise)."""
    margin = X @ np.ravel(coef) + intercept
    return float(np.sum(np.logaddexp(0.0, -(2 * y - 1) * margin)) + 0.5 * np.sum(coef**2) / C)


def _optimum(X, y, C=1.0):
    ref = LogisticRegression(C=C, tol=1e-12, max_iter=10_000).fit(X, y)
    return _objective(X, y, C, ref.coef_, ref.intercept_[0])


def _gap(model, X, y, best, C=1.0):
    return (_objective(X, y, C, model.coef_, model.intercept_[0]) - best) / best


@pytest.mark.parametrize("objective, beta", [(VO(), 1.0), (VO(), 0.3), (VI(), 1.0)])
def test_averaging_schedule_weighs_curvatures_linearly_in_time(objective, beta):
    """Applying the rates to scalar curvatures C_1..C_T gives P_T = c_T H_T with
    H_T = 2 (H_0 + sum_s (s + 1) C_s) / ((T + 1)(T + 2)) (weights growing linearly
    in time), and mean steps of rho_t = 2 / (t + 2) Newton steps on H_t."""
    schedule, T = AveragingSchedule(beta), 12
    curvatures = np.random.RandomState(0).uniform(1, 5, T)
    P = H0 = 3.0
    for t, C in enumerate(curvatures):
        rates = schedule.rates(t, objective)
        P = rates.keep * P + rates.beta * C
        # mean step rates.mean P^-1 = rho_t H_t^-1 with P = c_t H_t
        assert rates.mean == pytest.approx(2.0 / (t + 3) * schedule.concentration(t + 1, objective))
    s = np.arange(1, T + 1)
    H = 2 * (H0 + np.sum((s + 1) * curvatures)) / ((T + 1) * (T + 2))
    assert P == pytest.approx(schedule.concentration(T, objective) * H, rel=1e-12)
    assert schedule.concentration(T, objective) == (1 + beta * T if objective.name == "vo" else 1.0)


def test_averaging_schedule_resumes_where_a_stream_stopped():
    whole, resumed = AveragingSchedule(0.5), AveragingSchedule(0.5, start=7)
    assert whole.rates(9, VO()) == resumed.rates(2, VO())


def test_pass_change_tests_only_at_the_end_of_a_pass():
    class Run:
        def __init__(self):
            self.n_data_passes, self.family = 0.0, type("F", (), {})()

    stop, run = PassChange(tol=1e-3), Run()
    stop.reset()
    for passes, mean, expected in [(0.5, [1.0, 2.0], False), (1.0, [1.5, 2.0], False),
                                   (1.5, [9.0, 9.0], False), (2.0, [1.6, 2.0], False),
                                   (3.0, [1.6001, 2.0], True)]:
        run.n_data_passes, run.family.mean = passes, np.array(mean)
        assert stop(run) is expected
    assert stop.distance == pytest.approx(1e-4)


def test_svan_keeps_improving_where_the_constant_beta_froze(breast_cancer):
    """breast_cancer in minibatches of 10 (the paper's setting): 20 passes of the
    averaging schedule reach 1e-3 of the optimal objective; the paper's constant
    beta (running-sum precision) stays more than ten times further."""
    X, y = breast_cancer
    best = _optimum(X, y)
    gaps = {}
    for growth in ("auto", 1.0):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            clf = VANLogisticRegression(batch_size=10, beta_growth=growth, max_iter=20,
                                        random_state=0).fit(X, y)
        gaps[growth] = _gap(clf, X, y, best)
        assert clf.n_iter_[0] == 20
    assert 0 <= gaps["auto"] < 1e-3
    assert gaps[1.0] > 10 * gaps["auto"]


def test_stochastic_fit_counts_passes_and_warns_at_its_limit(breast_cancer):
    X, y = breast_cancer
    with pytest.warns(ConvergenceWarning, match="max_iter=3 data passes"):
        clf = VANLogisticRegression(batch_size=50, max_iter=3, tol=1e-10, random_state=0).fit(X, y)
    assert clf.n_iter_[0] == 3
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        clf = VANLogisticRegression(batch_size=50, max_iter=100, tol=1e-2, random_state=0).fit(X, y)
    assert 2 <= clf.n_iter_[0] < 100


def test_stochastic_lasso_counts_passes(rng):
    """max_iter counts data passes, and a stochastic fit that has not converged
    when they run out warns. 150 correlated features, 100 nonzero: the
    certificate's corrections cannot finish sVAN's reading of q after three
    passes (sixty features, thirty nonzero, are certified after one)."""
    X = rng.randn(300, 150)
    X[:, 1:] += 0.9 * X[:, :-1]
    w = np.zeros(150)
    w[:100] = rng.uniform(0.5, 2, 100) * rng.choice([-1, 1], 100)
    y = X @ w + rng.randn(300)
    with pytest.warns(ConvergenceWarning, match="max_iter=3 data passes"):
        reg = VANLassoRegressor(alpha=0.001, batch_size=30, max_iter=3, tol=1e-12,
                                random_state=0).fit(X, y)
    assert reg.n_iter_ == 3
    full = VANLassoRegressor(alpha=0.001).fit(X, y)
    # Three passes from zero: within a fifth of the largest coefficient.
    assert np.abs(reg.coef_ - full.coef_).max() < 0.2 * np.abs(full.coef_).max()


def _stream(model, X, y, passes, batch, seed=0):
    rng = np.random.default_rng(seed)
    for _ in range(passes):
        order = rng.permutation(len(y))
        for start in range(0, len(y), batch):
            rows = order[start:start + batch]
            model.partial_fit(X[rows], y[rows], classes=[0, 1])
    return model


def test_stream_size_passes_converge_to_the_full_fit(breast_cancer):
    """partial_fit with stream_size=N over repeated passes reaches the optimum of
    the N rows; the sequential-Bayes stream (None) counts every row once per pass
    and ends at a weaker prior's optimum."""
    X, y = breast_cancer
    best = _optimum(X, y)
    repeated = _stream(VANLogisticRegression(stream_size=len(y), random_state=0), X, y, 30, 20)
    sequential = _stream(VANLogisticRegression(random_state=0), X, y, 30, 20)
    assert 0 <= _gap(repeated, X, y, best) < 1e-3
    assert _gap(sequential, X, y, best) > 10 * _gap(repeated, X, y, best)
    assert repeated.n_iter_[0] == 30 * len(range(0, len(y), 20))


def test_stream_size_under_vi_approaches_the_posterior(breast_cancer):
    """VI streams: the distance of the mean to the full-batch VI fit, in posterior
    standard deviations, shrinks as the passes grow."""
    X, y = breast_cancer
    full = VANLogisticRegression(objective="vi").fit(X, y)
    sd = np.sqrt(full.sigma_[0])
    distances = []
    for passes in (2, 16):
        clf = _stream(VANLogisticRegression(objective="vi", stream_size=len(y), random_state=0),
                      X, y, passes, 50)
        distances.append(np.max(np.abs(clf.coef_[0] - full.coef_[0]) / sd))
    assert distances[1] < 0.5 * distances[0]
    assert distances[1] < 0.5


def test_one_pass_in_one_percent_batches_is_near_the_full_fit():
    """Each row seen once, in 100 batches: held-out log-loss within 1% of the
    full-batch fit's."""
    X, y = make_classification(12000, 20, n_informative=10, random_state=0)
    X_train, y_train, X_test, y_test = X[:10000], y[:10000], X[10000:], y[10000:]
    full = VANLogisticRegression().fit(X_train, y_train)
    stream = _stream(VANLogisticRegression(random_state=0), X_train, y_train, 1, 100)
    ratio = log_loss(y_test, stream.predict_proba(X_test)) / log_loss(y_test, full.predict_proba(X_test))
    assert ratio < 1.01


def test_stream_size_is_validated():
    with pytest.raises(ValueError, match="stream_size"):
        VANLogisticRegression(stream_size=0).partial_fit([[0.0], [1.0]], [0, 1], classes=[0, 1])
