"""Multinomial VAN logistic regression against scikit-learn (issue 13).

1. Fit time at matched accuracy (iris, wine, digits, generated sets with 5, 6
   and 10 classes, one of them 2,000 x 500 with 5,010 parameters, and a sparse
   text-like one with 20 classes and 200,020 parameters; ``covariance="auto"``
   keeps the precision of digits and of the last two as an operator): VAN with
   its defaults against scikit-learn's
   multinomial ``LogisticRegression`` with lbfgs and newton-cholesky, each at
   the loosest tol in 1e-1, 1e-2, ... (newton-cholesky up to 10,000
   parameters) whose relative coefficient error
   ``max |W - W_ref| / max |W_ref|`` is at most 1e-4 (``W_ref``: lbfgs at tol
   1e-12). Medians of alternating repeats; the ratio is VAN's median over the
   faster scikit-learn solver's.
2. Held-out log-loss on small training sets: the predictions of the VI
   posterior averaged over ``q`` (``predict_proba``) against the plug-in ones at
   its mean and scikit-learn's (MAP), over random training subsets.
3. ``--forms`` (only this): ``covariance="full"`` against ``"operator"`` on the
   problems above of at most 4,096 parameters and two generated ones (20,000 x
   100 with six classes, 1,000 x 200 with eight), and what ``"auto"`` picks: the
   data behind its cost per iteration of each form.
4. ``--expansion`` (only this): the errors of the second-order expansion and of
   the degree-3 cubature rule, which the solver's expectations choose between by
   the trace of each row's predictor covariance ``V_i``, against a quasi-Monte
   Carlo reference (2^15 antithetic Sobol points), for 5, 10 and 20 classes and
   traces from 1e-3 to 1.

Run: python benchmarks/bench_multinomial.py [--repeats 5] [--quick] [--expansion]
     python benchmarks/bench_multinomial.py --problems 500   (the timing rows named so)
     python benchmarks/bench_multinomial.py --forms [--problems WORD]
"""

import argparse
import time
import warnings

import numpy as np
from scipy.special import softmax
from sklearn.datasets import load_digits, load_iris, load_wine, make_classification
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import log_loss
from sklearn.preprocessing import StandardScaler

from skvan import VANLogisticRegression

TARGET = 1e-4
#: newton-cholesky forms the ``K p x K p`` Hessian: beyond this many parameters
#: (800 MB) it is left out.
NC_MAX_PARAMS = 10_000


def timing_problems(quick):
    for name, load in (("iris (150 x 4, 3 classes)", load_iris),
                       ("wine (178 x 13, 3 classes)", load_wine)):
        X, y = load(return_X_y=True)
        yield name, StandardScaler().fit_transform(X), y
    X, y = load_digits(return_X_y=True)
    yield "digits (1797 x 64, 10 classes)", StandardScaler().fit_transform(X), y
    for n, p, K in ((5_000, 30, 6), (20_000, 20, 5), (10_000 if quick else 50_000, 50, 10)):
        X, y = make_classification(n, p, n_informative=3 * p // 5, n_classes=K,
                                   n_clusters_per_class=1, random_state=0)
        yield f"synthetic ({n} x {p}, {K} classes)", X, y
    # Beyond 4,096 parameters (covariance="auto" takes the operator): 40 of the 500
    # features informative, standardised.
    X, y = make_classification(2_000, 500, n_informative=40, n_redundant=0, n_classes=10,
                               n_clusters_per_class=1, random_state=0)
    yield "synthetic (2000 x 500, 10 classes)", StandardScaler().fit_transform(X), y
    yield "sparse (3000 x 10000 CSR, 20 classes)", *sparse_text(3_000, 10_000, 20)


def sparse_text(n, p, K, density=0.003, seed=0):
    """A CSR design like TF-IDF rows (exponential weights, rows of unit norm)
    and labels from class-specific words (2% of the columns per class, Gumbel
    noise: the softmax model's own)."""
    import scipy.sparse as sp

    rng = np.random.RandomState(seed)
    X = sp.random(n, p, density=density, random_state=seed + 1, format="csr",
                  data_rvs=lambda k: rng.exponential(1.0, k))
    X = sp.csr_matrix(X.multiply(1.0 / np.sqrt(X.multiply(X).sum(axis=1) + 1e-12)))
    W = 3.0 * rng.randn(K, p) * (rng.rand(K, p) < 0.02)
    return X, np.argmax(np.asarray(X @ W.T) + rng.gumbel(size=(n, K)), axis=1)


def rel_err(est, ref):
    return float(np.max(np.abs(est.coef_ - ref.coef_)) / np.max(np.abs(ref.coef_)))


def at_target(solver, X, y, C, ref):
    for tol in 10.0 ** -np.arange(1, 13):
        est = LogisticRegression(C=C, solver=solver, tol=tol, max_iter=100_000).fit(X, y)
        if rel_err(est, ref) <= TARGET:
            return tol
    return None


