"""The Lasso's engine: L1 (and L1 + L2) penalised least squares solved exactly by
VAN, from one alpha or along a path of them.

:class:`LassoSolver` owns the whole problem, so that an estimator only
validates, builds the engine from its parameters and unpacks:

- the problem (:class:`LassoProblem`): least squares through ``X^T W X`` (one
  pass over the rows), or through the rows themselves for the Gram covariance
  forms and wide data, whose ``X^T W X`` is formed a column at a time as
  coefficients need it (:class:`~skvan.objectives._linear.GramColumns`); the
  penalty, an :class:`~skvan.objectives.ElasticNetPenalty`
  ``alpha n (l1_ratio ||w||_1 + (1 - l1_ratio) ||w||^2 / 2)``: its L2 part (the
  ridge ``rho``) folded into the smooth least squares (``X^T W X + diag(rho)``,
  or ``p`` rows ``sqrt(rho_j) e_j``), so that every exact expectation and the
  KKT machinery of its L1 part apply unchanged;
- one alpha: VAN with the exact L1 expectations, each step the whole-step
  backtrack restricted by :class:`~skvan.van.KeepSigns`, until
  :class:`~skvan.van.LassoCertificate` certifies the support read off ``q``;
  with more parameters than rows, on working sets grown from the KKT
  violations (:func:`~skvan.van.solve_on_working_sets`);
- a path: each alpha from the previous one's solution (a warm start), by
  corrections of its support (the violators of the KKT conditions enter,
  several at once, a coefficient whose sign flips leaves: an active-set
  method, each correction one solve on the support), by homotopy where they
  stall, and by VAN on the problem only where both fail. The homotopy (LARS's
  Lasso path, one event per kink) follows the grid at once while the support
  is small, where its events are cheap and its pieces give every alpha between
  two kinks without a check (``python benchmarks/bench_lasso.py --path``);
- the finish: the noise variance, and under VI the posterior from the VO
  solution.
"""

import copy

import numpy as np
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning

from .._dask import is_dask_collection
from .._data import as_design, tdot, weighted_column_squares
from .._warnings import warn_user
from ..objectives import (
    ElasticNetPenalty,
    LinearModelObjective,
    QuadraticObjective,
    RidgedQuadratic,
    SquaredLoss,
)
from ..objectives._chunked import UNSCALED_DASK
from ..objectives._linear import gram_column_statistics, jacobi_scale_from
from ..objectives._quadratic import RowsQuadratic
from ..sparse import (
    GramRows,
    kkt_descend,
    kkt_excess,
    kkt_finish,
    kkt_follow,
    kkt_path,
    nonnegative,
)
from ._family import make_family, unit_predictor_precision
from ._gram import family_from_parts
from ._schedule import GeometricSchedule
from ._steps import BetaBacktrack, KeepSigns, ObjectiveDecrease
from ._stopping import LassoCertificate
from ._working_set import solve_on_working_sets

#: Covariance forms written through the rows (``P = diag(lam) + X^T diag(d) X``).
GRAM_FORMS = ("dual", "operator")


class Design:
    """The training rows as the engine reads them: ``X`` (validated), and ``[X, 1]``
    (``Xd``, with ``fit_intercept``) built on first use; a dask ``X`` is never
    gathered (its statistics come from a pass over the chunks)."""

    def __init__(self, X, fit_intercept):
        self.X, self.fit_intercept = X, fit_intercept
        self.n_samples, self.n_features = X.shape
        self._Xd = None

    @property
    def Xd(self):
        if self._Xd is None:
            if is_dask_collection(self.X):
                raise ValueError(UNSCALED_DASK)
            self._Xd = as_design(self.X, self.fit_intercept)
        return self._Xd


def warn_uncertified(n_corrections):
    """Warn that the support read off ``q`` failed the KKT check."""
    warn_user(
        f"The support read off q failed the Lasso optimality (KKT) check "
        f"({n_corrections} corrections made); coef_ is the VAN mean with the zeros "
        "of q. Increase max_iter.",
        ConvergenceWarning,
    )


