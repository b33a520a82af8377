"""Expectations of an objective kept in row chunks: map over the chunks, reduce
on the client (:class:`~skvan.objectives.ChunkedObjective`)."""

import copy

import numpy as np

from ..objectives import MultinomialObjective
from ._base import (CARRY_VARIANCE, ExpectationEstimator, Expectations,
                    LinearPredictorExpectation, carry_ratio,
                    last_pass, precision_grows)


def _seeded(inner, objective, family, kept, ratio):
    """A copy of ``inner`` (its caches this chunk's alone), holding the predictor
    variances of ``objective`` its worker kept from the last pass, scaled by
    ``ratio`` to ``family`` (either None: a pass over the chunk computes them)."""
    inner = copy.copy(inner)
    if kept is not None and ratio is not None:
        inner._cache = (objective, family, family.version, kept * ratio)
    return inner


def _chunk_expectations(X, y, w, kept, spec, inner, family, hessian, ratio, keep):
    """The chunk's data term's expectations under ``family`` (where the chunk
    lives), with its rows' kept predictor variances, scaled by ``ratio``, where
    they are carried: ``(value, gradient, curvature)``. With ``keep`` (a pass
    that computed them), ``((value, gradient, curvature, largest), variances)``:
    the variances stay on the worker (:meth:`~skvan._dask.DaskChunks.map`), only
    the largest of them comes back."""
    objective = spec.objective(X, y, w)
    inner = _seeded(inner, objective, family, kept, ratio)
    terms = tuple(inner(objective, family, hessian=hessian))[:3]
    if not keep:
        return terms
    variances = inner._cache[3]
    return (*terms, float(np.max(variances, initial=0.0))), variances


def _chunk_value(X, y, w, kept, spec, inner, family, mean, ratio):
    objective = spec.objective(X, y, w)
    return _seeded(inner, objective, family, kept, ratio).value(objective, family, mean)


class MapReduce(ExpectationEstimator):
    """Expectations of a :class:`~skvan.objectives.ChunkedObjective`, computed chunk by
    chunk by a deterministic ``inner`` estimator where the chunks live.

    One call is one pass over the data: each chunk returns the value, gradient and
    curvature of its rows' data term under ``q`` (``q`` travels to the chunks, only
    ``p``-sized results come back) and the client adds them up, plus the
    penalty's closed-form expectations. The ``p x p`` solve stays on the client,
    and ``q`` travels in the form the pass needs (``FullGaussian.shipped``:
    ``L^-T`` where the rows' variances are computed, a multinomial model's
    covariance; neither the precision nor its factors): one ``p x p`` matrix or
    two, computed once, where three went and each chunk factored again.

    A step's first trial value (:meth:`value` with ``hessian``) is that same pass
    at the trial mean, kept on the client: where the step is taken, the next
    iteration's expectations are those numbers, and an iteration makes one pass
    over the chunks instead of two (the chunks keep nothing between passes, as
    an in-memory estimator keeps its per-row integrals). Under VO a pass that
    computes the rows' predictor variances (a multinomial model's ``K x K``
    covariances) leaves them where each chunk lives (on a cluster, in its
    worker's memory; only their largest comes back), and later passes carry
    them as an in-memory fit does (``LinearPredictorExpectation._carried``):
    each chunk scales its own.

    Parameters
    ----------
    inner : ExpectationEstimator
        A deterministic estimator for in-memory objectives (quadrature, cubature
        or closed form).
    """

    deterministic = True

    def __init__(self, inner):
        self.inner = inner
        self.differentiates_value = inner.differentiates_value
        self._prepared = None
        self._grows = False
        self._multinomial = False
        self._last_pass = None

    def reset(self, solver):
        """Forget a previous run's passes; note whether this run may carry
        predictor variances (VO on the full data, an inner estimator that keeps
        them) and whether the model is multinomial (what a pass ships)."""
        self._prepared = None
        linear = isinstance(self.inner, LinearPredictorExpectation)
        if linear:
            # What the inner estimator makes of the run (a rule chosen for VO);
            # the chunks' variances are carried here, not by it.
            self.inner.reset(solver, carry=False)
        self._multinomial = isinstance(solver.f.prototype(), MultinomialObjective)
        self._grows = linear and precision_grows(solver)
        self._last_pass = None

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

    def _data_terms(self, objective, family, hessian, mean=None):
        """The data term's value, gradient and curvature under ``family`` (``mean``:
        the same covariance centred there): one pass."""
        each, ratio = self._spreads(objective, family)
        # A pass that computes the rows' variances where they may be carried
        # leaves them with the chunks (n floats, or n K^2 for a multinomial
        # model), and later passes under a grown precision scale their own.
        keep = self._grows and ratio is None
        shipped = self._shipped(family, ratio)
        if mean is not None:
            # (a copy: a family whose parameters are vectors ships itself)
            shipped = copy.copy(shipped)
            shipped.mean = mean
        out = objective.chunks.map(_chunk_expectations, objective.spec, self.inner, shipped,
                                   hessian, ratio, keep, each=each, keep=keep)
        parts = out[0] if keep else out
        if keep:
            top = max((part[3] for part in parts), default=0.0)
            self._last_pass = last_pass(objective, family, out[1], top)
        return (float(sum(part[0] for part in parts)), np.sum([part[1] for part in parts], axis=0),
                np.sum([part[2] for part in parts], axis=0))

    def _shipped(self, family, ratio):
        """``family`` as a pass's chunks need it (``shipped``): the matrices for the
        rows' predictor variances where they are not carried (``L^-T``; a
        multinomial model's covariances read the covariance and the precision's
        pattern), and a multinomial model's covariance for its gauge term."""
        if self._multinomial:
            needs = ("sigma",) if ratio is not None else ("sigma", "precision")
        else:
            needs = () if ratio is not None else ("moments",)
        return family.shipped(needs) if hasattr(family, "shipped") else family

    def _spreads(self, objective, family):
        """``(each, ratio)``: per chunk, the handle of the predictor variances its
        worker kept from the last pass, and the factor that carries them to
        ``family`` (the in-memory rule, ``LinearPredictorExpectation._carried``);
        Nones and None where they may not be carried."""
        ratio = carry_ratio(self._last_pass, objective, family,
                            getattr(self.inner, "carry_variance", CARRY_VARIANCE))
        if ratio is None:
            return [None] * objective.chunks.n_chunks, None
        return self._last_pass[3], ratio

    def value(self, objective, family, mean, hessian=None):
        penalty = objective.penalty.expectation_under(family, mean)[0]
        if hessian is None:
            each, ratio = self._spreads(objective, family)
            parts = objective.chunks.map(_chunk_value, objective.spec, self.inner,
                                         self._shipped(family, ratio), mean, ratio, each=each)
            return float(sum(parts)) + penalty
        mean = np.array(mean, dtype=np.float64)
        terms = self._data_terms(objective, family, hessian, mean)
        self._prepared = (objective, family.version, hessian, mean, terms)
        return terms[0] + penalty
