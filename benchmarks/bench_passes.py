"""The low-level choices behind the data passes, measured on this machine.

Each figure is the minimum over repeats, in ms (us for the per-call costs):

1. Row-block size of the Gram product ``X_d^T X_d`` and of the predictor
   variances ``||L^-1 x_i||^2`` (``skvan._blocks.BLOCK_ELEMENTS``).
2. The variances by ``dtrmm`` (triangular) against ``dgemm`` with ``L^-T``
   (``FullGaussian.predictor_variance``).
3. Chunk size of the logistic loss derivatives in the quadrature
   (``skvan.expectations._quadrature._CHUNK``), per 65,536 node evaluations.
4. A fused blocked pass (variances, 2-node quadrature and Gram product in one
   pass over the rows) against the separate passes the solver makes.
5. Per-call costs on a small problem: scipy's ``cho_factor``/``cho_solve``
   against LAPACK ``potrf``/``potrs``, ``scipy.linalg.solve(assume_a="pos")``
   under a warning filter against the certificate's ``_solve_positive``, and
   ``np.tril`` of a 14 x 14 factor.
6. The multinomial model's passes, ten classes: the cubature over 20,000 rows
   (``skvan.expectations._cubature``) with 512 KB and 16 MB temporaries
   (``_CHUNK``), on wide rows and on narrow ones (trace of ``V_i`` 1e-9:
   the second-order expansion); ``logsumexp`` and ``softmax`` by scipy against
   ``log_normaliser``; the predictor covariances of 50,000 x 51 as whole
   products ``X Sigma_{k, m >= k}`` against row blocks of 2 MB; and the Gram
   blocks of softmax Hessians as ``K (K + 1) / 2`` products (``data_curvature``),
   as ``K`` stacked ones, and from symmetric rank-k products only.
7. The column statistics of the Jacobi scaling (``skvan._data.column_statistics``):
   ``max_j |x_ij|`` by numpy's ``max`` and ``min`` over ``axis=0`` plus the
   weighted squares in their own blocked pass, against one blocked pass of
   ``|x|`` computing both.
8. The cold-start quadrature of the logistic loss (every predictor mean 0) on
   1e6 rows with ``sd`` from 0.3 to 3 (those of a 1e6 x 20 fit's start): node
   pairs on the per-row rules against the table of :class:`_CentredTable`.
9. The Gram product of short designs (few rows, up to 2,000 columns) accumulated
   into a zeroed ``p x p`` array against ``skvan._data.gram``, which keeps the
   first block's product as the accumulator.
10. The smooth gradient ``G w - b`` of a least-squares objective at a sparse
    ``w`` (a Lasso's KKT check), per call in us: the whole product against the
    rows of the symmetric ``G`` at ``w``'s nonzeros
    (``QuadraticObjective.smooth_gradient``).
11. ``--lapack-threads``: LAPACK on the machine's threads against one.
12. A Lasso's least squares on ``[X, 1]``: the passes a fit made (the design
    ``[X, 1]`` formed, its column statistics, row norms, Gram matrix and
    ``X^T W y``) against one pass of ``[X, 1, y]^T W [X, 1, y]``
    (``skvan._data.augmented_gram``), whose diagonal gives the statistics;
    medians of alternating repeats.
13. ``--tiny-fits``: the fixed costs of tiny fits (diabetes' Lasso on ``X^T X``,
    11 parameters; iris' logistic fit, 150 x 5), us per fit, medians of
    alternating repeats of 200 fits each: as they are, with the parameters'
    names read off ``__init__``'s signature at each call, as scikit-learn does
    (``VANLinearModel._get_param_names``), with the certificate's KKT checks
    computing the equations' misses also after a sign flipped
    (``_KKTCheck(..., equations_when_flipped=True)``), and with numpy's
    reductions in place of ``skvan._reductions``' (``a.any()``, ``a.max()``,
    ... in the modules that import them).
14. ``--reductions``: per call, in us, on 11 entries (diabetes' Lasso has 11
    parameters) and on 1,000: numpy's ``any``, ``all``, ``isfinite(a).all()``,
    ``max`` and ``min`` against ``skvan._reductions``; then, in ms, the
    maxima and sums over the last axis of a multinomial model's per-row arrays
    (``(rows, points, K)``): ``max(axis=-1)`` and ``sum(axis=-1)`` against
    ``last_max`` and ``last_sum``.
16. ``--pairs``: a multinomial model's two passes over the rows for every pair
    of classes, the curvature's Gram blocks ``X^T diag(w h_km) X`` and the
    predictor covariances ``x_i^T Sigma_km x_i``, as one product per class pair
    against one product per row block with the rows' feature-pair products
    (``skvan._data.FeaturePairs``; ``pays`` says which the model uses), for
    3-10 classes and 20-128 features.
17. ``--blas-rate``: the Hessian pass's share of this machine's BLAS rate, per
    problem of ``bench_logistic.py --quick`` (binary), ``bench_multinomial.py
    --quick`` and ``bench_lasso.py --speed --quick`` (alpha at a tenth of
    alpha_max): the median time of the pass as a default fit makes it (the
    weighted Gram ``X^T W X`` of the design with its gradient, the ``K (K + 1)
    / 2`` class-pair blocks of a multinomial model, the Lasso's one augmented
    Gram ``[X, 1, y]^T W [X, 1, y]``), against numpy's ``D.T @ (D * w)`` on
    the same design ``D`` (a BLAS product, as newton-cholesky forms its
    Hessian), times the number of blocks: 1 is the BLAS's rate, above 1 a pass
    that does less arithmetic than one product per block (a symmetric product,
    the feature pairs). Passes under 1 ms are left out (their time is fixed
    costs, not arithmetic); the wide (``n < p``) fits form no Hessian (the
    operator and dual forms) and are not listed.
15. ``--blas-threads``: VANLogisticRegression fits (ms, medians of 7 alternating
    repeats, 3 from ``5e7`` multiply-adds per pass) on the user's BLAS threads,
    as the solver runs them, against threadpoolctl's one-thread limit around
    the solver's loop (every library, as small fits ran until 2026-11-28), on
    generated sets of ``1e5`` to ``1e8``
    multiply-adds per pass and on digits (binary, multinomial, VI): each timed
    fit after 0.2 s of its own kind (bench_logistic.py's ``timed_fit``), and on
    digits and a 20,000 x 100 set also right after an lbfgs fit of
    scikit-learn's (its threads still spinning).

Run: python benchmarks/bench_passes.py [--quick] [--columns (parts 7 and 8 only)]
     python benchmarks/bench_passes.py --gram (part 9 only)
     python benchmarks/bench_passes.py --sparse-gradient (part 10 only)
     python benchmarks/bench_passes.py --augmented (part 12 only)
     python benchmarks/bench_passes.py --tiny-fits (part 13 only)
     python benchmarks/bench_passes.py --reductions (part 14 only)
     python benchmarks/bench_passes.py --blas-threads (part 15 only)
     python benchmarks/bench_passes.py --blas-rate (part 17 only)
"""

