"""
Exploring in parameter space: the paper's Figure 4 on MountainCarContinuous
===========================================================================

Khan et al. (2018), Figure 4: VAN's Gaussian over a policy's parameters explores
by trying whole policies, where policy-gradient methods add noise to each
action. MountainCarContinuous-v0 shows the difference: the car must rock back
and forth to climb the hill, pushing costs reward at every step, and only the
flag pays. Random actions rarely reach it, so action-space exploration learns
that the best is to do nothing (return 0); a draw of a whole linear policy that
pushes with the velocity reaches the flag at once (return about 90).

The policy is linear in the observation scaled by the environment's bounds
(3 parameters; ``skvan._policy``). :class:`skvan.VANOptimizer` runs from returns
(zero order, its defaults, ``sigma0=1``); REINFORCE with Gaussian action noise
and basic random search (ARS V1) spend the same environment steps.
``benchmarks/bench_rl.py`` adds CMA-ES, Pendulum-v1 (with a quadratic policy:
no linear one swings the pendulum up) and CartPole-v1, over 10 seeds. Needs
``gymnasium`` (``pip install gymnasium``).
"""

# %%
import matplotlib.pyplot as plt
import numpy as np

from skvan._policy import evaluate, make, random_search, reinforce, van_search

env, policy = make("MountainCarContinuous-v0")
BUDGET, SEEDS = 30_000, 3
checkpoints = list(range(2_500, BUDGET + 1, 2_500))
methods = {"VAN (parameter space)": van_search, "REINFORCE (action noise)": reinforce,
           "random search (ARS V1)": random_search}
curves = {}
for name, search in methods.items():
    curves[name] = np.array([[evaluate(env, policy, theta, n_episodes=3)
                              for _, theta in search(env, policy, BUDGET, checkpoints, seed)]
                             for seed in range(SEEDS)])
    print(f"{name:<26} return after {BUDGET} steps: "
          f"{curves[name][:, -1].mean():6.1f} +- {curves[name][:, -1].std():.1f}")

# %%
# Return of the current policy against environment steps
# -------------------------------------------------------
fig, ax = plt.subplots(figsize=(7, 4))
for name, curve in curves.items():
    mean, sd = curve.mean(0), curve.std(0)
    ax.plot(checkpoints, mean, label=name)
    ax.fill_between(checkpoints, mean - sd, mean + sd, alpha=0.2)
ax.set_xlabel("environment steps")
ax.set_ylabel("return (3 evaluation episodes)")
ax.legend()
fig.tight_layout()
plt.show()
