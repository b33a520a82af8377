"""How expectations under ``q`` are obtained: closed form, quadrature or Monte Carlo."""

from ._base import ExpectationEstimator, Expectations, LinearPredictorExpectation
from ._closed_form import ClosedForm
from ._grid import GaussHermiteGrid, tensor_rule
from ._cubature import SoftmaxCubature, expected_log_softmax, softmax_rule
from ._map_reduce import MapReduce
from ._prior import GaussianPriorTerm
from ._monte_carlo import CumulativeScale, MonteCarlo, RankOnePath, rank_utilities
from ._point import PointMass
from ._memory import RowMemory, StreamRowMemory
from ._evolution import evolution_strategy, population_size
from ._quadrature import (
    AUTO_NODES,
    MAX_GRID,
    GaussHermiteQuadrature,
    gaussian_average,
    gaussian_rule,
    hermite_rule,
    log_expected_sigmoid,
)

__all__ = [
    "AUTO_NODES",
    "MAX_GRID",
    "ClosedForm",
    "CumulativeScale",
    "ExpectationEstimator",
    "Expectations",
    "GaussHermiteGrid",
    "GaussHermiteQuadrature",
    "GaussianPriorTerm",
    "LinearPredictorExpectation",
    "MapReduce",
    "MonteCarlo",
    "PointMass",
    "RankOnePath",
    "RowMemory",
    "StreamRowMemory",
    "SoftmaxCubature",
    "evolution_strategy",
    "gaussian_average",
    "expected_log_softmax",
    "gaussian_rule",
    "hermite_rule",
    "log_expected_sigmoid",
    "make_expectation",
    "population_size",
    "rank_utilities",
    "softmax_rule",
    "tensor_rule",
]


def make_expectation(expectation, n_mc_samples=10, objective=None):
    """Build an estimator by name: ``"exact"`` (closed form), ``"quadrature"`` (for a
    multinomial ``objective``, cubature over its ``K`` predictors) or ``"mc"``."""
    from ..objectives import ChunkedObjective, MultinomialObjective

    if isinstance(objective, ChunkedObjective):
        return MapReduce(make_expectation(expectation, n_mc_samples, objective.prototype()))
    if expectation == "exact":
        return ClosedForm()
    if expectation == "quadrature":
        if isinstance(objective, MultinomialObjective):
            return SoftmaxCubature()
        return GaussHermiteQuadrature()
    if expectation == "mc":
        return MonteCarlo(n_mc_samples)
    raise ValueError(
        f"expectation must be 'exact', 'quadrature' or 'mc', got {expectation!r}."
    )
