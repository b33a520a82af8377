"""
Stepping over a local minimum: the paper's Figure 1, with every oracle
======================================================================

Khan et al. (2018), Figure 1: minimise a sinc function from ``theta_0 = -3.2``.
Gradient and Hessian there point to the local minimum at ``-3.48``, where
Newton's method stops. VAN minimises ``L(mu, sigma) = E_q[f]`` instead, and averaging
over ``q = N(mu, sigma^2)``, started at ``mu = -3.2``, ``sigma = 1.5``, points it
towards the global minimum at ``1``.

The function is ``f(theta) = -sinc(theta - 1)`` with the normalised sinc: the reading
of the paper's "sinc" that has the minima its caption states (global at 1, local
at -3.5).

VAN runs here with each of the three oracles: function values only, values and
gradients, and values, gradients and Hessians. In one dimension
:func:`skvan.minimize` computes the expectations by Gauss-Hermite quadrature (21
nodes), so the runs are deterministic, and ``q`` is never wider than at the start
(``sigma <= sigma0``): where ``f`` is concave on average over ``q`` the precision
would otherwise fall, ``q`` would widen without bound and the mean would drift
(with Monte Carlo Hessians, whose noise is large while ``q`` is wide, this
happened in a third of the seeds).
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
    if abs(u) < 1e-4:  # the Taylor series, where the closed form cancels
        return np.array([np.pi * u / 3.0])
    return np.array([-np.pi * (u * np.cos(u) - np.sin(u)) / u**2])


def hess(theta):
    u = np.pi * (theta[0] - 1.0)
    if abs(u) < 1e-3:
        return np.array([[np.pi**2 * (1.0 / 3.0 - u**2 / 10.0)]])
    return np.array([[-np.pi**2 * (-(u**2) * np.sin(u) - 2 * u * np.cos(u) + 2 * np.sin(u)) / u**3]])


ORACLES = {"values": {}, "gradients": dict(jac=grad), "Hessians": dict(jac=grad, hess=hess)}
COLORS = {"values": "tab:red", "gradients": "tab:green", "Hessians": "tab:purple"}

paths, results = {}, {}
for name, oracle in ORACLES.items():
    path = [(-3.2, 1.5)]
    results[name] = minimize(
        f, [-3.2], sigma0=1.5, random_state=0,
        callback=lambda intermediate_result: path.append(
            (intermediate_result.x[0], np.sqrt(intermediate_result.covariance[0, 0]))),
        **oracle)
    paths[name] = np.array(path)
    r = results[name]
    print(f"VAN with {name:<9}: x = {r.x[0]:.6f} after {r.nit} iterations, "
          f"{r.nfev} evaluations of f")

newton_path = [-3.2]
newton = scipy_minimize(f, [-3.2], jac=grad, hess=hess, method="Newton-CG",
                        callback=lambda xk: newton_path.append(xk[0]))
print(f"Newton-CG          : x = {newton.x[0]:.4f}")

# %%
# From other starts
# -----------------
# Every start between the local minima at -3.48 and -1.46 and beyond, with each
# oracle: the share that reaches the global minimum.
starts = np.linspace(-5.0, -2.0, 13)
for name, oracle in ORACLES.items():
    hits = [abs(minimize(f, [x0], sigma0=1.5, **oracle).x[0] - 1.0) < 1e-4 for x0 in starts]
    print(f"{name:<9}: global minimum from {sum(hits)} of {len(starts)} starts")

# %%
# With exact expectations the three oracles give the same ``q`` at every
# iteration; they differ in what each point costs. Monte Carlo expectations
# (``expectation="mc"``, 20 draws per iteration, over 20 seeds) add noise, and
# sampled Hessians while ``q`` is wide are mostly noise:
for name, oracle in ORACLES.items():
    hits = [abs(minimize(f, [-3.2], sigma0=1.5, expectation="mc", n_mc_samples=20,
                         random_state=seed, **oracle).x[0] - 1.0) < 0.05 for seed in range(20)]
    print(f"Monte Carlo, {name:<9}: global minimum in {sum(hits)} of 20 seeds")

# %%
# The function, VAN's means and Newton's iterates
# -----------------------------------------------
theta = np.linspace(-6, 5, 1000)
fig, axes = plt.subplots(3, 1, figsize=(7, 11))
ax = axes[0]
ax.plot(theta, -np.sinc(theta - 1.0), color="tab:blue", label="f")
for name, path in paths.items():
    ax.plot(path[:, 0], [f([m]) for m in path[:, 0]], "o", color=COLORS[name], ms=3,
            alpha=0.6, label=f"VAN mean ({name})")
ax.plot(newton_path, [f([t]) for t in newton_path], "s", color="k", ms=5, label="Newton-CG")
ax.set_xlabel("theta")
ax.legend(fontsize=8)

# %%
# The VO landscape L(mu, sigma) and q's trajectory through it
# -----------------------------------------------------------
# Each VAN iteration moves ``(mu, sigma)``: while ``sigma`` is large the averaged
# function has no local minimum near the start, and the mean slides towards 1;
# ``q`` then narrows around it.
z = np.linspace(-6, 6, 241)
w = np.exp(-0.5 * z**2)
w /= w.sum()
mus = np.linspace(-6, 4, 201)
sigmas = np.linspace(0.02, 1.6, 100)
L = np.array([[w @ -np.sinc(m + s * z - 1.0) for m in mus] for s in sigmas])
ax = axes[1]
contour = ax.contourf(mus, sigmas, L, levels=30, cmap="viridis")
fig.colorbar(contour, ax=ax, label="E_q[f]")
for name, path in paths.items():
    ax.plot(path[:, 0], path[:, 1], "-o", color=COLORS[name], ms=2, label=name)
ax.plot([-3.2], [1.5], "w*", ms=12)
ax.set_xlabel("mu")
ax.set_ylabel("sigma")
ax.legend(fontsize=8)

# %%
# The distribution q over the iterations (gradient oracle)
# --------------------------------------------------------
ax = axes[2]
path = paths["gradients"]
shown = np.unique(np.geomspace(1, len(path), 12).astype(int) - 1)
for k, t in enumerate(shown):
    m, s = path[t]
    ax.plot(theta, np.exp(-0.5 * ((theta - m) / s) ** 2) / (s * np.sqrt(2 * np.pi)),
            color=plt.cm.Greens(0.3 + 0.7 * k / len(shown)))
ax.set_xlabel("theta")
ax.set_ylabel("q(theta)")
ax.set_ylim(0, 2.5)
fig.tight_layout()
plt.show()
