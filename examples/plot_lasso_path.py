"""
The Lasso path with posterior bands, and alpha by cross-validation
==================================================================

``van_lasso_path`` solves the Lasso along scikit-learn's grid of alphas, each
alpha starting from the previous one's mean. With ``objective="vi"`` every alpha
comes with a Gaussian posterior: the bands below are its mean +- 2 standard
deviations (the Bayesian Lasso at that alpha). ``VANLassoCV`` then picks alpha
by 5-fold cross-validation, as ``LassoCV`` does (same grid, same folds, same
choice).
"""

# %%
import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_diabetes
from sklearn.linear_model import LassoCV
from sklearn.model_selection import KFold

from skvan import VANLassoCV, van_lasso_path

X, y = load_diabetes(return_X_y=True)
Xc, yc = X - X.mean(axis=0), y - y.mean()
alphas, coefs, _, stds = van_lasso_path(Xc, yc, n_alphas=40, return_std=True, objective="vi")

fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4))
for j in range(coefs.shape[0]):
    line, = ax1.plot(alphas, coefs[j], lw=1.2)
    ax1.fill_between(alphas, coefs[j] - 2 * stds[j], coefs[j] + 2 * stds[j], color=line.get_color(),
                     alpha=0.15)
ax1.set_xscale("log")
ax1.invert_xaxis()
ax1.set_xlabel("alpha")
ax1.set_ylabel("coefficient (VI mean +- 2 sd)")
ax1.set_title("Lasso path with posterior bands")

# %%
# Cross-validation along the path: held-out mean squared error per alpha.
cv = KFold(5, shuffle=True, random_state=0)
van = VANLassoCV(alphas=40, cv=cv).fit(X, y)
ref = LassoCV(alphas=40, cv=cv).fit(X, y)
print(f"VANLassoCV alpha_ = {van.alpha_:.5f}, LassoCV alpha_ = {ref.alpha_:.5f}")
mean, spread = van.mse_path_.mean(axis=1), van.mse_path_.std(axis=1)
ax2.plot(van.alphas_, mean, "k-", label="mean over folds")
ax2.fill_between(van.alphas_, mean - spread, mean + spread, color="k", alpha=0.1, label="+- 1 sd")
ax2.axvline(van.alpha_, color="C3", ls="--", label=f"alpha_ = {van.alpha_:.3g}")
ax2.set_xscale("log")
ax2.invert_xaxis()
ax2.set_xlabel("alpha")
ax2.set_ylabel("held-out mean squared error")
ax2.set_title("VANLassoCV")
ax2.legend()
fig.tight_layout()
plt.show()
print("nonzero coefficients at alpha_:", int(np.count_nonzero(van.coef_)))
