"""dask: map-reduce fits on a real LocalCluster of two worker processes, and
dask_ml's Incremental driving partial_fit. Skipped without dask/distributed."""

import warnings

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

from skvan import (  # noqa: E402
    ActiveVANClassifier,
    VANElasticNet,
    VANLassoCV,
    VANLassoRegressor,
    VANLogisticRegression,
)


@pytest.fixture(scope="module")
def client():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # distributed's own start-up notices
        cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                           dashboard_address=None)
        client = distributed.Client(cluster)
    yield client
    client.close()
    cluster.close()


def _generated_chunk(block_info=None, n_features=10, seed=0):
    """Rows of a logistic problem, made where the chunk is computed."""
    from scipy.special import expit

    location = block_info[None]["chunk-location"][0]
    rows = block_info[None]["chunk-shape"][0]
    rng = np.random.default_rng([seed, location])
    X = rng.standard_normal((rows, n_features))
    w = np.linspace(-1.0, 1.0, n_features)
    y = (rng.random(rows) < expit(X @ w)).astype(np.float64)
    return np.column_stack([X, y])


def generated(n_samples, chunk, n_features=10):
    """A dask array of ``[X, y]`` generated chunk by chunk (never on the client)."""
    data = da.map_blocks(_generated_chunk, chunks=((chunk,) * (n_samples // chunk), (n_features + 1,)),
                         dtype=np.float64, n_features=n_features)
    return data[:, :n_features], data[:, n_features]


def _relative(a, b):
    return float(np.max(np.abs(a - b)) / np.max(np.abs(b)))


@pytest.mark.parametrize("params", [{}, {"objective": "vi"}, {"class_weight": "balanced"}])
def test_dask_fit_on_a_cluster_matches_the_numpy_fit(client, breast_cancer, params):
    X, y = breast_cancer
    numpy_fit = VANLogisticRegression(**params).fit(X, y)
    dask_fit = VANLogisticRegression(**params).fit(da.from_array(X, chunks=(100, 10)),
                                                   da.from_array(y, chunks=50))
    assert _relative(dask_fit.coef_, numpy_fit.coef_) <= 1e-8
    assert _relative(dask_fit.sigma_, numpy_fit.sigma_) <= 1e-8


@pytest.mark.parametrize("params", [{}, {"objective": "vi"}])
def test_a_dask_iteration_passes_over_the_chunks_once(client, breast_cancer, monkeypatch, params):
    """A step's first trial is the next iteration's pass (MapReduce keeps it):
    one pass to start, then one per iteration, plus any trial a step rejects
    (before: two per iteration)."""
    from skvan._dask import DaskChunks

    passes, original = [], DaskChunks.map

    def counted(self, fn, *args, **kwargs):
        if fn.__name__ in ("_chunk_expectations", "_chunk_value"):
            passes.append(fn.__name__)
        return original(self, fn, *args, **kwargs)

    monkeypatch.setattr(DaskChunks, "map", counted)
    X, y = breast_cancer
    fit = VANLogisticRegression(**params).fit(da.from_array(X, chunks=(100, 30)),
                                              da.from_array(y, chunks=100))
    n_iter = int(fit.n_iter_[0])
    assert n_iter + 1 <= len(passes) <= n_iter + 2
    assert passes.count("_chunk_value") <= 1


def _spy_on_carrying(monkeypatch):
    """A list that records, for each pass of a dask fit, whether it carried the
    rows' predictor variances its chunks kept."""
    from skvan.expectations._map_reduce import MapReduce

    carried, original = [], MapReduce._spreads

    def spreads(self, objective, family):
        out = original(self, objective, family)
        carried.append(out[1] is not None)
        return out

    monkeypatch.setattr(MapReduce, "_spreads", spreads)
    return carried


def test_a_dask_vo_fit_carries_its_predictor_variances_as_a_numpy_fit_does(client, breast_cancer,
                                                                          monkeypatch):
    """The rows' variances of the last pass stay with their chunks and each
    chunk scales its own once they are all below CARRY_VARIANCE: the passes a
    numpy fit skips, a dask fit skips too."""
    carried = _spy_on_carrying(monkeypatch)

    X, y = breast_cancer
    numpy_fit = VANLogisticRegression().fit(X, y)
    dask_fit = VANLogisticRegression().fit(da.from_array(X, chunks=(100, 30)),
                                           da.from_array(y, chunks=100))
    assert any(carried) and not carried[0]
    assert _relative(dask_fit.coef_, numpy_fit.coef_) <= 1e-12
    carried.clear()
    VANLogisticRegression(objective="vi").fit(da.from_array(X, chunks=(100, 30)),
                                              da.from_array(y, chunks=100))
    assert carried and not any(carried)


def test_multinomial_dask_fit_matches_the_numpy_fit(client, monkeypatch):
    """Its rows' K x K covariances stay on the workers and are carried as a numpy
    fit carries them: the same passes, the same coefficients. (The chunks keep
    the full form, which "auto" on the numpy array would trade for the operator.)"""
    from sklearn.datasets import load_digits
    from sklearn.preprocessing import StandardScaler

    X, y = load_digits(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    numpy_fit = VANLogisticRegression(covariance="full").fit(X, y)
    carried = _spy_on_carrying(monkeypatch)
    dask_fit = VANLogisticRegression().fit(da.from_array(X, chunks=(400, 64)), y)
    assert any(carried) and not carried[0]
    assert _relative(dask_fit.coef_, numpy_fit.coef_) <= 1e-12
    np.testing.assert_array_equal(dask_fit.classes_, numpy_fit.classes_)
    np.testing.assert_allclose(dask_fit.predict_proba(X), numpy_fit.predict_proba(X), atol=1e-10)


def test_dask_fit_never_gathers_X_on_the_client(client, monkeypatch):
    """X is generated chunk by chunk on the workers; turning the dask array into
    a numpy array on the client would raise."""
    X, y = generated(20_000, 2_000)

    def refuse(*args, **kwargs):
        raise AssertionError("the dask array was gathered on the client")

    monkeypatch.setattr(da.Array, "__array__", refuse)
    monkeypatch.setattr(da.Array, "compute", refuse)
    clf = VANLogisticRegression().fit(X, y)
    assert clf.coef_.shape == (1, 10)
    assert np.all(np.diff(clf.coef_[0]) > 0)  # the generating weights increase


def test_float32_chunks_give_the_float32_numpy_fit(client, breast_cancer):
    X, y = breast_cancer
    X32 = X.astype(np.float32)
    numpy_fit = VANLogisticRegression().fit(X32, y)
    dask_fit = VANLogisticRegression().fit(da.from_array(X32, chunks=(200, 30)), y)
    assert _relative(dask_fit.coef_, numpy_fit.coef_) <= 1e-8


def test_dask_input_is_validated(client, breast_cancer):
    X, y = breast_cancer
    bad = X.copy()
    bad[3, 4] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        VANLogisticRegression().fit(da.from_array(bad, chunks=100), y)
    with pytest.raises(ValueError, match="same number of rows"):
        VANLogisticRegression().fit(da.from_array(X, chunks=100), y[:-1])
    with pytest.raises(ValueError, match="batch_size"):
        VANLogisticRegression(batch_size=10).fit(da.from_array(X, chunks=100), y)
    with pytest.raises(ValueError, match="quadrature"):
        VANLogisticRegression(expectation="mc").fit(da.from_array(X, chunks=100), y)
    with pytest.raises(ValueError, match="at least 2 classes"):
        VANLogisticRegression().fit(da.from_array(X, chunks=100), np.zeros(len(y)))
    with pytest.raises(ValueError, match="non-negative"):
        VANLogisticRegression().fit(da.from_array(X, chunks=100), y, sample_weight=-np.ones(len(y)))
    with pytest.raises(ValueError, match="covariance='dual'"):
        VANLogisticRegression(covariance="dual").fit(da.from_array(X, chunks=100), y)


@pytest.mark.parametrize("Estimator", [ActiveVANClassifier, VANLassoCV])
def test_estimators_without_a_dask_path_refuse_dask_arrays(Estimator, breast_cancer):
    """They would gather X on the client: a TypeError saying so, not a silent copy."""
    X, y = breast_cancer
    with pytest.raises(TypeError, match="does not take dask arrays"):
        Estimator().fit(da.from_array(X, chunks=100), y)


def test_incremental_drives_partial_fit(client, breast_cancer):
    """dask_ml's Incremental calls partial_fit chunk by chunk; with stream_size the
    passes approach the full fit."""
    wrappers = pytest.importorskip("dask_ml.wrappers")
    X, y = breast_cancer
    Xd, yd = da.from_array(X, chunks=(20, 30)), da.from_array(y, chunks=20)
    full = VANLogisticRegression().fit(X, y)
    inc = wrappers.Incremental(VANLogisticRegression(stream_size=len(y), random_state=0),
                               shuffle_blocks=True, random_state=0)
    for _ in range(20):
        inc.partial_fit(Xd, yd, classes=[0, 1])
    model = inc.estimator_
    assert model.n_iter_[0] == 20 * Xd.numblocks[0]
    assert _relative(model.coef_, full.coef_) < 0.05
    assert abs(model.score(X, y) - full.score(X, y)) <= 0.01


def test_predictions_on_dask_arrays_stay_lazy_and_chunked(client, breast_cancer):
    X, y = breast_cancer
    clf = VANLogisticRegression().fit(X, y)
    Xd = da.from_array(X, chunks=(100, 10))
    for method in ("predict_proba", "predict_log_proba", "decision_function", "predict"):
        lazy = getattr(clf, method)(Xd)
        assert isinstance(lazy, da.Array) and lazy.chunks[0] == Xd.chunks[0]
        np.testing.assert_allclose(lazy.compute(), getattr(clf, method)(X), rtol=1e-12)


@pytest.fixture(scope="module")
def diabetes():
    from sklearn.datasets import load_diabetes
    from sklearn.preprocessing import StandardScaler

    X, y = load_diabetes(return_X_y=True)
    return StandardScaler().fit_transform(X), y


@pytest.mark.parametrize("Estimator, params", [
    (VANLassoRegressor, {}), (VANLassoRegressor, {"objective": "vi"}),
    (VANLassoRegressor, {"positive": True, "fit_intercept": False}),
    (VANElasticNet, {"l1_ratio": 0.5})])
def test_dask_lasso_on_a_cluster_matches_the_numpy_fit(client, diabetes, Estimator, params):
    """The Lasso family's least squares from one map-reduce pass over weighted
    chunks: the numpy fit's model and predictions, the latter lazy."""
    X, y = diabetes
    w = np.random.default_rng(0).random(len(y)) + 0.5
    numpy_fit = Estimator(alpha=0.1, **params).fit(X, y, sample_weight=w)
    Xd = da.from_array(X, chunks=(100, 10))
    dask_fit = Estimator(alpha=0.1, **params).fit(Xd, da.from_array(y, chunks=100),
                                                  sample_weight=da.from_array(w, chunks=100))
    assert _relative(dask_fit.coef_, numpy_fit.coef_) <= 1e-8
    assert _relative(dask_fit.sigma_, numpy_fit.sigma_) <= 1e-8
    assert dask_fit.noise_variance_ == pytest.approx(numpy_fit.noise_variance_, rel=1e-8)
    mean, std = dask_fit.predict(Xd, return_std=True)
    assert isinstance(mean, da.Array) and isinstance(std, da.Array)
    ref_mean, ref_std = numpy_fit.predict(X, return_std=True)
    np.testing.assert_allclose(mean.compute(), ref_mean, rtol=1e-8)
    np.testing.assert_allclose(std.compute(), ref_std, rtol=1e-8)


def test_dask_lasso_never_gathers_X_on_the_client(client, monkeypatch):
    """Rows generated chunk by chunk on the workers (binary targets of a logistic
    model whose weights increase: least squares recovers their order)."""
    X, y = generated(20_000, 2_000)

    def refuse(*args, **kwargs):
        raise AssertionError("the dask array was gathered on the client")

    monkeypatch.setattr(da.Array, "__array__", refuse)
    monkeypatch.setattr(da.Array, "compute", refuse)
    reg = VANLassoRegressor(alpha=1e-4).fit(X, y)
    assert reg.coef_.shape == (10,)
    assert np.all(np.diff(reg.coef_) > 0)


def test_dask_lasso_input_is_validated(client, diabetes):
    X, y = diabetes
    Xd, yd = da.from_array(X, chunks=100), da.from_array(y, chunks=100)
    bad = X.copy()
    bad[3, 4] = np.nan
    with pytest.raises(ValueError, match="X contains NaN"):
        VANLassoRegressor().fit(da.from_array(bad, chunks=100), y)
    with pytest.raises(ValueError, match="y contains NaN"):
        VANLassoRegressor().fit(Xd, np.where(np.arange(len(y)) == 7, np.nan, y))
    with pytest.raises(ValueError, match="non-negative"):
        VANLassoRegressor().fit(Xd, yd, sample_weight=-np.ones(len(y)))
    with pytest.raises(ValueError, match="same number of rows"):
        VANLassoRegressor().fit(Xd, y[:-1])
    for params, what in (({"batch_size": 10}, "batch_size"), ({"expectation": "mc"}, "'mc'"),
                         ({"covariance": "dual"}, "'dual'")):
        with pytest.raises(ValueError, match=what):
            VANLassoRegressor(**params).fit(Xd, yd)
    with pytest.raises(ValueError, match="as many rows as parameters"):
        VANLassoRegressor().fit(da.from_array(X[:5], chunks=5), y[:5])
    for scale in (1e160, 1e120, 1e-120):  # an overflowed Gram; squares the scaling would need
        with pytest.raises(ValueError, match="Rescale"):
            VANLassoRegressor().fit(da.from_array(X * scale, chunks=100), yd)
