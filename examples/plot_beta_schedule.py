"""
The beta schedule: exploration versus speed
===========================================

With a constant ``beta`` (``beta_growth=1``, the paper's choice) the VAN precision
grows linearly and each mean step is about ``1/t`` of a Newton step: convergence is
sublinear, and ``q`` stays wide for longer. A geometric schedule
(``beta_growth=g``) makes each step ``(g-1)/g`` of a Newton step: linear
convergence, while ``q`` shrinks faster. The default, ``beta_growth="auto"``, is
``g = 100`` for full-data VO fits.
"""

# %%
import warnings

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import StandardScaler

from skvan import VANLogisticRegression

X, y = load_breast_cancer(return_X_y=True)
X = StandardScaler().fit_transform(X)
ref = LogisticRegression(C=1.0, solver="newton-cholesky", tol=1e-12).fit(X, y)

fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
iterations = np.arange(1, 31)
for growth in (1.0, 3.0, 10.0, 100.0):
    errors, widths = [], []
    for k in iterations:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            van = VANLogisticRegression(beta_growth=growth, max_iter=int(k), tol=0).fit(X, y)
        errors.append(np.abs(van.coef_ - ref.coef_).max() / np.abs(ref.coef_).max())
        widths.append(np.sqrt(van.sigma_[0]).max())
    ax1.semilogy(iterations, np.maximum(errors, 1e-16), label=f"beta_growth={growth:g}")
    ax2.semilogy(iterations, widths, label=f"beta_growth={growth:g}")
ax1.set_xlabel("iteration")
ax1.set_ylabel("relative coefficient error")
ax2.set_xlabel("iteration")
ax2.set_ylabel("largest standard deviation of q")
ax1.legend()
fig.tight_layout()
plt.show()
