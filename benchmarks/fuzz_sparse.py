"""The sparse-regression estimators on many generated problems, against scikit-learn.

Each problem draws ``n`` in {5, 20, 60, 200, 1000} rows and ``p`` in {2, 5, 30,
100, 300} features with neighbouring columns correlated (``rho`` up to 0.95);
then, at random, feature scales ``e^U(-4, 4)``, a duplicated column and a
constant column; ``p / 5`` true coefficients, noise of sd 0.01, 1 or 10, and an
offset of 5; ``alpha`` a fraction (0.5, 0.1, 0.01 or 0.001) of ``alpha_max``.
Everything is seeded, so the counts do not depend on the machine.

A fit is **bad** when its objective exceeds scikit-learn's (at ``tol=1e-14``)
by more than 1e-7 relative, or when it warns (scikit-learn's own "did not
converge" aside), or when ``positive=True`` gives a negative coefficient:

1. ``VANLassoRegressor`` on every problem;
2. ``VANElasticNet(l1_ratio=0.5)`` and ``VANLassoRegressor(positive=True)`` on
   every second one;
3. ``van_lasso_path`` (20 alphas, centred data) against ``lasso_path`` on
   every fifth, the worst relative objective gap over the path.

Usage: ``python benchmarks/fuzz_sparse.py [--problems 300]``; each bad fit is
printed with its problem's number, shape and features.
"""

import argparse
import time
import warnings

import numpy as np
from sklearn.linear_model import ElasticNet, Lasso, lasso_path

from skvan import VANElasticNet, VANLassoRegressor, van_lasso_path

REFERENCE = {"tol": 1e-14, "max_iter": 1_000_000}


def degrade(X, rng, constant, duplicate_from):
    """``X`` (changed in place) with, at random, feature scales ``e^U(-4, 4)``
    (probability 0.3), its second column a copy of the first (0.15, if it has
    ``duplicate_from`` columns or more) and its last column constant (probability
    ``constant``); and the names of what was done."""
    features = []
    p = X.shape[1]
    if rng.random() < 0.3:
        X *= np.exp(rng.uniform(-4, 4, p))
        features.append("scaled")
    if rng.random() < 0.15 and p >= duplicate_from:
        X[:, 1] = X[:, 0]
        features.append("duplicated")
    if rng.random() < constant:
        X[:, -1] = 3.0
        features.append("constant")
    return X, features


def problems(count, seed=123):
    """``(index, X, y, alpha, features)`` for ``count`` generated problems."""
    rng = np.random.default_rng(seed)
    for index in range(count):
        n = int(rng.choice([5, 20, 60, 200, 1000]))
        p = int(rng.choice([2, 5, 30, 100, 300]))
        rho = rng.uniform(0, 0.95)
        Z = rng.standard_normal((n, p))
        X = Z.copy()
        X[:, 1:] = np.sqrt(1 - rho**2) * Z[:, 1:] + rho * Z[:, :-1]
        X, features = degrade(X, rng, constant=0.1, duplicate_from=3)
        w = np.zeros(p)
        k = max(1, p // 5)
        w[rng.choice(p, k, replace=False)] = rng.standard_normal(k) * 3
        y = X @ w + rng.standard_normal(n) * rng.choice([0.01, 1, 10]) + 5
        alpha_max = np.max(np.abs((X - X.mean(0)).T @ (y - y.mean()))) / n
        yield index, X, y, alpha_max * float(rng.choice([0.5, 0.1, 0.01, 0.001])), features


def objective(X, y, alpha, l1_ratio=1.0):
    def value(coef, intercept):
        residual = y - X @ coef - intercept
        return (0.5 * np.mean(residual**2) + alpha * l1_ratio * np.abs(coef).sum()
                + 0.5 * alpha * (1 - l1_ratio) * coef @ coef)
    return value


def fit_warnings(fit):
    """``fit()``'s result and the messages of the warnings it raised, scikit-learn's
    coordinate descent's own aside."""
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        result = fit()
    return result, [str(w.message)[:80] for w in record
                    if "Objective did not converge" not in str(w.message)
                    and "n_alphas" not in str(w.message)]


def report(label, index, X, features, gap, messages, extra=""):
    print(f"  {label:10s} problem {index:3d} {X.shape[0]:5d} x {X.shape[1]:3d} "
          f"{','.join(features) or '-':22s} gap {gap:8.1e} {extra}{messages[:1]}")


def single_fits(count):
    bad = {"lasso": 0, "enet": 0, "positive": 0}
    fits = {"lasso": 0, "enet": 0, "positive": 0}
    for index, X, y, alpha, features in problems(count):
        kinds = ["lasso"] + (["enet", "positive"] if index % 2 == 0 else [])
        for kind in kinds:
            if kind == "enet":
                van = VANElasticNet(alpha=alpha, l1_ratio=0.5)
                ref = ElasticNet(alpha=alpha, l1_ratio=0.5, **REFERENCE)
                value = objective(X, y, alpha, 0.5)
            else:
                positive = kind == "positive"
                van = VANLassoRegressor(alpha=alpha, positive=positive)
                ref = Lasso(alpha=alpha, positive=positive, **REFERENCE)
                value = objective(X, y, alpha)
            van, messages = fit_warnings(lambda: van.fit(X, y))
            ref = fit_warnings(lambda: ref.fit(X, y))[0]
            best = value(ref.coef_, ref.intercept_)
            gap = (value(van.coef_, van.intercept_) - best) / abs(best)
            negative = kind == "positive" and bool(np.any(van.coef_ < 0))
            fits[kind] += 1
            if gap > 1e-7 or messages or negative:
                bad[kind] += 1
                report(kind, index, X, features, gap, messages, "negative " if negative else "")
    return bad, fits


def paths(count):
    bad = fits = 0
    worst = 0.0
    for index, X, y, _, features in problems(count):
        if index % 5:
            continue
        A, b = X - X.mean(0), y - y.mean()
        (alphas, coefs, _), messages = fit_warnings(lambda: van_lasso_path(A, b, n_alphas=20))
        ref = fit_warnings(lambda: lasso_path(A, b, alphas=alphas, **REFERENCE))[0][1]
        gap = 0.0
        for i, alpha in enumerate(alphas):
            value = objective(A, b, alpha)
            best = value(ref[:, i], 0.0)
            gap = max(gap, (value(coefs[:, i], 0.0) - best) / abs(best))
        fits += 1
        worst = max(worst, gap)
        if gap > 1e-7 or messages:
            bad += 1
            report("path", index, X, features, gap, messages)
    return bad, fits, worst


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", type=int, default=300)
    args = parser.parse_args()
    start = time.perf_counter()
    print("bad fits (objective above scikit-learn's by > 1e-7 relative, a warning, or a "
          "negative coefficient under positive=True):")
    bad, fits = single_fits(args.problems)
    path_bad, path_fits, worst = paths(args.problems)
    print()
    for kind in bad:
        print(f"{kind:>10s}: {bad[kind]} of {fits[kind]}")
    print(f"{'path':>10s}: {path_bad} of {path_fits} (worst gap over a path {worst:.1e})")
    print(f"({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
