"""VANLogisticRegression on many generated problems, against scikit-learn.

Each problem draws ``n`` in {10, 40, 200, 1000} rows, ``p`` in {1, 3, 10, 50}
standard normal features and 2 (twice as likely), 3 or 5 classes; then, at
random, feature scales ``e^U(-4, 4)``, a duplicated column, a constant column
and sample weights ``U(0, 3)``; labels drawn from a softmax of weights of sd
0.3, 3 or 30 (from nearly random to nearly separable); ``C`` in {0.01, 1, 100,
1e4}. Everything is seeded, so the counts do not depend on the machine.

A fit is **bad** when its objective (scikit-learn's: the weighted log-loss plus
``||W||^2 / (2C)``) exceeds that of ``LogisticRegression(tol=1e-12)`` by more
than 1e-6 relative (1e-4 with ``--covariance diag``, whose linear convergence
stops farther away), or is not finite, without a warning; fits that warn are
counted apart (with the default full covariance none does). Fits whose
coefficients differ from scikit-learn's by more than 1e-3 of the largest while
their objective is not higher are counted apart: a flat direction (a constant
column with a large ``C``) or scikit-learn's own inaccuracy.

``--stream``: the binary problems instead, each streamed through ``partial_fit``
in 10 batches (one pass, rows in a seeded order) twice: solving each batch's
Bayes update (the default) and making its first step only (the update before
2026-11-27). Both are compared with the stream's own full-data posterior, one
``partial_fit`` call on all rows solved to ``tol=1e-10``: the largest difference
of the means over that one's largest coefficient. Counted: solved streams that
warn, raise or end not finite, references that warn (their streams are left out
of the distances), and streams where the solved one ends farther from the
posterior than the one-step one.

Usage: ``python benchmarks/fuzz_logistic.py [--problems 500] [--seed 6]
[--covariance diag] [--stream]``.
"""

import argparse
import time

import numpy as np
from bench_stochastic import _OneStepStream
from fuzz_sparse import degrade, fit_warnings
from scipy.special import logsumexp
from sklearn.linear_model import LogisticRegression

from skvan import VANLogisticRegression


def problems(count, seed):
    """``(index, X, y, sample_weight, C, features)``, skipping draws of one class."""
    rng = np.random.default_rng(seed)
    for index in range(count):
        n = int(rng.choice([10, 40, 200, 1000]))
        p = int(rng.choice([1, 3, 10, 50]))
        K = int(rng.choice([2, 2, 3, 5]))
        X, features = degrade(rng.standard_normal((n, p)), rng, constant=0.15, duplicate_from=2)
        logits = X @ (rng.standard_normal((K, p)) * rng.choice([0.3, 3, 30])).T
        probabilities = np.exp(logits - logsumexp(logits, axis=1, keepdims=True))
        y = np.array([rng.choice(K, p=row) for row in probabilities])
        if len(np.unique(y)) < 2:
            continue
        weights = np.ones(n)
        if rng.random() < 0.3:
            weights = rng.uniform(0, 3, n)
            features.append("weights")
        C = float(rng.choice([0.01, 1.0, 100.0, 1e4]))
        yield index, X, y, weights, C, features


def objective(X, y, weights, C, classes):
    def value(est):
        W, b = np.atleast_2d(est.coef_), np.atleast_1d(est.intercept_)
        if len(classes) == 2:
            sign = np.where(y == classes[1], 1.0, -1.0)
            loss = np.logaddexp(0.0, -sign * (X @ W[0] + b[0]))
        else:
            A = X @ W.T + b
            loss = logsumexp(A, axis=1) - A[np.arange(len(y)), np.searchsorted(classes, y)]
        return float(weights @ loss + 0.5 * np.sum(W**2) / C)
    return value


def parameters(est, multinomial):
    """``[coef, intercept]`` flat; a multinomial model's intercepts centred (the
    softmax's free constant)."""
    b = np.ravel(est.intercept_)
    return np.r_[np.ravel(est.coef_), b - b.mean() if multinomial else b]


