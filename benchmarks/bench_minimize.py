"""skvan.minimize against CMA-ES, BFGS, Nelder-Mead and Newton-CG on a suite of
standard test functions.

The suite (``SUITE``): 12 functions in 1 to 20 dimensions, unimodal and
multimodal, each from ``--starts`` random starts in its box (the same starts for
every method) with ``sigma0`` a quarter of the box's width (CMA-ES's and VAN's
initial step). Each method runs with its defaults, to its own termination or
the budget (``BUDGET_PER_DIM * n`` evaluations).

- Success: the final point within ``TARGET`` of the global minimum value
  (``f - f* <= TARGET * max(1, |f*|)``).
- Evaluations to target: the number of ``fun`` calls until one evaluated point
  was within the target (BBOB's and cma's ``ftarget`` criterion; independent of
  the methods' termination rules), median over the runs that got there.
  Derivative methods count calls of ``fun``/``jac``/``hess`` alike (``nfev``).

Derivatives: analytic gradients; Hessians analytic where the function is
separable or Rosenbrock, else central differences of the analytic gradient
(step 1e-6; accurate to about 1e-8, ample for Newton-CG and VAN).

`cma` is a benchmark-only dependency (pip install ".[benchmarks]").

Run: python benchmarks/bench_minimize.py --starts 10      (the whole suite, ~1 min)
     python benchmarks/bench_minimize.py --functions sinc-1 --starts 20
     python benchmarks/bench_minimize.py --functions sinc-1 --starts 300 --methods \
         "VAN zero order" "CMA-ES (cma)" --expectation mc --n-mc-samples 6
     python benchmarks/bench_minimize.py --functions rastrigin-5 --restarts 4
     python benchmarks/bench_minimize.py --functions rosenbrock-2 beale-2 himmelblau-2 \
         camel-2 --methods "VAN first order" --expectation quadrature   (the 2-D grid)
     python benchmarks/bench_minimize.py --starts 30 --methods "VAN zero order" \
         --shape-update cma   (CMA-ES's shape update instead of xNES's)
     python benchmarks/bench_minimize.py --starts 100 --methods "VAN zero order" \
         --rank-one-fraction 0.25   (the rank-one rate, a fraction of CMA-ES's c_1)
     python benchmarks/bench_minimize.py --starts 100 --functions sinc-1 sphere-1 \
         rastrigin-1 styblinski-1 ackley-1 griewank-1 --grid-nodes 20   (1-D grids)
     python benchmarks/bench_minimize.py --starts 40 --methods "VAN first order" \
         "VAN second order" --checked-radius 2   (derivatives: which steps f checks)
     python benchmarks/bench_minimize.py --starts 100 --functions sinc-1 rastrigin-1 \
         ackley-1 griewank-1 styblinski-1 sphere-1 --methods "VAN zero order" \
         --beta-growth 8 --trust-radius inf   (the 1-D grid's growth, its trust region)
     python benchmarks/bench_minimize.py --starts 100 --functions sine-sum-1 damped-sine-1 \
         quartic-1 --methods "VAN zero order" --expectation mc --fitness-shaping true
         (three more 1-D functions; ranks of draws in place of the grid)
     python benchmarks/bench_minimize.py --bounds --starts 10   (bounded problems)
     python benchmarks/bench_minimize.py --explore --starts 100   (exploration: tilted
         wells, ripples and Rastrigin in 2, 5 and 10 dimensions from a non-global basin)
"""

import argparse
import time
import warnings

import numpy as np
from scipy.optimize import minimize as scipy_minimize
from scipy.optimize import minimize_scalar
from scipy.optimize import rosen, rosen_der, rosen_hess

from skvan import minimize
from skvan._functions import griewank, griewank_grad  # shared with the tests
from skvan._functions import sinc, sinc_grad, sinc_hess  # the paper's Figure 1

BUDGET_PER_DIM = 4000
TARGET = 1e-5


def _fd_hessian(grad):
    def hess(x):
        n = len(x)
        H = np.empty((n, n))
        for i in range(n):
            e = np.zeros(n)
            e[i] = 1e-6
            H[:, i] = (grad(x + e) - grad(x - e)) / 2e-6
        return 0.5 * (H + H.T)
    return hess


def _weights(n, cond):
    return cond ** (np.arange(n) / max(n - 1, 1))


def ellipsoid(x):
    return float(_weights(len(x), 1e6) @ x**2)