class LassoProblem:
    """One alpha's problem, built once (a path re-weights its penalty).

    ``least_squares`` is the least squares the certificate checks, through
    ``X^T W X`` (or the rows' objective itself for the Gram forms), over
    ``column_scale * theta``; ``design`` is the rows' objective over ``[coef,
    intercept]`` (``n_samples`` rows, of total weight ``total_weight``) and
    ``linear`` the same over ``column_scale * theta``, both built by ``build`` on
    first use where they are not given. ``gram`` holds the one pass's statistics
    a path rebuilds other alphas from, ``ridge`` the penalty's L2 part (an
    :class:`~skvan.objectives.L2Penalty` over ``[coef, intercept]``, or None)
    folded into the least squares and ``ridgeless`` (an elastic net's) that least
    squares without it, to which a path adds each alpha's ridge."""

    def __init__(self, alpha, column_scale, least_squares, n_samples, total_weight,
                 design=None, linear=None, build=None, gram=None, ridge=None, ridgeless=None):
        self.alpha = alpha
        self.column_scale = column_scale
        self.least_squares = least_squares
        self.n_samples = n_samples
        self.total_weight = total_weight
        self._design, self._linear, self._build = design, linear, build
        self.gram = gram
        self.ridge = ridge
        self.ridgeless = ridgeless

    @property
    def n_rows(self):
        """The data's rows: ``n_samples`` less an elastic net's ridge rows (one per
        feature)."""
        return self.n_samples - (0 if self.ridge is None else
                                 int(np.count_nonzero(self.ridge.strength)))

    def _built(self):
        if self._design is None:
            self._design, self._linear = self._build()
        return self._design, self._linear

    @property
    def design(self):
        return self._built()[0]

    @property
    def linear(self):
        return self._built()[1]

    def at(self, alpha, penalty):
        """The problem at ``alpha`` with ``penalty`` (over ``column_scale * theta``)
        on the same least squares (rows not built yet are built on first use)."""
        least_squares = self.least_squares.with_penalty(penalty)
        if self._design is not None:
            return LassoProblem(alpha, self.column_scale, least_squares, self.n_samples,
                                self.total_weight, self._design,
                                self._linear.with_penalty(penalty), gram=self.gram)

        def build():
            design, linear = self._built()
            return design, linear.with_penalty(penalty)

        return LassoProblem(alpha, self.column_scale, least_squares, self.n_samples,
                            self.total_weight, build=build, gram=self.gram)


class LassoFit:
    """What :meth:`LassoSolver.solve` found: the VO ``q`` ``family`` (its mean the
    certified solution over ``column_scale * theta``), the VAN iterations and the
    KKT corrections it took."""

    def __init__(self, family, column_scale, n_iter, n_corrections):
        self.family, self.column_scale = family, column_scale
        self.n_iter, self.n_corrections = n_iter, n_corrections

    @property
    def coef(self):
        """The solution over the scaled coordinates."""
        return self.family.mean

    def coef_in(self, column_scale):
        """The solution over ``column_scale * theta`` (another problem's)."""
        if column_scale is self.column_scale or np.array_equal(column_scale, self.column_scale):
            return self.family.mean
        return self.family.mean / self.column_scale * column_scale


