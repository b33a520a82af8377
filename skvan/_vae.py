"""A small variational auto-encoder in numpy, for the paper's Figure 2c.

Not part of the public API: the model that ``examples/plot_vae.py``,
``benchmarks/bench_vae.py`` and ``tests/test_vae.py`` train with skvan's
ask/tell optimiser (sVAN-D, sVAG-D) and with Adam.

The model (Kingma and Welling, 2014) on inputs ``x`` in ``[0, 1]^d``:

- encoder ``h = tanh(W1 x + b1)``, ``m = Wm h + bm``, ``log s^2 = Wv h + bv``;
- a draw ``z = m + s e``, ``e ~ N(0, I)`` (the reparameterisation trick);
- decoder ``g = tanh(W2 z + b2)``, Bernoulli logits ``o = W3 g + b3``.

The negative ELBO of one example, for one draw ``e``, is
``sum_j BCE(x_j, o_j) + KL(N(m, s^2) || N(0, I))`` with
``KL = 1/2 sum_k (m_k^2 + s_k^2 - log s_k^2 - 1)``; :meth:`NumpyVAE.loss` sums it
over a minibatch and scales it to the whole data, and returns its gradient by
backpropagation (checked by finite differences in ``tests/test_vae.py``) and,
for VAG, the sum of the per-example gradients squared (per parameter).
"""

import numpy as np

#: Parameter blocks in the flat vector, in order: name and shape as a function
#: of (input dimension d, hidden units h, latent dimension k).
_BLOCKS = (
    ("W1", lambda d, h, k: (h, d)), ("b1", lambda d, h, k: (h,)),
    ("Wm", lambda d, h, k: (k, h)), ("bm", lambda d, h, k: (k,)),
    ("Wv", lambda d, h, k: (k, h)), ("bv", lambda d, h, k: (k,)),
    ("W2", lambda d, h, k: (h, k)), ("b2", lambda d, h, k: (h,)),
    ("W3", lambda d, h, k: (d, h)), ("b3", lambda d, h, k: (d,)),
)


