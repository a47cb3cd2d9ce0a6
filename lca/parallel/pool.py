"""The pool: worker processes, tasks sent and answers taken, faults, logs received.

:class:`ReplicaPool` starts the workers of :mod:`lca.parallel.worker`, cuts a
batch into tasks (routed by :mod:`lca.parallel.routing`), hands each to one
worker at a time, takes each task's answers from exactly one completed
attempt, replaces dead workers and re-raises their errors
(:mod:`lca.parallel.errors`); :func:`answer_parallel` does it with a fresh pool.

Why one module of this size: sending tasks, taking answers, replacing dead
workers and receiving their logs are one loop over one set of processes; the
child's side, the routing and the errors live in their own modules.
"""

from __future__ import annotations

import contextlib
import logging
import math
import multiprocessing
import time
import weakref
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from multiprocessing import connection
from typing import TYPE_CHECKING, Any, cast

import multiprocessing_logging
import numpy as np

from lca import derive
from lca._processes import require_main_guard, sigint_blocked
from lca._validate import check_flag, check_int, check_real, check_seed
from lca.derive import Path
from lca.oracle import Oracle, check_points
from lca.parallel.errors import TaskTimeoutError, WorkerError, revive
from lca.parallel.routing import GROUPS_PER_WORKER, ROUTER_CACHE, ROUTINGS, DecisionKey, Router
from lca.parallel.worker import PICKLE_ADVICE, describe_replica, worker_main
from lca.params import Params
from lca.reconstruct import AnswerStats, Decision, progress_bar, warn_if_guesswork

if TYPE_CHECKING:
    from multiprocessing.context import ForkContext, ForkServerContext, SpawnContext

__all__ = ["ParallelResult", "ReplicaPool", "answer_parallel"]

# The package's logger: the name callers and docs/parallel.md configure.
_log = logging.getLogger("lca.parallel")


@dataclass(frozen=True, eq=False)
class ParallelResult:
    """Answers of one batch and what it cost.

    Attributes:
        answers: ``T_seed`` on every query, ``int8``, in input order.
        stats: work of the workers for this batch, summed.
        routing_stats: work of the parent's router (prefix routing only).
        node_computations: nodes and leaves built in this batch by any replica
            (router included); cache hits are not computations.
        distinct_nodes: how many different ``(seed, path)`` those were.
        tasks: tasks the batch was cut into.
        recomputed_tasks: tasks recomputed after their worker died.
        workers: worker processes the pool runs.
        routing: ``"prefix"`` or ``"chunk"``.
        busy_seconds: CPU seconds each worker spent answering this batch,
            keyed by worker name (a replacement keeps its slot's name).
        decisions: with ``record=True``, every decision seen, keyed by
            ``(seed, path)``, merged over workers and router; else ``None``.
        conflicts: ``(key, first, other)`` for every key on which two
            replicas of this pool recorded different decisions (``record=True``
            only; always empty for a correct oracle).
    """

    answers: np.ndarray
    stats: AnswerStats
    routing_stats: AnswerStats
    node_computations: int
    distinct_nodes: int
    tasks: int
    recomputed_tasks: int
    workers: int
    routing: str
    busy_seconds: dict[str, float] = field(default_factory=dict)
    decisions: dict[DecisionKey, Decision] | None = None
    conflicts: tuple[tuple[DecisionKey, Decision, Decision], ...] = ()

    @property
    def duplicated_fraction(self) -> float:
        """Share of node computations that rebuilt a node another replica built."""
        if not self.node_computations:
            return 0.0
        return 1.0 - self.distinct_nodes / self.node_computations


class _Dispatch(logging.Handler):
    """Hand a worker's record to the parent's logger of the same name."""

    def emit(self, record: logging.LogRecord) -> None:
        logger = logging.getLogger(record.name)
        if logger.isEnabledFor(record.levelno):
            logger.handle(record)


