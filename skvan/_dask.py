"""dask arrays as row chunks that stay where the active scheduler keeps them.

dask is optional (``pip install "skvan[dask]"``): nothing here imports it until
an estimator is given a dask collection.
"""

import operator

import numpy as np


def is_dask_collection(x):
    """Whether ``x`` is a dask collection (checked without importing dask)."""
    return type(x).__module__.split(".")[0] == "dask" and hasattr(x, "__dask_graph__")


def map_rows(fn, X, n_columns=None, dtype=np.float64):
    """``fn`` (numpy rows -> ``(rows,)`` or ``(rows, n_columns)``) on each row
    chunk of the dask array ``X``, lazily: a dask array with ``X``'s row chunks."""
    X = X.rechunk({1: X.shape[1]})
    if n_columns is None:
        return X.map_blocks(fn, drop_axis=1, dtype=dtype, chunks=(X.chunks[0],))
    return X.map_blocks(fn, dtype=dtype, chunks=(X.chunks[0], (n_columns,)))


def reject_dask(estimator, X):
    """A clear TypeError when ``X`` is a dask collection that ``estimator`` would
    otherwise gather into this process."""
    if is_dask_collection(X):
        name = type(estimator).__name__
        raise TypeError(
            f"{name}.fit does not take dask arrays: it would gather the whole matrix "
            "here. Pass numpy or scipy.sparse data, or stream the chunks through "
            "partial_fit (dask_ml.wrappers.Incremental) where the estimator has it; "
            "VANLogisticRegression.fit, VANLassoRegressor.fit and VANElasticNet.fit run on "
            "dask arrays as map-reduce passes."
        )


def _aligned(v, row_chunks, name):
    """``v`` (labels or weights: dask, array-like or None) as a 1-D dask array with
    ``row_chunks``."""
    import dask.array as da

    if v is None:
        return None
    if not is_dask_collection(v):
        v = np.asarray(v)
    v = da.asarray(v)
    if v.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {v.shape}.")
    if np.isnan(v.shape[0]):
        v = v.compute_chunk_sizes()
    if v.shape[0] != sum(row_chunks):
        raise ValueError(
            f"X has {sum(row_chunks)} rows but {name} has {v.shape[0]}: they must have the "
            "same number of rows."
        )
    return v.rechunk((row_chunks,))


class DaskChunks:
    """Row chunks of ``(X, y, sample_weight)`` for map-reduce passes.

    ``X`` is rechunked to whole rows and ``y`` (and the weights) to ``X``'s row
    chunks, then persisted on the active dask scheduler: on a ``distributed``
    cluster the chunks stay in the workers' memory (the client never holds
    ``X``); with the local schedulers, in this process. :meth:`map` runs a
    function on every chunk, where the chunk lives, and returns the list of
    (small) results.

    Parameters
    ----------
    X : dask array of shape (n_samples, n_features)
    y : dask array or array-like of shape (n_samples,)
    sample_weight : dask array, array-like or None
    """

    def __init__(self, X, y, sample_weight=None):
        import dask

        if X.ndim != 2:
            raise ValueError(f"Expected a 2-D dask array for X, got {X.ndim} dimensions.")
        if not (np.issubdtype(X.dtype, np.floating) or np.issubdtype(X.dtype, np.integer)):
            raise TypeError(f"X must hold numbers, got dtype {X.dtype}.")
        if np.isnan(X.shape[0]):
            X = X.compute_chunk_sizes()
        X = X.rechunk({1: X.shape[1]})
        y = _aligned(y, X.chunks[0], "y")
        w = _aligned(sample_weight, X.chunks[0], "sample_weight")
        # Persisted collections hold the chunks (futures on a cluster) as long as
        # they are referenced: keep them for the life of the object.
        self._arrays = X, y, w = dask.persist(X, y, w)
        self.n_samples = int(X.shape[0])
        self.n_chunks = len(X.chunks[0])
        blocks_w = [None] * self.n_chunks if w is None else list(w.to_delayed().ravel())
        self._parts = list(zip(X.to_delayed().ravel(), y.to_delayed().ravel(), blocks_w))

    def map(self, fn, *args, each=None, keep=False):
        """``[fn(X_c, y_c, w_c, *args) for each chunk c]``, computed by the active
        scheduler; ``args`` enter the graph once, shared by the tasks. With
        ``each`` (one object per chunk: a value, or a handle :meth:`map` returned
        with ``keep``), ``fn(X_c, y_c, w_c, each[c], *args)``.

        With ``keep``, ``fn`` returns a pair ``(small, kept)``: the ``small`` parts
        come back (a list), the ``kept`` ones stay where their chunk's task ran
        (on a cluster, in that worker's memory) and a list of handles to them is
        returned too, for ``each`` of a later pass: ``(smalls, handles)``."""
        import dask

        shared = [dask.delayed(a, pure=False) for a in args]
        if each is None:
            tasks = [dask.delayed(fn, pure=True)(X, y, w, *shared) for X, y, w in self._parts]
        else:
            tasks = [dask.delayed(fn, pure=True)(X, y, w, e, *shared)
                     for (X, y, w), e in zip(self._parts, each)]
        if not keep:
            return list(dask.compute(*tasks))
        # Both parts persisted in one graph (each task runs once): they stay where
        # their chunk's task ran, and only the small ones are then gathered.
        parts = dask.persist(*[dask.delayed(operator.getitem, pure=True)(t, i)
                               for i in (0, 1) for t in tasks])
        return list(dask.compute(*parts[:len(tasks)])), list(parts[len(tasks):])