class NumpyVAE:
    """Negative ELBO of a one-hidden-layer VAE as a function of a flat parameter
    vector.

    Parameters
    ----------
    n_inputs : int
        Input dimension ``d``.
    n_hidden : int, default=50
        Hidden units of the encoder and of the decoder.
    n_latent : int, default=4
        Latent dimension.
    """

    def __init__(self, n_inputs, n_hidden=50, n_latent=4):
        self.n_inputs, self.n_hidden, self.n_latent = n_inputs, n_hidden, n_latent
        self.shapes = [(name, shape(n_inputs, n_hidden, n_latent)) for name, shape in _BLOCKS]
        self.n_params = int(sum(np.prod(s) for _, s in self.shapes))

    def unpack(self, theta):
        """The parameter blocks (views into ``theta``) by name."""
        out, start = {}, 0
        for name, shape in self.shapes:
            size = int(np.prod(shape))
            out[name] = theta[start:start + size].reshape(shape)
            start += size
        return out

    def init(self, random_state):
        """Glorot-style initial weights (uniform, ``sqrt(6 / (fan_in + fan_out))``),
        zero biases, as a flat vector."""
        rng = np.random.RandomState(random_state) if not hasattr(random_state, "uniform") \
            else random_state
        theta = np.zeros(self.n_params)
        blocks = self.unpack(theta)
        for name, shape in self.shapes:
            if name.startswith("W"):
                limit = np.sqrt(6.0 / (shape[0] + shape[1]))
                blocks[name][...] = rng.uniform(-limit, limit, size=shape)
        return theta

    def loss(self, theta, X, eps, n_total=None, per_example=False):
        """Negative ELBO of the rows ``X`` (one draw ``eps`` per row), scaled by
        ``n_total / len(X)``, its gradient, and with ``per_example`` the scaled sum
        of the per-example gradients squared.

        Parameters
        ----------
        theta : ndarray of shape (n_params,)
        X : ndarray of shape (m, d)
        eps : ndarray of shape (m, n_latent)
            Standard normal draws of the reparameterisation trick.
        n_total : int or None
            Size of the data ``X`` stands for; None is ``len(X)``.
        per_example : bool, default=False

        Returns
        -------
        value : float
        gradient : ndarray of shape (n_params,)
        squares : ndarray of shape (n_params,)
            Only with ``per_example``.
        """
        P = self.unpack(theta)
        m = X.shape[0]
        scale = (m if n_total is None else n_total) / m
        # forward
        h = np.tanh(X @ P["W1"].T + P["b1"])
        mu = h @ P["Wm"].T + P["bm"]
        logvar = h @ P["Wv"].T + P["bv"]
        s = np.exp(0.5 * logvar)
        z = mu + s * eps
        g = np.tanh(z @ P["W2"].T + P["b2"])
        o = g @ P["W3"].T + P["b3"]
        bce = np.logaddexp(0.0, o) - X * o
        kl = 0.5 * (mu**2 + s**2 - logvar - 1.0)
        value = scale * float(bce.sum() + kl.sum())
        # backward, per example (rows), then summed
        d_o = 1.0 / (1.0 + np.exp(-o)) - X                      # dBCE/do
        d_g = d_o @ P["W3"]
        d_a2 = d_g * (1.0 - g**2)
        d_z = d_a2 @ P["W2"]
        d_mu = d_z + mu
        d_logvar = d_z * eps * 0.5 * s + 0.5 * (s**2 - 1.0)
        d_h = d_mu @ P["Wm"] + d_logvar @ P["Wv"]
        d_a1 = d_h * (1.0 - h**2)
        # (weight gradient as (delta, input) pairs; bias gradient as delta)
        pairs = {"W1": (d_a1, X), "Wm": (d_mu, h), "Wv": (d_logvar, h),
                 "W2": (d_a2, z), "W3": (d_o, g)}
        biases = {"b1": d_a1, "bm": d_mu, "bv": d_logvar, "b2": d_a2, "b3": d_o}
        grad = np.empty(self.n_params)
        squares = np.empty(self.n_params) if per_example else None
        G, S = self.unpack(grad), (self.unpack(squares) if per_example else None)
        for name, (delta, inputs) in pairs.items():
            G[name][...] = scale * delta.T @ inputs
            if per_example:
                S[name][...] = scale * (delta**2).T @ inputs**2
        for name, delta in biases.items():
            G[name][...] = scale * delta.sum(0)
            if per_example:
                S[name][...] = scale * (delta**2).sum(0)
        return (value, grad, squares) if per_example else (value, grad)

    def test_bound(self, theta, X, n_draws=10, random_state=0):
        """The negative ELBO per example on ``X``, averaged over ``n_draws`` draws
        per row (a lower bound on the log-likelihood, negated)."""
        rng = np.random.RandomState(random_state)
        total = 0.0
        for _ in range(n_draws):
            total += self.loss(theta, X, rng.standard_normal((len(X), self.n_latent)))[0]
        return total / (n_draws * len(X))


def adam(loss_grad, theta, batches, lr=1e-3, beta1=0.9, beta2=0.999, eps=1e-8, callback=None):
    """Adam (Kingma and Ba, 2015) with its usual defaults over ``batches``:
    ``loss_grad(theta, batch) -> (value, gradient)``; ``callback(theta, step)``
    after each step. Returns the final ``theta``."""
    m1 = np.zeros_like(theta)
    m2 = np.zeros_like(theta)
    theta = theta.copy()
    for t, batch in enumerate(batches, start=1):
        _, g = loss_grad(theta, batch)
        m1 = beta1 * m1 + (1 - beta1) * g
        m2 = beta2 * m2 + (1 - beta2) * g**2
        theta -= lr * (m1 / (1 - beta1**t)) / (np.sqrt(m2 / (1 - beta2**t)) + eps)
        if callback is not None:
            callback(theta, t)
    return theta
