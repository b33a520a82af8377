"""``minimize``'s options resolved once for a problem: a frozen record.

The keywords, scipy's ``options`` and the ``"auto"``/None defaults become one
:class:`Settings` before anything runs; the solver's parts are then built from it
(:mod:`skvan.optimize._build`) and nothing edits it.
"""

from dataclasses import dataclass, fields
from numbers import Integral, Real

import numpy as np
from scipy.optimize import Bounds

from .._compat import Interval, StrOptions, validate_parameter_constraints
from ..objectives._bounds import BoxTransform

#: ``beta_growth=None``: each step is ``(g - 1) / g = 1/6`` of a Newton step once
#: the sum of steps dominates the start, and ``q`` narrows by ``1/g`` per
#: iteration, wide for the first dozen iterations: linear convergence that still
#: explores (``python benchmarks/bench_minimize.py --beta-growth G``).
DEFAULT_GROWTH = 1.2

#: ``beta_growth=None`` from values on the 1-D grid: the step safeguard sets the
#: pace there (each step starts from this growth times the last accepted
#: ``beta``, halved until ``E_q[f]`` decreases within the trust region), and one
#: dimension has no valley that ``q`` could narrow across faster than the mean
#: follows (``python benchmarks/bench_minimize.py --beta-growth G`` on the 1-D
#: functions).
GRID_GROWTH_1D = 8.0

#: Gauss-Hermite nodes per dimension of ``expectation="quadrature"`` by dimension:
#: an odd count puts a node on the mean, and the outermost of 21 lies 7.8
#: standard deviations out, which ``q`` needs while it is wide (``python
#: benchmarks/bench_minimize.py --grid-nodes N``). ``"auto"`` uses the grid in 1-D
#: only: in 2-D its 36 points per iteration cost more evaluations than Monte
#: Carlo's draws for the same success.
GRID_NODES = {1: 21, 2: 6}

#: The constraints of minimize's keyword-only parameters, which ``options`` may
#: also set.
KEYWORD_CONSTRAINTS = {
    "sigma0": [Interval(Real, 0, None, closed="neither")],
    "beta": [Interval(Real, 0, None, closed="neither")],
    "beta_growth": [Interval(Real, 1, None, closed="left"), None],
    "covariance": [StrOptions({"full", "diag"})],
    "hessian": [StrOptions({"exact", "gauss_newton"})],
    "expectation": [StrOptions({"auto", "quadrature", "mc"})],
    "n_mc_samples": [Interval(Integral, 2, None, closed="left"), None],
    "fitness_shaping": ["boolean", StrOptions({"auto"})],
    "max_iter": [Interval(Integral, 1, None, closed="left")],
    "restarts": [Interval(Integral, 0, None, closed="left")],
    "vectorized": ["boolean"],
    "n_jobs": [Integral, None],
    "random_state": ["random_state"],
    "verbose": ["verbose"],
}

#: Options without a keyword: scipy's ``gtol`` and ``maxfev``, and the settings of
#: the step safeguards and the zero-order estimator that the benchmarks vary.
OPTION_DEFAULTS = {
    "gtol": None,
    "maxfev": None,
    "trust_radius": 2.0,
    "checked_radius": 2.0,
    "grid_nodes": None,
    "shape_update": "xnes",
    "rank_one_fraction": 0.5,
    "step_noise": 0.5,
}
OPTION_CONSTRAINTS = {
    "gtol": [Interval(Real, 0, None, closed="left"), None],
    "maxfev": [Interval(Integral, 1, None, closed="left"), None],
    "trust_radius": [Interval(Real, 0, np.inf, closed="right")],
    "checked_radius": [Interval(Real, 0, np.inf, closed="right")],
    "grid_nodes": [Interval(Integral, 2, None, closed="left"), None],
    "shape_update": [StrOptions({"xnes", "cma"})],
    "rank_one_fraction": [Interval(Real, 0, None, closed="left")],
    "step_noise": [Interval(Real, 0, None, closed="neither")],
}

#: The names scipy's ``options`` use for two of minimize's parameters.
SCIPY_NAMES = {"maxiter": "max_iter", "disp": "verbose"}


@dataclass(frozen=True)
class Settings:
    """One problem's resolved options (the Notes of :func:`skvan.minimize`).

    ``order`` is the oracle (0 values, 1 gradients, 2 Hessians), ``n`` the
    dimension; ``expectation`` is "quadrature" or "mc", ``fitness_shaping`` a
    bool and ``beta_growth`` a number. The rest are :func:`skvan.minimize`'s
    parameters and options of the same names: ``trust_radius`` (sampled steps
    stay within that many standard deviations per ``sqrt(n)``), ``checked_radius``
    (with derivatives, longer steps are checked by ``f`` at the new mean),
    ``grid_nodes`` (per dimension; None: :data:`GRID_NODES`), ``shape_update`` and
    ``rank_one_fraction`` (:func:`~skvan.expectations.evolution_strategy`).
    """

    order: int
    n: int
    sigma0: float
    beta: float
    beta_growth: float
    covariance: str
    hessian: str
    expectation: str
    n_mc_samples: object
    fitness_shaping: bool
    max_iter: int
    restarts: int
    vectorized: bool
    n_jobs: object
    verbose: int
    tol: object
    gtol: object
    maxfev: object
    trust_radius: float
    checked_radius: float
    grid_nodes: object
    shape_update: str
    rank_one_fraction: float
    step_noise: float

    @property
    def nodes(self):
        """Gauss-Hermite nodes per dimension of the grid."""
        return GRID_NODES[self.n] if self.grid_nodes is None else int(self.grid_nodes)


