"""Monte Carlo from values with fitness shaping: the evolution strategies' settings.

With ranks in place of values (:class:`MonteCarlo` with ``fitness_shaping``) the
VAN step is the exponential natural evolution strategy's (xNES) to first order,
so it takes the evolution strategies' population and rates (Glasmachers et al.
2010, Wierstra et al. 2014):

- population ``4 + floor(3 log n)``, rounded to antithetic pairs;
- the precision's shape at xNES's rate ``3 (3 + log n) / (5 n sqrt(n))`` (the
  solver's ``beta_t``), its global scale at ``(3 + log n) / (5 sqrt(n))``, the
  mean at ``beta`` (``mean_rate = beta / beta_t``);
- a full family adds CMA-ES's cumulative step-size adaptation
  (:class:`CumulativeScale`) to the scale, and its rank-one update along the
  mean's evolution path (:class:`RankOnePath`) to the shape: a long valley is
  learnt in a few steps where the rank-mu update alone needs many. Its rate is a
  fraction of CMA-ES's ``c_1``, because xNES's rank-mu rate is already several
  times CMA-ES's ``c_mu`` beyond three dimensions (``python
  benchmarks/bench_minimize.py --rank-one-fraction F``);
- ``shape_update="cma"`` takes CMA-ES's own rates for both updates instead;
- a diagonal family adapts each variance at the scale's rate (SNES, Schaul et
  al. 2011).
"""

import numpy as np

from ._monte_carlo import CumulativeScale, MonteCarlo, RankOnePath, cma_rates


def population_size(n):
    """The evolution strategies' population in ``n`` dimensions, in antithetic
    pairs: ``2 floor((5 + floor(3 log n)) / 2)``."""
    return 2 * ((5 + int(3 * np.log(n))) // 2)


def evolution_strategy(n, beta, covariance="full", n_mc_samples=None, shape_update="xnes",
                       rank_one_fraction=0.5):
    """The fitness-shaped estimator in ``n`` dimensions and the solver's ``beta_t``.

    Parameters
    ----------
    n : int
        Dimension.
    beta : float
        The user's step size (a factor on every rate).
    covariance : {"full", "diag"}, default="full"
    n_mc_samples : int or None, default=None
        Draws per iteration; None is :func:`population_size`.
    shape_update : {"xnes", "cma"}, default="xnes"
        xNES's rank-mu rate plus the rank-one update at ``rank_one_fraction`` of
        CMA-ES's ``c_1``, or CMA-ES's ``c_mu`` and ``c_1``.
    rank_one_fraction : float, default=0.5
        With "xnes": the rank-one rate as a fraction of CMA-ES's ``c_1``, ``>= 0``
        (0: no rank-one update).

    Returns
    -------
    expectation : MonteCarlo
    beta_t : float
        The solver's constant ``beta_t`` (the shape's rate).
    """
    if n_mc_samples is None:
        n_mc_samples = population_size(n)
    eta_scale = (3.0 + np.log(n)) / (5.0 * np.sqrt(n))
    eta_shape = 3.0 * (3.0 + np.log(n)) / (5.0 * n * np.sqrt(n))
    scale_path = shape_path = None
    if covariance == "full":
        fraction = rank_one_fraction
        if shape_update == "cma":
            eta_shape, fraction = cma_rates(n, n_mc_samples)[1], 1.0
        scale_path = CumulativeScale(n, beta * eta_shape)
        if fraction > 0:
            shape_path = RankOnePath(n, beta * eta_shape, scale_path, c1_fraction=fraction)
    expectation = MonteCarlo(n_mc_samples, fitness_shaping=True, mean_rate=1.0 / eta_shape,
                             scale_rate=eta_scale / eta_shape, scale_path=scale_path,
                             shape_path=shape_path)
    return expectation, beta * eta_shape
