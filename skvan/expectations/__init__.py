"""How expectations under ``q`` are obtained: closed form, quadrature or Monte Carlo."""

from ._base import CURVATURES, ExpectationEstimator, Expectations, LinearPredictorExpectation
from ._closed_form import ClosedForm
from ._monte_carlo import MonteCarlo
from ._quadrature import (DEFAULT_N_NODES, GaussHermiteQuadrature, gauss_hermite, gaussian_average,
                          log_expected_sigmoid)

__all__ = [
    "CURVATURES",
    "ClosedForm",
    "DEFAULT_N_NODES",
    "ExpectationEstimator",
    "Expectations",
    "GaussHermiteQuadrature",
    "LinearPredictorExpectation",
    "MonteCarlo",
    "gauss_hermite",
    "gaussian_average",
    "log_expected_sigmoid",
    "make_expectation",
]


def make_expectation(expectation, n_mc_samples=10):
    """Build an estimator by name: ``"exact"`` (closed form), ``"quadrature"`` or ``"mc"``."""
    if expectation == "exact":
        return ClosedForm()
    if expectation == "quadrature":
        return GaussHermiteQuadrature()
    if expectation == "mc":
        return MonteCarlo(n_mc_samples)
    raise ValueError(
        f"expectation must be 'exact', 'quadrature' or 'mc', got {expectation!r}."
    )
