"""Row blocks for the passes over the data.

Whole-array temporaries of ``n_samples x n_params`` (or ``x n_nodes``) cost more
in page faults than in arithmetic once they pass a few megabytes: on a
100,000 x 101 design, ``X^T diag(d) X`` takes 85-300 ms as one product and 45 ms
in blocks of 8,192 rows (benchmarks/bench_logistic.py). Every pass over the rows
goes through :func:`row_blocks`.
"""

#: Entries per temporary block (8 MB of float64).
BLOCK_ELEMENTS = 1 << 20


def row_blocks(n_rows, row_size, max_elements=BLOCK_ELEMENTS):
    """Yield slices covering ``range(n_rows)`` with at most ``max_elements``
    entries per block of ``row_size``-long rows (at least one row per block)."""
    step = max(1, max_elements // max(int(row_size), 1))
    for start in range(0, n_rows, step):
        yield slice(start, min(start + step, n_rows))
