"""The one place where skvan imports scikit-learn's private helpers.

scikit-learn moves its private utilities between releases; keeping every such
import in this module means a scikit-learn change breaks one file, not many.
"""

from sklearn.base import _fit_context
from sklearn.utils._param_validation import (
    Interval,
    StrOptions,
    validate_parameter_constraints,
    validate_params,
)
from sklearn.utils.validation import validate_data

__all__ = [
    "Interval",
    "StrOptions",
    "_fit_context",
    "validate_data",
    "validate_parameter_constraints",
    "validate_params",
]
