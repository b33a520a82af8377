"""The Gaussian families and THE VAN solver loop, with its pluggable parts."""

from ._batches import FullBatch, Minibatches
from ._family import DiagonalGaussian, FullGaussian, make_family, unit_predictor_precision
from ._gram import (
    MEMORY_BUDGET,
    DualGaussian,
    GramPrecision,
    OperatorGaussian,
    RowCurvature,
    auto_covariance,
    family_from_parts,
    make_gram_family,
)
from ._schedule import (
    BETA_MAX,
    VI,
    VO,
    AveragingSchedule,
    ContinuationSchedule,
    GeometricSchedule,
    Rates,
    RelativeGeometricSchedule,
    variational_objective,
)
from ._solver import MESSAGES, VANResult, VANSolver, warn_unconverged
from ._steps import (
    AllOf,
    AndersonStep,
    ArmijoMeanStep,
    BetaBacktrack,
    FullStep,
    KeepSigns,
    LongStepCheck,
    ObjectiveDecrease,
    TrustRegion,
    default_step,
)
from ._stopping import GradientBound, LassoCertificate, MeanContraction, PassChange
from ._working_set import solve_on_working_sets
from ._fit import FitSettings, laplace_posterior
from ._lasso import Design, LassoFit, LassoProblem, LassoSolver

__all__ = [
    "BETA_MAX",
    "MEMORY_BUDGET",
    "MESSAGES",
    "VI",
    "VO",
    "AllOf",
    "AndersonStep",
    "ArmijoMeanStep",
    "AveragingSchedule",
    "BetaBacktrack",
    "ContinuationSchedule",
    "Design",
    "DiagonalGaussian",
    "DualGaussian",
    "FullBatch",
    "FullGaussian",
    "FitSettings",
    "FullStep",
    "GeometricSchedule",
    "GradientBound",
    "GramPrecision",
    "KeepSigns",
    "LassoCertificate",
    "LassoFit",
    "LassoProblem",
    "LassoSolver",
    "LongStepCheck",
    "MeanContraction",
    "PassChange",
    "Minibatches",
    "ObjectiveDecrease",
    "OperatorGaussian",
    "Rates",
    "RelativeGeometricSchedule",
    "RowCurvature",
    "TrustRegion",
    "VANResult",
    "VANSolver",
    "auto_covariance",
    "default_step",
    "family_from_parts",
    "laplace_posterior",
    "make_family",
    "make_gram_family",
    "solve_on_working_sets",
    "unit_predictor_precision",
    "variational_objective",
    "warn_unconverged",
]