import argparse
import contextlib
import time
import warnings

import numpy as np
from scipy import linalg
from scipy.linalg import blas, lapack

from skvan._blocks import row_blocks
from skvan._data import gram as skvan_gram
from skvan.objectives import LogisticLoss
from skvan.sparse._kkt import _solve_positive


def best(fn, repeats):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def problem(n, p, rng):
    X = rng.standard_normal((n, p))
    A = rng.standard_normal((p, p))
    Linv = np.tril(np.linalg.inv(np.linalg.cholesky(A @ A.T + p * np.eye(p))))
    return X, rng.random(n), Linv


def gram(X, d, block):
    H, root = np.zeros((X.shape[1], X.shape[1])), np.sqrt(d)
    for rows in row_blocks(*X.shape, block):
        Xd = X[rows] * root[rows, None]
        H += Xd.T @ Xd
    return H


def variances_gemm(X, upper, block):
    v = np.empty(X.shape[0])
    for rows in row_blocks(*X.shape, block):
        Z = X[rows] @ upper
        v[rows] = np.einsum("ij,ij->i", Z, Z)
    return v


def variances_trmm(X, Linv, block):
    v = np.empty(X.shape[0])
    for rows in row_blocks(*X.shape, block):
        Z = blas.dtrmm(1.0, Linv, X[rows], side=1, lower=1, trans_a=1)
        v[rows] = np.einsum("ij,ij->i", Z, Z)
    return v


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller shapes, fewer repeats")
    parser.add_argument("--columns", action="store_true", help="only parts 7 and 8")
    parser.add_argument("--gram", action="store_true", help="only part 9")
    parser.add_argument("--sparse-gradient", action="store_true", help="only part 10")
    parser.add_argument("--lapack-threads", action="store_true", help="only part 11")
    parser.add_argument("--augmented", action="store_true", help="only part 12")
    parser.add_argument("--tiny-fits", action="store_true", help="only part 13")
    parser.add_argument("--reductions", action="store_true", help="only part 14")
    parser.add_argument("--blas-threads", action="store_true", help="only part 15")
    parser.add_argument("--pairs", action="store_true", help="only part 16")
    parser.add_argument("--blas-rate", action="store_true", help="only part 17")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    repeats = 3 if args.quick else 5
    if args.augmented:
        return augmented(rng, 3 * repeats, args.quick)
    if args.tiny_fits:
        return tiny_fits(15)
    if args.reductions:
        return reductions(rng)
    if args.blas_threads:
        return blas_threads()
    if args.pairs:
        return feature_pairs(rng, repeats, args.quick)
    if args.blas_rate:
        return blas_rate(rng)
    if args.gram:
        return gram_accumulator(rng, repeats)
    if args.sparse_gradient:
        return sparse_gradient(rng, repeats)
    if args.lapack_threads:
        return lapack_threads(rng, 7, args.quick)
    if args.columns:
        column_statistics(rng, repeats, args.quick)
        return cold_start(rng, repeats, args.quick)
    shapes = ((200_000, 21), (20_000, 101)) if args.quick else \
        ((1_000_000, 21), (100_000, 101), (20_000, 201))

    print("1-2. Passes over the rows (ms): Gram product, variances by dgemm, by dtrmm")
    for n, p in shapes:
        X, d, Linv = problem(n, p, rng)
        upper = np.ascontiguousarray(Linv.T)
        for log2 in (14, 16, 18, 20):
            block = 1 << log2
            cells = [best(lambda: gram(X, d, block), repeats),
                     best(lambda: variances_gemm(X, upper, block), repeats),
                     best(lambda: variances_trmm(X, Linv, block), repeats)]
            print(f"  {n:>9} x {p:<4} block 2^{log2} ({8 * block >> 10:>5} KB): "
                  + "  ".join(f"{1e3 * c:7.1f}" for c in cells), flush=True)

    print("\n3. Logistic loss derivatives per 65,536 node evaluations (ms), by chunk size")
    loss = LogisticLoss()
    for log2 in (14, 16):
        k = 69
        rows = (1 << log2) // k
        a = 3.0 * rng.standard_normal((rows, k))
        y = np.sign(rng.standard_normal((rows, 1)))
        t = best(lambda: loss.loss_derivatives(y, a), 10 * repeats)
        print(f"  chunk 2^{log2}: {1e3 * t * 65536 / (rows * k):.2f}")

    print("\n4. Separate passes against one fused blocked pass (ms)")
    z, w = np.array([-1.0, 1.0]), np.array([0.5, 0.5])
    for n, p in shapes[:2]:
        X, _, Linv = problem(n, p, rng)
        upper = np.ascontiguousarray(Linv.T)
        y = np.sign(rng.standard_normal(n))
        mu = 0.1 * rng.standard_normal(p)

        def separate():
            m = X @ mu
            sd = np.sqrt(variances_gemm(X, upper, 1 << 18))
            e2 = np.empty(n)
            for start in range(0, n, 8192):
                s = slice(start, start + 8192)
                e2[s] = loss.loss_derivatives(y[s, None], m[s, None] + sd[s, None] * z)[2] @ w
            return gram(X, e2, 1 << 18)

        def fused():
            H = np.zeros((p, p))
            for rows in row_blocks(n, p, 1 << 18):
                B = X[rows]
                Z = B @ upper
                a = (B @ mu)[:, None] + np.sqrt(np.einsum("ij,ij->i", Z, Z))[:, None] * z
                Xd = B * np.sqrt(loss.loss_derivatives(y[rows, None], a)[2] @ w)[:, None]
                H += Xd.T @ Xd
            return H

        print(f"  {n:>9} x {p:<4} separate {1e3 * best(separate, repeats):7.1f}"
              f"  fused {1e3 * best(fused, repeats):7.1f}", flush=True)

    print("\n5. Per-call costs at p = 14 (us)")
    A = rng.standard_normal((14, 14))
    P = A @ A.T + np.eye(14)
    g = rng.standard_normal(14)
    c = linalg.cho_factor(P, lower=True, check_finite=False)

    def scipy_solve():
        with warnings.catch_warnings():
            warnings.simplefilter("error", linalg.LinAlgWarning)
            return linalg.solve(P, g, assume_a="pos", check_finite=False)

    calls = {
        "cho_factor": lambda: linalg.cho_factor(P, lower=True, check_finite=False),
        "lapack potrf": lambda: lapack.dpotrf(P, lower=1, clean=1),
        "cho_solve": lambda: linalg.cho_solve(c, g, check_finite=False),
        "lapack potrs": lambda: lapack.dpotrs(c[0], g, lower=1),
        "linalg.solve(pos) + filter": scipy_solve,
        "_solve_positive": lambda: _solve_positive(P, g),
        "np.tril": lambda: np.tril(c[0]),
    }
    for name, fn in calls.items():
        t = best(lambda: [fn() for _ in range(1000)], repeats)
        print(f"  {name:<28}{1e3 * t:6.1f}")

    multinomial(rng, repeats, args.quick)
    column_statistics(rng, repeats, args.quick)
    cold_start(rng, repeats, args.quick)
    gram_accumulator(rng, repeats)
    sparse_gradient(rng, repeats)
    augmented(rng, 3 * repeats, args.quick)


