"""Answer large batches with worker processes, each a stateless replica.

A worker is shipped ``(oracle, params)`` once, pickled, and each task brings a
seed and packed query points. Nothing else crosses the process boundary: no
shared memory, no shared cache, no decision made by the parent. Every decision
is a deterministic function of ``(oracle, params, seed, path)`` (Remark "Local
reconstruction"), so the answers equal those of one process whatever the
number of workers, the routing, the start method, and whatever faults and
retries happened on the way.

Routing (a hint, never an input to a decision):

* ``"prefix"`` — the parent decides the top nodes of ``T_seed`` itself
  (cheap, and every replica derives the same ones), groups the queries by the
  node they reach, and sends whole groups to workers, largest first. Nodes
  below a group's prefix are built by exactly one worker, so little work is
  duplicated across workers.
* ``"chunk"`` — contiguous slices of the batch. Every worker rebuilds the top
  of the tree for every slice: simple, and a useful contrast.

Faults: a worker that dies mid-task (``SIGKILL``, the OOM killer) is replaced
and its task recomputed by another worker; each task's answers are taken from
exactly one completed attempt. An exception raised by the oracle in a worker
is re-raised in the caller with its own type, message and notes (including
the node path added by :mod:`lca.estimate`) plus a note naming the worker.
On any error or ``KeyboardInterrupt`` every worker is terminated before the
exception propagates; the pool starts fresh workers on its next use.

Logging: records emitted in workers (at levels the parent's root and ``lca``
loggers enable) are shipped through a multiprocessing queue and handed to the
parent's loggers, so the caller's own ``logging`` configuration sees them in
one stream. Each record carries ``processName`` and ``lca_worker`` set to the
worker's name, e.g. ``"lca-worker-1"``. The receiving end is
``multiprocessing_logging.MultiProcessingHandler``.

Each name is importable from here; it lives in one of

* :mod:`lca.parallel.pool` — :class:`ReplicaPool`, :func:`answer_parallel`,
  :class:`ParallelResult`: tasks, dispatch, faults, the log receiver;
* :mod:`lca.parallel.worker` — everything a worker process runs, and the
  pickled description it starts from;
* :mod:`lca.parallel.routing` — the routings and the parent's router;
* :mod:`lca.parallel.errors` — :class:`WorkerError`, :class:`TaskTimeoutError`
  and how a worker's exception reaches the caller.

Log records keep the names ``lca.parallel`` (the pool) and
``lca.parallel.worker`` (inside workers).
"""

from lca.parallel.errors import TaskTimeoutError, WorkerError
from lca.parallel.pool import ParallelResult, ReplicaPool, answer_parallel

# Public here but not in __all__ (which keeps its old list): redundant aliases re-export them.
from lca.parallel.routing import ROUTINGS as ROUTINGS
from lca.parallel.routing import DecisionKey as DecisionKey

__all__ = ["ParallelResult", "ReplicaPool", "TaskTimeoutError", "WorkerError",
           "answer_parallel"]