def beale(x):
    a, b = x
    return float((1.5 - a + a * b) ** 2 + (2.25 - a + a * b**2) ** 2 + (2.625 - a + a * b**3) ** 2)


def beale_grad(x):
    a, b = x
    t1, t2, t3 = 1.5 - a + a * b, 2.25 - a + a * b**2, 2.625 - a + a * b**3
    return np.array([2 * t1 * (b - 1) + 2 * t2 * (b**2 - 1) + 2 * t3 * (b**3 - 1),
                     2 * t1 * a + 4 * t2 * a * b + 6 * t3 * a * b**2])


def himmelblau(x):
    a, b = x
    return float((a**2 + b - 11) ** 2 + (a + b**2 - 7) ** 2)


def himmelblau_grad(x):
    a, b = x
    u, v = a**2 + b - 11, a + b**2 - 7
    return np.array([4 * a * u + 2 * v, 2 * u + 4 * b * v])


def camel(x):
    a, b = x
    return float((4 - 2.1 * a**2 + a**4 / 3) * a**2 + a * b + (-4 + 4 * b**2) * b**2)


def camel_grad(x):
    a, b = x
    return np.array([8 * a - 8.4 * a**3 + 2 * a**5 + b, a - 8 * b + 16 * b**3])


def styblinski_tang(x):
    return float(0.5 * np.sum(x**4 - 16 * x**2 + 5 * x))


def rastrigin(x):
    return float(10.0 * len(x) + np.sum(x**2 - 10.0 * np.cos(2 * np.pi * x)))


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


def _diag(h):
    return lambda x: np.diag(h(x))


#: name: (f, grad, hess, dim, f*, box, kind)
SUITE = {
    "sphere-20": (lambda x: float(x @ x), lambda x: 2 * x, lambda x: 2 * np.eye(len(x)),
                  20, 0.0, (-3, 3), "unimodal"),
    "ellipsoid-10": (ellipsoid, lambda x: 2 * _weights(len(x), 1e6) * x,
                     lambda x: np.diag(2 * _weights(len(x), 1e6)), 10, 0.0, (-3, 3), "unimodal"),
    "rosenbrock-2": (rosen, rosen_der, rosen_hess, 2, 0.0, (-3, 3), "unimodal"),
    "rosenbrock-10": (rosen, rosen_der, rosen_hess, 10, 0.0, (-3, 3), "one local minimum"),
    "beale-2": (beale, beale_grad, _fd_hessian(beale_grad), 2, 0.0, (-4.5, 4.5), "unimodal"),
    "sinc-1": (sinc, sinc_grad, sinc_hess, 1, -1.0, (-5, -2), "multimodal (paper Fig. 1)"),
    "himmelblau-2": (himmelblau, himmelblau_grad, _fd_hessian(himmelblau_grad), 2, 0.0,
                     (-5, 5), "4 global minima"),
    "camel-2": (camel, camel_grad, _fd_hessian(camel_grad), 2, -1.031628453489877, (-3, 3),
                "multimodal"),
    "styblinski-tang-5": (styblinski_tang, lambda x: 0.5 * (4 * x**3 - 32 * x + 5),
                          _diag(lambda x: 0.5 * (12 * x**2 - 32)), 5, -39.16616570377142 * 5,
                          (-5, 5), "multimodal, 2^n minima"),
    "rastrigin-5": (rastrigin, lambda x: 2 * x + 20 * np.pi * np.sin(2 * np.pi * x),
                    _diag(lambda x: 2 + 40 * np.pi**2 * np.cos(2 * np.pi * x)), 5, 0.0,
                    (-5.12, 5.12), "multimodal"),
    "ackley-10": (ackley, ackley_grad, _fd_hessian(ackley_grad), 10, 0.0, (-3, 3), "multimodal"),
    "griewank-10": (griewank, griewank_grad, _fd_hessian(griewank_grad), 10, 0.0, (-50, 50),
                    "multimodal"),
}
# sinc's global minimum lies at 1, outside the box of starts; its sigma0 is the paper's.
SIGMA0 = {"sinc-1": 1.5}


def _one_d(name):
    """The 1-D version of a separable (or dimension-free) function of the suite."""
    f, grad, hess, n, fstar, box, kind = SUITE[name]
    return (f, grad, hess, 1, fstar / n if name.startswith("styblinski") else fstar, box,
            kind + ", 1-D")


