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


#: The value of a renamed keyword that the caller did not pass.
NOT_PASSED = "deprecated"


def renamed(old, new, value, current, removed_in="0.3"):
    """The value of the keyword ``new``, taking the deprecated ``old`` one where
    the caller passed it (``value``, else :data:`NOT_PASSED`) with a
    ``FutureWarning`` at the caller's line; ``current`` is ``new``'s value."""
    if value is NOT_PASSED:
        return current
    warn_user(f"{old} was renamed {new} (the name scikit-learn and scikit-activeml use for "
              f"draws); {old} will be removed in {removed_in}.", FutureWarning)
    return value
