"""``python -m skvan``: VAN next to scikit-learn on the breast cancer data.

Fits :class:`~skvan.VANLogisticRegression` and scikit-learn's
``LogisticRegression(solver="newton-cholesky")`` to the same standardised data,
prints both solutions, their agreement and fit times, then the posterior
standard deviations of the coefficients from ``objective="vi"``.
"""

import time

import numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import StandardScaler

from . import VANLogisticRegression, __version__


def _timed(estimator, X, y, repeats=5):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        estimator.fit(X, y)
        times.append(time.perf_counter() - start)
    return estimator, float(np.median(times))


def main():
    data = load_breast_cancer()
    X = StandardScaler().fit_transform(data.data)
    y = data.target
    C = 1.0
    print(f"skvan {__version__}: Variational Adaptive-Newton on load_breast_cancer "
          f"({X.shape[0]} samples, {X.shape[1]} standardised features), C={C}\n")

    sk, t_sk = _timed(LogisticRegression(C=C, solver="newton-cholesky", tol=1e-8), X, y)
    van, t_van = _timed(VANLogisticRegression(C=C), X, y)
    post, t_post = _timed(VANLogisticRegression(C=C, objective="vi"), X, y)

    err = np.abs(van.coef_ - sk.coef_).max() / np.abs(sk.coef_).max()
    sd = np.sqrt(post.sigma_[0])
    order = np.argsort(-np.abs(sk.coef_[0]))[:8]
    print(f"{'feature':<24}{'sklearn':>10}{'VAN (vo)':>10}{'VAN (vi)':>10}{'post. sd':>10}")
    for j in order:
        print(f"{data.feature_names[j]:<24}{sk.coef_[0, j]:>10.4f}{van.coef_[0, j]:>10.4f}"
              f"{post.coef_[0, j]:>10.4f}{sd[j]:>10.4f}")
    print(f"{'intercept':<24}{sk.intercept_[0]:>10.4f}{van.intercept_[0]:>10.4f}"
          f"{post.intercept_[0]:>10.4f}")
    print(f"\n(8 largest of {X.shape[1]} coefficients shown)")
    print(f"max |coef_VAN - coef_sklearn| / max |coef_sklearn| = {err:.1e}")
    print(f"fit time (median of 5): sklearn newton-cholesky {1e3 * t_sk:.1f} ms, "
          f"VAN vo {1e3 * t_van:.1f} ms ({van.n_iter_[0]} iterations), "
          f"VAN vi {1e3 * t_post:.1f} ms ({post.n_iter_[0]} iterations)")
    print(f"training accuracy: sklearn {sk.score(X, y):.4f}, VAN {van.score(X, y):.4f}")
    print("\n'post. sd' is the posterior standard deviation of each coefficient under the "
          "Gaussian\nvariational posterior (objective='vi', prior N(0, C) on each coefficient).")


if __name__ == "__main__":
    main()