def _one_d_minimum(f, box):
    """The global minimum value of a 1-D ``f`` on ``box``: the best of a fine grid,
    polished by a bounded scalar search between its neighbours."""
    grid = np.linspace(*box, 20_001)
    values = np.array([f(np.array([x])) for x in grid])
    k = int(np.argmin(values))
    lo, hi = grid[max(k - 1, 0)], grid[min(k + 1, grid.size - 1)]
    best = minimize_scalar(lambda x: f(np.array([x])), bounds=(lo, hi), method="bounded",
                           options={"xatol": 1e-12})
    return float(min(best.fun, values[k]))


def _scalar(f, df, d2f):
    """``(f, grad, hess)`` on arrays of shape (1,) from scalar functions."""
    return (lambda x: float(f(x[0])), lambda x: np.array([df(x[0])]),
            lambda x: np.array([[d2f(x[0])]]))


def _sine_sum():
    """Gavana's 1-D problem 02, ``sin(x) + sin(10 x / 3)``."""
    return _scalar(lambda x: np.sin(x) + np.sin(10 * x / 3),
                   lambda x: np.cos(x) + 10 / 3 * np.cos(10 * x / 3),
                   lambda x: -np.sin(x) - 100 / 9 * np.sin(10 * x / 3))


def _damped():
    """Gavana's 1-D problem 06, ``-(x + sin x) exp(-x^2)``."""
    def f(x):
        return -(x + np.sin(x)) * np.exp(-x * x)

    def df(x):
        return -(1 + np.cos(x) - 2 * x * (x + np.sin(x))) * np.exp(-x * x)

    def d2f(x):
        a, da, d2a = x + np.sin(x), 1 + np.cos(x), -np.sin(x)
        return -(d2a - 4 * x * da + (4 * x * x - 2) * a) * np.exp(-x * x)

    return _scalar(f, df, d2f)


def _other_one_d():
    """Standard 1-D test functions beyond the suite's: two of Gavana's 1-D set, and a
    flat-bottomed quartic (zero curvature at its minimum). (Forrester's function
    is not among them: it is defined on [0, 1] and falls below its minimum there
    outside, where an unconstrained search goes.)"""
    out = {}
    for name, (fgh, box, kind) in {
        "sine-sum-1": (_sine_sum(), (2.7, 7.5), "multimodal, 1-D"),
        "damped-sine-1": (_damped(), (-10.0, 10.0), "flat tails, 1-D"),
        "quartic-1": (_scalar(lambda x: (x - 2) ** 4, lambda x: 4 * (x - 2) ** 3,
                              lambda x: 12 * (x - 2) ** 2),
                      (-5.0, 5.0), "degenerate minimum, 1-D"),
    }.items():
        out[name] = (*fgh, 1, _one_d_minimum(fgh[0], box), box, kind)
    return out


#: 1-D versions of five functions of the suite, which has only sinc in 1-D, and
#: three other standard 1-D functions: a check that 1-D defaults are not chosen on
#: sinc alone. Not in the default run (``--functions`` names them).
ONE_D = {name.split("-")[0] + "-1": _one_d(name) for name in
         ("sphere-20", "rastrigin-5", "styblinski-tang-5", "ackley-10", "griewank-10")}
ONE_D.update(_other_one_d())


class Tracked:
    """Wraps ``f`` (and its derivatives): counts every call, and records the count
    at which a value first came within the target."""

    def __init__(self, f, target):
        self.f, self.target, self.calls, self.hit = f, target, 0, np.nan

    def __call__(self, x):
        self.calls += 1
        value = self.f(x)
        if np.isnan(self.hit) and value <= self.target:
            self.hit = self.calls
        return value

    def counted(self, g):
        def wrapped(*a):
            self.calls += 1
            return g(*a)
        return wrapped


#: ``minimize``'s ``expectation``, ``beta_growth``, ``n_mc_samples`` and
#: ``fitness_shaping`` for the VAN runs (``--expectation``, ``--beta-growth``,
#: ``--n-mc-samples``, ``--fitness-shaping``).
VAN_OPTIONS = {"expectation": "auto", "beta_growth": None, "n_mc_samples": None,
               "fitness_shaping": "auto", "options": {}}


