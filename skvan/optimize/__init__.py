"""VAN for any function: :func:`minimize` (scipy's calling convention) and
:class:`VANOptimizer` (the same solver as an ask/tell loop the user owns).

- :mod:`._minimize`: the function interface, its runs and their results;
- :mod:`._ask_tell`: the ask/tell optimiser;
- :mod:`._settings`: the options resolved once (a frozen record);
- :mod:`._build`: the solver built from them;
- :mod:`._oracle`: the user's callables (args, ``hessp``, finite differences);
- :mod:`._first_order`: the first-order test of a result, finite differences.
"""

from ._ask_tell import VANOptimizer
from ._minimize import minimize

__all__ = ["VANOptimizer", "minimize"]
