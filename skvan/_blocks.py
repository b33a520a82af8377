"""Row blocks for the passes over the data.

Whole-array temporaries of ``n_samples x n_params`` (or ``x n_nodes``) cost more
in page faults than in arithmetic once they pass a few megabytes, so every pass
over the rows goes through :func:`row_blocks`. Blocks of 2 MB stay in the cache
where larger ones do not, and are large enough for the BLAS to run at full speed
(``python benchmarks/bench_passes.py`` times the Gram product and the predictor
variances for several block sizes).
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