def streams(count, seed):
    """The ``--stream`` run (module docstring)."""
    counts = dict(streams=0, warned=0, reference_warned=0, raised=0, not_finite=0, farther=0)
    distances = []
    for index, X, y, weights, C, features in problems(count, seed):
        classes = np.unique(y)
        if len(classes) != 2:
            continue
        counts["streams"] += 1
        order = np.random.default_rng(index).permutation(len(y))
        head = (f"  problem {index:3d} {X.shape[0]:5d} x {X.shape[1]:2d} C={C:<6g} "
                f"{','.join(features) or '-':30s}")
        try:
            posterior, noted = fit_warnings(
                lambda: VANLogisticRegression(C=C, tol=1e-10, max_iter=1000).partial_fit(
                    X, y, classes=classes, sample_weight=weights))
            ends, messages = [], []
            for make in (VANLogisticRegression, _OneStepStream):
                def one_pass():
                    est = make(C=C)
                    for rows in np.array_split(order, 10):
                        est.partial_fit(X[rows], y[rows], classes=classes,
                                        sample_weight=weights[rows])
                    return est
                est, more = fit_warnings(one_pass)
                messages.append(more)
                ends.append(parameters(est, False))
        except ValueError as exc:
            counts["raised"] += 1
            print(f"{head} raised: {str(exc)[:80]}")
            continue
        best = parameters(posterior, False)
        scale = max(np.max(np.abs(best)), 1e-300)
        solved, one = (np.max(np.abs(end - best)) / scale for end in ends)
        line = f"{head} solved {solved:.1e} one step {one:.1e} {messages[0][:1] or noted[:1]}"
        if noted:
            counts["reference_warned"] += 1
        if messages[0]:
            counts["warned"] += 1
            print(line)
        elif not (np.isfinite(solved) and np.isfinite(one)):
            counts["not_finite"] += 1
            print(line)
        elif not noted:
            distances.append((solved, one))
            if solved > one:
                counts["farther"] += 1
                print(line)
    solved, one = np.array(distances).T
    print(f"\n{counts}")
    print(f"distance to the posterior, median (90th percentile) over the {len(distances)} "
          f"streams without a warning (theirs or the reference's): solved {np.median(solved):.1e} "
          f"({np.quantile(solved, 0.9):.1e}), one step {np.median(one):.1e} "
          f"({np.quantile(one, 0.9):.1e})")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", type=int, default=500)
    parser.add_argument("--seed", type=int, default=6)
    parser.add_argument("--covariance", default="auto")
    parser.add_argument("--stream", action="store_true", help="one-pass partial_fit streams")
    args = parser.parse_args()
    start = time.perf_counter()
    if args.stream:
        streams(args.problems, args.seed)
        print(f"({time.perf_counter() - start:.0f} s)")
        return
    bad = fits = apart = warned = 0
    limit = 1e-4 if args.covariance == "diag" else 1e-6
    print(f"bad fits (objective above scikit-learn's by > {limit:g} relative, or not finite, "
          "without a warning):")
    for index, X, y, weights, C, features in problems(args.problems, args.seed):
        van, messages = fit_warnings(
            lambda: VANLogisticRegression(C=C, covariance=args.covariance).fit(
                X, y, sample_weight=weights))
        ref = LogisticRegression(C=C, tol=1e-12, max_iter=100_000).fit(X, y, sample_weight=weights)
        value = objective(X, y, weights, C, ref.classes_)
        gap = (value(van) - value(ref)) / abs(value(ref))
        multinomial = len(ref.classes_) > 2
        theta, best = parameters(van, multinomial), parameters(ref, multinomial)
        error = np.max(np.abs(theta - best)) / max(np.max(np.abs(best)), 1e-300)
        fits += 1
        line = (f"  problem {index:3d} {X.shape[0]:5d} x {X.shape[1]:2d}, "
                f"{len(ref.classes_)} classes, C={C:g} {','.join(features) or '-':30s} "
                f"gap {gap:8.1e} error {error:.1e} {messages[:1]}")
        if messages:
            warned += 1
        elif gap > limit or not np.isfinite(gap):
            bad += 1
            print(line)
        elif error > 1e-3:
            apart += 1
    print(f"\nbad: {bad} of {fits}; warned: {warned}; coefficients > 1e-3 apart at an "
          f"objective no higher, without a warning: {apart}")
    print(f"({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
