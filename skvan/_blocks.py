"""Row blocks for the passes over the data.

Whole-array temporaries of ``n_samples x n_params`` (or ``x n_nodes``) cost more
in page faults than in arithmetic once they pass a few megabytes: on a
100,000 x 101 design, ``X^T diag(d) X`` takes 85-300 ms as one product and 45 ms
in blocks of 8,192 rows (benchmarks/bench_logistic.py). Every pass over the rows
goes through :func:`row_blocks`.

Blocks of 2 MB beat 8 MB ones on every shape measured
(``python benchmarks/bench_passes.py``, the Gram product ``X_d^T X_d`` and the
predictor variances, ms, 8 MB -> 2 MB): 1,000,000 x 21: 34 -> 27 and 35 -> 27;
100,000 x 101: 31 -> 20 and 37 -> 23; 20,000 x 201: 16 -> 12 and 18 -> 16.
Blocks of 128 KB lose again (36, 49; 29, 28; 21, 20).
"""

#: Entries per temporary block (2 MB of float64).
BLOCK_ELEMENTS = 1 << 18


def row_blocks(n_rows, row_size, max_elements=BLOCK_ELEMENTS):
    """Yield slices covering ``range(n_rows)`` with at most ``max_elements``
    entries per block of ``row_size``-long rows (at least one row per block)."""
    step = max(1, max_elements // max(int(row_size), 1))
    for start in range(0, n_rows, step):
        yield slice(start, min(start + step, n_rows))


def index_blocks(index, row_size, max_elements=BLOCK_ELEMENTS):
    """Blocks of the sorted row indices ``index``, as :func:`row_blocks` makes them
    of ``range(len(index))``; a run of consecutive rows gives slices (views)."""
    if index.size and index[-1] - index[0] + 1 == index.size:
        start = int(index[0])
        return [slice(start + b.start, start + b.stop)
                for b in row_blocks(index.size, row_size, max_elements)]
    return [index[b] for b in row_blocks(index.size, row_size, max_elements)]
