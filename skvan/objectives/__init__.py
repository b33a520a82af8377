"""What VAN minimises: objectives, per-sample losses and penalties.

Objectives know nothing about the Gaussian ``q``; see :mod:`skvan.expectations`.
"""

from ._base import Objective
from ._linear import LinearModelObjective
from ._losses import LogisticLoss, SquaredLoss
from ._penalties import L2Penalty

__all__ = ["L2Penalty", "LinearModelObjective", "LogisticLoss", "Objective", "SquaredLoss"]
