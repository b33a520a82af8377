"""The Gaussian families and THE VAN solver loop."""

from ._family import DiagonalGaussian, FullGaussian, make_family
from ._solver import BETA_MAX, VANResult, VANSolver

__all__ = ["BETA_MAX", "DiagonalGaussian", "FullGaussian", "VANResult", "VANSolver", "make_family"]
