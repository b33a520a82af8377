"""Where a VANLogisticRegression fit's time goes: wall time, then the cumulative
time of its parts under cProfile (which inflates Python-heavy code).

Parts: the whole ``fit`` (validation, set-up, loop, attributes), the solver loop,
the passes that give the predictors and their variances (``x_i^T mu`` and ``x_i^T
Sigma x_i``; before 5f20739, the variances alone), the passes that give the Gram
matrix (``X^T diag(d) X``; since 5f20739 with the gradient ``X^T u`` in the same
pass) and the quadrature of the per-row expectations; with
``--multinomial``, the parts in :data:`MULTINOMIAL_PARTS`; with ``--lasso``,
VANLassoRegressor's (:data:`LASSO_PARTS`).

``--variances`` prints, for each precision of one fit per dataset, the largest
predictor variance, the bound ``max ||x_i||^2 tr(Sigma)`` that skips the pass
below 1e-12, and whether the variances were carried from an earlier pass
(:data:`skvan.expectations._base.CARRY_VARIANCE`); the carried ones are
recomputed for the print.

Run: python benchmarks/profile_fit.py [--quick] [--multinomial | --lasso | --variances]
Compare two commits: run it in a worktree of each (git worktree add DIR REV;
PYTHONPATH=DIR python benchmarks/profile_fit.py).
"""

import argparse
import cProfile
import pstats
import time
import warnings

import numpy as np
from sklearn.datasets import (load_breast_cancer, load_diabetes, load_digits, make_classification,
                              make_friedman1, make_regression)
from sklearn.preprocessing import StandardScaler

from skvan import VANLassoRegressor, VANLogisticRegression

PARTS = {
    "fit": ("_logistic.py", "fit"),
    "loop": ("_solver.py", "solve"),
    "moments": ("_family.py", "predictor_moments"),
    "Gram": ("_data.py", "gram_and_tdot"),
    "quadrature": ("_quadrature.py", "_raw"),
}
#: The multinomial model (``--multinomial``): the ``K x K`` predictor covariances,
#: the ``K^2 / 2`` Gram blocks, the rows' square roots (``eigh``) and the whole
#: cubature (roots, softmax derivatives at the points, consistent curvature).
MULTINOMIAL_PARTS = {
    "fit": PARTS["fit"],
    "loop": PARTS["loop"],
    "covariances": ("_cubature.py", "predictor_covariances"),
    "Gram": ("_multinomial.py", "data_curvature"),
    "roots": ("_cubature.py", "square_roots"),
    "cubature": ("_cubature.py", "_raw"),
}

#: VANLassoRegressor (``--lasso``): scikit-learn's validation of ``X`` and ``y``,
#: the least squares and its scales (``_problem``), the solver loop, the
#: certificate's readings of ``q`` (with their corrections) and its KKT checks.
LASSO_PARTS = {
    "fit": ("_lasso.py", "fit"),
    "validation": ("validation.py", "validate_data"),
    "problem": ("_lasso.py", "_problem"),
    "loop": ("_solver.py", "solve"),
    "certificate": ("_sparse.py", "_read"),
    "KKT checks": ("_sparse.py", "_checked"),
}


