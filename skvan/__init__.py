"""skvan: Variational Adaptive-Newton (VAN) estimators for scikit-learn.

VAN (Khan et al., AISTATS 2018) minimises ``E_q[f(theta)]`` over a Gaussian
``q = N(mu, Sigma)`` with a Newton-like step whose precision accumulates expected
Hessians.
"""

from .active import ActiveVANClassifier
from .linear_model import (
    VANElasticNet,
    VANElasticNetCV,
    VANLassoCV,
    VANLassoRegressor,
    VANLogisticRegression,
    van_enet_path,
    van_lasso_path,
)
from .optimize import VANOptimizer, minimize

__version__ = "0.1.0"

__all__ = [
    "ActiveVANClassifier",
    "VANElasticNet",
    "VANElasticNetCV",
    "VANLassoCV",
    "VANLassoRegressor",
    "VANLogisticRegression",
    "VANOptimizer",
    "__version__",
    "minimize",
    "van_enet_path",
    "van_lasso_path",
]
