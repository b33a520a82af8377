"""Cubature over the ``K`` jointly Gaussian predictors of a multinomial model.

Under ``q`` the predictors of row ``i`` are ``a_i ~ N(m_i, V_i)`` in ``R^K``
(:class:`~skvan.objectives.MultinomialObjective`), so each expectation is a
``K``-dimensional integral. A cubature rule gives it as a weighted sum over
points ``a = m_i + R_i z_s``, ``R_i R_i^T = V_i``, for fixed nodes ``z_s`` of a
standard normal:

- degree 5 (exact for polynomials of degree 5; Stroud's rule 5-2): the centre,
  ``+-sqrt(K + 2) e_j`` and ``+-sqrt((K + 2) / 2) (e_j +- e_l)``, ``2 K^2 + 1`` points.
  Its weight on the axes, ``(4 - K) / (2 (K + 2)^2)``, is negative beyond four
  classes;
- degree 3 (the spherical-radial rule of cubature Kalman filters): ``+-sqrt(K) e_j``
  with weights ``1 / (2 K)``, ``2 K`` points.

:func:`softmax_rule` takes the degree-5 rule while its weights are positive (up
to four classes) and the degree-3 one beyond: positive weights keep averaged
probabilities in ``[0, 1]`` and let ``predict_log_proba`` work in log space.
Under VO the ``V_i`` vanish and every rule becomes the plug-in. Narrow rows
skip the points: they take the second-order expansion
:meth:`~skvan.objectives.SoftmaxLoss.expansion` (its curvature with the fourth
cumulant, its value to ``O(V^3)``), below a trace of ``V_i`` that depends on the
rule (:func:`expansion_trace`):

- up to four classes, ``1e-6`` (sd ``1e-3``): the degree-5 rule errs by
  ``O(V^3)``, the expansion's gradient and curvature by ``O(V^2)``; their values
  and gradients agree within 1e-13 there (VO's last iterations), their
  curvatures within 1e-7, the rule's consistent curvature being off by ``O(V)``
  (``tests/test_multinomial.py``);
- beyond, ``1e-2`` (sd ``0.1``): the degree-3 rule errs by ``O(V^2)`` as the
  expansion does, and its consistent curvature by ``O(V)``. Against a
  quasi-Monte Carlo reference at that trace, with 5, 10 and 20 classes, each of
  the expansion's errors (value, gradient, curvature, Gauss-Newton curvature) is
  at most 2e-6, the rule's curvature errs by 1e-4 or more, and the expansion's
  largest error is below the rule's largest; so it is up to a trace of 1 (``python
  benchmarks/bench_multinomial.py --expansion``), where the expansion's gradient
  and Gauss-Newton curvature err up to 4 times more than the rule's and its
  curvature 1.8 to 55 times less.

Under VO the rule matters less: ``q`` narrows onto the minimiser of ``f``, where
every rule and the expansion agree, and the expectations only shape the path
there. A VO run (:meth:`SoftmaxCubature.reset`) takes the expansion on every row up
to a trace of 1, where its errors are those of a second-order approximation
(within about ten times the rules', ``python benchmarks/bench_multinomial.py
--expansion``), and the rule beyond, where the expansion's curvature can be far
from positive semi-definite. The fit's coefficients and covariance then agree
with the rule's to well within its tolerance (``tests/test_multinomial.py``),
and the passes while ``q`` is wide skip the roots and the points.
Under VI the error grows with the predictors' spread: measured against Monte Carlo
(``tests/test_multinomial.py``), the expected loss, gradient and curvature
are within 1e-3 to 2e-3 for standard deviations of 0.1 and 5e-3 (three
classes) to 2e-2 (six) for 0.5; the predictive probabilities are within 2e-2 to
8e-2 for standard deviations of 1 to 2.
The solver's expectations (one pass per iteration) use these rules; the
predictive probabilities of rows whose predictors are that wide use
:func:`sobol_rule` instead (2,048 points, within 1e-3 to 3e-3), since
``predict_proba`` runs once per prediction, not once per iteration.
"""

import functools

import numpy as np
from scipy.special import logsumexp

from .._blocks import index_blocks, row_blocks
from .._data import FeaturePairs, dot, issparse, squared, upper_pairs
from ..objectives import MultinomialObjective
from ..objectives._linear import check_predictors
from ._base import LinearPredictorExpectation