def lasso_datasets(quick):
    """``(name, X, y, repeats, alpha)``: alpha a fraction of the smallest that zeroes
    every coefficient (``bench_lasso.py --speed``'s)."""
    X, y = load_diabetes(return_X_y=True)
    sets = [("diabetes 0.1", StandardScaler().fit_transform(X), y, 200, 0.1)]
    X, y = make_friedman1(2_000, 10, noise=1.0, random_state=0)
    sets.append(("friedman1 0.01", X, y, 200, 0.01))
    for n, p in ((20_000, 100), (100_000, 20)) if quick else ((100_000, 100), (1_000_000, 20)):
        X, y = make_regression(n, p, n_informative=p // 5, noise=10.0, random_state=0)
        sets.append((f"{n:.0e}x{p} 0.1".replace("+0", ""), X, y, 3, 0.1))
    for name, X, y, reps, fraction in sets:
        alpha_max = np.max(np.abs((X - X.mean(0)).T @ (y - y.mean()))) / len(y)
        yield name, X, y, reps, fraction * alpha_max


def datasets(quick):
    X, y = load_breast_cancer(return_X_y=True)
    yield "breast_cancer", StandardScaler().fit_transform(X), y, 50
    X, y = load_digits(return_X_y=True)
    yield "digits 0-4/5-9", StandardScaler().fit_transform(X), (y >= 5).astype(int), 20
    for n, p in ((20_000, 100), (100_000, 20)) if quick else ((100_000, 100), (1_000_000, 20)):
        X, y = make_classification(n, p, n_informative=p // 3, random_state=0)
        yield f"synthetic {n:.0e}x{p}".replace("+0", ""), X, y, 2


def multinomial_datasets(quick):
    X, y = load_digits(return_X_y=True)
    yield "digits (10)", StandardScaler().fit_transform(X), y, 5
    n = 10_000 if quick else 50_000
    X, y = make_classification(n, 50, n_informative=30, n_classes=10, n_clusters_per_class=1,
                               random_state=0)
    yield f"{n:.0e}x50 (10)".replace("+0", ""), X, y, 1


def print_variances(quick):
    """The ``--variances`` table: per precision, the largest ``x_i^T Sigma x_i``."""
    from skvan.expectations._base import LinearPredictorExpectation

    moments, rows = LinearPredictorExpectation._moments, []

    def traced(self, objective, family, mean):
        fresh = not (self._cache[1] is family and self._cache[2] == family.version)
        carried = fresh and self._carried(objective, family) is not None
        out = moments(self, objective, family, mean)
        if fresh:
            v = family.predictor_variance(objective.X)
            trace = float(np.sum(family.marginal_variance()))
            rows.append((float(v.max()), objective.max_row_squared_norm() * trace, carried))
        return out

    LinearPredictorExpectation._moments = traced
    try:
        for name, X, y, _ in datasets(quick):
            rows.clear()
            VANLogisticRegression().fit(X, y)
            print(f"{name}: largest x_i^T Sigma x_i per precision (bound; c = carried)")
            print("  " + "  ".join(f"{v:.1e} ({b:.0e}){' c' if c else ''}" for v, b, c in rows))
    finally:
        LinearPredictorExpectation._moments = moments


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller generated sets")
    parser.add_argument("--multinomial", action="store_true",
                        help="multinomial fits (digits, 10 classes; 50,000 x 50, 10 classes)")
    parser.add_argument("--lasso", action="store_true", help="VANLassoRegressor fits")
    parser.add_argument("--variances", action="store_true",
                        help="the predictor variances per iteration, and which were carried")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    if args.variances:
        print_variances(args.quick)
        return
    if args.lasso:
        parts_of = LASSO_PARTS
        problems = [(name, X, y, reps, (lambda a=alpha: VANLassoRegressor(alpha=a)))
                    for name, X, y, reps, alpha in lasso_datasets(args.quick)]
    else:
        parts_of = MULTINOMIAL_PARTS if args.multinomial else PARTS
        problems = [row + (VANLogisticRegression,) for row in
                    (multinomial_datasets if args.multinomial else datasets)(args.quick)]
    print("ms per fit; parts are cumulative times under cProfile\n")
    print(f"{'dataset':<18}{'wall':>8}" + "".join(f"{p:>12}" for p in parts_of))
    for name, X, y, reps, make in problems:
        make().fit(X, y)
        start = time.perf_counter()
        for _ in range(reps):
            make().fit(X, y)
        wall = (time.perf_counter() - start) / reps
        profile = cProfile.Profile()
        profile.enable()
        for _ in range(reps):
            make().fit(X, y)
        profile.disable()
        stats = pstats.Stats(profile).stats
        parts = [sum(v[3] for k, v in stats.items() if k[0].endswith(f) and k[2] == fn)
                 for f, fn in parts_of.values()]
        print(f"{name:<18}{1e3 * wall:>8.3f}" + "".join(f"{1e3 * t / reps:>12.3f}" for t in parts),
              flush=True)


if __name__ == "__main__":
    main()