class _LogReceiver(multiprocessing_logging.MultiProcessingHandler):
    """multiprocessing_logging's receiving thread, with a queue workers can share.

    The library targets the ``fork`` start method and makes its queue in the
    default context; on Linux that is ``fork``, whose locks cannot be handed to
    ``spawn`` or ``forkserver`` children ("A SemLock created in a fork context
    is being shared with a process in a spawn context"). The queue is replaced
    before any worker exists; the receiving thread re-reads ``self.queue`` on
    every poll, so it switches within 0.2 s and nothing is sent to the old one.
    """

    def __init__(self, context: multiprocessing.context.BaseContext) -> None:
        super().__init__("lca-worker-logs", sub_handler=_Dispatch())
        self.queue = context.Queue(-1)


def _log_levels() -> dict[str, int]:
    levels = {"": logging.getLogger().getEffectiveLevel()}
    for name in ("lca", "lca.parallel", "lca.parallel.worker"):
        level = logging.getLogger(name).level
        if level != logging.NOTSET:
            levels[name] = level
    return levels


@dataclass
class _Task:
    id: int
    prefix: Path
    rows: np.ndarray
    attempts: int = 0


@dataclass
class _Worker:
    slot: int
    process: multiprocessing.process.BaseProcess
    conn: connection.Connection
    pid: int | None = None
    task: _Task | None = None
    broken: bool = False
    sent_at: float = 0.0  # time.monotonic() when the current task was sent

    @property
    def name(self) -> str:
        return self.process.name


def _stop(processes: Iterable[multiprocessing.process.BaseProcess], grace: float) -> None:
    """Terminate, then kill, then reap: no process outlives this call."""
    processes = list(processes)
    for process in processes:
        if process.is_alive():
            process.terminate()
    for process in processes:
        process.join(grace)
        if process.is_alive():
            process.kill()
            process.join()