#: Floats per temporary (``rows x points x K``) in a block of rows of the solver's
#: passes: 512 KB, which stay in the cache where 16 MB ones do not (``python
#: benchmarks/bench_passes.py``, part 6).
_CHUNK = 1 << 16
#: The same for predictions (16 MB), whose wide rows take 2,048 points each.
_PREDICT_CHUNK = 1 << 21


@functools.lru_cache(maxsize=None)
def softmax_rule(n_classes):
    """Nodes ``(S, K)`` and positive weights ``(S,)`` for ``E[h(z)]``, ``z ~ N(0, I_K)``
    (read-only, cached): degree 5 up to four classes, degree 3 beyond."""
    K = n_classes
    eye = np.eye(K)
    if K <= 4:
        pairs = [(j, m) for j in range(K) for m in range(j + 1, K)]
        cross = [s * (eye[j] + t * eye[m]) for j, m in pairs for s in (1, -1) for t in (1, -1)]
        Z = np.vstack([np.zeros((1, K)), np.sqrt(K + 2.0) * np.vstack([eye, -eye]),
                       np.sqrt((K + 2.0) / 2.0) * np.array(cross).reshape(-1, K)])
        w = np.r_[2.0 / (K + 2), np.full(2 * K, (4.0 - K) / (2 * (K + 2.0) ** 2)),
                  np.full(len(cross), 1.0 / (K + 2.0) ** 2)]
    else:
        Z = np.sqrt(float(K)) * np.vstack([eye, -eye])
        w = np.full(2 * K, 1.0 / (2 * K))
    keep = w > 0  # four classes: the axis points weigh nothing
    Z, w = np.ascontiguousarray(Z[keep]), w[keep]
    Z.flags.writeable = False
    w.flags.writeable = False
    return Z, w


#: ``V_i`` whose largest eigenvalue is below this (sd 0.1) use the cubature rule
#: for predictions too; wider ones use :func:`sobol_rule`.
_PREDICT_NARROW = 1e-2


@functools.lru_cache(maxsize=None)
def sobol_rule(n_classes, n_points=1024):
    """``2 n_points`` antithetic quasi-Monte Carlo nodes of ``N(0, I_K)`` (a
    scrambled Sobol sequence with a fixed seed, so deterministic) and equal
    weights."""
    from scipy.stats import norm, qmc

    Z = norm.ppf(qmc.Sobol(n_classes, scramble=True, seed=0).random(n_points))
    Z = np.vstack([Z, -Z])
    w = np.full(len(Z), 1.0 / len(Z))
    Z.flags.writeable = False
    w.flags.writeable = False
    return Z, w


def square_roots(V):
    """The symmetric square roots ``R = U diag(r) U^T`` of a stack of symmetric PSD
    matrices ``V = U diag(r^2) U^T`` (eigenvalues below zero, from rounding, are
    treated as zero); returns ``(R, U, r)``. The symmetric root makes the rule's
    value a function of ``V`` alone, which :func:`consistent_curvature`
    differentiates."""
    lam, U = np.linalg.eigh(V)
    r = np.sqrt(np.clip(lam, 0.0, None))
    return (U * r[:, None, :]) @ np.swapaxes(U, 1, 2), U, r


def points(M, V, rule=softmax_rule):
    """Points ``(n, S, K)`` of ``N(M_i, V_i)`` under ``rule``, the weights ``(S,)`` and
    the roots ``(R, U, r)`` of :func:`square_roots`."""
    Z, w = rule(M.shape[1])
    roots = square_roots(V)
    return M[:, None, :] + Z @ roots[0], w, roots  # R symmetric: (R z_s)^T = z_s^T R


#: Rows whose ``V_i`` have a smaller trace take the second-order expansion (module
#: docstring), up to four classes (the degree-5 rule)...
_EXPANSION_TRACE = 1e-6
#: ...and beyond (the degree-3 rule, no more accurate than the expansion there);
_EXPANSION_TRACE_DEGREE_3 = 1e-2
#: under VO, for any number of classes (only the path to the minimiser depends on it).
_EXPANSION_TRACE_VO = 1.0


def expansion_trace(n_classes, vo=False):
    """The trace of ``V_i`` below which a row takes the expansion (module docstring):
    by the rule's accuracy, or under VO (``vo``) by the expansion's range."""
    if vo:
        return _EXPANSION_TRACE_VO
    return _EXPANSION_TRACE if n_classes <= 4 else _EXPANSION_TRACE_DEGREE_3


