"""VAN for the Lasso against scikit-learn's Lasso and the paper's baselines.

Two measures (issue 3; the paper's Figure 2a-b):

1. Error against passes through the data, ``max_j |theta_j - theta*_j| / max_j |theta*_j|``
   with ``theta*`` from ``Lasso(tol=1e-12)``, for
   - VAN: full batch, the estimator's settings; one pass per iteration (the
     expectations need only X^T X and X^T y, so VAN actually reads the data once
     and each iteration costs O(p^3); the count is what it would be without that);
   - sVAN: minibatches of 1% of the rows (at least 32), the estimator's parts
     (each row's integrals remembered, :class:`~skvan.expectations.RowMemory`);
   - iterative ridge (the paper's baseline): theta <- (X^T X + lambda diag(1/|theta|))^-1 X^T y;
   - coordinate descent (scikit-learn's Lasso): one pass per epoch.
   VAN and sVAN curves are the raw means (no exact-zero finish); the table gives
   where the estimator stops (its KKT certificate) and its final error.
2. Wall time at 1e-3 relative error: time(VANLassoRegressor, defaults) /
   time(Lasso at the loosest tol in 1e-1, 1e-2, ... reaching 1e-3), medians of
   alternating repeats (the machine is shared and noisy).

3. ``--path``: VANLassoCV against LassoCV (the same 100 alphas, 5 folds), wall
   time ratio (minimum of alternating repeats), whether ``alpha_`` is that of
   ``LassoCV`` solved to ``tol=1e-12`` (at its default tol, neighbouring alphas'
   held-out errors can swap), on eight datasets including three with p > n; and the
   warm-start saving along van_lasso_path: VAN iterations along the path (each
   alpha starting from the previous one's solution, followed by homotopy)
   against cold fits at every alpha. ``--enet-path``: the same comparison for
   VANElasticNetCV against ElasticNetCV (``l1_ratio=0.5``). ``--wide``:
   ``van_lasso_path`` against ``lasso_path`` and celer's ``celer_path`` (a
   benchmarks-only extra; skipped without it), and VANLassoCV against LassoCV,
   on wide collinear problems (near-duplicate groups, factor models, 500 x
   10,000) where only the objective can be compared: each peer at the loosest
   tol reaching a 1e-6 relative objective gap at every alpha.

4. ``--checks``: the certificate's work, KKT checks computed (solves on a
   support), in each order of its two readings of ``q``
   (``LassoCertificate(readings=...)``), without the checks it keeps
   (``kept=0``) and at other budgets of corrections per reading
   (``corrections``), through the engine's ``certificate`` options, with the
   iterations, corrections and the fits' total time, over the first five
   ``--speed`` sets at five alphas.

5. ``--speed``: measure 2 alone over every regression set that ships with
   scikit-learn (diabetes, linnerud's first target) and generated ones up to
   1e6 rows, at ``alpha = 0.1`` and ``0.01`` of the smallest alpha that zeroes every
   coefficient (issue 14), against the fastest of scikit-learn's solvers in
   each repeat: ``Lasso`` (coordinate descent on ``X``), ``Lasso(precompute=True)``
   (on the Gram matrix; each at its loosest tol reaching the target) and
   ``LassoLars`` (exact; where it reaches the target). Each timed fit follows
   untimed fits of the same estimator for at least ``--warm-seconds`` (0.2 s;
   0: one fit, the protocol of 2026-11-27), as in bench_logistic.py
   (``untimed_fits``: no fit runs in another solver's wake, nor in a fresh
   process's first fits); ``--cold`` for alternation alone, the protocol
   before 2026-11-27.

6. ``--memory``: the peak memory (``tracemalloc``) of a VANLassoRegressor and a
   VANElasticNet fit on a generated 1e6 x 20 design.

Run: python benchmarks/bench_lasso.py [--quick] [--plot FILE]
     python benchmarks/bench_lasso.py --speed [--quick] [--repeats 7] [--cold] [--warm-seconds 0.2]
     python benchmarks/bench_lasso.py --growth   (the choice of beta_growth="auto")
     python benchmarks/bench_lasso.py --checks
     python benchmarks/bench_lasso.py --growth --corrections 3   (any mode, another budget)
     python benchmarks/bench_lasso.py --checks --undecided-radius 10   (any mode, another cut)
     python benchmarks/bench_lasso.py --memory [--quick]
     python benchmarks/bench_lasso.py --path [--repeats 3]
     python benchmarks/bench_lasso.py --enet-path [--repeats 3]
     python benchmarks/bench_lasso.py --wide [--repeats 3]   (needs celer for its column)
"""

import argparse
import contextlib
import inspect
import time
import warnings

import numpy as np
from bench_logistic import WARM_SECONDS, timed_fit
from sklearn.datasets import (
    load_diabetes,
    load_linnerud,
    make_friedman1,
    make_regression,
    make_sparse_uncorrelated,
)
from sklearn.linear_model import Lasso, LassoLars
from sklearn.preprocessing import StandardScaler
from skvan import VANLassoRegressor
from skvan.expectations import ClosedForm
from skvan.objectives import QuadraticObjective
from skvan.van import BetaBacktrack, MeanContraction, Minibatches, ObjectiveDecrease, VANSolver

