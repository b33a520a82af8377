"""What VAN minimises: objectives ``f``, per-sample losses and penalties.

An objective evaluates ``f`` and its derivatives at a point. Where a piece of
``f`` has closed-form Gaussian expectations (the separable penalties, the
squared loss) it provides them, and :mod:`skvan.expectations` decides how the
rest is integrated.
"""

from ._base import Objective
from ._chunked import ChunkedObjective, ChunkSpec
from ._function import FunctionObjective
from ._linear import LinearModelObjective
from ._losses import LogisticLoss, SquaredLoss
from ._multinomial import MultinomialObjective, SoftmaxLoss
from ._penalties import ElasticNetPenalty, L1Penalty, L2Penalty, NoPenalty
from ._quadratic import QuadraticObjective, RidgedQuadratic

__all__ = [
    "ChunkSpec",
    "ChunkedObjective",
    "ElasticNetPenalty",
    "FunctionObjective",
    "L1Penalty",
    "L2Penalty",
    "LinearModelObjective",
    "LogisticLoss",
    "MultinomialObjective",
    "NoPenalty",
    "Objective",
    "QuadraticObjective",
    "RidgedQuadratic",
    "SoftmaxLoss",
    "SquaredLoss",
]


#: Names that lived here and moved with the Lasso's engine: to :mod:`skvan.sparse`
#: (the exact linear algebra) and :mod:`skvan.van` (a step restriction and a
#: stopping test). The old path works until 0.3, with a FutureWarning.
_MOVED = {"kkt_excess": "sparse", "kkt_finish": "sparse", "kkt_follow": "sparse",
          "kkt_path": "sparse", "nonnegative": "sparse", "support_from_q": "sparse",
          "KeepSigns": "van", "LassoCertificate": "van"}


def __getattr__(name):
    if name in _MOVED:
        import importlib
        import warnings

        home = _MOVED[name]
        warnings.warn(f"skvan.objectives.{name} moved to skvan.{home}.{name}; the old path "
                      "is removed in 0.3.", FutureWarning, stacklevel=2)
        return getattr(importlib.import_module(f"skvan.{home}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