class ReplicaPool:
    """Worker processes, each a stateless replica of ``Reconstructor(oracle, params)``.

    Args:
        oracle: the function to reconstruct; must pickle (see ``docs/parallel.md``).
        params: reconstruction parameters.
        workers: number of worker processes.
        start_method: ``"spawn"`` (default), ``"forkserver"`` or ``"fork"``.
        cache_size: node cache of each replica; ``0`` disables it. Replicas
            keep their cache between batches (a *warm* pool).
        batch_size: rows per ``answer_many`` call inside a worker (default:
            the whole task). Changes the work, never the answers.
        record: collect every decision seen into :attr:`ParallelResult.decisions`.
        max_retries: how often one task may be recomputed after its worker
            died (or raised ``MemoryError``) before :class:`WorkerError`.
        task_timeout: seconds one task may run in a worker (from when it is
            sent); a worker past it is killed and :meth:`answer` raises
            :class:`TaskTimeoutError` naming the worker, the task and the
            timeout, without retrying. ``None`` (default) waits forever.

    Use as a context manager so workers are always shut down::

        with ReplicaPool(f, params, workers=2) as pool:
            result = pool.answer(points, seed=7)

    ``pool.answer(points, seed)`` is a deterministic function of
    ``(oracle, params, seed, points)``: equal to
    ``Reconstructor(oracle, params).answer_many(points, seed)``.
    """

    def __init__(self, oracle: Oracle, params: Params, *, workers: int = 2,
                 start_method: str = "spawn", cache_size: int = 1 << 16,
                 batch_size: int | None = None, record: bool = False,
                 max_retries: int = 2, task_timeout: float | None = None) -> None:
        owner = "ReplicaPool"
        self._description = describe_replica(oracle, params, owner)
        self.workers = check_int(owner, "workers", workers, 1)
        methods = multiprocessing.get_all_start_methods()
        if start_method not in methods:
            raise ValueError(f"The 'start_method' parameter of {owner} must be one of "
                             f"{methods} on this platform. Got {start_method!r} instead.")
        self.cache_size = check_int(owner, "cache_size", cache_size, 0)
        self.batch_size = check_int(owner, "batch_size", batch_size, 1, optional=True)
        self.max_retries = check_int(owner, "max_retries", max_retries, 0)
        self.task_timeout = check_real(owner, "task_timeout", task_timeout, 0.0, math.inf,
                                       optional=True)
        check_flag(owner, "record", record)
        self.oracle = oracle
        self.params = params
        self.start_method = start_method
        self.record = record
        # Annotated as BaseContext, which lacks Process; each start method's context has it.
        self._context = cast("SpawnContext | ForkServerContext | ForkContext",
                             multiprocessing.get_context(start_method))
        self._router = Router(oracle, params)
        self._workers: dict[int, _Worker] = {}
        self._processes: list[multiprocessing.process.BaseProcess] = []
        self._logs: _LogReceiver | None = None
        self._next_task = 0
        self._affinity: dict[DecisionKey, int] = {}
        self._startup_failures = 0
        self._finalizer = weakref.finalize(self, _stop, self._processes, 0.5)

    def __repr__(self) -> str:
        return (f"ReplicaPool({self.oracle!r}, workers={self.workers}, "
                f"start_method={self.start_method!r}, cache_size={self.cache_size})")

    def __enter__(self) -> ReplicaPool:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def pids(self) -> tuple[int, ...]:
        """Process ids of the live workers (empty before :meth:`start`)."""
        return tuple(w.process.pid for w in self._workers.values()
                     if w.process.pid is not None)

    # -- lifecycle ---------------------------------------------------------------

    def start(self) -> ReplicaPool:
        """Start any missing worker; returns at once (workers report when ready).

        Raises ``RuntimeError`` before starting anything if called from the
        main script's top level outside ``if __name__ == "__main__":`` with a
        start method that re-runs the script in every worker.
        """
        missing = [slot for slot in range(self.workers) if slot not in self._workers]
        if missing:
            require_main_guard("ReplicaPool", self.start_method)
        if self._logs is None:
            with sigint_blocked():  # its queue may start multiprocessing's resource tracker
                self._logs = _LogReceiver(self._context)
        for slot in missing:
            self._spawn(slot)
        if not self._workers:
            raise WorkerError("ReplicaPool: could not start any worker process")
        return self

    def _spawn(self, slot: int) -> None:
        assert self._logs is not None, "start() makes the log receiver first"
        parent_end, child_end = self._context.Pipe(duplex=True)
        process = self._context.Process(
            target=worker_main, name=f"lca-worker-{slot}", daemon=True,
            args=(self._description, child_end, self._logs.queue, _log_levels(),
                  self.cache_size, self.record, self.batch_size))
        # Ctrl-C is the parent's to handle: a worker still importing would
        # otherwise print a KeyboardInterrupt traceback of its own. The worker
        # is recorded before SIGINT is unblocked, so an interrupt that arrived
        # meanwhile finds it and stops it.
        with sigint_blocked():
            try:
                process.start()
            except OSError as error:  # out of processes or memory: run with fewer
                parent_end.close()
                child_end.close()
                _log.warning("could not start lca-worker-%d: %s", slot, error)
                return
            child_end.close()
            self._processes.append(process)
            self._workers[slot] = _Worker(slot, process, parent_end)

    def _retire(self, worker: _Worker, grace: float) -> int | None:
        """Stop and reap one worker; returns its exit code."""
        del self._workers[worker.slot]
        _stop([worker.process], grace)
        exitcode = worker.process.exitcode
        worker.conn.close()
        self._processes.remove(worker.process)
        worker.process.close()
        return exitcode

    def _terminate(self) -> None:
        for worker in list(self._workers.values()):
            self._retire(worker, 1.0)

    def close(self) -> None:
        """Stop every worker (politely, then by force) and the log receiver. Idempotent."""
        for worker in self._workers.values():
            with contextlib.suppress(OSError, ValueError):
                worker.conn.send(None)
        for worker in list(self._workers.values()):
            worker.process.join(5.0)
            self._retire(worker, 1.0)
        if self._logs is not None:
            self._logs.close()
            self._logs = None

    # -- answering ------------------------------------------------------------------

    def _tasks(self, points: np.ndarray, seed: int, routing: str, chunk_size: int | None,
               routing_stats: AnswerStats, built: list[Path],
               seen: dict[DecisionKey, Decision]) -> list[_Task]:
        m = points.shape[0]
        if routing == "prefix":
            target = 1 if self.workers == 1 else GROUPS_PER_WORKER * self.workers
            groups = self._router.groups(points, seed, target, chunk_size,
                                         routing_stats, built, seen)
        else:
            step = chunk_size or max(1, -(-m // (4 * self.workers)))
            groups = [((), np.arange(lo, min(lo + step, m))) for lo in range(0, m, step)]
        tasks = []
        for prefix, rows in groups:
            tasks.append(_Task(self._next_task, prefix, rows))
            self._next_task += 1
        return tasks

    def answer(self, points: Any, seed: int, *, routing: str = "prefix",
               chunk_size: int | None = None, progress: bool = False) -> ParallelResult:
        """``T_seed`` on every row of ``points``, computed by the workers.

        Args:
            points: ``(m, n)`` array of ``±1``.
            seed: selects the tree ``T_seed``.
            routing: ``"prefix"`` (group queries by the top nodes of the tree)
                or ``"chunk"`` (contiguous slices).
            chunk_size: with ``"chunk"``, rows per task (default ``m / (4 *
                workers)``); with ``"prefix"``, split groups further until none
                is larger (groups that reached a leaf are never split).
            progress: draw a tqdm progress bar on stderr counting answered rows.

        Returns:
            A :class:`ParallelResult`; its answers are a deterministic function
            of ``(oracle, params, seed, points)``, equal to one process's.
        """
        owner = "ReplicaPool.answer"
        seed = check_seed(owner, seed)
        points = check_points(points, self.params.n, what="points")
        if routing not in ROUTINGS:
            raise ValueError(f"The 'routing' parameter of {owner} must be one of "
                             f"{ROUTINGS}. Got {routing!r} instead.")
        chunk_size = check_int(owner, "chunk_size", chunk_size, 1, optional=True)
        check_flag(owner, "progress", progress)
        self.start()
        try:
            result = self._answer(points, seed, routing, chunk_size, progress)
        except BaseException:
            # Errors, KeyboardInterrupt, anything: leave no worker behind. The
            # pool restarts its workers on next use.
            self._terminate()
            raise
        # Workers never warn; the caller does, once for the whole call.
        warn_if_guesswork(result.stats.guesswork_answers, points.shape[0], stacklevel=2)
        return result

    def _answer(self, points: np.ndarray, seed: int, routing: str, chunk_size: int | None,
                progress: bool) -> ParallelResult:
        batch = _Batch(points.shape[0], seed, derive.pack_points(points))
        batch.tasks = self._tasks(points, seed, routing, chunk_size, batch.routing_stats,
                                  batch.built, batch.decisions)
        batch.pending.extend(batch.tasks)
        batch.remaining.update(task.id for task in batch.tasks)
        batch.computations = len(batch.built)
        batch.distinct.update(batch.built)
        bar = progress_bar(progress, points.shape[0], "lca answers", "answers")
        batch.bar = bar
        try:
            while batch.remaining:
                self._dispatch(batch)
                waitables: list[Any] = []
                for worker in self._workers.values():
                    waitables += [worker.conn, worker.process.sentinel]
                if not waitables:
                    raise WorkerError("ReplicaPool: every worker process is gone and "
                                      "none could be restarted")
                ready = set(connection.wait(waitables, timeout=self._wait_time()))
                for worker in list(self._workers.values()):
                    exited = worker.process.sentinel in ready
                    if worker.conn not in ready and not exited:
                        continue
                    # Read every complete reply first: a worker may finish a
                    # task and then die; its answers count, exactly once.
                    if not self._drain(worker, batch) or exited:
                        self._bury(worker, batch)
                self._enforce_timeout(batch)
        finally:
            bar.close()
        return ParallelResult(
            answers=batch.answers, stats=batch.stats, routing_stats=batch.routing_stats,
            node_computations=batch.computations, distinct_nodes=len(batch.distinct),
            tasks=len(batch.tasks), recomputed_tasks=batch.recomputed,
            workers=self.workers, routing=routing, busy_seconds=dict(batch.busy),
            decisions=batch.decisions if self.record else None,
            conflicts=tuple(batch.conflicts))

    def _wait_time(self) -> float:
        """Seconds to wait for workers: 1, or less if a task's deadline comes sooner."""
        if self.task_timeout is None:
            return 1.0
        now = time.monotonic()
        deadlines = [w.sent_at + self.task_timeout - now for w in self._workers.values()
                     if w.task is not None]
        return max(0.0, min([1.0, *deadlines]))

    def _enforce_timeout(self, batch: _Batch) -> None:
        """Kill a worker whose task ran past ``task_timeout`` and raise."""
        if self.task_timeout is None:
            return
        now = time.monotonic()
        for worker in list(self._workers.values()):
            task = worker.task
            if task is None or now - worker.sent_at <= self.task_timeout:
                continue
            pid = worker.pid
            self._retire(worker, 0.0)
            where = f" under prefix {task.prefix}" if task.prefix else ""
            raise TaskTimeoutError(
                f"ReplicaPool: {worker.name} (pid {pid}) exceeded task_timeout="
                f"{self.task_timeout:g} s on task {task.id} ({task.rows.size} queries"
                f"{where}, seed {batch.seed}); killed it. A hang is not retried: "
                "check the oracle, or raise task_timeout")

    def _dispatch(self, batch: _Batch) -> None:
        pending = batch.pending
        for worker in self._workers.values():
            if not pending:
                return
            if worker.pid is None or worker.task is not None or worker.broken:
                continue
            # Prefer a group in a subtree this worker answered before (its
            # cache is warm there), else the largest group nobody owns, else
            # the largest.
            choice = None
            for index, task in enumerate(pending):
                owner = self._owner(batch.seed, task.prefix)
                if owner == worker.slot:
                    choice = index
                    break
                if owner is None and choice is None:
                    choice = index
            task = pending[choice or 0]
            del pending[choice or 0]
            worker.task = task
            worker.sent_at = time.monotonic()
            task.attempts += 1
            try:
                worker.conn.send((task.id, batch.seed, batch.packed[task.rows],
                                  task.prefix))
            except (OSError, ValueError):
                worker.broken = True  # its sentinel fires; _bury requeues the task
                continue
            if task.prefix:
                if len(self._affinity) > ROUTER_CACHE:
                    self._affinity.clear()  # only a scheduling hint
                self._affinity[(batch.seed, task.prefix)] = worker.slot

    def _owner(self, seed: int, prefix: Path) -> int | None:
        """Slot that last answered ``prefix`` or its closest ancestor."""
        for depth in range(len(prefix), 0, -1):
            owner = self._affinity.get((seed, prefix[:depth]))
            if owner is not None:
                return owner
        return None

    def _drain(self, worker: _Worker, batch: _Batch) -> bool:
        """Handle every reply waiting on ``worker``'s pipe; ``False`` once it is closed."""
        try:
            while worker.conn.poll():
                self._handle(worker, worker.conn.recv(), batch)
        except (EOFError, OSError):
            return False
        return True

    def _handle(self, worker: _Worker, message: tuple[Any, ...], batch: _Batch) -> None:
        kind = message[0]
        if kind == "ready":
            worker.pid = message[1]
            self._startup_failures = 0
            return
        if kind == "init-error":
            error = revive(message[1], message[2],
                            f"lca.parallel: raised in {worker.name} while rebuilding "
                            "the oracle from its pickled description")
            raise TypeError(f"ReplicaPool: a worker could not rebuild oracle "
                            f"{self.oracle!r}: {type(error).__name__}: {error}. "
                            f"{PICKLE_ADVICE}") from error
        task = worker.task
        assert task is not None and message[1] == task.id
        worker.task = None
        if kind == "done":
            batch.complete(task, *message[2:])
            batch.busy[worker.name] = batch.busy.get(worker.name, 0.0) + message[-1]
            return
        assert kind == "error"
        data, text, retryable = message[2:]
        if retryable and task.attempts <= self.max_retries:
            _log.warning("%s ran out of memory on task %d; recomputing it", worker.name,
                         task.id)
            batch.pending.appendleft(task)
            batch.recomputed += 1
            return
        where = f" routed under prefix {task.prefix}" if task.prefix else ""
        raise revive(data, text, f"lca.parallel: raised in {worker.name} (pid "
                      f"{worker.pid}) while answering {task.rows.size} queries{where}, "
                      f"seed {batch.seed}")

    def _bury(self, worker: _Worker, batch: _Batch) -> None:
        """A worker died: requeue its task and start a replacement in its slot."""
        exitcode = self._retire(worker, 1.0)
        task = worker.task
        if task is not None:
            if task.attempts > self.max_retries:
                raise WorkerError(
                    f"ReplicaPool: task {task.id} ({task.rows.size} queries under prefix "
                    f"{task.prefix}) killed its worker {task.attempts} times, last "
                    f"{worker.name} with exit code {exitcode}; giving up "
                    f"(max_retries={self.max_retries})")
            _log.warning("%s (pid %s) died with exit code %s during task %d; "
                         "recomputing its %d queries", worker.name, worker.pid, exitcode,
                         task.id, task.rows.size)
            batch.pending.appendleft(task)
            batch.recomputed += 1
        elif worker.pid is None:
            self._startup_failures += 1
            if self._startup_failures > self.max_retries + self.workers:
                raise WorkerError(
                    f"ReplicaPool: workers keep dying during start-up (last: {worker.name}, "
                    f"exit code {exitcode}) before reporting ready; their own error is on "
                    "stderr. Is the oracle's module importable in a fresh interpreter?")
            _log.warning("%s died during start-up with exit code %s", worker.name,
                         exitcode)
        self._spawn(worker.slot)


@dataclass(eq=False)
class _Batch:
    """State of one :meth:`ReplicaPool.answer` call."""

    size: int
    seed: int
    packed: np.ndarray
    tasks: list[_Task] = field(default_factory=list)
    pending: deque[_Task] = field(default_factory=deque)
    remaining: set[int] = field(default_factory=set)
    stats: AnswerStats = field(default_factory=AnswerStats)
    routing_stats: AnswerStats = field(default_factory=AnswerStats)
    built: list[Path] = field(default_factory=list)
    distinct: set[Path] = field(default_factory=set)
    computations: int = 0
    recomputed: int = 0
    decisions: dict[DecisionKey, Decision] = field(default_factory=dict)
    conflicts: list[tuple[DecisionKey, Decision, Decision]] = field(default_factory=list)
    busy: dict[str, float] = field(default_factory=dict)
    bar: Any = None

    def __post_init__(self) -> None:
        self.answers = np.zeros(self.size, dtype=np.int8)

    def complete(self, task: _Task, answers: np.ndarray, stats: AnswerStats,
                 built: list[Path], found: dict[DecisionKey, Decision] | None,
                 seconds: float) -> None:
        assert task.id in self.remaining, "a task's answers are taken exactly once"
        self.remaining.discard(task.id)
        self.answers[task.rows] = answers
        self.stats += stats
        self.computations += len(built)
        self.distinct.update(built)
        for key, decision in (found or {}).items():
            first = self.decisions.setdefault(key, decision)
            if first != decision:
                self.conflicts.append((key, first, decision))
        if self.bar is not None:
            self.bar.update(task.rows.size)


def answer_parallel(oracle: Oracle, params: Params, points: Any, seed: int, *,
                    workers: int = 2, chunk_size: int | None = None,
                    routing: str = "prefix", progress: bool = False,
                    start_method: str = "spawn", cache_size: int = 1 << 16,
                    record: bool = False, task_timeout: float | None = None
                    ) -> ParallelResult:
    """``T_seed`` on every row of ``points`` with a fresh :class:`ReplicaPool`.

    Starts ``workers`` processes, answers, and shuts them down, also on error
    or ``KeyboardInterrupt`` (``task_timeout`` as in :class:`ReplicaPool`).
    The answers equal
    ``Reconstructor(oracle, params).answer_many(points, seed)`` bit for bit.

    Example (in a script, under ``if __name__ == "__main__":`` as ``spawn``
    requires)::

        f = lca.targets.parity(n=20, k=2, seed=1)
        params = lca.Params.practical(n=20, depth=3, noise_rate=0.1,
                                      score_samples=100, leaf_samples=50)
        result = answer_parallel(f, params, points, seed=7, workers=2)
        assert (result.answers == lca.Reconstructor(f, params).answer_many(points, 7)).all()
    """
    check_flag("answer_parallel", "progress", progress)
    pool = ReplicaPool(oracle, params, workers=workers, start_method=start_method,
                       cache_size=cache_size, record=record, task_timeout=task_timeout)
    try:
        # answer() checks its arguments before it starts any worker.
        return pool.answer(points, seed, routing=routing, chunk_size=chunk_size,
                           progress=progress)
    finally:
        pool.close()
