"""The paper's Figure 4: exploration in parameter space (VAN) against action
noise (REINFORCE), CMA-ES and basic random search, on gymnasium's classic control.

A linear policy on MountainCarContinuous-v0 and CartPole-v1 (``skvan._policy``:
observations scaled by the bounds the environment declares; 3 and 5
parameters), a quadratic one on Pendulum-v1 (10 parameters: the linear one
cannot swing the pendulum up, ``skvan._policy.QuadraticPolicy``; ``--policy
linear`` for the linear one everywhere). Each method spends a budget of
environment steps; at checkpoints its current policy (VAN's and CMA-ES's mean)
is evaluated, deterministically, on 10 fixed episodes that do not count in the
budget. Reported: the mean over seeds of that return, with its standard
deviation across seeds.

- VAN: ``skvan.VANOptimizer`` from returns (zero order, its defaults: fitness
  shaping, 4 + 3 log n draws per iteration), ``sigma0=1``, one episode per draw;
- CMA-ES: ``cma`` with ``sigma0=1`` and its defaults;
- random search: ARS V1 with Mania et al.'s step 0.02, noise 0.03, 8 directions;
- REINFORCE: Gaussian (or Bernoulli) action noise, mean-return baseline, Adam
  steps of 0.05 on 10-episode gradients.

Needs ``gymnasium`` and ``cma`` (pip install ".[benchmarks]").

Run: python benchmarks/bench_rl.py [--seeds 10] [--tasks Pendulum-v1 ...] [--policy linear]
     python benchmarks/bench_rl.py --methods "VAN (parameter space)" --shape-update cma
     python benchmarks/bench_rl.py --tasks Pendulum-v1 --methods CMA-ES --per-seed
"""

import argparse
import functools
import time

import numpy as np

from skvan._policy import METHODS, TASKS, LinearPolicy, QuadraticPolicy, evaluate, make, van_search

#: Environment steps per run: 200,000 where a policy must find a swing (the car's
#: rocking, the pendulum's pumping), 60,000 on CartPole and the linear Pendulum.
BUDGETS = {"Pendulum-v1": 200_000, "MountainCarContinuous-v0": 200_000, "CartPole-v1": 60_000}
LINEAR_BUDGETS = {**BUDGETS, "Pendulum-v1": 60_000}
POLICY_CLASSES = {"linear": LinearPolicy, "quadratic": QuadraticPolicy}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--tasks", nargs="*", default=list(TASKS), choices=list(TASKS))
    parser.add_argument("--methods", nargs="*", default=list(METHODS), choices=list(METHODS))
    parser.add_argument("--shape-update", choices=["xnes", "cma"], default=None,
                        help="VANOptimizer's shape_update option (default: the library's)")
    parser.add_argument("--policy", choices=list(POLICY_CLASSES), default=None,
                        help="one policy for every task (default: skvan._policy.POLICIES)")
    parser.add_argument("--per-seed", action="store_true",
                        help="also print each seed's returns at the checkpoints")
    args = parser.parse_args()
    methods = dict(METHODS)
    if args.shape_update is not None:
        methods["VAN (parameter space)"] = functools.partial(
            van_search, options={"shape_update": args.shape_update})
    print(f"Mean return of the current policy (10 evaluation episodes) +- sd over {args.seeds} "
          "seeds, against environment steps\n")
    for task in args.tasks:
        env, policy = make(task, POLICY_CLASSES.get(args.policy))
        budget = (LINEAR_BUDGETS if policy.name == "linear" else BUDGETS)[task]
        checkpoints = [budget // 4, budget // 2, budget]
        print(f"{task} ({policy.name} policy, {policy.n_params} parameters)")
        print(f"{'method':<26}" + "".join(f"{str(c) + ' steps':>20}" for c in checkpoints)
              + f"{'time':>8}")
        for label in args.methods:
            start = time.perf_counter()
            scores = np.array([[evaluate(env, policy, theta) for _, theta in
                                methods[label](env, policy, budget, checkpoints, seed)]
                               for seed in range(args.seeds)])
            cells = "".join(f"{m:>12.1f} +- {s:<5.1f}" for m, s in
                            zip(scores.mean(0), scores.std(0)))
            se = ""  # the standard errors of the means, for comparisons
            if args.seeds > 1:
                se = "   se " + " / ".join(
                    f"{x:.1f}" for x in scores.std(0, ddof=1) / np.sqrt(args.seeds))
            print(f"{label:<26}{cells}{time.perf_counter() - start:>7.0f}s{se}", flush=True)
            if args.per_seed:
                for c, row in zip(checkpoints, scores.T):
                    print(f"    {c:>7} steps, by seed: " + " ".join(f"{r:.0f}" for r in row))
        print()


if __name__ == "__main__":
    main()