class LassoSolver:
    """The Lasso (or elastic net) by VAN, from one alpha or along a path.

    Minimises, multiplied by the total sample weight ``n``::

        1/2 sum_i s_i (y_i - x_i^T w - b)^2 + n alpha (l1_ratio ||w||_1
                                                       + (1 - l1_ratio) ||w||^2 / 2)

    (the intercept ``b`` unpenalised where ``fit_intercept``). See the module's
    docstring for how.

    Parameters
    ----------
    settings : FitSettings
        The solver's settings (schedule, expectations, covariance form, ...).
    fit_intercept : bool, default=True
    positive : bool, default=False
        Coefficients constrained to ``>= 0`` (:func:`~skvan.sparse.nonnegative`).
    l1_ratio : float, default=1.0
        The L1 share of the penalty, an :class:`~skvan.objectives.ElasticNetPenalty`
        (1: the Lasso, no L2 part).
    working_set_start : int, default=32
        Columns of a wide fit's first working set (the most correlated with the
        residual); each round at most doubles it with the worst KKT violators.
    working_set_enter : float, default=0.5
        A working set after the first is finished by KKT corrections that enter,
        each time, every coordinate violating the conditions by at least this
        fraction of the worst violation: its new columns are mostly in the
        support (``python benchmarks/bench_wide.py --enter``).
    path_corrections : int, default=100
        A path's corrections of the previous alpha's support at the next one
        (batches of violators for a quarter of them, then one coordinate at a
        time, where batches of near-duplicate columns wander), and then as many
        homotopy events from the previous alpha, before VAN runs (0: VAN at
        every alpha whose support changed).
    path_enter : float or None, default=None
        Those batches enter every coordinate violating the conditions by at least
        this fraction of the worst violation. None: ``1e-3`` for an elastic net,
        whose ridge makes every support's equations solvable, so that between
        neighbouring alphas of a grid the previous support's violators are
        nearly always coefficients the path gains (the strong rules' reasoning)
        and one check fails, the next passes; ``working_set_enter`` for the
        Lasso, whose supports the rows bound, and where a batch of near-ties
        overshoots them and wanders (``python benchmarks/bench_lasso.py --path
        --enet-path``).
    certificate : dict or None, default=None
        Options of the stopping test, :class:`~skvan.van.LassoCertificate`
        (``wait``, ``corrections``, ``enter``, ``kept``, ``readings``); None: its
        defaults.
    undecided_radius : float, default=3.0
        :class:`~skvan.van.KeepSigns`'s ``radius``: the longest move, in standard
        deviations of ``q``, of a coefficient whose sign ``q`` has not decided.
    path_gram_flops : float, default=3e6
        A lean path (:meth:`path`) forms ``X^T W X`` instead of working through the
        rows where that costs at most this many multiply-adds (``n p^2``) per
        alpha of its grid: formed once, it serves every alpha's KKT checks.
    path_support : int, default=64
        Along a path the homotopy follows the grid at once while the support has
        at most this many coefficients (each event then costs ``O(p |S|)``, and
        the alphas between two kinks need no check)...
    path_event_rate : float, default=2.0
        ...and beyond, while it makes at most this many events per alpha of the
        grid: an alpha started afresh from the previous one's support costs about
        two KKT checks where its support changes (the one that fails and the
        one that passes), an event one. Where supports grow by more per alpha
        the corrections of each alpha cost less, and once the path has needed
        them beyond ``path_support`` it keeps to them.
    """

    def __init__(self, settings, *, fit_intercept=True, positive=False, l1_ratio=1.0,
                 working_set_start=32, working_set_enter=0.5, path_corrections=100,
                 path_enter=None, certificate=None, undecided_radius=3.0, path_gram_flops=3e6,
                 path_support=64, path_event_rate=2.0):
        self.settings = settings
        self.fit_intercept = fit_intercept
        self.positive = positive
        self.l1_ratio = l1_ratio
        self.working_set_start = working_set_start
        self.working_set_enter = working_set_enter
        self.path_corrections = path_corrections
        self.path_enter = path_enter
        self.certificate = certificate
        self.undecided_radius = undecided_radius
        self.path_gram_flops = path_gram_flops
        self.path_support = path_support
        self.path_event_rate = path_event_rate

    # -- the problem ------------------------------------------------------------------
    def check(self, n_samples):
        """A clear error where ``positive=True`` meets settings it cannot be solved
        under: it is solved through ``X^T X`` by VO (:func:`~skvan.sparse.nonnegative`)."""
        if not self.positive:
            return
        s = self.settings
        reasons = [
            (s.objective == "vi", "objective='vi' (a constrained posterior is not Gaussian)"),
            (not s.exact_full_batch(n_samples), "expectation='mc'/'quadrature' or batch_size"),
            (s.covariance in GRAM_FORMS, f"covariance={s.covariance!r}"),
        ]
        for failed, what in reasons:
            if failed:
                raise ValueError(
                    f"positive=True is solved through X^T X and does not support {what}. "
                    "Use objective='vo', expectation='exact' on the full data, and "
                    "covariance='full' or 'diag'."
                )

    def penalty(self, n_params, total_weight, alpha):
        """``(l1, ridge)``: the parts of the penalty at ``alpha`` over ``[coef,
        intercept]`` on rows of total weight ``total_weight``, an
        :class:`~skvan.objectives.ElasticNetPenalty` with the intercept
        unpenalised; ``ridge``, its L2 part, None where it is 0 (the Lasso)."""
        penalty = ElasticNetPenalty.from_alpha(alpha, self.l1_ratio, n_params, total_weight,
                                               int(self.fit_intercept))
        return penalty.l1, penalty.l2 if np.any(penalty.l2.strength > 0) else None

    def rows_objective(self, Xd, y, sample_weight, alpha):
        """Least squares on the design ``Xd`` (``[X, 1]``) with the L1 part of the
        penalty at ``alpha``; with an L2 part ``rho``, on ``[Xd; diag(sqrt(rho))]``
        (the intercept's column 0 in the extra rows) with ``y`` padded with zeros."""
        total = float(np.sum(sample_weight))
        l1, ridge = self.penalty(Xd.shape[1], total, alpha)
        if ridge is not None:
            Xd, y, sample_weight = _ridge_rows(Xd, y, sample_weight, ridge.strength,
                                               self.fit_intercept)
        return LinearModelObjective(Xd, y, SquaredLoss(), sample_weight, l1)

    def problem(self, design, y, sample_weight, alpha, gram=None, on_rows=False):
        """What a fit at ``alpha`` solves (:class:`LassoProblem`), from the design
        ``design(X)``-built rows. Through ``X^T W X`` formed with ``X^T W y`` and
        the columns' statistics in one pass over the rows (:meth:`statistics`, or
        ``gram``, a path's), the rows' objective built only where VAN needs it;
        through the rows where ``on_rows`` (the Gram covariance forms) or where
        the Gram matrix cannot stand in for the columns' statistics (extreme
        entries, zero weights: the rows are rescaled first, and their Gram
        matrix formed in those coordinates)."""
        if not on_rows:
            gram = self.statistics(design.X, y, sample_weight) if gram is None else gram
            if gram is not None:
                return self.gram_problem(design, y, sample_weight, alpha, gram)
        return self._rows_problem(design, y, sample_weight, alpha, on_rows)

    def _rows_problem(self, design, y, sample_weight, alpha, on_rows):
        """The problem from the rows' objective, rescaled by the Jacobi scale of its
        columns, then (but for the Gram forms) its Gram matrix formed in those
        coordinates."""
        full = self.rows_objective(design.Xd, y, sample_weight, alpha)
        column_scale = full.column_scale()
        linear = full.reparametrised(column_scale)
        least_squares = linear if on_rows else QuadraticObjective.from_linear(linear)
        total = float(np.sum(sample_weight))
        return LassoProblem(alpha, column_scale, least_squares, full.X.shape[0], total, full,
                            linear, ridge=self.penalty(full.n_params, total, alpha)[1])

    def statistics(self, X, y, sample_weight):
        """The least squares on ``[X, 1]`` and its columns' statistics, ``(raw, top,
        squares)`` (:meth:`~skvan.objectives.QuadraticObjective.from_design`,
        ``gram_column_statistics``); None where they cannot be read off the Gram
        matrix."""
        with np.errstate(over="ignore", invalid="ignore"):  # extreme entries: None
            raw = QuadraticObjective.from_design(X, y, sample_weight, self.fit_intercept)
        top, squares = gram_column_statistics(raw.G, sample_weight)
        return None if top is None else (raw, top, squares)

    def gram_problem(self, design, y, sample_weight, alpha, gram):
        """The problem at ``alpha`` from one pass's statistics ``gram``: its least
        squares plus the ridge's ``r I``, rescaled by the Jacobi scale computed
        from the columns' statistics; the rows' objective built on first use."""
        raw, top, squares = gram
        n_features, rows_weight = design.n_features, raw.total_weight
        l1, ridge = self.penalty(raw.n_params, rows_weight, alpha)
        extra = 0 if ridge is None else n_features

        def build():
            full = self.rows_objective(design.Xd, y, sample_weight, alpha)
            return full, full.reparametrised(column_scale)

        def rows_squares(norm):  # entries beyond 1e+-100 (or a huge ridge): the rows'
            full = self.rows_objective(design.Xd, y, sample_weight, alpha)
            return weighted_column_squares(full.X, full.sample_weight, norm)

        if extra:
            # [X; diag(sqrt(rho))] with weights [w, 1]: the ridge rows add rho_j to
            # each feature's weighted squares and sqrt(rho_j) to its largest entry.
            rho = ridge.strength[:n_features]
            top, squares = top.copy(), squares.copy()
            top[:n_features] = np.maximum(top[:n_features], np.sqrt(rho))
            squares[:n_features] += rho
        total = rows_weight + extra
        column_scale = jacobi_scale_from(
            total, top, lambda norm: squares if norm is None else rows_squares(norm), 0.0,
            design.n_samples + extra)
        ridgeless = QuadraticObjective(raw.G, raw.b, raw.c, total_weight=total).rescaled(
            column_scale, l1.reparametrised(column_scale))
        ridgeless.gram_rows = _gram_rows(design, sample_weight, column_scale,
                                         0.0 if ridge is None else ridge.strength)
        return LassoProblem(alpha, column_scale, self._with_ridge(ridgeless, ridge, column_scale),
                            design.n_samples + extra, rows_weight, build=build, gram=gram,
                            ridge=ridge, ridgeless=ridgeless if extra else None)

    @staticmethod
    def _with_ridge(ridgeless, ridge, column_scale, penalty=None):
        """``ridgeless`` (over ``column_scale * theta``) plus the L2 penalty ``ridge``
        (None: none): ``rho_j / s_j^2`` on the diagonal (exact: the Jacobi scales
        are powers of two), with ``penalty`` (None: ``ridgeless``'s)."""
        penalty = ridgeless.penalty if penalty is None else penalty
        if ridge is None:
            return ridgeless if penalty is ridgeless.penalty else ridgeless.with_penalty(penalty)
        return RidgedQuadratic(ridgeless, ridge.reparametrised(column_scale).strength, penalty)

    def _reridged(self, problem, alpha, design, y, sample_weight):
        """An elastic net's ``problem`` at another ``alpha`` on the same column
        scale: its ridgeless least squares plus this alpha's ridge, the L1
        strengths re-weighted; the rows' objective built on first use."""
        column_scale, total = problem.column_scale, problem.total_weight
        ridgeless = problem.ridgeless
        l1, ridge = self.penalty(ridgeless.n_params, total, alpha)

        def build():
            full = self.rows_objective(design.Xd, y, sample_weight, alpha)
            return full, full.reparametrised(column_scale)

        least_squares = self._with_ridge(ridgeless, ridge, column_scale,
                                         l1.reparametrised(column_scale))
        return LassoProblem(alpha, column_scale, least_squares, problem.n_samples, total,
                            build=build, gram=problem.gram, ridge=ridge, ridgeless=ridgeless)

    def at_alpha(self, problem, alpha, design, y, sample_weight):
        """``problem`` at another ``alpha``: the L1 strengths re-weighted on the same
        least squares; with a ridge, which changes with alpha, built again from the
        statistics formed once, on the same column scale (``problem.ridgeless``)."""
        if self.l1_ratio < 1.0:
            if problem.ridgeless is not None:
                return self._reridged(problem, alpha, design, y, sample_weight)
            return self.problem(design, y, sample_weight, alpha, problem.gram,
                                on_rows=problem.gram is None)
        return problem.at(alpha, problem.least_squares.penalty.multiplied(alpha / problem.alpha))

    def solved(self, problem):
        """``(solved, f)``: the least squares the certificate checks (with
        ``positive``, its non-negative form) and the function VAN minimises (that,
        or the rows' objective where expectations or batches need rows)."""
        solved = nonnegative(problem.least_squares) if self.positive else problem.least_squares
        exact = self.settings.exact_full_batch(problem.n_samples)
        return solved, solved if exact else problem.linear

    # -- one alpha ----------------------------------------------------------------------
    def solve(self, problem, rng, start=None):
        """The VO ``q`` of ``problem`` (:class:`LassoFit`), its mean the certified
        solution: VAN from ``start`` (a mean over ``[coef, intercept]``, or None)
        with the certificate, on working sets where the parameters outnumber the
        data's rows (an elastic net's ridge rows not counted)."""
        solved, f = self.solved(problem)
        start = None if start is None else start * problem.column_scale
        if self.settings.exact_full_batch(problem.n_samples) and solved.n_params > problem.n_rows:
            return self._solve_wide(problem, start, rng)
        family = self.settings.initial_family(problem.least_squares, start)
        coef, result, n_corrections, _ = self.solve_support(f, solved, family, rng)
        family.mean = coef
        return LassoFit(family, problem.column_scale, result.n_iter, n_corrections)

    def solve_support(self, f, quadratic, family, rng, schedule=None, warn=True):
        """VO from ``family`` until the support read off ``q`` passes the KKT check
        (:class:`~skvan.van.LassoCertificate`), then the certified values; returns
        ``(coef, result, n_corrections, ok)`` and warns (if ``warn``) when the
        check failed. With deterministic expectations on the full data each step
        is the whole-step backtrack with memory, restricted by
        :class:`~skvan.van.KeepSigns` under the exact curvature (the Gauss-Newton
        one is that of a quadratic upper bound of ``E|theta|``, whose steps descend
        across 0: cut there, coefficients that had to change sign froze at 0)."""
        s = self.settings
        n_samples = getattr(f, "n_samples", None)
        certificate = LassoCertificate(quadratic, s.stop(n_samples), **(self.certificate or {}))
        checkable = s.expectation != "mc" and not s.stochastic(n_samples)
        keep = (KeepSigns(quadratic.penalty.strength, self.undecided_radius)
                if s.hessian == "exact" else None)
        if schedule is None:
            schedule = s.schedule(n_samples, "vo")
        # Accepted steps may follow the schedule (at least doubling: a constant
        # beta must be able to recover from a halving).
        step = BetaBacktrack(ObjectiveDecrease(), memory=True, restrict=keep,
                             growth=max(2.0, getattr(schedule, "growth", 2.0))) if checkable else None
        result = s.solve(f, family, rng, objective="vo", step=step, stop=certificate,
                         schedule=schedule)
        coef, n_corrections, ok = certificate.finish(family, result.converged)
        # An unconverged run has already warned (one warning per fit).
        if not ok and warn and result.converged:
            warn_uncertified(n_corrections)
        return coef, result, n_corrections, ok

    def _solve_wide(self, problem, start, rng):
        """VO on working sets of columns (:func:`~skvan.van.solve_on_working_sets`):
        the first solved by VAN on its own ``X_W^T W X_W`` with the certificate;
        then, where ``X^T W X`` is formed (``problem.least_squares``), the
        certificate's corrections on the whole problem from that solution (its
        support systems kept across corrections); elsewhere, or where those
        fail, each larger set by the corrections from the previous solution, the
        rest certified by the KKT check on all columns. Near as many coefficients
        as rows the corrections can cycle: they have a budget of one per row and
        free coordinate (as many coefficients as a Lasso's support holds), and
        where a set's corrections fail or run out, the homotopy from
        ``alpha_max`` (:func:`~skvan.sparse.kkt_descend`, about one event per
        coefficient) solves the whole problem. VAN runs again on a set only
        where that fails too. The returned ``q`` is over all columns in the
        form the settings name, with the data's curvature accumulated by the last
        run and the L1 curvature of its set (coordinates never in a set keep
        their starting precision)."""
        linear, n_rows, column_scale = problem.linear, problem.n_rows, problem.column_scale
        whole = self.solved(problem)[0]
        strength = linear.penalty.strength
        free = strength == 0
        w = np.zeros(linear.n_params) if start is None else start
        grad = linear.smooth_gradient(w)  # with positive, only g_j < 0 can make w_j > 0
        ratio = (-grad if self.positive else np.abs(grad)) / np.where(free, np.inf, strength)
        first = np.union1d(np.argsort(-ratio, kind="stable")[:self.working_set_start],
                           np.flatnonzero(free | (w != 0)))
        # Corrections cost an event each. Past one per row and free coordinate (as
        # many coefficients as a Lasso's support holds) they are cycling, and the
        # homotopy from the top, about one event per coefficient, is cheaper.
        rounds = _Rounds(min(n_rows + int(np.count_nonzero(free)), linear.n_params))
        # An elastic net's rows beyond n_rows are its ridge's (over column_scale * theta).
        ridge = (None if problem.ridge is None else
                 problem.ridge.reparametrised(column_scale).strength)
        ridge_rows = (n_rows, ridge, _shared_rows(linear, n_rows, ridge))

        def solve_on(columns, mean):
            return self._solve_set(linear, ridge_rows, columns, mean, rng, rounds)

        def finish(w):
            coef, n, ok = kkt_finish(whole, w, np.zeros_like(w),
                                     max_corrections=self.path_corrections,
                                     enter=self.working_set_enter)
            rounds.budget -= n
            if ok:  # certified on the whole problem, whatever the set's run ended with
                rounds.certified = True
            return coef, (0, n), ok

        def at_scale(k):  # with positive: the constrained form at k times the penalty
            squares = problem.least_squares
            return nonnegative(squares.with_penalty(squares.penalty.multiplied(k)))

        def rescue(w):
            coef, n_events, ok = kkt_descend(whole, scaled=at_scale if self.positive else None)
            rounds.certified = ok
            return coef, (0, n_events), ok

        coef, columns, infos, certified = solve_on_working_sets(
            lambda w: kkt_excess(linear, w, nonnegative=self.positive), solve_on, first,
            linear.n_params, finish=finish if isinstance(whole, QuadraticObjective) else None,
            rescue=rescue)
        columns, lam_w, quad, inner, result = rounds.runs[-1]  # q's precision: the last VAN run
        n_corrections = sum(i[1] for i in infos)
        if not (rounds.certified and certified) and result.converged:
            warn_uncertified(n_corrections)
        # P_W = diag(lam_W) + c G_W with c the sum of the accepted betas (VO: keep = 1).
        c = float(sum(h["beta"] for h in result.history))
        lam = unit_predictor_precision(linear.X, linear.sample_weight, "diag")
        lam[columns] = np.maximum(np.diag(inner.precision) - c * np.diag(quad.G), lam_w)
        # X^T W X is the whole problem's Gram matrix (an elastic net's with its
        # ridge rows' diagonal), formed once: a full q takes it, not another pass.
        gram = (lambda: c * whole.G) if isinstance(whole, QuadraticObjective) else None
        family = family_from_parts(self.settings.covariance, coef, lam, c * linear.weights,
                                   linear.X, free, data_gram=gram)
        return LassoFit(family, column_scale, sum(i[0] for i in infos), n_corrections)

    def _solve_set(self, linear, ridge_rows, columns, mean, rng, rounds):
        """One working set of :meth:`_solve_wide`: ``(coef, (n_iter, n_corrections))``.
        After the first, ``q`` has converged on the previous set: its support, with
        the new columns at 0, is finished as a converged fit is (corrections enter
        several violators at once, within what is left of ``rounds.budget``; the
        set's least squares by :func:`_working_least_squares` from
        ``ridge_rows``, ``(n_rows, ridge, rows)``). Where that fails, ``coef`` is None
        once (the whole problem's homotopy is tried); after that, VAN runs on a
        new ``q`` (``P_W = diag(lam) + c G_W``) from the last round's mean: the
        support is mostly known, ``q`` need not explore."""
        quad = _working_least_squares(linear, columns, *ridge_rows)
        solved = nonnegative(quad) if self.positive else quad
        if rounds.runs:
            coef, n_corrections, ok = kkt_finish(solved, mean, np.zeros_like(mean),
                                                 max_corrections=max(rounds.budget, 1),
                                                 enter=self.working_set_enter)
            rounds.budget -= n_corrections
            rounds.certified = ok
            if ok:
                return coef, (0, n_corrections)
            if not rounds.rescued:  # once: the whole problem's homotopy first (rescue)
                rounds.rescued = True
                return None, (0, n_corrections)
        lam = unit_predictor_precision(linear.X[:, columns], linear.sample_weight, "diag")
        family = family_from_parts("full", mean, lam, np.zeros(0), np.zeros((0, lam.size)))
        schedule = GeometricSchedule(self.settings.beta,
                                     self.settings.schedule(None, "vo").growth)
        # Only the last set's certificate matters: no warning per set.
        coef, result, n_corrections, ok = self.solve_support(solved, solved, family, rng,
                                                             schedule, warn=False)
        rounds.runs.append((columns, lam, quad, family, result))
        rounds.certified = ok
        return coef, (result.n_iter, n_corrections)

    def finish(self, problem, fitted, rng, objective="vo"):
        """From the VO fit ``fitted``: ``(family, noise_variance, n_iter)``, the ``q``
        the fitted attributes read (under ``objective="vi"`` the posterior, fitted
        from the VO solution), the noise variance of the solution's residuals
        and the VI run's iterations (``fitted.n_iter`` under VO)."""
        least_squares, coef, total = problem.least_squares, fitted.coef, problem.total_weight
        # The ridge rows' share of the squares: not residuals.
        ridge_part = 0.0 if problem.ridge is None else 2.0 * problem.ridge.value(
            coef / problem.column_scale)
        noise = noise_variance(least_squares, coef, total, ridge_part)
        if objective != "vi":
            return fitted.family, noise, fitted.n_iter
        family = self.settings.initial_family(least_squares, coef)
        floor = np.finfo(np.float64).eps * max(2.0 * least_squares.c / max(total, 1e-300), 1e-300)
        log_joint = self.solved(problem)[1].multiplied(1.0 / max(noise, floor))
        return family, noise, self.settings.solve(log_joint, family, rng,
                                                  objective="vi").n_iter

    # -- a path --------------------------------------------------------------------------
    def path(self, design, y, sample_weight, alphas, rng, on_rows=False, lean=True):
        """The solutions at ``alphas`` (decreasing), each from the previous one's:
        yields ``(problem, fit)`` per alpha (``fit.n_iter`` the VAN iterations it
        needed). ``lean``: only the coefficients are read (VO, no spread), so the
        first alpha starts from 0 (certified from ``alpha_max`` up) and, while the
        support is small, the homotopy gives the alphas between two kinks without
        a check (the family is then a placeholder around the solution); otherwise
        the first alpha is a fit and each later one carries its ``q``. A lean path
        whose rows would serve a Gram covariance form works through ``X^T W X``
        where forming it costs at most ``path_gram_flops`` per alpha: on small
        wide data a KKT check on the Gram matrix costs less than one on the rows'
        columns."""
        if lean and on_rows and not is_dask_collection(design.X) and (
                design.n_samples * (design.n_features + 1) ** 2
                <= self.path_gram_flops * len(alphas)):
            # Only coefficients are read: X^T W X, cheap to form, instead of the rows.
            engine = copy.copy(self)
            engine.settings = self.settings.with_(covariance="full")
            yield from engine.path(design, y, sample_weight, alphas, rng, on_rows=False)
            return
        problem = self.problem(design, y, sample_weight, alphas[0], on_rows=on_rows)
        keep = getattr(problem.least_squares, "keep_gram_columns", None)
        if keep is not None:
            keep()  # the rows' least squares: its Gram columns serve every alpha
        fit, k = None, 0
        if lean:
            n_params = problem.least_squares.n_params
            fit = LassoFit(make_family("diag", np.zeros(n_params), np.ones(n_params)),
                           problem.column_scale, 0, 0)
        previous, beyond = None, True
        while k < len(alphas):
            problem = self.at_alpha(problem, float(alphas[k]), design, y, sample_weight)
            fit = self.solve(problem, rng) if fit is None else self.warm(previous, problem,
                                                                          fit, rng)
            # A fresh start beyond path_support: the homotopy's events came too fast.
            beyond = beyond and np.count_nonzero(fit.coef) <= self.path_support
            yield problem, fit
            previous, k = problem, k + 1
            if lean and k < len(alphas):
                for problem, fit in self._follow(previous, fit, alphas[k:], design, y,
                                                 sample_weight, beyond):
                    yield problem, fit
                    previous, k = problem, k + 1

    def warm(self, before, problem, fit, rng):
        """``problem``'s solution from ``fit``, the solution at the previous alpha
        (``before``): corrections of its support (a quarter of
        ``path_corrections`` in batches of violators, then one at a time); where
        they fail and the two problems share ``X^T W X``, the homotopy between
        them; where that fails too, VAN from the previous solution with the
        precision restarted from its initial scale (a converged VO ``q`` has
        concentrated, and from it VAN could not widen ``q`` to find the
        coefficients that enter)."""
        family, start = fit.family, fit.coef_in(problem.column_scale)
        if self.settings.exact_full_batch(problem.n_samples):
            solved = self.solved(problem)[0]
            coef, n, ok = kkt_finish(solved, start, np.zeros_like(start),
                                     max_corrections=self.path_corrections,
                                     enter=self._path_enter())
            if not ok and before is not None:
                previous = self.solved(before)[0]
                if previous.support_systems() is solved.support_systems():
                    coef, events, ok = kkt_follow(previous, solved, start,
                                                  max_events=self.path_corrections)
                    n += events
            if ok:
                family.mean = coef
                return LassoFit(family, problem.column_scale, 0, n)
        return self.solve(problem, rng, start / problem.column_scale)

    def _path_enter(self):
        """``path_enter``, None resolved (its description)."""
        if self.path_enter is not None:
            return self.path_enter
        return 1e-3 if self.l1_ratio < 1.0 else self.working_set_enter

    def _follow(self, problem, fit, alphas, design, y, sample_weight, beyond=True):
        """The lean path's next alphas from ``fit`` at ``problem`` by one homotopy
        while the support has at most ``path_support`` coefficients, and with
        ``beyond``, past that at ``path_event_rate``: yields ``(problem, fit)``
        for the alphas it reached (none where it cannot: a ridge that changes
        with alpha, expectations that need rows, a support already too large)."""
        alphas = np.asarray(alphas, dtype=np.float64)
        if (self.l1_ratio < 1.0 or not self.settings.exact_full_batch(problem.n_samples)
                or not beyond and np.count_nonzero(fit.coef) > self.path_support):
            return
        end = self.at_alpha(problem, float(alphas[-1]), design, y, sample_weight)
        before, after = self.solved(problem)[0], self.solved(end)[0]
        if before.support_systems() is not after.support_systems():
            return
        at = np.clip((problem.alpha - alphas) / (problem.alpha - alphas[-1]), 0.0, 1.0)
        coefs, reached, _ = kkt_path(before, after, fit.coef, at, max_support=self.path_support,
                                     max_rate=self.path_event_rate if beyond else None)
        for alpha, coef in zip(alphas[:reached], coefs[:reached]):
            fit.family.mean = coef
            at_alpha = end if alpha == alphas[-1] else self.at_alpha(problem, float(alpha),
                                                                     design, y, sample_weight)
            yield at_alpha, LassoFit(fit.family, problem.column_scale, 0, 0)


