"""Wide and sparse data: VAN against scikit-learn at matched accuracy (issue 11).

For each problem: a reference fit of scikit-learn at a tight tolerance; each
scikit-learn solver at the loosest tol in 1e-1, 1e-2, ... whose relative
coefficient error ``max |w - w_ref| / max |w_ref|`` is at most 1e-3; VAN with its
defaults (``covariance="auto"``), whose error is printed. Times are medians of
alternating repeats (the fits take turns within each repeat, so they share the
machine's load); the ratio is VAN's median over the faster scikit-learn one's,
and beside it the ratio of their minima (steadier for fits of a few ms).
Peak memory is what ``tracemalloc`` saw allocated during one fit (numpy reports
its arrays to it), the data excluded.

Problems (generated here, nothing downloaded):
- Lasso, 100 x 400, 200 x 2,000 and 500 x 10,000: AR(1)-correlated features
  (rho 0.5), 20 nonzero coefficients, unit noise, alpha 0.1; against ``Lasso``.
- Elastic net, 100 x 400 of the same kind, alpha 0.1, l1_ratio 0.5; against
  ``ElasticNet``.
- Lasso and elastic net where the support nears or passes the number of rows:
  scikit-learn's ``make_regression`` (Gaussian features, unit noise) 100 x 400
  with 40 informative features, Lasso at alpha 0.1 (98 nonzero coefficients);
  300 x 1,000 with 150 informative features (noise 5), elastic net at alpha
  18 (a tenth of the Lasso's ``alpha_max``), l1_ratio 0.5 (about 770 nonzero);
  200 x 2,000 with 300 informative features (noise 5), alpha 5, l1_ratio 0.5
  (about 1,760 nonzero).
- Logistic, 100 x 400, 300 x 500 and 2,000 x 5,000 dense: Gaussian features,
  C=1; against lbfgs.
- Logistic, 20,000 x 50,000 CSR: word counts with Zipf frequencies (about 100
  words per document), TF-IDF weighted, labels from 200 informative words, C=1;
  against lbfgs and liblinear.

``--vi`` (only this): iterations and seconds of ``objective="vi"`` logistic fits on
generated wide designs (standard normal, 10-20 nonzero coefficients, logistic
noise) and two bundled sets, for ``C`` in 1 and 0.01 and both curvatures.

Run: python benchmarks/bench_wide.py [--repeats 5] [--problems NAME ...] [--lasso-growth G]
     [--enter F]
     python benchmarks/bench_wide.py --vi [--vi-tol 1e-4]
"""

import argparse
import time
import tracemalloc
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.datasets import make_regression
from sklearn.feature_extraction.text import TfidfTransformer
from sklearn.linear_model import ElasticNet, Lasso, LogisticRegression

from bench_lasso import engine_options
from skvan import VANElasticNet, VANLassoRegressor, VANLogisticRegression

TARGET = 1e-3


def correlated_regression(n, p, k=20, rho=0.5, seed=0):
    rng = np.random.default_rng(seed)
    Z = rng.standard_normal((n, p))
    X = Z.copy()
    X[:, 1:] = np.sqrt(1 - rho**2) * Z[:, 1:] + rho * Z[:, :-1]
    w = np.zeros(p)
    idx = rng.choice(p, k, replace=False)
    w[idx] = rng.choice([-1, 1], k) * rng.uniform(0.5, 2, k)
    return X, X @ w + rng.standard_normal(n)


