"""The one place where skvan imports scikit-learn's private helpers.

scikit-learn moves its private utilities between releases; keeping every such
import in this module means a scikit-learn change breaks one file, not many.
"""

import numpy as np
from sklearn.base import _fit_context
from sklearn.utils._param_validation import (
    Interval,
    StrOptions,
    validate_parameter_constraints,
    validate_params,
)
from sklearn.utils.validation import _check_sample_weight, validate_data

__all__ = [
    "Interval",
    "StrOptions",
    "_fit_context",
    "check_sample_weight",
    "validate_data",
    "validate_parameter_constraints",
    "validate_params",
]


def check_sample_weight(sample_weight, X):
    """Non-negative weights of shape ``(n_samples,)``, as scikit-learn's
    ``_check_sample_weight(sample_weight, X, ensure_non_negative=True)`` returns
    them; ``None`` (the usual case) is float64 ones without its checks, which
    cost a small fit as much as its solve's factorisations."""
    if sample_weight is None:
        return np.ones(X.shape[0])
    return _check_sample_weight(sample_weight, X, ensure_non_negative=True)
