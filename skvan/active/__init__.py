"""Active learning with VAN: query strategies and ActiveVANClassifier.

Strategies are plain functions ``strategy(estimator, X_pool, n_instances=1,
random_state=None) -> (indices, scores)``, usable as a modAL ``query_strategy``.
"""

from ._classifier import ActiveVANClassifier
from ._skactiveml import to_skactiveml
from ._strategies import (
    STRATEGIES,
    bald_sampling,
    entropy_sampling,
    margin_sampling,
    random_sampling,
    select,
)

__all__ = [
    "STRATEGIES",
    "ActiveVANClassifier",
    "bald_sampling",
    "entropy_sampling",
    "margin_sampling",
    "random_sampling",
    "select",
    "to_skactiveml",
]
