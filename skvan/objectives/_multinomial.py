"""The multinomial (softmax) model: ``K`` linear predictors per row.

With ``W`` the ``(K, p)`` coefficients (an intercept is a column of ones in
``X``) and ``theta = W.ravel()`` (class-major), row ``i`` has the predictors
``a_i = W x_i in R^K`` and the loss ``l(y_i, a_i) = logsumexp(a_i) - a_{i, y_i}``.
In ``a`` the gradient is ``p - e_y`` and the Hessian ``diag(p) - p p^T``, ``p =
softmax(a)``; in ``theta`` they are ``(p - e_y) (x) x`` and
``(diag(p) - p p^T) (x) x x^T``. Under a Gaussian ``q`` over ``theta`` the
predictors of a row are jointly Gaussian, ``N(W_bar x_i, V_i)``, so every
expectation is a ``K``-dimensional integral per row
(:mod:`skvan.expectations._cubature`).

The softmax is invariant to adding the same number to every class's
coefficient of a feature (``u_j``, the unit vector doing so for feature ``j``):
the likelihood is flat along every ``u_j``. The L2 penalty fixes the minimiser
there (its coefficients sum to zero over the classes), except for unpenalised
columns, the intercepts, which scikit-learn also makes sum to zero. A gauge
term does both: ``g(theta) = 1/2 sum_j kappa_j (u_j^T theta)^2`` over all
features. The minimiser already has ``u_j^T theta = 0`` (the sum-to-zero
convention), where ``g`` and its gradient vanish, so it is unchanged, as is
every prediction. What changes is the curvature along ``u_j``: ``kappa_j``
instead of ``1/C`` (or 0 for an intercept), which keeps the precision positive
definite under VI's damped average and the problem as well conditioned along
``u_j`` as across classes (VAN-D on iris needed more than 5,000 iterations
without it). ``q`` thus describes the coefficients in the sum-to-zero gauge,
like ``coef_``; the class-sum of a feature's coefficients, which no prediction
depends on, has variance ``1 / (kappa_j + 1/C)``. ``kappa_j = sum_i w_i x_ij^2 / 4``,
the curvature one class's coefficient gets where ``p = 1/2``.
"""

import numpy as np

from .._data import FeaturePairs, dot, gram, scale_columns, squared, tdot, upper_pairs
from .._reductions import last_max, last_sum
from ._linear import RowsObjective, jacobi_column_scale
from ._penalties import NoPenalty

#: The rows' feature-pair products (``n p (p + 1) / 2`` floats) a model keeps
#: between its passes over the rows up to this many bytes, a quarter of the
#: dense matrices a family forms (``skvan.van.MEMORY_BUDGET``); they take
#: ``(p + 1) / 2`` times the design's memory.
KEPT_PAIR_PRODUCTS = 1 << 28


def log_normaliser(A):
    """``(logsumexp(A), softmax(A))`` over the last axis, from one exponential.

    scipy's ``logsumexp`` and ``softmax`` take several times as long (``python
    benchmarks/bench_passes.py``, part 6): they check their input and handle
    complex and infinite values, which the
    predictors of a fit never are (an infinite maximum gives NaN here, which the
    solver reports as diverged). The maximum and the sum over the ``K`` classes
    are :func:`~skvan._reductions.last_max` and ``last_sum`` (part 14).
    """
    top = last_max(A)[..., None]
    E = np.exp(A - top)
    total = last_sum(E)[..., None]
    E /= total
    return (np.log(total) + top)[..., 0], E


def _dot_classes(a, b):
    """``sum_k a_k b_k`` over the first axis (class-major arrays)."""
    return np.einsum("k...,k...->...", a, b)


