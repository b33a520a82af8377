"""VAN linear models: thin scikit-learn estimators over the shared solver."""

from ._enet import VANElasticNet
from ._lasso import VANLassoRegressor
from ._lasso_path import VANElasticNetCV, VANLassoCV, van_enet_path, van_lasso_path
from ._logistic import VANLogisticRegression

__all__ = ["VANElasticNet", "VANElasticNetCV", "VANLassoCV", "VANLassoRegressor", "VANLogisticRegression", "van_enet_path",
           "van_lasso_path"]