def timed(make, X, y):
    start = time.perf_counter()
    est = make().fit(X, y)
    return time.perf_counter() - start, est


def time_fits(repeats, quick, C=1.0, only=None):
    print(f"Fit time at matched accuracy (relative coefficient error <= {TARGET:g}), C={C}, "
          f"medians of {repeats} alternating repeats; ms (iterations) at the tol reached; "
          "ratio: VAN over the faster scikit-learn solver")
    print(f"{'problem':<36}{'VAN':>14}{'err':>9}{'lbfgs':>15}{'tol':>7}"
          f"{'newton-cholesky':>17}{'tol':>7}{'ratio':>7}")
    for name, X, y in timing_problems(quick):
        if only and not any(word in name for word in only):
            continue
        ref = LogisticRegression(C=C, tol=1e-12, max_iter=100_000).fit(X, y)
        makes = {"VAN (defaults)": lambda: VANLogisticRegression(C=C)}
        tols = {}
        for solver in ("lbfgs", "newton-cholesky"):
            if solver == "newton-cholesky" and (X.shape[1] + 1) * len(np.unique(y)) > NC_MAX_PARAMS:
                continue  # its K p x K p Hessian would not fit
            tol = at_target(solver, X, y, C, ref)
            if tol is not None:
                tols[solver] = tol
                makes[solver] = lambda s=solver, t=tol: LogisticRegression(
                    C=C, solver=s, tol=t, max_iter=100_000)
        times = {k: [] for k in makes}
        fitted = {}
        for _ in range(repeats):
            for key, make in makes.items():
                t, fitted[key] = timed(make, X, y)
                times[key].append(t)
        med = {k: float(np.median(v)) for k, v in times.items()}

        def cell(key):
            if key not in makes:
                return f"{'-':>14}"
            return f"{1e3 * med[key]:>9.1f} ({int(np.max(fitted[key].n_iter_)):>3})"

        best = min((k for k in makes if k in tols), key=med.get)
        row = f"{name:<36}{cell('VAN (defaults)')}{rel_err(fitted['VAN (defaults)'], ref):>9.1e}"
        for solver in ("lbfgs", "newton-cholesky"):
            tol = f"{tols[solver]:.0e}" if solver in tols else "-"
            row += f"{cell(solver):>{15 if solver == 'lbfgs' else 17}}{tol:>7}"
        print(row + f"{med['VAN (defaults)'] / med[best]:>7.2f}")
    print()


def form_problems():
    """The timing problems that a factorised form can fit (at most 4,096
    parameters), and two generated ones between them."""
    for name, X, y in timing_problems(False):
        if (X.shape[1] + 1) * len(np.unique(y)) <= 4_096:
            yield name, X, y
    for n, p, K, seed in ((20_000, 100, 6, 0), (1_000, 200, 8, 1)):
        X, y = make_classification(n, p, n_informative=min(p - 2, 60), n_redundant=0,
                                   n_classes=K, n_clusters_per_class=1, random_state=seed)
        yield f"synthetic ({n} x {p}, {K} classes)", StandardScaler().fit_transform(X), y


def time_forms(repeats, only=None):
    """``--forms``: VAN with ``covariance="full"`` against ``"operator"`` (medians of
    alternating repeats), and what ``"auto"`` picks: the data behind
    ``skvan.van._gram.CLASS_OPERATOR_COST``."""
    from skvan.van import auto_covariance

    print(f"covariance='full' against 'operator' (VO, C=1, medians of {repeats} alternating "
          "repeats; ms (iterations)), and 'auto''s choice")
    print(f"{'problem':<40}{'params':>8}{'full':>16}{'operator':>16}{'op / full':>11}{'auto':>10}")
    for name, X, y in form_problems():
        if only and not any(word in name for word in only):
            continue
        K = len(np.unique(y))
        times = {"full": [], "operator": []}
        fitted = {}
        for _ in range(repeats):
            for form, runs in times.items():
                t, fitted[form] = timed(lambda f=form: VANLogisticRegression(covariance=f), X, y)
                runs.append(t)
        med = {k: float(np.median(v)) for k, v in times.items()}
        n_params = (X.shape[1] + 1) * K
        auto = auto_covariance(X.shape[0], n_params, n_rows=K)
        cells = "".join(f"{1e3 * med[k]:>9.1f} ({int(fitted[k].n_iter_[0]):>3})" for k in times)
        print(f"{name:<40}{n_params:>8}{cells}{med['operator'] / med['full']:>11.2f}{auto:>10}",
              flush=True)


