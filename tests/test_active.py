"""Query strategies and ActiveVANClassifier."""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning, NotFittedError
from sklearn.linear_model import LogisticRegression

from skvan import ActiveVANClassifier, VANLogisticRegression
from skvan.active import (
    STRATEGIES,
    bald_sampling,
    entropy_sampling,
    margin_sampling,
    random_sampling,
    select,
)


class ConstantProba:
    """Every point equally uncertain: all scores tie."""

    def predict_proba(self, X):
        return np.full((len(X), 2), 0.5)


@pytest.fixture(scope="module")
def fitted(breast_cancer):
    X, y = breast_cancer
    return VANLogisticRegression(objective="vi", C=0.1).fit(X[:40], y[:40]), X[40:], y[40:]


@pytest.mark.parametrize("name", ["entropy", "margin", "bald"])
def test_strategies_return_distinct_top_indices_and_their_scores(name, fitted):
    est, X_pool, _ = fitted
    top = {} if name == "bald" else {"batch": "top"}
    idx, scores = STRATEGIES[name](est, X_pool, n_instances=25, random_state=0, **top)
    assert idx.shape == scores.shape == (25,) and len(set(idx)) == 25
    assert np.all(np.diff(scores) <= 1e-12)  # most informative first
    all_idx, all_scores = STRATEGIES[name](est, X_pool, n_instances=len(X_pool), random_state=0,
                                           **top)
    assert scores[-1] >= np.sort(all_scores)[-25] - 1e-12


def test_entropy_and_margin_scores_match_their_formulas(fitted):
    est, X_pool, _ = fitted
    p = est.predict_proba(X_pool)
    idx, scores = entropy_sampling(est, X_pool, n_instances=10, batch="top")
    np.testing.assert_allclose(scores, -(p * np.log(p)).sum(1)[idx], rtol=1e-10)
    idx, scores = margin_sampling(est, X_pool, n_instances=10, batch="top")
    np.testing.assert_allclose(scores, 1 - np.abs(p[idx, 1] - p[idx, 0]), rtol=1e-10)


