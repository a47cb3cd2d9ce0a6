"""Answer queries on a Dask cluster: every Dask worker is a stateless replica.

Install with the ``dask`` extra (``pip install 'lca[dask]'``). Dask is
imported lazily, so ``import lca.distributed`` works without it and the first
call says what to install.

What a task ships to a Dask worker is exactly what :mod:`lca.parallel` ships
to its processes: the pickled ``(oracle, params)`` description (a few bytes
to kilobytes), the seed, and the query rows. A worker rebuilds
``Reconstructor(oracle, params)`` from the description on first use and keeps
it, one per worker thread, so later blocks find warm caches; nothing is shared
between workers and no decision travels. Because every decision is a
deterministic function of ``(oracle, params, seed, path)``, the answers equal
``Reconstructor(oracle, params).answer_many(points, seed)`` however the array
is chunked and wherever the blocks run.

    >>> import lca, numpy as np
    >>> from lca.distributed import answer_array
    >>> f = lca.targets.parity(n=16, k=2, seed=1)
    >>> params = lca.Params.practical(n=16, depth=3, noise_rate=0.1,
    ...                               score_samples=100, leaf_samples=50)
    >>> points = np.ones((6, 16), dtype=np.int8)
    >>> lazy = answer_array(points, oracle=f, params=params, seed=7,
    ...                     rows_per_block=4)  # doctest: +SKIP
    >>> lazy.compute(scheduler="sync")  # doctest: +SKIP
    array([...], dtype=int8)
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

import numpy as np
import xxhash

from lca._validate import check_int, check_seed
from lca.oracle import Oracle, check_points
from lca.parallel.worker import describe_replica
from lca.params import Params
from lca.reconstruct import Reconstructor

__all__ = ["answer_array", "answer_bag", "replica_results"]

_INSTALL_HINT = ("lca.distributed needs Dask: install the extra with "
                 "pip install 'lca[dask]' (dask[array,bag] and distributed)")
# Replicas kept per worker thread, keyed by their description. Worker-local
# state by design: it is a cache of objects rebuilt from their descriptions.
_LOCAL = threading.local()
_REPLICAS_PER_THREAD = 4


def _dask() -> Any:
    try:
        import dask
        import dask.array
        import dask.bag
    except ImportError as error:
        raise ImportError(_INSTALL_HINT) from error
    return dask


def _replica(description: bytes, cache_size: int, record: bool) -> Reconstructor:
    """This thread's replica for ``description``, rebuilt on first use."""
    import pickle

    replicas = getattr(_LOCAL, "replicas", None)
    if replicas is None:
        replicas = _LOCAL.replicas = OrderedDict()
    key = (xxhash.xxh3_128_intdigest(description), cache_size, record)
    replica = replicas.get(key)
    if replica is None:
        oracle, params = pickle.loads(description)
        replica = replicas[key] = Reconstructor(oracle, params, cache_size=cache_size,
                                                record=record)
        if len(replicas) > _REPLICAS_PER_THREAD:
            replicas.popitem(last=False)
    replicas.move_to_end(key)
    return replica


def _answer_block(block: np.ndarray, description: bytes, seed: int,
                  cache_size: int) -> np.ndarray:
    return _replica(description, cache_size, False)._answers(block, seed)


def _answer_partition(rows: list[Any], description: bytes, seed: int,
                      cache_size: int) -> list[int]:
    if not rows:
        return []
    points = np.asarray(rows)
    return [int(v) for v in _replica(description, cache_size, False)._answers(points, seed)]


def _answer_recording(block: np.ndarray, description: bytes, seed: int,
                      cache_size: int) -> tuple[np.ndarray, dict]:
    replica = _replica(description, cache_size, True)
    replica.decisions.clear()
    answers = replica._answers(block, seed)
    return answers, dict(replica.decisions)


def _validated(oracle: Oracle, params: Params, seed: int, cache_size: int,
               owner: str) -> tuple[bytes, int, int]:
    description = describe_replica(oracle, params, owner)
    seed = check_seed(owner, seed)
    cache_size = check_int(owner, "cache_size", cache_size, 0)
    return description, seed, cache_size


