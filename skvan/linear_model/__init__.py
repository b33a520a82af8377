"""VAN linear models: thin scikit-learn estimators over the shared solver."""

from ._lasso import VANLassoRegressor
from ._logistic import VANLogisticRegression

__all__ = ["VANLassoRegressor", "VANLogisticRegression"]
