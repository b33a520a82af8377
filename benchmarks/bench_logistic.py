"""Fit time of VANLogisticRegression relative to scikit-learn's fastest solver.

Issue 14's measure: at the same C and matched accuracy (relative coefficient error
at most 1e-4 against newton-cholesky at tol=1e-12), the median over repeats of
time(VAN, default settings) / time(the faster of LogisticRegression's
"newton-cholesky" and "lbfgs"). Each scikit-learn solver runs at the loosest tol
in 1e-1, 1e-2, ... that reaches the accuracy (a solver that never does is left
out); VAN runs with its defaults (whose error is printed too), and again at the
loosest tol of the same list reaching the accuracy ("matched": each solver as
accurate as the target asks, none more; VAN's default tol ends 10-100 times
closer than the target). The fits alternate
within each repeat, so the ratio is measured under the same machine load, and
each timed fit follows an untimed fit of the same estimator: a BLAS thread pool
keeps spinning for about 0.1 s after threaded work, and whatever runs next pays
for it (right after an lbfgs fit, newton-cholesky and VAN took 1.6-2x their
time on 20,000 x 100: ``--cold``, the protocol before 2026-11-27, where VAN
always ran right after lbfgs). The untimed fits last at least
``--warm-seconds`` (0.2 s; 0: one fit, the protocol of 2026-11-27): one fit of
a few ms ends inside the other library's spinning, and the first fits of a
fresh process run slower while Python specialises their code
(:func:`untimed_fits`).

Datasets: every classification set that ships with scikit-learn, as binary
problems (standardised, and breast_cancer also raw), and generated ones of
1e5 and 1e6 rows (--quick: 2e4 and 1e5).

Run: python benchmarks/bench_logistic.py [--quick] [--repeats 7] [--only NAME] [--cold]
                                         [--warm-seconds 0.2]
"""

import argparse
import time
import warnings

import numpy as np
from sklearn.datasets import (
    load_breast_cancer,
    load_digits,
    load_iris,
    load_wine,
    make_classification,
)
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import StandardScaler

from skvan import VANLogisticRegression

TARGET = 1e-4
SOLVERS = ("newton-cholesky", "lbfgs")


