"""Iterations and wall time of objective="vi" fits, with and without Anderson
acceleration of VI's fixed-point iteration (skvan.van.AndersonStep).

VI's scheduled step at constant ``beta`` is a fixed-point map of ``(mu, P)``;
``--memory`` sets how many earlier residuals its default step combines
(``skvan.van.default_step``'s ``memory``), 0 for none (the safeguarded plain
iteration). Each
fit is compared with a reference VI fit at ``tol=1e-10``: the relative distance
of ``coef_`` and ``intercept_`` (largest entry) and of the covariance.

Datasets: the bundled classification sets (binary and multinomial),
standardised, and generated ones (independent and correlated features); then
the Lasso and the elastic net (``--regression`` only) on diabetes.

Run: python benchmarks/bench_vi.py [--memory 0 5] [--repeats 5] [--tol 1e-4]
     python benchmarks/bench_vi.py --covariance diag --hessian exact
     python benchmarks/bench_vi.py --regression
"""

import argparse
import functools
import time
from unittest import mock
import warnings

import numpy as np
from sklearn.datasets import load_breast_cancer, load_digits, load_iris, load_wine
from sklearn.datasets import make_classification
from sklearn.exceptions import ConvergenceWarning
from sklearn.preprocessing import StandardScaler

import skvan.van._steps as steps
from sklearn.datasets import load_diabetes

from skvan import VANElasticNet, VANLassoRegressor, VANLogisticRegression


def datasets():
    scale = StandardScaler().fit_transform
    X, y = load_breast_cancer(return_X_y=True)
    yield "breast_cancer", scale(X), y
    X, y = load_digits(return_X_y=True)
    yield "digits 0-4 vs 5-9", scale(X), (y >= 5).astype(int)
    X, y = load_iris(return_X_y=True)
    yield "iris virginica", scale(X), (y == 2).astype(int)
    X, y = load_wine(return_X_y=True)
    yield "wine class 1", scale(X), (y == 1).astype(int)
    X, y = load_iris(return_X_y=True)
    yield "iris, 3 classes", scale(X), y
    X, y = load_wine(return_X_y=True)
    yield "wine, 3 classes", scale(X), y
    X, y = make_classification(500, 100, n_informative=10, random_state=0)
    yield "generated 500 x 100", scale(X), y
    X, y = make_classification(2000, 20, n_informative=5, n_redundant=10, random_state=1)
    yield "generated 2000 x 20, correlated", scale(X), y


def regression():
    """``(name, estimator class, parameters)`` of the regression fits, on diabetes."""
    yield "Lasso, alpha=1", VANLassoRegressor, dict(alpha=1.0)
    yield "Lasso, alpha=0.1", VANLassoRegressor, dict(alpha=0.1)
    yield "elastic net, alpha=0.01", VANElasticNet, dict(alpha=0.01)


def fit(make, X, y, tol, memory):
    """``make(tol)`` fitted with ``memory`` residuals in VI's default step, and
    its wall time."""
    est = make(tol)
    step = functools.partial(steps.default_step, memory=memory)
    with warnings.catch_warnings(), mock.patch("skvan.van._solver.default_step", step):
        warnings.simplefilter("ignore", ConvergenceWarning)
        start = time.perf_counter()
        est.fit(X, y)
        return est, time.perf_counter() - start


def distance(est, ref):
    a = np.r_[est.coef_.ravel(), est.intercept_]
    b = np.r_[ref.coef_.ravel(), ref.intercept_]
    cov = np.abs(est.sigma_ - ref.sigma_).max() / np.abs(ref.sigma_).max()
    return np.abs(a - b).max() / np.abs(b).max(), cov


def row(make, X, y, args):
    """One table row: for each memory, iterations, median ms over alternating
    repeats, and the distances to the default's fit at tol=1e-10."""
    ref = fit(make, X, y, 1e-10, steps.ANDERSON_MEMORY)[0]
    times, fits = {m: [] for m in args.memory}, {}
    for _ in range(args.repeats):
        for m in args.memory:  # alternating, under the same load
            fits[m], seconds = fit(make, X, y, args.tol, m)
            times[m].append(seconds)
    cells = []
    for m in args.memory:
        coef, cov = distance(fits[m], ref)
        cells.append(f"{int(np.ravel(fits[m].n_iter_)[0]):>4} {1e3 * np.median(times[m]):7.1f} "
                     f"{coef:.0e}/{cov:.0e}")
    return "".join(f"{c:>30}" for c in cells)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memory", type=int, nargs="*", default=[0, steps.ANDERSON_MEMORY])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--tol", type=float, default=1e-4)
    parser.add_argument("--hessian", nargs="*", default=["exact", "gauss_newton"])
    parser.add_argument("--C", type=float, nargs="*", default=[1.0, 0.01])
    parser.add_argument("--covariance", choices=["full", "diag"], default="full")
    parser.add_argument("--regression", action="store_true",
                        help="only the Lasso and elastic net fits")
    args = parser.parse_args()
    memories = "".join(f"{f'memory {m}':>30}" for m in args.memory)
    if args.regression:
        X, y = load_diabetes(return_X_y=True)
        print(f"VI fits on diabetes at tol={args.tol:g}, max_iter=1000: iterations, median ms "
              f"of {args.repeats} alternating repeats, distance to a fit at tol=1e-10 "
              "(coefficients / covariance)\n")
        print(f"{'model':<34}" + memories)
        for name, Estimator, params in regression():
            def make(tol, Estimator=Estimator, params=params):
                return Estimator(objective="vi", tol=tol, max_iter=1000, **params)
            print(f"{name:<34}" + row(make, X, y, args), flush=True)
        return
    print(f"VI fits ({args.covariance} covariance) at tol={args.tol:g}, max_iter=1000: "
          f"iterations, median ms of {args.repeats} alternating "
          "repeats, and the distance to a fit at tol=1e-10 (coefficients / covariance);\n"
          "memory = residuals Anderson combines (0: none)\n")
    print(f"{'data':<34}{'C':>6} {'hessian':<13}" + memories)
    for name, X, y in datasets():
        for hessian in args.hessian:
            for C in args.C:
                def make(tol, C=C, hessian=hessian):
                    return VANLogisticRegression(objective="vi", C=C, hessian=hessian, tol=tol,
                                                 max_iter=1000, covariance=args.covariance)
                print(f"{name:<34}{C:>6g} {hessian:<13}" + row(make, X, y, args), flush=True)


if __name__ == "__main__":
    main()