TARGET = 1e-3


def synthetic(n, p, k, seed=0):
    """Correlated Gaussian features (a random mixing of strength 0.3), ``k``
    nonzero coefficients of size 0.5-2 with random signs, unit noise, intercept 3."""
    rng = np.random.default_rng(seed)
    mix = rng.standard_normal((p, p)) * np.sqrt(0.3 / p)
    X = rng.standard_normal((n, p)) + rng.standard_normal((n, p)) @ mix
    w = np.zeros(p)
    idx = rng.choice(p, k, replace=False)
    w[idx] = rng.choice([-1, 1], k) * rng.uniform(0.5, 2.0, k)
    return X, X @ w + 3.0 + rng.standard_normal(n)


def datasets(quick):
    X, y = load_diabetes(return_X_y=True)
    yield "diabetes (442 x 10)", StandardScaler().fit_transform(X), y, 1.0
    n = 20_000 if quick else 100_000
    X, y = synthetic(n, 100, 10)
    yield f"synthetic ({n} x 100, 10 nonzero)", X, y, 0.1
    X, y = synthetic(20_000, 200, 20, seed=1)
    yield "synthetic (20000 x 200, 20 nonzero)", X, y, 0.1


def speed_datasets(quick):
    """``(name, X, y)`` for ``--speed``: the bundled regression sets, standardised,
    and generated ones."""
    X, y = load_diabetes(return_X_y=True)
    yield "diabetes (442 x 10)", StandardScaler().fit_transform(X), y
    X, Y = load_linnerud(return_X_y=True)
    yield "linnerud weight (20 x 3)", StandardScaler().fit_transform(X), Y[:, 0]
    X, y = make_friedman1(2_000, 10, noise=1.0, random_state=0)
    yield "friedman1 (2000 x 10)", X, y
    X, y = make_sparse_uncorrelated(5_000, 30, random_state=0)
    yield "sparse_uncorrelated (5000 x 30)", X, y
    X, y = synthetic(20_000, 200, 20, seed=1)
    yield "synthetic (20000 x 200, 20 nonzero)", X, y
    for n, p in ((20_000, 100), (100_000, 20)) if quick else ((100_000, 100), (1_000_000, 20)):
        X, y = make_regression(n, p, n_informative=p // 5, noise=10.0, random_state=0)
        yield f"make_regression ({n} x {p})", X, y


def speed_peers(X, y, alpha, ref):
    """scikit-learn's Lasso solvers at TARGET: ``{name: estimator}``, ``Lasso`` and
    ``Lasso(precompute=True)`` at their loosest tol reaching it, ``LassoLars``
    where its exact path does (a solver that does not is left out)."""
    peers = {}
    for name, params in (("Lasso", {}), ("Gram", {"precompute": True})):
        try:
            tol = lasso_at_target(X, y, alpha, ref, **params)
        except RuntimeError:
            continue
        peers[name] = Lasso(alpha=alpha, tol=tol, max_iter=100_000, **params)
    lars = LassoLars(alpha=alpha)
    if rel_err(lars.fit(X, y).coef_, ref) <= TARGET:
        peers["Lars"] = lars
    return peers


def speed_table(quick, repeats, warm_seconds=WARM_SECONDS):
    """Wall time of VANLassoRegressor (defaults) over the fastest of scikit-learn's
    solvers at TARGET in each repeat (:func:`speed_peers`), medians of
    alternating repeats, each timed fit after untimed ones of the same estimator
    for at least ``warm_seconds`` (None: none; bench_logistic.py's ``timed_fit``)."""
    warm = "" if warm_seconds is None else f", each timed fit after {warm_seconds:g} s of its own"
    print(f"Wall time at relative error <= {TARGET:g}, medians of {repeats} alternating repeats"
          f"{warm}"
          "; alpha as a fraction of alpha_max;\nLasso: coordinate descent on X, Gram: "
          "Lasso(precompute=True), Lars: LassoLars (- where it misses the target); "
          "ratio: VAN over the fastest\n")
    print(f"{'dataset':<38}{'alpha/max':>10}{'Lasso tol':>10}{'Lasso ms':>9}{'Gram ms':>8}"
          f"{'Lars ms':>8}{'VAN ms':>8}{'iter':>5}{'corr':>5}{'VAN err':>9}{'ratio':>7}")
    for name, X, y in speed_datasets(quick):
        alpha_max = np.max(np.abs((X - X.mean(0)).T @ (y - y.mean()))) / len(y)
        for fraction in (0.1, 0.01):
            alpha = fraction * alpha_max
            ref = Lasso(alpha=alpha, tol=1e-12, max_iter=100_000).fit(X, y).coef_
            peers = speed_peers(X, y, alpha, ref)
            van = VANLassoRegressor(alpha=alpha)
            times = {peer: [] for peer in peers}
            t_van = []
            for _ in range(repeats):
                for peer, estimator in peers.items():
                    times[peer].append(timed_fit(estimator, X, y, warm_seconds))
                t_van.append(timed_fit(van, X, y, warm_seconds))
            fastest = np.min([times[peer] for peer in times], axis=0)
            cells = "".join(f"{1e3 * np.median(times[peer]):>{width}.1f}" if peer in times
                            else f"{'-':>{width}}"
                            for peer, width in (("Lasso", 9), ("Gram", 8), ("Lars", 8)))
            tol = f"{peers['Lasso'].tol:>10.0e}" if "Lasso" in peers else f"{'-':>10}"
            print(f"{name:<38}{fraction:>10g}{tol}{cells}"
                  f"{1e3 * np.median(t_van):>8.1f}{van.n_iter_:>5d}{van.n_corrections_:>5d}"
                  f"{rel_err(van.coef_, ref):>9.1e}"
                  f"{np.median(np.array(t_van) / fastest):>7.2f}", flush=True)


def memory_table(quick):
    """Peak memory traced (``tracemalloc``: numpy's allocations) while fitting
    VANLassoRegressor and VANElasticNet on a generated design, against the
    design's own size."""
    import tracemalloc

    from skvan import VANElasticNet

    n = 100_000 if quick else 1_000_000
    X, y = make_regression(n, 20, n_informative=4, noise=10.0, random_state=0)
    print(f"Peak memory of a fit on {n} x 20 (X: {X.nbytes / 2**20:.0f} MB)\n")
    for Estimator in (VANLassoRegressor, VANElasticNet):
        Estimator(alpha=1.0).fit(X[:1000], y[:1000])  # imports and caches, not counted
        tracemalloc.start()
        Estimator(alpha=1.0).fit(X, y)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        print(f"  {Estimator.__name__:<20}{peak / 2**20:8.0f} MB")


def rel_err(coef, ref):
    return float(np.max(np.abs(coef - ref)) / np.max(np.abs(ref)))


# -- trajectories ---------------------------------------------------------------------
def van_trajectory(X, y, alpha, ref, max_passes, batch_size=None):
    """(passes, error of the mean) after each VAN iteration, run for ``max_passes``."""
    est = VANLassoRegressor(alpha=alpha, batch_size=batch_size, random_state=0)
    est.covariance_ = "full"
    settings = est._settings()
    linear = est._engine().rows_objective(est._design(X), y, np.ones(len(y)), alpha)
    scale = linear.column_scale()
    linear = linear.reparametrised(scale)
    full = batch_size is None
    f = QuadraticObjective.from_linear(linear) if full else linear
    family = settings.initial_family(linear)
    p = X.shape[1]
    curve = []

    def record(solver):
        curve.append((solver.n_data_passes, rel_err((solver.family.mean / scale)[:p], ref)))
        if solver.n_data_passes >= max_passes:
            raise StopIteration

    # tol=0: the raw mean runs for the whole budget (it stops only if it stops moving).
    # Minibatches: the estimator's parts (the rows remembered, their schedule and step).
    expectation, schedule, step = settings.solver_parts(
        f, "vo", ClosedForm() if full else None,
        step=BetaBacktrack(ObjectiveDecrease(), memory=True) if full else None)
    VANSolver(f, expectation, family, objective="vo", schedule=schedule, step=step,
              stop=MeanContraction(0.0), batches=None if full else Minibatches(batch_size),
              max_iter=10**6, random_state=0, callback=record).solve()
    return np.array(curve)


def iterative_ridge(G, b, strength, n_iter, floor=1e-12):
    """The paper's baseline: each iteration a ridge solve with weights lambda / |theta|."""
    theta = np.linalg.solve(G + 1e-8 * np.trace(G) / len(b) * np.eye(len(b)), b)
    out = []
    for _ in range(n_iter):
        D = strength / np.maximum(np.abs(theta), floor)
        theta = np.linalg.solve(G + np.diag(D), b)
        out.append(theta.copy())
    return out


def gram(X, y):
    Xd = np.hstack([X, np.ones((len(y), 1))])
    return Xd.T @ Xd, Xd.T @ y


def ridge_trajectory(X, y, alpha, ref, n_iter):
    G, b = gram(X, y)
    strength = np.r_[np.full(X.shape[1], alpha * len(y)), 0.0]
    return np.array([(t + 1, rel_err(th[:-1], ref))
                     for t, th in enumerate(iterative_ridge(G, b, strength, n_iter))])


def cd_trajectory(X, y, alpha, ref, n_epochs):
    out = []
    for k in range(1, n_epochs + 1):
        est = Lasso(alpha=alpha, max_iter=k, tol=0.0).fit(X, y)
        out.append((k, rel_err(est.coef_, ref)))
    return np.array(out)


# -- timing ---------------------------------------------------------------------------
def timed(fn):
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def lasso_at_target(X, y, alpha, ref, **params):
    """The loosest tol in 1e-1, 1e-2, ... at which ``Lasso(**params)`` reaches TARGET."""
    for tol in 10.0 ** -np.arange(1, 13):
        est = Lasso(alpha=alpha, tol=tol, max_iter=100_000, **params).fit(X, y)
        if rel_err(est.coef_, ref) <= TARGET:
            return tol
    raise RuntimeError("Lasso did not reach the target accuracy")


def ridge_to_target(X, y, alpha, ref, max_iter=2000):
    """Iterations of iterative ridge to the target (None if not within ``max_iter``),
    and the time of that many iterations including forming the Gram matrix."""
    strength = np.r_[np.full(X.shape[1], alpha * len(y)), 0.0]
    errors = [rel_err(th[:-1], ref) for th in iterative_ridge(*gram(X, y), strength, max_iter)]
    reached = [k for k, e in enumerate(errors, 1) if e <= TARGET]
    if not reached:
        return None, np.nan, errors[-1]
    n_iter = reached[0]
    t, _ = timed(lambda: iterative_ridge(*gram(X, y), strength, n_iter))
    return n_iter, t, errors[n_iter - 1]


def growth_sweep(growths=(1.5, 2.0, 4.0, 8.0, 16.0)):
    """Total iterations, corrections and wrong answers (relative error > 1e-6 or a
    different support) of VANLassoRegressor over a range of problems, per growth."""
    X, y = load_diabetes(return_X_y=True)
    problems = [(StandardScaler().fit_transform(X), y, a) for a in (0.01, 0.1, 1, 5, 20)]
    for n, p, k, seed, alphas in [(20_000, 200, 20, 1, (0.01, 0.1, 0.5)),
                                  (20_000, 50, 5, 2, (0.01, 0.1, 0.5)),
                                  (60, 200, 5, 3, (0.05, 0.2))]:
        Xs, ys = synthetic(n, p, k, seed)
        problems += [(Xs, ys, a) for a in alphas]
    Xs, ys = synthetic(2000, 30, 10, seed=4)
    problems += [(Xs * np.logspace(-3, 3, 30), ys, a) for a in (0.01, 0.1)]  # scales 1e-3..1e3
    refs = [Lasso(alpha=a, tol=1e-12, max_iter=100_000).fit(X, y).coef_ for X, y, a in problems]
    print(f"{len(problems)} problems: diabetes (5 alphas), synthetic 20000x200, 20000x50, "
          "60x200 (p > n), 2000x30 with feature scales 1e-3..1e3\n")
    print(f"{'growth':>7}{'iterations':>12}{'corrections':>13}{'wrong':>7}{'seconds':>9}")
    for g in growths:
        iters = corrections = wrong = 0
        start = time.perf_counter()
        for (X, y, a), ref in zip(problems, refs):
            van = VANLassoRegressor(alpha=a, beta_growth=g).fit(X, y)
            iters, corrections = iters + van.n_iter_, corrections + van.n_corrections_
            wrong += rel_err(van.coef_, ref) > 1e-6 or not np.array_equal(van.coef_ != 0, ref != 0)
        print(f"{g:>7g}{iters:>12d}{corrections:>13d}{wrong:>7d}{time.perf_counter() - start:>9.2f}")


def path_datasets():
    """``(name, X, y)`` for ``--path``: diabetes, the bundled-shape generators of
    ``--speed``, a correlated set, and three with more features than rows."""
    X, y = load_diabetes(return_X_y=True)
    yield "diabetes 442 x 10", X, y
    X, y = synthetic(2000, 50, 10, seed=5)
    yield "synthetic 2000 x 50", X, y
    X, y = make_friedman1(2_000, 10, noise=1.0, random_state=0)
    yield "friedman1 2000 x 10", X, y
    X, y = make_sparse_uncorrelated(5_000, 30, random_state=0)
    yield "sparse_uncorrelated 5000 x 30", X, y
    X, y = make_regression(20_000, 100, n_informative=10, noise=5.0, random_state=0)
    yield "make_regression 20000 x 100", X, y
    X, y = synthetic(100, 300, 10, seed=7)
    yield "synthetic 100 x 300 (p > n)", X, y
    X, y = make_regression(100, 400, n_informative=20, noise=10.0, random_state=3)
    yield "make_regression 100 x 400 (p > n)", X, y
    X, y = synthetic(200, 1000, 20, seed=12)
    yield "synthetic 200 x 1000 (p > n)", X, y


def path_comparison(repeats):
    """VANLassoCV vs LassoCV (100 alphas, 5 folds) and the warm-start saving."""
    from sklearn.linear_model import LassoCV
    from sklearn.model_selection import KFold

    from skvan import VANLassoCV, van_lasso_path

    cv = KFold(5, shuffle=True, random_state=0)
    print("VANLassoCV vs LassoCV: 100 alphas, 5 folds (minima of alternating repeats, "
          "and the median of their ratios)\n")
    print(f"{'data':>28}{'VAN s':>9}{'sklearn s':>11}{'ratio':>8}{'median':>8}  alpha_ equal   "
          f"path iterations warm / cold")
    for name, A, b in path_datasets():
        times = {"van": [], "ref": []}
        for _ in range(repeats):
            t, van = timed(lambda: VANLassoCV(alphas=100, cv=cv).fit(A, b))
            times["van"].append(t)
            t, ref = timed(lambda: LassoCV(alphas=100, cv=cv).fit(A, b))
            times["ref"].append(t)
        # alpha_ is compared with LassoCV's solved tightly: at its default tol the
        # held-out errors of neighbouring alphas can swap (make_regression).
        tight = LassoCV(alphas=100, cv=cv, tol=1e-12, max_iter=1_000_000).fit(A, b)
        Ac, bc = A - A.mean(axis=0), b - b.mean()
        alphas, _, _, warm = van_lasso_path(Ac, bc, n_alphas=100, return_n_iter=True)
        cold = sum(VANLassoRegressor(alpha=a, fit_intercept=False).fit(Ac, bc).n_iter_ for a in alphas)
        tv, tr = min(times["van"]), min(times["ref"])
        median = float(np.median(np.array(times["van"]) / np.array(times["ref"])))
        print(f"{name:>28}{tv:>9.3f}{tr:>11.3f}{tv / tr:>8.1f}{median:>8.1f}  "
              f"{str(van.alpha_ == tight.alpha_):>12}"
              f"   {int(np.sum(warm))} / {int(cold)}")


def wide_datasets():
    """``(name, X, y)`` for ``--wide``: collinear problems with as many columns as
    rows or more (standardised columns, centred ``y``), where coefficients are
    not unique and only the objective can be compared."""
    rng = np.random.default_rng(0)
    F = rng.standard_normal((2000, 400))  # 400 factors, 5 near-duplicate columns each
    X = np.repeat(F, 5, axis=1) + 0.01 * rng.standard_normal((2000, 2000))
    w = np.zeros(400)
    w[rng.choice(400, 40, replace=False)] = rng.choice([-1, 1], 40) * rng.uniform(0.5, 2, 40)
    yield "groups of 5 near-duplicates 2000 x 2000", X, F @ w + rng.standard_normal(2000)
    for rank, k, noise, seed in ((60, 100, 0.3, 1), (200, 600, 0.2, 3)):
        rng = np.random.default_rng(seed)
        X = (rng.standard_normal((2000, rank)) @ rng.standard_normal((rank, 2200)) / np.sqrt(rank)
             + noise * rng.standard_normal((2000, 2200)))
        beta = np.zeros(2200)
        beta[rng.choice(2200, k, replace=False)] = rng.standard_normal(k)
        yield f"factor model rank {rank}, {k} true 2000 x 2200", X, X @ beta + rng.standard_normal(2000)
    rng = np.random.default_rng(2)
    Z = rng.standard_normal((500, 10_001))
    X = np.sqrt(0.5) * (Z[:, :-1] + Z[:, 1:])
    w = np.zeros(10_000)
    w[rng.choice(10_000, 20, replace=False)] = rng.choice([-1, 1], 20) * rng.uniform(0.5, 2, 20)
    yield "neighbour-correlated 500 x 10000", X, X @ w + rng.standard_normal(500)


def lasso_objective(X, y, coefs, alphas):
    """``1/(2n) ||y - X w||^2 + alpha ||w||_1`` at each column of ``coefs``."""
    residual = y[:, None] - X @ coefs
    return 0.5 * np.mean(residual**2, axis=0) + alphas * np.abs(coefs).sum(axis=0)


def matched_tol(run, X, y, alphas, best, target=1e-6, budget=120.0):
    """The loosest of tol = 1e-4, 1e-5, ... 1e-10 at which ``run(tol)`` (coefficients
    per alpha) is within ``target`` of the ``best`` objective at every alpha:
    ``(tol, its objectives, reached)``. A run longer than ``budget`` seconds ends
    the search (``reached`` False: the peer did not get there in that time)."""
    for tol in 10.0 ** -np.arange(4, 11):
        seconds, coefs = timed(lambda: run(tol))
        objective = lasso_objective(X, y, coefs, alphas)
        if np.max((objective - best) / best) <= target:
            return tol, objective, True
        if seconds > budget:
            break
    return tol, objective, False


def wide_paths(repeats, n_alphas=30):
    """van_lasso_path against lasso_path and celer_path, and VANLassoCV against
    LassoCV, on wide collinear data: ``n_alphas`` down to ``1e-2 alpha_max``, each
    peer at the loosest tol reaching a 1e-6 relative objective gap at every alpha."""
    from sklearn.linear_model import LassoCV, lasso_path
    from sklearn.model_selection import KFold

    from skvan import VANLassoCV, van_lasso_path

    try:
        from celer import celer_path
    except ImportError:  # a benchmarks-only extra
        celer_path = None
    cv = KFold(5, shuffle=True, random_state=0)
    print(f"Lasso paths on wide collinear data: {n_alphas} alphas to 1e-2 alpha_max; peers at "
          "the loosest tol reaching a 1e-6 relative objective gap at every alpha; minima of "
          f"{repeats} alternating repeats (s)\n")
    print(f"{'data':<42}{'VAN':>7}{'lasso_path':>11}{'tol':>7}{'ratio':>7}{'celer':>7}{'tol':>7}"
          f"{'ratio':>7}{'VAN CV':>8}{'LassoCV':>8}{'ratio':>7}  alpha_ equal  VAN gap")
    for name, X, y in wide_datasets():
        X = (X - X.mean(axis=0)) / X.std(axis=0)
        y = y - y.mean()
        alpha_max = np.max(np.abs(X.T @ y)) / len(y)
        alphas = np.geomspace(alpha_max, 1e-2 * alpha_max, n_alphas)
        van = van_lasso_path(X, y, alphas=alphas)[1]
        best = lasso_objective(X, y, van, alphas)
        runs = {"lasso_path": lambda tol: lasso_path(X, y, alphas=alphas, tol=tol)[1]}
        if celer_path is not None:
            runs["celer"] = lambda tol: celer_path(X, y, "lasso", alphas=alphas, tol=tol)[1]
        tols = {key: matched_tol(run, X, y, alphas, best) for key, run in runs.items()}
        times = {key: [] for key in ("VAN", *runs, "VAN CV", "LassoCV")}
        for _ in range(repeats):
            times["VAN"].append(timed(lambda: van_lasso_path(X, y, alphas=alphas))[0])
            for key, run in runs.items():
                times[key].append(timed(lambda: run(tols[key][0]))[0])
                if not tols[key][2]:
                    times[key][-1] = -times[key][-1]  # did not reach the target: at least
            t, van_cv = timed(lambda: VANLassoCV(alphas=alphas, cv=cv).fit(X, y))
            times["VAN CV"].append(t)
            # LassoCV at lasso_path's matched tol (its default where none matched:
            # then a lower bound of the matched time, marked).
            cv_tol = tols["lasso_path"][0] if tols["lasso_path"][2] else 1e-4
            t, ref_cv = timed(lambda: LassoCV(alphas=alphas, cv=cv, tol=cv_tol).fit(X, y))
            times["LassoCV"].append(t)
        t = {key: min(np.abs(values)) for key, values in times.items()}

        def cells(key, width):
            """Time, tol and VAN's ratio; '>' where the peer missed the target."""
            if key not in t:
                return f"{'-':>{width}}{'-':>7}{'-':>7}"
            more = "" if tols[key][2] else ">"
            return (f"{more + format(t[key], '.2f'):>{width}}{tols[key][0]:>7.0e}"
                    f"{('<' if more else '') + format(t['VAN'] / t[key], '.2f'):>7}")

        # The VAN path's objective against the best any peer reached at each alpha.
        floor = np.minimum(best, *(objective for _, objective, _ in tols.values()))
        print(f"{name:<42}{t['VAN']:>7.2f}{cells('lasso_path', 11)}{cells('celer', 7)}"
              f"{t['VAN CV']:>8.2f}{('' if tols['lasso_path'][2] else '>') + format(t['LassoCV'], '.2f'):>8}"
              f"{t['VAN CV'] / t['LassoCV']:>7.2f}  {str(van_cv.alpha_ == ref_cv.alpha_):>12}"
              f"  {np.max((best - floor) / floor):.0e}", flush=True)


@contextlib.contextmanager
def engine_options(**options):
    """Every VANLassoRegressor's engine (:class:`skvan.van.LassoSolver`) built with
    ``options`` (its parameters) while the block runs."""
    make = VANLassoRegressor._engine

    def engine(self):
        solver = make(self)
        for name, value in options.items():
            setattr(solver, name, value)
        return solver

    VANLassoRegressor._engine = engine
    try:
        yield
    finally:
        VANLassoRegressor._engine = make


def certificate_checks():
    """KKT checks, iterations and corrections of VANLassoRegressor (defaults) in
    each order of the certificate's readings, and with the first iteration's
    reading (no distance yet) replaced by the empty support: an active set grown
    from nothing instead of corrected from ``q``'s first step."""
    from skvan.sparse._kkt import _KKTCheck
    from skvan.van import LassoCertificate

    check, counted = _KKTCheck.__call__, []

    def counting(self, *args):
        counted.append(1)
        return check(self, *args)

    defaults = inspect.signature(LassoCertificate).parameters
    default, budget = defaults["readings"].default, defaults["corrections"].default
    read = LassoCertificate._read

    def empty_first(self, family):
        if self.distance != np.inf:
            return read(self, family)
        support = np.asarray(self._check.free).copy()
        certified = self._certify(support, np.zeros(support.size))
        if certified is not None:
            self.slack, self._certified = 0.0, (family.mean.copy(), *certified)
        return certified is not None

    problems = [(X, y) for _, X, y in speed_datasets(True)][:5]
    print("The certificate's readings: totals over 5 sets x 5 alphas (0.3 to 0.001 alpha_max)\n")
    print(f"{'order':<36}{'budget':>7}{'KKT checks':>11}{'iterations':>11}{'corrections':>12}"
          f"{'ms':>8}")
    _KKTCheck.__call__ = counting
    runs = [(default, True, budget), (default[::-1], True, budget), (default, False, budget)]
    runs += [(default, True, b) for b in (3, 6, 10) if b != budget]
    runs += [(("empty",) + default, True, budget)]
    try:
        for order, keep, corrections_budget in runs:
            LassoCertificate._read = empty_first if "empty" in order else read
            options = dict(readings=tuple(r for r in order if r != "empty"),
                           corrections=corrections_budget)
            if not keep:
                options["kept"] = 0
            counted.clear()
            iters = corrections = 0
            seconds = 0.0
            with engine_options(certificate=options):
                for X, y in problems:
                    alpha_max = np.max(np.abs((X - X.mean(0)).T @ (y - y.mean()))) / len(y)
                    for fraction in (0.3, 0.1, 0.03, 0.01, 0.001):
                        t, van = timed(lambda: VANLassoRegressor(alpha=fraction * alpha_max).fit(X, y))
                        iters, corrections = iters + van.n_iter_, corrections + van.n_corrections_
                        seconds += t
            name = " then ".join(order) + ("" if keep else ", no checks kept")
            print(f"{name:<36}{corrections_budget:>7}{len(counted):>11}{iters:>11}{corrections:>12}"
                  f"{1e3 * seconds:>8.1f}")
    finally:
        _KKTCheck.__call__, LassoCertificate._read = check, read


def enet_path_comparison(repeats, l1_ratio=0.5):
    """VANElasticNetCV vs ElasticNetCV (100 alphas, 5 folds, one l1_ratio)."""
    from sklearn.linear_model import ElasticNetCV
    from sklearn.model_selection import KFold

    from skvan import VANElasticNetCV

    cv = KFold(5, shuffle=True, random_state=0)
    print(f"VANElasticNetCV vs ElasticNetCV: l1_ratio={l1_ratio}, 100 alphas, 5 folds "
          "(minimum of alternating repeats)\n")
    print(f"{'data':>30}{'VAN s':>9}{'sklearn s':>11}{'ratio':>8}  alpha_ equal (1e-12)")
    for name, A, b in path_datasets():
        times = {"van": [], "ref": []}
        for _ in range(repeats):
            t, van = timed(lambda: VANElasticNetCV(l1_ratio=l1_ratio, alphas=100, cv=cv).fit(A, b))
            times["van"].append(t)
            t, _ = timed(lambda: ElasticNetCV(l1_ratio=l1_ratio, alphas=100, cv=cv).fit(A, b))
            times["ref"].append(t)
        tight = ElasticNetCV(l1_ratio=l1_ratio, alphas=100, cv=cv, tol=1e-12,
                             max_iter=1_000_000).fit(A, b)
        tv, tr = min(times["van"]), min(times["ref"])
        # The grids are scikit-learn's to the bit (the same arithmetic); the
        # comparison allows 1e-12 all the same, so that it reads the choice only.
        same = bool(np.isclose(van.alpha_, tight.alpha_, rtol=1e-12, atol=0))
        print(f"{name:>30}{tv:>9.2f}{tr:>11.3f}{tv / tr:>8.1f}  {str(same):>12}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="20,000 rows instead of 100,000")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--passes", type=int, default=60, help="length of the curves")
    parser.add_argument("--plot", default=None, help="save the error curves to this PNG")
    parser.add_argument("--growth", action="store_true",
                        help="only compare beta_growth values over 15 problems")
    parser.add_argument("--path", action="store_true", help="only VANLassoCV against LassoCV")
    parser.add_argument("--wide", action="store_true",
                        help="only the paths and CV on wide collinear data (with celer_path)")
    parser.add_argument("--checks", action="store_true",
                        help="only the certificate's KKT checks in each order of its readings "
                             "(and with the first reading the empty support)")
    parser.add_argument("--enet-path", action="store_true",
                        help="only VANElasticNetCV against ElasticNetCV")
    parser.add_argument("--speed", action="store_true",
                        help="only the wall-time ratio, over more datasets (issue 14)")
    parser.add_argument("--cold", action="store_true",
                        help="--speed without an untimed fit of the same estimator before "
                             "each timed one")
    parser.add_argument("--warm-seconds", type=float, default=WARM_SECONDS,
                        help="--speed: untimed fits of an estimator before each timed one "
                             "last at least this long (0: one fit)")
    parser.add_argument("--memory", action="store_true",
                        help="only the peak memory of a fit on 1e6 x 20 (--quick: 1e5 x 20)")
    parser.add_argument("--corrections", type=int, default=None,
                        help="the certificate's corrections per reading (the engine's "
                             "certificate={'corrections': N})")
    parser.add_argument("--undecided-radius", type=float, default=None,
                        help="the longest move, in sds of q, of a coordinate whose sign q "
                             "has not decided (the engine's undecided_radius)")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    options = {}
    if args.corrections is not None:
        options["certificate"] = {"corrections": args.corrections}
    if args.undecided_radius is not None:
        options["undecided_radius"] = args.undecided_radius
    with engine_options(**options):
        return run(args)


def run(args):
    """The part of the benchmark ``args`` names."""
    if args.speed:
        return speed_table(args.quick, args.repeats, None if args.cold else args.warm_seconds)
    if args.memory:
        return memory_table(args.quick)
    if args.growth:
        return growth_sweep()
    if args.path:
        return path_comparison(args.repeats)
    if args.wide:
        return wide_paths(args.repeats)
    if args.enet_path:
        return enet_path_comparison(args.repeats)
    if args.checks:
        return certificate_checks()

    curves, rows = {}, []
    for name, X, y, alpha in datasets(args.quick):
        ref = Lasso(alpha=alpha, tol=1e-12, max_iter=100_000).fit(X, y).coef_
        batch = max(32, len(y) // 100)
        curves[name] = {
            "VAN": van_trajectory(X, y, alpha, ref, args.passes),
            f"sVAN (batch {batch})": van_trajectory(X, y, alpha, ref, args.passes, batch),
            "iterative ridge": ridge_trajectory(X, y, alpha, ref, args.passes),
            "Lasso (CD)": cd_trajectory(X, y, alpha, ref, args.passes),
        }
        tol = lasso_at_target(X, y, alpha, ref)
        lasso = Lasso(alpha=alpha, tol=tol, max_iter=100_000)
        van = VANLassoRegressor(alpha=alpha)
        svan = VANLassoRegressor(alpha=alpha, batch_size=batch, random_state=0)
        t_sk, t_van, t_svan = [], [], []
        for _ in range(args.repeats):
            t_sk.append(timed(lambda: lasso.fit(X, y))[0])
            t_van.append(timed(lambda: van.fit(X, y))[0])
            t_svan.append(timed(lambda: svan.fit(X, y))[0])
        ridge_iter, t_ridge, ridge_err = ridge_to_target(X, y, alpha, ref)
        rows.append((name, alpha, tol, np.median(t_sk), np.median(t_van), van.n_iter_,
                     van.n_corrections_, rel_err(van.coef_, ref),
                     np.median(np.array(t_van) / np.array(t_sk)),
                     np.median(t_svan), svan.n_iter_ * batch / len(y), rel_err(svan.coef_, ref),
                     np.median(np.array(t_svan) / np.array(t_sk)), ridge_iter, t_ridge, ridge_err))

    print(f"Error of the mean against passes (relative max error vs Lasso(tol=1e-12)); "
          f"{args.passes} passes")
    checkpoints = sorted({c for c in (1, 2, 5, 10, 20, 40) if c < args.passes} | {args.passes})
    for name, methods in curves.items():
        print(name)
        print(f"  {'passes':<22}" + "".join(f"{c:>9d}" for c in checkpoints))
        for method, curve in methods.items():
            vals = [curve[np.searchsorted(curve[:, 0], c - 1e-9), 1]
                    if curve[-1, 0] >= c - 1e-9 else np.nan for c in checkpoints]
            print(f"  {method:<22}" + "".join(f"{v:>9.1e}" for v in vals))

    print(f"\nWall time at relative error <= {TARGET:g} (medians of {args.repeats} alternating repeats)")
    print(f"{'dataset':<38}{'alpha':>6}{'Lasso tol':>10}{'Lasso ms':>9}{'VAN ms':>8}{'iter':>5}"
          f"{'corr':>5}{'VAN err':>9}{'ratio':>7}{'sVAN ms':>9}{'passes':>7}{'sVAN err':>9}"
          f"{'ratio':>7}{'ridge it':>9}{'ms':>7}")
    for (name, alpha, tol, tsk, tvan, it, corr, err, ratio, tsv, passes, serr, sratio,
         rit, trid, rerr) in rows:
        print(f"{name:<38}{alpha:>6g}{tol:>10.0e}{1e3 * tsk:>9.1f}{1e3 * tvan:>8.1f}{it:>5d}"
              f"{corr:>5d}{err:>9.1e}{ratio:>7.2f}{1e3 * tsv:>9.1f}{passes:>7.2f}{serr:>9.1e}"
              f"{sratio:>7.2f}{rit if rit else '-':>9}{1e3 * trid:>7.1f}")

    if args.plot:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, axes = plt.subplots(1, len(curves), figsize=(5 * len(curves), 4), sharey=True)
        for ax, (name, methods) in zip(axes, curves.items()):
            for method, curve in methods.items():
                ax.semilogy(curve[:, 0], np.maximum(curve[:, 1], 1e-16), label=method)
            ax.axhline(TARGET, color="grey", lw=0.8, ls=":")
            ax.set_title(name, fontsize=10)
            ax.set_xlabel("passes through the data")
        axes[0].set_ylabel("max |theta - theta*| / max |theta*|")
        axes[0].legend()
        fig.tight_layout()
        fig.savefig(args.plot, dpi=120)
        print(f"\nsaved {args.plot}")


if __name__ == "__main__":
    main()