#: Below this largest root of ``V_i`` (``q`` narrow along that row) the curvature
#: is the rule's average Hessian, which the consistent one tends to as ``V_i -> 0``
#: and which does not divide by the roots.
_NARROW = 1e-4
#: Pairs of eigen-directions whose roots sum to less than this fraction of the
#: largest root take the average Hessian (measured against Monte Carlo: the
#: consistent derivative's error there reached 0.1 with six classes at sd 0.5).
_RESOLVED = 0.5


def consistent_curvature(G, H_mean, w, roots):
    """``2 dF/dV_i`` of the rule's value ``F(m, V) = sum_s w_s l(m + V^1/2 z_s)``.

    With ``V = U diag(r^2) U^T`` and ``M = sum_s w_s z_s g_s^T`` (``g_s`` the gradient at
    point ``s``), ``dF = tr(M dR)`` and the root's derivative in the eigenbasis is
    ``dR_ab = dV_ab / (r_a + r_b)``, so ``2 dF/dV = U [(M~ + M~^T)_ab / (r_a + r_b)] U^T``,
    ``M~ = U^T M U``. Exact expectations have ``2 dE[l]/dV = E[hess l]`` (Price's
    theorem); a rule's average Hessian does not differentiate its own value, and
    VI would then stop short of the fixed point its safeguard checks. Rows whose
    ``V_i`` is narrow, and pairs of directions much narrower than the widest,
    keep the average Hessian ``H_mean`` (the rule resolves them poorly).
    """
    R, U, r = roots
    Z, _ = softmax_rule(G.shape[-1])
    Ut = np.swapaxes(U, 1, 2)
    M = (Z * w[:, None]).T @ G  # sum_s w_s z_s g_s^T, (n, K, K)
    Mt = Ut @ M @ U
    denominator = r[:, :, None] + r[:, None, :]
    # Pairs of directions much narrower than the widest are poorly resolved by the
    # rule (its derivative divides their small error by a small root): there,
    # and on rows that are narrow throughout, the average Hessian.
    reliable = denominator >= _RESOLVED * r.max(axis=1)[:, None, None]
    reliable &= (r.max(axis=1) >= _NARROW)[:, None, None]
    Ht = Ut @ H_mean @ U
    Ct = np.where(reliable, (Mt + np.swapaxes(Mt, 1, 2)) / np.where(reliable, denominator, 1.0), Ht)
    C = U @ Ct @ Ut
    return C


def expected_log_softmax(M, V):
    """``log E[softmax(a)]`` for ``a ~ N(M_i, V_i)``, shape ``(n, K)``: the
    predictive class probabilities of a Gaussian multinomial model, in log space
    (the cubature rule for narrow rows, :func:`sobol_rule` for wide ones)."""
    out = np.empty_like(M)
    wide = np.linalg.eigvalsh(V)[:, -1] > _PREDICT_NARROW
    K = M.shape[1]
    for rule, mask in ((softmax_rule, ~wide), (sobol_rule, wide)):
        size = len(rule(K)[1]) * K
        for rows in index_blocks(np.flatnonzero(mask), size, _PREDICT_CHUNK):
            A, w, _ = points(M[rows], V[rows], rule)
            log_p = A - logsumexp(A, axis=-1, keepdims=True)
            out[rows] = logsumexp(log_p + np.log(w)[None, :, None], axis=1)
    return out


