"""The numpy VAE of the paper's Figure 2c experiment (skvan._vae)."""

import numpy as np

from skvan._vae import NumpyVAE, adam


def _problem():
    rng = np.random.RandomState(0)
    vae = NumpyVAE(6, n_hidden=5, n_latent=2)
    X = rng.uniform(size=(7, 6))
    eps = rng.standard_normal((7, 2))
    theta = vae.init(1) + 0.1 * rng.standard_normal(vae.n_params)  # nonzero biases too
    return vae, X, eps, theta


def test_gradient_by_central_differences():
    """Every parameter, step 1e-6: agreement to 1e-6 relative to the gradient's norm."""
    vae, X, eps, theta = _problem()
    value, grad = vae.loss(theta, X, eps, n_total=70)
    fd = np.empty_like(theta)
    for j in range(vae.n_params):
        e = np.zeros_like(theta)
        e[j] = 1e-6
        fd[j] = (vae.loss(theta + e, X, eps, n_total=70)[0]
                 - vae.loss(theta - e, X, eps, n_total=70)[0]) / 2e-6
    assert np.abs(fd - grad).max() <= 1e-6 * np.linalg.norm(grad)


def test_per_example_squares_sum_the_rows_gradients():
    vae, X, eps, theta = _problem()
    _, grad, squares = vae.loss(theta, X, eps, n_total=70, per_example=True)
    rows = [vae.loss(theta, X[i:i + 1], eps[i:i + 1])[1] for i in range(len(X))]
    np.testing.assert_allclose(grad, 10.0 * np.sum(rows, axis=0), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(squares, 10.0 * np.sum(np.square(rows), axis=0), rtol=1e-12)


def test_the_bound_is_the_elbo_at_the_prior_for_a_silent_encoder():
    """All weights zero: q(z|x) = N(0, I) = p(z) (KL 0) and the decoder outputs
    p = 1/2, so the bound is d log 2 per example."""
    vae = NumpyVAE(6, n_hidden=5, n_latent=2)
    X = np.random.RandomState(0).uniform(size=(4, 6))
    assert np.isclose(vae.test_bound(np.zeros(vae.n_params), X), 6 * np.log(2.0))


def test_adam_decreases_the_bound():
    vae, X, eps, theta = _problem()
    rng = np.random.RandomState(1)
    batches = [X] * 200
    end = adam(lambda t, b: vae.loss(t, b, rng.standard_normal((len(b), 2))), theta, batches,
               lr=1e-2)
    assert vae.test_bound(end, X) < vae.test_bound(theta, X) - 0.5
