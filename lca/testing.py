"""Test helpers for users of :mod:`lca`: check that your oracle replicates.

Replicas of ``T_seed`` agree only if the oracle is a fixed function that
pickles faithfully: a worker must rebuild exactly the same function from the
pickled description. An oracle that draws label noise per call, reads a
mutable global, or loses state when pickled breaks that, and
:func:`assert_replicas_agree` catches it in your own test suite::

    from lca.testing import assert_replicas_agree

    def test_my_oracle_replicates():
        f = MyOracle(...)                       # module-level class: it must pickle
        params = lca.Params.practical(n=f.n, depth=4, noise_rate=0.1,
                                      score_samples=200, leaf_samples=100)
        assert_replicas_agree(f, params, seed=1, queries=300)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lca.consistency import ConsistencyReport, ReplicaSpec, check_consistency
from lca.oracle import Oracle
from lca.params import Params

__all__ = ["assert_replicas_agree"]


def assert_replicas_agree(oracle: Oracle, params: Params, *, seed: int = 0,
                          queries: int | Any = 300,
                          replicas: int | Sequence[ReplicaSpec] = 3,
                          workers: int = 2, pure_queries: int = 50,
                          dask: bool | None = False) -> ConsistencyReport:
    """Assert that replicas of ``T_seed`` agree on every answer and shared decision.

    Runs :func:`lca.consistency.check_consistency` with a budget sized for a
    unit test (by default three replicas: ``spawn`` with ``workers``
    processes, ``forkserver`` without cache on shuffled queries, ``fork`` with
    chunk routing; plus nothing else). Pass ``replicas=4`` to add a pure
    :func:`lca.answer` replica, ``dask=True`` (or ``None``: if installed) for
    a Dask replica.

    Returns:
        The :class:`~lca.consistency.ConsistencyReport` when replicas agree.

    Raises:
        AssertionError: replicas diverge; the message is the report, naming
            the first divergent node with its seed, path and both decisions.
        TypeError: the oracle cannot be pickled (with what to do about it).
    """
    report = check_consistency(oracle, params, seed=seed, queries=queries,
                               replicas=replicas, workers=workers,
                               pure_queries=pure_queries, dask=dask)
    if not report.ok:
        raise AssertionError(f"replicas of {oracle!r} disagree\n{report}")
    return report
