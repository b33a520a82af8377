"""skvan.minimize against CMA-ES (zero order) and BFGS (first order), 10-D.

Rosenbrock, Rastrigin and Ackley from fixed random starts in [-3, 3]^10. Success:
f within 1e-6 of the global minimum (0) for Rosenbrock, 1e-2 for Rastrigin and
Ackley. Reports the success rate and the median number of function evaluations
(gradient evaluations for the first-order methods) over all runs, within a budget
of 100,000 evaluations. `cma` is a benchmark-only dependency
(pip install ".[benchmarks]").

Run: python benchmarks/bench_minimize.py [--starts 10]
"""

import argparse
import warnings

import numpy as np
from scipy.optimize import minimize as scipy_minimize

from skvan import minimize

BUDGET = 100_000
DIM = 10


def rosenbrock(x):
    return float(np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2))


def rosenbrock_grad(x):
    g = np.zeros_like(x)
    g[:-1] = -400.0 * x[:-1] * (x[1:] - x[:-1] ** 2) - 2.0 * (1.0 - x[:-1])
    g[1:] += 200.0 * (x[1:] - x[:-1] ** 2)
    return g


def rastrigin(x):
    return float(10.0 * len(x) + np.sum(x**2 - 10.0 * np.cos(2 * np.pi * x)))


def rastrigin_grad(x):
    return 2.0 * x + 20.0 * np.pi * np.sin(2 * np.pi * x)


def ackley(x):
    n = len(x)
    r = np.sqrt(np.sum(x**2) / n)
    return float(-20.0 * np.exp(-0.2 * r) - np.exp(np.sum(np.cos(2 * np.pi * x)) / n) + 20.0 + np.e)


def ackley_grad(x):
    n = len(x)
    r = np.sqrt(np.sum(x**2) / n)
    g1 = 0.0 if r == 0 else 4.0 * np.exp(-0.2 * r) * x / (n * r)
    g2 = np.exp(np.sum(np.cos(2 * np.pi * x)) / n) * 2 * np.pi * np.sin(2 * np.pi * x) / n
    return g1 + g2


PROBLEMS = {
    "Rosenbrock": (rosenbrock, rosenbrock_grad, 1e-6, 1.0),
    "Rastrigin": (rastrigin, rastrigin_grad, 1e-2, 2.0),
    "Ackley": (ackley, ackley_grad, 1e-2, 2.0),
}


def run_van(f, grad, x0, sigma0, seed, first_order):
    kw = dict(jac=grad) if first_order else {}
    n_iter = BUDGET // (2 * (DIM + 1) + 1)
    res = minimize(f, x0, sigma0=sigma0, beta_growth=1.02, max_iter=n_iter, tol=1e-10,
                   random_state=seed, **kw)
    return res.fun, (res.njev if first_order else res.nfev)


def run_cma(f, x0, sigma0, seed):
    import cma

    es = cma.CMAEvolutionStrategy(x0, sigma0, {"seed": seed + 1, "verbose": -9, "maxfevals": BUDGET,
                                               "tolfun": 1e-12, "tolx": 1e-12})
    es.optimize(f)
    return es.result.fbest, es.result.evaluations


def run_bfgs(f, grad, x0):
    res = scipy_minimize(f, x0, jac=grad, method="BFGS", options={"gtol": 1e-10, "maxiter": BUDGET})
    return res.fun, res.njev


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--starts", type=int, default=10)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    rng = np.random.RandomState(0)
    starts = rng.uniform(-3, 3, size=(args.starts, DIM))
    print(f"{args.starts} starts in [-3, 3]^{DIM}, budget {BUDGET} evaluations; "
          "success rate and median evaluations\n")
    print(f"{'problem':<12}{'method':<28}{'success':>9}{'median evals':>14}{'median f':>12}")
    for name, (f, grad, target, sigma0) in PROBLEMS.items():
        methods = {
            "VAN zero order": lambda x0, s: run_van(f, grad, x0, sigma0, s, False),
            "CMA-ES (cma)": lambda x0, s: run_cma(f, x0, sigma0, s),
            "VAN first order": lambda x0, s: run_van(f, grad, x0, sigma0, s, True),
            "BFGS (scipy)": lambda x0, s: run_bfgs(f, grad, x0),
        }
        for label, method in methods.items():
            results = [method(x0, seed) for seed, x0 in enumerate(starts)]
            values = np.array([r[0] for r in results])
            evals = np.array([r[1] for r in results])
            print(f"{name:<12}{label:<28}{np.mean(values <= target):>9.0%}{np.median(evals):>14.0f}"
                  f"{np.median(values):>12.2e}", flush=True)


if __name__ == "__main__":
    main()