@pytest.mark.parametrize("strategy", [entropy_sampling, margin_sampling])
def test_a_joint_batch_starts_with_the_top_point_and_skips_its_duplicates(strategy, fitted):
    """A pool of five copies of each point: the top-k batch spends its labels on the
    copies of the best one, the joint batch (auto for a full covariance) on
    different points, since a pick resolves its copies' uncertainty."""
    est, X_pool, _ = fitted
    pool = np.repeat(X_pool[:60], 5, axis=0)
    top, top_scores = strategy(est, pool, n_instances=5, random_state=0, batch="top")
    joint, joint_scores = strategy(est, pool, n_instances=5, random_state=0)
    assert len(set(top // 5)) == 1
    assert len(set(joint // 5)) == 5
    assert joint[0] // 5 == top[0] // 5
    np.testing.assert_allclose(joint_scores[0], top_scores[0], rtol=1e-10)
    assert np.all(joint_scores[1:] <= joint_scores[0] + 1e-12)


@pytest.mark.parametrize("n_classes", [2, 3])
def test_pool_posterior_conditioning_is_the_gaussian_update(n_classes):
    """After picks j1, j2 each class's predictor variances are those of the
    precision plus h x x^T for each pick, inverted afresh (closed form against the
    rank-one updates)."""
    from sklearn.datasets import load_iris

    from skvan.active._joint import PoolPosterior

    X, y = load_iris(return_X_y=True)
    X, y = X[y < n_classes], y[y < n_classes]
    est = VANLogisticRegression(objective="vi", C=0.5, covariance="full").fit(X[::4], y[::4])
    posterior = PoolPosterior.of(est, X)
    np.testing.assert_allclose(posterior.proba(), est.predict_proba(X), atol=1e-6)
    Xd = np.c_[X, np.ones(len(X))]
    blocks = [B.copy() for B in posterior.blocks]
    for j in (7, 31):
        p = posterior.proba()[j]
        posterior.condition(j, p)
        h = p[1:] * (1 - p[1:]) if n_classes == 2 else p * (1 - p)
        blocks = [np.linalg.inv(np.linalg.inv(B) + h[k] * np.outer(Xd[j], Xd[j]))
                  for k, B in enumerate(blocks)]
    for k, B in enumerate(blocks):
        np.testing.assert_allclose(posterior.blocks[k], B, rtol=1e-8, atol=1e-12)
        np.testing.assert_allclose(posterior.V[:, k], np.einsum("ij,jk,ik->i", Xd, B, Xd),
                                   rtol=1e-8)


def test_joint_batches_need_a_posterior(fitted):
    est, X_pool, _ = fitted
    plain = LogisticRegression().fit(*_labelled(fitted))
    with pytest.raises(TypeError, match="batch='joint'.*covariance='full'"):
        margin_sampling(plain, X_pool, n_instances=3, batch="joint")
    idx, _ = margin_sampling(plain, X_pool, n_instances=3, random_state=0)  # auto: top-k
    assert len(set(idx)) == 3
    with pytest.raises(ValueError, match="batch must be one of"):
        entropy_sampling(est, X_pool, n_instances=3, batch="jointly")
    with pytest.raises(ValueError, match="diversity=0"):
        entropy_sampling(est, X_pool, n_instances=3, batch="joint", diversity=1.0)
    # a Pipeline ending in a skvan classifier conditions the final step's posterior
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X, y = _labelled(fitted)
    pipe = make_pipeline(StandardScaler(), VANLogisticRegression(objective="vi", C=0.1)).fit(X, y)
    idx, _ = margin_sampling(pipe, X_pool, n_instances=4, random_state=0, batch="joint")
    assert len(set(idx)) == 4


def _labelled(fitted):
    _, X_pool, y_pool = fitted
    return X_pool[:60], y_pool[:60]


def test_bald_is_the_epistemic_part(fitted, breast_cancer):
    est, X_pool, _ = fitted
    _, bald = bald_sampling(est, X_pool, n_instances=len(X_pool), random_state=0, n_draws=2000)
    _, entropy = entropy_sampling(est, X_pool, n_instances=len(X_pool))
    assert np.all(bald >= 0) and bald.max() <= entropy.max() + 1e-2
    assert bald.max() > 1e-3
    # a VO fit has collapsed q: no epistemic uncertainty left
    X, y = breast_cancer
    vo = VANLogisticRegression().fit(X, y)
    assert bald_sampling(vo, X_pool, n_instances=5, random_state=0)[1].max() < 1e-6


def test_bald_needs_sample_proba(breast_cancer):
    X, y = breast_cancer
    with pytest.raises(TypeError, match="sample_proba"):
        bald_sampling(LogisticRegression().fit(X, y), X)


def test_ties_are_broken_by_random_state():
    X = np.zeros((50, 3))
    a = entropy_sampling(ConstantProba(), X, n_instances=10, random_state=1)[0]
    b = entropy_sampling(ConstantProba(), X, n_instances=10, random_state=1)[0]
    c = entropy_sampling(ConstantProba(), X, n_instances=10, random_state=2)[0]
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    assert len(set(random_sampling(None, X, n_instances=50, random_state=0)[0])) == 50


def test_diversity_avoids_near_duplicates():
    """Ten copies of the most uncertain point: top-k takes all of them, the
    diversity-aware batch takes one and then spreads out."""
    rng = np.random.RandomState(0)
    X = np.vstack([np.zeros((10, 2)), rng.randn(40, 2) * 3 + 5])
    scores = np.r_[np.ones(10), np.linspace(0.5, 0.9, 40)]
    top = select(scores, 5, 0)
    spread = select(scores, 5, 0, X_pool=X, diversity=1.0)
    assert set(top) <= set(range(10))
    assert len(set(spread) & set(range(10))) == 1
    with pytest.raises(ValueError, match="X_pool"):
        select(scores, 5, 0, diversity=1.0)


def test_usable_as_a_modal_query_strategy(fitted):
    """modAL's ActiveLearner.query calls ``query_strategy(learner, X_pool, **kwargs)``
    with a learner whose predict_proba delegates to its estimator, and takes the
    first element of a returned tuple as the indices. The contract, without modAL."""
    est, X_pool, _ = fitted

    class Learner:
        estimator = est

        def predict_proba(self, X, **kwargs):
            return self.estimator.predict_proba(X, **kwargs)

        def sample_proba(self, X, **kwargs):
            return self.estimator.sample_proba(X, **kwargs)

    for strategy in (entropy_sampling, margin_sampling, bald_sampling, random_sampling):
        result = strategy(Learner(), X_pool, n_instances=3)
        assert isinstance(result, tuple) and len(result) == 2
        assert result[0].shape == (3,) and result[0].dtype.kind == "i"


def test_bad_pool_and_counts(fitted):
    est, X_pool, _ = fitted
    with pytest.raises(ValueError, match="n_instances must be a positive integer"):
        entropy_sampling(est, X_pool, n_instances=0)
    with pytest.raises(ValueError, match="NaN"):
        entropy_sampling(est, np.full((2, X_pool.shape[1]), np.nan))
    assert entropy_sampling(est, X_pool[:3], n_instances=10)[0].shape == (3,)


def test_active_fit_uses_every_point_once_in_score_order(breast_cancer):
    X, y = breast_cancer
    clf = ActiveVANClassifier(batch_size=50, max_iter=100, random_state=0).fit(X, y)
    assert sorted(clf.queried_indices_) == list(range(len(y)))
    assert np.all(np.diff(clf.query_iteration_) >= 0) and clf.query_iteration_[-1] == 11
    assert clf.n_labels_ == len(y) and clf.n_iter_[0] == 12
    # after one pass q approximates the full-data posterior
    full = VANLogisticRegression(objective="vi", C=1.0).fit(X, y)
    assert clf.score(X, y) > 0.97
    assert 0.3 < np.median(clf.sigma_[0] / full.sigma_[0]) < 3  # marginal variances


def test_active_beats_random_with_few_labels(breast_cancer):
    """The first 40 labels chosen by entropy teach more than 40 random ones
    (test log-loss on the rest; averaged over 5 seeds)."""
    from sklearn.metrics import log_loss

    X, y = breast_cancer
    losses = {}
    for strategy in ("entropy", "random"):
        runs = []
        for seed in range(5):
            perm = np.random.RandomState(seed).permutation(len(y))
            train, test = perm[:400], perm[400:]
            clf = ActiveVANClassifier(query_strategy=strategy, batch_size=5, max_iter=8, random_state=seed)
            clf.fit(X[train], y[train])
            runs.append(log_loss(y[test], clf.predict_proba(X[test])))
        losses[strategy] = np.mean(runs)
    assert losses["entropy"] < losses["random"]


def test_query_teach_loop_and_stopping_rule(breast_cancer):
    X, y = breast_cancer
    clf = ActiveVANClassifier(batch_size=4, max_labels=20, random_state=0)
    with pytest.raises(NotFittedError):
        clf.query(X)
    clf.teach(X[:4], y[:4], classes=[0, 1])
    pool = np.arange(4, len(y))
    while not clf.should_stop():
        idx, _ = clf.query(X[pool])
        clf.teach(X[pool[idx]], y[pool[idx]])
        pool = np.delete(pool, idx)
    assert clf.n_labels_ == 20 and clf.n_iter_[0] == 5
    fitted = ActiveVANClassifier(random_state=0).fit(X, y)
    _, scores = margin_sampling(fitted, X, n_instances=len(X), batch="top")
    for threshold, stops in ((scores.max() + 1e-6, True), (0.5 * scores.max(), False)):
        clf = ActiveVANClassifier(uncertainty_threshold=threshold, random_state=0).fit(X, y)
        assert clf.should_stop(X) is stops
        assert clf.should_stop(X[:0])


def test_callable_query_strategy(breast_cancer):
    X, y = breast_cancer
    calls = []

    def first_rows(estimator, X_pool, n_instances=1, random_state=None):
        calls.append(len(X_pool))
        return np.arange(n_instances), np.zeros(n_instances)

    clf = ActiveVANClassifier(query_strategy=first_rows, batch_size=100, random_state=0).fit(X, y)
    np.testing.assert_array_equal(clf.queried_indices_, np.arange(len(y)))
    assert calls == [569, 469, 369, 269, 169, 69]


@pytest.mark.parametrize("strategy", ["BatchBALD", "GreedyBALD"])
def test_skactiveml_bald_strategies_run_with_the_adapter(strategy, breast_cancer):
    """scikit-activeml's BALD strategies call sample_proba by keyword, with its
    own name for the draws (``n_samples``)."""
    pool = pytest.importorskip("skactiveml.pool")
    import pickle

    from skvan.active import to_skactiveml

    X, y = breast_cancer
    y_partial = np.full(len(y), np.nan)
    y_partial[:30] = y[:30]
    adapter = to_skactiveml(VANLogisticRegression(objective="vi", C=0.1), classes=[0, 1])
    query = getattr(pool, strategy)(sample_predictions_method_name="sample_proba",
                                    sample_predictions_dict={"n_samples": 30}, random_state=0)
    idx = query.query(X, y_partial, adapter, batch_size=3)
    assert idx.shape == (3,) and len(set(idx)) == 3 and np.all(idx >= 30)  # unlabelled rows only
    fitted = adapter.fit(X, y_partial)
    assert fitted.sample_proba(X[:4], n_samples=7).shape == (7, 4, 2)
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(fitted)).predict(X), fitted.predict(X))


def test_the_old_name_of_the_draws_still_works_for_one_release(breast_cancer):
    from skvan.active import bald_sampling

    X, y = breast_cancer
    clf = VANLogisticRegression(objective="vi").fit(X[:60], y[:60])
    with pytest.warns(FutureWarning, match="n_draws was renamed n_samples"):
        old = clf.sample_proba(X[:5], n_draws=4, random_state=0)
    np.testing.assert_array_equal(old, clf.sample_proba(X[:5], n_samples=4, random_state=0))
    with pytest.warns(FutureWarning, match="n_draws was renamed n_samples"):
        old = bald_sampling(clf, X, n_instances=2, random_state=0, n_draws=20)
    np.testing.assert_array_equal(old[0], bald_sampling(clf, X, n_instances=2, random_state=0,
                                                        n_samples=20)[0])
    with pytest.raises(ValueError, match="n_samples must be an integer >= 1"):
        clf.sample_proba(X[:5], n_samples=0)


def test_the_adapter_is_a_scikit_activeml_classifier(breast_cancer):
    """What scikit-activeml's own classifier tests ask of a SkactivemlClassifier
    (its tests/template_estimator.py), where they apply: parameters stored as
    given, labels of any type with a missing label, predictions decoded,
    probabilities that sum to one, ``score``, and clear errors for bad input."""
    pytest.importorskip("skactiveml")
    from skvan.active import to_skactiveml

    X, y = breast_cancer
    names = np.array(["tokyo", "paris"])[y]
    y_partial = np.where(np.arange(len(y)) < 60, names, "nan")
    est = VANLogisticRegression(objective="vi")
    adapter = to_skactiveml(est, classes=["paris", "tokyo"], missing_label="nan", random_state=0)
    assert adapter.estimator is est and adapter.missing_label == "nan"
    adapter.fit(X, y_partial)
    assert list(adapter.classes_) == ["paris", "tokyo"]
    P = adapter.predict_proba(X)
    assert P.shape == (len(y), 2) and np.allclose(P.sum(axis=1), 1.0)
    labels = adapter.predict(X)
    assert set(labels) <= {"paris", "tokyo"}
    np.testing.assert_array_equal(labels, adapter.classes_[np.argmax(P, axis=1)])
    assert adapter.score(X, names) == pytest.approx(np.mean(labels == names))
    assert adapter.score(X, names) > 0.8  # 60 labels (measured 0.86)
    with pytest.raises(ValueError):
        adapter.predict_proba(X[:, :5])  # another number of features
    with pytest.raises(ValueError):
        adapter.fit(np.full_like(X, np.nan), y_partial)
    with pytest.raises((TypeError, ValueError)):
        to_skactiveml(est, classes=["paris", "tokyo"], missing_label="nan").fit(
            X, np.where(np.arange(len(y)) < 60, "berlin", "nan"))  # a label not in classes


def test_skactiveml_adapter_starts_from_the_prior_when_a_class_is_missing(breast_cancer):
    pytest.importorskip("skactiveml")
    from skvan.active import to_skactiveml

    X, y = breast_cancer
    one_class = np.flatnonzero(y == 1)[:5]
    y_partial = np.full(len(y), np.nan)
    y_partial[one_class] = 1
    adapter = to_skactiveml(VANLogisticRegression(), classes=[0, 1]).fit(X, y_partial)
    assert adapter.predict_proba(X).shape == (len(y), 2)
    # no label at all: the uniform prediction, as scikit-activeml's classifiers
    empty = to_skactiveml(VANLogisticRegression(), classes=[0, 1]).fit(X, np.full(len(y), np.nan))
    np.testing.assert_array_equal(empty.predict_proba(X[:3]), np.full((3, 2), 0.5))
    assert empty.sample_proba(X[:3], n_samples=4).shape == (4, 3, 2)


def test_refit_ends_fit_at_the_laplace_posterior_of_the_labels_used(breast_cancer):
    X, y = breast_cancer
    clf = ActiveVANClassifier(refit=True, batch_size=10, max_iter=6, random_state=0).fit(X, y)
    rows = clf.queried_indices_
    # The refit's prior is the stream's, N(0, C I) on [coef, intercept]: scikit-learn's
    # penalty on a design with a column of ones and no separate intercept.
    Xd = np.c_[X[rows], np.ones(rows.size)]
    ref = LogisticRegression(C=1.0, fit_intercept=False, tol=1e-12, max_iter=10_000).fit(
        Xd, y[rows])
    np.testing.assert_allclose(clf.coef_, ref.coef_[:, :-1], atol=1e-5)
    np.testing.assert_allclose(clf.intercept_, ref.coef_[:, -1], atol=1e-5)
    # The precision is the Hessian of f at the MAP, the prior's I / C included.
    p = 1.0 / (1.0 + np.exp(-Xd @ np.r_[clf.coef_.ravel(), clf.intercept_]))
    H = (Xd * (p * (1 - p))[:, None]).T @ Xd + np.eye(Xd.shape[1])
    np.testing.assert_allclose(clf.precision_[0], H, rtol=1e-12, atol=1e-12 * np.abs(H).max())
    assert clf.n_refit_iter_ > 0
    stream = ActiveVANClassifier(refit=False, batch_size=10, max_iter=6, random_state=0).fit(X, y)
    assert stream.n_refit_iter_ == 0
    assert np.max(np.abs(stream.coef_ - clf.coef_)) > 1e-3  # the stream is another model


def test_max_iter_bounds_the_rounds_not_the_refit(breast_cancer):
    """Two rounds of fit, then a refit that converges (it had max_iter's two
    iterations too, and warned) to the MAP of the 20 labels."""
    X, y = breast_cancer
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        clf = ActiveVANClassifier(batch_size=10, max_iter=2, random_state=0).fit(X, y)
    assert clf.n_labels_ == 20 and clf.n_refit_iter_ > 2
    rows = clf.queried_indices_
    ref = LogisticRegression(C=1.0, fit_intercept=False, tol=1e-12, max_iter=10_000).fit(
        np.c_[X[rows], np.ones(rows.size)], y[rows])
    np.testing.assert_allclose(clf.coef_, ref.coef_[:, :-1], atol=1e-5)


def test_refit_after_teach_does_not_depend_on_the_order_of_the_labels(breast_cancer):
    X, y = breast_cancer
    a = ActiveVANClassifier(refit=True, random_state=0)
    a.teach(X[:30], y[:30], classes=[0, 1]).teach(X[30:60], y[30:60])
    b = ActiveVANClassifier(refit=True, random_state=0)
    b.teach(X[30:60], y[30:60], classes=[0, 1]).teach(X[:30], y[:30])
    np.testing.assert_allclose(a.coef_, b.coef_, atol=1e-4)
    assert a.n_labels_ == 60 and a.n_iter_[0] == 2
    sparse = pytest.importorskip("scipy.sparse")
    s = ActiveVANClassifier(refit=True, random_state=0)
    s.teach(sparse.csr_matrix(X[:30]), y[:30], classes=[0, 1])
    s.teach(sparse.csr_matrix(X[30:60]), y[30:60])
    np.testing.assert_allclose(s.coef_, a.coef_, atol=1e-10)
    mixed = ActiveVANClassifier(refit=True, random_state=0)
    mixed.teach(X[:30], y[:30], classes=[0, 1]).teach(sparse.csr_matrix(X[30:60]), y[30:60])
    np.testing.assert_allclose(mixed.coef_, a.coef_, atol=1e-10)
    # The stream keeps no labels.
    c = ActiveVANClassifier(refit=False, random_state=0).teach(X[:30], y[:30], classes=[0, 1])
    assert c._held is None


def test_refit_with_a_class_not_yet_labelled_converges():
    """Every intercept has the prior N(0, C): a class with no label has a MAP."""
    from sklearn.datasets import load_digits
    from sklearn.preprocessing import StandardScaler

    X, y = load_digits(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    keep = y < 9  # the tenth class has no label yet
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        clf = ActiveVANClassifier(refit=True, random_state=0).teach(
            X[keep][:40], y[keep][:40], classes=np.arange(10))
    assert clf.n_refit_iter_ < 20
    assert np.all(clf.predict_proba(X[:50])[:, 9] < 0.1)


def test_refit_on_several_classes():
    from sklearn.datasets import load_iris
    from sklearn.preprocessing import StandardScaler

    X, y = load_iris(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    clf = ActiveVANClassifier(refit=True, batch_size=5, max_iter=6, random_state=0).fit(X, y)
    rows = clf.queried_indices_
    ref = LogisticRegression(C=1.0, fit_intercept=False, tol=1e-12, max_iter=10_000).fit(
        np.c_[X[rows], np.ones(rows.size)], y[rows])
    # The refit's tolerance, 1e-4 of the largest coefficient (the gradient's bound
    # may stop it as soon as it is provably there).
    atol = 1e-4 * np.abs(ref.coef_).max()
    np.testing.assert_allclose(clf.coef_, ref.coef_[:, :-1], atol=atol)
    np.testing.assert_allclose(clf.intercept_, ref.coef_[:, -1], atol=atol)
    np.testing.assert_allclose(clf.predict_proba(X).sum(axis=1), 1.0, rtol=1e-12)


def test_a_refit_from_its_kept_laplace_family_is_the_refit_from_the_attributes():
    """Each teach starts its refit from the last Laplace family, rescaled with its
    factor and variances (no factorisation); the same refit started from
    ``coef_`` and ``precision_``, as an estimator without the kept family
    (unpickled from an older release, or ``precision_`` set anew) starts it,
    gives the same posterior, and a replaced ``precision_`` is not taken for
    the kept family's."""
    import copy

    from sklearn.datasets import load_iris
    from sklearn.preprocessing import StandardScaler

    X, y = load_iris(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    rng = np.random.RandomState(0)
    order = rng.permutation(150)
    kept = ActiveVANClassifier(random_state=0).teach(X[order[:30]], y[order[:30]],
                                                      classes=[0, 1, 2])
    rebuilt = copy.deepcopy(kept)
    rebuilt._laplace = None
    for clf in (kept, rebuilt):
        clf.teach(X[order[30:40]], y[order[30:40]])
    np.testing.assert_allclose(kept.coef_, rebuilt.coef_, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(kept.sigma_, rebuilt.sigma_, rtol=1e-12,
                               atol=1e-14 * np.abs(kept.sigma_).max())
    assert kept._laplace[2] is kept.precision_
    kept.precision_ = kept.precision_.copy()
    assert kept._fitted_q(kept._laplace[1])._marginal is None  # built from the attributes
