"""What VAN minimises: objectives ``f``, per-sample losses and penalties.

An objective evaluates ``f`` and its derivatives at a point. Where a piece of
``f`` has closed-form Gaussian expectations (the separable penalties, the
squared loss) it provides them, and :mod:`skvan.expectations` decides how the
rest is integrated. The Lasso's certificate reads its support off ``q``.
"""

from ._base import Objective
from ._chunked import ChunkedObjective, ChunkSpec
from ._function import FunctionObjective
from ._linear import LinearModelObjective
from ._losses import LogisticLoss, SquaredLoss
from ._multinomial import MultinomialObjective, SoftmaxLoss
from ._penalties import L1Penalty, L2Penalty, NoPenalty
from ._quadratic import QuadraticObjective
from ._sparse import KeepSigns, LassoCertificate, kkt_excess, kkt_finish, kkt_follow, kkt_path, nonnegative, support_from_q

__all__ = [
    "ChunkSpec",
    "ChunkedObjective",
    "FunctionObjective",
    "L1Penalty",
    "L2Penalty",
    "KeepSigns",
    "LassoCertificate",
    "LinearModelObjective",
    "LogisticLoss",
    "MultinomialObjective",
    "NoPenalty",
    "Objective",
    "QuadraticObjective",
    "SoftmaxLoss",
    "SquaredLoss",
    "kkt_excess",
    "kkt_finish",
    "kkt_follow",
    "kkt_path",
    "nonnegative",
    "support_from_q",
]
