"""
Posterior uncertainty of logistic regression coefficients
=========================================================

:class:`~skvan.VANLogisticRegression` with ``objective="vo"`` finds the same
coefficients as scikit-learn's :class:`~sklearn.linear_model.LogisticRegression`.
With ``objective="vi"`` the same VAN step targets the variational posterior
(prior ``N(0, C)`` on each coefficient), so each coefficient comes with a
standard deviation, and ``predict_proba`` averages over it.
"""

# %%
import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import StandardScaler

from skvan import VANLogisticRegression

data = load_breast_cancer()
X = StandardScaler().fit_transform(data.data)
y = data.target

sk = LogisticRegression(C=1.0, solver="newton-cholesky", tol=1e-10).fit(X, y)
vo = VANLogisticRegression(C=1.0).fit(X, y)
vi = VANLogisticRegression(C=1.0, objective="vi").fit(X, y)
print("max |VAN(vo) - sklearn| =", np.abs(vo.coef_ - sk.coef_).max())

# %%
# Coefficients with two posterior standard deviations
# ----------------------------------------------------
order = np.argsort(sk.coef_[0])
sd = np.sqrt(vi.sigma_[0])
pos = np.arange(X.shape[1])
fig, ax = plt.subplots(figsize=(7, 8))
ax.errorbar(vi.coef_[0, order], pos, xerr=2 * sd[order], fmt="o", ms=4, label="VAN (vi): mean +- 2 sd")
ax.plot(sk.coef_[0, order], pos, "x", color="k", label="scikit-learn / VAN (vo)")
ax.set_yticks(pos, np.asarray(data.feature_names)[order], fontsize=7)
ax.axvline(0, color="grey", lw=0.5)
ax.set_xlabel("coefficient")
ax.legend(loc="lower right")
fig.tight_layout()

# %%
# Averaged versus plug-in probabilities
# -------------------------------------
# Averaging over the posterior pulls confident predictions towards 1/2 where
# the coefficients are uncertain.
plug_in = 1 / (1 + np.exp(-(X @ vi.coef_[0] + vi.intercept_[0])))
averaged = vi.predict_proba(X)[:, 1]
fig, ax = plt.subplots(figsize=(5, 5))
ax.scatter(plug_in, averaged, s=8)
ax.plot([0, 1], [0, 1], color="grey", lw=0.5)
ax.set_xlabel("p(y=1 | x, mean of q)")
ax.set_ylabel("E_q[p(y=1 | x, w)]")
fig.tight_layout()
plt.show()