class SoftmaxCubature(LinearPredictorExpectation):
    """Expectations of a :class:`~skvan.objectives.MultinomialObjective` by cubature
    over each row's ``K`` predictors (module docstring): deterministic, ``O(n S K^2)``
    for ``S`` points on top of the predictor covariances ``V_i``.

    Its curvature differentiates the rule's value only in the directions the rule
    resolves (:func:`consistent_curvature`; the average Hessian elsewhere), so
    ``differentiates_value`` is False: a multinomial VI fit of digits' 10 classes
    stops "stuck", its safeguard rejecting the steps near the fixed point."""

    differentiates_value = False

    #: Under VO the covariances of a pass are carried once its largest variance
    #: is at most this (sd 0.3, where each carried entry moves a row's expected
    #: derivatives by at most ``5e-3``): rows up to a trace of 1 take the
    #: expansion, whose cost does not depend on their covariances.
    carry_variance = 0.1

    def check_objective(self, objective):
        if not isinstance(objective, MultinomialObjective):
            raise TypeError(
                f"SoftmaxCubature integrates over the predictors of a multinomial model and "
                f"needs a MultinomialObjective, got {type(objective).__name__}."
            )

    @staticmethod
    def _predictor_spread(objective, family):
        return predictor_covariances(objective.X, objective.n_classes, family,
                                     objective.feature_pairs())

    @staticmethod
    def _no_spread(objective):
        return np.zeros((objective.n_samples, objective.n_classes, objective.n_classes))

    def _raw(self, objective, M, V, need):
        n, K = M.shape
        e0, e1 = np.empty(n), np.empty((n, K))
        e2 = None if need == "value" else np.empty((n, K, K))
        loss = objective.loss
        # Rows narrow enough take the second-order expansion: no roots, no
        # points (a point mass, V_i = 0, gets the derivatives at the mean exactly).
        narrow = np.einsum("ikk->i", V) < expansion_trace(K, self._vo)
        for rows in index_blocks(np.flatnonzero(narrow), 4 * K * K, _CHUNK):
            e0[rows], e1[rows], C = loss.expansion(objective.Y[rows], M[rows], V[rows], need)
            if e2 is not None:
                e2[rows] = C
        for rows in index_blocks(np.flatnonzero(~narrow), len(softmax_rule(K)[1]) * K, _CHUNK):
            A, w, roots = points(M[rows], V[rows])
            e0[rows], e1[rows], C, G = loss.weighted_derivatives(objective.Y[rows, None, :], A, w,
                                                                 need)
            if need == "gauss_newton":
                e2[rows] = C
            elif need == "exact":
                e2[rows] = consistent_curvature(G, C, w, roots)
        return e0, e1, e2


#: The probit approximation's scale, ``pi / 8``: ``sigmoid(m / sqrt(1 + pi v / 8))``
#: matches ``E[sigmoid(a)]``, ``a ~ N(m, v)``, in its slope at 0 (MacKay 1992).
PROBIT_SCALE = np.pi / 8.0


def _marginal_only(family):
    """Whether ``q``'s covariance is read through its marginal variances alone: a
    diagonal family's, or an operator's ``diag(P)^-1`` (its precision is not a
    matrix, as for its binary rows)."""
    return family.diagonal or not isinstance(family.precision, np.ndarray)


def class_variance_blocks(family, K, column_scale=None):
    """What :func:`probit_log_softmax` needs of ``q``: each class's block of its
    covariance, ``(K, p, p)`` (a diagonal family, or an operator's ``diag(P)^-1``:
    the variances, ``(K, p)``), over
    ``theta = theta' / column_scale`` where ``family`` is over ``theta'``."""
    s = np.ones(family.n_params) if column_scale is None else column_scale
    p = family.n_params // K
    if _marginal_only(family):
        return (family.marginal_variance() / s**2).reshape(K, p)
    S = family.sigma
    return np.stack([S[k * p:(k + 1) * p, k * p:(k + 1) * p] / np.outer(s[k * p:(k + 1) * p],
                                                                      s[k * p:(k + 1) * p])
                     for k in range(K)])


def probit_log_softmax(X, mean, blocks):
    """``log`` of the probit approximation of the predictive ``E_q[softmax(W x)]``
    for the rows of ``X``, shape ``(n, K)``: ``softmax(m_k / sqrt(1 + pi v_k / 8))``
    with ``m_k = w_k^T x`` and ``v_k = x^T Sigma_kk x`` each class's predictor's mean
    and variance (the multiclass form of MacKay's approximation; Daxberger et al.
    2021). One product for ``m`` and one per class for ``v`` (with ``blocks``
    from :func:`class_variance_blocks`); exact where ``q`` is narrow (error
    ``O(v^2)``) and, where it is wide, a smoothing of the plug-in that
    ``tests/test_multinomial.py`` measures against Monte Carlo."""
    K = blocks.shape[0]
    M = np.asarray(dot(X, mean.reshape(K, -1).T))
    v = (np.asarray(dot(squared(X), blocks.T)) if blocks.ndim == 2
         else block_variances(X, blocks))
    return probit_log_softmax_of(M, v)


