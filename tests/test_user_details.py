"""What a user meets around the core (issue 18): active learning on pipelines and
DataFrames, the label budget, and warnings that point at the user's line."""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from skvan import ActiveVANClassifier, VANLassoRegressor, VANLogisticRegression
from skvan.active import bald_sampling, entropy_sampling, margin_sampling, random_sampling

STRATEGIES = [entropy_sampling, margin_sampling, bald_sampling, random_sampling]


def _documents(n, seed=0):
    """Short texts whose label is which of two vocabularies dominates."""
    rng = np.random.default_rng(seed)
    words = [["ball", "goal", "team", "match", "coach"], ["vote", "law", "party", "court", "tax"]]
    labels = rng.integers(0, 2, n)
    docs = [" ".join(rng.choice(words[k] if rng.random() < 0.8 else words[1 - k], 6)) for k in labels]
    return docs, labels


@pytest.mark.parametrize("strategy", STRATEGIES, ids=lambda s: s.__name__)
def test_strategies_take_a_text_pipeline_and_a_list_of_strings(strategy):
    docs, labels = _documents(120)
    pipe = make_pipeline(TfidfVectorizer(), VANLogisticRegression()).fit(docs[:40], labels[:40])
    pool = docs[40:]  # a list: the pipeline's vectoriser reads it
    idx, scores = strategy(pipe, pool, n_instances=5, random_state=0)
    assert len(set(idx.tolist())) == 5 and np.all((idx >= 0) & (idx < len(pool)))
    assert np.all(np.isfinite(scores))


def test_bald_on_a_pipeline_uses_its_final_step_draws():
    """BALD through the pipeline equals BALD on the transformed pool."""
    docs, labels = _documents(120)
    pipe = make_pipeline(TfidfVectorizer(), VANLogisticRegression(objective="vi")).fit(docs, labels)
    idx, scores = bald_sampling(pipe, docs, n_instances=5, random_state=0)
    ref_idx, ref_scores = bald_sampling(pipe[-1], pipe[0].transform(docs), n_instances=5, random_state=0)
    np.testing.assert_array_equal(idx, ref_idx)
    np.testing.assert_allclose(scores, ref_scores)
    with pytest.raises(TypeError, match="Pipeline ending in one"):
        from sklearn.linear_model import LogisticRegression

        bald_sampling(make_pipeline(StandardScaler(), LogisticRegression()).fit(np.eye(4), [0, 1, 0, 1]),
                      np.eye(4))


@pytest.mark.parametrize("strategy", STRATEGIES, ids=lambda s: s.__name__)
def test_a_dataframe_pool_keeps_its_column_names(strategy, breast_cancer):
    pd = pytest.importorskip("pandas")
    X, y = breast_cancer
    frame = pd.DataFrame(X, columns=[f"f{j}" for j in range(X.shape[1])])
    pipe = make_pipeline(StandardScaler(), VANLogisticRegression()).fit(frame[:100], y[:100])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "X does not have valid feature names" would raise
        clf = ActiveVANClassifier(query_strategy=strategy, random_state=0).fit(frame[:100], y[:100])
        strategy(pipe, frame[100:], n_instances=3, random_state=0)
        idx, _ = clf.query(frame[100:], n_instances=3)
    assert len(idx) == 3


def test_query_and_teach_stop_exactly_at_the_label_budget(breast_cancer):
    X, y = breast_cancer
    clf = ActiveVANClassifier(batch_size=10, max_labels=60, random_state=0)
    clf.teach(X[:2], y[:2], classes=[0, 1])  # two seed labels, then batches of 10
    pool = np.arange(2, len(y))
    sizes = []
    while not clf.should_stop():
        idx, _ = clf.query(X[pool])
        sizes.append(len(idx))
        clf.teach(X[pool[idx]], y[pool[idx]])
        pool = np.delete(pool, idx)
    assert clf.n_labels_ == 60 and sizes == [10] * 5 + [8]
    with pytest.raises(ValueError, match="budget is spent"):
        clf.query(X[pool])


def test_fit_spends_at_most_the_label_budget(breast_cancer):
    X, y = breast_cancer
    clf = ActiveVANClassifier(batch_size=10, max_labels=25, random_state=0).fit(X, y)
    assert clf.n_labels_ == 25 and len(set(clf.queried_indices_.tolist())) == 25
    assert clf.should_stop()


def _only_convergence_warnings(caught):
    return [w for w in caught if issubclass(w.category, ConvergenceWarning)]


