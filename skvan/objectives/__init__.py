"""What VAN minimises: objectives, per-sample losses and penalties.

Objectives know nothing about the Gaussian ``q``; see :mod:`skvan.expectations`.
"""

from ._base import Objective
from ._function import FunctionObjective
from ._linear import LinearModelObjective
from ._losses import LogisticLoss, SquaredLoss
from ._penalties import L1Penalty, L2Penalty
from ._quadratic import QuadraticObjective
from ._sparse import kkt_finish, support_from_q

__all__ = [
    "FunctionObjective",
    "L1Penalty",
    "L2Penalty",
    "LinearModelObjective",
    "LogisticLoss",
    "Objective",
    "QuadraticObjective",
    "SquaredLoss",
    "kkt_finish",
    "support_from_q",
]
