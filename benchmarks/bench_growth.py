"""How fast the geometric schedule converges, by growth factor (beta_growth).

For VO on the full data the mean step is (g-1)/g of a Newton step; this prints,
for several datasets and C, the iterations VANLogisticRegression needs at its
default tol and the final relative coefficient error against scikit-learn's
newton-cholesky at tol=1e-12. It is how the default beta_growth="auto" (100) was
chosen: run `python benchmarks/bench_growth.py`.
"""

import time
import warnings

import numpy as np
from sklearn.datasets import (
    load_breast_cancer,
    load_digits,
    load_wine,
    make_classification,
)
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import StandardScaler

from skvan import VANLogisticRegression

GROWTHS = (10.0, 30.0, 100.0, 1000.0)


def datasets():
    X, y = load_breast_cancer(return_X_y=True)
    yield "breast_cancer", StandardScaler().fit_transform(X), y
    yield "breast_cancer (raw)", X, y
    X, y = load_digits(return_X_y=True)
    yield "digits 0-4 vs 5-9", StandardScaler().fit_transform(X), (y >= 5).astype(int)
    X, y = load_wine(return_X_y=True)
    yield "wine class 1 vs rest", StandardScaler().fit_transform(X), (y == 1).astype(int)
    X, y = make_classification(20_000, 100, n_informative=30, random_state=0)
    yield "synthetic 20000x100", X, y
    X, y = make_classification(2000, 10, class_sep=3, random_state=1)
    yield "separable-ish 2000x10", X, y


def main():
    warnings.simplefilter("ignore")
    print(f"{'dataset':<24}{'C':>6}  " + "  ".join(f"{'g=%g: iter  err   ms' % g:>24}" for g in GROWTHS))
    for name, X, y in datasets():
        for C in (0.1, 1.0, 100.0):
            ref = LogisticRegression(C=C, solver="newton-cholesky", tol=1e-12, max_iter=1000).fit(X, y)
            cells = []
            for g in GROWTHS:
                start = time.perf_counter()
                van = VANLogisticRegression(C=C, beta_growth=g).fit(X, y)
                ms = 1e3 * (time.perf_counter() - start)
                err = max(np.abs(van.coef_ - ref.coef_).max(), np.abs(van.intercept_ - ref.intercept_).max())
                err /= np.abs(ref.coef_).max()
                cells.append(f"{van.n_iter_[0]:>10d} {err:7.0e} {ms:5.0f}")
            print(f"{name:<24}{C:>6g}  " + "  ".join(cells), flush=True)


if __name__ == "__main__":
    main()
