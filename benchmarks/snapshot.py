"""Save, then compare, what a set of fits computes: a check for refactors.

    python benchmarks/snapshot.py save before.npz     # on the old code
    python benchmarks/snapshot.py compare before.npz  # on the new code

Fits every public estimator in its main configurations (and ``minimize``) on
bundled or generated data and stores their fitted arrays. ``compare`` refits
and prints, per configuration, the largest relative difference of each array
and whether the iteration counts agree. A refactor that changes no arithmetic
shows differences at round-off (1e-12 or below) and equal counts.
"""

import sys
import warnings

import numpy as np
from sklearn.datasets import (load_breast_cancer, load_diabetes, load_digits, load_wine,
                              make_regression)
from sklearn.preprocessing import StandardScaler

from skvan import (ActiveVANClassifier, VANElasticNet, VANElasticNetCV, VANLassoCV,
                   VANLassoRegressor, VANLogisticRegression, minimize)

ATTRIBUTES = ("coef_", "intercept_", "sigma_", "precision_", "n_iter_", "noise_variance_",
              "alpha_", "l1_ratio_", "mse_path_")


def _data():
    Xb, yb = load_breast_cancer(return_X_y=True)
    Xd, yd = load_digits(return_X_y=True)
    Xr, yr = load_diabetes(return_X_y=True)
    Xw, yw = load_wine(return_X_y=True)
    Xs, ys = make_regression(2000, 60, n_informative=8, noise=5.0, random_state=0)
    return {
        "bc": (StandardScaler().fit_transform(Xb), yb),
        "bc_raw": (Xb, yb),
        "digits3": (StandardScaler().fit_transform(Xd), yd % 3),
        "digits": (StandardScaler().fit_transform(Xd), yd),
        "wine": (StandardScaler().fit_transform(Xw), yw),
        "diabetes": (StandardScaler().fit_transform(Xr), yr),
        "regression": (Xs, ys),
        # Columns spread over 12 decades: the fits rescale them.
        "spread": (Xs[:, :40] * np.logspace(-6, 6, 40), ys),
    }


def _configurations():
    log = VANLogisticRegression
    lasso = VANLassoRegressor
    return [
        ("log-default", "bc", log()),
        ("log-raw", "bc_raw", log()),
        ("log-diag", "bc", log(covariance="diag", max_iter=300, tol=1e-6)),
        ("log-vi", "bc", log(objective="vi")),
        ("log-gn", "bc", log(hessian="gauss_newton")),
        ("log-mc", "bc", log(expectation="mc", random_state=0, max_iter=30)),
        ("log-svan", "bc", log(batch_size=64, random_state=0, max_iter=50)),
        ("log-ovr", "digits3", log(C=0.5)),
        ("multi-default", "digits", log()),
        ("multi-vi", "wine", log(objective="vi")),
        ("multi-vi-digits", "digits", log(objective="vi", C=0.1)),
        ("multi-gn", "wine", log(hessian="gauss_newton")),
        ("multi-diag", "wine", log(covariance="diag", max_iter=300)),
        ("multi-mc", "wine", log(expectation="mc", random_state=0, max_iter=30)),
        ("lasso-default", "diabetes", lasso(alpha=1.0)),
        ("lasso-small-alpha", "diabetes", lasso(alpha=0.01)),
        ("lasso-regression", "regression", lasso(alpha=0.5)),
        ("lasso-diag", "diabetes", lasso(alpha=1.0, covariance="diag")),
        ("lasso-gn", "diabetes", lasso(alpha=1.0, hessian="gauss_newton")),
        ("lasso-quadrature", "diabetes", lasso(alpha=1.0, expectation="quadrature")),
        ("lasso-mc", "diabetes", lasso(alpha=1.0, expectation="mc", random_state=0)),
        ("lasso-vi", "diabetes", lasso(alpha=1.0, objective="vi")),
        ("lasso-svan", "diabetes", lasso(alpha=1.0, batch_size=32, random_state=0, max_iter=200)),
        ("enet-default", "diabetes", VANElasticNet()),
        ("enet-vi", "regression", VANElasticNet(objective="vi")),
        ("enet-positive", "spread", VANElasticNet(positive=True)),
        ("enet-l1", "spread", VANElasticNet(alpha=0.01, l1_ratio=0.9)),
        ("enet-diag", "regression", VANElasticNet(covariance="diag")),
        ("enet-cv", "spread", VANElasticNetCV(l1_ratio=[0.3, 0.8], alphas=20, cv=3)),
        ("lasso-cv", "regression", VANLassoCV(alphas=30, cv=3)),
        ("active", "bc", ActiveVANClassifier(random_state=0, max_iter=20)),
        ("active-bald", "bc", ActiveVANClassifier(query_strategy="bald", random_state=0, max_iter=10)),
    ]


