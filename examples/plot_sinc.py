"""
Stepping over a local minimum: the paper's Figure 1
===================================================

Khan et al. (2018), Figure 1: minimise a sinc function from ``theta_0 = -3.2``.
Gradient and Hessian there point to the local minimum at ``-3.48``, where
Newton's method stops. VAN minimises ``L(mu, sigma) = E_q[f]`` instead, and averaging
over ``q = N(mu, sigma^2)``, started at ``mu = -3.2``, ``sigma = 1.5``, points it
towards the global minimum at ``1``.

The function is ``f(theta) = -sinc(theta - 1)`` with the normalised sinc: the reading
of the paper's "sinc" that has the minima its caption states (global at 1, local
at -3.5). VAN here uses function values only (zero order, 20 draws per iteration).
"""

# %%
import matplotlib.pyplot as plt
import numpy as np
from scipy.optimize import minimize as scipy_minimize

from skvan import minimize


def f(theta):
    return float(-np.sinc(theta[0] - 1.0))


def grad(theta):
    u = np.pi * (theta[0] - 1.0)
    return np.array([-np.pi * (u * np.cos(u) - np.sin(u)) / u**2])


def hess(theta):
    u = np.pi * (theta[0] - 1.0)
    return np.array([[-np.pi**2 * (-(u**2) * np.sin(u) - 2 * u * np.cos(u) + 2 * np.sin(u)) / u**3]])


path = []
res = minimize(f, [-3.2], sigma0=1.5, n_mc_samples=20, random_state=0,
               callback=lambda r: path.append((r.x[0], np.sqrt(r.covariance[0, 0]))))
path = np.array([(-3.2, 1.5)] + path)
newton_path = [-3.2]
newton = scipy_minimize(f, [-3.2], jac=grad, hess=hess, method="Newton-CG",
                        callback=lambda xk: newton_path.append(xk[0]))
print(f"VAN: x = {res.x[0]:.4f} after {res.nit} iterations and {res.nfev} evaluations")
print(f"Newton-CG: x = {newton.x[0]:.4f}")

# %%
# The function, VAN's means and Newton's iterates
# -----------------------------------------------
theta = np.linspace(-6, 5, 1000)
values = -np.sinc(theta - 1.0)
fig, axes = plt.subplots(3, 1, figsize=(7, 10))
ax = axes[0]
ax.plot(theta, values, color="tab:blue", label="f")
ax.plot(path[:, 0], [f([m]) for m in path[:, 0]], "o", color="tab:red", ms=3, label="VAN mean")
ax.plot(newton_path, [f([t]) for t in newton_path], "s", color="k", ms=4, label="Newton-CG")
ax.set_xlabel("theta")
ax.legend()

# %%
# The VO landscape L(mu, sigma) and VAN's path through it
# --------------------------------------------------------
z = np.linspace(-6, 6, 241)
w = np.exp(-0.5 * z**2)
w /= w.sum()
mus = np.linspace(-6, 4, 201)
sigmas = np.linspace(0.02, 2.5, 120)
L = np.array([[w @ -np.sinc(m + s * z - 1.0) for m in mus] for s in sigmas])
ax = axes[1]
contour = ax.contourf(mus, sigmas, L, levels=30, cmap="viridis")
fig.colorbar(contour, ax=ax, label="E_q[f]")
ax.plot(path[:, 0], path[:, 1], "-o", color="tab:red", ms=2)
ax.set_xlabel("mu")
ax.set_ylabel("sigma")

# %%
# The distribution q over the iterations
# --------------------------------------
ax = axes[2]
shown = np.unique(np.geomspace(1, len(path), 12).astype(int) - 1)
for k, t in enumerate(shown):
    m, s = path[t]
    ax.plot(theta, np.exp(-0.5 * ((theta - m) / s) ** 2) / (s * np.sqrt(2 * np.pi)),
            color=plt.cm.Reds(0.3 + 0.7 * k / len(shown)))
ax.set_xlabel("theta")
ax.set_ylabel("q(theta)")
fig.tight_layout()
plt.show()
