"""The paper's Figure 2c: a VAE trained by sVAN-D, sVAG-D and Adam.

A one-hidden-layer VAE in numpy (``skvan._vae``: 50 hidden units, 4 latent
dimensions, Bernoulli decoder, 7,172 parameters) on scikit-learn's digits
(pixels / 16, 1,437 training and 360 test images), minibatches of 100, one
latent draw per image. All methods see the same minibatches and latent draws.

- Adam: the usual defaults (lr 1e-3, betas 0.9 / 0.999, eps 1e-8), and lr 3e-3 and
  1e-2 as a check that the default is not a straw man.
- sVAN-D: :class:`skvan.VANOptimizer` with ``covariance="diag"``,
  ``stochastic=True``, one antithetic pair of parameter draws per minibatch,
  first order: the diagonal curvature by the reparameterisation trick
  (Bonnet/Price) from the two gradients.
- sVAG-D: the same, told the sum of the per-example squared gradients (scaled
  to the data) as the diagonal curvature.

``sigma0`` is q's initial standard deviation; its square acts as the first
steps' learning rate (the first mean step is about ``2 sigma0^2`` times the
gradient), so it is reported over a grid like Adam's rate.

Reported: the test negative ELBO per image (10 latent draws per image; lower is
better) after 1, 2, 5, 10, 20 and 40 passes, the number of passes to reach Adam's
(defaults) final value, and seconds per pass; medians over 5 seeds (weight
initialisation and batch order).

Run: python benchmarks/bench_vae.py [--passes 40] [--seeds 5]
"""

import argparse
import time
import warnings

import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

from skvan import VANOptimizer
from skvan._vae import NumpyVAE, adam

BATCH = 100
LATENT = 4


def data():
    X, _ = load_digits(return_X_y=True)
    return train_test_split(X / 16.0, test_size=0.2, random_state=0)


def batches(X, passes, seed):
    rng = np.random.RandomState(seed)
    for _ in range(passes):
        for rows in np.array_split(rng.permutation(len(X)), len(X) // BATCH):
            yield X[rows]


def run_adam(vae, theta0, Xtr, Xte, passes, seed, lr):
    noise = np.random.RandomState(seed + 1000)
    steps = len(Xtr) // BATCH
    curve = []

    def record(theta, t):
        if t % steps == 0:
            curve.append(vae.test_bound(theta, Xte))
    adam(lambda t, b: vae.loss(t, b, noise.standard_normal((len(b), LATENT)), n_total=len(Xtr)),
         theta0, batches(Xtr, passes, seed), lr=lr, callback=record)
    return curve


def run_van(vae, theta0, Xtr, Xte, passes, seed, sigma0, vag):
    noise = np.random.RandomState(seed + 1000)
    steps = len(Xtr) // BATCH
    opt = VANOptimizer(theta0, order=2 if vag else 1, covariance="diag", stochastic=True,
                       n_mc_samples=2, sigma0=sigma0, tol=0.0, max_iter=passes + 1,
                       random_state=seed)
    curve = []
    for t, batch in enumerate(batches(Xtr, passes, seed), start=1):
        if opt.stop:  # diverged, or q stopped moving: the curve ends here
            break
        points = opt.ask()
        eps = noise.standard_normal((len(batch), LATENT))  # shared by the pair
        parts = [vae.loss(theta, batch, eps, n_total=len(Xtr), per_example=vag) for theta in points]
        told = [[p[0] for p in parts], [p[1] for p in parts]] + ([[p[2] for p in parts]] if vag else [])
        opt.tell(*told, fraction=len(batch) / len(Xtr))
        if t % steps == 0:
            curve.append(vae.test_bound(opt.mean, Xte))
    return curve + [np.nan] * (passes - len(curve))


def _cell(value):
    """A table cell: the value, or what happened to the run."""
    if np.isnan(value):
        return f"{'stopped':>10}"
    return f"{'diverged':>10}" if value > 1e4 else f"{value:>10.2f}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--passes", type=int, default=40)
    parser.add_argument("--seeds", type=int, default=5)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    Xtr, Xte = data()
    vae = NumpyVAE(Xtr.shape[1], n_hidden=50, n_latent=LATENT)
    methods = {
        "Adam (defaults)": lambda th, s: run_adam(vae, th, Xtr, Xte, args.passes, s, 1e-3),
        "Adam lr=3e-3": lambda th, s: run_adam(vae, th, Xtr, Xte, args.passes, s, 3e-3),
        "Adam lr=1e-2": lambda th, s: run_adam(vae, th, Xtr, Xte, args.passes, s, 1e-2),
        "sVAN-D sigma0=1e-3": lambda th, s: run_van(vae, th, Xtr, Xte, args.passes, s, 1e-3, False),
        "sVAN-D sigma0=3e-3": lambda th, s: run_van(vae, th, Xtr, Xte, args.passes, s, 3e-3, False),
        "sVAN-D sigma0=1e-2": lambda th, s: run_van(vae, th, Xtr, Xte, args.passes, s, 1e-2, False),
        "sVAG-D sigma0=1e-3": lambda th, s: run_van(vae, th, Xtr, Xte, args.passes, s, 1e-3, True),
        "sVAG-D sigma0=1e-2": lambda th, s: run_van(vae, th, Xtr, Xte, args.passes, s, 1e-2, True),
        "sVAG-D sigma0=1e-1": lambda th, s: run_van(vae, th, Xtr, Xte, args.passes, s, 1e-1, True),
    }
    shown = [p for p in (1, 2, 5, 10, 20, 40, 80) if p <= args.passes]
    print(f"VAE on digits ({vae.n_params} parameters), {args.passes} passes, minibatches of "
          f"{BATCH}; test negative ELBO per image, median over {args.seeds} seeds\n")
    print(f"{'method':<22}" + "".join(f"{'pass ' + str(p):>10}" for p in shown)
          + f"{'to Adam':>9}{'s/pass':>8}")
    reference = None
    for label, method in methods.items():
        curves, seconds = [], 0.0
        for seed in range(args.seeds):
            theta0 = vae.init(seed)
            start = time.perf_counter()
            curves.append(method(theta0, seed))
            seconds += time.perf_counter() - start
        curve = np.median(np.array(curves), axis=0)  # NaN where a run stopped early
        if reference is None:
            reference = curve[-1]
        reached = np.flatnonzero(curve <= reference)
        to_adam = f"{reached[0] + 1:>9d}" if reached.size else f"{'-':>9}"
        print(f"{label:<22}" + "".join(_cell(curve[p - 1]) for p in shown) + to_adam
              + f"{seconds / (args.seeds * args.passes):>8.3f}", flush=True)


if __name__ == "__main__":
    main()
