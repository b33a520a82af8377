"""The Gaussian families and THE VAN solver loop, with its pluggable parts."""

from ._batches import FullBatch, Minibatches
from ._family import DiagonalGaussian, FullGaussian, make_family, unit_predictor_precision
from ._schedule import BETA_MAX, VI, VO, GeometricSchedule, Rates, variational_objective
from ._solver import MESSAGES, VANResult, VANSolver, warn_unconverged
from ._steps import (
    ArmijoMeanStep,
    BetaBacktrack,
    FullStep,
    ObjectiveDecrease,
    TrustRegion,
    default_step,
)
from ._stopping import MeanContraction

__all__ = [
    "BETA_MAX",
    "MESSAGES",
    "VI",
    "VO",
    "ArmijoMeanStep",
    "BetaBacktrack",
    "DiagonalGaussian",
    "FullBatch",
    "FullGaussian",
    "FullStep",
    "GeometricSchedule",
    "MeanContraction",
    "Minibatches",
    "ObjectiveDecrease",
    "Rates",
    "TrustRegion",
    "VANResult",
    "VANSolver",
    "default_step",
    "make_family",
    "unit_predictor_precision",
    "variational_objective",
    "warn_unconverged",
]