def datasets(quick):
    scale = StandardScaler().fit_transform
    X, y = load_breast_cancer(return_X_y=True)
    yield "breast_cancer (569 x 30)", scale(X), y
    yield "breast_cancer raw (569 x 30)", X, y
    X, y = load_digits(return_X_y=True)
    yield "digits 0-4 vs 5-9 (1797 x 64)", scale(X), (y >= 5).astype(int)
    X, y = load_iris(return_X_y=True)
    yield "iris virginica (150 x 4)", scale(X), (y == 2).astype(int)
    X, y = load_wine(return_X_y=True)
    yield "wine class 1 (178 x 13)", scale(X), (y == 1).astype(int)
    for n, p in ((20_000, 100), (100_000, 20)) if quick else ((100_000, 100), (1_000_000, 20)):
        X, y = make_classification(n, p, n_informative=p // 3, random_state=0)
        yield f"synthetic ({n} x {p})", X, y


def rel_err(est, ref):
    a = np.r_[est.coef_.ravel(), est.intercept_]
    b = np.r_[ref.coef_.ravel(), ref.intercept_]
    return np.abs(a - b).max() / np.abs(ref.coef_).max()


def at_target(make, X, y, ref):
    """The fit of ``make(tol)`` at the loosest tol in 1e-1, 1e-2, ... reaching
    TARGET, or None."""
    for tol in 10.0 ** -np.arange(1, 13):
        est = make(tol)
        if rel_err(est.fit(X, y), ref) <= TARGET:
            return est
    return None


def sklearn_at_target(X, y, C, ref, solver):
    """The fit of ``solver`` at the loosest tol reaching TARGET, or None."""
    return at_target(lambda tol: LogisticRegression(C=C, solver=solver, tol=tol, max_iter=10_000),
                     X, y, ref)


#: Seconds of untimed fits of an estimator before each timed fit of it (``--warm-seconds``).
WARM_SECONDS = 0.2


def untimed_fits(est, X, y, seconds):
    """Fit ``est`` untimed: once, then again until ``seconds`` have passed.

    One fit is not always enough for the timed one to follow its own kind: the
    other library's threads (scikit-learn's OpenMP and scipy's OpenBLAS; numpy's
    OpenBLAS for skvan) keep spinning after threaded work, and a fresh process's
    first fits of a small problem run slower while Python specialises the code
    they run. ``python benchmarks/bench_lasso.py --speed --quick --warm-seconds
    0`` against the default (RESULTS.md): VAN's 20,000 x 200 fits took 31-32 ms
    after one untimed fit and 18.5-19 after 0.2 s of them, Lasso's 15-20 and
    14-15; diabetes' first row read 2.12 and 1.92."""
    stop = time.perf_counter() + seconds
    est.fit(X, y)
    while time.perf_counter() < stop:
        est.fit(X, y)


def timed_fit(est, X, y, warm_seconds=WARM_SECONDS):
    """Seconds of ``est.fit(X, y)``, after untimed fits of ``est`` for at least
    ``warm_seconds`` (:func:`untimed_fits`; None: none): the timed fit then
    follows its own kind, not another solver's spinning BLAS threads."""
    if warm_seconds is not None:
        untimed_fits(est, X, y, warm_seconds)
    start = time.perf_counter()
    est.fit(X, y)
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller generated sets")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--only", default=None, help="run the datasets whose name contains this")
    parser.add_argument("--cold", action="store_true",
                        help="no untimed fit of the same estimator before each timed one")
    parser.add_argument("--warm-seconds", type=float, default=WARM_SECONDS,
                        help="untimed fits of an estimator before each timed one last at "
                             "least this long (0: one fit)")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    C = 1.0
    warm = None if args.cold else args.warm_seconds
    print(f"C={C}, matched accuracy: relative coefficient error <= {TARGET:g}; "
          f"median of {args.repeats} alternating repeats"
          f"{'' if args.cold else f', each timed fit after {args.warm_seconds:g} s of its own'}"
          "; nc = newton-cholesky\n")
    print(f"{'dataset':<32}{'nc tol':>8}{'nc ms':>9}{'lbfgs tol':>10}{'lbfgs ms':>9}"
          f"{'VAN ms':>9}{'iter':>5}{'VAN err':>9}{'ratio':>7}"
          f"{'VAN tol':>9}{'ms':>7}{'iter':>5}{'matched':>8}")
    for name, X, y in datasets(args.quick):
        if args.only and args.only not in name:
            continue
        ref = LogisticRegression(C=C, solver="newton-cholesky", tol=1e-12, max_iter=1000).fit(X, y)
        peers = {s: sklearn_at_target(X, y, C, ref, s) for s in SOLVERS}
        van = VANLogisticRegression(C=C)
        matched = at_target(lambda tol: VANLogisticRegression(C=C, tol=tol), X, y, ref)
        times = {s: [] for s in SOLVERS if peers[s] is not None}
        t_van, t_matched = [], []
        for _ in range(args.repeats):
            for s in times:
                times[s].append(timed_fit(peers[s], X, y, warm))
            t_van.append(timed_fit(van, X, y, warm))
            t_matched.append(timed_fit(matched, X, y, warm))
        best = np.min([times[s] for s in times], axis=0)
        ratio = np.median(np.array(t_van) / best)
        ratio_matched = np.median(np.array(t_matched) / best)
        cells = ""
        for s in SOLVERS:
            if s in times:
                cells += f"{peers[s].tol:>{8 if s == SOLVERS[0] else 10}.0e}{1e3 * np.median(times[s]):>9.1f}"
            else:
                cells += f"{'-':>{8 if s == SOLVERS[0] else 10}}{'-':>9}"
        print(f"{name:<32}{cells}{1e3 * np.median(t_van):>9.1f}{van.n_iter_[0]:>5d}"
              f"{rel_err(van, ref):>9.1e}{ratio:>7.2f}{matched.tol:>9.0e}"
              f"{1e3 * np.median(t_matched):>7.1f}{matched.n_iter_[0]:>5d}{ratio_matched:>8.2f}",
              flush=True)


if __name__ == "__main__":
    main()