class SoftmaxLoss:
    """``l(y, a) = logsumexp(a) - a_y`` for one-hot ``y`` (rows of ``Y``).

    The methods broadcast over leading axes, ``Y`` and ``A`` being ``(..., K)``,
    except :meth:`expansion`, which takes rows: ``(n, K)``.
    """

    name = "softmax"
    #: The largest eigenvalue of ``diag(p) - p p^T`` is at most 1/2.
    max_curvature = 0.5

    def loss(self, Y, A):
        """``logsumexp(a) - y^T a`` (the normaliser :meth:`loss_derivatives` takes, so
        that a value alone and one with the derivatives agree to the last bit)."""
        return log_normaliser(A)[0] - np.sum(Y * A, axis=-1)

    def loss_derivatives(self, Y, A, pairs=False):
        """Return ``(l, p - y, diag(p) - p p^T)``, shapes ``(...)``, ``(..., K)``,
        ``(..., K, K)``; with ``pairs`` the Hessians' upper class pairs ``(k <= l)``,
        ``(..., K (K + 1) / 2)`` in :func:`~skvan._data.upper_pairs` order, which is
        all a Gram pass reads of a symmetric matrix (:meth:`MultinomialObjective.data_curvature`)."""
        lse, P = log_normaliser(A)
        if pairs:
            k, m = upper_pairs(P.shape[-1])
            H = P[..., k] * P[..., m]
            np.negative(H, out=H)
            H[..., k == m] += P
        else:
            H = -P[..., :, None] * P[..., None, :]
            diag = np.einsum("...kk->...k", H)
            diag += P
        return lse - np.sum(Y * A, axis=-1), P - Y, H

    @staticmethod
    def gauss_newton(G, H):
        """Per-row Gauss-Newton curvature from ``(gradient, Hessian)``: the outer
        product of the per-example gradient, ``g g^T`` (VAG)."""
        return G[..., :, None] * G[..., None, :]

    def expansion(self, Y, M, V, need="exact"):
        """``E[l(y, a)]``, ``E[p - y]`` and the expected curvature for ``a ~ N(m_i, V_i)``
        (rows of ``M`` ``(n, K)``, ``V`` ``(n, K, K)``) to second order in ``V``.

        The derivatives of ``lse(a)`` are the cumulants of the one-hot ``e_c`` drawn
        with probabilities ``p = softmax(m)``; with ``x_c = e_c - p`` and ``H = diag(p) -
        p p^T``, their contractions with ``V`` are sums over the ``K`` outcomes:
        ``s_c = x_c^T V x_c = V_cc - 2 (V p)_c + p^T V p``, and

        - ``E[l] = l(m) + tr(H V) / 2 + kappa_4(V, V) / 8``, with the fourth cumulant
          contracted twice, ``kappa_4(V, V) = sum_c p_c s_c^2 - tr(H V)^2 - 2 tr(H V H V)``,
        - ``E[p(a)] = p + (p o s - (p^T s) p) / 2``,
        - ``E[H(a)] = H + (diag(p o s) - (p o s) p^T - p (p o s)^T + (p^T s) p p^T
          - tr(H V) H - 2 H V H) / 2`` (the fourth cumulant contracted once),
        - the Gauss-Newton ``E[g g^T] = E[g] E[g]^T + H V H``,

        the value up to ``O(V^3)``, the others up to ``O(V^2)`` (the odd terms
        vanish by symmetry). The value's ``O(V^2)`` term makes the curvature
        exactly ``2 dE[l]/dV``, as VI's fixed point needs (Price's theorem). A
        cubature rule of degree 3 has the same order of error, so on narrow rows the
        two agree to ``O(V^2)`` (``tests/test_multinomial.py``) at a fraction of the
        cost.
        """
        # The value and probabilities at the mean as loss_derivatives has them (a
        # point mass, V = 0, gets exactly its derivatives), then class-major
        # copies, (K, ...) and (K, K, ...): every operation below runs over the
        # rows in its inner loop, where a row-major layout would broadcast over
        # K entries at a time.
        lse, P = log_normaliser(M)
        l = lse - np.sum(Y * M, axis=-1)
        # (rows of (n, K) and (n, K, K) arrays: transposes are the class-major views)
        P, Y = np.ascontiguousarray(P.T), np.ascontiguousarray(Y.T)
        V = np.ascontiguousarray(V.transpose(1, 2, 0))
        Vp = np.einsum("kl...,l...->k...", V, P)
        pVp = _dot_classes(P, Vp)
        v = np.einsum("kk...->k...", V)
        trace_HV = _dot_classes(P, v) - pVp
        s = v - 2.0 * Vp + pVp
        ps = P * s
        # H V = diag(p) (V - 1 (V p)^T) for the symmetric V: no K x K products.
        HV = V - Vp[None]
        HV *= P[:, None]
        kappa = _dot_classes(ps, s) - trace_HV**2 - 2.0 * np.einsum("ab...,ba...->...", HV, HV)
        e0 = l + 0.5 * trace_HV + 0.125 * kappa
        sum_ps = ps.sum(axis=0)
        e1 = P - Y + 0.5 * (ps - sum_ps * P)
        if need == "value":
            return e0, e1.T, None
        # H V H = (H V - (H V p) 1^T) diag(p), in place of H V.
        HVH = HV
        HVH -= np.einsum("kl...,l...->k...", HV, P)[:, None]
        HVH *= P[None]
        if need == "gauss_newton":
            HVH += e1[:, None] * e1[None]
            out = HVH
        else:
            # H + C / 2 gathered by kind: (sum_ps + tr(HV)) / 2 - 1 times p p^T, the
            # cross terms -(ps p^T + p ps^T) / 2, -HVH, and the diagonal
            # p + (ps - tr(HV) p) / 2.
            c = 0.5 * (sum_ps + trace_HV) - 1.0
            out = P[:, None] * (c * P - 0.5 * ps)[None]
            out -= (0.5 * ps)[:, None] * P[None]
            out -= HVH
            np.einsum("kk...->k...", out)[...] += P + 0.5 * (ps - trace_HV * P)
        return e0, e1.T, out.transpose(2, 0, 1)

    def weighted_derivatives(self, Y, A, w, need="exact"):
        """Weighted averages over the points of each row, ``A`` ``(n, S, K)`` and
        weights ``w`` ``(S,)``: ``(sum_s w_s l, sum_s w_s g, sum_s w_s c, g)`` with ``c``
        the Hessian ``diag(p) - p p^T`` (``need="exact"``), ``g g^T`` ("gauss_newton") or
        nothing ("value"), and ``g`` the per-point gradients ``(n, S, K)``. The
        ``(n, S, K, K)`` Hessians are never formed: ``sum_s w_s p p^T`` is a product."""
        lse, P = log_normaliser(A)
        G = P - Y
        e0 = (lse - (A @ np.swapaxes(Y, -1, -2))[..., 0]) @ w
        e1 = np.swapaxes(G, 1, 2) @ w
        if need == "value":
            return e0, e1, None, G
        B = G if need == "gauss_newton" else P
        C = np.swapaxes(B * w[None, :, None], 1, 2) @ B
        if need == "exact":
            C = -C
            idx = np.arange(A.shape[-1])
            C[:, idx, idx] += np.swapaxes(P, 1, 2) @ w
        return e0, e1, C, G


