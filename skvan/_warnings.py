"""Warnings that point at the user's line, not at skvan's internals."""

import sys
import warnings

_INTERNAL = ("skvan", "sklearn")


def warn_user(message, category):
    """``warnings.warn`` with the stack level of the first frame outside skvan
    and scikit-learn (an estimator's ``fit`` runs inside scikit-learn's
    ``_fit_context`` wrapper and skvan's solver, at a depth that varies)."""
    frame, level = sys._getframe(1), 2
    while frame is not None and frame.f_globals.get("__name__", "").split(".")[0] in _INTERNAL:
        frame, level = frame.f_back, level + 1
    warnings.warn(message, category, stacklevel=level)