#: Flags that set one of minimize's options for the VAN runs: flag -> (the
#: option, what it is).
OPTION_FLAGS = {
    "--rank-one-fraction": ("rank_one_fraction", "the rank-one rate of the zero-order "
                            "runs' 'xnes' shape update as a fraction of CMA-ES's c_1; 0: none"),
    "--checked-radius": ("checked_radius", "steps of the derivative oracles longer than "
                         "this many sd of q per sqrt(n) are checked by f at the new "
                         "mean; inf: none"),
    "--trust-radius": ("trust_radius", "the trust region of sampled steps, and of the "
                       "1-D grid's from values; inf: none"),
}


def run_van(problem, x0, sigma0, seed, order, restarts=0):
    f, grad, hess, n, fstar, box, kind = problem
    t = Tracked(f, fstar + TARGET * max(1.0, abs(fstar)))
    kw = [{}, dict(jac=t.counted(grad)), dict(jac=t.counted(grad), hess=t.counted(hess))][order]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = minimize(t, x0, sigma0=sigma0, random_state=seed, max_iter=10_000,
                       restarts=restarts, **VAN_OPTIONS, **kw)
    return res.fun, t.calls, t.hit


def run_cma(problem, x0, sigma0, seed, restarts=0):
    import cma

    f, grad, hess, n, fstar, box, kind = problem
    t = Tracked(f, fstar + TARGET * max(1.0, abs(fstar)))
    budget = BUDGET_PER_DIM * n
    if n == 1:  # cma needs n >= 2: a dummy coordinate that f ignores
        g, x0 = (lambda z: t(z[:1])), np.r_[x0, 0.0]
    else:
        g = t
    options = {"seed": seed + 1, "verbose": -9, "maxfevals": budget}
    if restarts:
        res = cma.fmin(g, x0, sigma0, options, restarts=restarts, incpopsize=2)
        fbest = res[1]
    else:
        es = cma.CMAEvolutionStrategy(x0, sigma0, options)
        es.optimize(g)
        fbest = es.result.fbest
    return fbest, t.calls, t.hit