def _streams(data):
    X, y = data["bc"]
    clf = VANLogisticRegression()
    for rows in np.array_split(np.arange(len(y)), 5):
        clf.partial_fit(X[rows], y[rows], classes=[0, 1])
    Xr, yr = data["diabetes"]
    reg = VANLassoRegressor(alpha=1.0)
    for rows in np.array_split(np.arange(len(yr)), 5):
        reg.partial_fit(Xr[rows], yr[rows])
    return [("log-partial", clf), ("lasso-partial", reg)]


def _minimize_runs():
    def rosen(x):
        return float(np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2))

    def rosen_der(x):
        g = np.zeros_like(x)
        g[1:] += 200.0 * (x[1:] - x[:-1] ** 2)
        g[:-1] += -400.0 * x[:-1] * (x[1:] - x[:-1] ** 2) - 2 * (1 - x[:-1])
        return g

    x0 = np.full(4, -1.0)
    runs = {
        "min-zero": minimize(rosen, x0, random_state=0, max_iter=200),
        "min-first": minimize(rosen, x0, jac=rosen_der, random_state=0, max_iter=200),
        "min-shaped": minimize(rosen, x0, fitness_shaping=True, random_state=0, max_iter=200),
        "min-diag": minimize(rosen, x0, jac=rosen_der, covariance="diag", random_state=0,
                             max_iter=200),
    }
    return {name: {"x": r.x, "covariance": r.covariance, "nit": np.array(r.nit),
                   "nfev": np.array(r.nfev)} for name, r in runs.items()}


def compute():
    data = _data()
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fitted = [(name, est.fit(*data[key])) for name, key, est in _configurations()]
        fitted += _streams(data)
        for name, est in fitted:
            out[name] = {a: _array(getattr(est, a)) for a in ATTRIBUTES if hasattr(est, a)}
        out.update(_minimize_runs())
    return out


def _array(value):
    """A fitted attribute as an array (a precision kept as an operator: its matrix)."""
    return np.asarray(value.toarray() if hasattr(value, "toarray") else value)


def _flatten(results):
    return {f"{name}/{key}": value for name, arrays in results.items() for key, value in arrays.items()}


def main(argv):
    if len(argv) != 3 or argv[1] not in ("save", "compare"):
        sys.exit(__doc__)
    flat = _flatten(compute())
    if argv[1] == "save":
        np.savez(argv[2], **flat)
        print(f"saved {len(flat)} arrays to {argv[2]}")
        return
    old = np.load(argv[2])
    width = max(len(k) for k in flat)
    for key in sorted(set(old.files) | set(flat)):
        if key not in old.files or key not in flat:
            print(f"{key:<{width}}  only in {'new' if key in flat else 'old'}")
            continue
        a, b = np.asarray(old[key], dtype=float), np.asarray(flat[key], dtype=float)
        if a.shape != b.shape:
            if a.size != b.size:
                print(f"{key:<{width}}  shape {a.shape} -> {b.shape}")
                continue
            b = b.reshape(a.shape)  # (the same matrix, kept as another form)
        scale = max(float(np.max(np.abs(a))) if a.size else 0.0, 1e-300)
        diff = float(np.max(np.abs(a - b))) / scale if a.size else 0.0
        print(f"{key:<{width}}  {diff:.1e}")


if __name__ == "__main__":
    main(sys.argv)