def merge_options(options, keywords, caller="minimize"):
    """The keywords (random_state included) updated from scipy-style ``options``
    (scipy's names or ours), with the options-only entries' defaults added, all
    validated."""
    merged = {**keywords, **OPTION_DEFAULTS}
    for key, value in (options or {}).items():
        name = SCIPY_NAMES.get(key, key)
        if name not in merged:
            raise ValueError(
                f"Unknown option {key!r}; {caller} takes {sorted(SCIPY_NAMES)} (scipy's "
                f"names), {sorted(OPTION_DEFAULTS)} and its keyword parameters "
                f"{sorted(keywords)}."
            )
        merged[name] = int(bool(value)) if name == "verbose" and isinstance(value, bool) else value
    validate_parameter_constraints({**KEYWORD_CONSTRAINTS, **OPTION_CONSTRAINTS},
                                   {k: v for k, v in merged.items() if k != "tol"},
                                   caller_name=caller)
    return merged


def resolve(merged, order, n, tol, stochastic=False):
    """The :class:`Settings` of ``merged`` (:func:`merge_options`) for the ``order``
    oracle in ``n`` dimensions: what the ``"auto"``/None defaults mean there."""
    shaping = merged["fitness_shaping"]
    if shaping == "auto":
        # Natural evolution strategies' rates are constant: a schedule the user
        # chose, or a stochastic run's averaging one, asks for the raw estimator.
        shaping = (order == 0 and n >= 2 and merged["expectation"] != "quadrature"
                   and merged["beta_growth"] is None and not stochastic)
    elif shaping and merged["beta_growth"] not in (None, 1):
        raise ValueError(
            "fitness_shaping runs at natural evolution strategies' constant rates; "
            f"beta_growth={merged['beta_growth']} would make them grow. Leave beta_growth=None."
        )
    if shaping and order > 0:
        raise ValueError(
            "fitness_shaping replaces function values by their ranks and applies to the "
            "zero-order oracle only; drop jac and hess, or set fitness_shaping=False."
        )
    expectation = merged["expectation"]
    if expectation == "auto":
        sampled = shaping or merged["n_mc_samples"] is not None
        expectation = "quadrature" if not sampled and n == 1 else "mc"
    if expectation == "quadrature":
        _check_grid(merged, shaping, n)
    growth = merged["beta_growth"]
    if growth is None:
        growth = (1.0 if shaping else GRID_GROWTH_1D if order == 0 and expectation == "quadrature"
                  and n == 1 else DEFAULT_GROWTH)
    if merged["hessian"] == "gauss_newton" and order == 0:
        raise ValueError(
            "hessian='gauss_newton' needs gradients (E[g g^T]); pass jac, or use "
            "hessian='exact' (estimated from function values)."
        )
    values = {f.name: merged[f.name] for f in fields(Settings) if f.name in merged}
    values.update(order=order, n=n, expectation=expectation, fitness_shaping=bool(shaping),
                  beta_growth=float(growth), tol=tol)
    return Settings(**values)


def _check_grid(merged, shaping, n):
    if shaping or merged["n_mc_samples"] is not None:
        raise ValueError(
            "fitness_shaping and n_mc_samples apply to sampled expectations; "
            "expectation='quadrature' integrates on a fixed grid. Use expectation='mc'."
        )
    if n not in GRID_NODES:
        raise ValueError(
            f"expectation='quadrature' integrates on a tensor grid, in up to "
            f"{max(GRID_NODES)} dimensions; x0 has {n}. Use expectation='mc'."
        )


def check_x0(x0):
    """``x0`` (an array or a scalar) as a finite, non-empty 1-D float64 array (a
    copy), or a ValueError."""
    x0 = np.atleast_1d(np.asarray(x0))
    if np.iscomplexobj(x0) or not (np.issubdtype(x0.dtype, np.number) or x0.dtype == bool):
        raise ValueError(f"x0 must be an array of real numbers, got dtype {x0.dtype}.")
    x0 = x0.astype(np.float64)
    if x0.ndim != 1 or x0.size == 0 or not np.all(np.isfinite(x0)):
        raise ValueError(
            f"x0 must be a finite, non-empty 1-D array, got shape {x0.shape}"
            + ("" if np.all(np.isfinite(x0)) else " with NaN or inf") + "."
        )
    return x0


def make_box(bounds, x0):
    """A :class:`BoxTransform` from scipy-style ``bounds`` (after checking that
    ``x0`` lies within them), or None if unbounded."""
    if bounds is None:
        return None
    n = x0.shape[0]
    if isinstance(bounds, Bounds):
        lower, upper = (np.broadcast_to(np.asarray(b, dtype=np.float64), (n,)).copy()
                        for b in (bounds.lb, bounds.ub))
    else:
        pairs = list(bounds)
        if len(pairs) != n or any(len(p) != 2 for p in pairs):
            raise ValueError(f"bounds must hold one (min, max) pair per coordinate ({n}).")
        lower = np.array([-np.inf if p[0] is None else p[0] for p in pairs], dtype=np.float64)
        upper = np.array([np.inf if p[1] is None else p[1] for p in pairs], dtype=np.float64)
    if np.any(np.isnan(lower) | np.isnan(upper)) or np.any(lower >= upper):
        raise ValueError("bounds must have min < max for every coordinate.")
    if np.any(x0 < lower) or np.any(x0 > upper):
        raise ValueError("x0 must lie within the bounds.")
    if np.all(np.isinf(lower)) and np.all(np.isinf(upper)):
        return None
    return BoxTransform(lower, upper)
