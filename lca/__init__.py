"""lca: local, deterministic reconstruction of decision trees.

Given query access to ``f : {-1,1}^n -> {-1,1}`` close to a size-``s`` decision
tree, answer queries ``T(z)`` of one fixed tree ``T`` per seed, building only the
root-to-leaf path of ``z`` (Blanc, Lange, Tan, "Reconstructing Decision Trees").

    >>> import lca
    >>> f = lca.targets.random_tree(n=50, leaves=8, seed=1)
    >>> params = lca.Params.practical(n=50, depth=4, noise_rate=0.1,
    ...                               score_samples=300, leaf_samples=200)
    >>> z = [1] * 50
    >>> lca.answer(z, 7, oracle=f, params=params) == lca.Reconstructor(f, params).answer(z, 7)
    True
"""

import importlib
from typing import Any

# estimate and search register the estimators Params names (lca.estimator); the
# redundant aliases mark them as re-exported, not unused.
from lca import derive, oracle, targets
from lca import estimate as estimate
from lca import search as search
from lca.oracle import CountingOracle, Oracle, OracleError, from_boolean, from_callable
from lca.params import Params, TheoryConstants
from lca.reconstruct import (
    AnswerStats,
    BudgetExceeded,
    Explanation,
    LeafDecision,
    LowMarginWarning,
    NodeDecision,
    Reconstructor,
    answer,
)

__version__ = "0.1.0"

# Heavier modules load on first use: spawned workers import lca and should not
# pay for what they never touch. (lca.distributed imports Dask only when called,
# lca.suite scikit-learn only when run.)
_LAZY_MODULES = ("consistency", "distributed", "exact", "export", "measures", "models",
                 "parallel", "suite", "testing", "tester")


def __getattr__(name: str) -> Any:
    if name in _LAZY_MODULES:
        return importlib.import_module(f"lca.{name}")
    raise AttributeError(f"module 'lca' has no attribute {name!r}")


def __dir__() -> list[str]:
    # dir(), tab completion and `from lca import *` see the lazy modules too.
    return sorted(set(globals()) | set(__all__))


__all__ = [
    "AnswerStats",
    "BudgetExceeded",
    "CountingOracle",
    "Explanation",
    "LeafDecision",
    "LowMarginWarning",
    "NodeDecision",
    "Oracle",
    "OracleError",
    "Params",
    "Reconstructor",
    "TheoryConstants",
    "answer",
    "consistency",
    "derive",
    "distributed",
    "exact",
    "export",
    "measures",
    "models",
    "parallel",
    "suite",
    "testing",
    "tester",
    "from_boolean",
    "from_callable",
    "oracle",
    "targets",
]