class _Rounds:
    """What the working sets of :meth:`LassoSolver._solve_wide` share: the VAN runs
    made, whether the last solution passed its check, the KKT corrections the
    later sets may still make before the whole problem's homotopy is asked for,
    and whether it was."""

    def __init__(self, budget):
        self.runs, self.budget = [], budget
        self.certified = self.rescued = False


def noise_variance(quadratic, theta, total, not_residual=0.0):
    """Weighted residual variance at ``theta`` with a degrees-of-freedom factor,
    ``total`` the rows' total weight (``not_residual``: the part of ``2
    quadratic.smooth_value`` that is not a residual sum of squares, such as an
    elastic net's ridge rows)."""
    rss = max(2.0 * quadratic.smooth_value(theta) - not_residual, 0.0)
    dof = int(np.count_nonzero(theta))
    if total > dof:
        return rss / (total - dof)
    return rss / total if total > 0 else 0.0


def _working_least_squares(linear, columns, n_rows, ridge, rows=None):
    """The least squares of ``linear`` (a rows' objective) on the working set
    ``columns``, through ``X^T W X``. Where ``linear``'s rows beyond the first
    ``n_rows`` are an elastic net's ridge rows (``ridge``, the squares they add
    to each column; None: no such rows), the data rows' Gram matrix plus that
    ridge (:class:`~skvan.objectives.RidgedQuadratic`, whose large supports are
    solved through the data rows where those are dense: ``rows``, the weighted
    data rows of all columns, :class:`~skvan.sparse.GramRows` shared by a fit's
    sets, or None), not the Gram matrix of all ``n_rows + p`` rows."""
    if ridge is None:
        return QuadraticObjective.from_linear(linear.restricted(columns))
    w, y = linear.weights[:n_rows], linear.y[:n_rows]
    X = linear.X[:n_rows][:, columns]
    total = float(np.sum(linear.weights))
    if rows is not None and rows.n_rows < columns.size:  # fewer rows than columns
        data = RowsQuadratic(rows.restricted(columns), np.asarray(tdot(X, w * y)).ravel(),
                             0.5 * float(np.dot(w * y, y)), total_weight=total)
    else:
        data = QuadraticObjective.from_data(X, y, w)
        data.total_weight = total
    return RidgedQuadratic(data, ridge[columns], linear.penalty.restricted(columns))