class MultinomialObjective(RowsObjective):
    """``f(theta) = multiplier * sum_i w_i l(y_i, W x_i) + g(theta)``, ``theta = W.ravel()``.

    Parameters
    ----------
    X : ndarray or CSR matrix of shape (n_samples, n_features)
        Design (with a column of ones for intercepts).
    Y : ndarray of shape (n_samples, n_classes)
        One-hot targets.
    sample_weight : ndarray of shape (n_samples,), default=None
    penalty : object, default=None
        A separable penalty over the ``n_classes * n_features`` parameters.
    multiplier : float, default=1.0
        Multiplies the data term (minibatches, negative log likelihoods).
    rows : ndarray of int or None, default=None
        For a minibatch, its rows in the full data.
    """

    def __init__(self, X, Y, sample_weight=None, penalty=None, multiplier=1.0, rows=None):
        self.X = X
        self.Y = np.asarray(Y, dtype=np.float64)
        self.loss = SoftmaxLoss()
        self.sample_weight = np.ones(X.shape[0]) if sample_weight is None else sample_weight
        self.penalty = NoPenalty() if penalty is None else penalty
        self.multiplier = float(multiplier)
        self.rows = rows
        self.n_classes = self.Y.shape[1]
        self.n_params = self.n_classes * X.shape[1]
        self._X_squared = None
        self._kappa = None
        self._groups = None
        self._gauge_variances = None
        self._pairs = None

    def _replace(self, **changes):
        args = dict(X=self.X, Y=self.Y, sample_weight=self.sample_weight, penalty=self.penalty,
                    multiplier=self.multiplier, rows=self.rows)
        args.update(changes)
        return MultinomialObjective(**args)

    def subsample(self, indices):
        """The objective on rows ``indices``, its data term scaled to the full data."""
        return self._replace(X=self.X[indices], Y=self.Y[indices],
                             sample_weight=self.sample_weight[indices],
                             multiplier=self.multiplier * self.n_samples / len(indices),
                             rows=indices if self.rows is None else self.rows[indices])

    def multiplied(self, factor):
        """``factor * f``."""
        return self._replace(penalty=self.penalty.multiplied(factor),
                             multiplier=self.multiplier * factor)

    def column_scale(self):
        """Per-feature scales, as :meth:`LinearModelObjective.column_scale`, tiled over
        the classes (every class's coefficients of a feature share its scale)."""
        p = self.X.shape[1]
        bound = np.broadcast_to(self.penalty.curvature_bound, (self.n_params,)).reshape(-1, p)
        ridge = bound.max(axis=0) / self.loss.max_curvature
        return np.tile(jacobi_column_scale(self.X, self.sample_weight, ridge), self.n_classes)

    def reparametrised(self, column_scale):
        """``f`` over ``theta' = column_scale * theta`` (``column_scale`` tiled over
        the classes, as :meth:`column_scale` returns it)."""
        if np.all(column_scale == 1.0):
            return self
        per_feature = column_scale[: self.X.shape[1]]
        return self._replace(X=scale_columns(self.X, 1.0 / per_feature),
                             penalty=self.penalty.reparametrised(column_scale))

    # -- from per-row derivatives in a to derivatives in theta ----------------------
    def predictors(self, theta):
        """``A = X W^T``, shape ``(n_samples, n_classes)``."""
        return np.asarray(dot(self.X, theta.reshape(self.n_classes, -1).T))

    def data_gradient(self, G):
        """``sum_i w_i G_i (x) x_i`` for per-row gradients ``G`` ``(n, K)``."""
        return np.asarray(tdot(self.X, self.weights[:, None] * G)).T.ravel()

    def data_curvature(self, H, diagonal=False):
        """``sum_i w_i H_i (x) x_i x_i^T`` for per-row ``H`` ``(n, K, K)`` (or their
        upper class pairs, ``(n, K (K + 1) / 2)``: ``SoftmaxLoss.loss_derivatives``
        with ``pairs``): the ``(K p, K p)`` matrix, block ``(k, l)`` being ``X^T
        diag(w H_kl) X``, or its diagonal."""
        K, p = self.n_classes, self.X.shape[1]
        w = self.weights
        k, m = upper_pairs(K)
        pairs = H[:, k, m] if H.ndim == 3 else H
        if diagonal:
            if self._X_squared is None:
                self._X_squared = squared(self.X)
            d = w[:, None] * pairs[:, k == m]
            return np.asarray(tdot(self._X_squared, d)).T.ravel()
        C = np.empty((K * p, K * p))
        if FeaturePairs.pays(self.X, k.size):
            # Every class pair's block from one product per row block, placed in
            # two assignments.
            blocks = self.feature_pairs().grams(self.X, w[:, None] * pairs)
            by_class = C.reshape(K, p, K, p)
            by_class[k, :, m, :] = blocks
            by_class[m, :, k, :] = np.swapaxes(blocks, 1, 2)
            return C
        blocks = (gram(self.X, w * pairs[:, c]) for c in range(k.size))
        for i, j, block in zip(k, m, blocks):
            C[i * p:(i + 1) * p, j * p:(j + 1) * p] = block
            C[j * p:(j + 1) * p, i * p:(i + 1) * p] = block.T
        return C

    def feature_pairs(self):
        """The :class:`~skvan._data.FeaturePairs` of ``X``'s features, keeping the
        rows' pair products between passes up to :data:`KEPT_PAIR_PRODUCTS` bytes
        (the curvature's Gram blocks and the predictor covariances of every
        iteration read the same products)."""
        if self._pairs is None:
            self._pairs = FeaturePairs(self.X.shape[1], keep_bytes=KEPT_PAIR_PRODUCTS)
        return self._pairs

    # -- the gauge term (module docstring) ------------------------------------------
    def _gauge(self):
        """``kappa_j`` of every feature (module docstring)."""
        if self._kappa is None:
            kappa = 0.25 * self.multiplier * np.asarray(
                tdot(squared(self.X), self.sample_weight)).ravel()
            self._kappa = np.where(kappa > 0, kappa, 1.0)
        return self._kappa

    def _gauge_groups(self):
        """``(K, p)``: column ``j`` holds the parameters ``u_j`` sums (feature ``j``'s
        coefficient in every class)."""
        if self._groups is None:
            self._groups = np.arange(self.n_params).reshape(self.n_classes, -1)
        return self._groups

    def _gauge_sums(self, theta):
        """``u_j^T theta`` for every feature."""
        return theta.reshape(self.n_classes, -1).sum(axis=0) / np.sqrt(self.n_classes)

    def _gauge_gradient(self, sums):
        """``sum_j kappa_j u_j (u_j^T theta)`` from :meth:`_gauge_sums`."""
        return np.tile(self._gauge() * sums / np.sqrt(self.n_classes), self.n_classes)

    def gauge_expectation(self, family, mean):
        """``E_q[g]`` and ``E_q[grad g]``: ``1/2 sum_j kappa_j ((u_j^T mu)^2 + u_j^T Sigma u_j)``
        and ``sum_j kappa_j u_j (u_j^T mu)``."""
        sums = self._gauge_sums(mean)
        kept = self._gauge_variances
        if kept is None or kept[0] is not family or kept[1] != family.version:
            # the K x K block of Sigma per feature, summed: once per precision (a
            # step's trial value and the next expectations share it)
            var = family.group_variances(self._gauge_groups()) / self.n_classes
            kept = self._gauge_variances = (family, family.version, var)
        value = 0.5 * float(np.dot(self._gauge(), sums**2 + kept[2]))
        return value, self._gauge_gradient(sums)

    def add_gauge(self, C):
        """``C`` plus ``kappa_j u_j u_j^T`` (or its diagonal, ``kappa_j / K``; a curvature
        kept as parts adds it as one, ``C.add_gauge(kappa)``)."""
        kappa = self._gauge()
        if hasattr(C, "add_gauge"):
            return C.add_gauge(kappa)
        if np.ndim(C) == 1:
            C[self._gauge_groups()] += kappa / self.n_classes
        else:
            # feature j's entry in every class pair's block, (K, K, p): a view of C
            K, p = self.n_classes, kappa.size
            s0, s1 = C.strides
            np.lib.stride_tricks.as_strided(C, (K, K, p), (p * s0, p * s1, s0 + s1))[...] += kappa / K
        return C

    # -- pointwise interface ------------------------------------------------------
    def value(self, theta):
        return self._value(self.loss.loss(self.Y, self.predictors(theta)), theta,
                           self._gauge_sums(theta))

    def gradient(self, theta):
        _, G, _ = self.loss.loss_derivatives(self.Y, self.predictors(theta))
        return self._gradient(G, theta, self._gauge_sums(theta))

    def hessian(self, theta):
        _, _, H = self.loss.loss_derivatives(self.Y, self.predictors(theta), pairs=True)
        return self._curvature(H, theta)

    def hessian_diagonal(self, theta):
        """The diagonal of :meth:`hessian`, without the ``(K p, K p)`` matrix."""
        _, _, H = self.loss.loss_derivatives(self.Y, self.predictors(theta), pairs=True)
        return self._curvature(H, theta, diagonal=True)

    def value_and_derivatives(self, theta, diagonal=False):
        """:meth:`value`, :meth:`gradient` and :meth:`hessian` (or its diagonal) from
        one product ``X W^T`` and one softmax."""
        losses, G, H = self.loss.loss_derivatives(self.Y, self.predictors(theta), pairs=True)
        sums = self._gauge_sums(theta)
        return (self._value(losses, theta, sums), self._gradient(G, theta, sums),
                self._curvature(H, theta, diagonal))

    def _value(self, losses, theta, sums):
        """``f`` from the rows' losses and the gauge sums."""
        return (float(np.dot(self.weights, losses)) + self.penalty.value(theta)
                + 0.5 * float(np.dot(self._gauge(), sums**2)))

    def _gradient(self, G, theta, sums):
        """``grad f`` from the rows' gradients ``G`` and the gauge sums."""
        return self.data_gradient(G) + self.penalty.gradient(theta) + self._gauge_gradient(sums)

    def _curvature(self, H, theta, diagonal=False):
        """``hess f`` (or its diagonal) from the rows' Hessians ``H`` (or their
        Gauss-Newton curvatures)."""
        C = self.add_gauge(self.data_curvature(H, diagonal=diagonal))
        if diagonal:
            return C + self.penalty.hessian_diag(theta)
        np.einsum("ii->i", C)[...] += self.penalty.hessian_diag(theta)
        return C

    def gauss_newton(self, theta):
        """Per-example gradient outer products plus the penalty's and the gauge's
        curvature."""
        _, G, H = self.loss.loss_derivatives(self.Y, self.predictors(theta))
        return self._curvature(self.loss.gauss_newton(G, H), theta)