def probit_log_softmax_of(M, v):
    """:func:`probit_log_softmax` from the predictors' means ``M`` and variances
    ``v``, both ``(n, K)``."""
    check_predictors(M, v)
    Z = M / np.sqrt(1.0 + PROBIT_SCALE * np.maximum(v, 0.0))
    Z -= Z.max(axis=1, keepdims=True)
    Z -= np.log(np.exp(Z).sum(axis=1, keepdims=True))
    return Z


def block_variances(X, blocks, dtype=np.float32):
    """``v_ik = x_i^T B_k x_i``, ``(n, K)``, in one product of each row block with the
    blocks side by side, in ``dtype``: single precision by default, since the
    probit approximation they enter is far coarser than its rounding (``1e-7``
    relative), and the product, which costs ``K p^2`` per row against the
    plug-in's ``K p``, takes half the time (a joint batch, which updates them
    pick by pick, asks for float64)."""
    K, p = blocks.shape[:2]
    stacked = np.ascontiguousarray(blocks.transpose(1, 0, 2).reshape(p, K * p), dtype=dtype)
    v = np.empty((X.shape[0], K))
    for rows in row_blocks(X.shape[0], K * p):
        block = X[rows]
        block = (block.toarray() if issparse(block) else np.asarray(block)).astype(dtype)
        Y = (block @ stacked).reshape(len(block), K, p)
        v[rows] = np.einsum("ikj,ij->ik", Y, block)
    return v


def predictor_covariances(X, K, family, pairs=None):
    """``V_i = Cov_q(W x_i)`` for the ``K`` rows of ``W``, shape ``(n, K, K)``: block
    ``(k, l)`` of the covariance ``Sigma_kl`` gives ``V_i[k, l] = x_i^T Sigma_kl x_i``
    (a diagonal family: only ``V_i[k, k]``). ``pairs``: the
    :class:`~skvan._data.FeaturePairs` to use where they pay (None: new ones)."""
    p = X.shape[1]
    n = X.shape[0]
    V = np.zeros((n, K, K))
    if _marginal_only(family):
        var = family.marginal_variance().reshape(K, p)
        idx = np.arange(K)
        V[:, idx, idx] = np.asarray(dot(squared(X), var.T))
        return V
    blocks = _feature_blocks(family.precision, K, p)
    if blocks is not None:
        # Only the K x K block of each feature is nonzero (the prior and the gauge
        # of a cold start): Sigma has the same pattern, with blocks S_j = B_j^-1, and
        # V_i = sum_j x_ij^2 S_j takes one O(n p K^2) product.
        S = np.linalg.inv(blocks).reshape(p, K * K)
        return np.asarray(dot(squared(X), S)).reshape(n, K, K)
    S = family.sigma
    if issparse(X):
        for k in range(K):
            XS = np.asarray(dot(X, S[k * p:(k + 1) * p, k * p:]))  # x_i^T Sigma_{k, m >= k}
            for m in range(k, K):
                block = XS[:, (m - k) * p:(m - k + 1) * p]
                V[:, k, m] = V[:, m, k] = np.asarray(X.multiply(block).sum(axis=1)).ravel()
        return V
    k, m = upper_pairs(K)
    if FeaturePairs.pays(X, k.size):
        # Every class pair's form from one product per row block.
        Sp = S.reshape(K, p, K, p)
        V[:, k, m] = (FeaturePairs(p) if pairs is None else pairs).forms(X, Sp[k, :, m, :])
        V[:, m, k] = V[:, k, m]
        return V
    # In row blocks: the products x_i^T Sigma_{k, m >= k} of a whole design are
    # n x K p temporaries (200 MB on 50,000 x 51 with ten classes), which made this
    # pass memory-bound (``python benchmarks/profile_fit.py --multinomial``).
    for rows in row_blocks(n, K * p):
        block = X[rows].astype(np.float64, copy=False)
        for k in range(K):
            XS = (block @ S[k * p:(k + 1) * p, k * p:]).reshape(len(block), K - k, p)
            v = np.einsum("imj,ij->im", XS, block)
            V[rows, k, k:] = v
            V[rows, k:, k] = v
    return V


def _feature_blocks(P, K, p):
    """The ``(p, K, K)`` blocks ``P[k p + j, m p + j]`` of a precision that couples
    only the classes' coefficients of the same feature, or None if it couples
    others."""
    blocks = np.einsum("kjmj->jkm", P.reshape(K, p, K, p))
    return blocks if np.count_nonzero(P) == np.count_nonzero(blocks) else None
