"""Which data an iteration sees: all of it, or the next minibatch (sVAN)."""

import numpy as np

#: A minibatch of a sparse design is made dense when its Gram product would take
#: at most this many multiply-adds (``batch_size * n_features**2``, about a
#: millisecond at the BLAS's rate): below that, sparse products cost more in
#: their per-call work than the dense product in arithmetic.
DENSE_MINIBATCH_FLOPS = 2**22


class FullBatch:
    """Every iteration uses the whole objective (one data pass each)."""

    stochastic = False

    def reset(self, f, rng):
        """Start a run on ``f``."""
        self.f = f

    @property
    def rows(self):
        """Rows per iteration (1 for objectives that are not sums over data)."""
        return getattr(self.f, "n_samples", 1)

    def next(self):
        """``(objective of this iteration, fraction of a data pass it costs)``."""
        return self.f, 1.0


class Minibatches(FullBatch):
    """sVAN: each iteration takes the next ``batch_size`` rows of a reshuffled pass,
    with the data term scaled to the full data (``f.subsample``). A batch as large
    as the data is the full batch; a small one of a sparse design is dense
    (:data:`DENSE_MINIBATCH_FLOPS`).

    Parameters
    ----------
    batch_size : int
        Rows per iteration, ``>= 1``.
    """

    def __init__(self, batch_size):
        self.batch_size = int(batch_size)

    def reset(self, f, rng):
        super().reset(f, rng)
        n = getattr(f, "n_samples", None)
        self.stochastic = n is not None and self.batch_size < n
        self._rng = rng
        self._order = np.empty(0, dtype=int)

    @property
    def rows(self):
        return self.batch_size if self.stochastic else super().rows

    def next(self):
        if not self.stochastic:
            return super().next()
        n = self.f.n_samples
        if len(self._order) < self.batch_size:
            self._order = np.concatenate([self._order, self._rng.permutation(n)])
        idx, self._order = self._order[: self.batch_size], self._order[self.batch_size :]
        batch = self.f.subsample(np.sort(idx))
        if self.batch_size * batch.X.shape[1] ** 2 <= DENSE_MINIBATCH_FLOPS:
            batch = batch.with_dense_rows()
        return batch, self.batch_size / n
