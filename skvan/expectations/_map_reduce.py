"""Expectations of an objective kept in row chunks: map over the chunks, reduce
on the client (:class:`~skvan.objectives.ChunkedObjective`)."""

import copy

import numpy as np

from ._base import ExpectationEstimator, Expectations


def _chunk_expectations(X, y, w, spec, inner, family, hessian):
    """The chunk's data term's expectations under ``family`` (where the chunk lives)."""
    return tuple(inner(spec.objective(X, y, w), family, hessian=hessian))


def _chunk_value(X, y, w, spec, inner, family, mean):
    return inner.value(spec.objective(X, y, w), family, mean)


class MapReduce(ExpectationEstimator):
    """Expectations of a :class:`~skvan.objectives.ChunkedObjective`, computed chunk by
    chunk by a deterministic ``inner`` estimator where the chunks live.

    One call is one pass over the data: each chunk returns the value, gradient and
    curvature of its rows' data term under ``q`` (``q`` travels to the chunks, only
    ``p``-sized results come back) and the client adds them up, plus the
    penalty's closed-form expectations. The ``p x p`` solve stays on the client.

    A step's first trial value (:meth:`value` with ``hessian``) is that same pass
    at the trial mean, kept on the client: where the step is taken, the next
    iteration's expectations are those numbers, and an iteration makes one pass
    over the chunks instead of two (the chunks keep nothing between passes, as
    an in-memory estimator keeps its per-row integrals).

    Parameters
    ----------
    inner : ExpectationEstimator
        A deterministic estimator for in-memory objectives (quadrature, cubature
        or closed form).
    """

    deterministic = True

    def __init__(self, inner):
        self.inner = inner
        self._prepared = None

    def reset(self, solver):
        """Forget a previous run's prepared pass."""
        self._prepared = None

    def check_objective(self, objective):
        from ..objectives._chunked import ChunkedObjective

        if not isinstance(objective, ChunkedObjective):
            raise TypeError(f"MapReduce needs a ChunkedObjective, got {type(objective).__name__}.")
        if not self.inner.deterministic:
            raise TypeError(
                f"{type(self.inner).__name__} is not deterministic; data in chunks needs "
                "expectation='quadrature' (each chunk would draw its own samples)."
            )

    def __call__(self, objective, family, hessian="exact", random_state=None):
        prepared, self._prepared = self._prepared, None
        if (prepared is not None and prepared[0] is objective and prepared[1] == family.version
                and prepared[2] == hessian and np.array_equal(prepared[3], family.mean)):
            value, gradient, C = prepared[4]
        else:
            value, gradient, C = self._data_terms(objective, family, hessian)
        p0, p1, p2 = objective.penalty.expectation_under(family, family.mean, hessian)
        return Expectations(value + p0, gradient + p1, objective.penalty.add_curvature(C, p2))

    def _data_terms(self, objective, family, hessian):
        """The data term's value, gradient and curvature under ``family``: one pass."""
        parts = objective.chunks.map(_chunk_expectations, objective.spec, self.inner, family,
                                     hessian)
        return (float(sum(part[0] for part in parts)), np.sum([part[1] for part in parts], axis=0),
                np.sum([part[2] for part in parts], axis=0))

    def value(self, objective, family, mean, hessian=None):
        penalty = objective.penalty.expectation_under(family, mean)[0]
        if hessian is None:
            parts = objective.chunks.map(_chunk_value, objective.spec, self.inner, family, mean)
            return float(sum(parts)) + penalty
        # q with the family's covariance, centred at the trial mean.
        moved = copy.copy(family)
        moved.mean = np.array(mean, dtype=np.float64)
        terms = self._data_terms(objective, moved, hessian)
        self._prepared = (objective, family.version, hessian, moved.mean, terms)
        return terms[0] + penalty
