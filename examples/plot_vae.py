"""
Training a VAE with sVAN-D and sVAG-D: the paper's Figure 2c
============================================================

Khan et al. (2018), Figure 2c: the parameters of a variational auto-encoder
trained by diagonal stochastic VAN against Adam. The VAE here is a small numpy
model (``skvan._vae``: one hidden layer of 50 units in the encoder and in the
decoder, 4 latent dimensions, 7,172 parameters) on scikit-learn's digits; the
loop is the user's, and :class:`skvan.VANOptimizer` is told the minibatch
losses and gradients at its parameter draws:

- sVAN-D: one antithetic pair of draws per minibatch; the diagonal curvature by
  the reparameterisation trick from the two gradients (first order);
- sVAG-D: the same pair, told the sum of the per-example squared gradients as
  the diagonal curvature (Gauss-Newton, as in the paper's VAG);
- Adam with its usual defaults, on the same minibatches and latent draws.

``sigma0``, q's initial standard deviation, is ``1e-3`` for both VAN variants:
its square acts as the first steps' learning rate. ``benchmarks/bench_vae.py``
reports a grid of ``sigma0`` and of Adam's learning rate over 5 seeds.
"""

# %%
import time
import warnings

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

from skvan import VANOptimizer
from skvan._vae import NumpyVAE, adam

X, _ = load_digits(return_X_y=True)
X_train, X_test = train_test_split(X / 16.0, test_size=0.2, random_state=0)
N, BATCH, LATENT, PASSES = len(X_train), 100, 4, 20
vae = NumpyVAE(X.shape[1], n_hidden=50, n_latent=LATENT)
theta0 = vae.init(0)


def minibatches():
    rng = np.random.RandomState(0)
    for _ in range(PASSES):
        for rows in np.array_split(rng.permutation(N), N // BATCH):
            yield X_train[rows]


def train_adam():
    noise, curve, start = np.random.RandomState(1), [], time.perf_counter()

    def record(theta, t):
        if t % (N // BATCH) == 0:
            curve.append((time.perf_counter() - start, vae.test_bound(theta, X_test)))
    adam(lambda theta, b: vae.loss(theta, b, noise.standard_normal((len(b), LATENT)), n_total=N),
         theta0, minibatches(), callback=record)
    return np.array(curve)


def train_van(vag):
    noise, curve, start = np.random.RandomState(1), [], time.perf_counter()
    opt = VANOptimizer(theta0, order=2 if vag else 1, covariance="diag", stochastic=True,
                       n_mc_samples=2, sigma0=1e-3, tol=0.0, max_iter=PASSES + 1, random_state=0)
    for t, batch in enumerate(minibatches(), start=1):
        points = opt.ask()
        eps = noise.standard_normal((len(batch), LATENT))
        parts = [vae.loss(theta, batch, eps, n_total=N, per_example=vag) for theta in points]
        curvature = [[p[2] for p in parts]] if vag else []
        opt.tell([p[0] for p in parts], [p[1] for p in parts], *curvature, fraction=len(batch) / N)
        if t % (N // BATCH) == 0:
            curve.append((time.perf_counter() - start, vae.test_bound(opt.mean, X_test)))
    return np.array(curve)


with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    curves = {"Adam": train_adam(), "sVAN-D": train_van(False), "sVAG-D": train_van(True)}
for name, curve in curves.items():
    print(f"{name:<7} test negative ELBO per image after {PASSES} passes: {curve[-1, 1]:.2f} "
          f"({curve[-1, 0]:.1f} s)")

# %%
# Test bound against passes and against time
# -------------------------------------------
# Each VAN step evaluates two gradients (the antithetic pair), Adam's one: per
# pass VAN costs about twice as much time.
fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
for name, curve in curves.items():
    axes[0].plot(np.arange(1, len(curve) + 1), curve[:, 1], label=name)
    axes[1].plot(curve[:, 0], curve[:, 1], label=name)
axes[0].set_xlabel("passes over the training images")
axes[1].set_xlabel("seconds")
axes[0].set_ylabel("test negative ELBO per image")
axes[0].set_ylim(24, 45)
axes[0].legend()
fig.tight_layout()
plt.show()