def lapack_threads(rng, repeats, quick):
    """11. scipy's LAPACK on an n x n matrix (Cholesky factor, its inverse, the
    inverse factor) on the machine's BLAS threads and on one
    (skvan._blas.lapack_one_thread), each right after a threaded numpy product
    (a solver's pass over the rows) and after an idle 50 ms; medians (ms)."""
    from scipy.linalg import lapack

    from skvan._blas import _OneBlasThread

    rows = rng.standard_normal((20_000, 200))
    sizes = (8, 16, 24, 32, 64, 128, 256, 512, 1024) + (() if quick else (2048, 3000))
    calls = {"potrf": lambda P: lapack.dpotrf(P, lower=1, clean=1),
             "potri": lambda P: lapack.dpotri(P, lower=1),
             "trtri": lambda P: lapack.dtrtri(P, lower=1)}
    print("11. LAPACK after a numpy product / after 50 ms idle (ms, medians): threads | one thread")
    for n in sizes:
        A = rng.standard_normal((n + 50, n))
        P = A.T @ A + n * np.eye(n)
        L = lapack.dpotrf(P, lower=1, clean=1)[0]
        cells = []
        for name, call in calls.items():
            M = P if name == "potrf" else L
            for before in ("product", "idle"):
                for one in (False, True):
                    times = []
                    for _ in range(repeats if n < 2000 else 3):
                        if before == "product":
                            rows.T @ rows
                        else:
                            time.sleep(0.05)
                        with _OneBlasThread() if one else contextlib.nullcontext():
                            start = time.perf_counter()
                            call(M)
                            times.append(time.perf_counter() - start)
                    cells.append(1e3 * float(np.median(times)))
        print(f"  n = {n:>4}: " + "   ".join(
            f"{name} {cells[4 * k]:.3f}|{cells[4 * k + 1]:.3f}, idle {cells[4 * k + 2]:.3f}|{cells[4 * k + 3]:.3f}"
            for k, name in enumerate(calls)), flush=True)

    # What it does to whole fits: VANLogisticRegression with skvan's rule
    # (LAPACK_ONE_THREAD) and with LAPACK on the machine's threads, alternating.
    from sklearn.datasets import make_classification

    from skvan import VANLogisticRegression, _blas

    rule = _blas.LAPACK_ONE_THREAD
    print("\n    VANLogisticRegression fits (ms, min and median of alternating repeats): "
          "skvan's rule | LAPACK threaded")
    # 10 classes: the multinomial model, 510 parameters; VI on 300 x 3000: the
    # dual form, whose systems are 300 x 300.
    # 200,000 x 12 (13 parameters) and 100,000 x 4 with 3 classes (15): below the
    # factorisations' sizes, where the covariance's inverse (potri) still threads;
    # the multinomial model forms it at each iteration, the binary one once.
    small = ((200_000, 12, 2, "vo"), (100_000, 4, 3, "vo"))
    shapes = ((5_000, 150, 2, "vo"), (20_000, 200, 2, "vo"), (50_000, 50, 10, "vo"),
              (300, 3_000, 2, "vi"), *small) if not quick else ((5_000, 150, 2, "vo"), *small)
    for n, p, classes, objective in shapes:
        X, y = make_classification(n, p, n_informative=max(p // 3, 2) if p < 1_000 else 20,
                                   n_classes=classes,
                                   n_clusters_per_class=1 if classes > 2 else 2, random_state=0)
        times = {True: [], False: []}
        for _ in range(3 if classes > 2 else repeats):
            for keep in (True, False):
                with _blas.lapack_threading(rule if keep else (np.inf, 0)):
                    start = time.perf_counter()
                    VANLogisticRegression(objective=objective).fit(X, y)
                    times[keep].append(1e3 * (time.perf_counter() - start))
        print(f"  {n} x {p}, {classes} classes, {objective}: " + " | ".join(
            f"{min(times[keep]):.1f} / {np.median(times[keep]):.1f}" for keep in (True, False)), flush=True)


def tiny_fits(repeats, fits=200):
    """Part 13: the fixed costs of tiny fits, each saving undone in turn."""
    from sklearn.base import BaseEstimator
    from sklearn.datasets import load_diabetes, load_iris
    from sklearn.preprocessing import StandardScaler

    from skvan import VANLassoRegressor, VANLogisticRegression
    from skvan.linear_model._base import VANLinearModel
    from skvan.sparse import _kkt as _sparse

    X, y = load_diabetes(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    alpha = 0.1 * np.max(np.abs(X.T @ (y - y.mean()))) / len(y)
    Xi, yi = load_iris(return_X_y=True)
    Xi = StandardScaler().fit_transform(Xi)
    cases = (("diabetes Lasso (11 parameters)", VANLassoRegressor(alpha=alpha), X, y),
             ("iris logistic (150 x 5)", VANLogisticRegression(), Xi, (yi == 2).astype(int)))
    cached = VANLinearModel.__dict__["_get_param_names"]
    check_init = _sparse._KKTCheck.__init__
    numpys = dict(any_of=lambda a: bool(np.asarray(a).any()), all_of=lambda a: bool(a.all()),
                  all_finite=lambda a: bool(np.isfinite(a).all()),
                  max_of=lambda a: a.max(), min_of=lambda a: a.min())
    users = [(module, name, getattr(module, name)) for module in _reduction_users()
             for name in numpys if hasattr(module, name)]

    @contextlib.contextmanager
    def undone(variant):
        try:
            if variant == "names":  # scikit-learn's signature inspection per call
                VANLinearModel._get_param_names = BaseEstimator.__dict__["_get_param_names"]
            elif variant == "misses":  # the equations' misses also after a flip
                _sparse._KKTCheck.__init__ = (
                    lambda self, objective, rtol=1e-9, equations_when_flipped=True:
                    check_init(self, objective, rtol, True))
            elif variant == "numpy":  # numpy's reductions for skvan._reductions'
                for module, name, _ in users:
                    setattr(module, name, numpys[name])
            yield
        finally:
            VANLinearModel._get_param_names = cached
            _sparse._KKTCheck.__init__ = check_init
            for module, name, ours in users:
                setattr(module, name, ours)

    variants = ("as is", "names", "misses", "numpy")
    print(f"13. Tiny fits, us per fit (medians of {repeats} alternating repeats of {fits}): as "
          "they are, with the parameters' names read off the signature\n"
          "    at each call, with the KKT checks' misses after a flip, and with numpy's "
          "reductions; in brackets, the median ratio of the fit as it is to each")
    print(f"  {'':32s}" + "".join(f"{v:>18s}" for v in variants))
    for name, est, A, b in cases:
        times = {v: [] for v in variants}
        for _ in range(repeats):
            for variant in variants:
                with undone(variant):
                    est.fit(A, b)
                    start = time.perf_counter()
                    for _ in range(fits):
                        est.fit(A, b)
                    times[variant].append((time.perf_counter() - start) / fits * 1e6)
        base = np.array(times["as is"])
        cells = [f"{np.median(base):18.0f}"] + [
            f"{np.median(times[v]):10.0f} ({np.median(base / np.array(times[v])):.3f})"
            for v in variants[1:]]
        print(f"  {name:32s}" + "".join(cells))


def blas_threads(repeats=7):
    """Part 15: the solver's loop on the user's BLAS threads against one thread."""
    from bench_logistic import timed_fit  # (benchmarks/ is the script's directory)
    from sklearn.datasets import load_digits, make_classification
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    from skvan import VANLogisticRegression
    from skvan._blas import _OneBlasThread
    from skvan.van import VANSolver

    solve = VANSolver.solve

    def limited(self):
        with _OneBlasThread():
            return solve(self)

    digits, classes = load_digits(return_X_y=True)
    digits = StandardScaler().fit_transform(digits)
    cases = []
    for n, p in ((250, 20), (2500, 20), (1000, 30), (300, 100), (1000, 100), (4000, 50),
                 (25_000, 20), (2000, 200), (10_000, 100)):
        X, y = make_classification(n, p, n_informative=p // 3, random_state=0)
        cases.append((f"{n} x {p}", VANLogisticRegression(), X, y))
    binary = (classes >= 5).astype(int)
    cases += [("digits 0-4 vs 5-9", VANLogisticRegression(), digits, binary),
              ("digits, vi", VANLogisticRegression(objective="vi"), digits, binary),
              ("digits, 10 classes", VANLogisticRegression(), digits, classes)]
    print("15. VANLogisticRegression fits (ms, medians of alternating repeats): the user's "
          "threads | one thread; each timed fit after 0.2 s of its own")
    try:
        for name, est, X, y in cases:
            times = {False: [], True: []}
            work = X.shape[0] * (X.shape[1] + 1) ** 2
            for _ in range(repeats if work < 5e7 else 3):
                for one in (False, True):
                    VANSolver.solve = limited if one else solve
                    times[one].append(1e3 * timed_fit(est, X, y, 0.2))
            print(f"  {name:<20} ({work:.0e} per pass): {np.median(times[False]):8.2f} | "
                  f"{np.median(times[True]):8.2f}", flush=True)
        print("  right after an lbfgs fit of scikit-learn's (no fit of VAN's own between):")
        X, y = make_classification(20_000, 100, n_informative=33, random_state=0)
        for name, A, b in (("digits 0-4 vs 5-9", digits, binary), ("20000 x 100", X, y)):
            lbfgs = LogisticRegression(tol=1e-7, max_iter=10_000)
            est, times = VANLogisticRegression(), {False: [], True: []}
            for _ in range(repeats):
                for one in (False, True):
                    VANSolver.solve = limited if one else solve
                    lbfgs.fit(A, b)
                    times[one].append(1e3 * timed_fit(est, A, b, None))
            print(f"  {name:<20}: {np.median(times[False]):8.2f} | {np.median(times[True]):8.2f}",
                  flush=True)
    finally:
        VANSolver.solve = solve


def _reduction_users():
    """The loaded skvan modules that import from ``skvan._reductions``."""
    import sys

    names = ("any_of", "all_of", "all_finite", "max_of", "min_of")
    for name, module in list(sys.modules.items()):
        if name.startswith("skvan.") and name != "skvan._reductions" and any(
                getattr(getattr(module, f, None), "__module__", None) == "skvan._reductions"
                for f in names):
            yield module


def reductions(rng, calls=100_000):
    """Part 14: per-call costs of numpy's reductions and skvan._reductions'."""
    from skvan._reductions import all_finite, all_of, any_of, max_of, min_of

    print("14. Reductions, us per call (minimum of 5 repeats of "
          f"{calls:,} calls): numpy's, skvan._reductions'")
    for size in (11, 1000):
        x = rng.standard_normal(size)
        b = x > 0
        pairs = (("any", lambda: b.any(), lambda: any_of(b)),
                 ("all", lambda: b.all(), lambda: all_of(b)),
                 ("isfinite(a).all()", lambda: np.isfinite(x).all(), lambda: all_finite(x)),
                 ("max", lambda: x.max(), lambda: max_of(x)),
                 ("min", lambda: x.min(), lambda: min_of(x)))
        for name, theirs, ours in pairs:
            cells = []
            for fn in (theirs, ours):
                def run(fn=fn):
                    for _ in range(calls):
                        fn()
                cells.append(best(run, 5) / calls * 1e6)
            print(f"  {size:>5} entries  {name:<18}{cells[0]:7.2f}{cells[1]:7.2f}", flush=True)
    from skvan._reductions import last_max, last_sum

    print("   Over a short last axis, ms per call (minimum of 20): numpy's, skvan._reductions'")
    for shape in ((20_000, 3), (20_000, 10, 5), (2_000, 20, 10)):
        A = rng.standard_normal(shape)
        for name, theirs, ours in (("max", lambda A=A: A.max(axis=-1), lambda A=A: last_max(A)),
                                   ("sum", lambda A=A: A.sum(axis=-1), lambda A=A: last_sum(A))):
            cells = [best(fn, 20) * 1e3 for fn in (theirs, ours)]
            print(f"  {shape!s:>15}  {name:<18}{cells[0]:7.2f}{cells[1]:7.2f}", flush=True)


def blas_rate(rng, fits=3, repeats=7):
    """Part 17: the Hessian pass of default fits against one BLAS product per block."""
    import warnings

    import bench_lasso
    import bench_logistic
    import bench_multinomial

    from skvan import VANLassoRegressor, VANLogisticRegression
    from skvan.objectives import _linear, _multinomial, _quadratic

    records = []

    def record(owner, name, design_of):
        """Wrap ``owner.name`` to record each call's time and ``(design, blocks)``."""
        original = getattr(owner, name)

        def wrapper(*args, **kwargs):
            start = time.perf_counter()
            out = original(*args, **kwargs)
            records.append((time.perf_counter() - start, design_of(*args, **kwargs)))
            return out

        setattr(owner, name, wrapper)
        return lambda: setattr(owner, name, original)

    def multinomial_design(objective, H, diagonal=False):
        K = objective.n_classes
        return None if diagonal else (objective.X, K * (K + 1) // 2)

    def augmented_design(X, y, w, fit_intercept):
        columns = [X, np.ones((X.shape[0], 1))] if fit_intercept else [X]
        return np.column_stack([*columns, y]), 1

    def lasso_problems():
        for name, X, y in bench_lasso.speed_datasets(True):
            alpha = 0.1 * np.max(np.abs((X - X.mean(0)).T @ (y - y.mean()))) / len(y)
            yield name, X, y, VANLassoRegressor(alpha=alpha)

    sections = (
        ("binary", _linear, "gram_and_tdot",
         lambda X, d, u=None: (X, 1),
         ((name, X, y, VANLogisticRegression())
          for name, X, y in bench_logistic.datasets(True))),
        ("multinomial", _multinomial.MultinomialObjective,
         "data_curvature", multinomial_design,
         ((name, X, y, VANLogisticRegression())
          for name, X, y in bench_multinomial.timing_problems(True))),
        ("Lasso", _quadratic,
         "augmented_gram", augmented_design, lasso_problems()),
    )
    print("17. The Hessian pass against numpy's D.T @ (D * w) per block (ms; medians of "
          f"{fits} fits' passes, minimum of {repeats} products; passes of 1 ms and more)")
    print(f"{'problem':<48}{'design':>14}{'passes':>7}{'blocks':>7}{'pass ms':>9}"
          f"{'BLAS ms':>9}{'rate':>7}")
    warnings.simplefilter("ignore")
    for family, owner, name, design_of, problems in sections:
        for label, X, y, estimator in problems:
            estimator.fit(X, y)  # untimed: imports, caches
            records.clear()
            restore = record(owner, name, design_of)
            try:
                for _ in range(fits):
                    estimator.fit(X, y)
            finally:
                restore()
            passes = [(t, part) for t, part in records if part is not None]
            t_pass = float(np.median([t for t, _ in passes])) if passes else 0.0
            if t_pass < 1e-3:
                continue
            design, blocks = passes[0][1]
            D = np.ascontiguousarray(np.asarray(design, dtype=np.float64))
            w = rng.uniform(0.1, 1.0, D.shape[0])
            product = best(lambda D=D, w=w: D.T @ (D * w[:, None]), repeats)
            shape = f"{D.shape[0]} x {D.shape[1]}"
            print(f"{family + ': ' + label:<48}{shape:>14}{len(passes) / fits:>7.1f}{blocks:>7d}"
                  f"{1e3 * t_pass:>9.2f}{1e3 * product:>9.2f}{blocks * product / t_pass:>7.2f}",
                  flush=True)


def sparse_gradient(rng, repeats):
    from skvan.objectives import QuadraticObjective

    print("\n10. G w - b at a sparse w (us per call): whole product, rows at the nonzeros")
    for p in (301, 1000, 2000):
        X = rng.standard_normal((100, p))
        quad = QuadraticObjective.from_data(X, rng.standard_normal(100))
        for k in (10, 40, 80):
            w = np.zeros(p)
            w[rng.choice(p, k, replace=False)] = rng.standard_normal(k)
            whole = best(lambda: [quad.G @ w - quad.b for _ in range(100)], 10 * repeats)
            rows = best(lambda: [quad.smooth_gradient(w) for _ in range(100)], 10 * repeats)
            print(f"  p {p:>5}, {k:>3} nonzeros: {1e4 * whole:7.1f} {1e4 * rows:7.1f}", flush=True)


def augmented(rng, repeats, quick):
    from skvan._data import as_design, augmented_gram, column_statistics, row_squared_norms, tdot

    print("\n12. A Lasso's least squares on [X, 1] (ms, medians of alternating repeats): "
          "separate passes, one augmented pass")
    shapes = ((442, 10), (2_000, 10), (20_000, 100), (100_000, 20), (20_000, 200))
    for n, p in shapes[:3] if quick else shapes:
        X, y, w = rng.standard_normal((n, p)), rng.standard_normal(n), np.ones(n)

        def separate():
            Xd = as_design(X, True)
            column_statistics(Xd, w)
            row_squared_norms(Xd)
            return skvan_gram(Xd, w), tdot(Xd, w * y)

        times = {separate: [], augmented_gram: []}
        for _ in range(repeats):
            for fn in times:
                start = time.perf_counter()
                fn() if fn is separate else fn(X, y, w, True)
                times[fn].append(time.perf_counter() - start)
        print(f"  {n:>7} x {p:<4} {1e3 * np.median(times[separate]):8.2f}"
              f" {1e3 * np.median(times[augmented_gram]):8.2f}", flush=True)
    print()


def gram_accumulator(rng, repeats):
    print("\n9. Gram product of short designs (ms): into a zeroed p x p array, "
          "first product kept (skvan)")
    for n, p in ((80, 301), (100, 301), (200, 2000), (2000, 50), (20_000, 200)):
        X, d = rng.standard_normal((n, p)), rng.random(n)
        zeroed = min(best(lambda: gram(X, d, 1 << 18), 10 * repeats) for _ in range(2))
        kept = min(best(lambda: skvan_gram(X, d), 10 * repeats) for _ in range(2))
        print(f"  {n:>6} x {p:<5} {1e3 * zeroed:8.3f} {1e3 * kept:8.3f}", flush=True)


def cold_start(rng, repeats, quick):
    from skvan.expectations import GaussHermiteQuadrature, _quadrature
    from skvan.objectives import LinearModelObjective

    n = 100_000 if quick else 1_000_000
    sd = np.exp(rng.uniform(np.log(0.3), np.log(3.0), n))
    f = LinearModelObjective(np.zeros((n, 1)), np.sign(rng.standard_normal(n)), LogisticLoss())
    quad, m = GaussHermiteQuadrature(), np.zeros(n)

    def pairs():
        for s, z, w in _quadrature._groups(sd**2, "auto"):
            f.loss.centred_expectations(f.y[s], sd[s], z, w, "exact")

    _quadrature.centred_table(f.loss, "exact")  # built once per process, not timed
    print(f"\n8. Cold-start logistic quadrature, {n} rows, sd 0.3-3 (ms): node pairs "
          f"{1e3 * best(pairs, repeats):7.1f}   table "
          f"{1e3 * best(lambda: quad._raw(f, m, sd**2, 'exact'), repeats):7.1f}")


def column_statistics(rng, repeats, quick):
    from skvan._data import column_statistics as one_pass
    from skvan._data import weighted_column_squares

    print("\n7. Column statistics of the Jacobi scaling (ms)")
    shapes = ((100_000, 21), (20_000, 101)) if quick else ((1_000_000, 21), (100_000, 101))
    for n, p in shapes:
        X, w = rng.standard_normal((n, p)), rng.random(n)

        def two_reductions():
            top = np.maximum(X.max(axis=0, initial=0.0), -X.min(axis=0, initial=0.0))
            return top, weighted_column_squares(X, w)

        print(f"  {n:>9} x {p:<4} axis-0 max and min + squares "
              f"{1e3 * best(two_reductions, repeats):7.1f}   one blocked pass "
              f"{1e3 * best(lambda: one_pass(X, w), repeats):7.1f}")


def multinomial(rng, repeats, quick):
    from scipy.special import logsumexp, softmax

    from skvan.expectations import SoftmaxCubature, _cubature
    from skvan.objectives import MultinomialObjective
    from skvan.objectives._multinomial import log_normaliser
    from skvan.van import FullGaussian

    print("\n6. Multinomial passes, 10 classes (ms)")
    K, n = 10, 20_000
    M = 2.0 * rng.standard_normal((n, K))
    R = rng.standard_normal((n, K, K))
    V = R @ np.swapaxes(R, 1, 2) / K**2
    f = MultinomialObjective(np.ones((n, 1)), np.eye(K)[rng.integers(0, K, n)])
    cubature = SoftmaxCubature()
    default = _cubature._CHUNK
    for name, scale in (("wide (trace ~1)", 1.0), ("narrow (trace ~1e-9)", 1e-9)):
        cells = []
        for chunk in (1 << 16, 1 << 21):
            _cubature._CHUNK = chunk
            cells.append(best(lambda: cubature._raw(f, M, V * scale, "exact"), repeats))
        _cubature._CHUNK = default
        print(f"  cubature, {name:<22} chunk 512 KB {1e3 * cells[0]:7.1f}   16 MB {1e3 * cells[1]:7.1f}")
    A = 3.0 * rng.standard_normal(((1 << 16) // K, 20, K))
    print(f"  logsumexp + softmax of {A.size} predictors: scipy "
          f"{1e3 * best(lambda: (logsumexp(A, axis=-1), softmax(A, axis=-1)), repeats):6.2f}"
          f"   log_normaliser {1e3 * best(lambda: log_normaliser(A), repeats):6.2f}")
    n, p = (10_000, 51) if quick else (50_000, 51)
    X = rng.standard_normal((n, p))
    B = rng.standard_normal((K * p, K * p))
    family = FullGaussian(np.zeros(K * p), B @ B.T + K * p * np.eye(K * p))
    S = family.sigma

    def whole():
        out = np.empty((n, K, K))
        for k in range(K):
            XS = X @ S[k * p:(k + 1) * p, k * p:]
            for m in range(k, K):
                out[:, k, m] = out[:, m, k] = np.einsum("ij,ij->i", X, XS[:, (m - k) * p:(m - k + 1) * p])
        return out

    print(f"  predictor covariances, {n} x {p}: whole products {1e3 * best(whole, repeats):7.1f}"
          f"   row blocks {1e3 * best(lambda: _cubature.predictor_covariances(X, K, family), repeats):7.1f}")
    # Softmax Hessians diag(p) - p p^T at random predictors (PSD, as VO's are).
    P = np.exp(2.0 * rng.standard_normal((n, K)))
    P /= P.sum(axis=1, keepdims=True)
    H = -P[:, :, None] * P[:, None, :]
    H[:, np.arange(K), np.arange(K)] += P
    objective = MultinomialObjective(X, np.eye(K)[rng.integers(0, K, n)])

    def symmetric():
        # With PSD H_i, (e_k + e_m)^T H_i (e_k + e_m) >= 0: every product has
        # non-negative weights (X_d^T X_d, half the multiply-adds of a general one).
        C = np.empty((K * p, K * p))
        own = [skvan_gram(X, H[:, k, k]) for k in range(K)]
        for k in range(K):
            C[k * p:(k + 1) * p, k * p:(k + 1) * p] = own[k]
            for m in range(k + 1, K):
                pair = np.maximum(H[:, k, k] + 2.0 * H[:, k, m] + H[:, m, m], 0.0)
                block = 0.5 * (skvan_gram(X, pair) - own[k] - own[m])
                C[k * p:(k + 1) * p, m * p:(m + 1) * p] = block
                C[m * p:(m + 1) * p, k * p:(k + 1) * p] = block.T
        return C

    def stacked():
        # One product per class k: X^T [h_km x_i]_{m >= k}, in 2 MB row blocks.
        C = np.zeros((K * p, K * p))
        for rows in row_blocks(n, K * p):
            B = X[rows]
            for k in range(K):
                Y = (H[rows, k, k:, None] * B[:, None, :]).reshape(len(B), -1)
                C[k * p:(k + 1) * p, k * p:] += B.T @ Y
        return C

    print(f"  Gram blocks, {n} x {p}: data_curvature (its feature pairs, part 16) "
          f"{1e3 * best(lambda: objective.data_curvature(H), repeats):7.1f}   {K} stacked "
          f"products {1e3 * best(stacked, repeats):7.1f}   off-diagonal blocks as (S - G_kk "
          f"- G_mm) / 2, S a symmetric rank-k product {1e3 * best(symmetric, repeats):7.1f}")


def feature_pairs(rng, repeats, quick):
    """Part 16: class-pair products against the feature pairs' one product."""
    from skvan._data import FeaturePairs, gram

    print("16. Per class pair against feature pairs (ms): Gram blocks and predictor "
          "covariances; 'pays' is FeaturePairs.pays")
    print(f"{'rows':>7}{'p':>5}{'K':>4}  {'grams: pairs of classes':>24}{'features':>10}"
          f"  {'forms: pairs of classes':>24}{'features':>10}  pays")
    n = 5_000 if quick else 20_000
    for p, K in ((20, 3), (30, 3), (20, 4), (20, 5), (40, 5), (64, 5), (30, 6), (50, 8),
                 (65, 10), (80, 10), (128, 10)):
        X = rng.standard_normal((n, p))
        k, m = np.triu_indices(K)
        W = rng.uniform(0.0, 1.0, (n, k.size))
        B = rng.standard_normal((K * p, K * p))
        S = (B @ B.T).reshape(K, p, K, p)[k, :, m, :]
        pairs = FeaturePairs(p)

        def class_grams():
            return [gram(X, W[:, c]) for c in range(k.size)]

        def class_forms():
            return np.column_stack([np.einsum("ij,ij->i", X @ S[c], X) for c in range(k.size)])

        cells = [best(f, repeats) for f in (class_grams, lambda: pairs.grams(X, W),
                                             class_forms, lambda: pairs.forms(X, S))]
        print(f"{n:>7}{p:>5}{K:>4}  {1e3 * cells[0]:>24.1f}{1e3 * cells[1]:>10.1f}"
              f"  {1e3 * cells[2]:>24.1f}{1e3 * cells[3]:>10.1f}  {FeaturePairs.pays(X, k.size)}")


if __name__ == "__main__":
    main()
