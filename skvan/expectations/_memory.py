"""Variance-reduced minibatch expectations: every row's last integrals, remembered."""

import numpy as np

from ._base import ExpectationEstimator, Expectations, assemble_linear


class RowMemory(ExpectationEstimator):
    """Expectations of a finite sum from minibatches, with the whole data's gradient
    and curvature: each row keeps its last per-sample integrals, and a minibatch
    refreshes its own rows' (incremental Newton, Rodomanov and Kropotov 2016, with
    VAN's expectations in place of values at a point).

    Row ``i`` was last integrated under ``q_s`` (predictor mean ``m_i``), giving
    ``E[l'_i]`` and ``E[c_i]`` (:meth:`LinearPredictorExpectation._raw` of the
    estimator ``inner``). Under the current ``q`` (mean ``mu``) the data term's
    expected gradient is taken from each row's first-order model at ``mu``::

        E[grad f] ~ sum_i w_i (E[l'_i] + E[c_i] (x_i^T mu - m_i)) x_i
                  = X^T (w r) + H mu,   r_i = E[l'_i] - E[c_i] m_i,
        E[C]      ~ H = X^T diag(w E[c]) X

    (``d E[l'(a)] / d m = E[l''(a)]`` for ``a ~ N(m, v)``), plus the penalty's
    expectations under the current ``q``. ``X^T (w r)`` and ``H`` are kept as sums
    and corrected by the minibatch's rows only (``O(b p^2)`` for ``b`` rows), so
    a step costs about a minibatch's integrals and one factorisation, and a pass
    over the data about one full-batch iteration. Unlike a minibatch's scaled
    estimate, this one's error vanishes as the iterates settle: at a fixed point
    every row's integrals are those under the current ``q``, so VO's limit is the
    minimiser of ``f`` and VI's fixed point the full-data posterior, reached at
    a linear rate under :class:`~skvan.van.IncrementalSchedule`.

    Until every row has been integrated once, the estimate is the minibatch's
    own (scaled to the data, as without memory), and :attr:`complete` is False:
    :class:`~skvan.van.IncrementalSchedule` averages those steps, and takes the
    full-batch schedule's from the first complete estimate. The memory is the
    rows' integrals (``l``'s value, ``r`` and ``E[c]``: 3 floats per row; for
    ``K`` classes ``1 + K + K^2``) plus the sums, ``H`` in the family's form.
    The models' ``H mu`` needs the whole curvature: a diagonal family is refused
    (its aggregated gradients alone, with diagonally scaled Newton steps, did
    not converge).

    Parameters
    ----------
    inner : LinearPredictorExpectation
        Integrates a minibatch's rows (closed form, quadrature or cubature).

    Attributes
    ----------
    n_seen_ : int
        Rows integrated at least once in the current run.

    References
    ----------
    A. Rodomanov and D. Kropotov, "A Superlinearly-Convergent Proximal Newton-Type
    Method for the Optimization of Finite Sums", ICML 2016. N. Le Roux, M. Schmidt
    and F. Bach, "A Stochastic Gradient Method with an Exponential Convergence
    Rate for Finite Training Sets" (SAG), NeurIPS 2012.

    Examples
    --------
    On least squares each row's model is exact, so once every row has been seen
    the expectations are the full data's and VO's steps reach the solution (to
    the solver's default tolerance, 1e-5):

    >>> import numpy as np
    >>> from skvan.expectations import ClosedForm, RowMemory
    >>> from skvan.objectives import LinearModelObjective, SquaredLoss
    >>> from skvan.van import (DampedNewtonStep, IncrementalSchedule, Minibatches,
    ...                        VANSolver, make_family)
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((40, 3)); y = X @ np.array([1.0, -2.0, 0.5])
    >>> f = LinearModelObjective(X, y, SquaredLoss())
    >>> solver = VANSolver(f, RowMemory(ClosedForm()), make_family("full", np.zeros(3), np.eye(3)),
    ...                    schedule=IncrementalSchedule(1.0, 100.0, steps_per_pass=4),
    ...                    step=DampedNewtonStep(), batches=Minibatches(10), max_iter=40,
    ...                    random_state=0)
    >>> np.round(solver.solve().family.mean, 4)
    array([ 1. , -2. ,  0.5])
    """

    deterministic = True

    def __init__(self, inner):
        self.inner = inner

    def check_objective(self, objective):
        self.inner.check_objective(objective)

    def reset(self, solver):
        """Forget every row: a new run on ``solver.f``."""
        if solver.family.diagonal:
            raise TypeError("RowMemory needs a family whose curvature is the whole matrix "
                            "(covariance='full'), got a diagonal one.")
        self.inner.reset(solver)
        self._f = solver.f
        self._seen = np.zeros(solver.f.n_samples, dtype=bool)
        self.n_seen_ = 0
        self._rows = None  # each row's (value, r, E[c]), allocated from the first batch's
        self._sum_r = self._sum_h = None

    @property
    def complete(self):
        """Whether every row has been integrated (the estimates are the whole data's)."""
        return self.n_seen_ == self._f.n_samples

    def __call__(self, objective, family, hessian="exact", random_state=None):
        f = self._f
        rows = np.arange(f.n_samples) if objective.rows is None else objective.rows
        mean = family.mean
        raw = self.inner._raw_at(objective, family, mean, hessian)
        unique, first = np.unique(rows, return_index=True)
        if unique.size < rows.size:  # a batch across two passes may repeat a row
            objective, rows = objective.subsample(first), unique
            raw = tuple(e[first] for e in raw)
        was_complete = self.complete
        self._remember(objective, family, rows, raw)
        if not (was_complete or self.complete):
            # Rows not seen yet have no integrals: the minibatch's own estimate.
            return assemble_linear(objective, family, raw, hessian)
        gradient = self._sum_r + self._sum_h @ mean
        p0, p1, p2 = f.penalty.expectation_under(family, mean, hessian)
        g0, g1 = f.gauge_expectation(family, mean)
        value = float(np.dot(f.weights, self._rows[0])) + p0 + g0
        # (a copy: adding the penalty may write into the matrix it is given)
        curvature = f.penalty.add_curvature(f.add_gauge(self._sum_h.copy()), p2)
        return Expectations(value, gradient + p1 + g1, curvature)

    def _remember(self, objective, family, rows, raw):
        """Replace the integrals of ``rows`` (the minibatch ``objective``'s) by
        ``raw`` and correct the sums by the difference, at the full data's
        weight (the minibatch's multiplier undone)."""
        e0, e1, e2 = raw
        # r_i = E[l'_i] - E[c_i] m_i (K-vectors where E[c_i] is K x K)
        m = objective.predictors(family.mean)
        r = e1 - (e2 * m if e2.ndim == 1 else np.einsum("ikl,il->ik", e2, m))
        if self._rows is None:
            n = self._f.n_samples
            self._rows = tuple(np.zeros((n,) + np.shape(e)[1:]) for e in (e0, r, e2))
        value, old_r, old_h = self._rows
        unscaled = self._f.multiplier / objective.multiplier
        dr, dh = family.data_derivatives(objective, unscaled * (r - old_r[rows]),
                                         unscaled * (e2 - old_h[rows]))
        self._sum_r = dr if self._sum_r is None else self._sum_r + dr
        self._sum_h = dh if self._sum_h is None else self._sum_h + dh
        value[rows], old_r[rows], old_h[rows] = e0, r, e2
        new = ~self._seen[rows]
        self._seen[rows[new]] = True
        self.n_seen_ += int(np.count_nonzero(new))