def test_convergence_warnings_point_at_the_callers_line(breast_cancer):
    X, y = breast_cancer
    # The Lasso's target: correlated columns at a small alpha, 5 iterations
    # without the limit (on y itself it is certified after one).
    target = X[:, :5] @ np.arange(1.0, 6.0) + y
    for est in (VANLogisticRegression(max_iter=1), VANLogisticRegression(batch_size=50, max_iter=1,
                                                                         random_state=0),
                VANLassoRegressor(alpha=5e-4, max_iter=1)):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            est.fit(X, target if isinstance(est, VANLassoRegressor) else y)
        (warning,) = _only_convergence_warnings(caught)
        assert warning.filename == __file__, (type(est).__name__, warning.filename)


def test_advice_fits_the_settings(breast_cancer):
    X, y = breast_cancer
    for covariance, mentions_full in (("full", False), ("diag", True)):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            VANLogisticRegression(covariance=covariance, max_iter=2).fit(X, y)
        (warning,) = _only_convergence_warnings(caught)
        assert ("covariance='full'" in str(warning.message)) == mentions_full


def test_no_penalty_on_separable_data_warns_once():
    X = np.random.default_rng(0).standard_normal((100, 3))
    y = (X[:, 0] > 0).astype(int)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        VANLogisticRegression(C=np.inf).fit(X, y)
    messages = [str(w.message) for w in caught]
    assert len(messages) == 1 and "C=inf" in messages[0], messages


def test_beta_search_selects_something_only_under_a_budget(breast_cancer):
    """The user guide's claim: a converged convex fit ignores beta (identical CV
    scores), a label budget does not."""
    from sklearn.model_selection import GridSearchCV, StratifiedKFold

    X, y = breast_cancer
    cv = StratifiedKFold(3, shuffle=True, random_state=0)
    grid = {"beta": [0.1, 1.0, 3.0]}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        converged = GridSearchCV(VANLogisticRegression(), grid, scoring="neg_log_loss", cv=cv).fit(X, y)
        budget = GridSearchCV(ActiveVANClassifier(batch_size=5, max_labels=30, random_state=0), grid,
                              scoring="neg_log_loss", cv=cv).fit(X, y)
    same = converged.cv_results_["mean_test_score"]
    # Equal up to the fits' tol=1e-4 (coefficients within about 1e-5 relative).
    np.testing.assert_allclose(same, same[0], rtol=1e-5)
    scores = budget.cv_results_["mean_test_score"]
    assert np.ptp(scores) > 0.1 * abs(scores.max())  # beta=0.1 is far worse with 30 labels
    assert budget.best_params_["beta"] > 0.1


def test_verbose_reports_every_round_of_active_learning(breast_cancer, capsys):
    X, y = breast_cancer
    clf = ActiveVANClassifier(verbose=1, max_iter=3, refit=False, random_state=0).fit(X, y)
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in lines] == [
        f"[ActiveVANClassifier] round {k}" for k in (1, 2, 3)]
    assert "30 so far" in lines[-1] and "539 left in the pool" in lines[-1]
    clf.teach(X[:5], y[:5])
    assert capsys.readouterr().out == "[ActiveVANClassifier] taught 5 labels, 35 so far\n"
    ActiveVANClassifier(verbose=2, max_iter=1, refit=False, random_state=0).fit(X, y)
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("[VAN] iter") and out[-1].startswith("[ActiveVANClassifier] round 1")
    # With the refit (the default) the rounds end with it, and each teach reports it.
    clf = ActiveVANClassifier(verbose=1, max_iter=3, random_state=0).fit(X, y)
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in lines] == [
        *(f"[ActiveVANClassifier] round {k}" for k in (1, 2, 3)),
        "[ActiveVANClassifier] refit on 30 labels"]
    clf.teach(X[:5], y[:5])
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("[ActiveVANClassifier] refit on 35 labels")
    assert lines[-1] == "[ActiveVANClassifier] taught 5 labels, 35 so far"
    ActiveVANClassifier(max_iter=2, random_state=0).fit(X, y)
    assert capsys.readouterr().out == ""


def test_verbose_vi_reports_the_objective_it_decreases(breast_cancer, capsys):
    """Under VI the printed value is E_q[f] - H(q) (up to a constant), which the
    safeguarded steps never increase; E_q[f] alone may rise as q widens."""
    X, y = breast_cancer
    VANLogisticRegression(objective="vi", verbose=1).fit(X, y)
    lines = capsys.readouterr().out.splitlines()
    values = [float(line.split("E[f]-H=")[1].split()[0]) for line in lines]
    assert len(values) > 3 and all(b <= a * (1 + 1e-12) for a, b in zip(values, values[1:]))
    VANLogisticRegression(verbose=1).fit(X, y)
    assert "E[f]=" in capsys.readouterr().out
