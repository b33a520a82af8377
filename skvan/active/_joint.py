"""Batches chosen jointly under a Gaussian posterior: local penalisation.

Under ``q`` the linear predictors of a pool point are Gaussian; skvan's
classifiers predict ``E_q[p(y|x, theta)]`` from their means and variances (the
binary quadrature, or the multiclass probit approximation over each class's
block of the covariance). Labelling a point ``x_j`` adds, whatever its label,
its Fisher information to the posterior precision: for class ``k``,
``h_jk x_j x_j^T`` with ``h_jk = p_jk (1 - p_jk)`` under the current predictive
probabilities (the binary Hessian of the log-likelihood; the softmax Hessian's
diagonal, consistently with the per-class blocks the probit approximation
uses). The rank-one update of each class's block,

    ``Sigma_k <- Sigma_k - h u u^T / (1 + h x_j^T u)``, ``u = Sigma_k x_j``,

shrinks the predictive variance of every pool point correlated with ``x_j``
under ``q`` and leaves the others alone. A batch is chosen greedily: each pick
maximises the point's score (margin, entropy) under the unconditioned ``q``
times the fraction of its predictive variance the picks before it leave, 1 for
points uncorrelated with them and near 0 for their duplicates (local
penalisation, as batch Bayesian optimisation does with its acquisition
function: González et al., AISTATS 2016). The top-k of the score alone spends
a batch on near-duplicates; the score is not recomputed under the conditioned
``q``, since the predictive probabilities of a point on the decision boundary
(mean predictor 0) do not move when its variance shrinks. Cost: the pool's
variances from the blocks, ``O(n p^2)`` per class as for ``predict_proba``
(a binary model also inverts its precision, ``O(p^3)``), then ``O(n p + p^2)``
per class and pick.
"""

import numpy as np

from .._data import dot, issparse
from .._reductions import last_sum
from ..expectations import log_expected_sigmoid
from ..expectations._cubature import block_variances, probit_log_softmax_of
from ..objectives._linear import check_predictors


class PoolPosterior:
    """The linear predictors of a pool under a fitted classifier's ``q``, which
    :meth:`condition` updates for a labelled point (module docstring).

    Parameters
    ----------
    X : ndarray or CSR matrix of shape (n_pool, n_params_per_class)
        The pool's design (with the intercept's column of ones).
    mean : ndarray of shape (n_rows, n_params_per_class)
        ``q``'s mean, one row per linear predictor (one for two classes).
    blocks : ndarray of shape (n_rows, n_params_per_class, n_params_per_class)
        Each row's block of ``q``'s covariance (copied: conditioning writes into it).
    """

    def __init__(self, X, mean, blocks):
        self.X = X
        self.blocks = np.array(blocks, dtype=np.float64)
        self.M = np.asarray(dot(X, mean.T))
        self.V = block_variances(X, self.blocks, dtype=np.float64)
        check_predictors(self.M, self.V)  # the estimator's predict_proba's check
        self._start_total = self._total()

    @classmethod
    def of(cls, estimator, X_pool):
        """The pool's posterior under ``estimator`` (a skvan classifier, or a
        ``Pipeline`` ending in one, whose other steps transform ``X_pool``) with a
        full covariance, or None for any other estimator."""
        steps = getattr(estimator, "steps", None)
        if steps:
            final = steps[-1][1]
            if not hasattr(final, "_predictor_blocks"):
                return None
            X_pool, estimator = estimator[:-1].transform(X_pool), final
        if not hasattr(estimator, "_predictor_blocks"):
            return None
        parts = estimator._predictor_blocks(X_pool)
        return None if parts is None else cls(*parts)

    def proba(self, rows=slice(None)):
        """``E_q[p(y|x)]`` for the pool points ``rows`` (all by default), shape
        ``(n_rows, n_classes)``."""
        M, V = self.M[rows], np.maximum(self.V[rows], 0.0)
        if M.shape[1] == 1:
            log_p, log_q = log_expected_sigmoid(M[:, 0], V[:, 0])
            return np.exp(np.column_stack([log_q, log_p]))
        return np.exp(probit_log_softmax_of(M, V))

    def proba_of(self, j):
        """:meth:`proba` of pool point ``j``, shape ``(n_classes,)``."""
        return self.proba([j])[0]

    def remaining(self):
        """The fraction of each pool point's predictive variance (summed over the
        linear predictors) left by the conditioning so far, in ``[0, 1]``."""
        total = self._total()
        start = self._start_total
        return np.divide(total, start, out=np.zeros_like(total), where=start > 0)

    def _total(self):
        """Each pool point's predictive variance summed over the linear predictors
        (negative round-off as 0)."""
        return last_sum(np.maximum(self.V, 0.0))

    def condition(self, j, proba):
        """Add the Fisher information of pool point ``j``, whose predictive
        probabilities are ``proba`` (``(n_classes,)``), to ``q``: every linear
        predictor's block at once (one product with the pool for all of them)."""
        x = self.X[j]
        x = np.asarray(x.toarray()).ravel() if issparse(x) else np.asarray(x)
        h = proba[1:] * (1.0 - proba[1:]) if self.M.shape[1] == 1 else proba * (1.0 - proba)
        U = self.blocks @ x  # (n_rows, p): u_k = B_k x
        v = U @ x
        # A block with no variance along x (or none representable) learns nothing.
        keep = np.isfinite(v) & (v > 0)
        if not keep.any():
            return
        U, v, h = U[keep], v[keep], h[keep]
        # h u u^T / (1 + h v) as w w^T with w = sqrt(g) u / sqrt(v), g = h v / (1 + h v)
        # in [0, 1): by Cauchy-Schwarz (x_i^T w)^2 <= x_i^T B x_i, so no term
        # exceeds the variance it is taken from (features near 1e150 overflowed
        # the squares of x_i^T u).
        W = U * np.sqrt(h / (1.0 + h * v))[:, None]
        rows = np.flatnonzero(keep) if not keep.all() else slice(None)
        self.blocks[rows] -= W[:, :, None] * W[:, None, :]
        shrink = np.asarray(dot(self.X, W.T))
        shrink *= shrink
        self.V[:, rows] -= shrink


def select_jointly(posterior, scores, n_instances, random_state, rounded):
    """Greedy joint batch of ``n_instances`` picks under ``posterior``: each the
    best of ``scores`` (higher is more informative; a point's score under the
    unconditioned ``q``) times the fraction of the point's predictive variance
    that the picks before it leave (:meth:`PoolPosterior.remaining`): a local
    penalisation that is 1 for points uncorrelated with the picks and tends to
    0 for their duplicates. Ties broken at random, scores compared on the grid
    ``rounded`` gives them. Returns the indices and their penalised scores at
    the time of their pick."""
    ties = random_state.random_sample(posterior.M.shape[0])
    chosen, picked = [], []
    for _ in range(n_instances):
        s = scores * posterior.remaining()
        s[chosen] = -np.inf
        j = _best(rounded(s), ties)
        chosen.append(j)
        picked.append(s[j])
        posterior.condition(j, posterior.proba_of(j))
    return np.array(chosen), np.array(picked)


def _best(rounded, ties):
    """The first index of ``np.lexsort((ties, -rounded))`` (the best score, ties
    broken by the smallest ``ties``) without sorting: NaN scores come last."""
    valid = ~np.isnan(rounded)
    if not valid.any():
        return int(np.argmin(ties))
    top = np.max(rounded[valid])
    candidates = np.flatnonzero(rounded == top)
    return int(candidates[np.argmin(ties[candidates])])
