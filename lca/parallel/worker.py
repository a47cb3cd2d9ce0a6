"""Everything a worker process runs, and the description it is started from.

The parent pickles ``(oracle, params)`` once with :func:`describe_replica`;
:func:`worker_main`, the worker's whole life, rebuilds a
:class:`~lca.Reconstructor` from it, answers tasks from its pipe until told to
stop (or the parent dies), and ships its log records to the parent's queue.
Multiprocessing starts a worker by this module's path, so under ``spawn`` and
``forkserver`` a fresh interpreter imports it.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import pickle
import signal
import time
from multiprocessing import connection
from typing import Any

import numpy as np

from lca import derive
from lca.derive import Path
from lca.oracle import Oracle, oracle_n
from lca.parallel.errors import portable
from lca.params import Params
from lca.reconstruct import AnswerStats, Reconstructor

__all__ = ["PICKLE_ADVICE", "describe_replica", "worker_main"]

PICKLE_ADVICE = (
    "Worker processes rebuild the oracle from a pickled description, so it must "
    "pickle with the standard pickle module and unpickle in a fresh interpreter: "
    "define it as a module-level Oracle subclass (or wrap a module-level function "
    "with lca.from_callable), not a lambda, closure, local class or a class defined "
    "in an interactive session; give objects holding files, locks, sockets or "
    "handles a __getstate__/__setstate__ (or __reduce__) that rebuilds them from a "
    "description such as a path or URL. See docs/parallel.md."
)


def describe_replica(oracle: Oracle, params: Params, owner: str) -> bytes:
    """The pickled ``(oracle, params)`` a worker rebuilds its replica from."""
    if not isinstance(oracle, Oracle):
        raise TypeError(
            f"The 'oracle' parameter of {owner} must be an lca.Oracle; wrap plain "
            f"functions with lca.from_callable. Got {type(oracle).__name__} instead."
        )
    if not isinstance(params, Params):
        raise TypeError(f"The 'params' parameter of {owner} must be an lca.Params. "
                        f"Got {type(params).__name__} instead.")
    if oracle_n(oracle) != params.n:
        raise ValueError(f"oracle {oracle.name!r} has n={oracle.n} but params have "
                         f"n={params.n}")
    try:
        return pickle.dumps((oracle, params), protocol=pickle.HIGHEST_PROTOCOL)
    except Exception as error:
        raise TypeError(f"{owner}: oracle {oracle!r} cannot be pickled "
                        f"({type(error).__name__}: {error}). {PICKLE_ADVICE}") from error


class _ToParent(logging.Handler):
    """Worker half of the log pipe: ship self-contained records to the parent."""

    def __init__(self, queue: Any, worker: str) -> None:
        super().__init__()
        self.queue = queue
        self.worker = worker

    def emit(self, record: logging.LogRecord) -> None:
        try:
            record.lca_worker = self.worker
            # Same flattening as multiprocessing_logging: no unpicklable args.
            if record.args:
                record.msg = record.getMessage()
                record.args = None
            if record.exc_info:
                record.exc_text = logging.Formatter().formatException(record.exc_info)
                record.exc_info = None
            self.queue.put_nowait(record)
        except Exception:
            self.handleError(record)


def _worker_logging(queue: Any, levels: dict[str, int], worker: str) -> None:
    root = logging.getLogger()
    for handler in list(root.handlers):
        root.removeHandler(handler)
    root.addHandler(_ToParent(queue, worker))
    for name, level in levels.items():
        logging.getLogger(name or None).setLevel(level)


def worker_main(description: bytes, conn: connection.Connection, log_queue: Any,
                log_levels: dict[str, int], cache_size: int, record: bool,
                batch_size: int | None) -> None:
    """A worker's whole life: rebuild the replica, report ready, answer tasks until told to stop.

    Replies on ``conn``: ``("ready", pid)`` or ``("init-error", ...)`` once,
    then per task ``("done", ...)`` or ``("error", ...)``; ``None`` received,
    or the parent gone, ends it.
    """
    # Ctrl-C reaches the whole process group; the parent decides what stops.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    name = multiprocessing.current_process().name
    _worker_logging(log_queue, log_levels, name)
    log = logging.getLogger("lca.parallel.worker")
    try:
        oracle, params = pickle.loads(description)
        replica = Reconstructor(oracle, params, cache_size=cache_size, record=record)
    except Exception as error:
        conn.send(("init-error", *portable(error)))
        return
    log.debug("%s ready (pid %d)", name, os.getpid())
    conn.send(("ready", os.getpid()))
    parent = multiprocessing.parent_process()
    while True:
        try:
            # Never outlive the parent: its end of the pipe closes when it dies
            # (EOF), except under fork, where siblings may hold copies of it.
            while not conn.poll(1.0):
                if parent is not None and not parent.is_alive():
                    return
            message = conn.recv()
        except (EOFError, OSError):
            return
        if message is None:
            return
        task_id, seed, packed, prefix = message
        started = time.process_time()
        try:
            points = derive.unpack_points(packed, params.n)
            log.debug("%s: task %d, %d queries under %s", name, task_id,
                      points.shape[0], prefix)
            replica.decisions.clear()
            stats = AnswerStats()
            built: list[Path] = []
            step = batch_size or max(points.shape[0], 1)
            answers = np.empty(points.shape[0], dtype=np.int8)
            for lo in range(0, points.shape[0], step):
                answers[lo:lo + step] = replica._answers(points[lo:lo + step], seed)
                stats += replica.last_stats
                built += replica.last_built
            reply: tuple[Any, ...] = ("done", task_id, answers, stats, built,
                                      dict(replica.decisions) if record else None,
                                      time.process_time() - started)
        except Exception as error:
            reply = ("error", task_id, *portable(error), isinstance(error, MemoryError))
        try:
            conn.send(reply)
        except (OSError, ValueError):
            return