def small_training_sets(n_splits, sizes=(20, 40, 80)):
    print("Held-out log-loss on small training sets (mean over splits); VI posterior "
          "averaged vs plug-in at its mean vs scikit-learn (MAP), C=1\n")
    print(f"{'data':<8}{'n train':>8}{'VI averaged':>13}{'VI plug-in':>12}{'sklearn':>10}")
    for name, load in (("iris", load_iris), ("wine", load_wine), ("digits", load_digits)):
        X, y = load(return_X_y=True)
        rng = np.random.default_rng(0)
        for n in sizes:
            if n < 2 * len(np.unique(y)) or (name == "digits" and n < 40):
                continue
            scores = []
            for _ in range(n_splits):
                idx = rng.permutation(len(y))
                train, test = idx[:n], idx[n:]
                if len(np.unique(y[train])) < len(np.unique(y)):
                    continue
                scaler = StandardScaler().fit(X[train])
                Xtr, Xte = scaler.transform(X[train]), scaler.transform(X[test])
                vi = VANLogisticRegression(C=1.0, objective="vi", max_iter=300).fit(Xtr, y[train])
                plug = softmax(Xte @ vi.coef_.T + vi.intercept_, axis=1)
                sk = LogisticRegression(C=1.0, max_iter=10_000).fit(Xtr, y[train])
                labels = np.unique(y)
                scores.append([log_loss(y[test], vi.predict_proba(Xte), labels=labels),
                               log_loss(y[test], plug, labels=labels),
                               log_loss(y[test], sk.predict_proba(Xte), labels=labels)])
            m = np.mean(scores, axis=0)
            print(f"{name:<8}{n:>8}{m[0]:>13.3f}{m[1]:>12.3f}{m[2]:>10.3f}")


def expansion_errors(n=200, traces=(1e-3, 1e-2, 1e-1, 1.0)):
    from scipy.stats import norm, qmc

    from skvan.expectations._cubature import consistent_curvature, points
    from skvan.objectives._multinomial import SoftmaxLoss

    loss = SoftmaxLoss()
    rng = np.random.default_rng(0)
    print(f"Largest absolute error over {n} rows against quasi-Monte Carlo "
          "(2^15 antithetic points);")
    print("V_i = B B^T scaled to the trace, B standard normal; means N(0, 4)\n")
    print(f"{'K':>3} {'trace':>6}  {'':9} {'value':>8} {'gradient':>8} {'curvature':>9} "
          f"{'Gauss-Newton':>12}")
    for K in (3, 4, 5, 10, 20):
        M = rng.normal(0, 2, (n, K))
        Y = np.eye(K)[rng.integers(0, K, n)]
        B = rng.normal(size=(n, K, K))
        V0 = B @ np.swapaxes(B, 1, 2)
        V0 /= np.einsum("ikk->i", V0)[:, None, None]
        Z = norm.ppf(qmc.Sobol(K, scramble=True, seed=1).random(1 << 14))
        Z = np.vstack([Z, -Z])
        wz = np.full(len(Z), 1.0 / len(Z))
        for trace in traces:
            V = V0 * trace
            R = np.linalg.cholesky(V)
            reference = {need: [np.zeros(n), np.zeros((n, K)), np.zeros((n, K, K))]
                         for need in ("exact", "gauss_newton")}
            for start in range(0, n, 20):
                rows = slice(start, start + 20)
                A = M[rows, None, :] + Z @ np.swapaxes(R[rows], 1, 2)
                for need, parts in reference.items():
                    for part, value in zip(parts, loss.weighted_derivatives(Y[rows, None, :], A, wz,
                                                                            need)):
                        part[rows] = value
            A, w, roots = points(M, V)
            rule = {}
            for need in ("exact", "gauss_newton"):
                e0, e1, C, G = loss.weighted_derivatives(Y[:, None, :], A, w, need)
                curvature = consistent_curvature(G, C, w, roots) if need == "exact" else C
                rule[need] = (e0, e1, curvature)
            expansion = {need: loss.expansion(Y, M, V, need) for need in ("exact", "gauss_newton")}
            for name, got in (("expansion", expansion), ("rule", rule)):
                e = [np.abs(a - b).max() for a, b in zip(got["exact"], reference["exact"])]
                e.append(np.abs(got["gauss_newton"][2] - reference["gauss_newton"][2]).max())
                print(f"{K:>3} {trace:>6.0e}  {name:9} {e[0]:>8.1e} {e[1]:>8.1e} {e[2]:>9.1e} "
                      f"{e[3]:>12.1e}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--splits", type=int, default=10)
    parser.add_argument("--quick", action="store_true", help="10,000 synthetic rows, 3 splits")
    parser.add_argument("--problems", nargs="*", default=None, metavar="WORD",
                        help="only the timing problems whose names contain one of these words")
    parser.add_argument("--forms", action="store_true",
                        help="only covariance='full' against 'operator' and auto's choice")
    parser.add_argument("--expansion", action="store_true",
                        help="only the expansion's and the rule's errors against quasi-Monte Carlo")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    if args.expansion:
        expansion_errors()
        return
    if args.forms:
        time_forms(args.repeats, only=args.problems)
        return
    time_fits(args.repeats, args.quick, only=args.problems)
    if args.problems is not None:
        return
    small_training_sets(3 if args.quick else args.splits)


if __name__ == "__main__":
    main()