def _shared_rows(linear, n_rows, ridge):
    """:func:`_working_least_squares`'s ``rows``: an elastic net's dense weighted
    data rows over all columns with its ridge pattern; None for the Lasso or
    sparse rows."""
    X = linear.X[:n_rows]
    if ridge is None or sp.issparse(X):
        return None
    return GramRows.weighted(X, linear.weights[:n_rows], ridge)


def _gram_rows(design, sample_weight, column_scale, ridge):
    """The weighted rows behind ``X^T W X`` over ``column_scale * theta``
    (:class:`~skvan.sparse.GramRows`; an elastic net's ridge ``ridge`` (its
    strengths, or 0) gives the pattern ``1 / s_j^2`` on the ridged coordinates),
    where they are dense and fewer than the coefficients; else None."""
    if (sample_weight is None or is_dask_collection(design.X) or sp.issparse(design.X)
            or np.count_nonzero(sample_weight > 0) >= column_scale.size):
        return None
    ridged = np.broadcast_to(np.asarray(ridge) > 0, column_scale.shape)
    return GramRows.weighted(design.Xd, sample_weight,
                             np.where(ridged, 1.0 / column_scale**2, 0.0), column_scale)


def _ridge_rows(Xd, y, sample_weight, rho, fit_intercept):
    """``[Xd; diag(sqrt(rho))]`` over the features (the intercept's column 0 in the
    extra rows), ``y`` padded with zeros and the extra rows' weights 1."""
    n_features = Xd.shape[1] - int(fit_intercept)
    rows = np.sqrt(rho[:n_features])[:, None] * np.eye(n_features, Xd.shape[1])
    Xd = (sp.vstack([Xd, sp.csr_matrix(rows)], format="csr") if sp.issparse(Xd)
          else np.vstack([Xd, rows]))
    y = np.concatenate([np.asarray(y, dtype=np.float64), np.zeros(n_features)])
    weights = np.concatenate([np.asarray(sample_weight, dtype=np.float64), np.ones(n_features)])
    return Xd, y, weights


__all__ = ["Design", "LassoFit", "LassoProblem", "LassoSolver", "noise_variance"]
