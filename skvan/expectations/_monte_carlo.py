"""Monte Carlo expectations from samples of ``q``."""

import numpy as np

from .._data import dot
from ..objectives import FunctionObjective, LinearModelObjective, MultinomialObjective
from .._reductions import all_of, any_of, max_of
from ._base import ExpectationEstimator, Expectations, assemble_linear, undefined


class MonteCarlo(ExpectationEstimator):
    """Expectations as averages over ``n_mc_samples`` draws ``theta_s ~ q``.

    For a :class:`~skvan.objectives.LinearModelObjective` the draws are pushed
    through ``X`` at once (``A = X Theta^T``) and only the data term is sampled;
    the separable penalty, whose expectation is closed form, is not (this removes
    its sampling noise at no cost). Any other objective is evaluated at each draw
    through its ``value``/``gradient``/``hessian`` (or ``gauss_newton``) methods.

    Parameters
    ----------
    n_mc_samples : int, default=10
        Number of draws per call.
    fitness_shaping : bool, default=False
        Zero-order oracle only: replace the values by rank-based utilities
        (see :func:`rank_utilities`), as natural evolution strategies do.
    mean_rate : float, default=1.0
        With ``fitness_shaping``, the factor on the shaped gradient. Shaped
        estimates have no common scale, so the mean and the precision get their
        own rates: with the solver's ``beta``, ``mean_rate = eta_mu / beta`` moves
        the mean ``eta_mu`` whitened units per unit of utility.
    scale_rate : float, default=1.0
        With ``fitness_shaping``, the factor on the multiple of the identity in
        the whitened shaped curvature (its trace part): the global scale of ``q``
        then adapts ``scale_rate`` times as fast as its shape. For a diagonal
        family every variance is a scale, and the whole curvature gets it.
    scale_path : CumulativeScale or None, default=None
        With ``fitness_shaping`` and a full family, also move the global scale of
        ``q`` by the length of the path of its mean steps (cumulative step-size
        adaptation, :class:`CumulativeScale`), on top of the trace of the shaped
        curvature at the shape's rate (xNES's scale update; ``scale_rate`` is
        then unused): CMA-ES's scale moves both ways too, by CSA and by the trace
        of its covariance update. CSA alone, in place of the trace, moves the
        scale only along the mean's path and needs more evaluations (``python
        benchmarks/bench_minimize.py`` compares zero-order VAN with CMA-ES).
    shape_path : RankOnePath or None, default=None
        With ``fitness_shaping`` and a full family, add CMA-ES's rank-one update
        of ``q`` along the evolution path of its mean (:class:`RankOnePath`).
    mixed : bool, default=False
        With derivatives at the draws (:class:`~skvan.objectives.FunctionObjective`
        of order 1 or 2), mix each pathwise average with another unbiased
        estimate of the same expectation from the same draws, at the weight
        that minimises their total variance as measured over the antithetic
        pairs in whitened coordinates (PIPPS's total propagation, Parmas et al.
        2018): ``E[grad f]`` with the score-function estimate from the values,
        ``L E[z (f(mu + A z) - f(mu - A z)) / 2]``, and at order 2 ``E[hess f]``
        with the gradients' Stein estimate (order 1's curvature). Where ``q``
        is wide over oscillations of ``f`` the gradients at the draws vary far
        more than their average (Griewank's cosines under ``sd = 10``), while
        the values do not; where ``f`` is quadratic over ``q`` the pathwise
        averages are exact and keep all the weight. The weight comes from the
        draws it weighs (a bias of the order of one over the pairs); with one
        pair the averages are kept. False: the averages alone (the paper's
        estimators).

    References
    ----------
    Parmas, P., Rasmussen, C. E., Peters, J. and Doya, K. (2018). PIPPS: Flexible
    model-based policy search robust to the curse of chaos. ICML.
    """

    deterministic = False

    def __init__(self, n_mc_samples=10, fitness_shaping=False, mean_rate=1.0, scale_rate=1.0,
                 scale_path=None, shape_path=None, mixed=False):
        self.n_mc_samples = n_mc_samples
        self.mixed = mixed
        self.fitness_shaping = fitness_shaping
        self.mean_rate = mean_rate
        self.scale_rate = scale_rate
        self.scale_path = scale_path
        self.shape_path = shape_path

    def __call__(self, objective, family, hessian="exact", random_state=None):
        if random_state is None:
            random_state = np.random.default_rng()
        if isinstance(objective, FunctionObjective):
            return self._function(objective, family, hessian, random_state)
        thetas = family.sample(self.n_mc_samples, random_state)
        if isinstance(objective, LinearModelObjective):
            return self._linear(objective, family, thetas, hessian)
        if isinstance(objective, MultinomialObjective):
            return self._multinomial(objective, family, thetas, hessian)
        return self._generic(objective, family, thetas, hessian)

    def _function(self, objective, family, hessian, rng):
        """The three oracles on antithetic pairs ``mean +- A z`` (``A A^T = Sigma``):
        :meth:`draw`, ``objective`` at the points, :meth:`combine`."""
        Z, plus, minus = self.draw(family, rng)
        order = objective.order
        if order == 0 and not self.fitness_shaping:
            f0 = objective.values(family.mean[None])
            values, grads, hessians = np.concatenate(
                [f0, objective.values(plus), objective.values(minus)]), None, None
        elif order == 0:
            values = np.concatenate([objective.values(plus), objective.values(minus)])
            grads = hessians = None
        else:
            points = np.vstack([plus, minus])
            values, grads = objective.values_gradients(points)
            hessians = (objective.hessians(points)
                        if order == 2 and hessian != "gauss_newton" else None)
        return self.combine(family, Z, order, values, grads, hessians, hessian)

    def draw(self, family, rng):
        """``Z`` (``n_mc_samples // 2`` standard normal rows) and the antithetic
        points ``mean + A z`` and ``mean - A z``."""
        half = max(1, self.n_mc_samples // 2)
        Z = rng.standard_normal((half, family.n_params))
        E = family.scale_noise(Z)
        return Z, family.mean + E, family.mean - E

    def points(self, family, rng, order):
        """The points at which an iteration needs ``f`` (in the order
        :meth:`combine` reads the values): ``mean`` first for the raw zero-order
        estimator (its baseline), then the ``+`` draws, then the ``-`` draws.
        Returns ``(Z, points)``."""
        Z, plus, minus = self.draw(family, rng)
        parts = [plus, minus]
        if order == 0 and not self.fitness_shaping:
            parts.insert(0, family.mean[None])
        return Z, np.vstack(parts)

    def combine(self, family, Z, order, values, grads=None, hessians=None, hessian="exact"):
        """:class:`Expectations` from the oracle's answers at :meth:`points`.

        - order 2: averages of ``grad f`` and ``hess f`` (or ``g g^T``).
        - order 1: ``E[grad f]`` averaged; ``E[hess f] = Sigma^-1 E[(theta - mu) grad f^T]``
          (Bonnet/Price), i.e. ``L E[z (g(mu + A z) - g(mu - A z))^T / 2]``, symmetrised.
        - with ``mixed``, orders 1 and 2: :meth:`_mixed` in place of the averages.
        - order 0: with ``d = (f(mu + A z) - f(mu - A z)) / 2`` and the baseline
          ``s = (f(mu + A z) + f(mu - A z)) / 2 - f(mu)``: ``E[grad f] = L E[z d]``
          and ``E[hess f] = L E[(z z^T - I) s] L^T`` (Gaussian score-function
          identities; antithetic pairs and the baseline remove the constant and
          odd parts of the noise). With ``fitness_shaping``: :meth:`_shaped`.
        """
        half = Z.shape[0]
        diag = family.diagonal
        if order == 0 and self.fitness_shaping:
            return self._shaped(family, Z, values)
        if order == 0:
            finite = np.isfinite(values)
            if not all_of(finite):
                # A value that is not finite counts as the batch's worst: the
                # estimates then point away from where f is undefined.
                if not any_of(finite):
                    return undefined(family)
                values = np.where(finite, values, max_of(values[finite]))
            f0, fp, fm = values[0], values[1:half + 1], values[half + 1:]
            s = 0.5 * (fp + fm) - f0
            gradient = self.score_gradient(family, Z, fp, fm)
            noise = _noise(Z * (0.5 * (fp - fm))[:, None])
            if diag:
                C = family.unwhiten(family.unwhiten(((Z**2 - 1.0) * s[:, None]).mean(0)))
            else:
                W = (Z.T * s) @ Z / half - s.mean() * np.eye(family.n_params)
                C = family.unwhiten(family.unwhiten(W).T)
            return Expectations(float(0.5 * (fp + fm).mean()), gradient, C, noise=noise)
        if self.mixed and half > 1:
            return self._mixed(family, Z, order, values, grads, hessians, hessian)
        noise = _noise(family.whiten_gradients(0.5 * (grads[:half] + grads[half:])))
        return Expectations(float(values.mean()), grads.mean(0),
                            self._curvature(family, Z, order, grads, hessians, hessian),
                            noise=noise)

    @staticmethod
    def score_gradient(family, Z, plus, minus):
        """``E[grad f] = L E[z (f(mu + A z) - f(mu - A z)) / 2]`` from the values at
        the antithetic draws (``Z`` whitened, under ``family``), pairs with a value
        that is not finite left out (NaN if none is left)."""
        kept = np.isfinite(plus) & np.isfinite(minus)
        if not any_of(kept):
            return np.full(family.n_params, np.nan)
        d = 0.5 * (plus[kept] - minus[kept])
        return family.unwhiten(Z[kept].T @ d / d.shape[0])

    @staticmethod
    def _curvature(family, Z, order, grads, hessians, hessian):
        """The averaged curvature of orders 1 and 2 (:meth:`combine`)."""
        half, diag = Z.shape[0], family.diagonal
        if hessian == "gauss_newton":
            return (grads**2).mean(0) if diag else grads.T @ grads / len(grads)
        if order == 2 and diag:
            # Hessians, or only their diagonals (n_points, n) for a diagonal family.
            return (hessians.mean(0) if hessians.ndim == 2
                    else np.einsum("kii->i", hessians) / len(hessians))
        if order == 2:
            return hessians.mean(0)
        if diag:
            # The diagonal of L Z^T D / half without forming the n x n product.
            return family.unwhiten((Z * (0.5 * (grads[:half] - grads[half:]))).sum(0) / half)
        W = Z.T @ (0.5 * (grads[:half] - grads[half:])) / half
        C = family.unwhiten(W)
        return 0.5 * (C + C.T)

    def _mixed(self, family, Z, order, values, grads, hessians, hessian):
        """Orders 1 and 2 with ``mixed``: each pathwise average mixed with the other
        estimate (the class's ``mixed``), per antithetic pair in whitened
        coordinates (:func:`_mixing_weight`)."""
        half = Z.shape[0]
        path = family.whiten_gradients(0.5 * (grads[:half] + grads[half:]))
        score = Z * (0.5 * (values[:half] - values[half:]))[:, None]
        w = _mixing_weight(path, score)
        gradient = family.unwhiten(w * path.mean(0) + (1.0 - w) * score.mean(0))
        noise = _noise(w * path + (1.0 - w) * score)
        if order == 1 or hessian == "gauss_newton":
            C = self._curvature(family, Z, order, grads, hessians, hessian)
            return Expectations(float(values.mean()), gradient, C, noise=noise)
        # Stein's estimate per pair, whitened: z (A^T dg)^T, dg = (g+ - g-) / 2.
        stein = family.whiten_gradients(0.5 * (grads[:half] - grads[half:]))
        n = family.n_params
        if family.diagonal:
            h = hessians if hessians.ndim == 2 else np.einsum("kii->ki", hessians)
            pairs = family.whiten_gradients(family.whiten_gradients(0.5 * (h[:half] + h[half:])))
            stein = Z * stein
        else:
            H = 0.5 * (hessians[:half] + hessians[half:])  # A^T H A = L^-1 H L^-T per pair
            right = family.whiten_gradients(H.reshape(-1, n)).reshape(half, n, n)
            pairs = family.whiten_gradients(
                right.transpose(0, 2, 1).reshape(-1, n)).reshape(half, n, n)
            stein = Z[:, :, None] * stein[:, None, :]
            stein = 0.5 * (stein + stein.transpose(0, 2, 1))
        w = _mixing_weight(pairs, stein)
        W = w * pairs.mean(0) + (1.0 - w) * stein.mean(0)
        C = (family.unwhiten(family.unwhiten(W)) if family.diagonal
             else family.unwhiten(family.unwhiten(W).T))
        return Expectations(float(values.mean()), gradient, C, noise=noise)

    def _shaped(self, family, Z, values):
        """Zero order with fitness shaping: the score-function identities applied
        to the utilities ``v = -u`` of the values' ranks instead of the values
        (``values`` at the ``+`` draws, then the ``-`` draws).

        With ``Z`` the whitened draws of both signs, ``E[grad] = L E[z v]`` and
        ``E[hess] = L E[(z z^T - I) v] L^T``: the VAN step then is the
        exponential-NES (xNES) step to first order, ``P <- L (I - beta G) L^T``
        with ``G = sum_s u_s (z_s z_s^T - I)``. Invariant to any increasing
        transformation of ``f``. ``scale_path`` and ``shape_path`` add their
        terms to the whitened curvature; utilities all 0 (every value tied) mark
        the estimate ``flat``.
        """
        Zs = np.vstack([Z, -Z])
        finite = np.isfinite(values)
        if not any_of(finite):
            return undefined(family)
        # A value that is not finite ranks last (ties among such values share).
        v = -rank_utilities(np.where(finite, values, np.inf))
        flat = not np.any(v)  # every value tied: no ranking (rank_utilities)
        gradient = self.mean_rate * family.unwhiten(Zs.T @ v)
        n = family.n_params
        if family.diagonal:
            # Each variance is a scale of its own (separable NES): all at the scale rate.
            w = self.scale_rate * ((Zs**2 - 1.0) * v[:, None]).sum(0)
            C = family.unwhiten(family.unwhiten(w))
        else:
            W = (Zs.T * v) @ Zs - v.sum() * np.eye(n)
            if self.scale_path is None:
                W[np.diag_indices(n)] += (self.scale_rate - 1.0) * np.trace(W) / n
            else:
                # The trace of W stays (xNES's scale update) and CSA's shift adds to
                # it, as CMA-ES's scale moves by CSA and by its covariance update's
                # trace (scale_path's docstring).
                shift = self.scale_path.update(Zs, -v)  # first: the shape path reads it
                if self.shape_path is not None:
                    W += self.shape_path.update(family, Zs, -v)
                W[np.diag_indices(n)] += shift
            C = family.unwhiten(family.unwhiten(W).T)
        return Expectations(float(values[finite].mean()), gradient, C, flat)

    @staticmethod
    def _linear(objective, family, thetas, hessian):
        """The per-sample averages over the draws pushed through ``X`` at once
        (``A = X Theta^T``), assembled like the deterministic estimators' integrals."""
        A = dot(objective.X, thetas.T)
        d0, d1, d2 = objective.loss.loss_derivatives(objective.y[:, None], A)
        curvature = objective.loss.gauss_newton(d1, d2) if hessian == "gauss_newton" else d2
        per_sample = (d0.mean(axis=1), d1.mean(axis=1), curvature.mean(axis=1))
        return assemble_linear(objective, family, per_sample, hessian)

    @staticmethod
    def _multinomial(objective, family, thetas, hessian):
        """The draws' ``K`` predictors per row, ``A = X W_s^T``, averaged like the
        cubature's points."""
        A = np.stack([objective.predictors(t) for t in thetas], axis=1)  # (n, S, K)
        l, G, H = objective.loss.loss_derivatives(objective.Y[:, None, :], A)
        H = objective.loss.gauss_newton(G, H) if hessian == "gauss_newton" else H
        per_row = (l.mean(axis=1), G.mean(axis=1), H.mean(axis=1))
        return assemble_linear(objective, family, per_row, hessian)

    @staticmethod
    def _generic(objective, family, thetas, hessian):
        value, gradient, C = 0.0, 0.0, 0.0
        curv = objective.gauss_newton if hessian == "gauss_newton" else objective.hessian
        for theta in thetas:
            value += objective.value(theta)
            gradient = gradient + objective.gradient(theta)
            H = curv(theta)
            C = C + (np.diag(H) if family.diagonal else H)
        S = len(thetas)
        return Expectations(value / S, gradient / S, C / S)


def _noise(pairs):
    """The summed variance of the mean of ``pairs`` (one whitened gradient
    estimate per antithetic pair, ``(half, n)``): ``tr Var / half`` with the
    unbiased variance; inf from a single pair."""
    half = pairs.shape[0]
    if half < 2:
        return np.inf
    d = pairs - pairs.mean(0)
    return float(np.sum(d * d)) / (half * (half - 1))


def _mixing_weight(a, b):
    """The weight ``w`` on ``a``'s mean in ``w mean(a) + (1 - w) mean(b)`` that
    minimises the total variance, from the rows of ``a`` and ``b`` (one estimate
    of each per antithetic pair, any trailing shape): ``(V_b - C) / (V_a + V_b -
    2 C)`` in ``[0, 1]`` with ``V`` the summed variances and ``C`` the summed
    covariances of the entries; 1 where the two cannot be told apart."""
    da = (a - a.mean(0)).ravel()
    db = (b - b.mean(0)).ravel()
    va, vb, cab = float(da @ da), float(db @ db), float(da @ db)
    spread = va + vb - 2.0 * cab  # the variance of a - b
    if not spread > 0.0:
        return 1.0
    return float(np.clip((vb - cab) / spread, 0.0, 1.0))


def _selection(u):
    """``(mu_eff, v)`` of the utilities ``u`` of antithetic draws: the
    variance-effective selection mass ``1 / sum w^2`` of the selection weights
    ``w = u + 1/lam`` (the baseline added back), and the variance per coordinate
    of the whitened step ``sum_s u_s z_s`` under random selection,
    ``v = (lam sum w^2 - 1) / (lam - 1)`` (a pair both selected cancels), not
    ``1 / mu_eff`` as for independent draws: normalised by the latter, the
    scale's path came out short and ``q`` shrank by 4% per step with nothing
    selected (``tests/test_optimize_explore.py::test_cumulative_scale_is_neutral_under_random_selection``)."""
    lam = len(u)
    square = float(np.sum((u + 1.0 / lam) ** 2))
    return 1.0 / square, (lam * square - 1.0) / (lam - 1.0)


class CumulativeScale:
    """Cumulative step-size adaptation (CSA) of ``q``'s global scale, as in CMA-ES.

    The whitened mean steps ``zbar_t = sum_s u_s z_s`` (utilities ``u``; under
    random selection, with antithetic pairs, ``zbar ~ N(0, v I)`` with
    ``v = (lam sum w^2 - 1) / (lam - 1)``, ``w = u + 1/lam`` the selection
    weights) are accumulated in a path ``p <- (1 - c) p + sqrt(c (2 - c) / v) zbar``
    (CMA-ES has ``v = 1 / mu_eff``, ``mu_eff = 1 / sum w^2``, for independent
    draws); a path longer than a
    standard normal vector's expected length ``chi_n`` means consecutive steps
    point the same way (``q`` too narrow), a shorter one that they cancel (too
    wide). The scale then changes by ``sigma <- sigma exp(delta)``,
    ``delta = (c / d) (|p| / chi_n - 1)``, with Hansen's default rates
    ``c = (mu_eff + 2) / (n + mu_eff + 5)`` and damping
    ``d = 1 + 2 max(0, sqrt((mu_eff - 1) / (n + 1)) - 1) + c``.

    In VAN's terms this is a multiple of the identity added to the whitened
    curvature (:class:`MonteCarlo` adds it to the rank-mu update's own trace,
    as CMA-ES's scale moves by CSA and by its covariance update): on its own
    ``P`` scales by ``exp(-2 delta)``, so :meth:`update` returns
    ``(exp(-2 delta) - 1) / beta_t`` for the solver's constant ``beta_t``. The
    path is state: one object per run.

    Parameters
    ----------
    n : int
        Dimension.
    beta : float
        The solver's (constant) ``beta_t``.
    """

    def __init__(self, n, beta):
        self.n = n
        self.beta = beta
        self.path = np.zeros(n)
        self.chi = np.sqrt(n) * (1.0 - 1.0 / (4.0 * n) + 1.0 / (21.0 * n * n))
        self.rate, self.n_updates = 0.0, 0

    def growing_fast(self):
        """CMA-ES's ``h_sigma = 0``: the path is longer than
        ``(1.4 + 2 / (n + 1)) chi_n`` (corrected for its start at 0), as when the
        scale must grow fast (a linear slope). :class:`RankOnePath` then stalls, so
        that the shape does not stretch along steps the scale is about to take."""
        if not self.n_updates:
            return False
        start = np.sqrt(1.0 - (1.0 - self.rate) ** (2 * self.n_updates))
        return bool(np.linalg.norm(self.path) / start >= (1.4 + 2.0 / (self.n + 1)) * self.chi)

    def update(self, Z, u):
        """Advance the path with the whitened draws ``Z`` (antithetic: row ``s + lam/2``
        is minus row ``s``) and their utilities ``u``; return the whitened
        precision's diagonal shift."""
        mu_eff, spread = _selection(u)
        c = (mu_eff + 2.0) / (self.n + mu_eff + 5.0)
        d = 1.0 + 2.0 * max(0.0, np.sqrt((mu_eff - 1.0) / (self.n + 1.0)) - 1.0) + c
        if spread <= 1e-12:
            # Every draw tied (a plateau of f): no step to accumulate. Widen q
            # as CMA-ES does on flat fitness, sigma * exp(0.2 + c / d), to find
            # where f changes.
            delta = 0.2 + c / d
            return float(np.expm1(-2.0 * delta) / self.beta)
        self.path = (1.0 - c) * self.path + np.sqrt(c * (2.0 - c) / spread) * (Z.T @ u)
        self.rate, self.n_updates = c, self.n_updates + 1
        delta = (c / d) * (np.linalg.norm(self.path) / self.chi - 1.0)
        return float(np.expm1(-2.0 * delta) / self.beta)


def cma_rates(n, n_samples):
    """CMA-ES's default learning rates of the covariance (Hansen, "The CMA
    Evolution Strategy: A Tutorial", 2016) for ``n`` dimensions and the weights of
    :func:`rank_utilities` over ``n_samples`` draws: ``(c_1, c_mu, mu_eff)``, the
    rank-one rate ``2 / ((n + 1.3)^2 + mu_eff)``, the rank-mu rate
    ``min(1 - c_1, 2 (mu_eff - 2 + 1 / mu_eff) / ((n + 2)^2 + mu_eff))`` and the
    variance-effective selection mass ``1 / sum w^2``."""
    raw = np.maximum(0.0, np.log(n_samples / 2.0 + 1.0) - np.log(np.arange(1, n_samples + 1)))
    mu_eff = 1.0 / float(np.sum((raw / raw.sum()) ** 2))
    c_1 = 2.0 / ((n + 1.3) ** 2 + mu_eff)
    c_mu = min(1.0 - c_1, 2.0 * (mu_eff - 2.0 + 1.0 / mu_eff) / ((n + 2.0) ** 2 + mu_eff))
    return c_1, c_mu, mu_eff


class RankOnePath:
    """CMA-ES's rank-one update of the shape of ``q``, along the evolution path of
    its mean.

    The mean steps ``y_t = (m_{t+1} - m_t) / sigma_t`` (``sigma_t = det(Sigma)^(1/2n)``,
    so ``y`` lives in the coordinates of ``C = Sigma / sigma^2``) are accumulated in
    ``p <- (1 - c_c) p + sqrt(c_c (2 - c_c) / v) y`` with ``v`` the variance of the
    whitened step under random selection (:class:`CumulativeScale`) and Hansen's
    ``c_c = (4 + mu_eff / n) / (n + 4 + 2 mu_eff / n)``. Consecutive steps in the
    same direction make ``p`` long along it, and the covariance update gets
    ``c_1 (p~ p~^T - I)`` in whitened coordinates (``p~ = sigma L^T p``,
    ``precision = L L^T``), which widens ``q`` along that direction: the rank-one
    update with which CMA-ES learns a long valley in a few steps where the
    rank-mu update (xNES's) needs many. In VAN's terms the whitened curvature
    gets ``-(c_1 / beta) (p~ p~^T - I)`` for the solver's constant ``beta_t``.

    Under random selection ``p~`` is standard normal and the term averages to
    zero. While the scale grows fast (``scale_path.growing_fast()``, CMA-ES's
    ``h_sigma = 0``) the path does not take the step: on a linear slope the
    rank-one update would otherwise stretch ``q`` along the steps and shorten the
    scale's own path (``q``'s scale stayed below 10 in 40 iterations on
    ``f(x) = x_0`` in 4-D, and passed 1e3 with the stall:
    ``tests/test_optimize_explore.py::test_the_rank_one_path_stalls_on_a_linear_slope``).
    :func:`skvan.minimize` uses it with ``options={"shape_update": "cma"}``.
    The path is state: one object per run.

    Parameters
    ----------
    n : int
        Dimension.
    beta : float
        The solver's (constant) ``beta_t``.
    scale_path : CumulativeScale or None, default=None
        The scale's path, updated first in each iteration (for ``h_sigma``).
    c1_fraction : float, default=1.0
        The rank-one rate as a fraction of CMA-ES's ``c_1``
        (:func:`skvan.minimize` with xNES's rank-mu rate uses 1/2, its
        ``rank_one_fraction`` option).
    """

    def __init__(self, n, beta, scale_path=None, c1_fraction=1.0):
        self.n = n
        self.beta = beta
        self.scale_path = scale_path
        self.c1_fraction = c1_fraction
        self.path = np.zeros(n)

    def update(self, family, Z, u):
        """Advance the path with this iteration's whitened draws ``Z`` (antithetic)
        and utilities ``u`` under ``family`` (the ``q`` they were drawn from);
        return the term for the whitened curvature, ``(n, n)``."""
        n = self.n
        mu_eff, spread = _selection(u)
        if spread <= 1e-12:
            return np.zeros((n, n))  # every draw tied: no step (CumulativeScale widens q)
        c_1 = self.c1_fraction * 2.0 / ((n + 1.3) ** 2 + mu_eff)  # cma_rates'
        c_c = (4.0 + mu_eff / n) / (n + 4.0 + 2.0 * mu_eff / n)
        sigma = float(np.exp(-family.logdet_precision() / (2.0 * n)))
        step = family.scale_noise((Z.T @ u)[None, :])[0] / sigma
        stall = self.scale_path is not None and self.scale_path.growing_fast()
        self.path = (1.0 - c_c) * self.path + (not stall) * np.sqrt(c_c * (2.0 - c_c) / spread) * step
        p = sigma * family.whiten(self.path)
        return -(c_1 / self.beta) * (np.outer(p, p) - np.eye(n))


def rank_utilities(values):
    """Rank-based utilities of natural evolution strategies (Wierstra et al., 2014).

    With ``lam`` values ranked from the lowest (best, rank 1),
    ``u_k = max(0, log(lam/2 + 1) - log k) / sum_j max(0, log(lam/2 + 1) - log j) - 1/lam``:
    the better half gets positive weights decreasing with rank, and the
    utilities sum to zero (the baseline). Ties share their ranks' mean utility;
    where every value ties, all are exactly 0 (not their mean's round-off).
    """
    lam = len(values)
    ranks = np.arange(1, lam + 1)
    raw = np.maximum(0.0, np.log(lam / 2.0 + 1.0) - np.log(ranks))
    table = raw / raw.sum() - 1.0 / lam
    order = np.argsort(values, kind="stable")
    u = np.empty(lam)
    u[order] = table
    # Equal values get equal utilities (the mean over their ranks).
    sorted_values = values[order]
    _, start, counts = np.unique(sorted_values, return_index=True, return_counts=True)
    if len(counts) == 1:
        return np.zeros(lam)
    for first, count in zip(start, counts):
        if count > 1:
            u[order[first:first + count]] = table[first:first + count].mean()
    return u