def answer_array(points: Any, *, oracle: Oracle, params: Params, seed: int,
                 rows_per_block: int | None = None, cache_size: int = 1 << 16) -> Any:
    """Lazy ``T_seed`` of every row of a Dask (or NumPy) array, one block per task.

    Args:
        points: ``(m, n)`` array of ``±1``; a NumPy array is wrapped with
            ``rows_per_block`` rows per block. Blocks are rechunked to whole
            rows if needed.
        oracle, params, seed: the replica description; shipped with each task.
        rows_per_block: rows per block when ``points`` is a NumPy array
            (default: Dask's automatic chunking).
        cache_size: node cache of each worker's replica.

    Returns:
        A lazy ``(m,)`` ``int8`` Dask array; computing it with any scheduler
        gives ``Reconstructor(oracle, params).answer_many(points, seed)``
        (tasks never emit :class:`lca.LowMarginWarning`: a lazy result has no
        call to warn from; a :class:`lca.Reconstructor` reports the counts).
    """
    dask = _dask()
    owner = "lca.distributed.answer_array"
    description, seed, cache_size = _validated(oracle, params, seed, cache_size, owner)
    if rows_per_block is not None:
        rows_per_block = check_int(owner, "rows_per_block", rows_per_block, 1)
    array = points
    if not isinstance(array, dask.array.Array):
        # Values are checked here, before any task exists; a Dask array's
        # values are checked by each worker's answer_many.
        array = check_points(points, params.n, what=f"The 'points' parameter of {owner}")
        array = dask.array.from_array(array, chunks=(rows_per_block or "auto", -1))
    elif array.dtype == np.bool_ or not np.issubdtype(array.dtype, np.integer):
        raise TypeError(f"The 'points' parameter of {owner} must be an integer array of "
                        f"±1 values. Got dtype {array.dtype} instead.")
    if array.ndim != 2 or array.shape[1] != params.n:
        raise TypeError(f"The 'points' parameter of {owner} must have shape (m, "
                        f"{params.n}). Got shape {array.shape} instead.")
    if len(array.chunks[1]) != 1:
        array = array.rechunk({1: -1})
    return array.map_blocks(_answer_block, description, seed, cache_size,
                            dtype=np.int8, drop_axis=1, chunks=(array.chunks[0],))


def answer_bag(bag: Any, *, oracle: Oracle, params: Params, seed: int,
               cache_size: int = 1 << 16) -> Any:
    """Lazy ``T_seed`` of every element of a Dask bag of rows (sequences of ``n`` values ``±1``).

    Returns a bag of ints in the same order; each partition is answered in one
    ``answer_many`` call by its worker's replica.
    """
    dask = _dask()
    owner = "lca.distributed.answer_bag"
    description, seed, cache_size = _validated(oracle, params, seed, cache_size, owner)
    if not isinstance(bag, dask.bag.Bag):
        raise TypeError(f"The 'bag' parameter of {owner} must be a dask.bag.Bag. "
                        f"Got {type(bag).__name__} instead.")
    return bag.map_partitions(_answer_partition, description, seed, cache_size)


def replica_results(points: np.ndarray, *, oracle: Oracle, params: Params, seed: int,
                    partitions: int = 4, cache_size: int = 1 << 16,
                    scheduler: Any = None) -> list[tuple[np.ndarray, dict]]:
    """Answers and recorded decisions of every block, for the consistency harness.

    Cuts ``points`` into ``partitions`` blocks, answers each on a Dask worker
    with a recording replica, and returns ``[(answers, decisions), ...]`` in
    block order. ``scheduler`` is passed to ``dask.compute`` (``None`` uses
    the active client or Dask's default).
    """
    dask = _dask()
    owner = "lca.distributed.replica_results"
    description, seed, cache_size = _validated(oracle, params, seed, cache_size, owner)
    points = check_points(points, params.n, what=f"The 'points' parameter of {owner}")
    partitions = check_int(owner, "partitions", partitions, 1)
    m = points.shape[0]
    step = max(1, -(-m // partitions))
    tasks = [dask.delayed(_answer_recording, pure=False)(points[lo:lo + step], description,
                                                         seed, cache_size)
             for lo in range(0, m, step)]
    return list(dask.compute(*tasks, scheduler=scheduler))