def run_scipy(problem, x0, method):
    f, grad, hess, n, fstar, box, kind = problem
    t = Tracked(f, fstar + TARGET * max(1.0, abs(fstar)))
    kw = {"BFGS": dict(jac=t.counted(grad)), "Nelder-Mead": {},
          "Newton-CG": dict(jac=t.counted(grad), hess=t.counted(hess))}[method]
    options = {"maxiter": BUDGET_PER_DIM * n}
    if method == "Nelder-Mead":
        options.update(maxfev=BUDGET_PER_DIM * n, xatol=1e-10, fatol=1e-12, adaptive=n > 2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = scipy_minimize(t, x0, method=method, options=options, **kw)
    return res.fun, t.calls, t.hit


METHODS = {
    "VAN zero order": lambda p, x0, s0, seed, r: run_van(p, x0, s0, seed, 0, r),
    "CMA-ES (cma)": lambda p, x0, s0, seed, r: run_cma(p, x0, s0, seed, r),
    "Nelder-Mead": lambda p, x0, s0, seed, r: run_scipy(p, x0, "Nelder-Mead"),
    "VAN first order": lambda p, x0, s0, seed, r: run_van(p, x0, s0, seed, 1, r),
    "BFGS": lambda p, x0, s0, seed, r: run_scipy(p, x0, "BFGS"),
    "VAN second order": lambda p, x0, s0, seed, r: run_van(p, x0, s0, seed, 2, r),
    "Newton-CG": lambda p, x0, s0, seed, r: run_scipy(p, x0, "Newton-CG"),
}


def bounded_table(seeds):
    """Each bounded problem of ``skvan._functions.bounded_problems`` from ``seeds``
    seeds per oracle, against L-BFGS-B's value from the same start: the worst gap
    ``(f - f*) / max(1, |f*|)``, successes, the median evaluations, and the
    largest first-order ratio reached, ``optimality max(|x|, 1) / max(|f(x)|,
    |f(x0) - f(x)|) / tol`` (the default first-order test passes below 1e3)."""
    from skvan._functions import bounded_problems

    print(f"{'problem':<30}{'oracle':<11}{'worst gap':>11}{'success':>9}{'median nfev':>13}"
          f"{'first-order ratio':>19}")
    for name, (f, grad, hess, bounds, x0) in bounded_problems().items():
        best = scipy_minimize(f, x0, jac=grad, bounds=bounds, method="L-BFGS-B",
                              options=dict(ftol=1e-16, gtol=1e-13, maxiter=10_000)).fun
        for order, oracle in enumerate(("values", "gradients", "hessians")):
            kw = [{}, dict(jac=grad), dict(jac=grad, hess=hess)][order]
            runs = [minimize(f, x0, bounds=bounds, random_state=seed, **kw)
                    for seed in range(seeds)]
            gaps = [(r.fun - best) / max(1.0, abs(best)) for r in runs]
            ratios = [r.optimality * max(np.max(np.abs(r.x)), 1.0)
                      / max(abs(r.fun), abs(f(x0) - r.fun)) / 1e-6 for r in runs]
            print(f"{name:<30}{oracle:<11}{max(gaps):>11.1e}{np.mean([r.success for r in runs]):>9.0%}"
                  f"{np.median([r.nfev for r in runs]):>13.0f}{max(ratios):>19.2g}", flush=True)


#: ``--explore``: the landscapes of ``skvan._functions`` by name.
LANDSCAPES = {"tilted wells": "tilted_wells", "ripple": "ripple",
              "rastrigin-type": "rastrigin_type"}


def explore_table(seeds, dims, methods):
    """Each landscape of :data:`LANDSCAPES` in each of ``dims`` dimensions, from
    ``seeds`` starts in a non-global basin (its centre plus 0.05 standard normal
    noise, a seed each) with ``sigma0 = 1`` and defaults otherwise. A row per
    landscape and dimension, a cell per method: the share of runs whose final
    point lies in the global basin, the median evaluations (calls of ``fun``,
    ``jac`` and ``hess`` alike) and, for VAN, in brackets the share of runs that
    ended on ``max_iter`` (a ``ConvergenceWarning``)."""
    import skvan._functions as functions

    print(f"{seeds} starts in a non-global basin, sigma0 = 1; each cell: the share in the "
          "global basin, median evaluations [VAN: share ended on max_iter]\n")
    short = {"VAN zero order": "VAN values", "VAN first order": "VAN gradients",
             "VAN second order": "VAN Hessians", "CMA-ES (cma)": "CMA-ES"}
    print(f"{'landscape':<15}{'n':>3}" + "".join(f"{short.get(m, m):>21}" for m in methods))
    for label, factory in LANDSCAPES.items():
        for n in dims:
            L = getattr(functions, factory)(n)
            starts = [L.start + 0.05 * np.random.RandomState(100 + s).standard_normal(n)
                      for s in range(seeds)]
            cells = []
            for method in methods:
                rows = [_explore_run(L, method, x0, seed) for seed, x0 in enumerate(starts)]
                solved, evals, capped = (np.array(c) for c in zip(*rows))
                cell = f"{solved.mean():.0%} {np.median(evals):.0f}"
                if method.startswith("VAN"):
                    cell += f" [{capped.mean():.0%}]"
                cells.append(f"{cell:>21}")
            print(f"{label:<15}{n:>3}" + "".join(cells), flush=True)


def _explore_run(L, method, x0, seed):
    """``(solved, evaluations, ended on max_iter)`` of one ``--explore`` run."""
    t = Tracked(L.f, -np.inf)
    if method == "CMA-ES (cma)":
        import cma

        es = cma.CMAEvolutionStrategy(x0, 1.0, {"seed": seed + 1, "verbose": -9,
                                                "maxfevals": BUDGET_PER_DIM * L.n})
        es.optimize(t)
        return L.solved(es.result.xbest), t.calls, False
    if method in ("BFGS", "Nelder-Mead", "Newton-CG"):
        kw = {"BFGS": dict(jac=t.counted(L.grad)), "Nelder-Mead": {},
              "Newton-CG": dict(jac=t.counted(L.grad), hess=t.counted(L.hess))}[method]
        res = scipy_minimize(t, x0, method=method, **kw)
        return L.solved(res.x), t.calls, False
    order = ["VAN zero order", "VAN first order", "VAN second order"].index(method)
    kw = [{}, dict(jac=t.counted(L.grad)), dict(jac=t.counted(L.grad), hess=t.counted(L.hess))]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = minimize(t, x0, sigma0=1.0, random_state=seed, **{
            k: v for k, v in VAN_OPTIONS.items() if k != "options"},
            options=VAN_OPTIONS["options"], **kw[order])
    return L.solved(res.x), t.calls, res.status == 1


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--starts", type=int, default=5)
    parser.add_argument("--functions", nargs="*", default=list(SUITE),
                        choices=list(SUITE) + list(ONE_D),
                        help="default: the 12 of SUITE; the 1-D versions in ONE_D on request")
    parser.add_argument("--methods", nargs="*", default=list(METHODS), choices=list(METHODS))
    parser.add_argument("--expectation", default="auto", choices=["auto", "mc", "quadrature"],
                        help="minimize's expectation for the VAN runs (quadrature: n <= 2)")
    parser.add_argument("--beta-growth", type=float, default=None,
                        help="minimize's beta_growth for the VAN runs (default: its own)")
    parser.add_argument("--n-mc-samples", type=int, default=None,
                        help="minimize's n_mc_samples for the VAN runs with Monte Carlo "
                             "(default: its own)")
    parser.add_argument("--fitness-shaping", choices=["auto", "true", "false"], default="auto",
                        help="minimize's fitness_shaping for the VAN runs (default: auto)")
    parser.add_argument("--restarts", type=int, default=0,
                        help="restarts with doubled population, for VAN and CMA-ES (IPOP)")
    parser.add_argument("--shape-update", choices=["xnes", "cma"], default=None,
                        help="minimize's shape_update option for the zero-order VAN runs "
                             "(default: the library's)")
    parser.add_argument("--grid-nodes", type=int, default=None,
                        help="minimize's grid_nodes option: Gauss-Hermite nodes per "
                             "dimension of the grid (default: the library's)")
    for flag, (name, text) in OPTION_FLAGS.items():
        parser.add_argument(flag, type=float, default=None,
                            help=f"minimize's {name} option: {text} (default: the library's)")
    parser.add_argument("--bounds", action="store_true",
                        help="instead: the bounded problems against L-BFGS-B (each oracle)")
    parser.add_argument("--explore", nargs="*", type=int, default=None, metavar="N",
                        help="instead: the exploration table in these dimensions (none "
                             "given: 2 5 10), --starts seeds each")
    parser.add_argument("--step-noise", type=float, default=None,
                        help="minimize's step_noise option (sampled expectations: the "
                             "mean step's noise, in sd of q, above which the steps "
                             "shorten and q waits; default: the library's)")
    args = parser.parse_args()
    options = {name: getattr(args, flag[2:].replace("-", "_"))
               for flag, (name, _) in OPTION_FLAGS.items()}
    options.update(shape_update=args.shape_update, grid_nodes=args.grid_nodes,
                   step_noise=args.step_noise)
    shaping = {"auto": "auto", "true": True, "false": False}[args.fitness_shaping]
    VAN_OPTIONS.update(expectation=args.expectation, beta_growth=args.beta_growth,
                       n_mc_samples=args.n_mc_samples, fitness_shaping=shaping,
                       options={k: v for k, v in options.items() if v is not None})
    if args.bounds:
        return bounded_table(args.starts)
    if args.explore is not None:
        methods = [m for m in args.methods if m != "Newton-CG"]  # BFGS stands for both
        return explore_table(args.starts, args.explore or [2, 5, 10], methods)
    print(f"{args.starts} starts per function; success: f - f* <= {TARGET:g} max(1, |f*|); "
          f"budget {BUDGET_PER_DIM} n evaluations; restarts {args.restarts}\n")
    print(f"{'function':<19}{'method':<18}{'success':>8}{'median evals':>14}{'to target':>11}"
          f"{'median f - f*':>15}{'time':>7}")
    for name in args.functions:
        problem = SUITE[name] if name in SUITE else ONE_D[name]
        f, grad, hess, n, fstar, box, kind = problem
        sigma0 = SIGMA0.get(name, (box[1] - box[0]) / 4.0)
        starts = np.random.RandomState(0).uniform(*box, size=(args.starts, n))
        for label in args.methods:
            t0 = time.perf_counter()
            results = [METHODS[label](problem, x0, sigma0, seed, args.restarts)
                       for seed, x0 in enumerate(starts)]
            gap = np.array([r[0] for r in results]) - fstar
            evals = np.array([r[1] for r in results])
            hits = np.array([r[2] for r in results])
            ok = gap <= TARGET * max(1.0, abs(fstar))
            to_target = (f"{np.median(hits[np.isfinite(hits)]):>11.0f}" if np.isfinite(hits).any()
                         else f"{'-':>11}")
            print(f"{name:<19}{label:<18}{ok.mean():>8.0%}{np.median(evals):>14.0f}{to_target}"
                  f"{np.median(gap):>15.2e}{time.perf_counter() - t0:>6.0f}s", flush=True)


if __name__ == "__main__":
    main()
