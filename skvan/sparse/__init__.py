"""Exact sparse solutions of L1-penalised least squares: the support read off
``q``, the KKT equations and check on a support, and homotopy between penalties.

The linear algebra the Lasso's engine (:mod:`skvan.van._lasso`), its step
restriction (:class:`~skvan.van.KeepSigns`) and its stopping test
(:class:`~skvan.van.LassoCertificate`) share; nothing here runs VAN.
"""

from ._homotopy import kkt_descend, kkt_follow, kkt_path
from ._kkt import (
    SIGN_EPS,
    kkt_excess,
    kkt_finish,
    nonnegative,
    support_from_q,
)
from ._gram_rows import GramRows

__all__ = [
    "GramRows",
    "SIGN_EPS",
    "kkt_descend",
    "kkt_excess",
    "kkt_finish",
    "kkt_follow",
    "kkt_path",
    "nonnegative",
    "support_from_q",
]
