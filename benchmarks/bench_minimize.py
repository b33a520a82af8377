"""skvan.minimize against CMA-ES (zero order) and BFGS (first order), 10-D.

Rosenbrock, Rastrigin and Ackley from fixed random starts in [-3, 3]^10. Success:
f within 1e-6 of the global minimum (0) for Rosenbrock, 1e-2 for Rastrigin and
Ackley. Reports the success rate and the median number of function evaluations
(gradient evaluations for the first-order methods) over all runs, within a budget
of 100,000 evaluations, each method running to its own termination; and, for the
zero-order methods, the median number of evaluations until one evaluated point was
within the target (over the runs that got there; BBOB's and cma's ``ftarget``
criterion), which does not depend on the termination tolerances. `cma` is a benchmark-only dependency
(pip install ".[benchmarks]").

Run: python benchmarks/bench_minimize.py [--starts 10] [--problems Rastrigin] [--population 10]
     python benchmarks/bench_minimize.py --problems Sphere Ellipsoid Cigar \
         --methods "VAN zero order, fitness shaping" "CMA-ES (cma)"     (controls)
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

_ELLIPSOID_WEIGHTS = 10.0 ** (6.0 * np.arange(DIM) / (DIM - 1))
_CIGAR_WEIGHTS = np.r_[1.0, np.full(DIM - 1, 1e6)]

#: Controls, not in the issue's table (--problems): unimodal, ill-conditioned.
CONTROLS = {
    "Sphere": (lambda x: float(x @ x), lambda x: 2.0 * x, 1e-8, 2.0),
    "Ellipsoid": (lambda x: float(_ELLIPSOID_WEIGHTS @ x**2), lambda x: 2.0 * _ELLIPSOID_WEIGHTS * x,
                  1e-8, 2.0),
    "Cigar": (lambda x: float(_CIGAR_WEIGHTS @ x**2), lambda x: 2.0 * _CIGAR_WEIGHTS * x, 1e-8, 2.0),
}


class FirstHit:
    """Wraps ``f``; records how many evaluations it took until one was within
    the target (the best-so-far criterion of BBOB and of cma's ``ftarget``)."""

    def __init__(self, f, target):
        self.f, self.target, self.calls, self.hit = f, target, 0, np.nan

    def __call__(self, x):
        self.calls += 1
        value = self.f(x)
        if np.isnan(self.hit) and value <= self.target:
            self.hit = self.calls
        return value


def run_van(f, grad, x0, sigma0, seed, first_order, target, shaping=False, population=1,
            covariance="full"):
    kw = dict(jac=grad, covariance=covariance) if first_order else dict(covariance=covariance)
    if shaping:
        kw["n_mc_samples"] = 10 * population  # 4 + floor(3 log 10), times the factor
    per_iter = 10 * population if shaping else 2 * (DIM + 1) + 1
    tracked = FirstHit(f, target)
    res = minimize(tracked, x0, sigma0=sigma0, beta_growth=1.0 if shaping else 1.02,
                   max_iter=BUDGET // per_iter - 1, tol=1e-10, random_state=seed,
                   fitness_shaping=shaping, **kw)
    return res.fun, (res.njev if first_order else res.nfev), tracked.hit


def run_cma(f, x0, sigma0, seed, target, population=1):
    import cma

    tracked = FirstHit(f, target)
    options = {"seed": seed + 1, "verbose": -9, "maxfevals": BUDGET, "tolfun": 1e-12, "tolx": 1e-12}
    if population > 1:
        options["popsize"] = population * (4 + int(3 * np.log(DIM)))
    es = cma.CMAEvolutionStrategy(x0, sigma0, options)
    es.optimize(tracked)
    return es.result.fbest, es.result.evaluations, tracked.hit


def run_bfgs(f, grad, x0):
    res = scipy_minimize(f, x0, jac=grad, method="BFGS", options={"gtol": 1e-10, "maxiter": BUDGET})
    return res.fun, res.njev, np.nan


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--starts", type=int, default=10)
    parser.add_argument("--problems", nargs="*", default=list(PROBLEMS),
                        choices=list(PROBLEMS) + list(CONTROLS))
    parser.add_argument("--methods", nargs="*", default=None,
                        help="only these rows, e.g. --methods 'VAN zero order, fitness shaping' "
                             "'CMA-ES (cma)'")
    parser.add_argument("--covariance", default="full", choices=["full", "diag"],
                        help="the VAN runs' family")
    parser.add_argument("--population", type=int, default=1,
                        help="population factor of the fitness-shaping runs (and CMA-ES's)")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    rng = np.random.RandomState(0)
    starts = rng.uniform(-3, 3, size=(args.starts, DIM))
    print(f"{args.starts} starts in [-3, 3]^{DIM}, budget {BUDGET} evaluations; "
          "success rate and median evaluations\n")
    print(f"{'problem':<12}{'method':<34}{'success':>9}{'median evals':>14}{'to target':>11}"
          f"{'median f':>12}")
    for name in args.problems:
        f, grad, target, sigma0 = {**PROBLEMS, **CONTROLS}[name]
        methods = {
            "VAN zero order": lambda x0, s: run_van(f, grad, x0, sigma0, s, False, target,
                                                    covariance=args.covariance),
            "VAN zero order, fitness shaping": lambda x0, s: run_van(
                f, grad, x0, sigma0, s, False, target, shaping=True, population=args.population,
                covariance=args.covariance),
            "CMA-ES (cma)": lambda x0, s: run_cma(f, x0, sigma0, s, target, args.population),
            "VAN first order": lambda x0, s: run_van(f, grad, x0, sigma0, s, True, target,
                                                     covariance=args.covariance),
            "BFGS (scipy)": lambda x0, s: run_bfgs(f, grad, x0),
        }
        for label, method in methods.items():
            if args.methods is not None and label not in args.methods:
                continue
            results = [method(x0, seed) for seed, x0 in enumerate(starts)]
            values = np.array([r[0] for r in results])
            evals = np.array([r[1] for r in results])
            hits = np.array([r[2] for r in results])
            to_target = f"{np.median(hits[np.isfinite(hits)]):>11.0f}" if np.isfinite(hits).any() \
                else f"{'-':>11}"
            print(f"{name:<12}{label:<34}{np.mean(values <= target):>9.0%}{np.median(evals):>14.0f}"
                  f"{to_target}{np.median(values):>12.2e}", flush=True)


if __name__ == "__main__":
    main()