def dense_classification(n, p, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    w = rng.standard_normal(p) / np.sqrt(p) * 3
    return X, (X @ w + rng.standard_normal(n) > 0).astype(int)


def text_classification(n, p, words_per_doc=100, seed=0, zipf=1.1):
    """Zipf-distributed word counts, TF-IDF weighted, as a CSR matrix."""
    rng = np.random.default_rng(seed)
    prob = np.arange(1, p + 1) ** -zipf
    prob /= prob.sum()
    lengths = rng.poisson(words_per_doc, n) + 1
    rows = np.repeat(np.arange(n), lengths)
    cols = rng.choice(p, size=lengths.sum(), p=prob)
    counts = sp.csr_matrix((np.ones(cols.size), (rows, cols)), shape=(n, p))
    counts.sum_duplicates()
    X = TfidfTransformer().fit_transform(counts).tocsr()
    w = np.zeros(p)
    w[rng.choice(2000, 200, replace=False)] = 5 * rng.standard_normal(200)
    score = X @ w
    return X, (score + 0.3 * rng.standard_normal(n) > np.median(score)).astype(int)


def problems():
    X, y = correlated_regression(100, 400)
    yield "lasso 100 x 400", X, y, "lasso", {"alpha": 0.1}
    yield "elastic net 100 x 400", X, y, "enet", {"alpha": 0.1, "l1_ratio": 0.5}
    X, y = make_regression(100, 400, n_informative=40, noise=1.0, random_state=0)
    yield "lasso 100 x 400, support near n", X, y, "lasso", {"alpha": 0.1}
    X, y = make_regression(300, 1_000, n_informative=150, noise=5.0, random_state=1)
    yield "elastic net 300 x 1,000, support beyond n", X, y, "enet", {"alpha": 18.0, "l1_ratio": 0.5}
    X, y = make_regression(200, 2_000, n_informative=300, noise=5.0, random_state=2)
    yield "elastic net 200 x 2,000, support beyond n", X, y, "enet", {"alpha": 5.0, "l1_ratio": 0.5}
    X, y = dense_classification(100, 400)
    yield "logistic 100 x 400 dense", X, y, "logistic", {"C": 1.0}
    X, y = dense_classification(300, 500)
    yield "logistic 300 x 500 dense", X, y, "logistic", {"C": 1.0}
    X, y = correlated_regression(200, 2_000)
    yield "lasso 200 x 2,000", X, y, "lasso", {"alpha": 0.1}
    X, y = correlated_regression(500, 10_000)
    yield "lasso 500 x 10,000", X, y, "lasso", {"alpha": 0.1}
    X, y = dense_classification(2_000, 5_000)
    yield "logistic 2,000 x 5,000 dense", X, y, "logistic", {"C": 1.0}
    X, y = text_classification(20_000, 50_000)
    yield f"logistic 20,000 x 50,000 CSR ({X.nnz:,} nonzeros)", X, y, "logistic", {"C": 1.0}


def sklearn_factories(kind, params):
    if kind == "lasso":
        return {"Lasso": lambda tol: Lasso(alpha=params["alpha"], tol=tol, max_iter=1_000_000)}
    if kind == "enet":
        return {"ElasticNet": lambda tol: ElasticNet(**params, tol=tol, max_iter=1_000_000)}
    solvers = {"lbfgs": "lbfgs"}
    return {name: (lambda tol, s=solver: LogisticRegression(C=params["C"], solver=s, tol=tol,
                                                           max_iter=100_000))
            for name, solver in {**solvers, "liblinear": "liblinear"}.items()}


def rel_err(est, ref):
    return float(np.max(np.abs(est.coef_ - ref.coef_)) / np.max(np.abs(ref.coef_)))


def loosest_tol(factory, X, y, ref):
    for tol in 10.0 ** -np.arange(1, 13):
        est = factory(tol).fit(X, y)
        if rel_err(est, ref) <= TARGET:
            return tol, est
    return None, est


def timed(make, X, y):
    start = time.perf_counter()
    est = make().fit(X, y)
    return time.perf_counter() - start, est


def peak_memory(make, X, y):
    tracemalloc.start()
    make().fit(X, y)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak


def run(name, X, y, kind, params, repeats, only_lbfgs):
    van_class = {"lasso": VANLassoRegressor, "enet": VANElasticNet}.get(kind, VANLogisticRegression)

    def van_make():
        return van_class(**params)

    factories = sklearn_factories(kind, params)
    if kind == "logistic" and (only_lbfgs or not sp.issparse(X)):
        factories.pop("liblinear")
    ref = next(iter(factories.values()))(1e-12).fit(X, y)
    peers = {}
    for peer, factory in factories.items():
        tol, est = loosest_tol(factory, X, y, ref)
        if tol is not None:
            peers[peer] = (tol, factory, rel_err(est, ref))
    times = {k: [] for k in ["VAN", *peers]}
    van = None
    for _ in range(repeats):
        t, van = timed(van_make, X, y)
        times["VAN"].append(t)
        for peer, (tol, factory, _) in peers.items():
            times[peer].append(timed(lambda f=factory, s=tol: f(s), X, y)[0])
    med = {k: float(np.median(v)) for k, v in times.items()}
    spread = {k: (min(v), max(v)) for k, v in times.items()}
    best = min(peers, key=med.get)
    print(name)
    for peer, (tol, _, err) in peers.items():
        lo, hi = spread[peer]
        print(f"  {peer:<10} tol={tol:.0e} err={err:.1e} {1e3 * med[peer]:9.1f} ms "
              f"(min {1e3 * lo:.1f}, max {1e3 * hi:.1f})")
    lo, hi = spread["VAN"]
    print(f"  {'VAN':<10} {van.covariance_:<9} err={rel_err(van, ref):.1e} "
          f"{1e3 * med['VAN']:9.1f} ms (min {1e3 * lo:.1f}, max {1e3 * hi:.1f}), "
          f"{int(np.sum(van.n_iter_))} iterations"
          + (f", {van.n_corrections_} KKT corrections" if kind != "logistic" else "")
          + f"; ratio VAN / {best}: {med['VAN'] / med[best]:.2f} (of the minima "
          f"{lo / spread[best][0]:.2f})")
    data = X.data.nbytes + X.indices.nbytes + X.indptr.nbytes if sp.issparse(X) else X.nbytes
    if data >= 2**20:  # (the small problems' peaks are a few MiB at most: not shown)
        van_peak = peak_memory(van_make, X, y)
        peer_peak = peak_memory(lambda: peers[best][1](peers[best][0]), X, y)
        print(f"  peak memory during fit: VAN {van_peak / 2**20:.0f} MiB, {best} "
              f"{peer_peak / 2**20:.0f} MiB (the data: {data / 2**20:.0f} MiB)")


def vi_iterations(tol=1e-4):
    """How many iterations VI takes on wide designs (user guide, "Wide and sparse
    data"), against a narrow one and two bundled sets."""
    from sklearn.datasets import load_breast_cancer, load_digits
    from sklearn.preprocessing import StandardScaler

    def generated(n, p, k):
        rng = np.random.default_rng(0)
        X = rng.standard_normal((n, p))
        w = np.zeros(p)
        w[:k] = rng.normal(0, 1, k)
        return X, (X @ w + rng.logistic(size=n) > 0).astype(int)

    X, y = load_breast_cancer(return_X_y=True)
    sets = [("breast_cancer", StandardScaler().fit_transform(X), y)]
    X, y = load_digits(return_X_y=True)
    sets.append(("digits 0-4 vs 5-9", StandardScaler().fit_transform(X), (y >= 5).astype(int)))
    for n, p, k in ((500, 100, 10), (200, 1_000, 10), (300, 3_000, 20)):
        sets.append((f"generated {n} x {p}", *generated(n, p, k)))
    print(f"VI logistic regression: iterations (seconds), tol={tol:g}, max_iter=300\n")
    configs = [(1.0, "exact"), (0.01, "exact"), (1.0, "gauss_newton")]
    print(f"{'data':<24}" + "".join(f"{f'C={C:g} {h}':>22}" for C, h in configs))
    for name, X, y in sets:
        cells = []
        for C, hessian in configs:
            start = time.perf_counter()
            est = VANLogisticRegression(objective="vi", C=C, hessian=hessian, max_iter=300,
                                        tol=tol)
            est.fit(X, y)
            cells.append(f"{est.n_iter_[0]} ({time.perf_counter() - start:.2f} s)")
        print(f"{name:<24}" + "".join(f"{c:>22}" for c in cells))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--problems", nargs="*", help="substrings of the problem names")
    parser.add_argument("--only-lbfgs", action="store_true")
    parser.add_argument("--lasso-growth", type=float, default=None,
                        help="beta_growth of VANLassoRegressor (default: its 'auto')")
    parser.add_argument("--enter", type=float, default=None,
                        help="the Lasso engine's working_set_enter (default: the library's)")
    parser.add_argument("--vi", action="store_true", help="only VI's iterations on wide designs")
    parser.add_argument("--vi-tol", type=float, default=1e-4, help="tol of those VI fits")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    if args.vi:
        vi_iterations(args.vi_tol)
        return
    options = {} if args.enter is None else {"working_set_enter": args.enter}
    with engine_options(**options):
        lasso_and_logistic(args)


def lasso_and_logistic(args):
    """The problems' table (the part of ``main`` after its options)."""
    for name, X, y, kind, params in problems():
        if args.problems and not any(s in name for s in args.problems):
            continue
        if kind != "logistic" and args.lasso_growth is not None:
            params = dict(params, beta_growth=args.lasso_growth)
        run(name, X, y, kind, params, args.repeats, args.only_lbfgs)


if __name__ == "__main__":
    main()
