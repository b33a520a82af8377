"""VAN linear models: thin scikit-learn estimators over the shared solver."""

from ._lasso import VANLassoRegressor
from ._lasso_path import VANLassoCV, van_lasso_path
from ._logistic import VANLogisticRegression

__all__ = ["VANLassoCV", "VANLassoRegressor", "VANLogisticRegression", "van_lasso_path"]
