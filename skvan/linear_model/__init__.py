"""VAN linear models: thin scikit-learn estimators over the shared solver."""

from ._logistic import VANLogisticRegression

__all__ = ["VANLogisticRegression"]
