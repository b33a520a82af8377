"""What a VAN step optimises (VO or VI) and how large it is (the schedule).

Both updates have the form ``P <- keep P + beta C`` and
``mu <- mu - beta P^-1 E_q[grad f]`` (Khan et al. 2018, eqs. Van_prec_1 /
Van_mean_1 and Section 5); a :class:`Rates` holds ``(beta, keep)``. The
variational objective says how ``keep`` follows from ``beta`` and which value a
safeguard may compare; the schedule says how ``beta`` evolves with the iteration.
"""

from collections import namedtuple

import numpy as np

#: Largest beta_t reached by a geometric schedule under VO.
BETA_MAX = 1e100

Rates = namedtuple("Rates", ["beta", "keep"])
Rates.__doc__ = """Step sizes of one VAN step: ``P <- keep P + beta C``, ``mu <- mu - beta P^-1 g``."""


class VO:
    """Variational optimisation: minimise ``E_q[f]``; the precision is a running sum
    (``keep = 1``) and ``q`` concentrates on a minimiser of ``f``."""

    name = "vo"

    def rates(self, log_beta, growth):
        """``Rates`` for ``beta_t = exp(log_beta)``. Once ``beta_t`` would pass
        :data:`BETA_MAX` (``q`` is then a point mass for any practical purpose) it
        stays there and the sum is discounted, ``P <- P / growth + beta C``, so that
        each mean step stays ``(growth - 1) / growth`` of a Newton step."""
        if growth > 1.0 and log_beta > np.log(BETA_MAX):
            return Rates(BETA_MAX, 1.0 / growth)
        return Rates(float(np.exp(log_beta)), 1.0)

    def with_beta(self, rates, beta):
        """The same step with another ``beta`` (``keep`` unchanged)."""
        return Rates(beta, rates.keep)

    def value(self, expected_f, family):
        """The variational objective, ``E_q[f]``, from ``E_q[f]``."""
        return expected_f


class VI:
    """Variational inference: minimise ``E_q[f] - H(q)`` (``f`` a negative log joint);
    the precision is a damped average (``keep = 1 - beta``, ``beta <= 1``) and ``q``
    converges to a Gaussian approximation of the posterior."""

    name = "vi"

    def rates(self, log_beta, growth):
        """``Rates`` for ``beta_t = exp(log_beta)``, capped at 1."""
        beta = float(np.exp(min(log_beta, 0.0)))
        return Rates(beta, 1.0 - beta)

    def with_beta(self, rates, beta):
        """The same step with another ``beta`` (``keep = 1 - beta``)."""
        return Rates(beta, 1.0 - beta)

    def value(self, expected_f, family):
        """The variational objective up to a constant, ``E_q[f] + 1/2 log det P``."""
        return expected_f + 0.5 * family.logdet_precision()


OBJECTIVES = {"vo": VO, "vi": VI}


def variational_objective(name):
    """``VO()`` or ``VI()`` by name."""
    try:
        return OBJECTIVES[name]()
    except KeyError:
        raise ValueError(f"objective must be 'vo' or 'vi', got {name!r}.") from None


class GeometricSchedule:
    """``beta_t = beta * growth**t``.

    ``growth=1`` is the paper's constant ``beta``: the precision grows linearly
    and each mean step is about ``1/t`` of a Newton step, which averages minibatch
    noise and keeps ``q`` wide for exploration, but converges only sublinearly.
    With ``growth = g > 1`` the precision is a geometric sum,
    ``P_t ~ beta_t g/(g-1) C``, so every mean step is a fixed fraction ``(g-1)/g``
    of a Newton step: linear convergence at rate ``~1/g``, while ``q`` shrinks by
    ``1/g`` per iteration (less exploration).

    Parameters
    ----------
    beta : float, default=1.0
        ``beta_0 > 0`` (at most 1 under VI).
    growth : float, default=1.0
        ``>= 1``.
    """

    def __init__(self, beta=1.0, growth=1.0):
        self.beta = float(beta)
        self.growth = float(growth)

    def rates(self, t, objective):
        """:class:`Rates` of iteration ``t`` under the variational ``objective``."""
        return objective.rates(np.log(self.beta) + t * np.log(self.growth), self.growth)
