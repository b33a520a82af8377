"""How Monte Carlo expectations converge to the exact ones as n_mc_samples grows.

For each estimator the reference is the same fit with deterministic
expectations (Gauss-Hermite quadrature for the logistic loss, closed form for
the squared loss). With ``expectation="mc"`` and ``S = n_mc_samples`` draws per
iteration the error of the fitted mean and standard deviations, averaged over
seeds, should fall like ``S^-1/2``: the table prints the errors and the slope of
log(error) against log(S) fitted over all S.

- VI (``objective="vi"``): q keeps the posterior's width, so each iteration's
  estimates carry O(S^-1/2) noise; the fixed point inherits it.
- VO: q collapses onto the optimum, so the sampling noise vanishes with it and
  the MC fit reaches the exact optimum at any S (shown for comparison).

Run: python benchmarks/bench_mc_rate.py [--seeds 10]
"""

import argparse
import warnings

import numpy as np
from sklearn.datasets import load_breast_cancer, load_diabetes
from sklearn.preprocessing import StandardScaler

from skvan import VANLassoRegressor, VANLogisticRegression

SAMPLES = (4, 16, 64, 256, 1024)


def problems():
    X, y = load_breast_cancer(return_X_y=True)
    X = StandardScaler().fit_transform(X)[:, :10]
    yield "logistic vi (breast_cancer, 10 features)", VANLogisticRegression(objective="vi"), X, y, "quadrature"
    yield "logistic vo (breast_cancer, 10 features)", VANLogisticRegression(), X, y, "quadrature"
    X, y = load_diabetes(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    # max_iter=50: with MC the VI steps stay at the noise level and never meet the
    # stopping rule; the exact fit converges in about 10 iterations.
    yield "lasso vi (diabetes)", VANLassoRegressor(objective="vi", max_iter=50), X, y, "exact"


def errors(est, X, y, exact, samples, seeds):
    ref = est.set_params(expectation=exact).fit(X, y)
    ref_mean, ref_sd = np.ravel(ref.coef_).copy(), np.sqrt(_variances(ref))
    out = []
    for S in samples:
        e_mean, e_sd = [], []
        for seed in range(seeds):
            fit = est.set_params(expectation="mc", n_mc_samples=S, random_state=seed).fit(X, y)
            e_mean.append(np.max(np.abs(np.ravel(fit.coef_) - ref_mean)) / np.max(np.abs(ref_mean)))
            e_sd.append(np.max(np.abs(np.sqrt(_variances(fit)) - ref_sd) / np.maximum(ref_sd, 1e-300)))
        out.append((np.mean(e_mean), np.mean(e_sd)))
    return np.array(out)


def _variances(est):
    s = np.asarray(est.sigma_)
    return np.diagonal(s, axis1=-2, axis2=-1).ravel() if s.ndim >= 2 and s.shape[-1] == s.shape[-2] \
        else s.ravel()


def slope(samples, err):
    return np.polyfit(np.log(samples), np.log(np.maximum(err, 1e-300)), 1)[0]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    print(f"relative max error vs deterministic expectations, mean over {args.seeds} seeds\n")
    print(f"{'problem':<44}{'error of':>9}" + "".join(f"{'S=' + str(s):>10}" for s in SAMPLES)
          + f"{'slope':>8}")
    for name, est, X, y, exact in problems():
        err = errors(est, X, y, exact, SAMPLES, args.seeds)
        # Under VO the sd is the width q collapsed to, not an estimate: compare means.
        for k, what in enumerate(("mean",) if " vo " in name else ("mean", "sd")):
            print(f"{name if k == 0 else '':<44}{what:>9}" + "".join(f"{e:>10.1e}" for e in err[:, k])
                  + f"{slope(SAMPLES, err[:, k]):>8.2f}")


if __name__ == "__main__":
    main()
